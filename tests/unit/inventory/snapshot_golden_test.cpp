// Golden tests: discovery on the bundled node snapshots gives the devices and
// attributes published for those node types (see tests/nodes/*/README.md).
#include <gtest/gtest.h>

#include <set>

#include "inventory/inventory.h"
#include "inventory/naming.h"
#include "inventory/snapshot.h"
#include "test_support.h"

namespace dranet::inventory {
namespace {

using testing::Attribute;
using testing::CapturedLog;
using testing::DeviceNames;
using testing::FindDevice;
using testing::HasAttribute;
using testing::NodeSnapshot;

std::vector<Device> DiscoverSnapshot(const std::string& name, bool skip_ipoib = false) {
  DiscoveryOptions options;
  options.host_root = NodeSnapshot(name);
  options.skip_ipoib = skip_ipoib;
  return Discover(options, NullLogger());
}

std::set<std::string> AttributeKeys(const Device& device) {
  std::set<std::string> keys;
  for (const auto& [key, value] : device.attributes) keys.insert(key);
  return keys;
}

TEST(Gb300Snapshot, PublishesFourIbOnlyVfs) {
  auto devices = DiscoverSnapshot("nd-gb300-v6", /*skip_ipoib=*/true);
  EXPECT_EQ(DeviceNames(devices), (std::vector<std::string>{"pci-0101-00-00-0", "pci-0102-00-00-0",
                                                            "pci-0103-00-00-0", "pci-0104-00-00-0"}));
  const int64_t numa[] = {0, 0, 1, 1};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const Device& device = devices.at(i);
    std::string address = "010" + std::to_string(i + 1) + ":00:00.0";
    EXPECT_EQ(AttributeKeys(device),
              (std::set<std::string>{"dra.net/pciAddress", "dra.net/pciVendor", "dra.net/pciDevice",
                                     "dra.net/pciSubsystem", "dra.net/numaNode", "dra.net/rdma",
                                     "dra.net/rdmaDevice", "resource.kubernetes.io/pciBusID",
                                     "resource.kubernetes.io/pcieRoot", "resource.kubernetes.io/numaNode"}));
    EXPECT_EQ(Attribute<std::string>(device, attr::kPciAddress), address);
    EXPECT_EQ(Attribute<std::string>(device, attr::kStandardPciBusId), address);
    EXPECT_EQ(Attribute<std::string>(device, attr::kRdmaDevice), "mlx5_" + std::to_string(i));
    EXPECT_TRUE(Attribute<bool>(device, attr::kRdma));
    EXPECT_EQ(Attribute<int64_t>(device, attr::kNumaNode), numa[i]);
    EXPECT_EQ(Attribute<int64_t>(device, attr::kStandardNumaNode), numa[i]);
    EXPECT_EQ(Attribute<std::string>(device, attr::kPciVendor), "Mellanox Technologies");
    EXPECT_EQ(Attribute<std::string>(device, attr::kPciDevice), "ConnectX Family mlx5Gen Virtual Function");
    EXPECT_EQ(Attribute<std::string>(device, attr::kPciSubsystem), "0240");
    // Hyper-V gives each VF its own domain, hence its own root.
    EXPECT_EQ(Attribute<std::string>(device, attr::kStandardPcieRoot), "pci010" + std::to_string(i + 1) + ":00");
    EXPECT_EQ(device.rdma_device, "mlx5_" + std::to_string(i));
    EXPECT_TRUE(device.if_name.empty());
    EXPECT_EQ(device.driver, "mlx5_core");
    EXPECT_EQ(device.pci_vendor_id, 0x15b3u);
    EXPECT_EQ(device.pci_device_id, 0x101eu);
    EXPECT_EQ(device.numa_node, numa[i]);
    uint32_t n = static_cast<uint32_t>(i);
    EXPECT_EQ(device.char_devices,
              (std::vector<CharDevice>{{"infiniband/rdma_cm", 10, 58},
                                       {"infiniband/umad" + std::to_string(i), 231, n},
                                       {"infiniband/uverbs" + std::to_string(i), 231, 192 + n}}));
  }
}

TEST(Gb300Snapshot, ExcludesTheUplinkAndItsAcceleratedNetworkingVf) {
  auto devices = DiscoverSnapshot("nd-gb300-v6");
  EXPECT_EQ(FindDevice(devices, "eth0"), nullptr);
  EXPECT_EQ(FindDevice(devices, "pci-7870-00-02-0"), nullptr);
  EXPECT_EQ(devices.size(), 4u);
}

TEST(Gb300Snapshot, EachHcaHasItsPortsRateAsLinkSpeed) {
  // ports/1/rate: "800 Gb/sec (4X XDR)".
  for (const auto& device : DiscoverSnapshot("nd-gb300-v6")) EXPECT_EQ(device.link_speed_mbps, 800000) << device.name;
}

TEST(RdmaRate, ReadsGbitPerSecondAsMbit) {
  EXPECT_EQ(RdmaRateMbps("400 Gb/sec (4X NDR)\n"), 400000);
  EXPECT_EQ(RdmaRateMbps("2.5 Gb/sec (1X SDR)"), 2500);
  EXPECT_EQ(RdmaRateMbps("53.125 Gb/sec (1X HDR)"), 53100);
  EXPECT_EQ(RdmaRateMbps("0 Gb/sec"), 0);
  EXPECT_EQ(RdmaRateMbps("400 Mb/sec"), 0);
  EXPECT_EQ(RdmaRateMbps("fast"), 0);
  EXPECT_EQ(RdmaRateMbps(""), 0);
  EXPECT_EQ(RdmaRateMbps("-5 Gb/sec"), 0);
}

TEST(Gb300Snapshot, RecordsNodeName) {
  auto info = ReadSnapshotInfo(NodeSnapshot("nd-gb300-v6"), NullLogger());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->node_name, "aks-gpu-45139532-vmss000081");
  EXPECT_EQ(info->format_version, kSnapshotFormatVersion);
}

TEST(Mi300xSnapshot, SkipIpoibGivesEightIbOnlyVfs) {
  auto devices = DiscoverSnapshot("nd-mi300x-v5", /*skip_ipoib=*/true);
  ASSERT_EQ(devices.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    const Device& device = devices.at(i);
    EXPECT_EQ(device.name, "pci-010" + std::to_string(i + 1) + "-00-00-0");
    EXPECT_EQ(Attribute<std::string>(device, attr::kRdmaDevice), "mlx5_" + std::to_string(i));
    EXPECT_EQ(Attribute<int64_t>(device, attr::kNumaNode), i < 4 ? 0 : 1);
    EXPECT_EQ(Attribute<std::string>(device, attr::kPciSubsystem), "0101");
    EXPECT_FALSE(HasAttribute(device, attr::kIfName));
    EXPECT_TRUE(device.if_name.empty());
  }
}

TEST(Mi300xSnapshot, WithoutSkipIpoibTheVfsCarryTheirIpoibNetdev) {
  auto devices = DiscoverSnapshot("nd-mi300x-v5", /*skip_ipoib=*/false);
  ASSERT_EQ(devices.size(), 8u);
  const Device& device = devices.at(2);
  EXPECT_EQ(Attribute<std::string>(device, attr::kIfName), "ib2");
  EXPECT_EQ(Attribute<std::string>(device, attr::kType), "ipoib");
  EXPECT_EQ(Attribute<std::string>(device, attr::kEncapsulation), "infiniband");
  EXPECT_EQ(Attribute<int64_t>(device, attr::kMtu), 4092);
  EXPECT_EQ(Attribute<std::string>(device, attr::kIpv4), "172.16.2.5/16");
  EXPECT_EQ(Attribute<std::string>(device, attr::kMac).size(), 59u);  // 20-byte IPoIB address
  EXPECT_FALSE(Attribute<bool>(device, attr::kVirtual));
  EXPECT_FALSE(Attribute<bool>(device, attr::kSriov));
  EXPECT_EQ(Attribute<std::string>(device, attr::kRdmaDevice), "mlx5_2");
}

TEST(A4Snapshot, PublishesEightRoceNicsAndTheSecondGvnic) {
  auto devices = DiscoverSnapshot("a4-highgpu-8g");
  ASSERT_EQ(devices.size(), 9u);
  const char* nic_buses[] = {"09", "0d", "14", "18", "b9", "bd", "c4", "c8"};
  const char* gpu_buses[] = {"0a", "0e", "15", "19", "ba", "be", "c5", "c9"};
  HostPaths paths(NodeSnapshot("a4-highgpu-8g"));
  auto root = SysfsDirectory::OpenRoot(paths.root);
  SysfsDirectory sysfs(root, "sys");
  for (int n = 0; n < 8; ++n) {
    SCOPED_TRACE(n);
    std::string address = std::string("0000:") + nic_buses[n] + ":00.0";
    const Device* device = FindDevice(devices, DeviceNameForPciAddress(address));
    ASSERT_NE(device, nullptr);
    EXPECT_EQ(Attribute<std::string>(*device, attr::kIfName), "gpu" + std::to_string(n) + "rdma0");
    EXPECT_EQ(Attribute<int64_t>(*device, attr::kMtu), 8896);
    EXPECT_EQ(Attribute<std::string>(*device, attr::kIpv4), "192.168." + std::to_string(n + 1) + ".4/32");
    EXPECT_FALSE(HasAttribute(*device, attr::kIpv6));  // only link-local v6
    EXPECT_EQ(Attribute<std::string>(*device, attr::kRdmaDevice), "mlx5_" + std::to_string(n));
    EXPECT_TRUE(Attribute<bool>(*device, attr::kRdma));
    EXPECT_EQ(Attribute<int64_t>(*device, attr::kNumaNode), n < 4 ? 0 : 1);
    EXPECT_EQ(Attribute<std::string>(*device, attr::kState), "up");
    EXPECT_EQ(Attribute<std::string>(*device, attr::kType), "device");
    EXPECT_EQ(Attribute<std::string>(*device, attr::kEncapsulation), "ether");
    EXPECT_EQ(Attribute<std::string>(*device, attr::kPciDevice), "MT2910 Family [ConnectX-7]");
    // NIC N and GPU N hang from the same PCIe root.
    auto gpu_link = sysfs.ResolveLink(std::string("bus/pci/devices/0000:") + gpu_buses[n] + ":00.0");
    ASSERT_TRUE(gpu_link.has_value());
    EXPECT_EQ(Attribute<std::string>(*device, attr::kStandardPcieRoot), PcieRootInPath(*gpu_link, paths.sysfs));
    uint32_t index = static_cast<uint32_t>(n);
    EXPECT_EQ(device->char_devices,
              (std::vector<CharDevice>{{"infiniband/issm" + std::to_string(n), 231, 64 + index},
                                       {"infiniband/rdma_cm", 10, 58},
                                       {"infiniband/umad" + std::to_string(n), 231, index},
                                       {"infiniband/uverbs" + std::to_string(n), 231, 192 + index}}));
  }
  const Device* gpu7 = FindDevice(devices, "pci-0000-c8-00-0");
  ASSERT_NE(gpu7, nullptr);
  EXPECT_EQ(gpu7->if_name, "gpu7rdma0");
}

TEST(A4Snapshot, ExcludesEth0AndKeepsEth1) {
  auto devices = DiscoverSnapshot("a4-highgpu-8g");
  EXPECT_EQ(FindDevice(devices, "pci-0000-00-04-0"), nullptr);
  const Device* eth1 = FindDevice(devices, "pci-0000-00-05-0");
  ASSERT_NE(eth1, nullptr);
  EXPECT_EQ(Attribute<std::string>(*eth1, attr::kIfName), "eth1");
  EXPECT_EQ(Attribute<std::string>(*eth1, attr::kPciVendor), "Google, Inc.");
  EXPECT_EQ(Attribute<std::string>(*eth1, attr::kPciDevice), "Compute Engine Virtual Ethernet [gVNIC]");
  EXPECT_EQ(Attribute<std::string>(*eth1, attr::kIpv4), "10.0.1.2/32");
  EXPECT_EQ(Attribute<int64_t>(*eth1, attr::kMtu), 1460);
  EXPECT_FALSE(Attribute<bool>(*eth1, attr::kRdma));
  EXPECT_FALSE(HasAttribute(*eth1, attr::kRdmaDevice));
  EXPECT_TRUE(eth1->char_devices.empty());
}

TEST(SriovSnapshot, PublishesEightPfsAndFiveHundredTwelveVfs) {
  auto devices = DiscoverSnapshot("sriov-8pf-64vf");
  ASSERT_EQ(devices.size(), 520u);
  int pfs = 0;
  int vfs = 0;
  for (const auto& device : devices) {
    if (HasAttribute(device, attr::kIsSriovVf)) {
      ++vfs;
      EXPECT_TRUE(Attribute<bool>(device, attr::kIsSriovVf));
      EXPECT_FALSE(Attribute<bool>(device, attr::kSriov));
      EXPECT_FALSE(HasAttribute(device, attr::kSriovVfs));
    } else if (Attribute<bool>(device, attr::kSriov)) {
      ++pfs;
      EXPECT_EQ(Attribute<int64_t>(device, attr::kSriovVfs), 64);
    }
    EXPECT_TRUE(Attribute<bool>(device, attr::kRdma));
  }
  EXPECT_EQ(pfs, 8);
  EXPECT_EQ(vfs, 512);
  EXPECT_EQ(FindDevice(devices, "pci-0000-00-03-0"), nullptr) << "eth0 carries the default route";
}

class AllSnapshots : public ::testing::TestWithParam<const char*> {};

TEST_P(AllSnapshots, OutputIsValidSortedAndDeterministic) {
  DiscoveryOptions options;
  options.host_root = NodeSnapshot(GetParam());
  Discoverer discoverer(options, NullLogger());
  auto first = discoverer.Discover();
  auto second = discoverer.Discover();
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, second);
  for (std::size_t i = 0; i < first.size(); ++i) {
    const Device& device = first[i];
    EXPECT_TRUE(IsDnsLabel(device.name)) << device.name;
    if (i > 0) {
      EXPECT_LT(first[i - 1].name, device.name);
    }
    EXPECT_TRUE(HasAttribute(device, attr::kRdma)) << device.name;
    EXPECT_LE(device.attributes.size(), 32u) << device.name;
    for (const auto& [key, value] : device.attributes) {
      if (const auto* text = std::get_if<std::string>(&value)) {
        EXPECT_LE(text->size(), kMaxAttributeValueBytes) << device.name << " " << key;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Nodes, AllSnapshots,
                         ::testing::Values("nd-gb300-v6", "nd-mi300x-v5", "a4-highgpu-8g", "sriov-8pf-64vf"));

TEST(SnapshotMetadata, CloudResponsesAndDmiAreRecorded) {
  auto gb300 = NodeSnapshot("nd-gb300-v6");
  EXPECT_EQ(ReadSysfsValue(gb300 / "sys/class/dmi/id/sys_vendor"), "Microsoft Corporation");
  EXPECT_EQ(ReadSysfsValue(gb300 / "sys/class/dmi/id/chassis_asset_tag"), "7783-7084-3265-9085-8269-3286-77");
  auto imds = ReadSysfsValue(gb300 / "metadata/azure/metadata/instance");
  ASSERT_TRUE(imds.has_value());
  EXPECT_NE(imds->find("\"vmSize\": \"Standard_ND128isr_GB300_v6\""), std::string::npos);
  EXPECT_NE(imds->find("c6c749e8-a38b-470e-8c94-2a7d00001bf0"), std::string::npos);
  auto a4 = NodeSnapshot("a4-highgpu-8g");
  EXPECT_EQ(ReadSysfsValue(a4 / "sys/class/dmi/id/product_name"), "Google Compute Engine");
  EXPECT_EQ(ReadSysfsValue(a4 / "metadata/gce/computeMetadata/v1/instance/machine-type"),
            "projects/123456789012/machineTypes/a4-highgpu-8g");
}

}  // namespace
}  // namespace dranet::inventory
