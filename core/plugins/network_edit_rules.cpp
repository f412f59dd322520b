#include "plugins/network_edit_rules.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>

namespace dranet::plugins {
namespace {

constexpr uint32_t kLocalTable = 255;        // RT_TABLE_LOCAL
constexpr uint32_t kScopeLink = DRANET_ROUTE_SCOPE_LINK;
constexpr std::size_t kMaxAddressText = 64;  // INET6_ADDRSTRLEN + "/128", with room to spare

// A bounded copy of a plugin string; nullopt when it runs past `max` bytes
// (never reads further than that). NULL is "".
std::optional<std::string> Bounded(const char* s, std::size_t max = kMaxAddressText) {
  if (s == nullptr) return std::string();
  std::size_t n = strnlen(s, max + 1);
  if (n > max) return std::nullopt;
  return std::string(s, n);
}

struct Parsed {
  int family = 0;  // AF_INET / AF_INET6; 0 when malformed
  unsigned char bytes[16] = {};
  int prefix = -1;  // -1: a plain address
};

Parsed ParseAddress(const std::string& text) {
  Parsed p;
  if (inet_pton(AF_INET, text.c_str(), p.bytes) == 1) p.family = AF_INET;
  else if (inet_pton(AF_INET6, text.c_str(), p.bytes) == 1) p.family = AF_INET6;
  return p;
}

// "address/prefix" with the host bits clear; sets `why` otherwise.
Parsed ParseCidr(const std::string& text, const char* what, std::string& why) {
  auto slash = text.find('/');
  std::string digits = slash == std::string::npos ? "" : text.substr(slash + 1);
  if (slash == std::string::npos || digits.empty() || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    why = std::string(what) + " \"" + text + "\" is not a CIDR (address/prefix)";
    return {};
  }
  Parsed p = ParseAddress(text.substr(0, slash));
  if (p.family == 0) {
    why = std::string(what) + " \"" + text + "\" is not a CIDR: bad address";
    return {};
  }
  int bits = std::stoi(digits);
  int max = p.family == AF_INET ? 32 : 128;
  if (bits > max) {
    why = std::string(what) + " \"" + text + "\": prefix longer than " + std::to_string(max);
    return {};
  }
  for (int i = bits; i < max; ++i)
    if (p.bytes[i / 8] & (0x80 >> (i % 8))) {
      why = std::string(what) + " \"" + text + "\": host bits set (the network is /" + digits + ")";
      return {};
    }
  p.prefix = bits;
  return p;
}

const char* FamilyName(int family) { return family == AF_INET ? "IPv4" : "IPv6"; }

// The request device named `name`, or nullptr with `why` set.
const dranet_device_t* RequestNetdev(const std::string& name, const std::vector<dranet_device_t>& request,
                                     std::string& why) {
  for (const auto& d : request) {
    if (d.name == nullptr || name != d.name) continue;
    if (d.if_name == nullptr || d.if_name[0] == '\0') {
      why = "device \"" + name + "\" has no netdev";
      return nullptr;
    }
    return &d;
  }
  why = "device \"" + name + "\" is not a device of this request";
  return nullptr;
}

}  // namespace

std::optional<InjectionEdits::Route> AcceptRoute(const char* device_name, const dranet_route_t* route,
                                                 const std::vector<dranet_device_t>& request,
                                                 const std::string& plugin_name, std::string& why) {
  auto device = Bounded(device_name, 253);
  if (route == nullptr || route->struct_size < offsetof(dranet_route_t, source) + sizeof(route->source)) {
    why = "route: struct missing or smaller than dranet_route_t of ABI 1.1";
    return std::nullopt;
  }
  auto destination = Bounded(route->destination), gateway = Bounded(route->gateway),
       source = Bounded(route->source);
  std::string label = "route " + (destination ? "\"" + *destination + "\"" : std::string("<overlong>")) +
                      " on device \"" + (device ? *device : std::string("<overlong>")) + "\": ";
  auto fail = [&](const std::string& problem) {
    why = label + problem;
    return std::nullopt;
  };
  if (!device || device->empty()) return fail("no device name");
  if (!destination || !gateway || !source) return fail("an address is longer than " + std::to_string(kMaxAddressText) + " bytes");
  std::string problem;
  if (RequestNetdev(*device, request, problem) == nullptr) return fail(problem);
  if (destination->empty()) return fail("no destination (use 0.0.0.0/0 or ::/0 for a default route)");
  Parsed dst = ParseCidr(*destination, "destination", problem);
  if (dst.family == 0) return fail(problem);
  if (route->scope != DRANET_ROUTE_SCOPE_UNIVERSE && route->scope != kScopeLink)
    return fail("scope " + std::to_string(route->scope) + " is neither 0 (universe) nor 253 (link)");
  if (route->table == kLocalTable) return fail("table 255 (local) belongs to the kernel");
  if (gateway->empty() && route->scope != kScopeLink) return fail("no gateway: an on-link route needs scope 253 (link)");
  if (!gateway->empty() && route->scope == kScopeLink) return fail("a link-scope route has no gateway");
  if (!gateway->empty()) {
    Parsed gw = ParseAddress(*gateway);
    if (gw.family == 0) return fail("gateway \"" + *gateway + "\" is not an IP address");
    if (gw.family != dst.family)
      return fail(std::string("gateway \"") + *gateway + "\" is " + FamilyName(gw.family) + " but the destination is " +
                  FamilyName(dst.family));
  }
  if (!source->empty()) {
    Parsed src = ParseAddress(*source);
    if (src.family == 0) return fail("source \"" + *source + "\" is not an IP address");
    if (src.family != dst.family)
      return fail(std::string("source \"") + *source + "\" is " + FamilyName(src.family) + " but the destination is " +
                  FamilyName(dst.family));
  }
  InjectionEdits::Route out;
  out.device = *device;
  out.destination = *destination;
  out.gateway = *gateway;
  out.source = *source;
  out.table = route->table;
  out.metric = route->metric;
  out.scope = static_cast<uint8_t>(route->scope);
  out.plugin = plugin_name;
  return out;
}

std::optional<InjectionEdits::Rule> AcceptRule(const char* device_name, const dranet_rule_t* rule,
                                               const std::vector<dranet_device_t>& request,
                                               const std::string& plugin_name, std::string& why) {
  auto device = Bounded(device_name, 253);
  if (rule == nullptr || rule->struct_size < offsetof(dranet_rule_t, destination) + sizeof(rule->destination)) {
    why = "rule: struct missing or smaller than dranet_rule_t of ABI 1.1";
    return std::nullopt;
  }
  auto source = Bounded(rule->source), destination = Bounded(rule->destination);
  std::string label = "rule " + (source && !source->empty() ? "from \"" + *source + "\" " : std::string()) +
                      "lookup " + std::to_string(rule->table) + " on device \"" +
                      (device ? *device : std::string("<overlong>")) + "\": ";
  auto fail = [&](const std::string& problem) {
    why = label + problem;
    return std::nullopt;
  };
  if (!device || device->empty()) return fail("no device name");
  if (!source || !destination) return fail("an address is longer than " + std::to_string(kMaxAddressText) + " bytes");
  std::string problem;
  if (RequestNetdev(*device, request, problem) == nullptr) return fail(problem);
  if (rule->reserved != 0) return fail("reserved is " + std::to_string(rule->reserved) + ", must be 0");
  if (rule->table == 0) return fail("no table to look up");
  if (rule->table == kLocalTable) return fail("table 255 (local) belongs to the kernel");
  int family = 0;
  if (!source->empty()) {
    Parsed src = ParseCidr(*source, "source", problem);
    if (src.family == 0) return fail(problem);
    family = src.family;
  }
  if (!destination->empty()) {
    Parsed dst = ParseCidr(*destination, "destination", problem);
    if (dst.family == 0) return fail(problem);
    if (family != 0 && dst.family != family)
      return fail(std::string("destination \"") + *destination + "\" is " + FamilyName(dst.family) +
                  " but the source is " + FamilyName(family));
  }
  InjectionEdits::Rule out;
  out.device = *device;
  out.priority = rule->priority;
  out.source = *source;
  out.destination = *destination;
  out.table = rule->table;
  out.plugin = plugin_name;
  return out;
}

}  // namespace dranet::plugins
