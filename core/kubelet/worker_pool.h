#pragma once
// core/kubelet/worker_pool.h — a fixed set of named threads running queued
// tasks: the bound on how many claims are prepared at once.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dranet::kubelet {

class WorkerPool {
 public:
  // Starts `threads` (at least 1) threads named `name` (≤15 bytes shown).
  WorkerPool(unsigned threads, const std::string& name);
  // Finishes queued tasks, then joins.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; tasks must not throw (exceptions are swallowed).
  void Submit(std::function<void()> task);
  // Runs every task and returns when all have finished.
  void RunAll(std::vector<std::function<void()>> tasks);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace dranet::kubelet
