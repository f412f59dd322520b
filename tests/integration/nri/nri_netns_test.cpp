// Root tests: the NRI plugin with the real NetnsMover, driven by the fake
// runtime over a real unix socket, moving real veth devices between the
// host and a pod network namespace. Skipped when not root or without `ip`.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <thread>

#include "fake_nri_runtime.h"
#include "inject/netns_mover.h"
#include "memory_prepared_claims.h"
#include "nri/nri_plugin.h"
#include "nri_test_env.h"
#include "shell_command.h"

namespace dranet::testing {
namespace {

using namespace std::chrono_literals;


// Two veths standing in for A4's gpu0rdma0/gpu1rdma0, each with a /32
// address and a link route on the host, and a pod netns.
class NriNetnsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!Ok("ip -V")) GTEST_SKIP() << "needs the ip tool";
    static int counter = 0;
    const std::string id = std::to_string(::getpid() % 100000) + "x" + std::to_string(counter++);
    netns_ = "dnpod" + id;
    for (int i = 0; i < 2; ++i) {
      Dev d;
      d.host = "dn" + std::to_string(i) + "r" + id;
      d.peer = "dn" + std::to_string(i) + "p" + id;
      d.pod = "gpu" + std::to_string(i) + "rdma0";
      const int octet = 10 + (::getpid() + counter * 2 + i) % 200;
      d.address = "10.231." + std::to_string(octet) + ".2/32";
      d.route = "10.232." + std::to_string(octet) + ".0/24";
      devs_.push_back(d);
    }
    ASSERT_TRUE(Ok("ip netns add " + netns_));
    for (const auto& d : devs_) {
      ASSERT_TRUE(Ok("ip link add " + d.host + " type veth peer name " + d.peer));
      ASSERT_TRUE(Ok("ip addr add " + d.address + " dev " + d.host));
      ASSERT_TRUE(Ok("ip link set " + d.host + " up"));
      ASSERT_TRUE(Ok("ip route add " + d.route + " dev " + d.host));
    }
    for (auto& d : devs_) {
      d.mac = Capture("cat /sys/class/net/" + d.host + "/address");
      while (!d.mac.empty() && d.mac.back() == '\n') d.mac.pop_back();
    }
    pod_ = FakeNriRuntime::MakePod("a4pod-" + id, "ml", "a4-train-0", "/var/run/netns/" + netns_);

    inject::ClaimPlan plan;
    plan.claim_uid = "claim-a4-" + id;
    plan.claim_namespace = "ml";
    plan.claim_name = "a4-2nic-aligned";
    plan.pod_uids = {pod_.uid()};
    for (const auto& d : devs_) {
      inject::NetdevPlan n;
      n.device_name = "pci-0000-c0-00-0";
      n.host_if_name = d.host;
      n.pod_if_name = d.pod;
      n.mtu = 8896;
      n.addresses = {d.address};
      n.routes = {{d.route, "", "", 0, 0}};
      n.host_state = {d.host, 1500, {d.address}, {{d.route, "", "", 0, 0}}, {}, {}, true, d.mac, {}};
      plan.netdevs.push_back(n);
    }
    claims_.Put({plan});

    FakeNriRuntime::Options ropts;
    ropts.socket_path = dir_.path() + "/nri.sock";
    ropts.state_change_only = GetParam();
    runtime_ = std::make_unique<FakeNriRuntime>(ropts);
    runtime_->Listen();
    mover_ = std::make_unique<inject::NetnsMover>(inject::NetnsMover::Options{}, log_);
    nri::NriPluginOptions popts;
    popts.socket_path = ropts.socket_path;
    popts.initial_backoff = 5ms;
    plugin_ = std::make_unique<nri::NriPlugin>(popts, claims_, *mover_, log_);
    plugin_->Start();
    ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  }

  void TearDown() override {
    if (plugin_) plugin_->Stop();
    for (const auto& d : devs_) {
      Ok("ip link del " + d.host);
      Ok("ip link del " + d.pod);  // returned under its pod name, if ever
    }
    if (!netns_.empty()) Ok("ip netns del " + netns_);
  }

  // dranetd killed and started again: a new mover (nothing held) and
  // plugin; the runtime lists `running` at Synchronize.
  void RestartDaemon(const std::vector<api::PodSandbox>& running) {
    plugin_->Stop();
    plugin_.reset();
    mover_ = std::make_unique<inject::NetnsMover>(inject::NetnsMover::Options{}, log_);
    nri::NriPluginOptions popts;
    popts.socket_path = dir_.path() + "/nri.sock";
    popts.initial_backoff = 5ms;
    popts.netns_check_period = 20ms;
    runtime_->SetExistingPods(running);
    runtime_->Restart();
    plugin_ = std::make_unique<nri::NriPlugin>(popts, claims_, *mover_, log_);
    plugin_->Start();
    ASSERT_TRUE(runtime_->AcceptPlugin(10s)) << runtime_->last_error();
  }

  // The same pod in a new sandbox, its namespace `netns`.
  api::PodSandbox InNetns(const std::string& netns) {
    auto recreated = pod_;
    for (auto& ns : *recreated.mutable_linux()->mutable_namespaces())
      if (ns.type() == "network") ns.set_path("/var/run/netns/" + netns);
    return recreated;
  }

  // Every netdev back on the host with its address, polled until `limit`.
  bool AllHomeWithin(std::chrono::milliseconds limit) {
    auto all_home = [&] {
      for (const auto& d : devs_)
        if (!Contains(Host("-o addr show dev " + d.host), "inet " + d.address)) return false;
      return true;
    };
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!all_home() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
    return all_home();
  }

  std::string Host(const std::string& args) { return Capture("ip " + args); }
  std::string Pod(const std::string& args) { return Capture("ip -n " + netns_ + " " + args); }

  struct Dev {
    std::string host, peer, pod, address, route, mac;
  };
  std::vector<Dev> devs_;
  std::string netns_;
  TempDir dir_;
  std::ostringstream log_out_;
  Logger log_{log_out_};
  MemoryPreparedClaims claims_;
  api::PodSandbox pod_;
  std::unique_ptr<FakeNriRuntime> runtime_;
  std::unique_ptr<inject::NetnsMover> mover_;
  std::unique_ptr<nri::NriPlugin> plugin_;
};

TEST_P(NriNetnsTest, A4NetdevsMoveIntoThePodAndComeBackIntact) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  EXPECT_EQ(runtime_->last_pod_event_method(), GetParam() ? "StateChange" : "RunPodSandbox");
  for (const auto& d : devs_) {
    EXPECT_FALSE(Ok("ip link show " + d.host)) << d.host << " still on the host";
    const auto link = Pod("-o link show " + d.pod);
    EXPECT_TRUE(Contains(link, "mtu 8896")) << link;
    EXPECT_TRUE(Contains(link, ",UP")) << link;
    EXPECT_TRUE(Contains(Pod("-o addr show dev " + d.pod), "inet " + d.address)) << Pod("-o addr show");
    EXPECT_TRUE(Contains(Pod("route show dev " + d.pod), d.route.substr(0, d.route.find('/')))) << Pod("route");
  }
  // A retried RunPodSandbox changes nothing and succeeds.
  const auto before = Pod("-o addr show");
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  EXPECT_EQ(Pod("-o addr show"), before);

  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
  for (const auto& d : devs_) {
    EXPECT_FALSE(Ok("ip -n " + netns_ + " link show " + d.pod)) << d.pod << " still in the pod";
    const auto link = Host("-o link show " + d.host);
    EXPECT_TRUE(Contains(link, "mtu 1500")) << link;
    EXPECT_TRUE(Contains(link, ",UP")) << link;
    EXPECT_TRUE(Contains(Host("-o addr show dev " + d.host), "inet " + d.address)) << Host("-o addr show dev " + d.host);
    EXPECT_TRUE(Contains(Host("route show dev " + d.host), d.route.substr(0, d.route.find('/'))));
  }
  // Stop again (runtime retry) and Remove: no-ops.
  std::string host_state;
  for (const auto& d : devs_) host_state += Host("-o link show " + d.host) + Host("-o addr show dev " + d.host);
  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
  ASSERT_TRUE(runtime_->RemovePodSandbox(pod_).ok());
  std::string host_state_after;
  for (const auto& d : devs_) host_state_after += Host("-o link show " + d.host) + Host("-o addr show dev " + d.host);
  EXPECT_EQ(host_state_after, host_state);
  EXPECT_EQ(log_out_.str().find("netdev not restored"), std::string::npos) << log_out_.str();
}

TEST_P(NriNetnsTest, StopWithoutNetnsPathUsesTheOneFromRunPodSandbox) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  auto stopped = pod_;
  stopped.mutable_linux()->clear_namespaces();
  ASSERT_TRUE(runtime_->StopPodSandbox(stopped).ok());
  for (const auto& d : devs_) EXPECT_TRUE(Ok("ip link show " + d.host)) << d.host << " not back";
}

TEST_P(NriNetnsTest, MissingNetdevFailsTheSandboxNamingIt) {
  Ok("ip link del " + devs_[1].host);
  const auto status = runtime_->RunPodSandbox(pod_);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message, devs_[1].host)) << status.message;
  EXPECT_TRUE(Contains(status.message, "ml/a4-2nic-aligned")) << status.message;
}

TEST_P(NriNetnsTest, DeviceReturnedUnderItsPodNameIsRenamedAndRestored) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  // What the kernel does to a physical netdev when the pod netns dies first:
  // back to the host, down, still under its pod name, addresses gone.
  for (const auto& d : devs_) ASSERT_TRUE(Ok("ip -n " + netns_ + " link set " + d.pod + " netns 1"));
  ASSERT_TRUE(Ok("ip netns del " + netns_));
  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
  for (const auto& d : devs_) {
    EXPECT_FALSE(Ok("ip link show " + d.pod)) << d.pod << " kept its pod name";
    const auto link = Host("-o link show " + d.host);
    EXPECT_TRUE(Contains(link, "mtu 1500")) << link;
    EXPECT_TRUE(Contains(link, ",UP")) << link;
    EXPECT_TRUE(Contains(Host("-o addr show dev " + d.host), "inet " + d.address));
    EXPECT_TRUE(Contains(Host("route show dev " + d.host), d.route.substr(0, d.route.find('/'))));
  }
}

// containerd 1.7 after a restart: the pod is deleted, its namespace
// unmounted, and no Stop/RemovePodSandbox arrives. The mover kept the
// namespace open, so the veths were not destroyed with it (their host-side
// peers still exist), and the periodic check brings them home intact.
TEST_P(NriNetnsTest, NamespaceDeletedWithoutStopGivesTheNetdevsBack) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  EXPECT_EQ(mover_->held_pods(), 1u);
  EXPECT_TRUE(mover_->HoldsPods());
  ASSERT_TRUE(Ok("ip netns del " + netns_));
  for (const auto& d : devs_) EXPECT_TRUE(Ok("ip link show " + d.peer)) << d.peer << " died with the namespace";
  ASSERT_TRUE(AllHomeWithin(20s)) << log_out_.str();
  for (const auto& d : devs_) {
    const auto link = Host("-o link show " + d.host);
    EXPECT_TRUE(Contains(link, "mtu 1500")) << link;
    EXPECT_TRUE(Contains(link, ",UP")) << link;
    EXPECT_TRUE(Contains(Host("route show dev " + d.host), d.route.substr(0, d.route.find('/'))));
  }
  EXPECT_EQ(mover_->held_pods(), 0u);
  EXPECT_FALSE(mover_->HoldsPods()) << "the namespace check can sleep again";
  EXPECT_TRUE(Contains(log_out_.str(), "its network namespace is gone")) << log_out_.str();
}

// The pod's namespace deleted and another made at the same path, with no
// Stop (docs/nri.md: "gone or names another namespace"): the path exists,
// but it is not the namespace the netdevs went into, so they come home, and
// nothing is moved into the new one.
TEST_P(NriNetnsTest, NamespaceRecreatedAtTheSamePathGivesTheNetdevsBack) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  ASSERT_TRUE(Ok("ip netns del " + netns_));
  ASSERT_TRUE(Ok("ip netns add " + netns_));
  ASSERT_TRUE(AllHomeWithin(20s)) << log_out_.str();
  for (const auto& d : devs_) EXPECT_FALSE(Ok("ip -n " + netns_ + " link show " + d.pod)) << d.pod;
  EXPECT_EQ(mover_->held_pods(), 0u);
  EXPECT_TRUE(Contains(log_out_.str(), "its network namespace is gone")) << log_out_.str();
}

// A runtime (or an attacker on its socket) naming dranetd's own namespace:
// refused before anything is applied, the host keeps exactly what it had.
TEST_P(NriNetnsTest, HostNamespaceAsThePodsIsRefused) {
  std::string before;
  for (const auto& d : devs_) before += Host("-o addr show dev " + d.host) + Host("route show dev " + d.host);
  auto pod = pod_;
  for (auto& ns : *pod.mutable_linux()->mutable_namespaces())
    if (ns.type() == "network") ns.set_path("/proc/self/ns/net");
  const auto status = runtime_->RunPodSandbox(pod);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message, "is the host's own")) << status.message;
  ASSERT_TRUE(runtime_->StopPodSandbox(pod).ok());
  std::string after;
  for (const auto& d : devs_) after += Host("-o addr show dev " + d.host) + Host("route show dev " + d.host);
  EXPECT_EQ(after, before);
}

// A FIFO where the namespace should be used to block the NRI connection
// thread in open() forever; it is refused at once.
TEST_P(NriNetnsTest, FifoAsNamespaceIsRefusedWithoutBlocking) {
  const std::string fifo = dir_.path() + "/netns-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto pod = pod_;
  for (auto& ns : *pod.mutable_linux()->mutable_namespaces())
    if (ns.type() == "network") ns.set_path(fifo);
  const auto status = runtime_->RunPodSandbox(pod);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message, "is not a network namespace")) << status.message;
  // The connection still serves: the real pod starts.
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
}

// interface.name naming an interface the pod already has (its eth0, lo):
// refused before anything moves; the pod keeps its own interface, the host
// its netdevs, and the Stop that follows moves nothing of the pod's out.
TEST_P(NriNetnsTest, NameThePodAlreadyUsesIsRefusedBeforeAnythingMoves) {
  ASSERT_TRUE(Ok("ip -n " + netns_ + " link add " + devs_[1].pod + " type veth peer name podpeer"));
  ASSERT_TRUE(Ok("ip -n " + netns_ + " addr add 10.99.0.1/24 dev " + devs_[1].pod));
  std::string host_before;
  for (const auto& d : devs_) host_before += Host("-o addr show dev " + d.host) + Host("route show dev " + d.host);
  const auto status = runtime_->RunPodSandbox(pod_);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message, "already has an interface named " + devs_[1].pod)) << status.message;
  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
  ASSERT_TRUE(runtime_->RemovePodSandbox(pod_).ok());
  std::string host_after;
  for (const auto& d : devs_) host_after += Host("-o addr show dev " + d.host) + Host("route show dev " + d.host);
  EXPECT_EQ(host_after, host_before);
  EXPECT_TRUE(Contains(Pod("-o addr show dev " + devs_[1].pod), "10.99.0.1/24")) << "the pod lost its own interface";
  EXPECT_FALSE(Ok("ip link show podpeer")) << "the pod's veth end reached the host";
}

// A failure part way (the second netdev is gone) moves the first one back:
// attach is all or nothing.
TEST_P(NriNetnsTest, FailedAttachMovesBackWhatItMoved) {
  Ok("ip link del " + devs_[1].host);
  const std::string before = Host("-o addr show dev " + devs_[0].host) + Host("route show dev " + devs_[0].host);
  ASSERT_FALSE(runtime_->RunPodSandbox(pod_).ok());
  EXPECT_FALSE(Ok("ip -n " + netns_ + " link show " + devs_[0].pod)) << "the first netdev stayed in the pod";
  EXPECT_EQ(Host("-o addr show dev " + devs_[0].host) + Host("route show dev " + devs_[0].host), before);
}

// The pod netns died with the netdevs inside and the kernel returned them
// under other names (devN when the host had the pod name): found by MAC,
// renamed and restored.
TEST_P(NriNetnsTest, NetdevReturnedUnderAnotherNameIsFoundByItsMac) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  int n = 0;
  for (const auto& d : devs_)
    ASSERT_TRUE(Ok("ip -n " + netns_ + " link set " + d.pod + " netns 1 name dnret" + std::to_string(n++)));
  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
  for (const auto& d : devs_) {
    EXPECT_TRUE(Contains(Host("-o addr show dev " + d.host), "inet " + d.address)) << log_out_.str();
    EXPECT_TRUE(Contains(Host("route show dev " + d.host), d.route.substr(0, d.route.find('/'))));
  }
  EXPECT_FALSE(Ok("ip link show dnret0"));
}

// Inside the pod another interface took the netdev's pod name: Stop takes
// the netdev (its MAC), never the pod's interface.
TEST_P(NriNetnsTest, PodInterfaceThatTookTheNameStaysInThePod) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  const auto& d = devs_[0];
  ASSERT_TRUE(Ok("ip -n " + netns_ + " link set " + d.pod + " down"));
  ASSERT_TRUE(Ok("ip -n " + netns_ + " link set " + d.pod + " name renamed0"));
  ASSERT_TRUE(Ok("ip -n " + netns_ + " link add " + d.pod + " type veth peer name podpeer0"));
  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
  EXPECT_TRUE(Contains(Host("-o addr show dev " + d.host), "inet " + d.address)) << log_out_.str();
  EXPECT_TRUE(Ok("ip -n " + netns_ + " link show " + d.pod)) << "the pod's interface was taken";
  EXPECT_FALSE(Ok("ip -n " + netns_ + " link show renamed0")) << "the netdev stayed in the pod";
}

// The runtime recreates the pod's sandbox (same pod UID, new namespace)
// without stopping the old one: the netdevs leave the old namespace for the
// new one instead of failing as "neither on the host nor in the pod".
TEST_P(NriNetnsTest, NewSandboxOfTheSamePodTakesTheNetdevsFromTheOldOne) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  const std::string second = netns_ + "b";
  ASSERT_TRUE(Ok("ip netns add " + second));
  const auto recreated = InNetns(second);
  const auto status = runtime_->RunPodSandbox(recreated);
  EXPECT_TRUE(status.ok()) << status.message << log_out_.str();
  for (const auto& d : devs_) {
    EXPECT_TRUE(Contains(Capture("ip -n " + second + " -o addr show dev " + d.pod), "inet " + d.address));
    EXPECT_FALSE(Ok("ip -n " + netns_ + " link show " + d.pod)) << d.pod << " stayed in the old sandbox";
  }
  EXPECT_EQ(mover_->held_pods(), 1u);
  ASSERT_TRUE(runtime_->StopPodSandbox(recreated).ok());
  for (const auto& d : devs_) EXPECT_TRUE(Contains(Host("-o addr show dev " + d.host), "inet " + d.address));
  Ok("ip netns del " + second);
}

// dranetd restarts while a pod holds netdevs: the new daemon learns the pod
// at Synchronize and keeps its namespace, so a later silent deletion of it
// (no Stop) still brings the netdevs home.
TEST_P(NriNetnsTest, RestartedDaemonAdoptsRunningPodsAtSynchronize) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  RestartDaemon({pod_});
  EXPECT_EQ(mover_->held_pods(), 1u) << log_out_.str();
  EXPECT_EQ(log_out_.str().find("moving them in"), std::string::npos) << "netdevs in the pod were taken as lacking";
  ASSERT_TRUE(Ok("ip netns del " + netns_));
  EXPECT_TRUE(AllHomeWithin(20s)) << log_out_.str();
}

// Every process of the node killed (dranetd among them, so nothing held the
// pod's namespace): the runtime removes the dead sandbox's namespace, and
// the kernel returns a physical netdev to the host down, under its pod
// name. The pod's new sandbox takes it by its MAC, and Stop brings it home
// under its own name.
TEST_P(NriNetnsTest, NewSandboxAfterACrashTakesTheNetdevTheKernelReturned) {
  ASSERT_TRUE(runtime_->RunPodSandbox(pod_).ok()) << log_out_.str();
  RestartDaemon({});
  for (const auto& d : devs_) ASSERT_TRUE(Ok("ip -n " + netns_ + " link set " + d.pod + " netns 1"));
  ASSERT_TRUE(Ok("ip netns del " + netns_));
  const std::string second = netns_ + "c";
  ASSERT_TRUE(Ok("ip netns add " + second));
  const auto recreated = InNetns(second);
  const auto status = runtime_->RunPodSandbox(recreated);
  EXPECT_TRUE(status.ok()) << status.message << log_out_.str();
  for (const auto& d : devs_) {
    EXPECT_FALSE(Ok("ip link show " + d.pod)) << d.pod << " stayed on the host";
    EXPECT_TRUE(Contains(Capture("ip -n " + second + " -o addr show dev " + d.pod), "inet " + d.address));
  }
  ASSERT_TRUE(runtime_->StopPodSandbox(recreated).ok());
  for (const auto& d : devs_) {
    EXPECT_TRUE(Contains(Host("-o addr show dev " + d.host), "inet " + d.address)) << log_out_.str();
    EXPECT_TRUE(Contains(Host("route show dev " + d.host), d.route.substr(0, d.route.find('/'))));
  }
  Ok("ip netns del " + second);
}

// The pod started while dranetd was away (a node restart: the runtime ran
// the sandbox before the plugin connected), so its netdevs are on the host.
// The daemon moves them in when it learns the pod at Synchronize, except
// one whose name the pod's own interface has.
TEST_P(NriNetnsTest, RestartedDaemonMovesInTheNetdevsARunningPodLacks) {
  const auto& taken = devs_[1];
  ASSERT_TRUE(Ok("ip -n " + netns_ + " link add " + taken.pod + " type veth peer name podown0"));
  RestartDaemon({pod_});
  const auto& d = devs_[0];
  EXPECT_FALSE(Ok("ip link show " + d.host)) << d.host << " stayed on the host\n" << log_out_.str();
  EXPECT_TRUE(Contains(Pod("-o addr show dev " + d.pod), "inet " + d.address)) << log_out_.str();
  EXPECT_TRUE(Contains(Pod("-o link show " + d.pod), "mtu 8896"));
  EXPECT_TRUE(Contains(Host("-o addr show dev " + taken.host), "inet " + taken.address)) << "moved over the pod's own interface";
  EXPECT_TRUE(Contains(Pod("-o link show " + taken.pod), "@podown0")) << "the pod's own interface was changed";
  EXPECT_TRUE(Contains(log_out_.str(), "left as they are")) << log_out_.str();
  ASSERT_TRUE(runtime_->StopPodSandbox(pod_).ok());
  EXPECT_TRUE(Contains(Host("-o addr show dev " + d.host), "inet " + d.address)) << log_out_.str();
}

INSTANTIATE_TEST_SUITE_P(Runtimes, NriNetnsTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "StateChangeOnly" : "Nri012"; });

}  // namespace
}  // namespace dranet::testing
