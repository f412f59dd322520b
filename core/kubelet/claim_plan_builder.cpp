#include "kubelet/claim_plan_builder.h"

#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "inject/ethtool_feature_names.h"
#include "inject/host_network.h"
#include "inject/link_settings.h"
#include "inventory/inventory.h"
#include "inventory/netlink_facts.h"
#include "kube/resource_slice.h"
#include "kubelet/network_config.h"

namespace dranet::kubelet {
namespace {

std::string ClaimName(const kube::ResourceClaim& claim) {
  return "claim " + claim.namespace_name + "/" + claim.name;
}

bool ConfigAppliesTo(const kube::OpaqueDeviceConfig& config, const std::string& request) {
  if (config.requests.empty()) return true;
  const std::string parent = TopLevelRequest(request);
  return std::any_of(config.requests.begin(), config.requests.end(),
                     [&](const std::string& r) { return r == request || r == parent; });
}

// The merged NetworkConfig for one result: FromClass entries first (unless
// `with_class` is false), then FromClaim, so that what the claim says wins
// over its class.
std::optional<MergedNetworkConfig> ConfigFor(const kube::ResourceClaim& claim,
                                       const kube::DeviceAllocationResult& result,
                                       const std::string& driver, bool with_class = true) {
  std::vector<std::string> objects, labels;
  for (const char* source : {"FromClass", "FromClaim"}) {
    if (!with_class && std::string_view(source) == "FromClass") continue;
    for (std::size_t i = 0; i < claim.configs.size(); ++i) {
      const auto& config = claim.configs[i];
      const bool from_class = config.source == "FromClass";
      if (from_class != (std::string_view(source) == "FromClass")) continue;
      if (config.driver != driver || !ConfigAppliesTo(config, result.request)) continue;
      objects.push_back(config.parameters_json.empty() ? "{}" : config.parameters_json);
      labels.push_back("status.allocation.devices.config[" + std::to_string(i) + "] (" +
                       (config.source.empty() ? std::string("unknown source") : config.source) + ")");
    }
  }
  if (objects.empty()) return std::nullopt;
  try {
    return MergeNetworkConfigsWithJson(objects, labels);
  } catch (const ConfigError& e) {
    throw PrepareError(ClaimName(claim) + ": invalid " + driver + " config for request \"" +
                       result.request + "\": " + e.what());
  }
}

void AddDeviceNode(std::vector<inject::DeviceNode>& nodes, inject::DeviceNode node,
                   const std::string& claim_name) {
  for (const auto& existing : nodes) {
    if (existing.container_path != node.container_path) continue;
    if (existing.major != node.major || existing.minor != node.minor)
      throw PrepareError(claim_name + ": device node " + node.container_path + " asked for as " +
                         std::to_string(existing.major) + ":" + std::to_string(existing.minor) +
                         " and as " + std::to_string(node.major) + ":" + std::to_string(node.minor));
    return;
  }
  nodes.push_back(std::move(node));
}

// The char devices a pod gets for `device`'s RDMA device (none without one).
void AddRdmaCharDevices(inject::ClaimPlan& plan, const inventory::Device& device, const PlanBuilderOptions& options,
                        const std::string& who) {
  if (device.rdma_device.empty()) return;
  for (const auto& dev : device.char_devices) {
    if (!inventory::PodReceives(dev)) continue;
    AddDeviceNode(plan.device_nodes,
                  {"/dev/" + dev.path, (options.dev_root / dev.path).string(), dev.major, dev.minor, "rw"}, who);
  }
}

std::string HostPathFor(const std::filesystem::path& dev_root, const std::string& container_path) {
  std::string relative = container_path;
  if (relative.rfind("/dev/", 0) == 0) relative = relative.substr(5);
  return (dev_root / relative).string();
}

// A claim MTU the netdev's driver would refuse at pod start is refused now,
// when kubelet can still report it on the claim.
void CheckMtuInDriverRange(uint32_t mtu, const inventory::NetlinkFacts& facts, const std::string& if_name,
                           const std::string& where) {
  for (const auto& link : facts.links) {
    if (link.name != if_name) continue;
    if ((link.min_mtu > 0 && mtu < link.min_mtu) || (link.max_mtu > 0 && mtu > link.max_mtu))
      throw PrepareError(where + ": config sets mtu " + std::to_string(mtu) + " but netdev " + if_name +
                         " accepts " + std::to_string(link.min_mtu) + " to " + std::to_string(link.max_mtu));
    return;
  }
}

std::string Join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

const inventory::LinkFacts* LinkNamed(const inventory::NetlinkFacts& facts, const std::string& name) {
  for (const auto& link : facts.links)
    if (link.name == name) return &link;
  return nullptr;
}

// "00-11-22-AA-bb-cc" -> "00:11:22:aa:bb:cc", as the kernel reports MACs.
std::string CanonicalMac(std::string mac) {
  for (char& c : mac) c = c == '-' ? ':' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return mac;
}

// An SR-IOV VF cannot take an MTU above its PF's (as DRANET's ValidateVFMTU).
void CheckVfMtu(uint32_t mtu, const inventory::Device& device, const std::vector<inventory::Device>& inventory,
                const inventory::NetlinkFacts& facts, const std::string& where) {
  if (device.physical_function.empty()) return;
  for (const auto& pf : inventory) {
    if (pf.pci_address != device.physical_function || pf.if_name.empty()) continue;
    const auto* link = LinkNamed(facts, pf.if_name);
    if (link != nullptr && link->mtu > 0 && mtu > link->mtu)
      throw PrepareError(where + ": config sets mtu " + std::to_string(mtu) + " but netdev " + device.if_name +
                         " is an SR-IOV VF of " + pf.if_name + ", whose MTU is " + std::to_string(link->mtu) +
                         "; a VF cannot exceed its PF");
    return;
  }
}

// The ethtool part of a config, resolved against the netdev as the host has
// it now: kernel names for the pod, the host's values for teardown.
void ResolveEthtool(const EthtoolConfig& config, const HostAccess& host, const std::string& if_name,
                    inject::NetdevPlan& netdev, const std::string& where) {
  if (config.features.empty() && config.private_flags.empty()) return;
  if (!host.read_ethtool)
    throw PrepareError(where + ": config sets ethtool settings but this node cannot read them (no ethtool access)");
  EthtoolState state;
  try {
    state = host.read_ethtool(if_name);
    if (!config.features.empty()) {
      const auto& f = state.features;
      netdev.settings.ethtool_features = inject::ResolveFeatureNames(
          inject::WithoutFixedAtTheirValue(config.features, f.known, f.changeable, f.active), f.changeable, if_name);
      for (const auto& [name, on] : netdev.settings.ethtool_features)
        netdev.host_state.settings.ethtool_features[name] = state.features.wanted.count(name) > 0;
    }
    if (!config.private_flags.empty()) {
      inject::CheckPrivateFlagNames(config.private_flags, state.private_flags, if_name);
      netdev.settings.ethtool_private_flags = config.private_flags;
      for (const auto& [name, on] : config.private_flags)
        netdev.host_state.settings.ethtool_private_flags[name] = state.private_flags.at(name);
    }
  } catch (const std::exception& e) {
    throw PrepareError(where + ": ethtool: " + e.what());
  }
}

// Everything of `config` that concerns the netdev itself, checked against
// the live node and recorded in `netdev` with the host's values.
void ApplyNetdevConfig(const NetworkConfig& config, const inventory::Device& device,
                       const std::vector<inventory::Device>& inventory, const inventory::NetlinkFacts& facts,
                       const HostAccess& host, inject::NetdevPlan& netdev, const std::string& where) {
  const auto& i = config.interface;
  const inventory::LinkFacts* link = LinkNamed(facts, device.if_name);
  auto& pod = netdev.settings;
  auto& was = netdev.host_state.settings;
  if (i.mtu) {
    netdev.mtu = static_cast<uint32_t>(*i.mtu);
    CheckMtuInDriverRange(*netdev.mtu, facts, device.if_name, where);
    CheckVfMtu(*netdev.mtu, device, inventory, facts, where);
  }
  if (i.hardware_addr) {
    pod.mac = CanonicalMac(*i.hardware_addr);
    if (link != nullptr && !link->mac.empty() && pod.mac.size() != link->mac.size())
      throw PrepareError(where + ": config sets hardwareAddr " + *i.hardware_addr + " but netdev " + device.if_name +
                         " has " + std::to_string((link->mac.size() + 1) / 3) + "-byte addresses");
    // Another netdev's address would make the two indistinguishable on the
    // link, and at teardown the claim's MAC must never stand for a host link.
    for (const auto& other : facts.links) {
      if (other.name == device.if_name || (other.mac != pod.mac && other.permanent_mac != pod.mac)) continue;
      throw PrepareError(where + ": config sets hardwareAddr " + *i.hardware_addr + ", which node netdev " +
                         other.name + " already has; choose an address no interface of the node uses");
    }
    was.mac = netdev.host_state.mac;
  }
  // The kernel takes GSO sizes up to the device's tso_max_size and GRO sizes
  // up to its GRO_MAX_SIZE ("too big gso_max_size"); both are known where
  // the kernel reports tso_max_size (5.19+). Above them the pod would fail.
  const uint32_t tso_max_size = link != nullptr ? link->tso_max_size : 0;
  std::vector<std::string> too_big;
  auto size = [&](const std::optional<int32_t>& wanted, std::optional<uint32_t>& into, std::optional<uint32_t>& host_value,
                  uint32_t now, const char* field, bool gso) {
    if (!wanted) return;
    if (link != nullptr && now == 0)
      throw PrepareError(where + ": config sets interface." + field + " but the kernel does not report it for " +
                         device.if_name + " (too old for it)");
    into = static_cast<uint32_t>(*wanted);
    if (now != 0) host_value = now;
    if (tso_max_size == 0) return;
    const uint32_t limit = gso ? tso_max_size : inventory::kKernelGroMaxSize;
    if (*into > limit)
      too_big.push_back("config sets interface." + std::string(field) + " " + std::to_string(*into) + " but " +
                        (gso ? "netdev " + device.if_name + " takes at most " + std::to_string(limit) +
                                   " (its tso_max_size)"
                             : "the kernel takes at most " + std::to_string(limit) + " for netdev " + device.if_name +
                                   " (GRO_MAX_SIZE)"));
  };
  size(i.gso_max_size, pod.gso_max_size, was.gso_max_size, link ? link->gso_max_size : 0, "gsoMaxSize", true);
  size(i.gro_max_size, pod.gro_max_size, was.gro_max_size, link ? link->gro_max_size : 0, "groMaxSize", false);
  size(i.gso_ipv4_max_size, pod.gso_ipv4_max_size, was.gso_ipv4_max_size, link ? link->gso_ipv4_max_size : 0,
       "gsoIPv4MaxSize", true);
  size(i.gro_ipv4_max_size, pod.gro_ipv4_max_size, was.gro_ipv4_max_size, link ? link->gro_ipv4_max_size : 0,
       "groIPv4MaxSize", false);
  if (!too_big.empty()) {
    std::string all;
    for (const auto& problem : too_big) all += (all.empty() ? "" : "; ") + problem;
    throw PrepareError(where + ": " + all);
  }
  pod.arp_ignore = i.arp_ignore;
  pod.arp_announce = i.arp_announce;
  pod.forwarding = i.forwarding;
  if (config.ethtool) ResolveEthtool(*config.ethtool, host, device.if_name, netdev, where);
  netdev.disable_ebpf_programs = i.disable_ebpf_programs.value_or(false);
  if (i.vrf) {
    const std::string why = host.vrf_unsupported ? host.vrf_unsupported() : "no VRF check on this node";
    if (!why.empty())
      throw PrepareError(where + ": config sets interface.vrf \"" + i.vrf->name +
                         "\" but this node cannot create VRF devices: " + why);
    netdev.vrf_name = i.vrf->name;
    netdev.vrf_table = i.vrf->table ? static_cast<uint32_t>(*i.vrf->table) : inject::DefaultVrfTable(i.vrf->name);
  }
}

// The kernel resets a netdev's ARP and forwarding sysctls to the
// namespace's defaults whenever it changes namespace, so a host value that
// differs from the default is recorded here and written back after teardown.
void RecordHostSysctls(const HostAccess& host, const std::string& if_name, inject::LinkSettings& was) {
  if (!host.read_ipv4_conf) return;
  auto differs = [&](const char* key) -> std::optional<int32_t> {
    const auto value = host.read_ipv4_conf(if_name, key);
    if (value && value != host.read_ipv4_conf("default", key)) return value;
    return std::nullopt;
  };
  was.arp_ignore = differs("arp_ignore");
  was.arp_announce = differs("arp_announce");
  if (const auto forwarding = differs("forwarding")) was.forwarding = *forwarding != 0;
}

// A DHCP lease for the netdev (interface.dhcp), recorded for release. A
// child asks on its parent with a client identifier of its own
// (`client_id`): an IPVLAN child has the parent's MAC, which the netdev's
// own lease (the host's) is keyed by.
void LeaseAddress(const HostAccess& host, inject::NetdevPlan& netdev, std::vector<inject::Route>& own_routes,
                  const std::string& where, const std::string& client_id, std::stop_token stop) {
  if (!host.request_dhcp) throw PrepareError(where + ": config sets interface.dhcp but this node has no DHCP client");
  inject::DhcpLease lease;
  try {
    lease = host.request_dhcp(netdev.host_if_name, stop, client_id);
  } catch (const std::exception& e) {
    throw PrepareError(where + ": DHCP: " + e.what());
  }
  netdev.dhcp_lease =
      inject::DhcpLeaseRecord{lease.address, lease.server_id, lease.server_mac, lease.client_mac, lease.client_id};
  netdev.addresses = {lease.address};
  for (auto route : lease.routes) {
    if (route.gateway.empty()) route.scope = 253;  // on-link
    own_routes.push_back(std::move(route));
  }
}

// The host's routes for the pod: no main-table default route (it would
// compete with the pod's own; inject::IsMainTableDefault), and a preferred
// source the pod will not have (the claim replaced the host's addresses) is
// dropped, as the kernel would refuse the route.
std::vector<inject::Route> HostRoutesForPod(std::vector<inject::Route> routes,
                                            const std::vector<std::string>& pod_addresses) {
  std::erase_if(routes, [](const inject::Route& route) { return inject::IsMainTableDefault(route); });
  for (auto& route : routes) {
    if (route.source.empty()) continue;
    const bool owned = std::any_of(pod_addresses.begin(), pod_addresses.end(), [&](const std::string& cidr) {
      return cidr.substr(0, cidr.find('/')) == route.source;
    });
    if (!owned) route.source.clear();
  }
  return routes;
}

// An IP address or prefix as bytes: spellings compared by value
// ("2001:DB8::1" is "2001:db8::1"), prefixes tested for what they hold.
struct IpPrefix {
  int family = 0;
  unsigned char bytes[16] = {};
  int bits = 0;  // the whole address when no "/len" is given
};

std::optional<IpPrefix> ParseIpPrefix(const std::string& text) {
  IpPrefix p;
  const auto slash = text.find('/');
  const std::string ip = text.substr(0, slash);
  if (inet_pton(AF_INET, ip.c_str(), p.bytes) == 1) {
    p.family = AF_INET;
    p.bits = 32;
  } else if (inet_pton(AF_INET6, ip.c_str(), p.bytes) == 1) {
    p.family = AF_INET6;
    p.bits = 128;
  } else {
    return std::nullopt;
  }
  if (slash == std::string::npos) return p;
  const std::string length = text.substr(slash + 1);
  if (length.empty() || length.size() > 3 ||
      !std::all_of(length.begin(), length.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  const int bits = std::stoi(length);
  if (bits > p.bits) return std::nullopt;
  p.bits = bits;
  return p;
}

bool SameAddress(const IpPrefix& a, const IpPrefix& b) {
  return a.family == b.family && std::memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0;
}

bool PrefixHolds(const IpPrefix& prefix, const IpPrefix& address) {
  if (prefix.family != address.family) return false;
  const int whole = prefix.bits / 8, rest = prefix.bits % 8;
  if (std::memcmp(prefix.bytes, address.bytes, static_cast<std::size_t>(whole)) != 0) return false;
  const auto mask = static_cast<unsigned char>(0xff00 >> rest);
  return rest == 0 || (prefix.bytes[whole] & mask) == (address.bytes[whole] & mask);
}

// Plans say 0 for main; the kernel's table ids are unsigned (up to 4294967295).
uint32_t KernelTable(int32_t table) { return table == 0 ? RT_TABLE_MAIN : static_cast<uint32_t>(table); }

std::string RouteLabel(const inject::Route& route) {
  std::string label = "route " + route.destination;
  if (!route.gateway.empty()) label += " via " + route.gateway;
  if (!route.source.empty()) label += " src " + route.source;
  if (KernelTable(route.table) != RT_TABLE_MAIN) label += " table " + std::to_string(KernelTable(route.table));
  return label;
}

// What of `netdev`'s final routes the pod hook could not add, one sentence
// per route. The kernel refuses a gateway that neither a prefix of the
// pod's addresses on the netdev nor an on-link route (no gateway, or scope
// link) of the netdev reaches, looking in the route's own table and then in
// main (fib_check_nh_v4_gw, ip6_route_check_nh: ENETUNREACH, "Nexthop has
// invalid gateway"); an IPv6 link-local gateway needs only the link. A
// preferred source must be one of the pod's addresses on the netdev (the
// kernel takes any address of the namespace, but the pod's others are not
// known at prepare). The host's routes never fail the source rule:
// HostRoutesForPod dropped their sources the pod does not have, so
// those named here came from a cloud plugin or the claim.
std::vector<std::string> RouteProblems(const inject::NetdevPlan& netdev) {
  std::vector<IpPrefix> addresses;
  for (const auto& cidr : netdev.addresses)
    if (const auto address = ParseIpPrefix(cidr)) addresses.push_back(*address);
  const std::string addresses_text = netdev.addresses.empty() ? "none" : Join(netdev.addresses);
  std::vector<std::string> problems;
  for (const auto& route : netdev.routes) {
    if (!route.source.empty()) {
      const auto source = ParseIpPrefix(route.source);
      if (!source || std::none_of(addresses.begin(), addresses.end(),
                                  [&](const IpPrefix& address) { return SameAddress(address, *source); }))
        problems.push_back(RouteLabel(route) + ": the source " + route.source +
                           " is not one of the pod's addresses on " + netdev.pod_if_name + " (" + addresses_text +
                           "); use one of them or leave source out");
    }
    if (route.gateway.empty()) continue;
    const auto gateway = ParseIpPrefix(route.gateway);
    if (!gateway || gateway->bits != (gateway->family == AF_INET ? 32 : 128)) continue;  // validated where it came from
    if (gateway->family == AF_INET6 && gateway->bytes[0] == 0xfe && (gateway->bytes[1] & 0xc0) == 0x80) continue;
    const bool by_address = std::any_of(addresses.begin(), addresses.end(),
                                        [&](const IpPrefix& address) { return PrefixHolds(address, *gateway); });
    const bool by_route = std::any_of(netdev.routes.begin(), netdev.routes.end(), [&](const inject::Route& other) {
      if (&other == &route || !(other.gateway.empty() || other.scope >= RT_SCOPE_LINK)) return false;
      const uint32_t table = KernelTable(other.table);
      if (table != KernelTable(route.table) && table != RT_TABLE_MAIN) return false;
      const auto destination = ParseIpPrefix(other.destination);
      return destination && PrefixHolds(*destination, *gateway);
    });
    if (!by_address && !by_route)
      problems.push_back(RouteLabel(route) + ": the gateway is not reachable from the pod's addresses (" +
                         addresses_text + ") or on-link routes of " + netdev.pod_if_name +
                         "; give the pod an address in the gateway's subnet, or a route to the gateway with scope "
                         "253 (link)");
  }
  return problems;
}

// The identifiers a profile provider matches a device by.
ProfileDevice ProfileDeviceOf(const inventory::Device& device) {
  ProfileDevice id{device.name, "", device.pci_address, &device};
  auto mac = device.attributes.find(std::string(inventory::attr::kMac));
  if (mac != device.attributes.end())
    if (const auto* text = std::get_if<std::string>(&mac->second)) id.mac_address = *text;
  return id;
}

// Resolves config.profile with the profile provider; the answer is merged on
// top of the config (it wins).
MergedNetworkConfig ResolveProfile(MergedNetworkConfig merged, const inventory::Device& device,
                                   const kube::ResourceClaim& claim, const HostAccess& host,
                                   inject::ClaimPlan& plan, const std::string& where, std::stop_token stop) {
  const std::string& profile = merged.config.profile;
  if (!host.profiles)
    throw PrepareError(where + ": config sets profile \"" + profile +
                       "\" but no profile provider is configured on this node (--profile-provider)");
  const ProfileDevice id = ProfileDeviceOf(device);
  std::string answer;
  try {
    answer = host.profiles->GetProfileConfig(id, claim.uid, merged.json, stop);
  } catch (const std::exception& e) {
    throw PrepareError(where + ": profile \"" + profile + "\": " + e.what());
  }
  plan.profiles.push_back({device.name, profile, merged.json, id.mac_address, id.pci_address});
  try {
    return MergeNetworkConfigsWithJson({merged.json, answer},
                                       {"the claim's config", "profile \"" + profile + "\" from " +
                                                                  host.profiles->Describe()});
  } catch (const ConfigError& e) {
    throw PrepareError(where + ": " + e.what());
  }
}

// Whether the pod gets the netdev itself or a child of it (interface.type;
// a share always gets a child, IPVLAN L2 unless the config says otherwise),
// and what a child cannot take.
void ChooseChild(const NetworkConfig* config, const std::string& share_id, inject::NetdevPlan& netdev,
                 const std::string& where) {
  const std::string type = config && config->interface.type ? *config->interface.type : "";
  if (!share_id.empty() && type == "passthrough")
    throw PrepareError(where + " (share " + share_id + "): interface.type \"passthrough\" moves the netdev into the "
                       "pod, and a share leaves it on the host for the other shares; use \"ipvlan\" (the default for "
                       "a share) or \"macvlan\"");
  if (type == "passthrough" || (type.empty() && share_id.empty())) return;
  netdev.child_type = type.empty() ? "ipvlan" : type;
  if (netdev.child_type == "ipvlan")
    netdev.child_mode = config && config->interface.ipvlan_mode ? *config->interface.ipvlan_mode : "l2";
  else
    netdev.child_mode = config && config->interface.macvlan_mode ? *config->interface.macvlan_mode : "bridge";
  if (!config) return;
  const auto problems = ProblemsForChild(*config, netdev.child_type);
  if (!problems.empty())
    throw PrepareError(where + (share_id.empty() ? "" : " (share " + share_id + ")") + ": " + Join(problems, "; "));
}

// DRANET's rules for status.reservedFor: pods only, and a netdev for one pod.
void CheckConsumers(const kube::ResourceClaim& claim, const std::vector<std::string>& pods, const std::string& who) {
  if (pods.empty()) {
    if (claim.reserved_for.empty())
      throw PrepareError(who + " is reserved for no pod (status.reservedFor is empty); kubelet retries once the "
                               "scheduler has reserved it");
    const auto& c = claim.reserved_for.front();
    throw PrepareError(who + ": driver only supports Pods, unsupported reference {APIGroup:\"" + c.api_group +
                       "\", Resource:\"" + c.resource + "\", Name:\"" + c.name + "\", UID:\"" + c.uid + "\"}");
  }
}

}  // namespace

std::string NetdevPodsProblem(const std::string& who, const std::string& device, const std::string& if_name,
                              std::size_t pods) {
  if (pods <= 1) return "";
  return who + ": device " + device + ": driver only supports one pod per claim, got " + std::to_string(pods) +
         " (netdev " + if_name + " can be in one pod's network namespace only)";
}

std::string TopLevelRequest(const std::string& request) {
  return request.substr(0, request.find('/'));
}

std::vector<std::string> ReservedPods(const kube::ResourceClaim& claim) {
  std::set<std::string> pods;
  for (const auto& consumer : claim.reserved_for)
    if (consumer.resource == "pods" && consumer.api_group.empty() && !consumer.uid.empty())
      pods.insert(consumer.uid);
  return {pods.begin(), pods.end()};
}

namespace {
void BuildPlanInto(inject::ClaimPlan& plan, const kube::ResourceClaim& claim,
                   const std::vector<inventory::Device>& inventory, const PlanBuilderOptions& options,
                   const InjectFunction& inject, const HostAccess& host, std::stop_token stop);
}  // namespace

inject::ClaimPlan BuildClaimPlan(const kube::ResourceClaim& claim,
                                 const std::vector<inventory::Device>& inventory,
                                 const PlanBuilderOptions& options, const InjectFunction& inject,
                                 const HostAccess& host, std::stop_token stop) {
  inject::ClaimPlan plan;
  try {
    BuildPlanInto(plan, claim, inventory, options, inject, host, stop);
  } catch (...) {
    ReleaseClaimResources(plan, host);
    throw;
  }
  return plan;
}

std::vector<std::string> ReleaseClaimResources(const inject::ClaimPlan& plan, const HostAccess& host,
                                               std::stop_token stop) {
  std::vector<std::string> failures;
  for (const auto& netdev : plan.netdevs) {
    if (!netdev.dhcp_lease) continue;
    try {
      if (stop.stop_requested()) throw std::runtime_error("not tried: the deadline passed");
      if (!host.release_dhcp) throw std::runtime_error("this node has no DHCP client");
      inject::DhcpLease lease;
      lease.address = netdev.dhcp_lease->address;
      lease.server_id = netdev.dhcp_lease->server_id;
      lease.server_mac = netdev.dhcp_lease->server_mac;
      lease.client_mac = netdev.dhcp_lease->client_mac;
      lease.client_id = netdev.dhcp_lease->client_id;
      host.release_dhcp(netdev.host_if_name, lease, stop);
    } catch (const std::exception& e) {
      failures.push_back("releasing DHCP lease " + netdev.dhcp_lease->address + " of " + netdev.host_if_name + ": " +
                         e.what());
    }
  }
  for (const auto& record : plan.profiles) {
    try {
      if (!host.profiles) throw std::runtime_error("no profile provider is configured any more");
      if (stop.stop_requested()) throw std::runtime_error("not tried: the deadline passed");
      host.profiles->ReleaseProfileConfig({record.device, record.mac_address, record.pci_address}, plan.claim_uid,
                                          record.config_json, stop);
    } catch (const std::exception& e) {
      failures.push_back("releasing profile \"" + record.profile + "\" of " + record.device + ": " + e.what());
    }
  }
  return failures;
}

namespace {

// What a pod with adminAccess is told of the devices it may watch: their
// names as published, their RDMA devices (whose port state and counters are
// under /sys/class/infiniband/<name> where the node's RDMA netns mode is
// shared) and their netdevs' names on the host.
std::map<std::string, std::string> AdminAccessEnv(const std::vector<const inventory::Device*>& devices) {
  if (devices.empty()) return {};
  std::string names, rdma, netdevs;
  auto add = [](std::string& list, const std::string& item) {
    if (!item.empty()) list += (list.empty() ? "" : ",") + item;
  };
  for (const auto* device : devices) {
    add(names, device->name);
    add(rdma, device->rdma_device);
    add(netdevs, device->if_name);
  }
  return {{"DRANET_ADMIN_DEVICES", names}, {"DRANET_ADMIN_RDMA_DEVICES", rdma}, {"DRANET_ADMIN_NETDEVS", netdevs}};
}

void BuildPlanInto(inject::ClaimPlan& plan, const kube::ResourceClaim& claim,
                   const std::vector<inventory::Device>& inventory, const PlanBuilderOptions& options,
                   const InjectFunction& inject, const HostAccess& host, std::stop_token stop) {
  const std::string who = ClaimName(claim);
  if (!claim.allocated) throw PrepareError(who + " is not allocated (status.allocation is empty)");
  plan.claim_uid = claim.uid;
  plan.claim_namespace = claim.namespace_name;
  plan.claim_name = claim.name;
  plan.pod_uids = ReservedPods(claim);
  CheckConsumers(claim, plan.pod_uids, who);

  std::map<std::string, const inventory::Device*> by_name;
  for (const auto& device : inventory) by_name.emplace(device.name, &device);

  std::vector<inventory::Device> allocated;
  std::set<std::string> pod_if_names;
  std::optional<inventory::NetlinkFacts> host_network;  // one dump per claim, on first need
  struct OwnNetwork {
    std::vector<inject::Route> routes;
    std::vector<inject::Rule> rules;
    std::vector<inject::Neighbor> neighbors;
  };
  std::map<std::string, OwnNetwork> claim_network;  // by device: what the claim's config says
  std::vector<const inventory::Device*> admin_devices;
  std::set<std::string> shared_rdma_devices;  // of the claim's shares
  for (const auto& result : claim.ResultsFor(options.driver_name, options.pool_name)) {
    auto it = by_name.find(result.device);
    if (it == by_name.end())
      throw PrepareError(who + ": device " + result.device + " (request \"" + result.request +
                         "\") is not in the inventory of node " + options.pool_name +
                         "; it may have disappeared since allocation — delete the pod to reallocate");
    const inventory::Device& device = *it->second;
    // Past the call's deadline the kubelet has given up on the answer: no
    // device is started (what was obtained so far is released by the caller).
    if (stop.stop_requested())
      throw PrepareError(who + ": the prepare deadline passed before device " + device.name +
                         " was prepared; kubelet retries the claim");
    const auto held = [&](const inject::AllocatedDevice& d) { return d.device == device.name; };
    const bool repeated = std::any_of(plan.devices.begin(), plan.devices.end(), held);
    // One device allocated twice is prepared once; a second share of it
    // (another shareID) is recorded for its own status entry.
    if (repeated && (result.share_id.empty() ||
                     std::any_of(plan.devices.begin(), plan.devices.end(), [&](const inject::AllocatedDevice& d) {
                       return held(d) && d.share_id == result.share_id;
                     })))
      continue;
    plan.devices.push_back({result.request, result.pool, result.device, result.admin_access, result.share_id});
    if (repeated) continue;
    const std::string where = who + ": device " + device.name;
    if (result.admin_access) {
      // Read-only access beside the device's holder: nothing of the device
      // is moved, configured or opened, so the claim may configure nothing
      // (its class's config is for holders, and is not applied).
      if (const auto own = ConfigFor(claim, result, options.driver_name, /*with_class=*/false)) {
        const auto set = FieldsSet(own->config);
        if (!set.empty())
          throw PrepareError(where + " (request \"" + result.request + "\"): adminAccess gives read-only access, "
                             "which configures nothing; its config may not set " + Join(set));
      }
      admin_devices.push_back(&device);
      continue;
    }
    if (!result.share_id.empty()) {
      // A share (docs/sharing.md): the HCA's char devices beside the other
      // shares' pods, and a child interface of the netdev where there is
      // one; the device itself never leaves the host.
      const std::string share = where + " (share " + result.share_id + ")";
      const bool child = inventory::NetdevTakesChildren(device);
      if (device.rdma_device.empty() && !child)
        throw PrepareError(share + ": it has neither an RDMA device nor an Ethernet netdev to share");
      if (options.rdma_exclusive && !device.rdma_device.empty())
        throw PrepareError(share + ": a share needs the kernel's shared RDMA netns mode, and dranetd runs with "
                           "--rdma-exclusive");
      if (!device.rdma_device.empty()) shared_rdma_devices.insert(device.rdma_device);
      if (!child) {
        // An IB-only HCA, or one whose netdev (IPoIB) takes no children.
        if (const auto merged = ConfigFor(claim, result, options.driver_name)) {
          const auto set = FieldsSet(merged->config);
          if (!set.empty())
            throw PrepareError(share + ": a share of an HCA without an Ethernet netdev configures nothing; its "
                               "config may not set " + Join(set));
        }
        allocated.push_back(device);
        plan.published_attributes[device.name] = kube::AttributesToJson(device.attributes);
        AddRdmaCharDevices(plan, device, options, who);
        continue;
      }
    }
    auto merged = ConfigFor(claim, result, options.driver_name);
    allocated.push_back(device);
    plan.published_attributes[device.name] = kube::AttributesToJson(device.attributes);
    if (merged && !merged->config.profile.empty())
      merged = ResolveProfile(std::move(*merged), device, claim, host, plan, where, stop);
    const NetworkConfig* config = merged ? &merged->config : nullptr;

    if (device.if_name.empty()) {
      if (config) {
        auto bad = FieldsNotForRdmaOnly(*config);
        if (!bad.empty())
          throw PrepareError(where + " is RDMA-only (no netdev); its config may not set " + Join(bad));
      }
    } else {
      if (const auto problem = NetdevPodsProblem(who, device.name, device.if_name, plan.pod_uids.size());
          !problem.empty())
        throw PrepareError(problem);
      inject::NetdevPlan netdev;
      netdev.device_name = device.name;
      netdev.host_if_name = device.if_name;
      ChooseChild(config, result.share_id, netdev, where);
      if (!netdev.child_type.empty() && !inventory::NetdevTakesChildren(device))
        throw PrepareError(where + ": config sets interface.type \"" + netdev.child_type + "\" but netdev " +
                           device.if_name + " is not Ethernet, and the kernel makes " + netdev.child_type +
                           " children of Ethernet netdevs only");
      netdev.pod_if_name = config && !config->interface.name.empty() ? config->interface.name : device.if_name;
      if (!pod_if_names.insert(netdev.pod_if_name).second)
        throw PrepareError(where + ": interface name \"" + netdev.pod_if_name +
                           "\" is used by another device of the claim");
      if (!host.read_network)
        throw PrepareError(where + ": netdev " + device.if_name + " cannot be inspected (no host reader)");
      try {
        if (!host_network) host_network = host.read_network();
        netdev.host_state = inject::HarvestNetdevHostState(*host_network, device.if_name);
      } catch (const std::exception& e) {
        throw PrepareError(where + ": cannot read the host state of netdev " + device.if_name + ": " + e.what());
      }
      auto& own = claim_network[device.name];
      const bool child = !netdev.child_type.empty();
      if (!child) RecordHostSysctls(host, device.if_name, netdev.host_state.settings);
      if (config) ApplyNetdevConfig(*config, device, inventory, *host_network, host, netdev, where);
      if (child && netdev.mtu && netdev.host_state.mtu != 0 && *netdev.mtu > netdev.host_state.mtu)
        throw PrepareError(where + ": config sets interface.mtu " + std::to_string(*netdev.mtu) + " but netdev " +
                           device.if_name + " has " + std::to_string(netdev.host_state.mtu) + ", and a child's MTU (" +
                           netdev.child_type + ") is at most its parent's");
      if (config && !config->interface.addresses.empty()) {
        netdev.addresses = config->interface.addresses;
      } else if (config && config->interface.dhcp.value_or(false)) {
        // A child's identifier: the claim and device it is for, and the share.
        const std::string client_id =
            child ? "dranet/" + claim.uid + "/" + device.name + (result.share_id.empty() ? "" : "/" + result.share_id)
                  : "";
        LeaseAddress(host, netdev, own.routes, where, client_id, stop);
      } else if (child || (config && config->interface.addressing == "unnumbered")) {
        // A child never takes the host's addresses: they stay on the netdev.
      } else {
        for (int family : {AF_INET, AF_INET6})
          for (auto& a : inventory::GlobalUnicastAddresses(netdev.host_state.addresses, family))
            netdev.addresses.push_back(std::move(a));
      }
      // A VRF takes no policy rules (its table is the lookup): the host's
      // stay on the host.
      // A child has only the claim's: the host's stay with the netdev.
      if (options.copy_host_routes && !child) {
        netdev.routes = HostRoutesForPod(netdev.host_state.routes, netdev.addresses);
        if (netdev.vrf_name.empty()) netdev.rules = netdev.host_state.rules;
        netdev.neighbors = netdev.host_state.neighbors;
      }
      if (config) {
        for (const auto& r : config->routes)
          own.routes.push_back({r.destination, r.gateway, r.source, static_cast<int32_t>(r.table), 0, r.scope, 0});
        for (const auto& r : config->rules)
          own.rules.push_back({static_cast<uint32_t>(r.priority), r.source, r.destination,
                               static_cast<int32_t>(r.table), 0});
        for (const auto& n : config->neighbors) own.neighbors.push_back({n.destination, n.hardware_addr});
      }
      netdev.rdma_device = device.rdma_device;
      netdev.rdma_exclusive = options.rdma_exclusive && !device.rdma_device.empty();
      plan.netdevs.push_back(std::move(netdev));
    }
    AddRdmaCharDevices(plan, device, options, who);
  }

  if (inject && !allocated.empty()) {
    plugins::InjectionEdits edits = inject({claim.namespace_name, claim.name, claim.uid}, allocated);
    if (!edits.errors.empty())
      throw PrepareError(who + ": injection plugins failed: " + Join(edits.errors));
    for (const auto& node : edits.dev_nodes) {
      inject::DeviceNode dn{node.path, HostPathFor(options.dev_root, node.path), 0, 0,
                            node.permissions.empty() ? "rw" : node.permissions};
      if (node.major >= 0 && node.minor >= 0) {
        dn.major = static_cast<uint32_t>(node.major);
        dn.minor = static_cast<uint32_t>(node.minor);
      } else {
        struct stat st {};
        if (::stat(dn.host_path.c_str(), &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
          throw PrepareError(who + ": plugin " + node.plugin + " asked for device node " + node.path +
                             " but " + dn.host_path + " is not a device on this node");
        dn.major = major(st.st_rdev);
        dn.minor = minor(st.st_rdev);
      }
      AddDeviceNode(plan.device_nodes, std::move(dn), who);
    }
    plan.env = edits.env;
    for (const auto& m : edits.mounts) plan.mounts.push_back({m.host_path, m.container_path, m.options});
    // Cloud network config sits between the host's and the claim's.
    for (auto& netdev : plan.netdevs) {
      if (!netdev.child_type.empty()) continue;  // a cloud's routes are for the netdev's own addresses
      std::vector<inject::Route> routes;
      std::vector<inject::Rule> rules;
      for (const auto& r : edits.routes)
        if (r.device == netdev.device_name)
          routes.push_back({r.destination, r.gateway, r.source, static_cast<int32_t>(r.table), r.metric, r.scope, 0});
      for (const auto& r : edits.rules)
        if (r.device == netdev.device_name)
          rules.push_back({r.priority, r.source, r.destination, static_cast<int32_t>(r.table), 0});
      netdev.routes = inject::MergeRoutes(std::move(netdev.routes), routes);
      netdev.rules = inject::MergeRules(std::move(netdev.rules), rules);
    }
  }
  for (const auto& [key, value] : AdminAccessEnv(admin_devices)) plan.env[key] = value;
  // A share names its HCAs to NCCL, as the GPU plugins do for every claim
  // where they run: "=" makes NCCL match the names exactly.
  if (!shared_rdma_devices.empty() && !plan.env.count("NCCL_IB_HCA")) {
    std::set<std::string> hcas = shared_rdma_devices;
    for (const auto& device : allocated)
      if (!device.rdma_device.empty()) hcas.insert(device.rdma_device);
    std::string value = "=";
    for (const auto& hca : hcas) value += (value.size() > 1 ? "," : "") + hca;
    plan.env["NCCL_IB_HCA"] = value;
  }
  for (auto& netdev : plan.netdevs) {
    auto own = claim_network.find(netdev.device_name);
    if (own == claim_network.end()) continue;
    netdev.routes = inject::MergeRoutes(std::move(netdev.routes), own->second.routes);
    netdev.rules = inject::MergeRules(std::move(netdev.rules), own->second.rules);
    netdev.neighbors = inject::MergeNeighbors(std::move(netdev.neighbors), own->second.neighbors);
  }
  // With a VRF every route of the netdev goes into the VRF's table.
  for (auto& netdev : plan.netdevs) {
    if (netdev.vrf_name.empty()) continue;
    for (auto& route : netdev.routes) route.table = static_cast<int32_t>(netdev.vrf_table);
    netdev.rules.clear();
  }
  // The routes are final now: what the kernel would refuse in the pod is
  // refused here, every route named.
  std::string route_problems;
  for (const auto& netdev : plan.netdevs)
    for (const auto& problem : RouteProblems(netdev))
      route_problems += (route_problems.empty() ? "" : "; ") + who + ": device " + netdev.device_name + ": " + problem;
  if (!route_problems.empty()) throw PrepareError(route_problems);
  std::sort(plan.device_nodes.begin(), plan.device_nodes.end(),
            [](const inject::DeviceNode& a, const inject::DeviceNode& b) { return a.container_path < b.container_path; });
}

}  // namespace

}  // namespace dranet::kubelet
