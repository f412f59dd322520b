// The nvidia plugin .so through the plugin host: GPU affinity on a
// constructed PCI topology (every link class), on the GB300 and A4 node
// snapshots, NVML absent, and NCCL_IB_HCA injection.
#include <gtest/gtest.h>

#include "pci_topology.h"
#include "plugin_fixture.h"

namespace {

namespace fs = std::filesystem;
using dranet::plugins::PluginOutcome;

const fs::path kNodes(DRANET_TEST_NODES_DIR);
constexpr uint32_t kGpuClass = 0x030200;  // 3D controller
constexpr uint32_t kIbClass = 0x020700;

class NvidiaPluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  std::map<std::string, std::string> NoNvml() { return {{"nvml", "off"}}; }
};

TEST_F(NvidiaPluginTest, EveryLinkClassOnAConstructedTopology) {
  // Socket 0: host bridge pci0000:00 with root port 00:01.0 -> switch
  // (up 02:00.0, downs 03:00.0 03:01.0 03:02.0) and root port 00:02.0.
  const std::vector<std::string> sw{"0000:00:01.0", "0000:02:00.0"};
  Pci("0000:04:00.0", "pci0000:00", {sw[0], sw[1], "0000:03:00.0"}, 0x10de, 0x2901, kGpuClass, 0);  // GPU0
  Pci("0000:05:00.0", "pci0000:00", {sw[0], sw[1], "0000:03:01.0"}, 0x15b3, 0x1021, kIbClass, 0);    // NIC PIX
  // A second-level switch under 03:02.0 holds a NIC: two switches to GPU0.
  Pci("0000:07:00.0", "pci0000:00", {sw[0], sw[1], "0000:03:02.0", "0000:06:00.0", "0000:06:01.0"}, 0x15b3, 0x1021,
      kIbClass, 0);  // NIC PXB
  Pci("0000:0a:00.0", "pci0000:00", {"0000:00:02.0"}, 0x15b3, 0x1021, kIbClass, 0);  // NIC PHB
  Pci("0000:41:00.0", "pci0000:40", {"0000:40:01.0"}, 0x15b3, 0x1021, kIbClass, 0);  // NIC NODE
  // The only GPU is on socket 0, so a NIC on socket 1 is SYS to it.
  Pci("0000:81:00.0", "pci0000:80", {"0000:80:01.0"}, 0x15b3, 0x1021, kIbClass, 1);  // NIC SYS
  auto host = Load("nvidia", NoNvml());
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  std::vector<dranet::inventory::Device> devices{Nic("0000:05:00.0", "mlx5_0"), Nic("0000:07:00.0", "mlx5_1"),
                                                 Nic("0000:0a:00.0", "mlx5_2"), Nic("0000:41:00.0", "mlx5_3"),
                                                 Nic("0000:81:00.0", "mlx5_4"), Nic("", "", "veth0")};
  host->Annotate(devices);
  const char* expected[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  for (int i = 0; i < 5; ++i) {
    const auto& d = devices[static_cast<std::size_t>(i)];
    EXPECT_EQ(Str(d, "nvidia.dra.net/gpuLink"), expected[i]) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpu"), "0000:04:00.0") << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpuIndex"), "0") << d.name;
  }
  EXPECT_FALSE(Has(devices[5], "nvidia.dra.net/nearestGpu")) << "virtual devices have no PCI position";
}

TEST_F(NvidiaPluginTest, Gb300PairsNicsWithGpusByNuma) {
  auto host = Load("nvidia", NoNvml(), kNodes / "nd-gb300-v6");
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  std::vector<dranet::inventory::Device> devices{Nic("0101:00:00.0", "mlx5_0"), Nic("0102:00:00.0", "mlx5_1"),
                                                 Nic("0103:00:00.0", "mlx5_2"), Nic("0104:00:00.0", "mlx5_3")};
  host->Annotate(devices);
  const char* gpu[] = {"0008:06:00.0", "0009:06:00.0", "0018:06:00.0", "0019:06:00.0"};
  for (int i = 0; i < 4; ++i) {
    const auto& d = devices[static_cast<std::size_t>(i)];
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpu"), gpu[i]) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpuIndex"), std::to_string(i)) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/gpuLink"), "NODE") << d.name;
  }
  // nvidia-smi topo -m on GB300: NIC2/NIC3 are SYS to GPU0.
  std::string sysfs = (kNodes / "nd-gb300-v6/sys").string();
  auto gpu0 = dranet::plugins::common::ReadPciFunction(sysfs, "0008:06:00.0");
  for (const char* nic : {"0103:00:00.0", "0104:00:00.0"})
    EXPECT_EQ(dranet::plugins::common::Classify(*dranet::plugins::common::ReadPciFunction(sysfs, nic), *gpu0),
              dranet::plugins::common::LinkClass::kSYS)
        << nic;
}

TEST_F(NvidiaPluginTest, A4RdmaNicsSitUnderTheirGpusSwitch) {
  auto host = Load("nvidia", NoNvml(), kNodes / "a4-highgpu-8g");
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  const char* nic[] = {"0000:09:00.0", "0000:0d:00.0", "0000:14:00.0", "0000:18:00.0",
                       "0000:b9:00.0", "0000:bd:00.0", "0000:c4:00.0", "0000:c8:00.0"};
  const char* gpu[] = {"0000:0a:00.0", "0000:0e:00.0", "0000:15:00.0", "0000:19:00.0",
                       "0000:ba:00.0", "0000:be:00.0", "0000:c5:00.0", "0000:c9:00.0"};
  std::vector<dranet::inventory::Device> devices;
  for (int n = 0; n < 8; ++n) devices.push_back(Nic(nic[n], "mlx5_" + std::to_string(n), "gpu" + std::to_string(n) + "rdma0"));
  host->Annotate(devices);
  for (int n = 0; n < 8; ++n) {
    const auto& d = devices[static_cast<std::size_t>(n)];
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpu"), gpu[n]) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpuIndex"), std::to_string(n)) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/gpuLink"), "PIX") << d.name;
  }
}

// OCI BM.GPU.GB200-v3.4: the GPUs hang off Grace by C2C, so every NIC port
// is only NUMA-close to its node's two GPUs (nvidia-smi prints SYS for all
// pairs; we print NODE for the same-NUMA ones). The two ports of one
// ConnectX-8 card go to one GPU; the node's two cards to its two GPUs.
TEST_F(NvidiaPluginTest, OciGb200DualPortCardsPairWithOneGpuEach) {
  auto host = Load("nvidia", NoNvml(), kNodes / "oci-gb200");
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  const char* ports[] = {"0000:03:00.0", "0000:03:00.1", "0002:03:00.0", "0002:03:00.1",
                         "0010:03:00.0", "0010:03:00.1", "0012:03:00.0", "0012:03:00.1"};
  std::vector<dranet::inventory::Device> devices;
  for (int i = 0; i < 8; ++i) devices.push_back(Nic(ports[i], "mlx5_" + std::to_string(i), "rdma" + std::to_string(i)));
  host->Annotate(devices);
  const char* gpu[] = {"0008:06:00.0", "0009:06:00.0", "0018:06:00.0", "0019:06:00.0"};
  for (int i = 0; i < 8; ++i) {
    const auto& d = devices[static_cast<std::size_t>(i)];
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpu"), gpu[i / 2]) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpuIndex"), std::to_string(i / 2)) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/gpuLink"), "NODE") << d.name;
  }
}

// OCI BM.GPU.H100.8: each GPU shares a PCIe switch with one dual-port
// ConnectX-7 (rdma2k, rdma2k+1): PIX, GPU k; the front-end port is not
// under a GPU's switch.
TEST_F(NvidiaPluginTest, OciH100PortPairsSitUnderTheirGpusSwitch) {
  auto host = Load("nvidia", NoNvml(), kNodes / "oci-h100");
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  const char* buses[] = {"0c", "2a", "41", "58", "86", "a5", "bd", "d5"};
  const char* gpus[] = {"0f", "2d", "44", "5b", "89", "a8", "c0", "d8"};
  std::vector<dranet::inventory::Device> devices;
  for (int i = 0; i < 16; ++i)
    devices.push_back(Nic(std::string("0000:") + buses[i / 2] + ":00." + std::to_string(i % 2), "",
                          "rdma" + std::to_string(i)));
  devices.push_back(Nic("0000:9a:00.0", "mlx5_11", "eth1"));
  host->Annotate(devices);
  for (int i = 0; i < 16; ++i) {
    const auto& d = devices[static_cast<std::size_t>(i)];
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpu"), std::string("0000:") + gpus[i / 2] + ":00.0") << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/nearestGpuIndex"), std::to_string(i / 2)) << d.name;
    EXPECT_EQ(Str(d, "nvidia.dra.net/gpuLink"), "PIX") << d.name;
  }
  EXPECT_NE(Str(devices[16], "nvidia.dra.net/gpuLink"), "PIX") << "the front-end port shares no switch with a GPU";
}

TEST_F(NvidiaPluginTest, InjectsExactHcaListForNccl) {
  auto host = Load("nvidia", NoNvml(), kNodes / "nd-gb300-v6");
  auto edits = host->Inject({"ns", "claim", "uid-1"},
                            {Nic("0102:00:00.0", "mlx5_1"), Nic("0101:00:00.0", "mlx5_0"), Nic("", "", "eth9")});
  EXPECT_TRUE(edits.errors.empty());
  EXPECT_EQ(edits.env.at("NCCL_IB_HCA"), "=mlx5_0,mlx5_1");
  auto none = host->Inject({"ns", "claim2", "uid-2"}, {Nic("", "", "eth9")});
  EXPECT_EQ(none.env.count("NCCL_IB_HCA"), 0u) << "no RDMA device, no NCCL_IB_HCA";
}

TEST_F(NvidiaPluginTest, WorksWithoutNvml) {
  auto host = Load("nvidia", {{"nvml", "on"}, {"nvml-library", "/nonexistent/libnvidia-ml.so.1"}},
                   kNodes / "nd-gb300-v6");
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_NE(Log().find("NVML not used (cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos) << Log();
  EXPECT_NE(Log().find("NVIDIA GPUs (PCI bus ID order): 0008:06:00.0,0009:06:00.0,0018:06:00.0,0019:06:00.0"),
            std::string::npos)
      << Log();
}

TEST_F(NvidiaPluginTest, InvalidNvmlModeFailsInitClearly) {
  auto host = Load("nvidia", {{"nvml", "sometimes"}}, kNodes / "nd-gb300-v6");
  EXPECT_EQ(host->loaded_count(), 0u);
  ASSERT_NE(Report(*host, "nvidia"), nullptr);
  EXPECT_EQ(Report(*host, "nvidia")->outcome, PluginOutcome::kFailed);
  EXPECT_NE(Report(*host, "nvidia")->reason.find("configuration nvml=\"sometimes\": expected auto, on or off"),
            std::string::npos)
      << Report(*host, "nvidia")->reason;
}

TEST_F(NvidiaPluginTest, NotApplicableWithoutNvidiaGpus) {
  auto host = Load("nvidia", NoNvml(), kNodes / "nd-mi300x-v5");
  EXPECT_EQ(host->loaded_count(), 0u);
  ASSERT_NE(Report(*host, "nvidia"), nullptr);
  EXPECT_EQ(Report(*host, "nvidia")->outcome, PluginOutcome::kNotApplicable);
  EXPECT_NE(Report(*host, "nvidia")->reason.find("no NVIDIA GPU"), std::string::npos);
}

}  // namespace
