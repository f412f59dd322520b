// Which resource.k8s.io version is spoken: the choice from APIGroup discovery
// documents as the Kubernetes releases serve them, and ResourceApi against
// the fake API server over loopback HTTP (one discovery, shared; clear errors
// where DRA is not served; a new discovery after a version went away, and at most one per
// interval after objects that are merely missing).
#include "kube/resource_api.h"

#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube_test_env.h"

namespace dranet::kube {
namespace {

using ::testing::HasSubstr;
using testing::ApiTestEnv;

rapidjson::Document Group(const std::vector<std::string>& versions) {
  std::string json = R"({"kind":"APIGroup","apiVersion":"v1","name":"resource.k8s.io","versions":[)";
  for (std::size_t i = 0; i < versions.size(); ++i)
    json += std::string(i ? "," : "") + R"({"groupVersion":"resource.k8s.io/)" + versions[i] + R"(","version":")" +
            versions[i] + R"("})";
  json += "]}";
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

constexpr const char* kGroupPath = "/apis/resource.k8s.io";

TEST(ResourceApiVersionTest, NamesAndPaths) {
  EXPECT_EQ(VersionName(ResourceApiVersion::kV1beta2), "v1beta2");
  EXPECT_EQ(GroupVersion(ResourceApiVersion::kV1beta1), "resource.k8s.io/v1beta1");
  EXPECT_EQ(GroupVersionPath(ResourceApiVersion::kV1), "/apis/resource.k8s.io/v1");
  EXPECT_EQ(ParseResourceApiVersion("v1beta2"), ResourceApiVersion::kV1beta2);
  EXPECT_EQ(ParseResourceApiVersion("resource.k8s.io/v1beta1"), ResourceApiVersion::kV1beta1);
  for (const char* other : {"", "auto", "v1alpha3", "resource.k8s.io/", "v1beta", "apps/v1", "resource.k8s.iov1"})
    EXPECT_EQ(ParseResourceApiVersion(other), std::nullopt) << other;
  EXPECT_TRUE(WrapsDevicesInBasic(ResourceApiVersion::kV1beta1));
  EXPECT_FALSE(WrapsDevicesInBasic(ResourceApiVersion::kV1beta2));
  EXPECT_FALSE(WrapsDevicesInBasic(ResourceApiVersion::kV1));
  EXPECT_TRUE(HasListAttributes(ResourceApiVersion::kV1));
  EXPECT_FALSE(HasListAttributes(ResourceApiVersion::kV1beta2));
}

// What each release's control plane may serve (PROTOCOLS.md §4: v1alpha3 up to 1.31, v1beta1
// from 1.32, v1beta2 from 1.33, v1 from 1.34), in the order the discovery document lists them.
TEST(ResourceApiVersionTest, TheNewestVersionWeSpeakIsChosen) {
  EXPECT_EQ(NewestSpokenVersion(Group({"v1beta1", "v1alpha3"})), ResourceApiVersion::kV1beta1);  // 1.32
  EXPECT_EQ(NewestSpokenVersion(Group({"v1beta1"})), ResourceApiVersion::kV1beta1);  // 1.33, GKE's guide
  EXPECT_EQ(NewestSpokenVersion(Group({"v1beta2", "v1beta1", "v1alpha3"})), ResourceApiVersion::kV1beta2);
  EXPECT_EQ(NewestSpokenVersion(Group({"v1", "v1beta2", "v1beta1"})), ResourceApiVersion::kV1);  // 1.34+
  // The order of the document does not matter; the version does.
  EXPECT_EQ(NewestSpokenVersion(Group({"v1beta1", "v1"})), ResourceApiVersion::kV1);
  EXPECT_EQ(NewestSpokenVersion(Group({"v1alpha3"})), std::nullopt);  // 1.31
  EXPECT_EQ(NewestSpokenVersion(Group({})), std::nullopt);
  rapidjson::Document odd;
  odd.Parse(R"({"versions":[7,{"version":3},{"groupVersion":"resource.k8s.io/v1"}]})");
  EXPECT_EQ(NewestSpokenVersion(odd), std::nullopt);
  EXPECT_THAT(ServedVersions(Group({"v1beta2", "v1alpha3"})), ::testing::ElementsAre("v1beta2", "v1alpha3"));
}

class ResourceApiTest : public ::testing::Test {
 protected:
  ApiTestEnv env_;
};

TEST_F(ResourceApiTest, DiscoversOnceAndKeepsTheAnswer) {
  env_.server().ServeResourceVersions({"v1beta2", "v1beta1"});
  auto client = env_.MakeClient();
  ResourceApi api(*client, env_.log());
  EXPECT_EQ(api.Known(), std::nullopt);
  std::vector<std::thread> users;
  std::vector<ResourceApiVersion> seen(8);
  for (std::size_t i = 0; i < seen.size(); ++i) users.emplace_back([&, i] { seen[i] = api.Version(); });
  for (auto& user : users) user.join();
  for (auto version : seen) EXPECT_EQ(version, ResourceApiVersion::kV1beta2);
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta2);
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1beta2);
  EXPECT_EQ(env_.server().CountRequests("GET", kGroupPath), 1u) << "one discovery for all callers";
}

TEST_F(ResourceApiTest, PinnedNeverAsks) {
  ResourceApi api(ResourceApiVersion::kV1beta1);
  EXPECT_TRUE(api.pinned());
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1beta1);
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta1);
  api.Rediscover(ResourceApiVersion::kV1beta1);
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta1);
  EXPECT_EQ(env_.server().Requests().size(), 0u);
  EXPECT_EQ(ResourceApi::Of(nullptr), ResourceApiVersion::kV1);
}

TEST_F(ResourceApiTest, AClusterWithoutDraSaysSo) {
  env_.server().ServeResourceVersions({});
  auto client = env_.MakeClient();
  ResourceApi api(*client, env_.log());
  try {
    api.Version();
    FAIL() << "no version is served";
  } catch (const ApiError& error) {
    EXPECT_TRUE(error.IsNotFound());
    EXPECT_THAT(error.what(), HasSubstr("Dynamic Resource Allocation is not enabled"));
  }
  EXPECT_EQ(api.Known(), std::nullopt);
}

TEST_F(ResourceApiTest, OnlyVersionsWeDoNotSpeakAreNamed) {
  env_.server().ServeResourceVersions({"v1alpha3"});
  auto client = env_.MakeClient();
  ResourceApi api(*client, env_.log());
  try {
    api.Version();
    FAIL() << "v1alpha3 is not spoken";
  } catch (const ApiError& error) {
    EXPECT_THAT(error.what(), HasSubstr("serves resource.k8s.io v1alpha3, none of which"));
  }
  // Asked again on the next use: the control plane may be upgraded meanwhile.
  env_.server().ServeResourceVersions({"v1beta1", "v1alpha3"});
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta1);
}

TEST_F(ResourceApiTest, ADroppedVersionIsDiscoveredAgain) {
  env_.server().ServeResourceVersions({"v1beta2", "v1beta1"});
  auto client = env_.MakeClient();
  ResourceApi api(*client, env_.log());
  ASSERT_EQ(api.Version(), ResourceApiVersion::kV1beta2);
  env_.server().ServeResourceVersions({"v1beta1"});
  api.Rediscover(ResourceApiVersion::kV1);  // not the one in use: nothing happens
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta2);
  EXPECT_EQ(env_.server().CountRequests("GET", kGroupPath), 1u);
  api.Rediscover(ResourceApiVersion::kV1beta2);
  EXPECT_EQ(api.Known(), std::nullopt);
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta1);
  EXPECT_EQ(env_.server().CountRequests("GET", kGroupPath), 2u);
}

// What the client makes of a claim GET's 404: the API server's NotFound Status for a missing
// object, and the plain "404 page not found" of a path it does not route (an unserved version).
ApiError MissingObject() {
  return ApiError(404, "NotFound", "GET /apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/c: 404 Not Found");
}
ApiError UnroutedPath() {
  return ApiError(404, "", "GET /apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/c: 404 Not Found");
}

class ResourceApiIntervalTest : public ResourceApiTest {
 protected:
  ResourceApiOptions Options() {
    ResourceApiOptions options;
    options.now = [this] { return clock_.Now(); };
    return options;
  }
  std::size_t Discoveries() { return env_.server().CountRequests("GET", kGroupPath); }

  testing::ManualClock clock_;
};

TEST_F(ResourceApiIntervalTest, AMissingObjectAsksAgainAtMostOncePerInterval) {
  auto client = env_.MakeClient();
  ResourceApi api(*client, env_.log(), Options());
  ASSERT_EQ(api.Version(), ResourceApiVersion::kV1);
  for (int i = 0; i < 100; ++i) api.RediscoverAfterObjectNotFound(ResourceApiVersion::kV1, MissingObject());
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1) << "within the interval the claim is taken to be gone";
  clock_.Advance(kMinObjectRediscoveryInterval - std::chrono::seconds(1));
  api.RediscoverAfterObjectNotFound(ResourceApiVersion::kV1, MissingObject());
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1);
  EXPECT_EQ(Discoveries(), 1u);
  clock_.Advance(std::chrono::seconds(1));
  api.RediscoverAfterObjectNotFound(ResourceApiVersion::kV1, MissingObject());
  EXPECT_EQ(api.Known(), std::nullopt) << "the interval has passed: ask again";
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1);
  EXPECT_EQ(Discoveries(), 2u);
  api.RediscoverAfterObjectNotFound(ResourceApiVersion::kV1, MissingObject());
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1) << "the interval counts from the last discovery";
  // The default is the documented one.
  EXPECT_EQ(ResourceApiOptions{}.min_object_rediscovery_interval, std::chrono::seconds(30));
}

TEST_F(ResourceApiIntervalTest, AnUnroutedPathOrACollectionAsksAgainAtOnce) {
  auto client = env_.MakeClient();
  ResourceApi api(*client, env_.log(), Options());
  ASSERT_EQ(api.Version(), ResourceApiVersion::kV1);
  api.RediscoverAfterObjectNotFound(ResourceApiVersion::kV1, UnroutedPath());
  EXPECT_EQ(api.Known(), std::nullopt) << "a 404 without a NotFound Status: the version may be gone";
  env_.server().ServeResourceVersions({"v1beta2"});
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta2);
  api.Rediscover(ResourceApiVersion::kV1beta2);
  EXPECT_EQ(api.Known(), std::nullopt) << "a collection 404 is never rate-limited";
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1beta2);
  EXPECT_EQ(Discoveries(), 3u);
  api.RediscoverAfterObjectNotFound(ResourceApiVersion::kV1, UnroutedPath());
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1beta2) << "not the version in use: nothing happens";
}

TEST_F(ResourceApiIntervalTest, ConcurrentMissingObjectsShareOneDiscovery) {
  auto client = env_.MakeClient();
  ResourceApi api(*client, env_.log(), Options());
  ASSERT_EQ(api.Version(), ResourceApiVersion::kV1);
  clock_.Advance(kMinObjectRediscoveryInterval);
  std::vector<std::thread> users;
  for (int i = 0; i < 16; ++i)
    users.emplace_back([&] {
      for (int j = 0; j < 20; ++j) {
        api.RediscoverAfterObjectNotFound(ResourceApiVersion::kV1, MissingObject());
        EXPECT_EQ(api.Version(), ResourceApiVersion::kV1);
      }
    });
  for (auto& user : users) user.join();
  EXPECT_EQ(Discoveries(), 2u) << "320 missing objects after the interval: one discovery";
}

TEST_F(ResourceApiTest, AnUnreachableServerIsAnErrorNotAGuess) {
  env_.server().SetDown(true);
  auto options = ApiTestEnv::FastOptions();
  options.max_attempts = 2;
  auto client = env_.MakeClient(options);
  ResourceApi api(*client, env_.log());
  EXPECT_THROW(api.Version(), ApiError);
  EXPECT_EQ(api.Known(), std::nullopt);
  env_.server().SetDown(false);
  EXPECT_EQ(api.Version(), ResourceApiVersion::kV1);
}

}  // namespace
}  // namespace dranet::kube
