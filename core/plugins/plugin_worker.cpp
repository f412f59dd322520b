#include "plugins/plugin_worker.h"

#include <pthread.h>

namespace dranet::plugins {

// State shared by the worker thread and its owner. The thread holds its own
// reference, so an abandoned (hung) thread never touches freed memory.
struct PluginWorker::Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool stopping = false;
  bool hung = false;
};

namespace {
void WorkerLoop(const std::shared_ptr<void>& keep_alive, std::mutex& mu, std::condition_variable& cv,
                std::deque<std::function<void()>>& queue, const bool& stopping, bool& hung) {
  (void)keep_alive;
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty()) return;
      work = std::move(queue.front());
      queue.pop_front();
    }
    work();
    std::lock_guard lock(mu);
    // Nothing left running in the plugin: a late call has come back.
    if (queue.empty()) hung = false;
  }
}
}  // namespace

PluginWorker::PluginWorker(std::string plugin_name) : shared_(std::make_shared<Shared>()) {
  auto shared = shared_;
  thread_ = std::thread([shared] {
    WorkerLoop(shared, shared->mu, shared->cv, shared->queue, shared->stopping, shared->hung);
  });
  std::string thread_name = ("plg-" + plugin_name).substr(0, 15);
  pthread_setname_np(thread_.native_handle(), thread_name.c_str());
}

PluginWorker::~PluginWorker() {
  bool hung;
  {
    std::lock_guard lock(shared_->mu);
    shared_->stopping = true;
    hung = shared_->hung;
  }
  shared_->cv.notify_all();
  if (hung) {
    thread_.detach();  // still inside plugin code; it keeps `shared` alive itself
  } else {
    thread_.join();
  }
}

bool PluginWorker::hung() const {
  std::lock_guard lock(shared_->mu);
  return shared_->hung;
}

bool PluginWorker::Run(std::function<void()> work, std::chrono::milliseconds deadline) {
  return RunSteps([work = std::move(work)](const StepDone&) { work(); }, deadline);
}

bool PluginWorker::RunSteps(std::function<void(const StepDone&)> work, std::chrono::milliseconds step_deadline) {
  using Clock = std::chrono::steady_clock;
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    bool finished = false;
    Clock::time_point last_step = Clock::now();  // the deadline counts from here
  };
  auto done = std::make_shared<Done>();
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->hung || shared_->stopping) return false;
    shared_->queue.emplace_back([work = std::move(work), done] {
      work([&done] {
        std::lock_guard l(done->mu);
        done->last_step = Clock::now();
      });
      {
        std::lock_guard l(done->mu);
        done->finished = true;
      }
      done->cv.notify_all();
    });
  }
  shared_->cv.notify_all();
  std::unique_lock lock(done->mu);
  // Wake at the current step's deadline; a step that completed meanwhile
  // moved it, so wait again until no step completes in time.
  while (!done->cv.wait_until(lock, done->last_step + step_deadline, [&] { return done->finished; })) {
    if (Clock::now() >= done->last_step + step_deadline) {
      std::lock_guard l(shared_->mu);
      shared_->hung = true;
      return false;
    }
  }
  return true;
}

}  // namespace dranet::plugins
