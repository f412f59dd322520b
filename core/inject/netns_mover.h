#pragma once
// core/inject/netns_mover.h — the real PodNetnsApplier: rtnetlink via libnl3
// (RDMA netlink for the exclusive-mode HCA link, see rdma_link.h).
//
// Attach is all or nothing: a name the pod already uses is refused before
// anything moves, and a failure part way moves back what this call moved.
// Per netdev, attach is one RTM_NEWLINK that moves, renames and sets the MTU
// at once (sent from the host socket), then, from a socket created inside the
// pod netns: MAC and GSO/GRO sizes, ARP sysctls and ethtool settings
// (link_settings.h), BPF programs detached (interface.disableEbpfPrograms),
// addresses, link up, the VRF, routes (link scope first), policy rules and
// permanent neighbours. Detach mirrors it with the host's recorded name, MTU,
// MAC, sizes, ARP sysctls, ethtool values, up/down state, addresses, routes,
// rules and neighbours (host_network.h). Which link is the netdev at detach
// is decided by netdev_identity.h: the index it got in the pod, its
// permanent address, the name and MAC it had on the host — never the
// claim's MAC alone, never a node uplink. One that cannot be found is an
// error naming it, and nothing on the host is changed for it.
// Routes and rules are created exclusively: an identical one already there
// is accepted, one that differs is never replaced.
//
// A plan with a child type (NetdevPlan::child_type: a share of a netdev, or
// interface.type ipvlan/macvlan) moves nothing: one RTM_NEWLINK from the host
// socket creates an IPVLAN or macvlan child of the host netdev directly in
// the pod namespace under the pod name, which is then configured as a moved
// netdev would be. Detach deletes that child (a link in the pod of the plan's
// type whose parent is the netdev, never another) and changes nothing on the
// host; a namespace that died took its children along.
//
// The mover keeps an fd on each pod namespace it moved netdevs into, until
// they are detached. A runtime that deletes the namespace without telling
// the plugin (containerd 1.7 sends no StopPodSandbox for pods created before
// it restarted) therefore cannot destroy them with it: a veth would die, a
// physical NIC would return under the pod's name with no address. The
// namespace lives on until VanishedPods() reports it and DetachNetdevs
// brings the netdevs home from it. The host socket lives as
// long as the mover; each hook creates one socket in the pod netns (one
// short-lived thread). Nothing is resolved or read from the host here
// (prepare did that), so a hook costs a few netlink round trips per device
// beyond the kernel's own move. Thread-safe: hooks are serialized.
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/log.h"
#include "inject/netlink_socket.h"
#include "inject/netns.h"
#include "inject/pod_netns_applier.h"

namespace dranet::inject {

// A netdev the mover holds in a pod namespace (health_monitor.h reads its
// link there).
struct HeldNetdev {
  std::string device_name;   // the published device
  std::string host_if_name;
  std::string pod_if_name;   // its name in the pod
  std::string rdma_device;   // empty when not RDMA-capable
  bool rdma_moved = false;   // exclusive mode: the RDMA link went into the pod too
  int pod_ifindex = 0;       // its index in the pod; 0 when not known (adopted)
  PodSandboxRef pod;
  NetnsHandle ns;            // the pod's namespace, a descriptor of the caller's own
};

class NetnsMover : public PodNetnsApplier {
 public:
  struct Options {
    // The namespace devices return to: the daemon's own (host) network
    // namespace, opened once at construction.
    std::string host_netns_path = "/proc/self/ns/net";
    // Called once for each netdev a detach could not bring home and restore
    // (optional; a metric). The detach also throws, naming each.
    std::function<void()> on_restore_failure;
  };

  // Throws InjectError when the host namespace cannot be opened.
  NetnsMover(const Options& options, Logger& log);

  void AttachNetdevs(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) override;
  void DetachNetdevs(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) override;
  void AdoptPod(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) override;
  std::vector<PodSandboxRef> VanishedPods() override;
  bool HoldsPods() override { return held_pods() > 0; }

  // Pods whose namespace the mover holds open.
  std::size_t held_pods() const;
  // Every netdev attached or adopted and not yet detached, with a
  // descriptor of its pod's namespace. Waits for a hook in progress.
  std::vector<HeldNetdev> HeldNetdevs() const;

  // Time the last AttachNetdevs spent waiting for the kernel to move its
  // netdevs (the move RTM_NEWLINKs only): what a hook cannot go below.
  std::chrono::nanoseconds last_attach_move_time() const {
    return std::chrono::nanoseconds(last_move_ns_.load());
  }

 private:
  // A pod namespace kept open while netdevs may be inside it.
  struct HeldPod {
    PodSandboxRef ref;
    NetnsHandle ns;
    NetnsId id;
    std::vector<ClaimPlan> plans;
    // The index each netdev got in the pod when attached (by AttachKey):
    // the first thing detach knows it by.
    std::map<std::string, int> attached_ifindex;
  };
  static std::string AttachKey(const ClaimPlan& plan, const NetdevPlan& netdev);
  void HoldLocked(const PodSandboxRef& pod, NetnsHandle ns, const std::vector<ClaimPlan>& plans);
  void DetachLocked(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans);
  // Moves and configures each netdev; the pod's namespace is held already.
  void AttachLocked(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans, nl_sock* pod_sock);
  // interface.disableEbpfPrograms: every tc/tcx BPF program of the netdev in
  // the pod goes, each one logged.
  void DetachBpfProgramsIn(const NetnsHandle& pod_ns, const std::string& pod_name);

  NetnsHandle host_ns_;
  Logger& log_;
  std::function<void()> on_restore_failure_;
  mutable std::mutex mu_;  // serializes hooks; guards host_sock_ and held_
  std::map<std::string, HeldPod> held_;  // by pod UID
  // Pods whose netdevs this mover brought home and restored, not attached
  // since: a second detach (unprepare after StopPodSandbox) changes nothing.
  // The oldest are forgotten beyond kRestoredPodsKept.
  static constexpr std::size_t kRestoredPodsKept = 4096;
  std::set<std::string> restored_;
  std::deque<std::string> restored_order_;
  NlSockPtr host_sock_;
  std::atomic<std::int64_t> last_move_ns_{0};
};

// The host-side name a netdev returns under (host_state.if_name, else the
// plan's host_if_name).
std::string HostNameOf(const NetdevPlan& netdev);
// The name inside the pod (pod_if_name, else the host name).
std::string PodNameOf(const NetdevPlan& netdev);

}  // namespace dranet::inject
