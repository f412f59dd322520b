#pragma once
// core/kube/api_client.h — a small Kubernetes REST client on libcurl + RapidJSON.
//
// Offers the verbs the driver needs: get, list (field/label selectors), watch (a stream of
// JSON lines, bookmarks passed through, 410 Gone reported so the caller relists), create,
// update (409 reported; ReadModifyWrite re-reads and retries), delete (with preconditions),
// and server-side apply (application/apply-patch+yaml with fieldManager and force).
//
// Every call has a deadline. Connection errors, 429 and 5xx are retried with jittered
// exponential backoff (Retry-After honoured, never slept less); a 401 makes the client re-read
// the service-account token once and retry. The token file is also re-read at most every
// minute, since kubelet rotates it. Errors throw ApiError naming the verb, the path (which
// names the object) and the HTTP status and reason.
//
// Thread-safety: all methods may be called from several threads; each call uses its own curl
// handle from a small pool, so connections are reused between calls. Calls are cancelled
// through the std::stop_token they take (sleeps wake up, transfers abort within ~1 s).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/log.h"
#include "kube/cluster_config.h"

namespace dranet::kube {

// A failed API call. status() is the HTTP status, or 0 when no HTTP answer came (connection
// refused, timeout, cancelled).
// The most a response body may hold before the request fails (the
// DaemonSet's memory limit is 128 MiB; a lying Content-Length must not make
// us buffer gigabytes), and the longest watch event line.
inline constexpr std::size_t kMaxResponseBytes = 64u * 1024 * 1024;
inline constexpr std::size_t kMaxWatchLineBytes = 16u * 1024 * 1024;
// The most one object may take (a GET answer, a watch event line) where the
// caller knows what it reads: the API server refuses request bodies over
// 3 MiB and etcd objects over 1.5 MiB, so nothing genuine comes near 4 MiB,
// and an oversized object is refused before it is parsed.
inline constexpr std::size_t kMaxObjectBytes = 4u * 1024 * 1024;

// "<prefix>/namespaces/<ns>/<resource>[/<name>]" for names the API server
// accepts (namespace: DNS-1123 label, name: DNS-1123 subdomain). Anything
// else ("../../api/v1/nodes/x") throws ApiError 400 before a request is made:
// names from claims or kubelet must never steer a request elsewhere.
std::string NamespacedPath(std::string_view prefix, std::string_view namespace_name, std::string_view resource,
                           std::string_view name = {});

class ApiError : public std::runtime_error {
 public:
  ApiError(long status, std::string reason, const std::string& what)
      : std::runtime_error(what), status_(status), reason_(std::move(reason)) {}
  long status() const { return status_; }
  // metav1.Status reason ("Conflict", "NotFound", "Expired"…) when the server sent one.
  const std::string& reason() const { return reason_; }
  bool IsNotFound() const { return status_ == 404; }
  bool IsConflict() const { return status_ == 409; }
  bool IsGone() const { return status_ == 410; }

 private:
  long status_;
  std::string reason_;
};

struct ApiClientOptions {
  std::chrono::milliseconds request_timeout{15'000};  // whole request, per attempt
  std::chrono::milliseconds connect_timeout{5'000};
  int max_attempts = 5;  // per call, counting the first; retried: transport errors, 429, 5xx
  std::chrono::milliseconds initial_backoff{250};
  std::chrono::milliseconds max_backoff{30'000};
  std::chrono::seconds token_reread_interval{60};
  std::string user_agent = "dranet";
  // Waits `delay` unless `stop` is requested first; returns false when stopped. Tests replace
  // it to record the delays instead of sleeping. Default: a condition-variable wait.
  std::function<bool(std::chrono::milliseconds delay, std::stop_token stop)> sleep;
};

struct ListOptions {
  std::string field_selector;  // "spec.nodeName=n1,spec.driver=dra.net"
  std::string label_selector;
  std::string resource_version;
  int timeout_seconds = 300;  // watch only: the server ends the stream after this
  bool allow_bookmarks = true;  // watch only
  std::size_t max_line_bytes = kMaxWatchLineBytes;  // watch only: the longest event line
};

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK
  rapidjson::Document object;
  std::string resource_version;  // object's metadata.resourceVersion
};

// Counters since construction; cheap to read at any time.
struct ApiClientStats {
  uint64_t requests = 0;  // HTTP attempts made, retries included
  uint64_t retries = 0;
  uint64_t failures = 0;  // calls that ended in an ApiError
  uint64_t token_reloads = 0;
};

class ApiClient {
 public:
  ApiClient(ClusterConfig config, Logger& log, ApiClientOptions options = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // `path` is the URL path below the server, e.g. "/api/v1/nodes/n1". An
  // answer longer than `max_bytes` fails without being parsed.
  rapidjson::Document Get(std::string_view path, std::stop_token stop = {},
                          std::size_t max_bytes = kMaxResponseBytes);
  rapidjson::Document List(std::string_view path, const ListOptions& options,
                           std::stop_token stop = {});
  rapidjson::Document Create(std::string_view collection_path, std::string_view json_body,
                             std::stop_token stop = {});
  // PUT; the body must carry metadata.resourceVersion. 409 throws (IsConflict()).
  rapidjson::Document Update(std::string_view path, std::string_view json_body,
                             std::stop_token stop = {});
  // GET, mutate, PUT; on 409 re-reads and tries again (up to max_attempts). `mutate` gets the
  // current object and returns the body to PUT.
  rapidjson::Document ReadModifyWrite(
      std::string_view path, const std::function<std::string(const rapidjson::Value&)>& mutate,
      std::stop_token stop = {});
  // DELETE with an optional DeleteOptions body (preconditions). False when already gone.
  bool Delete(std::string_view path, std::string_view delete_options_json = {},
              std::stop_token stop = {});
  // Server-side apply (PATCH, application/apply-patch+yaml; a JSON body is valid YAML).
  rapidjson::Document Apply(std::string_view path, std::string_view json_body,
                            std::string_view field_manager, bool force,
                            std::stop_token stop = {});

  // Watches `path` from options.resource_version. Calls `on_event` for every event (bookmarks
  // included) in order. Returns the last resourceVersion seen when the server ends the stream
  // or `stop` is requested; throws ApiError (IsGone() → relist) on errors and ERROR events.
  std::string Watch(std::string_view path, const ListOptions& options,
                    const std::function<void(WatchEvent&)>& on_event, std::stop_token stop);

  ApiClientStats Stats() const;
  const ClusterConfig& config() const { return config_; }

 private:
  struct Response;
  struct Request;
  class HandlePool;

  Response Call(const Request& request, std::stop_token stop);
  Response PerformOnce(const Request& request, std::stop_token stop);
  rapidjson::Document CallForJson(const Request& request, std::stop_token stop);
  std::string BearerToken(bool force_reload);
  std::chrono::milliseconds BackoffDelay(int attempt);

  ClusterConfig config_;
  Logger& log_;
  ApiClientOptions options_;
  std::unique_ptr<HandlePool> handles_;

  std::mutex token_mu_;
  std::string token_;
  std::chrono::steady_clock::time_point token_read_at_{};

  std::mutex random_mu_;
  std::mt19937 random_;

  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<uint64_t> token_reloads_{0};
};

// Percent-encodes a query parameter value (selectors contain '=' and ',').
std::string UrlEncode(std::string_view text);

// The API server's version (GET /version). Distributions write the minor
// with a suffix ("36+"): the leading digits count.
struct ServerVersionInfo {
  int major = 0;
  int minor = 0;
  std::string git_version;  // "v1.37.2"
};
ServerVersionInfo ParseServerVersion(const rapidjson::Value& object);
// Throws ApiError when the API server cannot be asked.
ServerVersionInfo ServerVersion(ApiClient& client, std::stop_token stop = {});

}  // namespace dranet::kube
