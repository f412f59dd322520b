#include "ctl/plugins_command.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "base/log.h"
#include "plugins/plugin_flags.h"
#include "plugins/plugin_host.h"

namespace dranet::ctl {
namespace {

struct PluginsCommand {
  plugins::PluginFlags flags;
  std::string host_root = "/";
  std::string output = "table";
  bool verbose = false;
};

std::string Capabilities(uint32_t caps) {
  const std::string names = plugins::CapabilityNames(caps, " ");
  return names.empty() ? "-" : names;
}

int Run(const PluginsCommand& cmd) {
  plugins::PluginHostOptions options;
  plugins::ApplyPluginFlags(cmd.flags, options);
  options.host_root = cmd.host_root;
  // Plugin logs go to stderr only with -v; the listing is the output.
  Logger logger(std::cerr, Logger::Format::kText, cmd.verbose ? 4 : 0);
  std::ostringstream discard;
  Logger quiet(discard);
  plugins::PluginHost host(options, cmd.verbose ? logger : quiet);
  if (cmd.output == "table") {
    std::size_t name_width = 6;
    for (const auto& r : host.reports()) name_width = std::max(name_width, r.name.size() + 2);
    const int nw = static_cast<int>(name_width);
    std::cout << std::left << std::setw(nw) << "NAME" << std::setw(10) << "VERSION" << std::setw(6) << "ABI"
              << std::setw(16) << "STATUS" << std::setw(30) << "CAPABILITIES" << "DETAIL\n";
    for (const auto& r : host.reports()) {
      std::string abi = r.abi_version ? std::to_string(DRANET_ABI_MAJOR_OF(r.abi_version)) + "." +
                                            std::to_string(DRANET_ABI_MINOR_OF(r.abi_version))
                                      : "-";
      std::string detail = r.outcome == plugins::PluginOutcome::kLoaded ? r.description : r.reason;
      std::cout << std::setw(nw) << (r.name.empty() ? "-" : r.name) << std::setw(10)
                << (r.version.empty() ? "-" : r.version) << std::setw(6) << abi << std::setw(16)
                << plugins::OutcomeName(r.outcome) << std::setw(30) << Capabilities(r.capabilities)
                << detail << "  (" << r.file << ")\n";
      for (const auto& key : r.config_keys) std::cout << "    config " << key << "\n";
    }
  } else {
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.StartArray();
    for (const auto& r : host.reports()) {
      w.StartObject();
      w.Key("file"); w.String(r.file.c_str());
      w.Key("name"); w.String(r.name.c_str());
      w.Key("version"); w.String(r.version.c_str());
      w.Key("abi"); w.Uint(r.abi_version);
      w.Key("status"); w.String(plugins::OutcomeName(r.outcome));
      w.Key("capabilities"); w.String(Capabilities(r.capabilities).c_str());
      w.Key("reason"); w.String(r.reason.c_str());
      w.Key("configKeys");
      w.StartArray();
      for (const auto& k : r.config_keys) w.String(k.c_str());
      w.EndArray();
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
  auto* sub = app.add_subcommand("plugins", "List plugins: loaded, skipped, rejected, and why");
  plugins::AddPluginFlags(*sub, cmd->flags);
  sub->add_option("--host-root", cmd->host_root, "Node root (live: /, or a snapshot directory)");
  sub->add_option("-o,--output", cmd->output, "table or json")->check(CLI::IsMember({"table", "json"}));
  sub->add_flag("-v,--verbose", cmd->verbose, "Show plugin logs on stderr");
  sub->callback([cmd, &exit_code] { exit_code = Run(*cmd); });
}

}  // namespace dranet::ctl
