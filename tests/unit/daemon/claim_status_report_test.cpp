// status.devices entries from a RunPodSandbox outcome: DRANET's conditions
// and reasons, networkData with the pod's name, addresses and MAC.
#include "daemon/claim_status_report.h"

#include <gtest/gtest.h>

namespace dranet::daemon {
namespace {

constexpr char kNow[] = "2026-01-02T03:04:05Z";

inject::ClaimPlan Plan() {
  inject::ClaimPlan plan;
  plan.claim_uid = "uid-1";
  plan.claim_namespace = "ml";
  plan.claim_name = "nics";
  plan.devices = {{"nic", "node-a", "pci-0000-8a-00-0"}, {"ib", "node-a", "mlx5-4"}};
  inject::NetdevPlan netdev;
  netdev.device_name = "pci-0000-8a-00-0";
  netdev.host_if_name = "gpu0rdma0";
  netdev.pod_if_name = "net1";
  netdev.addresses = {"10.0.0.2/24", "fd00::2/64"};
  netdev.host_state.mac = "02:00:00:00:00:01";
  plan.netdevs.push_back(netdev);
  return plan;
}

std::vector<std::string> Types(const kube::AllocatedDeviceStatus& d) {
  std::vector<std::string> out;
  for (const auto& c : d.conditions) out.push_back(c.type + "=" + c.status + "/" + c.reason);
  return out;
}

TEST(ClaimStatusReport, NetdevAndIbOnlyDevicesGetDranetsConditions) {
  const auto claims = PodDeviceStatuses({Plan()}, "", false, "dra.net", kNow);
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].claim_namespace, "ml");
  EXPECT_EQ(claims[0].claim_name, "nics");
  ASSERT_EQ(claims[0].devices.size(), 2u);
  const auto& nic = claims[0].devices[0];
  EXPECT_EQ(nic.driver, "dra.net");
  EXPECT_EQ(nic.pool, "node-a");
  EXPECT_EQ(nic.device, "pci-0000-8a-00-0");
  EXPECT_EQ(Types(nic), (std::vector<std::string>{"Ready=True/NetworkDeviceReady", "NetworkReady=True/NetworkReady"}));
  EXPECT_EQ(nic.conditions[0].last_transition_time, kNow);
  ASSERT_TRUE(nic.network_data);
  EXPECT_EQ(nic.network_data->interface_name, "net1");
  EXPECT_EQ(nic.network_data->ips, (std::vector<std::string>{"10.0.0.2/24", "fd00::2/64"}));
  EXPECT_EQ(nic.network_data->hardware_address, "02:00:00:00:00:01");
  const auto& ib = claims[0].devices[1];
  EXPECT_EQ(ib.device, "mlx5-4");
  EXPECT_EQ(Types(ib), (std::vector<std::string>{"Ready=True/RDMAOnlyDeviceReady"}));
  EXPECT_FALSE(ib.network_data);
}

// A device held by another claim, allocated here with adminAccess: nothing
// moved, so no network data, even when the claim also holds a netdev.
TEST(ClaimStatusReport, AnAdminAccessDeviceIsReadyWithoutNetworkData) {
  auto plan = Plan();
  plan.devices.push_back({"watch", "node-a", "pci-0000-8b-00-0", true});
  const auto claims = PodDeviceStatuses({plan}, "", false, "dra.net", kNow);
  ASSERT_EQ(claims.at(0).devices.size(), 3u);
  const auto& watched = claims[0].devices[2];
  EXPECT_EQ(watched.device, "pci-0000-8b-00-0");
  EXPECT_EQ(Types(watched), (std::vector<std::string>{"Ready=True/AdminAccessReady"}));
  EXPECT_FALSE(watched.network_data);
  EXPECT_TRUE(claims[0].devices[0].network_data);
}

// A share of a device: its status entry carries the shareID (the API keys
// status.devices by driver, pool, device and shareID), and nothing moved.
TEST(ClaimStatusReport, AShareIsReadyUnderItsShareIdWithoutNetworkData) {
  auto plan = Plan();
  plan.devices.push_back({"share", "node-a", "pci-0000-8c-00-0", false, "6f1c0d1e-0000-4000-8000-000000000001"});
  const auto claims = PodDeviceStatuses({plan}, "", false, "dra.net", kNow);
  ASSERT_EQ(claims.at(0).devices.size(), 3u);
  const auto& share = claims[0].devices[2];
  EXPECT_EQ(share.share_id, "6f1c0d1e-0000-4000-8000-000000000001");
  EXPECT_EQ(Types(share), (std::vector<std::string>{"Ready=True/RDMAShareReady"}));
  EXPECT_FALSE(share.network_data);
  EXPECT_EQ(claims[0].devices[0].share_id, "");
}

TEST(ClaimStatusReport, ExclusiveRdmaAddsRdmaLinkReadyAndAClaimMacWins) {
  auto plan = Plan();
  plan.netdevs[0].rdma_exclusive = true;
  plan.netdevs[0].rdma_device = "mlx5_0";
  plan.netdevs[0].pod_if_name = "";
  plan.netdevs[0].settings.mac = "02:aa:bb:cc:dd:ee";
  const auto claims = PodDeviceStatuses({plan}, "", false, "dra.net", kNow);
  const auto& nic = claims.at(0).devices.at(0);
  EXPECT_EQ(Types(nic), (std::vector<std::string>{"Ready=True/NetworkDeviceReady", "NetworkReady=True/NetworkReady",
                                                  "RDMALinkReady=True/RDMALinkReady"}));
  EXPECT_EQ(nic.network_data->interface_name, "gpu0rdma0");
  EXPECT_EQ(nic.network_data->hardware_address, "02:aa:bb:cc:dd:ee");
}

TEST(ClaimStatusReport, AFailedAttachMarksEveryDeviceNotReadyWithTheReason) {
  for (bool rdma : {false, true}) {
    const auto claims = PodDeviceStatuses({Plan()}, "netdev gpu0rdma0 vanished", rdma, "dra.net", kNow);
    const std::string reason = rdma ? "RDMADeviceAttachFailed" : "NetworkDeviceAttachFailed";
    EXPECT_EQ(AttachFailedReason(rdma), reason);
    for (const auto& device : claims.at(0).devices) {
      EXPECT_EQ(Types(device), (std::vector<std::string>{"Ready=False/" + reason})) << device.device;
      EXPECT_EQ(device.conditions[0].message, "netdev gpu0rdma0 vanished");
      EXPECT_FALSE(device.network_data);
    }
  }
}

TEST(ClaimStatusReport, ClaimsWithoutDevicesAreLeftOut) {
  inject::ClaimPlan empty;
  empty.claim_namespace = "ml";
  empty.claim_name = "nothing";
  const auto claims = PodDeviceStatuses({empty, Plan()}, "", false, "dra.net", kNow);
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].claim_name, "nics");
}

}  // namespace
}  // namespace dranet::daemon
