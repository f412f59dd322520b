// The NRI plugin against the fake runtime over a real unix socket: handshake,
// Synchronize, pod events (dedicated RPCs and StateChange), container
// adjustments, reconnects and the runtime's deadline.
#include "nri/nri_plugin.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include <set>

#include "fake_nri_runtime.h"
#include "inject/netns_mover.h"
#include "memory_prepared_claims.h"
#include "nri_test_env.h"

namespace dranet::testing {
namespace {

using namespace std::chrono_literals;

class NriPluginTest : public ::testing::Test {
 protected:
  void StartRuntime(FakeNriRuntime::Options opts = {}) {
    opts.socket_path = dir_.path() + "/nri.sock";
    runtime_ = std::make_unique<FakeNriRuntime>(opts);
    runtime_->Listen();
  }
  // `netns_check_period`: the plugin's default when zero.
  void StartPlugin(inject::PodNetnsApplier* applier = nullptr, OperationObserver observer = {},
                   std::chrono::milliseconds netns_check_period = {}) {
    nri::NriPluginOptions opts;
    opts.socket_path = dir_.path() + "/nri.sock";
    opts.observer = std::move(observer);
    opts.on_state_change = [this] { ++state_changes_; };
    opts.on_pods_held = [this] { ++pods_held_; };
    if (netns_check_period.count() > 0) opts.netns_check_period = netns_check_period;
    opts.initial_backoff = 5ms;
    opts.max_backoff = 50ms;
    plugin_ = std::make_unique<nri::NriPlugin>(opts, claims_, applier ? *applier : applier_, log_);
    plugin_->Start();
  }
  void Connect() {
    ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
    ASSERT_TRUE(plugin_->WaitConnected(10s));
  }
  void TearDown() override {
    if (plugin_) plugin_->Stop();
  }

  TempDir dir_;
  std::ostringstream log_out_;
  Logger log_{log_out_};
  MemoryPreparedClaims claims_;
  RecordingApplier applier_;
  std::unique_ptr<FakeNriRuntime> runtime_;
  std::atomic<int> state_changes_{0};  // NriPluginOptions::on_state_change calls
  std::atomic<int> pods_held_{0};      // NriPluginOptions::on_pods_held calls
  std::unique_ptr<nri::NriPlugin> plugin_;
};

TEST_F(NriPluginTest, RegistersAsDraNetAndSubscribesToPodAndContainerEvents) {
  StartRuntime();
  StartPlugin();
  Connect();
  EXPECT_EQ(runtime_->plugin_name(), "dra.net");
  EXPECT_EQ(runtime_->plugin_index(), "00");
  EXPECT_EQ(runtime_->subscribed_events(), 0xF);
  EXPECT_TRUE(plugin_->connected());
  EXPECT_NE(log_out_.str().find("NRI plugin registered"), std::string::npos);
}

// Synchronize arrives in chunks (more echoed). Netns paths are remembered
// for pods with claims only, and a complete list forgets the pods it does
// not name: the cache cannot grow with pods that come and go.
TEST_F(NriPluginTest, SynchronizeEchoesMoreAndRemembersOnlyPodsWithClaims) {
  FakeNriRuntime::Options opts;
  opts.sync_chunk_pods = 2;
  StartRuntime(opts);
  std::vector<api::PodSandbox> pods;
  for (int i = 0; i < 5; ++i) {
    pods.push_back(FakeNriRuntime::MakePod("uid-" + std::to_string(i), "ns", "p" + std::to_string(i),
                                           "/var/run/netns/cni-" + std::to_string(i)));
  }
  for (int i = 0; i < 3; ++i) {
    auto plan = Gb300Plan("uid-" + std::to_string(i));
    plan.claim_uid += std::to_string(i);
    claims_.Put({plan});
  }
  runtime_->SetExistingPods(pods);
  StartPlugin();
  Connect();
  const auto responses = runtime_->sync_responses();
  ASSERT_EQ(responses.size(), 3u);
  EXPECT_TRUE(responses[0].more());
  EXPECT_TRUE(responses[1].more());
  EXPECT_FALSE(responses[2].more());
  for (const auto& r : responses) EXPECT_EQ(r.update_size(), 0);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(plugin_->service().KnownNetns("uid-" + std::to_string(i)), "/var/run/netns/cni-" + std::to_string(i));
  EXPECT_EQ(plugin_->service().KnownNetns("uid-3"), std::nullopt);
  // Thousands of pods without claims leave nothing behind.
  for (int i = 0; i < 2000; ++i) {
    const auto pod = FakeNriRuntime::MakePod("churn-" + std::to_string(i), "ns", "c", "/var/run/netns/c");
    ASSERT_TRUE(runtime_->RunPodSandbox(pod).ok());
  }
  EXPECT_EQ(plugin_->service().KnownNetns("churn-0"), std::nullopt);
  // The runtime restarts and lists pod 0 only: the others are gone.
  runtime_->SetExistingPods({pods[0]});
  runtime_->Restart();
  ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  EXPECT_EQ(plugin_->service().KnownNetns("uid-0"), "/var/run/netns/cni-0");
  EXPECT_EQ(plugin_->service().KnownNetns("uid-1"), std::nullopt);
}

// Whoever watches the pods' netdevs (device health) is told when pods may
// hold new ones: adopted at Synchronize after a restart, and each attach.
TEST_F(NriPluginTest, AdoptedAndAttachedPodsAreTold) {
  StartRuntime();
  const auto running = FakeNriRuntime::MakePod("uid-running", "ns", "running", "/var/run/netns/cni-running");
  claims_.Put({Gb300Plan(running.uid())});
  runtime_->SetExistingPods({running});
  StartPlugin();
  Connect();
  for (int i = 0; i < 500 && pods_held_ == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(pods_held_, 1) << "told once, at the end of Synchronize";
  const auto started = FakeNriRuntime::MakePod("uid-started", "ns", "started", "/var/run/netns/cni-started");
  claims_.Put({Gb300Plan(started.uid())});
  ASSERT_TRUE(runtime_->RunPodSandbox(started).ok());
  EXPECT_EQ(pods_held_, 2);
  const auto plain = FakeNriRuntime::MakePod("uid-plain", "ns", "plain", "/var/run/netns/cni-plain");
  ASSERT_TRUE(runtime_->RunPodSandbox(plain).ok());
  EXPECT_EQ(pods_held_, 2) << "a pod without claims holds nothing";
}

TEST_F(NriPluginTest, Gb300ContainerGetsExactlyItsThreeCharDevices) {
  StartRuntime();
  const auto pod = FakeNriRuntime::MakePod("pod-gb300", "ml", "train-0", "/var/run/netns/cni-gb300");
  claims_.Put({Gb300Plan(pod.uid())});
  StartPlugin();
  Connect();
  ASSERT_TRUE(runtime_->RunPodSandbox(pod).ok());

  for (const std::string name : {"init-check", "main"}) {
    api::ContainerAdjustment adjust;
    const auto container = FakeNriRuntime::MakeContainer(pod, name, {"NCCL_SOCKET_IFNAME=ib0"});
    ASSERT_TRUE(runtime_->CreateContainer(pod, container, &adjust).ok());
    ASSERT_EQ(adjust.linux().devices_size(), 3);
    std::set<std::tuple<std::string, std::int64_t, std::int64_t>> devices;
    for (const auto& d : adjust.linux().devices()) {
      devices.emplace(d.path(), d.major(), d.minor());
      EXPECT_EQ(d.type(), "c");
      EXPECT_EQ(d.file_mode().value(), 0666u);
      EXPECT_TRUE(d.has_uid());
      EXPECT_EQ(d.uid().value(), 0u);
      EXPECT_EQ(d.gid().value(), 0u);
    }
    EXPECT_EQ(devices, (std::set<std::tuple<std::string, std::int64_t, std::int64_t>>{
                           {"/dev/infiniband/uverbs0", 231, 192},
                           {"/dev/infiniband/umad0", 231, 0},
                           {"/dev/infiniband/rdma_cm", 10, 58}}));
    ASSERT_EQ(adjust.linux().resources().devices_size(), 3);
    std::set<std::pair<std::int64_t, std::int64_t>> rules;
    for (const auto& r : adjust.linux().resources().devices()) {
      EXPECT_TRUE(r.allow());
      EXPECT_EQ(r.type(), "c");
      EXPECT_EQ(r.access(), "rw");
      rules.emplace(r.major().value(), r.minor().value());
    }
    EXPECT_EQ(rules, (std::set<std::pair<std::int64_t, std::int64_t>>{{231, 192}, {231, 0}, {10, 58}}));
    // Env: the claim's, except what the container sets itself.
    ASSERT_EQ(adjust.env_size(), 1);
    EXPECT_EQ(adjust.env(0).key(), "NCCL_IB_HCA");
    EXPECT_EQ(adjust.env(0).value(), "=mlx5_0");
    EXPECT_EQ(adjust.mounts_size(), 0);
  }

  // A pod without claims gets an empty adjustment.
  const auto other = FakeNriRuntime::MakePod("pod-plain", "ml", "web", "/var/run/netns/cni-plain");
  api::ContainerAdjustment adjust;
  ASSERT_TRUE(runtime_->CreateContainer(other, FakeNriRuntime::MakeContainer(other, "c", {}), &adjust).ok());
  EXPECT_EQ(adjust.ByteSizeLong(), 0u);
}

TEST_F(NriPluginTest, ContainerStartedWithoutItsDevicesIsReportedAtSynchronize) {
  StartRuntime();
  const auto pod = FakeNriRuntime::MakePod("pod-gb300", "ml", "train-0", "/var/run/netns/cni-gb300");
  claims_.Put({Gb300Plan(pod.uid())});
  // One container got the devices (created while the plugin was there), one
  // did not (created while it was away: the runtime went ahead without it).
  auto served = FakeNriRuntime::MakeContainer(pod, "served", {});
  for (const char* path : {"/dev/infiniband/uverbs0", "/dev/infiniband/umad0", "/dev/infiniband/rdma_cm"})
    served.mutable_linux()->add_devices()->set_path(path);
  auto bypassed = FakeNriRuntime::MakeContainer(pod, "bypassed", {});
  bypassed.mutable_linux()->add_devices()->set_path("/dev/infiniband/uverbs0");
  runtime_->SetExistingPods({pod});
  runtime_->SetExistingContainers({served, bypassed});
  std::vector<nri::BypassedContainer> reported;
  std::mutex mu;
  nri::NriPluginOptions opts;
  opts.socket_path = dir_.path() + "/nri.sock";
  opts.bypass_reporter = [&](const nri::BypassedContainer& b) {
    std::lock_guard lock(mu);
    reported.push_back(b);
  };
  plugin_ = std::make_unique<nri::NriPlugin>(opts, claims_, applier_, log_);
  plugin_->Start();
  Connect();
  std::lock_guard lock(mu);
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].container, "bypassed");
  EXPECT_EQ(reported[0].pod_uid, "pod-gb300");
  EXPECT_EQ(reported[0].pod_namespace, "ml");
  EXPECT_EQ(reported[0].missing_devices,
            (std::vector<std::string>{"/dev/infiniband/umad0", "/dev/infiniband/rdma_cm"}));
  EXPECT_NE(log_out_.str().find("container runs without its dra.net devices"), std::string::npos);
}

// containerd re-synchronizes at every reconnect: a container that still runs
// without its devices is reported once, and the count follows what the last
// Synchronize found.
TEST_F(NriPluginTest, BypassedContainerIsReportedOnceAcrossSynchronizes) {
  StartRuntime();
  const auto pod = FakeNriRuntime::MakePod("pod-gb300", "ml", "train-0", "/var/run/netns/cni-gb300");
  claims_.Put({Gb300Plan(pod.uid())});
  auto bypassed = FakeNriRuntime::MakeContainer(pod, "bypassed", {});
  runtime_->SetExistingPods({pod});
  runtime_->SetExistingContainers({bypassed});
  std::atomic<int> reports{0};
  nri::NriPluginOptions opts;
  opts.socket_path = dir_.path() + "/nri.sock";
  opts.initial_backoff = 5ms;
  opts.bypass_reporter = [&](const nri::BypassedContainer&) { ++reports; };
  plugin_ = std::make_unique<nri::NriPlugin>(opts, claims_, applier_, log_);
  plugin_->Start();
  Connect();
  for (int resync = 0; resync < 3; ++resync) {
    runtime_->Restart();
    ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  }
  EXPECT_EQ(reports.load(), 1);
  EXPECT_EQ(plugin_->service().bypassed_containers(), 1u);
  // The container was deleted: nothing is bypassed any more.
  runtime_->SetExistingContainers({});
  runtime_->Restart();
  ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  EXPECT_EQ(plugin_->service().bypassed_containers(), 0u);
  EXPECT_EQ(reports.load(), 1);
}

inject::ClaimPlan NetdevPlan(const std::string& claim_uid, const std::string& pod_uid, const std::string& ifname) {
  inject::ClaimPlan plan;
  plan.claim_uid = claim_uid;
  plan.claim_namespace = "ml";
  plan.claim_name = "claim-" + pod_uid;
  plan.pod_uids = {pod_uid};
  inject::NetdevPlan netdev;
  netdev.device_name = "dev-" + ifname;
  netdev.host_if_name = ifname;
  plan.netdevs.push_back(netdev);
  return plan;
}

// After a restart (of containerd or of dranetd) the runtime lists what runs.
// A pod with netdevs that is not listed was removed without this plugin
// hearing of it: its netdevs go home. Listed pods are kept track of.
TEST_F(NriPluginTest, SynchronizeReturnsNetdevsOfPodsTheRuntimeNoLongerRuns) {
  StartRuntime();
  const auto running = FakeNriRuntime::MakePod("pod-running", "ml", "a4-0", "/var/run/netns/cni-0");
  claims_.Put({NetdevPlan("claim-0", "pod-running", "gpu0rdma0"), NetdevPlan("claim-1", "pod-gone", "gpu1rdma0"),
               Gb300Plan("pod-ib-gone")});
  runtime_->SetExistingPods({running});
  StartPlugin();
  Connect();
  EXPECT_EQ(applier_.Ops("adopt"), std::vector<std::string>{"adopt pod-running"});
  // Only pods with netdevs: the IB-only pod has nothing to bring back.
  EXPECT_EQ(applier_.Ops("detach"), std::vector<std::string>{"detach pod-gone"});
  EXPECT_NE(log_out_.str().find("not running at runtime synchronize"), std::string::npos) << log_out_.str();
}

// The runtime deleted a pod's namespace and sent nothing (containerd 1.7,
// for pods created before it restarted): the periodic check returns them.
TEST_F(NriPluginTest, VanishedPodNamespaceGetsItsNetdevsReturned) {
  StartRuntime();
  claims_.Put({NetdevPlan("claim-0", "pod-a4", "gpu0rdma0")});
  StartPlugin(nullptr, {}, 10ms);
  Connect();
  applier_.Vanish({{"pod-a4", "ml", "a4-0", "/var/run/netns/cni-a4"}});
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (applier_.Ops("detach").empty() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(applier_.Ops("detach"), std::vector<std::string>{"detach pod-a4"});
  for (const auto& call : applier_.calls()) {
    if (call.op == "detach") {
      EXPECT_EQ(call.plans, 1u);
    }
  }
}

// With no pod's netdevs kept, the namespace check does not run at all (an
// idle node costs no wake-ups for it); a pod whose netdevs are attached
// starts it again.
TEST_F(NriPluginTest, NamespaceCheckSleepsWhileNoPodIsHeld) {
  StartRuntime();
  applier_.SetHolds(false);
  StartPlugin(nullptr, {}, 10ms);
  Connect();
  std::this_thread::sleep_for(300ms);  // 30 periods: long enough to see it would have run
  const std::size_t idle_checks = applier_.vanished_checks();
  EXPECT_LE(idle_checks, 3u) << "one check per state change (connect, configure, synchronize) at most";

  const auto pod = FakeNriRuntime::MakePod("pod-a4", "ml", "a4-0", "/var/run/netns/cni-a4");
  claims_.Put({NetdevPlan("claim-0", pod.uid(), "gpu0rdma0")});
  const int state_changes = state_changes_.load();
  ASSERT_TRUE(runtime_->RunPodSandbox(pod).ok());
  EXPECT_EQ(state_changes_.load(), state_changes) << "a pod start wakes the namespace check, not readiness";
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (applier_.vanished_checks() < idle_checks + 5 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(5ms);
  EXPECT_GE(applier_.vanished_checks(), idle_checks + 5) << "checks every period while a pod is held";
}

TEST_F(NriPluginTest, PodsWithClaimsAreReportedForClaimStatusAndHooksObserved) {
  StartRuntime();
  const auto pod = FakeNriRuntime::MakePod("pod-a4", "ml", "a4-0", "/var/run/netns/cni-a4");
  auto plan = Gb300Plan(pod.uid());
  inject::NetdevPlan netdev;
  netdev.device_name = "pci-0000-8a-00-0";
  netdev.host_if_name = "gpu0rdma0";
  netdev.addresses = {"192.168.1.2/32"};
  plan.netdevs.push_back(netdev);
  claims_.Put({plan});
  std::vector<nri::PodNetworkOutcome> outcomes;
  std::vector<std::string> observed;
  std::mutex mu;
  nri::NriPluginOptions opts;
  opts.socket_path = dir_.path() + "/nri.sock";
  opts.network_reporter = [&](const nri::PodNetworkOutcome& o) {
    std::lock_guard lock(mu);
    outcomes.push_back(o);
  };
  opts.observer = [&](const std::string& operation, OperationStatus status, double seconds) {
    std::lock_guard lock(mu);
    EXPECT_GE(seconds, 0.0);
    observed.push_back(operation + " " + OperationStatusName(status));
  };
  plugin_ = std::make_unique<nri::NriPlugin>(opts, claims_, applier_, log_);
  plugin_->Start();
  Connect();
  ASSERT_TRUE(runtime_->RunPodSandbox(pod).ok());
  // A pod whose claims have only IB-only devices is reported too: its
  // claims get status.devices (RDMAOnlyDeviceReady).
  const auto ib_only = FakeNriRuntime::MakePod("pod-ib", "ml", "ib-0", "/var/run/netns/cni-ib");
  claims_.Put({Gb300Plan(ib_only.uid())});
  ASSERT_TRUE(runtime_->RunPodSandbox(ib_only).ok());
  // A pod without claims of ours is not (and its hook is a no-op).
  const auto other = FakeNriRuntime::MakePod("pod-other", "ml", "web-0", "/var/run/netns/cni-web");
  ASSERT_TRUE(runtime_->RunPodSandbox(other).ok());
  const auto failing = FakeNriRuntime::MakePod("pod-a4-fail", "ml", "a4-1", "/var/run/netns/cni-a4-1");
  auto failing_plan = plan;
  failing_plan.claim_uid = "claim-a4-fail";
  failing_plan.pod_uids = {failing.uid()};
  claims_.Put({failing_plan});
  applier_.FailWith("netdev gpu0rdma0 is neither on the host nor in the pod");
  EXPECT_FALSE(runtime_->RunPodSandbox(failing).ok());
  const auto rdma_failing = FakeNriRuntime::MakePod("pod-a4-rdma", "ml", "a4-2", "/var/run/netns/cni-a4-2");
  failing_plan.claim_uid = "claim-a4-rdma";
  failing_plan.pod_uids = {rdma_failing.uid()};
  claims_.Put({failing_plan});
  applier_.FailWith("RDMA device mlx5_0 is neither on the host nor in the pod", /*rdma=*/true);
  EXPECT_FALSE(runtime_->RunPodSandbox(rdma_failing).ok());
  ASSERT_TRUE(runtime_->StopPodSandbox(other).ok());
  std::lock_guard lock(mu);
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes[0].pod_uid, "pod-a4");
  EXPECT_EQ(outcomes[0].error, "");
  ASSERT_EQ(outcomes[0].plans.size(), 1u);
  EXPECT_EQ(outcomes[0].plans[0].netdevs[0].device_name, "pci-0000-8a-00-0");
  EXPECT_EQ(outcomes[1].pod_uid, "pod-ib");
  EXPECT_EQ(outcomes[1].error, "");
  EXPECT_TRUE(outcomes[1].plans.at(0).netdevs.empty());
  EXPECT_EQ(outcomes[2].pod_uid, "pod-a4-fail");
  EXPECT_NE(outcomes[2].error.find("gpu0rdma0"), std::string::npos);
  EXPECT_FALSE(outcomes[2].rdma_failed);
  EXPECT_EQ(outcomes[3].pod_uid, "pod-a4-rdma");
  EXPECT_TRUE(outcomes[3].rdma_failed);
  // Every request is observed under its hook's name, with DRANET's statuses.
  std::vector<std::string> hooks;
  for (const auto& o : observed)
    if (o.rfind("Configure", 0) != 0 && o.rfind("Synchronize", 0) != 0) hooks.push_back(o);
  EXPECT_EQ(hooks, (std::vector<std::string>{"RunPodSandbox success", "RunPodSandbox success", "RunPodSandbox noop",
                                             "RunPodSandbox failed", "RunPodSandbox failed", "StopPodSandbox noop"}));
  EXPECT_NE(std::find(observed.begin(), observed.end(), "Configure success"), observed.end());
}

// A teardown that cannot bring a netdev home never fails the runtime, and
// is reported (the daemon makes it a NetworkRestoreFailed Event), at
// StopPodSandbox and for a pod whose namespace vanished.
TEST_F(NriPluginTest, FailedTeardownIsReportedWithTheReason) {
  StartRuntime();
  const auto pod = FakeNriRuntime::MakePod("pod-r", "ml", "r-0", "/var/run/netns/cni-r");
  auto plan = Gb300Plan(pod.uid());
  inject::NetdevPlan netdev;
  netdev.device_name = "pci-0000-8a-00-0";
  netdev.host_if_name = "gpu0rdma0";
  plan.netdevs.push_back(netdev);
  claims_.Put({plan});
  std::vector<nri::PodNetworkOutcome> reported;
  std::mutex mu;
  nri::NriPluginOptions opts;
  opts.socket_path = dir_.path() + "/nri.sock";
  opts.restore_failure_reporter = [&](const nri::PodNetworkOutcome& o) {
    std::lock_guard lock(mu);
    reported.push_back(o);
  };
  opts.netns_check_period = 10ms;
  plugin_ = std::make_unique<nri::NriPlugin>(opts, claims_, applier_, log_);
  plugin_->Start();
  Connect();
  ASSERT_TRUE(runtime_->RunPodSandbox(pod).ok());
  applier_.FailDetachWith("netdev gpu0rdma0 cannot be found: nothing on the host was changed");
  EXPECT_TRUE(runtime_->StopPodSandbox(pod).ok());
  applier_.Vanish({{pod.uid(), "ml", "r-0", "/var/run/netns/cni-r"}});
  auto count = [&] {
    std::lock_guard lock(mu);
    return reported.size();
  };
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (count() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  std::lock_guard lock(mu);
  ASSERT_EQ(reported.size(), 2u);
  for (const auto& r : reported) {
    EXPECT_EQ(r.pod_uid, pod.uid());
    EXPECT_EQ(r.pod_name, "r-0");
    EXPECT_NE(r.error.find("gpu0rdma0 cannot be found"), std::string::npos) << r.error;
  }
}

TEST_F(NriPluginTest, PodEventsArriveAsDedicatedRpcs) {
  StartRuntime();
  const auto pod = FakeNriRuntime::MakePod("pod-a4", "ml", "a4-0", "/var/run/netns/cni-a4");
  claims_.Put({Gb300Plan(pod.uid())});
  StartPlugin();
  Connect();
  ASSERT_TRUE(runtime_->RunPodSandbox(pod).ok());
  EXPECT_EQ(runtime_->last_pod_event_method(), "RunPodSandbox");
  // containerd may omit the netns path at stop: the plugin remembers it.
  auto stopped = pod;
  stopped.mutable_linux()->clear_namespaces();
  ASSERT_TRUE(runtime_->StopPodSandbox(stopped).ok());
  ASSERT_TRUE(runtime_->RemovePodSandbox(stopped).ok());
  const auto calls = applier_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].op, "attach");
  EXPECT_EQ(calls[0].pod.netns_path, "/var/run/netns/cni-a4");
  EXPECT_EQ(calls[0].pod.uid, "pod-a4");
  EXPECT_EQ(calls[1].op, "detach");
  EXPECT_EQ(calls[1].pod.netns_path, "/var/run/netns/cni-a4");
  EXPECT_EQ(calls[2].op, "detach");
  EXPECT_FALSE(plugin_->service().KnownNetns("pod-a4").has_value());
}

TEST_F(NriPluginTest, StateChangeOnlyRuntimeDeliversPodEvents) {
  FakeNriRuntime::Options opts;
  opts.state_change_only = true;
  opts.runtime_version = "1.7.27";
  StartRuntime(opts);
  const auto pod = FakeNriRuntime::MakePod("pod-sc", "ml", "sc-0", "/var/run/netns/cni-sc");
  claims_.Put({Gb300Plan(pod.uid())});
  std::mutex mu;
  std::vector<std::string> observed;
  StartPlugin(nullptr, [&](const std::string& operation, OperationStatus status, double) {
    std::lock_guard lock(mu);
    observed.push_back(operation + " " + OperationStatusName(status));
  });
  Connect();
  EXPECT_LE(runtime_->subscribed_events(), 0x7FF);
  ASSERT_TRUE(runtime_->RunPodSandbox(pod).ok());
  EXPECT_EQ(runtime_->last_pod_event_method(), "StateChange");
  api::ContainerAdjustment adjust;
  ASSERT_TRUE(runtime_->CreateContainer(pod, FakeNriRuntime::MakeContainer(pod, "main", {}), &adjust).ok());
  EXPECT_EQ(adjust.linux().devices_size(), 3);
  ASSERT_TRUE(runtime_->StopPodSandbox(pod).ok());
  ASSERT_TRUE(runtime_->RemovePodSandbox(pod).ok());
  const auto calls = applier_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].op, "attach");
  EXPECT_EQ(calls[1].op, "detach");
  EXPECT_EQ(calls[2].op, "detach");
  // A StateChange is observed under the hook it carries, as DRANET counts it.
  std::lock_guard lock(mu);
  std::vector<std::string> hooks;
  for (const auto& o : observed)
    if (o.rfind("Configure", 0) != 0 && o.rfind("Synchronize", 0) != 0) hooks.push_back(o);
  EXPECT_EQ(hooks, (std::vector<std::string>{"RunPodSandbox success", "CreateContainer success",
                                             "StopPodSandbox success", "RemovePodSandbox success"}));
}

TEST_F(NriPluginTest, FailedAttachFailsTheSandboxWithTheReason) {
  StartRuntime();
  const auto pod = FakeNriRuntime::MakePod("pod-fail", "ml", "f-0", "/var/run/netns/cni-f");
  claims_.Put({Gb300Plan(pod.uid())});
  applier_.FailWith("netdev gpu0rdma0 is neither on the host nor in the pod");
  StartPlugin();
  Connect();
  const auto status = runtime_->RunPodSandbox(pod);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message.find("gpu0rdma0"), std::string::npos);
  EXPECT_TRUE(runtime_->plugin_connected());  // an error is not a protocol failure
}

TEST_F(NriPluginTest, HostNetworkPodAskingForANetdevGetsAClearError) {
  StartRuntime();
  inject::NetnsMover mover({}, log_);
  auto plan = Gb300Plan("pod-hostnet");
  plan.netdevs.push_back(inject::NetdevPlan{});
  plan.netdevs.back().host_if_name = "gpu0rdma0";
  claims_.Put({plan});
  StartPlugin(&mover);
  Connect();
  const auto pod = FakeNriRuntime::MakePod("pod-hostnet", "ml", "hostnet", "");
  const auto status = runtime_->RunPodSandbox(pod);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message.find("host network"), std::string::npos) << status.message;
  EXPECT_NE(status.message.find("gpu0rdma0"), std::string::npos);
  EXPECT_NE(status.message.find("ml/train-0-1nic-aligned"), std::string::npos);
  EXPECT_NE(log_out_.str().find("RunPodSandbox failed"), std::string::npos);
}

// A rollout's hand-over: the old instance gives its live connection to the
// new one, which answers the runtime's next events without registering again
// (the runtime sees no disconnect, so no pod starts without its devices), and
// adopts the pods the old one knew.
TEST_F(NriPluginTest, AHandedOverConnectionIsServedByTheSuccessorWithoutAGap) {
  StartRuntime();
  const auto running = FakeNriRuntime::MakePod("uid-running", "ns", "running", "/var/run/netns/cni-running");
  claims_.Put({NetdevPlan("claim-running", running.uid(), "gpu0rdma0")});
  runtime_->SetExistingPods({running});
  StartPlugin();
  Connect();
  EXPECT_EQ(applier_.Ops("adopt"), (std::vector<std::string>{"adopt uid-running"}));

  auto handed = plugin_->HandOver();
  ASSERT_TRUE(handed);
  EXPECT_FALSE(plugin_->connected());
  EXPECT_EQ(handed->pods, (std::map<std::string, std::string>{{"uid-running", "/var/run/netns/cni-running"}}));
  EXPECT_TRUE(runtime_->plugin_connected()) << "the runtime saw the connection close";

  RecordingApplier next_applier;
  nri::NriPluginOptions opts;
  opts.socket_path = dir_.path() + "/nri.sock";
  opts.initial_backoff = 5ms;
  nri::NriPlugin successor(opts, claims_, next_applier, log_);
  successor.Start(std::move(*handed));
  ASSERT_TRUE(successor.WaitConnected(10s));
  EXPECT_EQ(next_applier.Ops("adopt"), (std::vector<std::string>{"adopt uid-running"}));

  const auto started = FakeNriRuntime::MakePod("pod-gb300", "ml", "train-0", "/var/run/netns/cni-gb300");
  claims_.Put({Gb300Plan(started.uid())});
  ASSERT_TRUE(runtime_->RunPodSandbox(started).ok());
  api::ContainerAdjustment adjust;
  ASSERT_TRUE(runtime_->CreateContainer(started, FakeNriRuntime::MakeContainer(started, "main", {}), &adjust).ok());
  EXPECT_EQ(adjust.linux().devices_size(), 3) << "answered by the successor";
  ASSERT_TRUE(runtime_->StopPodSandbox(running).ok());
  EXPECT_EQ(next_applier.Ops("detach"), (std::vector<std::string>{"detach uid-running"}));
  EXPECT_TRUE(applier_.Ops("detach").empty()) << "the old instance acts no more";
  EXPECT_TRUE(runtime_->plugin_connected());
  EXPECT_EQ(successor.connections(), 1U) << "nobody registered again";
  EXPECT_NE(log_out_.str().find("NRI connection handed over to the next instance"), std::string::npos);

  // The connection is the successor's own now: after a runtime restart it
  // reconnects as any plugin does.
  runtime_->Restart();
  ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  ASSERT_TRUE(successor.WaitConnected(10s));
  successor.Stop();
}

TEST_F(NriPluginTest, NothingIsHandedOverWithoutALiveConnection) {
  StartRuntime();
  StartPlugin();
  Connect();
  runtime_->Disconnect("gone");
  ASSERT_TRUE(runtime_->WaitDisconnected(10s));
  for (int i = 0; i < 500 && plugin_->connected(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(plugin_->HandOver());
  EXPECT_FALSE(runtime_->AcceptPlugin(300ms)) << "a plugin asked to hand over does not reconnect";
}

TEST_F(NriPluginTest, ReconnectsAfterRuntimeRestartAndShutdown) {
  // The plugin counts a connection once its session is set up, which can be
  // a moment after the runtime's side of the handshake returns.
  auto connections_reach = [&](std::size_t n) {
    for (int i = 0; i < 1000 && plugin_->connections() < n; ++i) std::this_thread::sleep_for(10ms);
    return plugin_->connections();
  };
  StartRuntime();
  StartPlugin();
  Connect();
  runtime_->Restart();
  ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  ASSERT_TRUE(plugin_->WaitConnected(10s));
  EXPECT_EQ(connections_reach(2), 2u);
  EXPECT_TRUE(runtime_->Shutdown().ok());
  ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  ASSERT_TRUE(plugin_->WaitConnected(10s));
  EXPECT_EQ(connections_reach(3), 3u);
}

TEST_F(NriPluginTest, SlowHookIsDisconnectedByTheRuntimeAndThePluginReconnects) {
  FakeNriRuntime::Options opts;
  opts.request_timeout = 200ms;  // containerd's is 2 s; the mechanism is the same
  StartRuntime(opts);
  const auto pod = FakeNriRuntime::MakePod("pod-slow", "ml", "slow", "/var/run/netns/cni-slow");
  claims_.Put({Gb300Plan(pod.uid())});
  StartPlugin();
  Connect();
  applier_.Hold();
  const auto status = runtime_->RunPodSandbox(pod);
  EXPECT_EQ(status.code, nri::RpcCode::kDeadlineExceeded);
  EXPECT_EQ(runtime_->deadline_disconnects(), 1);
  EXPECT_FALSE(runtime_->plugin_connected());
  applier_.Release();
  ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  api::ContainerAdjustment adjust;
  ASSERT_TRUE(runtime_->CreateContainer(pod, FakeNriRuntime::MakeContainer(pod, "main", {}), &adjust).ok());
  EXPECT_EQ(adjust.linux().devices_size(), 3);
  // The plugin counts a connection when RegisterPlugin's answer reaches it,
  // which may be after the runtime went on to Configure and Synchronize.
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (plugin_->connections() < 2u && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(5ms);
  EXPECT_GE(plugin_->connections(), 2u);
}

TEST_F(NriPluginTest, StopsPromptlyWhileTheRuntimeIsAbsent) {
  StartPlugin();
  EXPECT_FALSE(plugin_->WaitConnected(20ms));
  plugin_->Stop();
  EXPECT_FALSE(plugin_->connected());
  EXPECT_NE(log_out_.str().find("NRI runtime not reachable"), std::string::npos);
}

}  // namespace
}  // namespace dranet::testing
