// dranetd — the dranet node daemon.
//
// Startup: parse and log every flag, load plugins, discover the node's
// devices, add plugin attributes, then serve until SIGTERM/SIGINT.
#include <signal.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "base/log.h"
#include "dranet/build_info.h"
#include "plugins/plugin_flags.h"
#include "plugins/plugin_host.h"

namespace {

struct DaemonFlags {
  std::string host_root = "/";
  std::string node_name;
  std::string log_format = "text";
  int verbosity = 0;
  bool once = false;
  dranet::plugins::PluginFlags plugins;
};

int WaitForTermination() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dranetd — Kubernetes DRA network driver (driver dra.net)"};
  DaemonFlags flags;
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");
  app.add_option("--host-root", flags.host_root, "Node root filesystem (a snapshot directory in tests)");
  app.add_option("--node-name", flags.node_name, "Kubernetes node name")->envname("NODE_NAME");
  app.add_option("--log-format", flags.log_format, "text (klog) or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("-v,--v", flags.verbosity, "Log verbosity");
  app.add_flag("--once", flags.once, "Discover, log the result and exit");
  dranet::plugins::AddPluginFlags(app, flags.plugins);
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::cout << "dranetd " << dranet::build::kVersion << " (driver " << dranet::build::kDriverName
              << ", plugin ABI " << DRANET_ABI_MAJOR << "." << DRANET_ABI_MINOR << ")\n";
    return 0;
  }
  // Block termination signals before any thread starts, so sigwait owns them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  dranet::Logger logger(std::cerr, dranet::Logger::ParseFormat(flags.log_format), flags.verbosity);
  std::vector<dranet::LogField> flag_fields;
  for (const auto* opt : app.get_options()) {
    if (opt->get_name() == "--help" || opt->get_name() == "--version") continue;
    flag_fields.emplace_back(opt->get_name(), opt->as<std::string>());
  }
  logger.Info("starting dranetd", {{"version", dranet::build::kVersion}});
  logger.Info("flags", flag_fields);

  dranet::plugins::PluginHostOptions plugin_options;
  try {
    dranet::plugins::ApplyPluginFlags(flags.plugins, plugin_options);
  } catch (const std::exception& e) {
    logger.Error("invalid flags", {{"error", e.what()}});
    return 2;
  }
  plugin_options.host_root = flags.host_root;
  plugin_options.node_name = flags.node_name;
  dranet::plugins::PluginHost plugins(plugin_options, logger);
  logger.Info("plugins ready", {{"loaded", plugins.loaded_count()}, {"seen", plugins.reports().size()}});
  if (flags.once) return 0;
  int sig = WaitForTermination();
  logger.Info("shutting down", {{"signal", sig}});
  return 0;
}
