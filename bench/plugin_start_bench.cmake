target_link_libraries(plugin_start_bench PRIVATE dranet_plugins dranet_inventory)
target_compile_definitions(plugin_start_bench PRIVATE DRANET_TEST_NODES_DIR="${PROJECT_SOURCE_DIR}/tests/nodes"
                                                      DRANET_PLUGIN_BUILD_DIR="${DRANET_PLUGIN_OUTPUT_DIR}")
# It loads the in-tree plugins as dranetd does.
foreach(plugin IN ITEMS aws azure gcp oci alibaba nvidia amd)
  if(TARGET dranet-plugin-${plugin})
    add_dependencies(plugin_start_bench dranet-plugin-${plugin})
  endif()
endforeach()
