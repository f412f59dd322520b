// Discovery time on the bundled node snapshots (budget in docs/architecture.md:
// ≤ 5 ms for 8 NICs, ≤ 50 ms for 8 PFs + 512 VFs).
//
//   build/bench/discovery_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// BM_Discover keeps one Discoverer (the daemon's steady state: pci.ids is
// loaded once); BM_DiscoverCold pays the pci.ids load on every scan;
// BM_DiscoverLive scans the machine the bench runs on (host root "/", live
// rtnetlink), the path dranetd takes on a node.
//
// BM_DiscoverLiveNetlink/sriov_8pf_64vf (root only) reads the snapshot's
// sysfs but takes netdev facts from the kernel, as a node does: the bench
// moves into a network namespace of its own holding a dummy link for each of
// the snapshot's netdevs (ifb links: this kernel kind needs no module that
// minimal kernels lack), so the rtnetlink dump and the tc/tcx queries per
// link cover 520 links. BM_DiscoverLive runs before the move.
//
// DRANET_DISCOVERY_SNAPSHOTS (a comma-separated list of snapshot directories)
// adds a BM_Discover case per directory: bench/discovery_scale.sh uses it to
// show discovery growing linearly with the number of SR-IOV VFs.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/log.h"
#include "inventory/inventory.h"

#ifndef DRANET_TEST_NODES_DIR
#define DRANET_TEST_NODES_DIR "tests/nodes"
#endif

namespace {

using dranet::NullLogger;
using dranet::inventory::DiscoveryOptions;
using dranet::inventory::Discoverer;

// `snapshot`: a bundled snapshot's name, or a path to any snapshot.
DiscoveryOptions OptionsFor(const std::string& snapshot) {
  DiscoveryOptions options;
  options.host_root = std::filesystem::path(DRANET_TEST_NODES_DIR) / snapshot;
  options.skip_ipoib = true;
  return options;
}

void BM_DiscoverWith(benchmark::State& state, const DiscoveryOptions& options) {
  Discoverer discoverer(options, NullLogger());
  std::size_t devices = discoverer.Discover().size();  // warm pci.ids and the page cache
  for (auto _ : state) {
    auto found = discoverer.Discover();
    benchmark::DoNotOptimize(found.data());
  }
  state.counters["devices"] = static_cast<double>(devices);
}

void BM_Discover(benchmark::State& state, const std::string& snapshot) { BM_DiscoverWith(state, OptionsFor(snapshot)); }

void BM_DiscoverLive(benchmark::State& state) {
  Discoverer discoverer(DiscoveryOptions{}, NullLogger());
  std::size_t devices = discoverer.Discover().size();
  for (auto _ : state) {
    auto found = discoverer.Discover();
    benchmark::DoNotOptimize(found.data());
  }
  state.counters["devices"] = static_cast<double>(devices);
}

int MakeNamespaceWithLinksOf(const std::string& snapshot);

void BM_DiscoverLiveNetlink(benchmark::State& state, const std::string& snapshot) {
  static const int links = MakeNamespaceWithLinksOf(snapshot);
  int original = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (links < 0 || original < 0 || ::setns(links, CLONE_NEWNET) != 0) {
    state.SkipWithError("no network namespace with the snapshot's links (root and `ip` needed)");
    if (original >= 0) ::close(original);
    return;
  }
  DiscoveryOptions options = OptionsFor(snapshot);
  options.netlink_source = DiscoveryOptions::NetlinkSource::kLive;
  BM_DiscoverWith(state, options);
  if (::setns(original, CLONE_NEWNET) != 0) std::abort();
  ::close(original);
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

// A new network namespace holding an ifb link named after each netdev of
// `snapshot` (class/net): its fd, or -1 when not root or `ip` fails. The
// calling thread is back in its own namespace on return.
int MakeNamespaceWithLinksOf(const std::string& snapshot) {
  if (::geteuid() != 0) return -1;
  int original = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original < 0) return -1;
  if (::unshare(CLONE_NEWNET) != 0) {
    ::close(original);
    return -1;
  }
  bool made = false;
  if (FILE* ip = ::popen("ip -batch - >/dev/null 2>&1", "w")) {
    std::error_code error;
    auto netdevs = std::filesystem::path(DRANET_TEST_NODES_DIR) / snapshot / "sys/class/net";
    for (const auto& entry : std::filesystem::directory_iterator(netdevs, error)) {
      std::string name = entry.path().filename().string();
      if (name != "lo") std::fprintf(ip, "link add %s type ifb\nlink set %s up\n", name.c_str(), name.c_str());
    }
    made = ::pclose(ip) == 0 && !error;
  }
  int links = made ? ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC) : -1;
  if (::setns(original, CLONE_NEWNET) != 0) std::abort();  // the other cases must not run in it
  ::close(original);
  return links;
}

// The DRANET_DISCOVERY_SNAPSHOTS cases, named by their directory's name.
void RegisterListedSnapshots() {
  const char* list = std::getenv("DRANET_DISCOVERY_SNAPSHOTS");
  if (!list) return;
  std::string text(list);
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t comma = text.find(',', start);
    std::string path = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (path.empty()) continue;
    std::string absolute = std::filesystem::absolute(path).lexically_normal().string();
    std::string name = "BM_Discover/" + std::filesystem::path(absolute).filename().string();
    benchmark::RegisterBenchmark(name.c_str(), BM_Discover, absolute)->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterListedSnapshots();
  if (::geteuid() == 0) {
    benchmark::RegisterBenchmark("BM_DiscoverLiveNetlink/sriov_8pf_64vf", BM_DiscoverLiveNetlink,
                                 std::string("sriov-8pf-64vf"))
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
