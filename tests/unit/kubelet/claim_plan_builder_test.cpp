#include "kubelet/claim_plan_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "kubelet_test_support.h"

namespace dranet::kubelet {
namespace {

using ::testing::HasSubstr;
using namespace testing;

std::set<std::string> NodePaths(const inject::ClaimPlan& plan) {
  std::set<std::string> out;
  for (const auto& n : plan.device_nodes) out.insert(n.container_path);
  return out;
}

class PlanBuilderTest : public ::testing::Test {
 protected:
  PlanBuilderTest() {
    options_.pool_name = kNode;
    options_.dev_root = "/snap/dev";
    inventory_ = {IbDevice(0), IbDevice(1), IbDevice(2), NetDevice("gpu0rdma0", 4)};
  }
  std::string ErrorOf(const kube::ResourceClaim& claim) {
    try {
      BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
    } catch (const PrepareError& e) {
      return e.what();
    }
    return "";
  }
  PlanBuilderOptions options_;
  std::vector<inventory::Device> inventory_;
  HostNetdevStateReader host_state_ = [](const std::string& if_name) {
    return inject::NetdevHostState{if_name, 8896, {"192.168.1.2/32", "fe80::1/64"}, {}};
  };
};

TEST_F(PlanBuilderTest, IbOnlyDevicesGetUverbsUmadAndRdmaCm) {
  auto plan = BuildClaimPlan(Claim("two", {"pci-0101-00-00-0", "pci-0102-00-00-0"}), inventory_, options_, {}, {});
  EXPECT_EQ(NodePaths(plan), (std::set<std::string>{"/dev/infiniband/rdma_cm", "/dev/infiniband/umad0",
                                                    "/dev/infiniband/umad1", "/dev/infiniband/uverbs0",
                                                    "/dev/infiniband/uverbs1"}));
  EXPECT_EQ(plan.device_nodes.front().host_path, "/snap/dev/infiniband/rdma_cm");
  EXPECT_EQ(plan.claim_uid, "uid-two");
  EXPECT_EQ(plan.pod_uids, std::vector<std::string>{"pod-1"});
  ASSERT_EQ(plan.devices.size(), 2U);
  EXPECT_EQ(plan.devices[1].device, "pci-0102-00-00-0");
  EXPECT_TRUE(plan.netdevs.empty());
}

TEST_F(PlanBuilderTest, TakesOnlyOurDriverAndPool) {
  auto claim = Claim("mixed", {"pci-0101-00-00-0"});
  claim.results.push_back({"gpu", "gpu.nvidia.com", kNode, "gpu-0", "", false});
  claim.results.push_back({"nic", "dra.net", "other-node", "pci-0103-00-00-0", "", false});
  auto plan = BuildClaimPlan(claim, inventory_, options_, {}, {});
  ASSERT_EQ(plan.devices.size(), 1U);
  EXPECT_EQ(NodePaths(plan).count("/dev/infiniband/uverbs2"), 0U);
}

TEST_F(PlanBuilderTest, SharedClaimKeepsEveryPod) {
  auto claim = Claim("shared", {"pci-0101-00-00-0"}, {"pod-b", "pod-a", "pod-a"});
  claim.reserved_for.push_back({"batch", "jobs", "j", "job-uid"});  // not a pod
  auto plan = BuildClaimPlan(claim, inventory_, options_, {}, {});
  EXPECT_EQ(plan.pod_uids, (std::vector<std::string>{"pod-a", "pod-b"}));
}

TEST_F(PlanBuilderTest, ErrorsNameTheClaimAndTheProblem) {
  auto unallocated = Claim("u", {});
  unallocated.allocated = false;
  EXPECT_THAT(ErrorOf(unallocated), HasSubstr("claim ml/u is not allocated"));
  EXPECT_THAT(ErrorOf(Claim("gone", {"pci-0999-00-00-0"})),
              HasSubstr("claim ml/gone: device pci-0999-00-00-0 (request \"nic\") is not in the inventory"));
  auto rdma_cfg = Claim("cfg", {"pci-0101-00-00-0"});
  rdma_cfg.configs.push_back(Opaque(R"({"interface":{"mtu":9000}})"));
  EXPECT_THAT(ErrorOf(rdma_cfg), HasSubstr("is RDMA-only (no netdev); its config may not set interface.mtu"));
  auto bad_cfg = Claim("bad", {"pci-0101-00-00-0"});
  bad_cfg.configs.push_back(Opaque(R"({"interface":{"bogus":1}})"));
  EXPECT_THAT(ErrorOf(bad_cfg), HasSubstr("claim ml/bad: invalid dra.net config for request \"nic\""));
  EXPECT_THAT(ErrorOf(bad_cfg), HasSubstr("interface.bogus: unknown field"));
  auto profile = Claim("profile", {"pci-0101-00-00-0"});
  profile.configs.push_back(Opaque(R"({"profile":"gold"})"));
  EXPECT_THAT(ErrorOf(profile), HasSubstr("no profile provider"));
}

TEST_F(PlanBuilderTest, ConfigForOtherDriversAndRequestsIsIgnored) {
  auto claim = Claim("c", {"pci-0101-00-00-0"});
  claim.configs.push_back({"FromClaim", {}, "gpu.nvidia.com", R"({"anything":1})"});
  claim.configs.push_back(Opaque(R"({"interface":{"mtu":9000}})", "FromClaim", {"other-request"}));
  EXPECT_NO_THROW(BuildClaimPlan(claim, inventory_, options_, {}, {}));
  claim.configs.push_back(Opaque(R"({"routes":[]})", "FromClaim", {"nic/sub"}));
  claim.results[0].request = "nic/sub";
  EXPECT_THAT(ErrorOf(claim), HasSubstr("may not set routes"));  // subrequest config applies
}

TEST_F(PlanBuilderTest, NetdevPlanCapturesHostStateAndConfig) {
  auto claim = Claim("roce", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"name":"eth9","mtu":1500}})", "FromClass"));
  claim.configs.push_back(Opaque(R"({"interface":{"mtu":4000},
      "routes":[{"destination":"10.0.0.0/8","gateway":"192.168.1.1"}]})"));
  auto plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  ASSERT_EQ(plan.netdevs.size(), 1U);
  const auto& n = plan.netdevs[0];
  EXPECT_EQ(n.host_if_name, "gpu0rdma0");
  EXPECT_EQ(n.pod_if_name, "eth9");  // from the class config
  EXPECT_EQ(n.mtu, 4000U);           // the claim config wins
  EXPECT_EQ(n.addresses, std::vector<std::string>{"192.168.1.2/32"});  // host global addresses
  ASSERT_EQ(n.routes.size(), 1U);
  EXPECT_EQ(n.routes[0].gateway, "192.168.1.1");
  EXPECT_EQ(n.host_state.mtu, 8896U);
  EXPECT_EQ(n.rdma_device, "mlx5_4");
  EXPECT_EQ(NodePaths(plan).count("/dev/infiniband/uverbs4"), 1U);
}

TEST_F(PlanBuilderTest, NetdevConfigThatCannotBeAppliedYetIsRefused) {
  auto claim = Claim("roce", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"hardwareAddr":"00:11:22:33:44:55"}})"));
  EXPECT_THAT(ErrorOf(claim), HasSubstr("interface.hardwareAddr are valid but not applied"));
}

TEST_F(PlanBuilderTest, PluginEditsAreAddedAndPluginErrorsFail) {
  auto claim = Claim("p", {"pci-0101-00-00-0"});
  InjectFunction inject = [](const plugins::ClaimRef& ref, const std::vector<inventory::Device>& devices) {
    plugins::InjectionEdits edits;
    EXPECT_EQ(ref.uid, "uid-p");
    EXPECT_EQ(devices.size(), 1U);
    edits.env["NCCL_IB_HCA"] = "=mlx5_0";
    edits.dev_nodes.push_back({"/dev/nvidia-caps/cap1", 240, 1, "r", "nvidia"});
    edits.mounts.push_back({"/opt/x", "/x", {"ro"}, "nvidia"});
    return edits;
  };
  auto plan = BuildClaimPlan(claim, inventory_, options_, inject, {});
  EXPECT_EQ(plan.env.at("NCCL_IB_HCA"), "=mlx5_0");
  EXPECT_EQ(NodePaths(plan).count("/dev/nvidia-caps/cap1"), 1U);
  EXPECT_EQ(plan.mounts.size(), 1U);
  InjectFunction failing = [](const plugins::ClaimRef&, const std::vector<inventory::Device>&) {
    plugins::InjectionEdits edits;
    edits.errors.push_back("plugin nvidia: inject failed");
    return edits;
  };
  EXPECT_THROW(BuildClaimPlan(claim, inventory_, options_, failing, {}), PrepareError);
}

TEST(TopLevelRequest, StripsSubrequest) {
  EXPECT_EQ(TopLevelRequest("nic/sub"), "nic");
  EXPECT_EQ(TopLevelRequest("nic"), "nic");
}

}  // namespace
}  // namespace dranet::kubelet
