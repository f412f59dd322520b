// GenerateAlignedTemplates: per-GPU templates from our affinity attributes,
// checked by simulating the generated YAML on the same node.
#include <gtest/gtest.h>

#include "node_fixtures.h"
#include "simulate/simulate.h"

namespace dranet::simulate {
namespace {

using testing::Gb300Nics;
using testing::Gb300GpuSlices;

TEST(AlignedTemplates, NearestGpuPairsEachGb300GpuWithItsNic) {
  auto ours = Gb300Nics(/*with_nearest_gpu=*/true);
  auto gpus = ParseResourceSlices(Gb300GpuSlices());
  auto templates = GenerateAlignedTemplates(ours, gpus);
  ASSERT_EQ(templates.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(templates[i].gpu_device, "gpu-" + std::to_string(i));
    EXPECT_EQ(templates[i].basis, "nearestGpu");
    ASSERT_EQ(templates[i].nic_devices.size(), 1u);
    EXPECT_EQ(templates[i].nic_devices[0], ours[i].name);
  }
  EXPECT_EQ(templates[0].yaml,
            "apiVersion: resource.k8s.io/v1\n"
            "kind: ResourceClaimTemplate\n"
            "metadata:\n"
            "  name: gpu-0-aligned\n"
            "spec:\n"
            "  spec:\n"
            "    devices:\n"
            "      requests:\n"
            "        - name: gpu\n"
            "          exactly:\n"
            "            deviceClassName: gpu.nvidia.com\n"
            "            selectors:\n"
            "              - cel:\n"
            "                  expression: \"device.attributes[\\\"resource.kubernetes.io\\\"].pciBusID == \\\"0008:06:00.0\\\"\"\n"
            "        - name: nic\n"
            "          exactly:\n"
            "            deviceClassName: dranet.net\n"
            "            selectors:\n"
            "              - cel:\n"
            "                  expression: \"device.attributes[\\\"dra.net\\\"].rdmaDevice == \\\"mlx5_0\\\"\"\n"
            "      constraints:\n"
            "        - requests: [gpu, nic]\n"
            "          matchAttribute: resource.kubernetes.io/numaNode\n");

  // Every generated template allocates exactly its GPU and NIC.
  std::vector<SliceDevice> devices = FromInventory(ours, "gb300-node");
  devices.insert(devices.end(), gpus.begin(), gpus.end());
  auto results = Simulate(ParseClaimTemplates(RenderTemplates(templates)), devices);
  ASSERT_EQ(results.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(results[i].allocated) << results[i].template_name;
    ASSERT_EQ(results[i].allocation.size(), 2u);
    EXPECT_EQ(results[i].allocation[0].device, "gpu-" + std::to_string(i));
    EXPECT_EQ(results[i].allocation[1].device, ours[i].name);
  }
}

TEST(AlignedTemplates, NumaNodeFallbackTakesTheLocalNics) {
  auto ours = Gb300Nics(/*with_nearest_gpu=*/false);
  auto gpus = ParseResourceSlices(Gb300GpuSlices());
  auto templates = GenerateAlignedTemplates(ours, gpus);
  ASSERT_EQ(templates.size(), 4u);
  EXPECT_EQ(templates[2].basis, "numaNode");
  EXPECT_EQ(templates[2].nic_devices, (std::vector<std::string>{"pci-0103-00-00-0", "pci-0104-00-00-0"}));
  EXPECT_NE(templates[2].yaml.find("count: 2"), std::string::npos);
  EXPECT_NE(templates[2].yaml.find(R"(in [\"mlx5_2\", \"mlx5_3\"])"), std::string::npos) << templates[2].yaml;

  AlignedTemplateOptions one;
  one.nics_per_gpu = 1;
  one.namespace_name = "ml";
  auto single = GenerateAlignedTemplates(ours, gpus, one);
  EXPECT_EQ(single[3].nic_devices, std::vector<std::string>{"pci-0103-00-00-0"});
  EXPECT_NE(single[3].yaml.find("namespace: ml"), std::string::npos);
}

// resource.kubernetes.io/numaNode as a list (DRAListTypeAttributes): the NICs of the list's
// first node (the device's own) are the local ones, and the matchAttribute constraint holds.
TEST(AlignedTemplates, NumaNodeListsPairByTheirOwnNode) {
  auto ours = Gb300Nics();
  for (std::size_t i = 0; i < ours.size(); ++i) {
    ours[i].attributes.erase("dra.net/numaNode");  // only the list is left to go by
    ours[i].attributes["resource.kubernetes.io/numaNode"] = i < 2 ? inventory::IntList{0, 1} : inventory::IntList{1, 0};
  }
  auto gpus = ParseResourceSlices(Gb300GpuSlices());
  auto templates = GenerateAlignedTemplates(ours, gpus);
  ASSERT_EQ(templates.size(), 4u);
  EXPECT_EQ(templates[2].basis, "numaNode");
  EXPECT_EQ(templates[2].nic_devices, (std::vector<std::string>{"pci-0103-00-00-0", "pci-0104-00-00-0"}));
  EXPECT_NE(templates[2].yaml.find("matchAttribute: resource.kubernetes.io/numaNode"), std::string::npos)
      << templates[2].yaml;

  std::vector<SliceDevice> devices = FromInventory(ours, "gb300-node");
  devices.insert(devices.end(), gpus.begin(), gpus.end());
  auto results = Simulate(ParseClaimTemplates(RenderTemplates(templates)), devices);
  ASSERT_EQ(results.size(), 4u);
  ASSERT_TRUE(results[2].allocated) << results[2].template_name;
  ASSERT_EQ(results[2].allocation.size(), 3u);
  EXPECT_EQ(results[2].allocation[0].device, "gpu-2");
  EXPECT_EQ(results[2].allocation[1].device, "pci-0103-00-00-0");
}

TEST(AlignedTemplates, GpusWithoutAnyAffinityGetNoYaml) {
  auto ours = Gb300Nics();
  for (auto& d : ours) {
    d.attributes.erase("dra.net/numaNode");
    d.attributes.erase("resource.kubernetes.io/numaNode");
  }
  auto templates = GenerateAlignedTemplates(ours, ParseResourceSlices(Gb300GpuSlices()));
  ASSERT_EQ(templates.size(), 4u);
  EXPECT_EQ(templates[0].basis, "none");
  EXPECT_TRUE(templates[0].yaml.empty());
  EXPECT_EQ(RenderTemplates(templates), "");
}

}  // namespace
}  // namespace dranet::simulate
