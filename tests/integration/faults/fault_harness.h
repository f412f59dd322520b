#pragma once
// tests/integration/faults/fault_harness.h — one node for fault tests: the
// real dranetd-faultpoints binary on a node snapshot (GB300: RDMA devices
// only; A4: netdevs too), with the fake API server, fake kubelet and fake NRI
// runtime in this process (loopback TCP and unix sockets only).
//
// With real netdevs (root), the node is a network namespace of its own with a
// veth standing in for every netdev of the snapshot (tests/support/netns_lab.h), the test
// thread and the fakes live in it, each pod has a network namespace, and the
// host state of the claimed netdevs is varied (a link down, extra addresses)
// so that a restore has more to get right than the snapshot's defaults.
//
//   DaemonProcess  dranetd as a child: optional DRANET_FAULT, log in a file,
//                  exit status, the metrics port it logged.
//   FaultNode      the fakes, two allocated claims (one device / two devices)
//                  reserved for two pods, and the workload a node runs on
//                  them, step by step, so a test can stop at a kill, restart
//                  the daemon and replay what is left.
//
// Every wait polls a condition under a deadline; nothing sleeps to pass.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "fake_nri_runtime.h"
#include "netns_lab.h"
#include "inject/plan.h"
#include "state/checkpoint_store.h"

namespace dranet::faults {

inline constexpr auto kDeadline = std::chrono::seconds(60);
inline constexpr const char* kNode = "aks-gpu-45139532-vmss000081";
inline constexpr const char* kDriver = "dra.net";

// One short pause between two looks at a condition (10 ms).
void PollPause();

// Polls `done` every few milliseconds until it holds or `deadline` passes.
template <typename Predicate>
bool PollUntil(Predicate done, std::chrono::milliseconds deadline = kDeadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    PollPause();
  }
}

// A GET on 127.0.0.1:`port`; the status code (0: no answer) and body.
struct HttpAnswer {
  int status = 0;
  std::string body;
};
HttpAnswer LoopbackGet(int port, const std::string& path);

// A kubeconfig for the fake API server at `server` (token auth).
std::string KubeconfigFor(const std::string& server);
// An allocated claim `name` in namespace "ml" for `devices` of pool `pool`,
// reserved for `pod_uid` (plain identifiers: no JSON escaping needed), as a
// resource.k8s.io/`version` object (v1beta1: its flat request shape). With
// `share_id`, each result is a share of its device (shareID, 1 share consumed).
// With `config` (a NetworkConfig JSON object), the claim's config for them.
std::string AllocatedClaim(const std::string& name, const std::string& pool, const std::vector<std::string>& devices,
                           const std::string& pod_uid, const std::string& version = "v1",
                           const std::string& share_id = {}, const std::string& config = {});
// The collection paths of claims in namespace "ml" and of slices, in a
// resource.k8s.io version.
std::string ClaimsPath(const std::string& version = "v1");
std::string SlicesPath(const std::string& version = "v1");
// A stored slice device's attributes, in any version's shape (v1beta1 keeps
// them under `basic`); nullptr when it has none.
const rapidjson::Value* DeviceAttributes(const rapidjson::Value& device);
// Published device name -> its dra.net/ifName (ResourceSlice JSON objects).
std::map<std::string, std::string> PublishedIfNames(const std::vector<std::string>& slices);
// The name of the published device whose dra.net/ifName is `if_name`;
// empty when none.
std::string DeviceWithIfName(const std::vector<std::string>& slices, const std::string& if_name);

// dranetd as a child process.
class DaemonProcess {
 public:
  // Starts `binary args...`; with a non-empty `fault`, DRANET_FAULT=fault.
  DaemonProcess(const std::string& binary, const std::vector<std::string>& args,
                const std::filesystem::path& log_file, const std::string& fault);
  ~DaemonProcess();  // SIGKILL if still running
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Has it exited? Reaps it when so.
  bool Exited();
  // Waits up to `deadline` for the exit; the wait status, nullopt on timeout.
  std::optional<int> WaitExit(std::chrono::milliseconds deadline = kDeadline);
  // SIGTERM, then the wait status.
  std::optional<int> Terminate();
  std::string Log() const;
  pid_t pid() const { return pid_; }
  // The port of "serving metrics and health" (waits for the line); 0 if absent.
  int MetricsPort();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::filesystem::path log_file_;
};

// The port of dranetd's "serving metrics and health" line in `log`; 0 if the
// line is not there (yet).
int MetricsPortIn(const std::string& log);
bool KilledBySigkill(int wait_status);
std::string DescribeWaitStatus(int wait_status);

// The steps of one node's workload, in the order a node runs them.
enum class Step {
  kPrepare, kRunPodA, kCreateA, kRunPodB, kCreateB,
  kStopPodA, kRemovePodA, kStopPodB, kRemovePodB, kUnprepare,
};
inline constexpr Step kAllSteps[] = {Step::kPrepare,  Step::kRunPodA,    Step::kCreateA,   Step::kRunPodB,
                                     Step::kCreateB,  Step::kStopPodA,   Step::kRemovePodA, Step::kStopPodB,
                                     Step::kRemovePodB, Step::kUnprepare};
const char* StepName(Step step);

// What one step answered, normalised so two runs compare equal.
struct StepAnswer {
  bool ok = false;
  std::string text;  // prepare/unprepare answers or the container's devices and env; the error when !ok
};

class FaultNode {
 public:
  struct Options {
    std::string dranetd;  // binary
    std::filesystem::path snapshot;
    bool real_netdevs = false;  // root only: see the file comment
    std::vector<std::string> extra_args = {};  // appended to dranetd's command line
    // The one resource.k8s.io version the API server serves ("v1beta1": a
    // 1.32/1.33 cluster; "none": DRA not enabled); below v1 the kubelet
    // calls the v1beta1 DRA service.
    std::string resource_api = "v1";
    // Versions served besides it (each keeps its own objects), after it.
    std::vector<std::string> also_served = {};
    // --pod-uid of the daemon StartDaemon starts (kubelet sockets per
    // instance); empty: none.
    std::string pod_uid = {};
    // claim-a and claim-b each hold a share of the first device (results
    // with shareIDs "share-a" and "share-b"), as the scheduler allocates a
    // device published with allowMultipleAllocations; else the first device
    // and the next two.
    bool shared_claims = false;
    // Each claim's config (a NetworkConfig JSON object); empty: none.
    std::string claim_config = {};
  };
  explicit FaultNode(Options options);
  ~FaultNode();

  // Starts dranetd (DRANET_FAULT=fault when non-empty) and waits for kubelet
  // registration and the NRI handshake, then (wait_ready) for /readyz 200 —
  // which implies the first discovery was published. False with a reason in
  // *why when it does not come up.
  bool StartDaemon(const std::string& fault, std::string* why, bool wait_ready = true);
  DaemonProcess& daemon() { return *daemon_; }
  // A rollout with surge: starts another dranetd, with --pod-uid `pod_uid`,
  // beside the running one, which becomes predecessor(), and waits for the
  // newcomer's kubelet registration and /readyz 200 (on the status port the
  // running one hands it). No new NRI connection is awaited: the predecessor
  // hands over its own when it stops.
  bool StartSuccessor(const std::string& pod_uid, std::string* why);
  DaemonProcess& predecessor() { return *predecessor_; }
  bool daemon_running() { return daemon_ && !daemon_->Exited(); }

  // Runs one step against the current daemon. With real netdevs, pod steps
  // answer what the pod's network namespace (and, at Stop, the node's) holds.
  StepAnswer Run(Step step);

  // With real netdevs: the stand-in netdevs of the node network namespace
  // (name, up/down, MTU, MAC, addresses, carried routes, rules, neighbours),
  // as text, and what they were before the first prepare.
  std::string NodeNetwork() const;
  const std::string& node_network_at_start() const { return node_network_at_start_; }
  std::string PodNetwork(const std::string& pod) const;

  // Restarts the fake NRI runtime / kubelet (the plugin must reconnect /
  // re-register). StopKubelet leaves the node without one until RestartKubelet.
  void RestartRuntime();
  bool AcceptPlugin();
  void StopKubelet();
  void RestartKubelet();

  // The checkpoint as a restarted daemon would load it (read with a store of
  // our own; the daemon must not be running).
  struct Checkpoint {
    state::LoadOutcome outcome = state::LoadOutcome::kNoFile;
    std::map<std::string, inject::ClaimPlan> by_claim_name;
  };
  Checkpoint ReadCheckpoint() const;

  // Containers whose CreateContainer the runtime ran without the plugin
  // (dranetd dead or disconnected): "<pod>/<container>".
  const std::vector<std::string>& bypassed() const { return bypassed_; }
  // Starts a container in `pod` ("A" or "B") now; counts a bypass when the
  // plugin does not answer. The runtime lists it (with the devices it got)
  // in its next Synchronize, as containerd does.
  StepAnswer CreateContainer(const std::string& pod, const std::string& container);
  // A pod whose sandbox runs (started, not stopped) and so could start a
  // container now: "A", "B", or "" when none.
  std::string StartedPod() const;

  fakes::FakeApiServer& api() { return api_; }
  // The kubelet's DRA service for the cluster's version: v1beta1 below v1.
  fakes::DraApi dra_api() const {
    return options_.resource_api == "v1" ? fakes::DraApi::kV1 : fakes::DraApi::kV1beta1;
  }
  const std::string& resource_api() const { return options_.resource_api; }
  testing::FakeNriRuntime& runtime() { return *runtime_; }
  fakes::FakeKubelet& kubelet() { return *kubelet_; }
  const std::vector<fakes::KubeletClaim>& claims() const { return claims_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  StepAnswer PodEvent(Step step);
  std::vector<std::string> DaemonArgs(const std::string& pod_uid) const;
  std::vector<testing::api::PodSandbox> RunningPods() const;

  // Gives the claimed netdevs a host state of their own (one link down, extra
  // addresses) and records it as node_network_at_start_.
  void VaryClaimedNetdevs(const std::vector<std::string>& slices,
                          const std::vector<std::pair<std::string, std::vector<std::string>>>& claims);

  Options options_;
  // Created (and entered) before the fakes, so that they serve inside it.
  std::unique_ptr<netlab::NetnsLab> lab_;
  std::string node_network_at_start_;
  std::filesystem::path dir_;
  fakes::FakeApiServer api_;
  std::unique_ptr<testing::FakeNriRuntime> runtime_;
  std::unique_ptr<fakes::FakeKubelet> kubelet_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<DaemonProcess> predecessor_;
  int daemon_starts_ = 0;
  std::vector<fakes::KubeletClaim> claims_;
  std::map<std::string, testing::api::PodSandbox> pods_;  // "A", "B"
  std::map<std::string, std::string> pod_netns_;         // "A", "B" -> network namespace name
  std::set<std::string> running_;                         // pods between Run and Remove
  std::set<std::string> stopped_;                         // pods between Stop and Remove
  std::map<std::string, testing::api::Container> containers_;  // "<pod>/<name>" of running pods
  std::vector<std::string> bypassed_;
};

}  // namespace dranet::faults
