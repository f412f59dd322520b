#include "plugins/host_services.h"

#include <curl/curl.h>

#include "base/curl_handle.h"

#include <cstring>
#include <filesystem>

namespace dranet::plugins {
namespace {

constexpr uint32_t kDefaultHttpTimeoutMs = 2000;
constexpr uint32_t kMaxHttpTimeoutMs = 30000;
constexpr std::size_t kMaxHttpBody = 4 << 20;

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  size_t n = size * count;
  if (body->size() + n > kMaxHttpBody) return 0;  // aborts the transfer
  body->append(data, n);
  return n;
}

std::string JoinRoot(const std::string& root, const char* sub) {
  std::filesystem::path p(root.empty() ? "/" : root);
  return (p / sub).lexically_normal().string();
}

}  // namespace

HttpResult CurlHttp(const HttpRequest& request) {
  const std::string& url = request.url;
  const uint32_t timeout_ms = request.timeout_ms;
  const std::string what = request.method + " " + url;
  if (request.method != "GET" && request.method != "PUT")
    throw std::invalid_argument(what + ": only GET and PUT are sent");
  CurlHandle handle = NewCurlHandle();
  CURL* curl = handle.get();
  HttpResult result;
  CurlHeaderList header_list;
  for (const auto& h : request.headers) AppendCurlHeader(header_list, h);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  if (request.method == "PUT") {
    // An empty request body; CURLOPT_UPLOAD would read one from stdin.
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");  // metadata services are link-local
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OPERATION_TIMEDOUT)
    throw HttpTimeout(what + ": timed out after " + std::to_string(timeout_ms) + " ms");
  if (rc != CURLE_OK) throw std::runtime_error(what + ": " + curl_easy_strerror(rc));
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  result.status = static_cast<int32_t>(status);
  return result;
}

HostServices::HostServices(std::string plugin_name, Logger& logger, const std::string& host_root,
                           std::string node_name, std::map<std::string, std::string> config,
                           HttpFunction http)
    : plugin_name_(std::move(plugin_name)),
      logger_(logger),
      host_root_(host_root.empty() ? "/" : host_root),
      sysfs_root_(JoinRoot(host_root, "sys")),
      devfs_root_(JoinRoot(host_root, "dev")),
      procfs_root_(JoinRoot(host_root, "proc")),
      node_name_(std::move(node_name)),
      config_(std::move(config)),
      http_(http ? std::move(http) : HttpFunction(&CurlHttp)) {
  host_.struct_size = sizeof(dranet_host_t);
  host_.abi_version = DRANET_ABI_CURRENT;
  host_.host_ctx = this;
  host_.host_root = host_root_.c_str();
  host_.sysfs_root = sysfs_root_.c_str();
  host_.devfs_root = devfs_root_.c_str();
  host_.procfs_root = procfs_root_.c_str();
  host_.node_name = node_name_.c_str();
  host_.log_enabled = &LogEnabled;
  host_.log = &LogLine;
  host_.config_get = &ConfigGet;
  host_.http_get = &HttpGet;
}

int32_t HostServices::LogEnabled(void* ctx, int32_t level) noexcept {
  auto* self = static_cast<HostServices*>(ctx);
  // Plugin debug lines are klog verbosity 4, info and above always show.
  return level <= DRANET_LOG_INFO || self->logger_.V(4) ? 1 : 0;
}

void HostServices::LogLine(void* ctx, int32_t level, const char* file, int32_t line,
                           const char* msg) noexcept {
  try {
    auto* self = static_cast<HostServices*>(ctx);
    if (!LogEnabled(ctx, level)) return;
    std::vector<LogField> fields{{"plugin", self->plugin_name_}};
    if (file != nullptr) {
      std::string_view f(file);
      auto slash = f.rfind('/');
      fields.emplace_back("source", std::string(slash == f.npos ? f : f.substr(slash + 1)) + ":" +
                                        std::to_string(line));
    }
    Severity sev = level == DRANET_LOG_ERROR  ? Severity::kError
                   : level == DRANET_LOG_WARN ? Severity::kWarning
                                              : Severity::kInfo;
    self->logger_.Log(sev, msg ? msg : "", fields);
  } catch (...) {
    // Logging must never fail a plugin call.
  }
}

dranet_status_t HostServices::ConfigGet(void* ctx, const char* key, const char** value_out) noexcept {
  auto* self = static_cast<HostServices*>(ctx);
  if (key == nullptr || value_out == nullptr) return DRANET_ERR_INVALID_ARG;
  auto it = self->config_.find(key);
  if (it == self->config_.end()) return DRANET_ERR_NOT_FOUND;
  *value_out = it->second.c_str();
  return DRANET_OK;
}

dranet_status_t HostServices::HttpGet(void* ctx, const dranet_http_request_t* request,
                                      char* body_buf, uint64_t body_capacity, int32_t* status_out,
                                      uint64_t* body_len_out, dranet_error_t* err) noexcept {
  auto* self = static_cast<HostServices*>(ctx);
  if (request == nullptr || request->struct_size < sizeof(uint32_t) * 2 + sizeof(void*) ||
      request->url == nullptr || status_out == nullptr || body_len_out == nullptr ||
      (body_buf == nullptr && body_capacity > 0))
    return dranet_error_set(err, DRANET_ERR_INVALID_ARG, 0, "http_get: invalid arguments");
  try {
    std::vector<std::string> headers;
    if (DRANET_HAS_FIELD(request, dranet_http_request_t, n_headers) && request->headers != nullptr) {
      for (uint32_t i = 0; i < request->n_headers && i < 64; ++i)
        if (request->headers[i] != nullptr) headers.emplace_back(request->headers[i]);
    }
    std::string method = "GET";
    if (DRANET_HAS_FIELD(request, dranet_http_request_t, method) && request->method != nullptr)
      method = request->method;
    if (method != "GET" && method != "PUT")
      return dranet_error_set(err, DRANET_ERR_INVALID_ARG, 0, "http_get: method \"%.16s\" is not GET or PUT",
                              method.c_str());
    uint32_t timeout = request->timeout_ms == 0 ? kDefaultHttpTimeoutMs : request->timeout_ms;
    if (timeout > kMaxHttpTimeoutMs) timeout = kMaxHttpTimeoutMs;
    HttpResult r = self->http_(HttpRequest{method, request->url, std::move(headers), timeout});
    if (r.body.size() > body_capacity)
      return dranet_error_set(err, DRANET_ERR_OVERFLOW, r.status,
                              "%s %s: body of %zu bytes exceeds the buffer of %llu", method.c_str(), request->url,
                              r.body.size(), static_cast<unsigned long long>(body_capacity));
    if (!r.body.empty()) std::memcpy(body_buf, r.body.data(), r.body.size());
    *status_out = r.status;
    *body_len_out = r.body.size();
    return DRANET_OK;
  } catch (const HttpTimeout& e) {
    return dranet_error_set(err, DRANET_ERR_TIMED_OUT, 0, "%s", e.what());
  } catch (const std::exception& e) {
    return dranet_error_set(err, DRANET_ERR_IO, 0, "%s", e.what());
  } catch (...) {
    return dranet_error_set(err, DRANET_ERR_INTERNAL, 0, "http_get: unknown failure");
  }
}

}  // namespace dranet::plugins
