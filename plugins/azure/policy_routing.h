// plugins/azure/policy_routing.h — Azure per-NIC policy routing, as DRANET
// computes it (pkg/cloudprovider/azure/azure.go, GetDeviceConfig).
//
// Azure answers a packet on a secondary NIC only when it leaves through that
// NIC, so a secondary NIC moved into a pod needs source-based routing: its
// own table with a default route via the subnet's gateway (Azure's gateway
// is always the first address of the subnet), and a rule sending traffic
// from the subnet to that table. The n-th interface of IMDS's
// network.interface[] list uses table 100 + n, the primary (n = 0)
// included: it is moved only when it does not carry the node's default
// route (uplinks are never published), and then it needs its table as any
// secondary does. IPv6 follows when the interface has a
// global IPv6 address in IMDS and the node has an IPv6 default route on the
// netdev (its gateway): rule "from <address>/128", route "::/0 via <gw>".
//
// Header-only and pure (no I/O): the plugin reads IMDS and
// <procfs_root>/net/ipv6_route and hands the text in; tests call it directly.
#ifndef DRANET_PLUGINS_AZURE_POLICY_ROUTING_H
#define DRANET_PLUGINS_AZURE_POLICY_ROUTING_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <dranet/plugin.hpp>

namespace dranet::plugins::azure {

// DRANET's routingTableBase: interface n of the IMDS list uses table 100 + n.
constexpr uint32_t kRoutingTableBase = 100;

// One entry of IMDS network.interface[], as far as routing needs it.
struct ImdsNic {
  std::size_t index = 0;       // position in network.interface[] (0 = primary)
  std::string mac;             // normalised: lower-case hex, no separators
  std::string subnet_address;  // ipv4.subnet[0].address, e.g. "10.1.0.0"; "" when none
  std::string subnet_prefix;   // ipv4.subnet[0].prefix, e.g. "24"
  std::string ipv6;            // ipv6.ipAddress[0].privateIpAddress; "" when none
};

// The first usable address of an IPv4 subnet (network address + 1), as
// DRANET's subnetFirstAddress: ("10.9.255.0", "24") -> "10.9.255.1". Refuses
// (nullopt, `why` set) a non-IPv4 address, a bad prefix, an address that is
// not the network base (10.0.0.5/24) and a subnet without room (/32).
inline std::optional<std::string> SubnetFirstAddress(const std::string& address, const std::string& prefix,
                                                     std::string& why) {
  const std::string cidr = address + "/" + prefix;
  in_addr addr{};
  if (inet_pton(AF_INET, address.c_str(), &addr) != 1) {
    why = "subnet " + cidr + ": \"" + address + "\" is not an IPv4 address";
    return std::nullopt;
  }
  if (prefix.empty() || prefix.size() > 2 || prefix.find_first_not_of("0123456789") != std::string::npos ||
      std::strtoul(prefix.c_str(), nullptr, 10) > 32) {
    why = "subnet " + cidr + ": bad prefix length";
    return std::nullopt;
  }
  unsigned long bits = std::strtoul(prefix.c_str(), nullptr, 10);
  uint32_t host_order = ntohl(addr.s_addr);
  uint32_t mask = bits == 0 ? 0u : ~uint32_t{0} << (32 - bits);
  if ((host_order & ~mask) != 0) {
    why = "subnet " + cidr + ": " + address + " is not the network address of a /" + prefix;
    return std::nullopt;
  }
  uint32_t first = host_order + 1;
  if (bits == 32 || (first & mask) != host_order) {
    why = "subnet " + cidr + ": no address after the network address";
    return std::nullopt;
  }
  in_addr out{};
  out.s_addr = htonl(first);
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &out, text, sizeof text);
  return std::string(text);
}

// True for an IPv6 address outside fe80::/10 (and not ::, ::1 or
// multicast): the addresses worth a rule. IPv4 text is not IPv6.
inline bool IsGlobalIpv6(const std::string& text) {
  in6_addr a{};
  if (inet_pton(AF_INET6, text.c_str(), &a) != 1) return false;
  if (IN6_IS_ADDR_LINKLOCAL(&a) || IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_MULTICAST(&a))
    return false;
  return true;
}

// The gateway of the IPv6 default route through `if_name` in the text of
// /proc/net/ipv6_route ("" when there is none); the lowest metric wins.
// Line format: dest plen src plen nexthop metric refcnt use flags device,
// addresses as 32 hex digits.
inline std::string Ipv6DefaultGateway(const std::string& ipv6_route, const std::string& if_name) {
  constexpr unsigned long kRtfUp = 0x1, kRtfGateway = 0x2;
  std::istringstream lines(ipv6_route);
  std::string best;
  unsigned long best_metric = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    std::string dest, dest_len, src, src_len, next_hop, metric, refcnt, use, flags, device;
    if (!(f >> dest >> dest_len >> src >> src_len >> next_hop >> metric >> refcnt >> use >> flags >> device)) continue;
    if (device != if_name || dest != std::string(32, '0') || dest_len != "00" || next_hop.size() != 32) continue;
    unsigned long fl = std::strtoul(flags.c_str(), nullptr, 16);
    if ((fl & (kRtfUp | kRtfGateway)) != (kRtfUp | kRtfGateway)) continue;
    in6_addr gw{};
    bool ok = true;
    for (int i = 0; i < 16 && ok; ++i) {
      char* end = nullptr;
      std::string byte = next_hop.substr(static_cast<std::size_t>(i) * 2, 2);
      gw.s6_addr[i] = static_cast<uint8_t>(std::strtoul(byte.c_str(), &end, 16));
      ok = end != nullptr && *end == '\0';
    }
    if (!ok || IN6_IS_ADDR_UNSPECIFIED(&gw)) continue;
    unsigned long m = std::strtoul(metric.c_str(), nullptr, 16);
    if (!best.empty() && m >= best_metric) continue;
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, &gw, text, sizeof text);
    best = text;
    best_metric = m;
  }
  return best;
}

// What one netdev gets, and why not more (one phrase per skipped family).
struct NicRouting {
  uint32_t table = 0;  // 0: nothing (the primary interface)
  std::vector<sdk::Route> routes;
  std::vector<sdk::Rule> rules;
  std::vector<std::string> skipped;
};

// DRANET's GetDeviceConfig for interface `nic` (index 0 too).
// `ipv6_gateway` is the netdev's IPv6 default gateway on the node ("" when
// none); it is only used when IMDS lists a global IPv6 address.
inline NicRouting PlanNicRouting(const ImdsNic& nic, const std::string& ipv6_gateway) {
  NicRouting out;
  out.table = kRoutingTableBase + static_cast<uint32_t>(nic.index);
  if (!nic.subnet_address.empty()) {
    std::string why;
    if (auto gateway = SubnetFirstAddress(nic.subnet_address, nic.subnet_prefix, why)) {
      sdk::Rule rule;
      rule.source = nic.subnet_address + "/" + nic.subnet_prefix;
      rule.table = out.table;
      out.rules.push_back(rule);
      sdk::Route route;
      route.destination = "0.0.0.0/0";
      route.gateway = *gateway;
      route.table = out.table;
      out.routes.push_back(route);
    } else {
      out.skipped.push_back("IPv4: " + why);
    }
  } else {
    out.skipped.push_back("IPv4: no subnet in IMDS");
  }
  if (nic.ipv6.empty()) {
    out.skipped.push_back("IPv6: no address in IMDS");
  } else if (!IsGlobalIpv6(nic.ipv6)) {
    out.skipped.push_back("IPv6: " + nic.ipv6 + " is not a global IPv6 address");
  } else if (ipv6_gateway.empty()) {
    out.skipped.push_back("IPv6: no IPv6 default route on the netdev to take the gateway from");
  } else {
    in6_addr a{};
    char canonical[INET6_ADDRSTRLEN] = {};
    inet_pton(AF_INET6, nic.ipv6.c_str(), &a);
    inet_ntop(AF_INET6, &a, canonical, sizeof canonical);
    sdk::Rule rule;
    rule.source = std::string(canonical) + "/128";
    rule.table = out.table;
    out.rules.push_back(rule);
    sdk::Route route;
    route.destination = "::/0";
    route.gateway = ipv6_gateway;
    route.table = out.table;
    out.routes.push_back(route);
  }
  return out;
}

}  // namespace dranet::plugins::azure

#endif  // DRANET_PLUGINS_AZURE_POLICY_ROUTING_H
