#pragma once
// core/plugins/plugin_worker.h — the one thread that calls into a plugin.
//
// Every call into a plugin runs on that plugin's worker thread, which
// serialises calls (plugins need not be thread-safe) and lets the caller
// stop waiting at a deadline. A call that misses its deadline marks the
// worker hung: plugin code cannot be cancelled, so the call keeps running,
// and later calls fail at once. When every call the worker was given has
// come back, it is usable again (the host decides when to use it: after a
// back-off). Work items must therefore own (shared_ptr) everything they
// touch.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace dranet::plugins {

class PluginWorker {
 public:
  explicit PluginWorker(std::string plugin_name);
  ~PluginWorker();
  PluginWorker(const PluginWorker&) = delete;
  PluginWorker& operator=(const PluginWorker&) = delete;

  // Runs `work` on the worker thread and waits up to `deadline`. Returns
  // false (and marks the worker hung) when the deadline passes first, or at
  // once when the worker is hung.
  bool Run(std::function<void()> work, std::chrono::milliseconds deadline);

  // As Run, for work made of steps (one per device): `work` calls
  // `step_done` after each step, and `step_deadline` bounds each step: the
  // wait ends in failure only when no step completed within it.
  using StepDone = std::function<void()>;
  bool RunSteps(std::function<void(const StepDone& step_done)> work, std::chrono::milliseconds step_deadline);

  // True from a missed deadline until every call given to the worker has
  // returned.
  bool hung() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace dranet::plugins
