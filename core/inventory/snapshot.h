#pragma once
// core/inventory/snapshot.h — node snapshots: a directory that looks like a
// host root to discovery and to the plugins (docs/snapshots.md).
//
// Layout (all paths relative to the snapshot directory):
//   dranet-snapshot.json  marker + metadata: {"formatVersion":2,"nodeName":..,
//                         "source":"captured"|"representative"|"synthetic",..}
//   sys/...               the sysfs subset discovery and plugins read, with
//                         the kernel's symlink structure (relative links)
//   netlink.json          what sysfs lacks: per-interface link kind and
//                         addresses, routes, policy rules, permanent neighbours
//   metadata/...          recorded cloud metadata responses, one file per
//                         URL path (e.g. metadata/azure/metadata/instance)
//   README.md             provenance: which values are captured, which not
//
// netlink.json, formatVersion 2 (interfaces by name, never ifindex):
//   {"formatVersion": 2,
//    "links":  [{"name": "eth0", "kind": "", "addresses": ["10.0.0.4/24"]}],
//    "routes": [   // every table but local, in dump order
//      {"family": "inet"|"inet6", "destination": "default"|"10.0.0.0/24",
//       "gateway"?: "10.0.0.1", "interface"?: "eth0",      // one plain next hop, or
//       "nexthops"?: [{"interface"?, "gateway"?, "weight": 1}, ...],  // multipath
//       "source"?: "10.0.0.4",                             // RTA_PREFSRC
//       "scope": "universe"|"link"|"host"|N, "table": "main"|"default"|N,
//       "metric": 100, "protocol": "kernel"|"boot"|"static"|"dhcp"|N,
//       "type": "unicast"|"blackhole"|...|N}],
//    "rules": [    // both families, in priority order
//      {"family": "inet", "priority": 32765, "source"?: "10.1.0.0/24",
//       "destination"?: CIDR, "table": "main"|"local"|"default"|N,
//       "action": "lookup"|"goto"|"nop"|"blackhole"|"unreachable"|"prohibit"|N,
//       "otherSelectors"?: true}],    // also matches iif/oif/fwmark/tos/uid/ports/...
//    "neighbors": [{"interface": "eth0", "destination": "10.0.0.9",
//                   "lladdr": "02:00:00:00:00:09"}]}   // NUD_PERMANENT only
// Optional ("?") members are left out when empty. The reader also takes
// formatVersion 1 files, whose routes are main-table default routes
// {"family", "destination": "default", "metric", "interfaces": ["eth0", ...]}
// (several interfaces: a multipath route). Entries naming an interface that
// is not a link of the snapshot are dropped with a warning.
// Every other netdev fact (ifindex, flags, mtu, operstate, type, address,
// ifalias, iflink, master) is read from sys/class/net/<if>/ as on a live node.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "inventory/netlink_facts.h"

namespace dranet::inventory {

inline constexpr const char* kSnapshotMarkerFile = "dranet-snapshot.json";
inline constexpr const char* kSnapshotNetlinkFile = "netlink.json";
inline constexpr const char* kSnapshotMetadataDir = "metadata";
inline constexpr int kSnapshotFormatVersion = 2;  // marker and netlink.json

struct SnapshotInfo {
  int format_version = 0;
  std::string node_name;
  std::string source;       // "captured", "representative" or "synthetic"
  std::string description;
};

// True when `host_root` holds a snapshot marker file.
bool IsSnapshot(const std::filesystem::path& host_root);

// The marker's content; nullopt (logged) when absent or malformed.
std::optional<SnapshotInfo> ReadSnapshotInfo(const std::filesystem::path& host_root, Logger& log);

// Netdev facts of a snapshot: sys/class/net/* plus netlink.json (version 1 or
// 2). A missing or malformed netlink.json is logged and leaves kinds,
// addresses, routes, rules and neighbours empty.
NetlinkFacts ReadSnapshotNetlinkFacts(const std::filesystem::path& host_root, Logger& log);

// Throws std::runtime_error naming the file when the snapshot at host_root
// has a netlink.json that cannot be read: discovering without its routes
// would publish the default-route uplink. A snapshot without the file (sysfs
// only) passes.
void RequireUsableSnapshotNetlink(const std::filesystem::path& host_root);

struct CaptureOptions {
  std::filesystem::path host_root = "/";  // the node to capture (usually the live "/")
  std::string node_name;                  // recorded in the marker
  std::string description;
  // Further sysfs files to capture: globs relative to the sysfs root, as
  // plugins declare them (dranet_plugin_t.snapshot_paths), e.g.
  // "class/net/*/speed". Invalid ones (SnapshotGlobProblem) are logged and
  // skipped.
  std::vector<std::string> extra_sysfs_globs;
};

// Why `glob` cannot name sysfs files to capture, or "" when it can: it must
// be relative to the sysfs root, at most 255 characters, without empty,
// "." or ".." components. A component may be an fnmatch(3) pattern.
std::string SnapshotGlobProblem(std::string_view glob);

// Copies the sysfs subset discovery and the in-tree plugins read, and the
// files options.extra_sysfs_globs name, from
// `options.host_root` into `out_dir` (created if needed; must be empty or
// absent), keeping symlinks as relative symlinks inside the snapshot, then
// writes netlink.json from live rtnetlink and the marker file. Files that
// cannot be read are skipped and counted in the log. Throws
// std::runtime_error naming the path when `out_dir` cannot be written.
void CaptureSnapshot(const std::filesystem::path& out_dir, const CaptureOptions& options, Logger& log);

}  // namespace dranet::inventory
