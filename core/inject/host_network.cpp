#include "inject/host_network.h"

#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>
#include <tuple>

#include <linux/fib_rules.h>

#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

bool IsIpv6LinkLocal(const std::string& cidr) {
  unsigned char bytes[16];
  const std::string ip = cidr.substr(0, cidr.find('/'));
  return inet_pton(AF_INET6, ip.c_str(), bytes) == 1 && bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80;
}

// Plans say 0 for main, as claim configs do.
int32_t PlanTable(uint32_t table) { return table == RT_TABLE_MAIN ? 0 : static_cast<int32_t>(table); }

uint32_t KernelTable(int32_t table) { return table == 0 ? RT_TABLE_MAIN : static_cast<uint32_t>(table); }

bool SpecialTable(uint32_t table) {
  return table == RT_TABLE_UNSPEC || table == RT_TABLE_MAIN || table == RT_TABLE_LOCAL ||
         table == RT_TABLE_DEFAULT;
}

}  // namespace

bool IsCarriedRoute(const inventory::RouteFacts& route) {
  if (route.table == RT_TABLE_LOCAL || route.type != RTN_UNICAST) return false;
  if (route.destination.empty()) return false;
  return !(route.family == AF_INET6 && (IsIpv6LinkLocal(route.destination) || route.protocol == RTPROT_KERNEL));
}

bool IsMainTableDefault(const Route& route) {
  return KernelTable(route.table) == RT_TABLE_MAIN && (route.destination == "0.0.0.0/0" || route.destination == "::/0");
}

NetdevHostState HarvestNetdevHostState(const inventory::NetlinkFacts& facts, const std::string& if_name) {
  auto link = std::find_if(facts.links.begin(), facts.links.end(),
                           [&](const inventory::LinkFacts& l) { return l.name == if_name; });
  if (link == facts.links.end()) throw InjectError("netdev " + if_name + " not found");
  NetdevHostState state;
  state.if_name = link->name;
  state.mac = link->mac;
  state.permanent_mac = link->permanent_mac;
  state.mtu = link->mtu;
  state.addresses = link->addresses;
  state.up = (link->flags & IFF_UP) != 0;

  std::set<uint32_t> tables;
  for (const auto& route : facts.routes) {
    if (!IsCarriedRoute(route)) continue;
    for (const auto& hop : route.nexthops) {
      if (hop.ifindex != link->ifindex) continue;
      state.routes.push_back({route.destination, hop.gateway, route.source, PlanTable(route.table), route.metric,
                              route.scope, route.protocol});
      tables.insert(route.table);
      break;
    }
  }
  for (const auto& rule : facts.rules) {
    if (rule.other_selectors || rule.action != FR_ACT_TO_TBL) continue;
    if (SpecialTable(rule.table) || !tables.count(rule.table)) continue;
    state.rules.push_back({rule.priority, rule.source, rule.destination, PlanTable(rule.table), rule.family});
  }
  for (const auto& neighbor : facts.neighbors) {
    if (neighbor.ifindex != link->ifindex || neighbor.lladdr.empty()) continue;
    state.neighbors.push_back({neighbor.destination, neighbor.lladdr});
  }
  return state;
}

std::vector<Route> MergeRoutes(std::vector<Route> base, const std::vector<Route>& overrides) {
  for (const auto& route : overrides) {
    auto same = std::find_if(base.begin(), base.end(), [&](const Route& r) {
      return r.destination == route.destination && KernelTable(r.table) == KernelTable(route.table);
    });
    if (same != base.end()) *same = route;
    else base.push_back(route);
  }
  return base;
}

std::vector<Rule> MergeRules(std::vector<Rule> base, const std::vector<Rule>& overrides) {
  auto key = [](const Rule& r) { return std::tie(r.priority, r.source, r.destination, r.table); };
  for (const auto& rule : overrides) {
    auto same = std::find_if(base.begin(), base.end(), [&](const Rule& r) { return key(r) == key(rule); });
    if (same != base.end()) *same = rule;
    else base.push_back(rule);
  }
  return base;
}

std::vector<Neighbor> MergeNeighbors(std::vector<Neighbor> base, const std::vector<Neighbor>& overrides) {
  for (const auto& neighbor : overrides) {
    auto same = std::find_if(base.begin(), base.end(),
                             [&](const Neighbor& n) { return n.destination == neighbor.destination; });
    if (same != base.end()) *same = neighbor;
    else base.push_back(neighbor);
  }
  return base;
}

}  // namespace dranet::inject
