#include "cel/share_policy.h"

#include <algorithm>
#include <stdexcept>

#include "inventory/inventory.h"

namespace dranet::cel {

SharePolicy CompileSharePolicy(const std::string& expression, int64_t shares) {
  SharePolicy policy;
  if (shares < 2 || shares > kMaxDeviceShares)
    throw std::invalid_argument("--device-shares must be between 2 and " + std::to_string(kMaxDeviceShares) +
                                ", got " + std::to_string(shares));
  policy.shares = shares;
  if (!expression.empty()) policy.filter = Compile(expression);
  return policy;
}

inventory::Capacities ShareCapacities(int64_t shares, int64_t link_speed_mbps) {
  inventory::Capacities capacities;
  capacities[std::string(kSharesCapacity)] = {shares, inventory::CapacityRequestPolicy{1, 1, shares, 1}};
  const int64_t gbps = link_speed_mbps / 1000;
  if (gbps >= 1) {
    const int64_t fair = std::max<int64_t>(1, gbps / shares);
    capacities[std::string(kBandwidthCapacity)] = {gbps, inventory::CapacityRequestPolicy{fair, 1, gbps, 1}};
  }
  return capacities;
}

std::vector<inventory::Device> ApplySharePolicy(const SharePolicy& policy, std::vector<inventory::Device> devices,
                                                Logger& logger) {
  if (!policy.filter) return devices;
  for (auto& device : devices) {
    const EvalResult result = policy.filter->Evaluate(ViewOf(device));
    if (result.error) {
      logger.Warning("device not shared: --shared-devices cannot be evaluated on it",
                     {{"device", device.name}, {"error", result.error->ToString()}});
      continue;
    }
    if (!result.matched) continue;
    if (device.rdma_device.empty() && !inventory::NetdevTakesChildren(device)) {
      logger.Verbose(1, "device not shared: it has neither an RDMA device nor an Ethernet netdev",
                     {{"device", device.name}});
      continue;
    }
    device.allow_multiple_allocations = true;
    device.capacity = ShareCapacities(policy.shares, device.link_speed_mbps);
  }
  return devices;
}

}  // namespace dranet::cel
