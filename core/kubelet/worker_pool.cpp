#include "kubelet/worker_pool.h"

#include <pthread.h>

#include <algorithm>

namespace dranet::kubelet {

struct WorkerPool::Batch {
  std::vector<Task> tasks;
  std::size_t next = 0;        // first task no one has started
  std::size_t unfinished = 0;  // started or not, not yet returned
  std::stop_source stop;
  std::condition_variable done_cv;
};

WorkerPool::WorkerPool(unsigned threads, const std::string& name) {
  if (threads == 0) threads = 1;
  for (unsigned i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Loop(); });
    pthread_setname_np(threads_.back().native_handle(), name.substr(0, 15).c_str());
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::RunTask(Batch& batch, std::size_t index, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  try {
    batch.tasks[index](batch.stop.get_token());
  } catch (...) {
  }
  lock.lock();
  if (--batch.unfinished == 0) batch.done_cv.notify_all();
}

std::size_t WorkerPool::RunBatch(std::vector<Task> tasks, std::chrono::steady_clock::time_point deadline,
                                 std::chrono::milliseconds grace) {
  if (tasks.empty()) return 0;
  auto batch = std::make_shared<Batch>();
  batch->tasks = std::move(tasks);
  batch->unfinished = batch->tasks.size();
  std::unique_lock lock(mu_);
  waiting_.push_back(batch);
  if (batch->tasks.size() == 1) work_cv_.notify_one();
  else work_cv_.notify_all();
  if (batch->done_cv.wait_until(lock, deadline, [&] { return batch->unfinished == 0; })) return 0;

  // Past the deadline: running tasks are told to give up, and what no
  // thread has taken is run here, already stopped, so it answers at once.
  batch->stop.request_stop();
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), batch), waiting_.end());
  while (batch->next < batch->tasks.size()) RunTask(*batch, batch->next++, lock);
  // The threads running the rest hold the batch (Loop's shared_ptr).
  const auto now = std::chrono::steady_clock::now();
  const auto give_up = grace >= std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::time_point::max() - now)
                           ? std::chrono::steady_clock::time_point::max()
                           : now + grace;
  batch->done_cv.wait_until(lock, give_up, [&] { return batch->unfinished == 0; });
  return batch->unfinished;
}

std::size_t WorkerPool::WaitingBatches() {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

void WorkerPool::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;
    // One task from the batch whose turn it is; the batch goes to the back
    // of the line while it has more.
    std::shared_ptr<Batch> batch = std::move(waiting_.front());
    waiting_.pop_front();
    const std::size_t index = batch->next++;
    if (batch->next < batch->tasks.size()) waiting_.push_back(batch);
    RunTask(*batch, index, lock);
  }
}

}  // namespace dranet::kubelet
