target_link_libraries(plugin_annotate_bench PRIVATE dranet_plugins dranet_inventory)
target_compile_definitions(plugin_annotate_bench PRIVATE DRANET_TEST_NODES_DIR="${PROJECT_SOURCE_DIR}/tests/nodes"
                                                         DRANET_FAKE_PLUGIN_DIR="${DRANET_FAKE_PLUGIN_DIR}")
# The fake plugin it loads is built with the tests (plugins/fake).
if(TARGET dranet_fake_plugins)
  add_dependencies(plugin_annotate_bench dranet_fake_plugins)
endif()
