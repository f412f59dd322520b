#pragma once
// core/inventory/host_root.h — whether a directory can be a host root.
//
// A host root is "/" (the live node) or a directory holding a node's
// filesystem: a node snapshot (snapshot.h) or a node's root mounted or
// copied elsewhere (its sys/ is read, netlink facts come from the kernel).
// A path that is none of these must not be read as one: discovery of a
// missing or empty root finds no sysfs, the live kernel's netlink facts and
// this machine's host name, and would present them as that node's.
#include <filesystem>
#include <string>

namespace dranet::inventory {

// Why `host_root` cannot be a host root, or "" when it can. "/" always can;
// any other path (followed if a symlink, as RootDirectory opens it) must be
// a directory this process can list and enter, with at least one entry.
// The reason names the path: "<path>: does not exist", "<path>: not a
// directory", "<path>: empty directory" or "<path>: cannot be read:
// <strerror>". Reads the directory's first entries; no other I/O.
std::string HostRootProblem(const std::filesystem::path& host_root);

}  // namespace dranet::inventory
