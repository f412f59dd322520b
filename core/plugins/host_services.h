#pragma once
// core/plugins/host_services.h — the dranet_host_t a plugin receives, and
// the trampolines behind it. Each plugin gets its own HostServices: log
// lines carry its name, config_get sees only its keys.
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <dranet/plugin.h>

#include "base/log.h"

namespace dranet::plugins {

struct HttpResult {
  int32_t status = 0;
  std::string body;
};
struct HttpRequest {
  std::string method;  // "GET" or "PUT" (empty body)
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  uint32_t timeout_ms = 0;
};
// Performs an HTTP request; throws std::runtime_error on transport failure
// and HttpTimeout when the deadline passes.
using HttpFunction = std::function<HttpResult(const HttpRequest& request)>;
struct HttpTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The default HttpFunction: libcurl, no proxy, plain HTTP(S).
HttpResult CurlHttp(const HttpRequest& request);
inline HttpResult CurlHttpGet(const std::string& url, const std::vector<std::string>& headers,
                              uint32_t timeout_ms) {
  return CurlHttp(HttpRequest{"GET", url, headers, timeout_ms});
}

class HostServices {
 public:
  HostServices(std::string plugin_name, Logger& logger, const std::string& host_root,
               std::string node_name, std::map<std::string, std::string> config,
               HttpFunction http);
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;

  // Valid as long as this object lives.
  const dranet_host_t* host() const { return &host_; }
  const std::string& plugin_name() const { return plugin_name_; }

 private:
  static int32_t LogEnabled(void* ctx, int32_t level) noexcept;
  static void LogLine(void* ctx, int32_t level, const char* file, int32_t line,
                      const char* msg) noexcept;
  static dranet_status_t ConfigGet(void* ctx, const char* key, const char** value_out) noexcept;
  static dranet_status_t HttpGet(void* ctx, const dranet_http_request_t* request, char* body_buf,
                                 uint64_t body_capacity, int32_t* status_out,
                                 uint64_t* body_len_out, dranet_error_t* err) noexcept;

  std::string plugin_name_;
  Logger& logger_;
  std::string host_root_, sysfs_root_, devfs_root_, procfs_root_, node_name_;
  std::map<std::string, std::string> config_;
  HttpFunction http_;
  dranet_host_t host_{};
};

}  // namespace dranet::plugins
