#include "daemon/capabilities.h"

#include <atomic>
#include <sstream>

namespace dranet::daemon {
namespace {
std::atomic<bool> skip_check_for_testing{false};
}  // namespace

void SkipCapabilityCheckForTesting() { skip_check_for_testing = true; }

uint64_t EffectiveCapabilities(const std::string& proc_status) {
  std::istringstream in(proc_status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    try {
      return std::stoull(line.substr(7), nullptr, 16);
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

std::vector<CapabilityNeed> MissingCapabilities(uint64_t effective, bool nri) {
  static const CapabilityNeed kNriNeeds[] = {
      {12, "CAP_NET_ADMIN", "moving netdevs and RDMA links into pods and configuring them"},
      {21, "CAP_SYS_ADMIN", "entering pod network namespaces (setns)"},
  };
  std::vector<CapabilityNeed> missing;
  if (!nri || skip_check_for_testing) return missing;
  for (const auto& need : kNriNeeds)
    if ((effective & (uint64_t{1} << need.number)) == 0) missing.push_back(need);
  return missing;
}

}  // namespace dranet::daemon
