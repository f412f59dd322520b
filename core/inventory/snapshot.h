#pragma once
// core/inventory/snapshot.h — node snapshots: a directory that looks like a
// host root to discovery and to the plugins (docs/snapshots.md).
//
// Layout (all paths relative to the snapshot directory):
//   dranet-snapshot.json  marker + metadata: {"formatVersion":1,"nodeName":..,
//                         "source":"captured"|"representative"|"synthetic",..}
//   sys/...               the sysfs subset discovery and plugins read, with
//                         the kernel's symlink structure (relative links)
//   netlink.json          what sysfs lacks: per-interface link kind and
//                         addresses, and the main table's default routes
//   metadata/...          recorded cloud metadata responses, one file per
//                         URL path (e.g. metadata/azure/metadata/instance)
//   README.md             provenance: which values are captured, which not
//
// netlink.json:
//   {"formatVersion": 1,
//    "links":  [{"name": "eth0", "kind": "", "addresses": ["10.0.0.4/24"]}],
//    "routes": [{"family": "inet"|"inet6", "destination": "default",
//                "metric": 100, "interfaces": ["eth0"]}]}
// Every other netdev fact (ifindex, flags, mtu, operstate, type, address,
// ifalias, iflink, master) is read from sys/class/net/<if>/ as on a live node.
#include <filesystem>
#include <optional>
#include <string>

#include "base/log.h"
#include "inventory/netlink_facts.h"

namespace dranet::inventory {

inline constexpr const char* kSnapshotMarkerFile = "dranet-snapshot.json";
inline constexpr const char* kSnapshotNetlinkFile = "netlink.json";
inline constexpr const char* kSnapshotMetadataDir = "metadata";
inline constexpr int kSnapshotFormatVersion = 1;

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

// Netdev facts of a snapshot: sys/class/net/* plus netlink.json. A missing or
// malformed netlink.json is logged and leaves kinds, addresses and routes empty.
NetlinkFacts ReadSnapshotNetlinkFacts(const std::filesystem::path& host_root, Logger& log);

struct CaptureOptions {
  std::filesystem::path host_root = "/";  // the node to capture (usually the live "/")
  std::string node_name;                  // recorded in the marker
  std::string description;
};

// Copies the sysfs subset discovery and the plugins read from
// `options.host_root` into `out_dir` (created if needed; must be empty or
// absent), keeping symlinks as relative symlinks inside the snapshot, then
// writes netlink.json from live rtnetlink and the marker file. Files that
// cannot be read are skipped and counted in the log. Throws
// std::runtime_error naming the path when `out_dir` cannot be written.
void CaptureSnapshot(const std::filesystem::path& out_dir, const CaptureOptions& options, Logger& log);

}  // namespace dranet::inventory
