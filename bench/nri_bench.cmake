target_link_libraries(nri_bench PRIVATE dranet_nri dranet_inject)
if(TARGET dranet_fake_nri_runtime)
  target_link_libraries(nri_bench PRIVATE dranet_fake_nri_runtime)
else()  # tests not configured: build the fake runtime into the benchmark
  target_sources(nri_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests/fakes/nri-runtime/fake_nri_runtime.cpp)
  target_include_directories(nri_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests/fakes/nri-runtime)
endif()
