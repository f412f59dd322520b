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

// The needs not met by `effective`, one per missing capability; none at all
// once SkipCapabilityCheckForTesting() was called.
std::vector<CapabilityNeed> MissingCapabilities(uint64_t effective, bool nri);

// Test only, never in production: lets tests run dranetd short of a
// capability to show that the netdev path really fails without it (instead
// of the start-up refusal hiding that). dranetd's main calls it when
// DRANETD_TEST_ONLY_SKIP_CAPABILITY_CHECK=1 (docs/operations.md).
void SkipCapabilityCheckForTesting();
inline constexpr const char* kSkipCapabilityCheckEnv = "DRANETD_TEST_ONLY_SKIP_CAPABILITY_CHECK";

}  // namespace dranet::daemon
