#pragma once
// tests/unit/kube/kube_test_env.h — a fake API server on loopback plus a client for it, and a
// condition wait with a generous deadline (tests never sleep to pass, never assert on time).
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "base/log.h"
#include "fake_apiserver.h"
#include "kube/api_client.h"

namespace dranet::kube::testing {

// Polls `condition` until it holds or `deadline` passes; returns its last value.
template <typename Condition>
bool WaitUntil(Condition condition, std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= end) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A steady clock that moves only when told (ResourceApiOptions::now and the like).
class ManualClock {
 public:
  std::chrono::steady_clock::time_point Now() const {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ticks_.load()));
  }
  void Advance(std::chrono::steady_clock::duration by) { ticks_ += by.count(); }

 private:
  std::atomic<std::chrono::steady_clock::rep> ticks_{
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::hours(1)).count()};
};

class ApiTestEnv {
 public:
  ApiTestEnv() : log_(log_text_) {}

  // Options with short backoffs so that retry paths run quickly in tests.
  static ApiClientOptions FastOptions() {
    ApiClientOptions options;
    options.initial_backoff = std::chrono::milliseconds(1);
    options.max_backoff = std::chrono::milliseconds(20);
    options.request_timeout = std::chrono::milliseconds(10'000);
    return options;
  }

  // A client whose retry sleeps are recorded instead of waited.
  std::unique_ptr<ApiClient> MakeClient(ApiClientOptions options = FastOptions(),
                                        ClusterConfig config = {}) {
    if (config.server.empty()) config.server = server_.url();
    options.sleep = [this](std::chrono::milliseconds delay, std::stop_token) {
      std::lock_guard lock(sleeps_mu_);
      sleeps_.push_back(delay);
      return true;  // recorded, not waited: tests must not depend on time
    };
    return std::make_unique<ApiClient>(std::move(config), log_, std::move(options));
  }

  std::vector<std::chrono::milliseconds> sleeps() {
    std::lock_guard lock(sleeps_mu_);
    return sleeps_;
  }

  fakes::FakeApiServer& server() { return server_; }
  Logger& log() { return log_; }
  // What was logged; read it once the writers are gone.
  std::string log_text() const { return log_text_.str(); }

 private:
  fakes::FakeApiServer server_;
  std::ostringstream log_text_;
  Logger log_;
  std::mutex sleeps_mu_;
  std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace dranet::kube::testing
