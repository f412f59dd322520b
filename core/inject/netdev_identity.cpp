#include "inject/netdev_identity.h"

#include "inject/netns_mover.h"

namespace dranet::inject {
namespace {

// Whether the permanent address settles it, and how.
enum class Permanent { kUnknown, kSame, kDifferent };
Permanent ByPermanentAddress(const inventory::LinkFacts& link, const NetdevHostState& host) {
  if (host.permanent_mac.empty()) return Permanent::kUnknown;
  // The hardware had one at prepare: a link without it is another link.
  return link.permanent_mac == host.permanent_mac ? Permanent::kSame : Permanent::kDifferent;
}

bool HasClaimMac(const inventory::LinkFacts& link, const NetdevPlan& netdev) {
  return !netdev.settings.mac.empty() && link.mac == netdev.settings.mac;
}

bool FitsOnHost(const inventory::LinkFacts& link, const NetdevPlan& netdev) {
  const auto& host = netdev.host_state;
  if (const auto p = ByPermanentAddress(link, host); p != Permanent::kUnknown) return p == Permanent::kSame;
  if (link.name == HostNameOf(netdev)) return host.mac.empty() || link.mac == host.mac || HasClaimMac(link, netdev);
  return !host.mac.empty() && link.mac == host.mac;
}

bool FitsInPod(const inventory::LinkFacts& link, const NetdevPlan& netdev) {
  const auto& host = netdev.host_state;
  if (const auto p = ByPermanentAddress(link, host); p != Permanent::kUnknown) return p == Permanent::kSame;
  // A checkpoint without the MAC: the pod name is all there is.
  if (host.mac.empty()) return link.name == PodNameOf(netdev);
  return link.mac == host.mac || HasClaimMac(link, netdev);
}

// The one candidate, or among several the one named `preferred`.
const inventory::LinkFacts* Choose(const std::vector<const inventory::LinkFacts*>& candidates,
                                   const std::vector<std::string>& preferred) {
  for (const auto& name : preferred)
    for (const auto* link : candidates)
      if (link->name == name) return link;
  return candidates.size() == 1 ? candidates.front() : nullptr;
}

}  // namespace

const inventory::LinkFacts* FindNetdevInPod(const std::vector<inventory::LinkFacts>& links, const NetdevPlan& netdev,
                                            int attached_ifindex) {
  // Attached by this process: the index is the link, whatever the pod did
  // to its name and MAC; gone from there, it left the pod (the pod deleted
  // it), and no other link of the pod is taken for it.
  if (attached_ifindex != 0) {
    for (const auto& link : links)
      if (link.ifindex == attached_ifindex && ByPermanentAddress(link, netdev.host_state) != Permanent::kDifferent)
        return &link;
    return nullptr;
  }
  std::vector<const inventory::LinkFacts*> candidates;
  for (const auto& link : links)
    if (FitsInPod(link, netdev)) candidates.push_back(&link);
  return Choose(candidates, {PodNameOf(netdev)});
}

const inventory::LinkFacts* FindNetdevOnHost(const std::vector<inventory::LinkFacts>& links,
                                             const std::set<std::string>& uplinks, const NetdevPlan& netdev,
                                             bool home_only) {
  std::vector<const inventory::LinkFacts*> candidates;
  for (const auto& link : links) {
    if (uplinks.count(link.name) || !FitsOnHost(link, netdev)) continue;
    if (home_only && link.name != HostNameOf(netdev)) continue;
    candidates.push_back(&link);
  }
  return Choose(candidates, {HostNameOf(netdev), PodNameOf(netdev)});
}

}  // namespace dranet::inject
