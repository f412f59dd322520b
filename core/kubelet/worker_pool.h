#pragma once
// core/kubelet/worker_pool.h — a fixed set of named threads running batches
// of tasks: the bound on how many claims are prepared at once.
//
// Fair: each RunBatch call is one batch, and the threads take one task from
// each waiting batch in turn. A kubelet call with thousands of claims then
// delays a one-claim call by at most one task per thread, instead of queueing
// it behind all of them.
//
// Bounded in time: a batch has a deadline. When it passes, the batch's stop
// token is requested (running tasks see it and give up), and the tasks no
// thread has started yet are run by the caller with the stopped token, so
// RunBatch returns soon after its deadline even when every thread is held by
// other batches. A running task that does not give up within the grace
// period is left running: RunBatch returns without it (it finishes on its
// thread later; the task must own what it touches).
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace dranet::kubelet {

class WorkerPool {
 public:
  // Gets the batch's stop token: requested once the deadline has passed.
  using Task = std::function<void(std::stop_token)>;

  // Starts `threads` (at least 1) threads named `name` (≤15 bytes shown).
  WorkerPool(unsigned threads, const std::string& name);
  // Finishes queued batches, then joins.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs every task and returns when all have finished, or `grace` after the
  // deadline with the tasks still running left behind; returns how many were
  // left. Tasks must not throw (exceptions are swallowed) and should return
  // promptly once their token is stopped.
  std::size_t RunBatch(std::vector<Task> tasks, std::chrono::steady_clock::time_point deadline,
                       std::chrono::milliseconds grace = std::chrono::milliseconds::max());

  // Batches with tasks no thread has started yet.
  std::size_t WaitingBatches();

 private:
  struct Batch;
  void Loop();
  // Runs task `index` of `batch` outside the lock; `lock` is held on entry and exit.
  void RunTask(Batch& batch, std::size_t index, std::unique_lock<std::mutex>& lock);

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<std::shared_ptr<Batch>> waiting_;  // batches with unstarted tasks, in turn order
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace dranet::kubelet
