// What cloud detection costs dranetd's start on a node that is on no cloud:
// loading and initialising every in-tree plugin (the five cloud plugins
// probe DMI, nvidia and amd scan PCI) and the first annotate pass over the
// node's devices (where a cloud plugin would read its metadata service),
// with and without the cloud plugins, on the bare-metal snapshot. Every
// metadata request a plugin makes is counted (counter metadataRequests):
// on bare metal it must be 0, where DRANET probes five services in turn
// (~20 s).
//
//   build/bench/plugin_start_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Measured: see README.md "Performance" (cloud detection at start).
#include <benchmark/benchmark.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "base/log.h"
#include "inventory/inventory.h"
#include "plugins/plugin_host.h"

namespace {

namespace fs = std::filesystem;

void BM_PluginStart(benchmark::State& state, const char* snapshot, bool cloud_plugins) {
  const fs::path root = fs::path(DRANET_TEST_NODES_DIR) / snapshot;
  dranet::inventory::DiscoveryOptions discovery;
  discovery.host_root = root;
  const auto discovered = dranet::inventory::Discoverer(discovery, dranet::NullLogger()).Discover();
  std::atomic<int> requests{0};
  dranet::plugins::PluginHostOptions options;
  options.plugin_dirs = {DRANET_PLUGIN_BUILD_DIR};
  options.host_root = root;
  options.require_root_owned = false;
  options.config["nvidia"]["nvml"] = "off";  // the node's sysfs, not this machine's NVML
  options.config["amd"]["rocm-smi"] = "off";
  if (!cloud_plugins) options.deny = {"alibaba", "aws", "azure", "gcp", "oci"};
  options.http = [&requests](const dranet::plugins::HttpRequest&) {
    ++requests;
    return dranet::plugins::HttpResult{404, ""};
  };
  std::size_t loaded = 0;
  for (auto _ : state) {
    dranet::plugins::PluginHost host(options, dranet::NullLogger());
    auto devices = discovered;
    host.Annotate(devices);
    loaded = host.loaded_count();
    benchmark::DoNotOptimize(devices.data());
  }
  state.counters["pluginsLoaded"] = static_cast<double>(loaded);
  state.counters["metadataRequests"] = static_cast<double>(requests.load());
  state.counters["devices"] = static_cast<double>(discovered.size());
}

BENCHMARK_CAPTURE(BM_PluginStart, baremetal_with_cloud_plugins, "baremetal-2cx7", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PluginStart, baremetal_without_cloud_plugins, "baremetal-2cx7", false)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
