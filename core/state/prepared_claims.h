#pragma once
// core/state/prepared_claims.h — the prepared claims of this node: an
// in-memory index backed by a crash-safe checkpoint (--state-dir).
//
// Writers: the kubelet DRA service (Prepare adds, Unprepare removes).
// Readers: the NRI hooks (which plans apply to a pod). One owner, one lock;
// all methods are thread-safe. Every mutation is durable when it returns
// (one write per call, however many claims it carries; concurrent calls
// share writes).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inject/plan.h"

namespace dranet::state {

class PreparedClaims {
 public:
  virtual ~PreparedClaims() = default;
  // Adds or replaces plans, durably, in one write.
  virtual void Put(const std::vector<inject::ClaimPlan>& plans) = 0;
  // Removes plans by claim UID (absent UIDs are fine), durably, in one write.
  virtual void Remove(const std::vector<std::string>& claim_uids) = 0;
  virtual std::optional<inject::ClaimPlan> Get(const std::string& claim_uid) const = 0;
  // The plans whose pod_uids contain `pod_uid`.
  virtual std::vector<inject::ClaimPlan> ForPod(const std::string& pod_uid) const = 0;
  virtual std::vector<inject::ClaimPlan> All() const = 0;
};

}  // namespace dranet::state
