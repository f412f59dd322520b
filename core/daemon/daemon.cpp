#include "daemon/daemon.h"

#include <pthread.h>
#include <signal.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "base/files.h"
#include "base/metrics.h"
#include "cel/publish_filter.h"
#include "cel/share_policy.h"
#include "daemon/capabilities.h"
#include "daemon/claim_status_report.h"
#include "daemon/driver_metrics.h"
#include "daemon/persistent_attributes.h"
#include "daemon/health.h"
#include "daemon/process_metrics.h"
#include "daemon/handover.h"
#include "daemon/status_server.h"
#include "dranet/build_info.h"
#include "health/health_monitor.h"
#include "health/taint_policy.h"
#include "inventory/inventory.h"
#include "inventory/monitor.h"
#include "inventory/snapshot.h"
#include "inject/netlink_socket.h"
#include "inject/netns_mover.h"
#include "inject/rdma_link.h"
#include "kube/api_client.h"
#include "kube/claim_status.h"
#include "kube/cluster_config.h"
#include "kube/event_recorder.h"
#include "kube/json_fields.h"
#include "kube/resource_api.h"
#include "kube/resource_claim.h"
#include "kube/slice_publisher.h"
#include "kubelet/kubelet_plugin.h"
#include "kubelet/plugin_profile_provider.h"
#include "kubelet/webhook_profile_provider.h"
#include "nri/nri_plugin.h"
#include "state/checkpoint_store.h"
#include "plugins/plugin_host.h"
#include "plugins/recorded_metadata.h"

namespace dranet::daemon {
namespace {

int WaitForSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

// The daemon's own /proc: its kernel's boot id and its own capabilities,
// not the node root's.
constexpr const char* kSelfProcfs = "/proc";
constexpr const char* kSelfStatus = "/proc/self/status";

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Runs Event writes on their own thread, so that a slow or absent API
// server never holds an NRI hook or a prepare. Bounded: when the queue is
// full, the oldest pending Event is dropped (and logged).
class BackgroundEvents {
 public:
  explicit BackgroundEvents(Logger& logger) : logger_(logger), thread_([this](std::stop_token st) { Run(st); }) {}
  ~BackgroundEvents() {
    {
      std::lock_guard lock(mu_);  // no lost wake-up between the check and the wait
      thread_.request_stop();
    }
    cv_.notify_all();
  }
  void Post(std::function<void()> write) {
    {
      std::lock_guard lock(mu_);
      if (queue_.size() >= kMaxPending) {
        queue_.pop_front();
        logger_.Warning("too many pending Events; the oldest was dropped");
      }
      queue_.push_back(std::move(write));
    }
    cv_.notify_all();
  }

 private:
  static constexpr std::size_t kMaxPending = 256;
  void Run(std::stop_token st) {
    for (;;) {
      std::function<void()> write;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return st.stop_requested() || !queue_.empty(); });
        if (st.stop_requested()) return;
        write = std::move(queue_.front());
        queue_.pop_front();
      }
      write();
    }
  }
  Logger& logger_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::jthread thread_;
};

}  // namespace

int RunDaemon(const DaemonOptions& options, Logger& logger) {
  {
    const uint64_t effective = EffectiveCapabilities(ReadFileCapped(kSelfStatus).value_or(""));
    auto missing = MissingCapabilities(effective, options.nri);
    for (const auto& need : missing)
      logger.Error("missing capability: add it to the container's securityContext.capabilities.add, or run with --nri=false",
                   {{"capability", need.name}, {"neededFor", need.why}});
    if (!missing.empty()) return 1;
  }
  std::optional<cel::Program> filter;
  try {
    filter = cel::CompilePublishFilter(options.filter);
  } catch (const cel::CompileError& e) {
    logger.Error("invalid --filter expression", {{"error", e.what()}});
    return 2;
  }
  cel::SharePolicy share_policy;
  try {
    share_policy = cel::CompileSharePolicy(options.shared_devices, options.device_shares);
  } catch (const cel::CompileError& e) {
    logger.Error("invalid --shared-devices expression", {{"error", e.what()}});
    return 2;
  } catch (const std::invalid_argument& e) {
    logger.Error(e.what());
    return 2;
  }
  if (share_policy.enabled()) {
    // A share leaves the HCA where it is, in every pod's namespace at once.
    if (options.rdma_exclusive) {
      logger.Error("--shared-devices needs the shared RDMA netns mode, and --rdma-exclusive says the node is in "
                   "exclusive mode: share no device, or switch the node to shared mode (rdma system set netns "
                   "shared) and drop --rdma-exclusive");
      return 2;
    }
    if (inventory::IsSnapshot(options.host_root)) {
      logger.Info("--shared-devices on a snapshot: the kernel's RDMA netns mode is not checked");
    } else if (const auto exclusive = inject::RdmaNetnsModeExclusive(); exclusive && *exclusive) {
      logger.Error("--shared-devices needs the shared RDMA netns mode, and the kernel is in exclusive mode: share "
                   "no device, or run `rdma system set netns shared` (ib_core netns_mode=1) while no pod holds "
                   "an RDMA device");
      return 2;
    }
  }
  MetricsRegistry metrics;
  RegisterProcessMetrics(metrics, build::kVersion);
  // Every readiness condition exists before the endpoint serves, so /readyz
  // can never be true before startup has finished.
  Health health;
  health.AddCondition("started");
  if (options.publish) health.AddCondition("first-publish");
  if (options.publish && options.kubelet_plugin) health.AddCondition("kubelet-registered");
  if (options.nri) health.AddCondition("nri-connected");

  DriverMetrics driver_metrics(metrics);
  auto& discovery_seconds =
      metrics.Histogram("dranet_discovery_duration_seconds", "Time of one discovery including plugin attributes");
  auto& discoveries = metrics.Counter("dranet_discoveries_total", "Discoveries run (events, resyncs, start)");
  auto& plugin_results =
      metrics.Gauge("dranet_plugins", "Plugins by load outcome", {"plugin", "outcome"});

  // A predecessor on this node (a rollout with surge) gives its status port
  // now and its NRI connection when it stops.
  const auto handover_socket = std::filesystem::path(options.state_dir) / kHandoverSocketName;
  std::unique_ptr<HandoverClient> predecessor;
  if (options.handover && !options.once)
    predecessor = HandoverClient::Connect(handover_socket, logger, std::chrono::seconds(5));
  std::optional<StatusServer> status;
  try {
    status.emplace(options.metrics_address == "off" ? "" : options.metrics_address,
                   std::map<std::string, HttpHandler>{
                       {"/metrics",
                        [&] { return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8", metrics.Render()}; }},
                       {"/livez",
                        [&] {
                          auto v = health.Live();
                          return HttpReply{v.ok ? 200 : 503, "text/plain; charset=utf-8", v.detail + (v.ok ? "ok\n" : "")};
                        }},
                       {"/healthz",
                        [&] {
                          auto v = health.Live();
                          return HttpReply{v.ok ? 200 : 503, "text/plain; charset=utf-8", v.ok ? "ok\n" : v.detail};
                        }},
                       {"/readyz",
                        [&] {
                          auto v = health.Ready();
                          return HttpReply{v.ok ? 200 : 503, "text/plain; charset=utf-8", v.detail + (v.ok ? "ok\n" : "")};
                        }},
                   },
                   logger, predecessor ? predecessor->TakeStatusListener() : UniqueFd(),
                   /*wait_for_port=*/!options.once);
  } catch (const std::exception& e) {
    logger.Error("cannot serve metrics and health", {{"error", e.what()}});
    return 1;
  }

  // Plugins. On a snapshot, cloud plugins read its recorded metadata.
  const bool snapshot = inventory::IsSnapshot(options.host_root);
  plugins::PluginHostOptions plugin_options;
  try {
    plugins::ApplyPluginFlags(options.plugins, plugin_options);
  } catch (const std::exception& e) {
    logger.Error("invalid plugin flags", {{"error", e.what()}});
    return 2;
  }
  plugin_options.host_root = options.host_root;
  plugin_options.node_name = options.node_name;
  if (snapshot) plugin_options.http = plugins::RecordedMetadataGetter(options.host_root);
  plugins::PluginHost plugin_host(plugin_options, logger);
  for (const auto& r : plugin_host.reports())
    plugin_results.Set(1, {r.name.empty() ? r.file : r.name, plugins::OutcomeName(r.outcome)});

  std::mutex devices_mu;
  // Notified with every new inventory and every change of a component's
  // state that readiness reads (kubelet registration, the NRI connection, a
  // publish confirmed). Before the components, which call on_status_change
  // from their threads until they are stopped.
  std::condition_variable inventory_changed;
  bool status_changed = false;  // under devices_mu: a component's state changed
  auto on_status_change = [&] {
    {
      std::lock_guard lock(devices_mu);
      status_changed = true;
    }
    inventory_changed.notify_all();
  };

  // Kubernetes API.
  std::unique_ptr<kube::ApiClient> api;
  std::unique_ptr<kube::ResourceApi> resource_api;
  std::unique_ptr<kube::SlicePublisher> publisher;
  if (options.publish) {
    try {
      kube::ClusterConfig cluster =
          options.kubeconfig.empty() ? kube::LoadInClusterConfig() : kube::LoadKubeconfig(options.kubeconfig);
      api = std::make_unique<kube::ApiClient>(cluster, logger);
      if (auto pinned = kube::ParseResourceApiVersion(options.resource_api_version)) {
        resource_api = std::make_unique<kube::ResourceApi>(*pinned);
        logger.Info("speaking " + kube::GroupVersion(*pinned), {{"flag", "--resource-api-version"}});
      } else {
        resource_api = std::make_unique<kube::ResourceApi>(*api, logger);
      }
    } catch (const std::exception& e) {
      logger.Error("cannot reach the Kubernetes API: give --kubeconfig, run in a pod, or --publish=false",
                   {{"error", e.what()}});
      return 1;
    }
    if (share_policy.enabled()) {
      // Consumable capacity is beta and on from Kubernetes 1.36; before, the
      // API server drops allowMultipleAllocations and claims would get the
      // device alone while dranetd thinks it shared.
      try {
        const auto version = kube::ServerVersion(*api);
        if (version.major < 1 || (version.major == 1 && version.minor < 36)) {
          logger.Error("--shared-devices needs Kubernetes 1.36 or later (consumable capacity, "
                       "DRAConsumableCapacity); the API server is " + version.git_version +
                       ": drop --shared-devices, or upgrade the cluster");
          return 2;
        }
      } catch (const std::exception& e) {
        logger.Error("--shared-devices: cannot ask the API server for its version", {{"error", e.what()}});
        return 1;
      }
    }
    kube::SlicePublisherOptions publisher_options;
    publisher_options.driver = options.driver_name;
    publisher_options.node_name = options.node_name;
    publisher_options.resource_api = resource_api.get();
    publisher_options.on_synced = on_status_change;
    publisher = std::make_unique<kube::SlicePublisher>(*api, publisher_options, logger);
    metrics.OnCollect([&publisher, &resource_api](MetricsRegistry& r) {
      if (!publisher) return;  // a scrape while stopping
      auto& spoken = r.Gauge("dranet_resource_api_info", "The resource.k8s.io version spoken to the API server (1)",
                             {"version"});
      const auto known = resource_api->Known();
      if (known)  // every version, so that one no longer spoken reads 0
        for (auto version : kube::kSpokenResourceApiVersions)
          spoken.Set(version == *known ? 1 : 0, {std::string(kube::VersionName(version))});
      auto s = publisher->Stats();
      auto& writes = r.Counter("dranet_api_writes_total", "ResourceSlice writes to the API server", {"verb"});
      writes.Set(static_cast<double>(s.creates), {"create"});
      writes.Set(static_cast<double>(s.updates), {"update"});
      writes.Set(static_cast<double>(s.deletes), {"delete"});
      r.Counter("dranet_publish_errors_total", "Failed ResourceSlice publishing passes").Set(static_cast<double>(s.errors));
      r.Gauge("dranet_pool_generation", "Generation of the node's resource pool").Set(static_cast<double>(s.pool_generation));
      r.Gauge("dranet_resource_slices", "ResourceSlices published for the node").Set(static_cast<double>(s.slices));
    });
  }

  // Discovery: every netlink burst or resync recomputes the device list.
  inventory::DiscoveryOptions discovery_options;
  discovery_options.host_root = options.host_root;
  discovery_options.skip_ipoib = !options.move_ib_interfaces;
  discovery_options.numa_node_list = options.list_type_attributes;
  std::unique_ptr<inventory::Discoverer> discoverer_owner;
  try {
    discoverer_owner = std::make_unique<inventory::Discoverer>(discovery_options, logger);
  } catch (const std::exception& e) {
    logger.Error("cannot discover from --host-root", {{"hostRoot", options.host_root}, {"error", e.what()}});
    return 1;
  }
  inventory::Discoverer& discoverer = *discoverer_owner;
  // Null until the first discovery: prepare says "not ready yet" instead of
  // "device not in the inventory".
  std::shared_ptr<const std::vector<inventory::Device>> current_devices;
  uint64_t last_sequence = 0;
  // The prepared claims, once the checkpoint is open (PersistentResourceSliceAttributes).
  std::function<std::vector<inject::ClaimPlan>()> prepared_plans;
  // Told every published device list once it runs (--device-health).
  ::dranet::health::HealthMonitor* device_health = nullptr;
  // --device-taints: the last published list as discovered, and the taints
  // it is published with (both under devices_mu).
  std::vector<inventory::Device> last_published;
  bool discovered = false;
  std::map<std::string, inventory::DeviceTaint> current_taints;
  auto on_devices = [&](std::vector<inventory::Device> devices) {
    auto started = std::chrono::steady_clock::now();
    devices = plugins::WithPlugins(plugin_host, std::move(devices), logger);
    std::set<std::string> recorded_only;
    if (options.persistent_slice_attributes && prepared_plans)
      recorded_only = MergePublishedAttributes(devices, prepared_plans(), logger);
    devices = cel::ApplyPublishFilter(filter, std::move(devices), logger);
    devices = cel::ApplySharePolicy(share_policy, std::move(devices), logger);
    discovery_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    discoveries.Inc();
    driver_metrics.Published(devices);
    health.Beat("discovery");
    if (device_health) device_health->SetDevices(devices);
    uint64_t sequence = 0;
    {
      // Published under the lock: the taints thread's publish and this one
      // reach the publisher in the order they read current_taints.
      std::lock_guard lock(devices_mu);
      last_published = devices;
      discovered = true;
      if (publisher)
        sequence = publisher->Publish(current_taints.empty() ? devices
                                                             : ::dranet::health::WithTaints(devices, current_taints));
    }
    // Prepare sees the node as it is: a device only its record publishes is
    // not there to prepare.
    std::erase_if(devices, [&](const inventory::Device& d) { return recorded_only.count(d.name) > 0; });
    {
      std::lock_guard lock(devices_mu);
      logger.Verbose(2, "inventory updated", {{"devices", devices.size()}});
      current_devices = std::make_shared<const std::vector<inventory::Device>>(std::move(devices));
      last_sequence = sequence;
    }
    inventory_changed.notify_all();
  };
  health.AddLoop("discovery", std::chrono::ceil<std::chrono::seconds>(options.resync_period * 3));

  if (options.once) {
    on_devices(discoverer.Discover());
    bool synced = true;
    if (publisher) synced = publisher->WaitForSync(last_sequence, std::chrono::seconds(30));
    logger.Info("discovered", {{"devices", current_devices->size()}, {"published", publisher ? (synced ? "yes" : "failed") : "disabled"}});
    return synced ? 0 : 1;
  }

  // Prepared claims: the checkpoint belongs to the running kernel (boot id),
  // so it reads this machine's own /proc, not the node root's.
  std::unique_ptr<kube::EventRecorder> events;
  if (api) events = std::make_unique<kube::EventRecorder>(*api, options.driver_name, options.node_name, logger);
  std::unique_ptr<kube::ClaimStatusWriter> status_writer;
  if (api)
    status_writer = std::make_unique<kube::ClaimStatusWriter>(*api, options.driver_name, logger, resource_api.get());
  // After what its writes use: it stops (and joins) before they are destroyed.
  BackgroundEvents background_events(logger);
  auto& state_corrupt = metrics.Counter("dranet_state_corrupt_total", "Checkpoint files discarded as corrupt at start");
  state::CheckpointOptions checkpoint_options;
  checkpoint_options.state_dir = options.state_dir;
  checkpoint_options.procfs_root = kSelfProcfs;
  checkpoint_options.on_corrupt = [&](const std::string& message) {
    state_corrupt.Inc();
    if (!events) return;
    // On the Event thread: an absent API server must not hold up the start this Event reports.
    background_events.Post([&events, &api, &logger, node = options.node_name,
                            text = message + "; starting with no prepared claims"] {
      // `kubectl describe node` finds a Node's Events by its uid, or by its name used as the uid
      // (kubelet's own Events); the name stands in while the Node cannot be read.
      std::string uid = node;
      try {
        if (auto read = kube::MetadataField(api->Get("/api/v1/nodes/" + node), "uid"); !read.empty()) uid = read;
      } catch (const std::exception& e) {
        logger.Warning("cannot read the Node's uid for its Event", {{"node", node}, {"error", e.what()}});
      }
      events->Record({"v1", "Node", "", node, uid}, kube::EventType::kWarning, "StateCorrupt", text);
    });
  };
  std::unique_ptr<state::CheckpointStore> prepared;
  try {
    prepared = std::make_unique<state::CheckpointStore>(checkpoint_options, logger);
  } catch (const std::exception& e) {
    logger.Error("cannot use the state directory", {{"dir", options.state_dir}, {"error", e.what()}});
    return 1;
  }
  prepared_plans = [&prepared] { return prepared->All(); };

  OperationObserver observer = driver_metrics.Observer();

  // Moves netdevs in and out of pods: NRI hooks, and unprepare for pods the
  // runtime removed silently.
  std::unique_ptr<inject::NetnsMover> netns_mover;
  if (options.nri) {
    try {
      inject::NetnsMover::Options mover_options;
      auto& restore_failures = metrics.Counter(
          "dranet_netdev_restore_failures_total",
          "Netdevs a pod teardown could not bring home and restore (not found, or the kernel refused); each is "
          "logged and reported as a NetworkRestoreFailed Event");
      mover_options.on_restore_failure = [&restore_failures] { restore_failures.Inc(); };
      netns_mover = std::make_unique<inject::NetnsMover>(mover_options, logger);
    } catch (const std::exception& e) {
      logger.Error("cannot open the host network namespace", {{"error", e.what()}});
      return 1;
    }
  }

  // Device health: the published devices and the netdevs held in pods,
  // their links read from the kernel (a snapshot's recorded links are read
  // once: they do not change).
  std::unique_ptr<::dranet::health::HealthMonitor> health_monitor;
  if (options.device_health) {
    ::dranet::health::HealthMonitor::Options health_options;
    health_options.host_root = options.host_root;
    ::dranet::health::HealthMonitor::HostLinkReader host_links;
    try {
    if (snapshot) {
      health_options.watch_host_links = false;
      auto recorded = std::make_shared<std::vector<inventory::LinkFacts>>(
          inventory::ReadNetlinkFacts(discovery_options, logger).links);
      host_links = [recorded] { return *recorded; };
    } else {
      auto socket = std::shared_ptr<inject::NlSockPtr>(
          new inject::NlSockPtr(inject::NetlinkSocketIn(inject::OpenNetns("/proc/self/ns/net"), NETLINK_ROUTE)));
      host_links = [socket, &logger] { return inventory::ReadLinks(socket->get(), logger); };
    }
    } catch (const std::exception& e) {
      logger.Error("cannot read the host's links for device health (--device-health=false turns it off)",
                   {{"error", e.what()}});
      return 1;
    }
    ::dranet::health::HealthMonitor::HeldNetdevSource held;
    if (netns_mover) held = [&netns_mover] { return netns_mover->HeldNetdevs(); };
    health_monitor = std::make_unique<::dranet::health::HealthMonitor>(health_options, std::move(host_links),
                                                                       std::move(held), logger);
    auto& transitions = metrics.Counter("dranet_device_health_transitions_total",
                                        "Changes of a device's health, by the health it changed to", {"health"});
    health_monitor->SetTransitionObserver(
        [&transitions](const std::string&, ::dranet::health::Health, const ::dranet::health::Verdict& to) {
          transitions.Inc({::dranet::health::HealthName(to.health)});
        });
    metrics.OnCollect([&health_monitor](MetricsRegistry& r) {
      if (!health_monitor) return;
      auto& devices = r.Gauge("dranet_device_health", "Devices published or held in pods, by health", {"health"});
      std::map<std::string, double> counts{{"Healthy", 0}, {"Unhealthy", 0}, {"Unknown", 0}};
      for (const auto& d : health_monitor->Current().devices) counts[::dranet::health::HealthName(d.verdict.health)]++;
      for (const auto& [name, count] : counts) devices.Set(count, {name});
    });
  }

  std::unique_ptr<kube::ResourceClaimReader> claim_reader;
  std::unique_ptr<kubelet::KubeletPlugin> kubelet_plugin;
  if (options.kubelet_plugin && api) {
    kube::ResourceClaimReaderOptions reader_options;
    reader_options.resource_api = resource_api.get();
    claim_reader = std::make_unique<kube::ResourceClaimReader>(*api, logger, reader_options);
    kubelet::KubeletPluginOptions kubelet_options;
    kubelet_options.driver_name = options.driver_name;
    kubelet_options.node_name = options.node_name;
    kubelet_options.kubelet_root_dir = options.kubelet_root_dir;
    kubelet_options.host_root = options.host_root;
    kubelet_options.rdma_exclusive = options.rdma_exclusive;
    kubelet_options.copy_host_routes = options.copy_host_routes;
    using NetlinkSource = inventory::DiscoveryOptions::NetlinkSource;
    kubelet_options.host_network_source = options.host_network_source == "live"       ? NetlinkSource::kLive
                                          : options.host_network_source == "snapshot" ? NetlinkSource::kSnapshot
                                                                                      : NetlinkSource::kAuto;
    if (options.cdi) kubelet_options.cdi_dir = options.cdi_dir;
    kubelet_options.pod_uid = options.pod_uid;
    // Beside another instance the kubelet needs a moment to turn to it.
    if (!options.pod_uid.empty()) kubelet_options.deregistration_grace = std::chrono::milliseconds(1500);
    auto inventory_now = [&]() {
      std::lock_guard lock(devices_mu);
      return current_devices;
    };
    kubelet_plugin = std::make_unique<kubelet::KubeletPlugin>(kubelet_options, inventory_now,
                                                             kubelet::ClaimLookupFrom(*claim_reader), *prepared,
                                                             &plugin_host, logger);
    if (options.profile_provider == "webhook") {
      if (options.webhook_url.empty()) {
        logger.Error("--webhook-url is required with --profile-provider=webhook");
        return 2;
      }
      try {
        kubelet_plugin->SetProfileProvider(kubelet::ConnectWebhookProfileProvider(options.webhook_url));
        logger.Info("profile provider ready", {{"provider", "webhook"}, {"url", options.webhook_url}});
      } catch (const std::exception& e) {
        logger.Error("cannot use the profile webhook", {{"url", options.webhook_url}, {"error", e.what()}});
        return 1;
      }
    } else if (options.profile_provider == "cloud") {
      kubelet_plugin->SetProfileProvider(kubelet::MakePluginProfileProvider(plugin_host));
      std::string plugins;
      for (const auto& name : plugin_host.ProfilePlugins()) plugins += (plugins.empty() ? "" : ",") + name;
      logger.Info("profile provider ready", {{"provider", "cloud"}, {"plugins", plugins.empty() ? "none" : plugins}});
    }
    kubelet_plugin->SetOperationObserver(observer);
    kubelet_plugin->SetStatusListener(on_status_change);
    kubelet_plugin->SetNetdevApplier(netns_mover.get());
    kubelet_plugin->SetHealthReporter(health_monitor.get());
    kubelet_plugin->SetEventSink([&](const kubelet::ClaimRequest& claim, const std::string& reason,
                                     const std::string& message) {
      if (events)
        background_events.Post([&events, &resource_api, claim, reason, message] {
          // The claim was read in the version spoken, so it is known by now.
          const auto version = resource_api->Known().value_or(kube::ResourceApiVersion::kV1);
          events->Record({kube::GroupVersion(version), "ResourceClaim", claim.namespace_name, claim.name, claim.uid},
                         kube::EventType::kWarning, reason, message);
        });
    });
  } else if (options.kubelet_plugin) {
    logger.Warning("kubelet DRA plugin disabled: it needs the API server (--publish=false)");
  }

  std::unique_ptr<nri::NriPlugin> nri_plugin;
  if (options.nri) {
    nri::NriPluginOptions nri_options;
    nri_options.socket_path = options.nri_socket;
    nri_options.plugin_name = options.driver_name;
    nri_options.observer = observer;
    nri_options.on_state_change = on_status_change;
    // A pod attached, or adopted after a restart, is checked at once.
    nri_options.on_pods_held = [&] {
      if (health_monitor) health_monitor->PodsChanged();
    };
    auto& bypassed = metrics.Counter("dranet_bypassed_containers_total",
                                     "Containers found running without their dra.net devices (started while NRI was "
                                     "down), each counted once");
    // Pods with claims of ours get status.devices on those claims (Ready,
    // NetworkReady, RDMALinkReady, networkData); a failed attach is an Event
    // on the pod.
    nri_options.network_reporter = [&](const nri::PodNetworkOutcome& outcome) {
      if (!api) return;
      background_events.Post([&, outcome] {
        if (!outcome.error.empty() && events)
          events->Record({"v1", "Pod", outcome.pod_namespace, outcome.pod_name, outcome.pod_uid},
                         kube::EventType::kWarning, AttachFailedReason(outcome.rdma_failed), outcome.error);
        for (const auto& claim : PodDeviceStatuses(outcome.plans, outcome.error, outcome.rdma_failed,
                                                   options.driver_name, kube::NowRfc3339())) {
          try {
            status_writer->Apply(claim.claim_namespace, claim.claim_name, claim.devices);
          } catch (const std::exception& e) {
            logger.Warning("cannot write claim status", {{"claim", claim.claim_namespace + "/" + claim.claim_name},
                                                        {"error", e.what()}});
          }
        }
      });
    };
    nri_options.restore_failure_reporter = [&](const nri::PodNetworkOutcome& outcome) {
      if (!events) return;
      background_events.Post([&events, outcome] {
        events->Record({"v1", "Pod", outcome.pod_namespace, outcome.pod_name, outcome.pod_uid},
                       kube::EventType::kWarning, "NetworkRestoreFailed", outcome.error);
      });
    };
    nri_options.bypass_reporter = [&](const nri::BypassedContainer& b) {
      bypassed.Inc();
      std::string missing;
      for (const auto& d : b.missing_devices) missing += (missing.empty() ? "" : ", ") + d;
      if (events)
        background_events.Post([&events, b, missing] {
          events->Record({"v1", "Pod", b.pod_namespace, b.pod_name, b.pod_uid}, kube::EventType::kWarning,
                         "DevicesMissing",
                         "container " + b.container + " started without its dra.net devices (" + missing +
                             ") while the driver was not connected to the runtime; delete the pod to restart it with them");
        });
    };
    nri_plugin = std::make_unique<nri::NriPlugin>(nri_options, *prepared, *netns_mover, logger);
  }

  inventory::DiscoveryMonitor::Options monitor_options;
  monitor_options.resync_period = options.resync_period;
  monitor_options.event_min_interval = options.min_poll_interval;
  monitor_options.event_burst = options.poll_burst;
  monitor_options.ignored_link_kinds = cel::UnpublishedLinkKinds(options.filter);
  inventory::DiscoveryMonitor monitor(discoverer, on_devices, logger, monitor_options);
  try {
    if (health_monitor) {
      health_monitor->Start();
      device_health = health_monitor.get();
    }
    monitor.Start();
    // Kubelet may prepare as soon as we register: register only once the
    // first inventory exists (bounded, so a stuck discovery still starts us).
    {
      std::unique_lock lock(devices_mu);
      if (!inventory_changed.wait_for(lock, std::chrono::seconds(30), [&] { return current_devices != nullptr; }))
        logger.Warning("first discovery is slow; registering with kubelet anyway");
    }
    if (kubelet_plugin) kubelet_plugin->Start();
  } catch (const std::exception& e) {
    logger.Error("cannot start", {{"error", e.what()}});
    return 1;
  }

  // The node's connections: taken from a predecessor when one runs (until
  // then it serves the runtime, and this instance counts as connected for
  // readiness), else made here; then offered to the next successor.
  std::unique_ptr<HandoverServer> handover_server;
  auto hold_node = [&] {
    if (!options.handover) return;
    HandoverServer::Hooks hooks;
    hooks.give_status_listener = [&status] { return status->GiveAway(); };
    hooks.successor_gone = [&status] { status->TakeBack(); };
    handover_server = std::make_unique<HandoverServer>(handover_socket, std::move(hooks), logger);
    try {
      handover_server->Start();
    } catch (const std::exception& e) {
      logger.Warning("cannot offer a hand-over; a successor will start alone",
                     {{"socket", handover_socket.string()}, {"error", e.what()}});
      handover_server.reset();
    }
  };
  // An instance without hand-over (an older version) still holds the status
  // port: the runtime gets this one once that one is gone, never both.
  const bool serves_status = options.metrics_address != "off" && !options.metrics_address.empty();
  const bool old_instance = !predecessor && nri_plugin && serves_status && !status->listening();
  std::atomic<bool> awaiting_predecessor{predecessor != nullptr || old_instance};
  std::atomic<bool> leaving{false};  // stopped before the predecessor handed over: take nothing
  std::thread take_over;
  if (awaiting_predecessor) {
    take_over = std::thread([&] {
      pthread_setname_np(pthread_self(), "take-over");
      std::optional<nri::NriHandover> handed;
      if (predecessor) {
        handed = predecessor->WaitForNri();  // `predecessor` lives until this thread is joined
      } else {
        logger.Warning("another dranetd without hand-over holds the status port; connecting to the runtime once "
                       "it is gone");
        while (!leaving && !status->listening()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      if (leaving) return;
      if (nri_plugin) {
        if (handed) nri_plugin->Start(std::move(*handed));
        else nri_plugin->Start();
      }
      awaiting_predecessor = false;
      on_status_change();
      hold_node();
    });
  } else {
    if (nri_plugin) nri_plugin->Start();
    hold_node();
  }

  auto& bypassed_now = metrics.Gauge("dranet_bypassed_containers",
                                     "Containers running without their dra.net devices at the last NRI synchronize");
  // One thread turns the components' states into readiness conditions. It
  // sleeps until a new inventory, a component's state change (kubelet
  // registration, the NRI connection, the publisher confirming an inventory)
  // or stop. Nothing changes while it sleeps (kStatusSafetyPeriod only bounds
  // what a missed wake-up could cost).
  std::atomic<bool> stopping{false};
  std::thread probe([&] {
    pthread_setname_np(pthread_self(), "readiness");
    uint64_t confirmed = 0;  // the last inventory the API server has
    bool heap_returned = false;
    while (!stopping) {
      uint64_t seq;
      {
        std::lock_guard lock(devices_mu);
        seq = last_sequence;
      }
      const bool unconfirmed = publisher && seq > confirmed;
      if (unconfirmed && publisher->WaitForSync(seq, std::chrono::milliseconds(0))) {
        confirmed = seq;
        health.Set("first-publish", true);
        driver_metrics.PublishConfirmed(Now());
      }
      if (kubelet_plugin) health.Set("kubelet-registered", kubelet_plugin->registered());
      if (nri_plugin) {
        health.Set("nri-connected", nri_plugin->connected() || awaiting_predecessor);
        bypassed_now.Set(static_cast<double>(nri_plugin->service().bypassed_containers()));
      }
      if (!heap_returned && health.Ready().ok) {
        // Start-up is over: what it allocated and freed goes back (0.6 MiB of
        // 4.1 resident anonymous on a test node, docs/operations.md).
        heap_returned = true;
        const auto heap = ReturnFreeHeap();
        logger.Info("start-up heap returned", {{"anon_kib_before", static_cast<int64_t>(heap.before / 1024)},
                                               {"anon_kib_after", static_cast<int64_t>(heap.after / 1024)}});
      }
      std::unique_lock lock(devices_mu);
      constexpr auto kStatusSafetyPeriod = std::chrono::seconds(30);
      inventory_changed.wait_for(lock, kStatusSafetyPeriod,
                                 [&] { return stopping || last_sequence != seq || status_changed; });
      status_changed = false;
    }
  });
  // --device-taints: the pool published again whenever the set of tainted
  // devices changes (taint_policy.h: at once when one turns Unhealthy, 30 s
  // after it recovered).
  std::jthread taints;
  if (options.device_taints && health_monitor && publisher) {
    taints = std::jthread([&](std::stop_token stop) {
      pthread_setname_np(pthread_self(), "taints");
      ::dranet::health::TaintPolicy policy;
      while (!stop.stop_requested()) {
        const auto report = health_monitor->Current();
        const auto now = std::chrono::steady_clock::now();
        auto wanted = policy.Update(report, now);
        {
          std::lock_guard lock(devices_mu);
          if (discovered && wanted != current_taints) {
            current_taints = wanted;
            std::string tainted;
            for (const auto& [device, taint] : wanted) tainted += (tainted.empty() ? "" : ",") + device;
            logger.Info("device taints changed; publishing", {{"tainted", tainted.empty() ? "none" : tainted}});
            publisher->Publish(::dranet::health::WithTaints(last_published, wanted));
          }
        }
        // Awake at least every second to see stop.
        health_monitor->WaitNewer(report.generation, std::min(policy.NextDue(), now + std::chrono::seconds(1)));
      }
    });
  } else if (options.device_taints && options.publish && !options.device_health) {
    logger.Warning("--device-taints needs --device-health; devices are published without taints");
  }
  health.Set("started", true);
  on_status_change();  // the probe may have seen everything else ready already
  logger.Info("dranetd started", {{"node", options.node_name}, {"snapshot", snapshot}});
  int sig = WaitForSignal();
  logger.Info("shutting down", {{"signal", sig}});
  {
    std::lock_guard lock(devices_mu);  // the probe cannot miss the wake-up
    stopping = true;
  }
  inventory_changed.notify_all();
  probe.join();
  if (take_over.joinable()) {
    leaving = true;
    if (predecessor) predecessor->Cancel();
    take_over.join();
  }
  if (kubelet_plugin) kubelet_plugin->Stop();  // no new prepares; sockets removed
  if (handover_server && handover_server->has_successor()) {
    // The successor gets the runtime's connection as it stands: every
    // request read is answered first, and the runtime sees no disconnect.
    handover_server->HandOverNri(nri_plugin ? nri_plugin->HandOver() : std::nullopt, std::chrono::seconds(5));
  }
  if (nri_plugin) nri_plugin->Stop();  // in-flight hooks finish first
  handover_server.reset();
  monitor.Stop();
  if (taints.joinable()) {
    taints.request_stop();
    taints.join();
  }
  if (health_monitor) health_monitor->Stop();
  publisher.reset();  // slices stay published for the next start
  logger.Info("stopped; prepared claims kept", {{"dir", options.state_dir}, {"claims", prepared->All().size()}});
  return 0;
}

}  // namespace dranet::daemon
