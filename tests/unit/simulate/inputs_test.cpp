// Parsing ResourceSlices, DeviceClasses and claim templates (YAML and JSON),
// in the shapes users have: `kubectl get -o yaml|json` Lists, API LIST
// responses, multi-document YAML and DRANET's example files (tests/data/resourceslices/).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "simulate/simulate.h"

namespace dranet::simulate {
namespace {

std::string Fixture(const std::string& name) {
  const std::string path = std::string(DRANET_TEST_DATA_DIR) + "/resourceslices/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const SliceDevice* Find(const std::vector<SliceDevice>& devices, const std::string& pool, const std::string& name) {
  for (const auto& d : devices)
    if (d.pool == pool && d.name == name) return &d;
  return nullptr;
}

inventory::AttributeValue Str(const char* s) { return inventory::AttributeValue(std::string(s)); }

std::string ErrorOf(std::string_view text, std::string_view source) {
  try {
    ReadResourceSlices(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr char kNode81[] = "aks-gpu-45139532-vmss000081";
constexpr char kNode82[] = "aks-gpu-45139532-vmss000082";

// `kubectl get resourceslices -o yaml` on a two-node GB300 cluster: a List
// of dranet's and the NVIDIA driver's slices with full metadata.
TEST(SliceInputs, KubectlListYaml) {
  SliceInput in = ReadResourceSlices(Fixture("kubectl-get-resourceslices.yaml"));
  EXPECT_EQ(in.documents, 1);
  EXPECT_EQ(in.slices, 4);
  EXPECT_EQ(in.empty_lists, 0);
  EXPECT_TRUE(in.others.empty());
  ASSERT_EQ(in.devices.size(), 16u);  // 2 nodes x (4 NICs + 4 GPUs)
  // Sorted by (driver, pool, name).
  EXPECT_EQ(in.devices.front().driver, "dra.net");
  EXPECT_EQ(in.devices.front().pool, kNode81);
  EXPECT_EQ(in.devices.back().driver, "gpu.nvidia.com");
  EXPECT_EQ(in.devices.back().pool, kNode82);
  EXPECT_EQ(in.devices.back().name, "gpu-3");

  const SliceDevice* gpu = Find(in.devices, kNode81, "gpu-1");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->driver, "gpu.nvidia.com");
  EXPECT_EQ(gpu->node_name, kNode81);
  EXPECT_EQ(gpu->attributes.at("gpu.nvidia.com/type"), Str("gpu"));
  EXPECT_EQ(gpu->attributes.at("gpu.nvidia.com/productName"), Str("NVIDIA GB300"));
  EXPECT_EQ(gpu->attributes.at("gpu.nvidia.com/driverVersion"),
            inventory::AttributeValue(inventory::SemVer{"580.105.8"}));
  EXPECT_EQ(gpu->attributes.at("resource.kubernetes.io/pciBusID"), Str("0009:06:00.0"));
  EXPECT_EQ(gpu->attributes.at("resource.kubernetes.io/pcieRoot"), Str("pci0009:00"));
  EXPECT_EQ(gpu->capacity.at("gpu.nvidia.com/memory"), "284208Mi");

  const SliceDevice* nic = Find(in.devices, kNode82, "pci-0103-00-00-0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->driver, "dra.net");
  EXPECT_EQ(nic->attributes.at("dra.net/rdma"), inventory::AttributeValue(true));
  EXPECT_EQ(nic->attributes.at("dra.net/numaNode"), inventory::AttributeValue(int64_t{1}));
  EXPECT_EQ(nic->attributes.at("dra.net/pciSubsystem"), Str("0240"));
  EXPECT_EQ(nic->attributes.at("azure.dra.net/vmSize"), Str("Standard_ND128isr_GB300_v6"));
}

// The same listing as `kubectl get resourceslices -o json` gives the same devices.
TEST(SliceInputs, KubectlListJsonMatchesYaml) {
  SliceInput yaml = ReadResourceSlices(Fixture("kubectl-get-resourceslices.yaml"));
  SliceInput json = ReadResourceSlices(Fixture("kubectl-get-resourceslices.json"));
  EXPECT_EQ(json.documents, 1);
  EXPECT_EQ(json.slices, 4);
  ASSERT_EQ(json.devices.size(), yaml.devices.size());
  for (std::size_t i = 0; i < json.devices.size(); ++i) {
    SCOPED_TRACE(json.devices[i].pool + "/" + json.devices[i].name);
    EXPECT_EQ(json.devices[i].driver, yaml.devices[i].driver);
    EXPECT_EQ(json.devices[i].pool, yaml.devices[i].pool);
    EXPECT_EQ(json.devices[i].name, yaml.devices[i].name);
    EXPECT_EQ(json.devices[i].node_name, yaml.devices[i].node_name);
    EXPECT_EQ(json.devices[i].attributes, yaml.devices[i].attributes);
    EXPECT_EQ(json.devices[i].capacity, yaml.devices[i].capacity);
  }
  const SliceDevice* gpu = Find(json.devices, kNode82, "gpu-0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->attributes.at("resource.kubernetes.io/pciBusID"), Str("0008:06:00.0"));
}

// A GPU template allocates on a node whose GPUs come from the List (the
// well-known gpu.nvidia.com class selects type == "gpu").
TEST(SliceInputs, KubectlListFeedsTheSimulation) {
  SliceInput in = ReadResourceSlices(Fixture("kubectl-get-resourceslices.yaml"));
  std::vector<SliceDevice> gpus;
  for (const auto& d : in.devices)
    if (d.driver != "dra.net" && d.node_name == kNode81) gpus.push_back(d);
  auto results = Simulate(ParseClaimTemplates(R"(
kind: ResourceClaimTemplate
metadata: {name: two-gpus}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]}}}
)"),
                          gpus);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].allocated) << (results[0].problems.empty() ? "" : results[0].problems[0]);
  ASSERT_EQ(results[0].allocation.size(), 2u);
  EXPECT_EQ(results[0].allocation[0].pool, kNode81);
}

// DRANET's own example files: `kind: List` with `metadata: {}` (AKS GB300)
// and with `resourceVersion: ''` and single-quoted bus ids (EKS A100).
TEST(SliceInputs, DranetExampleLists) {
  SliceInput gb300 = ReadResourceSlices(Fixture("dranet-aks-gb300-gpu.yaml"));
  EXPECT_EQ(gb300.slices, 1);
  ASSERT_EQ(gb300.devices.size(), 4u);
  EXPECT_EQ(gb300.devices[0].name, "gpu-0");
  EXPECT_EQ(gb300.devices[0].node_name, kNode81);
  EXPECT_EQ(gb300.devices[3].attributes.at("resource.kubernetes.io/pciBusID"), Str("0019:06:00.0"));
  EXPECT_EQ(gb300.devices[3].capacity.at("gpu.nvidia.com/memory"), "284208Mi");

  SliceInput a100 = ReadResourceSlices(Fixture("dranet-eks-a100-gpu.yaml"));
  EXPECT_EQ(a100.slices, 1);
  ASSERT_EQ(a100.devices.size(), 8u);
  EXPECT_EQ(a100.devices[0].pool, "ip-192-168-153-160.ec2.internal");
  EXPECT_EQ(a100.devices[0].attributes.at("resource.kubernetes.io/pciBusID"), Str("0000:10:1c.0"));
  EXPECT_EQ(a100.devices[0].attributes.at("gpu.nvidia.com/productName"), Str("NVIDIA A100-SXM4-40GB"));
  EXPECT_EQ(a100.devices[0].capacity.at("gpu.nvidia.com/memory"), "40Gi");
}

// What the API server returns for LIST /apis/resource.k8s.io/v1/resourceslices:
// a ResourceSliceList whose items carry no kind or apiVersion.
TEST(SliceInputs, ResourceSliceListFromTheApi) {
  SliceInput in = ReadResourceSlices(R"({"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1",)"
                                     R"("metadata":{"resourceVersion":"1849455"},"items":[)"
                                     R"({"metadata":{"name":"node-a-gpu.nvidia.com-x7k2p",)"
                                     R"("generateName":"node-a-gpu.nvidia.com-",)"
                                     R"("uid":"4f0e6a54-1d5e-4a53-9b7c-2d1f5a0c9e11",)"
                                     R"("resourceVersion":"1849301","generation":1,)"
                                     R"("creationTimestamp":"2026-05-05T10:12:44Z",)"
                                     R"("ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"node-a",)"
                                     R"("uid":"00c21858-73a7-402e-88bc-5e33b1d39bb7","controller":true}]},)"
                                     R"("spec":{"driver":"gpu.nvidia.com","pool":{"name":"node-a","generation":1,)"
                                     R"("resourceSliceCount":1},"nodeName":"node-a","devices":[)"
                                     R"({"name":"gpu-0","attributes":{"type":{"string":"gpu"},)"
                                     R"("resource.kubernetes.io/pciBusID":{"string":"0000:8f:00.0"}},)"
                                     R"("capacity":{"memory":{"value":"80Gi"}}}]}}]})");
  EXPECT_EQ(in.slices, 1);
  EXPECT_TRUE(in.others.empty());
  ASSERT_EQ(in.devices.size(), 1u);
  EXPECT_EQ(in.devices[0].driver, "gpu.nvidia.com");
  EXPECT_EQ(in.devices[0].node_name, "node-a");
  EXPECT_EQ(in.devices[0].attributes.at("resource.kubernetes.io/pciBusID"), Str("0000:8f:00.0"));
  EXPECT_EQ(in.devices[0].capacity.at("gpu.nvidia.com/memory"), "80Gi");
}

// Slices written by hand or concatenated: a leading comment, an empty
// document, two NVIDIA H100 slices of one pool, a DeviceClass among them.
TEST(SliceInputs, MultiDocumentYaml) {
  SliceInput in = ReadResourceSlices(R"(# The GPU driver's slices on node h100-node
# (kubectl get resourceslice NAME -o yaml, twice)
---
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: h100-node-gpu.nvidia.com-5xq2c
spec:
  driver: gpu.nvidia.com
  nodeName: h100-node
  pool: {name: h100-node, generation: 3, resourceSliceCount: 2}
  devices:
  - name: gpu-0
    attributes:
      type: {string: gpu}
      productName: {string: NVIDIA H100 80GB HBM3}
      architecture: {string: Hopper}
      cudaComputeCapability: {version: 9.0.0}
      resource.kubernetes.io/pciBusID: {string: "0000:18:00.0"}
      resource.kubernetes.io/pcieRoot: {string: pci0000:15}
    capacity:
      memory: {value: 80Gi}
---
# second slice of the pool
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: h100-node-gpu.nvidia.com-9tq7m
spec:
  driver: gpu.nvidia.com
  nodeName: h100-node
  pool: {name: h100-node, generation: 3, resourceSliceCount: 2}
  devices:
  - name: gpu-1
    attributes:
      type: {string: gpu}
      resource.kubernetes.io/pciBusID: {string: "0000:2a:00.0"}
      resource.kubernetes.io/pcieRoot: {string: pci0000:26}
    capacity:
      memory: {value: 80Gi}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com"'}}]}
---
)");
  EXPECT_EQ(in.documents, 3);
  EXPECT_EQ(in.slices, 2);
  EXPECT_EQ(in.others, std::vector<std::string>{"DeviceClass gpu.nvidia.com"});
  ASSERT_EQ(in.devices.size(), 2u);
  EXPECT_EQ(in.devices[0].name, "gpu-0");
  EXPECT_EQ(in.devices[0].attributes.at("gpu.nvidia.com/productName"), Str("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(in.devices[0].attributes.at("gpu.nvidia.com/cudaComputeCapability"),
            inventory::AttributeValue(inventory::SemVer{"9.0.0"}));
  EXPECT_EQ(in.devices[0].attributes.at("resource.kubernetes.io/pcieRoot"), Str("pci0000:15"));
  EXPECT_EQ(in.devices[0].capacity.at("gpu.nvidia.com/memory"), "80Gi");
  EXPECT_EQ(in.devices[1].name, "gpu-1");
  EXPECT_EQ(in.devices[1].attributes.at("resource.kubernetes.io/pciBusID"), Str("0000:2a:00.0"));
}

// `kubectl get resourceslices -o json | jq .items`: an array of objects.
TEST(SliceInputs, ArrayOfObjects) {
  SliceInput in = ReadResourceSlices(R"([{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "n-gpu.amd.com-1"}, "spec": {"driver": "gpu.amd.com", "pool": {"name": "n"},
    "nodeName": "n", "devices": [{"name": "gpu-0-128", "attributes": {"type": {"string": "amdgpu"}}}]}}])");
  EXPECT_EQ(in.slices, 1);
  ASSERT_EQ(in.devices.size(), 1u);
  EXPECT_EQ(in.devices[0].attributes.at("gpu.amd.com/type"), Str("amdgpu"));
}

// Inputs that hold no device are counted, not thrown: the caller says what was wrong.
TEST(SliceInputs, NothingFoundIsReportedNotThrown) {
  SliceInput empty = ReadResourceSlices("");
  EXPECT_EQ(empty.documents, 0);
  EXPECT_EQ(empty.slices, 0);
  EXPECT_TRUE(empty.devices.empty());

  SliceInput comments = ReadResourceSlices("# nothing here\n---\n---\n");
  EXPECT_EQ(comments.documents, 0);
  EXPECT_EQ(comments.slices, 0);

  // `kubectl get resourceslices -o yaml` when there are none.
  SliceInput none = ReadResourceSlices("apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n");
  EXPECT_EQ(none.documents, 1);
  EXPECT_EQ(none.slices, 0);
  EXPECT_EQ(none.empty_lists, 1);
  SliceInput none_json =
      ReadResourceSlices(R"({"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}})");
  EXPECT_EQ(none_json.empty_lists, 1);
  EXPECT_EQ(none_json.slices, 0);

  SliceInput wrong = ReadResourceSlices(R"(
apiVersion: v1
kind: List
items:
- {apiVersion: resource.k8s.io/v1, kind: ResourceClaimTemplate, metadata: {name: gpu-0-aligned}}
- {metadata: {name: no-kind}}
)");
  EXPECT_EQ(wrong.slices, 0);
  EXPECT_EQ(wrong.others, (std::vector<std::string>{"ResourceClaimTemplate gpu-0-aligned",
                                                    "an object without kind (document 1 items[1])"}));

  SliceInput no_devices = ReadResourceSlices(R"(
kind: ResourceSlice
metadata: {name: n-gpu.nvidia.com-0}
spec: {driver: gpu.nvidia.com, nodeName: n, pool: {name: n}, devices: []}
---
kind: ResourceSlice
metadata: {name: n-gpu.nvidia.com-1}
spec: {driver: gpu.nvidia.com, nodeName: n, pool: {name: n}}
)");
  EXPECT_EQ(no_devices.slices, 2);
  EXPECT_TRUE(no_devices.devices.empty());
}

TEST(SliceInputs, ErrorsNameTheSource) {
  const std::string src = "--gpu-slices gpu.yaml";
  const std::string unclosed = ErrorOf("kind: ResourceSlice\nspec: {driver: x\n", src);
  EXPECT_EQ(unclosed.rfind(src + ": invalid YAML/JSON at line 3", 0), 0u) << unclosed;
  const std::string cut_json = ErrorOf("{\"kind\": \"List\", \"items\": [\n", src);
  EXPECT_EQ(cut_json.rfind(src + ": invalid YAML/JSON at line", 0), 0u) << cut_json;
  EXPECT_EQ(ErrorOf("just some text\n", src), src + ": document 1 is not an object");
  EXPECT_EQ(ErrorOf("kind: List\nitems: {a: b}\n", src), src + ": document 1: items is not a list");
  EXPECT_EQ(ErrorOf("kind: List\nitems:\n- kind: ResourceSlice\n  metadata: {name: s}\n  spec: {pool: {name: n}}\n",
                    src),
            src + ": ResourceSlice s: spec.driver is required");
  EXPECT_EQ(ErrorOf("kind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: d, devices: {name: gpu-0}}\n", src),
            src + ": ResourceSlice s: spec.devices is not a list");
  EXPECT_EQ(ErrorOf("- 1\n", ""), "document 1 [0] is not an object");
  // ParseResourceSlices names its input "ResourceSlices".
  try {
    ParseResourceSlices("kind: ResourceSlice\nspec: {driver: x\n");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("ResourceSlices: invalid YAML/JSON at line", 0), 0u) << e.what();
  }
}

TEST(Inputs, DeviceClassesFromAKubectlList) {
  auto classes = ParseDeviceClasses(R"(apiVersion: v1
items:
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata:
    name: gpu.nvidia.com
    resourceVersion: "1203"
  spec:
    selectors:
    - cel:
        expression: device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'
kind: List
metadata:
  resourceVersion: ""
)");
  ASSERT_EQ(classes.size(), 1u);
  EXPECT_EQ(classes[0].name, "gpu.nvidia.com");
  ASSERT_EQ(classes[0].selectors.size(), 1u);
  EXPECT_EQ(classes[0].selectors[0].rfind("device.driver == 'gpu.nvidia.com'", 0), 0u);
}

TEST(Inputs, SlicesQualifyBareNamesAndReadCapacity) {
  auto devices = ParseResourceSlices(R"(
kind: ResourceSlice
spec:
  driver: gpu.amd.com
  pool: {name: node-a}
  devices:
  - name: gpu-1-129
    attributes:
      type: {string: amdgpu}
      cardIndex: {int: 1}
      driverVersion: {version: 6.8.5}
      resource.kubernetes.io/pcieRoot: {string: pci0000:00}
      resource.kubernetes.io/numaNode: {ints: [1, 0]}
      tags: {strings: [a, b]}
    capacity:
      memory: {value: 192Gi}
  - name: gpu-0-128
    basic:
      attributes:
        type: {string: amdgpu}
)");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "gpu-0-128");  // sorted by name
  const SliceDevice& d = devices[1];
  EXPECT_EQ(d.driver, "gpu.amd.com");
  EXPECT_EQ(d.pool, "node-a");
  EXPECT_EQ(d.attributes.at("gpu.amd.com/type"), inventory::AttributeValue(std::string("amdgpu")));
  EXPECT_EQ(d.attributes.at("gpu.amd.com/cardIndex"), inventory::AttributeValue(int64_t{1}));
  EXPECT_EQ(d.attributes.at("gpu.amd.com/driverVersion"), inventory::AttributeValue(inventory::SemVer{"6.8.5"}));
  EXPECT_EQ(d.attributes.at("resource.kubernetes.io/pcieRoot"), inventory::AttributeValue(std::string("pci0000:00")));
  EXPECT_EQ(d.attributes.at("resource.kubernetes.io/numaNode"), inventory::AttributeValue(inventory::IntList{1, 0}));
  EXPECT_EQ(d.attributes.count("gpu.amd.com/tags"), 0u) << "list kinds other than ints are not modelled";
  EXPECT_EQ(d.capacity.at("gpu.amd.com/memory"), "192Gi");
  EXPECT_EQ(devices[0].attributes.at("gpu.amd.com/type"), inventory::AttributeValue(std::string("amdgpu")));
}

TEST(Inputs, TemplatesAndClaimsAndOtherKindsSkipped) {
  auto templates = ParseClaimTemplates(R"(
apiVersion: v1
kind: Pod
metadata: {name: ignored}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: claim, namespace: ml}
spec:
  devices:
    requests:
    - name: nic
      exactly: {deviceClassName: dranet.net, allocationMode: All}
    constraints:
    - {requests: [nic], distinctAttribute: dra.net/numaNode}
)");
  ASSERT_EQ(templates.size(), 1u);
  EXPECT_EQ(templates[0].name, "claim");
  EXPECT_EQ(templates[0].namespace_name, "ml");
  EXPECT_EQ(templates[0].requests[0].choices[0].mode, AllocationMode::kAll);
  EXPECT_EQ(templates[0].constraints[0].distinct_attribute, "dra.net/numaNode");
}

TEST(Inputs, ErrorsNameTheDocumentAndField) {
  try {
    ParseClaimTemplates("kind: ResourceClaimTemplate\nmetadata: {name: t}\nspec: {spec: {devices: {requests: [{name: a}]}}}\n");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "ResourceClaimTemplate t: request a: needs exactly or firstAvailable");
  }
  try {
    ParseClaimTemplates("kind: ResourceClaimTemplate\nmetadata: {name: t\n");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("claim templates: invalid YAML/JSON at line"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ParseClaimTemplates(R"(
kind: ResourceClaimTemplate
metadata: {name: t}
spec: {spec: {devices: {requests: [{name: a, exactly: {deviceClassName: c, allocationMode: Some}}]}}}
)"),
               InputError);
  EXPECT_THROW(ParseResourceSlices("kind: ResourceSlice\nspec: {driver: x, devices: [{name: d, attributes: {a: 1}}]}\n"),
               InputError);
}

// A slice with a shared device as the API serves it (allowMultipleAllocations,
// capacities with request policies) and a template asking capacity: read as
// the scheduler reads them, and allocated on one node until a capacity runs
// out (here bandwidth: 300 + 300 + 300 > 800).
TEST(SliceInputs, ConsumableCapacityIsReadFromSlicesAndTemplates) {
  const SliceInput in = ReadResourceSlices(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-dra.net}
spec:
  driver: dra.net
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: nic-0
    allowMultipleAllocations: true
    attributes:
      rdma: {bool: true}
    capacity:
      bandwidth:
        value: "800"
        requestPolicy: {default: "100", validRange: {min: "1", max: "800", step: "100"}}
      shares:
        value: "8"
        requestPolicy: {default: "1", validValues: ["1", "2", "4"]}
  - name: nic-1
    attributes:
      rdma: {bool: true}
)");
  ASSERT_EQ(in.devices.size(), 2u);
  const SliceDevice& shared = in.devices[0];
  EXPECT_TRUE(shared.allow_multiple_allocations);
  EXPECT_FALSE(in.devices[1].allow_multiple_allocations);
  EXPECT_EQ(shared.capacity.at("dra.net/bandwidth"), "800");
  const auto& bandwidth = shared.request_policies.at("dra.net/bandwidth");
  EXPECT_EQ(bandwidth.default_value, 100);
  EXPECT_EQ(bandwidth.min, 1);
  EXPECT_EQ(bandwidth.max, 800);
  EXPECT_EQ(bandwidth.step, 100);
  EXPECT_EQ(shared.request_policies.at("dra.net/shares").valid_values, (std::vector<long double>{1, 2, 4}));

  const std::string share = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: NAME}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly:
          deviceClassName: dra.net
          selectors: [{cel: {expression: 'device.allowMultipleAllocations'}}]
          capacity: {requests: {dra.net/bandwidth: "250", dra.net/shares: "3"}}
)";
  std::string templates;
  for (const char* name : {"a", "b", "c"}) {
    std::string t = share;
    t.replace(t.find("NAME"), 4, name);
    templates += (templates.empty() ? "" : "---\n") + t;
  }
  const auto parsed = ParseClaimTemplates(templates);
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0].requests[0].choices[0].capacity_requests.at("dra.net/bandwidth"), "250");
  SimulateOptions options;
  options.one_node = true;
  const auto results = Simulate(parsed, in.devices, {}, options);
  // 250 rounds up to 301 (from 1 in steps of 100); 3 shares up to the next valid value, 4.
  ASSERT_TRUE(results[0].allocated);
  EXPECT_EQ(results[0].allocation[0].consumed_capacity,
            (std::map<std::string, std::string>{{"dra.net/bandwidth", "301"}, {"dra.net/shares", "4"}}));
  EXPECT_TRUE(results[1].allocated);
  EXPECT_FALSE(results[2].allocated);  // 3 x 301 > 800 (and 3 x 4 shares > 8)
  EXPECT_EQ(ErrorOf(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
spec:
  driver: dra.net
  pool: {name: p}
  devices:
  - name: d
    capacity:
      x: {value: "1", requestPolicy: {default: "many"}}
)", "slices.yaml"), "slices.yaml: ResourceSlice (document 1): device d capacity dra.net/x requestPolicy.default: \"many\" is not a quantity");
}

}  // namespace
}  // namespace dranet::simulate
