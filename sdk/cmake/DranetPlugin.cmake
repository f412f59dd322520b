# dranet_add_plugin(<name> SOURCES <src>... [LIBS <lib>...] [NO_INSTALL])
#
# The one way to build a dranet plugin, in this tree and out of it:
#  - a MODULE library named dranet-plugin-<name>.so (the host checks that the
#    file name matches the descriptor's name);
#  - only the SDK headers on the include path (target Dranet::sdk);
#  - hidden visibility, a version script exporting dranet_plugin_entry_v1
#    alone, --no-undefined (a plugin links nothing from the host) and -z now;
#  - output to DRANET_PLUGIN_OUTPUT_DIR when set (the build tree's
#    lib/dranet/plugins), installed to DRANET_PLUGIN_INSTALL_DIR
#    (default lib/dranet/plugins), in the install component
#    DRANET_PLUGIN_INSTALL_COMPONENT when set.
include_guard(GLOBAL)
set(_DRANET_PLUGIN_MAP ${CMAKE_CURRENT_LIST_DIR}/../plugin.map CACHE INTERNAL "")
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/dranet-plugin.map)
  set(_DRANET_PLUGIN_MAP ${CMAKE_CURRENT_LIST_DIR}/dranet-plugin.map CACHE INTERNAL "")
endif()

function(dranet_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_INSTALL" "" "SOURCES;LIBS")
  if(NOT name MATCHES "^[a-z0-9-]+$")
    message(FATAL_ERROR "dranet_add_plugin: '${name}' must match [a-z0-9-]+")
  endif()
  set(target dranet-plugin-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Dranet::sdk ${ARG_LIBS})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME ${target}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${_DRANET_PLUGIN_MAP})
  if(NOT DEFINED CMAKE_CXX_STANDARD)
    target_compile_features(${target} PRIVATE cxx_std_17)
  endif()
  set(link_opts "LINKER:--version-script=${_DRANET_PLUGIN_MAP}" "LINKER:-z,now")
  # Sanitizer runtimes live in the executable, so instrumented plugins keep
  # undefined references to them; every other build forbids undefined symbols.
  if(NOT DRANET_SANITIZE)
    list(APPEND link_opts "LINKER:--no-undefined")
  endif()
  target_link_options(${target} PRIVATE ${link_opts})
  if(COMMAND dranet_set_warnings)
    dranet_set_warnings(${target})
  endif()
  if(DEFINED DRANET_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${DRANET_PLUGIN_OUTPUT_DIR})
  endif()
  if(NOT ARG_NO_INSTALL)
    if(NOT DEFINED DRANET_PLUGIN_INSTALL_DIR)
      set(DRANET_PLUGIN_INSTALL_DIR lib/dranet/plugins)
    endif()
    if(DEFINED DRANET_PLUGIN_INSTALL_COMPONENT)
      install(TARGETS ${target} LIBRARY DESTINATION ${DRANET_PLUGIN_INSTALL_DIR}
              COMPONENT ${DRANET_PLUGIN_INSTALL_COMPONENT})
    else()
      install(TARGETS ${target} LIBRARY DESTINATION ${DRANET_PLUGIN_INSTALL_DIR})
    endif()
  endif()
endfunction()
