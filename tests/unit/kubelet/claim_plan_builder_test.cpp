#include "kubelet/claim_plan_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <set>

#include "inject/link_settings.h"
#include "inventory/inventory.h"
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
  uint32_t min_mtu_ = 68;           // IFLA_MIN_MTU of both netdevs
  uint32_t tso_max_size_ = 524280;  // mlx5 with BIG TCP (GSO_MAX_SIZE); 0: a kernel before 5.19
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
      link.min_mtu = min_mtu_;
      link.max_mtu = 9978;  // mlx5
      link.mac = "02:00:00:00:00:0" + std::to_string(i);
      link.gso_max_size = link.gro_max_size = link.gso_ipv4_max_size = link.gro_ipv4_max_size = 65536;
      link.tso_max_size = tso_max_size_;
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
  // The lower bound as well, for a driver whose minimum is above what any
  // config may say (68, IPv4's).
  min_mtu_ = 1280;
  claim.configs = {Opaque(R"({"interface":{"mtu":1280}})")};
  EXPECT_EQ(BuildClaimPlan(claim, inventory_, options_, {}, host_state_).netdevs.at(0).mtu, 1280U);
  claim.configs = {Opaque(R"({"interface":{"mtu":1279}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("config sets mtu 1279 but netdev gpu0rdma0 accepts 1280 to 9978"));
}

TEST_F(PlanBuilderTest, OneHostReadPerClaimAndSourcesMergeHostThenCloudThenClaim) {
  auto claim = Claim("two", {"pci-0000-84-00-0", "pci-0000-85-00-0"});
  // 192.168.1.7 is on the link (the claim says so): a gateway the pod can reach.
  claim.configs.push_back(Opaque(R"({"routes":[{"destination":"192.168.1.0/24","gateway":"192.168.1.7"},
      {"destination":"192.168.1.7/32","scope":253}],
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
  ASSERT_EQ(a.routes.size(), 5U);
  EXPECT_EQ(a.routes[1].gateway, "192.168.1.7");  // host < cloud < claim for 192.168.1.0/24 in main
  EXPECT_EQ(a.routes[3].destination, "0.0.0.0/0");
  EXPECT_EQ(a.routes[3].table, 102);
  EXPECT_EQ(a.routes[4].destination, "192.168.1.7/32");
  EXPECT_EQ(a.rules.size(), 2U);
  EXPECT_EQ(a.neighbors, (std::vector<inject::Neighbor>{{"192.168.1.1", "02:00:00:00:00:09"}}));
  EXPECT_EQ(a.host_state.neighbors, (std::vector<inject::Neighbor>{{"192.168.1.1", "00:00:5e:00:01:01"}}));
  const auto& b = plan.netdevs[1];
  EXPECT_EQ(b.rules, (std::vector<inject::Rule>{{0, "192.168.2.0/24", "", 103, 0},
                                                {50, "192.168.1.2/32", "", 7, 0}}));
  ASSERT_EQ(b.routes.size(), 4U);
  EXPECT_EQ(b.routes[0].destination, "192.168.2.1/32");
}

// A secondary NIC with host policy routing (DRANET carries it): its table's
// default route and the rule that looks it up go into the pod. Its
// main-table default route (behind the uplink's) stays out of the pod,
// where it would compete with the pod's own, but is recorded so that the
// host gets it back.
TEST_F(PlanBuilderTest, PolicyTableDefaultRoutesGoIntoThePodAndMainTableOnesStayForTheHost) {
  HostNetworkReader host = [] {
    inventory::NetlinkFacts facts;
    inventory::LinkFacts link;
    link.ifindex = 3;
    link.name = "gpu0rdma0";
    link.flags = IFF_UP;
    link.mtu = 8896;
    link.mac = "02:00:00:00:00:00";
    link.addresses = {"192.168.1.2/24"};
    facts.links.push_back(link);
    facts.routes.push_back({AF_INET, "0.0.0.0/0", "", 0, 101, 0, RTPROT_BOOT, RTN_UNICAST, {{3, "192.168.1.1", 1}}});
    facts.routes.push_back({AF_INET, "0.0.0.0/0", "", 0, RT_TABLE_MAIN, 200, RTPROT_BOOT, RTN_UNICAST, {{3, "192.168.1.1", 1}}});
    facts.routes.push_back({AF_INET6, "::/0", "", 0, RT_TABLE_MAIN, 200, RTPROT_BOOT, RTN_UNICAST, {{3, "fe80::1", 1}}});
    facts.rules.push_back({AF_INET, 32000, "192.168.1.0/24", "", 101, FR_ACT_TO_TBL, false});
    return facts;
  };
  const auto plan = BuildClaimPlan(Claim("pbr", {"pci-0000-84-00-0"}), inventory_, options_, {}, host);
  ASSERT_EQ(plan.netdevs.size(), 1U);
  const auto& n = plan.netdevs[0];
  EXPECT_EQ(n.routes, (std::vector<inject::Route>{{"0.0.0.0/0", "192.168.1.1", "", 101, 0, 0, RTPROT_BOOT}}));
  EXPECT_EQ(n.rules, (std::vector<inject::Rule>{{32000, "192.168.1.0/24", "", 101, AF_INET}}));
  EXPECT_EQ(n.host_state.routes, (std::vector<inject::Route>{{"0.0.0.0/0", "192.168.1.1", "", 101, 0, 0, RTPROT_BOOT},
                                                             {"0.0.0.0/0", "192.168.1.1", "", 0, 200, 0, RTPROT_BOOT},
                                                             {"::/0", "fe80::1", "", 0, 200, 0, RTPROT_BOOT}}));
}

// The kernel takes GSO sizes up to the device's tso_max_size and GRO sizes
// up to GRO_MAX_SIZE (524280): above them the pod would fail at sandbox
// creation, so prepare refuses them, naming field, value, netdev and limit.
TEST_F(PlanBuilderTest, GsoAndGroSizesAboveWhatTheKernelTakesAreRefusedAtPrepare) {
  auto claim = Claim("bigtcp", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"gsoMaxSize":524280,"groMaxSize":524280,
      "gsoIPv4MaxSize":524280,"groIPv4MaxSize":524280}})"));
  const auto plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  EXPECT_EQ(plan.netdevs.at(0).settings.gso_max_size, 524280U);
  EXPECT_EQ(plan.netdevs.at(0).settings.gro_ipv4_max_size, 524280U);
  claim.configs = {Opaque(R"({"interface":{"gsoMaxSize":524281,"groMaxSize":600000}})")};
  const std::string error = ErrorOf(claim);
  EXPECT_THAT(error, HasSubstr("claim ml/bigtcp: device pci-0000-84-00-0: config sets interface.gsoMaxSize 524281 "
                               "but netdev gpu0rdma0 takes at most 524280 (its tso_max_size)"));
  EXPECT_THAT(error, HasSubstr("config sets interface.groMaxSize 600000 but the kernel takes at most 524280 for "
                               "netdev gpu0rdma0 (GRO_MAX_SIZE)"));
  claim.configs = {Opaque(R"({"interface":{"gsoIPv4MaxSize":600000,"groIPv4MaxSize":524281}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("interface.gsoIPv4MaxSize 600000 but netdev gpu0rdma0 takes at most 524280"));
  EXPECT_THAT(ErrorOf(claim), HasSubstr("interface.groIPv4MaxSize 524281 but the kernel takes at most 524280"));
  // A driver without BIG TCP keeps the legacy 64 KiB: GSO above it is
  // refused; GRO is bounded by the stack, not the driver.
  tso_max_size_ = 65536;
  claim.configs = {Opaque(R"({"interface":{"gsoMaxSize":196608,"groMaxSize":196608}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("config sets interface.gsoMaxSize 196608 but netdev gpu0rdma0 takes at most "
                                        "65536 (its tso_max_size)"));
  EXPECT_THAT(ErrorOf(claim), Not(HasSubstr("groMaxSize")));
  // A kernel that reports no tso_max_size (before 5.19): the limits are not known here.
  tso_max_size_ = 0;
  claim.configs = {Opaque(R"({"interface":{"gsoMaxSize":600000,"groMaxSize":600000}})")};
  EXPECT_EQ(ErrorOf(claim), "");
}

// A gateway the pod's addresses and the netdev's on-link routes do not
// reach makes the kernel refuse the route at sandbox creation (ENETUNREACH):
// refused at prepare instead, once the routes of every source are merged.
TEST_F(PlanBuilderTest, RouteGatewaysThePodCannotReachAreRefusedAtPrepare) {
  auto claim = Claim("gw", {"pci-0000-84-00-0"});
  auto with_routes = [&](const std::string& routes) {
    claim.configs = {Opaque(R"({"interface":{"name":"net1","addresses":["10.1.0.5/24","2001:db8::5/64"]},
        "routes":)" + routes + "}")};
    return ErrorOf(claim);
  };
  EXPECT_THAT(with_routes(R"([{"destination":"10.9.0.0/16","gateway":"192.168.50.1"}])"),
              HasSubstr("claim ml/gw: device pci-0000-84-00-0: route 10.9.0.0/16 via 192.168.50.1: the gateway is not "
                        "reachable from the pod's addresses (10.1.0.5/24, 2001:db8::5/64) or on-link routes of net1"));
  // In the subnet of a pod address, or on a link-scope route of the netdev.
  EXPECT_EQ(with_routes(R"([{"destination":"10.9.0.0/16","gateway":"10.1.0.1"}])"), "");
  EXPECT_EQ(with_routes(R"([{"destination":"10.9.0.0/16","gateway":"192.168.50.1"},
      {"destination":"192.168.50.0/24","scope":253}])"), "");
  // The host's on-link route to its gateway comes along (--copy-host-routes).
  EXPECT_EQ(with_routes(R"([{"destination":"10.9.0.0/16","gateway":"192.168.1.1"}])"), "");
  // The kernel looks in the route's table, then in main; never in another.
  EXPECT_EQ(with_routes(R"([{"destination":"0.0.0.0/0","gateway":"192.168.50.1","table":100},
      {"destination":"192.168.50.1/32","scope":253}])"), "");
  EXPECT_EQ(with_routes(R"([{"destination":"0.0.0.0/0","gateway":"192.168.50.1","table":100},
      {"destination":"192.168.50.1/32","scope":253,"table":100}])"), "");
  EXPECT_THAT(with_routes(R"([{"destination":"10.9.0.0/16","gateway":"192.168.50.1"},
      {"destination":"192.168.50.1/32","scope":253,"table":100}])"),
              HasSubstr("route 10.9.0.0/16 via 192.168.50.1: the gateway is not reachable"));
  // A gateway route does not make its gateway reachable, not even itself.
  EXPECT_THAT(with_routes(R"([{"destination":"192.168.50.0/24","gateway":"192.168.50.1"}])"),
              HasSubstr("route 192.168.50.0/24 via 192.168.50.1: the gateway is not reachable"));
  // IPv6: by the address's prefix; a link-local gateway needs only the link.
  EXPECT_EQ(with_routes(R"([{"destination":"2001:db8:9::/48","gateway":"2001:DB8::1"},
      {"destination":"2001:db8:8::/48","gateway":"fe80::1"}])"), "");
  EXPECT_THAT(with_routes(R"([{"destination":"2001:db8:7::/48","gateway":"2001:db8:1::1"}])"),
              HasSubstr("route 2001:db8:7::/48 via 2001:db8:1::1: the gateway is not reachable"));
  // Every problem named, and a table as the kernel numbers it.
  const std::string both = with_routes(R"([{"destination":"10.9.0.0/16","gateway":"192.168.50.1","table":4294967295},
      {"destination":"10.8.0.0/16","gateway":"192.168.60.1"}])");
  EXPECT_THAT(both, HasSubstr("route 10.9.0.0/16 via 192.168.50.1 table 4294967295: the gateway is not reachable"));
  EXPECT_THAT(both,
              HasSubstr("; claim ml/gw: device pci-0000-84-00-0: route 10.8.0.0/16 via 192.168.60.1: the gateway"));
  EXPECT_THAT(both, Not(HasSubstr("table -1")));
}

// An on-link route of another netdev of the pod does not reach the gateway.
TEST_F(PlanBuilderTest, ARouteGatewayMustBeOnTheRoutesOwnNetdev) {
  auto claim = Claim("two", {"pci-0000-84-00-0", "pci-0000-85-00-0"});
  claim.configs.push_back(Opaque(R"({"routes":[{"destination":"10.9.0.0/16","gateway":"192.168.2.1","table":9}]})"));
  const std::string error = ErrorOf(claim);
  EXPECT_THAT(error, HasSubstr("claim ml/two: device pci-0000-84-00-0: route 10.9.0.0/16 via 192.168.2.1 table 9: the "
                               "gateway is not reachable from the pod's addresses (192.168.1.2/32) or on-link routes "
                               "of gpu0rdma0"));
  EXPECT_THAT(error, Not(HasSubstr("device pci-0000-85-00-0")));
}

// A preferred source the pod will not have on the netdev makes the kernel
// refuse the route ("Invalid prefsrc address"). The host's routes lose such
// a source silently (the claim replaced the host's addresses); a cloud
// plugin's or the claim's own is refused.
TEST_F(PlanBuilderTest, RouteSourcesThePodDoesNotHaveAreRefusedUnlessTheHostsOwn) {
  HostNetworkReader with_source = [this] {
    auto facts = host_state_();
    for (auto& route : facts.routes)
      if (route.destination == "192.168.1.0/24") route.source = "192.168.1.2";
    return facts;
  };
  auto claim = Claim("src", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"name":"net1","addresses":["10.1.0.5/24"]}})"));
  const auto plan = BuildClaimPlan(claim, inventory_, options_, {}, with_source);
  ASSERT_EQ(plan.netdevs.at(0).routes.at(1).destination, "192.168.1.0/24");
  EXPECT_EQ(plan.netdevs.at(0).routes.at(1).source, "");
  EXPECT_EQ(plan.netdevs.at(0).host_state.routes.at(1).source, "192.168.1.2");  // restored on the host
  claim.configs = {Opaque(R"({"interface":{"name":"net1","addresses":["10.1.0.5/24"]},
      "routes":[{"destination":"10.9.0.0/16","gateway":"10.1.0.1","source":"10.1.0.9"}]})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("claim ml/src: device pci-0000-84-00-0: route 10.9.0.0/16 via 10.1.0.1 src "
                                        "10.1.0.9: the source 10.1.0.9 is not one of the pod's addresses on net1 "
                                        "(10.1.0.5/24)"));
  claim.configs = {Opaque(R"({"interface":{"name":"net1","addresses":["10.1.0.5/24"]},
      "routes":[{"destination":"10.9.0.0/16","gateway":"10.1.0.1","source":"10.1.0.5"}]})")};
  EXPECT_EQ(ErrorOf(claim), "");
  InjectFunction cloud = [](const plugins::ClaimRef&, const std::vector<inventory::Device>&) {
    plugins::InjectionEdits edits;
    edits.routes.push_back({"pci-0000-84-00-0", "10.7.0.0/16", "192.168.1.1", "192.168.1.9", 0, 0, 0, "azure"});
    return edits;
  };
  claim.configs.clear();
  try {
    BuildClaimPlan(claim, inventory_, options_, cloud, host_state_);
    ADD_FAILURE() << "a plugin route with a source the pod does not have was accepted";
  } catch (const PrepareError& e) {
    EXPECT_THAT(e.what(), HasSubstr("route 10.7.0.0/16 via 192.168.1.1 src 192.168.1.9: the source 192.168.1.9 is "
                                    "not one of the pod's addresses on gpu0rdma0 (192.168.1.2/32)"));
  }
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

// A profile provider that answers from a table and records its calls.
class TableProfiles : public ProfileProvider {
 public:
  std::map<std::string, std::string> answers;  // profile -> NetworkConfig JSON
  std::vector<std::string> calls;
  std::string GetProfileConfig(const ProfileDevice& device, const std::string& claim_uid,
                               const std::string& config_json, std::stop_token) override {
    calls.push_back("get " + device.name + " " + claim_uid + " " + config_json);
    for (const auto& [profile, answer] : answers)
      if (config_json.find("\"" + profile + "\"") != std::string::npos) return answer;
    throw ProfileError("no such profile");
  }
  void ReleaseProfileConfig(const ProfileDevice& device, const std::string& claim_uid,
                            const std::string& config_json, std::stop_token) override {
    calls.push_back("release " + device.name + " " + claim_uid + " " + config_json);
  }
  std::string Describe() const override { return "table"; }
};

class PlanBuilderConfigTest : public PlanBuilderTest {
 protected:
  PlanBuilderConfigTest() {
    host_ = HostAccess(host_state_);
    host_.read_ethtool = [](const std::string&) {
      EthtoolState state;
      state.features.changeable = {"tx-tcp-segmentation", "tx-tcp6-segmentation", "rx-gro", "rx-lro"};
      state.features.wanted = {"tx-tcp-segmentation", "tx-tcp6-segmentation", "rx-gro"};
      state.private_flags = {{"rx_striding_rq", true}};
      return state;
    };
    // gpu0rdma0's arp_announce differs from the namespace default: it is
    // recorded whether or not a claim sets it.
    host_.read_ipv4_conf = [](const std::string& if_name, const std::string& key) -> std::optional<int32_t> {
      if (if_name == "default") return 0;
      return if_name == "gpu0rdma0" && key == "arp_announce" ? 1 : 0;
    };
    host_.vrf_unsupported = [this] { return vrf_reason_; };
    host_.request_dhcp = [this](const std::string& if_name, std::stop_token, const std::string& client_id) {
      events_.push_back("lease " + if_name + (client_id.empty() ? "" : " as " + client_id));
      inject::DhcpLease lease;
      lease.address = "192.0.2.10/24";
      lease.server_id = "192.0.2.1";
      lease.server_mac = "02:00:00:00:00:aa";
      lease.client_mac = "02:00:00:00:00:00";
      lease.client_id = client_id;
      lease.routes = {{"10.20.0.0/16", "192.0.2.1", "", 0, 0, 0, 0}, {"192.0.2.128/25", "", "", 0, 0, 0, 0}};
      return lease;
    };
    host_.release_dhcp = [this](const std::string& if_name, const inject::DhcpLease& lease, std::stop_token) {
      events_.push_back("release " + if_name + " " + lease.address + " to " + lease.server_id +
                        (lease.client_id.empty() ? "" : " as " + lease.client_id));
    };
    host_.profiles = profiles_;
  }
  inject::ClaimPlan Build(const kube::ResourceClaim& claim) {
    return BuildClaimPlan(claim, inventory_, options_, {}, host_);
  }
  std::string BuildError(const kube::ResourceClaim& claim) {
    try {
      Build(claim);
    } catch (const PrepareError& e) {
      return e.what();
    }
    return "";
  }
  HostAccess host_;
  std::string vrf_reason_;
  std::vector<std::string> events_;
  std::shared_ptr<TableProfiles> profiles_ = std::make_shared<TableProfiles>();
};

TEST_F(PlanBuilderConfigTest, EveryInterfaceFieldIsPlannedWithTheHostsValuesForTeardown) {
  auto claim = Claim("roce", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"hardwareAddr":"00-11-22-AA-bb-cc","gsoMaxSize":196608,
      "groMaxSize":196608,"gsoIPv4MaxSize":131072,"groIPv4MaxSize":131072,"arpIgnore":1,"arpAnnounce":2,
      "disableEbpfPrograms":true},
      "ethtool":{"features":{"tso":false,"rx-lro":true},"privateFlags":{"rx_striding_rq":false}}})"));
  const auto plan = Build(claim);
  const auto& n = plan.netdevs.at(0);
  EXPECT_EQ(n.settings.mac, "00:11:22:aa:bb:cc");
  EXPECT_EQ(n.host_state.settings.mac, "02:00:00:00:00:00");
  EXPECT_EQ(n.settings.gso_max_size, 196608U);
  EXPECT_EQ(n.settings.gro_ipv4_max_size, 131072U);
  EXPECT_EQ(n.host_state.settings.gso_max_size, 65536U);
  EXPECT_EQ(n.host_state.settings.gro_ipv4_max_size, 65536U);
  EXPECT_EQ(n.settings.arp_ignore, 1);
  EXPECT_EQ(n.settings.arp_announce, 2);
  EXPECT_EQ(n.host_state.settings.arp_ignore, std::nullopt);  // the default: a move back restores it
  EXPECT_EQ(n.host_state.settings.arp_announce, 1);
  EXPECT_EQ(Build(Claim("plain", {"pci-0000-84-00-0"})).netdevs.at(0).host_state.settings.arp_announce, 1);
  // "tso" is every changeable tx-tcp*-segmentation feature; the host's
  // values are what it wanted before.
  EXPECT_EQ(n.settings.ethtool_features,
            (std::map<std::string, bool>{{"rx-lro", true}, {"tx-tcp-segmentation", false}, {"tx-tcp6-segmentation", false}}));
  EXPECT_EQ(n.host_state.settings.ethtool_features,
            (std::map<std::string, bool>{{"rx-lro", false}, {"tx-tcp-segmentation", true}, {"tx-tcp6-segmentation", true}}));
  EXPECT_EQ(n.settings.ethtool_private_flags, (std::map<std::string, bool>{{"rx_striding_rq", false}}));
  EXPECT_EQ(n.host_state.settings.ethtool_private_flags, (std::map<std::string, bool>{{"rx_striding_rq", true}}));
  EXPECT_TRUE(n.disable_ebpf_programs);
}

TEST_F(PlanBuilderConfigTest, WhatTheNetdevCannotTakeIsRefusedAtPrepare) {
  auto claim = Claim("roce", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"ethtool":{"features":{"bogus-offload":true,"tso":false},
      "privateFlags":{"no_such_flag":true}}})"));
  const std::string error = BuildError(claim);
  EXPECT_THAT(error, HasSubstr("claim ml/roce: device pci-0000-84-00-0: ethtool"));
  EXPECT_THAT(error, HasSubstr("bogus-offload"));
  claim.configs = {Opaque(R"({"interface":{"hardwareAddr":"00:11:22:33:44:55:66:77"}})")};
  EXPECT_THAT(BuildError(claim), HasSubstr("has 6-byte addresses"));
  host_.read_ethtool = nullptr;
  claim.configs = {Opaque(R"({"ethtool":{"features":{"tso":false}}})")};
  EXPECT_THAT(BuildError(claim), HasSubstr("cannot read them"));
}

// An SR-IOV VF cannot take an MTU above its PF's.
TEST_F(PlanBuilderConfigTest, VfMtuAboveThePfsIsRefused) {
  inventory_[3].pci_address = "0000:84:00.2";
  inventory_[3].physical_function = "0000:85:00.0";
  inventory_[4].pci_address = "0000:85:00.0";  // gpu1rdma0, MTU 8896
  auto claim = Claim("vf", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"mtu":8896}})"));
  EXPECT_EQ(Build(claim).netdevs.at(0).mtu, 8896U);
  claim.configs = {Opaque(R"({"interface":{"mtu":9000}})")};
  EXPECT_THAT(BuildError(claim), HasSubstr("is an SR-IOV VF of gpu1rdma0, whose MTU is 8896"));
}

TEST_F(PlanBuilderConfigTest, VrfTakesEveryRouteIntoItsTableAndNoRules) {
  auto claim = Claim("vrf", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"vrf":{"name":"blue"}},
      "routes":[{"destination":"10.0.0.0/8","gateway":"192.168.1.1","table":7}]})"));
  const auto plan = Build(claim);
  const auto& n = plan.netdevs.at(0);
  EXPECT_EQ(n.vrf_name, "blue");
  EXPECT_EQ(n.vrf_table, inject::DefaultVrfTable("blue"));
  EXPECT_GE(n.vrf_table, 1000U);
  EXPECT_LT(n.vrf_table, 2000U);
  ASSERT_EQ(n.routes.size(), 4U);
  for (const auto& route : n.routes) EXPECT_EQ(route.table, static_cast<int32_t>(n.vrf_table)) << route.destination;
  EXPECT_TRUE(n.rules.empty());
  EXPECT_FALSE(n.host_state.rules.empty());  // still restored on the host
  claim.configs = {Opaque(R"({"interface":{"vrf":{"name":"red","table":1234}}})")};
  EXPECT_EQ(Build(claim).netdevs.at(0).vrf_table, 1234U);
}

// A kernel without VRF: the claim fails at prepare, never a half-made pod.
TEST_F(PlanBuilderConfigTest, VrfOnAKernelWithoutVrfFailsAtPrepare) {
  vrf_reason_ = "the kernel has no VRF support (CONFIG_NET_VRF, module vrf)";
  auto claim = Claim("vrf", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"vrf":{"name":"blue","table":100}}})"));
  EXPECT_THAT(BuildError(claim), HasSubstr("config sets interface.vrf \"blue\" but this node cannot create VRF "
                                           "devices: the kernel has no VRF support"));
}

TEST_F(PlanBuilderConfigTest, DhcpLeaseGivesTheAddressAndClasslessRoutesAndIsReleasedOnFailure) {
  auto claim = Claim("dhcp", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"dhcp":true}})"));
  const auto plan = Build(claim);
  const auto& n = plan.netdevs.at(0);
  EXPECT_EQ(n.addresses, std::vector<std::string>{"192.0.2.10/24"});
  ASSERT_TRUE(n.dhcp_lease);
  EXPECT_EQ(n.dhcp_lease->server_id, "192.0.2.1");
  EXPECT_EQ(n.routes.back(), (inject::Route{"192.0.2.128/25", "", "", 0, 0, RT_SCOPE_LINK, 0}));
  EXPECT_EQ(n.routes[n.routes.size() - 2].destination, "10.20.0.0/16");
  EXPECT_EQ(events_, std::vector<std::string>{"lease gpu0rdma0"});
  EXPECT_TRUE(ReleaseClaimResources(plan, host_).empty());
  EXPECT_EQ(events_.back(), "release gpu0rdma0 192.0.2.10/24 to 192.0.2.1");
  // A later failure in the same prepare gives the lease back.
  events_.clear();
  auto two = Claim("dhcp2", {"pci-0000-84-00-0", "pci-0000-85-00-0"});
  two.configs.push_back(Opaque(R"({"interface":{"dhcp":true,"mtu":9999}})"));
  EXPECT_THAT(BuildError(two), HasSubstr("accepts 68 to 9978"));
  two.configs = {Opaque(R"({"interface":{"dhcp":true}})"), Opaque(R"({"interface":{"name":"net1"}})")};
  EXPECT_THAT(BuildError(two), HasSubstr("is used by another device"));
  EXPECT_EQ(events_, (std::vector<std::string>{"lease gpu0rdma0", "release gpu0rdma0 192.0.2.10/24 to 192.0.2.1"}));
}

// An IPVLAN child's lease is asked for on its parent under a client
// identifier of its own (the claim, the device, the share), and released
// under it.
TEST_F(PlanBuilderConfigTest, AnIpvlanChildsLeaseIsItsOwnUnderAClientIdentifier) {
  inventory_[3].attributes[std::string(inventory::attr::kEncapsulation)] = std::string("ether");
  auto claim = Claim("child", {"pci-0000-84-00-0"});
  claim.results[0].share_id = "share-a";
  claim.configs.push_back(Opaque(R"({"interface":{"addressing":"dhcp"}})"));
  const auto plan = Build(claim);
  const auto& n = plan.netdevs.at(0);
  EXPECT_EQ(n.child_type, "ipvlan");
  EXPECT_EQ(n.addresses, std::vector<std::string>{"192.0.2.10/24"});
  ASSERT_TRUE(n.dhcp_lease);
  EXPECT_EQ(n.dhcp_lease->client_id, "dranet/uid-child/pci-0000-84-00-0/share-a");
  EXPECT_EQ(n.routes.size(), 2u);  // the lease's, not the host's
  EXPECT_EQ(events_, std::vector<std::string>{"lease gpu0rdma0 as dranet/uid-child/pci-0000-84-00-0/share-a"});
  EXPECT_TRUE(ReleaseClaimResources(plan, host_).empty());
  EXPECT_EQ(events_.back(), "release gpu0rdma0 192.0.2.10/24 to 192.0.2.1 as dranet/uid-child/pci-0000-84-00-0/share-a");
}

TEST_F(PlanBuilderConfigTest, ProfileAnswerIsMergedOnTopAndReleasedWithTheSameRequest) {
  profiles_->answers["gold"] = R"({"interface":{"mtu":4000,"addresses":["10.9.9.9/24"]},
      "routes":[{"destination":"10.8.0.0/16","gateway":"10.9.9.1"}]})";
  auto claim = Claim("p", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"profile":"gold","interface":{"mtu":1500,"name":"eth7"}})"));
  const auto plan = Build(claim);
  const auto& n = plan.netdevs.at(0);
  EXPECT_EQ(n.mtu, 4000U);  // the provider wins
  EXPECT_EQ(n.pod_if_name, "eth7");
  EXPECT_EQ(n.addresses, std::vector<std::string>{"10.9.9.9/24"});
  EXPECT_EQ(n.routes.back().destination, "10.8.0.0/16");
  ASSERT_EQ(plan.profiles.size(), 1U);
  const std::string request = R"({"profile":"gold","interface":{"mtu":1500,"name":"eth7"}})";
  EXPECT_EQ(profiles_->calls, std::vector<std::string>{"get pci-0000-84-00-0 uid-p " + request});
  EXPECT_TRUE(ReleaseClaimResources(plan, host_).empty());
  EXPECT_EQ(profiles_->calls.back(), "release pci-0000-84-00-0 uid-p " + request);
  // Refused by the provider, or answered with an invalid config: prepare fails naming it.
  claim.configs = {Opaque(R"({"profile":"silver"})")};
  EXPECT_THAT(BuildError(claim), HasSubstr("profile \"silver\": no such profile"));
  profiles_->answers["bad"] = R"({"interface":{"mtu":1}})";
  claim.configs = {Opaque(R"({"profile":"bad"})")};
  EXPECT_THAT(BuildError(claim), HasSubstr("profile \"bad\" from table: interface.mtu"));
  EXPECT_THAT(profiles_->calls.back(), HasSubstr("release pci-0000-84-00-0"));  // given back
  host_.profiles = nullptr;
  claim.configs = {Opaque(R"({"profile":"gold"})")};
  EXPECT_THAT(BuildError(claim), HasSubstr("no profile provider is configured on this node"));
}

TEST_F(PlanBuilderConfigTest, ConsumersAreDranetsOnePodForNetdevsAndPodsOnly) {
  EXPECT_THAT(BuildError(Claim("two", {"pci-0000-84-00-0"}, {"a", "b"})),
              HasSubstr("driver only supports one pod per claim, got 2"));
  EXPECT_NO_THROW(Build(Claim("shared-ib", {"pci-0101-00-00-0"}, {"a", "b"})));  // char devices only
  auto job = Claim("job", {"pci-0101-00-00-0"}, {});
  job.reserved_for.push_back({"batch", "jobs", "j", "job-uid"});
  EXPECT_THAT(BuildError(job), HasSubstr("driver only supports Pods, unsupported reference"));
  EXPECT_THAT(BuildError(Claim("none", {"pci-0101-00-00-0"}, {})), HasSubstr("is reserved for no pod"));
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

// adminAccess (a monitoring pod beside the devices' holders): the results
// are listed, but nothing is moved, inspected, configured or opened for
// them, and plugins see only the claim's own devices; the pod is told what
// it may watch in DRANET_ADMIN_* env.
TEST_F(PlanBuilderTest, AdminAccessMovesAndOpensNothingAndNamesTheDevicesInEnv) {
  auto claim = Claim("watch", {"pci-0101-00-00-0", "pci-0000-84-00-0", "pci-0102-00-00-0"}, {"pod-m", "pod-n"});
  claim.results[1].admin_access = claim.results[2].admin_access = true;
  claim.results[1].request = claim.results[2].request = "watch";
  claim.results[0].request = "own";
  std::vector<std::string> injected;
  InjectFunction inject = [&](const plugins::ClaimRef&, const std::vector<inventory::Device>& devices) {
    for (const auto& d : devices) injected.push_back(d.name);
    plugins::InjectionEdits edits;
    edits.env["NCCL_IB_HCA"] = "=mlx5_0";
    return edits;
  };
  const auto plan = BuildClaimPlan(claim, inventory_, options_, inject, host_state_);
  EXPECT_EQ(injected, std::vector<std::string>{"pci-0101-00-00-0"});
  EXPECT_TRUE(plan.netdevs.empty());
  EXPECT_EQ(host_reads_, 0) << "an adminAccess netdev is not even inspected";
  EXPECT_EQ(NodePaths(plan), (std::set<std::string>{"/dev/infiniband/rdma_cm", "/dev/infiniband/umad0",
                                                     "/dev/infiniband/uverbs0"}));
  ASSERT_EQ(plan.devices.size(), 3U);
  EXPECT_FALSE(plan.devices[0].admin_access);
  EXPECT_TRUE(plan.devices[1].admin_access);
  EXPECT_TRUE(plan.devices[2].admin_access);
  EXPECT_EQ(plan.env, (std::map<std::string, std::string>{{"DRANET_ADMIN_DEVICES", "pci-0000-84-00-0,pci-0102-00-00-0"},
                                                          {"DRANET_ADMIN_NETDEVS", "gpu0rdma0"},
                                                          {"DRANET_ADMIN_RDMA_DEVICES", "mlx5_4,mlx5_1"},
                                                          {"NCCL_IB_HCA", "=mlx5_0"}}));
  EXPECT_EQ(plan.published_attributes.count("pci-0000-84-00-0"), 0U);
  EXPECT_EQ(plan.pod_uids, (std::vector<std::string>{"pod-m", "pod-n"}));  // several watchers may share it
}

TEST_F(PlanBuilderTest, AdminAccessTakesNoConfig) {
  auto claim = Claim("watch", {"pci-0000-84-00-0"});
  claim.results[0].admin_access = true;
  claim.configs.push_back(Opaque(R"({"interface":{"name":"net1","mtu":1500},"routes":[{"destination":"10.0.0.0/8",
      "gateway":"192.168.1.1"}]})"));
  EXPECT_THAT(ErrorOf(claim), HasSubstr("claim ml/watch: device pci-0000-84-00-0 (request \"nic\"): adminAccess "
                                        "gives read-only access, which configures nothing; its config may not set "
                                        "interface.name, interface.mtu, routes"));
  EXPECT_EQ(host_reads_, 0);
  claim.configs = {Opaque(R"({"profile":"gold"})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("its config may not set profile"));  // no provider is asked
  claim.configs = {Opaque(R"({})")};
  EXPECT_EQ(ErrorOf(claim), "");
  // A class's config is for the devices' holders: not applied, not refused.
  claim.configs = {Opaque(R"({"interface":{"mtu":4000}})", "FromClass")};
  EXPECT_EQ(ErrorOf(claim), "");
  // The most specific fields are named.
  claim.configs = {Opaque(R"({"interface":{"vrf":{"name":"blue"}},"ethtool":{"features":{"tso":false}}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("its config may not set interface.vrf.name, ethtool"));
}

// Shares (consumable capacity, docs/sharing.md): each claim holding a share
// gets the HCA's char devices and NCCL_IB_HCA; its netdev stays on the host.
TEST_F(PlanBuilderTest, ASharedDeviceGivesEachClaimTheHcasCharDevicesAndMovesNothing) {
  for (const char* name : {"first", "second"}) {
    SCOPED_TRACE(name);
    auto claim = Claim(name, {"pci-0000-84-00-0"});
    claim.results[0].share_id = std::string("6f1c0d1e-0000-4000-8000-00000000000") + (name[0] == 'f' ? "1" : "2");
    const auto plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
    EXPECT_TRUE(plan.netdevs.empty());
    EXPECT_EQ(host_reads_, 0) << "a share's netdev is not even inspected";
    EXPECT_EQ(NodePaths(plan), (std::set<std::string>{"/dev/infiniband/rdma_cm", "/dev/infiniband/umad4",
                                                       "/dev/infiniband/uverbs4"}));
    ASSERT_EQ(plan.devices.size(), 1U);
    EXPECT_EQ(plan.devices[0].share_id, claim.results[0].share_id);
    EXPECT_EQ(plan.env, (std::map<std::string, std::string>{{"NCCL_IB_HCA", "=mlx5_4"}}));
    EXPECT_EQ(plan.published_attributes.count("pci-0000-84-00-0"), 1U);
  }
}

TEST_F(PlanBuilderTest, TwoSharesOfOneDeviceInAClaimAreBothRecordedAndOpenedOnce) {
  auto claim = Claim("double", {"pci-0101-00-00-0", "pci-0101-00-00-0", "pci-0102-00-00-0"});
  claim.results[0].share_id = "share-a";
  claim.results[1].share_id = "share-b";
  InjectFunction inject = [&](const plugins::ClaimRef&, const std::vector<inventory::Device>& devices) {
    EXPECT_EQ(devices.size(), 2U);  // each device once
    return plugins::InjectionEdits{};
  };
  const auto plan = BuildClaimPlan(claim, inventory_, options_, inject, host_state_);
  ASSERT_EQ(plan.devices.size(), 3U);
  EXPECT_EQ(plan.devices[0].share_id, "share-a");
  EXPECT_EQ(plan.devices[1].share_id, "share-b");
  EXPECT_EQ(plan.devices[2].share_id, "");
  EXPECT_EQ(plan.device_nodes.size(), 5U);  // rdma_cm, umad0, umad1, uverbs0, uverbs1
  // Every RDMA device of the claim is named, the one held alone too.
  EXPECT_EQ(plan.env.at("NCCL_IB_HCA"), "=mlx5_0,mlx5_1");
}

TEST_F(PlanBuilderTest, APluginsNcclIbHcaIsKeptForAShare) {
  auto claim = Claim("plugin", {"pci-0101-00-00-0"});
  claim.results[0].share_id = "share-a";
  InjectFunction inject = [&](const plugins::ClaimRef&, const std::vector<inventory::Device>&) {
    plugins::InjectionEdits edits;
    edits.env["NCCL_IB_HCA"] = "=mlx5_0:1";
    return edits;
  };
  EXPECT_EQ(BuildClaimPlan(claim, inventory_, options_, inject, host_state_).env.at("NCCL_IB_HCA"), "=mlx5_0:1");
}

TEST_F(PlanBuilderTest, ASharesProblemsAreRefusedAtPrepare) {
  auto claim = Claim("share", {"pci-0000-84-00-0"});
  claim.results[0].share_id = "share-a";
  auto no_rdma = inventory_;
  no_rdma[3].rdma_device.clear();
  try {
    BuildClaimPlan(claim, no_rdma, options_, {}, host_state_);
    ADD_FAILURE() << "a share of a device without RDMA was planned";
  } catch (const PrepareError& e) {
    EXPECT_THAT(e.what(), HasSubstr("claim ml/share: device pci-0000-84-00-0 (share share-a): it has neither an RDMA "
                                    "device nor an Ethernet netdev to share"));
  }
  options_.rdma_exclusive = true;
  EXPECT_THAT(ErrorOf(claim), HasSubstr("a share needs the kernel's shared RDMA netns mode"));
  options_.rdma_exclusive = false;
  claim.configs.push_back(Opaque(R"({"interface":{"name":"net1"}})"));
  EXPECT_THAT(ErrorOf(claim), HasSubstr("a share of an HCA without an Ethernet netdev configures nothing; its "
                                        "config may not set interface.name"));
  claim.configs = {Opaque(R"({"interface":{"mtu":4000}})", "FromClass")};  // a class's config counts too
  EXPECT_THAT(ErrorOf(claim), HasSubstr("may not set interface.mtu"));
  claim.configs = {Opaque(R"({})")};
  EXPECT_EQ(ErrorOf(claim), "");
  EXPECT_EQ(host_reads_, 0);
}

// A share of an Ethernet netdev (RoCE here) gets an IPVLAN child of it
// beside the HCA's char devices: the claim's addresses and routes only,
// never the host's, which stay with the netdev.
TEST_F(PlanBuilderTest, AShareOfAnEthernetNetdevGetsAChildWithOnlyTheClaimsNetwork) {
  inventory_[3].attributes[std::string(inventory::attr::kEncapsulation)] = std::string("ether");
  auto claim = Claim("child", {"pci-0000-84-00-0"});
  claim.results[0].share_id = "share-a";
  claim.configs.push_back(Opaque(R"({"interface":{"name":"net1","addresses":["192.168.1.50/24"],"mtu":4000,
      "arpIgnore":1},"routes":[{"destination":"10.10.0.0/16","gateway":"192.168.1.1"}]})"));
  auto plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  ASSERT_EQ(plan.netdevs.size(), 1U);
  const auto& child = plan.netdevs[0];
  EXPECT_EQ(child.child_type, "ipvlan");
  EXPECT_EQ(child.child_mode, "l2");
  EXPECT_EQ(child.host_if_name, "gpu0rdma0");
  EXPECT_EQ(child.pod_if_name, "net1");
  EXPECT_EQ(child.mtu, 4000U);
  EXPECT_EQ(child.settings.arp_ignore, 1);
  EXPECT_EQ(child.addresses, std::vector<std::string>{"192.168.1.50/24"});
  ASSERT_EQ(child.routes.size(), 1U);  // the host's 192.168.1.0/24 and 10.9.0.0/16 stay on the host
  EXPECT_EQ(child.routes[0].destination, "10.10.0.0/16");
  EXPECT_TRUE(child.rules.empty());
  EXPECT_TRUE(child.neighbors.empty());
  EXPECT_FALSE(child.rdma_exclusive);
  EXPECT_EQ(NodePaths(plan), (std::set<std::string>{"/dev/infiniband/rdma_cm", "/dev/infiniband/umad4",
                                                     "/dev/infiniband/uverbs4"}));
  EXPECT_EQ(plan.env.at("NCCL_IB_HCA"), "=mlx5_4");
  EXPECT_EQ(plan.devices[0].share_id, "share-a");
  // No config: a child named as the netdev, without any address.
  claim.configs.clear();
  plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  ASSERT_EQ(plan.netdevs.size(), 1U);
  EXPECT_EQ(plan.netdevs[0].pod_if_name, "gpu0rdma0");
  EXPECT_TRUE(plan.netdevs[0].addresses.empty());
  EXPECT_TRUE(plan.netdevs[0].routes.empty());
  // A macvlan child may have a MAC of its own.
  claim.configs.push_back(Opaque(R"({"interface":{"type":"macvlan","macvlan":{"mode":"vepa"},
      "hardwareAddr":"02:00:00:00:aa:01"}})"));
  plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  EXPECT_EQ(plan.netdevs[0].child_type, "macvlan");
  EXPECT_EQ(plan.netdevs[0].child_mode, "vepa");
  EXPECT_EQ(plan.netdevs[0].settings.mac, "02:00:00:00:aa:01");
}

// A device held alone gets a child where its config asks for one (DRANET's
// interface.type: ipvlan, for a bond that must stay on the host).
TEST_F(PlanBuilderTest, ADeviceHeldAloneGetsAChildWhenTheConfigAsks) {
  inventory_[3].attributes[std::string(inventory::attr::kEncapsulation)] = std::string("ether");
  auto claim = Claim("alone", {"pci-0000-84-00-0"});
  claim.configs.push_back(Opaque(R"({"interface":{"type":"ipvlan","ipvlan":{"mode":"l3"},
      "addresses":["192.168.1.60/24"]}})"));
  auto plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  ASSERT_EQ(plan.netdevs.size(), 1U);
  EXPECT_EQ(plan.netdevs[0].child_type, "ipvlan");
  EXPECT_EQ(plan.netdevs[0].child_mode, "l3");
  claim.configs = {Opaque(R"({"interface":{"type":"passthrough"}})")};
  plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  EXPECT_EQ(plan.netdevs[0].child_type, "");  // moved, with the host's addresses
  EXPECT_EQ(plan.netdevs[0].addresses, std::vector<std::string>{"192.168.1.2/32"});
  // addressing: unnumbered moves it without any address.
  claim.configs = {Opaque(R"({"interface":{"type":"passthrough","addressing":"unnumbered"}})")};
  plan = BuildClaimPlan(claim, inventory_, options_, {}, host_state_);
  EXPECT_TRUE(plan.netdevs[0].addresses.empty());
}

TEST_F(PlanBuilderTest, AChildsProblemsAreRefusedAtPrepare) {
  inventory_[3].attributes[std::string(inventory::attr::kEncapsulation)] = std::string("ether");
  auto claim = Claim("bad", {"pci-0000-84-00-0"});
  claim.results[0].share_id = "share-a";
  claim.configs = {Opaque(R"({"interface":{"type":"passthrough"}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("device pci-0000-84-00-0 (share share-a): interface.type \"passthrough\" "
                                        "moves the netdev into the pod, and a share leaves it on the host"));
  claim.configs = {Opaque(R"({"interface":{"hardwareAddr":"02:00:00:00:aa:01","dhcp":true}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("(share share-a): interface.hardwareAddr: an IPVLAN child has its parent's "
                                        "MAC; interface.type \"macvlan\" gives the pod an address of its own"));
  claim.configs = {Opaque(R"({"interface":{"type":"macvlan","dhcp":true}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("(share share-a): interface.dhcp: a macvlan child takes static addresses "
                                        "(interface.addresses) or none; an IPVLAN child can have a DHCP lease"));
  claim.configs = {Opaque(R"({"interface":{"mtu":9000}})")};
  EXPECT_THAT(ErrorOf(claim), HasSubstr("config sets interface.mtu 9000 but netdev gpu0rdma0 has 8896, and a child's "
                                        "MTU (ipvlan) is at most its parent's"));
  // gpu1rdma0 is not Ethernet here (IPoIB): no child of it.
  auto alone = Claim("ib", {"pci-0000-85-00-0"});
  alone.configs = {Opaque(R"({"interface":{"type":"macvlan"}})")};
  EXPECT_THAT(ErrorOf(alone), HasSubstr("config sets interface.type \"macvlan\" but netdev gpu1rdma0 is not "
                                        "Ethernet"));
}

TEST(TopLevelRequest, StripsSubrequest) {
  EXPECT_EQ(TopLevelRequest("nic/sub"), "nic");
  EXPECT_EQ(TopLevelRequest("nic"), "nic");
}

}  // namespace
}  // namespace dranet::kubelet
