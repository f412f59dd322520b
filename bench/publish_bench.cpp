// bench/publish_bench.cpp — the CPU cost of turning an inventory into ResourceSlice JSON.
//   cmake --build build --target publish_bench && build/bench/publish_bench
// 8 devices: a GPU node's NICs (ND GB300-v6, A4); 520: 8 PFs + 512 SR-IOV VFs (5 slices).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/log.h"
#include "kube/resource_slice.h"

namespace {

std::vector<dranet::inventory::Device> NodeInventory(int count) {
  std::vector<dranet::inventory::Device> devices;
  for (int i = 0; i < count; ++i) {
    dranet::inventory::Device device;
    char name[32];
    std::snprintf(name, sizeof name, "pci-0000-%02x-%02x-%d", 0x10 + i / 64, (i / 8) % 8, i % 8);
    device.name = name;
    auto& a = device.attributes;
    a["dra.net/pciAddress"] = std::string(name + 4);
    a["dra.net/pciVendor"] = std::string("Mellanox Technologies");
    a["dra.net/pciDevice"] = std::string("ConnectX Family mlx5Gen Virtual Function");
    a["dra.net/pciSubsystem"] = std::string("0240");
    a["dra.net/numaNode"] = int64_t{i % 2};
    a["resource.kubernetes.io/pcieRoot"] = std::string("pci0000:") + std::to_string(i % 4);
    a["dra.net/ifName"] = "ib" + std::to_string(i);
    a["dra.net/mac"] = std::string("00:00:00:00:fe:80:00:00:00:00:00:00:00:00:00:01:02:03:04:05");
    a["dra.net/mtu"] = int64_t{4092};
    a["dra.net/rdma"] = true;
    a["dra.net/rdmaDevice"] = "mlx5_" + std::to_string(i);
    a["dra.net/sriov"] = false;
    a["dra.net/virtual"] = false;
    a["azure.dra.net/vmSize"] = std::string("Standard_ND128isr_GB300_v6");
    a["azure.dra.net/placementGroupId"] = std::string("c6c749e8-a38b-470e-8c94-2a7d00001bf0");
    devices.push_back(std::move(device));
  }
  return devices;
}

void BM_BuildAndRenderSlices(benchmark::State& state) {
  auto devices = NodeInventory(static_cast<int>(state.range(0)));
  dranet::kube::SliceParams params;
  params.node_name = "aks-gpu-45139532-vmss000081";
  params.node_uid = "00c21858-0000-4000-8000-000000000001";
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto slices = dranet::kube::BuildSlices(params, devices, dranet::NullLogger());
    bytes = 0;
    for (const auto& slice : slices) bytes += dranet::kube::SliceToJson(slice).size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["json_bytes"] = static_cast<double>(bytes);
  state.counters["devices/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BuildAndRenderSlices)->Arg(8)->Arg(520)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
