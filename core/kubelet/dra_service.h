#pragma once
// core/kubelet/dra_service.h — NodePrepareResources / NodeUnprepareResources,
// independent of the gRPC version that carried them.
//
// Prepare, per claim and concurrently (a bounded pool): read the claim (UID
// checked), build its ClaimPlan (claim_plan_builder.h), then persist every new
// plan of the call in one PreparedClaims::Put (one fsync) and answer each
// claim on its own — one claim's error never fails the others.
//   * Idempotent: a claim already prepared is answered from its stored plan
//     (only its pod list is refreshed from status.reservedFor), so a second
//     prepare, also after a restart, answers identically.
//   * The same claim asked for by concurrent calls is prepared once; the
//     later callers wait for and share the first one's answer.
//   * A claim shared by several pods keeps every pod of status.reservedFor
//     (with a netdev, one pod only: at first prepare and at every later one).
//   * A netdev is prepared for one claim at a time: a claim whose netdev
//     another prepared (or preparing) claim holds is refused, naming it.
//   * A stored plan answers only while status.allocation still names its
//     devices: a claim whose allocation changed under the same UID is
//     refused (its old devices may sit in a pod) until it is unprepared.
// Unprepare drops the stored plans (one Remove, one fsync); it never needs
// the claim object, and unknown claims succeed.
//
// Thread-safety: Prepare and Unprepare may be called from many threads.
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/metrics.h"
#include "inject/pod_netns_applier.h"
#include "inventory/device.h"
#include "kube/resource_claim.h"
#include "kubelet/claim_plan_builder.h"
#include "kubelet/worker_pool.h"
#include "state/prepared_claims.h"

namespace dranet::kubelet {

// A claim as kubelet names it.
struct ClaimRequest {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

// One device of a prepared claim, as answered to kubelet.
struct PreparedDevice {
  std::vector<std::string> request_names;  // top-level request names
  std::string pool_name;
  std::string device_name;
  std::vector<std::string> cdi_device_ids;
  std::string share_id = {};  // the allocation's shareID; empty for a device held alone
  friend bool operator==(const PreparedDevice&, const PreparedDevice&) = default;
};

// The answer for one claim: devices, or a non-empty error.
struct PrepareAnswer {
  std::vector<PreparedDevice> devices;
  std::string error;
  friend bool operator==(const PrepareAnswer&, const PrepareAnswer&) = default;
};

// Reads claim namespace/name and checks its UID (kube::ResourceClaimReader::Get
// or a stand-in). Throws kube::ClaimError / kube::ApiError / std::exception.
using ClaimLookup = std::function<kube::ResourceClaim(
    const std::string& namespace_name, const std::string& name, const std::string& uid,
    std::stop_token stop)>;

// The node's current devices. Called once per prepared claim; should return
// a cached list (a discovery per call would dominate prepare latency).
using InventoryProvider = std::function<std::shared_ptr<const std::vector<inventory::Device>>()>;

// Reports a failed claim to the user (an Event on the ResourceClaim).
// `reason` is CamelCase ("ClaimPrepareFailed"). Must not throw.
using ClaimEventSink = std::function<void(const ClaimRequest& claim, const std::string& reason,
                                          const std::string& message)>;

struct DraServiceOptions {
  PlanBuilderOptions plan;   // driver name, pool (node) name, dev root, RDMA mode
  unsigned prepare_workers = 8;  // claims prepared in parallel, shared fairly by concurrent calls
  // Every claim of one prepare call is answered within this (kubelet gives up
  // after 45 s): a claim still waiting for the API server then fails with an
  // error that says so, and kubelet retries it later.
  std::chrono::milliseconds prepare_timeout{30'000};
  // CDI strategy: when set, each prepared claim gets a CDI spec file here and
  // kubelet gets its CDI device ids, so runtimes with CDI inject fail-closed.
  std::string cdi_dir;
};

struct DraServiceDeps {
  ClaimLookup claims;                  // required
  InventoryProvider inventory;         // required
  state::PreparedClaims* prepared = nullptr;  // required
  InjectFunction inject;               // optional: no injection plugins
  HostAccess host;                     // optional members: needed only by netdev devices and their configs
  ClaimEventSink events;               // optional
  // Optional: "prepare"/"unprepare" per claim, and "PrepareResourceClaims"/
  // "UnprepareResourceClaims" per call (failed when any claim failed).
  OperationObserver observer;
  // Optional: at unprepare, netdevs still in a pod go home (the runtime may
  // have removed the pod without StopPodSandbox reaching the NRI plugin).
  inject::PodNetnsApplier* netdevs = nullptr;
};

class DraService {
 public:
  // `log` must outlive the service. Throws std::invalid_argument when a
  // required dependency is missing.
  DraService(DraServiceOptions options, DraServiceDeps deps, Logger& log);

  // Answers every claim of `claims` (keyed by UID) by the caller's deadline
  // or options().prepare_timeout from now, whichever comes first.
  std::map<std::string, PrepareAnswer> Prepare(
      const std::vector<ClaimRequest>& claims,
      std::chrono::steady_clock::time_point caller_deadline = std::chrono::steady_clock::time_point::max());
  // Error per claim UID (empty: unprepared). Unknown claims succeed. Netdevs
  // still inside a pod are returned to the host first; a failure there is
  // logged and reported (Event NetworkRestoreFailed) but does not keep the
  // claim prepared, which would hold the pod in Terminating. DHCP leases and
  // profiles are released by the caller's deadline or prepare_timeout,
  // whichever comes first: what is not released by then is reported
  // (Event ClaimReleaseFailed) and left to the server's expiry.
  std::map<std::string, std::string> Unprepare(
      const std::vector<ClaimRequest>& claims,
      std::chrono::steady_clock::time_point caller_deadline = std::chrono::steady_clock::time_point::max());

  // How long a call waits, after its deadline stopped its claims, for those
  // still running: then it answers without them (they finish on their own).
  static constexpr std::chrono::milliseconds kStoppedPrepareGrace{1000};

  // The answer a stored plan gives (what Prepare returns for it).
  static PrepareAnswer AnswerFor(const inject::ClaimPlan& plan);

  const DraServiceOptions& options() const { return options_; }

 private:
  struct Outcome {
    PrepareAnswer answer;
    std::optional<inject::ClaimPlan> to_store;  // set when the checkpoint must change
    std::string result;                          // for the log: prepared, refreshed, unchanged, failed
    std::vector<std::string> reserved_netdevs;   // devices this prepare took in netdev_holders_
  };
  // Who holds a netdev device: a prepared claim (in the checkpoint), or one
  // this instance is preparing (netdev_holders_, until its plan is stored).
  struct NetdevHolder {
    std::string claim_uid;
    std::string claim;  // namespace/name
  };
  // Takes every netdev device of `devices` for `request`, or throws
  // PrepareError naming the claim that holds one (nothing taken then).
  std::vector<std::string> ReserveNetdevs(const ClaimRequest& request, const std::vector<std::string>& devices);
  void ReleaseNetdevs(const std::vector<std::string>& devices, const std::string& claim_uid);
  struct Job;
  Outcome PrepareOne(const ClaimRequest& claim, std::stop_token deadline_passed);
  // Saves the finished jobs' plans (one write), answers the calls waiting
  // for them, logs and reports each; returns their answers.
  std::map<std::string, PrepareAnswer> Complete(const std::vector<std::shared_ptr<Job>>& jobs);
  void ReturnNetdevs(const std::vector<ClaimRequest>& claims);
  // DHCP leases and profiles of the claims' plans go back (best effort).
  void ReleaseResources(const std::vector<ClaimRequest>& claims, std::chrono::steady_clock::time_point deadline);

  DraServiceOptions options_;
  DraServiceDeps deps_;
  Logger& log_;
  std::mutex inject_mu_;  // plugin injection runs one claim at a time
  std::mutex inflight_mu_;
  std::map<std::string, std::shared_future<PrepareAnswer>> inflight_;  // by claim UID
  std::mutex netdev_mu_;
  std::map<std::string, NetdevHolder> netdev_holders_;  // prepares in flight, by device name; netdev_mu_
  // Last: destroyed first, so that a task still running (abandoned by its
  // call) finishes while everything it uses is alive.
  WorkerPool pool_;
};

}  // namespace dranet::kubelet
