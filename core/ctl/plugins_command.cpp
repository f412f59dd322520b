#include "ctl/plugins_command.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "ctl/node_view.h"

namespace dranet::ctl {
namespace {

struct PluginsCommand {
  NodeViewFlags node;
  std::string output = "table";
};

std::string Capabilities(uint32_t caps) {
  const std::string names = plugins::CapabilityNames(caps, " ");
  return names.empty() ? "-" : names;
}

// What a plugin's last pass published and what the host rejected.
void PrintTally(const char* pass, const plugins::PluginReport::AttributeTally& tally) {
  for (const auto& [name, devices] : tally.published)
    std::cout << "    " << pass << " published " << name << " on " << devices << " device(s)\n";
  for (const auto& [why, devices] : tally.rejected)
    std::cout << "    " << pass << " REJECTED " << why << " (" << devices << " device(s))\n";
}

void WriteTally(rapidjson::PrettyWriter<rapidjson::StringBuffer>& w, const plugins::PluginReport::AttributeTally& tally) {
  w.StartObject();
  w.Key("published");
  w.StartObject();
  for (const auto& [name, devices] : tally.published) {
    w.Key(name.c_str());
    w.Uint64(devices);
  }
  w.EndObject();
  w.Key("rejected");
  w.StartArray();
  for (const auto& [why, devices] : tally.rejected) {
    w.StartObject();
    w.Key("reason"); w.String(why.c_str());
    w.Key("devices"); w.Uint64(devices);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteStrings(rapidjson::PrettyWriter<rapidjson::StringBuffer>& w, const std::vector<std::string>& strings) {
  w.StartArray();
  for (const auto& s : strings) w.String(s.c_str());
  w.EndArray();
}

int Run(const PluginsCommand& cmd) {
  // The plugins run on the node's devices (discovery on --host-root) exactly
  // as dranetd runs them, so the listing shows what each one published.
  NodeView view = BuildNodeView(cmd.node);
  const auto& reports = view.plugin_reports;
  if (cmd.output == "table") {
    std::size_t name_width = 6;
    for (const auto& r : reports) name_width = std::max(name_width, r.name.size() + 2);
    const int nw = static_cast<int>(name_width);
    std::cout << std::left << std::setw(nw) << "NAME" << std::setw(10) << "VERSION" << std::setw(6) << "ABI"
              << std::setw(16) << "STATUS" << std::setw(30) << "CAPABILITIES" << "DETAIL\n";
    for (const auto& r : reports) {
      std::string abi = r.abi_version ? std::to_string(DRANET_ABI_MAJOR_OF(r.abi_version)) + "." +
                                            std::to_string(DRANET_ABI_MINOR_OF(r.abi_version))
                                      : "-";
      std::string detail = r.outcome == plugins::PluginOutcome::kLoaded ? r.description : r.reason;
      std::cout << std::setw(nw) << (r.name.empty() ? "-" : r.name) << std::setw(10)
                << (r.version.empty() ? "-" : r.version) << std::setw(6) << abi << std::setw(16)
                << plugins::OutcomeName(r.outcome) << std::setw(30) << Capabilities(r.capabilities)
                << detail << "  (" << r.file << ")\n";
      for (const auto& key : r.config_keys) std::cout << "    config " << key << "\n";
      for (const auto& path : r.snapshot_paths) std::cout << "    reads sysfs " << path << "\n";
      if (!r.attribute_domains.empty()) {
        std::cout << "    domains";
        for (const auto& d : r.attribute_domains) std::cout << " " << d;
        std::cout << "\n";
      }
      for (const auto& why : r.refused_domains) std::cout << "    domain REFUSED " << why << "\n";
      PrintTally("discover", r.discovered);
      PrintTally("annotate", r.annotated);
    }
  } else {
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.StartArray();
    for (const auto& r : reports) {
      w.StartObject();
      w.Key("file"); w.String(r.file.c_str());
      w.Key("name"); w.String(r.name.c_str());
      w.Key("version"); w.String(r.version.c_str());
      w.Key("abi"); w.Uint(r.abi_version);
      w.Key("status"); w.String(plugins::OutcomeName(r.outcome));
      w.Key("capabilities"); w.String(Capabilities(r.capabilities).c_str());
      w.Key("reason"); w.String(r.reason.c_str());
      w.Key("configKeys"); WriteStrings(w, r.config_keys);
      w.Key("snapshotPaths"); WriteStrings(w, r.snapshot_paths);
      w.Key("attributeDomains"); WriteStrings(w, r.attribute_domains);
      w.Key("refusedDomains"); WriteStrings(w, r.refused_domains);
      w.Key("discovered"); WriteTally(w, r.discovered);
      w.Key("annotated"); WriteTally(w, r.annotated);
      w.EndObject();
    }
    w.EndArray();
    std::cout << buf.GetString() << "\n";
  }
  return 0;
}

}  // namespace

void AddPluginsCommand(CLI::App& app, int& exit_code) {
  auto cmd = std::make_shared<PluginsCommand>();
  auto* sub = app.add_subcommand(
      "plugins",
      "List plugins: loaded, skipped, rejected, and why; the attribute domains each owns, and what each "
      "published on the node's devices and what the host rejected");
  AddNodeViewFlags(*sub, cmd->node);
  sub->add_option("-o,--output", cmd->output, "table or json")->check(CLI::IsMember({"table", "json"}));
  sub->callback([cmd, &exit_code] { exit_code = Run(*cmd); });
}

}  // namespace dranet::ctl
