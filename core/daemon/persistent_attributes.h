#pragma once
// core/daemon/persistent_attributes.h — feature gate
// PersistentResourceSliceAttributes: an allocated device keeps in the slice
// the attributes it published when its claim was prepared.
//
// A netdev moved into a pod leaves the host: a virtual device vanishes from
// discovery, a PCI function loses what only the netdev told (ifName, MAC,
// addresses, MTU). Without the gate the slice follows the host, and the
// scheduler, CEL selectors and users lose sight of an allocated device until
// the pod ends. With it, the prepared claims' records fill the gap:
//   - a device missing from discovery is published from its record alone;
//   - a device still discovered keeps every live value and regains the
//     attributes it no longer has.
#include <set>
#include <string>
#include <vector>

#include "base/log.h"
#include "inject/plan.h"
#include "inventory/device.h"

namespace dranet::daemon {

// Merges the published attributes of `plans` (ClaimPlan::published_attributes)
// into `devices`. Returns the names of the devices added from records alone,
// which are for publishing only (prepare must not find them). A record that
// cannot be read is skipped with a warning.
std::set<std::string> MergePublishedAttributes(std::vector<inventory::Device>& devices,
                                               const std::vector<inject::ClaimPlan>& plans, Logger& log);

}  // namespace dranet::daemon
