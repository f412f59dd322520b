#pragma once
// core/simulate/simulate.h — what the scheduler would allocate on one node,
// before anything is deployed.
//
// Offers (for `dranetctl simulate` and `dranetctl templates`):
//   * parsing of ResourceClaimTemplates (and ResourceClaims), DeviceClasses
//     and other drivers' ResourceSlices from YAML or JSON: multi-document,
//     `kind: List` as kubectl prints it, or an API LIST response;
//   * Simulate(): each template's requests (exactly / firstAvailable,
//     count, allocationMode All) and matchAttribute/distinctAttribute
//     constraints, allocated by a small deterministic backtracking search
//     over the node's devices (ours plus e.g. the GPU driver's);
//   * per request and per device, which selector clause rejected the
//     device (the top-level `&&` operands, with their source text);
//   * what each pod would receive from our devices (char devices, netdevs,
//     environment) as data for the caller to print;
//   * GenerateAlignedTemplates(): one ready-to-apply ResourceClaimTemplate
//     per GPU, pairing it with its nearest / NUMA-local NICs.
//
// Consumable capacity (KEP-5075) as kube-scheduler's allocator has it: a
// device with allowMultipleAllocations is given to several claims (and to
// several requests of one claim), each consuming of every capacity what it
// asks (capacity.requests, rounded up by the request policy) or the
// policy's default, or else the whole value; a device's capacities are
// checked against what a request asks whether shared or not. With
// SimulateOptions::one_node the templates are allocated in order on one
// node, each taking what the earlier ones left (devices held alone and
// capacity); otherwise each on an empty node.
//
// Not modelled: admin access, device taints and tolerations, partitionable
// devices' counters, fractional capacity ranges. Everything is pure: no I/O,
// no cluster access.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cel/cel.h"
#include "inventory/device.h"

namespace dranet::simulate {

// Malformed input (YAML syntax, wrong shape). The message names the document
// (kind/name or its index) and the field.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A capacity's request policy: what a claim consumes of it (values as
// numbers of the capacity's unit; whole numbers and milli-values are exact).
struct CapacityPolicy {
  std::optional<long double> default_value;
  std::optional<long double> min, max, step;  // validRange (min set when a range is)
  std::vector<long double> valid_values;      // validValues, ascending
};

// A device as the scheduler sees it: one entry of some driver's slice.
struct SliceDevice {
  std::string driver;  // "dra.net", "gpu.nvidia.com"
  std::string pool;    // usually the node name
  std::string name;    // "pci-0101-00-00-0", "gpu-0"
  inventory::Attributes attributes;  // qualified keys ("gpu.nvidia.com/type")
  cel::Capacity capacity;            // qualified keys -> Quantity strings
  std::map<std::string, CapacityPolicy> request_policies;  // by capacity key, where the slice sets one
  bool allow_multiple_allocations = false;
  std::string node_name;             // the slice's spec.nodeName; "" when not bound to one node
  // For our own devices: the host facts behind the pod view. Borrowed from
  // the vector passed to FromInventory(); null for other drivers' devices.
  const inventory::Device* ours = nullptr;
};

// Our devices as published: driver "dra.net", pool = node name.
std::vector<SliceDevice> FromInventory(const std::vector<inventory::Device>& devices,
                                       std::string_view node_name);

// ResourceSlice objects as read, with what else the text held, so that a
// caller can tell an empty or wrong input from a node without devices.
struct SliceInput {
  std::vector<SliceDevice> devices;  // sorted by (driver, pool, name)
  int documents = 0;    // non-empty YAML documents
  int slices = 0;       // ResourceSlice objects, list items included
  int empty_lists = 0;  // lists without items (`kubectl get` that found nothing)
  std::vector<std::string> others;  // objects of other kinds, "DeviceClass gpu.nvidia.com"
};

// ResourceSlices in the shapes kubectl and the API give them: single
// objects in one or several YAML documents; a `kind: List` (`kubectl get
// resourceslices -o yaml` or `-o json`; JSON is YAML); a ResourceSliceList
// (an API LIST response, whose items may lack kind); an array of objects.
// Objects of other kinds are counted in `others` and skipped. Bare attribute
// names are qualified with the slice's driver. Finding no slice is not an
// error here; a syntax error or a malformed slice throws InputError, whose
// message starts with `source` (when not empty).
SliceInput ReadResourceSlices(std::string_view text, std::string_view source = "ResourceSlices");

// ReadResourceSlices(yaml).devices.
std::vector<SliceDevice> ParseResourceSlices(std::string_view yaml);

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions
};

std::vector<DeviceClass> ParseDeviceClasses(std::string_view yaml);

// DeviceClasses assumed when none are given: "dranet.net" and "dra.net"
// (driver dra.net), the chart's "dranet" and "dranet-rdma", "gpu.nvidia.com"
// (NVIDIA full GPUs), "mig.nvidia.com", "gpu.amd.com". Documented in
// docs/cel.md.
const std::vector<DeviceClass>& WellKnownDeviceClasses();

enum class AllocationMode { kExactCount, kAll };

// One way to satisfy a request: `exactly`, or one `firstAvailable` entry.
struct DeviceChoice {
  std::string name;  // "" for exactly; the subrequest name otherwise
  std::string device_class;
  std::vector<std::string> selectors;
  AllocationMode mode = AllocationMode::kExactCount;
  int64_t count = 1;
  std::map<std::string, std::string> capacity_requests;  // capacity.requests: qualified key -> Quantity
};

struct Request {
  std::string name;
  std::vector<DeviceChoice> choices;  // one for exactly; in order for firstAvailable
  bool first_available = false;
};

struct Constraint {
  std::vector<std::string> requests;  // empty = all requests
  std::string match_attribute;        // qualified name, or ""
  std::string distinct_attribute;     // qualified name, or ""
};

// The most devices one claim's allocation holds (resource.k8s.io
// AllocationResultsMaxSize); the scheduler refuses a claim that needs more.
inline constexpr int64_t kMaxDevicesPerClaim = 32;

struct ClaimTemplate {
  std::string name;  // metadata.name
  std::string namespace_name;
  std::vector<Request> requests;
  std::vector<Constraint> constraints;
};

// ResourceClaimTemplate (spec.spec.devices) and ResourceClaim (spec.devices)
// documents; other kinds are skipped (so a whole manifest can be passed).
std::vector<ClaimTemplate> ParseClaimTemplates(std::string_view yaml);

// One allocated device.
struct AllocatedDevice {
  std::string request;  // "nic", or "nic/sub" for firstAvailable
  std::string driver;
  std::string pool;
  std::string device;
  const SliceDevice* slice_device = nullptr;  // into the devices passed to Simulate
  bool share = false;  // a device allowing multiple allocations: this claim holds a share of it (a shareID)
  std::map<std::string, std::string> consumed_capacity;  // of a share: capacity key -> amount, as the claim records it
};

// Why one device does not fit one request (choice).
struct ClauseFailure {
  std::string where;   // "DeviceClass dranet.net selector 1", "selector 1"
  std::string clause;  // the failing top-level && operand, as written
  std::string reason;  // "false", or the evaluation error ("1:31: no such key: ...")
};

struct DeviceVerdict {
  std::string driver;
  std::string device;
  bool selected = false;               // passes the class and the selectors
  std::vector<ClauseFailure> failures;  // empty when selected
};

struct ChoiceReport {
  std::string request;  // "nic" or "nic/sub"
  int64_t wanted = 0;   // count; for All, the number of matching devices
  std::vector<DeviceVerdict> devices;  // every device considered, in name order
  std::vector<std::string> problems;   // unknown class, bad CEL, too few devices
};

// What a pod using the claim receives from our (dra.net) devices.
struct PodView {
  std::vector<inventory::CharDevice> char_devices;  // what prepare gives: uverbsN, umadN, rdma_cm; sorted, unique
  std::vector<std::string> netdevs;   // host netdev names moved into the pod (devices with ifName)
  std::vector<std::string> child_parents;  // host netdevs the pod gets a child interface of (shares), staying on the host
  std::vector<std::string> rdma_devices;             // "mlx5_0"
  std::map<std::string, std::string> env;  // NCCL_IB_HCA="=mlx5_0,mlx5_1" when RDMA devices are allocated
};

struct TemplateResult {
  std::string template_name;
  bool allocated = false;
  std::vector<AllocatedDevice> allocation;  // by request order, devices in name order
  std::vector<ChoiceReport> requests;       // per request choice: the selector verdicts
  std::vector<std::string> problems;        // why no allocation (constraints, counts, classes)
  PodView pod;                              // empty unless allocated
};

struct SimulateOptions {
  // Used when `classes` lacks a template's class; WellKnownDeviceClasses() by default.
  bool use_well_known_classes = true;
  // Backtracking step bound per template (each device tried counts 1).
  int64_t max_search_steps = 1'000'000;
  // Allocate the templates in order on one node (each takes what the earlier
  // left, as pods created one after the other), not each on an empty node.
  bool one_node = false;
};

// Allocates each template on an empty node, or (options.one_node) all of
// them in order on one node.
std::vector<TemplateResult> Simulate(const std::vector<ClaimTemplate>& templates,
                                     const std::vector<SliceDevice>& devices,
                                     const std::vector<DeviceClass>& classes = {},
                                     const SimulateOptions& options = {});

// The pod view of an allocation (only our devices contribute).
PodView PodViewOf(const std::vector<AllocatedDevice>& allocation);

// matchAttribute / distinctAttribute on one attribute's values, with the set
// semantics Kubernetes gives them for list attributes (DRAListTypeAttributes):
// an int is the set {i}, an int list the set of its items; values match when
// all their sets share an item, and are distinct when two share none. A NIC
// whose numaNode is [1, 0, 2] thus matches a GPU on NUMA node 1 (and one on
// node 0). Other kinds compare as before: same kind and value.
bool AttributeValuesMatch(const std::vector<const inventory::AttributeValue*>& values);
bool AttributeValuesDistinct(const inventory::AttributeValue& a, const inventory::AttributeValue& b);

struct AlignedTemplateOptions {
  std::string nic_class = "dranet.net";  // DeviceClass of our NICs
  std::string namespace_name;            // metadata.namespace, omitted when empty
  int nics_per_gpu = 0;                  // 0: every NIC the GPU is closest to
  // resource.k8s.io version of the templates: "v1" (Kubernetes 1.34+), "v1beta2" (same shape)
  // or "v1beta1" (1.32/1.33: request fields directly in the request, not under `exactly`).
  std::string api_version = "v1";
};

// One aligned template of GenerateAlignedTemplates (also rendered as YAML).
struct AlignedTemplate {
  std::string name;         // "gpu-0-aligned"
  std::string gpu_driver;   // "gpu.nvidia.com"
  std::string gpu_device;   // "gpu-0"
  std::vector<std::string> nic_devices;  // our device names
  std::string basis;        // "nearestGpu", "pcieRoot", "numaNode", "none"
  std::string yaml;         // one ResourceClaimTemplate document
};

// For each GPU in `gpus` (devices whose driver is not dra.net), the NICs
// closest to it: our `<vendor>.dra.net/nearestGpu` attribute naming its
// pciBusID first, then a shared resource.kubernetes.io/pcieRoot, then the
// same NUMA node (resource.kubernetes.io/numaNode or dra.net/numaNode; of
// a list, its first item, the device's own node). The templates select the
// GPU by pciBusID (or name) and the NICs by rdmaDevice/ifName/pciAddress,
// and add a matchAttribute constraint on each attribute all of them carry
// with values that match (AttributeValuesMatch).
std::vector<AlignedTemplate> GenerateAlignedTemplates(const std::vector<inventory::Device>& ours,
                                                      const std::vector<SliceDevice>& gpus,
                                                      const AlignedTemplateOptions& options = {});

// All documents joined with "---".
std::string RenderTemplates(const std::vector<AlignedTemplate>& templates);

}  // namespace dranet::simulate
