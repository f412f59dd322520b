#include "health/device_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace dranet::health {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

inventory::Device RoceNic() {
  inventory::Device d;
  d.name = "gpu0rdma0";
  d.pci_address = "0000:91:00.0";
  d.if_name = "gpu0rdma0";
  d.rdma_device = "mlx5_0";
  return d;
}

DeviceFacts Working() {
  DeviceFacts facts;
  facts.ports = {{1, "4: ACTIVE", "5: LinkUp", "Ethernet"}};
  facts.link = LinkState{true, "up", "on the host", false};
  return facts;
}

TEST(Assess, AWorkingNicIsHealthyWithNoMessage) {
  EXPECT_EQ(Assess(RoceNic(), Working()), (Verdict{Health::kHealthy, "", ""}));
}

TEST(Assess, ALinkUpWithoutCarrierIsUnhealthyAndSaysWhere) {
  auto facts = Working();
  facts.link = LinkState{true, "lowerlayerdown", "in pod default/a as net1", true};
  const auto verdict = Assess(RoceNic(), facts);
  EXPECT_EQ(verdict.health, Health::kUnhealthy);
  EXPECT_EQ(verdict.message, "netdev gpu0rdma0 in pod default/a as net1 has no carrier (operstate lowerlayerdown)");
  EXPECT_EQ(verdict.reason, "NoCarrier");
}

TEST(Assess, OnlyAnOperstateThatSaysNoCarrierIsUnhealthy) {
  for (const char* operstate : {"down", "lowerlayerdown", "dormant", "notpresent"}) {
    auto facts = Working();
    facts.link = LinkState{true, operstate, "on the host", false};
    EXPECT_EQ(Assess(RoceNic(), facts).reason, "NoCarrier") << operstate;
  }
  for (const char* operstate : {"up", "unknown"}) {  // unknown: the driver does not say
    auto facts = Working();
    facts.link = LinkState{true, operstate, "on the host", false};
    EXPECT_EQ(Assess(RoceNic(), facts).health, Health::kHealthy) << operstate;
  }
}

TEST(Assess, AVirtualNetdevIsJudgedByItsCarrierInAPodOnly) {
  inventory::Device bridge;  // a bridge without ports has no carrier by design
  bridge.name = "net-bridge0";
  bridge.if_name = "br0";
  DeviceFacts facts;
  facts.link = LinkState{true, "down", "on the host", false};
  EXPECT_EQ(Assess(bridge, facts).health, Health::kHealthy);
  facts.link = LinkState{true, "lowerlayerdown", "in pod ml/p as net1", true};
  EXPECT_EQ(Assess(bridge, facts).reason, "NoCarrier");
}

TEST(Assess, AnAdministrativelyDownNetdevIsNotJudgedByItsLinkNorItsRocePort) {
  auto facts = Working();
  facts.link = LinkState{false, "down", "on the host", false};
  facts.ports = {{1, "1: DOWN", "3: Disabled", "Ethernet"}};
  EXPECT_EQ(Assess(RoceNic(), facts).health, Health::kHealthy);
}

TEST(Assess, AnInfinibandPortIsJudgedWhateverItsNetdev) {
  auto facts = Working();
  facts.link = LinkState{false, "down", "on the host", false};
  facts.ports = {{1, "2: INIT", "5: LinkUp", "InfiniBand"}};
  const auto verdict = Assess(RoceNic(), facts);
  EXPECT_EQ(verdict.health, Health::kUnhealthy);
  EXPECT_EQ(verdict.message, "mlx5_0 port 1 is INIT (physical state LinkUp)");
}

TEST(Assess, APhysicalStateOtherThanLinkUpIsUnhealthyEvenWhenActive) {
  auto facts = Working();
  facts.ports = {{1, "4: ACTIVE", "3: Disabled", "InfiniBand"}};
  EXPECT_EQ(Assess(RoceNic(), facts).message, "mlx5_0 port 1 is ACTIVE (physical state Disabled)");
}

TEST(Assess, ASnapshotWithoutPhysStateIsJudgedByStateAlone) {
  auto facts = Working();
  facts.ports = {{1, "4: ACTIVE", "", "Ethernet"}};
  EXPECT_EQ(Assess(RoceNic(), facts).health, Health::kHealthy);
  facts.ports = {{1, "1: DOWN", "", "Ethernet"}};
  EXPECT_EQ(Assess(RoceNic(), facts).message, "mlx5_0 port 1 is DOWN");
}

TEST(Assess, GoneThingsAreNamedTogether) {
  DeviceFacts facts;
  facts.pci_present = false;
  facts.rdma_present = false;
  const auto verdict = Assess(RoceNic(), facts);
  EXPECT_EQ(verdict.health, Health::kUnhealthy);
  EXPECT_EQ(verdict.message,
            "PCI function 0000:91:00.0 is gone from the bus; RDMA device mlx5_0 is gone; netdev gpu0rdma0 is gone");
  EXPECT_EQ(verdict.reason, "PciFunctionGone");  // the first
}

TEST(Assess, AnRdmaDeviceMovedIntoThePodIsNotJudged) {
  auto facts = Working();
  facts.rdma_judged = false;
  facts.rdma_present = false;
  facts.ports.clear();
  EXPECT_EQ(Assess(RoceNic(), facts).health, Health::kHealthy);
}

TEST(Assess, AnIbOnlyDeviceHasNoNetdevToLookFor) {
  inventory::Device ib;
  ib.name = "mlx5-0";
  ib.rdma_device = "mlx5_0";
  DeviceFacts facts;
  facts.ports = {{1, "4: ACTIVE", "5: LinkUp", "InfiniBand"}};
  EXPECT_EQ(Assess(ib, facts).health, Health::kHealthy);
}

TEST(Assess, TheMessageFitsTheKubeletAndStaysUtf8) {
  inventory::Device d = RoceNic();
  // Cut inside the two-byte character: "PCI function ... bus; netdev " is 55 bytes, and the
  // cut keeps 1021 (1024 less the ellipsis): the character's first byte is the 1021st.
  d.if_name = std::string(1020 - 55, 'n') + "\xc3\xa9" + std::string(100, 'n');
  DeviceFacts facts;  // the PCI function and the netdev gone
  facts.pci_present = false;
  const auto verdict = Assess(d, facts);
  EXPECT_LE(verdict.message.size(), kMaxMessageBytes);
  EXPECT_THAT(verdict.message, ::testing::EndsWith("..."));
  // Not half a character before the ellipsis: the cut fell inside it, so it went whole.
  EXPECT_EQ(verdict.message.size(), 1020u + 3u);
  const auto before = verdict.message.substr(0, verdict.message.size() - 3);
  EXPECT_EQ(before.back(), 'n');
}

TEST(HealthName, IsTheKubeletsSpelling) {
  EXPECT_STREQ(HealthName(Health::kHealthy), "Healthy");
  EXPECT_STREQ(HealthName(Health::kUnhealthy), "Unhealthy");
  EXPECT_STREQ(HealthName(Health::kUnknown), "Unknown");
}

const std::string kA4 = std::string(DRANET_TEST_NODES_DIR) + "/a4-highgpu-8g";

TEST(ReadDeviceFacts, ReadsTheSnapshotsPortsAndPciFunction) {
  inventory::Device d = RoceNic();
  d.pci_address = "0000:09:00.0";  // mlx5_0's function in the A4 snapshot
  const auto facts = ReadDeviceFacts(kA4, d);
  EXPECT_TRUE(facts.pci_present);
  EXPECT_TRUE(facts.rdma_present);
  ASSERT_EQ(facts.ports.size(), 1u);
  EXPECT_EQ(facts.ports[0].port, 1);
  EXPECT_EQ(facts.ports[0].state, "4: ACTIVE");
  EXPECT_EQ(facts.ports[0].phys_state, "");
  EXPECT_EQ(facts.ports[0].link_layer, "Ethernet");
  EXPECT_FALSE(facts.link);
}

TEST(ReadDeviceFacts, MissingThingsReadAsGone) {
  inventory::Device d = RoceNic();
  d.pci_address = "0000:ff:1f.7";
  d.rdma_device = "mlx5_99";
  const auto facts = ReadDeviceFacts(kA4, d);
  EXPECT_FALSE(facts.pci_present);
  EXPECT_FALSE(facts.rdma_present);
  EXPECT_THAT(facts.ports, IsEmpty());
}

TEST(ReadDeviceFacts, AChangedStateFileIsReadAgainAndItsDirectoryIsWatched) {
  char dir_template[] = "/tmp/dranet-health-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::filesystem::path root = dir_template;
  const auto port = root / "sys/class/infiniband/mlx5_0/ports/1";
  std::filesystem::create_directories(port);
  std::ofstream(port / "state") << "4: ACTIVE\n";
  std::ofstream(port / "link_layer") << "InfiniBand\n";
  inventory::Device d;
  d.name = "mlx5-0";
  d.rdma_device = "mlx5_0";
  EXPECT_EQ(Assess(d, ReadDeviceFacts(root, d)).health, Health::kHealthy);
  std::ofstream(port / "state") << "1: DOWN\n";
  EXPECT_EQ(Assess(d, ReadDeviceFacts(root, d)).message, "mlx5_0 port 1 is DOWN");
  EXPECT_EQ(WatchedDirectories(root, d), std::vector<std::string>{std::filesystem::canonical(port).string()});
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace dranet::health
