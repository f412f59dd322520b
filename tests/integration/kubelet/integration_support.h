#pragma once
// Shared pieces of the core/kubelet integration tests: temp dirs, claims in
// the fake API server, and the kubelet-harness process.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "kube/cluster_config.h"

namespace dranet::kubelet::testing {

inline constexpr const char* kGb300Node = "aks-gpu-45139532-vmss000081";
inline constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";

inline std::filesystem::path Gb300Root() { return std::filesystem::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6"; }

inline kube::ClusterConfig LoopbackCluster(const std::string& url) {
  kube::ClusterConfig config;
  config.server = url;
  return config;
}

inline fakes::FakeKubeletOptions KubeletOptions(const std::filesystem::path& registry_dir,
                                                std::vector<std::string> versions = {"v1.DRAPlugin",
                                                                                     "v1beta1.DRAPlugin"}) {
  fakes::FakeKubeletOptions options;
  options.registry_dir = registry_dir;
  options.supported_versions = std::move(versions);
  return options;
}

// A short unique directory (socket paths must stay under 108 bytes).
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/dranet-kl-XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// An allocated claim reserved for `pods`, holding `devices` of our driver in `pool`.
inline std::string ClaimJson(const std::string& name, const std::string& pool, const std::vector<std::string>& devices,
                             const std::vector<std::string>& pods = {"pod-1"}, const std::string& config_json = "") {
  std::string results, reserved;
  for (const auto& d : devices)
    results += std::string(results.empty() ? "" : ",") + R"({"request":"nic","driver":"dra.net","pool":")" + pool +
               R"(","device":")" + d + R"("})";
  for (const auto& p : pods)
    reserved += std::string(reserved.empty() ? "" : ",") + R"({"resource":"pods","name":"pod-)" + p + R"(","uid":")" +
                p + R"("})";
  std::string config = config_json.empty()
                           ? ""
                           : R"(,"config":[{"source":"FromClaim","opaque":{"driver":"dra.net","parameters":)" +
                                 config_json + "}}]";
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
         R"(","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"nic","exactly":{"deviceClassName":"dranet.net"}}]}},)" +
         R"("status":{"allocation":{"devices":{"results":[)" + results + "]" + config + R"(}},"reservedFor":[)" +
         reserved + "]}}";
}

// Stores the claim; returns the kubelet's view of it (with the server's UID).
inline fakes::KubeletClaim PutClaim(fakes::FakeApiServer& api, const std::string& json) {
  rapidjson::Document doc;
  const std::string stored = api.PutObject(kClaims, json);
  doc.Parse(stored.c_str());
  const auto& meta = doc["metadata"];
  return {"ml", meta["name"].GetString(), meta["uid"].GetString()};
}

// The kubelet-harness process (KubeletPlugin over real sockets).
class Harness {
 public:
  struct Options {
    std::filesystem::path kubelet_root, state_dir, host_root;
    std::string api_server, node_name, fault;
    std::filesystem::path log_file;  // the harness's stderr; empty: this process's
  };
  explicit Harness(const Options& o) : log_file_(o.log_file) {
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!o.fault.empty()) ::setenv("DRANET_FAULT", o.fault.c_str(), 1);
      if (!o.log_file.empty()) {
        const int fd = ::open(o.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) ::dup2(fd, STDERR_FILENO);
      }
      std::vector<std::string> args = {DRANET_KUBELET_HARNESS, "--kubelet-root-dir", o.kubelet_root.string(),
                                       "--state-dir", o.state_dir.string(), "--host-root", o.host_root.string(),
                                       "--api-server", o.api_server, "--node-name", o.node_name};
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Harness() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  // Waits for the process to end; its wait status.
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return status;
  }
  int Terminate() {
    ::kill(pid_, SIGTERM);
    return Wait();
  }
  // What it logged so far (Options::log_file).
  std::string Log() const {
    std::ifstream in(log_file_);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path log_file_;
  pid_t pid_ = -1;
  bool waited_ = false;
};

}  // namespace dranet::kubelet::testing
