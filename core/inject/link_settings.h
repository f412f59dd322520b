#pragma once
// core/inject/link_settings.h — the link settings of a claim's config that
// are neither name, MTU nor addresses (LinkSettings in plan.h), and the VRF
// device of interface.vrf: applying them to a netdev in the pod, putting the
// host's values back at teardown, and the checks prepare makes first.
//
// rtnetlink carries the MAC and the GSO/GRO sizes (one RTM_NEWLINK; libnl has
// no setters for the sizes). The ARP settings are per-interface sysctls: the
// kernel keeps them per namespace and resets them when the netdev changes
// namespace, so they are written after each move. ethtool goes through
// inject/ethtool_socket.h.
#include <netlink/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "inject/netns.h"
#include "inject/plan.h"

namespace dranet::inject {

// Sets the MAC and GSO/GRO sizes of `settings` that are set (one
// RTM_NEWLINK on `sock`'s namespace). Throws InjectError naming `if_name`.
void SetLinkAttributes(nl_sock* sock, int ifindex, const LinkSettings& settings, const std::string& if_name);

// Applies the ARP and forwarding sysctls and the ethtool settings of `settings` to `if_name`
// inside `ns`. Throws InjectError naming the interface and the setting.
void ApplyNamespaceSettings(const NetnsHandle& ns, const std::string& if_name, const LinkSettings& settings);

// net.ipv4.conf.<if_name>.<key> in the calling thread's namespace; nullopt
// when the interface or key does not exist there.
std::optional<int32_t> ReadIpv4Conf(const std::string& if_name, const std::string& key);

// "" when the kernel of `sock`'s namespace can create VRF devices, else why
// not. Creates nothing: the probe asks for a VRF without a table, which a
// kernel with VRF support refuses as invalid and one without refuses as an
// unknown link kind.
std::string VrfUnsupportedReason(nl_sock* sock);

// The VRF default table for `name` when a config gives none: FNV-1a 32 of
// the name, mod 1000, plus 1000 (as DRANET).
uint32_t DefaultVrfTable(const std::string& name);

// Puts netdev `ifindex` into VRF `vrf_name` (table `table`) in `ns`, creating
// the VRF (up) when the namespace has none of that name, and turns on
// net.ipv4.tcp_l3mdev_accept and udp_l3mdev_accept there so that sockets
// outside the VRF still reach its addresses. A device of that name that is
// not a VRF, or a VRF with another table, is an error.
void JoinVrf(const NetnsHandle& ns, nl_sock* sock, int ifindex, const std::string& vrf_name, uint32_t table,
             const std::string& if_name);

}  // namespace dranet::inject
