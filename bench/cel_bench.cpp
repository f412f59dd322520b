// CEL evaluation cost: one compiled selector over many devices, and compile
// time. Reproduce: cmake --build build --target cel_bench && build/bench/cel_bench
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cel/cel.h"

namespace {

constexpr const char* kA4Selector =
    R"(device.attributes["dra.net"].rdma == true && device.attributes["dra.net"].ifName.startsWith("gpu") && )"
    R"(device.attributes["dra.net"].ifName.endsWith("rdma0") && )"
    R"(int(device.attributes["dra.net"].ifName.substring(3, 4)) < 2)";

std::vector<dranet::inventory::Device> Devices(int n) {
  std::vector<dranet::inventory::Device> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& d = out[static_cast<std::size_t>(i)];
    d.name = "dev" + std::to_string(i);
    d.attributes = {{"dra.net/ifName", "gpu" + std::to_string(i % 8) + "rdma0"},
                    {"dra.net/rdma", true},
                    {"dra.net/type", std::string(i % 2 ? "device" : "veth")},
                    {"dra.net/numaNode", int64_t{i % 2}}};
  }
  return out;
}

void BM_EvaluateA4Selector(benchmark::State& state) {
  auto devices = Devices(static_cast<int>(state.range(0)));
  dranet::cel::Program p = dranet::cel::Compile(kA4Selector);
  for (auto _ : state) {
    int matched = 0;
    for (const auto& d : devices) matched += p.Evaluate(dranet::cel::ViewOf(d)).matched ? 1 : 0;
    benchmark::DoNotOptimize(matched);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_EvaluateA4Selector)->Arg(8)->Arg(512);

void BM_DranetDefaultFilter(benchmark::State& state) {
  auto devices = Devices(static_cast<int>(state.range(0)));
  dranet::cel::Environment env;
  env.dialect = dranet::cel::Dialect::kDranetFilter;
  dranet::cel::Program p = dranet::cel::Compile(dranet::cel::kDranetDefaultFilter, env);
  for (auto _ : state) {
    int kept = 0;
    for (const auto& d : devices) kept += dranet::cel::FilterKeeps(p, d) ? 1 : 0;
    benchmark::DoNotOptimize(kept);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DranetDefaultFilter)->Arg(512);

void BM_CompileA4Selector(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(dranet::cel::Compile(kA4Selector));
}
BENCHMARK(BM_CompileA4Selector);

}  // namespace

BENCHMARK_MAIN();
