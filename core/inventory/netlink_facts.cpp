#include "inventory/netlink_facts.h"

#include <arpa/inet.h>
#include <linux/fib_rules.h>
#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <set>

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

// Runs one RTM_GET* dump and hands every reply message to `parse`, which
// appends what it keeps to the result. Dumps are raw (nl_send_simple + NL_CB_VALID), never
// libnl caches: a cache merges objects whose identifying attributes are
// equal, so two default routes that differ only in their next hop (metric
// ties on two uplinks) would come back as one. An interrupted dump
// (NLE_DUMP_INTR, a concurrent change) is retried from scratch.
template <typename Fact, typename Header>
std::vector<Fact> Dump(nl_sock* socket, int type, const Header& request, void (*parse)(nl_msg*, std::vector<Fact>&),
                       Logger& log, const char* failure) {
  struct Context {
    void (*parse)(nl_msg*, std::vector<Fact>&);
    std::vector<Fact> facts;
  };
  auto on_message = [](nl_msg* message, void* arg) -> int {
    auto* context = static_cast<Context*>(arg);
    context->parse(message, context->facts);
    return NL_OK;
  };
  for (int attempt = 1; attempt <= kDumpAttempts; ++attempt) {
    Context context{parse, {}};
    int error = nl_send_simple(socket, type, NLM_F_DUMP, const_cast<Header*>(&request), sizeof(request));
    if (error >= 0) {
      nl_socket_modify_cb(socket, NL_CB_VALID, NL_CB_CUSTOM, on_message, &context);
      error = nl_recvmsgs_default(socket);
      nl_socket_modify_cb(socket, NL_CB_VALID, NL_CB_DEFAULT, nullptr, nullptr);
    }
    if (error >= 0) return std::move(context.facts);
    if (error != -NLE_DUMP_INTR || attempt == kDumpAttempts) {
      log.Error(failure, {{"error", nl_geterror(error)}, {"attempts", attempt}});
      return {};
    }
  }
  return {};
}

void ParseLink(nl_msg* message, std::vector<LinkFacts>& links) {
  const std::size_t before = links.size();
  nl_msg_parse(message, AddLinkObject, &links);
  if (links.size() != before + 1) return;
  // libnl keeps no MTU range: read it from the message itself.
  constexpr int kMaxType = std::max(IFLA_MAX, kIflaGroIpv4MaxSize);
  nlattr* attrs[kMaxType + 1] = {};
  if (nlmsg_parse(nlmsg_hdr(message), sizeof(ifinfomsg), attrs, kMaxType, nullptr) < 0) return;
  if (attrs[IFLA_MIN_MTU] && nla_len(attrs[IFLA_MIN_MTU]) >= 4) links.back().min_mtu = nla_get_u32(attrs[IFLA_MIN_MTU]);
  if (attrs[IFLA_MAX_MTU] && nla_len(attrs[IFLA_MAX_MTU]) >= 4) links.back().max_mtu = nla_get_u32(attrs[IFLA_MAX_MTU]);
  auto u32 = [&](int type, uint32_t& into) {
    if (attrs[type] && nla_len(attrs[type]) >= 4) into = nla_get_u32(attrs[type]);
  };
  u32(IFLA_GSO_MAX_SIZE, links.back().gso_max_size);
  u32(IFLA_GRO_MAX_SIZE, links.back().gro_max_size);
  u32(kIflaGsoIpv4MaxSize, links.back().gso_ipv4_max_size);
  u32(kIflaGroIpv4MaxSize, links.back().gro_ipv4_max_size);
  u32(kIflaTsoMaxSize, links.back().tso_max_size);
  // The kernel sends IFLA_PERM_ADDRESS only when the hardware has one.
  if (const nlattr* perm = attrs[IFLA_PERM_ADDRESS]; perm != nullptr && nla_len(perm) > 0) {
    nl_addr* address = nl_addr_build(AF_LLC, nla_data(perm), static_cast<std::size_t>(nla_len(perm)));
    if (address != nullptr) {
      links.back().permanent_mac = FormatMac(address);
      nl_addr_put(address);
    }
  }
}

// RTM_GETLINK dump without IFLA_EXT_MASK: libnl's link cache always asks for
// RTEXT_FILTER_VF, whose per-VF attributes make dumps huge on SR-IOV hosts.
std::vector<LinkFacts> DumpLinks(nl_sock* socket, Logger& log) {
  ifinfomsg request{};
  request.ifi_family = AF_UNSPEC;
  return Dump(socket, RTM_GETLINK, request, ParseLink, log, "netlink link dump failed; netdevs will be missing");
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

// "ip" or "ip/prefixlen" of raw address bytes; a short (or absent) buffer is
// zero-padded, which is how the kernel leaves RTA_DST out of default routes.
std::string FormatAddress(int family, const void* bytes, std::size_t length, int prefixlen = -1) {
  if (family != AF_INET && family != AF_INET6) return {};
  unsigned char full[16] = {};
  if (bytes != nullptr) std::memcpy(full, bytes, std::min<std::size_t>(length, family == AF_INET ? 4 : 16));
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(family, full, text, sizeof(text)) == nullptr) return {};
  return prefixlen < 0 ? std::string(text) : std::string(text) + "/" + std::to_string(prefixlen);
}

std::string FormatIp(const nl_addr* address) {
  if (address == nullptr || nl_addr_get_len(address) == 0) return {};
  return FormatAddress(nl_addr_get_family(address), nl_addr_get_binary_addr(address), nl_addr_get_len(address));
}

void AddRouteObject(nl_object* object, void* routes_arg) {
  auto* routes = static_cast<std::vector<RouteFacts>*>(routes_arg);
  auto* route = reinterpret_cast<rtnl_route*>(object);
  RouteFacts facts;
  facts.family = rtnl_route_get_family(route);
  if (facts.family != AF_INET && facts.family != AF_INET6) return;  // ipmr, ip6mr, mpls
  facts.table = rtnl_route_get_table(route);                        // RTA_TABLE when present
  if (facts.table == RT_TABLE_LOCAL) return;
  nl_addr* destination = rtnl_route_get_dst(route);
  int prefixlen = destination ? static_cast<int>(nl_addr_get_prefixlen(destination)) : 0;
  facts.destination = FormatAddress(facts.family, destination ? nl_addr_get_binary_addr(destination) : nullptr,
                                    destination ? nl_addr_get_len(destination) : 0, prefixlen);
  facts.source = FormatIp(rtnl_route_get_pref_src(route));
  facts.scope = rtnl_route_get_scope(route);
  facts.metric = rtnl_route_get_priority(route);
  facts.protocol = rtnl_route_get_protocol(route);
  facts.type = rtnl_route_get_type(route);
  for (int i = 0; i < rtnl_route_get_nnexthops(route); ++i) {
    rtnl_nexthop* hop = rtnl_route_nexthop_n(route, i);
    RouteNexthop nexthop;
    nexthop.ifindex = rtnl_route_nh_get_ifindex(hop);
    nexthop.gateway = FormatIp(rtnl_route_nh_get_gateway(hop));
    if (nexthop.gateway.empty()) nexthop.gateway = FormatIp(rtnl_route_nh_get_via(hop));  // RTA_VIA
    // libnl keeps rtnh_hops; iproute2 (and RouteNexthop) show rtnh_hops + 1.
    nexthop.weight = static_cast<uint8_t>(std::min(255, rtnl_route_nh_get_weight(hop) + 1));
    facts.nexthops.push_back(std::move(nexthop));
  }
  routes->push_back(std::move(facts));
}

void ParseRoute(nl_msg* message, std::vector<RouteFacts>& routes) { nl_msg_parse(message, AddRouteObject, &routes); }

// The BPF program names of every link (bpf_programs.h). A link whose
// programs cannot be read keeps none; one warning per scan names the first
// failure (without CAP_SYS_ADMIN every link fails alike).
void AttachBpfProgramNames(nl_sock* socket, std::vector<LinkFacts>& links, Logger& log) {
  int failures = 0;
  std::string first_error;
  std::set<int> tc_hooked;
  try {
    tc_hooked = LinksWithTcHooks(socket);
  } catch (const std::exception& error) {
    log.Warning("cannot list qdiscs; the ebpf attributes are left out", {{"error", error.what()}});
    return;
  }
  for (auto& link : links) {
    try {
      link.bpf_programs = NamesOf(ListAttachedBpfPrograms(socket, link.ifindex, tc_hooked.contains(link.ifindex)));
    } catch (const std::exception& error) {
      if (failures++ == 0) first_error = link.name + ": " + error.what();
    }
  }
  if (failures > 0) {
    log.Warning("cannot read the BPF programs of some netdevs; their ebpf attributes are left out",
                {{"netdevs", failures}, {"error", first_error}});
  }
}

// Every family's routes in every table; the local table is dropped while
// parsing (RTM_GETROUTE cannot filter by table without strict checking).
std::vector<RouteFacts> DumpRoutes(nl_sock* socket, Logger& log) {
  rtmsg request{};
  request.rtm_family = AF_UNSPEC;
  return Dump(socket, RTM_GETROUTE, request, ParseRoute, log,
              "netlink route dump failed; routes are unknown and default-route uplinks cannot be excluded");
}

// Rules are parsed from their attributes rather than through libnl's
// rtnl_rule, which does not expose every selector (uid range, ports, newer
// kernels' additions) and so could not tell a plain rule from a narrower one.
void ParseRule(nl_msg* message, std::vector<RuleFacts>& rules) {
  nlmsghdr* header = nlmsg_hdr(message);
  if (header->nlmsg_type != RTM_NEWRULE || !nlmsg_valid_hdr(header, sizeof(fib_rule_hdr))) return;
  const auto* rule_header = static_cast<const fib_rule_hdr*>(nlmsg_data(header));
  if (rule_header->family != AF_INET && rule_header->family != AF_INET6) return;  // ipmr, ip6mr
  RuleFacts rule;
  rule.family = rule_header->family;
  rule.table = rule_header->table;
  rule.action = rule_header->action;
  rule.other_selectors = rule_header->tos != 0 || (rule_header->flags & FIB_RULE_INVERT) != 0;
  constexpr uint32_t kUnset = UINT32_MAX;  // suppress_* attributes are sent as -1 when unset
  nlattr* attribute = nullptr;
  int remaining = 0;
  nlmsg_for_each_attr(attribute, header, sizeof(fib_rule_hdr), remaining) {
    int type = nla_type(attribute);
    bool u32 = nla_len(attribute) >= static_cast<int>(sizeof(uint32_t));
    switch (type) {
      case FRA_PRIORITY:
        if (u32) rule.priority = nla_get_u32(attribute);
        break;
      case FRA_TABLE:
        if (u32) rule.table = nla_get_u32(attribute);
        break;
      case FRA_SRC:
        if (rule_header->src_len != 0) {
          rule.source = FormatAddress(rule.family, nla_data(attribute), nla_len(attribute), rule_header->src_len);
        }
        break;
      case FRA_DST:
        if (rule_header->dst_len != 0) {
          rule.destination = FormatAddress(rule.family, nla_data(attribute), nla_len(attribute), rule_header->dst_len);
        }
        break;
      case FRA_SUPPRESS_PREFIXLEN:
      case FRA_SUPPRESS_IFGROUP:
        if (u32 && nla_get_u32(attribute) != kUnset) rule.other_selectors = true;
        break;
      case FRA_FWMARK:
      case FRA_L3MDEV:
        if (nla_len(attribute) > 0 && (type == FRA_L3MDEV ? nla_get_u8(attribute) : nla_get_u32(attribute)) != 0) {
          rule.other_selectors = true;
        }
        break;
      case FRA_IIFNAME:
      case FRA_OIFNAME:
      case FRA_FWMASK:
      case FRA_TUN_ID:
      case FRA_UID_RANGE:
      case FRA_IP_PROTO:
      case FRA_SPORT_RANGE:
      case FRA_DPORT_RANGE:
        rule.other_selectors = true;
        break;
      case FRA_GOTO:
      case FRA_FLOW:
      case FRA_PROTOCOL:
      case FRA_PAD:
        break;
      default:
        // Attributes newer than our headers (dscp, flow label, port masks, ...)
        // are only sent when set: count them as selectors.
        if (type > FRA_MAX) rule.other_selectors = true;
        break;
    }
  }
  rules.push_back(std::move(rule));
}

std::vector<RuleFacts> DumpRules(nl_sock* socket, Logger& log) {
  fib_rule_hdr request{};
  request.family = AF_UNSPEC;
  auto rules = Dump(socket, RTM_GETRULE, request, ParseRule, log, "netlink rule dump failed; policy rules are unknown");
  // The kernel dumps each family in priority order; merge them.
  std::stable_sort(rules.begin(), rules.end(),
                   [](const RuleFacts& a, const RuleFacts& b) { return a.priority < b.priority; });
  return rules;
}

void AddNeighborObject(nl_object* object, void* neighbors_arg) {
  auto* neighbors = static_cast<std::vector<NeighborFacts>*>(neighbors_arg);
  auto* neighbor = reinterpret_cast<rtnl_neigh*>(object);
  int family = rtnl_neigh_get_family(neighbor);
  if (family != AF_INET && family != AF_INET6) return;
  int state = rtnl_neigh_get_state(neighbor);
  if (state < 0 || (state & NUD_PERMANENT) == 0) return;
  NeighborFacts facts;
  facts.ifindex = rtnl_neigh_get_ifindex(neighbor);
  facts.family = family;
  facts.destination = FormatIp(rtnl_neigh_get_dst(neighbor));
  facts.lladdr = FormatMac(rtnl_neigh_get_lladdr(neighbor));
  if (!facts.destination.empty()) neighbors->push_back(std::move(facts));
}

void ParseNeighbor(nl_msg* message, std::vector<NeighborFacts>& neighbors) {
  nl_msg_parse(message, AddNeighborObject, &neighbors);
}

std::vector<NeighborFacts> DumpPermanentNeighbors(nl_sock* socket, Logger& log) {
  ndmsg request{};
  request.ndm_family = AF_UNSPEC;
  return Dump(socket, RTM_GETNEIGH, request, ParseNeighbor, log,
              "netlink neighbour dump failed; permanent neighbours are unknown");
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
  AttachBpfProgramNames(socket.get(), facts.links, log);
  facts.routes = DumpRoutes(socket.get(), log);
  facts.rules = DumpRules(socket.get(), log);
  facts.neighbors = DumpPermanentNeighbors(socket.get(), log);
  return facts;
}

std::vector<LinkFacts> ReadLinks(nl_sock* socket, Logger& log) {
  auto links = DumpLinks(socket, log);
  std::sort(links.begin(), links.end(), [](const LinkFacts& a, const LinkFacts& b) { return a.ifindex < b.ifindex; });
  return links;
}

NetlinkFacts ReadLinksAndRoutes(nl_sock* socket, Logger& log) {
  NetlinkFacts facts;
  facts.links = ReadLinks(socket, log);
  facts.routes = DumpRoutes(socket, log);
  return facts;
}

std::set<std::string> ExcludedUplinkInterfaces(const NetlinkFacts& facts) {
  // Main-table unicast default routes that leave through an interface.
  auto is_uplink_route = [](const RouteFacts& route) {
    return route.table == RT_TABLE_MAIN && route.type == RTN_UNICAST && route.IsDefault() &&
           std::any_of(route.nexthops.begin(), route.nexthops.end(),
                       [](const RouteNexthop& hop) { return hop.ifindex > 0; });
  };
  std::map<int, uint32_t> lowest_metric_by_family;
  for (const auto& route : facts.routes) {
    if (!is_uplink_route(route)) continue;
    auto [it, inserted] = lowest_metric_by_family.emplace(route.family, route.metric);
    if (!inserted) it->second = std::min(it->second, route.metric);
  }
  // Every next hop of every route at the lowest metric: metric ties and
  // multipath routes both spread the node's traffic over several uplinks.
  std::set<int> excluded_indexes;
  for (const auto& route : facts.routes) {
    if (!is_uplink_route(route) || route.metric != lowest_metric_by_family[route.family]) continue;
    for (const auto& hop : route.nexthops) {
      if (hop.ifindex > 0) excluded_indexes.insert(hop.ifindex);
    }
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

static bool IsGlobalUnicastV4(const unsigned char* b) {
  if (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0) return false;    // unspecified
  if (b[0] == 127) return false;                                         // loopback
  if (b[0] == 169 && b[1] == 254) return false;                          // link-local
  if (b[0] >= 224 && b[0] <= 239) return false;                          // multicast
  if (b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255) return false;  // broadcast
  return true;
}

static bool IsGlobalUnicastV6(const unsigned char* b) {
  static const unsigned char kZero[16] = {};
  if (std::memcmp(b, kZero, 16) == 0) return false;                      // unspecified
  if (std::memcmp(b, kZero, 15) == 0 && b[15] == 1) return false;        // loopback
  if (b[0] == 0xff) return false;                                        // multicast
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return false;               // link-local
  return true;
}

bool IsGlobalUnicast(int family, const unsigned char* bytes) {
  return family == AF_INET ? IsGlobalUnicastV4(bytes) : family == AF_INET6 && IsGlobalUnicastV6(bytes);
}

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

std::vector<std::string> GlobalUnicastAddresses(const std::vector<std::string>& addresses, int family) {
  std::vector<std::string> kept;
  for (const auto& cidr : addresses) {
    auto slash = cidr.find('/');
    std::string ip = cidr.substr(0, slash);
    if (slash == std::string::npos || !ParseDecimal(std::string_view(cidr).substr(slash + 1))) continue;
    unsigned char bytes[16];
    if (inet_pton(family, ip.c_str(), bytes) != 1) continue;
    if (IsGlobalUnicast(family, bytes)) kept.push_back(cidr);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace dranet::inventory
