// prepare_bench — NodePrepareResources latency, as kubelet sees it, for a claim with
// 8 IB-only NICs (budget, docs/architecture.md: p99 ≤ 10 ms with the fake API server on
// loopback).
//
// Path measured: fake kubelet → gRPC over the DRA unix socket → DraService → claim GET
// from the fake API server (loopback HTTP, UID check) → plan for 8 NICs (uverbs/umad/rdma_cm
// each) → checkpoint write (the claim's file: temp + fsync + rename, then fsync of the
// directory; concurrent prepares share one: group commit) → answer. Every prepare is of
// a fresh claim. `concurrency` callers prepare at the same time; each unprepares its claim
// after the answer (not timed), so about `concurrency` claims are prepared at any moment,
// besides `held` claims prepared before the run and held through it (a node whose pods
// hold many claims: a checkpoint write's cost must not grow with them).
//
// The state directory defaults to /dev/shm (tmpfs, like the default --state-dir
// /var/run/dranet); set DRANET_BENCH_STATE_DIR to measure another filesystem.
//
//   cmake --build build --target prepare_bench && build/bench/prepare_bench
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "base/log.h"
#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "kube/api_client.h"
#include "kube/resource_claim.h"
#include "kubelet/kubelet_plugin.h"
#include "state/checkpoint_store.h"

namespace {

using namespace dranet;
constexpr int kNics = 8;
constexpr int kPreparesPerCaller = 64;
constexpr const char* kNode = "bench-node";
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/bench/resourceclaims";

std::vector<inventory::Device> EightIbNics() {
  std::vector<inventory::Device> devices;
  for (int n = 0; n < kNics; ++n) {
    inventory::Device d;
    d.name = "pci-01" + std::to_string(10 + n) + "-00-00-0";
    d.rdma_device = "mlx5_" + std::to_string(n);
    const auto minor = static_cast<uint32_t>(n);
    d.char_devices = {{"infiniband/issm" + std::to_string(n), 231, 64 + minor},
                      {"infiniband/rdma_cm", 10, 58},
                      {"infiniband/umad" + std::to_string(n), 231, minor},
                      {"infiniband/uverbs" + std::to_string(n), 231, 192 + minor}};
    devices.push_back(std::move(d));
  }
  return devices;
}

std::string ClaimJson(const std::string& name, const std::vector<inventory::Device>& devices) {
  std::string results;
  for (const auto& d : devices)
    results += std::string(results.empty() ? "" : ",") + R"({"request":"nics","driver":"dra.net","pool":")" + kNode +
               R"(","device":")" + d.name + R"("})";
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
         R"(","namespace":"bench"},"status":{"allocation":{"devices":{"results":[)" + results +
         R"(]}},"reservedFor":[{"resource":"pods","name":"p","uid":"pod-)" + name + R"("}]}})";
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void BM_Prepare8IbNics(benchmark::State& state) {
  const int concurrency = static_cast<int>(state.range(0));
  const char* state_root = std::getenv("DRANET_BENCH_STATE_DIR");
  std::string pattern = (std::filesystem::path(state_root ? state_root : "/dev/shm") / "dranet-bench-XXXXXX").string();
  std::filesystem::path dir = ::mkdtemp(pattern.data());
  std::string kubelet_pattern = "/tmp/dranet-kb-XXXXXX";
  std::filesystem::path kubelet_root = ::mkdtemp(kubelet_pattern.data());

  std::ostringstream log_text;
  Logger log(log_text);
  fakes::FakeApiServer api;
  kube::ClusterConfig cluster;
  cluster.server = api.url();
  kube::ApiClient client(cluster, log);
  kube::ResourceClaimReader reader(client, log);
  state::CheckpointOptions state_options;
  state_options.state_dir = dir;
  state::CheckpointStore store(state_options, log);
  auto devices = std::make_shared<const std::vector<inventory::Device>>(EightIbNics());
  kubelet::KubeletPluginOptions options;
  options.node_name = kNode;
  options.kubelet_root_dir = kubelet_root;
  kubelet::KubeletPlugin plugin(options, [devices] { return devices; }, kubelet::ClaimLookupFrom(reader), store,
                                nullptr, log);
  plugin.Start();
  fakes::FakeKubeletOptions kubelet_options;
  kubelet_options.registry_dir = kubelet_root / "plugins_registry";
  fakes::FakeKubelet kubelet(kubelet_options);
  kubelet.Start();
  if (!kubelet.WaitForPlugin("dra.net", std::chrono::seconds(30))) {
    state.SkipWithError("plugin did not register");
    return;
  }

  // Claims held by other pods for the whole run.
  const int held = static_cast<int>(state.range(1));
  for (int i = 0; i < held; ++i) {
    const std::string name = "held-" + std::to_string(i);
    rapidjson::Document stored;
    stored.Parse(api.PutObject(kClaims, ClaimJson(name, *devices)).c_str());
    const fakes::KubeletClaim claim{"bench", name, stored["metadata"]["uid"].GetString()};
    if (!kubelet.Prepare("dra.net", fakes::DraApi::kV1, {claim}).at(claim.uid).error.empty()) {
      state.SkipWithError("a held claim did not prepare");
      return;
    }
  }

  std::vector<double> latencies;
  int round = 0;
  for (auto _ : state) {
    // Fresh claims for every caller (created before the clock matters).
    state.PauseTiming();
    std::vector<std::vector<fakes::KubeletClaim>> work(concurrency);
    for (int c = 0; c < concurrency; ++c)
      for (int i = 0; i < kPreparesPerCaller; ++i) {
        const std::string name = "c" + std::to_string(round) + "-" + std::to_string(c) + "-" + std::to_string(i);
        rapidjson::Document stored;
        stored.Parse(api.PutObject(kClaims, ClaimJson(name, *devices)).c_str());
        work[c].push_back({"bench", name, stored["metadata"]["uid"].GetString()});
      }
    ++round;
    state.ResumeTiming();
    std::vector<std::vector<double>> per_caller(concurrency);
    std::vector<std::thread> callers;
    for (int c = 0; c < concurrency; ++c)
      callers.emplace_back([&, c] {
        for (const auto& claim : work[c]) {
          const auto start = std::chrono::steady_clock::now();
          auto answer = kubelet.Prepare("dra.net", fakes::DraApi::kV1, {claim});
          per_caller[c].push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
          if (!answer.at(claim.uid).error.empty() || answer.at(claim.uid).devices.size() != kNics)
            std::abort();  // a benchmark of failures would be meaningless
          // The pod ends: the node holds about `concurrency` prepared claims, as a busy node does.
          kubelet.Unprepare("dra.net", fakes::DraApi::kV1, {claim});
        }
      });
    for (auto& t : callers) t.join();
    for (auto& v : per_caller) latencies.insert(latencies.end(), v.begin(), v.end());
  }
  state.counters["prepares"] = static_cast<double>(latencies.size());
  state.counters["p50_ms"] = Percentile(latencies, 0.50);
  state.counters["p99_ms"] = Percentile(latencies, 0.99);
  state.counters["max_ms"] = Percentile(latencies, 1.0);
  // Group commit: checkpoint writes per prepare+unprepare call (1 when
  // nothing shares a write).
  state.counters["writes_per_call"] =
      static_cast<double>(store.writes()) / static_cast<double>(std::max<uint64_t>(store.committed_mutations(), 1));
  kubelet.Stop();
  plugin.Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::remove_all(kubelet_root, ec);
}

BENCHMARK(BM_Prepare8IbNics)
    ->ArgNames({"concurrency", "held"})
    ->Args({1, 0})
    ->Args({8, 0})
    ->Args({32, 0})
    ->Args({8, 256})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
