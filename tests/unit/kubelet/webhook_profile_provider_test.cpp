// Tests of the webhook profile provider against the fake webhook, over real
// HTTP on loopback and over a unix socket.
#include "kubelet/webhook_profile_provider.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "base/json.h"
#include "fake_webhook.h"

namespace dranet::kubelet {
namespace {

using fakes::FakeWebhook;
using fakes::WebhookAnswer;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr const char* kProfile = "acme.com/ipam";
constexpr const char* kProfileConfig =
    R"({"interface":{"addresses":["10.9.0.5/24"]},"routes":[{"destination":"10.9.0.0/16","gateway":"10.9.0.1"}]})";
constexpr const char* kClaimConfig = R"({"profile":"acme.com/ipam","interface":{"name":"eth9","mtu":9000}})";

// Short enough that failure paths stay quick, long enough for a loaded machine.
WebhookProfileProviderOptions TestOptions() {
  WebhookProfileProviderOptions options;
  options.call_timeout = milliseconds(1000);
  options.health_retry_window = milliseconds(1500);
  options.health_retry_interval = milliseconds(100);
  return options;
}

ProfileDevice Nic() { return {"pci-0000-8a-00-0", "0a:1b:2c:3d:4e:5f", "0000:8a:00.0"}; }

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document doc;
  std::string error = ParseJson(doc, text);
  EXPECT_EQ(error, "") << text;
  return doc;
}

// A unix socket path of this test process, removed by the fake when it stops.
std::filesystem::path SocketPath() {
  static std::atomic<int> counter{0};
  return std::filesystem::temp_directory_path() /
         ("dranet-webhook-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".sock");
}

std::string ErrorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const ProfileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ProfileError";
  return "";
}

TEST(WebhookProfileProvider, GetProfileConfigSendsDranetRequestOverLoopback) {
  FakeWebhook webhook;
  webhook.SetProfile(kProfile, kProfileConfig);
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  EXPECT_EQ(provider->Describe(), "webhook " + webhook.url());

  const std::string answer = provider->GetProfileConfig(Nic(), "uid-1", kClaimConfig);
  EXPECT_TRUE(Json(answer) == Json(kProfileConfig)) << answer;

  auto health = webhook.Requests("/health");
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(health[0].method, "GET");
  auto calls = webhook.Requests("/GetProfileConfig");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].method, "POST");
  EXPECT_EQ(calls[0].content_type, "application/json");
  EXPECT_FALSE(calls[0].over_unix_socket);
  auto body = Json(calls[0].body);
  EXPECT_TRUE(body == Json(R"({"device":{"mac_address":"0a:1b:2c:3d:4e:5f","pci_address":"0000:8a:00.0",
                                         "name":"pci-0000-8a-00-0"},
                              "claim_uid":"uid-1",
                              "config":{"profile":"acme.com/ipam","interface":{"name":"eth9","mtu":9000}}})"))
      << calls[0].body;
}

TEST(WebhookProfileProvider, LeavesOutEmptyDeviceIdentifiersAsDranetDoes) {
  FakeWebhook webhook;
  webhook.SetProfile(kProfile, "{}");
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  provider->GetProfileConfig({"net-mfzgc3a", "", ""}, "uid-2", kClaimConfig);
  auto calls = webhook.Requests("/GetProfileConfig");
  ASSERT_EQ(calls.size(), 1u);
  auto body = Json(calls[0].body);
  EXPECT_TRUE(body["device"] == Json(R"({"name":"net-mfzgc3a"})")) << calls[0].body;
}

TEST(WebhookProfileProvider, SpeaksHttpOverUnixSocket) {
  FakeWebhook::Options options;
  options.unix_socket_path = SocketPath();
  FakeWebhook webhook(options);
  webhook.SetProfile(kProfile, kProfileConfig);
  auto provider = ConnectWebhookProfileProvider(webhook.unix_url(), TestOptions());
  EXPECT_EQ(provider->Describe(), "webhook unix://" + options.unix_socket_path.string());

  const std::string answer = provider->GetProfileConfig(Nic(), "uid-3", kClaimConfig);
  EXPECT_TRUE(Json(answer) == Json(kProfileConfig)) << answer;
  provider->ReleaseProfileConfig(Nic(), "uid-3", kClaimConfig);

  auto requests = webhook.Requests();
  ASSERT_EQ(requests.size(), 3u);  // health, get, release
  for (const auto& r : requests) {
    EXPECT_TRUE(r.over_unix_socket) << r.path;
    EXPECT_EQ(r.host, "localhost") << r.path;
  }
  EXPECT_EQ(requests[1].path, "/GetProfileConfig");
  EXPECT_EQ(requests[2].path, "/ReleaseProfileConfig");
}

TEST(WebhookProfileProvider, ConcurrentCallsEachGetTheirAnswer) {
  FakeWebhook webhook;
  webhook.SetProfile(kProfile, kProfileConfig);
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  constexpr int kCalls = 8;
  std::vector<std::string> answers(kCalls);
  {
    std::vector<std::jthread> callers;
    for (int i = 0; i < kCalls; ++i)
      callers.emplace_back(
          [&, i] { answers[i] = provider->GetProfileConfig(Nic(), "uid-" + std::to_string(i), kClaimConfig); });
  }
  for (const auto& answer : answers) EXPECT_TRUE(Json(answer) == Json(kProfileConfig)) << answer;
  std::set<std::string> claim_uids;
  for (const auto& request : webhook.Requests("/GetProfileConfig"))
    claim_uids.insert(Json(request.body)["claim_uid"].GetString());
  EXPECT_EQ(claim_uids.size(), static_cast<std::size_t>(kCalls));
}

TEST(WebhookProfileProvider, ReleasePostsTheSameRequest) {
  FakeWebhook webhook;
  webhook.SetProfile(kProfile, kProfileConfig);
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  provider->GetProfileConfig(Nic(), "uid-4", kClaimConfig);
  provider->ReleaseProfileConfig(Nic(), "uid-4", kClaimConfig);

  auto gets = webhook.Requests("/GetProfileConfig");
  auto releases = webhook.Requests("/ReleaseProfileConfig");
  ASSERT_EQ(gets.size(), 1u);
  ASSERT_EQ(releases.size(), 1u);
  EXPECT_EQ(releases[0].method, "POST");
  EXPECT_EQ(releases[0].content_type, "application/json");
  EXPECT_TRUE(Json(releases[0].body) == Json(gets[0].body)) << releases[0].body;
}

TEST(WebhookProfileProvider, ReleaseRefusedByWebhookIsAnError) {
  FakeWebhook webhook;
  webhook.SetReleaseAnswer({500, "whereabouts: lease store unavailable", false});
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  const std::string error = ErrorOf([&] { provider->ReleaseProfileConfig(Nic(), "uid-5", kClaimConfig); });
  EXPECT_THAT(error, HasSubstr("webhook " + webhook.url()));
  EXPECT_THAT(error, HasSubstr("POST /ReleaseProfileConfig"));
  EXPECT_THAT(error, HasSubstr("HTTP 500: whereabouts: lease store unavailable"));
}

TEST(WebhookProfileProvider, ErrorStatusBecomesErrorWithStatusAndBody) {
  FakeWebhook webhook;
  webhook.SetProfileAnswer(kProfile, {409, "IP 10.9.0.5 is already in use\n", false});
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  const std::string error = ErrorOf([&] { provider->GetProfileConfig(Nic(), "uid-6", kClaimConfig); });
  EXPECT_THAT(error, HasSubstr("webhook " + webhook.url()));
  EXPECT_THAT(error, HasSubstr("POST /GetProfileConfig for device pci-0000-8a-00-0 of claim uid-6"));
  EXPECT_THAT(error, HasSubstr("returned HTTP 409: IP 10.9.0.5 is already in use"));
}

TEST(WebhookProfileProvider, EveryNon200StatusFails) {
  FakeWebhook webhook;
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  for (int status : {201, 204, 400, 500}) {
    webhook.SetProfileAnswer(kProfile, {status, "{}", false});
    const std::string error = ErrorOf([&] { provider->GetProfileConfig(Nic(), "uid-7", kClaimConfig); });
    EXPECT_THAT(error, HasSubstr("returned HTTP " + std::to_string(status))) << status;
  }
  // An unknown profile: the fake answers 404 like webhook-whereabouts.
  const std::string error = ErrorOf(
      [&] { provider->GetProfileConfig(Nic(), "uid-7", R"({"profile":"acme.com/none"})"); });
  EXPECT_THAT(error, HasSubstr("returned HTTP 404: profile \"acme.com/none\" not found"));
}

TEST(WebhookProfileProvider, HangingWebhookFailsWithinTheCallTimeout) {
  FakeWebhook webhook;
  webhook.SetProfileAnswer(kProfile, {200, "{}", /*hang=*/true});
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  const std::string error = ErrorOf([&] { provider->GetProfileConfig(Nic(), "uid-8", kClaimConfig); });
  EXPECT_THAT(error, HasSubstr("webhook " + webhook.url() +
                               ": POST /GetProfileConfig for device pci-0000-8a-00-0 of claim uid-8 timed out after "
                               "1000 ms"));
}

// The prepare's deadline ends a call long before the provider's own
// timeout (a webhook answering in 7 s per device would hold a 4-device
// prepare for 28 s), for GetProfileConfig and ReleaseProfileConfig alike.
TEST(WebhookProfileProvider, AHangingCallEndsWhenItsStopIsRequested) {
  FakeWebhook webhook;
  webhook.SetProfileAnswer(kProfile, {200, "{}", /*hang=*/true});
  auto options = TestOptions();
  options.call_timeout = milliseconds(30'000);
  auto provider = ConnectWebhookProfileProvider(webhook.url(), options);
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop.request_stop();
  });
  const std::string error =
      ErrorOf([&] { provider->GetProfileConfig(Nic(), "uid-s", kClaimConfig, stop.get_token()); });
  stopper.join();
  EXPECT_THAT(error, HasSubstr("POST /GetProfileConfig for device pci-0000-8a-00-0 of claim uid-s stopped: the "
                               "call's deadline passed"));
  // Stopped before it starts: no request at all.
  std::stop_source stopped;
  stopped.request_stop();
  const auto before = webhook.Requests("/GetProfileConfig").size();
  EXPECT_THAT(ErrorOf([&] { provider->GetProfileConfig(Nic(), "uid-t", kClaimConfig, stopped.get_token()); }),
              HasSubstr("stopped"));
  EXPECT_EQ(webhook.Requests("/GetProfileConfig").size(), before);
  EXPECT_THAT(ErrorOf([&] { provider->ReleaseProfileConfig(Nic(), "uid-t", kClaimConfig, stopped.get_token()); }),
              HasSubstr("stopped"));
  EXPECT_TRUE(webhook.Requests("/ReleaseProfileConfig").empty());
}

TEST(WebhookProfileProvider, AnswerMustBeOneJsonObjectWithinTheSizeCap) {
  FakeWebhook webhook;
  auto options = TestOptions();
  options.max_response_bytes = 1024;
  auto provider = ConnectWebhookProfileProvider(webhook.url(), options);
  auto get = [&] { return provider->GetProfileConfig(Nic(), "uid-9", kClaimConfig); };

  webhook.SetProfile(kProfile, R"({"interface":{"mtu":1450}})" "\n");
  EXPECT_EQ(get(), R"({"interface":{"mtu":1450}})");
  webhook.SetProfile(kProfile, "null");  // DRANET's decoder takes null as no change
  EXPECT_EQ(get(), "{}");

  webhook.SetProfile(kProfile, "not json");
  EXPECT_THAT(ErrorOf(get), HasSubstr("answered a body that is not JSON"));
  webhook.SetProfile(kProfile, R"(["10.9.0.5/24"])");
  EXPECT_THAT(ErrorOf(get), HasSubstr("answered JSON that is not a NetworkConfig object"));
  webhook.SetProfile(kProfile, R"({"interface":{"name":")" + std::string(2000, 'x') + R"("}})");
  EXPECT_THAT(ErrorOf(get), HasSubstr("POST /GetProfileConfig for device pci-0000-8a-00-0 of claim uid-9 answered "
                                      "more than 1024 bytes"));
}

TEST(WebhookProfileProvider, ConfigThatIsNotAJsonObjectIsRefusedBeforeSending) {
  FakeWebhook webhook;
  auto provider = ConnectWebhookProfileProvider(webhook.url(), TestOptions());
  EXPECT_THAT(ErrorOf([&] { provider->GetProfileConfig(Nic(), "uid-10", "{\"profile\":"); }),
              HasSubstr("webhook " + webhook.url() +
                        ": config for device pci-0000-8a-00-0 of claim uid-10 is not JSON"));
  EXPECT_THAT(ErrorOf([&] { provider->GetProfileConfig(Nic(), "uid-10", "[]"); }),
              HasSubstr("is not a JSON object"));
  EXPECT_TRUE(webhook.Requests("/GetProfileConfig").empty());
}

TEST(WebhookProfileProvider, ConnectRefusesWebhookWithoutProfileCapability) {
  FakeWebhook::Options options;
  options.cloud_provider = true;
  options.profile_provider = false;
  FakeWebhook webhook(options);
  const std::string error = ErrorOf([&] { ConnectWebhookProfileProvider(webhook.url(), TestOptions()); });
  EXPECT_THAT(error, HasSubstr("webhook " + webhook.url() + " does not offer profiles"));
  EXPECT_THAT(error, HasSubstr(R"("profileProvider":false)"));
  EXPECT_EQ(webhook.Requests("/health").size(), 1u);  // a definite answer is not retried

  webhook.OverrideHealth({200, R"({"cloudProvider":true})", false});  // absent means false, as in DRANET
  EXPECT_THAT(ErrorOf([&] { ConnectWebhookProfileProvider(webhook.url(), TestOptions()); }),
              HasSubstr("does not offer profiles"));
  webhook.OverrideHealth({200, "OK", false});
  EXPECT_THAT(ErrorOf([&] { ConnectWebhookProfileProvider(webhook.url(), TestOptions()); }),
              HasSubstr("GET /health answered no capabilities object"));
  webhook.OverrideHealth({200, R"({"profileProvider":"yes"})", false});
  EXPECT_THAT(ErrorOf([&] { ConnectWebhookProfileProvider(webhook.url(), TestOptions()); }),
              HasSubstr("\"profileProvider\" is not a boolean"));
}

TEST(WebhookProfileProvider, ConnectRetriesHealthUntilTheWebhookIsReady) {
  FakeWebhook webhook;
  webhook.OverrideHealth({503, "starting", false}, /*times=*/2);
  auto provider = ConnectWebhookProfileProvider(webhook.url() + "/", TestOptions());  // trailing '/' is dropped
  EXPECT_EQ(webhook.Requests("/health").size(), 3u);
}

TEST(WebhookProfileProvider, UrlPathIsTheBaseOfEveryEndpoint) {
  FakeWebhook webhook;
  auto options = TestOptions();
  options.health_retry_window = milliseconds(0);  // one probe
  EXPECT_THAT(ErrorOf([&] { ConnectWebhookProfileProvider(webhook.url() + "/dranet/", options); }),
              HasSubstr("GET /health returned HTTP 404"));  // the fake serves only /health
  auto requests = webhook.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/dranet/health");
}

TEST(WebhookProfileProvider, ConnectFailsAfterTheRetryWindowNamingTheUrl) {
  std::string closed_url;
  {
    FakeWebhook gone;
    closed_url = gone.url();
  }
  const std::string error = ErrorOf([&] { ConnectWebhookProfileProvider(closed_url, TestOptions()); });
  EXPECT_THAT(error, HasSubstr("webhook " + closed_url + " is not healthy after "));
  EXPECT_THAT(error, HasSubstr("GET /health failed"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("after 1 probes")));

  const std::string socket_url = "unix://" + SocketPath().string();
  const std::string socket_error = ErrorOf([&] { ConnectWebhookProfileProvider(socket_url, TestOptions()); });
  EXPECT_THAT(socket_error, HasSubstr("webhook " + socket_url + " is not healthy after "));
  EXPECT_THAT(socket_error, HasSubstr("cannot connect to unix socket " + socket_url.substr(7) +
                                      ": No such file or directory"));

  FakeWebhook failing;
  failing.OverrideHealth({503, "not ready", false});
  EXPECT_THAT(ErrorOf([&] { ConnectWebhookProfileProvider(failing.url(), TestOptions()); }),
              HasSubstr("GET /health returned HTTP 503: not ready"));
  EXPECT_GE(failing.Requests("/health").size(), 2u);
}

TEST(WebhookProfileProvider, ConnectRefusesMalformedUrls) {
  for (const char* url : {"", "127.0.0.1:8080", "ftp://127.0.0.1/", "http://", "https:///x", "unix://relative.sock",
                          "unix://", "http://127.0.0.1:8080/?a=b", "http://127.0.0.1 :8080"}) {
    const std::string error = ErrorOf([&] { ConnectWebhookProfileProvider(url, TestOptions()); });
    EXPECT_THAT(error, HasSubstr(std::string("webhook URL \"") + url + "\"")) << url;
  }
}

}  // namespace
}  // namespace dranet::kubelet
