#pragma once
// core/daemon/capabilities.h — which Linux capabilities dranetd has, and a
// clear statement of what is missing at start (instead of a failure at the
// first pod). dranetd needs no privileged container: CAP_NET_ADMIN (move
// and configure netdevs, RDMA links) and CAP_SYS_ADMIN (setns into pod
// network namespaces) for the NRI plugin; nothing for discovery/publishing.
#include <cstdint>
#include <string>
#include <vector>

namespace dranet::daemon {

// The effective capability mask from a /proc/<pid>/status text ("CapEff:").
uint64_t EffectiveCapabilities(const std::string& proc_status);

struct CapabilityNeed {
  int number;        // CAP_* value
  const char* name;  // "CAP_NET_ADMIN"
  const char* why;   // what fails without it
};

// The needs not met by `effective`, one per missing capability.
std::vector<CapabilityNeed> MissingCapabilities(uint64_t effective, bool nri);

}  // namespace dranet::daemon
