#pragma once
// core/kubelet/claim_plan_builder.h — one allocated ResourceClaim → its ClaimPlan.
//
// Everything slow or fallible of prepare happens here, so that the NRI hooks
// only apply a finished plan: the claim's results for our driver and pool,
// each resolved against the node's inventory by device name; the opaque
// NetworkConfig of each result (class configs, then claim configs, merged and
// validated strictly); the char devices of every RDMA device
// (uverbsN, umadN and rdma_cm — never issmN, which lets a process claim the
// subnet-manager role); netdev moves with the host state captured now; and
// the edits of injection plugins (container edits, and routes and rules per
// netdev, merged between the host's and the claim's: the claim wins); every
// NetworkConfig field resolved against the live netdev (ethtool names, MTU
// against the driver and the PF, VRF support), the host's values of what
// the pod will change, a DHCP lease and a resolved profile. A result with
// adminAccess (a device another claim may hold) gets none of that: no move,
// no char devices, no plugin edits, no config; only DRANET_ADMIN_* env naming
// the device, its RDMA device and its netdev. Any problem
// throws PrepareError with a message naming the claim, the device or the
// config field.
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "inject/plan.h"
#include "inventory/device.h"
#include "inventory/netlink_facts.h"
#include "kube/resource_claim.h"
#include "kubelet/host_access.h"
#include "plugins/plugin_host.h"

namespace dranet::kubelet {

class PrepareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Container edits from injection plugins for a claim's devices
// (PluginHost::Inject, or a stand-in in tests).
using InjectFunction = std::function<plugins::InjectionEdits(
    const plugins::ClaimRef& claim, const std::vector<inventory::Device>& devices)>;


struct PlanBuilderOptions {
  std::string driver_name = "dra.net";
  std::string pool_name;                  // our pool = the node name
  std::filesystem::path dev_root = "/dev";  // host side of device nodes
  bool rdma_exclusive = false;            // RDMA netns mode "exclusive": move the HCA too
  // Give the pod the host's routes, rules and permanent neighbours of each
  // netdev (--copy-host-routes). Off, the pod gets only what cloud plugins
  // and the claim say; the host's are still restored at teardown.
  bool copy_host_routes = true;
};

// Builds the plan of `claim`, which must be allocated and reserved for its
// pods. `inventory` is the node's current device list; `inject` and the
// members of `host` may be empty (no plugins; configs that need the host are
// refused). A lease or profile obtained before a failure is released before
// PrepareError is thrown. `stop` is the call's deadline: DHCP and profile
// calls give up when it is requested, and no device is started after it.
inject::ClaimPlan BuildClaimPlan(const kube::ResourceClaim& claim,
                                 const std::vector<inventory::Device>& inventory,
                                 const PlanBuilderOptions& options, const InjectFunction& inject,
                                 const HostAccess& host, std::stop_token stop = {});

// Gives back what prepare obtained for `plan` outside the node: DHCP leases
// and resolved profiles. Best effort: returns one message per failure.
// Once `stop` is requested the releases still to come are not tried (each
// is reported), and one under way gives up.
std::vector<std::string> ReleaseClaimResources(const inject::ClaimPlan& plan, const HostAccess& host,
                                               std::stop_token stop = {});

// Why a claim with the netdev `if_name` (published as `device`) cannot be
// prepared for `pods` pods (more than one: a netdev is in one pod's network
// namespace at a time), or "". `who` names the claim.
std::string NetdevPodsProblem(const std::string& who, const std::string& device, const std::string& if_name,
                              std::size_t pods);

// The pod UIDs of status.reservedFor, sorted and unique.
std::vector<std::string> ReservedPods(const kube::ResourceClaim& claim);

// "req/sub" → "req": the request name kubelet expects in request_names.
std::string TopLevelRequest(const std::string& request);

}  // namespace dranet::kubelet
