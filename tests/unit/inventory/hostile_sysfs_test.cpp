// Discovery on hand-built sysfs trees: hostile content, edge cases and the
// rules beyond DRANET (multi-netdev functions, uplink exclusion, naming).
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <iterator>

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

// Symlinks that lead out of the host root. `outside_` is a second tree next
// to the snapshot that would pass for sysfs (a netdev, PCI network functions,
// an RDMA device), every string in it the canary: resolution stops at the
// snapshot directory as under chroot, so none of it may reach the inventory.
constexpr std::string_view kCanary = "CANARY-outside-the-root";

class LinksOutOfTheRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string canary(kCanary);
    for (const char* file : {"ifindex", "iflink"}) outside_.File(std::string("net/eth9/") + file, "9\n");
    for (const char* file : {"address", "ifalias", "operstate"}) {
      outside_.File(std::string("net/eth9/") + file, canary + "\n");
    }
    for (const char* address : {"0000:0a:00.0", "0000:0c:00.0"}) {
      std::string dir = std::string("pci/") + address;
      outside_.File(dir + "/class", "0x020000\n");
      outside_.File(dir + "/vendor", "0x15b3\n");
      outside_.File(dir + "/device", "0x1021\n");
      outside_.File(dir + "/numa_node", "7\n");
      std::filesystem::create_directories(outside_.root() / "drivers" / canary);
      outside_.Link(dir + "/driver", "drivers/" + canary);
    }
    outside_.File("ib/mlx5_9/ports/1/gid_attrs/ndevs/0", "eth1\n");
    outside_.Link("ib/mlx5_9/device", "pci/0000:0b:00.0");
    outside_.File("canary", canary + "\n");
    outside_.File("mtu", "1234\n");
    outside_.File("numa_node", "7\n");

    // A sound device to compare with: PCI function 0000:01:00.0 with eth1.
    nic_ = host_.Pci("0000:01:00.0", "0x020000", "mlx5_core");
    host_.Netdev(nic_, "eth1", 2);
  }

  // root/relative -> `target` in the outside tree, as a ".." chain climbing
  // out of the root or as an absolute path.
  void LinkOut(const std::string& relative, const std::string& target, bool absolute) {
    auto link_dir = (host_.root() / relative).parent_path();
    auto path = outside_.root() / target;
    host_.RawLink(relative, absolute ? path : path.lexically_relative(link_dir));
  }

  std::vector<Device> Discover() {
    host_.WriteNetlinkJson();
    auto devices = DiscoverHost(host_, captured_.log);
    for (const auto& device : devices) {
      SCOPED_TRACE(device.name);
      std::vector<std::string> strings = {device.name, device.if_name, device.rdma_device, device.driver};
      strings.insert(strings.end(), device.secondary_if_names.begin(), device.secondary_if_names.end());
      for (const auto& [key, value] : device.attributes) {
        if (const auto* text = std::get_if<std::string>(&value)) strings.push_back(*text);
      }
      for (const auto& text : strings) EXPECT_EQ(text.find(kCanary), std::string::npos) << text;
      if (device.numa_node == 7) ADD_FAILURE() << "numa_node read from outside the root";
      for (const char* address : {"0000:0a:00.0", "0000:0b:00.0", "0000:0c:00.0"}) {
        EXPECT_NE(device.pci_address, address) << "a PCI function outside the root was published";
      }
    }
    return devices;
  }

  FakeHost host_;
  FakeHost outside_;
  std::string nic_;
  CapturedLog captured_;
};

TEST_F(LinksOutOfTheRoot, NetdevDirectoriesAreNotRead) {
  LinkOut("sys/class/net/eth9", "net/eth9", /*absolute=*/false);
  LinkOut("sys/class/net/eth8", "net/eth9", /*absolute=*/true);
  auto devices = Discover();
  for (const char* name : {"eth8", "eth9"}) {
    const Device* device = FindDevice(devices, name);
    ASSERT_NE(device, nullptr) << name;
    EXPECT_FALSE(HasAttribute(*device, attr::kMac)) << name;
    EXPECT_FALSE(HasAttribute(*device, attr::kState)) << name;
  }
  ASSERT_NE(FindDevice(devices, "pci-0000-01-00-0"), nullptr);
}

TEST_F(LinksOutOfTheRoot, PciFunctionsAreNotRead) {
  LinkOut("sys/bus/pci/devices/0000:0a:00.0", "pci/0000:0a:00.0", /*absolute=*/false);
  LinkOut("sys/bus/pci/devices/0000:0c:00.0", "pci/0000:0c:00.0", /*absolute=*/true);
  // The netdev dir is sound; only its device link leaves the root.
  host_.Netdev("sys/devices/pci0000:00/0000:0a:00.0", "eth10", 10);
  auto devices = Discover();
  EXPECT_EQ(FindDevice(devices, "pci-0000-0a-00-0"), nullptr);
  EXPECT_EQ(FindDevice(devices, "pci-0000-0c-00-0"), nullptr);
  const Device* nic = FindDevice(devices, "pci-0000-01-00-0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->driver, "mlx5_core");
}

TEST_F(LinksOutOfTheRoot, AttributeFilesAreNotRead) {
  std::string netdev = nic_ + "/net/eth1";
  LinkOut(netdev + "/address", "canary", /*absolute=*/false);
  LinkOut(netdev + "/ifalias", "canary", /*absolute=*/true);
  LinkOut(netdev + "/mtu", "mtu", /*absolute=*/false);
  LinkOut(nic_ + "/numa_node", "numa_node", /*absolute=*/true);
  // An absolute link to a real file of this host: clamped into the root too.
  host_.RawLink(netdev + "/operstate", "/proc/self/environ");
  auto devices = Discover();
  const Device* nic = FindDevice(devices, "pci-0000-01-00-0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->if_name, "eth1");
  EXPECT_FALSE(HasAttribute(*nic, attr::kMac));
  EXPECT_FALSE(HasAttribute(*nic, attr::kMtu));
  EXPECT_FALSE(HasAttribute(*nic, attr::kState));
  EXPECT_FALSE(HasAttribute(*nic, attr::kNumaNode));
  EXPECT_EQ(Attribute<std::string>(*nic, attr::kAlias), "");
  EXPECT_EQ(Attribute<std::string>(*nic, attr::kStandardPcieRoot), "pci0000:00");
}

TEST_F(LinksOutOfTheRoot, RdmaDevicesAreNotRead) {
  LinkOut("sys/class/infiniband/mlx5_9", "ib/mlx5_9", /*absolute=*/false);
  LinkOut("sys/class/infiniband/mlx5_8", "ib/mlx5_9", /*absolute=*/true);
  auto devices = Discover();
  // Read outside, mlx5_9's device link would publish 0000:0b:00.0 and its
  // port would claim eth1.
  EXPECT_EQ(DeviceNames(devices), std::vector<std::string>{"pci-0000-01-00-0"});
  EXPECT_FALSE(Attribute<bool>(devices.at(0), attr::kRdma));
}

// A snapshot file that is a link out of the root is unusable, not read.
TEST_F(LinksOutOfTheRoot, NetlinkJsonIsRefused) {
  host_.WriteNetlinkJson();
  outside_.File(kSnapshotNetlinkFile, R"({"formatVersion":2,"links":[{"name":"eth1","kind":")" +
                                          std::string(kCanary) + R"(","addresses":[]}]})");
  LinkOut(kSnapshotNetlinkFile, kSnapshotNetlinkFile, /*absolute=*/true);
  EXPECT_THROW(DiscoverHost(host_, captured_.log), std::runtime_error);
  auto facts = ReadSnapshotNetlinkFacts(host_.root(), NullLogger());
  for (const auto& link : facts.links) EXPECT_EQ(link.kind.find(kCanary), std::string::npos) << link.name;
}

// `dranetctl snapshot --host-root` reads its source like discovery does: a
// copy of a hostile tree holds nothing from outside it.
TEST_F(LinksOutOfTheRoot, CaptureCopiesNothingFromOutside) {
  LinkOut(nic_ + "/net/eth1/address", "canary", /*absolute=*/false);
  LinkOut(nic_ + "/net/eth1/ifalias", "canary", /*absolute=*/true);
  LinkOut("sys/class/net/eth9", "net/eth9", /*absolute=*/true);
  LinkOut("sys/bus/pci/devices/0000:0a:00.0", "pci/0000:0a:00.0", /*absolute=*/false);
  LinkOut("sys/class/infiniband/mlx5_9", "ib/mlx5_9", /*absolute=*/false);
  host_.WriteNetlinkJson();
  FakeHost parent;
  const auto out = parent.root() / "copy";
  CaptureOptions options;
  options.host_root = host_.root();
  CaptureSnapshot(out, options, NullLogger());
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out)) {
    if (entry.is_symlink()) {
      auto resolved = (entry.path().parent_path() / std::filesystem::read_symlink(entry.path())).lexically_normal();
      EXPECT_EQ(resolved.lexically_relative(out).begin()->string().rfind("..", 0), std::string::npos) << entry.path();
    } else if (entry.is_regular_file()) {
      ++files;
      std::ifstream in(entry.path());
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_EQ(content.find(kCanary), std::string::npos) << entry.path();
    }
  }
  EXPECT_GT(files, 5);  // the sound NIC was copied
}

// Absolute links are the snapshot's own paths: "/sys/devices/..." means
// <root>/sys/devices/..., never the host's /sys.
TEST_F(LinksOutOfTheRoot, AbsoluteLinksInsideTheRootResolveInTheSnapshot) {
  std::string nic = host_.Pci("0000:02:00.0", "0x020000", "mlx5_core");
  host_.Netdev(nic, "eth2", 3, "", {"192.0.2.3/24"});
  host_.RawLink("sys/bus/pci/devices/0000:02:00.0", "/" + nic);
  host_.RawLink(nic + "/driver", "/sys/bus/pci/drivers/mlx5_core");
  host_.RawLink("sys/class/net/eth2", "/" + nic + "/net/eth2");
  auto devices = Discover();
  const Device* device = FindDevice(devices, "pci-0000-02-00-0");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->driver, "mlx5_core");
  EXPECT_EQ(device->if_name, "eth2");
  EXPECT_EQ(Attribute<std::string>(*device, attr::kMac), "02:00:00:00:00:13");
  EXPECT_EQ(Attribute<std::string>(*device, attr::kIpv4), "192.0.2.3/24");
  EXPECT_EQ(Attribute<std::string>(*device, attr::kStandardPcieRoot), "pci0000:00");
  auto sysfs = SysfsDirectory(SysfsDirectory::OpenRoot(host_.root()), "sys");
  EXPECT_EQ(sysfs.ResolveLink("class/net/eth2"), host_.root() / nic / "net/eth2");
}

// Resolved paths never leave the root: ".." stops there, as in the kernel's
// RESOLVE_IN_ROOT.
TEST_F(LinksOutOfTheRoot, ResolvedLinksStayInTheRoot) {
  host_.RawLink("sys/class/net/up", "../../../../../../../../etc");
  host_.RawLink("sys/class/net/abs", "/etc");
  auto root = SysfsDirectory::OpenRoot(host_.root());
  SysfsDirectory sysfs(root, "sys");
  EXPECT_EQ(sysfs.ResolveLink("class/net/up"), host_.root() / "etc");
  EXPECT_EQ(sysfs.ResolveLink("class/net/abs"), host_.root() / "etc");
  EXPECT_FALSE(SysfsDirectory(sysfs, "class/net/up").ok());
  EXPECT_TRUE(sysfs.List("class/net/up").empty());
  EXPECT_FALSE(sysfs.Read("class/net/abs/hostname").has_value());
}

// Makes openat2 fail with ENOSYS in this process, as on Linux < 5.6.
bool DenyOpenat2() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// Without openat2 a snapshot cannot be read contained: it is refused with a
// reason and nothing under it is read, while the live root still works.
TEST(HostileSysfs, WithoutOpenat2ASnapshotIsRefusedNotReadUncontained) {
  FakeHost host;
  host.Pci("0000:01:00.0", "0x020000", "mlx5_core");
  host.WriteNetlinkJson();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!DenyOpenat2()) _exit(3);
    int failures = 0;
    try {
      DiscoverHost(host, NullLogger());
      ++failures;
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("openat2") == std::string::npos) ++failures;
    }
    auto root = SysfsDirectory::OpenRoot(host.root());
    if (SysfsDirectory(root, "sys").ok() || root.Read(kSnapshotNetlinkFile) || !root.List().empty()) ++failures;
    if (!SysfsDirectory(SysfsDirectory::OpenRoot("/"), "proc").ok()) ++failures;
    _exit(failures == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "seccomp filters are not available here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace dranet::inventory
