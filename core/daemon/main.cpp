// dranetd — the dranet node daemon (driver dra.net). Parses and logs every
// flag, then hands over to RunDaemon (daemon.h).
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

#include <CLI/CLI.hpp>

#include "base/log.h"
#include "daemon/capabilities.h"
#include "daemon/daemon.h"
#include "dranet/build_info.h"
#include <dranet/plugin.h>

int main(int argc, char** argv) {
  // Block termination signals before any thread starts, so that only the
  // main thread's sigwait() receives them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  CLI::App app{"dranetd — Kubernetes DRA network driver (driver dra.net)"};
  app.option_defaults()->always_capture_default();  // every flag is logged with its value
  dranet::daemon::DaemonOptions options;
  bool version = false;
  std::string log_format = "text";
  int verbosity = 0;
  int resync_seconds = 60;
  app.add_flag("--version", version, "Print the version and exit");
  app.add_option("--host-root", options.host_root, "Node root filesystem: / or a node snapshot directory");
  app.add_option("--node-name", options.node_name, "Kubernetes node name")->envname("NODE_NAME");
  app.add_option("--driver-name", options.driver_name, "DRA driver name");
  app.add_option("--kubeconfig", options.kubeconfig, "Kubeconfig file (default: in-cluster configuration)");
  app.add_option("--publish", options.publish, "Publish ResourceSlices to the API server");
  app.add_option("--move-ib-interfaces", options.move_ib_interfaces,
                 "Publish IPoIB netdevs; false publishes their HCAs IB-only");
  app.add_option("--filter", options.filter,
                 "CEL publish filter over attributes (DRANET syntax); \"\" publishes every device");
  app.add_option("--metrics-address", options.metrics_address,
                 "host:port for /metrics, /livez, /readyz, /healthz; \"off\" disables");
  app.add_option("--kubelet-plugin", options.kubelet_plugin, "Serve the kubelet DRA plugin (needs the API server)");
  app.add_option("--kubelet-root-dir", options.kubelet_root_dir, "Kubelet's root directory (plugin sockets)");
  app.add_option("--state-dir", options.state_dir, "Where prepared claims are checkpointed");
  app.add_option("--rdma-exclusive", options.rdma_exclusive,
                 "RDMA netns mode is exclusive: move HCA links into pods with their netdevs");
  app.add_option("--copy-host-routes", options.copy_host_routes,
                 "A netdev moved into a pod takes its host routes, policy rules and permanent neighbours "
                 "along (default true); they are restored on the host at teardown either way");
  app.add_option("--host-network-source", options.host_network_source,
                 "Where prepare reads a netdev's host addresses and routes: auto (the snapshot's netlink.json "
                 "under a snapshot --host-root, else the kernel), live or snapshot")
      ->check(CLI::IsMember({"auto", "live", "snapshot"}));
  app.add_option("--profile-provider", options.profile_provider,
                 "Who resolves a claim config's profile: cloud (the cloud plugins), webhook (--webhook-url) "
                 "or none")
      ->check(CLI::IsMember({"cloud", "webhook", "none"}));
  app.add_option("--webhook-url", options.webhook_url,
                 "The profile webhook (DRANET's protocol): http(s)://host:port[/base] or unix:///path.sock");
  app.add_option("--cdi", options.cdi, "Also inject through CDI spec files (fails closed on runtimes with CDI)");
  app.add_option("--cdi-dir", options.cdi_dir, "Directory for CDI spec files");
  app.add_option("--nri", options.nri, "Run the NRI plugin (device nodes, env, netdevs at pod start)");
  app.add_option("--nri-socket", options.nri_socket, "The container runtime's NRI socket");
  app.add_option("--resync-seconds", resync_seconds, "Rediscover at least this often")->check(CLI::Range(1, 86400));
  app.add_option("--log-format", log_format, "text (klog) or json")->check(CLI::IsMember({"text", "json"}));
  app.add_option("-v,--v", verbosity, "Log verbosity");
  app.add_flag("--once", options.once, "Discover, publish once when enabled, and exit");
  dranet::plugins::AddPluginFlags(app, options.plugins);
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::cout << "dranetd " << dranet::build::kVersion << " (driver " << dranet::build::kDriverName
              << ", plugin ABI " << DRANET_ABI_MAJOR << "." << DRANET_ABI_MINOR << ")\n";
    return 0;
  }
  options.resync_period = std::chrono::seconds(resync_seconds);
  dranet::Logger logger(std::cerr, dranet::Logger::ParseFormat(log_format), verbosity);
  std::vector<dranet::LogField> flag_fields;
  for (const auto* opt : app.get_options()) {
    if (opt->get_name() == "--help" || opt->get_name() == "--version") continue;
    std::string value = opt->count() > 0 ? opt->as<std::string>() : opt->get_default_str();
    flag_fields.emplace_back(opt->get_name(), value);
  }
  logger.Info("starting dranetd", {{"version", dranet::build::kVersion}, {"pid", static_cast<int64_t>(getpid())}});
  logger.Info("flags", flag_fields);
  if (options.node_name.empty() && options.publish) {
    logger.Error("--node-name (or NODE_NAME) is required to publish");
    return 2;
  }
  if (const char* skip = std::getenv(dranet::daemon::kSkipCapabilityCheckEnv); skip && std::string_view(skip) == "1") {
    dranet::daemon::SkipCapabilityCheckForTesting();
    logger.Warning("capability check skipped: test-only setting, pods may fail to start",
                   {{"env", dranet::daemon::kSkipCapabilityCheckEnv}});
  }
  return dranet::daemon::RunDaemon(options, logger);
}
