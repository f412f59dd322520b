#pragma once
// core/health/taint_policy.h — which devices carry the NoSchedule taint
// that keeps new claims off an unhealthy device, with hysteresis so that a
// flapping link does not rewrite the ResourceSlice at every flap.
//
// A device is tainted (key dra.net/unhealthy, value the verdict's reason,
// effect NoSchedule) as soon as it is Unhealthy; the taint goes only once
// the device has been Healthy for `clear_after` without a break. A device
// flapping faster than that is tainted once and stays tainted until it has
// been quiet that long: two slice writes per episode, whatever the flap
// rate. While tainted, a new reason (another problem) changes the value at
// once. A device that leaves the report loses its taint with it. Allocated
// devices keep being published; a taint with effect NoSchedule only stops
// new allocations.
#include <chrono>
#include <map>
#include <string>

#include "health/health_monitor.h"
#include "inventory/device.h"

namespace dranet::health {

inline constexpr const char* kUnhealthyTaintKey = "dra.net/unhealthy";
inline constexpr const char* kTaintEffect = "NoSchedule";

class TaintPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TaintPolicy(std::chrono::milliseconds clear_after = std::chrono::seconds(30)) : clear_after_(clear_after) {}

  // The taints to publish now, by device name. `now` is a parameter so tests
  // can move time.
  std::map<std::string, inventory::DeviceTaint> Update(const HealthReport& report, Clock::time_point now);

  // When Update() should run again for a pending clear (a tainted device now
  // Healthy); Clock::time_point::max() when none is pending.
  Clock::time_point NextDue() const;

 private:
  struct State {
    inventory::DeviceTaint taint;
    Clock::time_point healthy_since{};  // zero: not healthy now
  };
  std::chrono::milliseconds clear_after_;
  std::map<std::string, State> tainted_;
};

// `devices` with each one's taint from `taints` (replacing what they had).
std::vector<inventory::Device> WithTaints(std::vector<inventory::Device> devices,
                                          const std::map<std::string, inventory::DeviceTaint>& taints);

}  // namespace dranet::health
