#include "kubelet/claim_plan_builder.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "inject/host_network.h"
#include "inventory/netlink_facts.h"
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

// The merged NetworkConfig for one result: FromClass entries first, then
// FromClaim, so that what the claim says wins over its class.
std::optional<NetworkConfig> ConfigFor(const kube::ResourceClaim& claim,
                                       const kube::DeviceAllocationResult& result,
                                       const std::string& driver) {
  std::vector<std::string> objects, labels;
  for (const char* source : {"FromClass", "FromClaim"}) {
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
    return MergeNetworkConfigs(objects, labels);
  } catch (const ConfigError& e) {
    throw PrepareError(ClaimName(claim) + ": invalid " + driver + " config for request \"" +
                       result.request + "\": " + e.what());
  }
}

// Char devices a pod needs for an RDMA device: uverbs*, umad*, rdma_cm.
bool PodNeedsCharDevice(const inventory::CharDevice& dev) {
  const std::string base = std::filesystem::path(dev.path).filename().string();
  return base.rfind("uverbs", 0) == 0 || base.rfind("umad", 0) == 0 || base == "rdma_cm";
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

std::string HostPathFor(const std::filesystem::path& dev_root, const std::string& container_path) {
  std::string relative = container_path;
  if (relative.rfind("/dev/", 0) == 0) relative = relative.substr(5);
  return (dev_root / relative).string();
}

// Fields of a NetworkConfig the plan has no place for yet. They are valid
// DRANET config, so the message says so rather than calling them unknown.
std::vector<std::string> UnsupportedForNetdev(const NetworkConfig& c) {
  std::vector<std::string> out;
  const auto& i = c.interface;
  if (i.dhcp.value_or(false)) out.push_back("interface.dhcp");
  if (i.hardware_addr) out.push_back("interface.hardwareAddr");
  if (i.gso_max_size || i.gro_max_size || i.gso_ipv4_max_size || i.gro_ipv4_max_size)
    out.push_back("interface.gso/groMaxSize");
  if (i.disable_ebpf_programs.value_or(false)) out.push_back("interface.disableEbpfPrograms");
  if (i.arp_ignore || i.arp_announce) out.push_back("interface.arpIgnore/arpAnnounce");
  if (i.vrf) out.push_back("interface.vrf");
  if (c.ethtool) out.push_back("ethtool");
  return out;
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

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

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

inject::ClaimPlan BuildClaimPlan(const kube::ResourceClaim& claim,
                                 const std::vector<inventory::Device>& inventory,
                                 const PlanBuilderOptions& options, const InjectFunction& inject,
                                 const HostNetworkReader& read_host_network) {
  const std::string who = ClaimName(claim);
  if (!claim.allocated) throw PrepareError(who + " is not allocated (status.allocation is empty)");
  inject::ClaimPlan plan;
  plan.claim_uid = claim.uid;
  plan.claim_namespace = claim.namespace_name;
  plan.claim_name = claim.name;
  plan.pod_uids = ReservedPods(claim);

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
  for (const auto& result : claim.ResultsFor(options.driver_name, options.pool_name)) {
    auto it = by_name.find(result.device);
    if (it == by_name.end())
      throw PrepareError(who + ": device " + result.device + " (request \"" + result.request +
                         "\") is not in the inventory of node " + options.pool_name +
                         "; it may have disappeared since allocation — delete the pod to reallocate");
    const inventory::Device& device = *it->second;
    if (std::any_of(plan.devices.begin(), plan.devices.end(),
                    [&](const inject::AllocatedDevice& d) { return d.device == device.name; }))
      continue;  // one device allocated twice (shared); prepared once
    plan.devices.push_back({result.request, result.pool, result.device});
    allocated.push_back(device);
    const auto config = ConfigFor(claim, result, options.driver_name);
    const std::string where = who + ": device " + device.name;
    if (config && !config->profile.empty())
      throw PrepareError(where + ": config sets profile \"" + config->profile +
                         "\" but no profile provider is configured on this node");

    if (device.if_name.empty()) {
      if (config) {
        auto bad = FieldsNotForRdmaOnly(*config);
        if (!bad.empty())
          throw PrepareError(where + " is RDMA-only (no netdev); its config may not set " + Join(bad));
      }
    } else {
      if (config) {
        auto unsupported = UnsupportedForNetdev(*config);
        if (!unsupported.empty())
          throw PrepareError(where + ": config fields " + Join(unsupported) +
                             " are valid but not applied by this dranet version yet; remove them");
      }
      inject::NetdevPlan netdev;
      netdev.device_name = device.name;
      netdev.host_if_name = device.if_name;
      netdev.pod_if_name = config && !config->interface.name.empty() ? config->interface.name : device.if_name;
      if (!pod_if_names.insert(netdev.pod_if_name).second)
        throw PrepareError(where + ": interface name \"" + netdev.pod_if_name +
                           "\" is used by another device of the claim");
      if (!read_host_network)
        throw PrepareError(where + ": netdev " + device.if_name + " cannot be inspected (no host reader)");
      try {
        if (!host_network) host_network = read_host_network();
        netdev.host_state = inject::HarvestNetdevHostState(*host_network, device.if_name);
      } catch (const std::exception& e) {
        throw PrepareError(where + ": cannot read the host state of netdev " + device.if_name + ": " + e.what());
      }
      if (config && config->interface.mtu) {
        netdev.mtu = static_cast<uint32_t>(*config->interface.mtu);
        CheckMtuInDriverRange(*netdev.mtu, *host_network, device.if_name, where);
      }
      if (config && !config->interface.addresses.empty()) {
        netdev.addresses = config->interface.addresses;
      } else {
        for (int family : {AF_INET, AF_INET6})
          for (auto& a : inventory::GlobalUnicastAddresses(netdev.host_state.addresses, family))
            netdev.addresses.push_back(std::move(a));
      }
      if (options.copy_host_routes) {
        netdev.routes = netdev.host_state.routes;
        netdev.rules = netdev.host_state.rules;
        netdev.neighbors = netdev.host_state.neighbors;
      }
      if (config) {
        auto& own = claim_network[device.name];
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
    if (!device.rdma_device.empty()) {
      for (const auto& dev : device.char_devices) {
        if (!PodNeedsCharDevice(dev)) continue;
        AddDeviceNode(plan.device_nodes,
                      {"/dev/" + dev.path, (options.dev_root / dev.path).string(), dev.major, dev.minor, "rw"},
                      who);
      }
    }
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
  for (auto& netdev : plan.netdevs) {
    auto own = claim_network.find(netdev.device_name);
    if (own == claim_network.end()) continue;
    netdev.routes = inject::MergeRoutes(std::move(netdev.routes), own->second.routes);
    netdev.rules = inject::MergeRules(std::move(netdev.rules), own->second.rules);
    netdev.neighbors = inject::MergeNeighbors(std::move(netdev.neighbors), own->second.neighbors);
  }
  std::sort(plan.device_nodes.begin(), plan.device_nodes.end(),
            [](const inject::DeviceNode& a, const inject::DeviceNode& b) { return a.container_path < b.container_path; });
  return plan;
}

}  // namespace dranet::kubelet
