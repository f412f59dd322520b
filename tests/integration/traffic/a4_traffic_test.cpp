// Proof by traffic that a GKE A4 pod can use its RDMA NIC across nodes.
//
// Two "nodes" (network namespaces) are joined by a router namespace with the
// GKE layout on both: each node's gpu0rdma0 carries a /32, a link-scope route
// to the subnet gateway 192.168.1.1 and the subnet route via it (what GCE's
// DHCP option 121 gives), and node A also a policy rule with a table of its
// own and a permanent neighbour. The real dranetd runs live on node A (host root "/", inside A's
// namespace), the fake API server, kubelet and NRI runtime talk to it; the
// claim allocating gpu0rdma0 is prepared over the DRA gRPC API and its pod
// started over NRI. A process in the pod's netns then connects over TCP to
// node B's gpu0rdma0 address. After the pod goes, node A has the interface,
// its addresses, routes, rule and neighbour back.
//
// The negative control runs the same with --copy-host-routes=false: the pod
// gets the NIC and its /32 but no routes, and cannot reach node B.
//
// Root only (network namespaces); skipped cleanly otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "fake_nri_runtime.h"
#include "fault_harness.h"
#include "inject/netns.h"
#include "shell_command.h"

namespace dranet::traffic {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using testing::Capture;
using testing::Contains;
using testing::Ok;

constexpr const char* kNic = "gpu0rdma0";
constexpr const char* kAddressA = "192.168.1.4";
constexpr const char* kAddressB = "192.168.1.5";
constexpr uint16_t kPort = 5201;

// A TCP connection from inside `netns` to node B's gpu0rdma0; 0 on success,
// else the errno of the failed connect (ETIMEDOUT after 3 s).
int ConnectFrom(const std::string& netns) {
  int result = -1;
  const auto ns = inject::OpenNetns("/var/run/netns/" + netns);
  inject::RunInNetns(ns, [&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      result = errno;
      return;
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(kPort);
    ::inet_pton(AF_INET, kAddressB, &to.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {
      result = 0;
    } else if (errno != EINPROGRESS) {
      result = errno;
    } else {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 3000) != 1) {
        result = ETIMEDOUT;
      } else {
        int error = 0;
        socklen_t len = sizeof(error);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
        result = error;
      }
    }
    ::close(fd);
  });
  return result;
}

// A listener on node B's gpu0rdma0 address, accepting until destroyed.
class Listener {
 public:
  explicit Listener(const std::string& netns) {
    const auto ns = inject::OpenNetns("/var/run/netns/" + netns);
    inject::RunInNetns(ns, [&] {
      fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const int one = 1;
      ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      sockaddr_in at{};
      at.sin_family = AF_INET;
      at.sin_port = htons(kPort);
      ::inet_pton(AF_INET, kAddressB, &at.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0 || ::listen(fd_, 8) != 0)
        throw std::runtime_error(std::string("listen on node B: ") + std::strerror(errno));
    });
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 100) == 1) {
          const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
          if (c >= 0) {
            ++accepted_;
            ::close(c);
          }
        }
      }
    });
  }
  ~Listener() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int accepted() const { return accepted_; }

 private:
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

// The calling thread's network namespace, entered and left.
class EnterNetns {
 public:
  explicit EnterNetns(const std::string& netns)
      : home_(inject::OpenNetns("/proc/thread-self/ns/net")), target_(inject::OpenNetns("/var/run/netns/" + netns)) {
    if (::setns(target_.fd(), CLONE_NEWNET) != 0) throw std::runtime_error("setns failed");
  }
  ~EnterNetns() { ::setns(home_.fd(), CLONE_NEWNET); }

 private:
  inject::NetnsHandle home_, target_;
};

// Node A's view of gpu0rdma0 that must survive a pod: MTU, IPv4 addresses,
// routes in every table, rules, permanent neighbours. (IPv6 is left out: the
// link-local address comes and goes with DAD on its own schedule.)
std::string NodeState(const std::string& node) {
  const std::string ip = "ip -n " + node + " ";
  std::string link = Capture(ip + "-o link show " + kNic);
  const auto mtu = link.find(" mtu ");
  link = mtu == std::string::npos ? link : link.substr(mtu, link.find(' ', mtu + 5) - mtu);
  return "link" + link + "\n" + Capture(ip + "-4 -o addr show dev " + kNic) +
         Capture(ip + "-4 route show table all dev " + std::string(kNic)) + Capture(ip + "-4 rule show") +
         Capture(ip + "neigh show dev " + std::string(kNic) + " nud permanent");
}

std::string ClaimJson(const std::string& device, const std::string& node, const std::string& pod_uid) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"a4-rdma","namespace":"ml"},
    "spec":{"devices":{"requests":[{"name":"nic"}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"nic","driver":"dra.net","pool":")" +
         node + R"(","device":")" + device + R"("}]}},
      "reservedFor":[{"resource":"pods","name":"a4-worker","uid":")" + pod_uid + R"("}]}})";
}

// The published name of the device whose dra.net/ifName is `if_name`.
class A4TrafficTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!Ok("ip -V")) GTEST_SKIP() << "needs the ip tool";
    const std::string id = std::to_string(::getpid() % 100000);
    node_a_ = "dnA" + id;
    node_b_ = "dnB" + id;
    router_ = "dnR" + id;
    pod_ns_ = "dnP" + id;
    for (const auto& ns : {node_a_, node_b_, router_, pod_ns_}) {
      ASSERT_TRUE(Ok("ip netns add " + ns)) << ns;
      created_.push_back(ns);
      ASSERT_TRUE(Ok("ip -n " + ns + " link set lo up"));
    }
    // GKE's layout on both nodes; the router plays the VPC's gateway.
    const std::pair<std::string, std::string> nodes[] = {{node_a_, kAddressA}, {node_b_, kAddressB}};
    int n = 0;
    for (const auto& [node, address] : nodes) {
      const std::string peer = "r" + std::to_string(n++);
      const std::string in_node = "ip -n " + node + " ";
      ASSERT_TRUE(Ok("ip link add " + std::string(kNic) + " netns " + node + " mtu 8896 type veth peer name " + peer +
                     " netns " + router_ + " mtu 8896"));
      ASSERT_TRUE(Ok(in_node + "addr add " + address + "/32 dev " + kNic));
      ASSERT_TRUE(Ok(in_node + "link set " + kNic + " up"));
      ASSERT_TRUE(Ok(in_node + "route add 192.168.1.1 dev " + kNic + " proto dhcp scope link src " + address +
                     " metric 100"));
      ASSERT_TRUE(Ok(in_node + "route add 192.168.1.0/24 via 192.168.1.1 dev " + kNic + " proto dhcp src " + address +
                     " metric 100"));
      const std::string in_router = "ip -n " + router_ + " ";
      ASSERT_TRUE(Ok(in_router + "addr add 192.168.1.1/32 dev " + peer));
      ASSERT_TRUE(Ok(in_router + "link set " + peer + " up"));
      ASSERT_TRUE(Ok(in_router + "route add " + address + "/32 dev " + peer));
    }
    ASSERT_TRUE(Ok("ip netns exec " + router_ + " sysctl -qw net.ipv4.ip_forward=1"));
    // Node A's own policy routing: a table reached through gpu0rdma0.
    ASSERT_TRUE(Ok("ip -n " + node_a_ + " route add 10.100.0.0/16 via 192.168.1.1 dev " + kNic + " table 101"));
    ASSERT_TRUE(Ok("ip -n " + node_a_ + " rule add from " + kAddressA + "/32 lookup 101 priority 100"));
    ASSERT_TRUE(Ok("ip -n " + node_a_ + " neigh add 192.168.1.77 lladdr 02:00:00:00:00:77 dev " + kNic +
                   " nud permanent"));

    dir_ = fs::temp_directory_path() / ("dranet-a4-traffic-" + id);
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "kubelet/plugins_registry");
    fs::create_directories(dir_ / "plugins");  // no plugins: nothing to probe on this node
    fs::permissions(dir_ / "plugins", fs::perms::owner_all);
  }

  void TearDown() override {
    daemon_.reset();
    for (const auto& ns : created_) Ok("ip netns del " + ns);
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::string node_a_, node_b_, router_, pod_ns_;
  std::vector<std::string> created_;
  fs::path dir_;
  std::unique_ptr<faults::DaemonProcess> daemon_;
};

TEST_P(A4TrafficTest, PodReachesTheOtherNodeOverItsRdmaNicAndTheHostGetsItBack) {
  const bool copy_routes = GetParam();
  Listener listener(node_b_);
  ASSERT_EQ(ConnectFrom(node_a_), 0) << "the two nodes cannot reach each other before any pod";
  const std::string before = NodeState(node_a_);
  ASSERT_TRUE(Contains(before, "192.168.1.0/24 via 192.168.1.1")) << before;

  {
    // Everything of "node A" lives in its namespace: the fakes' sockets and dranetd.
    EnterNetns in_node_a(node_a_);
    fakes::FakeApiServer api;
    api.RequireToken("t");
    const std::string node = "gke-a4-node-a";
    api.PutObject("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node + R"("}})");
    testing::FakeNriRuntime::Options runtime_options;
    runtime_options.socket_path = (dir_ / "nri.sock").string();
    testing::FakeNriRuntime runtime(runtime_options);
    runtime.Listen();
    fakes::FakeKubeletOptions kubelet_options;
    kubelet_options.registry_dir = dir_ / "kubelet/plugins_registry";
    fakes::FakeKubelet kubelet(kubelet_options);
    kubelet.Start();
    std::ofstream(dir_ / "kubeconfig") << "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: f\n"
                                       << "  cluster:\n    server: " << api.url() << "\nusers:\n- name: u\n  user:\n"
                                       << "    token: t\ncontexts:\n- name: c\n  context:\n    cluster: f\n    user: u\n";
    // `ip netns exec` gives dranetd a /sys of node A's namespace, as a
    // DaemonSet pod on the node would see it.
    daemon_ = std::make_unique<faults::DaemonProcess>(
        "/usr/sbin/ip",
        std::vector<std::string>{"netns", "exec", node_a_, DRANETD_BINARY, "--kubeconfig",
                                 (dir_ / "kubeconfig").string(), "--node-name", node, "--host-root", "/",
                                 "--kubelet-root-dir", (dir_ / "kubelet").string(), "--state-dir",
                                 (dir_ / "state").string(), "--nri-socket", runtime_options.socket_path,
                                 "--plugin-dir", (dir_ / "plugins").string(), "--metrics-address", "off",
                                 "--filter", "",  // the default filter leaves veths out
                                 std::string("--copy-host-routes=") + (copy_routes ? "true" : "false"), "-v", "2"},
        dir_ / "dranetd.log", "");
    ASSERT_TRUE(kubelet.WaitForPlugin("dra.net", 60s)) << daemon_->Log();
    ASSERT_TRUE(runtime.AcceptPlugin(60s)) << runtime.last_error() << daemon_->Log();
    std::string device;
    ASSERT_TRUE(faults::PollUntil([&] {
      device = faults::DeviceWithIfName(api.ListObjects("/apis/resource.k8s.io/v1/resourceslices"), kNic);
      return !device.empty();
    })) << "gpu0rdma0 was not published\n" << daemon_->Log();

    const std::string pod_uid = "a4-pod-uid";
    std::string stored = api.PutObject("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims",
                                       ClaimJson(device, node, pod_uid));
    rapidjson::Document claim;
    claim.Parse(stored.c_str());
    const fakes::KubeletClaim kubelet_claim{"ml", "a4-rdma", claim["metadata"]["uid"].GetString()};
    auto prepared = kubelet.Prepare("dra.net", fakes::DraApi::kV1, {kubelet_claim});
    ASSERT_EQ(prepared.at(kubelet_claim.uid).error, "") << daemon_->Log();

    const auto pod = testing::FakeNriRuntime::MakePod(pod_uid, "ml", "a4-worker", "/var/run/netns/" + pod_ns_);
    ASSERT_TRUE(runtime.RunPodSandbox(pod).ok()) << daemon_->Log();
    const std::string in_pod = Capture("ip -n " + pod_ns_ + " -4 addr show dev " + kNic) +
                               Capture("ip -n " + pod_ns_ + " route show table all dev " + kNic) +
                               Capture("ip -n " + pod_ns_ + " -4 rule show") +
                               Capture("ip -n " + pod_ns_ + " neigh show dev " + kNic + " nud permanent");
    EXPECT_TRUE(Contains(in_pod, std::string("inet ") + kAddressA + "/32")) << in_pod;
    EXPECT_FALSE(Ok("ip -n " + node_a_ + " link show " + kNic)) << "gpu0rdma0 still on node A";

    const int connect_error = ConnectFrom(pod_ns_);
    if (copy_routes) {
      EXPECT_EQ(connect_error, 0) << "pod A cannot reach node B: " << std::strerror(connect_error) << "\n" << in_pod;
      EXPECT_TRUE(Contains(in_pod, "192.168.1.1 proto dhcp scope link src 192.168.1.4 metric 100")) << in_pod;
      EXPECT_TRUE(Contains(in_pod, "192.168.1.0/24 via 192.168.1.1 proto dhcp src 192.168.1.4 metric 100")) << in_pod;
      EXPECT_TRUE(Contains(in_pod, "10.100.0.0/16 via 192.168.1.1 table 101")) << in_pod;
      EXPECT_TRUE(Contains(in_pod, "from 192.168.1.4 lookup 101")) << in_pod;
      EXPECT_TRUE(Contains(in_pod, "192.168.1.77 lladdr 02:00:00:00:00:77 PERMANENT")) << in_pod;
    } else {
      // The negative control: the NIC and its /32 without the host's routes.
      EXPECT_NE(connect_error, 0) << "reached node B without the host's routes";
      EXPECT_FALSE(Contains(in_pod, "192.168.1.0/24")) << in_pod;
    }

    ASSERT_TRUE(runtime.StopPodSandbox(pod).ok()) << daemon_->Log();
    ASSERT_TRUE(runtime.RemovePodSandbox(pod).ok()) << daemon_->Log();
    auto unprepared = kubelet.Unprepare("dra.net", fakes::DraApi::kV1, {kubelet_claim});
    EXPECT_EQ(unprepared.at(kubelet_claim.uid), "");
    const auto status = daemon_->Terminate();
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(*status, 0) << faults::DescribeWaitStatus(*status) << daemon_->Log();
    EXPECT_FALSE(Contains(daemon_->Log(), "netdev not restored")) << daemon_->Log();
  }

  // Node A has its NIC back exactly as it was, and uses it again.
  EXPECT_EQ(NodeState(node_a_), before);
  EXPECT_EQ(ConnectFrom(node_a_), 0) << "node A lost its route to node B";
  // The listener accepts on its own thread: the last connection may still be
  // in its queue when connect() returns.
  EXPECT_TRUE(faults::PollUntil([&] { return listener.accepted() >= (copy_routes ? 3 : 2); }))
      << "accepted " << listener.accepted();
}

INSTANTIATE_TEST_SUITE_P(HostRoutes, A4TrafficTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("Copied") : std::string("NotCopiedNegativeControl");
                         });

}  // namespace
}  // namespace dranet::traffic
