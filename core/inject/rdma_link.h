#pragma once
// core/inject/rdma_link.h — moving an RDMA device (HCA link) between network
// namespaces in exclusive RDMA netns mode.
//
// libnl has no RDMA family, so the two messages we need are built here on
// libnl's generic netlink-message API: RDMA_NLDEV_CMD_GET (dump, to find the
// device index by name) and RDMA_NLDEV_CMD_SET with DEV_INDEX + NET_NS_FD,
// on a NETLINK_RDMA (20) socket created inside the namespace the device is
// in. Numbers: Linux include/uapi/rdma/rdma_netlink.h.
#include <cstdint>
#include <optional>
#include <string>

#include "inject/netns.h"

namespace dranet::inject {

// Netlink message type of an nldev command: (RDMA_NL_NLDEV << 10) | op.
std::uint16_t RdmaNldevType(std::uint16_t op);

// The encoded RDMA_NLDEV_CMD_SET request that moves device `dev_index` into
// the namespace of `netns_fd` (for tests and for MoveRdmaDevice).
std::string EncodeRdmaSetNetns(std::uint32_t dev_index, std::uint32_t netns_fd);

// The index of RDMA device `name` as seen from `ns`, nullopt if absent.
// Throws InjectError on a netlink failure.
std::optional<std::uint32_t> FindRdmaDevice(const NetnsHandle& ns, const std::string& name);

// Moves `name` from `from` into the namespace of `target`. Returns false
// when the device is not in `from`. Throws InjectError naming the device.
bool MoveRdmaDevice(const NetnsHandle& from, const std::string& name, const NetnsHandle& target);

// The kernel's RDMA netns mode (`rdma system show`: RDMA_NLDEV_CMD_SYS_GET,
// RDMA_NLDEV_SYS_ATTR_NETNS_MODE; 1 shared, 0 exclusive) as seen from this
// process: true when exclusive. nullopt when the kernel cannot say (no RDMA
// core loaded, a kernel before 5.3): a node without RDMA devices.
std::optional<bool> RdmaNetnsModeExclusive();

}  // namespace dranet::inject
