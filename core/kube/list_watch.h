#pragma once
// core/kube/list_watch.h — the list-then-watch loop every cache and repairer here needs.
//
// RunListWatch lists `path`, hands the list to `on_list`, then watches from the list's
// resourceVersion and hands every event to `on_event`, re-watching from the last version seen
// when the server ends the stream. A 410 Gone (history compacted) relists at once; any other
// failure relists after a jittered, growing delay. Returns when `stop` is requested.
// NamedThread starts a thread with a name that shows in `top -H` and stack dumps.
#include <chrono>
#include <exception>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>

#include <rapidjson/document.h>

#include "base/log.h"
#include "kube/api_client.h"

namespace dranet::kube {

struct ListWatchHandlers {
  // After each (re)list, with the list object; `first` is true for the initial list only.
  std::function<void(const rapidjson::Document& list, bool first)> on_list;
  // Every watch event except BOOKMARK. May throw to force a relist.
  std::function<void(WatchEvent& event)> on_event;
  // Optional: a list or watch failed (before the delay to the relist).
  std::function<void(const std::exception& error)> on_error;
};

struct ListWatchOptions {
  ListOptions list;  // selectors and watch timeout; resource_version is managed here
  std::chrono::milliseconds min_backoff{500};
  std::chrono::milliseconds max_backoff{30'000};
};

void RunListWatch(ApiClient& client, const std::string& path, const ListWatchOptions& options,
                  const ListWatchHandlers& handlers, Logger& log, std::stop_token stop);
// The same for a collection whose path may change between lists (the resource.k8s.io version
// spoken): `path` is asked before every (re)list; when it throws, that list fails and is
// retried like any other.
void RunListWatch(ApiClient& client, const std::function<std::string()>& path, const ListWatchOptions& options,
                  const ListWatchHandlers& handlers, Logger& log, std::stop_token stop);

// Starts `body` on a new thread named `name` (at most 15 characters).
std::thread NamedThread(const char* name, std::function<void()> body);

}  // namespace dranet::kube
