// core/kube/api_client.cpp — libcurl transport, retries, auth and watch streaming.
#include "kube/api_client.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <memory>
#include <stop_token>

#include <curl/curl.h>

#include "base/curl_handle.h"
#include "base/k8s_names.h"
#include "base/json.h"
#include "base/files.h"
#include "kube/json_fields.h"

namespace dranet::kube {
namespace {

// The longest a streamed transfer sleeps when neither its socket nor one of
// curl's own timers has anything: a bound, not a tick.
constexpr int kStreamWaitMs = 60000;

// A streamed response (a watch) lasts minutes with nothing to say.
// curl_easy_perform would wake every second to run the progress callback
// (the way `stop` is noticed); here the transfer sleeps until its socket,
// one of curl's timers or `stop` (curl_multi_wakeup) wakes it. The handle's
// connection is not kept for later calls: it belongs to this transfer's own
// multi handle.
CURLcode PerformStreamed(CURL* curl, std::stop_token stop) {
  std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(), curl_multi_cleanup);
  if (!multi || curl_multi_add_handle(multi.get(), curl) != CURLM_OK) return curl_easy_perform(curl);
  CURLcode result = CURLE_OK;
  {
    std::stop_callback wake(stop, [m = multi.get()] { curl_multi_wakeup(m); });
    for (;;) {
      int running = 0;
      if (curl_multi_perform(multi.get(), &running) != CURLM_OK) {
        result = CURLE_RECV_ERROR;
        break;
      }
      if (running == 0) {
        int queued = 0;
        const CURLMsg* message = curl_multi_info_read(multi.get(), &queued);
        result = message && message->msg == CURLMSG_DONE ? message->data.result : CURLE_RECV_ERROR;
        break;
      }
      if (stop.stop_requested()) {
        result = CURLE_ABORTED_BY_CALLBACK;
        break;
      }
      if (curl_multi_poll(multi.get(), nullptr, 0, kStreamWaitMs, nullptr) != CURLM_OK) {
        result = CURLE_RECV_ERROR;
        break;
      }
    }
  }
  curl_multi_remove_handle(multi.get(), curl);
  return result;
}

bool DefaultSleep(std::chrono::milliseconds delay, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_for(lock, stop, delay, [] { return false; });
}

bool IsRetriableStatus(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::string StatusText(long status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "HTTP " + std::to_string(status);
  }
}

// Builds the ApiError for a failed response, using the metav1.Status body when there is one.
ApiError ErrorFromResponse(std::string_view verb, std::string_view path, long status,
                           const std::string& body) {
  std::string reason;
  std::string message;
  rapidjson::Document json;
  if (ParseJson(json, body).empty() && json.IsObject()) {
    if (json.HasMember("reason") && json["reason"].IsString()) reason = json["reason"].GetString();
    if (json.HasMember("message") && json["message"].IsString())
      message = json["message"].GetString();
  }
  std::string what = std::string(verb) + " " + std::string(path) + ": " +
                     std::to_string(status) + " " + StatusText(status);
  if (!message.empty()) what += ": " + message;
  return ApiError(status, reason, what);
}

std::string ListQuery(const ListOptions& options, bool watch) {
  std::string query;
  auto add = [&query](std::string_view key, std::string_view value) {
    query += query.empty() ? "?" : "&";
    query += key;
    query += "=";
    query += UrlEncode(value);
  };
  if (!options.field_selector.empty()) add("fieldSelector", options.field_selector);
  if (!options.label_selector.empty()) add("labelSelector", options.label_selector);
  if (!options.resource_version.empty()) add("resourceVersion", options.resource_version);
  if (watch) {
    add("watch", "true");
    if (options.allow_bookmarks) add("allowWatchBookmarks", "true");
    add("timeoutSeconds", std::to_string(options.timeout_seconds));
  }
  return query;
}

}  // namespace

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

struct ApiClient::Response {
  long status = 0;
  std::string body;
  std::chrono::milliseconds retry_after{0};
};

struct ApiClient::Request {
  std::string verb;  // GET, POST, PUT, PATCH, DELETE
  std::string path;  // path + query
  std::string body;
  std::string content_type = "application/json";
  // Streaming (watch): called with each received chunk instead of buffering; returns false to
  // abort the transfer.
  std::function<bool(std::string_view)> on_data;
  std::chrono::milliseconds timeout{0};  // 0: options_.request_timeout
  bool retry = true;             // false for watches: a replay would repeat delivered events
  bool not_found_is_ok = false;  // deletes: "already gone" is success
  std::size_t max_body_bytes = kMaxResponseBytes;  // buffered bodies only
};

// Idle curl handles, kept so that connections (and TLS sessions) are reused between calls.
class ApiClient::HandlePool {
 public:
  CurlHandle Take() {
    {
      std::lock_guard lock(mu_);
      if (!idle_.empty()) {
        CurlHandle handle = std::move(idle_.back());
        idle_.pop_back();
        curl_easy_reset(handle.get());  // options back to defaults; connections kept
        return handle;
      }
    }
    return NewCurlHandle();
  }
  void Give(CurlHandle handle) {
    std::lock_guard lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(handle));
  }

 private:
  // Each handle keeps its connection (and TLS session) to the API server:
  // enough for the prepare workers (8 by default) and the publisher, watch
  // and status writers at once, so that a burst of prepares does not close
  // handles and open new TLS connections on the next one.
  static constexpr std::size_t kMaxIdle = 16;
  std::mutex mu_;
  std::vector<CurlHandle> idle_;
};

ApiClient::ApiClient(ClusterConfig config, Logger& log, ApiClientOptions options)
    : config_(std::move(config)),
      log_(log),
      options_(std::move(options)),
      handles_(std::make_unique<HandlePool>()),
      random_(std::random_device{}()) {
  EnsureCurlGlobalInit();
  if (!options_.sleep) options_.sleep = DefaultSleep;
  if (options_.max_attempts < 1) options_.max_attempts = 1;
}

ApiClient::~ApiClient() = default;

ApiClientStats ApiClient::Stats() const {
  return {requests_.load(), retries_.load(), failures_.load(), token_reloads_.load()};
}

std::string ApiClient::BearerToken(bool force_reload) {
  std::lock_guard lock(token_mu_);
  if (config_.token_file.empty()) return config_.token;
  auto now = std::chrono::steady_clock::now();
  if (force_reload || token_.empty() || now - token_read_at_ >= options_.token_reread_interval) {
    if (auto text = ReadTrimmed(config_.token_file)) {
      if (!token_.empty()) token_reloads_.fetch_add(1);
      token_ = *text;
      token_read_at_ = now;
    } else {
      log_.Warning("service-account token unreadable; keeping the previous one",
                   {{"file", config_.token_file}});
    }
  }
  return token_;
}

std::chrono::milliseconds ApiClient::BackoffDelay(int attempt) {
  // Exponential in the attempt, capped, with "equal jitter": half fixed, half random, so that
  // many nodes failing together do not come back together.
  auto base = options_.initial_backoff * (int64_t{1} << std::min(attempt - 1, 20));
  auto capped = std::min<std::chrono::milliseconds>(base, options_.max_backoff);
  std::lock_guard lock(random_mu_);
  std::uniform_int_distribution<int64_t> jitter(0, capped.count() / 2);
  return std::chrono::milliseconds(capped.count() - capped.count() / 2 + jitter(random_));
}

ApiClient::Response ApiClient::PerformOnce(const Request& request, std::stop_token stop) {
  requests_.fetch_add(1);
  CurlHandle handle = handles_->Take();
  CURL* curl = handle.get();
  std::string url = config_.server + request.path;
  Response response;

  struct TransferState {
    Response* response;
    const std::function<bool(std::string_view)>* on_data;
    std::stop_token stop;
    std::size_t max_body_bytes;
    bool too_large = false;
  } state{&response, &request.on_data, stop, request.max_body_bytes};

  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.verb.c_str());
  if (request.verb == "GET") curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  if (!request.body.empty() || request.verb == "POST" || request.verb == "PUT" ||
      request.verb == "PATCH") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  auto timeout = request.timeout.count() > 0 ? request.timeout : options_.request_timeout;
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");

  // TLS: trust and client identity.
  curl_blob ca_blob{const_cast<char*>(config_.ca_pem.data()), config_.ca_pem.size(), CURL_BLOB_NOCOPY};
  curl_blob cert_blob{const_cast<char*>(config_.client_cert_pem.data()),
                      config_.client_cert_pem.size(), CURL_BLOB_NOCOPY};
  curl_blob key_blob{const_cast<char*>(config_.client_key_pem.data()), config_.client_key_pem.size(),
                     CURL_BLOB_NOCOPY};
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!config_.ca_pem.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca_blob);
  } else if (!config_.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, config_.ca_file.c_str());
  }
  if (!config_.client_cert_pem.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert_blob);
  else if (!config_.client_cert_file.empty())
    curl_easy_setopt(curl, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  if (!config_.client_key_pem.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key_blob);
  else if (!config_.client_key_file.empty())
    curl_easy_setopt(curl, CURLOPT_SSLKEY, config_.client_key_file.c_str());

  CurlHeaderList headers;
  AppendCurlHeader(headers, "Accept: application/json");
  if (!request.body.empty()) AppendCurlHeader(headers, "Content-Type: " + request.content_type);
  if (std::string token = BearerToken(false); !token.empty())
    AppendCurlHeader(headers, "Authorization: Bearer " + token);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());

  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION,
                   +[](char* data, size_t size, size_t count, void* user) -> size_t {
                     auto* s = static_cast<TransferState*>(user);
                     std::string_view chunk(data, size * count);
                     if (*s->on_data && s->response->status == 200) {
                       if (!(*s->on_data)(chunk)) return 0;  // abort: CURLE_WRITE_ERROR
                     } else {
                       // Never buffer more than the limit, whatever
                       // Content-Length says.
                       if (s->response->body.size() + chunk.size() > s->max_body_bytes) {
                         s->too_large = true;
                         return 0;  // abort: CURLE_WRITE_ERROR
                       }
                       s->response->body.append(chunk);
                     }
                     return chunk.size();
                   });
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &state);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION,
                   +[](char* data, size_t size, size_t count, void* user) -> size_t {
                     auto* s = static_cast<TransferState*>(user);
                     std::string_view line(data, size * count);
                     if (line.starts_with("HTTP/")) {
                       // Status line (also after redirects / 100-continue): remember the code
                       // so the body callback knows whether this is a watch stream or an error.
                       auto space = line.find(' ');
                       if (space != std::string_view::npos)
                         s->response->status = std::strtol(line.data() + space + 1, nullptr, 10);
                     } else if (line.size() > 12 &&
                                std::equal(line.begin(), line.begin() + 12, "retry-after:",
                                           [](char a, char b) { return std::tolower(a) == b; })) {
                       long seconds = std::strtol(line.data() + 12, nullptr, 10);
                       if (seconds > 0) s->response->retry_after = std::chrono::seconds(seconds);
                     }
                     return line.size();
                   });
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &state);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION,
                   +[](void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> int {
                     return static_cast<TransferState*>(user)->stop.stop_requested() ? 1 : 0;
                   });

  CURLcode code = request.on_data ? PerformStreamed(curl, stop) : curl_easy_perform(curl);
  long http_status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
  handles_->Give(std::move(handle));
  if (state.too_large) {
    throw ApiError(http_status, "", request.verb + " " + request.path + ": response larger than " +
                                        std::to_string(request.max_body_bytes / (1024 * 1024)) + " MiB");
  }
  if (code != CURLE_OK) {
    bool aborted_by_consumer = code == CURLE_WRITE_ERROR && request.on_data;
    if (aborted_by_consumer || (code == CURLE_ABORTED_BY_CALLBACK && stop.stop_requested())) {
      response.status = http_status;
      return response;  // the caller asked for the end of the transfer
    }
    // A streamed response that ends with the server's timeout is not an error.
    if (request.on_data && http_status == 200 && code == CURLE_OPERATION_TIMEDOUT) {
      response.status = http_status;
      return response;
    }
    throw ApiError(0, "", request.verb + " " + request.path + ": " + curl_easy_strerror(code) +
                              " (" + config_.server + ")");
  }
  response.status = http_status;
  return response;
}

ApiClient::Response ApiClient::Call(const Request& request, std::stop_token stop) {
  bool token_reloaded = false;
  for (int attempt = 1;; ++attempt) {
    if (stop.stop_requested()) {
      failures_.fetch_add(1);
      throw ApiError(0, "Cancelled", request.verb + " " + request.path + ": cancelled");
    }
    Response response;
    try {
      response = PerformOnce(request, stop);
      if (response.status == 0 && stop.stop_requested())  // counted as a failure just below
        throw ApiError(0, "Cancelled", request.verb + " " + request.path + ": cancelled");
    } catch (const ApiError& error) {
      if (!request.retry || attempt >= options_.max_attempts || stop.stop_requested()) {
        failures_.fetch_add(1);
        throw;
      }
      auto delay = BackoffDelay(attempt);
      log_.Verbose(2, "API call failed, retrying",
                   {{"error", error.what()}, {"attempt", attempt}, {"delay_ms", delay.count()}});
      retries_.fetch_add(1);
      options_.sleep(delay, stop);
      continue;
    }
    if (response.status == 401 && !token_reloaded && !config_.token_file.empty()) {
      // The token may have been rotated under us: read it again and retry once at once.
      token_reloaded = true;
      BearerToken(true);
      log_.Info("API server answered 401; re-read the service-account token",
                {{"path", request.path}});
      retries_.fetch_add(1);
      continue;
    }
    if (response.status == 404 && request.not_found_is_ok) return response;
    if (request.retry && IsRetriableStatus(response.status) && attempt < options_.max_attempts) {
      auto delay = std::max(BackoffDelay(attempt), response.retry_after);
      log_.Verbose(2, "API server asked us to retry",
                   {{"path", request.path}, {"status", response.status},
                    {"attempt", attempt}, {"delay_ms", delay.count()}});
      retries_.fetch_add(1);
      options_.sleep(delay, stop);
      continue;
    }
    if (response.status >= 400 || response.status == 0) {
      failures_.fetch_add(1);
      throw ErrorFromResponse(request.verb, request.path, response.status, response.body);
    }
    return response;
  }
}

rapidjson::Document ApiClient::CallForJson(const Request& request, std::stop_token stop) {
  Response response = Call(request, stop);
  rapidjson::Document json;
  if (const auto error = ParseJson(json, response.body); !error.empty()) {
    failures_.fetch_add(1);
    throw ApiError(response.status, "",
                   request.verb + " " + request.path + ": response is not JSON (" + error + ")");
  }
  return json;
}

rapidjson::Document ApiClient::Get(std::string_view path, std::stop_token stop, std::size_t max_bytes) {
  Request request{"GET", std::string(path), {}, {}, {}, {}};
  request.max_body_bytes = max_bytes;
  return CallForJson(request, stop);
}

rapidjson::Document ApiClient::List(std::string_view path, const ListOptions& options,
                                    std::stop_token stop) {
  return CallForJson({"GET", std::string(path) + ListQuery(options, false), {}, {}, {}, {}}, stop);
}

rapidjson::Document ApiClient::Create(std::string_view collection_path, std::string_view json_body,
                                      std::stop_token stop) {
  return CallForJson({"POST", std::string(collection_path), std::string(json_body),
                      "application/json", {}, {}},
                     stop);
}

rapidjson::Document ApiClient::Update(std::string_view path, std::string_view json_body,
                                      std::stop_token stop) {
  return CallForJson({"PUT", std::string(path), std::string(json_body), "application/json", {}, {}},
                     stop);
}

rapidjson::Document ApiClient::ReadModifyWrite(
    std::string_view path, const std::function<std::string(const rapidjson::Value&)>& mutate,
    std::stop_token stop) {
  for (int attempt = 1;; ++attempt) {
    rapidjson::Document current = Get(path, stop);
    try {
      return Update(path, mutate(current), stop);
    } catch (const ApiError& error) {
      if (!error.IsConflict() || attempt >= options_.max_attempts) throw;
      log_.Verbose(2, "update conflicted; re-reading", {{"path", std::string(path)}});
    }
  }
}

bool ApiClient::Delete(std::string_view path, std::string_view delete_options_json,
                       std::stop_token stop) {
  Request request{"DELETE", std::string(path), std::string(delete_options_json), "application/json",
                  {}, {}};
  request.not_found_is_ok = true;
  return Call(request, stop).status != 404;
}

rapidjson::Document ApiClient::Apply(std::string_view path, std::string_view json_body,
                                     std::string_view field_manager, bool force,
                                     std::stop_token stop) {
  std::string target = std::string(path) + "?fieldManager=" + UrlEncode(field_manager);
  if (force) target += "&force=true";
  return CallForJson(
      {"PATCH", target, std::string(json_body), "application/apply-patch+yaml", {}, {}}, stop);
}

std::string ApiClient::Watch(std::string_view path, const ListOptions& options,
                             const std::function<void(WatchEvent&)>& on_event,
                             std::stop_token stop) {
  std::string last_resource_version = options.resource_version;
  std::string pending;  // bytes of an incomplete line
  std::exception_ptr failure;

  auto handle_line = [&](std::string_view line) {
    rapidjson::Document json;
    if (!ParseJson(json, line).empty() || !json.IsObject() || !json.HasMember("type") ||
        !json["type"].IsString() || !json.HasMember("object"))
      throw ApiError(200, "", "watch " + std::string(path) + ": malformed event");
    WatchEvent event;
    event.type = json["type"].GetString();
    event.object.CopyFrom(json["object"], event.object.GetAllocator());
    if (event.type == "ERROR") {
      long code = 500;
      if (event.object.HasMember("code") && event.object["code"].IsInt()) code = event.object["code"].GetInt();
      std::string message = event.object.HasMember("message") && event.object["message"].IsString()
                                ? event.object["message"].GetString()
                                : "";
      std::string reason = event.object.HasMember("reason") && event.object["reason"].IsString()
                               ? event.object["reason"].GetString()
                               : "";
      throw ApiError(code, reason,
                     "watch " + std::string(path) + ": " + std::to_string(code) + " " +
                         StatusText(code) + (message.empty() ? "" : ": " + message));
    }
    event.resource_version = MetadataField(event.object, "resourceVersion");
    if (!event.resource_version.empty()) last_resource_version = event.resource_version;
    on_event(event);
  };

  Request request{"GET", std::string(path) + ListQuery(options, true), {}, {}, {}, {}};
  // The server ends the stream after timeoutSeconds; our deadline is a little later so that a
  // silent, half-dead connection cannot hold the watcher forever.
  request.timeout = std::chrono::seconds(options.timeout_seconds + 30);
  request.retry = false;
  request.on_data = [&](std::string_view chunk) -> bool {
    try {
      // Only the new bytes are searched for a line end (a stream without
      // newlines cost quadratic time), and one event line is bounded.
      std::size_t search_from = pending.size();
      pending.append(chunk);
      if (pending.size() > options.max_line_bytes && pending.find('\n', search_from) == std::string::npos)
        throw ApiError(200, "", "watch " + std::string(path) + ": an event line is longer than " +
                                    std::to_string(options.max_line_bytes / (1024 * 1024)) + " MiB");
      std::size_t start = 0;
      for (std::size_t newline; (newline = pending.find('\n', std::max(start, search_from))) != std::string::npos;
           start = newline + 1, search_from = start) {
        std::string_view line(pending.data() + start, newline - start);
        if (!line.empty() && line != "\r") handle_line(line);
      }
      pending.erase(0, start);
      return true;
    } catch (...) {
      failure = std::current_exception();
      return false;
    }
  };
  Call(request, stop);
  if (failure) {
    failures_.fetch_add(1);
    std::rethrow_exception(failure);
  }
  if (!pending.empty() && !stop.stop_requested()) handle_line(pending);
  return last_resource_version;
}

std::string NamespacedPath(std::string_view prefix, std::string_view namespace_name, std::string_view resource,
                           std::string_view name) {
  if (!IsDnsLabel(namespace_name) || (!name.empty() && !IsDnsSubdomain(name)))
    throw ApiError(400, "Invalid", "refusing a request for " + std::string(resource) + " \"" +
                                       std::string(namespace_name) + "/" + std::string(name) +
                                       "\": not a valid Kubernetes namespace and name");
  std::string path = std::string(prefix) + "/namespaces/" + std::string(namespace_name) + "/" + std::string(resource);
  if (!name.empty()) path += "/" + std::string(name);
  return path;
}

ServerVersionInfo ParseServerVersion(const rapidjson::Value& object) {
  ServerVersionInfo info;
  if (!object.IsObject()) return info;
  auto leading = [](const std::string& text) {
    int value = 0;
    for (char c : text) {
      if (c < '0' || c > '9' || value > 100000) break;
      value = value * 10 + (c - '0');
    }
    return value;
  };
  info.major = leading(StringField(object, "major"));
  info.minor = leading(StringField(object, "minor"));
  info.git_version = StringField(object, "gitVersion");
  if (info.git_version.empty()) info.git_version = std::to_string(info.major) + "." + std::to_string(info.minor);
  return info;
}

ServerVersionInfo ServerVersion(ApiClient& client, std::stop_token stop) {
  return ParseServerVersion(client.Get("/version", stop));
}

}  // namespace dranet::kube
