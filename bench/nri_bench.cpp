// NRI hook costs (budgets: docs/architecture.md):
//   CreateContainer      p99 ≤ 1 ms — the plugin's handler alone, and the full round trip
//                        from the fake runtime over the unix socket (ttRPC + mux both ways).
//   RunPodSandbox        ≤ 1 ms + N × (kernel netns move) — N veths moved into a pod netns
//                        with rename, MTU 8896, a /32 and a route each; the kernel's own
//                        move cost (one bare RTM_NEWLINK with IFLA_NET_NS_FD) is measured in
//                        the same run. Needs root; skipped otherwise.
// Run: build-nri/bench/nri_bench   (as root for RunPodSandbox). Counters: p50_us/p99_us of
// the hook; for RunPodSandbox also bare_N_moves_p50_us (kernel), over_bare_p50_us, and
// own_p50_us/own_p99_us = hook time minus the move RTM_NEWLINKs inside the same call.
#include <benchmark/benchmark.h>
#include <netlink/route/link.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "fake_nri_runtime.h"
#include "inject/netlink_socket.h"
#include "inject/netns_mover.h"
#include "memory_prepared_claims.h"
#include "nri/nri_plugin.h"

namespace {

using namespace std::chrono_literals;
using dranet::testing::FakeNriRuntime;
using dranet::testing::MemoryPreparedClaims;
namespace api = dranet::testing::api;
using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void Report(benchmark::State& state, const std::vector<double>& us) {
  state.counters["p50_us"] = Percentile(us, 0.50);
  state.counters["p99_us"] = Percentile(us, 0.99);
  state.counters["max_us"] = Percentile(us, 1.0);
}

dranet::inject::ClaimPlan Gb300Plan(const std::string& pod_uid) {
  dranet::inject::ClaimPlan plan;
  plan.claim_uid = "bench-claim-gb300";
  plan.pod_uids = {pod_uid};
  plan.device_nodes = {{"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs0", 231, 192},
                       {"/dev/infiniband/umad0", "/dev/infiniband/umad0", 231, 0},
                       {"/dev/infiniband/rdma_cm", "/dev/infiniband/rdma_cm", 10, 58}};
  plan.env = {{"NCCL_IB_HCA", "=mlx5_0"}, {"NCCL_IB_GID_INDEX", "3"}};
  return plan;
}

class NoNetdevs : public dranet::inject::PodNetnsApplier {
 public:
  void AttachNetdevs(const dranet::inject::PodSandboxRef&, const std::vector<dranet::inject::ClaimPlan>&) override {}
  void DetachNetdevs(const dranet::inject::PodSandboxRef&, const std::vector<dranet::inject::ClaimPlan>&) override {}
};

void BM_CreateContainer_Handler(benchmark::State& state) {
  std::ostringstream sink;
  dranet::Logger log(sink);
  MemoryPreparedClaims claims;
  // A busy node: 64 prepared claims, the pod has one of them.
  for (int i = 0; i < 64; ++i) {
    auto p = Gb300Plan("other-" + std::to_string(i));
    p.claim_uid += std::to_string(i);
    claims.Put({p});
  }
  claims.Put({Gb300Plan("pod-uid")});
  NoNetdevs applier;
  dranet::nri::PluginService service(claims, applier, log);
  const auto pod = FakeNriRuntime::MakePod("pod-uid", "ml", "train-0", "/var/run/netns/cni-x");
  const auto container = FakeNriRuntime::MakeContainer(pod, "main", {"A=1"});
  dranet::nri::RpcRequest request{"nri.pkg.api.v1alpha1.Plugin", "CreateContainer", {}, 0};
  {
    api::CreateContainerRequest req;
    *req.mutable_pod() = pod;
    *req.mutable_container() = container;
    request.payload = req.SerializeAsString();
  }
  std::vector<double> us;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto reply = service.Handle(request);
    benchmark::DoNotOptimize(reply);
    us.push_back(Micros(Clock::now() - start));
  }
  Report(state, us);
}
BENCHMARK(BM_CreateContainer_Handler)->Iterations(5000);

void BM_CreateContainer_RoundTrip(benchmark::State& state) {
  std::ostringstream sink;
  dranet::Logger log(sink);
  const auto dir = std::filesystem::temp_directory_path() / ("dranet-nri-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  MemoryPreparedClaims claims;
  claims.Put({Gb300Plan("pod-uid")});
  NoNetdevs applier;
  FakeNriRuntime runtime({(dir / "nri.sock").string()});
  runtime.Listen();
  dranet::nri::NriPluginOptions plugin_options;
  plugin_options.socket_path = (dir / "nri.sock").string();
  dranet::nri::NriPlugin plugin(plugin_options, claims, applier, log);
  plugin.Start();
  if (!runtime.AcceptPlugin(10s)) {
    state.SkipWithError("plugin did not connect");
    return;
  }
  const auto pod = FakeNriRuntime::MakePod("pod-uid", "ml", "train-0", "/var/run/netns/cni-x");
  const auto container = FakeNriRuntime::MakeContainer(pod, "main", {"A=1"});
  std::vector<double> us;
  for (auto _ : state) {
    api::ContainerAdjustment adjust;
    const auto start = Clock::now();
    const auto status = runtime.CreateContainer(pod, container, &adjust);
    us.push_back(Micros(Clock::now() - start));
    if (!status.ok() || adjust.linux().devices_size() != 3) state.SkipWithError("bad adjustment");
  }
  Report(state, us);
  plugin.Stop();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CreateContainer_RoundTrip)->Iterations(5000);

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// N veths + a pod netns, removed at scope exit.
struct VethPod {
  std::string netns;
  std::vector<std::string> hosts;
  explicit VethPod(int n) {
    const std::string id = std::to_string(::getpid() % 100000);
    netns = "dnbench" + id;
    Sh("ip netns add " + netns);
    for (int i = 0; i < n; ++i) {
      const std::string host = "dnb" + std::to_string(i) + "h" + id;
      Sh("ip link add " + host + " type veth peer name dnb" + std::to_string(i) + "p" + id);
      Sh("ip addr add 10.233." + std::to_string(i) + ".2/32 dev " + host);
      Sh("ip link set " + host + " up");
      hosts.push_back(host);
    }
  }
  ~VethPod() {
    for (const auto& h : hosts) Sh("ip link del " + h);
    Sh("ip netns del " + netns);
  }
};

// The kernel's own cost: one bare RTM_NEWLINK with IFLA_NET_NS_FD per
// device (moves only, no rename/MTU/addresses), timed; then everything goes
// back untimed.
class KernelMove {
 public:
  explicit KernelMove(const VethPod& pod)
      : pod_(pod),
        host_ns_(dranet::inject::OpenNetns("/proc/self/ns/net")),
        pod_ns_(dranet::inject::OpenNetns("/var/run/netns/" + pod.netns)),
        host_sock_(dranet::inject::NetlinkSocketIn(host_ns_, NETLINK_ROUTE)),
        pod_sock_(dranet::inject::NetlinkSocketIn(pod_ns_, NETLINK_ROUTE)) {}

  // Microseconds spent in the N moves into the pod; negative on failure.
  double MoveAllIn() {
    double total = 0;
    for (const auto& host : pod_.hosts) {
      const double t = Move(host_sock_.get(), host, pod_ns_);
      if (t < 0) return -1;
      total += t;
    }
    for (const auto& host : pod_.hosts) {
      if (Move(pod_sock_.get(), host, host_ns_) < 0) return -1;
      Sh("ip link set " + host + " up");
    }
    return total;
  }

 private:
  static double Move(nl_sock* sock, const std::string& name, const dranet::inject::NetnsHandle& to) {
    rtnl_link* link = nullptr;
    if (rtnl_link_get_kernel(sock, 0, name.c_str(), &link) < 0) return -1;
    rtnl_link* change = rtnl_link_alloc();
    rtnl_link_set_ns_fd(change, to.fd());
    const auto start = Clock::now();
    const int err = rtnl_link_change(sock, link, change, 0);
    const double us = Micros(Clock::now() - start);
    rtnl_link_put(link);
    rtnl_link_put(change);
    return err < 0 ? -1 : us;
  }

  const VethPod& pod_;
  dranet::inject::NetnsHandle host_ns_, pod_ns_;
  dranet::inject::NlSockPtr host_sock_, pod_sock_;
};

void BM_RunPodSandbox(benchmark::State& state) {
  if (::geteuid() != 0 || !Sh("ip -V")) {
    state.SkipWithError("needs root and the ip tool (real network namespaces)");
    return;
  }
  const int n = static_cast<int>(state.range(0));
  VethPod veths(n);
  KernelMove kernel(veths);
  std::ostringstream sink;
  dranet::Logger log(sink);
  MemoryPreparedClaims claims;
  dranet::inject::ClaimPlan plan;
  plan.claim_uid = "bench-claim-a4";
  plan.pod_uids = {"pod-a4"};
  for (int i = 0; i < n; ++i) {
    dranet::inject::NetdevPlan d;
    d.host_if_name = veths.hosts[static_cast<std::size_t>(i)];
    d.pod_if_name = "gpu" + std::to_string(i) + "rdma0";
    d.mtu = 8896;
    const std::string addr = "10.233." + std::to_string(i) + ".2/32";
    d.addresses = {addr};
    d.routes = {{"10.234." + std::to_string(i) + ".0/24", "", "", 0, 0}};
    d.host_state = {d.host_if_name, 1500, {addr}, {}, {}, {}, true, ""};
    plan.netdevs.push_back(d);
  }
  claims.Put({plan});
  dranet::inject::NetnsMover mover({}, log);
  dranet::nri::PluginService service(claims, mover, log);
  const auto pod = FakeNriRuntime::MakePod("pod-a4", "ml", "a4-0", "/var/run/netns/" + veths.netns);
  std::vector<double> us, kernel_us, overhead_us, inline_move_us, own_us;
  for (auto _ : state) {
    state.PauseTiming();
    const double bare = kernel.MoveAllIn();
    state.ResumeTiming();
    if (bare < 0) {
      state.SkipWithError("bare netns move failed");
      break;
    }
    const auto start = Clock::now();
    const auto status = service.RunPodSandbox(pod);
    const auto elapsed = Clock::now() - start;
    us.push_back(Micros(elapsed));
    kernel_us.push_back(bare);
    overhead_us.push_back(us.back() - bare);
    inline_move_us.push_back(Micros(mover.last_attach_move_time()));
    own_us.push_back(us.back() - inline_move_us.back());
    state.SetIterationTime(std::chrono::duration<double>(elapsed).count());
    if (!status.ok()) {
      state.SkipWithError(status.message.c_str());
      break;
    }
    service.StopPodSandbox(pod, false);
  }
  Report(state, us);
  // Per iteration: RunPodSandbox minus the N bare moves timed just before it
  // (noisy: each move waits for an RCU grace period), and minus the move
  // RTM_NEWLINKs inside the same call (what the hook adds on top of them).
  state.counters["bare_N_moves_p50_us"] = Percentile(kernel_us, 0.5);
  state.counters["over_bare_p50_us"] = Percentile(overhead_us, 0.5);
  state.counters["inline_moves_p50_us"] = Percentile(inline_move_us, 0.5);
  state.counters["own_p50_us"] = Percentile(own_us, 0.5);
  state.counters["own_p99_us"] = Percentile(own_us, 0.99);
  state.counters["budget_us"] = 1000 + Percentile(kernel_us, 0.5);
}
BENCHMARK(BM_RunPodSandbox)->Arg(1)->Arg(2)->Arg(8)->Iterations(30)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
