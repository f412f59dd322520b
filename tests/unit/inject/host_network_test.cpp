// What prepare takes from the host for a netdev (inject/host_network.h), on
// the layout of a GKE A4 RDMA NIC (a /32 with DHCP option 121 routes) and on
// the cases the harvest must leave out.
#include "inject/host_network.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

inventory::RouteFacts RouteVia(const std::string& dst, int ifindex, const std::string& gw, uint8_t scope,
                               uint32_t table = RT_TABLE_MAIN, int family = AF_INET) {
  inventory::RouteFacts r;
  r.family = family;
  r.destination = dst;
  r.scope = scope;
  r.table = table;
  r.metric = 100;
  r.protocol = RTPROT_DHCP;
  r.nexthops = {{ifindex, gw, 1}};
  return r;
}

// eth0 (ifindex 2) is the uplink, gpu0rdma0 (3) an A4 RDMA NIC, gpu1rdma0 (4) another.
inventory::NetlinkFacts A4Host() {
  inventory::NetlinkFacts facts;
  facts.links = {{2, "eth0", IFF_UP, 1460, "up", "", 1, "42:01:0a:00:00:02", "", 0, 0, {"10.0.0.2/32"}},
                 {3, "gpu0rdma0", IFF_UP, 8896, "up", "", 1, "9a:41:2e:4f:86:16", "", 0, 0,
                  {"192.168.1.4/32", "fe80::1/64"}},
                 {4, "gpu1rdma0", 0, 8896, "down", "", 1, "9a:41:2e:4f:86:17", "", 0, 0, {"192.168.2.4/32"}}};
  facts.routes = {
      RouteVia("0.0.0.0/0", 2, "10.0.0.1", RT_SCOPE_UNIVERSE),
      RouteVia("192.168.1.1/32", 3, "", RT_SCOPE_LINK),
      RouteVia("192.168.1.0/24", 3, "192.168.1.1", RT_SCOPE_UNIVERSE),
      RouteVia("192.168.2.1/32", 4, "", RT_SCOPE_LINK),
      RouteVia("0.0.0.0/0", 3, "192.168.1.1", RT_SCOPE_UNIVERSE, 101),  // its policy-routing table's default
      RouteVia("10.200.0.0/16", 3, "192.168.1.1", RT_SCOPE_UNIVERSE, 101),
      RouteVia("fe80::/64", 3, "", RT_SCOPE_UNIVERSE, RT_TABLE_MAIN, AF_INET6),
      RouteVia("2001:db8::/64", 3, "", RT_SCOPE_UNIVERSE, RT_TABLE_MAIN, AF_INET6),
      RouteVia("2001:db8:1::/64", 3, "fe80::9", RT_SCOPE_UNIVERSE, RT_TABLE_MAIN, AF_INET6),
  };
  facts.routes[6].protocol = RTPROT_KERNEL;
  facts.routes[7].protocol = RTPROT_KERNEL;  // the kernel re-creates IPv6 prefix routes itself
  // A multipath route through gpu0rdma0 and gpu1rdma0.
  inventory::RouteFacts ecmp = RouteVia("172.16.0.0/12", 3, "192.168.1.1", RT_SCOPE_UNIVERSE);
  ecmp.nexthops.push_back({4, "192.168.2.1", 1});
  facts.routes.push_back(ecmp);
  inventory::RouteFacts broadcast = RouteVia("192.168.1.255/32", 3, "", RT_SCOPE_LINK);
  broadcast.type = RTN_BROADCAST;
  facts.routes.push_back(broadcast);
  // A second default route of the main table, behind the uplink's.
  inventory::RouteFacts second_default = RouteVia("0.0.0.0/0", 3, "192.168.1.1", RT_SCOPE_UNIVERSE);
  second_default.metric = 200;
  facts.routes.push_back(second_default);

  facts.rules = {{AF_INET, 0, "", "", RT_TABLE_LOCAL, FR_ACT_TO_TBL, false},
                 {AF_INET, 100, "192.168.1.0/24", "", 101, FR_ACT_TO_TBL, false},
                 {AF_INET, 101, "", "", 101, FR_ACT_TO_TBL, true},  // iif/fwmark selector: not copied
                 {AF_INET, 102, "192.168.2.0/24", "", 102, FR_ACT_TO_TBL, false},  // table of another NIC
                 {AF_INET, 32766, "", "", RT_TABLE_MAIN, FR_ACT_TO_TBL, false}};
  facts.neighbors = {{3, AF_INET, "192.168.1.1", "00:00:5e:00:01:01"}, {4, AF_INET, "192.168.2.1", "00:00:5e:00:01:02"}};
  return facts;
}

TEST(HarvestNetdevHostState, A4NicGetsItsGatewayAndSubnetRoutes) {
  const auto state = HarvestNetdevHostState(A4Host(), "gpu0rdma0");
  EXPECT_EQ(state.if_name, "gpu0rdma0");
  EXPECT_EQ(state.mtu, 8896U);
  EXPECT_TRUE(state.up);
  EXPECT_EQ(state.addresses, (std::vector<std::string>{"192.168.1.4/32", "fe80::1/64"}));
  const std::vector<Route> want = {
      {"192.168.1.1/32", "", "", 0, 100, RT_SCOPE_LINK, RTPROT_DHCP},
      {"192.168.1.0/24", "192.168.1.1", "", 0, 100, RT_SCOPE_UNIVERSE, RTPROT_DHCP},
      {"0.0.0.0/0", "192.168.1.1", "", 101, 100, RT_SCOPE_UNIVERSE, RTPROT_DHCP},
      {"10.200.0.0/16", "192.168.1.1", "", 101, 100, RT_SCOPE_UNIVERSE, RTPROT_DHCP},
      {"2001:db8:1::/64", "fe80::9", "", 0, 100, RT_SCOPE_UNIVERSE, RTPROT_DHCP},
      {"172.16.0.0/12", "192.168.1.1", "", 0, 100, RT_SCOPE_UNIVERSE, RTPROT_DHCP},
      {"0.0.0.0/0", "192.168.1.1", "", 0, 200, RT_SCOPE_UNIVERSE, RTPROT_DHCP},
  };
  // Default routes too: the host gets them back at teardown (which of them
  // the pod takes is the plan builder's choice, IsMainTableDefault).
  EXPECT_EQ(state.routes, want);
  EXPECT_EQ(state.rules, (std::vector<Rule>{{100, "192.168.1.0/24", "", 101, AF_INET}}));
  EXPECT_EQ(state.neighbors, (std::vector<Neighbor>{{"192.168.1.1", "00:00:5e:00:01:01"}}));
}

TEST(HarvestNetdevHostState, TakesOnlyItsOwnNexthopOfAMultipathRoute) {
  const auto state = HarvestNetdevHostState(A4Host(), "gpu1rdma0");
  EXPECT_FALSE(state.up);
  ASSERT_EQ(state.routes.size(), 2U);
  EXPECT_EQ(state.routes[1], (Route{"172.16.0.0/12", "192.168.2.1", "", 0, 100, RT_SCOPE_UNIVERSE, RTPROT_DHCP}));
  EXPECT_TRUE(state.rules.empty());  // table 102 holds no route of gpu1rdma0
}

// A NIC whose only route is its policy-routing table's default: the table
// and the rule that looks it up both come along.
TEST(HarvestNetdevHostState, APolicyTablesDefaultRouteBringsItsRule) {
  inventory::NetlinkFacts facts;
  facts.links = {{3, "eth1", IFF_UP, 1500, "up", "", 1, "00:0d:3a:aa:bb:01", "", 0, 0, {"10.1.0.4/24"}}};
  facts.routes = {RouteVia("0.0.0.0/0", 3, "10.1.0.1", RT_SCOPE_UNIVERSE, 101)};
  facts.rules = {{AF_INET, 32000, "10.1.0.0/24", "", 101, FR_ACT_TO_TBL, false}};
  const auto state = HarvestNetdevHostState(facts, "eth1");
  EXPECT_EQ(state.routes, (std::vector<Route>{{"0.0.0.0/0", "10.1.0.1", "", 101, 100, RT_SCOPE_UNIVERSE, RTPROT_DHCP}}));
  EXPECT_EQ(state.rules, (std::vector<Rule>{{32000, "10.1.0.0/24", "", 101, AF_INET}}));
}

TEST(IsMainTableDefault, OnlyDefaultRoutesOfTheMainTable) {
  EXPECT_TRUE(IsMainTableDefault({"0.0.0.0/0", "10.0.0.1", "", 0, 0, 0, 0}));
  EXPECT_TRUE(IsMainTableDefault({"::/0", "fe80::1", "", 254, 0, 0, 0}));
  EXPECT_FALSE(IsMainTableDefault({"0.0.0.0/0", "10.0.0.1", "", 101, 0, 0, 0}));
  EXPECT_FALSE(IsMainTableDefault({"10.0.0.0/8", "10.0.0.1", "", 0, 0, 0, 0}));
}

TEST(HarvestNetdevHostState, MissingNetdevIsAnError) {
  EXPECT_THROW(HarvestNetdevHostState(A4Host(), "gpu9rdma0"), InjectError);
}

TEST(MergeRoutes, LaterSourceWinsByDestinationAndTable) {
  const std::vector<Route> host = {{"192.168.1.1/32", "", "", 0, 100, RT_SCOPE_LINK, RTPROT_DHCP},
                                   {"192.168.1.0/24", "192.168.1.1", "", 0, 100, 0, RTPROT_DHCP}};
  const std::vector<Route> claim = {{"192.168.1.0/24", "192.168.1.9", "", 254, 0, 0, 0},  // 254 is main too
                                    {"192.168.1.0/24", "192.168.1.1", "", 7, 0, 0, 0},
                                    {"10.0.0.0/8", "192.168.1.1", "", 0, 0, 0, 0}};
  const auto merged = MergeRoutes(host, claim);
  ASSERT_EQ(merged.size(), 4U);
  EXPECT_EQ(merged[0], host[0]);
  EXPECT_EQ(merged[1], claim[0]);  // replaced in place
  EXPECT_EQ(merged[2], claim[1]);
  EXPECT_EQ(merged[3], claim[2]);
}

TEST(MergeRulesAndNeighbors, IdenticalRulesAreOneAndTheLaterMacWins) {
  const std::vector<Rule> rules = {{100, "192.168.1.0/24", "", 101, AF_INET}};
  EXPECT_EQ(MergeRules(rules, rules).size(), 1U);
  EXPECT_EQ(MergeRules(rules, {{101, "192.168.1.0/24", "", 101, AF_INET}}).size(), 2U);
  const auto neighbors = MergeNeighbors({{"192.168.1.1", "00:00:5e:00:01:01"}},
                                        {{"192.168.1.1", "02:00:00:00:00:01"}, {"192.168.1.2", "02:00:00:00:00:02"}});
  EXPECT_EQ(neighbors, (std::vector<Neighbor>{{"192.168.1.1", "02:00:00:00:00:01"}, {"192.168.1.2", "02:00:00:00:00:02"}}));
}

}  // namespace
}  // namespace dranet::inject
