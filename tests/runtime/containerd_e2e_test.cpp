// End to end on a real containerd with NRI (runtime_env.sh; Debian's 1.7, or
// 2.x with DRANET_E2E_CONTAINERD=2, as ctest's containerd2.* tests run): the real
// dranetd registers as its NRI plugin, claims are prepared over the kubelet
// DRA gRPC API (fake kubelet, fake API server), pods are created over CRI the
// way the kubelet does, and every assertion looks at what the container or
// the pod's network namespace really has.
//
//   Gb300PodSeesExactlyItsDevices          /dev/infiniband, device numbers,
//                                          device cgroup, env; a pod without
//                                          claims sees none; discoveries per
//                                          pod start
//   A4NetdevMovesIntoTheCniPodAndBack      a veth standing in for gpu0rdma0
//   PodFromBeforeAContainerdRestart...     containerd sends nothing when such
//                                          a pod is deleted: the NIC still
//                                          comes home; new pods still work
//   ContainerStartedWhileDranetdWasDown... reported once (Event + metric)
//   OnePodsLifeIsOneRequestPer...          the NRI requests of one pod's life,
//                                          the same from containerd 1.7 and 2
//   DaemonSetPodOfDranetdMovesAnA4Nic...   dranetd itself in a pod of this
//                                          containerd, with the manifest's
//                                          securityContext and volumes; its
//                                          container's memory printed
//   DISABLED_PodStartShare                 a measurement, not a check: pod
//                                          start with and without dranetd
//                                          (run it with
//                                          --gtest_also_run_disabled_tests)
//
// Root only; skipped with the reason when the Debian archive cannot be
// reached or this is not root. Everything started here is stopped by
// runtime_env.sh stop (and by the runtime_cleanup ctest fixture after a
// crash).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cri_client.h"
#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "fault_harness.h"
#include "shell_command.h"

namespace dranet::runtime_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using faults::PollUntil;

constexpr const char* kNodeName = "runtime-e2e-node";
constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";

using testing::Contains;
using testing::RunCommand;

// A metric's value from a /metrics text (first sample of the family).
double MetricValue(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) == 0 || line.rfind(name + "{", 0) == 0)
      return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

// "key value" lines of a cgroup's memory.stat (or a /proc status file).
std::map<std::string, double> KeyValues(const fs::path& file) {
  std::map<std::string, double> values;
  std::ifstream in(file);
  for (std::string key, value; in >> key >> value;) {
    if (!key.empty() && key.back() == ':') key.pop_back();
    try {
      values[key] = std::stod(value);
    } catch (const std::exception&) {
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return values;
}

// What the memory cgroup of process `pid` is charged for and what the
// process has resident, one line. cgroup v1 (memory controller) or v2.
std::string MemoryOf(int pid) {
  std::ifstream cgroups("/proc/" + std::to_string(pid) + "/cgroup");
  fs::path dir;
  // "<id>:<controllers>:<path>": v1 names the memory controller, v2 has "0::<path>".
  for (std::string line; std::getline(cgroups, line);) {
    const auto colon = line.find(':'), second = line.find(':', colon + 1);
    const std::string controllers = "," + line.substr(colon + 1, second - colon - 1) + ",";
    const std::string path = line.substr(second + 2);
    if (controllers.find(",memory,") != std::string::npos) {
      dir = fs::path("/sys/fs/cgroup/memory") / path;
      break;
    }
    if (controllers == ",,") dir = fs::path("/sys/fs/cgroup") / path;
  }
  const bool v1 = fs::exists(dir / "memory.usage_in_bytes");
  std::ifstream usage_file(dir / (v1 ? "memory.usage_in_bytes" : "memory.current"));
  double usage = -1;
  usage_file >> usage;
  auto stat = KeyValues(dir / "memory.stat");
  const double inactive_file = stat[v1 ? "total_inactive_file" : "inactive_file"];
  const double anon = stat[v1 ? "total_rss" : "anon"], file = stat[v1 ? "total_cache" : "file"];
  auto status = KeyValues("/proc/" + std::to_string(pid) + "/status");  // kB
  auto mib = [](double bytes) {
    std::ostringstream out;
    out.precision(1);
    out << std::fixed << bytes / 1048576 << " MiB";
    return out.str();
  };
  return "cgroup " + dir.string() + ": usage " + mib(usage) + ", working set (usage less inactive file, as kubelet) " +
         mib(usage - inactive_file) + ", anonymous " + mib(anon) + ", page cache " + mib(file) + " (inactive " +
         mib(inactive_file) + "); process resident " + mib(status["VmRSS"] * 1024) + ", of it anonymous " +
         mib(status["RssAnon"] * 1024) + " and file pages " + mib(status["RssFile"] * 1024);
}

// containerd for the whole suite, from runtime_env.sh.
class Containerd {
 public:
  static Containerd& Get() {
    static Containerd instance;
    return instance;
  }
  const std::string& skip_reason() const { return skip_; }
  const std::string& wanted_major() const { return wanted_major_; }
  const std::string& error() const { return error_; }
  std::string var(const std::string& key) const {
    auto it = vars_.find(key);
    return it == vars_.end() ? "" : it->second;
  }
  bool Restart() {
    const auto r = RunCommand(env_ + Script() + " restart " + kCache + " " + kRun);
    if (r.status != 0) error_ = r.output;
    return r.status == 0;
  }
  void Stop() {
    if (started_) RunCommand(Script() + " stop " + kRun);
    started_ = false;
  }
  // Imports an image of `binary` and its shared libraries as `name`
  // (runtime_env.sh binary-image); "" or what failed.
  std::string ImportBinaryImage(const std::string& name, const std::string& binary) {
    const auto r = RunCommand(Script() + " binary-image " + kRun + " " + name + " " + binary);
    return r.status == 0 ? "" : r.output;
  }
  static std::string RunDir() { return kRun; }

 private:
  static std::string Script() { return std::string("bash ") + DRANET_RUNTIME_SCRIPT; }
  static constexpr const char* kCache = DRANET_RUNTIME_CACHE_DIR;
  static constexpr const char* kRun = DRANET_RUNTIME_RUN_DIR;

  Containerd() {
    if (::geteuid() != 0) {
      skip_ = "needs root (containerd, network namespaces)";
      return;
    }
    if (const char* major = std::getenv("DRANET_E2E_CONTAINERD"); major && std::string(major) == "2") {
      // containerd 2.x from its Go module (scripts/go_tool.sh, cached): the
      // directory is the last line it prints.
      auto built = RunCommand(std::string("bash ") + DRANET_GO_TOOL_SCRIPT + " containerd 2>/dev/null");
      if (built.status == 77) {
        skip_ = "containerd 2 cannot be built here (Go 1.26 or the Go module proxy missing)";
        return;
      }
      std::string dir = built.output;
      while (!dir.empty() && dir.back() == '\n') dir.pop_back();
      dir = dir.substr(dir.rfind('\n') + 1);
      if (built.status != 0 || dir.empty()) {
        error_ = "scripts/go_tool.sh containerd failed: " + built.output;
        return;
      }
      wanted_major_ = "2";
      env_ = "DRANET_RUNTIME_CONTAINERD_BIN=" + dir + " ";
    }
    auto fetched = RunCommand(Script() + " fetch " + kCache);
    if (fetched.status == 77) {
      skip_ = "runtime packages unavailable: " + fetched.output;
      return;
    }
    if (fetched.status != 0) {
      error_ = "fetch failed: " + fetched.output;
      return;
    }
    auto images = RunCommand(Script() + " images " + kCache);
    if (images.status != 0) {
      error_ = "images failed: " + images.output;
      return;
    }
    auto started = RunCommand(env_ + Script() + " start " + kCache + " " + kRun);
    if (started.status != 0) {
      error_ = "containerd did not start: " + started.output;
      RunCommand(Script() + " stop " + kRun);
      return;
    }
    started_ = true;
    std::istringstream lines(started.output);
    for (std::string line; std::getline(lines, line);) {
      const auto eq = line.find('=');
      if (eq != std::string::npos && line.find(' ') > eq) vars_[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  ~Containerd() { Stop(); }

  std::string skip_, error_;
  // DRANET_E2E_CONTAINERD=2: the major version the suite runs against and the
  // environment that makes runtime_env.sh start it; 1.7 (Debian's) otherwise.
  std::string wanted_major_ = "1.7", env_;
  bool started_ = false;
  std::map<std::string, std::string> vars_;
};

// A pod as the kubelet creates it, with one long-running busybox container.
struct RunningPod {
  PodSpec spec;
  std::string sandbox, container;
};

class ContainerdE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& containerd = Containerd::Get();
    if (!containerd.skip_reason().empty()) GTEST_SKIP() << containerd.skip_reason();
    ASSERT_EQ(containerd.error(), "");
    cri_ = std::make_unique<CriClient>(containerd.var("CONTAINERD_SOCKET"));
    const auto version = cri_->Version();
    ASSERT_EQ(version.runtime_name, "containerd");
    // CRI's version carries a "v" before a 2.x and none before Debian's 1.7.
    const std::string major = containerd.wanted_major();
    ASSERT_TRUE(version.runtime_version.rfind(major + ".", 0) == 0 ||
                version.runtime_version.rfind("v" + major + ".", 0) == 0)
        << "containerd " << version.runtime_version << " runs, not " << major << ".x";
    std::cout << "containerd " << version.runtime_version << " (CRI " << version.runtime_api_version << ")\n";
    std::string pattern = "/tmp/dranet-rte2e-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::create_directories(dir_ / "kubelet/plugins_registry");
    fs::create_directories(dir_ / "plugins");
    fs::permissions(dir_ / "plugins", fs::perms::owner_all);
    api_.RequireToken("faults");
    std::ofstream(dir_ / "kubeconfig") << faults::KubeconfigFor(api_.url());
    api_.PutObject("/api/v1/nodes",
                   std::string(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")") + kNodeName + R"("}})");
    fakes::FakeKubeletOptions kubelet_options;
    kubelet_options.registry_dir = dir_ / "kubelet/plugins_registry";
    kubelet_ = std::make_unique<fakes::FakeKubelet>(kubelet_options);
    kubelet_->Start();
  }

  void TearDown() override {
    if (!cri_) return;
    for (const auto& pod : pods_) {
      try {
        cri_->StopPodSandbox(pod.sandbox);
        cri_->RemovePodSandbox(pod.sandbox);
      } catch (const std::exception&) {
      }
    }
    if (HasFailure() || std::getenv("DRANET_E2E_LOG")) std::cout << "dranetd log:\n" << DaemonLog();
    daemon_.reset();
    kubelet_.reset();
    for (const auto& link : links_) RunCommand("ip link del " + link);
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(dir_, ec);
  }

  // dranetd on the live host: no cloud, no GPU, so no plugins.
  std::vector<std::string> LiveHost() {
    return {"--host-root", "/", "--plugin-dir", (dir_ / "plugins").string(),
            "--filter", ""};  // the default filter leaves veths out
  }
  // dranetd on the GB300 snapshot with the build's plugins (NCCL_IB_HCA
  // comes from the NVIDIA plugin).
  static std::vector<std::string> Gb300() {
    return {"--host-root", (fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6").string()};
  }

  // Starts dranetd with NRI on containerd's socket; waits for kubelet
  // registration, the NRI handshake (/readyz) and a first publish.
  void StartDaemon(const std::vector<std::string>& discovery_args) {
    std::vector<std::string> args = {"--kubeconfig", (dir_ / "kubeconfig").string(), "--node-name", kNodeName,
                                     "--kubelet-root-dir", (dir_ / "kubelet").string(), "--state-dir",
                                     (dir_ / "state").string(), "--nri-socket", Containerd::Get().var("NRI_SOCKET"),
                                     "--metrics-address", "127.0.0.1:0", "-v", "2"};
    args.insert(args.end(), discovery_args.begin(), discovery_args.end());
    const auto generation = kubelet_->Plugin("dra.net") ? kubelet_->Plugin("dra.net")->generation : 0;
    daemon_ = std::make_unique<faults::DaemonProcess>(DRANETD_BINARY, args,
                                                      dir_ / ("dranetd-" + std::to_string(++starts_) + ".log"), "");
    ASSERT_TRUE(kubelet_->WaitForPlugin("dra.net", 60s, generation)) << daemon_->Log();
    port_ = daemon_->MetricsPort();
    ASSERT_NE(port_, 0) << daemon_->Log();
    ASSERT_TRUE(PollUntil([&] { return faults::LoopbackGet(port_, "/readyz").status == 200; }))
        << faults::LoopbackGet(port_, "/readyz").body << daemon_->Log();
  }

  double Metric(const std::string& name) { return MetricValue(faults::LoopbackGet(port_, "/metrics").body, name); }

  // dranetd's log: the process's, or the container log of dranetd's pod.
  std::string DaemonLog() {
    if (daemon_) return daemon_->Log();
    std::ifstream in(daemon_container_log_);
    return "dranetd's container log (" + daemon_container_log_.string() + "):\n" +
           std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Creates an allocated claim for `devices` reserved for `pod_uid` and
  // prepares it through the kubelet API.
  fakes::KubeletClaim Prepare(const std::string& name, const std::vector<std::string>& devices,
                              const std::string& pod_uid) {
    rapidjson::Document stored;
    stored.Parse(api_.PutObject(kClaims, faults::AllocatedClaim(name, kNodeName, devices, pod_uid)).c_str());
    fakes::KubeletClaim claim{"ml", name, stored["metadata"]["uid"].GetString()};
    // As the kubelet does, a failed prepare is retried (a NIC that just came
    // back from a pod is in the inventory at the next discovery).
    std::string error;
    PollUntil([&] {
      error = kubelet_->Prepare("dra.net", fakes::DraApi::kV1, {claim}).at(claim.uid).error;
      return error.empty();
    });
    EXPECT_EQ(error, "") << DaemonLog();
    return claim;
  }

  RunningPod StartPod(const std::string& name, const std::string& uid) {
    RunningPod pod;
    pod.spec.name = name;
    pod.spec.uid = uid;
    pod.spec.namespace_name = "ml";
    pod.sandbox = cri_->RunPodSandbox(pod.spec);
    pods_.push_back(pod);
    pod.container = cri_->CreateContainer(pod.sandbox, pod.spec,
                                          {"work", Containerd::Get().var("BUSYBOX_IMAGE"), {"sleep", "3600"}, {}, {}, {}});
    cri_->StartContainer(pod.container);
    return pod;
  }

  void DeletePod(const RunningPod& pod) {
    cri_->StopPodSandbox(pod.sandbox);
    cri_->RemovePodSandbox(pod.sandbox);
    std::erase_if(pods_, [&](const RunningPod& p) { return p.sandbox == pod.sandbox; });
  }

  std::string InPod(const RunningPod& pod, const std::vector<std::string>& cmd) {
    const auto r = cri_->Exec(pod.container, cmd);
    return r.stdout_text + r.stderr_text;
  }

  // A veth named gpu0rdma0 with what GCE gives an A4 RDMA NIC (a /32, a
  // link-scope route to the gateway and the subnet route via it), MTU 8896.
  void MakeA4Nic() {
    ASSERT_EQ(RunCommand("ip link show gpu0rdma0").status, 1) << "gpu0rdma0 already exists on this machine";
    ASSERT_EQ(RunCommand("ip link add gpu0rdma0 mtu 8896 type veth peer name gpu0peer mtu 8896").status, 0);
    links_.push_back("gpu0rdma0");
    links_.push_back("gpu0peer");
    for (const std::string cmd :
         {"addr add 192.168.231.4/32 dev gpu0rdma0", "link set gpu0rdma0 up", "link set gpu0peer up",
          "route add 192.168.231.1 dev gpu0rdma0 proto dhcp scope link src 192.168.231.4 metric 100",
          "route add 192.168.231.0/24 via 192.168.231.1 dev gpu0rdma0 proto dhcp src 192.168.231.4 metric 100"})
      ASSERT_EQ(RunCommand("ip " + cmd).status, 0) << cmd;
    host_a4_state_ = HostA4State();
  }

  // `count` veths dnpod<i> (peer dnpeer<i>), each with a /32 and a link
  // route, standing in for RDMA NICs on the live host.
  void MakeNics(int count) {
    for (int i = 0; i < count; ++i) {
      const std::string n = std::to_string(i);
      ASSERT_EQ(RunCommand("ip link add dnpod" + n + " mtu 8896 type veth peer name dnpeer" + n + " mtu 8896").status,
                0);
      links_.push_back("dnpod" + n);
      links_.push_back("dnpeer" + n);
      for (const std::string& cmd : {"addr add 192.168." + std::to_string(240 + i) + ".4/32 dev dnpod" + n,
                                     "link set dnpod" + n + " up", "link set dnpeer" + n + " up",
                                     "route add 192.168." + std::to_string(240 + i) + ".1 dev dnpod" + n +
                                         " scope link"})
        ASSERT_EQ(RunCommand("ip " + cmd).status, 0) << cmd;
    }
  }

  static std::string HostA4State() {
    std::string link = RunCommand("ip -o link show gpu0rdma0").output;
    const auto mtu = link.find(" mtu ");
    link = mtu == std::string::npos ? "<no link>" : link.substr(mtu, link.find(' ', mtu + 5) - mtu);
    return "link" + link + "\n" + RunCommand("ip -4 -o addr show dev gpu0rdma0").output +
           RunCommand("ip -4 route show dev gpu0rdma0").output;
  }

  std::string PublishedA4Device() {
    std::string device;
    PollUntil([&] {
      device = faults::DeviceWithIfName(api_.ListObjects(kSlices), "gpu0rdma0");
      return !device.empty();
    });
    return device;
  }

  void ExpectA4NicInPod(const RunningPod& pod) {
    const std::string addresses = InPod(pod, {"ip", "-o", "addr"});
    EXPECT_TRUE(Contains(addresses, "gpu0rdma0")) << addresses;
    EXPECT_TRUE(Contains(addresses, "inet 192.168.231.4/32")) << addresses;
    EXPECT_TRUE(Contains(addresses, "eth0")) << "the CNI's interface is gone: " << addresses;
    EXPECT_TRUE(Contains(InPod(pod, {"ip", "-o", "link", "show", "gpu0rdma0"}), "mtu 8896"));
    const std::string routes = InPod(pod, {"ip", "route"});
    EXPECT_TRUE(Contains(routes, "192.168.231.0/24 via 192.168.231.1 dev gpu0rdma0")) << routes;
    EXPECT_TRUE(Contains(routes, "192.168.231.1 dev gpu0rdma0")) << routes;
    EXPECT_NE(RunCommand("ip link show gpu0rdma0").status, 0) << "gpu0rdma0 is still on the host";
  }

  fakes::FakeApiServer api_;
  std::unique_ptr<fakes::FakeKubelet> kubelet_;
  std::unique_ptr<faults::DaemonProcess> daemon_;
  std::unique_ptr<CriClient> cri_;
  fs::path dir_;
  int port_ = 0, starts_ = 0;
  std::vector<RunningPod> pods_;
  std::vector<std::string> links_;
  std::string host_a4_state_;
  fs::path daemon_container_log_;
};

TEST_F(ContainerdE2eTest, Gb300PodSeesExactlyItsDevices) {
  StartDaemon(Gb300());
  // The node's first NIC: mlx5_0, uverbs0 (231:192), umad0 (231:0), and
  // rdma_cm (10:58), as the snapshot's README lists them.
  const auto claim = Prepare("gb300-1nic", {"pci-0101-00-00-0"}, "gb300-pod-uid");
  const auto pod = StartPod("gb300-worker", "gb300-pod-uid");
  EXPECT_EQ(InPod(pod, {"ls", "/dev/infiniband"}), "rdma_cm\numad0\nuverbs0\n");
  EXPECT_EQ(InPod(pod, {"stat", "-c", "%n %F %t:%T", "/dev/infiniband/uverbs0", "/dev/infiniband/umad0",
                        "/dev/infiniband/rdma_cm"}),
            "/dev/infiniband/uverbs0 character special file e7:c0\n"
            "/dev/infiniband/umad0 character special file e7:0\n"
            "/dev/infiniband/rdma_cm character special file a:3a\n");
  const std::string cgroup = InPod(pod, {"cat", "/sys/fs/cgroup/devices/devices.list"});
  for (const char* rule : {"c 231:192 rw", "c 231:0 rw", "c 10:58 rw"}) EXPECT_TRUE(Contains(cgroup, rule)) << cgroup;
  EXPECT_FALSE(Contains(cgroup, "c 231:193 ")) << "another NIC's device is allowed: " << cgroup;
  const std::string env = InPod(pod, {"env"});
  EXPECT_TRUE(Contains(env, "NCCL_IB_HCA=")) << env;

  // A pod without claims gets nothing.
  const auto plain = StartPod("plain", "plain-pod-uid");
  EXPECT_TRUE(Contains(InPod(plain, {"ls", "/dev/infiniband"}), "No such file")) << InPod(plain, {"ls", "/dev"});

  // What pod starts cost in discoveries: each adds a veth to the CNI bridge,
  // and veths are not published under the default filter, so none runs.
  // (The wait only gives a discovery the chance to show: it cannot hide one.)
  const double before = Metric("dranet_discoveries_total");
  constexpr int kPods = 3;
  for (int i = 0; i < kPods; ++i) StartPod("churn-" + std::to_string(i), "churn-uid-" + std::to_string(i));
  std::this_thread::sleep_for(1s);
  const double scans = Metric("dranet_discoveries_total") - before;
  std::cout << "[ measured ] discoveries during " << kPods << " pod starts: " << scans << "\n";
  EXPECT_EQ(scans, 0) << daemon_->Log();

  DeletePod(pod);
  EXPECT_EQ(kubelet_->Unprepare("dra.net", fakes::DraApi::kV1, {claim}).at(claim.uid), "");
}

TEST_F(ContainerdE2eTest, A4NetdevMovesIntoTheCniPodAndBack) {
  MakeA4Nic();
  StartDaemon(LiveHost());
  const std::string device = PublishedA4Device();
  ASSERT_FALSE(device.empty()) << daemon_->Log();
  const auto claim = Prepare("a4-rdma", {device}, "a4-pod-uid");
  const auto pod = StartPod("a4-worker", "a4-pod-uid");
  ExpectA4NicInPod(pod);
  DeletePod(pod);
  EXPECT_EQ(HostA4State(), host_a4_state_);
  EXPECT_EQ(kubelet_->Unprepare("dra.net", fakes::DraApi::kV1, {claim}).at(claim.uid), "");
  EXPECT_EQ(HostA4State(), host_a4_state_);
}

// containerd 1.7 sends no Stop/RemovePodSandbox for pods created before it
// restarted. dranetd keeps such a pod's namespace and brings the NIC home
// when containerd deletes it; pods created after the restart still get theirs.
TEST_F(ContainerdE2eTest, PodFromBeforeAContainerdRestartGivesItsNicBack) {
  MakeA4Nic();
  StartDaemon(LiveHost());
  const std::string device = PublishedA4Device();
  ASSERT_FALSE(device.empty()) << daemon_->Log();
  const auto before_claim = Prepare("a4-before", {device}, "a4-before-uid");
  const auto pod = StartPod("a4-before", "a4-before-uid");
  ExpectA4NicInPod(pod);

  ASSERT_TRUE(Containerd::Get().Restart()) << Containerd::Get().error();
  cri_ = std::make_unique<CriClient>(Containerd::Get().var("CONTAINERD_SOCKET"));
  ASSERT_TRUE(PollUntil([&] {
    return std::regex_search(daemon_->Log(), std::regex("NRI plugin registered[^]*NRI plugin registered"));
  })) << daemon_->Log();
  ASSERT_TRUE(PollUntil([&] { return faults::LoopbackGet(port_, "/readyz").status == 200; }));
  EXPECT_TRUE(Contains(InPod(pod, {"ip", "-o", "addr"}), "inet 192.168.231.4/32")) << "the running pod lost its NIC";

  DeletePod(pod);
  ASSERT_TRUE(PollUntil([&] { return HostA4State() == host_a4_state_; }, 30s))
      << "gpu0rdma0 did not come home:\n" << HostA4State() << "\nwanted:\n" << host_a4_state_ << daemon_->Log();
  EXPECT_TRUE(Contains(daemon_->Log(), "pod netdevs are on the host")) << daemon_->Log();

  // The kubelet unprepares the deleted pod's claim; a pod created after the
  // restart, given the same NIC, gets it over the new connection.
  EXPECT_EQ(kubelet_->Unprepare("dra.net", fakes::DraApi::kV1, {before_claim}).at(before_claim.uid), "");
  Prepare("a4-after", {device}, "a4-after-uid");
  const auto after = StartPod("a4-after", "a4-after-uid");
  ExpectA4NicInPod(after);
  DeletePod(after);
  EXPECT_EQ(HostA4State(), host_a4_state_);
}

// What the runtime sends over NRI for one pod's life, counted by dranetd
// (dranet_operations_total): containerd 1.7 and 2.x alike send one
// Configure and one Synchronize at registration, then RunPodSandbox,
// CreateContainer, StopPodSandbox and RemovePodSandbox once each (dranetd
// subscribes to no other event; a request it does not know would be counted
// under its own name and fail the test).
TEST_F(ContainerdE2eTest, OnePodsLifeIsOneRequestPerSubscribedEvent) {
  StartDaemon(LiveHost());
  const auto pod = StartPod("counted", "counted-pod-uid");
  DeletePod(pod);
  const std::map<std::string, double> wanted = {{"Configure", 1},     {"Synchronize", 1},     {"RunPodSandbox", 1},
                                                {"CreateContainer", 1}, {"StopPodSandbox", 1}, {"RemovePodSandbox", 1}};
  std::map<std::string, double> counted;
  const std::regex sample(R"re(^dranet_operations_total\{operation="([^"]+)",result="[^"]+"\} ([0-9.e+]+)$)re");
  PollUntil([&] {
    counted.clear();
    std::istringstream lines(faults::LoopbackGet(port_, "/metrics").body);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_match(line, m, sample)) counted[m[1]] += std::stod(m[2]);
    }
    return counted == wanted;
  });
  EXPECT_EQ(counted, wanted) << faults::LoopbackGet(port_, "/metrics").body;
}

// containerd starts pods without a plugin that is not connected. The next
// Synchronize shows the container without its devices: one Event and one
// count, however often containerd synchronizes again.
TEST_F(ContainerdE2eTest, ContainerStartedWhileDranetdWasDownIsReportedOnce) {
  StartDaemon(Gb300());
  Prepare("gb300-bypassed", {"pci-0101-00-00-0"}, "bypassed-pod-uid");
  const auto stopped = daemon_->Terminate();
  ASSERT_TRUE(stopped.has_value());
  const auto pod = StartPod("bypassed", "bypassed-pod-uid");
  EXPECT_TRUE(Contains(InPod(pod, {"ls", "/dev/infiniband"}), "No such file"));

  StartDaemon(Gb300());
  ASSERT_TRUE(PollUntil([&] { return Metric("dranet_bypassed_containers_total") == 1; }))
      << faults::LoopbackGet(port_, "/metrics").body;
  auto events = [&] {
    int n = 0;
    for (const auto& e : api_.ListObjects("/api/v1/namespaces/ml/events")) n += Contains(e, "DevicesMissing");
    return n;
  };
  ASSERT_TRUE(PollUntil([&] { return events() == 1; })) << daemon_->Log();

  ASSERT_TRUE(Containerd::Get().Restart()) << Containerd::Get().error();
  cri_ = std::make_unique<CriClient>(Containerd::Get().var("CONTAINERD_SOCKET"));
  ASSERT_TRUE(PollUntil([&] {
    return std::regex_search(daemon_->Log(), std::regex("NRI synchronize[^]*NRI synchronize"));
  })) << daemon_->Log();
  EXPECT_EQ(Metric("dranet_bypassed_containers_total"), 1);
  EXPECT_EQ(Metric("dranet_bypassed_containers"), 1);
  EXPECT_EQ(events(), 1);
}

// dranetd as its DaemonSet runs it (packaging/install.yaml): the container of
// a hostNetwork pod of this containerd, from an image of the binary and its
// shared libraries, with the manifest's securityContext (every capability
// dropped but NET_ADMIN and SYS_ADMIN, not privileged, read-only root, no
// privilege escalation, RuntimeDefault seccomp, the kubelet's masked and
// read-only /proc paths) and its hostPath volumes: kubelet's plugin
// directories at their own paths, the state directory, the NRI socket, the
// pod network namespaces (HostToContainer), the plugin and kubeconfig files.
// It registers with the kubelet and with NRI, moves an A4 NIC into a CNI pod
// and home again, and exits 0 on the runtime's SIGTERM. What its container's
// memory cgroup is charged for is printed (a measurement, not a check).
TEST_F(ContainerdE2eTest, DaemonSetPodOfDranetdMovesAnA4NicIntoACniPodAndBack) {
  MakeA4Nic();
  auto& containerd = Containerd::Get();
  const std::string image = "localhost/dranet-test/dranetd:1";
  ASSERT_EQ(containerd.ImportBinaryImage(image, DRANETD_BINARY), "");

  const std::string kubelet = (dir_ / "kubelet").string();
  const std::string netns_dir = Containerd::RunDir() + "/state/io.containerd.grpc.v1.cri/netns";
  for (const auto& d : {dir_ / "kubelet/plugins", dir_ / "state", dir_ / "pod-logs", fs::path(netns_dir)})
    fs::create_directories(d);
  RunningPod pod;
  pod.spec.name = "dranet-x7k2p";
  pod.spec.uid = "dranet-pod-uid";
  pod.spec.namespace_name = "kube-system";
  pod.spec.host_network = true;
  pod.spec.log_dir = (dir_ / "pod-logs").string();
  daemon_container_log_ = dir_ / "pod-logs/dranetd.log";
  pod.sandbox = cri_->RunPodSandbox(pod.spec);
  pods_.push_back(pod);
  ContainerSpec dranetd{"dranetd",
                        image,
                        {"/usr/bin/dranetd", "--kubeconfig=/etc/dranet/kubeconfig", std::string("--node-name=") + kNodeName,
                         "--kubelet-root-dir=" + kubelet, "--state-dir=/var/run/dranet",
                         "--nri-socket=/var/run/nri/nri.sock", "--plugin-dir=/opt/dranet/plugins", "--host-root=/",
                         "--metrics-address=127.0.0.1:0", "--filter", "", "--v=2"},
                        {{"NODE_NAME", kNodeName}},
                        {{(dir_ / "plugins").string(), "/opt/dranet/plugins", true, false},
                         {kubelet + "/plugins", kubelet + "/plugins", false, false},
                         {kubelet + "/plugins_registry", kubelet + "/plugins_registry", false, false},
                         {(dir_ / "state").string(), "/var/run/dranet", false, false},
                         {netns_dir, netns_dir, true, true},
                         {containerd.var("NRI_SOCKET"), "/var/run/nri/nri.sock", false, false},
                         {(dir_ / "kubeconfig").string(), "/etc/dranet/kubeconfig", true, false}},
                        {}};
  // A sanitizer build's options reach dranetd as they reach the daemons the
  // other tests start (scripts/sanitize.sh), its leak suppressions with them.
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    dranetd.envs.emplace_back(name, value);
    std::smatch file;
    const std::string options = value;
    if (std::regex_search(options, file, std::regex("suppressions=([^:]+)")) && fs::exists(file[1].str()))
      dranetd.mounts.push_back({file[1].str(), file[1].str(), true, false});
  }
  // As packaging/install.yaml has it (tests/packaging/packaging_test.py keeps
  // the manifest to exactly these).
  dranetd.security.drop_capabilities = {"ALL"};
  dranetd.security.add_capabilities = {"NET_ADMIN", "SYS_ADMIN"};
  dranetd.security.readonly_rootfs = true;
  dranetd.security.no_new_privs = true;
  dranetd.security.seccomp_runtime_default = true;
  dranetd.security.run_as_user = 0;
  dranetd.security.kubelet_default_paths = true;
  pod.container = cri_->CreateContainer(pod.sandbox, pod.spec, dranetd);
  // containerd wrote the image's files when it unpacked them: their pages are
  // in the page cache, charged to containerd's cgroup, as on a node that just
  // pulled the image. DRANET_E2E_COLD_CACHE=1 drops the page cache first, as
  // on a node that has since reclaimed it: dranetd's cgroup is then charged
  // for every page of its binary and libraries that it reads (read-ahead too).
  if (std::getenv("DRANET_E2E_COLD_CACHE")) {
    ASSERT_EQ(RunCommand("sync && echo 3 >/proc/sys/vm/drop_caches").status, 0);
  }
  cri_->StartContainer(pod.container);

  PollUntil(
      [&] { return kubelet_->Plugin("dra.net") || cri_->ContainerStatus(pod.container).state != ContainerState::kRunning; },
      60s);
  ASSERT_TRUE(kubelet_->Plugin("dra.net")) << DaemonLog();
  port_ = faults::MetricsPortIn(DaemonLog());
  ASSERT_NE(port_, 0) << DaemonLog();
  ASSERT_TRUE(PollUntil([&] { return faults::LoopbackGet(port_, "/readyz").status == 200; }))
      << faults::LoopbackGet(port_, "/readyz").body << DaemonLog();
  const std::string device = PublishedA4Device();
  ASSERT_FALSE(device.empty()) << DaemonLog();
  const auto claim = Prepare("a4-from-pod", {device}, "a4-worker-uid");
  const auto worker = StartPod("a4-worker", "a4-worker-uid");
  ExpectA4NicInPod(worker);
  DeletePod(worker);
  EXPECT_EQ(HostA4State(), host_a4_state_) << DaemonLog();
  EXPECT_EQ(kubelet_->Unprepare("dra.net", fakes::DraApi::kV1, {claim}).at(claim.uid), "");

  std::this_thread::sleep_for(2s);  // idle, Ready, the claim served
  std::cout << "[ measured ] dranetd's pod after serving a claim: " << MemoryOf(cri_->ContainerPid(pod.container))
            << "\n";

  cri_->StopContainer(pod.container, 20);
  const auto stopped = cri_->ContainerStatus(pod.container);
  EXPECT_EQ(stopped.state, ContainerState::kExited);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.reason << " " << stopped.message << DaemonLog();
  EXPECT_TRUE(Contains(DaemonLog(), "shutting down")) << DaemonLog();
}


// What dranetd adds to pod start on a real containerd: RunPodSandbox to the
// container started (CreateContainer + StartContainer returned), for pods
// with no claim and no dranetd, with dranetd running (its NRI hooks only),
// with a GB300 claim (4 char devices injected), and with 1 and 8 netdevs
// moved into the pod; beside them the kernel's own cost of moving a veth
// into a network namespace and back (ip link set … netns, two ip runs).
// Claims are prepared before the clock starts and pods deleted after it
// stops, as the kubelet prepares before it creates the sandbox.
// DRANET_POD_START_PODS sets the pods per case (default 50).
TEST_F(ContainerdE2eTest, DISABLED_PodStartShare) {
  const char* env = std::getenv("DRANET_POD_START_PODS");
  const int pods = env ? std::max(1, std::atoi(env)) : 50;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::map<std::string, std::vector<double>> results;
  int serial = 0;
  // One pod start, timed; `devices` empty: no claim.
  auto timed_pod = [&](const std::string& case_name, const std::vector<std::string>& devices) {
    const std::string uid = "start-uid-" + std::to_string(++serial);
    std::optional<fakes::KubeletClaim> claim;
    if (!devices.empty()) claim = Prepare("start-" + std::to_string(serial), devices, uid);
    const auto start = Clock::now();
    const auto pod = StartPod("start-" + std::to_string(serial), uid);
    results[case_name].push_back(ms(Clock::now() - start));
    DeletePod(pod);
    if (claim) {
      EXPECT_EQ(kubelet_->Unprepare("dra.net", fakes::DraApi::kV1, {*claim}).at(claim->uid), "");
    }
  };
  StartPod("warm-up", "warm-up-uid");  // images unpacked, CNI ready
  for (int i = 0; i < pods; ++i) timed_pod("no dranetd", {});

  StartDaemon(Gb300());
  for (int i = 0; i < pods; ++i) timed_pod("dranetd, no claim", {});
  for (int i = 0; i < pods; ++i) timed_pod("dranetd, GB300 claim (uverbs, umad, rdma_cm)", {"pci-0101-00-00-0"});
  daemon_.reset();

  MakeNics(8);
  StartDaemon(LiveHost());
  std::vector<std::string> nics;
  for (int i = 0; i < 8; ++i) {
    std::string device;
    PollUntil([&] {
      device = faults::DeviceWithIfName(api_.ListObjects(kSlices), "dnpod" + std::to_string(i));
      return !device.empty();
    });
    ASSERT_FALSE(device.empty()) << daemon_->Log();
    nics.push_back(device);
  }
  for (int i = 0; i < pods; ++i) timed_pod("dranetd, 1 netdev", {nics[0]});
  for (int i = 0; i < pods; ++i) timed_pod("dranetd, 8 netdevs", nics);
  daemon_.reset();

  // The kernel's share: one veth into a namespace and back.
  ASSERT_EQ(RunCommand("ip netns add dranet-start-bench").status, 0);
  for (int i = 0; i < pods; ++i) {
    const auto start = Clock::now();
    ASSERT_EQ(RunCommand("ip link set dnpeer0 netns dranet-start-bench").status, 0);
    ASSERT_EQ(RunCommand("ip -n dranet-start-bench link set dnpeer0 netns 1").status, 0);
    results["kernel: a veth into a netns and back (2 ip runs)"].push_back(ms(Clock::now() - start));
  }
  RunCommand("ip netns del dranet-start-bench");

  auto percentile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  };
  const double base = percentile(results["no dranetd"], 0.5), base99 = percentile(results["no dranetd"], 0.99);
  std::ifstream loadavg("/proc/loadavg");
  std::string load;
  loadavg >> load;
  for (const auto& [name, v] : results) {
    std::cout << "[ measured ] " << name << ": median " << percentile(v, 0.5) << " ms, p99 " << percentile(v, 0.99)
              << " ms";
    if (name.rfind("dranetd", 0) == 0)
      std::cout << " (added to pod start: median " << percentile(v, 0.5) - base << " ms, p99 "
                << percentile(v, 0.99) - base99 << " ms)";
    std::cout << ", n=" << v.size() << ", load " << load << "\n";
  }
}

}  // namespace
}  // namespace dranet::runtime_test
