#pragma once
// Hand-built device lists of the supported node types (tests/nodes/; our NICs as the
// inventory reports them) and the GPU drivers' slices, for the simulate
// tests. GPU PCI addresses on A4 and MI300X are representative, not
// captured (none are published).
#include <string>
#include <vector>

#include "inventory/device.h"

namespace dranet::simulate::testing {

inline inventory::Device IbOnlyNic(int index, const std::string& domain, int64_t numa) {
  inventory::Device d;
  d.pci_address = domain + ":00:00.0";
  d.name = "pci-" + domain + "-00-00-0";
  d.rdma_device = "mlx5_" + std::to_string(index);
  d.numa_node = static_cast<int32_t>(numa);
  d.char_devices = {
      {"infiniband/uverbs" + std::to_string(index), 231, static_cast<uint32_t>(192 + index)},
      {"infiniband/umad" + std::to_string(index), 231, static_cast<uint32_t>(index)},
      {"infiniband/rdma_cm", 10, 58},
  };
  d.attributes = {
      {"dra.net/pciAddress", d.pci_address},
      {"dra.net/rdma", true},
      {"dra.net/rdmaDevice", d.rdma_device},
      {"dra.net/numaNode", numa},
      {"resource.kubernetes.io/numaNode", numa},
      {"dra.net/pciVendor", std::string("Mellanox Technologies")},
  };
  return d;
}

// ND GB300-v6: 4 IB-only VFs, mlx5_0/1 on NUMA 0, mlx5_2/3 on NUMA 1.
inline std::vector<inventory::Device> Gb300Nics(bool with_nearest_gpu = false) {
  std::vector<inventory::Device> nics;
  const char* gpus[] = {"0008:06:00.0", "0009:06:00.0", "0018:06:00.0", "0019:06:00.0"};
  for (int i = 0; i < 4; ++i) {
    nics.push_back(IbOnlyNic(i, "010" + std::to_string(i + 1), i < 2 ? 0 : 1));
    if (with_nearest_gpu) nics.back().attributes["nvidia.dra.net/nearestGpu"] = std::string(gpus[i]);
  }
  return nics;
}

// ND MI300X-v5: 8 IB-only VFs, mlx5_0..3 on NUMA 0, mlx5_4..7 on NUMA 1.
inline std::vector<inventory::Device> Mi300xNics() {
  std::vector<inventory::Device> nics;
  for (int i = 0; i < 8; ++i) nics.push_back(IbOnlyNic(i, "010" + std::to_string(i + 1), i < 4 ? 0 : 1));
  return nics;
}

// GKE A4: gpu0rdma0..gpu7rdma0 RoCE NICs (netdevs) plus the gVNIC eth1.
inline std::vector<inventory::Device> A4Nics() {
  std::vector<inventory::Device> nics;
  const char* buses[] = {"91", "92", "99", "9a", "c6", "c7", "c8", "cd"};
  for (int i = 0; i < 8; ++i) {
    inventory::Device d;
    d.pci_address = std::string("0000:") + buses[i] + ":00.0";
    d.name = std::string("pci-0000-") + buses[i] + "-00-0";
    d.if_name = "gpu" + std::to_string(i) + "rdma0";
    d.rdma_device = "mlx5_" + std::to_string(i);
    d.char_devices = {{"infiniband/uverbs" + std::to_string(i), 231, static_cast<uint32_t>(192 + i)},
                      {"infiniband/rdma_cm", 10, 58}};
    d.attributes = {
        {"dra.net/pciAddress", d.pci_address},
        {"dra.net/ifName", d.if_name},
        {"dra.net/rdma", true},
        {"dra.net/rdmaDevice", d.rdma_device},
        {"dra.net/mtu", int64_t{8896}},
        {"dra.net/numaNode", int64_t{i < 4 ? 0 : 1}},
        {"gce.dra.net/gpuIndex", int64_t{i}},
    };
    nics.push_back(std::move(d));
  }
  inventory::Device eth1;
  eth1.pci_address = "0000:06:00.0";
  eth1.name = "pci-0000-06-00-0";
  eth1.if_name = "eth1";
  eth1.attributes = {{"dra.net/pciAddress", eth1.pci_address},
                     {"dra.net/ifName", std::string("eth1")},
                     {"dra.net/rdma", false},
                     {"dra.net/numaNode", int64_t{0}}};
  nics.push_back(std::move(eth1));
  return nics;
}

// The NVIDIA GPU driver's slice on a GB300 node (DRANET's AKS GB300 example), plus the
// standard numaNode attribute where a driver publishes it.
inline std::string Gb300GpuSlices() {
  std::string yaml = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gb300-node-gpu.nvidia.com-abcde}
spec:
  driver: gpu.nvidia.com
  nodeName: gb300-node
  pool: {name: gb300-node, generation: 1, resourceSliceCount: 1}
  devices:
)";
  const char* domains[] = {"0008", "0009", "0018", "0019"};
  for (int i = 0; i < 4; ++i) {
    std::string d = domains[i];
    yaml += "  - name: gpu-" + std::to_string(i) + "\n" +
            "    attributes:\n"
            "      type: {string: gpu}\n"
            "      driverVersion: {version: 580.65.6}\n"
            "      resource.kubernetes.io/pciBusID: {string: \"" + d + ":06:00.0\"}\n" +
            "      resource.kubernetes.io/pcieRoot: {string: \"pci" + d + ":00\"}\n" +
            "      resource.kubernetes.io/numaNode: {int: " + std::to_string(i / 2) + "}\n" +
            "    capacity: {memory: {value: 288Gi}}\n";
  }
  return yaml;
}

// A ResourceClaimTemplate document named `name` whose devices section is
// `requests` (YAML indented for "devices:", i.e. starting with "requests:").
inline std::string ClaimTemplate(const std::string& name, const std::string& devices) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
         "}\nspec:\n  spec:\n    devices:\n" + devices;
}

// One request `name` of `device_class` with `count` and one selector (or none).
inline std::string ExactRequest(const std::string& name, const std::string& device_class, int count,
                                const std::string& selector = "", const std::string& extra = "") {
  std::string out = "      - name: " + name + "\n        exactly:\n          deviceClassName: " + device_class +
                    "\n          count: " + std::to_string(count) + "\n" + extra;
  if (!selector.empty()) out += "          selectors: [{cel: {expression: '" + selector + "'}}]\n";
  return out;
}

// The GB300 templates (packaging/examples/nd-gb300-v6): GPU gpu-0 plus a NIC request.
inline std::string Gb300Template(const std::string& name, const std::string& nic_selector, int count) {
  return ClaimTemplate(name, "      requests:\n" +
                                 ExactRequest("gpu", "gpu.nvidia.com", 1,
                                              R"(device.attributes["resource.kubernetes.io"].pciBusID == "0008:06:00.0")") +
                                 ExactRequest("nic", "dranet.net", count, nic_selector));
}

}  // namespace dranet::simulate::testing
