#include "daemon/claim_status_report.h"

#include <algorithm>

namespace dranet::daemon {

const char* AttachFailedReason(bool rdma_failed) {
  return rdma_failed ? "RDMADeviceAttachFailed" : "NetworkDeviceAttachFailed";
}

std::vector<ClaimDevicesStatus> PodDeviceStatuses(const std::vector<inject::ClaimPlan>& plans,
                                                  const std::string& error, bool rdma_failed,
                                                  const std::string& driver, const std::string& now) {
  std::vector<ClaimDevicesStatus> out;
  for (const auto& plan : plans) {
    ClaimDevicesStatus claim{plan.claim_namespace, plan.claim_name, {}};
    for (const auto& allocated : plan.devices) {
      kube::AllocatedDeviceStatus status;
      status.driver = driver;
      status.pool = allocated.pool;
      status.device = allocated.device;
      status.share_id = allocated.share_id;
      auto condition = [&](const char* type, const char* reason) {
        status.conditions.push_back({type, "True", reason, "", now, 0});
      };
      const auto netdev = std::find_if(plan.netdevs.begin(), plan.netdevs.end(),
                                       [&](const inject::NetdevPlan& n) { return n.device_name == allocated.device; });
      if (!error.empty()) {
        status.conditions.push_back({"Ready", "False", AttachFailedReason(rdma_failed), error, now, 0});
      } else if (allocated.admin_access) {
        condition("Ready", "AdminAccessReady");  // read-only: nothing attached, so no network data
      } else if (!allocated.share_id.empty() && netdev == plan.netdevs.end()) {
        condition("Ready", "RDMAShareReady");  // a share of an HCA: its char devices, nothing moved
      } else if (netdev == plan.netdevs.end()) {
        condition("Ready", "RDMAOnlyDeviceReady");
      } else {
        condition("Ready", "NetworkDeviceReady");
        condition("NetworkReady", "NetworkReady");
        if (netdev->rdma_exclusive) condition("RDMALinkReady", "RDMALinkReady");
        status.network_data = kube::NetworkDeviceData{
            netdev->pod_if_name.empty() ? netdev->host_if_name : netdev->pod_if_name, netdev->addresses,
            // A macvlan child has a MAC of the kernel's choosing unless the claim set one.
            !netdev->settings.mac.empty() ? netdev->settings.mac
                                          : (netdev->child_type == "macvlan" ? "" : netdev->host_state.mac)};
      }
      claim.devices.push_back(std::move(status));
    }
    if (!claim.devices.empty()) out.push_back(std::move(claim));
  }
  return out;
}

}  // namespace dranet::daemon
