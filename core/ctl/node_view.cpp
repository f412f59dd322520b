#include "ctl/node_view.h"

#include <unistd.h>

#include <iostream>
#include <optional>
#include <sstream>

#include "cel/publish_filter.h"
#include "cel/share_policy.h"
#include "daemon/dranet_flags.h"
#include "inventory/host_root.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "plugins/recorded_metadata.h"

namespace dranet::ctl {

CLI::Option* AddHostRootOption(CLI::App& cmd, std::string& host_root, const std::string& description) {
  return cmd.add_option("--host-root", host_root, description)
      ->check(CLI::Validator([](std::string& root) { return inventory::HostRootProblem(root); }, "DIR"));
}

void AddNodeViewFlags(CLI::App& cmd, NodeViewFlags& flags) {
  AddHostRootOption(cmd, flags.host_root, "Node root: / (live) or a node snapshot directory");
  cmd.add_option("--node-name", flags.node_name, "Node name (default: the snapshot's, else the host name)");
  cmd.add_flag("--skip-ipoib", flags.skip_ipoib, "Ignore IPoIB netdevs; publish their HCAs IB-only");
  cmd.add_option("--feature-gates", flags.feature_gates,
                 "dranetd's feature gates, Gate=true,...; DRAListTypeAttributes=true shows "
                 "resource.kubernetes.io/numaNode as a list");
  cmd.add_flag("-v,--verbose", flags.verbose, "Show discovery and plugin logs on stderr");
  cmd.add_option("--filter", flags.filter,
                 "Publish filter (CEL over attributes, as dranetd --filter); \"\" publishes everything");
  cmd.add_option("--shared-devices", flags.shared_devices,
                 "Devices published shareable (a CEL device selector, as dranetd --shared-devices); \"\" none");
  cmd.add_option("--device-shares", flags.device_shares, "Shares of each shared device (as dranetd --device-shares)");
  plugins::AddPluginFlags(cmd, flags.plugins);
}

NodeView BuildNodeView(const NodeViewFlags& flags) {
  static std::ostringstream discarded;
  NodeView view;
  view.logger = flags.verbose ? std::make_unique<Logger>(std::cerr, Logger::Format::kText, 4)
                              : std::make_unique<Logger>(discarded, Logger::Format::kText, 0);
  Logger& logger = *view.logger;
  const auto gates = daemon::ParseFeatureGates(flags.feature_gates);
  std::optional<cel::Program> filter = cel::CompilePublishFilter(flags.filter);
  const cel::SharePolicy shares = cel::CompileSharePolicy(flags.shared_devices, flags.device_shares);
  view.node_name = flags.node_name;
  const bool snapshot = inventory::IsSnapshot(flags.host_root);
  if (view.node_name.empty() && snapshot) {
    if (auto info = inventory::ReadSnapshotInfo(flags.host_root, logger)) view.node_name = info->node_name;
  }
  if (view.node_name.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    view.node_name = host;
  }
  inventory::DiscoveryOptions options;
  options.host_root = flags.host_root;
  options.skip_ipoib = flags.skip_ipoib;
  options.numa_node_list = gates.at(std::string(daemon::kGateDraListTypeAttributes));
  inventory::Discoverer discoverer(options, logger);

  plugins::PluginHostOptions plugin_options;
  plugins::ApplyPluginFlags(flags.plugins, plugin_options);
  plugin_options.host_root = flags.host_root;
  plugin_options.node_name = view.node_name;
  if (snapshot) plugin_options.http = plugins::RecordedMetadataGetter(flags.host_root);
  view.plugins = std::make_unique<plugins::PluginHost>(plugin_options, logger);
  view.devices = cel::ApplySharePolicy(
      shares, cel::ApplyPublishFilter(filter, plugins::WithPlugins(*view.plugins, discoverer.Discover(), logger), logger),
      logger);
  view.plugin_reports = view.plugins->reports();
  return view;
}

}  // namespace dranet::ctl
