#include "ctl/inspect_command.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "ctl/node_view.h"
#include "health/device_health.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "kube/resource_slice.h"

namespace dranet::ctl {
namespace {

struct InspectCommand {
  NodeViewFlags node;
  std::string output = "table";
  std::string driver = "dra.net";
};

std::string AttributeText(const inventory::Attributes& attrs, const std::string& name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return "-";
  const std::string text = inventory::FormatAttributeValue(it->second);
  return text.empty() ? "\"\"" : text;
}

// Each device's health as dranetd would judge it on this node now (its
// netdevs on the host: inspect sees no pods).
std::map<std::string, health::Verdict> HealthOf(const NodeView& view, const std::string& host_root) {
  inventory::DiscoveryOptions discovery;
  discovery.host_root = host_root;
  std::vector<inventory::LinkFacts> links;
  try {
    links = inventory::ReadNetlinkFacts(discovery, *view.logger).links;
  } catch (const std::exception& e) {
    view.logger->Warning("cannot read the node's links; netdevs read as gone", {{"error", e.what()}});
  }
  std::map<std::string, health::Verdict> out;
  for (const auto& d : view.devices) out[d.name] = health::AssessOnHost(host_root, d, links);
  return out;
}

void PrintTable(const NodeView& view, const std::string& host_root) {
  const auto verdicts = HealthOf(view, host_root);
  struct Column {
    const char* header;
    const char* attribute;
  };
  const Column columns[] = {{"DEVICE", nullptr},          {"IFNAME", "dra.net/ifName"},
                            {"RDMA", "dra.net/rdmaDevice"}, {"NUMA", "dra.net/numaNode"},
                            {"PCI", "dra.net/pciAddress"}, {"PCIE-ROOT", "resource.kubernetes.io/pcieRoot"}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : view.devices) {
    std::vector<std::string> row;
    for (const auto& c : columns) row.push_back(c.attribute ? AttributeText(d.attributes, c.attribute) : d.name);
    std::string chars;
    for (const auto& cd : d.char_devices) {
      auto slash = cd.path.rfind('/');
      chars += (chars.empty() ? "" : ",") + cd.path.substr(slash == std::string::npos ? 0 : slash + 1);
    }
    row.push_back(chars.empty() ? "-" : chars);
    row.push_back(health::HealthName(verdicts.at(d.name).health));
    rows.push_back(std::move(row));
  }
  std::vector<std::string> headers;
  for (const auto& c : columns) headers.push_back(c.header);
  headers.push_back("CHAR-DEVICES");
  headers.push_back("HEALTH");
  std::vector<std::size_t> widths(headers.size());
  for (std::size_t i = 0; i < headers.size(); ++i) {
    widths[i] = headers[i].size();
    for (const auto& r : rows) widths[i] = std::max(widths[i], r[i].size());
  }
  auto print = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size(); ++i)
      std::cout << std::left << std::setw(static_cast<int>(i + 1 == r.size() ? 0 : widths[i] + 2)) << r[i];
    std::cout << "\n";
  };
  std::cout << "node " << view.node_name << ": " << view.devices.size() << " devices\n";
  print(headers);
  for (const auto& r : rows) print(r);
  // Attributes beyond the columns: the plugins' and the rest, per device.
  for (const auto& d : view.devices) {
    std::cout << "\n" << d.name << "\n";
    const auto& verdict = verdicts.at(d.name);
    std::cout << "  health: " << health::HealthName(verdict.health)
              << (verdict.message.empty() ? "" : " (" + verdict.message + ")") << "\n";
    for (const auto& [k, v] : d.attributes) std::cout << "  " << k << " = " << AttributeText(d.attributes, k) << "\n";
  }
  for (const auto& r : view.plugin_reports)
    std::cout << "\nplugin " << (r.name.empty() ? r.file : r.name) << ": " << plugins::OutcomeName(r.outcome)
              << (r.reason.empty() ? "" : " (" + r.reason + ")");
  if (!view.plugin_reports.empty()) std::cout << "\n";
}

int Run(const InspectCommand& cmd) {
  NodeView view = BuildNodeView(cmd.node);
  if (cmd.output == "table") {
    PrintTable(view, cmd.node.host_root);
    return 0;
  }
  kube::SliceParams params;
  params.driver = cmd.driver;
  params.node_name = view.node_name;
  std::ostringstream discard;
  Logger quiet(discard);
  std::string json = kube::SlicesToJson(kube::BuildSlices(params, view.devices, quiet));
  if (cmd.output == "json") {
    std::cout << json << "\n";
  } else {
    // JSON is YAML: yaml-cpp reads our JSON and writes it back block-style.
    YAML::Emitter out;
    out << YAML::Load(json);
    std::cout << out.c_str() << "\n";
  }
  return 0;
}

}  // namespace

void AddInspectCommand(CLI::App& app, int& exit_code) {
  auto cmd = std::make_shared<InspectCommand>();
  auto* sub = app.add_subcommand("inspect", "Show the devices and ResourceSlices dranetd would publish for a node");
  AddNodeViewFlags(*sub, cmd->node);
  sub->add_option("-o,--output", cmd->output, "table, json (ResourceSlice objects) or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  sub->add_option("--driver-name", cmd->driver, "DRA driver name");
  sub->callback([cmd, &exit_code] { exit_code = Run(*cmd); });
}

void AddSnapshotCommand(CLI::App& app, int& exit_code) {
  struct SnapshotCommand {
    std::string out, host_root = "/", node_name, description;
    plugins::PluginFlags plugins;
  };
  auto cmd = std::make_shared<SnapshotCommand>();
  auto* sub = app.add_subcommand(
      "snapshot",
      "Capture this node (sysfs subset, addresses, routes) as a snapshot, with the sysfs files the plugins "
      "declare they read");
  sub->add_option("--out", cmd->out, "Output directory (must be empty or absent)")->required();
  AddHostRootOption(*sub, cmd->host_root, "Node root to capture");
  sub->add_option("--node-name", cmd->node_name, "Node name recorded in the snapshot");
  sub->add_option("--description", cmd->description, "Free text recorded in the snapshot");
  plugins::AddPluginFlags(*sub, cmd->plugins);
  sub->callback([cmd, &exit_code] {
    Logger logger(std::cerr);
    inventory::CaptureOptions options;
    options.host_root = cmd->host_root;
    options.node_name = cmd->node_name;
    options.description = cmd->description;
    // The plugins' own declarations (ABI 1.3 snapshot_paths) say which
    // further sysfs files they read; the plugins are loaded, not run.
    plugins::PluginHostOptions plugin_options;
    plugins::ApplyPluginFlags(cmd->plugins, plugin_options);
    plugin_options.host_root = cmd->host_root;
    plugin_options.load_only = true;
    std::ostringstream quiet;
    Logger plugin_logger(quiet);
    plugins::PluginHost host(plugin_options, plugin_logger);
    for (const auto& report : host.reports()) {
      for (const auto& path : report.snapshot_paths) {
        logger.Info("capturing what a plugin reads", {{"plugin", report.name}, {"path", path}});
        options.extra_sysfs_globs.push_back(path);
      }
    }
    inventory::CaptureSnapshot(cmd->out, options, logger);
    std::cout << "snapshot written to " << cmd->out << "\n";
    exit_code = 0;
  });
}

}  // namespace dranet::ctl
