#pragma once
// core/health/device_health.h — whether one published device works, from
// facts the node shows: the PCI function on the bus, the RDMA device and
// each of its ports, the netdev's link.
//
// Assess() is pure (facts in, verdict out); ReadDeviceFacts() gathers the
// sysfs half of the facts under a host root (a node, or a snapshot whose
// files a test may change); the link half comes from rtnetlink (the host's
// or the pod's, see health_monitor.h).
//
// What makes a device Unhealthy (each named in the message):
//   - its PCI function is gone from /sys/bus/pci/devices;
//   - its RDMA device is gone from /sys/class/infiniband (unless the device
//     sits in a pod that took the RDMA link with it: not visible, not judged);
//   - an RDMA port whose `state` is not ACTIVE or whose `phys_state` (when
//     the node has the file) is not LinkUp — but a RoCE port (link_layer
//     Ethernet) of a netdev that is administratively down is not judged,
//     since its state only follows that netdev's;
//   - its netdev is gone (on the host; a netdev in a pod is looked for
//     there), or is administratively up with operstate down, lowerlayerdown,
//     dormant or notpresent (no carrier; "unknown" is not judged) — judged
//     for a netdev of a PCI function, and for any netdev a pod holds. A
//     virtual netdev on the host (a bridge without ports, a bond without
//     links, a veth whose peer is down) has no carrier by its topology, not
//     by a fault, and is not judged by it.
// An administratively down netdev is not judged by its link: an unused NIC
// on the host is often down, and a pod brings its own up after the move.
#include <optional>
#include <string>
#include <vector>

#include "inventory/device.h"
#include "inventory/netlink_facts.h"

namespace dranet::health {

enum class Health { kUnknown = 0, kHealthy = 1, kUnhealthy = 2 };  // the kubelet's enum values

// "Unknown", "Healthy", "Unhealthy" (as the kubelet shows them in pod status).
const char* HealthName(Health health);

// The kubelet keeps at most this much of a message (dra-health v1).
inline constexpr std::size_t kMaxMessageBytes = 1024;

struct PortFacts {
  int port = 1;
  std::string state;       // sysfs text, e.g. "4: ACTIVE"
  std::string phys_state;  // e.g. "5: LinkUp"; empty when the node has no such file
  std::string link_layer;  // "InfiniBand", "Ethernet"; empty when unknown
};

struct LinkState {
  bool admin_up = false;  // IFF_UP
  // RFC 2863 as the kernel keeps it from the carrier: "up", "down" (no
  // carrier), "lowerlayerdown" (a veth whose peer is down, a VLAN whose
  // parent is), "dormant", "notpresent", "unknown" (the driver does not say).
  // The carrier itself (IFF_LOWER_UP) is not used: a snapshot's flags, read
  // from sysfs, never carry it.
  std::string operstate;
  std::string where;      // "on the host", "in pod default/a as net1"
  bool in_pod = false;    // read in the pod namespace that holds it
};

struct DeviceFacts {
  bool pci_present = true;
  bool rdma_judged = true;  // false: the RDMA device moved into a pod with its netdev
  bool rdma_present = true;
  std::vector<PortFacts> ports;
  // The netdev as found; nullopt when the device has one and it was not found.
  std::optional<LinkState> link;
};

struct Verdict {
  Health health = Health::kUnknown;
  std::string message;  // why, for Unhealthy; empty for Healthy; valid UTF-8, ≤ kMaxMessageBytes
  // The first problem as one word (a taint's value): PciFunctionGone,
  // RdmaDeviceGone, RdmaPortDown, NetdevGone, NoCarrier; empty for Healthy.
  std::string reason;
  friend bool operator==(const Verdict&, const Verdict&) = default;
};

Verdict Assess(const inventory::Device& device, const DeviceFacts& facts);

// The sysfs facts of `device` under `host_root`: the PCI function, the RDMA
// device and its ports. The link is left to the caller (link = nullopt).
DeviceFacts ReadDeviceFacts(const std::string& host_root, const inventory::Device& device);

// The link `link` as Assess() reads it, seen `where` ("on the host", ...).
LinkState LinkStateOf(const inventory::LinkFacts& link, std::string where);

// The verdict of a device whose netdev (if any) is on the host: sysfs under
// `host_root`, its netdev looked up by name among `host_links`.
Verdict AssessOnHost(const std::string& host_root, const inventory::Device& device,
                     const std::vector<inventory::LinkFacts>& host_links);

// The files whose changes may change ReadDeviceFacts' answer and that can
// be watched (each RDMA port directory): a snapshot's files change under
// inotify; sysfs attributes do not notify, and are read again periodically.
std::vector<std::string> WatchedDirectories(const std::string& host_root, const inventory::Device& device);

}  // namespace dranet::health
