#include "demo_overlay.h"

#include <algorithm>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <yaml-cpp/yaml.h>

namespace dranet::demo {
namespace fs = std::filesystem;

std::string CloudOf(const fs::path& snapshot) {
  std::error_code ec;
  if (fs::is_directory(snapshot / "metadata/azure", ec)) return "azure";
  if (fs::is_directory(snapshot / "metadata/gce", ec)) return "gcp";
  if (fs::is_directory(snapshot / "metadata/aws", ec)) return "aws";
  if (fs::is_directory(snapshot / "metadata/oci", ec)) return "oci";
  if (fs::is_directory(snapshot / "metadata/alibaba", ec)) return "alibaba";
  return "generic";
}

DaemonBehaviour ReadOverlay(const fs::path& overlay_dir) {
  const fs::path file = overlay_dir / "daemonset-patch.yaml";
  DaemonBehaviour behaviour;
  behaviour.source = overlay_dir.string();
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(file.string());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("cannot read " + file.string() + ": " + e.what());
  }
  const YAML::Node containers = doc["spec"]["template"]["spec"]["containers"];
  YAML::Node args;
  if (containers && containers.IsSequence())
    for (const auto& c : containers)
      if (c["name"] && c["name"].as<std::string>() == "dranetd") args = c["args"];
  if (!args || !args.IsSequence())
    throw std::runtime_error(file.string() + ": no args of a container named dranetd");
  for (const auto& a : args) {
    const std::string arg = a.as<std::string>();
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(kBehaviourFlags.begin(), kBehaviourFlags.end(), name) != kBehaviourFlags.end())
      behaviour.args.push_back(arg);
  }
  // Parsed with dranetd's own option definitions (daemon/main.cpp, plugin_flags.h).
  CLI::App app;
  app.add_option("--move-ib-interfaces", behaviour.move_ib_interfaces);
  app.add_option("--filter", behaviour.filter);
  app.add_option("--rdma-exclusive", behaviour.rdma_exclusive);
  app.add_option("--copy-host-routes", behaviour.copy_host_routes);
  plugins::AddPluginFlags(app, behaviour.plugins);
  std::vector<std::string> reversed(behaviour.args.rbegin(), behaviour.args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw std::runtime_error(file.string() + ": dranetd args: " + e.what());
  }
  return behaviour;
}

}  // namespace dranet::demo
