#pragma once
// core/inject/host_network.h — what a netdev carries on the host, taken at
// prepare so that the pod gets it and teardown gives it back.
//
// A NIC that leaves the host netns loses its routes and neighbour entries
// (the kernel flushes them with the device). On GKE A4 every gpuNrdma0 has a
// /32 address and reaches the rest of its subnet only through two DHCP
// routes on that NIC (a link-scope route to the gateway and the subnet via
// the gateway): without them a pod sees its RDMA NIC and still cannot reach
// another node. So prepare records, from one netlink dump per claim:
//   * every route whose output interface is the netdev, in every table but
//     `local`, except default routes (a default route in the pod would take
//     the pod's traffic away from its primary interface), IPv6 link-local
//     destinations and IPv6 `proto kernel` routes (the kernel makes those
//     again itself). A multipath route contributes its next hop through this
//     netdev only;
//   * the rules that look up a table those routes live in (not main, local
//     or default), when their only selectors are source and destination;
//   * the netdev's permanent neighbour entries.
// The same facts go into the pod (plan.netdevs[].routes/rules/neighbors,
// merged with cloud plugins' and the claim's own) and back onto the host at
// teardown (plan.netdevs[].host_state).
#include <string>
#include <vector>

#include "inject/plan.h"
#include "inventory/netlink_facts.h"

namespace dranet::inject {

// Whether a netdev's host state records `route` when a next hop leaves
// through it: unicast routes in any table but `local`, default routes
// included, except IPv6 link-local destinations and the kernel's own IPv6
// routes.
bool IsCarriedRoute(const inventory::RouteFacts& route);

// A default route (0.0.0.0/0 or ::/0) of the main table. Recorded and
// restored on the host, but never copied into a pod: there it would compete
// with the pod's own default route (its primary interface). Default routes
// of other tables (a secondary NIC's policy routing) go along with the
// rules that look them up.
bool IsMainTableDefault(const Route& route);

// The host state of netdev `if_name` in `facts`: name, MTU, up flag, every
// address, and the routes, rules and neighbours described above. Throws
// InjectError when `facts` has no such link.
NetdevHostState HarvestNetdevHostState(const inventory::NetlinkFacts& facts, const std::string& if_name);

// `base` with `overrides` appended, de-duplicated by destination + table
// (table 0 and 254 are both main): an override replaces the base entry in
// place, and a later override replaces an earlier one. Order is otherwise
// kept.
std::vector<Route> MergeRoutes(std::vector<Route> base, const std::vector<Route>& overrides);

// `base` with `overrides` appended, de-duplicated by priority, source,
// destination and table (identical rules are one rule).
std::vector<Rule> MergeRules(std::vector<Rule> base, const std::vector<Rule>& overrides);

// `base` with `overrides` appended, de-duplicated by destination (the later
// MAC wins).
std::vector<Neighbor> MergeNeighbors(std::vector<Neighbor> base, const std::vector<Neighbor>& overrides);

}  // namespace dranet::inject
