#include "health/taint_policy.h"

#include <algorithm>

namespace dranet::health {

std::map<std::string, inventory::DeviceTaint> TaintPolicy::Update(const HealthReport& report, Clock::time_point now) {
  std::map<std::string, State> next;
  for (const auto& d : report.devices) {
    auto it = tainted_.find(d.device);
    if (d.verdict.health == Health::kUnhealthy) {
      State state;
      state.taint = {kUnhealthyTaintKey, d.verdict.reason.empty() ? "Unhealthy" : d.verdict.reason, kTaintEffect};
      next[d.device] = state;
    } else if (it != tainted_.end()) {
      State state = it->second;
      if (d.verdict.health != Health::kHealthy) {
        state.healthy_since = {};  // Unknown: not a recovery
      } else if (state.healthy_since == Clock::time_point{}) {
        state.healthy_since = now;
      }
      if (state.healthy_since == Clock::time_point{} || now - state.healthy_since < clear_after_) next[d.device] = state;
    }
  }
  tainted_ = std::move(next);
  std::map<std::string, inventory::DeviceTaint> taints;
  for (const auto& [device, state] : tainted_) taints[device] = state.taint;
  return taints;
}

TaintPolicy::Clock::time_point TaintPolicy::NextDue() const {
  auto due = Clock::time_point::max();
  for (const auto& [device, state] : tainted_)
    if (state.healthy_since != Clock::time_point{}) due = std::min(due, state.healthy_since + clear_after_);
  return due;
}

std::vector<inventory::Device> WithTaints(std::vector<inventory::Device> devices,
                                          const std::map<std::string, inventory::DeviceTaint>& taints) {
  for (auto& d : devices) {
    d.taints.clear();
    if (auto it = taints.find(d.name); it != taints.end()) d.taints.push_back(it->second);
  }
  return devices;
}

}  // namespace dranet::health
