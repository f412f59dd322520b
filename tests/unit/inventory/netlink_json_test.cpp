// netlink.json: formatVersion 2 (routes in every table, rules, permanent
// neighbours) read from hand-written files, formatVersion 1 files still
// loading, names the snapshot does not have being dropped, the writer ->
// reader round trip through CaptureSnapshot, and the uplink rule on routes.
#include <gtest/gtest.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "fake_host.h"
#include "inventory/inventory.h"
#include "inventory/netlink_facts.h"
#include "inventory/snapshot.h"
#include "test_support.h"

namespace dranet::inventory {
namespace {

namespace fs = std::filesystem;
using testing::CapturedLog;
using testing::FakeHost;
using testing::NodeSnapshot;

// lo (1), eth0 (2), eth1 (3), gpu0 (4): the links every test here uses.
void AddLinks(FakeHost& host) {
  host.Netdev("", "lo", 1);
  host.Netdev("", "eth0", 2, "", {"10.0.0.4/24"});
  host.Netdev("", "eth1", 3, "", {"10.0.1.4/24"});
  host.Netdev("", "gpu0", 4, "", {"192.168.1.4/32"});
}

RouteFacts Route(int family, std::string destination, std::vector<RouteNexthop> nexthops, uint32_t metric = 0) {
  RouteFacts route;
  route.family = family;
  route.destination = std::move(destination);
  route.nexthops = std::move(nexthops);
  route.metric = metric;
  return route;
}

TEST(NetlinkJson, Version1DefaultRoutesStillLoadAndExcludeTheirUplinks) {
  FakeHost host;
  AddLinks(host);
  host.V1DefaultRoute("inet", 100, {"eth0"});
  host.V1DefaultRoute("inet", 100, {"eth1", "gone0"});  // multipath; gone0 is not a link
  host.V1DefaultRoute("inet6", 50, {"gpu0"});
  host.V1DefaultRoute("inet", 10, {"gone1"});            // only unknown names: dropped whole
  host.WriteNetlinkJson(1);
  CapturedLog captured;
  auto facts = ReadSnapshotNetlinkFacts(host.root(), captured.log);

  RouteFacts eth0 = Route(AF_INET, "0.0.0.0/0", {{2, "", 1}}, 100);
  RouteFacts eth1 = Route(AF_INET, "0.0.0.0/0", {{3, "", 1}}, 100);
  RouteFacts gpu0 = Route(AF_INET6, "::/0", {{4, "", 1}}, 50);
  for (auto* route : {&eth0, &eth1, &gpu0}) {
    route->table = RT_TABLE_MAIN;
    route->type = RTN_UNICAST;
    route->scope = RT_SCOPE_UNIVERSE;
    route->protocol = RTPROT_UNSPEC;  // v1 did not record it
  }
  EXPECT_EQ(facts.routes, (std::vector<RouteFacts>{eth0, eth1, gpu0}));
  EXPECT_TRUE(facts.rules.empty());
  EXPECT_TRUE(facts.neighbors.empty());
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), (std::set<std::string>{"eth0", "eth1", "gpu0"}));
  EXPECT_NE(captured.text().find("gone0"), std::string::npos) << captured.text();
  EXPECT_NE(captured.text().find("gone1"), std::string::npos) << captured.text();
}

// The uplink is a bridge whose port is a bond over two NICs: every level
// under the bridge carries the node's traffic and is excluded, whatever the
// order the kernel lists the links in; links beside them are not.
TEST(NetlinkJson, EveryLevelEnslavedUnderTheUplinkIsExcluded) {
  for (const bool children_first : {false, true}) {
    NetlinkFacts facts;
    auto link = [&](int index, const char* name, int master) {
      LinkFacts l;
      l.ifindex = index;
      l.name = name;
      l.master_index = master;
      facts.links.push_back(l);
    };
    const int br = children_first ? 6 : 2, bond = children_first ? 5 : 3;
    const int eth0 = children_first ? 2 : 5, eth1 = children_first ? 3 : 6;
    link(1, "lo", 0);
    link(br, "br0", 0);
    link(bond, "bond0", br);
    link(eth0, "eth0", bond);
    link(eth1, "eth1", bond);
    link(4, "gpu0rdma0", 0);
    link(7, "veth1", br);  // a second port of the bridge
    std::sort(facts.links.begin(), facts.links.end(), [](const auto& a, const auto& b) { return a.ifindex < b.ifindex; });
    RouteFacts uplink = Route(AF_INET, "0.0.0.0/0", {{br, "10.0.0.1", 1}}, 100);
    uplink.table = RT_TABLE_MAIN;
    uplink.type = RTN_UNICAST;
    facts.routes = {uplink};
    EXPECT_EQ(ExcludedUplinkInterfaces(facts), (std::set<std::string>{"br0", "bond0", "eth0", "eth1", "veth1"}))
        << (children_first ? "NICs listed before their bond and bridge" : "bridge listed first");
  }
}

// The exact bytes a formatVersion 1 capture wrote (tests/nodes before v2).
TEST(NetlinkJson, Version1FileAsCapturedLoads) {
  FakeHost host;
  AddLinks(host);
  host.File(kSnapshotNetlinkFile, R"({
  "formatVersion": 1,
  "links": [{"addresses": ["10.0.0.4/24"], "kind": "", "name": "eth0"}],
  "routes": [{"destination": "default", "family": "inet", "interfaces": ["eth0"], "metric": 100}]
})");
  auto facts = ReadSnapshotNetlinkFacts(host.root(), NullLogger());
  ASSERT_EQ(facts.routes.size(), 1u);
  EXPECT_TRUE(facts.routes[0].IsDefault());
  EXPECT_EQ(facts.routes[0].nexthops, (std::vector<RouteNexthop>{{2, "", 1}}));
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), std::set<std::string>{"eth0"});
}

constexpr const char* kVersion2 = R"({
  "formatVersion": 2,
  "links": [],
  "routes": [
    {"family": "inet", "destination": "default", "gateway": "10.0.0.1", "interface": "eth0",
     "source": "10.0.0.4", "scope": "universe", "table": "main", "metric": 100, "protocol": "dhcp",
     "type": "unicast"},
    {"family": "inet", "destination": "192.168.1.1/32", "interface": "gpu0", "source": "192.168.1.4",
     "scope": "link", "table": "main", "metric": 100, "protocol": "dhcp", "type": "unicast"},
    {"family": "inet", "destination": "10.9.0.0/16", "table": 1000, "metric": 0, "protocol": "static",
     "scope": "universe", "type": "unicast",
     "nexthops": [{"interface": "eth0", "gateway": "10.0.0.1", "weight": 1},
                  {"interface": "eth1", "gateway": "10.0.1.1", "weight": 3}]},
    {"family": "inet6", "destination": "2001:db8::/64", "interface": "eth1", "scope": "universe",
     "table": "main", "metric": 256, "protocol": "kernel", "type": "unicast"},
    {"family": "inet", "destination": "10.66.0.0/16", "scope": "universe", "table": 200, "metric": 0,
     "protocol": 42, "type": "blackhole"}
  ],
  "rules": [
    {"family": "inet", "priority": 0, "table": "local", "action": "lookup"},
    {"family": "inet", "priority": 32765, "source": "10.1.0.0/24", "table": 101, "action": "lookup"},
    {"family": "inet6", "priority": 100, "destination": "2001:db8::/32", "table": "main", "otherSelectors": true},
    {"family": "inet", "priority": 200, "table": 0, "action": "blackhole"}
  ],
  "neighbors": [
    {"interface": "gpu0", "destination": "192.168.1.9", "lladdr": "02:AA:bb:cc:dd:ee"},
    {"interface": "eth1", "destination": "2001:db8::9", "lladdr": "02:00:00:00:00:09"}
  ]
})";

TEST(NetlinkJson, Version2HandWrittenFileReadsEveryField) {
  FakeHost host;
  AddLinks(host);
  host.File(kSnapshotNetlinkFile, kVersion2);
  CapturedLog captured;
  auto facts = ReadSnapshotNetlinkFacts(host.root(), captured.log);
  EXPECT_EQ(captured.text().find("ignoring"), std::string::npos) << captured.text();

  RouteFacts gateway_default = Route(AF_INET, "0.0.0.0/0", {{2, "10.0.0.1", 1}}, 100);
  gateway_default.source = "10.0.0.4";
  gateway_default.protocol = RTPROT_DHCP;
  RouteFacts gateway_link = Route(AF_INET, "192.168.1.1/32", {{4, "", 1}}, 100);
  gateway_link.source = "192.168.1.4";
  gateway_link.scope = RT_SCOPE_LINK;
  gateway_link.protocol = RTPROT_DHCP;
  RouteFacts multipath = Route(AF_INET, "10.9.0.0/16", {{2, "10.0.0.1", 1}, {3, "10.0.1.1", 3}});
  multipath.table = 1000;
  multipath.protocol = RTPROT_STATIC;
  RouteFacts v6 = Route(AF_INET6, "2001:db8::/64", {{3, "", 1}}, 256);
  v6.protocol = RTPROT_KERNEL;
  RouteFacts blackhole = Route(AF_INET, "10.66.0.0/16", {});
  blackhole.table = 200;
  blackhole.protocol = 42;
  blackhole.type = RTN_BLACKHOLE;
  EXPECT_EQ(facts.routes, (std::vector<RouteFacts>{gateway_default, gateway_link, multipath, v6, blackhole}));

  EXPECT_EQ(facts.rules, (std::vector<RuleFacts>{
                             {AF_INET, 0, "", "", RT_TABLE_LOCAL, FR_ACT_TO_TBL, false},
                             {AF_INET, 32765, "10.1.0.0/24", "", 101, FR_ACT_TO_TBL, false},
                             {AF_INET6, 100, "", "2001:db8::/32", RT_TABLE_MAIN, FR_ACT_TO_TBL, true},
                             {AF_INET, 200, "", "", 0, FR_ACT_BLACKHOLE, false},
                         }));
  EXPECT_EQ(facts.neighbors, (std::vector<NeighborFacts>{{4, AF_INET, "192.168.1.9", "02:aa:bb:cc:dd:ee"},
                                                         {3, AF_INET6, "2001:db8::9", "02:00:00:00:00:09"}}));
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), std::set<std::string>{"eth0"});
}

TEST(NetlinkJson, NamesThatAreNotLinksAreDroppedWithAWarning) {
  FakeHost host;
  AddLinks(host);
  host.Route(R"({"family":"inet","destination":"default","interface":"ghost0","metric":1})");
  host.Route(R"({"family":"inet","destination":"default","metric":5,)"
             R"("nexthops":[{"interface":"eth1","weight":1},{"interface":"ghost1","weight":1}]})");
  host.Neighbor(R"({"interface":"ghost2","destination":"10.0.0.9","lladdr":"02:00:00:00:00:09"})");
  host.Neighbor(R"({"interface":"eth0","destination":"10.0.0.8","lladdr":"02:00:00:00:00:08"})");
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto facts = ReadSnapshotNetlinkFacts(host.root(), captured.log);
  ASSERT_EQ(facts.routes.size(), 1u);
  EXPECT_EQ(facts.routes[0].metric, 5u);
  EXPECT_EQ(facts.routes[0].nexthops, (std::vector<RouteNexthop>{{3, "", 1}}));
  EXPECT_EQ(facts.neighbors, (std::vector<NeighborFacts>{{2, AF_INET, "10.0.0.8", "02:00:00:00:00:08"}}));
  for (const char* name : {"ghost0", "ghost1", "ghost2"}) {
    EXPECT_NE(captured.text().find(name), std::string::npos) << name << " not logged: " << captured.text();
  }
  // The route through the unknown ghost0 (metric 1) is gone, so eth1 is the uplink.
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), std::set<std::string>{"eth1"});
}

TEST(NetlinkJson, MalformedEntriesAreDroppedOthersKept) {
  FakeHost host;
  AddLinks(host);
  host.Route(R"({"family":"ipx","destination":"default","interface":"eth0"})");
  host.Route(R"({"family":"inet","destination":"10.0.0.0/33","interface":"eth0"})");
  host.Route(R"({"family":"inet","destination":"2001:db8::/64","interface":"eth0"})");
  host.Route(R"({"family":"inet","destination":"default","interface":"eth0","scope":"galaxy"})");
  host.Route(R"({"family":"inet","destination":"default","interface":"eth0","metric":-1})");
  host.Route(R"({"family":"inet","destination":"default","gateway":"not-an-ip","interface":"eth0"})");
  host.Route("42");
  host.Route(R"({"family":"inet","destination":"default","interface":"eth1"})");  // the good one
  host.Rule(R"({"family":"inet","priority":1,"source":"10.0.0.0","table":5})");
  host.Rule(R"({"family":"inet","priority":2,"table":"nosuchtable"})");
  host.Rule(R"({"family":"inet","priority":3,"table":7})");  // the good one
  host.Neighbor(R"({"interface":"eth0","destination":"10.0.0.300","lladdr":"02:00:00:00:00:08"})");
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto facts = ReadSnapshotNetlinkFacts(host.root(), captured.log);
  ASSERT_EQ(facts.routes.size(), 1u);
  EXPECT_EQ(facts.routes[0].nexthops, (std::vector<RouteNexthop>{{3, "", 1}}));
  ASSERT_EQ(facts.rules.size(), 1u);
  EXPECT_EQ(facts.rules[0].table, 7u);
  EXPECT_TRUE(facts.neighbors.empty());
  EXPECT_NE(captured.text().find("ignoring a netlink.json entry"), std::string::npos);
}

// A million nested arrays used to overflow the parser's stack (dranetd
// --once and dranetctl inspect died with SIGSEGV): now the file is refused
// with the reason, and nothing from it is used.
TEST(NetlinkJson, DeeplyNestedFileIsRefusedNotACrash) {
  FakeHost host;
  AddLinks(host);
  host.Route(std::string(1'000'000, '[') + std::string(1'000'000, ']'));
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto facts = ReadSnapshotNetlinkFacts(host.root(), captured.log);
  EXPECT_TRUE(facts.routes.empty());
  EXPECT_NE(captured.text().find("nested deeper than 128 levels"), std::string::npos) << captured.text();
}

TEST(NetlinkJson, CaptureWritesVersion2AndReadsBackTheSameFacts) {
  FakeHost host;
  AddLinks(host);
  host.File(kSnapshotNetlinkFile, kVersion2);
  auto original = ReadSnapshotNetlinkFacts(host.root(), NullLogger());
  ASSERT_EQ(original.routes.size(), 5u);

  std::string pattern = (fs::temp_directory_path() / "dranet-netlinkjson-XXXXXX").string();
  fs::path out = fs::path(mkdtemp(pattern.data())) / "snapshot";
  CaptureOptions capture;
  capture.host_root = host.root();
  CaptureSnapshot(out, capture, NullLogger());
  CapturedLog captured;
  auto recaptured = ReadSnapshotNetlinkFacts(out, captured.log);
  std::ifstream file(out / kSnapshotNetlinkFile);
  std::stringstream text;
  text << file.rdbuf();
  fs::remove_all(out.parent_path());

  EXPECT_EQ(captured.text().find("ignoring"), std::string::npos) << captured.text();
  EXPECT_EQ(recaptured.routes, original.routes);
  EXPECT_EQ(recaptured.rules, original.rules);
  EXPECT_EQ(recaptured.neighbors, original.neighbors);
  // Spelled as documented: names, not ifindexes; flat single next hops.
  EXPECT_NE(text.str().find("\"formatVersion\": 2"), std::string::npos);
  EXPECT_NE(text.str().find("\"destination\": \"default\""), std::string::npos);
  EXPECT_NE(text.str().find("\"interface\": \"gpu0\""), std::string::npos);
  EXPECT_NE(text.str().find("\"nexthops\""), std::string::npos);
  EXPECT_NE(text.str().find("\"protocol\": \"dhcp\""), std::string::npos);
  EXPECT_NE(text.str().find("\"protocol\": 42"), std::string::npos);
  EXPECT_NE(text.str().find("\"table\": 1000"), std::string::npos);
  EXPECT_NE(text.str().find("\"otherSelectors\": true"), std::string::npos);
  EXPECT_EQ(text.str().find("\"interfaces\""), std::string::npos) << "v1 spelling written";
  // Each link's own facts are recorded too, and read back from the file.
  EXPECT_NE(text.str().find("\"ifindex\": 4"), std::string::npos);
  EXPECT_NE(text.str().find("\"mtu\": 1500"), std::string::npos);
  ASSERT_EQ(recaptured.links.size(), original.links.size());
  for (std::size_t i = 0; i < original.links.size(); ++i) {
    const LinkFacts& a = original.links[i];
    const LinkFacts& b = recaptured.links[i];
    EXPECT_EQ(std::tie(a.name, a.ifindex, a.flags, a.mtu, a.arp_type, a.operstate, a.mac, a.master_index, a.kind,
                       a.addresses),
              std::tie(b.name, b.ifindex, b.flags, b.mtu, b.arp_type, b.operstate, b.mac, b.master_index, b.kind,
                       b.addresses));
  }
}

TEST(NetlinkJson, BundledSnapshotsRoundTripThroughCapture) {
  for (const char* name : {"a4-highgpu-8g", "nd-gb300-v6", "nd-mi300x-v5"}) {
    SCOPED_TRACE(name);
    auto original = ReadSnapshotNetlinkFacts(NodeSnapshot(name), NullLogger());
    std::string pattern = (fs::temp_directory_path() / "dranet-netlinkjson-XXXXXX").string();
    fs::path out = fs::path(mkdtemp(pattern.data())) / "snapshot";
    CaptureOptions capture;
    capture.host_root = NodeSnapshot(name);
    CaptureSnapshot(out, capture, NullLogger());
    auto recaptured = ReadSnapshotNetlinkFacts(out, NullLogger());
    fs::remove_all(out.parent_path());
    EXPECT_FALSE(original.routes.empty());
    EXPECT_EQ(recaptured.routes, original.routes);
    EXPECT_EQ(recaptured.rules, original.rules);
    EXPECT_EQ(recaptured.neighbors, original.neighbors);
  }
}

// The A4 snapshot's RDMA NICs carry the routes DHCP gives a GCE /32 NIC:
// a link-scope route to the subnet gateway and the subnet via that gateway.
TEST(NetlinkJson, A4RdmaNicsHaveTheGceSlash32Layout) {
  auto facts = ReadSnapshotNetlinkFacts(NodeSnapshot("a4-highgpu-8g"), NullLogger());
  std::map<std::string, int> index;
  for (const auto& link : facts.links) index[link.name] = link.ifindex;
  for (int n = 0; n < 8; ++n) {
    SCOPED_TRACE(n);
    std::string name = "gpu" + std::to_string(n) + "rdma0";
    std::string prefix = "192.168." + std::to_string(n + 1) + ".";
    RouteFacts gateway = Route(AF_INET, prefix + "1/32", {{index.at(name), "", 1}}, 100);
    gateway.source = prefix + "4";
    gateway.scope = RT_SCOPE_LINK;
    gateway.protocol = RTPROT_DHCP;
    RouteFacts subnet = Route(AF_INET, prefix + "0/24", {{index.at(name), prefix + "1", 1}}, 100);
    subnet.source = prefix + "4";
    subnet.protocol = RTPROT_DHCP;
    EXPECT_NE(std::find(facts.routes.begin(), facts.routes.end(), gateway), facts.routes.end());
    EXPECT_NE(std::find(facts.routes.begin(), facts.routes.end(), subnet), facts.routes.end());
  }
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), std::set<std::string>{"eth0"});
}

// The uplink rule on routes alone: only main-table unicast default routes
// with an output interface count, at the lowest metric of each family.
TEST(UplinkRule, OnlyMainTableUnicastDefaultRoutesCount) {
  NetlinkFacts facts;
  for (int i = 1; i <= 7; ++i) {
    LinkFacts link;
    link.ifindex = i;
    link.name = "if" + std::to_string(i);
    facts.links.push_back(link);
  }
  auto route = [](int family, std::string destination, std::vector<RouteNexthop> hops, uint32_t metric) {
    return Route(family, std::move(destination), std::move(hops), metric);
  };
  facts.routes.push_back(route(AF_INET, "0.0.0.0/0", {{1, "10.0.0.1", 1}}, 100));
  facts.routes.push_back(route(AF_INET, "0.0.0.0/0", {{2, "10.0.1.1", 1}, {3, "10.0.2.1", 2}}, 100));  // multipath tie
  facts.routes.push_back(route(AF_INET, "0.0.0.0/0", {{4, "10.0.3.1", 1}}, 200));                      // higher metric
  auto other_table = route(AF_INET, "0.0.0.0/0", {{5, "10.0.4.1", 1}}, 0);
  other_table.table = 101;
  facts.routes.push_back(other_table);
  auto unreachable = route(AF_INET, "0.0.0.0/0", {}, 0);
  unreachable.type = RTN_UNREACHABLE;
  facts.routes.push_back(unreachable);
  facts.routes.push_back(route(AF_INET, "10.0.0.0/8", {{6, "", 1}}, 0));  // not a default route
  facts.routes.push_back(route(AF_INET6, "::/0", {{7, "fe80::1", 1}}, 1024));
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), (std::set<std::string>{"if1", "if2", "if3", "if7"}));
}

}  // namespace
}  // namespace dranet::inventory
