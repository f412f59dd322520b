// The plugin host's share of publishing: one annotate pass of the fake
// plugin (a few attributes and one sysfs stat per device) over every device
// of a snapshot, as each rediscovery runs it: ABI device views, the worker
// hand-off with its per-device deadline, the attribute checks and owned
// domains, the tallies behind `dranetctl plugins`.
//
//   build/bench/plugin_annotate_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Measured (2-core VM, load 1.2, RelWithDebInfo): median wall time of a
// pass 155 us for a4-highgpu-8g's 9 devices, 6.8 ms for sriov-8pf-64vf's
// 520 (the fake reads two sysfs files per netdev in it).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/log.h"
#include "inventory/inventory.h"
#include "plugins/plugin_host.h"

namespace {

namespace fs = std::filesystem;

void BM_Annotate(benchmark::State& state, const char* snapshot) {
  const fs::path root = fs::path(DRANET_TEST_NODES_DIR) / snapshot;
  const fs::path dir = fs::temp_directory_path() / ("dranet-annotate-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(DRANET_FAKE_PLUGIN_DIR) / "dranet-plugin-fake.so", dir / "dranet-plugin-fake.so",
                fs::copy_options::overwrite_existing);
  dranet::plugins::PluginHostOptions options;
  options.plugin_dirs = {dir};
  options.host_root = root;
  options.require_root_owned = false;
  dranet::plugins::PluginHost host(options, dranet::NullLogger());
  dranet::inventory::DiscoveryOptions discovery;
  discovery.host_root = root;
  const auto discovered = dranet::inventory::Discoverer(discovery, dranet::NullLogger()).Discover();
  for (auto _ : state) {
    auto devices = discovered;
    host.Annotate(devices);
    benchmark::DoNotOptimize(devices.data());
  }
  state.counters["devices"] = static_cast<double>(discovered.size());
  state.counters["perDevice"] = benchmark::Counter(static_cast<double>(discovered.size()),
                                                   benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
  fs::remove_all(dir);
}

BENCHMARK_CAPTURE(BM_Annotate, a4_highgpu_8g, "a4-highgpu-8g")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Annotate, sriov_8pf_64vf, "sriov-8pf-64vf")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
