#include "kubelet/network_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dranet::kubelet {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const std::string& json) {
  try {
    ParseNetworkConfig(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(NetworkConfig, ParsesDranetExamples) {
  auto c = ParseNetworkConfig(R"({"interface":{"name":"dranet0","addresses":["169.254.169.14/24"],
      "mtu":4321,"hardwareAddr":"00:11:22:33:44:55"},
      "ethtool":{"features":{"tcp-segmentation-offload":false,"generic-receive-offload":false}}})");
  EXPECT_EQ(c.interface.name, "dranet0");
  EXPECT_EQ(c.interface.addresses, std::vector<std::string>{"169.254.169.14/24"});
  EXPECT_EQ(c.interface.mtu, 4321);
  EXPECT_EQ(c.interface.hardware_addr, "00:11:22:33:44:55");
  ASSERT_TRUE(c.ethtool);
  EXPECT_EQ(c.ethtool->features.size(), 2U);

  auto routes = ParseNetworkConfig(R"({"routes":[{"destination":"10.0.0.0/8","gateway":"192.168.1.1"},
      {"destination":"192.168.5.0/24","scope":253}],
      "rules":[{"priority":100,"source":"192.168.1.0/24","table":100}],
      "neighbors":[{"destination":"192.168.1.1","hardwareAddr":"aa:bb:cc:dd:ee:ff"}]})");
  EXPECT_EQ(routes.routes.size(), 2U);
  EXPECT_EQ(routes.routes[1].scope, 253);
  EXPECT_EQ(routes.rules.at(0).table, 100);
  EXPECT_EQ(routes.neighbors.size(), 1U);

  auto vrf = ParseNetworkConfig(R"({"interface":{"vrf":{"name":"blue","table":1001},"arpIgnore":8,"arpAnnounce":2}})");
  EXPECT_EQ(vrf.interface.vrf->table, 1001);
  EXPECT_TRUE(ParseNetworkConfig("{}").set_fields.empty());
}

TEST(NetworkConfig, RejectsUnknownFieldsWithTheirPath) {
  EXPECT_THAT(ErrorOf(R"({"interfaces":{}})"), HasSubstr("interfaces: unknown field"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"nmae":"x"}})"), HasSubstr("interface.nmae: unknown field"));
  EXPECT_THAT(ErrorOf(R"({"routes":[{"destination":"10.0.0.0/8","gateway":"1.2.3.4","via":"x"}]})"),
              HasSubstr("routes[0].via: unknown field"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"vrf":{"name":"a","id":1}}})"), HasSubstr("interface.vrf.id"));
  EXPECT_THAT(ErrorOf(R"({"ethtool":{"feature":{}}})"), HasSubstr("ethtool.feature: unknown field"));
  EXPECT_THAT(ErrorOf(R"({"profile":"a","profile":"b"})"), HasSubstr("profile: given twice"));
}

TEST(NetworkConfig, RejectsBadValues) {
  EXPECT_THAT(ErrorOf(R"({"interface":{"mtu":67}})"), HasSubstr("interface.mtu: must be between 68 and 65535"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"mtu":2147483647}})"), HasSubstr("interface.mtu: must be between 68 and 65535"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"mtu":"9000"}})"), HasSubstr("interface.mtu: must be an integer"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"name":"a-very-long-interface"}})"), HasSubstr("longer than 15"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"name":"eth/0"}})"), HasSubstr("interface.name"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"name":".."}})"), HasSubstr("not a valid interface name"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["10.0.0.1"]}})"), HasSubstr("interface.addresses"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["10.0.0.1/33"]}})"), HasSubstr("interface.addresses"));
  // What can never be a pod interface's address is refused at prepare, not at pod start.
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["0.0.0.0/0"]}})"), HasSubstr("the unspecified address"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["::/0"]}})"), HasSubstr("the unspecified address"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["127.0.0.1/8"]}})"), HasSubstr("a loopback address"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["::1/128"]}})"), HasSubstr("a loopback address"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["224.0.0.5/32"]}})"), HasSubstr("a multicast address"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addresses":["ff02::1/128"]}})"), HasSubstr("a multicast address"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"dhcp":true,"addresses":["10.0.0.1/24"]}})"), HasSubstr("dhcp and addresses"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"hardwareAddr":"00:11:22"}})"), HasSubstr("not a MAC address"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"arpIgnore":5}})"), HasSubstr("interface.arpIgnore"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"arpAnnounce":3}})"), HasSubstr("interface.arpAnnounce"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"gsoMaxSize":0}})"), HasSubstr("greater than 0"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"vrf":{"table":5}}})"), HasSubstr("interface.vrf.name: is required"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"vrf":{"name":"v","table":254}}})"), HasSubstr("reserved"));
  EXPECT_THAT(ErrorOf(R"({"routes":[{"destination":"10.0.0.0/8"}]})"), HasSubstr("routes[0].gateway: is required"));
  EXPECT_THAT(ErrorOf(R"({"routes":[{"destination":"10.0.0.0/8","gateway":"fe80::1"}]})"),
              HasSubstr("destination's family"));
  EXPECT_THAT(ErrorOf(R"({"routes":[{"destination":"10.0.0.0/8","scope":200,"gateway":"1.1.1.1"}]})"),
              HasSubstr("routes[0].scope"));
  EXPECT_THAT(ErrorOf(R"({"rules":[{"priority":40000}]})"), HasSubstr("rules[0].priority"));
  EXPECT_THAT(ErrorOf(R"({"rules":[{"source":"10.0.0.0/8","destination":"fd00::/8"}]})"), HasSubstr("one family"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"vrf":{"name":"v"}},"rules":[{"priority":1}]})"),
              HasSubstr("rules: cannot be used together with interface.vrf"));
  EXPECT_THAT(ErrorOf(R"({"neighbors":[{"destination":"10.0.0.1"}]})"), HasSubstr("neighbors[0].hardwareAddr"));
  EXPECT_THAT(ErrorOf(R"({"ethtool":{"features":{"tso":"off"}}})"), HasSubstr("ethtool.features.tso"));
}

// A MAC no interface can have as its own would fail at pod start (the
// kernel refuses it with EADDRNOTAVAIL): refused at prepare, naming it.
TEST(NetworkConfig, RejectsMacsNoInterfaceCanHave) {
  auto mac = [](const std::string& address) {
    return ErrorOf(R"({"interface":{"hardwareAddr":")" + address + R"("}})");
  };
  EXPECT_THAT(mac("00:00:00:00:00:00"),
              HasSubstr("interface.hardwareAddr: 00:00:00:00:00:00 is the all-zero address"));
  EXPECT_THAT(mac("ff:ff:ff:ff:ff:ff"),
              HasSubstr("interface.hardwareAddr: ff:ff:ff:ff:ff:ff is the broadcast address"));
  EXPECT_THAT(mac("FF-FF-FF-FF-FF-FF"), HasSubstr("FF-FF-FF-FF-FF-FF is the broadcast address"));
  EXPECT_THAT(mac("01:00:5e:00:00:01"), HasSubstr("01:00:5e:00:00:01 is a multicast address"));
  EXPECT_THAT(mac("33:33:00:00:00:01"), HasSubstr("33:33:00:00:00:01 is a multicast address"));
  EXPECT_THAT(mac("03:00:00:00:00:00:00:01"), HasSubstr("is a multicast address"));  // EUI-64
  EXPECT_EQ(mac("02:11:22:33:44:55"), "");
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"hardwareAddr":"02:11:22:33:44:55"}})").interface.hardware_addr,
            "02:11:22:33:44:55");
  // An IPoIB address starts with flags and a queue pair number: an odd first
  // octet is no group bit there.
  const std::string ipoib = "81:00:01:07:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:6b:0f:fe";
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"hardwareAddr":")" + ipoib + R"("}})").interface.hardware_addr, ipoib);
}

// "all" and "default" are the namespace-wide sysctl directories and every
// namespace has "lo": a netdev moved in under one of those names fails.
TEST(NetworkConfig, RejectsInterfaceNamesEveryNamespaceReserves) {
  for (const char* name : {"all", "default", "lo"}) {
    EXPECT_THAT(ErrorOf(R"({"interface":{"name":")" + std::string(name) + R"("}})"),
                HasSubstr("interface.name: \"" + std::string(name) + "\" is reserved in every network namespace"));
    EXPECT_THAT(ErrorOf(R"({"interface":{"vrf":{"name":")" + std::string(name) + R"("}}})"),
                HasSubstr("interface.vrf.name: \"" + std::string(name) + "\" is reserved in every network namespace"));
  }
  EXPECT_THAT(ErrorOf(R"({"interface":{"name":"all"}})"), HasSubstr("net.ipv4.conf.all"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"name":"lo"}})"), HasSubstr("its loopback interface"));
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"name":"eth1"}})").interface.name, "eth1");
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"vrf":{"name":"eth1"}}})").interface.vrf->name, "eth1");
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"name":"lo0"}})").interface.name, "lo0");  // only the exact names
}

TEST(NetworkConfig, RejectsMalformedAndOversizedInput) {
  EXPECT_THAT(ErrorOf("{"), HasSubstr("not valid JSON"));
  EXPECT_THAT(ErrorOf("[]"), HasSubstr("must be a JSON object"));
  EXPECT_THAT(ErrorOf(R"({"interface":[]})"), HasSubstr("interface: must be an object"));
  std::string big = R"({"profile":")" + std::string(kMaxConfigBytes, 'x') + "\"}";
  EXPECT_THAT(ErrorOf(big), HasSubstr("at most 10240"));
  std::string routes = R"({"routes":[)";
  for (std::size_t i = 0; i <= kMaxConfigListItems; ++i)
    routes += std::string(i ? "," : "") + R"({"destination":"10.0.0.0/8","gateway":"1.1.1.1"})";
  EXPECT_THAT(ErrorOf(routes + "]}"), HasSubstr("routes: has 65 entries, at most 64"));
  EXPECT_THAT(ErrorOf(R"({"profile":")" + std::string(300, 'p') + "\"}"), HasSubstr("longer than 256"));
}

TEST(NetworkConfig, MergeOverridesScalarsAndAppendsListsLaterWinning) {
  auto merged = MergeNetworkConfigs(
      {R"({"interface":{"name":"net0","mtu":1500,"addresses":["10.1.0.5/24"]},
           "routes":[{"destination":"10.0.0.0/8","gateway":"10.1.0.1"},
                     {"destination":"172.16.0.0/12","gateway":"10.1.0.1","table":100}],
           "neighbors":[{"destination":"10.1.0.1","hardwareAddr":"aa:aa:aa:aa:aa:aa"}],
           "rules":[{"priority":100,"source":"10.1.0.0/24","table":100}],
           "ethtool":{"features":{"tso":false}}})",
       R"({"interface":{"mtu":9000,"addresses":["10.1.0.5/24","10.2.0.5/24"]},
           "routes":[{"destination":"10.0.0.0/8","gateway":"10.1.0.254"},
                     {"destination":"172.16.0.0/12","gateway":"10.1.0.1"}],
           "neighbors":[{"destination":"10.1.0.1","hardwareAddr":"bb:bb:bb:bb:bb:bb"}],
           "rules":[{"priority":100,"source":"10.1.0.0/24","table":100}],
           "ethtool":{"features":{"gro":false}}})"},
      {"class", "claim"});
  EXPECT_EQ(merged.interface.name, "net0");
  EXPECT_EQ(merged.interface.mtu, 9000);
  // Addresses by value: the repeated one once, the new one appended.
  EXPECT_EQ(merged.interface.addresses, (std::vector<std::string>{"10.1.0.5/24", "10.2.0.5/24"}));
  // Routes by destination + table: 10/8 in main replaced by the later gateway;
  // 172.16/12 in table 100 and in main are two routes.
  ASSERT_EQ(merged.routes.size(), 3U);
  EXPECT_EQ(merged.routes[0].destination, "10.0.0.0/8");
  EXPECT_EQ(merged.routes[0].gateway, "10.1.0.254");
  EXPECT_EQ(merged.routes[1].table, 100);
  EXPECT_EQ(merged.routes[2].table, 0);
  // Neighbours by destination, the later MAC.
  ASSERT_EQ(merged.neighbors.size(), 1U);
  EXPECT_EQ(merged.neighbors[0].hardware_addr, "bb:bb:bb:bb:bb:bb");
  EXPECT_EQ(merged.rules.size(), 1U);
  ASSERT_TRUE(merged.ethtool);
  EXPECT_EQ(merged.ethtool->features, (std::map<std::string, bool>{{"gro", false}, {"tso", false}}));
}

TEST(NetworkConfig, MergedJsonIsWhatTheConfigSays) {
  auto merged = MergeNetworkConfigsWithJson({R"({"profile":"a","interface":{"addresses":["10.1.0.5/24"]}})",
                                             R"({"interface":{"addresses":["10.2.0.5/24"]}})"},
                                            {"class", "claim"});
  EXPECT_EQ(merged.json, R"({"profile":"a","interface":{"addresses":["10.1.0.5/24","10.2.0.5/24"]}})");
  EXPECT_EQ(ParseNetworkConfig(merged.json).interface.addresses, merged.config.interface.addresses);
}

TEST(NetworkConfig, OneErrorNamesEveryProblem) {
  const std::string error = ErrorOf(R"({"interface":{"mtu":1,"hardwareAddr":"zz","arpIgnore":5,"nmae":"x"},
      "routes":[{"destination":"10.0.0.0/8"},{"destination":"nope","gateway":"1.1.1.1","scope":7}],
      "neighbors":[{"destination":"x","hardwareAddr":"y"}],"bogus":1})");
  for (const char* field : {"interface.mtu", "interface.hardwareAddr", "interface.arpIgnore", "interface.nmae",
                            "routes[0].gateway", "routes[1].destination", "routes[1].scope",
                            "neighbors[0].destination", "neighbors[0].hardwareAddr", "bogus: unknown field"})
    EXPECT_THAT(error, HasSubstr(field)) << error;
  // And across the configs of a merge, each named with its source.
  try {
    MergeNetworkConfigs({R"({"interface":{"mtu":1}})", R"({"interface":{"arpAnnounce":9}})"}, {"class", "claim"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("class: interface.mtu"));
    EXPECT_THAT(e.what(), HasSubstr("claim: interface.arpAnnounce"));
  }
}

TEST(NetworkConfig, MergeNamesTheFailingInput) {
  try {
    MergeNetworkConfigs({R"({})", R"({"interface":{"mtu":1}})"}, {"config[0]", "config[1] (FromClaim)"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("config[1] (FromClaim): interface.mtu"));
  }
  // Valid alone, invalid together.
  EXPECT_THROW(MergeNetworkConfigs({R"({"interface":{"dhcp":true}})", R"({"interface":{"addresses":["1.2.3.4/32"]}})"},
                                   {"a", "b"}),
               ConfigError);
}

TEST(NetworkConfig, RdmaOnlyDevicesTakeNoNetworkFields) {
  EXPECT_TRUE(FieldsNotForRdmaOnly(ParseNetworkConfig(R"({"interface":{"vrf":{"name":"v"},"forwarding":true}})")).empty());
  auto bad = FieldsNotForRdmaOnly(ParseNetworkConfig(
      R"({"interface":{"mtu":9000},"routes":[{"destination":"10.0.0.0/8","gateway":"1.1.1.1"}],"ethtool":{}})"));
  EXPECT_EQ(bad, (std::vector<std::string>{"interface.mtu", "routes", "ethtool"}));
}

// interface.type and its children (DRANET's interface.type, ipvlan and
// addressing; macvlan is ours).
TEST(NetworkConfig, ReadsTheInterfaceTypeAndItsChildsMode) {
  auto c = ParseNetworkConfig(R"({"interface":{"type":"ipvlan","ipvlan":{"mode":"l3s","flag":"bridge"},
                                  "addressing":"static","addresses":["10.0.0.5/24"]}})");
  EXPECT_EQ(c.interface.type, "ipvlan");
  EXPECT_EQ(c.interface.ipvlan_mode, "l3s");
  EXPECT_EQ(c.interface.addressing, "static");
  c = ParseNetworkConfig(R"({"interface":{"type":"macvlan","macvlan":{"mode":"private"}}})");
  EXPECT_EQ(c.interface.macvlan_mode, "private");
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"type":"passthrough"}})").interface.type, "passthrough");
  // addressing: dhcp is dhcp: true.
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"addressing":"dhcp"}})").interface.dhcp, true);
  EXPECT_EQ(ParseNetworkConfig(R"({"interface":{"addressing":"unnumbered"}})").interface.addressing, "unnumbered");
}

TEST(NetworkConfig, RejectsChildSettingsThatCannotHold) {
  EXPECT_THAT(ErrorOf(R"({"interface":{"type":"vlan"}})"),
              HasSubstr(R"(interface.type: "vlan" is not one of "passthrough", "ipvlan", "macvlan")"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"type":"ipvlan","ipvlan":{"mode":"l4"}}})"),
              HasSubstr(R"(interface.ipvlan.mode: "l4" is not one of "l2", "l3", "l3s")"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"type":"ipvlan","ipvlan":{"flag":"vepa"}}})"),
              HasSubstr(R"(interface.ipvlan.flag: "vepa" is not one of "bridge")"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"type":"ipvlan","ipvlan":{"mtu":1}}})"), HasSubstr("interface.ipvlan.mtu: unknown"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"ipvlan":{"mode":"l2"}}})"),
              HasSubstr(R"(interface.ipvlan: needs interface.type "ipvlan")"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"type":"ipvlan","macvlan":{"mode":"vepa"}}})"),
              HasSubstr(R"(interface.macvlan: needs interface.type "macvlan")"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"type":"macvlan","macvlan":{"mode":"passthru"}}})"),
              HasSubstr("interface.macvlan.mode"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addressing":"slaac"}})"), HasSubstr("interface.addressing"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addressing":"dhcp","dhcp":false}})"), HasSubstr("contradict"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addressing":"static","dhcp":true}})"), HasSubstr("contradict"));
  EXPECT_THAT(ErrorOf(R"({"interface":{"addressing":"unnumbered","addresses":["10.0.0.5/24"]}})"),
              HasSubstr(R"(addressing "unnumbered" and addresses cannot be used together)"));
}

TEST(NetworkConfig, AChildTakesNoMacOfItsOwnUnderIpvlanNoEthtoolAndNoLeaseUnderMacvlan) {
  const auto config = ParseNetworkConfig(R"({"interface":{"hardwareAddr":"02:00:00:00:00:07","dhcp":true,
      "disableEbpfPrograms":true,"mtu":1400,"arpIgnore":1},"ethtool":{"features":{"tso":false}}})");
  const auto ipvlan = ProblemsForChild(config, "ipvlan");  // its lease is asked for on its parent
  ASSERT_EQ(ipvlan.size(), 3U);
  EXPECT_THAT(ipvlan[0], HasSubstr("interface.hardwareAddr: an IPVLAN child has its parent's MAC"));
  EXPECT_THAT(ipvlan[1], HasSubstr("ethtool:"));
  EXPECT_THAT(ipvlan[2], HasSubstr("interface.disableEbpfPrograms:"));
  const auto macvlan = ProblemsForChild(config, "macvlan");  // a MAC of its own, no lease
  ASSERT_EQ(macvlan.size(), 3U);
  EXPECT_THAT(macvlan[2], HasSubstr("interface.dhcp: a macvlan child takes static addresses"));
  EXPECT_TRUE(ProblemsForChild(ParseNetworkConfig(R"({"interface":{"mtu":1400,"arpIgnore":1,"addresses":
      ["10.0.0.5/24"]},"routes":[{"destination":"10.1.0.0/16","gateway":"10.0.0.1"}]})"), "ipvlan").empty());
}

}  // namespace
}  // namespace dranet::kubelet
