// A DaemonSet rollout with surge on one node: the old dranetd runs, the new
// one starts beside it (kubelet sockets per pod UID), takes the status port
// and the kubelet's calls at once and the NRI connection when the old one is
// stopped. The fake runtime must see one unbroken plugin connection, every
// container must get its devices from whichever instance holds the node, and
// a claim prepared by one instance is served and unprepared by the other
// (the shared checkpoint).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "fault_harness.h"
#include "state/checkpoint_store.h"

namespace dranet::faults {
namespace {

namespace fs = std::filesystem;

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class HandoverTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!HasFailure() && !std::getenv("DRANET_TEST_LOGS")) return;
    std::cout << "old dranetd log:\n" << node_.predecessor().Log() << "\nnew dranetd log:\n" << node_.daemon().Log();
  }

  FaultNode node_{{DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false, {}, "v1", {},
                   "0ld00000-0000-4000-8000-000000000001"}};
};

TEST_F(HandoverTest, ARolloutHandsTheNodeOverWithoutAGapOrASecondPlugin) {
  std::string why;
  ASSERT_TRUE(node_.StartDaemon("", &why)) << why;
  const int port = node_.daemon().MetricsPort();
  std::string edits_a;
  for (Step step : {Step::kPrepare, Step::kRunPodA, Step::kCreateA}) {
    auto got = node_.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text;
    if (step == Step::kCreateA) edits_a = got.text;
  }
  ASSERT_NE(edits_a.find("dev "), std::string::npos) << edits_a;
  const fs::path registry = node_.dir() / "kubelet/plugins_registry";
  EXPECT_TRUE(fs::exists(registry / "dra.net-0ld00000-0000-4000-8000-000000000001-reg.sock"));

  ASSERT_TRUE(node_.StartSuccessor("a1ew0000-0000-4000-8000-000000000002", &why)) << why;
  EXPECT_EQ(node_.daemon().MetricsPort(), port) << "the successor serves the status port it was given";
  EXPECT_TRUE(fs::exists(registry / "dra.net-a1ew0000-0000-4000-8000-000000000002-reg.sock"));
  EXPECT_TRUE(fs::exists(registry / "dra.net-0ld00000-0000-4000-8000-000000000001-reg.sock"))
      << "both instances are registered during the rollout";

  // The kubelet calls the newest instance: it unprepares what the old one
  // prepared and prepares again; the old one, still holding the runtime's
  // connection, serves the next container from what the new one wrote.
  auto unprepared = node_.Run(Step::kUnprepare);
  ASSERT_TRUE(unprepared.ok) << unprepared.text;
  auto prepared = node_.Run(Step::kPrepare);
  ASSERT_TRUE(prepared.ok) << prepared.text;
  auto during = node_.CreateContainer("A", "during-rollout");
  ASSERT_TRUE(during.ok) << during.text;
  EXPECT_EQ(during.text, edits_a);
  EXPECT_EQ(Count(node_.predecessor().Log(), "hook=\"CreateContainer\""), 2U) << "served by the old instance";

  // The rollout deletes the old pod: it hands the node over and exits.
  auto status = node_.predecessor().Terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << DescribeWaitStatus(*status);
  EXPECT_NE(node_.predecessor().Log().find("node handed over to the successor"), std::string::npos);
  EXPECT_FALSE(fs::exists(registry / "dra.net-0ld00000-0000-4000-8000-000000000001-reg.sock"));
  EXPECT_TRUE(node_.runtime().plugin_connected()) << "the runtime saw the plugin go";
  ASSERT_TRUE(PollUntil([&] { return node_.daemon().Log().find("NRI connection taken over") != std::string::npos; }));
  EXPECT_EQ(node_.daemon().Log().find("NRI plugin registered"), std::string::npos)
      << "the successor registered a second plugin";

  auto after = node_.CreateContainer("A", "after-rollout");
  ASSERT_TRUE(after.ok) << after.text;
  EXPECT_EQ(after.text, edits_a);
  for (Step step : {Step::kRunPodB, Step::kCreateB, Step::kStopPodA, Step::kRemovePodA, Step::kStopPodB,
                    Step::kRemovePodB, Step::kUnprepare}) {
    auto got = node_.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text;
  }
  EXPECT_TRUE(node_.bypassed().empty());
  EXPECT_EQ(LoopbackGet(port, "/readyz").status, 200);
  auto stopped = node_.daemon().Terminate();
  ASSERT_TRUE(stopped);
  EXPECT_TRUE(node_.ReadCheckpoint().by_claim_name.empty());
}

// The rollout is undone before the old pod goes (the new one deleted first):
// the old instance takes its status port back and serves the node on.
TEST_F(HandoverTest, ASuccessorThatLeavesFirstGivesTheNodeBack) {
  std::string why;
  ASSERT_TRUE(node_.StartDaemon("", &why)) << why;
  const int port = node_.daemon().MetricsPort();
  for (Step step : {Step::kPrepare, Step::kRunPodA, Step::kCreateA}) {
    auto got = node_.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text;
  }
  ASSERT_TRUE(node_.StartSuccessor("a1ew0000-0000-4000-8000-000000000002", &why)) << why;
  auto status = node_.daemon().Terminate();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << DescribeWaitStatus(*status);
  ASSERT_TRUE(PollUntil([&] { return LoopbackGet(port, "/readyz").status == 200; }))
      << "the old instance did not take its status port back";
  EXPECT_NE(node_.predecessor().Log().find("the successor went away before the hand-over"), std::string::npos);
  auto got = node_.CreateContainer("A", "after-undo");
  ASSERT_TRUE(got.ok) << got.text;
  EXPECT_NE(got.text.find("dev "), std::string::npos) << got.text;
  EXPECT_TRUE(node_.runtime().plugin_connected());
  // The kubelet turns to the old instance again once the new one's socket is gone.
  auto unprepared = node_.Run(Step::kUnprepare);
  EXPECT_TRUE(unprepared.ok) << unprepared.text;
}

}  // namespace
}  // namespace dranet::faults
