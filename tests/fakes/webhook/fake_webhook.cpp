// tests/fakes/webhook/fake_webhook.cpp — routing, the profile table and the
// request log of the fake webhook; HTTP itself is http_test_server.h.
#include "fake_webhook.h"

#include <rapidjson/document.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "http_test_server.h"

namespace dranet::fakes {

using testing::HttpTestRequest;
using testing::HttpTestResponse;

class FakeWebhook::State {
 public:
  explicit State(const Options& options)
      : cloud_provider_(options.cloud_provider), profile_provider_(options.profile_provider) {}

  HttpTestResponse Handle(const HttpTestRequest& request, std::stop_token stop) {
    Record(request);
    const std::string path = request.target.substr(0, request.target.find('?'));
    if (path == "/health") {
      if (request.method != "GET") return Text(405, "method not allowed");
      if (auto answer = TakeHealthOverride()) return Answer(*answer, stop);
      std::lock_guard lock(mu_);
      return {200, std::string("{\"cloudProvider\":") + (cloud_provider_ ? "true" : "false") +
                       ",\"profileProvider\":" + (profile_provider_ ? "true" : "false") + "}"};
    }
    if (path != "/GetProfileConfig" && path != "/ReleaseProfileConfig") return Text(404, "404 page not found");
    if (request.method != "POST") return Text(405, "method not allowed");
    rapidjson::Document doc;
    doc.Parse(request.body.c_str(), request.body.size());
    if (doc.HasParseError() || !doc.IsObject()) return Text(400, "request body is not a JSON object");
    if (path == "/ReleaseProfileConfig") {
      WebhookAnswer answer;
      {
        std::lock_guard lock(mu_);
        answer = release_answer_;
      }
      return Answer(answer, stop);
    }
    std::string profile;
    if (auto config = doc.FindMember("config"); config != doc.MemberEnd() && config->value.IsObject())
      if (auto name = config->value.FindMember("profile"); name != config->value.MemberEnd() && name->value.IsString())
        profile = name->value.GetString();
    std::optional<WebhookAnswer> answer;
    {
      std::lock_guard lock(mu_);
      if (auto it = profiles_.find(profile); it != profiles_.end()) answer = it->second;
    }
    if (!answer) return Text(404, "profile \"" + profile + "\" not found");
    return Answer(*answer, stop);
  }

  void SetCapabilities(bool cloud_provider, bool profile_provider) {
    std::lock_guard lock(mu_);
    cloud_provider_ = cloud_provider;
    profile_provider_ = profile_provider;
  }
  void OverrideHealth(WebhookAnswer answer, int times) {
    std::lock_guard lock(mu_);
    health_override_ = std::move(answer);
    health_override_times_ = times;
  }
  void SetProfileAnswer(const std::string& profile, WebhookAnswer answer) {
    std::lock_guard lock(mu_);
    profiles_[profile] = std::move(answer);
  }
  void SetReleaseAnswer(WebhookAnswer answer) {
    std::lock_guard lock(mu_);
    release_answer_ = std::move(answer);
  }
  std::vector<WebhookRequest> Requests(const std::string& path) const {
    std::lock_guard lock(mu_);
    std::vector<WebhookRequest> out;
    for (const auto& r : requests_)
      if (path.empty() || r.path == path) out.push_back(r);
    return out;
  }

 private:
  static HttpTestResponse Text(int status, std::string text) { return {status, std::move(text) + "\n", "text/plain"}; }

  // `answer` as a response; a hang waits until the server stops (or the safety limit).
  static HttpTestResponse Answer(const WebhookAnswer& answer, std::stop_token stop) {
    if (answer.hang) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      cv.wait_for(lock, stop, kWebhookHangLimit, [] { return false; });
      if (stop.stop_requested()) return {0, {}, {}};
      return Text(504, "fake webhook: hang limit reached");
    }
    const bool json = !answer.body.empty() && (answer.body[0] == '{' || answer.body[0] == '[');
    return {answer.status, answer.body, json ? "application/json" : "text/plain"};
  }

  void Record(const HttpTestRequest& request) {
    std::lock_guard lock(mu_);
    requests_.push_back({request.method, request.target.substr(0, request.target.find('?')), request.host,
                         request.content_type, request.body, request.over_unix_socket});
  }

  std::optional<WebhookAnswer> TakeHealthOverride() {
    std::lock_guard lock(mu_);
    if (!health_override_ || health_override_times_ == 0) return std::nullopt;
    if (health_override_times_ > 0) --health_override_times_;
    return health_override_;
  }

  mutable std::mutex mu_;
  bool cloud_provider_, profile_provider_;
  std::optional<WebhookAnswer> health_override_;
  int health_override_times_ = 0;
  std::map<std::string, WebhookAnswer> profiles_;
  WebhookAnswer release_answer_{200, "{}", false};
  std::vector<WebhookRequest> requests_;
};

FakeWebhook::FakeWebhook(Options options)
    : state_(std::make_shared<State>(options)), unix_socket_path_(options.unix_socket_path.string()) {
  server_ = std::make_unique<testing::HttpTestServer>(
      [state = state_](const HttpTestRequest& request, std::stop_token stop) { return state->Handle(request, stop); },
      options.port, options.unix_socket_path);
}

FakeWebhook::~FakeWebhook() = default;

std::string FakeWebhook::url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
std::string FakeWebhook::unix_url() const { return unix_socket_path_.empty() ? "" : "unix://" + unix_socket_path_; }

void FakeWebhook::SetCapabilities(bool cloud_provider, bool profile_provider) {
  state_->SetCapabilities(cloud_provider, profile_provider);
}
void FakeWebhook::OverrideHealth(WebhookAnswer answer, int times) { state_->OverrideHealth(std::move(answer), times); }
void FakeWebhook::SetProfile(const std::string& profile, const std::string& network_config_json) {
  state_->SetProfileAnswer(profile, {200, network_config_json, false});
}
void FakeWebhook::SetProfileAnswer(const std::string& profile, WebhookAnswer answer) {
  state_->SetProfileAnswer(profile, std::move(answer));
}
void FakeWebhook::SetReleaseAnswer(WebhookAnswer answer) { state_->SetReleaseAnswer(std::move(answer)); }
std::vector<WebhookRequest> FakeWebhook::Requests(const std::string& path) const { return state_->Requests(path); }

}  // namespace dranet::fakes
