#pragma once
// core/nri/plugin_service.h — the NRI Plugin service of dranet: what each
// runtime request does, independent of the socket it arrived on.
//
//   Configure          subscribe to RunPodSandbox, StopPodSandbox,
//                      RemovePodSandbox, CreateContainer (mask 0xF, valid on
//                      every runtime since NRI v0.2)
//   Synchronize        learn pod netns paths (chunks answered with `more`
//                      echoed); report containers running without their
//                      devices (once each); once the list is complete,
//                      return the netdevs of pods the runtime no longer runs
//                      and keep track of running pods' netdevs
//   RunPodSandbox      move the pod's netdevs in (PodNetnsApplier)
//   CreateContainer    char devices + cgroup rules, env, mounts
//   Stop/RemovePodSandbox  move netdevs back and restore the host; never fails
//   StateChange        the same pod events from runtimes with NRI <= 0.11
//   Shutdown           log
// Thread-safe (one lock over the netns cache); the applier is called
// without the lock held.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/log.h"
#include "base/metrics.h"
#include "inject/pod_netns_applier.h"
#include "nri/proto/nri.pb.h"
#include "nri/ttrpc_session.h"
#include "state/prepared_claims.h"

namespace dranet::nri {

namespace api = ::nri::pkg::api::v1alpha1;

inline constexpr char kPluginService[] = "nri.pkg.api.v1alpha1.Plugin";
inline constexpr char kRuntimeService[] = "nri.pkg.api.v1alpha1.Runtime";

// Bit (1 << (event - 1)) per subscribed event.
inline constexpr std::int32_t EventBit(api::Event e) { return 1 << (static_cast<int>(e) - 1); }
inline constexpr std::int32_t kSubscribedEvents =
    EventBit(api::RUN_POD_SANDBOX) | EventBit(api::STOP_POD_SANDBOX) |
    EventBit(api::REMOVE_POD_SANDBOX) | EventBit(api::CREATE_CONTAINER);

// A container that runs without the device nodes its pod's claims were
// prepared with: it was created while the plugin was not connected (the
// runtime starts pods without a missing plugin). Reported, never silent.
struct BypassedContainer {
  std::string pod_namespace, pod_name, pod_uid, container;
  std::vector<std::string> missing_devices;
};
using BypassReporter = std::function<void(const BypassedContainer&)>;

// The outcome of RunPodSandbox for a pod with claims of this driver (netdevs
// moved, RDMA links moved, or nothing to move for IB-only devices): `error`
// is empty on success; `rdma_failed` when it was an RDMA link that could
// not move. Called on the hook's thread: the receiver must hand slow work
// (API writes) to another thread.
struct PodNetworkOutcome {
  std::string pod_namespace, pod_name, pod_uid;
  std::vector<inject::ClaimPlan> plans;
  std::string error;
  bool rdma_failed = false;
};
using PodNetworkReporter = std::function<void(const PodNetworkOutcome&)>;

class PluginService {
 public:
  // `on_state_change` (optional) runs after each Configure and each finished
  // Synchronize (configured() and bypassed_containers() change there);
  // `on_pods_held` (optional) whenever HoldsPods() may have become true: a
  // pod whose netdevs were attached, the end of a Synchronize (pods adopted).
  // Both run on the caller's thread.
  PluginService(state::PreparedClaims& claims, inject::PodNetnsApplier& applier, Logger& log,
                std::function<void()> on_state_change = {}, std::function<void()> on_pods_held = {});

  // Answers one request of service kPluginService.
  RpcResult Handle(const RpcRequest& request);

  // The typed hooks (also used by benchmarks). Errors come back as a status.
  // `outcome` (optional) receives how the hook ended for metrics: kNoop when
  // the pod has no claims of this driver, kFailed also for a teardown error
  // that the runtime is not told about.
  api::ConfigureResponse Configure(const api::ConfigureRequest& request);
  api::SynchronizeResponse Synchronize(const api::SynchronizeRequest& request);
  RpcStatus RunPodSandbox(const api::PodSandbox& pod, OperationStatus* outcome = nullptr);
  RpcStatus StopPodSandbox(const api::PodSandbox& pod, bool remove, OperationStatus* outcome = nullptr);
  api::CreateContainerResponse CreateContainer(const api::PodSandbox& pod, const api::Container& container,
                                               OperationStatus* outcome = nullptr);

  // Told about every bypassed container found at Synchronize.
  void SetBypassReporter(BypassReporter reporter) { bypass_reporter_ = std::move(reporter); }
  void SetPodNetworkReporter(PodNetworkReporter reporter) { network_reporter_ = std::move(reporter); }
  // Told when a pod's netdevs could not be brought home and restored
  // (StopPodSandbox, RemovePodSandbox, a pod the runtime forgot): `error`
  // names each netdev. Same threading rules as the network reporter.
  void SetRestoreFailureReporter(PodNetworkReporter reporter) { restore_reporter_ = std::move(reporter); }
  // Told about every request Handle answers: the hook's name (a StateChange
  // is named after its event), how it ended, its latency.
  void SetOperationObserver(OperationObserver observer) { observer_ = std::move(observer); }

  // Returns the netdevs of pods whose network namespace the runtime deleted
  // without a Stop/RemovePodSandbox (PodNetnsApplier::VanishedPods). Called
  // periodically while HoldsPods(); returns how many pods it released.
  std::size_t ReleaseVanishedPods();
  // Whether any pod's netdevs are kept in its namespace (the applier's
  // HoldsPods()): a pod attached or adopted since is told by on_pods_held.
  bool HoldsPods() { return applier_.HoldsPods(); }

  // Containers found bypassed at the last complete Synchronize.
  std::size_t bypassed_containers() const;

  // Whether Configure arrived on the current connection; Reset() clears it
  // when a new connection starts (the netns cache survives reconnects).
  bool configured() const;
  void ResetConnection();
  // The netns path last learned for a pod (for tests and logs).
  std::optional<std::string> KnownNetns(const std::string& pod_uid) const;
  // Every pod with claims the runtime runs, as learned: pod UID -> netns
  // path (what a successor adopts with the connection).
  std::map<std::string, std::string> KnownPods() const;
  // A connection another instance handed over, with the pods it knew: the
  // service is configured as that instance was (the runtime does not send
  // Configure or Synchronize again), and each pod with netdevs is adopted.
  void AdoptHandedOver(const std::map<std::string, std::string>& pods);

 private:
  // Handle without the observation: `operation` becomes the hook's name,
  // `outcome` how it ended when it was a pod hook.
  RpcResult Dispatch(const RpcRequest& request, std::string& operation, std::optional<OperationStatus>& outcome);
  inject::PodSandboxRef RefOf(const api::PodSandbox& pod, bool use_cache, bool has_claims);
  std::size_t FindBypassedContainers(const api::SynchronizeRequest& request);
  void ReconcileNetdevs(const std::map<std::string, api::PodSandbox>& running);
  // Detaches the pod's netdevs (from its kept namespace) and forgets it.
  void ReleasePod(const inject::PodSandboxRef& pod, const char* why);

  state::PreparedClaims& claims_;
  inject::PodNetnsApplier& applier_;
  Logger& log_;
  std::function<void()> on_state_change_;
  std::function<void()> on_pods_held_;
  mutable std::mutex mu_;
  bool configured_ = false;
  std::map<std::string, std::string> netns_by_pod_;  // pod UID -> netns path, pods with claims only
  std::map<std::string, api::PodSandbox> sync_pods_;  // sandbox id -> pod, during one Synchronize
  std::set<std::string> sync_bypass_;      // container ids found bypassed, during one Synchronize
  std::set<std::string> reported_bypass_;  // container ids reported (bypassed at the last Synchronize)
  BypassReporter bypass_reporter_;
  PodNetworkReporter network_reporter_;
  PodNetworkReporter restore_reporter_;
  OperationObserver observer_;
};

// The network namespace path of `pod` from its linux namespaces; empty for
// a hostNetwork pod.
std::string NetnsPathOf(const api::PodSandbox& pod);

}  // namespace dranet::nri
