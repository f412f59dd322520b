#include "nri/plugin_service.h"

#include <set>

#include <chrono>

#include "inject/container_edits.h"
#include "nri/adjustment.h"
#include "base/fault_points.h"

namespace dranet::nri {
namespace {

using Clock = std::chrono::steady_clock;

long MicrosSince(Clock::time_point start) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
}

std::size_t CountNetdevs(const std::vector<inject::ClaimPlan>& plans) {
  std::size_t n = 0;
  for (const auto& p : plans) n += p.netdevs.size();
  return n;
}

template <typename Message>
bool Parse(const RpcRequest& request, Message& out) {
  return out.ParseFromString(request.payload);
}

RpcResult Reply(const google::protobuf::MessageLite& message) {
  return {{}, message.SerializeAsString()};
}

RpcResult BadRequest(const RpcRequest& request) {
  return {{RpcCode::kInvalidArgument, "malformed " + request.method + " request"}, {}};
}

}  // namespace

std::string NetnsPathOf(const api::PodSandbox& pod) {
  for (const auto& ns : pod.linux().namespaces()) {
    if (ns.type() == "network") return ns.path();
  }
  return {};
}

PluginService::PluginService(state::PreparedClaims& claims, inject::PodNetnsApplier& applier,
                             Logger& log, std::function<void()> on_state_change,
                             std::function<void()> on_pods_held)
    : claims_(claims),
      applier_(applier),
      log_(log),
      on_state_change_(std::move(on_state_change)),
      on_pods_held_(std::move(on_pods_held)) {}

bool PluginService::configured() const {
  std::lock_guard lock(mu_);
  return configured_;
}

void PluginService::ResetConnection() {
  std::lock_guard lock(mu_);
  configured_ = false;
}

std::optional<std::string> PluginService::KnownNetns(const std::string& pod_uid) const {
  std::lock_guard lock(mu_);
  auto it = netns_by_pod_.find(pod_uid);
  if (it == netns_by_pod_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, std::string> PluginService::KnownPods() const {
  std::lock_guard lock(mu_);
  return netns_by_pod_;
}

void PluginService::AdoptHandedOver(const std::map<std::string, std::string>& pods) {
  {
    std::lock_guard lock(mu_);
    configured_ = true;
    for (const auto& [uid, path] : pods) netns_by_pod_[uid] = path;
  }
  std::size_t adopted = 0;
  for (const auto& [uid, path] : pods) {
    const auto plans = claims_.ForPod(uid);
    if (CountNetdevs(plans) == 0) continue;
    try {
      applier_.AdoptPod({uid, "", "", path}, plans);
      ++adopted;
    } catch (const std::exception& e) {
      log_.Error("a handed-over pod's netdevs: cannot keep track of them", {{"pod", uid}, {"error", e.what()}});
    }
  }
  log_.Info("NRI connection taken over", {{"pods", pods.size()}, {"podsWithNetdevs", adopted}});
  if (on_pods_held_) on_pods_held_();
  if (on_state_change_) on_state_change_();
}

inject::PodSandboxRef PluginService::RefOf(const api::PodSandbox& pod, bool use_cache, bool has_claims) {
  inject::PodSandboxRef ref{pod.uid(), pod.namespace_(), pod.name(), NetnsPathOf(pod)};
  std::lock_guard lock(mu_);
  if (!ref.netns_path.empty()) {
    // Only pods with claims are remembered: the cache is bounded by the
    // node's prepared claims, not by how many pods the runtime ever ran.
    if (has_claims) netns_by_pod_[pod.uid()] = ref.netns_path;
  } else if (use_cache) {
    // Some containerd versions send StopPodSandbox without the netns path.
    if (auto it = netns_by_pod_.find(pod.uid()); it != netns_by_pod_.end()) ref.netns_path = it->second;
  }
  return ref;
}

api::ConfigureResponse PluginService::Configure(const api::ConfigureRequest& request) {
  {
    std::lock_guard lock(mu_);
    configured_ = true;
  }
  log_.Info("NRI plugin configured", {{"runtime", request.runtime_name()},
                                      {"runtimeVersion", request.runtime_version()},
                                      {"nriVersion", request.nri_version()},
                                      {"requestTimeoutMs", request.request_timeout()},
                                      {"events", kSubscribedEvents}});
  if (on_state_change_) on_state_change_();
  api::ConfigureResponse response;
  response.set_events(kSubscribedEvents);
  return response;
}

api::SynchronizeResponse PluginService::Synchronize(const api::SynchronizeRequest& request) {
  std::size_t learned = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& pod : request.pods()) {
      const auto path = NetnsPathOf(pod);
      if (!path.empty() && !claims_.ForPod(pod.uid()).empty()) {
        netns_by_pod_[pod.uid()] = path;
        ++learned;
      }
      sync_pods_[pod.id()] = pod;  // chunks may list a pod before its containers
    }
  }
  std::size_t bypassed = FindBypassedContainers(request);
  log_.Info("NRI synchronize", {{"pods", request.pods_size()},
                                {"containers", request.containers_size()},
                                {"netnsLearned", learned},
                                {"bypassed", bypassed},
                                {"more", request.more()}});
  if (!request.more()) {
    std::map<std::string, api::PodSandbox> pods;
    {
      std::lock_guard lock(mu_);
      pods.swap(sync_pods_);
      // What is still bypassed is what this Synchronize found.
      reported_bypass_.swap(sync_bypass_);
      sync_bypass_.clear();
    }
    ReconcileNetdevs(pods);
    if (on_pods_held_) on_pods_held_();        // pods adopted
    if (on_state_change_) on_state_change_();  // bypassed_containers() changed
  }
  api::SynchronizeResponse response;
  response.set_more(request.more());
  return response;
}

std::size_t PluginService::FindBypassedContainers(const api::SynchronizeRequest& request) {
  std::size_t bypassed = 0;
  for (const auto& container : request.containers()) {
    api::PodSandbox pod;
    {
      std::lock_guard lock(mu_);
      auto it = sync_pods_.find(container.pod_sandbox_id());
      if (it == sync_pods_.end()) continue;
      pod = it->second;
    }
    std::set<std::string> present;
    for (const auto& d : container.linux().devices()) present.insert(d.path());
    BypassedContainer found{pod.namespace_(), pod.name(), pod.uid(), container.name(), {}};
    for (const auto& plan : claims_.ForPod(pod.uid()))
      for (const auto& node : plan.device_nodes)
        if (!present.count(node.container_path)) found.missing_devices.push_back(node.container_path);
    if (found.missing_devices.empty()) continue;
    ++bypassed;
    {
      // Each container is reported once, however often the runtime
      // synchronizes while it runs.
      std::lock_guard lock(mu_);
      sync_bypass_.insert(container.id());
      if (reported_bypass_.count(container.id())) continue;
    }
    log_.Error("container runs without its dra.net devices: it started while the plugin was not connected; "
               "delete the pod to restart it with them",
               {{"pod", pod.namespace_() + "/" + pod.name()}, {"container", container.name()},
                {"missing", std::to_string(found.missing_devices.size())}});
    if (bypass_reporter_) bypass_reporter_(found);
  }
  return bypassed;
}

std::size_t PluginService::bypassed_containers() const {
  std::lock_guard lock(mu_);
  return reported_bypass_.size();
}

void PluginService::ReleasePod(const inject::PodSandboxRef& pod, const char* why) {
  const auto plans = claims_.ForPod(pod.uid);
  try {
    applier_.DetachNetdevs(pod, plans);  // a no-op for netdevs already home
    log_.Info("pod netdevs are on the host", {{"pod", pod.Describe()}, {"why", why},
                                                        {"netdevs", CountNetdevs(plans)}});
  } catch (const std::exception& e) {
    log_.Error("restoring pod netdevs failed", {{"pod", pod.Describe()}, {"why", why}, {"error", e.what()}});
    if (restore_reporter_) restore_reporter_({pod.namespace_name, pod.name, pod.uid, plans, e.what(), false});
  }
  std::lock_guard lock(mu_);
  netns_by_pod_.erase(pod.uid);
}

void PluginService::ReconcileNetdevs(const std::map<std::string, api::PodSandbox>& running) {
  std::set<std::string> running_uids;
  for (const auto& [id, pod] : running) {
    running_uids.insert(pod.uid());
    const auto plans = claims_.ForPod(pod.uid());
    if (CountNetdevs(plans) == 0) continue;
    try {
      applier_.AdoptPod(RefOf(pod, /*use_cache=*/false, /*has_claims=*/true), plans);
    } catch (const std::exception& e) {
      log_.Error("a running pod's netdevs: cannot keep track of them or move in those it lacks",
                 {{"pod", pod.namespace_() + "/" + pod.name()}, {"error", e.what()}});
    }
  }
  // Pods with netdevs that the runtime no longer runs: it removed them
  // without telling this plugin (or while it was away).
  std::set<std::string> gone;
  for (const auto& plan : claims_.All()) {
    if (plan.netdevs.empty()) continue;
    for (const auto& uid : plan.pod_uids)
      if (!running_uids.count(uid)) gone.insert(uid);
  }
  for (const auto& uid : gone) {
    std::string path;
    {
      std::lock_guard lock(mu_);
      if (auto it = netns_by_pod_.find(uid); it != netns_by_pod_.end()) path = it->second;
    }
    ReleasePod({uid, "", "", path}, "not running at runtime synchronize");
  }
  // The runtime's list is complete (it holds pod events back while it
  // synchronizes): a pod it does not list is gone, and so is its entry.
  std::lock_guard lock(mu_);
  std::erase_if(netns_by_pod_, [&](const auto& entry) { return !running_uids.count(entry.first); });
}

std::size_t PluginService::ReleaseVanishedPods() {
  const auto vanished = applier_.VanishedPods();
  for (const auto& pod : vanished) ReleasePod(pod, "its network namespace is gone");
  return vanished.size();
}

RpcStatus PluginService::RunPodSandbox(const api::PodSandbox& pod, OperationStatus* outcome) {
  const auto start = Clock::now();
  const auto plans = claims_.ForPod(pod.uid());
  if (outcome) *outcome = plans.empty() ? OperationStatus::kNoop : OperationStatus::kSuccess;
  if (plans.empty()) return {};
  const auto ref = RefOf(pod, /*use_cache=*/false, /*has_claims=*/true);
  try {
    applier_.AttachNetdevs(ref, plans);
  } catch (const std::exception& e) {
    log_.Error("RunPodSandbox failed", {{"pod", ref.Describe()}, {"error", e.what()}});
    if (outcome) *outcome = OperationStatus::kFailed;
    const auto* inject_error = dynamic_cast<const inject::InjectError*>(&e);
    if (network_reporter_)
      network_reporter_({pod.namespace_(), pod.name(), pod.uid(), plans, e.what(), inject_error && inject_error->rdma()});
    return {RpcCode::kFailedPrecondition, e.what()};
  }
  DRANET_FAULT_POINT("nri-run-pod-after-attach");
  if (on_pods_held_) on_pods_held_();
  if (network_reporter_) network_reporter_({pod.namespace_(), pod.name(), pod.uid(), plans, "", false});
  log_.Info("hook applied", {{"hook", "RunPodSandbox"},
                             {"pod", ref.Describe()},
                             {"claims", plans.size()},
                             {"netdevs", CountNetdevs(plans)},
                             {"latencyUs", MicrosSince(start)}});
  return {};
}

RpcStatus PluginService::StopPodSandbox(const api::PodSandbox& pod, bool remove, OperationStatus* outcome) {
  const auto start = Clock::now();
  const auto plans = claims_.ForPod(pod.uid());
  if (outcome) *outcome = plans.empty() ? OperationStatus::kNoop : OperationStatus::kSuccess;
  const auto ref = RefOf(pod, /*use_cache=*/true, !plans.empty());
  const char* hook = remove ? "RemovePodSandbox" : "StopPodSandbox";
  if (!plans.empty()) {
    try {
      applier_.DetachNetdevs(ref, plans);
      DRANET_FAULT_POINT("nri-stop-pod-after-detach");
      log_.Info("hook applied", {{"hook", hook},
                                 {"pod", ref.Describe()},
                                 {"claims", plans.size()},
                                 {"netdevs", CountNetdevs(plans)},
                                 {"latencyUs", MicrosSince(start)}});
    } catch (const std::exception& e) {
      // Teardown never fails the runtime: the error is logged and the next
      // Stop/Remove retries (detach is idempotent).
      if (outcome) *outcome = OperationStatus::kFailed;
      log_.Error("restoring pod netdevs failed", {{"hook", hook}, {"pod", ref.Describe()}, {"error", e.what()}});
      if (restore_reporter_) restore_reporter_({pod.namespace_(), pod.name(), pod.uid(), plans, e.what(), false});
    }
  }
  if (remove) {
    std::lock_guard lock(mu_);
    netns_by_pod_.erase(pod.uid());
  }
  return {};
}

api::CreateContainerResponse PluginService::CreateContainer(const api::PodSandbox& pod,
                                                            const api::Container& container,
                                                            OperationStatus* outcome) {
  api::CreateContainerResponse response;
  const auto plans = claims_.ForPod(pod.uid());
  if (outcome) *outcome = plans.empty() ? OperationStatus::kNoop : OperationStatus::kSuccess;
  if (plans.empty()) return response;
  const std::vector<std::string> env(container.env().begin(), container.env().end());
  const auto edits = inject::BuildContainerEdits(plans, env);
  FillAdjustment(edits, response.mutable_adjust());
  DRANET_FAULT_POINT("nri-create-container-before-reply");
  if (log_.V(2)) {
    log_.Info("hook applied", {{"hook", "CreateContainer"},
                               {"pod", pod.namespace_() + "/" + pod.name()},
                               {"container", container.name()},
                               {"devices", edits.device_nodes.size()},
                               {"env", edits.env.size()}});
  }
  return response;
}

RpcResult PluginService::Handle(const RpcRequest& request) {
  const auto start = Clock::now();
  std::string operation = request.method;
  std::optional<OperationStatus> outcome;
  RpcResult result = Dispatch(request, operation, outcome);
  if (observer_) {
    OperationStatus status = result.status.ok() ? outcome.value_or(OperationStatus::kSuccess) : OperationStatus::kFailed;
    observer_(operation, status, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return result;
}

RpcResult PluginService::Dispatch(const RpcRequest& request, std::string& operation,
                                  std::optional<OperationStatus>& outcome) {
  if (request.service != kPluginService) {
    return {{RpcCode::kUnimplemented, "service " + request.service}, {}};
  }
  const auto& m = request.method;
  if (m == "Configure") {
    api::ConfigureRequest in;
    if (!Parse(request, in)) return BadRequest(request);
    return Reply(Configure(in));
  }
  if (m == "Synchronize") {
    api::SynchronizeRequest in;
    if (!Parse(request, in)) return BadRequest(request);
    return Reply(Synchronize(in));
  }
  if (m == "Shutdown") {
    log_.Info("NRI runtime is shutting down");
    return Reply(api::Empty());
  }
  OperationStatus status = OperationStatus::kSuccess;
  if (m == "CreateContainer") {
    api::CreateContainerRequest in;
    if (!Parse(request, in)) return BadRequest(request);
    RpcResult reply = Reply(CreateContainer(in.pod(), in.container(), &status));
    outcome = status;
    return reply;
  }
  if (m == "RunPodSandbox" || m == "StopPodSandbox" || m == "RemovePodSandbox") {
    api::RunPodSandboxRequest in;  // the three requests share one layout: pod = 1
    if (!Parse(request, in)) return BadRequest(request);
    RpcStatus rpc = m == "RunPodSandbox" ? RunPodSandbox(in.pod(), &status)
                                         : StopPodSandbox(in.pod(), m == "RemovePodSandbox", &status);
    outcome = status;
    if (!rpc.ok()) return {rpc, {}};
    return Reply(api::Empty());
  }
  if (m == "StateChange") {
    api::StateChangeEvent in;
    if (!Parse(request, in)) return BadRequest(request);
    RpcStatus rpc;
    switch (in.event()) {
      case api::RUN_POD_SANDBOX:
        operation = "RunPodSandbox";
        rpc = RunPodSandbox(in.pod(), &status);
        outcome = status;
        break;
      case api::STOP_POD_SANDBOX:
        operation = "StopPodSandbox";
        rpc = StopPodSandbox(in.pod(), false, &status);
        outcome = status;
        break;
      case api::REMOVE_POD_SANDBOX:
        operation = "RemovePodSandbox";
        rpc = StopPodSandbox(in.pod(), true, &status);
        outcome = status;
        break;
      default: break;  // not subscribed; nothing to do
    }
    if (!rpc.ok()) return {rpc, {}};
    return Reply(api::Empty());
  }
  return Unimplemented(request);
}

}  // namespace dranet::nri
