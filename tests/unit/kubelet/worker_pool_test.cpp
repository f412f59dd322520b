#include "kubelet/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dranet::kubelet {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kNoDeadline = Clock::time_point::max();

// A one-shot signal with a generous failsafe, so a broken pool fails the
// test instead of hanging it.
class Gate {
 public:
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool Wait() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

template <typename Predicate>
bool Eventually(Predicate predicate) {
  for (int i = 0; i < 10'000; ++i) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(WorkerPoolTest, RunsEveryTaskOfABatch) {
  WorkerPool pool(3, "test-pool");
  std::atomic<int> ran{0};
  std::vector<WorkerPool::Task> tasks(50, [&](std::stop_token stop) {
    EXPECT_FALSE(stop.stop_requested());
    ++ran;
  });
  pool.RunBatch(std::move(tasks), kNoDeadline);
  EXPECT_EQ(ran.load(), 50);
  EXPECT_EQ(pool.WaitingBatches(), 0U);
}

// A batch queued behind a long one gets the next turn, not the last.
// A pool whose threads all sleep on an empty queue, given a batch of as
// many tasks: every thread wakes, so all tasks run at once. Each task waits
// (up to 10 s) for the others to start; a pool that woke one thread would
// run them one after another and every wait would time out.
TEST(WorkerPoolTest, ABatchOnAnIdlePoolStartsAllItsTasksAtOnce) {
  constexpr unsigned kThreads = 4;
  WorkerPool pool(kThreads, "test-idle");
  // The threads reach their wait (a shorter pause only lets a broken pool pass).
  pool.RunBatch({[](std::stop_token) {}}, std::chrono::steady_clock::now() + std::chrono::seconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::mutex mu;
  std::condition_variable cv;
  unsigned started = 0;
  std::atomic<unsigned> met{0};
  std::vector<WorkerPool::Task> tasks;
  for (unsigned i = 0; i < kThreads; ++i)
    tasks.push_back([&](std::stop_token) {
      std::unique_lock lock(mu);
      ++started;
      cv.notify_all();
      if (cv.wait_for(lock, std::chrono::seconds(10), [&] { return started == kThreads; })) ++met;
    });
  EXPECT_EQ(pool.RunBatch(std::move(tasks), std::chrono::steady_clock::now() + std::chrono::seconds(60)), 0u);
  EXPECT_EQ(met.load(), kThreads) << "tasks of one batch did not run together on an idle pool";
}

TEST(WorkerPoolTest, ALongBatchDoesNotHoldBackOneQueuedAfterIt) {
  WorkerPool pool(1, "test-pool");
  std::mutex mu;
  std::vector<std::string> order;
  auto record = [&](std::string what) {
    std::lock_guard lock(mu);
    order.push_back(std::move(what));
  };
  Gate first_started, release_first;
  std::vector<WorkerPool::Task> long_batch;
  for (int i = 0; i < 20; ++i)
    long_batch.push_back([&, i](std::stop_token) {
      if (i == 0) {
        first_started.Open();
        ASSERT_TRUE(release_first.Wait());
      }
      record("long" + std::to_string(i));
    });
  std::thread long_caller([&] { pool.RunBatch(std::move(long_batch), kNoDeadline); });
  ASSERT_TRUE(first_started.Wait());
  std::thread short_caller([&] { pool.RunBatch({[&](std::stop_token) { record("short"); }}, kNoDeadline); });
  ASSERT_TRUE(Eventually([&] { return pool.WaitingBatches() == 2; }));
  release_first.Open();
  long_caller.join();
  short_caller.join();

  ASSERT_EQ(order.size(), 21U);
  const auto position = std::find(order.begin(), order.end(), "short") - order.begin();
  // long0 was running and long1 had its turn already: "short" is third at
  // the latest (a FIFO queue puts it last, 21st).
  EXPECT_LE(position, 2) << "the one-task batch waited behind the long one";
}

// Every thread is held by another batch past this batch's deadline: the
// caller runs its tasks itself with a stopped token and returns.
TEST(WorkerPoolTest, PastTheDeadlineTheCallerRunsWhatNoThreadStarted) {
  WorkerPool pool(1, "test-pool");
  Gate busy_started, late_batch_returned;
  std::atomic<bool> busy_task_timed_out{false};
  std::thread busy_caller([&] {
    pool.RunBatch({[&](std::stop_token) {
                    busy_started.Open();
                    busy_task_timed_out = !late_batch_returned.Wait();
                  }},
                  kNoDeadline);
  });
  ASSERT_TRUE(busy_started.Wait());

  std::atomic<int> ran_stopped{0}, ran_not_stopped{0};
  std::vector<WorkerPool::Task> late(3, [&](std::stop_token stop) {
    if (stop.stop_requested()) ++ran_stopped;
    else ++ran_not_stopped;
  });
  pool.RunBatch(std::move(late), Clock::now() + std::chrono::milliseconds(50));
  late_batch_returned.Open();
  busy_caller.join();

  EXPECT_EQ(ran_stopped.load(), 3);
  EXPECT_EQ(ran_not_stopped.load(), 0);
  EXPECT_FALSE(busy_task_timed_out) << "the late batch only returned once the busy task ended";
  EXPECT_EQ(pool.WaitingBatches(), 0U);
}

// A running task learns of the deadline through its token.
TEST(WorkerPoolTest, RunningTasksAreToldWhenTheDeadlinePasses) {
  WorkerPool pool(2, "test-pool");
  std::atomic<int> stopped{0};
  std::vector<WorkerPool::Task> tasks(2, [&](std::stop_token stop) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, stop, std::chrono::seconds(10), [] { return false; }) == false && stop.stop_requested())
      ++stopped;
  });
  pool.RunBatch(std::move(tasks), Clock::now() + std::chrono::milliseconds(20));
  EXPECT_EQ(stopped.load(), 2);
}

// A task that ignores its stop (a blocking call with no way to interrupt
// it) holds the caller only for the grace period; it finishes on its
// thread later, and the pool keeps serving.
TEST(WorkerPoolTest, ATaskThatIgnoresItsStopIsLeftBehindAfterTheGrace) {
  WorkerPool pool(2, "test-pool");
  Gate release, finished;
  std::atomic<bool> saw_stop{false};
  std::vector<WorkerPool::Task> tasks;
  tasks.push_back([&](std::stop_token stop) {
    release.Wait();
    saw_stop = stop.stop_requested();
    finished.Open();
  });
  tasks.push_back([](std::stop_token) {});
  EXPECT_EQ(pool.RunBatch(std::move(tasks), Clock::now() + std::chrono::milliseconds(20),
                          std::chrono::milliseconds(30)),
            1U);
  std::atomic<int> ran{0};
  EXPECT_EQ(pool.RunBatch({[&](std::stop_token) { ++ran; }}, kNoDeadline), 0U);
  EXPECT_EQ(ran.load(), 1);
  release.Open();
  EXPECT_TRUE(finished.Wait());
  EXPECT_TRUE(saw_stop);
}

TEST(WorkerPoolTest, ExceptionsInTasksDoNotEscape) {
  WorkerPool pool(2, "test-pool");
  std::atomic<int> ran{0};
  std::vector<WorkerPool::Task> tasks;
  tasks.push_back([](std::stop_token) { throw std::runtime_error("boom"); });
  tasks.push_back([&](std::stop_token) { ++ran; });
  EXPECT_NO_THROW(pool.RunBatch(std::move(tasks), kNoDeadline));
  EXPECT_EQ(ran.load(), 1);
}

}  // namespace
}  // namespace dranet::kubelet
