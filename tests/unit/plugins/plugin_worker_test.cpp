// The per-plugin worker: serialises calls and gives up at a deadline.
#include "plugins/plugin_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

using dranet::plugins::PluginWorker;

TEST(PluginWorker, RunsWorkAndReturnsTrue) {
  PluginWorker w("t");
  int value = 0;
  EXPECT_TRUE(w.Run([&] { value = 7; }, std::chrono::milliseconds(5000)));
  EXPECT_EQ(value, 7);
  EXPECT_FALSE(w.hung());
}

TEST(PluginWorker, CallsAreSerialised) {
  PluginWorker w("t");
  auto inside = std::make_shared<std::atomic<int>>(0);
  auto max_seen = std::make_shared<std::atomic<int>>(0);
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&] {
      for (int j = 0; j < 50; ++j)
        w.Run([inside, max_seen] {
          int now = ++*inside;
          if (now > *max_seen) *max_seen = now;
          --*inside;
        }, std::chrono::milliseconds(10000));
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(max_seen->load(), 1);
}

TEST(PluginWorker, MissedDeadlineMarksHungAndLaterCallsFailFast) {
  auto gate = std::make_shared<std::pair<std::mutex, std::condition_variable>>();
  auto released = std::make_shared<bool>(false);
  {
    PluginWorker w("t");
    EXPECT_FALSE(w.Run([gate, released] {
      std::unique_lock l(gate->first);
      gate->second.wait(l, [&] { return *released; });
    }, std::chrono::milliseconds(50)));
    EXPECT_TRUE(w.hung());
    bool ran = false;
    EXPECT_FALSE(w.Run([&] { ran = true; }, std::chrono::milliseconds(5000)));
    EXPECT_FALSE(ran);
  }  // destroying a hung worker detaches its thread instead of blocking
  {
    std::lock_guard l(gate->first);
    *released = true;
  }
  gate->second.notify_all();
}
