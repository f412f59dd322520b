#pragma once
// tests/unit/nri/nri_test_env.h — shared fixtures for NRI tests: a temp dir
// for the socket, a recording PodNetnsApplier, and node-type plans.
#include <stdlib.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "inject/pod_netns_applier.h"

namespace dranet::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dranet-nri-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Records every call; can hold Attach until released, or fail it.
class RecordingApplier : public inject::PodNetnsApplier {
 public:
  struct Call {
    std::string op;  // "attach" / "detach" / "adopt"
    inject::PodSandboxRef pod;
    std::size_t plans;
  };

  void AttachNetdevs(const inject::PodSandboxRef& pod, const std::vector<inject::ClaimPlan>& plans) override {
    std::unique_lock lock(mu_);
    calls_.push_back({"attach", pod, plans.size()});
    holds_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !hold_; });
    if (!fail_with_.empty()) throw inject::InjectError(fail_with_, fail_rdma_);
  }
  void DetachNetdevs(const inject::PodSandboxRef& pod, const std::vector<inject::ClaimPlan>& plans) override {
    std::lock_guard lock(mu_);
    calls_.push_back({"detach", pod, plans.size()});
    if (!fail_detach_with_.empty()) throw inject::InjectError(fail_detach_with_);
  }
  // Detaches fail from now on.
  void FailDetachWith(std::string message) {
    std::lock_guard lock(mu_);
    fail_detach_with_ = std::move(message);
  }

  void AdoptPod(const inject::PodSandboxRef& pod, const std::vector<inject::ClaimPlan>& plans) override {
    std::lock_guard lock(mu_);
    calls_.push_back({"adopt", pod, plans.size()});
  }
  std::vector<inject::PodSandboxRef> VanishedPods() override {
    std::lock_guard lock(mu_);
    ++vanished_checks_;
    return std::exchange(vanished_, {});
  }
  // HoldsPods() answers what SetHolds() last said (true at first); an
  // attach makes it true.
  bool HoldsPods() override {
    std::lock_guard lock(mu_);
    return holds_;
  }
  void SetHolds(bool holds) {
    std::lock_guard lock(mu_);
    holds_ = holds;
  }
  std::size_t vanished_checks() const {
    std::lock_guard lock(mu_);
    return vanished_checks_;
  }
  // The next VanishedPods() answers `pods` (once).
  void Vanish(std::vector<inject::PodSandboxRef> pods) {
    std::lock_guard lock(mu_);
    vanished_ = std::move(pods);
  }
  // The calls of one kind, as "<op> <pod uid>".
  std::vector<std::string> Ops(const std::string& op) const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& c : calls_)
      if (c.op == op) out.push_back(c.op + " " + c.pod.uid);
    return out;
  }

  void Hold() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  void Release() {
    std::lock_guard lock(mu_);
    hold_ = false;
    cv_.notify_all();
  }
  // Attaches fail from now on; `rdma`: as an RDMA link that cannot move.
  void FailWith(std::string message, bool rdma = false) {
    std::lock_guard lock(mu_);
    fail_with_ = std::move(message);
    fail_rdma_ = rdma;
  }
  std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  std::string fail_with_;
  std::string fail_detach_with_;
  bool fail_rdma_ = false;
  std::vector<Call> calls_;
  std::vector<inject::PodSandboxRef> vanished_;
  bool holds_ = true;
  std::size_t vanished_checks_ = 0;
};

// The GB300 claim (packaging/examples/nd-gb300-v6): one IB-only HCA (no netdev), its
// uverbs/umad nodes plus rdma_cm, and the NCCL env.
inline inject::ClaimPlan Gb300Plan(const std::string& pod_uid, std::uint32_t rdma_cm_minor = 58) {
  inject::ClaimPlan plan;
  plan.claim_uid = "c0ffee00-0000-4000-8000-000000000300";
  plan.claim_namespace = "ml";
  plan.claim_name = "train-0-1nic-aligned";
  plan.pod_uids = {pod_uid};
  plan.devices = {{"nic", "gb300-node", "pci-0101-00-00-0"}};
  plan.device_nodes = {
      {"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs0", 231, 192, "rw", 0666},
      {"/dev/infiniband/umad0", "/dev/infiniband/umad0", 231, 0, "rw", 0666},
      {"/dev/infiniband/rdma_cm", "/dev/infiniband/rdma_cm", 10, rdma_cm_minor, "rw", 0666},
  };
  plan.env = {{"NCCL_IB_HCA", "=mlx5_0"}, {"NCCL_SOCKET_IFNAME", "eth0"}};
  return plan;
}

}  // namespace dranet::testing
