// Discovery on hand-built sysfs trees: hostile content, edge cases and the
// rules beyond DRANET (multi-netdev functions, uplink exclusion, naming).
#include <gtest/gtest.h>

#include "fake_host.h"
#include "inventory/inventory.h"
#include "inventory/naming.h"
#include "test_support.h"

namespace dranet::inventory {
namespace {

using testing::Attribute;
using testing::CapturedLog;
using testing::DeviceNames;
using testing::FakeHost;
using testing::FindDevice;
using testing::HasAttribute;

std::vector<Device> DiscoverHost(const FakeHost& host, Logger& log, const std::string& pci_ids = "") {
  DiscoveryOptions options;
  options.host_root = host.root();
  options.pci_ids = pci_ids;
  return Discover(options, log);
}

TEST(HostileSysfs, GarbageValuesAreLoggedAndLeftOut) {
  FakeHost host;
  std::string good = host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  host.File(good + "/numa_node", "banana\n");
  host.File(good + "/vendor", "\x01\x02\xff garbage\n");
  host.Pci("0000:02:00.0", "not-a-class", "mlx5_core");
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto devices = DiscoverHost(host, captured.log);
  EXPECT_EQ(DeviceNames(devices), std::vector<std::string>{"pci-0000-01-00-0"});
  const Device& device = devices.at(0);
  EXPECT_FALSE(HasAttribute(device, attr::kNumaNode));
  EXPECT_FALSE(HasAttribute(device, attr::kStandardNumaNode));
  EXPECT_FALSE(HasAttribute(device, attr::kPciVendor));
  EXPECT_EQ(Attribute<std::string>(device, attr::kPciAddress), "0000:01:00.0");
  EXPECT_NE(captured.text().find("numa_node"), std::string::npos) << captured.text();
  EXPECT_NE(captured.text().find("0000:02:00.0/class"), std::string::npos) << captured.text();
}

TEST(HostileSysfs, MissingFilesGiveAPartialDevice) {
  FakeHost host;
  std::string path = "sys/devices/pci0000:00/0000:03:00.0";
  host.File(path + "/class", "0x020000\n");  // nothing else
  std::filesystem::create_directories(host.root() / "sys/bus/pci/drivers/ice");
  host.Link(path + "/driver", "sys/bus/pci/drivers/ice");
  host.Link("sys/bus/pci/devices/0000:03:00.0", path);
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "pci-0000-03-00-0");
  EXPECT_FALSE(Attribute<bool>(devices[0], attr::kRdma));
  EXPECT_EQ(Attribute<std::string>(devices[0], attr::kStandardPcieRoot), "pci0000:00");
  EXPECT_FALSE(HasAttribute(devices[0], attr::kPciSubsystem));
}

TEST(HostileSysfs, SymlinkLoopsDoNotHang) {
  FakeHost host;
  host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  std::filesystem::create_directories(host.root() / "sys/bus/pci/devices");
  std::filesystem::create_symlink("0000:09:00.0", host.root() / "sys/bus/pci/devices/0000:09:00.0");
  std::filesystem::create_directories(host.root() / "sys/class/net");
  std::filesystem::create_symlink("loopy", host.root() / "sys/class/net/loopy");
  std::filesystem::create_directories(host.root() / "sys/class/infiniband");
  std::filesystem::create_symlink("mlx5_9", host.root() / "sys/class/infiniband/mlx5_9");
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto devices = DiscoverHost(host, captured.log);
  // The loop-free function survives; the looping netdev has no readable
  // facts but still cannot break the inventory.
  ASSERT_NE(FindDevice(devices, "pci-0000-01-00-0"), nullptr);
  EXPECT_EQ(FindDevice(devices, "pci-0000-09-00-0"), nullptr);
  for (const auto& device : devices) EXPECT_TRUE(IsDnsLabel(device.name)) << device.name;
}

TEST(HostileSysfs, HugeValuesAreCappedOrRejected) {
  FakeHost host;
  std::string nic = host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  host.Netdev(nic, "eth1", 2);
  host.File(nic + "/net/eth1/ifalias", std::string(100 * 1024, 'A') + "\n");
  host.File(nic + "/net/eth1/mtu", std::string(10000, '9') + "\n");
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto devices = DiscoverHost(host, captured.log);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(Attribute<std::string>(devices[0], attr::kAlias), std::string(64, 'A'));
  EXPECT_FALSE(HasAttribute(devices[0], attr::kMtu));
  EXPECT_NE(captured.text().find("64-byte"), std::string::npos) << captured.text();
  EXPECT_NE(captured.text().find("eth1/mtu"), std::string::npos) << captured.text();
}

TEST(HostileSysfs, MalformedPciIdsOmitsNamesWithoutCrashing) {
  FakeHost host;
  host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  host.File("pci.ids", "15b3  Mellanox\n\tzzzz this is not an id\n");
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto devices = DiscoverHost(host, captured.log, (host.root() / "pci.ids").string());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_FALSE(HasAttribute(devices[0], attr::kPciVendor));
  EXPECT_NE(captured.text().find("pci.ids is malformed"), std::string::npos) << captured.text();
}

TEST(HostileSysfs, MissingPciIdsIsLogged) {
  FakeHost host;
  host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  host.WriteNetlinkJson();
  CapturedLog captured;
  auto devices = DiscoverHost(host, captured.log, (host.root() / "absent.ids").string());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_FALSE(HasAttribute(devices[0], attr::kPciDevice));
  EXPECT_NE(captured.text().find("pci.ids not readable"), std::string::npos);
}

// Without netlink.json's routes the default-route uplink would be published:
// a snapshot whose file is broken is refused, loudly, before any discovery.
TEST(HostileSysfs, MalformedNetlinkJsonRefusesTheSnapshot) {
  FakeHost host;
  std::string nic = host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  host.Netdev(nic, "eth1", 2);
  host.File(kSnapshotNetlinkFile, "{ this is not json");
  CapturedLog captured;
  try {
    DiscoverHost(host, captured.log);
    FAIL() << "a snapshot with a broken netlink.json was discovered";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("netlink.json is unusable"), std::string::npos) << e.what();
  }
}

TEST(Discovery, SkipsUnboundAndUserspaceDriverFunctions) {
  FakeHost host;
  host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  host.Pci("0000:02:00.0", "0x020000", "vfio-pci");
  host.Pci("0000:03:00.0", "0x020000", "");
  host.Pci("0000:04:00.0", "0x020700", "pci-stub");
  host.Pci("0000:05:00.0", "0x030200", "nvidia", "0x10de", "0x2901");  // a GPU: not ours
  host.Pci("0000:06:00.0", "0x028000", "mlx5_core");  // "other" network class
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  EXPECT_EQ(DeviceNames(devices), (std::vector<std::string>{"pci-0000-01-00-0", "pci-0000-06-00-0"}));
}

TEST(Discovery, SeveralNetdevsOnOneFunctionPickTheLowestNonChildIfindex) {
  FakeHost host;
  std::string nic = host.Pci("0000:01:00.0", "0x020700", "mlx5_core");
  host.Netdev(nic, "ib0.8001", 3, "ipoib", {"10.1.0.1/16"}, /*iflink=*/5);  // pkey child of ib0
  host.Netdev(nic, "ib0", 5, "ipoib", {"10.0.0.1/16"});
  host.Netdev(nic, "ib1", 7, "ipoib");
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].if_name, "ib0");
  EXPECT_EQ(Attribute<std::string>(devices[0], attr::kIpv4), "10.0.0.1/16");
  EXPECT_EQ(devices[0].secondary_if_names, (std::vector<std::string>{"ib0.8001", "ib1"}));
}

TEST(Discovery, VirtualNetdevsAreNamedAndFiltered) {
  FakeHost host;
  host.Netdev("", "lo", 1);
  host.Netdev("", "dummy_0", 2, "dummy", {"192.0.2.1/24", "2001:db8::1/64", "fe80::1/64"});
  host.Netdev("", "veth-a", 3, "veth");
  host.Netdev("", "docker0", 4, "bridge");
  host.Netdev("", "cilium_host", 5, "veth");
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  EXPECT_EQ(DeviceNames(devices), (std::vector<std::string>{"net-mr2w23lzl4ya", "veth-a"}));
  const Device& dummy = devices.at(0);
  EXPECT_EQ(Attribute<std::string>(dummy, attr::kIfName), "dummy_0");
  EXPECT_EQ(Attribute<std::string>(dummy, attr::kType), "dummy");
  EXPECT_TRUE(Attribute<bool>(dummy, attr::kVirtual));
  EXPECT_FALSE(Attribute<bool>(dummy, attr::kSriov));
  EXPECT_FALSE(Attribute<bool>(dummy, attr::kRdma));
  EXPECT_EQ(Attribute<std::string>(dummy, attr::kIpv4), "192.0.2.1/24");
  EXPECT_EQ(Attribute<std::string>(dummy, attr::kIpv6), "2001:db8::1/64");
  EXPECT_FALSE(HasAttribute(dummy, attr::kPciAddress));
}

// Interface names are bytes: one that is not UTF-8 is published escaped
// (the API server, and dranetctl -o json, take UTF-8 only).
TEST(HostileSysfs, NonUtf8InterfaceNameIsPublishedEscaped) {
  FakeHost host;
  host.Netdev("", "eth\xff", 2, "dummy");
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(Attribute<std::string>(devices[0], attr::kIfName), "eth\\xff");
  EXPECT_EQ(devices[0].name.rfind("net-", 0), 0u);
}

TEST(Discovery, ManyAddressesAreTruncatedAtWholeAddresses) {
  FakeHost host;
  std::vector<std::string> addresses;
  for (int i = 10; i < 30; ++i) addresses.push_back("10.0.0." + std::to_string(i) + "/24");
  host.Netdev("", "dummy1", 2, "dummy", addresses);
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  ASSERT_EQ(devices.size(), 1u);
  std::string ipv4 = Attribute<std::string>(devices[0], attr::kIpv4);
  EXPECT_LE(ipv4.size(), 64u);
  EXPECT_EQ(ipv4, "10.0.0.10/24,10.0.0.11/24,10.0.0.12/24,10.0.0.13/24,10.0.0.14/24");
}

TEST(Discovery, UplinkExclusionFollowsLowestMetricEcmpAndEnslavedLinks) {
  FakeHost host;
  host.Netdev("", "bond0", 2, "bond", {"10.0.0.2/24"});
  host.Netdev("", "eth2", 3, "", {}, 0, "bond0");
  host.Netdev("", "eth3", 4, "", {}, 0, "bond0");
  host.Netdev("", "eth4", 5, "", {"10.1.0.2/24"});     // ECMP twin of bond0
  host.Netdev("", "eth5", 6, "", {"10.2.0.2/24"});     // higher metric: kept
  host.Netdev("", "eth6", 7, "", {"2001:db8::2/64"});  // lowest v6 metric
  host.Netdev("", "eth7", 8);
  host.DefaultRoute("inet", 100, {"bond0"});
  host.DefaultRoute("inet", 100, {"eth4"});
  host.DefaultRoute("inet", 200, {"eth5"});
  host.DefaultRoute("inet6", 50, {"eth6"});
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  EXPECT_EQ(DeviceNames(devices), (std::vector<std::string>{"eth5", "eth7"}));

  auto facts = ReadSnapshotNetlinkFacts(host.root(), NullLogger());
  EXPECT_EQ(ExcludedUplinkInterfaces(facts),
            (std::set<std::string>{"bond0", "eth2", "eth3", "eth4", "eth6"}));
  // Re-evaluated from the current routes: with the v4 defaults gone only
  // the v6 uplink remains excluded.
  facts.routes.erase(facts.routes.begin(), facts.routes.begin() + 3);
  EXPECT_EQ(ExcludedUplinkInterfaces(facts), (std::set<std::string>{"eth6"}));
}

TEST(Discovery, RdmaDeviceOnANonNetworkFunctionIsPublishedIbOnly) {
  FakeHost host;
  std::string erdma = host.Pci("0000:00:0b.0", "0x00ff00", "erdma", "0x1ded", "0x107f");
  host.Link(erdma + "/infiniband/erdma_0/device", erdma);
  host.Link("sys/class/infiniband/erdma_0", erdma + "/infiniband/erdma_0");
  host.File(erdma + "/infiniband_verbs/uverbs0/ibdev", "erdma_0\n");
  host.File(erdma + "/infiniband_verbs/uverbs0/dev", "231:192\n");
  host.Link("sys/class/infiniband_verbs/uverbs0", erdma + "/infiniband_verbs/uverbs0");
  host.WriteNetlinkJson();
  auto devices = DiscoverHost(host, NullLogger());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "pci-0000-00-0b-0");
  EXPECT_EQ(Attribute<std::string>(devices[0], attr::kRdmaDevice), "erdma_0");
  EXPECT_EQ(devices[0].char_devices, (std::vector<CharDevice>{{"infiniband/uverbs0", 231, 192}}));
}

}  // namespace
}  // namespace dranet::inventory
