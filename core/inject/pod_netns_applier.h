#pragma once
// core/inject/pod_netns_applier.h — moving a pod's netdevs in and out of its
// network namespace (the RunPodSandbox / StopPodSandbox half of injection).
//
// The NRI plugin depends on this interface; NetnsMover (netns_mover.h) is
// the real implementation, tests may substitute their own.
#include <stdexcept>
#include <string>
#include <vector>

#include "inject/plan.h"

namespace dranet::inject {

// An error applying a plan; the message names the pod, claim and device.
// `rdma()`: it was the RDMA link that could not move (exclusive mode), not
// the netdev.
class InjectError : public std::runtime_error {
 public:
  explicit InjectError(const std::string& what, bool rdma = false) : std::runtime_error(what), rdma_(rdma) {}
  bool rdma() const { return rdma_; }

 private:
  bool rdma_;
};

struct PodSandboxRef {
  std::string uid;            // Kubernetes pod UID
  std::string namespace_name;
  std::string name;
  std::string netns_path;     // the pod's network namespace; empty for hostNetwork pods
  std::string Describe() const { return namespace_name + "/" + name + " (uid " + uid + ")"; }
};

class PodNetnsApplier {
 public:
  virtual ~PodNetnsApplier() = default;

  // Moves every netdev of `plans` (and its RDMA link in exclusive mode) into
  // the pod's netns and configures it there: name, MTU, addresses, link up,
  // routes, rules, permanent neighbours. Idempotent: a netdev already in the pod is only (re)configured.
  // Throws InjectError, e.g. for a hostNetwork pod that asks for a netdev.
  virtual void AttachNetdevs(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) = 0;

  // Moves them back to the host and restores name, MTU, up/down state,
  // addresses, routes, rules and neighbours from NetdevHostState. Idempotent: a netdev already home is left alone.
  // `pod.netns_path` may be empty or gone: an applier that kept the pod's
  // namespace (NetnsMover) detaches from that; otherwise the kernel already
  // returned physical devices. `plans` without netdevs means "those the pod
  // was attached with". Throws InjectError after trying every device.
  virtual void DetachNetdevs(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) = 0;

  // A running pod this applier did not attach (a restarted daemon learning
  // running pods): keep track of it as AttachNetdevs would, and move in the
  // netdevs it lacks (it started while the daemon was away); a link of the
  // pod's own under a netdev's name is left alone. Throws InjectError when a
  // lacking netdev cannot be moved in.
  virtual void AdoptPod(const PodSandboxRef& /*pod*/, const std::vector<ClaimPlan>& /*plans*/) {}

  // Pods holding netdevs whose namespace the runtime has let go: the path is
  // gone or names another namespace now. Their netdevs are still inside
  // (see NetnsMover) and wait for DetachNetdevs.
  virtual std::vector<PodSandboxRef> VanishedPods() { return {}; }
  // Whether VanishedPods() can report anything now. False (nothing kept)
  // lets the caller stop checking until the next attach or adopt; an applier
  // that does not know says true.
  virtual bool HoldsPods() { return true; }
};

}  // namespace dranet::inject
