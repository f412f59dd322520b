#pragma once
// core/inventory/device.h — the device model every core module shares.
//
// A Device is one entry of our ResourceSlices (a PCI network function, an
// IB-only RDMA device or a virtual netdev) plus the host-side facts that
// prepare and the NRI hooks need but that are never published (char devices,
// sysfs path). Attribute names are fully qualified ("dra.net/ifName",
// "resource.kubernetes.io/numaNode", "azure.dra.net/vmSize").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dranet::inventory {

// A DRA "version" attribute (semantic version string, e.g. "1.2.3").
struct SemVer {
  std::string value;
  friend bool operator==(const SemVer&, const SemVer&) = default;
};

// An integer list ("ints"): a kind behind the Kubernetes 1.36 alpha gate
// DRAListTypeAttributes, which the API server must have for it to be
// accepted. Never empty when published.
using IntList = std::vector<int64_t>;

// The value kinds of resource.k8s.io/v1 DeviceAttribute: string, int, bool,
// version, and of the list kinds the one dranet publishes, ints
// (resource.kubernetes.io/numaNode under --feature-gates=DRAListTypeAttributes=true).
// The alpha bools, strings and versions kinds are not modelled.
using AttributeValue = std::variant<std::string, int64_t, bool, SemVer, IntList>;
using Attributes = std::map<std::string, AttributeValue>;

// A value as text for people: a string as it is, 42, true, 1.2.3, [1,0,2].
inline std::string FormatAttributeValue(const AttributeValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* v = std::get_if<SemVer>(&value)) return v->value;
  const auto& list = std::get<IntList>(value);
  std::string out = "[";
  for (std::size_t i = 0; i < list.size(); ++i) out += (i ? "," : "") + std::to_string(list[i]);
  return out + "]";
}

// A character device a pod needs to use an RDMA device (/dev/infiniband/...).
struct CharDevice {
  std::string path;   // relative to the dev root, e.g. "infiniband/uverbs0"
  uint32_t major = 0;
  uint32_t minor = 0;
  friend bool operator==(const CharDevice&, const CharDevice&) = default;
};

// Whether a pod given the RDMA device gets this char device: uverbs*,
// umad* and rdma_cm, never issm* (it lets a process claim the port's
// subnet-manager role). Prepare and `dranetctl simulate` both ask this.
inline bool PodReceives(const CharDevice& dev) {
  const auto slash = dev.path.rfind('/');
  const std::string base = slash == std::string::npos ? dev.path : dev.path.substr(slash + 1);
  return base.rfind("uverbs", 0) == 0 || base.rfind("umad", 0) == 0 || base == "rdma_cm";
}

// A taint on a published device (resource.k8s.io DeviceTaint, Kubernetes
// 1.36+): the scheduler allocates a device with a NoSchedule taint to no
// new claim that does not tolerate it; claims holding it keep it.
struct DeviceTaint {
  std::string key;     // e.g. "dra.net/unhealthy"
  std::string value;   // a label value: ≤ 63 of [A-Za-z0-9._-]
  std::string effect;  // "NoSchedule", "NoExecute", "None"
  friend bool operator==(const DeviceTaint&, const DeviceTaint&) = default;
};

// Consumable capacity (resource.k8s.io DeviceCapacity, Kubernetes 1.36+
// DRAConsumableCapacity): how much of a shareable device one allocation
// takes. Values are whole numbers in the capacity's unit (shares, Gbit/s),
// written as Quantities without a suffix ("8").
struct CapacityRequestPolicy {
  int64_t default_value = 0;  // consumed when a claim asks for no amount
  int64_t min = 0;            // validRange: min, max, step
  int64_t max = 0;
  int64_t step = 1;
  friend bool operator==(const CapacityRequestPolicy&, const CapacityRequestPolicy&) = default;
};

struct DeviceCapacity {
  int64_t value = 0;
  std::optional<CapacityRequestPolicy> request_policy;
  friend bool operator==(const DeviceCapacity&, const DeviceCapacity&) = default;
};

// Capacity name (qualified, "dra.net/shares") -> capacity.
using Capacities = std::map<std::string, DeviceCapacity>;

struct Device {
  std::string name;          // DNS label: pci-0000-8a-00-0, gpu0rdma0, net-<base32>
  Attributes attributes;     // published as spec.devices[].attributes
  std::vector<DeviceTaint> taints;  // published as spec.devices[].taints; set by the daemon, not discovery
  // Shareable (--shared-devices, cel/share_policy.h): published with
  // allowMultipleAllocations and these capacities, so that several claims
  // may hold the device at once, each with a shareID. Set by the daemon.
  bool allow_multiple_allocations = false;
  Capacities capacity;
  // Host-side facts (not published).
  std::string pci_address;   // "0000:8a:00.0"; empty for virtual devices
  std::string if_name;       // host netdev name; empty for IB-only devices
  std::string rdma_device;   // "mlx5_0"; empty when not RDMA-capable
  std::vector<CharDevice> char_devices;  // uverbsN, umadN, issmN, rdma_cm
  std::string driver;        // bound kernel driver, e.g. "mlx5_core"; empty when none
  std::string physical_function;  // an SR-IOV VF's PF address ("0000:3b:00.0"); empty otherwise
  uint32_t pci_vendor_id = 0;  // e.g. 0x15b3; 0 when not PCI
  uint32_t pci_device_id = 0;  // e.g. 0x101e; 0 when not PCI
  int32_t numa_node = -1;      // -1 when unknown
  // The link's speed in Mbit/s: the netdev's (class/net/<if>/speed) or,
  // without one, the RDMA port's rate; 0 when unknown or down.
  int64_t link_speed_mbps = 0;
  // Other netdevs on the same PCI function (representors, IPoIB pkey
  // children, extra ports), sorted; the attributes describe `if_name` only.
  std::vector<std::string> secondary_if_names;
  friend bool operator==(const Device&, const Device&) = default;
};

}  // namespace dranet::inventory
