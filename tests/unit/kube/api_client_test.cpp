#include "kube/api_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <stop_token>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/json_fields.h"
#include "kube/list_watch.h"
#include "kube_test_env.h"

namespace dranet::kube {
namespace {

using ::testing::HasSubstr;
using testing::ApiTestEnv;

constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";

std::string SliceBody(const std::string& name, const std::string& node, const std::string& rv = "") {
  std::string metadata = R"("name":")" + name + R"(")";
  if (!rv.empty()) metadata += R"(,"resourceVersion":")" + rv + R"(")";
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{)" + metadata +
         R"(},"spec":{"driver":"dra.net","nodeName":")" + node +
         R"(","pool":{"name":")" + node + R"(","generation":1,"resourceSliceCount":1},"devices":[]}})";
}

class ApiClientTest : public ::testing::Test {
 protected:
  ApiTestEnv env_;
};

TEST_F(ApiClientTest, CreateGetListWithFieldSelectorUpdateDelete) {
  auto client = env_.MakeClient();
  auto created = client->Create(kSlices, SliceBody("a", "node-1"));
  EXPECT_FALSE(MetadataField(created, "uid").empty());
  client->Create(kSlices, SliceBody("b", "node-2"));

  auto got = client->Get(std::string(kSlices) + "/a");
  EXPECT_EQ(MetadataField(got, "name"), "a");

  ListOptions options;
  options.field_selector = "spec.nodeName=node-2,spec.driver=dra.net";
  auto list = client->List(kSlices, options);
  ASSERT_EQ(list["items"].Size(), 1u);
  EXPECT_EQ(MetadataField(list["items"][0], "name"), "b");
  EXPECT_FALSE(MetadataField(list, "resourceVersion").empty());
  EXPECT_EQ(env_.server().CountRequests("GET", "fieldSelector=spec.nodeName%3Dnode-2%2Cspec.driver%3Ddra.net"), 1u);

  std::string rv = MetadataField(got, "resourceVersion");
  auto updated = client->Update(std::string(kSlices) + "/a", SliceBody("a", "node-1", rv));
  EXPECT_NE(MetadataField(updated, "resourceVersion"), rv);
  EXPECT_EQ(MetadataField(updated, "uid"), MetadataField(created, "uid"));

  EXPECT_TRUE(client->Delete(std::string(kSlices) + "/a"));
  EXPECT_FALSE(client->Delete(std::string(kSlices) + "/a"));  // already gone
  EXPECT_EQ(client->Stats().failures, 0u);
}

// Bursts of concurrent callers (as the prepare workers read the claims of
// pods that start together) keep their connections between bursts: however
// many bursts, no more are opened than callers ran at once, so a burst costs
// no new TCP (and, to a real API server, TLS) connections.
TEST_F(ApiClientTest, BurstsOfCallersReuseTheirConnections) {
  auto client = env_.MakeClient();
  client->Create(kSlices, SliceBody("a", "node-1"));
  // Every GET takes 20 ms, so the callers of a burst overlap.
  fakes::FakeFault slow;
  slow.method = "GET";
  slow.path_contains = "/resourceslices/a";
  slow.status = -1;  // answered as usual, after the delay
  slow.delay = std::chrono::milliseconds(20);
  slow.times = -1;
  env_.server().InjectFault(slow);
  const std::size_t before = env_.server().AcceptedConnections();
  constexpr int kCallers = 12, kBursts = 10;
  std::atomic<int> failures{0};
  for (int burst = 0; burst < kBursts; ++burst) {
    std::vector<std::thread> callers;
    for (int t = 0; t < kCallers; ++t)
      callers.emplace_back([&] {
        try {
          client->Get(std::string(kSlices) + "/a");
        } catch (const std::exception&) {
          ++failures;
        }
      });
    for (auto& t : callers) t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(env_.server().CountRequests("GET", "/resourceslices/a"), std::size_t{kCallers * kBursts});
  EXPECT_LE(env_.server().AcceptedConnections() - before, std::size_t{kCallers});
}

TEST_F(ApiClientTest, StaleUpdateIsAConflictNamingTheObject) {
  auto client = env_.MakeClient();
  auto created = client->Create(kSlices, SliceBody("a", "node-1"));
  std::string old_rv = MetadataField(created, "resourceVersion");
  client->Update(std::string(kSlices) + "/a", SliceBody("a", "node-1", old_rv));
  try {
    client->Update(std::string(kSlices) + "/a", SliceBody("a", "node-1", old_rv));
    FAIL() << "expected a conflict";
  } catch (const ApiError& error) {
    EXPECT_TRUE(error.IsConflict());
    EXPECT_EQ(error.reason(), "Conflict");
    EXPECT_THAT(error.what(), HasSubstr("PUT /apis/resource.k8s.io/v1/resourceslices/a"));
    EXPECT_THAT(error.what(), HasSubstr("409"));
  }
}

TEST_F(ApiClientTest, ReadModifyWriteRetriesAfterAConflict) {
  auto client = env_.MakeClient();
  client->Create(kSlices, SliceBody("a", "node-1"));
  env_.server().InjectFault({"PUT", "/resourceslices/a", 409, -1, {}, 1});
  int calls = 0;
  client->ReadModifyWrite(std::string(kSlices) + "/a", [&calls](const rapidjson::Value& current) {
    ++calls;
    return SliceBody("a", "node-1", MetadataField(current, "resourceVersion"));
  });
  EXPECT_EQ(calls, 2);
}

TEST_F(ApiClientTest, NotFoundErrorNamesPathAndStatus) {
  auto client = env_.MakeClient();
  try {
    client->Get("/api/v1/nodes/missing-node");
    FAIL() << "expected an error";
  } catch (const ApiError& error) {
    EXPECT_TRUE(error.IsNotFound());
    EXPECT_THAT(error.what(), HasSubstr("/api/v1/nodes/missing-node"));
    EXPECT_THAT(error.what(), HasSubstr("404"));
  }
  EXPECT_EQ(client->Stats().failures, 1u);
}

TEST_F(ApiClientTest, RetriesServerErrorsWithGrowingJitteredBackoff) {
  // Sleeps are recorded, not waited, so the delays can be large enough for every attempt's
  // window to be told apart from its neighbours' and for the cap to be reached.
  auto options = ApiTestEnv::FastOptions();
  options.initial_backoff = std::chrono::milliseconds(100);
  options.max_backoff = std::chrono::milliseconds(1000);
  options.max_attempts = 8;
  constexpr int kFailures = 7;
  auto client = env_.MakeClient(options);
  env_.server().PutObject("/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  env_.server().InjectFault({"GET", "/nodes/n1", 503, -1, {}, kFailures});
  auto node = client->Get("/api/v1/nodes/n1");
  EXPECT_EQ(MetadataField(node, "name"), "n1");
  EXPECT_EQ(client->Stats().retries, static_cast<uint64_t>(kFailures));
  auto sleeps = env_.sleeps();
  ASSERT_EQ(sleeps.size(), static_cast<std::size_t>(kFailures));
  // Equal jitter: attempt n waits within [w/2, w], w = min(initial · 2^(n-1), max):
  // 100, 200, 400, 800, then 1000 for every later attempt.
  for (int n = 1; n <= kFailures; ++n) {
    const int64_t window = std::min<int64_t>(100 * (int64_t{1} << (n - 1)), 1000);
    const int64_t slept = sleeps[n - 1].count();
    EXPECT_GE(slept, window - window / 2) << "attempt " << n;
    EXPECT_LE(slept, window) << "attempt " << n;
  }
  // Until the cap each window starts where the previous one ends, so the delays never shrink
  // (attempts 1-4), and each window starts above the one two attempts earlier, so they strictly
  // grow two apart (attempts 1-5).
  for (int n = 2; n <= 4; ++n) EXPECT_GE(sleeps[n - 1], sleeps[n - 2]) << "attempt " << n;
  for (int n = 3; n <= 5; ++n) EXPECT_GT(sleeps[n - 1], sleeps[n - 3]) << "attempt " << n;
}

TEST_F(ApiClientTest, TooManyRequestsHonoursRetryAfter) {
  auto client = env_.MakeClient();
  env_.server().PutObject("/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  env_.server().InjectFault({"GET", "/nodes/n1", 429, 7, {}, 1});
  client->Get("/api/v1/nodes/n1");
  auto sleeps = env_.sleeps();
  ASSERT_EQ(sleeps.size(), 1u);
  EXPECT_GE(sleeps[0], std::chrono::seconds(7));
}

TEST_F(ApiClientTest, GivesUpAfterMaxAttemptsWithTheLastStatus) {
  auto options = ApiTestEnv::FastOptions();
  options.max_attempts = 3;
  auto client = env_.MakeClient(options);
  env_.server().InjectFault({"", "", 500, -1, {}, -1});
  try {
    client->Get("/api/v1/nodes/n1");
    FAIL() << "expected an error";
  } catch (const ApiError& error) {
    EXPECT_EQ(error.status(), 500);
  }
  EXPECT_EQ(env_.server().CountRequests("GET", "/nodes/n1"), 3u);
}

TEST_F(ApiClientTest, ClientErrorsAreNotRetried) {
  auto client = env_.MakeClient();
  env_.server().InjectFault({"", "", 403, -1, {}, 1});
  EXPECT_THROW(client->Get("/api/v1/nodes/n1"), ApiError);
  EXPECT_EQ(client->Stats().retries, 0u);
}

TEST_F(ApiClientTest, DroppedConnectionsAreRetried) {
  auto client = env_.MakeClient();
  env_.server().PutObject("/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  env_.server().InjectFault({"GET", "/nodes/n1", 0, -1, {}, 2});
  EXPECT_EQ(MetadataField(client->Get("/api/v1/nodes/n1"), "name"), "n1");
  EXPECT_EQ(client->Stats().retries, 2u);
}

TEST_F(ApiClientTest, UnreachableServerIsStatusZeroNamingTheServer) {
  auto options = ApiTestEnv::FastOptions();
  options.max_attempts = 2;
  env_.server().SetDown(true);
  auto client = env_.MakeClient(options);
  try {
    client->Get("/api/v1/nodes/n1");
    FAIL() << "expected an error";
  } catch (const ApiError& error) {
    EXPECT_EQ(error.status(), 0);
    EXPECT_THAT(error.what(), HasSubstr(env_.server().url()));
  }
}

TEST_F(ApiClientTest, TokenFileIsReReadAfterUnauthorized) {
  auto token_file = std::filesystem::temp_directory_path() /
                    ("kube-token-" + std::to_string(::getpid()));
  std::ofstream(token_file) << "old-token\n";
  ClusterConfig config;
  config.token_file = token_file.string();
  auto client = env_.MakeClient(ApiTestEnv::FastOptions(), config);
  env_.server().PutObject("/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  env_.server().RequireToken("old-token");
  client->Get("/api/v1/nodes/n1");

  // kubelet rotates the token; the server stops accepting the old one.
  std::ofstream(token_file) << "new-token\n";
  env_.server().RequireToken("new-token");
  EXPECT_EQ(MetadataField(client->Get("/api/v1/nodes/n1"), "name"), "n1");
  EXPECT_EQ(client->Stats().token_reloads, 1u);
  std::filesystem::remove(token_file);

  // A static token that is refused is an error, not a loop.
  ClusterConfig fixed;
  fixed.token = "wrong";
  auto fixed_client = env_.MakeClient(ApiTestEnv::FastOptions(), fixed);
  try {
    fixed_client->Get("/api/v1/nodes/n1");
    FAIL() << "expected 401";
  } catch (const ApiError& error) {
    EXPECT_EQ(error.status(), 401);
  }
}

TEST_F(ApiClientTest, WatchStreamsEventsAndBookmarks) {
  auto client = env_.MakeClient();
  env_.server().SetBookmarkInterval(std::chrono::milliseconds(20));
  ListOptions options;
  options.field_selector = "spec.nodeName=node-1";
  auto list = client->List(kSlices, options);
  options.resource_version = MetadataField(list, "resourceVersion");
  options.timeout_seconds = 60;

  std::stop_source stop;
  std::mutex mu;
  std::vector<std::string> seen;
  std::thread watcher([&] {
    client->Watch(kSlices, options,
                  [&](WatchEvent& event) {
                    std::lock_guard lock(mu);
                    seen.push_back(event.type + ":" + MetadataField(event.object, "name"));
                  },
                  stop.get_token());
  });
  client->Create(kSlices, SliceBody("other", "node-2"));  // filtered out by the selector
  auto created = client->Create(kSlices, SliceBody("a", "node-1"));
  client->Update(std::string(kSlices) + "/a", SliceBody("a", "node-1", MetadataField(created, "resourceVersion")));
  client->Delete(std::string(kSlices) + "/a");
  auto has = [&](const std::string& entry) {
    std::lock_guard lock(mu);
    return std::find(seen.begin(), seen.end(), entry) != seen.end();
  };
  EXPECT_TRUE(testing::WaitUntil([&] { return has("DELETED:a") && has("BOOKMARK:"); }));
  stop.request_stop();
  watcher.join();
  std::lock_guard lock(mu);
  std::vector<std::string> events;
  for (const auto& entry : seen)
    if (entry != "BOOKMARK:") events.push_back(entry);
  EXPECT_THAT(events, ::testing::ElementsAre("ADDED:a", "MODIFIED:a", "DELETED:a"));
}

TEST_F(ApiClientTest, WatchFromACompactedVersionIsGone) {
  auto client = env_.MakeClient();
  client->Create(kSlices, SliceBody("a", "node-1"));
  env_.server().CompactHistory();
  ListOptions options;
  options.resource_version = "1";
  try {
    client->Watch(kSlices, options, [](WatchEvent&) {}, {});
    FAIL() << "expected 410";
  } catch (const ApiError& error) {
    EXPECT_TRUE(error.IsGone());
  }
  EXPECT_THROW(client->List(kSlices, options), ApiError);
}

TEST_F(ApiClientTest, ApplyUsesApplyPatchWithFieldManagerAndForce) {
  auto client = env_.MakeClient();
  env_.server().PutObject("/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims",
                          R"({"metadata":{"name":"c1"},"spec":{}})");
  client->Apply("/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/c1/status",
                R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c1","namespace":"ns1"},)"
                R"("status":{"devices":[{"driver":"dra.net","pool":"p","device":"d"}]}})",
                "dra.net", true);
  EXPECT_EQ(env_.server().CountRequests("PATCH", "/status?fieldManager=dra.net&force=true"), 1u);
}


// A server that answers every watch at once with 200 and no body, or with
// 410 Gone, used to be asked again in a tight loop (76k requests in 10 s).
// Every re-list/re-watch now goes through the backoff.
TEST_F(ApiClientTest, ListWatchBacksOffFromWatchesThatEndAtOnceOrAreGone) {
  for (const int status : {200, 410}) {
    SCOPED_TRACE("watch answered " + std::to_string(status));
    auto client = env_.MakeClient();
    env_.server().ClearRequests();
    env_.server().InjectFault({"GET", "watch=true", status, -1, {}, -1});
    ListWatchOptions options;
    options.min_backoff = std::chrono::milliseconds(100);
    options.max_backoff = std::chrono::milliseconds(400);
    ListWatchHandlers handlers{[](const rapidjson::Document&, bool) {}, [](WatchEvent&) {}, {}};
    std::stop_source stop;
    std::thread loop([&] { RunListWatch(*client, kSlices, options, handlers, env_.log(), stop.get_token()); });
    std::this_thread::sleep_for(std::chrono::seconds(2));
    stop.request_stop();
    loop.join();
    env_.server().ClearFaults();
    const auto watches = env_.server().CountRequests("GET", "watch=true");
    // With the backoff: 100, 200, 400, 400... ms, about 6 in 2 s.
    EXPECT_LE(watches, 20u);
    EXPECT_GE(watches, 2u);
  }
}


// A server on loopback that answers every request with `head` and then
// `body_bytes` bytes of 'x' (no newline), then closes.
class FloodServer {
 public:
  FloodServer(std::string head, std::size_t body_bytes) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &at.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&at), sizeof at);
    ::listen(fd_, 4);
    socklen_t len = sizeof at;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&at), &len);
    port_ = ntohs(at.sin_port);
    thread_ = std::thread([this, head = std::move(head), body_bytes] {
      for (;;) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        char request[4096];
        [[maybe_unused]] auto got = ::recv(c, request, sizeof request, 0);
        ::send(c, head.data(), head.size(), MSG_NOSIGNAL);
        const std::string block(1 << 20, 'x');
        for (std::size_t sent = 0; sent < body_bytes; sent += block.size())
          if (::send(c, block.data(), std::min(block.size(), body_bytes - sent), MSG_NOSIGNAL) <= 0) break;
        ::close(c);
      }
    });
  }
  ~FloodServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A body that claims 2 GiB is read up to the cap and refused: the client
// never buffers more than kMaxResponseBytes (it used to reach 2 GB RSS).
TEST_F(ApiClientTest, OversizedResponseIsRefusedAtTheCap) {
  FloodServer server("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n",
                     kMaxResponseBytes + (4 << 20));
  ClusterConfig config;
  config.server = server.url();
  auto client = env_.MakeClient(ApiTestEnv::FastOptions(), config);
  try {
    client->Get(std::string(kSlices) + "/a");
    FAIL() << "an oversized body was accepted";
  } catch (const ApiError& error) {
    EXPECT_THAT(error.what(), HasSubstr("response larger than 64 MiB"));
  }
}

// A watch stream that never ends a line is cut at kMaxWatchLineBytes.
TEST_F(ApiClientTest, WatchLineWithoutAnEndIsCutAtTheCap) {
  FloodServer server("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n", kMaxWatchLineBytes + (4 << 20));
  ClusterConfig config;
  config.server = server.url();
  auto client = env_.MakeClient(ApiTestEnv::FastOptions(), config);
  try {
    client->Watch(kSlices, {}, [](WatchEvent&) {}, {});
    FAIL() << "an endless line was accepted";
  } catch (const ApiError& error) {
    EXPECT_THAT(error.what(), HasSubstr("event line is longer than 16 MiB"));
  }
}

// GET /version as API servers answer it; distributions suffix the minor ("36+").
TEST(ServerVersion, ReadsMajorAndMinorWithTheirSuffixes) {
  auto parse = [](const char* json) {
    rapidjson::Document doc;
    doc.Parse(json);
    return ParseServerVersion(doc);
  };
  auto plain = parse(R"({"major":"1","minor":"37","gitVersion":"v1.37.2"})");
  EXPECT_EQ(plain.major, 1);
  EXPECT_EQ(plain.minor, 37);
  EXPECT_EQ(plain.git_version, "v1.37.2");
  auto suffixed = parse(R"({"major":"1","minor":"35+","gitVersion":"v1.35.4-gke.1"})");
  EXPECT_EQ(suffixed.minor, 35);
  auto bare = parse(R"({"major":"1","minor":"36"})");
  EXPECT_EQ(bare.git_version, "1.36");
  auto empty = parse("[]");
  EXPECT_EQ(empty.major, 0);
  EXPECT_EQ(empty.minor, 0);
}

}  // namespace
}  // namespace dranet::kube
