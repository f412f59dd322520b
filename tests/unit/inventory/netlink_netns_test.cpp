// Root tests of ReadLiveNetlinkFacts on a real network namespace: metric
// ties and multipath default routes exclude every uplink (a libnl route
// cache would merge the tied IPv4 routes into one), and routes in other
// tables, rules and permanent neighbours are read with the right fields.
// Skipped unless root with `ip netns`; each test uses its own namespace,
// named after the pid, and removes it even when an assertion fails.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "inventory/netlink_facts.h"

namespace dranet::inventory {
namespace {

bool Shell(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()) == 0; }

// ReadLiveNetlinkFacts on a thread that joined `netns`; `error_out` names the
// step that failed, if any.
NetlinkFacts ReadFactsIn(const std::string& netns, std::string* error_out) {
  NetlinkFacts facts;
  std::thread reader([&] {
    int fd = ::open(("/var/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *error_out = "open netns " + netns;
      return;
    }
    int joined = ::setns(fd, CLONE_NEWNET);
    ::close(fd);
    if (joined != 0) {
      *error_out = "setns " + netns;
      return;
    }
    facts = ReadLiveNetlinkFacts(NullLogger());
  });
  reader.join();
  return facts;
}

class NetlinkNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    if (!Shell("ip netns list")) GTEST_SKIP() << "needs iproute2 with `ip netns`";
    static std::atomic<int> sequence{0};
    std::string id = std::to_string(::getpid()) + "-" + std::to_string(sequence++);
    netns_ = "dranet-nl-" + id;
    if (!Shell("ip netns add " + netns_)) {
      netns_.clear();
      GTEST_SKIP() << "cannot create a network namespace";
    }
    // veth pairs with both ends inside the namespace (no dummy driver needed).
    std::string tag = std::to_string(::getpid() % 1000000);
    uplink1_ = "nlu" + tag + "a";
    uplink2_ = "nlu" + tag + "b";
    other_ = "nlo" + tag;
    int n = 0;
    for (const auto& name : {uplink1_, uplink2_, other_}) {
      std::string peer = "nlp" + tag + std::to_string(n);
      ASSERT_TRUE(Ip("link add " + name + " type veth peer name " + peer));
      ASSERT_TRUE(Ip("link set " + name + " up"));
      ASSERT_TRUE(Ip("link set " + peer + " up"));
      ++n;
      ASSERT_TRUE(Ip("addr add 10.0." + std::to_string(n) + ".2/24 dev " + name));
      ASSERT_TRUE(Ip("-6 addr add 2001:db8:" + std::to_string(n) + "::2/64 dev " + name + " nodad"));
    }
  }
  void TearDown() override {
    if (!netns_.empty()) Shell("ip netns del " + netns_);
  }

  bool Ip(const std::string& arguments) { return Shell("ip -n " + netns_ + " " + arguments); }

  NetlinkFacts Facts() {
    std::string error;
    NetlinkFacts facts = ReadFactsIn(netns_, &error);
    EXPECT_EQ(error, "");
    return facts;
  }

  static int Index(const NetlinkFacts& facts, const std::string& name) {
    for (const auto& link : facts.links) {
      if (link.name == name) return link.ifindex;
    }
    ADD_FAILURE() << "no link " << name;
    return -1;
  }

  // Main-table default routes of `family`.
  static std::vector<RouteFacts> Defaults(const NetlinkFacts& facts, int family) {
    std::vector<RouteFacts> routes;
    for (const auto& route : facts.routes) {
      if (route.family == family && route.table == RT_TABLE_MAIN && route.IsDefault()) routes.push_back(route);
    }
    return routes;
  }

  std::string netns_, uplink1_, uplink2_, other_;
};

TEST_F(NetlinkNetnsTest, TwoIpv4DefaultRoutesWithEqualMetricAreBothRead) {
  ASSERT_TRUE(Ip("route add default via 10.0.1.1 dev " + uplink1_ + " metric 100"));
  ASSERT_TRUE(Ip("route append default via 10.0.2.1 dev " + uplink2_ + " metric 100"));
  auto facts = Facts();
  int one = Index(facts, uplink1_), two = Index(facts, uplink2_);
  auto defaults = Defaults(facts, AF_INET);
  ASSERT_EQ(defaults.size(), 2u) << "a route cache would have merged the tie into one route";
  EXPECT_EQ(defaults[0].nexthops, (std::vector<RouteNexthop>{{one, "10.0.1.1", 1}}));
  EXPECT_EQ(defaults[1].nexthops, (std::vector<RouteNexthop>{{two, "10.0.2.1", 1}}));
  for (const auto& route : defaults) {
    EXPECT_EQ(route.destination, "0.0.0.0/0");
    EXPECT_EQ(route.metric, 100u);
    EXPECT_EQ(route.type, RTN_UNICAST);
    EXPECT_EQ(route.scope, RT_SCOPE_UNIVERSE);
    EXPECT_EQ(route.protocol, RTPROT_BOOT);  // iproute2's default
  }
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), (std::set<std::string>{uplink1_, uplink2_}));
}

// The MTU range the driver accepts comes from the kernel (veth: 68..65535),
// so prepare can refuse a claim MTU the netdev would reject at pod start.
TEST_F(NetlinkNetnsTest, LinksCarryTheMtuRangeTheirDriverAccepts) {
  auto facts = Facts();
  for (const auto& link : facts.links) {
    if (link.name != uplink1_) continue;
    EXPECT_EQ(link.min_mtu, 68u);
    EXPECT_EQ(link.max_mtu, 65535u);
    return;
  }
  FAIL() << "no link " << uplink1_;
}

TEST_F(NetlinkNetnsTest, MultipathIpv4DefaultRouteExcludesEveryNextHop) {
  ASSERT_TRUE(Ip("route add default nexthop via 10.0.1.1 dev " + uplink1_ + " nexthop via 10.0.2.1 dev " +
                 uplink2_ + " weight 3"));
  auto facts = Facts();
  auto defaults = Defaults(facts, AF_INET);
  ASSERT_EQ(defaults.size(), 1u);
  EXPECT_EQ(defaults[0].nexthops, (std::vector<RouteNexthop>{{Index(facts, uplink1_), "10.0.1.1", 1},
                                                             {Index(facts, uplink2_), "10.0.2.1", 3}}));
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), (std::set<std::string>{uplink1_, uplink2_}));
}

TEST_F(NetlinkNetnsTest, Ipv6DefaultRoutesWithEqualMetricExcludeBothUplinks) {
  // IPv6 merges an appended equal-metric route into one multipath route.
  ASSERT_TRUE(Ip("-6 route add default via 2001:db8:1::1 dev " + uplink1_ + " metric 100"));
  ASSERT_TRUE(Ip("-6 route append default via 2001:db8:2::1 dev " + uplink2_ + " metric 100"));
  auto facts = Facts();
  auto defaults = Defaults(facts, AF_INET6);
  std::vector<RouteNexthop> hops;
  for (const auto& route : defaults) {
    EXPECT_EQ(route.destination, "::/0");
    EXPECT_EQ(route.metric, 100u);
    hops.insert(hops.end(), route.nexthops.begin(), route.nexthops.end());
  }
  EXPECT_EQ(hops, (std::vector<RouteNexthop>{{Index(facts, uplink1_), "2001:db8:1::1", 1},
                                             {Index(facts, uplink2_), "2001:db8:2::1", 1}}));
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), (std::set<std::string>{uplink1_, uplink2_}));
}

TEST_F(NetlinkNetnsTest, OtherTablesRulesAndPermanentNeighboursAreRead) {
  ASSERT_TRUE(Ip("route add default via 10.0.1.1 dev " + uplink1_ + " metric 100"));
  ASSERT_TRUE(Ip("route add 10.9.0.0/16 via 10.0.3.1 dev " + other_ + " table 1000 proto static metric 7"));
  ASSERT_TRUE(Ip("route add blackhole 10.66.0.0/16 table 1000"));
  ASSERT_TRUE(Ip("rule add from 10.1.0.0/24 lookup 101 pref 1000"));
  ASSERT_TRUE(Ip("rule add fwmark 0x5 lookup 102 pref 1001"));
  ASSERT_TRUE(Ip("-6 rule add to 2001:db8:9::/48 lookup 103 pref 1002"));
  ASSERT_TRUE(Ip("neigh add 10.0.3.9 lladdr 02:AA:bb:cc:dd:ee dev " + other_ + " nud permanent"));
  ASSERT_TRUE(Ip("neigh add 10.0.3.10 lladdr 02:00:00:00:00:10 dev " + other_ + " nud reachable"));
  ASSERT_TRUE(Ip("-6 neigh add 2001:db8:3::9 lladdr 02:00:00:00:00:99 dev " + other_ + " nud permanent"));
  auto facts = Facts();
  int other = Index(facts, other_);

  RouteFacts table_route;
  table_route.family = AF_INET;
  table_route.destination = "10.9.0.0/16";
  table_route.table = 1000;  // above 255: only RTA_TABLE carries it
  table_route.metric = 7;
  table_route.protocol = RTPROT_STATIC;
  table_route.nexthops = {{other, "10.0.3.1", 1}};
  RouteFacts blackhole;
  blackhole.family = AF_INET;
  blackhole.destination = "10.66.0.0/16";
  blackhole.table = 1000;
  blackhole.protocol = RTPROT_BOOT;
  blackhole.type = RTN_BLACKHOLE;
  RouteFacts connected;  // the kernel's prefix route
  connected.family = AF_INET;
  connected.destination = "10.0.3.0/24";
  connected.source = "10.0.3.2";
  connected.scope = RT_SCOPE_LINK;
  connected.protocol = RTPROT_KERNEL;
  connected.nexthops = {{other, "", 1}};
  for (const auto& expected : {table_route, blackhole, connected}) {
    EXPECT_NE(std::find(facts.routes.begin(), facts.routes.end(), expected), facts.routes.end())
        << expected.destination << " table " << expected.table;
  }
  EXPECT_TRUE(std::none_of(facts.routes.begin(), facts.routes.end(),
                           [](const RouteFacts& route) { return route.table == RT_TABLE_LOCAL; }));

  auto has_rule = [&](const RuleFacts& rule) {
    return std::find(facts.rules.begin(), facts.rules.end(), rule) != facts.rules.end();
  };
  EXPECT_TRUE(has_rule({AF_INET, 1000, "10.1.0.0/24", "", 101, FR_ACT_TO_TBL, false}));
  EXPECT_TRUE(has_rule({AF_INET, 1001, "", "", 102, FR_ACT_TO_TBL, true}));  // fwmark
  EXPECT_TRUE(has_rule({AF_INET6, 1002, "", "2001:db8:9::/48", 103, FR_ACT_TO_TBL, false}));
  EXPECT_TRUE(has_rule({AF_INET, 0, "", "", RT_TABLE_LOCAL, FR_ACT_TO_TBL, false}));
  EXPECT_TRUE(has_rule({AF_INET, 32766, "", "", RT_TABLE_MAIN, FR_ACT_TO_TBL, false}));
  EXPECT_TRUE(has_rule({AF_INET6, 32766, "", "", RT_TABLE_MAIN, FR_ACT_TO_TBL, false}));
  EXPECT_TRUE(std::is_sorted(facts.rules.begin(), facts.rules.end(),
                             [](const RuleFacts& a, const RuleFacts& b) { return a.priority < b.priority; }));
  EXPECT_TRUE(std::all_of(facts.rules.begin(), facts.rules.end(), [](const RuleFacts& rule) {
    return rule.family == AF_INET || rule.family == AF_INET6;  // no ipmr/ip6mr rules
  }));

  EXPECT_EQ(facts.neighbors, (std::vector<NeighborFacts>{{other, AF_INET, "10.0.3.9", "02:aa:bb:cc:dd:ee"},
                                                         {other, AF_INET6, "2001:db8:3::9", "02:00:00:00:00:99"}}));
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), std::set<std::string>{uplink1_});
}

}  // namespace
}  // namespace dranet::inventory
