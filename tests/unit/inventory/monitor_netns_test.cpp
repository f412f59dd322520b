// Root tests on real network namespaces: live discovery follows a veth moved
// between namespaces, and DiscoveryMonitor reports it. Skipped unless root
// with iproute2. Each test uses its own namespaces and removes them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <set>
#include <future>
#include <mutex>
#include <thread>

#include "inventory/inventory.h"
#include "inventory/monitor.h"
#include "test_support.h"

namespace dranet::inventory {
namespace {

namespace fs = std::filesystem;
using testing::FindDevice;

// Polls `done` every 10 ms for up to 10 s.
template <typename Predicate>
bool PollUntil(Predicate done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool Shell(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()) == 0; }

// A worker thread living in network namespace `netns` with a private mount
// namespace whose <root>/sys is a sysfs mounted from inside that netns, so
// live discovery on <root> sees exactly that namespace.
class NetnsWorker {
 public:
  NetnsWorker(const std::string& netns, const fs::path& root) {
    std::promise<std::string> ready;
    auto started = ready.get_future();
    thread_ = std::thread([this, netns, root, &ready] {
      std::string error = Enter(netns, root);
      ready.set_value(error);
      if (!error.empty()) return;
      std::unique_lock lock(mu_);
      while (!done_) {
        cv_.wait(lock, [this] { return done_ || job_ != nullptr; });
        if (job_) {
          job_();
          job_ = nullptr;
          cv_.notify_all();
        }
      }
    });
    error_ = started.get();
  }
  ~NetnsWorker() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  const std::string& error() const { return error_; }

  void Do(std::function<void()> job) {
    std::unique_lock lock(mu_);
    job_ = std::move(job);
    cv_.notify_all();
    cv_.wait(lock, [this] { return job_ == nullptr; });
  }

 private:
  static std::string Enter(const std::string& netns, const fs::path& root) {
    int fd = ::open(("/var/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "open netns";
    int joined = ::setns(fd, CLONE_NEWNET);
    ::close(fd);
    if (joined != 0) return "setns";
    if (::unshare(CLONE_NEWNS) != 0) return "unshare mount namespace";
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return "make mounts private";
    fs::create_directories(root / "sys");
    if (::mount("sysfs", (root / "sys").c_str(), "sysfs", 0, nullptr) != 0) return "mount sysfs";
    return {};
  }

  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool done_ = false;
  std::string error_;
};

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    if (!Shell("ip -V")) GTEST_SKIP() << "needs iproute2";
    std::string id = std::to_string(::getpid());
    node_ = "dranet-node-" + id;
    pod_ = "dranet-pod-" + id;
    veth_ = "dv" + id + "a";
    peer_ = "dv" + id + "b";
    if (!Shell("ip netns add " + node_) || !Shell("ip netns add " + pod_)) GTEST_SKIP() << "cannot create netns";
    ASSERT_TRUE(Shell("ip -n " + node_ + " link add " + veth_ + " type veth peer name " + peer_));
    ASSERT_TRUE(Shell("ip -n " + node_ + " addr add 192.0.2.7/24 dev " + veth_));
    ASSERT_TRUE(Shell("ip -n " + node_ + " link set " + veth_ + " up"));
    std::string pattern = (fs::temp_directory_path() / "dranet-netns-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
  }
  void TearDown() override {
    worker_.reset();  // its mount namespace (and sysfs mount) goes with the thread
    if (!node_.empty()) {
      Shell("ip netns del " + node_);
      Shell("ip netns del " + pod_);
    }
    std::error_code error;
    if (!root_.empty()) fs::remove_all(root_, error);
  }

  NetnsWorker& Worker() {
    if (!worker_) worker_ = std::make_unique<NetnsWorker>(node_, root_);
    return *worker_;
  }

  std::vector<Device> DiscoverInNode() {
    std::vector<Device> devices;
    Worker().Do([&] {
      DiscoveryOptions options;
      options.host_root = root_;
      devices = Discover(options, NullLogger());
    });
    return devices;
  }

  std::string node_, pod_, veth_, peer_;
  fs::path root_;
  std::unique_ptr<NetnsWorker> worker_;
};

TEST_F(NetnsTest, VethMovedToAnotherNamespaceLeavesAndReturns) {
  ASSERT_EQ(Worker().error(), "");
  auto before = DiscoverInNode();
  const Device* veth = FindDevice(before, veth_);
  ASSERT_NE(veth, nullptr);
  EXPECT_EQ(testing::Attribute<std::string>(*veth, attr::kType), "veth");
  EXPECT_EQ(testing::Attribute<std::string>(*veth, attr::kIpv4), "192.0.2.7/24");
  EXPECT_TRUE(testing::Attribute<bool>(*veth, attr::kVirtual));
  EXPECT_NE(FindDevice(before, peer_), nullptr);

  ASSERT_TRUE(Shell("ip -n " + node_ + " link set " + veth_ + " netns " + pod_));
  auto moved = DiscoverInNode();
  EXPECT_EQ(FindDevice(moved, veth_), nullptr);
  EXPECT_NE(FindDevice(moved, peer_), nullptr);

  ASSERT_TRUE(Shell("ip -n " + pod_ + " link set " + veth_ + " netns " + node_));
  auto back = DiscoverInNode();
  EXPECT_NE(FindDevice(back, veth_), nullptr);
}

TEST_F(NetnsTest, MonitorReportsTheMoveAndTheReturn) {
  ASSERT_EQ(Worker().error(), "");
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::vector<Device>> reports;
  DiscoveryOptions options;
  options.host_root = root_;
  Discoverer discoverer(options, NullLogger());
  std::unique_ptr<DiscoveryMonitor> monitor;
  Worker().Do([&] {
    DiscoveryMonitor::Options monitor_options;
    monitor_options.coalesce_window = std::chrono::milliseconds(50);
    monitor = std::make_unique<DiscoveryMonitor>(
        discoverer,
        [&](std::vector<Device> devices) {
          std::lock_guard lock(mu);
          reports.push_back(std::move(devices));
          changed.notify_all();
        },
        NullLogger(), monitor_options);
    monitor->Start();
  });
  auto wait_for = [&](bool present) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, std::chrono::seconds(10), [&] {
      return !reports.empty() && (FindDevice(reports.back(), veth_) != nullptr) == present;
    });
  };
  EXPECT_TRUE(wait_for(true)) << "first discovery lacks the veth";
  ASSERT_TRUE(Shell("ip -n " + node_ + " link set " + veth_ + " netns " + pod_));
  EXPECT_TRUE(wait_for(false)) << "the move was not reported";
  ASSERT_TRUE(Shell("ip -n " + pod_ + " link set " + veth_ + " netns " + node_));
  EXPECT_TRUE(wait_for(true)) << "the return was not reported";
  monitor->Stop();
  EXPECT_GE(monitor->discoveries(), 3u);
}


// What a CNI does on every pod start, seen from the node: a veth pair whose
// far end goes into the pod's namespace, the near end enslaved to the bridge
// and brought up, an address inside the pod. With veths unpublished (DRANET's
// default filter) none of it can change the inventory, so the monitor must
// not rediscover; a change to a published link still must.
class PodChurnTest : public NetnsTest {
 protected:
  void SetUp() override {
    NetnsTest::SetUp();
    if (IsSkipped() || HasFailure()) return;
    bridge_ = "dbr" + std::to_string(::getpid());
    // A fixed MAC: a bridge that takes its ports' MACs really changes.
    ASSERT_TRUE(Shell("ip -n " + node_ + " link add " + bridge_ + " address 02:00:00:00:00:01 type bridge"));
    ASSERT_TRUE(Shell("ip -n " + node_ + " link set " + bridge_ + " up"));
  }
  void TearDown() override {
    // The monitor's thread writes last_: it ends before any member goes.
    if (monitor_) monitor_->Stop();
    monitor_.reset();
    for (const auto& pod : pods_) Shell("ip netns del " + pod);
    NetnsTest::TearDown();
  }

  // Starts a monitor in the node namespace; `ignored` as its ignored kinds.
  void StartMonitor(std::set<std::string> ignored) {
    ASSERT_EQ(Worker().error(), "");
    DiscoveryOptions options;
    options.host_root = root_;
    discoverer_ = std::make_unique<Discoverer>(options, NullLogger());
    Worker().Do([&] {
      DiscoveryMonitor::Options monitor_options;
      monitor_options.coalesce_window = std::chrono::milliseconds(20);
      monitor_options.ignored_link_kinds = std::move(ignored);
      monitor_ = std::make_unique<DiscoveryMonitor>(
          *discoverer_,
          [&](std::vector<Device> devices) {
            std::lock_guard lock(mu_);
            last_ = std::move(devices);
            changed_.notify_all();
          },
          NullLogger(), monitor_options);
      monitor_->Start();
    });
    std::unique_lock lock(mu_);
    ASSERT_TRUE(changed_.wait_for(lock, std::chrono::seconds(10), [&] { return !last_.empty(); }));
  }

  // One pod start as the bridge CNI does it.
  void StartPod(int n) {
    const std::string pod = pod_ + "-" + std::to_string(n);
    const std::string host_end = "dh" + std::to_string(::getpid() % 100000) + "p" + std::to_string(n);
    ASSERT_TRUE(Shell("ip netns add " + pod));
    pods_.push_back(pod);
    ASSERT_TRUE(Shell("ip -n " + node_ + " link add " + host_end + " type veth peer name eth0 netns " + pod));
    ASSERT_TRUE(Shell("ip -n " + node_ + " link set " + host_end + " master " + bridge_ + " up"));
    ASSERT_TRUE(Shell("ip -n " + pod + " addr add 10.231.9." + std::to_string(n + 10) + "/24 dev eth0"));
    ASSERT_TRUE(Shell("ip -n " + pod + " link set eth0 up"));
    ASSERT_TRUE(Shell("ip -n " + pod + " link set lo up"));
  }

  // Changes a published link (a global address on the bridge) and waits for
  // the discovery that shows it: proves the monitor is alive and has read
  // every event that came before.
  bool PublishedChangeSeen(const std::string& cidr) {
    if (!Shell("ip -n " + node_ + " addr add " + cidr + " dev " + bridge_)) return false;
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] {
      const Device* bridge = FindDevice(last_, bridge_);
      return bridge && bridge->attributes.count(std::string(attr::kIpv4)) &&
             testing::Attribute<std::string>(*bridge, attr::kIpv4).find(cidr) != std::string::npos;
    });
  }

  std::string bridge_;
  std::vector<std::string> pods_;
  std::unique_ptr<Discoverer> discoverer_;
  std::unique_ptr<DiscoveryMonitor> monitor_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Device> last_;
};

TEST_F(PodChurnTest, VethChurnOfPodStartsRunsNoDiscovery) {
  StartMonitor({"veth"});
  // The bridge's first port brings its carrier up: a real change of its
  // published state. A node's bridge has pods already; so has this one.
  // (The kernel reports carrier changes late, so wait for it to show.)
  StartPod(0);
  ASSERT_TRUE(PublishedChangeSeen("192.0.2.200/24"));
  {
    std::unique_lock lock(mu_);
    ASSERT_TRUE(changed_.wait_for(lock, std::chrono::seconds(10), [&] {
      const Device* bridge = FindDevice(last_, bridge_);
      return bridge && bridge->attributes.count(std::string(attr::kState)) &&
             testing::Attribute<std::string>(*bridge, attr::kState) == "up";
    }));
  }
  // The kernel reports the bridge's carrier and its address separately; on
  // a busy machine the second report can arrive after a discovery that
  // already saw both and cause one more. Let the monitor settle (no
  // discovery for 300 ms) before counting.
  for (int i = 0; i < 30; ++i) {
    const auto seen = monitor_->discoveries();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (monitor_->discoveries() == seen) break;
  }
  const auto before = monitor_->discoveries();
  const auto ignored_before = monitor_->events_ignored();
  constexpr int kPods = 5;
  for (int n = 1; n <= kPods; ++n) StartPod(n);
  // The monitor read the churn and set it aside...
  ASSERT_TRUE(PollUntil([&] { return monitor_->events_ignored() > ignored_before; }));
  // ...and a real change after it is the only thing that ran a discovery.
  ASSERT_TRUE(PublishedChangeSeen("192.0.2.201/24"));
  monitor_->Stop();
  const auto scans = monitor_->discoveries() - before;
  std::cout << "[ measured ] " << kPods << " pod starts with veths unpublished: " << scans - 1
            << " discoveries (plus 1 for the published change)\n";
  EXPECT_EQ(scans, 1u);
}

// The same churn when veths may be published (any --filter but DRANET's
// default): every new veth is a new device, so it is rediscovered.
TEST_F(PodChurnTest, VethChurnIsRediscoveredWhenVethsArePublished) {
  StartMonitor({});
  const auto before = monitor_->discoveries();
  StartPod(0);
  ASSERT_TRUE(PollUntil([&] { return monitor_->discoveries() > before; }));
  std::unique_lock lock(mu_);
  EXPECT_TRUE(changed_.wait_for(lock, std::chrono::seconds(10), [&] {
    return std::any_of(last_.begin(), last_.end(), [](const Device& d) { return d.if_name.rfind("dh", 0) == 0; });
  }));
}

}  // namespace
}  // namespace dranet::inventory
