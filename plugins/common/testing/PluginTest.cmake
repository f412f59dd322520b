# dranet_add_plugin_test(<plugin> SOURCES <src>... [LIBS <lib>...])
# A gtest binary <plugin>_plugin_test that loads the real
# dranet-plugin-<plugin>.so through the daemon's PluginHost (plugin tests may
# use core/; plugins may not). Included by plugins/<name>/tests.
# plugins/ is configured before tests/, so find GTest here; its imported
# targets are directory-scoped, hence once per including directory.
find_package(GTest REQUIRED)
include(GoogleTest)

function(dranet_add_plugin_test plugin)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;LIBS")
  set(target ${plugin}_plugin_test)
  add_executable(${target} ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/plugins/common/testing
                                               ${PROJECT_SOURCE_DIR}/plugins/common)
  target_link_libraries(${target} PRIVATE dranet_plugins GTest::gtest_main ${ARG_LIBS})
  target_compile_definitions(${target} PRIVATE
    DRANET_PLUGIN_BUILD_DIR="${DRANET_PLUGIN_OUTPUT_DIR}"
    DRANET_TEST_NODES_DIR="${PROJECT_SOURCE_DIR}/tests/nodes")
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bin)
  add_dependencies(${target} dranet-plugin-${plugin})
  dranet_set_warnings(${target})
  gtest_discover_tests(${target})
endfunction()
