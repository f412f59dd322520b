#pragma once
// core/kube/resource_slice.h — the ResourceSlice as we publish it (resource.k8s.io v1,
// v1beta2 or v1beta1: see kube/resource_api.h).
//
// BuildSlices() turns the node's inventory into the slices of one pool (pool = node name,
// driver "dra.net"): devices are validated against the API server's limits, sorted by name
// and cut into slices of at most 128 devices (64 for a slice with a device that has a list
// attribute).
// SliceToJson() renders one slice exactly as the API takes it, in the version spoken;
// ParseSlice() reads one back in any of them (v1beta1's `devices[].basic` unwrapped) so that
// the publisher can compare semantically.
//
// Naming: slices get a deterministic metadata.name "<node>-<driver>-<index>" instead of
// generateName. A create whose response is lost (timeout, apiserver restart) then cannot
// leave a duplicate slice behind: the retry gets 409 AlreadyExists and the next list finds
// it. Repairs of deleted slices re-create the same name, so logs and `kubectl get` stay
// stable. Node names are DNS subdomains (≤253); when "<node>-<driver>-<index>" would exceed
// 253 characters the node part is shortened and a hash of the full node name is appended.
//
// Attribute keys are written fully qualified ("dra.net/ifName"), as DRANET's published slices
// show them. The API also accepts bare identifiers (implicitly in the driver's domain);
// ParseSlice() qualifies those so both spellings compare equal.
//
// Thread-safety: everything here is a pure function of its arguments.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/log.h"
#include "inventory/device.h"
#include "kube/resource_api.h"

namespace dranet::kube {

inline constexpr std::string_view kDefaultDriverName = "dra.net";

// API server validation limits (kubernetes/kubernetes pkg/apis/resource/validation).
// The API lowers the devices per slice to 64 when a device of the slice has taints, consumes
// counters or has a list attribute. The slices we write carry no counters (ParseSlice marks
// them as foreign content); a device with taints, a list attribute or consumable capacity
// (allowMultipleAllocations; the 1.37 API does not ask it, the lower limit keeps room) makes
// BuildSlices apply the lower limit to its slice.
inline constexpr std::size_t kMaxDevicesPerSlice = 128;
inline constexpr std::size_t kMaxDevicesPerSliceWithListAttributes = 64;
inline constexpr std::size_t kMaxAttributesPerDevice = 32;  // attributes + capacities
inline constexpr std::size_t kMaxAttributeValuesPerDevice = 48;  // list items counted one by one
inline constexpr std::size_t kMaxAttributeValueBytes = 64;  // string and version values
inline constexpr std::size_t kMaxDeviceNameLength = 63;     // DNS-1123 label
inline constexpr std::size_t kMaxAttributeIdLength = 32;    // C identifier part of a key
inline constexpr std::size_t kMaxDomainLength = 63;         // domain part of a key
inline constexpr std::size_t kMaxObjectNameLength = 253;    // DNS-1123 subdomain

// Label put on every slice we publish; lets operators find them (`-l`), never used for
// ownership (the publisher lists by spec.nodeName + spec.driver field selectors).
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "dranet";

// What identifies the pool a node publishes.
struct SliceParams {
  std::string driver{kDefaultDriverName};
  std::string node_name;   // required
  std::string pool_name;   // empty: the node name
  int64_t generation = 1;  // pool generation written into every slice
  std::string node_uid;    // Node metadata.uid; empty: no ownerReference
};

// One published device: name + attributes (fully-qualified keys).
struct SliceDevice {
  std::string name;
  inventory::Attributes attributes;
  std::vector<inventory::DeviceTaint> taints;  // timeAdded is the API server's and not compared
  bool allow_multiple_allocations = false;     // consumable capacity (Kubernetes 1.36+)
  inventory::Capacities capacity;              // with request policies on a shareable device
  friend bool operator==(const SliceDevice&, const SliceDevice&) = default;
};

struct OwnerReference {
  std::string api_version;  // "v1"
  std::string kind;         // "Node"
  std::string name;
  std::string uid;
  bool controller = false;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ResourceSlice {
  // metadata
  std::string name;              // deterministic, see the file comment
  std::string uid;               // set by the API server; empty in what we build
  std::string resource_version;  // set by the API server; sent on update
  std::map<std::string, std::string> labels;
  std::vector<OwnerReference> owner_references;
  // spec
  std::string driver;
  std::string node_name;
  std::string pool_name;
  int64_t pool_generation = 0;
  int64_t resource_slice_count = 0;
  std::vector<SliceDevice> devices;
  // Set by ParseSlice() when the stored object carries something we never write (an attribute
  // kind like "strings", a capacity in another form than ours, a taint field we do not set, a
  // second node selector…). Such a slice never compares equal to a desired one, so the
  // publisher overwrites it.
  bool has_foreign_content = false;
};

// Checks one device against the API server's limits. Returns an empty string when valid,
// otherwise a reason naming the offending field (for the log line).
std::string ValidateDevice(const inventory::Device& device);

// The deterministic metadata.name of slice `index` of a node's pool.
std::string SliceName(std::string_view node_name, std::string_view driver, std::size_t index);

// Validates, de-duplicates and sorts `devices`, then splits them into the slices of the pool
// described by `params`. Invalid devices are dropped, each with a warning naming the device
// and the reason. No devices: no slices (the pool is withdrawn).
std::vector<ResourceSlice> BuildSlices(const SliceParams& params,
                                       const std::vector<inventory::Device>& devices,
                                       Logger& log);

// Renders one slice as a ResourceSlice object of `version` (v1beta1: each device's attributes
// under `basic`). uid is never written; resourceVersion only when set (updates need it).
void WriteSlice(rapidjson::Writer<rapidjson::StringBuffer>& writer, const ResourceSlice& slice,
                ResourceApiVersion version = ResourceApiVersion::kV1);
std::string SliceToJson(const ResourceSlice& slice, ResourceApiVersion version = ResourceApiVersion::kV1);
// A JSON array of slices (what `dranetctl inspect -o json` prints).
std::string SlicesToJson(const std::vector<ResourceSlice>& slices,
                         ResourceApiVersion version = ResourceApiVersion::kV1);

// `devices` with every list attribute cut to its first value (a numaNode list becomes the
// device's own node), for a version that has no list values (HasListAttributes()).
std::vector<inventory::Device> WithScalarAttributes(std::vector<inventory::Device> devices);
// Whether any device has a list attribute.
bool AnyListAttribute(const std::vector<inventory::Device>& devices);

// One device's attributes as the JSON object a slice carries for it
// ({"dra.net/ifName":{"string":"eth1"},…}), and back: how the checkpoint
// keeps what an allocated device published. AttributesFromJson throws
// std::invalid_argument for anything else (a kind it does not know, a
// non-object).
std::string AttributesToJson(const inventory::Attributes& attributes);
inventory::Attributes AttributesFromJson(std::string_view json);

// Reads a ResourceSlice object as returned by the API server, of any version we speak. Bare
// attribute keys are qualified with the slice's driver. Throws std::invalid_argument when `object` is not an
// object with metadata.name and spec.
ResourceSlice ParseSlice(const rapidjson::Value& object);

// True when `stored` (from the API server) already says everything `desired` says:
// same spec (driver, node, pool name/generation/count, devices and attribute values,
// compared as values not text), our labels present, our owner reference present.
// Server-side metadata (uid, resourceVersion, managedFields, other labels) is ignored.
bool SemanticallyEqual(const ResourceSlice& desired, const ResourceSlice& stored);

}  // namespace dranet::kube
