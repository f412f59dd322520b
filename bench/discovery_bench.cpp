// Discovery time on the bundled node snapshots (budget in docs/architecture.md:
// ≤ 5 ms for 8 NICs, ≤ 50 ms for 8 PFs + 512 VFs).
//
//   build/bench/discovery_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// BM_Discover keeps one Discoverer (the daemon's steady state: pci.ids is
// loaded once); BM_DiscoverCold pays the pci.ids load on every scan;
// BM_DiscoverLive scans the machine the bench runs on (host root "/", live
// rtnetlink), the path dranetd takes on a node.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "base/log.h"
#include "inventory/inventory.h"

#ifndef DRANET_TEST_NODES_DIR
#define DRANET_TEST_NODES_DIR "tests/nodes"
#endif

namespace {

using dranet::NullLogger;
using dranet::inventory::DiscoveryOptions;
using dranet::inventory::Discoverer;

DiscoveryOptions OptionsFor(const char* snapshot) {
  DiscoveryOptions options;
  options.host_root = std::filesystem::path(DRANET_TEST_NODES_DIR) / snapshot;
  options.skip_ipoib = true;
  return options;
}

void BM_Discover(benchmark::State& state, const char* snapshot) {
  Discoverer discoverer(OptionsFor(snapshot), NullLogger());
  std::size_t devices = discoverer.Discover().size();  // warm pci.ids and the page cache
  for (auto _ : state) {
    auto found = discoverer.Discover();
    benchmark::DoNotOptimize(found.data());
  }
  state.counters["devices"] = static_cast<double>(devices);
}

void BM_DiscoverLive(benchmark::State& state) {
  Discoverer discoverer(DiscoveryOptions{}, NullLogger());
  std::size_t devices = discoverer.Discover().size();
  for (auto _ : state) {
    auto found = discoverer.Discover();
    benchmark::DoNotOptimize(found.data());
  }
  state.counters["devices"] = static_cast<double>(devices);
}

void BM_DiscoverCold(benchmark::State& state, const char* snapshot) {
  for (auto _ : state) {
    auto found = dranet::inventory::Discover(OptionsFor(snapshot), NullLogger());
    benchmark::DoNotOptimize(found.data());
  }
}

BENCHMARK_CAPTURE(BM_Discover, nd_gb300_v6, "nd-gb300-v6")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Discover, nd_mi300x_v5, "nd-mi300x-v5")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Discover, a4_highgpu_8g, "a4-highgpu-8g")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Discover, sriov_8pf_64vf, "sriov-8pf-64vf")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DiscoverCold, a4_highgpu_8g, "a4-highgpu-8g")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DiscoverLive)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
