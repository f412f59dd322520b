// dranetd end to end: the real binary on the GB300 snapshot publishes its
// ResourceSlices to the fake API server over HTTP, turns ready, serves
// metrics, writes nothing more on a restart with nothing changed, and
// shuts down cleanly on SIGTERM.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <thread>

#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "plugins/host_services.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr auto kDeadline = 60s;
const std::string kNode = "aks-gpu-45139532-vmss000081";

// A running dranetd whose stderr is collected on a thread.
class Dranetd {
 public:
  explicit Dranetd(const std::vector<std::string>& args) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      close(fds[0]);
      std::vector<char*> argv{const_cast<char*>(DRANETD_BINARY)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(DRANETD_BINARY, argv.data());
      _exit(127);
    }
    close(fds[1]);
    reader_ = std::thread([this, fd = fds[0]] {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
        std::lock_guard lock(mu_);
        log_.append(buf, static_cast<std::size_t>(n));
      }
      close(fd);
    });
  }
  ~Dranetd() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
  }
  std::string Log() {
    std::lock_guard lock(mu_);
    return log_;
  }
  // Waits for a log line matching `re`; returns its first capture group.
  std::string WaitForLog(const std::regex& re) {
    auto until = std::chrono::steady_clock::now() + kDeadline;
    std::smatch m;
    while (std::chrono::steady_clock::now() < until) {
      std::string log = Log();
      if (std::regex_search(log, m, re)) return m.size() > 1 ? m[1].str() : m[0].str();
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no log line matching the pattern; log:\n" << Log();
    return {};
  }
  int Terminate() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  std::thread reader_;
  std::mutex mu_;
  std::string log_;
};

dranet::plugins::HttpResult Get(uint16_t port, const std::string& path) {
  return dranet::plugins::CurlHttpGet("http://127.0.0.1:" + std::to_string(port) + path, {}, 5000);
}

class DaemonPublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dranetd-e2e-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    api_.RequireToken("e2e-token");
    api_.PutObject("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + kNode + R"("}})");
    // A kubelet to register with: readiness waits for the registration.
    fs::create_directories(dir_ / "kubelet/plugins_registry");
    dranet::fakes::FakeKubeletOptions kubelet_options;
    kubelet_options.registry_dir = dir_ / "kubelet/plugins_registry";
    kubelet_ = std::make_unique<dranet::fakes::FakeKubelet>(kubelet_options);
    kubelet_->Start();
    std::ofstream(dir_ / "kubeconfig") << "apiVersion: v1\nkind: Config\ncurrent-context: e2e\n"
                                       << "clusters:\n- name: fake\n  cluster:\n    server: " << api_.url() << "\n"
                                       << "users:\n- name: u\n  user:\n    token: e2e-token\n"
                                       << "contexts:\n- name: e2e\n  context:\n    cluster: fake\n    user: u\n";
  }
  void TearDown() override {
    kubelet_.reset();
    fs::remove_all(dir_);
  }

  std::vector<std::string> Args() {
    return {"--kubeconfig", (dir_ / "kubeconfig").string(), "--node-name", kNode,
            "--host-root", std::string(DRANET_TEST_NODES_DIR) + "/nd-gb300-v6",
            "--metrics-address", "127.0.0.1:0", "-v", "2",
            "--kubelet-root-dir", (dir_ / "kubelet").string(), "--state-dir", (dir_ / "state").string(),
            "--nri=false"};
  }

  std::size_t SliceWrites() {
    return api_.CountRequests("POST", "resourceslices") + api_.CountRequests("PUT", "resourceslices") +
           api_.CountRequests("DELETE", "resourceslices");
  }

  fs::path dir_;
  dranet::fakes::FakeApiServer api_;
  std::unique_ptr<dranet::fakes::FakeKubelet> kubelet_;
};

uint16_t WaitForReady(Dranetd& d) {
  std::string port = d.WaitForLog(std::regex("\"serving metrics and health\" .*port=\"([0-9]+)\""));
  if (port.empty()) return 0;
  uint16_t p = static_cast<uint16_t>(std::stoi(port));
  auto until = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < until) {
    if (Get(p, "/readyz").status == 200) return p;
    std::this_thread::sleep_for(50ms);
  }
  ADD_FAILURE() << "never ready: " << Get(p, "/readyz").body << "\nlog:\n" << d.Log();
  return p;
}

TEST_F(DaemonPublishTest, PublishesGb300SliceAndIsQuietOnRestart) {
  std::size_t writes_first_run = 0;
  {
    Dranetd d(Args());
    uint16_t port = WaitForReady(d);
    ASSERT_NE(port, 0);
    auto slices = api_.ListObjects("/apis/resource.k8s.io/v1/resourceslices");
    ASSERT_EQ(slices.size(), 1u);
    const std::string& slice = slices[0];
    for (int i = 0; i < 4; ++i)
      EXPECT_NE(slice.find("\"pci-010" + std::to_string(i + 1) + "-00-00-0\""), std::string::npos) << slice;
    EXPECT_NE(slice.find("\"azure.dra.net/placementGroupId\":{\"string\":\"c6c749e8-a38b-470e-8c94-2a7d00001bf0\"}"),
              std::string::npos)
        << "the azure plugin read the snapshot's recorded IMDS response";
    EXPECT_NE(slice.find("\"nvidia.dra.net/gpuLink\""), std::string::npos);
    EXPECT_NE(slice.find("\"kind\":\"Node\""), std::string::npos) << "ownerReference to the Node";

    auto metrics = Get(port, "/metrics");
    EXPECT_EQ(metrics.status, 200);
    EXPECT_NE(metrics.body.find("dranet_published_devices 4\n"), std::string::npos) << metrics.body;
    EXPECT_NE(metrics.body.find("dranet_build_info{version="), std::string::npos);
    EXPECT_NE(metrics.body.find("process_resident_memory_bytes "), std::string::npos);
    EXPECT_NE(metrics.body.find("dranet_plugins{plugin=\"azure\",outcome=\"loaded\"} 1"), std::string::npos);
    EXPECT_EQ(Get(port, "/livez").status, 200);
    EXPECT_EQ(Get(port, "/nope").status, 404);
    writes_first_run = SliceWrites();
    EXPECT_GE(writes_first_run, 1u);
    EXPECT_EQ(d.Terminate(), 0) << d.Log();
    EXPECT_NE(d.Log().find("\"shutting down\""), std::string::npos);
  }
  // A restart with nothing changed writes nothing.
  Dranetd again(Args());
  ASSERT_NE(WaitForReady(again), 0);
  EXPECT_EQ(SliceWrites(), writes_first_run) << again.Log();
  EXPECT_EQ(again.Terminate(), 0);
}

TEST_F(DaemonPublishTest, NotReadyWhileTheApiServerIsDown) {
  api_.SetDown(true);
  Dranetd d(Args());
  std::string port = d.WaitForLog(std::regex("\"serving metrics and health\" .*port=\"([0-9]+)\""));
  ASSERT_FALSE(port.empty());
  uint16_t p = static_cast<uint16_t>(std::stoi(port));
  d.WaitForLog(std::regex("\"inventory updated\""));
  auto ready = Get(p, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_NE(ready.body.find("[-]first-publish"), std::string::npos) << ready.body;
  EXPECT_NE(ready.body.find("kubelet-registered"), std::string::npos) << ready.body;
  api_.SetDown(false);
  ASSERT_NE(WaitForReady(d), 0) << "publishing resumes once the API server is back";
  EXPECT_EQ(api_.ListObjects("/apis/resource.k8s.io/v1/resourceslices").size(), 1u);
  EXPECT_EQ(d.Terminate(), 0);
}

}  // namespace
