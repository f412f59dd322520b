// core/kubelet/webhook_profile_provider.cpp — DRANET's webhook profile
// protocol over libcurl: URL checks, the /health probe with its retry window,
// and the two POSTs.
#include "kubelet/webhook_profile_provider.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <system_error>
#include <thread>

#include "base/curl_handle.h"
#include "base/json.h"

namespace dranet::kubelet {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr const char* kPathHealth = "/health";
constexpr const char* kPathGetProfileConfig = "/GetProfileConfig";
constexpr const char* kPathReleaseProfileConfig = "/ReleaseProfileConfig";

// A webhook's error page can be large; what ends up in a claim's error keeps
// the start of it.
constexpr std::size_t kMaxBodyInError = 1024;

// Where requests go: for unix:// URLs, http://localhost over the socket.
struct WebhookEndpoint {
  std::string base_url;     // "http://127.0.0.1:8080/base", no trailing '/'
  std::string unix_socket;  // "/run/webhook.sock", or empty for TCP
};

WebhookEndpoint ParseWebhookUrl(const std::string& url) {
  auto refuse = [&](const std::string& why) {
    return ProfileError("webhook URL \"" + url + "\" " + why +
                        " (expected http://host:port[/path], https://host:port[/path] or unix:///path/to.sock)");
  };
  if (url.empty()) throw refuse("is empty");
  for (unsigned char c : url)
    if (c <= ' ' || c == 0x7f) throw refuse("contains whitespace or control characters");
  if (url.find_first_of("?#") != std::string::npos) throw refuse("has a query or fragment");

  WebhookEndpoint endpoint;
  if (url.starts_with("unix://")) {
    endpoint.unix_socket = url.substr(std::string_view("unix://").size());
    if (!endpoint.unix_socket.starts_with("/") || endpoint.unix_socket.size() < 2)
      throw refuse("does not name an absolute socket path");
    endpoint.base_url = "http://localhost";
    return endpoint;
  }
  std::size_t authority_start = 0;
  if (url.starts_with("http://")) {
    authority_start = std::string_view("http://").size();
  } else if (url.starts_with("https://")) {
    authority_start = std::string_view("https://").size();
  } else {
    throw refuse("has an unsupported scheme");
  }
  const std::size_t path_start = std::min(url.find('/', authority_start), url.size());
  if (path_start == authority_start) throw refuse("has no host");
  endpoint.base_url = url;
  while (endpoint.base_url.size() > path_start && endpoint.base_url.back() == '/') endpoint.base_url.pop_back();
  return endpoint;
}

std::string BodyForError(const std::string& body) {
  std::string text = body.substr(0, kMaxBodyInError);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (body.size() > kMaxBodyInError) text += "... (" + std::to_string(body.size()) + " bytes)";
  return text.empty() ? "(empty body)" : text;
}

// DRANET's ProfileRequest: {"device":{...},"claim_uid":"...","config":{...}}.
// `provider` prefixes the error for a config that is not a JSON object.
std::string ProfileRequestJson(const std::string& provider, const ProfileDevice& device, const std::string& claim_uid,
                               const std::string& config_json) {
  rapidjson::Document config;
  if (!config_json.empty()) {
    if (std::string error = ParseJson(config, config_json); !error.empty())
      throw ProfileError(provider + ": config for device " + device.name + " of claim " + claim_uid +
                         " is not JSON: " + error);
    if (!config.IsObject())
      throw ProfileError(provider + ": config for device " + device.name + " of claim " + claim_uid +
                         " is not a JSON object");
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  auto string_field = [&](const char* key, const std::string& value) {
    writer.Key(key);
    writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  };
  writer.StartObject();
  writer.Key("device");
  writer.StartObject();
  if (!device.mac_address.empty()) string_field("mac_address", device.mac_address);
  if (!device.pci_address.empty()) string_field("pci_address", device.pci_address);
  string_field("name", device.name);
  writer.EndObject();
  string_field("claim_uid", claim_uid);
  if (!config_json.empty()) {
    writer.Key("config");
    config.Accept(writer);
  }
  writer.EndObject();
  return std::string(out.GetString(), out.GetSize());
}

// An HTTP answer, or why none came back.
struct HttpAnswer {
  long status = 0;
  std::string body;
  std::string failure;  // "timed out after 1000 ms", "failed: ..."; empty when an answer came
};

// "POST /GetProfileConfig for device pci-0000-8a-00-0 of claim 8f0c..."
std::string ProfileCall(const char* path, const ProfileDevice& device, const std::string& claim_uid) {
  return std::string("POST ") + path + " for device " + device.name + " of claim " + claim_uid;
}

class WebhookProfileProvider final : public ProfileProvider {
 public:
  WebhookProfileProvider(std::string url, WebhookEndpoint endpoint, WebhookProfileProviderOptions options)
      : url_(std::move(url)), endpoint_(std::move(endpoint)), options_(options) {}

  std::string Describe() const override { return "webhook " + url_; }

  std::string GetProfileConfig(const ProfileDevice& device, const std::string& claim_uid,
                               const std::string& config_json, std::stop_token stop) override {
    HttpAnswer answer = PostProfileRequest(kPathGetProfileConfig, device, claim_uid, config_json, stop);
    const std::string call = ProfileCall(kPathGetProfileConfig, device, claim_uid);
    // Like DRANET's decoder: the first JSON value counts, null is no change.
    rapidjson::Document config;
    if (std::string error = ParseJson(config, answer.body, /*stop_when_done=*/true); !error.empty())
      throw CallError(call, "answered a body that is not JSON (" + error + "): " + BodyForError(answer.body));
    if (config.IsNull()) return "{}";
    if (!config.IsObject())
      throw CallError(call, "answered JSON that is not a NetworkConfig object: " + BodyForError(answer.body));
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> writer(out);
    config.Accept(writer);
    return std::string(out.GetString(), out.GetSize());
  }

  void ReleaseProfileConfig(const ProfileDevice& device, const std::string& claim_uid,
                            const std::string& config_json, std::stop_token stop) override {
    PostProfileRequest(kPathReleaseProfileConfig, device, claim_uid, config_json, stop);
  }

  // One GET /health within `timeout`.
  HttpAnswer ProbeHealth(milliseconds timeout) const { return Perform(kPathHealth, nullptr, timeout, {}); }

 private:
  ProfileError CallError(const std::string& call, const std::string& detail) const {
    return ProfileError(Describe() + ": " + call + " " + detail);
  }

  // The 200 answer to the POST. Throws ProfileError for anything else.
  HttpAnswer PostProfileRequest(const char* path, const ProfileDevice& device, const std::string& claim_uid,
                                const std::string& config_json, std::stop_token stop) const {
    const std::string body = ProfileRequestJson(Describe(), device, claim_uid, config_json);
    HttpAnswer answer = Perform(path, &body, options_.call_timeout, stop);
    if (!answer.failure.empty()) throw CallError(ProfileCall(path, device, claim_uid), answer.failure);
    if (answer.status != 200)
      throw CallError(ProfileCall(path, device, claim_uid),
                      "returned HTTP " + std::to_string(answer.status) + ": " + BodyForError(answer.body));
    return answer;
  }

  // GET (post_body == nullptr) or POST `path`, within `timeout`, given up
  // once `stop` is requested.
  HttpAnswer Perform(const char* path, const std::string* post_body, milliseconds timeout,
                     std::stop_token stop) const {
    CurlHandle handle = NewCurlHandle();
    CURL* curl = handle.get();
    const std::string target = endpoint_.base_url + path;
    curl_easy_setopt(curl, CURLOPT_URL, target.c_str());
    if (!endpoint_.unix_socket.empty()) curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, endpoint_.unix_socket.c_str());
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
    CurlHeaderList headers;
    AppendCurlHeader(headers, "Accept: application/json");
    if (post_body) {
      AppendCurlHeader(headers, "Content-Type: application/json");
      AppendCurlHeader(headers, "Expect:");  // no 100-continue round trip for configs over 1 KiB
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post_body->data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post_body->size()));
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());

    struct Sink {
      std::string body;
      std::size_t limit;
      bool overflowed = false;
    } sink{{}, options_.max_response_bytes};
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t count, void* user) -> size_t {
      auto* s = static_cast<Sink*>(user);
      const size_t n = size * count;
      if (s->body.size() + n > s->limit) {
        s->overflowed = true;
        return 0;  // aborts the transfer with CURLE_WRITE_ERROR
      }
      s->body.append(data, n);
      return n;
    });
    char error_detail[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_detail);
    // libcurl calls this about once a second while it waits, and at once on
    // every transfer: the stop is seen within a second.
    if (stop.stop_possible()) {
      curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
      curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &stop);
      curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION,
                       +[](void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> int {
                         return static_cast<std::stop_token*>(user)->stop_requested() ? 1 : 0;
                       });
    }

    const CURLcode code = stop.stop_requested() ? CURLE_ABORTED_BY_CALLBACK : curl_easy_perform(curl);
    HttpAnswer answer;
    if (code == CURLE_ABORTED_BY_CALLBACK) {
      answer.failure = "stopped: the call's deadline passed (the kubelet gives up on it)";
    } else if (sink.overflowed) {
      answer.failure = "answered more than " + std::to_string(sink.limit) + " bytes";
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
      answer.failure = "timed out after " + std::to_string(timeout.count()) + " ms";
    } else if (code == CURLE_COULDNT_CONNECT && !endpoint_.unix_socket.empty()) {
      // curl names "localhost port 80" here; the socket and errno say more.
      long os_errno = 0;
      curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
      answer.failure = "failed: cannot connect to unix socket " + endpoint_.unix_socket + ": " +
                       std::generic_category().message(static_cast<int>(os_errno));
    } else if (code != CURLE_OK) {
      answer.failure = std::string("failed: ") + (error_detail[0] ? error_detail : curl_easy_strerror(code));
    } else {
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
      answer.body = std::move(sink.body);
    }
    return answer;
  }

  const std::string url_;
  const WebhookEndpoint endpoint_;
  const WebhookProfileProviderOptions options_;
};

// Probes /health until it answers 200, and returns that answer. Unreachable
// and other statuses are retried for options.health_retry_window (a webhook
// started beside dranetd may not listen yet). Throws ProfileError.
HttpAnswer AwaitHealthy(const WebhookProfileProvider& provider, const std::string& url,
                        const WebhookProfileProviderOptions& options) {
  const auto started = steady_clock::now();
  const auto deadline = started + options.health_retry_window;
  std::string last_failure;
  for (int probes = 1;; ++probes) {
    // The first probe gets the whole call timeout; later ones what is left of the window.
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    const milliseconds timeout = probes == 1 ? options.call_timeout
                                             : std::clamp(left, milliseconds(1), options.call_timeout);
    HttpAnswer answer = provider.ProbeHealth(timeout);
    if (answer.failure.empty() && answer.status == 200) return answer;
    last_failure = "GET /health " + (answer.failure.empty() ? "returned HTTP " + std::to_string(answer.status) + ": " +
                                                                  BodyForError(answer.body)
                                                            : answer.failure);
    if (steady_clock::now() + options.health_retry_interval >= deadline) {
      const auto waited = std::chrono::duration_cast<milliseconds>(steady_clock::now() - started);
      throw ProfileError("webhook " + url + " is not healthy after " + std::to_string(probes) + " probes in " +
                         std::to_string(waited.count()) + " ms; last: " + last_failure);
    }
    std::this_thread::sleep_for(options.health_retry_interval);
  }
}

// The "profileProvider" capability of a /health answer (absent: false).
// Throws ProfileError when the answer is not a capabilities object.
bool OffersProfiles(const std::string& url, const std::string& health_body) {
  rapidjson::Document caps;
  std::string error = ParseJson(caps, health_body, /*stop_when_done=*/true);
  if (error.empty() && !caps.IsObject()) error = "not a JSON object";
  if (error.empty()) {
    const auto member = caps.FindMember("profileProvider");
    if (member == caps.MemberEnd()) return false;
    if (member->value.IsBool()) return member->value.GetBool();
    error = "\"profileProvider\" is not a boolean";
  }
  throw ProfileError("webhook " + url + ": GET /health answered no capabilities object (" + error +
                     "): " + BodyForError(health_body));
}

}  // namespace

std::unique_ptr<ProfileProvider> ConnectWebhookProfileProvider(const std::string& url,
                                                               const WebhookProfileProviderOptions& options) {
  auto provider = std::make_unique<WebhookProfileProvider>(url, ParseWebhookUrl(url), options);
  const HttpAnswer health = AwaitHealthy(*provider, url, options);
  if (!OffersProfiles(url, health.body))
    throw ProfileError("webhook " + url + " does not offer profiles: GET /health answered " +
                       BodyForError(health.body) +
                       "; point --webhook-url at a webhook with \"profileProvider\": true, or choose another "
                       "--profile-provider");
  return provider;
}

}  // namespace dranet::kubelet
