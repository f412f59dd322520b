#include "inventory/netlink_facts.h"

#include <arpa/inet.h>
#include <linux/if_arp.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "inventory/sysfs_tree.h"

namespace dranet::inventory {
namespace {

struct SocketDeleter {
  void operator()(nl_sock* socket) const { nl_socket_free(socket); }
};
struct CacheDeleter {
  void operator()(nl_cache* cache) const { nl_cache_free(cache); }
};
using SocketPtr = std::unique_ptr<nl_sock, SocketDeleter>;
using CachePtr = std::unique_ptr<nl_cache, CacheDeleter>;

// A kernel dump is retried when it was interrupted by a concurrent change.
constexpr int kDumpAttempts = 5;

std::string FormatMac(const nl_addr* address) {
  if (address == nullptr) return {};
  const auto* bytes = static_cast<const unsigned char*>(nl_addr_get_binary_addr(address));
  unsigned length = nl_addr_get_len(address);
  std::string out;
  char hex[4];
  for (unsigned i = 0; i < length; ++i) {
    std::snprintf(hex, sizeof(hex), i == 0 ? "%02x" : ":%02x", bytes[i]);
    out += hex;
  }
  return out;
}

std::string FormatCidr(const nl_addr* address) {
  if (address == nullptr) return {};
  char text[INET6_ADDRSTRLEN];
  int family = nl_addr_get_family(address);
  if ((family != AF_INET && family != AF_INET6) ||
      inet_ntop(family, nl_addr_get_binary_addr(address), text, sizeof(text)) == nullptr) {
    return {};
  }
  return std::string(text) + "/" + std::to_string(nl_addr_get_prefixlen(address));
}

void AddLinkObject(nl_object* object, void* links_arg) {
  auto* links = static_cast<std::vector<LinkFacts>*>(links_arg);
  auto* link = reinterpret_cast<rtnl_link*>(object);
  LinkFacts facts;
  facts.ifindex = rtnl_link_get_ifindex(link);
  const char* name = rtnl_link_get_name(link);
  facts.name = name ? name : "";
  facts.flags = rtnl_link_get_flags(link);
  facts.mtu = rtnl_link_get_mtu(link);
  char state[32];
  facts.operstate = rtnl_link_operstate2str(rtnl_link_get_operstate(link), state, sizeof(state));
  const char* kind = rtnl_link_get_type(link);
  facts.kind = kind ? kind : "";
  facts.arp_type = static_cast<uint16_t>(rtnl_link_get_arptype(link));
  facts.mac = FormatMac(rtnl_link_get_addr(link));
  const char* alias = rtnl_link_get_ifalias(link);
  facts.alias = alias ? alias : "";
  facts.master_index = rtnl_link_get_master(link);
  facts.parent_index = rtnl_link_get_link(link);
  links->push_back(std::move(facts));
}

int OnLinkMessage(nl_msg* message, void* links_arg) {
  nl_msg_parse(message, AddLinkObject, links_arg);
  return NL_OK;
}

// RTM_GETLINK dump without IFLA_EXT_MASK: libnl's link cache always asks for
// RTEXT_FILTER_VF, whose per-VF attributes make dumps huge on SR-IOV hosts.
std::vector<LinkFacts> DumpLinks(nl_sock* socket, Logger& log) {
  for (int attempt = 1; attempt <= kDumpAttempts; ++attempt) {
    std::vector<LinkFacts> links;
    ifinfomsg request{};
    request.ifi_family = AF_UNSPEC;
    int error = nl_send_simple(socket, RTM_GETLINK, NLM_F_DUMP, &request, sizeof(request));
    if (error >= 0) {
      nl_socket_modify_cb(socket, NL_CB_VALID, NL_CB_CUSTOM, OnLinkMessage, &links);
      error = nl_recvmsgs_default(socket);
    }
    if (error >= 0) return links;
    if (error != -NLE_DUMP_INTR || attempt == kDumpAttempts) {
      log.Error("netlink link dump failed; netdevs will be missing", {{"error", nl_geterror(error)}});
      return {};
    }
  }
  return {};
}

void AttachAddresses(nl_sock* socket, std::vector<LinkFacts>& links, Logger& log) {
  nl_cache* raw = nullptr;
  int error = rtnl_addr_alloc_cache(socket, &raw);
  if (error < 0) {
    log.Error("netlink address dump failed; ipv4/ipv6 will be missing", {{"error", nl_geterror(error)}});
    return;
  }
  CachePtr cache(raw);
  std::map<int, LinkFacts*> by_index;
  for (auto& link : links) by_index[link.ifindex] = &link;
  for (nl_object* object = nl_cache_get_first(cache.get()); object != nullptr; object = nl_cache_get_next(object)) {
    auto* address = reinterpret_cast<rtnl_addr*>(object);
    auto it = by_index.find(rtnl_addr_get_ifindex(address));
    if (it == by_index.end()) continue;
    std::string cidr = FormatCidr(rtnl_addr_get_local(address));
    if (cidr.empty()) continue;
    // The prefix length lives on the rtnl_addr, not on the local nl_addr.
    cidr = cidr.substr(0, cidr.find('/')) + "/" + std::to_string(rtnl_addr_get_prefixlen(address));
    it->second->addresses.push_back(std::move(cidr));
  }
}

std::vector<DefaultRoute> DumpDefaultRoutes(nl_sock* socket, Logger& log) {
  nl_cache* raw = nullptr;
  int error = rtnl_route_alloc_cache(socket, AF_UNSPEC, 0, &raw);
  if (error < 0) {
    log.Error("netlink route dump failed; default-route uplinks cannot be excluded",
              {{"error", nl_geterror(error)}});
    return {};
  }
  CachePtr cache(raw);
  std::vector<DefaultRoute> routes;
  for (nl_object* object = nl_cache_get_first(cache.get()); object != nullptr; object = nl_cache_get_next(object)) {
    auto* route = reinterpret_cast<rtnl_route*>(object);
    if (rtnl_route_get_table(route) != RT_TABLE_MAIN) continue;
    if (rtnl_route_get_type(route) != RTN_UNICAST) continue;
    nl_addr* destination = rtnl_route_get_dst(route);
    if (destination != nullptr && nl_addr_get_prefixlen(destination) != 0) continue;
    DefaultRoute entry;
    entry.family = rtnl_route_get_family(route);
    entry.metric = rtnl_route_get_priority(route);
    for (int i = 0; i < rtnl_route_get_nnexthops(route); ++i) {
      int ifindex = rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(route, i));
      if (ifindex > 0) entry.ifindexes.push_back(ifindex);
    }
    if (!entry.ifindexes.empty()) routes.push_back(std::move(entry));
  }
  return routes;
}

bool IsGlobalUnicastV4(const unsigned char* b) {
  if (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0) return false;    // unspecified
  if (b[0] == 127) return false;                                         // loopback
  if (b[0] == 169 && b[1] == 254) return false;                          // link-local
  if (b[0] >= 224 && b[0] <= 239) return false;                          // multicast
  if (b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255) return false;  // broadcast
  return true;
}

bool IsGlobalUnicastV6(const unsigned char* b) {
  static const unsigned char kZero[16] = {};
  if (std::memcmp(b, kZero, 16) == 0) return false;                      // unspecified
  if (std::memcmp(b, kZero, 15) == 0 && b[15] == 1) return false;        // loopback
  if (b[0] == 0xff) return false;                                        // multicast
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return false;               // link-local
  return true;
}

}  // namespace

NetlinkFacts ReadLiveNetlinkFacts(Logger& log) {
  NetlinkFacts facts;
  SocketPtr socket(nl_socket_alloc());
  if (!socket) {
    log.Error("cannot allocate a netlink socket; netdevs will be missing");
    return facts;
  }
  int error = nl_connect(socket.get(), NETLINK_ROUTE);
  if (error < 0) {
    log.Error("cannot connect to rtnetlink; netdevs will be missing", {{"error", nl_geterror(error)}});
    return facts;
  }
  facts.links = DumpLinks(socket.get(), log);
  std::sort(facts.links.begin(), facts.links.end(),
            [](const LinkFacts& a, const LinkFacts& b) { return a.ifindex < b.ifindex; });
  AttachAddresses(socket.get(), facts.links, log);
  facts.default_routes = DumpDefaultRoutes(socket.get(), log);
  return facts;
}

std::set<std::string> ExcludedUplinkInterfaces(const NetlinkFacts& facts) {
  std::map<int, uint32_t> lowest_metric_by_family;
  for (const auto& route : facts.default_routes) {
    auto [it, inserted] = lowest_metric_by_family.emplace(route.family, route.metric);
    if (!inserted) it->second = std::min(it->second, route.metric);
  }
  std::set<int> excluded_indexes;
  for (const auto& route : facts.default_routes) {
    if (route.metric != lowest_metric_by_family[route.family]) continue;
    excluded_indexes.insert(route.ifindexes.begin(), route.ifindexes.end());
  }
  // Breadth-first over "enslaved to": each pass adds the children of links
  // already excluded, until nothing changes (bounded by the link count).
  std::vector<int> frontier(excluded_indexes.begin(), excluded_indexes.end());
  while (!frontier.empty()) {
    std::vector<int> next;
    for (const auto& link : facts.links) {
      if (link.master_index == 0 || excluded_indexes.count(link.ifindex)) continue;
      if (std::find(frontier.begin(), frontier.end(), link.master_index) != frontier.end()) {
        excluded_indexes.insert(link.ifindex);
        next.push_back(link.ifindex);
      }
    }
    frontier = std::move(next);
  }
  std::set<std::string> names;
  for (const auto& link : facts.links) {
    if (excluded_indexes.count(link.ifindex)) names.insert(link.name);
  }
  return names;
}

std::string EncapsulationName(uint16_t arp_type) {
  static const std::map<uint16_t, const char*> kNames = {
      {ARPHRD_NETROM, "netrom"},     {ARPHRD_ETHER, "ether"},        {ARPHRD_EETHER, "eether"},
      {ARPHRD_AX25, "ax25"},         {ARPHRD_PRONET, "pronet"},      {ARPHRD_CHAOS, "chaos"},
      {ARPHRD_IEEE802, "ieee802"},   {ARPHRD_ARCNET, "arcnet"},      {ARPHRD_APPLETLK, "atalk"},
      {ARPHRD_DLCI, "dlci"},         {ARPHRD_ATM, "atm"},            {ARPHRD_METRICOM, "metricom"},
      {ARPHRD_IEEE1394, "ieee1394"}, {ARPHRD_INFINIBAND, "infiniband"}, {ARPHRD_SLIP, "slip"},
      {ARPHRD_CSLIP, "cslip"},       {ARPHRD_SLIP6, "slip6"},        {ARPHRD_CSLIP6, "cslip6"},
      {ARPHRD_RSRVD, "rsrvd"},       {ARPHRD_ADAPT, "adapt"},        {ARPHRD_ROSE, "rose"},
      {ARPHRD_X25, "x25"},           {ARPHRD_HWX25, "hwx25"},        {ARPHRD_CAN, "can"},
      {ARPHRD_PPP, "ppp"},           {ARPHRD_HDLC, "hdlc"},          {ARPHRD_LAPB, "lapb"},
      {ARPHRD_DDCMP, "ddcmp"},       {ARPHRD_RAWHDLC, "rawhdlc"},    {ARPHRD_TUNNEL, "ipip"},
      {ARPHRD_TUNNEL6, "tunnel6"},   {ARPHRD_FRAD, "frad"},          {ARPHRD_SKIP, "skip"},
      {ARPHRD_LOOPBACK, "loopback"}, {ARPHRD_LOCALTLK, "ltalk"},     {ARPHRD_FDDI, "fddi"},
      {ARPHRD_BIF, "bif"},           {ARPHRD_SIT, "sit"},            {ARPHRD_IPDDP, "ip/ddp"},
      {ARPHRD_IPGRE, "gre"},         {ARPHRD_PIMREG, "pimreg"},      {ARPHRD_HIPPI, "hippi"},
      {ARPHRD_ASH, "ash"},           {ARPHRD_ECONET, "econet"},      {ARPHRD_IRDA, "irda"},
      {ARPHRD_FCPP, "fcpp"},         {ARPHRD_FCAL, "fcal"},          {ARPHRD_FCPL, "fcpl"},
      {ARPHRD_FCFABRIC, "fcfb0"},    {ARPHRD_IEEE802_TR, "tr"},      {ARPHRD_IEEE80211, "ieee802.11"},
      {ARPHRD_IEEE80211_PRISM, "ieee802.11/prism"}, {ARPHRD_IEEE80211_RADIOTAP, "ieee802.11/radiotap"},
      {ARPHRD_IEEE802154, "ieee802.15.4"}, {ARPHRD_PHONET, "phonet"}, {ARPHRD_PHONET_PIPE, "phonet_pipe"},
      {ARPHRD_CAIF, "caif"},         {ARPHRD_IP6GRE, "ip6gre"},      {ARPHRD_NETLINK, "netlink"},
      {ARPHRD_NONE, "none"},         {ARPHRD_VOID, "void"},
  };
  auto it = kNames.find(arp_type);
  return it == kNames.end() ? "unknown" : it->second;
}

std::vector<std::string> GlobalUnicastAddresses(const std::vector<std::string>& addresses, int family) {
  std::vector<std::string> kept;
  for (const auto& cidr : addresses) {
    auto slash = cidr.find('/');
    std::string ip = cidr.substr(0, slash);
    if (slash == std::string::npos || !ParseDecimal(std::string_view(cidr).substr(slash + 1))) continue;
    unsigned char bytes[16];
    if (inet_pton(family, ip.c_str(), bytes) != 1) continue;
    bool global = family == AF_INET ? IsGlobalUnicastV4(bytes) : IsGlobalUnicastV6(bytes);
    if (global) kept.push_back(cidr);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace dranet::inventory
