#include "kubelet/worker_pool.h"

#include <pthread.h>

#include <memory>

namespace dranet::kubelet {

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
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void WorkerPool::RunAll(std::vector<std::function<void()>> tasks) {
  if (tasks.size() == 1) {  // no hand-off for the common single-claim call
    tasks.front()();
    return;
  }
  struct Countdown {
    std::mutex mu;
    std::condition_variable cv;
    std::size_t left;
  };
  auto countdown = std::make_shared<Countdown>();
  countdown->left = tasks.size();
  for (auto& task : tasks) {
    Submit([countdown, task = std::move(task)] {
      try {
        task();
      } catch (...) {
      }
      std::lock_guard lock(countdown->mu);
      if (--countdown->left == 0) countdown->cv.notify_all();
    });
  }
  std::unique_lock lock(countdown->mu);
  countdown->cv.wait(lock, [&] { return countdown->left == 0; });
}

void WorkerPool::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      task();
    } catch (...) {
    }
  }
}

}  // namespace dranet::kubelet
