#pragma once
// core/inventory/inventory.h — the node's network devices, as DRANET names them.
//
// What this module offers:
//   * Discoverer / Discover(): one scan of a host root (a live node "/" or a
//     node snapshot) into a sorted, deterministic std::vector<Device>: PCI
//     network functions, IB-only RDMA devices, virtual netdevs, with every
//     dra.net/* attribute DRANET publishes plus resource.kubernetes.io/
//     pciBusID, pcieRoot and numaNode, and the char devices a pod needs.
//   * DiscoveryMonitor (monitor.h): re-runs discovery on netlink link,
//     address and route events, coalesced, plus a periodic resync.
//   * CaptureSnapshot (snapshot.h): records a live node as a snapshot that
//     Discover() and the plugins can run on.
//   * naming.h: device names and the 64-byte value cap.
//   * HostRootProblem (host_root.h): whether a path can be a host root;
//     dranetd and dranetctl refuse one that cannot before reading anything.
//
// Rules beyond DRANET (documented in docs/snapshots.md and below):
//   * every string value fits the API's 64-byte limit (cut cleanly, logged);
//   * several netdevs on one PCI function: the device carries the one that is
//     not a child link (IFLA_LINK unset) with the lowest ifindex; the others
//     are listed in Device::secondary_if_names, never mixed into attributes;
//   * hostile sysfs (garbage, missing files, loops, huge values) yields a log
//     line naming the file and a partial but valid inventory; under a
//     snapshot no symlink leads a read outside it (sysfs_tree.h).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "inventory/device.h"
#include "inventory/netlink_facts.h"
#include "inventory/pci_names.h"
#include "inventory/sysfs_tree.h"

namespace dranet::inventory {

// Fully qualified attribute names: DRANET's (kubernetes-sigs/dranet pkg/apis/attributes.go)
// and the standard resource.kubernetes.io ones.
namespace attr {
inline constexpr std::string_view kPciAddress = "dra.net/pciAddress";
inline constexpr std::string_view kPciVendor = "dra.net/pciVendor";
inline constexpr std::string_view kPciDevice = "dra.net/pciDevice";
inline constexpr std::string_view kPciSubsystem = "dra.net/pciSubsystem";
inline constexpr std::string_view kNumaNode = "dra.net/numaNode";
inline constexpr std::string_view kRdma = "dra.net/rdma";
inline constexpr std::string_view kRdmaDevice = "dra.net/rdmaDevice";
inline constexpr std::string_view kIfName = "dra.net/ifName";
inline constexpr std::string_view kMac = "dra.net/mac";
inline constexpr std::string_view kMtu = "dra.net/mtu";
inline constexpr std::string_view kState = "dra.net/state";
inline constexpr std::string_view kType = "dra.net/type";
inline constexpr std::string_view kEncapsulation = "dra.net/encapsulation";
inline constexpr std::string_view kAlias = "dra.net/alias";
inline constexpr std::string_view kVirtual = "dra.net/virtual";
inline constexpr std::string_view kSriov = "dra.net/sriov";
inline constexpr std::string_view kSriovVfs = "dra.net/sriovVfs";
inline constexpr std::string_view kIsSriovVf = "dra.net/isSriovVf";
inline constexpr std::string_view kIpv4 = "dra.net/ipv4";
inline constexpr std::string_view kIpv6 = "dra.net/ipv6";
inline constexpr std::string_view kEbpf = "dra.net/ebpf";
inline constexpr std::string_view kTcFilterNames = "dra.net/tcFilterNames";
inline constexpr std::string_view kTcxProgramNames = "dra.net/tcxProgramNames";
inline constexpr std::string_view kStandardPciBusId = "resource.kubernetes.io/pciBusID";
inline constexpr std::string_view kStandardPcieRoot = "resource.kubernetes.io/pcieRoot";
inline constexpr std::string_view kStandardNumaNode = "resource.kubernetes.io/numaNode";
}  // namespace attr

// Whether the device's netdev can have IPVLAN and macvlan children (an
// Ethernet netdev; the kernel refuses IPoIB and other link types): what a
// share of a netdev gets (docs/sharing.md).
inline bool NetdevTakesChildren(const Device& device) {
  if (device.if_name.empty()) return false;
  const auto it = device.attributes.find(std::string(attr::kEncapsulation));
  const auto* text = it == device.attributes.end() ? nullptr : std::get_if<std::string>(&it->second);
  return text != nullptr && *text == "ether";
}

struct DiscoveryOptions {
  // "/" on a live node; a node snapshot directory (snapshot.h) in tests, demos
  // and `--host-root`. sysfs is <host_root>/sys, devices <host_root>/dev.
  std::filesystem::path host_root = "/";
  // DRANET's --move-ib-interfaces=false: IPoIB netdevs are ignored, so their
  // HCAs are published IB-only (rdmaDevice, no ifName).
  bool skip_ipoib = false;
  // DRANET's feature gate DRAListTypeAttributes: resource.kubernetes.io/numaNode
  // is published as an int list instead of an int: the device's NUMA node
  // first, then the other nodes at the smallest distance from it in
  // sys/devices/system/node/node<N>/distance when that distance is below the
  // kernel's REMOTE_DISTANCE (20; same socket), ascending ("12 10 12" on
  // node 1 gives [1, 0, 2]; "10 20" on node 0 gives [0]). dra.net/numaNode
  // stays an int. The API server needs its own gate of the same name.
  bool numa_node_list = false;
  // pci.ids for pciVendor/pciDevice names; empty = kDefaultPciIdsPath.
  std::filesystem::path pci_ids;
  // Netdevs never published (DRANET's list).
  std::vector<std::string> ignored_interfaces = {"cilium_net", "cilium_host", "docker0"};
  // Where netdev facts come from. kAuto: the snapshot's netlink.json when
  // host_root holds a snapshot marker, live rtnetlink otherwise.
  enum class NetlinkSource { kAuto, kLive, kSnapshot };
  NetlinkSource netlink_source = NetlinkSource::kAuto;
};

// One discoverer per daemon: it keeps the pci.ids database loaded between
// scans (loading it costs more than a whole scan). Discover() may be called
// from one thread at a time; `log` must outlive the discoverer.
class Discoverer {
 public:
  // Throws std::runtime_error for a snapshot whose netlink.json is unusable
  // (RequireUsableSnapshotNetlink): better no start than a wrong inventory.
  Discoverer(DiscoveryOptions options, Logger& log);

  // Scans the host root now. Never throws on bad sysfs content: problems are
  // logged and the affected device or attribute is left out.
  std::vector<Device> Discover();

  const DiscoveryOptions& options() const { return options_; }
  const HostPaths& paths() const { return paths_; }

 private:
  DiscoveryOptions options_;
  HostPaths paths_;
  Logger& log_;
  PciNameDatabase pci_names_;
};

// One-shot convenience: a Discoverer used once (pays the pci.ids load).
std::vector<Device> Discover(const DiscoveryOptions& options, Logger& log);

// The netdev facts discovery would use for `options` (live or snapshot).
NetlinkFacts ReadNetlinkFacts(const DiscoveryOptions& options, Logger& log);

}  // namespace dranet::inventory
