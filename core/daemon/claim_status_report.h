#pragma once
// core/daemon/claim_status_report.h — what RunPodSandbox did with a pod's
// devices, as the status.devices entries of its claims and the Event reason
// of a failure. The conditions and reasons are DRANET's, so tools that wait
// on them keep working:
//
//   netdev moved          Ready/NetworkDeviceReady, NetworkReady/NetworkReady,
//                         RDMALinkReady/RDMALinkReady (exclusive RDMA netns
//                         mode only); networkData: the pod's interface name,
//                         its addresses, its MAC
//   IB-only device        Ready/RDMAOnlyDeviceReady (its char devices are
//                         injected at CreateContainer)
//   adminAccess           Ready/AdminAccessReady (read-only: nothing moved)
//   the attach failed     Ready False on every device of the pod, reason
//                         NetworkDeviceAttachFailed or RDMADeviceAttachFailed,
//                         message the error; the same reason on the pod's Event
#include <string>
#include <vector>

#include "inject/plan.h"
#include "kube/claim_status.h"

namespace dranet::daemon {

struct ClaimDevicesStatus {
  std::string claim_namespace, claim_name;
  std::vector<kube::AllocatedDeviceStatus> devices;
};

// One entry per claim of `plans` that has devices; `error` empty when the
// attach succeeded. `now` is every condition's lastTransitionTime.
std::vector<ClaimDevicesStatus> PodDeviceStatuses(const std::vector<inject::ClaimPlan>& plans,
                                                  const std::string& error, bool rdma_failed,
                                                  const std::string& driver, const std::string& now);

// The Event reason of a failed attach.
const char* AttachFailedReason(bool rdma_failed);

}  // namespace dranet::daemon
