#pragma once
// core/ctl/node_view.h — what dranetd would publish for a node: discovery
// on a host root (live "/" or a snapshot) plus plugins, shared by the
// dranetctl commands that look at a node (inspect, simulate, templates).
// On a snapshot, plugins read the snapshot's recorded cloud metadata; no
// request leaves the machine.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/log.h"
#include "inventory/device.h"
#include "plugins/plugin_flags.h"
#include "plugins/plugin_host.h"

namespace dranet::ctl {

struct NodeViewFlags {
  std::string host_root = "/";
  std::string filter{"<dranet default>"};  // publish filter (CEL); "" publishes everything
  std::string node_name;  // default: the snapshot's, else the host name
  bool skip_ipoib = false;
  std::string feature_gates;  // dranetd's --feature-gates; DRAListTypeAttributes changes discovery
  // dranetd's --shared-devices and --device-shares (cel/share_policy.h).
  std::string shared_devices;
  int64_t device_shares = 8;
  bool verbose = false;
  plugins::PluginFlags plugins;
};

void AddNodeViewFlags(CLI::App& cmd, NodeViewFlags& flags);

// --host-root for `cmd`, into `host_root`. A path that cannot be a host root
// (inventory::HostRootProblem: missing, not a directory, empty, unreadable)
// is a usage error at parse time, before the command reads anything.
CLI::Option* AddHostRootOption(CLI::App& cmd, std::string& host_root, const std::string& description);

struct NodeView {
  std::string node_name;
  std::vector<inventory::Device> devices;  // after the publish filter and the share policy
  std::vector<plugins::PluginReport> plugin_reports;
  std::unique_ptr<Logger> logger;
  std::unique_ptr<plugins::PluginHost> plugins;  // kept for Inject() (what pods receive)
};

// Logs go to stderr (quiet unless flags.verbose). Throws cel::CompileError
// for an invalid --filter or --shared-devices, std::invalid_argument for
// invalid --feature-gates or --device-shares.
NodeView BuildNodeView(const NodeViewFlags& flags);

}  // namespace dranet::ctl
