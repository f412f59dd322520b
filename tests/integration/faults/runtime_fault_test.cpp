// Runtime and control-plane faults around a running dranetd (no kill of the
// daemon itself): the NRI runtime restarting, the API server answering 503
// for a while, the kubelet restarting. Each test checks the pods that were
// prepared keep getting their devices, and that the daemon comes back to
// ready on its own.
#include <gtest/gtest.h>

#include <iostream>

#include "fault_harness.h"

namespace dranet::faults {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
const char* const kSlices = "/apis/resource.k8s.io/v1/resourceslices";

class RuntimeFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(node_.StartDaemon("", &why)) << why;
    port_ = node_.daemon().MetricsPort();
    ASSERT_NE(port_, 0) << node_.daemon().Log();
    ASSERT_TRUE(WaitReady(true)) << LoopbackGet(port_, "/readyz").body;
    for (Step step : {Step::kPrepare, Step::kRunPodA, Step::kCreateA}) {
      auto got = node_.Run(step);
      ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text;
      if (step == Step::kPrepare) prepared_ = got.text;
      if (step == Step::kCreateA) edits_a_ = got.text;
    }
    ASSERT_NE(edits_a_.find("dev "), std::string::npos) << edits_a_;
  }
  void TearDown() override {
    if (HasFailure()) std::cout << "dranetd log:\n" << node_.daemon().Log();
  }

  bool WaitReady(bool ready, std::chrono::milliseconds deadline = kDeadline) {
    return PollUntil([&] { return (LoopbackGet(port_, "/readyz").status == 200) == ready; }, deadline);
  }

  FaultNode node_{{DRANETD_FAULTPOINTS_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6"}};
  int port_ = 0;
  std::string prepared_, edits_a_;
};

// containerd restarts: the plugin's connection drops, readiness says so
// (nri-connected), the plugin reconnects by itself and the next container of
// the running pod gets the same edits as before.
TEST_F(RuntimeFaultTest, NriRuntimeRestartReconnectsAndReadinessFollows) {
  for (int restart = 1; restart <= 2; ++restart) {
    SCOPED_TRACE("runtime restart " + std::to_string(restart));
    node_.RestartRuntime();
    // The runtime does not accept the plugin yet: not ready, because of NRI.
    // Readiness is woken by the connection's change, well within the period
    // it otherwise sleeps for (30 s).
    constexpr auto kFollows = std::chrono::seconds(10);
    ASSERT_TRUE(WaitReady(false, kFollows)) << "/readyz stayed 200 with the runtime gone";
    EXPECT_NE(LoopbackGet(port_, "/readyz").body.find("[-]nri-connected"), std::string::npos)
        << LoopbackGet(port_, "/readyz").body;
    EXPECT_TRUE(node_.daemon_running());
    ASSERT_TRUE(node_.AcceptPlugin()) << node_.runtime().last_error();
    ASSERT_TRUE(WaitReady(true, kFollows)) << LoopbackGet(port_, "/readyz").body;
    auto got = node_.CreateContainer("A", "after-restart-" + std::to_string(restart));
    ASSERT_TRUE(got.ok) << got.text;
    EXPECT_EQ(got.text, edits_a_);
  }
  EXPECT_TRUE(node_.bypassed().empty());
}

// The API server answers 503 to everything for a while: prepared pods keep
// working, the daemon's retries stay bounded, and publishing resumes.
TEST_F(RuntimeFaultTest, ApiServerDownPreparedPodsKeepWorkingAndPublishingResumes) {
  auto slices = node_.api().ListObjects(kSlices);
  ASSERT_FALSE(slices.empty());
  constexpr auto kOutage = std::chrono::seconds(8);
  node_.api().ClearRequests();
  fakes::FakeFault outage;
  outage.status = 503;
  outage.times = -1;
  node_.api().InjectFault(outage);
  const auto started = std::chrono::steady_clock::now();
  // The node's slices vanish (as after a long driver absence): the daemon
  // must recreate them, which it can only do once the API server is back.
  for (const auto& name : [&] {
         std::vector<std::string> names;
         for (const auto& s : slices) {
           auto at = s.find("\"name\":\"");
           if (at != std::string::npos) names.push_back(s.substr(at + 8, s.find('"', at + 8) - at - 8));
         }
         return names;
       }())
    node_.api().DeleteObject(kSlices, name);

  // Prepared pods: a new container of the running pod, and the second pod
  // starting from scratch, both get their devices without the API server.
  auto during = node_.CreateContainer("A", "during-outage");
  ASSERT_TRUE(during.ok) << during.text;
  EXPECT_EQ(during.text, edits_a_);
  for (Step step : {Step::kRunPodB, Step::kCreateB}) {
    auto got = node_.Run(step);
    EXPECT_TRUE(got.ok) << StepName(step) << ": " << got.text;
  }
  EXPECT_TRUE(node_.api().ListObjects(kSlices).empty());
  // Wait out the outage (the scenario, not a settling delay), watching that
  // the daemon stays up.
  PollUntil([&] { return !node_.daemon_running() || std::chrono::steady_clock::now() - started >= kOutage; },
            kOutage + 5s);
  ASSERT_TRUE(node_.daemon_running()) << node_.daemon().Log();
  const auto requests = node_.api().Requests();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double per_second = static_cast<double>(requests.size()) / seconds;
  std::size_t failed = 0;
  for (const auto& r : requests) failed += r.status == 503 ? 1 : 0;
  std::cout << "API outage: " << requests.size() << " requests (" << failed << " answered 503) in " << seconds
            << " s = " << per_second << " requests/s\n";
  EXPECT_GT(failed, 0U) << "the daemon never tried to reach the API server during the outage";
  // Backoff, not a tight loop: a handful of requests a second at most.
  EXPECT_LE(per_second, 10.0);

  node_.api().ClearFaults();
  EXPECT_TRUE(PollUntil([&] { return !node_.api().ListObjects(kSlices).empty(); }, 120s))
      << "publishing did not resume after the API server came back";
  EXPECT_EQ(node_.api().ListObjects(kSlices).size(), slices.size());
  EXPECT_TRUE(WaitReady(true)) << LoopbackGet(port_, "/readyz").body;
  auto again = node_.Run(Step::kPrepare);
  EXPECT_TRUE(again.ok) << again.text;
  EXPECT_EQ(again.text, prepared_);
}

// The kubelet restarts: it finds the plugin's registration socket again,
// re-registers it, and prepares (the kubelet repeats them after a restart)
// answer as before; unprepare still works.
TEST_F(RuntimeFaultTest, KubeletRestartReRegistersAndRepeatedPrepareAnswersTheSame) {
  for (int restart = 1; restart <= 2; ++restart) {
    SCOPED_TRACE("kubelet restart " + std::to_string(restart));
    node_.RestartKubelet();
    ASSERT_TRUE(node_.kubelet().WaitForPlugin(kDriver, std::chrono::duration_cast<std::chrono::milliseconds>(kDeadline)))
        << ::testing::PrintToString(node_.kubelet().failures());
    auto again = node_.Run(Step::kPrepare);
    EXPECT_TRUE(again.ok) << again.text;
    EXPECT_EQ(again.text, prepared_);
    auto edits = node_.CreateContainer("A", "after-kubelet-restart-" + std::to_string(restart));
    EXPECT_EQ(edits.text, edits_a_);
  }
  EXPECT_TRUE(WaitReady(true)) << LoopbackGet(port_, "/readyz").body;
  for (Step step : {Step::kStopPodA, Step::kRemovePodA, Step::kUnprepare}) {
    auto got = node_.Run(step);
    EXPECT_TRUE(got.ok) << StepName(step) << ": " << got.text;
  }
}

// Readiness follows kubelet's registration, woken by its change: with the
// registration socket gone and no kubelet to register the new one, /readyz
// says so; once a kubelet registers it, ready again. Each within 10 s, well
// inside the period readiness otherwise sleeps for (30 s).
TEST_F(RuntimeFaultTest, ReadinessFollowsKubeletRegistration) {
  constexpr auto kFollows = std::chrono::seconds(10);
  node_.StopKubelet();
  fs::remove(node_.dir() / "kubelet/plugins_registry" / (std::string(kDriver) + "-reg.sock"));
  ASSERT_TRUE(WaitReady(false, kFollows)) << "/readyz stayed 200 with the registration socket gone";
  EXPECT_NE(LoopbackGet(port_, "/readyz").body.find("[-]kubelet-registered"), std::string::npos)
      << LoopbackGet(port_, "/readyz").body;
  EXPECT_TRUE(node_.daemon_running());
  node_.RestartKubelet();
  ASSERT_TRUE(WaitReady(true, kFollows)) << LoopbackGet(port_, "/readyz").body;
  auto again = node_.Run(Step::kPrepare);
  EXPECT_TRUE(again.ok) << again.text;
  EXPECT_EQ(again.text, prepared_);
}

}  // namespace
}  // namespace dranet::faults
