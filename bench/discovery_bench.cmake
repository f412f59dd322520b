target_link_libraries(discovery_bench PRIVATE dranet_inventory)
target_compile_definitions(discovery_bench PRIVATE DRANET_TEST_NODES_DIR="${PROJECT_SOURCE_DIR}/tests/nodes")
