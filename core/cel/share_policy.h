#pragma once
// core/cel/share_policy.h — dranetd's --shared-devices: which published
// devices several claims may hold at once (Kubernetes 1.36+ consumable
// capacity, docs/sharing.md).
//
// A shared device is published with allowMultipleAllocations and two
// capacities, each with a request policy (a default and a valid range):
//   dra.net/shares     N (--device-shares); a claim takes 1 unless it asks
//                      for more, so at most N claims hold the device;
//   dra.net/bandwidth  the link speed in Gbit/s, when known; a claim takes
//                      speed/N unless it asks (1 Gbit/s steps). The kernel
//                      does not enforce it: it is what the scheduler counts.
// Only devices with an RDMA device are shared: a share is the HCA's char
// devices, and the netdev stays on the host.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/log.h"
#include "cel/cel.h"
#include "inventory/device.h"

namespace dranet::cel {

inline constexpr std::string_view kSharesCapacity = "dra.net/shares";
inline constexpr std::string_view kBandwidthCapacity = "dra.net/bandwidth";
inline constexpr int64_t kDefaultDeviceShares = 8;
inline constexpr int64_t kMaxDeviceShares = 1024;

struct SharePolicy {
  std::optional<Program> filter;  // nullopt: no device is shared
  int64_t shares = kDefaultDeviceShares;
  bool enabled() const { return filter.has_value(); }
};

// `expression`: a device selector (`device.attributes["dra.net"].rdma`,
// the dialect of claims; "true" for every RDMA device), or "" for none.
// Throws CompileError for an invalid expression and std::invalid_argument
// for a share count outside 2..1024.
SharePolicy CompileSharePolicy(const std::string& expression, int64_t shares);

// The capacities of a shared device with `shares` shares and a link of
// `link_speed_mbps` (0: unknown, no bandwidth capacity).
inventory::Capacities ShareCapacities(int64_t shares, int64_t link_speed_mbps);

// `devices` with the shared ones marked (allow_multiple_allocations and
// ShareCapacities). A device the filter selects but that has neither an
// RDMA device nor an Ethernet netdev (inventory::NetdevTakesChildren), or
// whose evaluation fails, stays exclusive, with a log line.
std::vector<inventory::Device> ApplySharePolicy(const SharePolicy& policy, std::vector<inventory::Device> devices,
                                                Logger& logger);

}  // namespace dranet::cel
