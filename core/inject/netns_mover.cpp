#include "inject/netns_mover.h"

#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/ipvlan.h>
#include <netlink/route/link/macvlan.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>

#include <fcntl.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "base/fault_points.h"
#include "inject/bpf_detach.h"
#include "inject/netdev_identity.h"
#include "inject/link_settings.h"
#include "inject/netlink_socket.h"
#include "inventory/netlink_facts.h"
#include "inject/rdma_link.h"

namespace dranet::inject {
namespace {

using LinkPtr = std::unique_ptr<rtnl_link, NlRelease<rtnl_link, rtnl_link_put>>;
using AddrPtr = std::unique_ptr<rtnl_addr, NlRelease<rtnl_addr, rtnl_addr_put>>;
using RoutePtr = std::unique_ptr<rtnl_route, NlRelease<rtnl_route, rtnl_route_put>>;
using RulePtr = std::unique_ptr<rtnl_rule, NlRelease<rtnl_rule, rtnl_rule_put>>;
using NeighPtr = std::unique_ptr<rtnl_neigh, NlRelease<rtnl_neigh, rtnl_neigh_put>>;

// The link called `name` in the socket's namespace, or null.
LinkPtr FindLink(nl_sock* sock, const std::string& name) {
  rtnl_link* link = nullptr;
  const int err = rtnl_link_get_kernel(sock, 0, name.c_str(), &link);
  if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV) return nullptr;
  if (err < 0) throw InjectError("looking up netdev " + name + ": " + NlError(err));
  return LinkPtr(link);
}

// The link at `ifindex` in the socket's namespace, or null.
LinkPtr LinkAt(nl_sock* sock, int ifindex) {
  rtnl_link* link = nullptr;
  const int err = rtnl_link_get_kernel(sock, ifindex, nullptr, &link);
  if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV) return nullptr;
  if (err < 0) throw InjectError("looking up netdev index " + std::to_string(ifindex) + ": " + NlError(err));
  return LinkPtr(link);
}

NlAddrPtr ParseAddr(const std::string& text, const std::string& what) {
  nl_addr* addr = nullptr;
  if (const int err = nl_addr_parse(text.c_str(), AF_UNSPEC, &addr); err < 0) {
    throw InjectError("invalid " + what + " \"" + text + "\": " + NlError(err));
  }
  return NlAddrPtr(addr);
}

// One RTM_NEWLINK: into `target_ns` under `new_name`, with `mtu` if non-zero.
// Returns the time the kernel took.
std::chrono::nanoseconds MoveLink(nl_sock* sock, rtnl_link* link, const NetnsHandle& target_ns,
                                  const std::string& new_name, std::uint32_t mtu) {
  LinkPtr change(rtnl_link_alloc());
  rtnl_link_set_ns_fd(change.get(), target_ns.fd());
  rtnl_link_set_name(change.get(), new_name.c_str());
  if (mtu != 0) rtnl_link_set_mtu(change.get(), mtu);
  const auto start = std::chrono::steady_clock::now();
  if (const int err = rtnl_link_change(sock, link, change.get(), 0); err < 0) {
    throw InjectError(std::string("moving netdev ") + rtnl_link_get_name(link) + " as " + new_name +
                      ": " + NlError(err));
  }
  return std::chrono::steady_clock::now() - start;
}

void ChangeLink(nl_sock* sock, rtnl_link* link, std::uint32_t mtu, bool up, bool rename_to_set,
                const std::string& new_name) {
  LinkPtr change(rtnl_link_alloc());
  if (mtu != 0 && rtnl_link_get_mtu(link) != mtu) rtnl_link_set_mtu(change.get(), mtu);
  if (rename_to_set) rtnl_link_set_name(change.get(), new_name.c_str());
  if (up) rtnl_link_set_flags(change.get(), IFF_UP);
  else rtnl_link_unset_flags(change.get(), IFF_UP);
  if (const int err = rtnl_link_change(sock, link, change.get(), 0); err < 0) {
    throw InjectError(std::string("configuring netdev ") + rtnl_link_get_name(link) + ": " +
                      NlError(err));
  }
}

void AddAddresses(nl_sock* sock, int ifindex, const std::vector<std::string>& cidrs,
                  const std::string& ifname) {
  for (const auto& cidr : cidrs) {
    const auto local = ParseAddr(cidr, "address for " + ifname);
    AddrPtr addr(rtnl_addr_alloc());
    rtnl_addr_set_ifindex(addr.get(), ifindex);
    rtnl_addr_set_local(addr.get(), local.get());
    if (const int err = rtnl_addr_add(sock, addr.get(), NLM_F_REPLACE); err < 0 && err != -NLE_EXIST) {
      throw InjectError("adding address " + cidr + " to " + ifname + ": " + NlError(err));
    }
  }
}

// Scope for a route: as recorded, except that an old checkpoint's on-link
// route (scope 0, no gateway) keeps libnl's choice (link), as it had.
bool KeepsLibnlScope(const Route& r) { return r.scope == RT_SCOPE_UNIVERSE && r.gateway.empty(); }

void AddRoutes(nl_sock* sock, int ifindex, std::vector<Route> routes, const std::string& ifname) {
  // Narrower scopes first: a gateway route needs its gateway reachable
  // through a link-scope route already.
  auto rank = [](const Route& r) { return std::pair(KeepsLibnlScope(r) ? static_cast<std::uint8_t>(RT_SCOPE_LINK) : r.scope, r.gateway.empty()); };
  std::stable_sort(routes.begin(), routes.end(), [&](const Route& a, const Route& b) { return rank(a) > rank(b); });
  for (const auto& r : routes) {
    const auto dst = ParseAddr(r.destination, "route destination for " + ifname);
    RoutePtr route(rtnl_route_alloc());
    rtnl_route_set_family(route.get(), static_cast<std::uint8_t>(nl_addr_get_family(dst.get())));
    rtnl_route_set_dst(route.get(), dst.get());
    rtnl_route_set_table(route.get(), r.table != 0 ? static_cast<std::uint32_t>(r.table) : RT_TABLE_MAIN);
    rtnl_route_set_protocol(route.get(), r.protocol != 0 ? r.protocol : RTPROT_BOOT);
    if (!KeepsLibnlScope(r)) rtnl_route_set_scope(route.get(), r.scope);
    if (r.metric != 0) rtnl_route_set_priority(route.get(), r.metric);
    if (!r.source.empty()) {
      const auto src = ParseAddr(r.source, "route source for " + ifname);
      rtnl_route_set_pref_src(route.get(), src.get());
    }
    rtnl_nexthop* nh = rtnl_route_nh_alloc();
    rtnl_route_nh_set_ifindex(nh, ifindex);
    if (!r.gateway.empty()) {
      const auto gw = ParseAddr(r.gateway, "route gateway for " + ifname);
      rtnl_route_nh_set_gateway(nh, gw.get());
    }
    rtnl_route_add_nexthop(route.get(), nh);  // the route owns nh now
    // NLM_F_EXCL: never replace a route someone else owns; an identical one
    // already there (the kernel's prefix route, a second apply) is fine.
    if (const int err = rtnl_route_add(sock, route.get(), NLM_F_EXCL); err < 0 && err != -NLE_EXIST) {
      throw InjectError("adding route " + r.destination + " via " + (r.gateway.empty() ? "link" : r.gateway) +
                        (r.table != 0 ? " table " + std::to_string(static_cast<std::uint32_t>(r.table)) : "") +
                        " on " + ifname + ": " + NlError(err));
    }
  }
}

void AddRules(nl_sock* sock, const std::vector<Rule>& rules, const std::string& ifname) {
  for (const auto& r : rules) {
    RulePtr rule(rtnl_rule_alloc());
    int family = r.family;
    NlAddrPtr src, dst;
    if (!r.source.empty()) {
      src = ParseAddr(r.source, "rule source for " + ifname);
      family = nl_addr_get_family(src.get());
      rtnl_rule_set_src(rule.get(), src.get());
    }
    if (!r.destination.empty()) {
      dst = ParseAddr(r.destination, "rule destination for " + ifname);
      family = nl_addr_get_family(dst.get());
      rtnl_rule_set_dst(rule.get(), dst.get());
    }
    rtnl_rule_set_family(rule.get(), family != 0 ? family : AF_INET);
    if (r.priority != 0) rtnl_rule_set_prio(rule.get(), r.priority);
    rtnl_rule_set_table(rule.get(), r.table != 0 ? static_cast<std::uint32_t>(r.table) : RT_TABLE_MAIN);
    rtnl_rule_set_action(rule.get(), FR_ACT_TO_TBL);
    // NLM_F_EXCL: the kernel would otherwise add a duplicate rule.
    if (const int err = rtnl_rule_add(sock, rule.get(), NLM_F_EXCL); err < 0 && err != -NLE_EXIST) {
      throw InjectError("adding rule from " + (r.source.empty() ? "all" : r.source) + " to " +
                        (r.destination.empty() ? "all" : r.destination) + " lookup " +
                        std::to_string(static_cast<std::uint32_t>(r.table)) + " for " + ifname + ": " + NlError(err));
    }
  }
}

void AddNeighbors(nl_sock* sock, int ifindex, const std::vector<Neighbor>& neighbors, const std::string& ifname) {
  for (const auto& n : neighbors) {
    const auto dst = ParseAddr(n.destination, "neighbour address for " + ifname);
    nl_addr* raw = nullptr;
    if (const int err = nl_addr_parse(n.lladdr.c_str(), AF_LLC, &raw); err < 0)
      throw InjectError("invalid neighbour MAC \"" + n.lladdr + "\" for " + ifname + ": " + NlError(err));
    NlAddrPtr lladdr(raw);
    NeighPtr neigh(rtnl_neigh_alloc());
    rtnl_neigh_set_ifindex(neigh.get(), ifindex);
    rtnl_neigh_set_family(neigh.get(), nl_addr_get_family(dst.get()));
    rtnl_neigh_set_dst(neigh.get(), dst.get());
    rtnl_neigh_set_lladdr(neigh.get(), lladdr.get());
    rtnl_neigh_set_state(neigh.get(), NUD_PERMANENT);
    if (const int err = rtnl_neigh_add(sock, neigh.get(), NLM_F_CREATE | NLM_F_REPLACE); err < 0) {
      throw InjectError("adding neighbour " + n.destination + " lladdr " + n.lladdr + " on " + ifname + ": " +
                        NlError(err));
    }
  }
}

// What a netdev carries besides its addresses, in the order the kernel
// needs: routes (link scope first), then rules, then neighbours.
void AddNetworkConfig(nl_sock* sock, int ifindex, const std::vector<Route>& routes, const std::vector<Rule>& rules,
                      const std::vector<Neighbor>& neighbors, const std::string& ifname) {
  AddRoutes(sock, ifindex, routes, ifname);
  AddRules(sock, rules, ifname);
  AddNeighbors(sock, ifindex, neighbors, ifname);
}

// Where the kernel leaves a device whose namespace died (a physical one;
// virtual links die with their namespace): on the host, down, under its name
// in the pod or, when the host had that name, as devN. Found by what it had
// on the host, never one of the node's uplinks; null when no link fits.
LinkPtr ReturnedByTheKernel(nl_sock* host_sock, const NetdevPlan& netdev, Logger& log) {
  auto facts = inventory::ReadLinksAndRoutes(host_sock, log);
  const auto uplinks = inventory::ExcludedUplinkInterfaces(facts);
  const auto* returned = FindNetdevOnHost(facts.links, uplinks, netdev, /*home_only=*/false);
  return returned ? LinkAt(host_sock, returned->ifindex) : nullptr;
}

// Whether `link` (in a pod) is a child of the plan's type whose parent is the
// host link at `parent_ifindex` (0: the parent is not on the host now, so
// only the type is compared).
bool IsChildOf(rtnl_link* link, const NetdevPlan& netdev, int parent_ifindex) {
  const char* type = rtnl_link_get_type(link);
  if (type == nullptr || netdev.child_type != type) return false;
  return parent_ifindex == 0 || rtnl_link_get_link(link) == parent_ifindex;
}

// The plan's child of the host link `parent`, created in `pod_ns` as
// `pod_name` with the plan's MTU (one RTM_NEWLINK from the host socket: the
// kernel finds the parent there and registers the child in the pod), down.
void CreateChild(nl_sock* host_sock, rtnl_link* parent, const NetdevPlan& netdev, const NetnsHandle& pod_ns,
                 const std::string& pod_name) {
  const bool ipvlan = netdev.child_type == "ipvlan";
  LinkPtr child(ipvlan ? rtnl_link_ipvlan_alloc() : rtnl_link_macvlan_alloc());
  if (!child) throw InjectError("cannot allocate a " + netdev.child_type + " link");
  int err = 0;
  const auto& m = netdev.child_mode;
  if (ipvlan) {
    err = rtnl_link_ipvlan_set_mode(child.get(), m == "l3" ? IPVLAN_MODE_L3 : m == "l3s" ? IPVLAN_MODE_L3S : IPVLAN_MODE_L2);
  } else {
    err = rtnl_link_macvlan_set_mode(child.get(), m == "private" ? MACVLAN_MODE_PRIVATE
                                                  : m == "vepa"  ? MACVLAN_MODE_VEPA
                                                                 : MACVLAN_MODE_BRIDGE);
  }
  if (err < 0) throw InjectError("setting the " + netdev.child_type + " mode " + m + ": " + NlError(err));
  rtnl_link_set_link(child.get(), rtnl_link_get_ifindex(parent));
  rtnl_link_set_name(child.get(), pod_name.c_str());
  rtnl_link_set_ns_fd(child.get(), pod_ns.fd());
  if (netdev.mtu) rtnl_link_set_mtu(child.get(), *netdev.mtu);
  if (err = rtnl_link_add(host_sock, child.get(), NLM_F_CREATE | NLM_F_EXCL); err < 0) {
    std::string why = NlError(err);
    // One receive handler per netdev: a bridge port, a bond slave or a
    // parent of children of the other type cannot take this one.
    if (err == -NLE_BUSY)
      why += " (" + std::string(rtnl_link_get_name(parent)) + " already serves a bridge, a bond or children of "
             "another type than " + netdev.child_type + ")";
    if (err == -NLE_OPNOTSUPP)
      why += " (this kernel has no " + netdev.child_type + " driver, CONFIG_" +
             (ipvlan ? std::string("IPVLAN") : std::string("MACVLAN")) + "; interface.type \"" +
             (ipvlan ? "macvlan" : "ipvlan") + "\" in the claim's or class's config asks for the other kind)";
    throw InjectError("creating " + netdev.child_type + " child " + pod_name + " (" + m + ") of netdev " +
                      rtnl_link_get_name(parent) + " in the pod: " + why);
  }
}

bool HasNetdevs(const std::vector<ClaimPlan>& plans) {
  return std::any_of(plans.begin(), plans.end(), [](const ClaimPlan& p) { return !p.netdevs.empty(); });
}

}  // namespace

void NetnsMover::DetachBpfProgramsIn(const NetnsHandle& pod_ns, const std::string& pod_name) {
  std::vector<inventory::AttachedBpfProgram> detached;
  RunInNetns(pod_ns, [&] { detached = DetachBpfPrograms(pod_name); });
  for (const auto& program : detached)
    log_.Info("BPF program detached (interface.disableEbpfPrograms)",
              {{"interface", pod_name}, {"program", inventory::Describe(program)}});
}

std::string HostNameOf(const NetdevPlan& netdev) {
  return netdev.host_state.if_name.empty() ? netdev.host_if_name : netdev.host_state.if_name;
}

std::string PodNameOf(const NetdevPlan& netdev) {
  return netdev.pod_if_name.empty() ? netdev.host_if_name : netdev.pod_if_name;
}

std::string NetnsMover::AttachKey(const ClaimPlan& plan, const NetdevPlan& netdev) {
  return plan.claim_uid + "/" + netdev.host_if_name;
}

NetnsMover::NetnsMover(const Options& options, Logger& log)
    : host_ns_(OpenNetns(options.host_netns_path)),
      log_(log),
      on_restore_failure_(options.on_restore_failure),
      host_sock_(NetlinkSocketIn(host_ns_, NETLINK_ROUTE)) {}

void NetnsMover::AttachNetdevs(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) {
  if (!HasNetdevs(plans)) return;
  if (pod.netns_path.empty()) {
    for (const auto& plan : plans) {
      if (plan.netdevs.empty()) continue;
      throw InjectError("pod " + pod.Describe() + " uses the host network, but claim " +
                        plan.claim_namespace + "/" + plan.claim_name + " allocates netdev " +
                        plan.netdevs.front().host_if_name +
                        "; a netdev can only be moved into a pod network namespace: drop "
                        "hostNetwork or the netdev from the claim");
    }
  }
  std::lock_guard lock(mu_);
  nl_sock* host_sock = host_sock_.get();
  auto pod_ns = OpenNetns(pod.netns_path);
  // A sandbox that claims the host's own namespace would get the claim's
  // addresses and routes installed on the node itself.
  if (IdOf(pod_ns) == IdOf(host_ns_)) {
    throw InjectError("pod " + pod.Describe() + ": network namespace " + pod.netns_path +
                      " is the host's own; netdevs are only moved into a pod network namespace");
  }
  if (auto held = held_.find(pod.uid); held != held_.end() && held->second.id != IdOf(pod_ns)) {
    // A new sandbox of the same pod: what the old one holds goes home first.
    const PodSandboxRef old_ref = held->second.ref;
    const std::vector<ClaimPlan> old_plans = held->second.plans;
    log_.Warning("pod has a new network namespace; returning the netdevs of the old one",
                 {{"pod", pod.Describe()}, {"oldNetns", old_ref.netns_path}, {"netns", pod.netns_path}});
    try {
      DetachLocked(old_ref, old_plans);
    } catch (const InjectError& e) {
      log_.Error("netdevs of the old sandbox not restored", {{"pod", pod.Describe()}, {"error", e.what()}});
    }
  }
  const auto pod_sock = NetlinkSocketIn(pod_ns, NETLINK_ROUTE);
  // Before anything moves: a name the pod already uses for an interface of
  // its own (eth0, lo) would fail the move halfway, and a later detach by
  // name would take the pod's interface for the netdev.
  for (const auto& plan : plans) {
    for (const auto& netdev : plan.netdevs) {
      const std::string pod_name = PodNameOf(netdev);
      if (!netdev.child_type.empty()) {
        // A child of an earlier attach of this sandbox is taken again.
        auto parent = FindLink(host_sock, netdev.host_if_name);
        auto existing = FindLink(pod_sock.get(), pod_name);
        if (existing && !IsChildOf(existing.get(), netdev, parent ? rtnl_link_get_ifindex(parent.get()) : 0))
          throw InjectError("claim " + plan.claim_namespace + "/" + plan.claim_name + ", pod " + pod.Describe() +
                            ": the pod already has an interface named " + pod_name + "; the " + netdev.child_type +
                            " child of netdev " + netdev.host_if_name +
                            " needs another name there (interface.name in the claim's config)");
        continue;
      }
      if (FindLink(host_sock, netdev.host_if_name) && FindLink(pod_sock.get(), pod_name)) {
        throw InjectError("claim " + plan.claim_namespace + "/" + plan.claim_name + ", pod " + pod.Describe() +
                          ": the pod already has an interface named " + pod_name + "; netdev " +
                          netdev.host_if_name + " needs another name there (interface.name in the claim's config)");
      }
    }
  }
  HoldLocked(pod, std::move(pod_ns), plans);
  try {
    AttachLocked(pod, plans, pod_sock.get());
  } catch (const InjectError& e) {
    // All or nothing: what this call moved goes back, the host as it was.
    try {
      DetachLocked(pod, plans);
    } catch (const InjectError& rollback) {
      log_.Error("rolling back a failed attach left netdevs behind", {{"pod", pod.Describe()},
                                                                       {"error", rollback.what()}});
    }
    throw;
  }
}

void NetnsMover::AttachLocked(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans, nl_sock* pod_sock) {
  nl_sock* host_sock = host_sock_.get();
  std::chrono::nanoseconds move_time{0};
  for (const auto& plan : plans) {
    for (const auto& netdev : plan.netdevs) {
      const std::string pod_name = PodNameOf(netdev);
      const std::string where = "claim " + plan.claim_namespace + "/" + plan.claim_name + ", pod " +
                                pod.Describe() + ": ";
      try {
        if (!netdev.child_type.empty()) {
          // The netdev stays on the host; the pod gets a child of it.
          auto parent = FindLink(host_sock, netdev.host_if_name);
          if (!parent)
            throw InjectError("netdev " + netdev.host_if_name + ", the parent of the pod's " + netdev.child_type +
                              " interface, is not on the host");
          if (!FindLink(pod_sock, pod_name)) CreateChild(host_sock, parent.get(), netdev, held_.at(pod.uid).ns, pod_name);
        }
        auto on_host = netdev.child_type.empty() ? FindLink(host_sock, netdev.host_if_name) : nullptr;
        if (netdev.child_type.empty() && !on_host && !FindLink(pod_sock, pod_name)) {
          // The pod's previous namespace died with the netdev in it (the
          // node's processes killed, this daemon among them).
          on_host = ReturnedByTheKernel(host_sock, netdev, log_);
          if (!on_host)
            throw InjectError("netdev " + netdev.host_if_name + " is neither on the host nor in the pod");
          log_.Warning("netdev found on the host under another name (its pod namespace died with it inside); "
                       "taking it by what it had on the host",
                       {{"netdev", netdev.host_if_name}, {"foundAs", rtnl_link_get_name(on_host.get())}});
        }
        if (on_host) {
          move_time += MoveLink(host_sock, on_host.get(), held_.at(pod.uid).ns, pod_name, netdev.mtu.value_or(0));
          DRANET_FAULT_POINT("netns-attach-after-move");  // in the pod, not configured there yet
        }
        auto link = FindLink(pod_sock, pod_name);
        if (!link)
          throw InjectError("netdev " + pod_name + " vanished from the pod after the " +
                            (netdev.child_type.empty() ? "move" : "child was created"));
        const int ifindex = rtnl_link_get_ifindex(link.get());
        held_.at(pod.uid).attached_ifindex[AttachKey(plan, netdev)] = ifindex;
        const auto& pod_ns = held_.at(pod.uid).ns;
        // Down after the move: the MAC can change whatever the driver.
        SetLinkAttributes(pod_sock, ifindex, netdev.settings, pod_name);
        ApplyNamespaceSettings(pod_ns, pod_name, netdev.settings);
        if (netdev.disable_ebpf_programs) DetachBpfProgramsIn(pod_ns, pod_name);
        AddAddresses(pod_sock, ifindex, netdev.addresses, pod_name);
        ChangeLink(pod_sock, link.get(), netdev.mtu.value_or(0), true, false, {});
        if (!netdev.vrf_name.empty())
          JoinVrf(pod_ns, pod_sock, ifindex, netdev.vrf_name, netdev.vrf_table, pod_name);
        AddNetworkConfig(pod_sock, ifindex, netdev.routes, netdev.rules, netdev.neighbors, pod_name);
        if (netdev.rdma_exclusive && !netdev.rdma_device.empty()) {
          const auto& held_ns = held_.at(pod.uid).ns;
          if (!MoveRdmaDevice(host_ns_, netdev.rdma_device, held_ns) &&
              !FindRdmaDevice(held_ns, netdev.rdma_device)) {
            throw InjectError("RDMA device " + netdev.rdma_device + " is neither on the host nor in the pod",
                              /*rdma=*/true);
          }
        }
      } catch (const InjectError& e) {
        throw InjectError(where + e.what(), e.rdma());
      }
    }
  }
  last_move_ns_.store(move_time.count());
}

void NetnsMover::DetachNetdevs(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) {
  std::lock_guard lock(mu_);
  DetachLocked(pod, plans);
}

void NetnsMover::HoldLocked(const PodSandboxRef& pod, NetnsHandle ns, const std::vector<ClaimPlan>& plans) {
  restored_.erase(pod.uid);
  const NetnsId id = IdOf(ns);
  held_[pod.uid] = HeldPod{pod, std::move(ns), id, plans, {}};
}

void NetnsMover::AdoptPod(const PodSandboxRef& pod, const std::vector<ClaimPlan>& plans) {
  if (!HasNetdevs(plans) || pod.netns_path.empty()) return;
  std::lock_guard lock(mu_);
  auto ns = OpenNetns(pod.netns_path, /*missing_ok=*/true);
  if (!ns.valid()) return;
  if (IdOf(ns) == IdOf(host_ns_)) return;  // a host-network pod: nothing is ever moved there
  if (auto held = held_.find(pod.uid); held != held_.end() && held->second.id == IdOf(ns)) {
    held->second.plans = plans;
  } else {
    HoldLocked(pod, std::move(ns), plans);
  }
  // Netdevs not in the pod: it started while this daemon was away (the node
  // restarted, the daemon not yet connected to the runtime), so they go in
  // now, as its RunPodSandbox would have moved them.
  auto& held = held_.at(pod.uid);
  const auto pod_sock = NetlinkSocketIn(held.ns, NETLINK_ROUTE);
  const auto in_pod = inventory::ReadLinks(pod_sock.get(), log_);
  std::vector<ClaimPlan> missing;
  std::string taken;
  for (const auto& plan : plans) {
    ClaimPlan absent = plan;
    absent.netdevs.clear();
    for (const auto& netdev : plan.netdevs) {
      const auto pod_name = PodNameOf(netdev);
      if (!netdev.child_type.empty()) {
        // A child of the netdev under its name: created by this pod's attach.
        if (auto link = FindLink(pod_sock.get(), pod_name)) {
          auto parent = FindLink(host_sock_.get(), netdev.host_if_name);
          if (IsChildOf(link.get(), netdev, parent ? rtnl_link_get_ifindex(parent.get()) : 0)) {
            held.attached_ifindex[AttachKey(plan, netdev)] = rtnl_link_get_ifindex(link.get());
            continue;
          }
        }
      } else {
        const auto attached = held.attached_ifindex.find(AttachKey(plan, netdev));
        if (FindNetdevInPod(in_pod, netdev, attached == held.attached_ifindex.end() ? 0 : attached->second)) continue;
      }
      if (std::any_of(in_pod.begin(), in_pod.end(), [&](const auto& link) { return link.name == pod_name; })) {
        taken += (taken.empty() ? "" : ", ") + pod_name;  // the pod's own interface: never configured as the netdev
        continue;
      }
      absent.netdevs.push_back(netdev);
    }
    if (!absent.netdevs.empty()) missing.push_back(std::move(absent));
  }
  if (!taken.empty())
    log_.Warning("a running pod lacks netdevs of its claims, and has interfaces of their names; left as they are",
                 {{"pod", pod.Describe()}, {"names", taken}});
  if (missing.empty()) return;
  log_.Warning("a running pod lacks netdevs of its claims (it started while this daemon was away); moving them in",
               {{"pod", pod.Describe()}});
  AttachLocked(pod, missing, pod_sock.get());
}

std::vector<PodSandboxRef> NetnsMover::VanishedPods() {
  std::lock_guard lock(mu_);
  std::vector<PodSandboxRef> gone;
  for (const auto& [uid, held] : held_) {
    std::optional<NetnsId> now;
    try {
      now = IdAtPath(held.ref.netns_path);
    } catch (const InjectError&) {
      continue;  // unreadable is not gone
    }
    if (!now || *now != held.id) gone.push_back(held.ref);
  }
  return gone;
}

std::size_t NetnsMover::held_pods() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

std::vector<HeldNetdev> NetnsMover::HeldNetdevs() const {
  std::vector<HeldNetdev> out;
  std::lock_guard lock(mu_);
  for (const auto& [uid, held] : held_) {
    for (const auto& plan : held.plans) {
      for (const auto& netdev : plan.netdevs) {
        const int fd = ::fcntl(held.ns.fd(), F_DUPFD_CLOEXEC, 0);
        if (fd < 0) continue;
        const auto attached = held.attached_ifindex.find(AttachKey(plan, netdev));
        out.push_back({netdev.device_name, netdev.host_if_name, PodNameOf(netdev), netdev.rdma_device,
                       netdev.rdma_exclusive && !netdev.rdma_device.empty(),
                       attached == held.attached_ifindex.end() ? 0 : attached->second, held.ref, NetnsHandle(fd)});
      }
    }
  }
  return out;
}

void NetnsMover::DetachLocked(const PodSandboxRef& pod, const std::vector<ClaimPlan>& requested) {
  // The namespace the netdevs went into: the one held since attach (the
  // path may be gone or reused), else whatever the path names now.
  NetnsHandle pod_ns;
  std::vector<ClaimPlan> held_plans;
  std::map<std::string, int> attached_ifindex;
  // Restored by this mover already and not attached since (unprepare after
  // StopPodSandbox): the netdevs are home as the host had them, and may be
  // someone else's to change by now.
  if (!held_.contains(pod.uid) && restored_.contains(pod.uid)) return;
  if (auto held = held_.find(pod.uid); held != held_.end()) {
    pod_ns = std::move(held->second.ns);
    held_plans = std::move(held->second.plans);
    attached_ifindex = std::move(held->second.attached_ifindex);
    held_.erase(held);
  } else if (!pod.netns_path.empty()) {
    pod_ns = OpenNetns(pod.netns_path, /*missing_ok=*/true);
    if (pod_ns.valid() && IdOf(pod_ns) == IdOf(host_ns_)) pod_ns = NetnsHandle();  // never "restore" from the host
  }
  const auto& plans = HasNetdevs(requested) ? requested : held_plans;
  if (!HasNetdevs(plans)) return;
  nl_sock* host_sock = host_sock_.get();
  NlSockPtr pod_sock;
  if (pod_ns.valid()) pod_sock = NetlinkSocketIn(pod_ns, NETLINK_ROUTE);
  // The node's uplinks are never taken for a netdev, whatever they look like.
  std::optional<std::set<std::string>> uplinks;
  auto host_links = [&] {
    if (uplinks) return inventory::ReadLinks(host_sock, log_);
    auto facts = inventory::ReadLinksAndRoutes(host_sock, log_);
    uplinks = inventory::ExcludedUplinkInterfaces(facts);
    return std::move(facts.links);
  };

  std::string failures;
  for (const auto& plan : plans) {
    for (const auto& netdev : plan.netdevs) {
      const std::string host_name = HostNameOf(netdev);
      const std::string pod_name = PodNameOf(netdev);
      const auto& host = netdev.host_state;
      try {
        // The RDMA link goes back first: it must be sent from inside the pod.
        if (netdev.rdma_exclusive && !netdev.rdma_device.empty() && pod_ns.valid()) {
          MoveRdmaDevice(pod_ns, netdev.rdma_device, host_ns_);
        }
        if (!netdev.child_type.empty()) {
          // The netdev never left the host: the pod's child goes, and nothing
          // of the host changes. A namespace that died took the child along.
          if (pod_sock) {
            auto parent = FindLink(host_sock, netdev.host_if_name);
            const int parent_ifindex = parent ? rtnl_link_get_ifindex(parent.get()) : 0;
            const auto attached = attached_ifindex.find(AttachKey(plan, netdev));
            LinkPtr child = attached == attached_ifindex.end() ? nullptr : LinkAt(pod_sock.get(), attached->second);
            if (!child || !IsChildOf(child.get(), netdev, parent_ifindex)) child = FindLink(pod_sock.get(), pod_name);
            if (child && IsChildOf(child.get(), netdev, parent_ifindex)) {
              const int err = rtnl_link_delete(pod_sock.get(), child.get());
              if (err < 0 && err != -NLE_NODEV && err != -NLE_OBJ_NOTFOUND)
                throw InjectError("deleting " + netdev.child_type + " child " + pod_name + " of netdev " +
                                  netdev.host_if_name + ": " + NlError(err));
            }
          }
          continue;
        }
        // Home already (never moved, or moved back by a dranetd killed
        // before it restored the rest): a link of that name in the pod is the
        // pod's own (never taken for the netdev); the host state is still
        // restored below.
        auto on_host = host_links();
        bool moved = FindNetdevOnHost(on_host, *uplinks, netdev, /*home_only=*/true) != nullptr;
        if (!moved && pod_sock) {
          const auto in_pod = inventory::ReadLinks(pod_sock.get(), log_);
          const auto attached = attached_ifindex.find(AttachKey(plan, netdev));
          if (const auto* found = FindNetdevInPod(in_pod, netdev, attached == attached_ifindex.end() ? 0 : attached->second)) {
            if (auto link = LinkAt(pod_sock.get(), found->ifindex)) {
              MoveLink(pod_sock.get(), link.get(), host_ns_, host_name, host.mtu);
              DRANET_FAULT_POINT("netns-detach-after-move");  // home, its addresses and routes not back yet
              moved = true;
            }
          }
        }
        if (!moved) {
          // The pod netns died first: the kernel returned the device, under
          // its pod name or, when the host had that name, as devN.
          auto link = ReturnedByTheKernel(host_sock, netdev, log_);
          if (!link)
            throw InjectError("netdev " + host_name + " cannot be found: neither in the pod nor on the host is a link "
                              "with its recorded " + (host.permanent_mac.empty() ? "name and MAC " + (host.mac.empty() ? std::string("(none recorded)") : host.mac)
                                                                                : "permanent address " + host.permanent_mac) +
                              " (the node's uplinks are never taken); nothing on the host was changed");
          ChangeLink(host_sock, link.get(), host.mtu, false, true, host_name);
        }
        auto link = FindLink(host_sock, host_name);
        if (!link) throw InjectError("netdev " + host_name + " vanished after the move back");
        const int ifindex = rtnl_link_get_ifindex(link.get());
        // What the pod changed goes back while the link is down; the ARP
        // sysctls are the namespace's defaults again after any move.
        if (!host.settings.mac.empty() && (rtnl_link_get_flags(link.get()) & IFF_UP) != 0)
          ChangeLink(host_sock, link.get(), 0, false, false, {});
        SetLinkAttributes(host_sock, ifindex, host.settings, host_name);
        ApplyNamespaceSettings(host_ns_, host_name, host.settings);
        AddAddresses(host_sock, ifindex, host.addresses, host_name);
        ChangeLink(host_sock, link.get(), host.mtu, host.up, false, {});
        // A link that is down has no routes to give back (the kernel flushed
        // them when it went down, so prepare found none).
        if (host.up) AddNetworkConfig(host_sock, ifindex, host.routes, host.rules, host.neighbors, host_name);
      } catch (const InjectError& e) {
        log_.Error("netdev not restored", {{"pod", pod.Describe()},
                                            {"claim", plan.claim_namespace + "/" + plan.claim_name},
                                            {"netdev", host_name},
                                            {"error", e.what()}});
        failures += (failures.empty() ? "" : "; ") + std::string(e.what());
        if (on_restore_failure_) on_restore_failure_();
      }
    }
  }
  if (!failures.empty()) throw InjectError("pod " + pod.Describe() + ": " + failures);
  if (restored_.insert(pod.uid).second) restored_order_.push_back(pod.uid);
  while (restored_order_.size() > kRestoredPodsKept) {
    restored_.erase(restored_order_.front());
    restored_order_.pop_front();
  }
}

}  // namespace dranet::inject
