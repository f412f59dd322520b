#pragma once
// tests/integration/demo/demo_overlay.h — dranetd's flags as the node's
// deployment sets them.
//
// The demo runs dranetd the way the cloud's kustomize overlay
// (packaging/deploy/overlays/<cloud>/daemonset-patch.yaml, generated from
// its values.yaml) runs it on that node type — e.g. on AKS
// `--move-ib-interfaces=false` (IPoIB netdevs stay on the host, HCAs are
// published IB-only) and the plugin settings. The cloud comes from the
// snapshot's recorded metadata (metadata/azure → azure, metadata/gce → gcp,
// anything else → generic). Only the flags that change what is published or
// what a pod receives are taken (kBehaviourFlags); paths, sockets, metrics
// and logging stay the demo's own. The in-process allocation applies the
// same flags (IPoIB skipping, plugin settings, publish filter), so the
// scheduler's part and dranetd see the same devices.
#include <filesystem>
#include <string>
#include <vector>

#include "plugins/plugin_flags.h"

namespace dranet::demo {

// The dranetd flags the demo takes from an overlay.
inline const std::vector<std::string> kBehaviourFlags = {
    "--move-ib-interfaces", "--filter",      "--rdma-exclusive", "--copy-host-routes",
    "--plugin-config",      "--plugin-allow", "--plugin-deny",    "--plugin-timeout-ms"};

struct DaemonBehaviour {
  std::string source;             // the overlay directory read; empty: dranetd's defaults
  std::vector<std::string> args;  // kBehaviourFlags entries of the overlay, "--name=value"
  // The same, parsed as dranetd parses them.
  bool move_ib_interfaces = true;
  std::string filter = "<dranet default>";
  bool rdma_exclusive = false;
  bool copy_host_routes = true;
  plugins::PluginFlags plugins;
};

// "azure", "gcp", "aws", "oci", "alibaba" or "generic", from the snapshot's
// recorded cloud metadata.
std::string CloudOf(const std::filesystem::path& snapshot);

// The dranetd container's args of `overlay_dir`/daemonset-patch.yaml,
// filtered to kBehaviourFlags and parsed. Throws std::runtime_error naming
// the file when it is missing or malformed.
DaemonBehaviour ReadOverlay(const std::filesystem::path& overlay_dir);

}  // namespace dranet::demo
