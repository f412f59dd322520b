// dranetd — the dranet node daemon (driver dra.net). Parses and logs every
// flag, then hands over to RunDaemon (daemon.h).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/log.h"
#include "daemon/capabilities.h"
#include "daemon/daemon.h"
#include "daemon/dranet_flags.h"
#include "dranet/build_info.h"
#include "inventory/host_root.h"
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
  std::string max_poll_interval = "1m", min_poll_interval = "2s", db_path, cloud_provider_hint, feature_gates;
  app.add_flag("--version", version, "Print the version and exit");
  app.add_option("--host-root", options.host_root, "Node root filesystem: / or a node snapshot directory");
  app.add_option("--node-name,--hostname-override", options.node_name, "Kubernetes node name")->envname("NODE_NAME");
  app.add_option("--driver-name", options.driver_name, "DRA driver name");
  app.add_option("--kubeconfig", options.kubeconfig, "Kubeconfig file (default: in-cluster configuration)");
  app.add_option("--publish", options.publish, "Publish ResourceSlices to the API server");
  app.add_option("--resource-api-version", options.resource_api_version,
                 "resource.k8s.io version to speak: auto (the newest the API server serves), v1 (Kubernetes 1.34+), "
                 "v1beta2 (1.33) or v1beta1 (1.32, 1.33)")
      ->check(CLI::IsMember({"auto", "v1", "v1beta2", "v1beta1"}));
  app.add_option("--move-ib-interfaces", options.move_ib_interfaces,
                 "Publish IPoIB netdevs; false publishes their HCAs IB-only");
  app.add_option("--filter", options.filter,
                 "CEL publish filter over attributes (DRANET syntax); \"\" publishes every device");
  app.add_option("--shared-devices", options.shared_devices,
                 "Devices several claims may hold at once (Kubernetes 1.36+ consumable capacity): a CEL device "
                 "selector such as 'device.attributes[\"dra.net\"].rdma', \"true\" for every RDMA device, \"\" "
                 "for none (default). See docs/sharing.md");
  app.add_option("--device-shares", options.device_shares,
                 "Claims that may hold one shared device at once (its dra.net/shares capacity)")
      ->check(CLI::Range(2, 1024));
  app.add_option("--metrics-address,--bind-address", options.metrics_address,
                 "host:port for /metrics, /livez, /readyz, /healthz; \"off\" disables");
  app.add_option("--kubelet-plugin", options.kubelet_plugin, "Serve the kubelet DRA plugin (needs the API server)");
  app.add_option("--kubelet-root-dir", options.kubelet_root_dir, "Kubelet's root directory (plugin sockets)");
  auto* state_dir = app.add_option("--state-dir", options.state_dir, "Where prepared claims are checkpointed");
  app.add_option("--db-path", db_path,
                 "DRANET's state file: its directory becomes --state-dir; \"\" keeps state for this process only")
      ->excludes(state_dir);
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
  app.add_option("--device-health", options.device_health,
                 "Watch every device's health (link, carrier, RDMA ports, PCI function) and stream it to the "
                 "kubelet (dra-health; pod.status...allocatedResourcesStatus), /metrics and dranetctl inspect");
  app.add_option("--device-taints", options.device_taints,
                 "Publish an unhealthy device with a NoSchedule taint (dra.net/unhealthy) so that new claims avoid "
                 "it; removed once it has been healthy for 30 s. Ignored where the API server drops taints "
                 "(Kubernetes before 1.36)");
  app.add_option("--nri", options.nri, "Run the NRI plugin (device nodes, env, netdevs at pod start)");
  app.add_option("--nri-socket", options.nri_socket, "The container runtime's NRI socket");
  app.add_option("--pod-uid", options.pod_uid,
                 "This dranetd's pod UID: kubelet sockets per instance, for rollouts with surge (kubelet 1.33+)")
      ->envname("POD_UID");
  app.add_option("--handover", options.handover,
                 "Pass the NRI connection and status port to a successor (a rollout with surge) and take them "
                 "from a predecessor");
  auto* resync = app.add_option_function<int>(
      "--resync-seconds", [&](int seconds) { max_poll_interval = std::to_string(seconds) + "s"; },
      "Rediscover at least this often (seconds; the older spelling of --inventory-max-poll-interval)");
  resync->check(CLI::Range(1, 86400));
  app.add_option("--inventory-max-poll-interval", max_poll_interval, "Rediscover at least this often (Go duration)")
      ->excludes(resync);
  app.add_option("--inventory-min-poll-interval", min_poll_interval,
                 "After a burst, netlink events rediscover at most once per this interval (Go duration)");
  app.add_option("--inventory-poll-burst", options.poll_burst, "Event-triggered rediscoveries allowed in a row")
      ->check(CLI::Range(1, 1000));
  app.add_option("--cloud-provider-hint", cloud_provider_hint,
                 "Which cloud plugin runs: AWS, GCE, AZURE, OKE, ALIBABA or NONE; \"\" lets each detect its cloud");
  app.add_option("--feature-gates", feature_gates, "DRANET feature gates, Gate=true,...");
  app.add_option("--log-format", log_format, "text (klog) or json")->check(CLI::IsMember({"text", "json"}));
  app.add_option("-v,--v", verbosity, "Log verbosity");
  app.add_flag("--once", options.once, "Discover, publish once when enabled, and exit");
  dranet::plugins::AddPluginFlags(app, options.plugins);
  // "--name=" is the empty value (SplitEmptyValues), which Go's flag package
  // refuses for a boolean, and so does dranetd rather than reading it as false.
  for (auto* option : app.get_options())
    if (option->get_type_name() == "BOOLEAN" && option->get_items_expected_min() > 0)
      option->check(CLI::Validator(
          [](std::string& value) { return value.empty() ? std::string("want true or false, not an empty value") : std::string(); },
          "", "not empty"));
  // DRANET's manifests begin the container args with the program ("/dranet").
  const int first = dranet::daemon::FirstArgument(argc, argv);
  std::vector<std::string> args(argv + first, argv + argc);
  args = dranet::daemon::SplitEmptyValues(args);
  std::vector<char*> cli_argv{argv[0]};
  for (auto& arg : args) cli_argv.push_back(arg.data());
  try {
    app.parse(static_cast<int>(cli_argv.size()), cli_argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (version) {
    std::cout << "dranetd " << dranet::build::kVersion << " (driver " << dranet::build::kDriverName
              << ", plugin ABI " << DRANET_ABI_MAJOR << "." << DRANET_ABI_MINOR << ")\n";
    return 0;
  }
  dranet::Logger logger(std::cerr, dranet::Logger::ParseFormat(log_format), verbosity);
  // A root that is not one would be read as an empty node on top of this
  // machine's kernel and host name.
  if (const std::string problem = dranet::inventory::HostRootProblem(options.host_root); !problem.empty()) {
    logger.Error("--host-root " + problem + " (it takes / or a node's root directory, such as a node snapshot)");
    return 2;
  }
  std::map<std::string, bool> gates;
  dranet::daemon::CloudHint cloud;
  try {
    options.resync_period = dranet::daemon::ParseGoDuration(max_poll_interval);
    options.min_poll_interval = dranet::daemon::ParseGoDuration(min_poll_interval);
    if (options.resync_period < std::chrono::seconds(1))
      throw std::invalid_argument("--inventory-max-poll-interval must be at least 1s");
    gates = dranet::daemon::ParseFeatureGates(feature_gates);
    cloud = dranet::daemon::CloudPluginsForHint(cloud_provider_hint);
  } catch (const std::invalid_argument& e) {
    logger.Error(e.what());
    return 2;
  }
  options.persistent_slice_attributes = gates[std::string(dranet::daemon::kGatePersistentResourceSliceAttributes)];
  options.list_type_attributes = gates[std::string(dranet::daemon::kGateDraListTypeAttributes)];
  options.plugins.deny.insert(options.plugins.deny.end(), cloud.deny.begin(), cloud.deny.end());
  // The hinted cloud plugin runs without detecting; first, so that an
  // explicit --plugin-config <plugin>.detect=... still wins.
  if (!cloud.plugin.empty())
    options.plugins.config.insert(options.plugins.config.begin(), cloud.plugin + ".detect=skip");
  if (app.count("--db-path") > 0) {
    options.state_dir = dranet::daemon::StateDirForDbPath(db_path);
    if (options.state_dir.empty()) {
      char dir[] = "/tmp/dranet-state-XXXXXX";
      if (::mkdtemp(dir) == nullptr) {
        logger.Error("--db-path=\"\": cannot create a temporary state directory", {{"error", std::strerror(errno)}});
        return 1;
      }
      options.state_dir = dir;
      logger.Warning("--db-path is empty: prepared claims are kept for this process only; a restart forgets them",
                     {{"dir", options.state_dir}});
    } else {
      logger.Info("--db-path: prepared claims are checkpointed in its directory", {{"dir", options.state_dir}});
    }
  }
  std::vector<dranet::LogField> flag_fields;
  for (const auto* opt : app.get_options()) {
    if (opt->get_name() == "--help" || opt->get_name() == "--version") continue;
    std::string value = opt->count() > 0 ? opt->as<std::string>() : opt->get_default_str();
    flag_fields.emplace_back(opt->get_name(), value);
  }
  logger.Info("starting dranetd", {{"version", dranet::build::kVersion}, {"pid", static_cast<int64_t>(getpid())}});
  logger.Info("flags", flag_fields);
  if (!cloud.note.empty()) logger.Warning(cloud.note);
  if (options.list_type_attributes)
    logger.Info("feature gate DRAListTypeAttributes: resource.kubernetes.io/numaNode is published as an int list; "
                "the Kubernetes control plane needs the gate DRAListTypeAttributes too, or the API server rejects "
                "these ResourceSlices");
  if (options.persistent_slice_attributes)
    logger.Info("feature gate PersistentResourceSliceAttributes: an allocated device keeps publishing the attributes "
                "it had at prepare while its netdev is in a pod");
  if (!cloud.detect)
    logger.Info("cloud provider hint", {{"hint", cloud_provider_hint}, {"plugin", cloud.plugin.empty() ? "none" : cloud.plugin}});
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
