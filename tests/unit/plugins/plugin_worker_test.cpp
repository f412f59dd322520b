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

// Work made of steps (an annotate pass over many devices) is bounded per
// step: many steps each well inside the deadline add up to far more than
// it, and the call still succeeds.
TEST(PluginWorker, StepDeadlineBoundsEachStepNotTheWhole) {
  PluginWorker w("t");
  int steps = 0;
  EXPECT_TRUE(w.RunSteps(
      [&](const PluginWorker::StepDone& step_done) {
        for (int i = 0; i < 12; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(25));  // the work itself, not a wait for the test
          ++steps;
          step_done();
        }
      },
      std::chrono::milliseconds(150)));
  EXPECT_EQ(steps, 12);
  EXPECT_FALSE(w.hung());
}

TEST(PluginWorker, OneStepPastTheDeadlineMarksHung) {
  auto gate = std::make_shared<std::pair<std::mutex, std::condition_variable>>();
  auto released = std::make_shared<bool>(false);
  auto steps = std::make_shared<std::atomic<int>>(0);
  PluginWorker w("t");
  EXPECT_FALSE(w.RunSteps(
      [gate, released, steps](const PluginWorker::StepDone& step_done) {
        ++*steps;
        step_done();
        std::unique_lock l(gate->first);
        gate->second.wait(l, [&] { return *released; });
      },
      std::chrono::milliseconds(50)));
  EXPECT_TRUE(w.hung());
  EXPECT_EQ(steps->load(), 1);
  {
    std::lock_guard l(gate->first);
    *released = true;
  }
  gate->second.notify_all();
  // Once the late call has come back, the worker takes calls again.
  for (int i = 0; i < 5000 && w.hung(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(w.hung());
  bool ran = false;
  EXPECT_TRUE(w.Run([&] { ran = true; }, std::chrono::milliseconds(5000)));
  EXPECT_TRUE(ran);
}
