#pragma once
// tests/fakes/webhook/fake_webhook.h — a fake DRANET webhook profile
// provider (the protocol of --profile-provider=webhook), over real HTTP on
// 127.0.0.1 (ephemeral port) and, when asked, on a unix socket.
//
//   GET  /health                -> 200 {"cloudProvider":bool,"profileProvider":bool}
//   POST /GetProfileConfig      -> the answer set for the request's
//                                  config.profile: 200 with its NetworkConfig
//                                  (SetProfile), any status and body, or no
//                                  answer at all (SetProfileAnswer); 404 for
//                                  an unknown profile, 400 for a body that is
//                                  not a JSON object
//   POST /ReleaseProfileConfig  -> 200 "{}" (SetReleaseAnswer changes it)
//
// Every request is recorded on arrival, with its body, so tests can check
// exactly what the client sent.
//
// Thread-safety: every public method may be called from any thread while the
// fake serves.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace dranet::testing {
class HttpTestServer;
}

namespace dranet::fakes {

struct WebhookAnswer {
  int status = 200;
  std::string body;
  // Never answer while the fake runs (a hung webhook). A safety limit ends
  // the wait after kWebhookHangLimit with 504, so a client without a timeout
  // fails its test instead of hanging it.
  bool hang = false;
};

inline constexpr std::chrono::seconds kWebhookHangLimit{30};

struct WebhookRequest {
  std::string method;  // "GET", "POST"
  std::string path;    // "/GetProfileConfig"
  std::string host;    // the Host header
  std::string content_type;
  std::string body;
  bool over_unix_socket = false;
};

class FakeWebhook {
 public:
  struct Options {
    bool cloud_provider = false;
    bool profile_provider = true;
    uint16_t port = 0;                      // 0: any free port
    std::filesystem::path unix_socket_path;  // also serve here when set
  };

  explicit FakeWebhook(Options options);
  FakeWebhook() : FakeWebhook(Options{}) {}
  ~FakeWebhook();
  FakeWebhook(const FakeWebhook&) = delete;
  FakeWebhook& operator=(const FakeWebhook&) = delete;

  std::string url() const;       // "http://127.0.0.1:<port>"
  std::string unix_url() const;  // "unix://<path>"; empty without a unix socket

  // What /health reports.
  void SetCapabilities(bool cloud_provider, bool profile_provider);
  // The next `times` probes of /health get `answer` instead (-1: all of them).
  void OverrideHealth(WebhookAnswer answer, int times = -1);

  // /GetProfileConfig for config.profile == `profile` answers 200 with `network_config_json`.
  void SetProfile(const std::string& profile, const std::string& network_config_json);
  // ... answers `answer` instead (an error status, or a hang).
  void SetProfileAnswer(const std::string& profile, WebhookAnswer answer);
  void SetReleaseAnswer(WebhookAnswer answer);

  // Requests in arrival order; only those for `path` when it is not empty.
  std::vector<WebhookRequest> Requests(const std::string& path = "") const;

 private:
  class State;
  std::shared_ptr<State> state_;  // shared with the server's handler threads
  std::unique_ptr<testing::HttpTestServer> server_;
  std::string unix_socket_path_;
};

}  // namespace dranet::fakes
