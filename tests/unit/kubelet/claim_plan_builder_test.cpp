#include "kubelet/claim_plan_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

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
    inventory_ = {IbDevice(0), IbDevice(1), IbDevice(2), NetDevice("gpu0rdma0", 4), NetDevice("gpu1rdma0", 5)};
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
  int host_reads_ = 0;
  // gpu0rdma0 (ifindex 3) and gpu1rdma0 (4) with the GKE A4 layout: a /32,
  // a link-scope route to the gateway and the subnet via the gateway.
  HostNetworkReader host_state_ = [this] {
    ++host_reads_;
    inventory::NetlinkFacts facts;
    for (int i : {0, 1}) {
      const std::string name = "gpu" + std::to_string(i) + "rdma0";
      const std::string net = "192.168." + std::to_string(i + 1) + ".";
      inventory::LinkFacts link;
      link.ifindex = 3 + i;
      link.name = name;
      link.flags = IFF_UP;
      link.mtu = 8896;
      link.min_mtu = 68;
      link.max_mtu = 9978;  // mlx5
      link.addresses = {net + "2/32", "fe80::1/64"};
      facts.links.push_back(link);
      inventory::RouteFacts gateway{AF_INET, net + "1/32", "", RT_SCOPE_LINK, RT_TABLE_MAIN, 100, RTPROT_DHCP,
                                    RTN_UNICAST, {{3 + i, "", 1}}};
      inventory::RouteFacts subnet{AF_INET, net + "0/24", "", RT_SCOPE_UNIVERSE, RT_TABLE_MAIN, 100, RTPROT_DHCP,
                                   RTN_UNICAST, {{3 + i, net + "1", 1}}};
      facts.routes.push_back(gateway);
      facts.routes.push_back(subnet);
    }
    facts.rules.push_back({AF_INET, 100, "192.168.1.0/24", "", 101, FR_ACT_TO_TBL, false});
    facts.routes.push_back({AF_INET, "10.9.0.0/16", "", 0, 101, 0, RTPROT_BOOT, RTN_UNICAST, {{3, "192.168.1.1", 1}}});
    facts.neighbors.push_back({3, AF_INET, "192.168.1.1", "00:00:5e:00:01:01"});
    return facts;
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
  // The host's routes (link scope to the gateway, subnet via it, table 101),
  // then the claim's.
  ASSERT_EQ(n.routes.size(), 4U);
  EXPECT_EQ(n.routes[0], (inject::Route{"192.168.1.1/32", "", "", 0, 100, RT_SCOPE_LINK, RTPROT_DHCP}));
  EXPECT_EQ(n.routes[1], (inject::Route{"192.168.1.0/24", "192.168.1.1", "", 0, 100, 0, RTPROT_DHCP}));
  EXPECT_EQ(n.routes[2].table, 101);
  EXPECT_EQ(n.routes[3], (inject::Route{"10.0.0.0/8", "192.168.1.1", "", 0, 0, 0, 0}));
  EXPECT_EQ(n.rules, (std::vector<inject::Rule>{{100, "192.168.1.0/24", "", 101, AF_INET}}));
  EXPECT_EQ(n.neighbors, (std::vector<inject::Neighbor>{{"192.168.1.1", "00:00:5e:00:01:01"}}));
  EXPECT_EQ(n.host_state.routes.size(), 3U);
  EXPECT_EQ(n.host_state.mtu, 8896U);
  EXPECT_EQ(n.rdma_device, "mlx5_4");
  EXPECT_EQ(NodePaths(plan).count("/dev/infiniband/uverbs4"), 1U);
}

// The netdev's driver range (IFLA_MIN_MTU..IFLA_MAX_MTU) bounds a claim MTU
// at prepare: outside it the move at pod start would fail.
TEST_F(PlanBuilderTest, MtuOutsideTheDriversRangeIsRefusedAtPrepare) {
  auto claim = Claim("roce", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"mtu":9978}})"));
  EXPECT_EQ(BuildClaimPlan(claim, inventory_, options_, {}, host_state_).netdevs.at(0).mtu, 9978U);
  claim.configs = {Opaque(R"({"interface":{"mtu":9979}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("config sets mtu 9979 but netdev gpu0rdma0 accepts 68 to 9978"));
}

TEST_F(PlanBuilderTest, OneHostReadPerClaimAndSourcesMergeHostThenCloudThenClaim) {
  auto claim = Claim("two", {"pci-0000-84-00-0", "pci-0000-85-00-0"});
  claim.configs.push_back(Opaque(R"({"routes":[{"destination":"192.168.1.0/24","gateway":"192.168.1.7"}],
      "rules":[{"priority":50,"source":"192.168.1.2/32","table":7}],
      "neighbors":[{"destination":"192.168.1.1","hardwareAddr":"02:00:00:00:00:09"}]})", "FromClaim", {}));
  InjectFunction cloud = [](const plugins::ClaimRef&, const std::vector<inventory::Device>&) {
    plugins::InjectionEdits edits;
    edits.routes.push_back({"pci-0000-84-00-0", "0.0.0.0/0", "192.168.1.1", "", 102, 0, 0, "azure"});
    edits.routes.push_back({"pci-0000-84-00-0", "192.168.1.0/24", "192.168.1.3", "", 0, 0, 0, "azure"});
    edits.rules.push_back({"pci-0000-85-00-0", 0, "192.168.2.0/24", "", 103, "azure"});
    return edits;
  };
  auto plan = BuildClaimPlan(claim, inventory_, options_, cloud, host_state_);
  EXPECT_EQ(host_reads_, 1);  // one netlink dump for both netdevs
  ASSERT_EQ(plan.netdevs.size(), 2U);
  const auto& a = plan.netdevs[0];
  ASSERT_EQ(a.routes.size(), 4U);
  EXPECT_EQ(a.routes[1].gateway, "192.168.1.7");  // host < cloud < claim for 192.168.1.0/24 in main
  EXPECT_EQ(a.routes[3].destination, "0.0.0.0/0");
  EXPECT_EQ(a.routes[3].table, 102);
  EXPECT_EQ(a.rules.size(), 2U);
  EXPECT_EQ(a.neighbors, (std::vector<inject::Neighbor>{{"192.168.1.1", "02:00:00:00:00:09"}}));
  EXPECT_EQ(a.host_state.neighbors, (std::vector<inject::Neighbor>{{"192.168.1.1", "00:00:5e:00:01:01"}}));
  const auto& b = plan.netdevs[1];
  EXPECT_EQ(b.rules, (std::vector<inject::Rule>{{0, "192.168.2.0/24", "", 103, 0},
                                                {50, "192.168.1.2/32", "", 7, 0}}));
  ASSERT_EQ(b.routes.size(), 3U);
  EXPECT_EQ(b.routes[0].destination, "192.168.2.1/32");
}

TEST_F(PlanBuilderTest, HostRoutesStayOnTheHostWhenCopyingIsOff) {
  options_.copy_host_routes = false;
  auto plan = BuildClaimPlan(Claim("roce", {"pci-0000-84-00-0"}), inventory_, options_, {}, host_state_);
  ASSERT_EQ(plan.netdevs.size(), 1U);
  EXPECT_TRUE(plan.netdevs[0].routes.empty());
  EXPECT_TRUE(plan.netdevs[0].rules.empty());
  EXPECT_TRUE(plan.netdevs[0].neighbors.empty());
  EXPECT_EQ(plan.netdevs[0].host_state.routes.size(), 3U);  // still restored at teardown
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
