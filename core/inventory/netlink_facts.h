#pragma once
// core/inventory/netlink_facts.h — the netdev facts discovery needs from
// rtnetlink (links, addresses, default routes), and the uplink rule on them.
//
// On a live node they come from libnl dumps; in a node snapshot from sysfs
// plus the snapshot's netlink.json (snapshot.h). Both produce NetlinkFacts,
// so everything downstream is the same code.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/log.h"

namespace dranet::inventory {

struct LinkFacts {
  int ifindex = 0;
  std::string name;
  uint32_t flags = 0;        // IFF_* (IFF_LOOPBACK, IFF_UP, ...)
  uint32_t mtu = 0;
  std::string operstate;     // "up", "down", "unknown", ... (as sysfs and iproute2 spell it)
  std::string kind;          // rtnl link kind ("veth", "ipoib", "bond"); empty for hardware netdevs
  uint16_t arp_type = 0;     // ARPHRD_* (1 ether, 32 infiniband)
  std::string mac;           // lowercase colon-separated hex; 20 bytes for IPoIB
  std::string alias;         // IFLA_IFALIAS, often empty
  int master_index = 0;      // IFLA_MASTER: bond/bridge/team/VRF/netvsc this link is enslaved to
  int parent_index = 0;      // IFLA_LINK: lower device of VLANs and IPoIB pkey children
  std::vector<std::string> addresses;  // every address as "ip/prefixlen", any scope
};

struct DefaultRoute {
  int family = 0;            // AF_INET or AF_INET6
  uint32_t metric = 0;       // RTA_PRIORITY
  std::vector<int> ifindexes;  // output interface(s); several for multipath routes
};

struct NetlinkFacts {
  std::vector<LinkFacts> links;              // sorted by ifindex
  std::vector<DefaultRoute> default_routes;  // main table only
};

// Dumps links, addresses and main-table routes of the calling thread's
// network namespace. Link dumps never request VF info (no IFLA_EXT_MASK), so
// they stay small on hosts with hundreds of VFs. A failed dump is logged and
// leaves that part empty.
NetlinkFacts ReadLiveNetlinkFacts(Logger& log);

// The interfaces to keep off the inventory: those carrying the lowest-metric
// default route of each family (all of them on a metric tie or a multipath
// route) and, transitively, every link enslaved to one of them (bond and
// bridge ports, Azure's accelerated-networking VF under eth0, ...).
// Re-evaluated from `facts` on each call, so route changes are followed.
std::set<std::string> ExcludedUplinkInterfaces(const NetlinkFacts& facts);

// iproute2 / DRANET name of an ARPHRD_* type ("ether", "infiniband", ...).
std::string EncapsulationName(uint16_t arp_type);

// Global-unicast "ip/prefix" entries of `addresses` in one family, sorted as
// strings (DRANET's order). Loopback, link-local, multicast, unspecified and
// broadcast addresses are dropped, as are malformed entries.
std::vector<std::string> GlobalUnicastAddresses(const std::vector<std::string>& addresses, int family);

}  // namespace dranet::inventory
