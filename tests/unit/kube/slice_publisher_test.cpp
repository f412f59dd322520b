#include "kube/slice_publisher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/json_fields.h"
#include "kube_test_env.h"
#include "openapi_schema.h"

namespace dranet::kube {
namespace {

using testing::ApiTestEnv;
using testing::WaitUntil;

constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";
constexpr auto kSyncDeadline = std::chrono::seconds(30);

std::vector<inventory::Device> Devices(int count, int64_t numa = 0) {
  std::vector<inventory::Device> devices;
  for (int i = 0; i < count; ++i) {
    inventory::Device device;
    char name[32];
    std::snprintf(name, sizeof name, "pci-0000-%02x-%02x-0", i / 256, i % 256);
    device.name = name;
    device.attributes["dra.net/numaNode"] = numa;
    device.attributes["dra.net/rdma"] = true;
    device.attributes["dra.net/ifName"] = std::string("eth") + std::to_string(i);
    devices.push_back(std::move(device));
  }
  return devices;
}

class SlicePublisherTest : public ::testing::Test {
 protected:
  SlicePublisherTest() {
    // Every slice the publisher writes must match the OpenAPI document.
    env_.server().SetValidator("resourceslices", [this](const std::string& body) {
      rapidjson::Document json;
      json.Parse(body.c_str());
      std::string problems;
      for (const auto& problem : schema_.Validate(json, "io.k8s.api.resource.v1.ResourceSlice"))
        problems += problem + "; ";
      return problems;
    });
    env_.server().PutObject("/api/v1/nodes", R"({"metadata":{"name":"node-1"}})");
    client_ = env_.MakeClient();
  }

  // Without the document every write would be rejected and each test would wait out
  // kSyncDeadline; fail at once instead, naming the path.
  void SetUp() override { ASSERT_TRUE(schema_.loaded()) << "cannot read " << DRANET_OPENAPI_PATH; }

  SlicePublisherOptions Options() {
    SlicePublisherOptions options;
    options.node_name = "node-1";
    options.coalesce_window = std::chrono::milliseconds(0);
    options.min_backoff = std::chrono::milliseconds(5);
    options.max_backoff = std::chrono::milliseconds(50);
    return options;
  }

  std::size_t Writes() {
    return env_.server().CountRequests("POST", kSlices) + env_.server().CountRequests("PUT", kSlices) +
           env_.server().CountRequests("DELETE", kSlices);
  }

  std::vector<rapidjson::Document> StoredSlices() {
    std::vector<rapidjson::Document> out;
    for (const auto& json : env_.server().ListObjects(kSlices)) {
      out.emplace_back();
      out.back().Parse(json.c_str());
    }
    return out;
  }

  testing::OpenApiSchema schema_{DRANET_OPENAPI_PATH};
  ApiTestEnv env_;
  std::unique_ptr<ApiClient> client_;
};

TEST_F(SlicePublisherTest, WritesOnceThenNothingForAnIdenticalInventory) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  EXPECT_EQ(Writes(), 1u);
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["devices"].Size(), 8u);
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"].GetInt64(), 1);

  for (int i = 0; i < 3; ++i) ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  EXPECT_EQ(Writes(), 1u);
  auto stats = publisher.Stats();
  EXPECT_EQ(stats.writes(), 1u);
  EXPECT_GE(stats.unchanged_passes, 1u);
  EXPECT_EQ(stats.pool_generation, 1);
}

TEST_F(SlicePublisherTest, OneWritePerRealChangeAndTheGenerationMovesWithContent) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8, /*numa=*/1)), kSyncDeadline));
  EXPECT_EQ(Writes(), 2u);
  EXPECT_EQ(env_.server().CountRequests("PUT", kSlices), 1u);
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"].GetInt64(), 2);
  EXPECT_EQ(slices[0]["spec"]["devices"][0]["attributes"]["dra.net/numaNode"]["int"].GetInt64(), 1);
}

TEST_F(SlicePublisherTest, SplitsThreeHundredDevicesIntoThreeSlicesAndShrinksBack) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(300)), kSyncDeadline));
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 3u);
  std::size_t devices = 0;
  for (const auto& slice : slices) {
    EXPECT_EQ(slice["spec"]["pool"]["resourceSliceCount"].GetInt64(), 3);
    EXPECT_LE(slice["spec"]["devices"].Size(), 128u);
    devices += slice["spec"]["devices"].Size();
  }
  EXPECT_EQ(devices, 300u);
  EXPECT_EQ(Writes(), 3u);

  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(10)), kSyncDeadline));
  slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["pool"]["resourceSliceCount"].GetInt64(), 1);
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"].GetInt64(), 2);
  EXPECT_EQ(env_.server().CountRequests("DELETE", kSlices), 2u);
}

TEST_F(SlicePublisherTest, OwnerReferencePointsAtTheNode) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(1)), kSyncDeadline));
  auto node = env_.server().GetObject("/api/v1/nodes", "node-1");
  rapidjson::Document node_json;
  node_json.Parse(node->c_str());
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  const auto& owner = slices[0]["metadata"]["ownerReferences"][0];
  EXPECT_STREQ(owner["kind"].GetString(), "Node");
  EXPECT_EQ(StringField(owner, "uid"), MetadataField(node_json, "uid"));
}

// A slice of another driver and node already holds the name ours would get
// (409 forever before: /readyz never ready). Ours goes under another name;
// theirs is left alone.
TEST_F(SlicePublisherTest, ForeignSliceHoldingOurNameIsWorkedAround) {
  env_.server().PutObject(kSlices, R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
    "metadata":{"name":"node-1-dra.net-0"},
    "spec":{"driver":"gpu.example.com","nodeName":"node-2",
            "pool":{"name":"node-2","generation":1,"resourceSliceCount":1},"devices":[]}})");
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  const auto ours = env_.server().GetObject(kSlices, "node-1-dra.net-0-1");
  ASSERT_TRUE(ours.has_value());
  EXPECT_NE(ours->find("\"driver\":\"dra.net\""), std::string::npos);
  const auto theirs = env_.server().GetObject(kSlices, "node-1-dra.net-0");
  ASSERT_TRUE(theirs.has_value());
  EXPECT_NE(theirs->find("gpu.example.com"), std::string::npos);
  // Later passes keep the name: nothing more is written for the same devices.
  const auto writes = Writes();
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  EXPECT_EQ(Writes(), writes);
}

// The node's pool as another writer left it (the driver this one replaces),
// under another slice name but with exactly our devices: ours replaces it in
// a newer generation, never beside it in the same one.
TEST_F(SlicePublisherTest, AnotherWritersSliceOfThePoolIsReplacedInANewerGeneration) {
  {
    SlicePublisher first(*client_, Options(), env_.log());
    ASSERT_TRUE(first.WaitForSync(first.Publish(Devices(2)), kSyncDeadline));
  }
  std::string theirs = *env_.server().GetObject(kSlices, "node-1-dra.net-0");
  ASSERT_TRUE(env_.server().DeleteObject(kSlices, "node-1-dra.net-0"));
  theirs.replace(theirs.find("\"node-1-dra.net-0\""), 18, "\"node-1-dra.net-x7k2p\"");
  env_.server().PutObject(kSlices, theirs);
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(2)), kSyncDeadline));
  EXPECT_FALSE(env_.server().GetObject(kSlices, "node-1-dra.net-x7k2p").has_value());
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_STREQ(slices[0]["metadata"]["name"].GetString(), "node-1-dra.net-0");
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"].GetInt64(), 2);
}

TEST_F(SlicePublisherTest, RepairsADeletedSlice) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
  env_.server().DeleteObject(kSlices, "node-1-dra.net-0");
  EXPECT_TRUE(WaitUntil([&] { return env_.server().GetObject(kSlices, "node-1-dra.net-0").has_value(); }));
  EXPECT_GE(publisher.Stats().repairs_scheduled, 1u);
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["devices"].Size(), 8u);
  EXPECT_GT(slices[0]["spec"]["pool"]["generation"].GetInt64(), 1);
}

TEST_F(SlicePublisherTest, RepairsAnExternalEdit) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(2)), kSyncDeadline));
  ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
  std::string stored = *env_.server().GetObject(kSlices, "node-1-dra.net-0");
  std::string edited = stored;
  edited.replace(edited.find("\"eth0\""), 6, "\"evil\"");
  env_.server().PutObject(kSlices, edited);
  EXPECT_TRUE(WaitUntil([&] {
    auto now = env_.server().GetObject(kSlices, "node-1-dra.net-0");
    return now && now->find("\"eth0\"") != std::string::npos;
  }));
}

TEST_F(SlicePublisherTest, RelistsAfterTheWatchExpiresAndStillRepairs) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(2)), kSyncDeadline));
  ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
  auto lists = [&] {
    std::size_t count = 0;
    for (const auto& request : env_.server().Requests())
      if (request.method == "GET" && request.target.find("resourceslices?") != std::string::npos &&
          request.target.find("watch=true") == std::string::npos)
        ++count;
    return count;
  };
  std::size_t lists_before = lists();
  env_.server().ExpireWatches();  // the open watch gets 410 Gone
  ASSERT_TRUE(WaitUntil([&] { return lists() > lists_before + 1; }));  // the watcher's and a pass's
  ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 1; }));
  env_.server().DeleteObject(kSlices, "node-1-dra.net-0");
  EXPECT_TRUE(WaitUntil([&] { return env_.server().GetObject(kSlices, "node-1-dra.net-0").has_value(); }));
}

TEST_F(SlicePublisherTest, DeletesSlicesItNoLongerWants) {
  // A slice left behind by an earlier run with another pool name, and a surplus index.
  env_.server().PutObject(kSlices, R"({"metadata":{"name":"node-1-dra.net-7"},"spec":{"driver":"dra.net",)"
                                   R"("nodeName":"node-1","pool":{"name":"old-pool","generation":4,)"
                                   R"("resourceSliceCount":1},"devices":[]}})");
  env_.server().PutObject(kSlices, R"({"metadata":{"name":"someone-else"},"spec":{"driver":"gpu.nvidia.com",)"
                                   R"("nodeName":"node-1","pool":{"name":"node-1","generation":1,)"
                                   R"("resourceSliceCount":1},"devices":[]}})");
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(3)), kSyncDeadline));
  EXPECT_FALSE(env_.server().GetObject(kSlices, "node-1-dra.net-7").has_value());
  EXPECT_TRUE(env_.server().GetObject(kSlices, "someone-else").has_value());
  EXPECT_TRUE(env_.server().GetObject(kSlices, "node-1-dra.net-0").has_value());
}

TEST_F(SlicePublisherTest, RecoversAfterTheApiServerWasDown) {
  auto options = ApiTestEnv::FastOptions();
  options.max_attempts = 2;
  auto client = env_.MakeClient(options);
  env_.server().SetDown(true);
  SlicePublisher publisher(*client, Options(), env_.log());
  uint64_t sequence = publisher.Publish(Devices(4));
  ASSERT_TRUE(WaitUntil([&] { return publisher.Stats().errors >= 3; }));
  EXPECT_FALSE(env_.server().GetObject(kSlices, "node-1-dra.net-0").has_value());
  env_.server().SetDown(false);
  ASSERT_TRUE(publisher.WaitForSync(sequence, kSyncDeadline));
  EXPECT_EQ(StoredSlices().size(), 1u);
  EXPECT_EQ(Writes(), 1u);
}

TEST_F(SlicePublisherTest, ConflictingWriterIsOvercome) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(2)), kSyncDeadline));
  env_.server().InjectFault({"PUT", kSlices, 409, -1, {}, 1});
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(3)), kSyncDeadline));
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["devices"].Size(), 3u);
  EXPECT_GE(publisher.Stats().errors, 1u);
}

TEST_F(SlicePublisherTest, CoalescesABurstOfPublishes) {
  auto options = Options();
  options.coalesce_window = std::chrono::seconds(2);
  SlicePublisher publisher(*client_, options, env_.log());
  uint64_t last = 0;
  for (int i = 1; i <= 50; ++i) last = publisher.Publish(Devices(i));
  ASSERT_TRUE(publisher.WaitForSync(last, kSyncDeadline));
  EXPECT_EQ(Writes(), 1u);
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["devices"].Size(), 50u);
}

TEST_F(SlicePublisherTest, InvalidDevicesAreLeftOutNotTheSlice) {
  auto devices = Devices(3);
  devices[1].name = "Not_A_Label";
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(devices), kSyncDeadline));
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["devices"].Size(), 2u);
}

}  // namespace
}  // namespace dranet::kube
