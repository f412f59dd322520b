#include "kubelet/dra_service.h"

#include <chrono>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

#include "base/k8s_names.h"
#include "inject/cdi_spec.h"
#include "kube/api_client.h"
#include "base/fault_points.h"

namespace dranet::kubelet {
namespace {

std::string Describe(const ClaimRequest& c) { return c.namespace_name + "/" + c.name; }

std::string JoinNames(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

DraService::DraService(DraServiceOptions options, DraServiceDeps deps, Logger& log)
    : options_(std::move(options)),
      deps_(std::move(deps)),
      log_(log),
      pool_(options_.prepare_workers, "dra-prepare") {
  if (!deps_.claims || !deps_.inventory || deps_.prepared == nullptr)
    throw std::invalid_argument("DraService needs a claim lookup, an inventory and a PreparedClaims store");
  if (deps_.inject) {
    // Plugins see one claim at a time (their workers are serial anyway).
    auto inject = std::move(deps_.inject);
    deps_.inject = [this, inject](const plugins::ClaimRef& ref, const std::vector<inventory::Device>& devices) {
      std::lock_guard lock(inject_mu_);
      return inject(ref, devices);
    };
  }
}

PrepareAnswer DraService::AnswerFor(const inject::ClaimPlan& plan) {
  PrepareAnswer answer;
  for (const auto& d : plan.devices)
    answer.devices.push_back({{TopLevelRequest(d.request)}, d.pool, d.device, plan.cdi_device_ids, d.share_id});
  return answer;
}

DraService::Outcome DraService::PrepareOne(const ClaimRequest& request, std::stop_token deadline_passed) {
  Outcome out;
  try {
    if (deadline_passed.stop_requested())
      throw PrepareError("claim " + Describe(request) + ": not started before the prepare deadline (" +
                         std::to_string(options_.prepare_timeout.count() / 1000) +
                         " s at most) because other claims held every worker; kubelet retries it");
    if (request.uid.empty() || request.name.empty())
      throw PrepareError("claim \"" + Describe(request) + "\": kubelet sent no name or UID");
    // Names go into API paths: only what the API server itself allows.
    if (!IsDnsLabel(request.namespace_name) || !IsDnsSubdomain(request.name))
      throw PrepareError("claim \"" + Describe(request) +
                         "\": not a valid namespace (DNS-1123 label) and name (DNS-1123 subdomain)");
    kube::ResourceClaim claim = deps_.claims(request.namespace_name, request.name, request.uid, deadline_passed);
    DRANET_FAULT_POINT("prepare-after-claim-read");
    if (auto stored = deps_.prepared->Get(request.uid)) {
      // Prepared before (kubelet retry, another pod of a shared claim, or a
      // restart): keep the plan — its netdevs may already be in a pod — and
      // follow the pods the claim is reserved for now.
      std::set<std::string> prepared_devices, allocated_devices;
      for (const auto& d : stored->devices) prepared_devices.insert(d.device);
      for (const auto& r : claim.ResultsFor(options_.plan.driver_name, options_.plan.pool_name))
        allocated_devices.insert(r.device);
      if (prepared_devices != allocated_devices)
        throw PrepareError("claim " + Describe(request) + ": its allocation changed since it was prepared (prepared: " +
                           JoinNames(prepared_devices) + "; allocated now: " + JoinNames(allocated_devices) +
                           "); the prepared devices may still be in a pod, so it is not prepared again until "
                           "kubelet unprepares it (delete its pods)");
      auto pods = ReservedPods(claim);
      for (const auto& netdev : stored->netdevs)
        if (auto problem = NetdevPodsProblem("claim " + Describe(request), netdev.device_name, netdev.host_if_name,
                                             pods.size());
            !problem.empty())
          throw PrepareError(problem);
      out.answer = AnswerFor(*stored);
      if (pods != stored->pod_uids) {
        stored->pod_uids = std::move(pods);
        out.to_store = std::move(*stored);
        out.result = "pods-updated";
      } else {
        out.result = "already-prepared";
      }
      return out;
    }
    auto inventory = deps_.inventory();
    if (!inventory) throw PrepareError("claim " + Describe(request) + ": the device inventory is not ready yet");
    std::vector<std::string> netdev_devices;
    for (const auto& r : claim.ResultsFor(options_.plan.driver_name, options_.plan.pool_name))
      for (const auto& device : *inventory)
        // adminAccess and a share move nothing
        if (device.name == r.device && !device.if_name.empty() && !r.admin_access && r.share_id.empty())
          netdev_devices.push_back(device.name);
    out.reserved_netdevs = ReserveNetdevs(request, netdev_devices);
    inject::ClaimPlan plan = BuildClaimPlan(claim, *inventory, options_.plan, deps_.inject, deps_.host, deadline_passed);
    if (!options_.cdi_dir.empty()) plan.cdi_device_ids = inject::WriteCdiSpec(plan, options_.cdi_dir);
    out.answer = AnswerFor(plan);
    out.to_store = std::move(plan);
    out.result = "prepared";
  } catch (const kube::ClaimError& e) {
    out.answer.error = e.what();
  } catch (const kube::ApiError& e) {
    out.answer.error = "claim " + Describe(request) + ": cannot read it from the API server" +
                       (deadline_passed.stop_requested() ? " before the prepare deadline: " : ": ") + e.what();
  } catch (const std::exception& e) {
    out.answer.error = e.what();
  }
  if (!out.answer.error.empty()) {
    out.answer.devices.clear();
    out.to_store.reset();
    out.result = "failed";
    ReleaseNetdevs(out.reserved_netdevs, request.uid);
    out.reserved_netdevs.clear();
  }
  return out;
}

std::vector<std::string> DraService::ReserveNetdevs(const ClaimRequest& request,
                                                    const std::vector<std::string>& devices) {
  if (devices.empty()) return {};
  std::lock_guard lock(netdev_mu_);
  // The holders: the prepared claims, read from the checkpoint every
  // instance on the node shares (a rollout runs two, and a claim one
  // unprepared must not stay held in the other's memory), and the prepares
  // of this instance not stored yet.
  const auto prepared = deps_.prepared->All();
  auto holder_of = [&](const std::string& device) -> std::optional<NetdevHolder> {
    if (auto it = netdev_holders_.find(device); it != netdev_holders_.end()) return it->second;
    for (const auto& plan : prepared)
      for (const auto& netdev : plan.netdevs)
        if (netdev.device_name == device) return NetdevHolder{plan.claim_uid, plan.claim_namespace + "/" + plan.claim_name};
    return std::nullopt;
  };
  for (const auto& device : devices) {
    auto holder = holder_of(device);
    if (!holder || holder->claim_uid == request.uid) continue;
    throw PrepareError("claim " + Describe(request) + ": device " + device + " is a netdev that claim " +
                       holder->claim + " (uid " + holder->claim_uid +
                       ") holds already; a netdev can be in one pod's network namespace only, so it is not "
                       "prepared twice — the other claim must be unprepared (its pods deleted) first");
  }
  std::vector<std::string> taken;
  for (const auto& device : devices)
    if (netdev_holders_.emplace(device, NetdevHolder{request.uid, Describe(request)}).second) taken.push_back(device);
  return taken;
}

void DraService::ReleaseNetdevs(const std::vector<std::string>& devices, const std::string& claim_uid) {
  std::lock_guard lock(netdev_mu_);
  for (const auto& device : devices)
    if (auto it = netdev_holders_.find(device); it != netdev_holders_.end() && it->second.claim_uid == claim_uid)
      netdev_holders_.erase(it);
}

struct DraService::Job {
  ClaimRequest request;
  std::promise<PrepareAnswer> promise;
  std::chrono::steady_clock::time_point call_start;
  std::mutex mu;           // guards the members below
  Outcome outcome;
  double seconds = 0;      // its prepare, before the state is saved
  bool finished = false;   // PrepareOne returned
  bool abandoned = false;  // the call answered without waiting for it
};

std::map<std::string, PrepareAnswer> DraService::Prepare(const std::vector<ClaimRequest>& claims,
                                                        std::chrono::steady_clock::time_point caller_deadline) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = std::min(caller_deadline, start + options_.prepare_timeout);
  std::vector<std::shared_ptr<Job>> owned;
  std::vector<std::pair<std::string, std::shared_future<PrepareAnswer>>> joined;
  {
    std::lock_guard lock(inflight_mu_);
    std::set<std::string> seen;
    for (const auto& c : claims) {
      if (!seen.insert(c.uid).second) continue;  // listed twice in one call
      auto it = inflight_.find(c.uid);
      if (it != inflight_.end()) {
        joined.emplace_back(c.uid, it->second);
        continue;
      }
      auto job = std::make_shared<Job>();
      job->request = c;
      job->call_start = start;
      inflight_.emplace(c.uid, job->promise.get_future().share());
      owned.push_back(std::move(job));
    }
  }

  std::vector<WorkerPool::Task> tasks;
  for (auto& job : owned)
    tasks.push_back([this, job](std::stop_token deadline_passed) {
      const auto started = std::chrono::steady_clock::now();
      Outcome outcome = PrepareOne(job->request, deadline_passed);
      {
        std::lock_guard lock(job->mu);
        job->outcome = std::move(outcome);
        job->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        job->finished = true;
        if (!job->abandoned) return;
      }
      // Its call answered already: it finishes alone (saved, answered to
      // any call that joined it, logged).
      Complete({job});
    });
  pool_.RunBatch(std::move(tasks), deadline, kStoppedPrepareGrace);

  std::map<std::string, PrepareAnswer> answers;
  std::vector<std::shared_ptr<Job>> finished;
  for (auto& job : owned) {
    std::lock_guard lock(job->mu);
    if (job->finished) {
      finished.push_back(job);
      continue;
    }
    // Still blocked past its stop (a DHCP server, profile provider or API
    // server that does not let go): the call is answered now; the claim
    // stays in flight until it ends, so a retry joins it instead of
    // starting a second prepare.
    job->abandoned = true;
    answers[job->request.uid] = {{}, "claim " + Describe(job->request) +
                                         ": not prepared by the deadline (still waiting for the API server, DHCP "
                                         "or the profile provider); kubelet retries it"};
    log_.Warning("claim prepare still running at the deadline; answered as failed",
                 {{"claim", Describe(job->request)}, {"uid", job->request.uid}});
    if (deps_.events) deps_.events(job->request, "ClaimPrepareFailed", answers[job->request.uid].error);
  }
  answers.merge(Complete(finished));
  // A claim another call is preparing: its answer, unless that call is
  // still busy at our deadline (it is bounded by its own).
  for (auto& [uid, future] : joined) {
    if (future.wait_until(deadline) == std::future_status::ready) {
      answers[uid] = future.get();
    } else {
      answers[uid] = {{}, "claim uid " + uid + ": still being prepared by an earlier call; kubelet retries it"};
    }
  }
  if (deps_.observer) {
    const bool failed = std::any_of(answers.begin(), answers.end(), [](const auto& a) { return !a.second.error.empty(); });
    deps_.observer("PrepareResourceClaims", failed ? OperationStatus::kFailed : OperationStatus::kSuccess,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return answers;
}

std::map<std::string, PrepareAnswer> DraService::Complete(const std::vector<std::shared_ptr<Job>>& jobs) {
  std::vector<inject::ClaimPlan> to_store;
  for (auto& job : jobs)
    if (job->outcome.to_store) to_store.push_back(*job->outcome.to_store);
  if (!to_store.empty()) {
    DRANET_FAULT_POINT("prepare-before-persist");
    try {
      deps_.prepared->Put(to_store);
      // Stored: the checkpoint holds their netdevs from now on.
      for (auto& job : jobs)
        if (job->outcome.to_store) ReleaseNetdevs(job->outcome.reserved_netdevs, job->request.uid);
    } catch (const std::exception& e) {
      for (auto& job : jobs) {
        if (!job->outcome.to_store) continue;
        job->outcome.answer = {{}, "claim " + Describe(job->request) + ": cannot save the prepared state: " +
                                       e.what()};
        job->outcome.result = "failed";
        ReleaseNetdevs(job->outcome.reserved_netdevs, job->request.uid);
      }
    }
    DRANET_FAULT_POINT("prepare-after-persist");
  }

  std::map<std::string, PrepareAnswer> answers;
  {
    std::lock_guard lock(inflight_mu_);
    for (auto& job : jobs) {
      job->promise.set_value(job->outcome.answer);
      inflight_.erase(job->request.uid);
    }
  }
  for (auto& job : jobs) {
    const auto& o = job->outcome;
    // After the state is saved: a claim whose save failed counts as failed.
    if (deps_.observer)
      deps_.observer("prepare", o.answer.error.empty() ? OperationStatus::kSuccess : OperationStatus::kFailed,
                     job->seconds);
    if (o.answer.error.empty()) {
      log_.Info("claim prepared", {{"claim", Describe(job->request)},
                                   {"uid", job->request.uid},
                                   {"result", o.result},
                                   {"devices", o.answer.devices.size()},
                                   {"latency_ms", MillisSince(job->call_start)}});
    } else {
      log_.Warning("claim prepare failed", {{"claim", Describe(job->request)},
                                            {"uid", job->request.uid},
                                            {"error", o.answer.error}});
      if (deps_.events && !job->abandoned) deps_.events(job->request, "ClaimPrepareFailed", o.answer.error);
    }
    answers[job->request.uid] = o.answer;
  }
  return answers;
}

void DraService::ReturnNetdevs(const std::vector<ClaimRequest>& claims) {
  for (const auto& claim : claims) {
    const auto plan = deps_.prepared->Get(claim.uid);
    if (!plan || plan->netdevs.empty()) continue;
    for (const auto& pod_uid : plan->pod_uids) {
      try {
        // No netns path: the applier detaches from the namespace it kept,
        // and leaves netdevs that are already home alone.
        deps_.netdevs->DetachNetdevs({pod_uid, "", "", ""}, {*plan});
      } catch (const std::exception& e) {
        log_.Error("netdevs not restored at unprepare", {{"claim", Describe(claim)}, {"pod", pod_uid},
                                                        {"error", e.what()}});
        if (deps_.events) deps_.events(claim, "NetworkRestoreFailed", e.what());
      }
    }
  }
}

void DraService::ReleaseResources(const std::vector<ClaimRequest>& claims,
                                  std::chrono::steady_clock::time_point deadline) {
  // One task per claim on the prepare workers: claims release in parallel,
  // and none past the deadline (the stop token ends a release under way).
  std::vector<WorkerPool::Task> tasks;
  for (const auto& claim : claims) {
    auto plan = deps_.prepared->Get(claim.uid);
    if (!plan || (plan->profiles.empty() && std::none_of(plan->netdevs.begin(), plan->netdevs.end(),
                                                         [](const auto& n) { return n.dhcp_lease.has_value(); })))
      continue;
    tasks.push_back([this, claim, plan = std::move(*plan)](std::stop_token stop) {
      // Best effort, as a release nobody answers cannot hold the pod: a DHCP
      // server or profile provider reclaims what it never hears back about.
      for (const auto& failure : ReleaseClaimResources(plan, deps_.host, stop)) {
        log_.Warning("claim resource not released", {{"claim", Describe(claim)}, {"error", failure}});
        if (deps_.events) deps_.events(claim, "ClaimReleaseFailed", failure);
      }
    });
  }
  pool_.RunBatch(std::move(tasks), deadline, kStoppedPrepareGrace);
}

std::map<std::string, std::string> DraService::Unprepare(const std::vector<ClaimRequest>& claims,
                                                         std::chrono::steady_clock::time_point caller_deadline) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = std::min(caller_deadline, start + options_.prepare_timeout);
  // A prepare of the same claim still running finishes first, so that its
  // Put cannot land after this Remove.
  std::vector<std::shared_future<PrepareAnswer>> running;
  {
    std::lock_guard lock(inflight_mu_);
    for (const auto& c : claims) {
      auto it = inflight_.find(c.uid);
      if (it != inflight_.end()) running.push_back(it->second);
    }
  }
  for (auto& f : running) f.wait_until(deadline);

  std::vector<std::string> uids;
  std::map<std::string, std::string> errors;
  for (const auto& c : claims) {
    uids.push_back(c.uid);
    errors[c.uid] = "";
  }
  if (deps_.netdevs) ReturnNetdevs(claims);
  ReleaseResources(claims, deadline);
  DRANET_FAULT_POINT("unprepare-before-persist");
  try {
    deps_.prepared->Remove(uids);
  } catch (const std::exception& e) {
    for (auto& [uid, error] : errors) error = std::string("cannot save the unprepared state: ") + e.what();
  }
  DRANET_FAULT_POINT("unprepare-after-persist");
  if (!options_.cdi_dir.empty())
    for (const auto& uid : uids) {
      try {
        inject::RemoveCdiSpec(uid, options_.cdi_dir);
      } catch (const std::exception& e) {
        log_.Warning("cannot remove CDI spec", {{"uid", uid}, {"error", e.what()}});
      }
    }
  for (const auto& c : claims) {
    log_.Info(errors[c.uid].empty() ? "claim unprepared" : "claim unprepare failed",
              {{"claim", Describe(c)}, {"uid", c.uid}, {"error", errors[c.uid]}});
  }
  if (deps_.observer) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool failed = false;
    for (const auto& c : claims) {
      failed |= !errors[c.uid].empty();
      deps_.observer("unprepare", errors[c.uid].empty() ? OperationStatus::kSuccess : OperationStatus::kFailed,
                     seconds);
    }
    deps_.observer("UnprepareResourceClaims", failed ? OperationStatus::kFailed : OperationStatus::kSuccess, seconds);
  }
  return errors;
}

}  // namespace dranet::kubelet
