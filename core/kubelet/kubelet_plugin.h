#pragma once
// core/kubelet/kubelet_plugin.h — the kubelet side of dranet: the front door
// of core/kubelet.
//
// KubeletPlugin serves, on unix sockets under --kubelet-root-dir
// (k8s.io/kubelet pkg/apis/pluginregistration/v1, pkg/apis/dra/v1, v1beta1):
//   plugins_registry/<driver>-reg.sock  pluginregistration.Registration:
//       (<driver>-<pod UID>-reg.sock with pod_uid: see below)
//       GetInfo → {type "DRAPlugin", name <driver>, endpoint <DRA socket>,
//                  supported_versions ["v1.DRAPlugin", "v1beta1.DRAPlugin"]};
//       NotifyRegistrationStatus is logged and drives registered().
//   plugins/<driver>/dra.sock           k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin
//       (dra-<pod UID>.sock with pod_uid)
//                                       and ...dra.v1beta1.DRAPlugin, both
//       answered by one DraService (dra_service.h); with a health reporter
//       also v1.DRAResourceHealth and v1alpha1.DRAResourceHealth (the
//       kubelet's device health stream), advertised in supported_versions.
// With pod_uid set (dranetd's --pod-uid, the DaemonSet pod's UID) both
// sockets carry it in their names, the names of kubelet's seamless plugin
// upgrade (Kubernetes 1.33+): during a DaemonSet rollout with surge the old
// and the new dranetd are registered side by side and the kubelet sends each
// call to the newest one connected. Stop() then removes the registration
// socket first and keeps the DRA socket served for deregistration_grace, so
// the kubelet moves on to the other instance before this one stops answering.
// Stale socket files are removed before listening. A watcher thread checks
// both socket files whenever their directories change (inotify) and at least
// every socket_check_interval; when one was removed or replaced (kubelet
// restarts may wipe its directories) the server behind it is re-created,
// which makes kubelet's plugin watcher register us again. A re-creation that
// fails is tried again every second until it succeeds.
//
// Usage (dranetd):
//   KubeletPlugin plugin(options, inventory_provider, claim_lookup, prepared_claims,
//                        &plugin_host, logger);
//   plugin.SetEventSink(...);          // optional, before Start()
//   plugin.Start();                    // throws std::runtime_error naming the socket
//   ... readiness = plugin.registered();
//   plugin.Stop();                     // also done by the destructor
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/log.h"
#include "health/health_monitor.h"
#include "inject/pod_netns_applier.h"
#include "inventory/inventory.h"
#include "kubelet/dra_service.h"
#include "plugins/plugin_host.h"
#include "state/prepared_claims.h"

namespace dranet::kubelet {

// The supported_versions we advertise, v1 first (kubelet takes the first it knows).
inline constexpr const char* kSupportedVersions[] = {"v1.DRAPlugin", "v1beta1.DRAPlugin"};
// Advertised beside them when a health reporter is set: a 1.37 kubelet
// opens the health stream only for a plugin that lists one (v1 preferred);
// earlier kubelets (ResourceHealthStatus on) open v1alpha1 regardless.
inline constexpr const char* kHealthServices[] = {"v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth"};
// What each health entry tells the kubelet: trust it this long (seconds)...
inline constexpr int64_t kHealthCheckTimeoutSeconds = 60;
// ...and it is sent again at least this often, changed or not.
inline constexpr std::chrono::seconds kHealthResendPeriod{30};

struct KubeletPluginOptions {
  std::string driver_name = "dra.net";
  std::string node_name;  // our pool name; required
  std::filesystem::path kubelet_root_dir = "/var/lib/kubelet";  // --kubelet-root-dir
  // Node root (a snapshot in tests): device nodes live under <host_root>/dev.
  std::filesystem::path host_root = "/";
  bool rdma_exclusive = false;  // RDMA netns mode "exclusive"
  bool copy_host_routes = true;  // pods get their netdevs' host routes, rules, neighbours
  // Where the default host reader records a netdev's host state from.
  inventory::DiscoveryOptions::NetlinkSource host_network_source = inventory::DiscoveryOptions::NetlinkSource::kAuto;
  unsigned prepare_workers = 8;
  std::string cdi_dir;  // CDI strategy when set (--cdi): spec files written at prepare
  // The longest the socket watcher sleeps: a change in the directories wakes
  // it at once; the interval covers what inotify does not see (no inotify
  // instance to be had, a directory replaced by a mount).
  std::chrono::milliseconds socket_check_interval{60000};
  // This instance's pod UID: per-instance socket names (see above). Empty:
  // the fixed names, one instance per node.
  std::string pod_uid;
  // How long Stop() keeps the DRA socket answering after it removed the
  // registration socket (the kubelet's plugin watcher deregisters within
  // about a second).
  std::chrono::milliseconds deregistration_grace{0};
};

// The sockets `options` names (see above). Throws std::invalid_argument for
// a pod UID that is not a plain name ([A-Za-z0-9-]+).
std::filesystem::path RegistrationSocketPath(const KubeletPluginOptions& options);
std::filesystem::path DraSocketPath(const KubeletPluginOptions& options);

class KubeletPlugin {
 public:
  // `inventory` and `claims` are required; `prepared` and `log` must outlive
  // the plugin; `plugin_host` may be null (no injection plugins). Nothing is
  // served before Start().
  KubeletPlugin(KubeletPluginOptions options, InventoryProvider inventory, ClaimLookup claims,
                state::PreparedClaims& prepared, plugins::PluginHost* plugin_host, Logger& log);
  ~KubeletPlugin();
  KubeletPlugin(const KubeletPlugin&) = delete;
  KubeletPlugin& operator=(const KubeletPlugin&) = delete;

  // Optional hooks; call before Start().
  void SetEventSink(ClaimEventSink events);
  // Called (no lock held) whenever registered() may have changed: kubelet
  // answered the registration, or a socket was served anew.
  void SetStatusListener(std::function<void()> listener);
  // Told about every prepare and unprepare (metrics).
  void SetOperationObserver(OperationObserver observer);
  // Default: one netlink dump of the host (or the snapshot's recorded facts
  // under --host-root), per claim with netdevs.
  void SetHostNetworkReader(HostNetworkReader reader);
  // Serves the kubelet's device health stream from `health` (must outlive
  // the plugin); without one the service is neither served nor advertised.
  void SetHealthReporter(const health::HealthReporter* health);
  // Resolves claim configs that name a profile (--profile-provider); none by
  // default, and such claims are refused.
  void SetProfileProvider(std::shared_ptr<ProfileProvider> profiles);
  // Where netdevs are brought home at NodeUnprepareResources (a pod the
  // runtime removed without StopPodSandbox); null: the NRI hooks only.
  void SetNetdevApplier(inject::PodNetnsApplier* applier) { netdev_applier_ = applier; }

  // Creates the directories and both sockets and starts serving. Throws
  // std::runtime_error naming the socket when one cannot be served.
  void Start();
  // Stops serving and removes both socket files. Idempotent.
  void Stop();

  // True once kubelet confirmed the registration (NotifyRegistrationStatus
  // with plugin_registered) since the registration socket was last created.
  bool registered() const;
  // The last error kubelet reported in NotifyRegistrationStatus; empty if none.
  std::string registration_error() const;
  // How often the sockets have been re-created after removal, and how often
  // re-creating one failed (each failure is retried).
  uint64_t socket_restarts() const;
  uint64_t failed_socket_restarts() const;

  std::filesystem::path registration_socket() const;
  std::filesystem::path dra_socket() const;
  DraService& service();

 private:
  class Servers;
  KubeletPluginOptions options_;
  InventoryProvider inventory_;
  ClaimLookup claims_;
  state::PreparedClaims& prepared_;
  plugins::PluginHost* plugin_host_;
  Logger& log_;
  ClaimEventSink events_;
  std::function<void()> status_listener_;
  OperationObserver observer_;
  inject::PodNetnsApplier* netdev_applier_ = nullptr;
  HostNetworkReader host_network_;
  std::shared_ptr<ProfileProvider> profiles_;
  const health::HealthReporter* health_ = nullptr;
  std::unique_ptr<DraService> service_;
  std::unique_ptr<Servers> servers_;
};

// A ClaimLookup reading through kube::ResourceClaimReader (cache, then GET,
// UID checked). `reader` must outlive the lookup.
ClaimLookup ClaimLookupFrom(kube::ResourceClaimReader& reader);

}  // namespace dranet::kubelet
