#pragma once
// tests/fakes/nri-runtime/memory_prepared_claims.h — an in-memory
// state::PreparedClaims for tests and benchmarks (no checkpoint file).
#include <algorithm>
#include <map>
#include <mutex>

#include "state/prepared_claims.h"

namespace dranet::testing {

class MemoryPreparedClaims : public state::PreparedClaims {
 public:
  void Put(const std::vector<inject::ClaimPlan>& plans) override {
    std::lock_guard lock(mu_);
    for (const auto& p : plans) plans_[p.claim_uid] = p;
  }
  void Remove(const std::vector<std::string>& claim_uids) override {
    std::lock_guard lock(mu_);
    for (const auto& uid : claim_uids) plans_.erase(uid);
  }
  std::optional<inject::ClaimPlan> Get(const std::string& claim_uid) const override {
    std::lock_guard lock(mu_);
    auto it = plans_.find(claim_uid);
    if (it == plans_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<inject::ClaimPlan> ForPod(const std::string& pod_uid) const override {
    std::lock_guard lock(mu_);
    std::vector<inject::ClaimPlan> out;
    for (const auto& [uid, p] : plans_) {
      if (std::find(p.pod_uids.begin(), p.pod_uids.end(), pod_uid) != p.pod_uids.end()) out.push_back(p);
    }
    return out;
  }
  std::vector<inject::ClaimPlan> All() const override {
    std::lock_guard lock(mu_);
    std::vector<inject::ClaimPlan> out;
    for (const auto& [uid, p] : plans_) out.push_back(p);
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, inject::ClaimPlan> plans_;
};

}  // namespace dranet::testing
