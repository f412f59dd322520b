// core/kube/list_watch.cpp — see list_watch.h.
#include "kube/list_watch.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>

#include "kube/json_fields.h"

namespace dranet::kube {

void RunListWatch(ApiClient& client, const std::string& path, const ListWatchOptions& options,
                  const ListWatchHandlers& handlers, Logger& log, std::stop_token stop) {
  RunListWatch(client, [&path] { return path; }, options, handlers, log, std::move(stop));
}

void RunListWatch(ApiClient& client, const std::function<std::string()>& path_now, const ListWatchOptions& options,
                  const ListWatchHandlers& handlers, Logger& log, std::stop_token stop) {
  std::string path;
  std::string resource_version;
  bool first = true;
  int failures = 0;
  bool relisted_after_gone = false;
  std::mt19937 random(std::random_device{}());
  while (!stop.stop_requested()) {
    try {
      if (resource_version.empty()) {
        path = path_now();
        ListOptions list_options = options.list;
        list_options.resource_version.clear();
        rapidjson::Document list = client.List(path, list_options, stop);
        std::string listed_version = MetadataField(list, "resourceVersion");
        if (listed_version.empty()) throw std::runtime_error("list of " + path + " has no resourceVersion");
        handlers.on_list(list, first);
        first = false;
        resource_version = listed_version;
      }
      ListOptions watch = options.list;
      watch.resource_version = resource_version;
      const auto started = std::chrono::steady_clock::now();
      std::size_t events = 0;
      resource_version = client.Watch(
          path, watch,
          [&handlers, &events](WatchEvent& event) {
            ++events;
            if (event.type != "BOOKMARK") handlers.on_event(event);
          },
          stop);
      // A server that ends every watch at once (200 with an empty body)
      // must not be asked again in a tight loop.
      if (events == 0 && std::chrono::steady_clock::now() - started < options.min_backoff)
        throw std::runtime_error("watch of " + path + " ended at once without an event");
      failures = 0;
      relisted_after_gone = false;
    } catch (const std::exception& error) {
      if (stop.stop_requested()) return;
      if (handlers.on_error) handlers.on_error(error);
      resource_version.clear();  // relist: after 410 Gone, and after any gap in the stream
      const auto* api_error = dynamic_cast<const ApiError*>(&error);
      // The first 410 Gone relists at once (the normal expiry of a version);
      // one that follows straight after goes through the backoff.
      if (api_error != nullptr && api_error->IsGone() && !relisted_after_gone) {
        relisted_after_gone = true;
        continue;
      }
      ++failures;
      auto base = options.min_backoff * (int64_t{1} << std::min(failures - 1, 20));
      auto capped = std::min<std::chrono::milliseconds>(base, options.max_backoff);
      std::uniform_int_distribution<int64_t> jitter(0, capped.count() / 2);
      std::chrono::milliseconds delay(capped.count() - capped.count() / 2 + jitter(random));
      log.Verbose(1, "list/watch failed; will relist",
                  {{"path", path}, {"error", error.what()}, {"retry_in_ms", delay.count()}});
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      cv.wait_for(lock, stop, delay, [] { return false; });
    }
  }
}

std::thread NamedThread(const char* name, std::function<void()> body) {
  return std::thread([name, body = std::move(body)] {
    pthread_setname_np(pthread_self(), name);
    body();
  });
}

}  // namespace dranet::kube
