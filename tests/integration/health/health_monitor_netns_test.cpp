// HealthMonitor against the real kernel: a private "node" network namespace
// holding a veth whose peer sits in a "far" namespace (its carrier follows
// the peer), a pod namespace the veth moves into, and a snapshot-like tree
// whose RDMA port file changes. The recheck period is an hour, so every
// change seen here was seen through an event.
#include "health/health_monitor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "inject/netlink_socket.h"
#include "inject/netns.h"
#include "shell_command.h"

namespace dranet::health {
namespace {

using ::testing::HasSubstr;
using dranet::testing::Ok;
using namespace std::chrono_literals;

template <typename Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);  // polling a condition, not a fixed wait
  }
  return true;
}

class HealthMonitorNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!Ok("ip -V")) GTEST_SKIP() << "needs iproute2";
    const auto id = std::to_string(::getpid());
    node_ = "dnh-node-" + id;
    far_ = "dnh-far-" + id;
    pod_ = "dnh-pod-" + id;
    for (const auto& ns : {node_, far_, pod_}) ASSERT_TRUE(Ok("ip netns add " + ns)) << ns;
    ASSERT_TRUE(Ok("ip -n " + node_ + " link add nic0 type veth peer name peer0 netns " + far_));
    ASSERT_TRUE(Ok("ip -n " + node_ + " link set nic0 up && ip -n " + far_ + " link set peer0 up"));
    // The kernel reports a carrier change later (linkwatch, up to a second): wait for it, so
    // that no event of the set-up reaches a monitor the test starts.
    ASSERT_TRUE(WaitUntil([&] { return dranet::testing::Contains(dranet::testing::Capture("ip -n " + node_ + " -o link show nic0"), "state UP"); }));
    node_ns_ = inject::OpenNetns("/var/run/netns/" + node_);
    device_.name = "nic-0";
    device_.if_name = "nic0";
    // The carrier of a host netdev counts for a PCI function's only: the stand-in
    // borrows one of this machine's functions.
    for (const auto& entry : std::filesystem::directory_iterator("/sys/bus/pci/devices")) {
      device_.pci_address = entry.path().filename().string();
      break;
    }
    ASSERT_FALSE(device_.pci_address.empty()) << "this machine has no PCI function to lend the stand-in";
  }
  void TearDown() override {
    if (monitor_) monitor_->Stop();
    for (const auto& ns : {pod_, far_, node_})
      if (!ns.empty()) Ok("ip netns del " + ns);
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }

  void StartMonitor(const std::string& host_root = "/") {
    HealthMonitor::Options options;
    options.host_root = host_root;
    options.recheck_period = std::chrono::hours(1);
    auto socket = std::make_shared<inject::NlSockPtr>(inject::NetlinkSocketIn(node_ns_, NETLINK_ROUTE));
    monitor_ = std::make_unique<HealthMonitor>(
        options, [socket, this] { return inventory::ReadLinks(socket->get(), log_); },
        [this] {
          std::vector<inject::HeldNetdev> out;
          std::lock_guard lock(held_mu_);
          if (!held_) return out;
          inject::HeldNetdev h;
          h.device_name = "nic-0";
          h.host_if_name = "nic0";
          h.pod_if_name = "net1";
          h.pod = {"uid-1", "default", "p", "/var/run/netns/" + pod_};
          h.ns = inject::OpenNetns("/var/run/netns/" + pod_);
          out.push_back(std::move(h));
          return out;
        },
        log_);
    monitor_->SetTransitionObserver([this](const std::string&, Health, const Verdict&) { ++transitions_; });
    // The monitor's thread, and its event socket, belong to the node namespace.
    inject::RunInNetns(node_ns_, [this] { monitor_->Start(); });
  }

  // A snapshot-like root_ whose mlx5_0 has port 1 ACTIVE; returns the port's directory.
  std::filesystem::path SnapshotPort() {
    char dir_template[] = "/tmp/dranet-health-XXXXXX";
    EXPECT_NE(::mkdtemp(dir_template), nullptr);
    root_ = dir_template;
    const std::filesystem::path port = root_ + "/sys/class/infiniband/mlx5_0/ports/1";
    std::filesystem::create_directories(port);
    std::ofstream(port / "state") << "4: ACTIVE\n";
    return port;
  }

  Verdict VerdictOf(const std::string& device) const {
    for (const auto& d : monitor_->Current().devices)
      if (d.device == device) return d.verdict;
    return {Health::kUnknown, "not reported", ""};
  }
  bool Becomes(const std::string& device, Health health) {
    return WaitUntil([&] { return VerdictOf(device).health == health; });
  }

  std::string node_, far_, pod_, root_;
  inject::NetnsHandle node_ns_;
  inventory::Device device_;
  std::ostringstream log_text_;
  Logger log_{log_text_};
  std::mutex held_mu_;
  bool held_ = false;
  std::atomic<int> transitions_{0};
  std::unique_ptr<HealthMonitor> monitor_;
};

TEST_F(HealthMonitorNetnsTest, CarrierLostAndBackOnTheHost) {
  StartMonitor();
  monitor_->SetDevices({device_});
  ASSERT_TRUE(Becomes("nic-0", Health::kHealthy));
  ASSERT_TRUE(Ok("ip -n " + far_ + " link set peer0 down"));
  ASSERT_TRUE(Becomes("nic-0", Health::kUnhealthy)) << log_text_.str();
  EXPECT_THAT(VerdictOf("nic-0").message, HasSubstr("netdev nic0 on the host has no carrier"));
  ASSERT_TRUE(Ok("ip -n " + far_ + " link set peer0 up"));
  ASSERT_TRUE(Becomes("nic-0", Health::kHealthy)) << log_text_.str();
  EXPECT_EQ(transitions_.load(), 2);
}

TEST_F(HealthMonitorNetnsTest, TheHostsOtherLinksWakeNoCheck) {
  StartMonitor();
  monitor_->SetDevices({device_});
  ASSERT_TRUE(Becomes("nic-0", Health::kHealthy));
  ASSERT_TRUE(WaitUntil([&] { return monitor_->checks() >= 2; }));  // the first check and SetDevices'
  const auto checks = monitor_->checks();
  ASSERT_TRUE(Ok("ip -n " + node_ + " link add other0 type veth peer name other1"));
  ASSERT_TRUE(Ok("ip -n " + node_ + " link set other0 up && ip -n " + node_ + " link del other0"));
  ASSERT_TRUE(WaitUntil([&] { return monitor_->link_events_ignored() >= 1; }));
  EXPECT_EQ(monitor_->checks(), checks) << log_text_.str();
  // A report of the device's own link still wakes one.
  ASSERT_TRUE(Ok("ip -n " + node_ + " link set nic0 mtu 1400"));
  EXPECT_TRUE(WaitUntil([&] { return monitor_->checks() > checks; }));
}

TEST_F(HealthMonitorNetnsTest, ANetdevInAPodIsWatchedThere) {
  StartMonitor();
  monitor_->SetDevices({device_});
  ASSERT_TRUE(Becomes("nic-0", Health::kHealthy));
  ASSERT_TRUE(Ok("ip -n " + node_ + " link set nic0 netns " + pod_ + " name net1"));
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link set net1 up"));
  {
    std::lock_guard lock(held_mu_);
    held_ = true;
  }
  monitor_->SetDevices({});  // a moved netdev leaves the host's discovery
  monitor_->PodsChanged();
  ASSERT_TRUE(WaitUntil([&] { return monitor_->Current().devices.size() == 1 && VerdictOf("nic-0").health == Health::kHealthy; }));
  ASSERT_TRUE(Ok("ip -n " + far_ + " link set peer0 down"));
  ASSERT_TRUE(Becomes("nic-0", Health::kUnhealthy)) << log_text_.str();
  EXPECT_THAT(VerdictOf("nic-0").message, HasSubstr("netdev nic0 in pod default/p as net1 has no carrier"));
  ASSERT_TRUE(Ok("ip -n " + far_ + " link set peer0 up"));
  ASSERT_TRUE(Becomes("nic-0", Health::kHealthy)) << log_text_.str();
}

TEST_F(HealthMonitorNetnsTest, ASnapshotPortFileChangeIsSeenThroughInotify) {
  const auto port = SnapshotPort();
  std::ofstream(port / "link_layer") << "InfiniBand\n";
  StartMonitor(root_);
  inventory::Device ib;
  ib.name = "mlx5-0";
  ib.rdma_device = "mlx5_0";
  monitor_->SetDevices({ib});
  ASSERT_TRUE(Becomes("mlx5-0", Health::kHealthy));
  const auto generation = monitor_->Current().generation;
  std::ofstream(port / "state") << "1: DOWN\n";
  ASSERT_TRUE(monitor_->WaitNewer(generation, std::chrono::steady_clock::now() + 10s));
  EXPECT_EQ(VerdictOf("mlx5-0"), (Verdict{Health::kUnhealthy, "mlx5_0 port 1 is DOWN", "RdmaPortDown"}));
  std::ofstream(port / "state") << "4: ACTIVE\n";
  ASSERT_TRUE(Becomes("mlx5-0", Health::kHealthy));
}

// A link event checks the devices but does not derive the port directories
// to watch again (opens and readlinks per port): only a device change, an
// inotify event or the recheck does.
TEST_F(HealthMonitorNetnsTest, LinkEventsDoNotDeriveThePortWatchesAgain) {
  const auto port = SnapshotPort();
  StartMonitor(root_);
  inventory::Device ib;
  ib.name = "mlx5-0";
  ib.rdma_device = "mlx5_0";
  device_.pci_address.clear();  // the snapshot root has no PCI functions: its carrier is not judged
  monitor_->SetDevices({ib, device_});
  ASSERT_TRUE(Becomes("mlx5-0", Health::kHealthy));
  ASSERT_TRUE(WaitUntil([&] { return monitor_->checks() >= 2; }));
  const auto checks = monitor_->checks();
  const auto syncs = monitor_->port_watch_syncs();
  ASSERT_TRUE(Ok("ip -n " + node_ + " link set nic0 mtu 1400"));
  ASSERT_TRUE(WaitUntil([&] { return monitor_->checks() > checks; }));
  EXPECT_EQ(monitor_->port_watch_syncs(), syncs);
  const auto generation = monitor_->Current().generation;
  std::ofstream(port / "state") << "1: DOWN\n";
  ASSERT_TRUE(monitor_->WaitNewer(generation, std::chrono::steady_clock::now() + 10s));
  EXPECT_EQ(monitor_->port_watch_syncs(), syncs + 1);
}

TEST_F(HealthMonitorNetnsTest, StopWakesWaiters) {
  StartMonitor();
  std::thread waiter([&] {
    EXPECT_FALSE(monitor_->WaitNewer(1000000, std::chrono::steady_clock::now() + std::chrono::hours(1)));
  });
  monitor_->Stop();
  waiter.join();
}

}  // namespace
}  // namespace dranet::health
