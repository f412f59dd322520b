# gRPC and protobuf as two targets: dranet::protobuf (the NRI messages, core/nri) and
# dranet::grpc (the kubelet sockets, core/kubelet, and the CRI test client, tests/runtime;
# it brings dranet::protobuf along).
#
# Debian ships gRPC without a usable CMake package, so it comes from pkg-config.
# DRANET_STATIC_GRPC (ON by default) links gRPC, gpr, upb, protobuf, abseil, re2 and
# c-ares from the static archives the same Debian -dev packages ship: a process then
# maps only the members it uses instead of ~60 shared objects (an idle dranetd is
# 2.6 MiB smaller resident, the README's performance table), and the runtime image needs no gRPC
# or protobuf package. Every binary of the build links the same way, so the tests run
# what ships. OFF links the shared libraries.
option(DRANET_STATIC_GRPC "Link gRPC, protobuf and abseil from Debian's static archives" ON)

pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++_unsecure)
pkg_check_modules(PROTOBUF_PC REQUIRED IMPORTED_TARGET protobuf)

add_library(dranet_protobuf INTERFACE)
add_library(dranet::protobuf ALIAS dranet_protobuf)
add_library(dranet_grpc INTERFACE)
add_library(dranet::grpc ALIAS dranet_grpc)
if(NOT DRANET_STATIC_GRPC)
  target_link_libraries(dranet_protobuf INTERFACE PkgConfig::PROTOBUF_PC)
  target_link_libraries(dranet_grpc INTERFACE PkgConfig::GRPCPP dranet_protobuf)
  return()
endif()

# dranet_static_archives(<out> NAMES <name>...): the lib<name>.a of each name.
function(dranet_static_archives out)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "NAMES")
  set(archives)
  foreach(name IN LISTS ARG_NAMES)
    find_library(DRANET_ARCHIVE_${name} NAMES lib${name}.a
                 HINTS ${GRPCPP_LIBRARY_DIRS} ${PROTOBUF_PC_LIBRARY_DIRS} REQUIRED)
    list(APPEND archives ${DRANET_ARCHIVE_${name}})
  endforeach()
  list(REMOVE_DUPLICATES archives)
  set(${out} ${archives} PARENT_SCOPE)
endfunction()

# pkg-config's static lists name each archive and the system libraries (zlib,
# libatomic, librt) behind it.
set(protobuf_system_libraries ${PROTOBUF_PC_STATIC_LIBRARIES})
list(FILTER protobuf_system_libraries EXCLUDE REGEX "^protobuf")
dranet_static_archives(protobuf_archives NAMES protobuf)
target_include_directories(dranet_protobuf SYSTEM INTERFACE ${PROTOBUF_PC_INCLUDE_DIRS})
target_link_libraries(dranet_protobuf INTERFACE ${protobuf_archives} ${protobuf_system_libraries} Threads::Threads)

# Debian's grpc_unsecure.pc names no private libraries; upb, re2,
# c-ares and address_sorting are what libgrpc_unsecure.a needs beyond that list.
set(grpc_names upb re2 cares address_sorting)
set(system_libraries)
foreach(name IN LISTS GRPCPP_STATIC_LIBRARIES)
  if(name MATCHES "^(grpc|gpr|absl_)")
    list(APPEND grpc_names ${name})
  elseif(NOT name MATCHES "^protobuf")
    list(APPEND system_libraries ${name})
  endif()
endforeach()
list(REMOVE_DUPLICATES system_libraries)
dranet_static_archives(grpc_archives NAMES ${grpc_names})
# The archives depend on each other in cycles (abseil's in particular): one group
# the linker rescans until nothing new resolves.
string(JOIN "," group ${grpc_archives})
target_include_directories(dranet_grpc SYSTEM INTERFACE ${GRPCPP_INCLUDE_DIRS})
target_link_libraries(dranet_grpc INTERFACE "$<LINK_GROUP:RESCAN,${group}>" dranet_protobuf
                      ${system_libraries} Threads::Threads)
