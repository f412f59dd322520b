#include "kube/resource_claim.h"

#include <atomic>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/claim_status.h"
#include "kube/event_recorder.h"
#include "kube/json_fields.h"
#include "kube_test_env.h"
#include "openapi_schema.h"

namespace dranet::kube {
namespace {

using ::testing::HasSubstr;
using testing::ApiTestEnv;

constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";

constexpr const char* kAllocatedClaim = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"name": "train-0-nics", "namespace": "ml", "generation": 1},
  "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "dranet.net"}}]}},
  "status": {
    "allocation": {"devices": {
      "results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-0"},
        {"request": "nic", "driver": "dra.net", "pool": "node-1", "device": "pci-0103-00-00-0"},
        {"request": "nic", "driver": "dra.net", "pool": "node-1", "device": "pci-0104-00-00-0",
         "adminAccess": true}],
      "config": [
        {"source": "FromClass", "requests": [], "opaque": {"driver": "dra.net",
         "parameters": {"interface": {"mtu": 9000}}}},
        {"source": "FromClaim", "requests": ["nic"], "opaque": {"driver": "dra.net",
         "parameters": {"rdma": {"mode": "exclusive"}}}}]}},
    "reservedFor": [{"resource": "pods", "name": "train-0", "uid": "pod-uid-1"}],
    "devices": [{"driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-0"}]
  }})";

class ResourceClaimTest : public ::testing::Test {
 protected:
  std::string StoreClaim() {
    rapidjson::Document stored;
    stored.Parse(env_.server().PutObject(kClaims, kAllocatedClaim).c_str());
    return MetadataField(stored, "uid");
  }
  ApiTestEnv env_;
};

TEST_F(ResourceClaimTest, ParsesAllocationConfigAndConsumers) {
  rapidjson::Document json;
  json.Parse(kAllocatedClaim);
  ResourceClaim claim = ParseResourceClaim(json);
  EXPECT_EQ(claim.namespace_name, "ml");
  EXPECT_EQ(claim.name, "train-0-nics");
  EXPECT_EQ(claim.generation, 1);
  EXPECT_TRUE(claim.allocated);
  ASSERT_EQ(claim.results.size(), 3u);
  auto mine = claim.ResultsFor("dra.net", "node-1");
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].device, "pci-0103-00-00-0");
  EXPECT_TRUE(mine[1].admin_access);
  ASSERT_EQ(claim.configs.size(), 2u);
  EXPECT_EQ(claim.configs[0].source, "FromClass");
  EXPECT_EQ(claim.configs[0].parameters_json, R"({"interface":{"mtu":9000}})");
  EXPECT_EQ(claim.configs[1].requests, std::vector<std::string>{"nic"});
  ASSERT_EQ(claim.reserved_for.size(), 1u);
  EXPECT_EQ(claim.reserved_for[0].uid, "pod-uid-1");
}

TEST_F(ResourceClaimTest, UnallocatedClaimAndMissingFieldsParseAsEmpty) {
  rapidjson::Document json;
  json.Parse(R"({"metadata":{"name":"c","namespace":"ml"},"status":{"allocation":"weird"}})");
  ResourceClaim claim = ParseResourceClaim(json);
  EXPECT_FALSE(claim.allocated);
  EXPECT_TRUE(claim.results.empty());
  json.Parse(R"({"metadata":{}})");
  EXPECT_THROW(ParseResourceClaim(json), std::invalid_argument);
}

TEST_F(ResourceClaimTest, ReaderGetsByNameAndChecksTheUid) {
  std::string uid = StoreClaim();
  auto client = env_.MakeClient();
  ResourceClaimReader reader(*client, env_.log());
  EXPECT_EQ(reader.Get("ml", "train-0-nics", uid).uid, uid);
  EXPECT_EQ(reader.api_reads(), 1u);
  try {
    reader.Get("ml", "train-0-nics", "stale-uid");
    FAIL() << "expected a UID mismatch";
  } catch (const ClaimError& error) {
    EXPECT_THAT(error.what(), HasSubstr("ml/train-0-nics"));
    EXPECT_THAT(error.what(), HasSubstr("stale-uid"));
    EXPECT_THAT(error.what(), HasSubstr(uid));
  }
  EXPECT_THROW(reader.Get("ml", "absent", "u"), ClaimError);
}

// A claim larger than any object the API server stores is refused while it
// downloads, before parsing (a 50 MB string used to cost 213 MB of memory);
// a large but possible one is read.
TEST_F(ResourceClaimTest, ClaimLargerThanTheApiServerCouldStoreIsRefusedUnparsed) {
  auto with_annotation = [](const std::string& name, std::size_t bytes) {
    std::string claim = kAllocatedClaim;
    const std::string from = R"("metadata": {"name": "train-0-nics",)";
    claim.replace(claim.find(from), from.size(),
                  R"("metadata": {"name": ")" + name + R"(", "annotations": {"filler": ")" +
                      std::string(bytes, 'x') + R"("},)");
    return claim;
  };
  rapidjson::Document big, huge;
  big.Parse(env_.server().PutObject(kClaims, with_annotation("big", 3u << 20)).c_str());
  huge.Parse(env_.server().PutObject(kClaims, with_annotation("huge", kMaxObjectBytes + 1)).c_str());
  auto client = env_.MakeClient();
  ResourceClaimReader reader(*client, env_.log());
  EXPECT_EQ(reader.Get("ml", "big", MetadataField(big, "uid")).name, "big");
  try {
    reader.Get("ml", "huge", MetadataField(huge, "uid"));
    FAIL() << "a claim over " << kMaxObjectBytes << " bytes was read";
  } catch (const ApiError& error) {
    EXPECT_THAT(error.what(), HasSubstr("response larger than 4 MiB"));
  }
}

// A claim name from the kubelet socket is never a path: "../" cannot steer
// the GET (or an Event) to another resource; nothing reaches the server.
TEST_F(ResourceClaimTest, NamesThatAreNotKubernetesNamesMakeNoRequest) {
  auto client = env_.MakeClient();
  ResourceClaimReader reader(*client, env_.log());
  env_.server().ClearRequests();
  for (const auto& [ns, name] : std::vector<std::pair<std::string, std::string>>{
           {"ml", "../../../../../api/v1/nodes/x"}, {"kube-system/secrets", "x"}, {"ml", "a b"}, {"ML", "x"}}) {
    EXPECT_ANY_THROW(reader.Get(ns, name, "uid")) << ns << "/" << name;
  }
  EventRecorder events(*client, "dranet", "node-1", env_.log());
  EXPECT_FALSE(events.Record({"v1", "Pod", "kube-system/secrets", "x", "uid"}, EventType::kWarning, "R", "m"));
  EXPECT_EQ(env_.server().Requests().size(), 0u);
  EXPECT_EQ(NamespacedPath("/api/v1", "ml", "events"), "/api/v1/namespaces/ml/events");
  EXPECT_EQ(NamespacedPath("/apis/resource.k8s.io/v1", "ml", "resourceclaims", "train-0.nics"),
            "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/train-0.nics");
}

TEST_F(ResourceClaimTest, WatchedCacheServesReadsWithoutTheApiServer) {
  std::string uid = StoreClaim();
  auto client = env_.MakeClient();
  ResourceClaimReader reader(*client, env_.log(), {true, "", 60});
  ASSERT_TRUE(testing::WaitUntil([&] { return reader.synced(); }));
  std::size_t gets_before = env_.server().CountRequests("GET", "/resourceclaims/train-0-nics");
  EXPECT_EQ(reader.Get("ml", "train-0-nics", uid).ResultsFor("dra.net").size(), 2u);
  EXPECT_EQ(reader.cache_hits(), 1u);
  EXPECT_EQ(env_.server().CountRequests("GET", "/resourceclaims/train-0-nics"), gets_before);

  // A claim created after the list arrives through the watch.
  std::string second = kAllocatedClaim;
  second.replace(second.find("train-0-nics"), 12, "train-1-nics");
  env_.server().PutObject(kClaims, second);
  EXPECT_TRUE(testing::WaitUntil([&] { return reader.cached() == 2; }));
  // And a deleted one leaves the cache.
  env_.server().DeleteObject(kClaims, "train-1-nics");
  EXPECT_TRUE(testing::WaitUntil([&] { return reader.cached() == 1; }));
}

TEST_F(ResourceClaimTest, StatusIsAppliedAndOtherDriversEntriesSurvive) {
  StoreClaim();
  auto client = env_.MakeClient();
  ClaimStatusWriter writer(*client, "dra.net", env_.log());
  AllocatedDeviceStatus status{"dra.net", "node-1", "pci-0103-00-00-0", "",
                               {{"Ready", "True", "NetworkDeviceReady", "", "", 1}},
                               NetworkDeviceData{"eth1", {"10.0.0.5/24"}, "aa:bb:cc:dd:ee:ff"}};
  writer.Apply("ml", "train-0-nics", {status});
  rapidjson::Document stored;
  stored.Parse(env_.server().GetObject(kClaims, "train-0-nics")->c_str());
  const auto& devices = stored["status"]["devices"];
  ASSERT_EQ(devices.Size(), 2u);
  EXPECT_STREQ(devices[0]["driver"].GetString(), "gpu.nvidia.com");
  EXPECT_STREQ(devices[1]["networkData"]["interfaceName"].GetString(), "eth1");
  EXPECT_STREQ(devices[1]["conditions"][0]["reason"].GetString(), "NetworkDeviceReady");

  // Applying again replaces our entry rather than adding one.
  status.conditions[0].status = "False";
  writer.Apply("ml", "train-0-nics", {status});
  stored.Parse(env_.server().GetObject(kClaims, "train-0-nics")->c_str());
  EXPECT_EQ(stored["status"]["devices"].Size(), 2u);
  EXPECT_STREQ(stored["status"]["devices"][1]["conditions"][0]["status"].GetString(), "False");
}

// A 1.32/1.33 control plane serves only the betas: the claim is read, and its status applied,
// in the version spoken (the fake refuses an apply whose apiVersion is not the URL's), and the
// fields read are the same JSON as in v1.
TEST_F(ResourceClaimTest, ClaimsAreReadAndStatusAppliedInTheVersionSpoken) {
  for (const char* version : {"v1beta2", "v1beta1"}) {
    SCOPED_TRACE(version);
    ApiTestEnv env;
    env.server().ServeResourceVersions({version});
    const std::string claims = std::string("/apis/resource.k8s.io/") + version + "/namespaces/ml/resourceclaims";
    auto replace = [](std::string text, const std::string& from, const std::string& to) {
      return text.replace(text.find(from), from.size(), to);
    };
    std::string claim = replace(kAllocatedClaim, "resource.k8s.io/v1", std::string("resource.k8s.io/") + version);
    if (std::string(version) == "v1beta1")  // v1beta1 requests are flat, without `exactly`
      claim = replace(claim, R"("exactly": {"deviceClassName": "dranet.net"})", R"("deviceClassName": "dranet.net")");
    rapidjson::Document stored;
    stored.Parse(env.server().PutObject(claims, claim).c_str());
    const std::string uid = MetadataField(stored, "uid");

    auto client = env.MakeClient();
    ResourceApi api(*client, env.log());
    ResourceClaimReaderOptions options;
    options.resource_api = &api;
    options.watch = true;
    ResourceClaimReader reader(*client, env.log(), options);
    EXPECT_TRUE(testing::WaitUntil([&] { return reader.synced(); }));
    auto read = reader.Get("ml", "train-0-nics", uid);
    EXPECT_EQ(read.ResultsFor("dra.net").size(), 2u);
    EXPECT_EQ(read.configs.size(), 2u);
    EXPECT_EQ(read.reserved_for.at(0).uid, "pod-uid-1");

    ClaimStatusWriter writer(*client, "dra.net", env.log(), &api);
    AllocatedDeviceStatus status{"dra.net", "node-1", "pci-0103-00-00-0", "",
                                 {{"Ready", "True", "NetworkDeviceReady", "", "", 1}},
                                 NetworkDeviceData{"eth1", {"10.0.0.5/24"}, "aa:bb:cc:dd:ee:ff"}};
    ASSERT_NO_THROW(writer.Apply("ml", "train-0-nics", {status}));
    stored.Parse(env.server().GetObject(claims, "train-0-nics")->c_str());
    ASSERT_EQ(stored["status"]["devices"].Size(), 2u);
    EXPECT_STREQ(stored["status"]["devices"][1]["networkData"]["hardwareAddress"].GetString(), "aa:bb:cc:dd:ee:ff");
    EXPECT_EQ(env.server().CountRequests("", "/apis/resource.k8s.io/v1/"), 0u) << "nothing asked of v1";
  }
  // The fake holds us to it: a v1 body on a v1beta1 URL is refused, as the API server does.
  ApiTestEnv env;
  env.server().ServeResourceVersions({"v1beta1"});
  env.server().PutObject("/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaims",
                         R"({"metadata":{"name":"c","namespace":"ml"}})");
  auto client = env.MakeClient();
  try {
    client->Apply("/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaims/c/status",
                  ClaimStatusApplyJson("ml", "c", {}, "2025-01-01T00:00:00Z", env.log(), ResourceApiVersion::kV1),
                  "dra.net", true);
    FAIL() << "a v1 apply body on a v1beta1 URL must be refused";
  } catch (const ApiError& error) {
    EXPECT_EQ(error.status(), 400);
    EXPECT_THAT(error.what(), HasSubstr("Incorrect version specified in apply patch"));
  }
}

// GET /apis/resource.k8s.io requests so far (claim paths start with it too).
std::size_t Discoveries(ApiTestEnv& env) {
  std::size_t count = 0;
  for (const auto& request : env.server().Requests())
    if (request.method == "GET" && request.target == "/apis/resource.k8s.io") ++count;
  return count;
}

ResourceApiOptions ManualClockOptions(testing::ManualClock& clock) {
  ResourceApiOptions options;
  options.now = [&clock] { return clock.Now(); };
  return options;
}

// The control plane stops serving the version the reader speaks: a claim read gets 404,
// asks once which version is served (the last discovery being older than the interval) and
// reads the claim there; a claim that is really gone is still reported as gone.
TEST_F(ResourceClaimTest, AClaimReadFollowsAVersionThatWentAway) {
  ApiTestEnv env;
  env.server().ServeResourceVersions({"v1beta2", "v1beta1"});
  auto client = env.MakeClient();
  testing::ManualClock clock;
  ResourceApi api(*client, env.log(), ManualClockOptions(clock));
  ASSERT_EQ(api.Version(), ResourceApiVersion::kV1beta2);
  ResourceClaimReaderOptions options;
  options.resource_api = &api;
  ResourceClaimReader reader(*client, env.log(), options);
  env.server().ServeResourceVersions({"v1beta1"});
  rapidjson::Document stored;
  stored.Parse(env.server()
                   .PutObject("/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaims",
                              R"({"metadata":{"name":"c","namespace":"ml"},"status":{"allocation":{"devices":{}}}})")
                   .c_str());
  const std::string uid = MetadataField(stored, "uid");
  clock.Advance(kMinObjectRediscoveryInterval);
  EXPECT_EQ(reader.Get("ml", "c", uid).uid, uid);
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1beta1);
  EXPECT_THROW(reader.Get("ml", "gone", "u-0"), ClaimError);
  ResourceApi pinned(ResourceApiVersion::kV1beta2);
  options.resource_api = &pinned;
  ResourceClaimReader pinned_reader(*client, env.log(), options);
  EXPECT_THROW(pinned_reader.Get("ml", "c", uid), ClaimError) << "a pinned version is never left";
}

// Claims that are gone are routine (deleted before their pod started); each one must not cost
// a discovery request. 1000 unknown claims, read concurrently, share the discovery of the
// first use; after the interval, another 1000 cost one more.
TEST_F(ResourceClaimTest, UnknownClaimsCostAtMostOneDiscoveryPerInterval) {
  auto client = env_.MakeClient();
  testing::ManualClock clock;
  ResourceApi api(*client, env_.log(), ManualClockOptions(clock));
  ResourceClaimReaderOptions options;
  options.resource_api = &api;
  ResourceClaimReader reader(*client, env_.log(), options);
  auto read_unknown = [&](const std::string& prefix) {
    std::atomic<int> gone{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 8; ++t)
      readers.emplace_back([&, t] {
        for (int i = 0; i < 125; ++i) {
          try {
            reader.Get("ml", prefix + std::to_string(t) + "-" + std::to_string(i), "u");
          } catch (const ClaimError&) {
            ++gone;
          }
        }
      });
    for (auto& thread : readers) thread.join();
    return gone.load();
  };
  EXPECT_EQ(read_unknown("a-"), 1000);
  EXPECT_EQ(Discoveries(env_), 1u) << "the first use only";
  EXPECT_EQ(env_.server().CountRequests("GET", "/resourceclaims/a-"), 1000u) << "one GET per claim";
  clock.Advance(kMinObjectRediscoveryInterval);
  EXPECT_EQ(read_unknown("b-"), 1000);
  EXPECT_EQ(Discoveries(env_), 2u) << "one more once the interval has passed";
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1);
}

// The fake answers an unserved version with a NotFound Status, as it answers a missing claim:
// within the interval the switch looks like a missing claim; after it, the claim is read in
// the version served now.
// The version in use stops being served (an API server rolled back): its
// path answers the server's plain "404 page not found", not a NotFound
// Status, and that is followed at once, within the interval that holds
// back rediscovery for missing claims.
TEST_F(ResourceClaimTest, AVersionThatStopsBeingServedIsFollowedAtOnce) {
  auto client = env_.MakeClient();
  testing::ManualClock clock;
  ResourceApi api(*client, env_.log(), ManualClockOptions(clock));
  ASSERT_EQ(api.Version(), ResourceApiVersion::kV1);
  ResourceClaimReaderOptions options;
  options.resource_api = &api;
  ResourceClaimReader reader(*client, env_.log(), options);
  EXPECT_THROW(reader.Get("ml", "missing", "u-1"), ClaimError);
  EXPECT_EQ(Discoveries(env_), 1u) << "a missing claim within the interval asks nothing";
  env_.server().ServeResourceVersions({"v1beta2"});
  rapidjson::Document stored;
  stored.Parse(env_.server()
                   .PutObject("/apis/resource.k8s.io/v1beta2/namespaces/ml/resourceclaims",
                              R"({"metadata":{"name":"c","namespace":"ml"},"status":{"allocation":{"devices":{}}}})")
                   .c_str());
  const std::string uid = MetadataField(stored, "uid");
  EXPECT_EQ(reader.Get("ml", "c", uid).uid, uid);
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1beta2);
  EXPECT_EQ(Discoveries(env_), 2u);
  EXPECT_EQ(reader.Get("ml", "c", uid).uid, uid);
  EXPECT_EQ(Discoveries(env_), 2u) << "found in v1beta2: nothing more to ask";
}

TEST_F(ResourceClaimTest, StatusBodyMatchesTheOpenApiSchema) {
  testing::OpenApiSchema schema(DRANET_OPENAPI_PATH);
  ASSERT_TRUE(schema.loaded());
  AllocatedDeviceStatus status{"dra.net", "node-1", "pci-0103-00-00-0", "",
                               {{"Ready", "True", "RDMAOnlyDeviceReady", "", "", 2},
                                {"NetworkReady", "False", "NoNetdev", "IB-only", "2025-01-01T00:00:00Z", 0}},
                               NetworkDeviceData{"ib0", {}, ""}};
  rapidjson::Document json;
  json.Parse(ClaimStatusApplyJson("ml", "c", {status}, "2025-02-02T00:00:00Z", env_.log()).c_str());
  // An apply body is a partial object (no spec), so the entries are checked, not the claim.
  for (const auto& entry : json["status"]["devices"].GetArray())
    EXPECT_THAT(schema.Validate(entry, "io.k8s.api.resource.v1.AllocatedDeviceStatus"), ::testing::IsEmpty());
  EXPECT_STREQ(json["status"]["devices"][0]["conditions"][0]["lastTransitionTime"].GetString(),
               "2025-02-02T00:00:00Z");
  EXPECT_FALSE(json["status"]["devices"][0]["conditions"][1].HasMember("observedGeneration"));
}

TEST_F(ResourceClaimTest, EventsAreCreatedOnTheInvolvedObjectAndFailuresAreSwallowed) {
  auto client = env_.MakeClient();
  EventRecorder recorder(*client, "dra.net", "node-1", env_.log());
  InvolvedObject claim{"resource.k8s.io/v1", "ResourceClaim", "ml", "train-0-nics", "u1"};
  EXPECT_TRUE(recorder.Record(claim, EventType::kWarning, "PrepareFailed", "device pci-0103-00-00-0 is gone"));
  auto events = env_.server().ListObjects("/api/v1/namespaces/ml/events");
  ASSERT_EQ(events.size(), 1u);
  rapidjson::Document event;
  event.Parse(events[0].c_str());
  EXPECT_STREQ(event["type"].GetString(), "Warning");
  EXPECT_STREQ(event["reason"].GetString(), "PrepareFailed");
  EXPECT_STREQ(event["involvedObject"]["name"].GetString(), "train-0-nics");
  EXPECT_STREQ(event["source"]["host"].GetString(), "node-1");

  env_.server().InjectFault({"POST", "/events", 403, -1, {}, 1});
  EXPECT_FALSE(recorder.Record(claim, EventType::kNormal, "Prepared", "ok"));
}

}  // namespace
}  // namespace dranet::kube
