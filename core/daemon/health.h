#pragma once
// core/daemon/health.h — liveness and readiness, as /livez and /readyz see them.
//
// Readiness is a set of named conditions (kubelet registration done, NRI
// connected, first publish done) that other components report; /readyz is
// 200 only when all are true and otherwise lists the failing ones. Liveness
// is a heartbeat per long-running loop: a loop that has not beaten within
// its allowance makes /livez fail.
#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace dranet::daemon {

class Health {
 public:
  using Clock = std::chrono::steady_clock;

  // Declares a readiness condition, initially false.
  void AddCondition(const std::string& name);
  void Set(const std::string& name, bool ok);
  // Declares a loop that must beat at least every `allowance`.
  void AddLoop(const std::string& name, std::chrono::seconds allowance);
  void Beat(const std::string& name);

  struct Verdict {
    bool ok = true;
    std::string detail;  // one line per check: "[+]name ok" / "[-]name failed"
  };
  Verdict Ready() const;
  // `now` is a parameter so tests can look into the future.
  Verdict Live(Clock::time_point now = Clock::now()) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, bool> conditions_;
  struct Loop {
    std::chrono::seconds allowance;
    Clock::time_point last;
  };
  std::map<std::string, Loop> loops_;
};

}  // namespace dranet::daemon
