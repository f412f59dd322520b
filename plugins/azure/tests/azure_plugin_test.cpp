// The azure plugin .so through the plugin host, on the ND GB300-v6 and
// ND MI300X-v5 node snapshots, with IMDS served by the fake metadata
// service on 127.0.0.1 (never the real link-local address).
#include <gtest/gtest.h>

#include "../policy_routing.h"
#include "fake_metadata_server.h"
#include "plugin_fixture.h"
#include "plugins/host_services.h"

namespace {

namespace fs = std::filesystem;
using dranet::fakes::FakeMetadataServer;
using dranet::fakes::MetadataFault;
using dranet::plugins::PluginOutcome;

const fs::path kGb300 = fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6";
const fs::path kMi300x = fs::path(DRANET_TEST_NODES_DIR) / "nd-mi300x-v5";

class AzurePluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  std::map<std::string, std::string> Config(const FakeMetadataServer& server) {
    return {{"imds-endpoint", server.url()}, {"imds-timeout-ms", "1000"}};
  }
  std::vector<dranet::inventory::Device> Gb300Nics() {
    return {Nic("0101:00:00.0", "mlx5_0"), Nic("0102:00:00.0", "mlx5_1"), Nic("0103:00:00.0", "mlx5_2"),
            Nic("0104:00:00.0", "mlx5_3"), Nic("", "", "eth0", "00:0d:3a:6f:5a:3c")};
  }
};

TEST_F(AzurePluginTest, PublishesImdsFactsOnEveryDeviceFromOneRequest) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  auto host = Load("azure", Config(imds), kGb300);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_EQ(imds.Hits(), 0u) << "init must not touch IMDS";

  auto devices = Gb300Nics();
  host->Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(Str(d, "azure.dra.net/vmSize"), "Standard_ND128isr_GB300_v6") << d.name;
    EXPECT_EQ(Str(d, "azure.dra.net/placementGroupId"), "c6c749e8-a38b-470e-8c94-2a7d00001bf0") << d.name;
    EXPECT_EQ(Str(d, "azure.dra.net/interconnectGroupId"), "2deed8b4-d1e9-42be-a40a-9882201aa9f5") << d.name;
    EXPECT_EQ(Str(d, "azure.dra.net/interconnectSubgroupId"), "0f0ba375-aaf1-4ac8-a579-a3b180d47de5") << d.name;
  }
  EXPECT_FALSE(Has(devices[0], "azure.dra.net/subnet")) << "IB VFs are not in the IMDS network list";
  EXPECT_EQ(Str(devices[4], "azure.dra.net/subnet"), "10.224.0.0/16") << "front-end NIC matched by MAC";

  // Cached for the process lifetime: later passes do not ask again.
  host->Annotate(devices);
  auto more = Gb300Nics();
  host->Annotate(more);
  EXPECT_EQ(Str(more[2], "azure.dra.net/vmSize"), "Standard_ND128isr_GB300_v6");
  ASSERT_EQ(imds.Hits(), 1u);
  EXPECT_EQ(imds.Requests()[0].target, "/metadata/instance?api-version=2025-11-11&format=json");
  EXPECT_EQ(imds.Requests()[0].status, 200) << "the plugin sends Metadata: true";
  EXPECT_NE(Log().find("Azure IMDS: vmSize=Standard_ND128isr_GB300_v6"), std::string::npos) << Log();
}

TEST_F(AzurePluginTest, OmitsInterconnectIdsWhenImdsDoesNotReportThem) {
  FakeMetadataServer imds(kMi300x / "metadata/azure");
  auto host = Load("azure", Config(imds), kMi300x);
  std::vector<dranet::inventory::Device> devices{Nic("0101:00:00.0", "mlx5_0"), Nic("0108:00:00.0", "mlx5_7")};
  host->Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(Str(d, "azure.dra.net/vmSize"), "Standard_ND96isr_MI300X_v5");
    EXPECT_EQ(Str(d, "azure.dra.net/placementGroupId"), "c0104dd3-6665-45bf-afde-b2f35e590b93");
    EXPECT_FALSE(Has(d, "azure.dra.net/interconnectGroupId"));
    EXPECT_FALSE(Has(d, "azure.dra.net/interconnectSubgroupId"));
  }
}

TEST_F(AzurePluginTest, FakeRejectsRequestsWithoutTheMetadataHeader) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  auto r = dranet::plugins::CurlHttpGet(imds.url() + "/metadata/instance?api-version=2025-11-11&format=json", {}, 2000);
  EXPECT_EQ(r.status, 400);
  auto host = Load("azure", Config(imds), kGb300);
  auto devices = Gb300Nics();
  host->Annotate(devices);
  EXPECT_TRUE(Has(devices[0], "azure.dra.net/vmSize")) << "the plugin's request carries the header";
}

struct FaultCase {
  const char* name;
  MetadataFault fault;
  const char* log_says;
};

class AzureImdsFaultTest : public AzurePluginTest, public ::testing::WithParamInterface<FaultCase> {};

TEST_P(AzureImdsFaultTest, DevicesArePublishedWithoutAzureAttributesAndImdsIsAskedOnce) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  imds.InjectFault(GetParam().fault);
  auto config = Config(imds);
  config["imds-timeout-ms"] = "200";
  auto host = Load("azure", config, kGb300);
  auto devices = Gb300Nics();
  host->Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(d.attributes.size(), d.name == "eth0" ? 2u : 1u) << d.name << " keeps only its own attributes";
    EXPECT_FALSE(Has(d, "azure.dra.net/vmSize"));
  }
  EXPECT_EQ(imds.Hits(), 1u) << "one failed read per backoff period, not one per device";
  EXPECT_NE(Log().find("Azure IMDS unavailable"), std::string::npos) << Log();
  EXPECT_NE(Log().find(GetParam().log_says), std::string::npos) << Log();
  EXPECT_EQ(Report(*host, "azure")->outcome, PluginOutcome::kLoaded) << "a metadata failure is not a plugin failure";
}

MetadataFault Fault(MetadataFault::Action action, int status = 500, int delay_ms = 0) {
  MetadataFault f;
  f.action = action;
  f.status = status;
  f.delay = std::chrono::milliseconds(delay_ms);
  return f;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, AzureImdsFaultTest,
    ::testing::Values(FaultCase{"http500", Fault(MetadataFault::Action::kStatus, 500), "HTTP 500"},
                      FaultCase{"http404", Fault(MetadataFault::Action::kStatus, 404), "HTTP 404"},
                      FaultCase{"down", Fault(MetadataFault::Action::kDrop), "/metadata/instance"},
                      FaultCase{"slow", Fault(MetadataFault::Action::kServe, 200, 3000), "timed out"},
                      FaultCase{"garbage", Fault(MetadataFault::Action::kGarbage), "invalid JSON"},
                      FaultCase{"huge", Fault(MetadataFault::Action::kHuge), "larger than"}),
    [](const ::testing::TestParamInfo<FaultCase>& param_info) { return std::string(param_info.param.name); });

TEST_F(AzurePluginTest, RetriesAFailedReadAfterTheBackoff) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  MetadataFault once = Fault(MetadataFault::Action::kStatus, 500);
  once.times = 1;
  imds.InjectFault(once);
  auto config = Config(imds);
  config["retry-backoff-ms"] = "0";
  auto host = Load("azure", config, kGb300);
  std::vector<dranet::inventory::Device> first{Nic("0101:00:00.0", "mlx5_0")};
  host->Annotate(first);
  EXPECT_FALSE(Has(first[0], "azure.dra.net/vmSize"));
  std::vector<dranet::inventory::Device> second{Nic("0101:00:00.0", "mlx5_0")};
  host->Annotate(second);
  EXPECT_EQ(Str(second[0], "azure.dra.net/vmSize"), "Standard_ND128isr_GB300_v6");
  EXPECT_EQ(imds.Hits(), 2u);
}

TEST_F(AzurePluginTest, NotApplicableOffAzureWithoutAnyRequest) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  Dmi("sys_vendor", "Google");
  Dmi("product_name", "Google Compute Engine");
  auto host = Load("azure", Config(imds));
  EXPECT_EQ(host->loaded_count(), 0u);
  ASSERT_NE(Report(*host, "azure"), nullptr);
  EXPECT_EQ(Report(*host, "azure")->outcome, PluginOutcome::kNotApplicable);
  EXPECT_NE(Report(*host, "azure")->reason.find("not an Azure VM"), std::string::npos);
  EXPECT_EQ(imds.Hits(), 0u);
}

TEST_F(AzurePluginTest, RejectsMalformedConfiguration) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  auto config = Config(imds);
  config["imds-timeout-ms"] = "soon";
  auto host = Load("azure", config, kGb300);
  EXPECT_EQ(host->loaded_count(), 0u);
  EXPECT_NE(Report(*host, "azure")->reason.find("imds-timeout-ms=\"soon\""), std::string::npos)
      << Report(*host, "azure")->reason;
}

// ---------------------------------------------------------------------------
// Per-NIC policy routing at inject (DRANET's GetDeviceConfig).

// Recorded IMDS answer of a VM with a primary NIC and two secondaries, MACs
// as "000D3A6F5A3C", "00-0D-3A-AA-BB-01" and "000d3aAAbb02".
const fs::path kSecondaryNics = fs::path(AZURE_TEST_DATA_DIR) / "imds-secondary-nics";

// /proc/net/ipv6_route: IPv6 default routes on eth1 and eth2 (two on eth2,
// the lower metric wins), on eth0, and lo's reject route.
constexpr const char* kIpv6Routes =
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000dea "
    "00000800 00000001 00000000 00000003     eth2\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe80000000000000000012345678" "9abc "
    "00000400 00000001 00000000 00000003     eth2\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe80000000000000000012345678" "9abc "
    "00000400 00000001 00000000 00000003     eth1\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe80000000000000000012345678" "9abc "
    "00000400 00000001 00000000 00000003     eth0\n"
    "fd000000000200000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 "
    "00000100 00000001 00000000 00000001     eth2\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 "
    "ffffffff 00000001 00000000 00200200       lo\n";

class AzureRoutingTest : public AzurePluginTest {
 protected:
  void SetUp() override {
    AzurePluginTest::SetUp();
    Dmi("sys_vendor", "Microsoft Corporation");
    Dmi("chassis_asset_tag", "7783-7084-3265-9085-8269-3286-77");
  }
  // Primary, both secondaries (device MACs in Linux form, mixed case), an
  // IB VF (no netdev) and a netdev IMDS does not know.
  std::vector<dranet::inventory::Device> Devices() {
    return {Nic("", "", "eth0", "00:0d:3a:6f:5a:3c"), Nic("", "", "eth1", "00:0D:3A:AA:BB:01"),
            Nic("", "", "eth2", "00:0d:3a:aa:bb:02"), Nic("0101:00:00.0", "mlx5_0"),
            Nic("", "", "eth3", "00:0d:3a:ff:ff:ff")};
  }
  static std::vector<std::string> Lines(const dranet::plugins::InjectionEdits& edits) {
    std::vector<std::string> out;
    for (const auto& r : edits.routes)
      out.push_back("route " + r.device + " " + r.destination + " via " + r.gateway + " src '" + r.source +
                    "' table " + std::to_string(r.table) + " metric " + std::to_string(r.metric) + " scope " +
                    std::to_string(r.scope) + " by " + r.plugin);
    for (const auto& r : edits.rules)
      out.push_back("rule " + r.device + " from " + r.source + " to '" + r.destination + "' lookup " +
                    std::to_string(r.table) + " pref " + std::to_string(r.priority) + " by " + r.plugin);
    return out;
  }
};

TEST_F(AzureRoutingTest, SecondaryNicsGetTheirOwnTableRuleAndDefaultRoute) {
  WriteFile("proc/net/ipv6_route", kIpv6Routes);
  FakeMetadataServer imds(kSecondaryNics);
  auto host = Load("azure", Config(imds));
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  auto devices = Devices();
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[1], "azure.dra.net/subnet"), "10.1.0.0/24");
  auto edits = host->Inject({"ns", "multi-nic", "uid-1"}, devices);
  EXPECT_TRUE(edits.errors.empty()) << edits.errors[0];
  EXPECT_EQ(Lines(edits),
            (std::vector<std::string>{
                "route eth0 0.0.0.0/0 via 10.224.0.1 src '' table 100 metric 0 scope 0 by azure",
                "route eth1 0.0.0.0/0 via 10.1.0.1 src '' table 101 metric 0 scope 0 by azure",
                "route eth2 0.0.0.0/0 via 10.2.128.1 src '' table 102 metric 0 scope 0 by azure",
                "route eth2 ::/0 via fe80::1234:5678:9abc src '' table 102 metric 0 scope 0 by azure",
                "rule eth0 from 10.224.0.0/16 to '' lookup 100 pref 0 by azure",
                "rule eth1 from 10.1.0.0/24 to '' lookup 101 pref 0 by azure",
                "rule eth2 from 10.2.128.0/20 to '' lookup 102 pref 0 by azure",
                "rule eth2 from fd00:2::7/128 to '' lookup 102 pref 0 by azure",
            }));
  EXPECT_EQ(imds.Hits(), 1u) << "inject uses the answer annotate cached";
  // The primary too, as DRANET (table 100): it is only ever moved when it
  // is not the node's uplink.
  EXPECT_NE(Log().find("device eth0 (eth0, IMDS interface 0): Azure policy routing: rule from 10.224.0.0/16 lookup "
                       "100; route 0.0.0.0/0 via 10.224.0.1 table 100; skipped: IPv6: no address in IMDS"),
            std::string::npos)
      << Log();
  EXPECT_NE(Log().find("IPv6: fe80::20d:3aff:feaa:bb01 is not a global IPv6 address"), std::string::npos)
      << "eth1's link-local IPv6 gets no rule\n" << Log();
}

TEST_F(AzureRoutingTest, InjectReadsImdsItselfAndSkipsIpv6WithoutAGateway) {
  // No ipv6_route file: eth2's global IPv6 address has no gateway to use.
  FakeMetadataServer imds(kSecondaryNics);
  auto host = Load("azure", Config(imds));
  auto edits = host->Inject({"ns", "c", "u"}, {Nic("", "", "eth2", "00:0D:3A:AA:BB:02")});
  EXPECT_TRUE(edits.errors.empty()) << edits.errors[0];
  EXPECT_EQ(Lines(edits), (std::vector<std::string>{
                              "route eth2 0.0.0.0/0 via 10.2.128.1 src '' table 102 metric 0 scope 0 by azure",
                              "rule eth2 from 10.2.128.0/20 to '' lookup 102 pref 0 by azure"}));
  EXPECT_EQ(imds.Hits(), 1u);
  EXPECT_NE(Log().find("IPv6: no IPv6 default route on the netdev"), std::string::npos) << Log();
}

TEST_F(AzureRoutingTest, ClaimsWithoutNetdevsNeverAskImds) {
  FakeMetadataServer imds(kSecondaryNics);
  auto host = Load("azure", Config(imds));
  auto edits = host->Inject({"ns", "ib", "u"}, {Nic("0101:00:00.0", "mlx5_0"), Nic("0102:00:00.0", "mlx5_1")});
  EXPECT_TRUE(edits.errors.empty());
  EXPECT_TRUE(edits.routes.empty());
  EXPECT_TRUE(edits.rules.empty());
  EXPECT_EQ(imds.Hits(), 0u);
}

TEST_F(AzureRoutingTest, ImdsFailureMeansNoRoutesALogLineAndASuccessfulInject) {
  WriteFile("proc/net/ipv6_route", kIpv6Routes);
  FakeMetadataServer imds(kSecondaryNics);
  imds.InjectFault(Fault(MetadataFault::Action::kStatus, 500));
  auto host = Load("azure", Config(imds));
  auto edits = host->Inject({"ns", "multi-nic", "u"}, Devices());
  EXPECT_TRUE(edits.errors.empty()) << edits.errors[0];
  EXPECT_TRUE(edits.routes.empty());
  EXPECT_TRUE(edits.rules.empty());
  EXPECT_NE(Log().find("Azure IMDS unavailable, claim ns/multi-nic is prepared without Azure per-NIC policy "
                       "routes: GET "),
            std::string::npos)
      << Log();
  EXPECT_NE(Log().find("HTTP 500"), std::string::npos) << Log();
  // Within the backoff the next claim does not ask again, and says why.
  auto again = host->Inject({"ns", "second", "u"}, Devices());
  EXPECT_TRUE(again.errors.empty());
  EXPECT_TRUE(again.routes.empty());
  EXPECT_EQ(imds.Hits(), 1u);
  EXPECT_NE(Log().find("retry pending): claim ns/second is prepared without Azure per-NIC policy routes"),
            std::string::npos)
      << Log();
  EXPECT_EQ(Report(*host, "azure")->outcome, PluginOutcome::kLoaded);
}

TEST(AzurePolicyRouting, SubnetFirstAddressAsDranet) {
  struct Case {
    const char *address, *prefix, *want;  // want nullptr: refused
  };
  for (const Case& c : {Case{"10.9.255.0", "24", "10.9.255.1"}, Case{"10.144.133.128", "26", "10.144.133.129"},
                        Case{"192.168.0.0", "24", "192.168.0.1"}, Case{"10.0.0.0", "8", "10.0.0.1"},
                        Case{"10.0.2.0", "23", "10.0.2.1"}, Case{"10.0.0.32", "27", "10.0.0.33"},
                        Case{"255.255.255.255", "32", nullptr}, Case{"10.4.5.6", "32", nullptr},
                        Case{"10.0.0.255", "24", nullptr}, Case{"10.0.0.21", "27", nullptr},
                        Case{"::1", "128", nullptr}, Case{"invalid", "24", nullptr}, Case{"", "24", nullptr},
                        Case{"10.0.0.0", "", nullptr}, Case{"", "", nullptr}, Case{"10.0.0.0", "bad", nullptr},
                        Case{"10.0.0.0", "-8", nullptr}, Case{"10.0.0.0", "33", nullptr}}) {
    std::string why;
    auto got = dranet::plugins::azure::SubnetFirstAddress(c.address, c.prefix, why);
    if (c.want == nullptr) {
      EXPECT_FALSE(got) << c.address << "/" << c.prefix << " gave " << got.value_or("");
      EXPECT_FALSE(why.empty());
    } else {
      EXPECT_EQ(got.value_or("<refused: " + why + ">"), c.want) << c.address << "/" << c.prefix;
    }
  }
}

TEST(AzurePolicyRouting, Ipv6DefaultGatewayPerDeviceLowestMetric) {
  EXPECT_EQ(dranet::plugins::azure::Ipv6DefaultGateway(kIpv6Routes, "eth2"), "fe80::1234:5678:9abc");
  EXPECT_EQ(dranet::plugins::azure::Ipv6DefaultGateway(kIpv6Routes, "eth9"), "");
  EXPECT_EQ(dranet::plugins::azure::Ipv6DefaultGateway(kIpv6Routes, "lo"), "") << "a reject route has no gateway";
  EXPECT_EQ(dranet::plugins::azure::Ipv6DefaultGateway("garbage\n\n", "eth2"), "");
  // The lowest metric, whichever line comes first.
  const std::string low =
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 "
      "00000100 00000001 00000000 00000003     eth3\n";
  const std::string high =
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000002 "
      "00000400 00000001 00000000 00000003     eth3\n";
  EXPECT_EQ(dranet::plugins::azure::Ipv6DefaultGateway(low + high, "eth3"), "fe80::1");
  EXPECT_EQ(dranet::plugins::azure::Ipv6DefaultGateway(high + low, "eth3"), "fe80::1");
  EXPECT_EQ(dranet::plugins::azure::Ipv6DefaultGateway(high + low + high, "eth3"), "fe80::1");
}

TEST(AzurePolicyRouting, EveryInterfacePrimaryIncludedGetsTableIndexPlus100) {
  dranet::plugins::azure::ImdsNic nic;
  nic.subnet_address = "10.0.0.0";
  nic.subnet_prefix = "24";
  nic.ipv6 = "2001:db8::5";
  auto primary = dranet::plugins::azure::PlanNicRouting(nic, "fe80::1");
  EXPECT_EQ(primary.table, 100u);
  ASSERT_EQ(primary.routes.size(), 2u);
  EXPECT_EQ(primary.routes[0].gateway, "10.0.0.1");
  EXPECT_EQ(primary.routes[0].table, 100u);
  ASSERT_EQ(primary.rules.size(), 2u);
  EXPECT_EQ(primary.rules[0].source, "10.0.0.0/24");
  nic.index = 7;
  auto seventh = dranet::plugins::azure::PlanNicRouting(nic, "fe80::1");
  EXPECT_EQ(seventh.table, 107u);
  ASSERT_EQ(seventh.routes.size(), 2u);
  EXPECT_EQ(seventh.routes[1].destination, "::/0");
  EXPECT_EQ(seventh.routes[1].gateway, "fe80::1");
  ASSERT_EQ(seventh.rules.size(), 2u);
  EXPECT_EQ(seventh.rules[1].source, "2001:db8::5/128");
  nic.subnet_address = "10.0.0.5";  // not a network address: IPv4 skipped, as DRANET
  auto bad = dranet::plugins::azure::PlanNicRouting(nic, "");
  EXPECT_TRUE(bad.routes.empty());
  ASSERT_EQ(bad.skipped.size(), 2u);
  EXPECT_NE(bad.skipped[0].find("not the network address"), std::string::npos) << bad.skipped[0];
}

}  // namespace
