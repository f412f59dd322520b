#pragma once
// Test support for core/kubelet: claims and devices built in memory.
#include <string>
#include <vector>

#include "inventory/device.h"
#include "kube/resource_claim.h"

namespace dranet::kubelet::testing {

inline constexpr const char* kNode = "node-a";

// An IB-only NIC like the GB300 VFs: mlx5_<n>, uverbs<n>, umad<n>, issm<n>, rdma_cm.
inline inventory::Device IbDevice(int n) {
  inventory::Device d;
  d.name = "pci-010" + std::to_string(n + 1) + "-00-00-0";
  d.rdma_device = "mlx5_" + std::to_string(n);
  d.pci_address = "010" + std::to_string(n + 1) + ":00:00.0";
  const uint32_t minor = static_cast<uint32_t>(n);
  d.char_devices = {{"infiniband/issm" + std::to_string(n), 231, 64 + minor},
                    {"infiniband/rdma_cm", 10, 58},
                    {"infiniband/umad" + std::to_string(n), 231, minor},
                    {"infiniband/uverbs" + std::to_string(n), 231, 192 + minor}};
  return d;
}

// A RoCE NIC with a netdev.
inline inventory::Device NetDevice(const std::string& if_name, int n) {
  auto d = IbDevice(n);
  d.name = "pci-0000-8" + std::to_string(n) + "-00-0";
  d.if_name = if_name;
  return d;
}

inline kube::ResourceClaim Claim(const std::string& name, const std::vector<std::string>& devices,
                                 const std::vector<std::string>& pods = {"pod-1"}) {
  kube::ResourceClaim c;
  c.namespace_name = "ml";
  c.name = name;
  c.uid = "uid-" + name;
  c.allocated = true;
  for (const auto& d : devices) c.results.push_back({"nic", "dra.net", kNode, d, "", false});
  for (const auto& p : pods) c.reserved_for.push_back({"", "pods", "pod-" + p, p});
  return c;
}

inline kube::OpaqueDeviceConfig Opaque(const std::string& json, const std::string& source = "FromClaim",
                                       std::vector<std::string> requests = {}) {
  return {source, std::move(requests), "dra.net", json};
}

}  // namespace dranet::kubelet::testing
