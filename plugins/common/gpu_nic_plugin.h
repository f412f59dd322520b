// plugins/common/gpu_nic_plugin.h — what the GPU vendor plugins (nvidia,
// amd) have in common: the per-NIC affinity attributes and the NCCL/RCCL
// HCA environment for a prepared claim.
//
// Header-only, C++17; depends on the SDK's C++ helper and pci_topology.h.
#ifndef DRANET_PLUGINS_COMMON_GPU_NIC_PLUGIN_H
#define DRANET_PLUGINS_COMMON_GPU_NIC_PLUGIN_H

#include <dranet/plugin.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "pci_topology.h"

namespace dranet::plugins::common {

// Publishes <domain>/nearestGpu (string BDF), <domain>/nearestGpuIndex (int)
// and <domain>/gpuLink (PIX|PXB|PHB|NODE|SYS) for a PCI network device.
// Devices without a PCI address (virtual netdevs) get nothing.
inline void AnnotateNearestGpu(const GpuAffinity& affinity, const std::string& sysfs_root,
                               const std::string& domain, const sdk::DeviceView& device,
                               sdk::AttrSink& sink) {
  std::string bdf = device.pci_address();
  if (bdf.empty()) return;
  auto nic = ReadPciFunction(sysfs_root, bdf);
  if (!nic) return;
  if (nic->numa_node < 0 && device.numa_node() >= 0) nic->numa_node = device.numa_node();
  auto match = affinity.Nearest(*nic);
  if (!match) return;
  sink.String(domain + "/nearestGpu", match->bus_id);
  sink.Int(domain + "/nearestGpuIndex", match->index);
  sink.String(domain + "/gpuLink", LinkClassName(match->link));
}

// The value of NCCL_IB_HCA (also read by RCCL) naming exactly the claim's
// RDMA devices: "=mlx5_0,mlx5_1" — the leading '=' makes NCCL match the
// names exactly instead of as prefixes (so mlx5_1 does not also select
// mlx5_10…). Empty when no device has an RDMA device.
inline std::string ExactHcaList(const sdk::InjectRequest& request) {
  std::vector<std::string> hcas;
  for (const auto& device : request.devices()) {
    std::string rdma = device.rdma_device();
    if (!rdma.empty() && std::find(hcas.begin(), hcas.end(), rdma) == hcas.end()) hcas.push_back(rdma);
  }
  if (hcas.empty()) return "";
  std::sort(hcas.begin(), hcas.end());
  std::string value = "=";
  for (std::size_t i = 0; i < hcas.size(); ++i) value += (i ? "," : "") + hcas[i];
  return value;
}

inline void InjectExactHcas(const sdk::InjectRequest& request, sdk::EditSink& sink) {
  std::string value = ExactHcaList(request);
  if (!value.empty()) sink.Env("NCCL_IB_HCA", value);
}

// GPUs among `functions` matching `is_gpu`, ascending by BDF.
template <typename Predicate>
std::vector<PciFunction> SelectFunctions(const std::vector<PciFunction>& functions, Predicate is_gpu) {
  std::vector<PciFunction> out;
  for (const auto& f : functions)
    if (is_gpu(f)) out.push_back(f);
  return out;
}

// The affinity table for `gpus` (in index order) against every network
// function among `functions`; logs "<what>: <bdf>,<bdf>…" once.
inline GpuAffinity MakeAffinity(const sdk::Host& host, const std::string& what, std::vector<PciFunction> gpus,
                                const std::vector<PciFunction>& functions) {
  std::string list;
  for (const auto& g : gpus) list += (list.empty() ? "" : ",") + g.bdf;
  host.Info(what + ": " + list);
  std::vector<PciFunction> nics;
  for (const auto& f : functions)
    if (IsNetworkFunction(f)) nics.push_back(f);
  return GpuAffinity(std::move(gpus), std::move(nics));
}

// The "auto" / "on" / "off" setting of a vendor management library (NVML,
// ROCm SMI) under config key `key`; anything else fails init clearly.
inline std::string VendorLibraryMode(const sdk::Host& host, const char* key) {
  std::string mode = host.Config(key, "auto");
  if (mode != "auto" && mode != "on" && mode != "off")
    throw sdk::Error(DRANET_ERR_INVALID_ARG,
                     std::string("configuration ") + key + "=\"" + mode + "\": expected auto, on or off");
  return mode;
}

}  // namespace dranet::plugins::common

#endif  // DRANET_PLUGINS_COMMON_GPU_NIC_PLUGIN_H
