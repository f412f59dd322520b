#pragma once
// core/kubelet/host_access.h — what prepare asks of the live node beyond the
// claim and the inventory: the host's network facts, a netdev's ethtool
// state and ARP sysctls, whether the kernel can make VRF devices, DHCP
// leases, and the profile provider. Prepare records the host's values of
// everything a claim changes (so teardown can restore them) and refuses at
// prepare what the pod hook could not do.
//
// LiveHostAccess() is the real node; tests substitute functions. Every
// member may be empty: prepare then refuses a claim that needs it, naming
// what this node cannot do.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "inject/dhcp_client.h"
#include "inject/ethtool_socket.h"
#include "inventory/netlink_facts.h"
#include "kubelet/profile_provider.h"

namespace dranet::kubelet {

// The host's network facts now (links, addresses, routes, rules, permanent
// neighbours): one netlink dump, read once per claim that has netdevs. The
// plan keeps each netdev's share (inject/host_network.h) so that the pod
// gets it and teardown restores it. Throws on failure.
using HostNetworkReader = std::function<inventory::NetlinkFacts()>;

// A host netdev's ethtool features and private flags.
struct EthtoolState {
  inject::EthtoolFeatures features;
  std::map<std::string, bool> private_flags;
};

struct HostAccess {
  HostAccess() = default;
  // Only the network reader (what most tests need).
  HostAccess(HostNetworkReader reader) : read_network(std::move(reader)) {}  // NOLINT: implicit on purpose

  HostNetworkReader read_network;
  std::function<EthtoolState(const std::string& if_name)> read_ethtool;
  // net.ipv4.conf.<if>.<key> of a host netdev; nullopt when unreadable.
  std::function<std::optional<int32_t>(const std::string& if_name, const std::string& key)> read_ipv4_conf;
  // "" when VRF devices can be created, else why not.
  std::function<std::string()> vrf_unsupported;
  // A DHCP lease for a host netdev (inject/dhcp_client.h), given up once
  // `stop` is requested; throws. `client_id` (option 61) not empty: a
  // lease of its own beside the netdev's (a child interface's).
  std::function<inject::DhcpLease(const std::string& if_name, std::stop_token stop, const std::string& client_id)>
      request_dhcp;
  // Releases a lease (best effort; throws when it cannot be sent, or when
  // `stop` is requested before it was).
  std::function<void(const std::string& if_name, const inject::DhcpLease& lease, std::stop_token stop)> release_dhcp;
  // --profile-provider; null when none is configured.
  std::shared_ptr<ProfileProvider> profiles;
};

// The live node (the daemon's own network namespace) for everything but the
// network reader and the profile provider, which the caller sets.
HostAccess LiveHostAccess(HostNetworkReader reader, std::shared_ptr<ProfileProvider> profiles);

// How long prepare waits for a DHCP lease (as DRANET).
inline constexpr std::chrono::seconds kDhcpTimeout{5};

}  // namespace dranet::kubelet
