// The claim templates users run (packaging/examples/) simulated on hand-built GB300, A4 and
// MI300X device lists: allocations, pod views, failure explanations and
// matchAttribute constraints across the GPU driver's slice and our NICs.
#include <gtest/gtest.h>

#include <algorithm>

#include <sstream>

#include "cel/share_policy.h"
#include "node_fixtures.h"
#include "simulate/simulate.h"

namespace dranet::simulate {
namespace {

using testing::A4Nics;
using testing::Gb300Nics;
using testing::Gb300Template;
using testing::ClaimTemplate;
using testing::ExactRequest;
using testing::Gb300GpuSlices;
using testing::Mi300xNics;

// Device names allocated for one request label.
std::vector<std::string> Allocated(const TemplateResult& r, const std::string& request) {
  std::vector<std::string> out;
  for (const auto& a : r.allocation) {
    if (a.request == request) out.push_back(a.device);
  }
  return out;
}

std::vector<std::string> RdmaOf(const TemplateResult& r, const std::string& request) {
  std::vector<std::string> out;
  for (const auto& a : r.allocation) {
    if (a.request == request && a.slice_device && a.slice_device->ours) out.push_back(a.slice_device->ours->rdma_device);
  }
  return out;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "\n") + s;
  return out;
}

struct Node {
  std::vector<inventory::Device> ours;
  std::vector<SliceDevice> devices;
  Node(std::vector<inventory::Device> nics, const std::string& node, const std::string& gpu_slices = "")
      : ours(std::move(nics)) {
    devices = FromInventory(ours, node);
    if (!gpu_slices.empty()) {
      auto gpus = ParseResourceSlices(gpu_slices);
      devices.insert(devices.end(), gpus.begin(), gpus.end());
    }
  }
  TemplateResult Run(const std::string& yaml) const {
    auto results = Simulate(ParseClaimTemplates(yaml), devices);
    EXPECT_EQ(results.size(), 1u);
    return results.at(0);
  }
};

TEST(Gb300, OneNicAligned) {
  Node node(Gb300Nics(), "gb300-node", Gb300GpuSlices());
  TemplateResult r =
      node.Run(Gb300Template("1nic-aligned", R"(device.attributes["dra.net"]["rdmaDevice"] == "mlx5_0")", 1));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(Allocated(r, "gpu"), std::vector<std::string>{"gpu-0"});
  EXPECT_EQ(RdmaOf(r, "nic"), std::vector<std::string>{"mlx5_0"});
  // What the pod sees in /dev/infiniband: uverbs0, umad0, rdma_cm.
  std::vector<std::string> paths;
  for (const auto& c : r.pod.char_devices) paths.push_back(c.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"infiniband/rdma_cm", "infiniband/umad0", "infiniband/uverbs0"}));
  EXPECT_TRUE(r.pod.netdevs.empty());  // IB-only VFs
  EXPECT_EQ(r.pod.env.at("NCCL_IB_HCA"), "=mlx5_0");
}

// The pod view is what prepare gives: a node's issmN (the subnet-manager
// port) is never handed to a pod, so simulate does not list it either.
TEST(A4, PodViewLeavesOutIssm) {
  auto nics = A4Nics();
  for (auto& d : nics) {
    if (d.rdma_device.empty()) continue;
    const std::string n = d.rdma_device.substr(d.rdma_device.find('_') + 1);
    d.char_devices.push_back({"infiniband/issm" + n, 231, static_cast<uint32_t>(64 + std::stoi(n))});
    d.char_devices.push_back({"infiniband/umad" + n, 231, static_cast<uint32_t>(std::stoi(n))});
  }
  Node node(nics, "a4-node");
  TemplateResult r = node.Run(ClaimTemplate(
      "one", "      requests:\n" + ExactRequest("nic", "dranet.net", 1,
                                                R"(device.attributes["dra.net"].ifName == "gpu0rdma0")")));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  std::vector<std::string> paths;
  for (const auto& c : r.pod.char_devices) paths.push_back(c.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"infiniband/rdma_cm", "infiniband/umad0", "infiniband/uverbs0"}));
}

TEST(Gb300, TwoNicAligned) {
  Node node(Gb300Nics(), "gb300-node", Gb300GpuSlices());
  TemplateResult r = node.Run(Gb300Template(
      "2nic-aligned",
      R"(device.attributes["dra.net"]["rdma"] == true && device.attributes["dra.net"]["numaNode"] == 0)", 2));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(RdmaOf(r, "nic"), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(r.pod.char_devices.size(), 5u);  // uverbs0/1, umad0/1, rdma_cm once
  EXPECT_EQ(r.pod.env.at("NCCL_IB_HCA"), "=mlx5_0,mlx5_1");
}

TEST(Gb300, OneNicUnaligned) {
  Node node(Gb300Nics(), "gb300-node", Gb300GpuSlices());
  TemplateResult r =
      node.Run(Gb300Template("1nic-unaligned", R"(device.attributes["dra.net"].rdmaDevice == "mlx5_2")", 1));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(RdmaOf(r, "nic"), std::vector<std::string>{"mlx5_2"});
  EXPECT_EQ(Allocated(r, "nic"), std::vector<std::string>{"pci-0103-00-00-0"});
}

TEST(A4, TwoGpuTwoNicTemplate) {
  Node node(A4Nics(), "a4-node");
  TemplateResult r = node.Run(ClaimTemplate(
      "2gpu-2nic", "      requests:\n" + ExactRequest("nic", "dranet.net", 2,
                                                      R"(device.attributes["dra.net"].rdma == true && )"
                                                      R"(device.attributes["dra.net"].ifName.startsWith("gpu") && )"
                                                      R"(device.attributes["dra.net"].ifName.endsWith("rdma0") && )"
                                                      R"(int(device.attributes["dra.net"].ifName.substring(3, 4)) < 2)")));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(r.pod.netdevs, (std::vector<std::string>{"gpu0rdma0", "gpu1rdma0"}));
  // eth1 is rejected by the first clause (rdma == true), with its text.
  const ChoiceReport& nic = r.requests.at(0);
  auto eth1 = std::find_if(nic.devices.begin(), nic.devices.end(),
                           [](const DeviceVerdict& v) { return v.device == "pci-0000-06-00-0"; });
  ASSERT_NE(eth1, nic.devices.end());
  EXPECT_FALSE(eth1->selected);
  ASSERT_FALSE(eth1->failures.empty());
  EXPECT_EQ(eth1->failures[0].clause, R"(device.attributes["dra.net"].rdma == true)");
}

TEST(A4, AllocationModeAllTakesEveryRdmaNic) {
  Node node(A4Nics(), "a4-node");
  TemplateResult r = node.Run(ClaimTemplate(
      "all-nics", "      requests:\n" + ExactRequest("nic", "dranet.net", 1, R"(device.attributes["dra.net"].rdma == true)",
                                                     "          allocationMode: All\n")));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(r.allocation.size(), 8u);
  EXPECT_EQ(r.pod.netdevs.size(), 8u);
  EXPECT_EQ(r.requests.at(0).wanted, 8);
}

TEST(Mi300x, FourNicSameNumaAndAllEight) {
  Node node(Mi300xNics(), "mi300x-node");
  std::string yaml =
      ClaimTemplate("4nic-same-numa",
                    "      requests:\n" +
                        ExactRequest("nic", "dranet.net", 4,
                                     R"(device.attributes["dra.net"].rdma && device.attributes["dra.net"].numaNode == 0)")) +
      "---\n" +
      ClaimTemplate("8nic-all", "      requests:\n" + ExactRequest("nic", "dranet.net", 8, R"(device.attributes["dra.net"].rdma)"));
  auto results = Simulate(ParseClaimTemplates(yaml), node.devices);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].allocated) << Joined(results[0].problems);
  EXPECT_EQ(RdmaOf(results[0], "nic"), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  ASSERT_TRUE(results[1].allocated) << Joined(results[1].problems);
  EXPECT_EQ(results[1].allocation.size(), 8u);
}

TEST(Explanations, NoMatchNamesTheFailingClausePerDevice) {
  Node node(Gb300Nics(), "gb300-node", Gb300GpuSlices());
  TemplateResult r = node.Run(Gb300Template(
      "typo", R"(device.attributes["dra.net"].rdma == true && device.attributes["dra.net"].rdmaDevice == "mlx5_9")",
      1));
  EXPECT_FALSE(r.allocated);
  EXPECT_NE(Joined(r.problems).find("request nic: not enough matching devices"), std::string::npos)
      << Joined(r.problems);
  const ChoiceReport& nic = r.requests.at(1);
  EXPECT_EQ(nic.request, "nic");
  ASSERT_FALSE(nic.problems.empty());
  EXPECT_EQ(nic.problems[0], "needs 1 device(s), 0 match");
  for (const auto& v : nic.devices) {
    ASSERT_EQ(v.failures.size(), 1u) << v.device;
    if (v.driver == "dra.net") {
      EXPECT_EQ(v.failures[0].where, "selector 1");
      EXPECT_EQ(v.failures[0].clause, R"(device.attributes["dra.net"].rdmaDevice == "mlx5_9")");
      EXPECT_EQ(v.failures[0].reason, "false");
    } else {
      // GPUs never reach the request's selector: the class rejects them.
      EXPECT_EQ(v.failures[0].where, "DeviceClass dranet.net selector 1");
      EXPECT_EQ(v.failures[0].clause, R"(device.driver == "dra.net")");
    }
  }
}

TEST(Explanations, MissingAttributeIsReportedWithItsPosition) {
  Node node(Gb300Nics(), "gb300-node");
  TemplateResult r = node.Run(ClaimTemplate(
      "roce-on-ib", "      requests:\n" + ExactRequest("nic", "dranet.net", 1,
                                                       R"(device.attributes["dra.net"].ifName.startsWith("gpu"))")));
  EXPECT_FALSE(r.allocated);
  const DeviceVerdict& first = r.requests.at(0).devices.at(0);
  ASSERT_EQ(first.failures.size(), 1u);
  EXPECT_EQ(first.failures[0].reason.rfind("1:29: no such key: ifName", 0), 0u) << first.failures[0].reason;
}

TEST(Explanations, UnknownClassAndBadSelectorAreProblems) {
  Node node(Gb300Nics(), "gb300-node");
  TemplateResult r = node.Run(ClaimTemplate("broken", R"(      requests:
      - name: a
        exactly: {deviceClassName: no-such-class}
      - name: b
        exactly:
          deviceClassName: dranet.net
          selectors: [{cel: {expression: 'device.attributes["dra.net"].rdma =='}}]
)"));
  EXPECT_FALSE(r.allocated);
  EXPECT_EQ(r.requests.at(0).problems.at(0), "DeviceClass no-such-class not found");
  EXPECT_NE(r.requests.at(1).problems.at(0).find("selector 1 does not compile: 1:37: unexpected end of input"),
            std::string::npos)
      << r.requests.at(1).problems.at(0);
}

std::string NumaAlignedTemplate(int nic_count) {
  return ClaimTemplate("gpu2-numa-nics",
                       "      requests:\n" +
                           ExactRequest("gpu", "gpu.nvidia.com", 1,
                                        R"(device.attributes["resource.kubernetes.io"].pciBusID == "0018:06:00.0")") +
                           ExactRequest("nic", "dranet.net", nic_count) +
                           "      constraints:\n"
                           "      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/numaNode}\n");
}

TEST(Constraints, MatchAttributeNumaNodeAcrossGpuSliceAndNics) {
  Node node(Gb300Nics(), "gb300-node", Gb300GpuSlices());
  TemplateResult r = node.Run(NumaAlignedTemplate(2));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(Allocated(r, "gpu"), std::vector<std::string>{"gpu-2"});
  EXPECT_EQ(RdmaOf(r, "nic"), (std::vector<std::string>{"mlx5_2", "mlx5_3"}));
}

TEST(Constraints, UnsatisfiableConstraintIsNamedWithValues) {
  Node node(Gb300Nics(), "gb300-node", Gb300GpuSlices());
  TemplateResult r = node.Run(NumaAlignedTemplate(3));
  EXPECT_FALSE(r.allocated);
  std::string problems = Joined(r.problems);
  EXPECT_NE(problems.find("constraint cannot be met: matchAttribute resource.kubernetes.io/numaNode across [gpu, nic]"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("gpu:gpu-2=1"), std::string::npos) << problems;
}

// Our NICs with resource.kubernetes.io/numaNode as a list (DRAListTypeAttributes).
std::vector<inventory::Device> Gb300NicsWithNumaLists(const inventory::IntList& node0,
                                                      const inventory::IntList& node1) {
  auto nics = Gb300Nics();
  for (std::size_t i = 0; i < nics.size(); ++i)
    nics[i].attributes["resource.kubernetes.io/numaNode"] = i < 2 ? node0 : node1;
  return nics;
}

TEST(Constraints, MatchAttributeTreatsIntListsAsSets) {
  // Each NIC's list is its own node: as with ints, only the two on node 1 go with gpu-2.
  Node alone(Gb300NicsWithNumaLists({0}, {1}), "gb300-node", Gb300GpuSlices());
  TemplateResult r = alone.Run(NumaAlignedTemplate(2));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(RdmaOf(r, "nic"), (std::vector<std::string>{"mlx5_2", "mlx5_3"}));
  r = alone.Run(NumaAlignedTemplate(3));
  EXPECT_FALSE(r.allocated);
  EXPECT_NE(Joined(r.problems).find("nic:pci-0101-00-00-0=[0]"), std::string::npos) << Joined(r.problems);

  // Nodes 0 and 1 share a socket: every NIC's list holds node 1, so three NICs go with gpu-2
  // (on node 1), the first ones in name order.
  Node socket(Gb300NicsWithNumaLists({0, 1}, {1, 0}), "gb300-node", Gb300GpuSlices());
  r = socket.Run(NumaAlignedTemplate(3));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(Allocated(r, "gpu"), std::vector<std::string>{"gpu-2"});
  EXPECT_EQ(RdmaOf(r, "nic"), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
}

TEST(Constraints, DistinctAttributeWantsDisjointIntLists) {
  const std::string two_nics_apart =
      ClaimTemplate("nics-apart", "      requests:\n" + ExactRequest("nic", "dranet.net", 2) +
                                      "      constraints:\n"
                                      "      - {distinctAttribute: resource.kubernetes.io/numaNode}\n");
  Node alone(Gb300NicsWithNumaLists({0}, {1}), "gb300-node");
  TemplateResult r = alone.Run(two_nics_apart);
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(RdmaOf(r, "nic"), (std::vector<std::string>{"mlx5_0", "mlx5_2"}));
  Node socket(Gb300NicsWithNumaLists({0, 1}, {1, 0}), "gb300-node");
  EXPECT_FALSE(socket.Run(two_nics_apart).allocated) << "every pair of lists shares a node";
}

TEST(Constraints, AttributeValueSetSemantics) {
  using inventory::AttributeValue;
  using inventory::IntList;
  auto match = [](std::vector<AttributeValue> values) {
    std::vector<const AttributeValue*> pointers;
    for (const auto& v : values) pointers.push_back(&v);
    return AttributeValuesMatch(pointers);
  };
  EXPECT_TRUE(match({int64_t{1}, IntList{1, 0, 2}})) << "a NIC on [1,0,2] is aligned with a GPU on node 1";
  EXPECT_TRUE(match({IntList{1, 0, 2}, int64_t{0}}));
  EXPECT_FALSE(match({int64_t{3}, IntList{1, 0, 2}}));
  EXPECT_TRUE(match({IntList{0, 1}, IntList{1, 2}, IntList{1}}));
  EXPECT_FALSE(match({IntList{0, 1}, IntList{1, 2}, IntList{0, 2}})) << "every pair overlaps, all three do not";
  EXPECT_TRUE(match({int64_t{1}, int64_t{1}}));
  EXPECT_FALSE(match({int64_t{1}, std::string("1")}));
  EXPECT_FALSE(match({IntList{1}, std::string("1")}));
  EXPECT_TRUE(match({std::string("a"), std::string("a")}));

  EXPECT_TRUE(AttributeValuesDistinct(IntList{0, 1}, IntList{2}));
  EXPECT_FALSE(AttributeValuesDistinct(IntList{0, 1}, IntList{1, 2}));
  EXPECT_TRUE(AttributeValuesDistinct(int64_t{1}, IntList{0, 2}));
  EXPECT_FALSE(AttributeValuesDistinct(int64_t{2}, IntList{0, 2}));
  EXPECT_FALSE(AttributeValuesDistinct(int64_t{1}, int64_t{1}));
  EXPECT_TRUE(AttributeValuesDistinct(std::string("a"), std::string("b")));
}

TEST(Constraints, MatchAttributePcieRootPairsGpuWithItsNic) {
  // A p4d-like node: GPUs and NICs share PCIe roots (kubernetes-sigs/dranet's AWS p4d example).
  std::vector<inventory::Device> nics;
  for (int i = 0; i < 4; ++i) {
    inventory::Device d = testing::IbOnlyNic(i, "000" + std::to_string(i), 0);
    d.attributes["resource.kubernetes.io/pcieRoot"] = "pci000" + std::to_string(i) + ":00";
    nics.push_back(std::move(d));
  }
  const char* gpus = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSliceList","items":[
    {"kind":"ResourceSlice","spec":{"driver":"gpu.nvidia.com","pool":{"name":"n"},"devices":[
      {"name":"gpu-0","attributes":{"type":{"string":"gpu"},"resource.kubernetes.io/pcieRoot":{"string":"pci0002:00"}}},
      {"name":"gpu-1","attributes":{"type":{"string":"gpu"},"resource.kubernetes.io/pcieRoot":{"string":"pci0003:00"}}}]}}]})";
  Node node(nics, "n", gpus);
  TemplateResult r = node.Run(R"(
kind: ResourceClaimTemplate
metadata: {name: gpu-nic-same-root}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet.net}}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)");
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(Allocated(r, "gpu"), std::vector<std::string>{"gpu-0"});
  EXPECT_EQ(RdmaOf(r, "nic"), std::vector<std::string>{"mlx5_2"});
}

TEST(Requests, FirstAvailableFallsBackInOrder) {
  Node node(Gb300Nics(), "gb300-node");
  TemplateResult r = node.Run(ClaimTemplate("fallback", R"(      requests:
      - name: nic
        firstAvailable:
        - name: four-local
          deviceClassName: dranet.net
          count: 4
          selectors: [{cel: {expression: 'device.attributes["dra.net"].numaNode == 0'}}]
        - name: two-local
          deviceClassName: dranet.net
          count: 2
          selectors: [{cel: {expression: 'device.attributes["dra.net"].numaNode == 0'}}]
)"));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(Allocated(r, "nic/two-local").size(), 2u);
  EXPECT_TRUE(Allocated(r, "nic/four-local").empty());
}

TEST(Requests, DeviceClassesFromFileOverrideWellKnown) {
  Node node(Gb300Nics(), "gb300-node");
  auto classes = ParseDeviceClasses(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: dranet.net}
spec:
  selectors:
  - cel: {expression: 'device.driver == "dra.net" && device.attributes["dra.net"].numaNode == 1'}
)");
  auto results = Simulate(ParseClaimTemplates(R"(
kind: ResourceClaimTemplate
metadata: {name: any}
spec: {spec: {devices: {requests: [{name: nic, exactly: {deviceClassName: dranet.net}}]}}}
)"),
                          node.devices, classes);
  ASSERT_TRUE(results.at(0).allocated);
  EXPECT_EQ(RdmaOf(results[0], "nic"), std::vector<std::string>{"mlx5_2"});
}

// kube-scheduler's allocator, which tests/cluster/oracle_test.sh compares
// simulate with: a CEL runtime error is not a non-match but fails the claim,
// when the search reaches the device.
TEST(SchedulerSemantics, ACelRuntimeErrorOnADeviceTheSearchReachesFailsTheClaim) {
  Node node(A4Nics(), "a4-node");  // eth1 (pci-0000-06-00-0, first by name) has no rdmaDevice
  TemplateResult r = node.Run(ClaimTemplate(
      "lacking", "      requests:\n" + ExactRequest("nic", "dranet.net", 1,
                                                    R"(device.attributes["dra.net"].rdmaDevice.startsWith("mlx5_"))")));
  EXPECT_FALSE(r.allocated) << "mlx5_0 matches, but the scheduler meets eth1's error first";
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("selector 1 on device dra.net/a4-node/pci-0000-06-00-0: CEL runtime error (the scheduler "
                                "fails the claim on it; guard an attribute some devices lack with "
                                "`\"name\" in device.attributes[\"domain\"]`): 1:29: no such key: rdmaDevice"),
            std::string::npos)
      << r.problems[0];
}

// The scheduler passes over a device an earlier request took before it
// evaluates selectors on it: no error.
TEST(SchedulerSemantics, ADeviceAnEarlierRequestTookIsPassedOverBeforeItsSelectors) {
  Node node(A4Nics(), "a4-node");
  TemplateResult r = node.Run(ClaimTemplate(
      "taken-first", "      requests:\n" +
                         ExactRequest("eth", "dranet.net", 1, R"(device.attributes["dra.net"].ifName == "eth1")") +
                         ExactRequest("nic", "dranet.net", 1,
                                      R"(device.attributes["dra.net"].rdmaDevice.startsWith("mlx5_"))")));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_EQ(RdmaOf(r, "nic"), std::vector<std::string>{"mlx5_0"});
}

// allocationMode All evaluates every device before the search: the same
// error fails the claim although eth1 is taken by the request before it.
TEST(SchedulerSemantics, AllocationModeAllMeetsEveryDevicesError) {
  Node node(A4Nics(), "a4-node");
  TemplateResult r = node.Run(ClaimTemplate("taken-first-all", R"(      requests:
      - name: eth
        exactly:
          deviceClassName: dranet.net
          selectors: [{cel: {expression: 'device.attributes["dra.net"].ifName == "eth1"'}}]
      - name: nics
        exactly:
          deviceClassName: dranet.net
          allocationMode: All
          selectors: [{cel: {expression: 'device.attributes["dra.net"].rdmaDevice.startsWith("mlx5_")'}}]
)"));
  EXPECT_FALSE(r.allocated);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("request nics: selector 1 on device dra.net/a4-node/pci-0000-06-00-0: CEL runtime error"),
            std::string::npos)
      << r.problems[0];
}

std::vector<inventory::Device> ManyNics(int count) {
  std::vector<inventory::Device> nics;
  for (int i = 0; i < count; ++i) {
    inventory::Device d;
    d.name = "vf-" + std::to_string(100 + i);
    d.attributes = {{"dra.net/rdma", true}, {"dra.net/sriov", true}};
    nics.push_back(std::move(d));
  }
  return nics;
}

TEST(SchedulerSemantics, AClaimHoldsAtMost32Devices) {
  Node node(ManyNics(40), "sriov-node");
  TemplateResult count = node.Run(ClaimTemplate("33", "      requests:\n" + ExactRequest("vfs", "dranet.net", 33)));
  EXPECT_FALSE(count.allocated);
  ASSERT_EQ(count.problems.size(), 1u);
  EXPECT_EQ(count.problems[0], "request vfs: adding 33 devices exceeds the claim limit of 32, with 0 already accounted for");
  TemplateResult all = node.Run(ClaimTemplate("all", R"(      requests:
      - name: vfs
        exactly: {deviceClassName: dranet.net, allocationMode: All}
)"));
  EXPECT_FALSE(all.allocated);
  ASSERT_EQ(all.problems.size(), 1u);
  EXPECT_EQ(all.problems[0], "request vfs: adding 40 devices exceeds the claim limit of 32, with 0 already accounted for");
  TemplateResult exactly = node.Run(ClaimTemplate("32", "      requests:\n" + ExactRequest("vfs", "dranet.net", 32)));
  EXPECT_TRUE(exactly.allocated) << Joined(exactly.problems);
}

// A firstAvailable entry over the limit is passed over for the next one.
TEST(SchedulerSemantics, FirstAvailablePassesOverAnEntryOverTheLimit) {
  Node node(ManyNics(40), "sriov-node");
  TemplateResult r = node.Run(ClaimTemplate("fallback", R"(      requests:
      - name: vfs
        firstAvailable:
        - {name: all, deviceClassName: dranet.net, allocationMode: All}
        - {name: four, deviceClassName: dranet.net, count: 4}
)"));
  ASSERT_TRUE(r.allocated) << Joined(r.problems);
  EXPECT_TRUE(Allocated(r, "vfs/all").empty());
  EXPECT_EQ(Allocated(r, "vfs/four"), (std::vector<std::string>{"vf-100", "vf-101", "vf-102", "vf-103"}));
}

// Consumable capacity, on one node: mlx5_0 of the GB300 node shared by 2
// (the share policy dranetd applies); the shipped templates hca-share (one
// share, the default bandwidth) and hca-share-200g, allocated in order as
// pods created one after the other.
std::vector<TemplateResult> SharesOnOneNode(const std::string& templates, bool one_node = true) {
  std::ostringstream quiet;
  Logger log(quiet);
  auto nics = Gb300Nics();
  for (auto& d : nics) d.link_speed_mbps = 800000;  // NDR 800G ports
  nics = cel::ApplySharePolicy(
      cel::CompileSharePolicy(R"(device.attributes["dra.net"].rdmaDevice == "mlx5_0")", 2), nics, log);
  const auto devices = FromInventory(nics, "gb300-node");
  SimulateOptions options;
  options.one_node = one_node;
  auto results = Simulate(ParseClaimTemplates(templates), devices, {}, options);
  // The devices die with this frame: keep only what the tests read.
  for (auto& r : results)
    for (auto& a : r.allocation) a.slice_device = nullptr;
  return results;
}

std::string ShareTemplate(const std::string& name, const std::string& bandwidth = "") {
  return ClaimTemplate(name, R"(      requests:
      - name: hca
        exactly:
          deviceClassName: dranet
          selectors:
          - cel: {expression: 'device.attributes["dra.net"].rdma && device.allowMultipleAllocations'}
)" + (bandwidth.empty() ? "" : "          capacity: {requests: {dra.net/bandwidth: \"" + bandwidth + "\"}}\n"));
}

TEST(ConsumableCapacity, SharesAreGivenOutUntilTheCountIsUsedUpOnOneNode) {
  const auto results = SharesOnOneNode(ShareTemplate("share-a") + "---\n" + ShareTemplate("share-b") + "---\n" +
                                       ShareTemplate("share-c") + "---\n" + ShareTemplate("share-d", "200"));
  ASSERT_EQ(results.size(), 4u);
  for (int i : {0, 1}) {
    SCOPED_TRACE(results[i].template_name);
    ASSERT_TRUE(results[i].allocated) << Joined(results[i].problems);
    ASSERT_EQ(results[i].allocation.size(), 1u);
    const auto& a = results[i].allocation[0];
    EXPECT_EQ(a.device, "pci-0101-00-00-0");
    EXPECT_TRUE(a.share);
    EXPECT_EQ(a.consumed_capacity,
              (std::map<std::string, std::string>{{"dra.net/bandwidth", "400"}, {"dra.net/shares", "1"}}));
  }
  // Both shares are taken: the third finds none, and says why.
  EXPECT_FALSE(results[2].allocated);
  ASSERT_EQ(results[2].problems.size(), 1u);
  EXPECT_EQ(results[2].problems[0],
            "the matching devices are held by the claims allocated before it, or have too little capacity left");
  EXPECT_FALSE(results[3].allocated);
}

TEST(ConsumableCapacity, EachTemplateOnAnEmptyNodeGetsAShare) {
  const auto results = SharesOnOneNode(ShareTemplate("a") + "---\n" + ShareTemplate("b") + "---\n" +
                                       ShareTemplate("c"), /*one_node=*/false);
  for (const auto& r : results) EXPECT_TRUE(r.allocated) << r.template_name;
}

// Bandwidth asked is rounded up to the policy's step and counted; a share
// asking more than is left waits though a share remains.
TEST(ConsumableCapacity, BandwidthIsCountedAsTheSchedulerCountsIt) {
  auto results = SharesOnOneNode(ShareTemplate("big", "600") + "---\n" + ShareTemplate("small", "300") + "---\n" +
                                 ShareTemplate("fits", "200"));
  ASSERT_TRUE(results[0].allocated) << Joined(results[0].problems);
  EXPECT_EQ(results[0].allocation[0].consumed_capacity.at("dra.net/bandwidth"), "600");
  EXPECT_FALSE(results[1].allocated);  // 600 + 300 > 800
  ASSERT_TRUE(results[2].allocated) << Joined(results[2].problems);
  EXPECT_EQ(results[2].allocation[0].consumed_capacity.at("dra.net/bandwidth"), "200");
  // More than the device has: no device matches, with the reason per device.
  results = SharesOnOneNode(ShareTemplate("huge", "1000"));
  EXPECT_FALSE(results[0].allocated);
  bool named = false;
  for (const auto& req : results[0].requests)
    for (const auto& d : req.devices)
      for (const auto& f : d.failures)
        named = named || (d.device == "pci-0101-00-00-0" && f.where == "capacity.requests" &&
                          f.reason == "dra.net/bandwidth 1000 is outside the device's request policy (from 1 to 800 "
                                      "in steps of 1)");
  EXPECT_TRUE(named);
  // A capacity the device does not have.
  results = SharesOnOneNode(ClaimTemplate("x", R"(      requests:
      - name: hca
        exactly:
          deviceClassName: dranet
          capacity: {requests: {dra.net/memory: "1"}}
)"));
  EXPECT_FALSE(results[0].allocated);
}

// Two requests of one claim may each hold a share of the same device; the
// claim counts both against the capacity.
TEST(ConsumableCapacity, TwoRequestsOfAClaimMayShareADevice) {
  const auto results = SharesOnOneNode(ClaimTemplate("two", R"(      requests:
      - name: first
        exactly:
          deviceClassName: dranet
          selectors: [{cel: {expression: 'device.allowMultipleAllocations'}}]
      - name: second
        exactly:
          deviceClassName: dranet
          selectors: [{cel: {expression: 'device.allowMultipleAllocations'}}]
)") + "---\n" + ShareTemplate("third"));
  ASSERT_TRUE(results[0].allocated) << Joined(results[0].problems);
  EXPECT_EQ(Allocated(results[0], "first"), std::vector<std::string>{"pci-0101-00-00-0"});
  EXPECT_EQ(Allocated(results[0], "second"), std::vector<std::string>{"pci-0101-00-00-0"});
  EXPECT_FALSE(results[1].allocated);  // both shares are the first claim's
}

// Devices held alone stay held on one node; a share's pod view names the
// netdev it gets a child of, not one moved.
TEST(ConsumableCapacity, OnOneNodeADeviceHeldAloneIsNotGivenTwiceAndAShareGetsAChild) {
  std::ostringstream quiet;
  Logger log(quiet);
  auto nics = A4Nics();
  for (auto& d : nics) d.attributes["dra.net/encapsulation"] = std::string("ether");
  nics = cel::ApplySharePolicy(cel::CompileSharePolicy(R"(device.attributes["dra.net"].ifName == "gpu0rdma0")", 2),
                               nics, log);
  const auto devices = FromInventory(nics, "a4-node");
  const std::string alone = ClaimTemplate(
      "alone", "      requests:\n" + ExactRequest("nic", "dranet.net", 1, R"(device.attributes["dra.net"].ifName == "gpu1rdma0")"));
  SimulateOptions options;
  options.one_node = true;
  const auto results = Simulate(
      ParseClaimTemplates(alone + "---\n" + alone + "---\n" +
                          ClaimTemplate("share", "      requests:\n" +
                                                     ExactRequest("nic", "dranet.net", 1,
                                                                  R"(device.allowMultipleAllocations)"))),
      devices, {}, options);
  ASSERT_TRUE(results[0].allocated);
  EXPECT_EQ(results[0].pod.netdevs, std::vector<std::string>{"gpu1rdma0"});
  EXPECT_FALSE(results[1].allocated);
  ASSERT_TRUE(results[2].allocated) << Joined(results[2].problems);
  EXPECT_TRUE(results[2].pod.netdevs.empty());
  EXPECT_EQ(results[2].pod.child_parents, std::vector<std::string>{"gpu0rdma0"});
  EXPECT_EQ(results[2].pod.env.at("NCCL_IB_HCA"), "=mlx5_0");
}

}  // namespace
}  // namespace dranet::simulate
