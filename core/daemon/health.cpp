#include "daemon/health.h"

namespace dranet::daemon {

void Health::AddCondition(const std::string& name) {
  std::lock_guard lock(mu_);
  conditions_.try_emplace(name, false);
}

void Health::Set(const std::string& name, bool ok) {
  std::lock_guard lock(mu_);
  conditions_[name] = ok;
}

void Health::AddLoop(const std::string& name, std::chrono::seconds allowance) {
  std::lock_guard lock(mu_);
  loops_[name] = Loop{allowance, Clock::now()};
}

void Health::Beat(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = loops_.find(name);
  if (it != loops_.end()) it->second.last = Clock::now();
}

Health::Verdict Health::Ready() const {
  std::lock_guard lock(mu_);
  Verdict v;
  for (const auto& [name, ok] : conditions_) {
    v.detail += (ok ? "[+]" : "[-]") + name + (ok ? " ok\n" : " not ready\n");
    v.ok = v.ok && ok;
  }
  return v;
}

Health::Verdict Health::Live(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  Verdict v;
  for (const auto& [name, loop] : loops_) {
    bool ok = now - loop.last <= loop.allowance;
    v.detail += (ok ? "[+]" : "[-]") + name + (ok ? " ok\n" : " stalled\n");
    v.ok = v.ok && ok;
  }
  return v;
}

}  // namespace dranet::daemon
