// plugins/common/metadata_client.h — cloud metadata for the cloud plugins
// (aws, azure, gcp, oci, alibaba): fetched through the host's http_get on
// first use, never at init (so it cannot delay daemon start), kept for the
// process lifetime, and retried after a failure only once a backoff has
// passed (so an unreachable service costs one deadline per backoff period,
// not one per device).
//
// Header-only, C++17; depends on the SDK's C++ helper and RapidJSON.
#ifndef DRANET_PLUGINS_COMMON_METADATA_CLIENT_H
#define DRANET_PLUGINS_COMMON_METADATA_CLIENT_H

#include <dranet/plugin.hpp>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sysfs_text.h"

namespace dranet::plugins::common {

// A metadata request failed; what() says which URL and why.
class MetadataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A non-negative millisecond count from configuration key `key`; throws
// sdk::Error (init then fails with that message) when it is not a number.
inline uint32_t ConfigMs(const sdk::Host& host, const char* key, uint32_t fallback) {
  auto text = host.Config(key);
  if (!text) return fallback;
  try {
    std::size_t used = 0;
    unsigned long value = std::stoul(*text, &used, 10);
    if (used == text->size() && value <= 600000UL) return static_cast<uint32_t>(value);
  } catch (...) {
  }
  throw sdk::Error(DRANET_ERR_INVALID_ARG,
                   std::string("configuration ") + key + "=\"" + *text + "\": expected milliseconds (0-600000)");
}

// An endpoint from configuration, without a trailing slash; only plain
// http:// is accepted (metadata services are link-local plain HTTP).
inline std::string ConfigEndpoint(const sdk::Host& host, const char* key, const std::string& fallback) {
  std::string url = host.Config(key, fallback);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.rfind("http://", 0) != 0 || url.size() <= 7)
    throw sdk::Error(DRANET_ERR_INVALID_ARG,
                     std::string("configuration ") + key + "=\"" + url + "\": expected http://host[:port]");
  return url;
}

// <sysfs_root>/class/dmi/id/<name>, "" when absent.
inline std::string ReadDmi(const sdk::Host& host, const char* name) {
  return ReadTrimmed(host.sysfs_root() + "/class/dmi/id/" + name).value_or("");
}

// GET `url`; returns the body of a 200 answer, throws MetadataError otherwise.
inline std::string FetchText(const sdk::Host& host, const std::string& url, const std::vector<std::string>& headers,
                             uint32_t timeout_ms, std::size_t max_body) {
  sdk::HttpResponse response;
  try {
    response = host.HttpGet(url, headers, timeout_ms, max_body);
  } catch (const sdk::Error& e) {
    if (e.status() == DRANET_ERR_OVERFLOW)
      throw MetadataError("GET " + url + ": response larger than " + std::to_string(max_body) + " bytes");
    throw MetadataError(e.what());
  }
  if (response.status != 200)
    throw MetadataError("GET " + url + ": HTTP " + std::to_string(response.status));
  return response.body;
}

// `text` without leading and trailing whitespace (metadata answers end in
// a newline, or not).
inline std::string TrimSpace(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

// The session token of a metadata service that hands one out to a PUT
// carrying its TTL header (AWS IMDSv2, Alibaba; host ABI 1.4). `hint_403`
// completes the error of a 403 answer. Throws MetadataError.
inline std::string FetchSessionToken(const sdk::Host& host, const std::string& url, const std::string& ttl_header,
                                     uint32_t timeout_ms, const std::string& hint_403 = "") {
  sdk::HttpResponse response;
  try {
    response = host.HttpRequest("PUT", url, {ttl_header}, timeout_ms, 4096);
  } catch (const sdk::Error& e) {
    throw MetadataError(e.what());
  }
  std::string token = TrimSpace(response.body);
  if (response.status != 200 || token.empty())
    throw MetadataError("PUT " + url + ": HTTP " + std::to_string(response.status) +
                        (response.status == 403 && !hint_403.empty() ? " (" + hint_403 + ")" : ""));
  return token;
}

// GET `url` and parse a JSON body; throws MetadataError naming the URL and
// the parse error.
inline rapidjson::Document FetchJson(const sdk::Host& host, const std::string& url,
                                     const std::vector<std::string>& headers, uint32_t timeout_ms,
                                     std::size_t max_body) {
  std::string body = FetchText(host, url, headers, timeout_ms, max_body);
  rapidjson::Document doc;
  // Iterative: a deeply nested body cannot exhaust the stack (only named
  // members are read afterwards, nothing walks the tree).
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError())
    throw MetadataError("GET " + url + ": invalid JSON (" + rapidjson::GetParseError_En(doc.GetParseError()) +
                        " at offset " + std::to_string(doc.GetErrorOffset()) + ")");
  return doc;
}

// The string member `name` of a JSON object, "" when absent or not a string.
inline std::string JsonString(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

// Lowercase hex digits only: "00:0D:3A:6F:5A:3C" and "000D3A6F5A3C" compare
// equal.
inline std::string NormalizeMac(const std::string& mac) {
  std::string out;
  for (char c : mac)
    if (c != ':' && c != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

// The device's dra.net/mac attribute, "" when it has none.
inline std::string DeviceMac(const sdk::DeviceView& device) {
  const dranet_attr_t* mac = device.Attr("dra.net/mac");
  if (mac == nullptr || mac->type != DRANET_ATTR_STRING || mac->str_value == nullptr) return "";
  return mac->str_value;
}

// A value fetched once and kept; failures are retried after a backoff that
// starts at `initial` and doubles up to `maximum`. Not thread-safe: the
// host serialises every call into a plugin.
template <typename T>
class LazyMetadata {
 public:
  using Clock = std::chrono::steady_clock;
  LazyMetadata(std::chrono::milliseconds initial, std::chrono::milliseconds maximum)
      : initial_(initial), maximum_(std::max(initial, maximum)), backoff_(initial) {}

  // The cached value, or the result of `fetch()` when nothing is cached and
  // no backoff is pending. `fetch` throws MetadataError (or any
  // std::exception) on failure; `on_failure(reason, retry_in)` is then
  // called once and nullptr returned. `on_success(value)` runs once.
  template <typename Fetch, typename OnFailure, typename OnSuccess>
  const T* Get(Fetch&& fetch, OnFailure&& on_failure, OnSuccess&& on_success) {
    if (value_) return &*value_;
    auto now = Clock::now();
    if (attempts_ > 0 && now < next_attempt_) return nullptr;
    ++attempts_;
    try {
      value_ = fetch();
    } catch (const std::exception& e) {
      next_attempt_ = now + backoff_;
      on_failure(std::string(e.what()), backoff_);
      backoff_ = std::min(backoff_ * 2, maximum_);
      if (backoff_.count() == 0) backoff_ = initial_;
      return nullptr;
    }
    on_success(*value_);
    return &*value_;
  }

  int attempts() const { return attempts_; }

 private:
  std::chrono::milliseconds initial_, maximum_, backoff_;
  std::optional<T> value_;
  Clock::time_point next_attempt_{};
  int attempts_ = 0;
};

}  // namespace dranet::plugins::common

#endif  // DRANET_PLUGINS_COMMON_METADATA_CLIENT_H
