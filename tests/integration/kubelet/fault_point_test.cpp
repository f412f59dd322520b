// kill -9 at every fault point of prepare and unprepare: after a restart each
// claim is fully prepared or absent, the checkpoint is never corrupt, and a
// second prepare answers as an uninterrupted one does.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "integration_support.h"
#include "inventory/inventory.h"
#include "state/checkpoint_store.h"
#include "base/fault_points.h"

namespace dranet::kubelet {
namespace {

using namespace testing;
using fakes::DraApi;

class FaultPointTest : public ::testing::TestWithParam<std::string_view> {
 protected:
  FaultPointTest() : log_(log_text_) {
    inventory::DiscoveryOptions discovery;
    discovery.host_root = Gb300Root();
    for (const auto& d : inventory::Discover(discovery, log_)) by_rdma_[d.rdma_device] = d.name;
    claims_ = {PutClaim(api_, ClaimJson("one", kGb300Node, {by_rdma_["mlx5_0"]})),
               PutClaim(api_, ClaimJson("two", kGb300Node, {by_rdma_["mlx5_0"], by_rdma_["mlx5_1"]})),
               PutClaim(api_, ClaimJson("three", kGb300Node, {by_rdma_["mlx5_2"]}))};
    expected_nodes_ = {{claims_[0].uid, {"rdma_cm", "umad0", "uverbs0"}},
                       {claims_[1].uid, {"rdma_cm", "umad0", "umad1", "uverbs0", "uverbs1"}},
                       {claims_[2].uid, {"rdma_cm", "umad2", "uverbs2"}}};
  }

  Harness::Options HarnessOptions(std::string fault = "", std::filesystem::path log_file = {}) {
    return {dir_.path() / "kubelet", dir_.path() / "state", Gb300Root(), api_.url(), kGb300Node, std::move(fault),
            std::move(log_file)};
  }

  // Lines of `log` matching `pattern`.
  static int Matches(const std::string& log, const std::string& pattern) {
    const std::regex regex(pattern);
    return static_cast<int>(std::distance(std::sregex_iterator(log.begin(), log.end(), regex), std::sregex_iterator()));
  }

  // The checkpoint as a restarted daemon would load it (the harness is dead).
  std::vector<inject::ClaimPlan> LoadState(state::LoadOutcome* outcome) {
    state::CheckpointOptions options;
    options.state_dir = dir_.path() / "state";
    state::CheckpointStore store(options, log_);
    *outcome = store.load_outcome();
    return store.All();
  }

  TempDir dir_;
  std::ostringstream log_text_;
  Logger log_;
  fakes::FakeApiServer api_;
  std::map<std::string, std::string> by_rdma_;
  std::vector<fakes::KubeletClaim> claims_;
  std::map<std::string, std::set<std::string>> expected_nodes_;
};

TEST_P(FaultPointTest, KillAtThePointThenRestartConverges) {
  const std::string fault(GetParam());
  const bool in_unprepare = fault.rfind("unprepare", 0) == 0;
  fakes::FakeKubelet kubelet(KubeletOptions(dir_.path() / "kubelet/plugins_registry"));
  kubelet.Start();

  // 1. A run that is killed at the fault point.
  std::map<std::string, fakes::KubeletPrepareResult> reference;
  {
    Harness harness(HarnessOptions(fault));
    auto plugin = kubelet.WaitForPlugin("dra.net", std::chrono::seconds(30));
    ASSERT_TRUE(plugin) << ::testing::PrintToString(kubelet.failures());
    if (in_unprepare) {
      reference = kubelet.Prepare("dra.net", DraApi::kV1, claims_);
      EXPECT_THROW(kubelet.Unprepare("dra.net", DraApi::kV1, claims_), std::runtime_error);
    } else {
      EXPECT_THROW(kubelet.Prepare("dra.net", DraApi::kV1, claims_), std::runtime_error);
    }
    int status = harness.Wait();
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the harness did not die at fault point " << fault << " (status " << status << ")";
  }

  // 2. What a restart finds: never a corrupt file, each claim whole or absent.
  state::LoadOutcome outcome{};
  auto plans = LoadState(&outcome);
  EXPECT_NE(outcome, state::LoadOutcome::kCorrupt) << fault;
  for (const auto& plan : plans) {
    std::set<std::string> nodes;
    for (const auto& n : plan.device_nodes) nodes.insert(std::filesystem::path(n.container_path).filename().string());
    ASSERT_TRUE(expected_nodes_.count(plan.claim_uid)) << plan.claim_uid;
    EXPECT_EQ(nodes, expected_nodes_[plan.claim_uid]) << "claim half-prepared after kill at " << fault;
    EXPECT_EQ(plan.devices.size(), plan.claim_name == "two" ? 2U : 1U);
  }
  if (in_unprepare) {
    EXPECT_TRUE(plans.empty() || plans.size() == claims_.size()) << fault;
  }

  // 3. Restarted: prepare answers as an uninterrupted prepare does; unprepare converges.
  const uint64_t generation = kubelet.Plugin("dra.net")->generation;
  Harness restarted(HarnessOptions("", dir_.path() / "restarted.log"));
  ASSERT_TRUE(kubelet.WaitForPlugin("dra.net", std::chrono::seconds(30), generation));
  // Claims the checkpoint holds are restored from it, not prepared again.
  if (!plans.empty()) {
    EXPECT_EQ(Matches(restarted.Log(), "\"state checkpoint loaded\".*claims=\"?" + std::to_string(plans.size()) +
                                           "\"?(\\s|$)"),
              1)
        << restarted.Log();
  }
  if (in_unprepare) {
    EXPECT_EQ(kubelet.Unprepare("dra.net", DraApi::kV1, claims_).size(), claims_.size());
    EXPECT_EQ(kubelet.Prepare("dra.net", DraApi::kV1, claims_), reference);
  }
  auto first = kubelet.Prepare("dra.net", DraApi::kV1, claims_);
  if (!in_unprepare) {
    EXPECT_EQ(Matches(restarted.Log(), "\"claim prepared\".*result=\"?already-prepared"),
              static_cast<int>(plans.size()))
        << "claims in the checkpoint were prepared again\n" << restarted.Log();
  }
  auto second = kubelet.Prepare("dra.net", DraApi::kV1beta1, claims_);
  EXPECT_EQ(first, second);
  for (const auto& c : claims_) {
    EXPECT_EQ(first.at(c.uid).error, "") << c.name;
    EXPECT_EQ(first.at(c.uid).devices.size(), c.name == "two" ? 2U : 1U);
  }
  if (in_unprepare) {
    EXPECT_EQ(first, reference);
  }
  for (const auto& [uid, error] : kubelet.Unprepare("dra.net", DraApi::kV1, claims_)) EXPECT_EQ(error, "") << uid;
  int status = restarted.Terminate();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto left = LoadState(&outcome);
  EXPECT_TRUE(left.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryFaultPoint, FaultPointTest, ::testing::ValuesIn(dranet::kFaultPoints),
                         [](const auto& param_info) {
                           std::string name(param_info.param);
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace dranet::kubelet
