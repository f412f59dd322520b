// Parsing ResourceSlices, DeviceClasses and claim templates (YAML and JSON).
#include <gtest/gtest.h>

#include "simulate/simulate.h"

namespace dranet::simulate {
namespace {

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

}  // namespace
}  // namespace dranet::simulate
