#pragma once
// core/inventory/netlink_facts.h — the netdev facts discovery needs from
// rtnetlink (links, addresses, routes, rules, permanent neighbours), and the
// uplink rule on them.
//
// On a live node they come from libnl dumps; in a node snapshot from sysfs
// plus the snapshot's netlink.json (snapshot.h). Both produce NetlinkFacts,
// so everything downstream is the same code.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/log.h"
#include "inventory/bpf_programs.h"

struct nl_addr;  // libnl
struct nl_sock;

namespace dranet::inventory {

// IFLA_GSO_IPV4_MAX_SIZE / IFLA_GRO_IPV4_MAX_SIZE (Linux 6.3): newer than
// the build host's uapi headers may be, so spelled out with the kernel's values.
inline constexpr int kIflaGsoIpv4MaxSize = 63;
inline constexpr int kIflaGroIpv4MaxSize = 64;
// IFLA_TSO_MAX_SIZE (Linux 5.19), likewise.
inline constexpr int kIflaTsoMaxSize = 59;
// GRO_MAX_SIZE of Linux 5.19 and later (8 * 65535, include/linux/netdevice.h):
// the largest IFLA_GRO_MAX_SIZE / IFLA_GRO_IPV4_MAX_SIZE the kernel takes
// ("too big gro_max_size"). The kernels that report IFLA_TSO_MAX_SIZE are
// those kernels.
inline constexpr uint32_t kKernelGroMaxSize = 8 * 65535;

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
  uint32_t min_mtu = 0;  // IFLA_MIN_MTU / IFLA_MAX_MTU: what the driver accepts;
  uint32_t max_mtu = 0;  // 0 when the kernel does not say (before 4.18, snapshots)
  // Largest GSO/GRO packet the stack builds for this link (IFLA_GSO_MAX_SIZE,
  // IFLA_GRO_MAX_SIZE; the IPv4 pair since Linux 6.3): what BIG TCP raises.
  // 0 when the kernel does not say (older kernels, snapshots).
  uint32_t gso_max_size = 0, gro_max_size = 0, gso_ipv4_max_size = 0, gro_ipv4_max_size = 0;
  // Names of the BPF programs on the link's tc and tcx hooks (bpf_programs.h).
  // nullopt when not known: a snapshot that did not record them, or a live
  // read that failed (no CAP_SYS_ADMIN); discovery then publishes no ebpf
  // attributes for the link.
  std::optional<BpfProgramNames> bpf_programs = std::nullopt;
  // IFLA_PERM_ADDRESS (Linux 5.6+): the address the hardware came with,
  // whatever MAC was set since. Empty when the kernel reports none: virtual
  // links (veth, dummy) with a random address, older kernels, snapshots.
  std::string permanent_mac = {};
  // IFLA_TSO_MAX_SIZE (Linux 5.19+): the largest GSO packet the device takes,
  // the kernel's bound on IFLA_GSO_MAX_SIZE and IFLA_GSO_IPV4_MAX_SIZE ("too
  // big gso_max_size"). 0 when the kernel does not say (older kernels,
  // snapshots).
  uint32_t tso_max_size = 0;
};

// One next hop of a route. A plain route has one; a multipath (ECMP) route
// has one per path.
struct RouteNexthop {
  int ifindex = 0;       // output interface; 0 when the route has none (blackhole, ...)
  std::string gateway;   // "192.168.1.1"; empty for an on-link next hop
  uint8_t weight = 1;    // as iproute2 prints it (rtnh_hops + 1); 1 for plain routes
  friend bool operator==(const RouteNexthop&, const RouteNexthop&) = default;
};

// One route of the host, in any table but `local`.
struct RouteFacts {
  int family = 0;            // AF_INET or AF_INET6
  std::string destination;   // CIDR; "0.0.0.0/0" / "::/0" for a default route
  std::string source;        // RTA_PREFSRC ("src" in iproute2); empty when unset
  uint8_t scope = 0;         // RT_SCOPE_* (0 universe, 253 link, 254 host)
  uint32_t table = 254;      // RT_TABLE_* (254 main)
  uint32_t metric = 0;       // RTA_PRIORITY
  uint8_t protocol = 0;      // RTPROT_* (2 kernel, 3 boot, 4 static, 16 dhcp, ...)
  uint8_t type = 1;          // RTN_* (1 unicast)
  std::vector<RouteNexthop> nexthops;
  bool IsDefault() const { return destination == "0.0.0.0/0" || destination == "::/0"; }
  friend bool operator==(const RouteFacts&, const RouteFacts&) = default;
};

// One policy-routing rule ("ip rule"). Only rules whose selectors are the
// source and destination prefixes are kept whole; `other_selectors` marks
// rules that also match on iif, oif, fwmark, tos, uid range, ports, ... —
// facts we record but never copy into a pod.
struct RuleFacts {
  int family = 0;            // AF_INET or AF_INET6
  uint32_t priority = 0;     // FRA_PRIORITY
  std::string source;        // CIDR or empty ("from all")
  std::string destination;   // CIDR or empty ("to all")
  uint32_t table = 0;        // lookup table
  uint8_t action = 1;        // FR_ACT_* (1 = lookup table)
  bool other_selectors = false;
  friend bool operator==(const RuleFacts&, const RuleFacts&) = default;
};

// A permanent (NUD_PERMANENT) neighbour entry.
struct NeighborFacts {
  int ifindex = 0;
  int family = 0;            // AF_INET or AF_INET6
  std::string destination;   // IP address
  std::string lladdr;        // lowercase colon-separated hex
  friend bool operator==(const NeighborFacts&, const NeighborFacts&) = default;
};

struct NetlinkFacts {
  std::vector<LinkFacts> links;          // sorted by ifindex
  std::vector<RouteFacts> routes;        // every table but local, in dump order
  std::vector<RuleFacts> rules;          // every rule, in priority order
  std::vector<NeighborFacts> neighbors;  // permanent entries only
};

// Dumps links, addresses, routes (every table but local), rules and
// permanent neighbours of the calling thread's network namespace. Routes,
// rules and neighbours come from raw dumps, not libnl caches, which would
// merge two default routes that differ only in their next hop. Link dumps
// never request VF info (no IFLA_EXT_MASK), so they stay small on hosts with
// hundreds of VFs. A failed dump is logged and leaves that part empty.
NetlinkFacts ReadLiveNetlinkFacts(Logger& log);

// Links and routes only (no addresses, rules, neighbours or BPF names), read
// on `socket`, whatever namespace it was created in: what identifying a link
// and the uplink rule need. Links sorted by ifindex.
NetlinkFacts ReadLinksAndRoutes(nl_sock* socket, Logger& log);
// The links alone, as ReadLinksAndRoutes reads them.
std::vector<LinkFacts> ReadLinks(nl_sock* socket, Logger& log);

// The interfaces to keep off the inventory: those carrying the lowest-metric
// main-table default route of each family (all of them on a metric tie or a
// multipath route) and, transitively, every link enslaved to one of them (bond and
// bridge ports, Azure's accelerated-networking VF under eth0, ...).
// Re-evaluated from `facts` on each call, so route changes are followed.
std::set<std::string> ExcludedUplinkInterfaces(const NetlinkFacts& facts);

// iproute2 / DRANET name of an ARPHRD_* type ("ether", "infiniband", ...).
std::string EncapsulationName(uint16_t arp_type);

// A link-layer address as LinkFacts::mac spells it ("02:00:0a:e7:00:01",
// lowercase); empty for none.
std::string FormatMac(const nl_addr* address);

// Whether an address (4 or 16 bytes in network order) is global unicast:
// not loopback, link-local, multicast, unspecified or broadcast.
bool IsGlobalUnicast(int family, const unsigned char* bytes);

// Global-unicast "ip/prefix" entries of `addresses` in one family, sorted as
// strings (DRANET's order). Loopback, link-local, multicast, unspecified and
// broadcast addresses are dropped, as are malformed entries.
std::vector<std::string> GlobalUnicastAddresses(const std::vector<std::string>& addresses, int family);

}  // namespace dranet::inventory
