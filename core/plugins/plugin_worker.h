#pragma once
// core/plugins/plugin_worker.h — the one thread that calls into a plugin.
//
// Every call into a plugin runs on that plugin's worker thread, which
// serialises calls (plugins need not be thread-safe) and lets the caller
// stop waiting at a deadline. A call that misses its deadline marks the
// worker hung: its thread is abandoned (plugin code cannot be cancelled),
// later calls fail at once, and the plugin's library is never unloaded.
// Work items must therefore own (shared_ptr) everything they touch.
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
  // once when the worker is already hung.
  bool Run(std::function<void()> work, std::chrono::milliseconds deadline);

  bool hung() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace dranet::plugins
