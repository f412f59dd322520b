# prepare_bench drives KubeletPlugin through the fake kubelet against the fake API server, so it
# needs the fakes even in a build without tests.
if(NOT TARGET dranet_fake_apiserver OR NOT TARGET dranet_fake_kubelet)
  add_subdirectory(${PROJECT_SOURCE_DIR}/tests/fakes/apiserver ${PROJECT_BINARY_DIR}/bench/fakes/apiserver)
  add_subdirectory(${PROJECT_SOURCE_DIR}/tests/fakes/kubelet ${PROJECT_BINARY_DIR}/bench/fakes/kubelet)
endif()
target_link_libraries(prepare_bench PRIVATE dranet_kubelet dranet_fake_kubelet dranet_fake_apiserver)
