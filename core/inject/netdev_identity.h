#pragma once
// core/inject/netdev_identity.h — which link of a namespace is a prepared
// netdev when its pod stops.
//
// Teardown renames, readdresses and re-routes the link it picks, so a wrong
// pick reconfigures someone else's interface (on the node's uplink, the node
// loses its default route). The pick is therefore by what the netdev had on
// the host at prepare, never by what the claim asked for alone:
//   * a recorded permanent address (IFLA_PERM_ADDRESS) decides by itself —
//     neither the pod nor a rename changes it;
//   * without one (veth, older kernels, older checkpoints): the host name
//     with a MAC it had on the host or was given by the claim, or the MAC
//     recorded on the host;
//   * in the pod, first the link at the index it got when it was attached;
//   * on the host, never one of the node's uplinks;
//   * several links that fit equally (VLANs and bond ports share a MAC):
//     the one with the expected name, else none.
// Pure functions over link facts, so every rule is tested without a kernel.
#include <set>
#include <string>
#include <vector>

#include "inject/plan.h"
#include "inventory/netlink_facts.h"

namespace dranet::inject {

// The netdev among the pod namespace's `links`: with `attached_ifindex`
// (the index it got when this process attached it), the link there or
// null; with 0 (attached before a restart), the one that fits (see above),
// or null.
const inventory::LinkFacts* FindNetdevInPod(const std::vector<inventory::LinkFacts>& links, const NetdevPlan& netdev,
                                            int attached_ifindex);

// The netdev among the host namespace's `links`, never one named in
// `uplinks`, or null. With `home_only`, only a link that has the netdev's
// host name already.
const inventory::LinkFacts* FindNetdevOnHost(const std::vector<inventory::LinkFacts>& links,
                                             const std::set<std::string>& uplinks, const NetdevPlan& netdev,
                                             bool home_only);

}  // namespace dranet::inject
