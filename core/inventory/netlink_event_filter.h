#pragma once
// core/inventory/netlink_event_filter.h — which rtnetlink events can change
// what discovery publishes.
//
// Every pod start on a node makes the CNI create a host-side veth, enslave
// it to a bridge, bring it up and give it IPv6 link-local addresses and
// routes: a dozen events, none of which changes a published device when
// veths are not published. A full discovery for each would be wasted work,
// so the monitor asks this filter first:
//
//   link add/change  relevant when the link is new (and not of an ignored
//                    kind) or a fact discovery publishes changed: name, MTU,
//                    MAC, operstate, up/loopback flags, kind, ARP type,
//                    alias, master, parent
//   link delete      relevant unless the link was of an ignored kind
//   address          relevant when global unicast (the only addresses
//                    published) on a link not of an ignored kind
//   route            relevant for main-table default routes (uplink
//                    exclusion reads them), and nothing else
//   bridge-port      (AF_BRIDGE link messages) never relevant
//   anything else    relevant (unknown messages are not guessed about)
//
// Links are learned from the events themselves (and from a link dump the
// monitor requests at start): a link first seen in an event counts as new.
// Not thread-safe: one filter per monitor thread.
#include <linux/netlink.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace dranet::inventory {

class NetlinkEventFilter {
 public:
  // Links of these rtnetlink kinds ("veth") are never published, so nothing
  // about them or their addresses is relevant.
  explicit NetlinkEventFilter(std::set<std::string> ignored_link_kinds = {});

  // True when `message` (one complete rtnetlink message) could change the
  // published inventory. Remembers link facts as a side effect.
  bool Relevant(const nlmsghdr* message);

  // Why the last relevant message was relevant ("link 7 eth1 changed"),
  // for the log.
  const std::string& last_reason() const { return last_reason_; }

  // Links known so far, and how many of them are of an ignored kind.
  std::size_t known_links() const { return links_.size(); }
  std::size_t ignored_links() const { return ignored_.size(); }

 private:
  struct LinkFacts {
    std::string name, kind, mac, alias;
    std::uint32_t mtu = 0, flags = 0;
    std::uint16_t arp_type = 0;
    std::uint8_t operstate = 0;
    int master = 0, parent = 0;
    friend bool operator==(const LinkFacts&, const LinkFacts&) = default;
  };
  bool LinkChanged(const nlmsghdr* message);
  bool LinkDeleted(const nlmsghdr* message);
  bool AddressChanged(const nlmsghdr* message);
  bool RouteChanged(const nlmsghdr* message);

  std::set<std::string> ignored_link_kinds_;
  std::map<int, LinkFacts> links_;  // by ifindex
  std::set<int> ignored_;           // ifindexes of links of an ignored kind
  std::string last_reason_;
};

}  // namespace dranet::inventory
