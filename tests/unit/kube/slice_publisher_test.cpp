#include "kube/slice_publisher.h"

#include <atomic>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

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

// The watch sees each pass's own creates, updates and deletes, often before
// the pass ends: none of them is someone else's change to repair.
TEST_F(SlicePublisherTest, ItsOwnWritesAreNotRepairs) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(300)), kSyncDeadline));            // 3 creates
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(300, /*numa=*/1)), kSyncDeadline));  // 3 updates
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(100)), kSyncDeadline));           // 1 update, 2 deletes
  // The last events in flight arrive; a repair they asked for would be counted.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(publisher.Stats().repairs_scheduled, 0u);
  EXPECT_EQ(Writes(), 9u);  // 3 creates, 3 updates, then 1 update (a newer generation) and 2 deletes
}

std::vector<inventory::Device> WithTaintOnFirst(std::vector<inventory::Device> devices) {
  devices[0].taints.push_back({"dra.net/unhealthy", "NoCarrier", "NoSchedule"});
  return devices;
}

TEST_F(SlicePublisherTest, PublishesTaintsAndTakesTheServersTimeAddedAsTheSame) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(WithTaintOnFirst(Devices(2))), kSyncDeadline));
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  const auto& taints = slices[0]["spec"]["devices"][0]["taints"];
  ASSERT_TRUE(taints.IsArray());
  ASSERT_EQ(taints.Size(), 1u);
  EXPECT_STREQ(taints[0]["key"].GetString(), "dra.net/unhealthy");
  EXPECT_STREQ(taints[0]["value"].GetString(), "NoCarrier");
  EXPECT_STREQ(taints[0]["effect"].GetString(), "NoSchedule");
  EXPECT_TRUE(taints[0].HasMember("timeAdded"));  // stamped by the server
  EXPECT_FALSE(slices[0]["spec"]["devices"][1].HasMember("taints"));
  // The same inventory again: nothing to write, and our own write was no repair.
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(WithTaintOnFirst(Devices(2))), kSyncDeadline));
  EXPECT_EQ(Writes(), 1u);
  EXPECT_EQ(publisher.Stats().repairs_scheduled, 0u);
  EXPECT_FALSE(publisher.Stats().taints_dropped);
  // The taint gone: one update.
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(2)), kSyncDeadline));
  EXPECT_EQ(Writes(), 2u);
  EXPECT_FALSE(StoredSlices()[0]["spec"]["devices"][0].HasMember("taints"));
}

TEST_F(SlicePublisherTest, AServerThatDropsTaintsIsNotWrittenAgainAndAgain) {
  env_.server().DropDeviceTaints(true);  // Kubernetes before 1.36
  {
    SlicePublisher publisher(*client_, Options(), env_.log());
    ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
    ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(WithTaintOnFirst(Devices(2))), kSyncDeadline));
    ASSERT_TRUE(WaitUntil([&] { return publisher.Stats().taints_dropped && publisher.Stats().passes >= 2; }));
    ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(WithTaintOnFirst(Devices(2))), kSyncDeadline));
    EXPECT_EQ(Writes(), 1u);  // the create; the passes after it found the pool as wanted
    // The watch may bring the server's copy before the create's answer has told the publisher
    // that taints are dropped: at most that one repair pass, which writes nothing.
    EXPECT_LE(publisher.Stats().repairs_scheduled, 1u);
  }
  EXPECT_THAT(env_.log_text(), ::testing::HasSubstr("the API server drops device taints"));
}

std::vector<inventory::Device> SharedFirst(std::vector<inventory::Device> devices) {
  devices[0].allow_multiple_allocations = true;
  devices[0].capacity["dra.net/shares"] = {8, inventory::CapacityRequestPolicy{1, 1, 8, 1}};
  return devices;
}

TEST_F(SlicePublisherTest, ASharedDeviceIsStoredAsPublished) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(SharedFirst(Devices(2))), kSyncDeadline));
  auto slices = StoredSlices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_TRUE(slices[0]["spec"]["devices"][0]["allowMultipleAllocations"].GetBool());
  EXPECT_STREQ(slices[0]["spec"]["devices"][0]["capacity"]["dra.net/shares"]["value"].GetString(), "8");
  EXPECT_FALSE(slices[0]["spec"]["devices"][1].HasMember("allowMultipleAllocations"));
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(SharedFirst(Devices(2))), kSyncDeadline));
  EXPECT_EQ(Writes(), 1u);
  EXPECT_FALSE(publisher.Stats().sharing_dropped);
}

TEST_F(SlicePublisherTest, AServerThatDropsSharingIsToldOnceAndNotWrittenAgainAndAgain) {
  env_.server().DropConsumableCapacity(true);  // Kubernetes before 1.36
  {
    SlicePublisher publisher(*client_, Options(), env_.log());
    ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
    ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(SharedFirst(Devices(2))), kSyncDeadline));
    ASSERT_TRUE(WaitUntil([&] { return publisher.Stats().sharing_dropped && publisher.Stats().passes >= 2; }));
    ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(SharedFirst(Devices(2))), kSyncDeadline));
    // The create, then one update without the capacities the server kept without their policy.
    EXPECT_LE(Writes(), 2u);
    auto slices = StoredSlices();
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_FALSE(slices[0]["spec"]["devices"][0].HasMember("allowMultipleAllocations"));
  }
  EXPECT_THAT(env_.log_text(), ::testing::HasSubstr("the API server drops allowMultipleAllocations"));
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

// on_synced tells a waiter each time a newer inventory is on the server (the
// daemon's readiness sleeps on it): not while the server is down, once when it
// is back, then once per inventory published (an identical one too: nothing
// is written, but it is confirmed).
TEST_F(SlicePublisherTest, OnSyncedRunsOnceForEachNewerInventoryOnTheServer) {
  auto options = ApiTestEnv::FastOptions();
  options.max_attempts = 2;
  auto client = env_.MakeClient(options);
  env_.server().SetDown(true);
  std::atomic<int> synced{0};
  auto publisher_options = Options();
  publisher_options.on_synced = [&] { ++synced; };
  SlicePublisher publisher(*client, publisher_options, env_.log());
  const uint64_t first = publisher.Publish(Devices(4));
  ASSERT_TRUE(WaitUntil([&] { return publisher.Stats().errors >= 3; }));
  EXPECT_EQ(synced.load(), 0);
  env_.server().SetDown(false);
  ASSERT_TRUE(publisher.WaitForSync(first, kSyncDeadline));
  ASSERT_TRUE(WaitUntil([&] { return synced.load() == 1; }));
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(5)), kSyncDeadline));
  ASSERT_TRUE(WaitUntil([&] { return synced.load() == 2; }));
  // The same inventory again: a pass that writes nothing, but confirms a newer sequence.
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(5)), kSyncDeadline));
  ASSERT_TRUE(WaitUntil([&] { return synced.load() == 3; }));
  EXPECT_EQ(Writes(), 2u);
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

// GETs of the resource.k8s.io discovery document.
std::size_t Discoveries(ApiTestEnv& env) {
  std::size_t count = 0;
  for (const auto& request : env.server().Requests())
    if (request.method == "GET" && request.target == "/apis/resource.k8s.io") ++count;
  return count;
}

// A control plane that serves one resource.k8s.io version alone (1.32/1.33 clusters serve
// only the betas): the publisher finds it, writes in its shape (the fake refuses another
// version's body or shape), stays quiet when nothing changed and repairs what others do.
class SlicePublisherVersionTest : public ::testing::TestWithParam<const char*> {
 protected:
  SlicePublisherVersionTest() {
    env_.server().ServeResourceVersions({GetParam()});
    env_.server().PutObject("/api/v1/nodes", R"({"metadata":{"name":"node-1"}})");
    client_ = env_.MakeClient();
    api_ = std::make_unique<ResourceApi>(*client_, env_.log());
  }
  std::string Slices() const { return std::string("/apis/resource.k8s.io/") + GetParam() + "/resourceslices"; }
  SlicePublisherOptions Options() {
    SlicePublisherOptions options;
    options.node_name = "node-1";
    options.coalesce_window = std::chrono::milliseconds(0);
    options.min_backoff = std::chrono::milliseconds(5);
    options.max_backoff = std::chrono::milliseconds(50);
    options.resource_api = api_.get();
    return options;
  }
  // The stored devices' attributes object, wherever the version keeps it.
  static const rapidjson::Value& Attributes(const rapidjson::Value& device) {
    return device.HasMember("basic") ? device["basic"]["attributes"] : device["attributes"];
  }
  ApiTestEnv env_;
  std::unique_ptr<ApiClient> client_;
  std::unique_ptr<ResourceApi> api_;
};

TEST_P(SlicePublisherVersionTest, PublishesInTheServedVersionAndRepairsIt) {
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  EXPECT_EQ(api_->Known(), ParseResourceApiVersion(GetParam()));
  auto stored = env_.server().GetObject(Slices(), "node-1-dra.net-0");
  ASSERT_TRUE(stored.has_value());
  rapidjson::Document slice;
  slice.Parse(stored->c_str());
  const auto& device = slice["spec"]["devices"][0];
  EXPECT_EQ(device.HasMember("basic"), std::string(GetParam()) == "v1beta1") << *stored;
  EXPECT_STREQ(Attributes(device)["dra.net/ifName"]["string"].GetString(), "eth0");

  // Nothing changed: nothing written, in any shape.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(8)), kSyncDeadline));
  EXPECT_EQ(publisher.Stats().writes(), 1u);
  const std::string spoken = std::string("/apis/resource.k8s.io/") + GetParam() + "/";
  for (const auto& request : env_.server().Requests()) {
    if (request.target.starts_with("/apis/resource.k8s.io/")) {
      EXPECT_TRUE(request.target.starts_with(spoken)) << request.method << " " << request.target;
    }
  }

  // Another writer's edit is put right, in the version's shape.
  ASSERT_TRUE(WaitUntil([&] { return env_.server().CountRequests("GET", "watch=true") > 0; }));
  std::string edited = *env_.server().GetObject(Slices(), "node-1-dra.net-0");
  edited.replace(edited.find("\"eth0\""), 6, "\"evil\"");
  env_.server().PutObject(Slices(), edited);
  EXPECT_TRUE(WaitUntil([&] {
    auto now = env_.server().GetObject(Slices(), "node-1-dra.net-0");
    return now && now->find("\"eth0\"") != std::string::npos;
  }));
  EXPECT_EQ(Discoveries(env_), 1u) << "one discovery, shared by the publisher and its watch";
}

TEST_P(SlicePublisherVersionTest, ListAttributesAreWrittenOnlyWhereTheVersionHasThem) {
  auto devices = Devices(2);
  devices[0].attributes["resource.kubernetes.io/numaNode"] = inventory::IntList{1, 0};
  SlicePublisher publisher(*client_, Options(), env_.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(devices), kSyncDeadline));
  rapidjson::Document slice;
  slice.Parse(env_.server().GetObject(Slices(), "node-1-dra.net-0").value_or("{}").c_str());
  ASSERT_TRUE(slice.IsObject() && slice.HasMember("spec"));
  const auto& numa = Attributes(slice["spec"]["devices"][0])["resource.kubernetes.io/numaNode"];
  if (std::string(GetParam()) == "v1") {
    ASSERT_TRUE(numa.HasMember("ints"));
    EXPECT_EQ(numa["ints"].Size(), 2u);
  } else {
    EXPECT_EQ(numa["int"].GetInt64(), 1) << "the list's first value: the device's own node";
  }
  // And the next pass finds nothing to change.
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(devices), kSyncDeadline));
  EXPECT_EQ(publisher.Stats().writes(), 1u);
}

std::string VersionParamName(const ::testing::TestParamInfo<const char*>& param) { return param.param; }
INSTANTIATE_TEST_SUITE_P(Served, SlicePublisherVersionTest, ::testing::Values("v1", "v1beta2", "v1beta1"),
                         VersionParamName);

// The control plane stops serving the version in use: the 404 of the collection makes the
// publisher ask again and go on in what is served now.
TEST(SlicePublisherRediscoveryTest, AVersionThatGoesAwayIsReplacedByTheServedOne) {
  ApiTestEnv env;
  env.server().ServeResourceVersions({"v1beta2", "v1beta1"});
  env.server().PutObject("/api/v1/nodes", R"({"metadata":{"name":"node-1"}})");
  auto client = env.MakeClient();
  ResourceApi api(*client, env.log());
  SlicePublisherOptions options;
  options.node_name = "node-1";
  options.coalesce_window = std::chrono::milliseconds(0);
  options.min_backoff = std::chrono::milliseconds(5);
  options.max_backoff = std::chrono::milliseconds(50);
  options.watch = false;
  options.resource_api = &api;
  SlicePublisher publisher(*client, options, env.log());
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(2)), kSyncDeadline));
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1beta2);
  env.server().ServeResourceVersions({"v1beta1"});
  ASSERT_TRUE(publisher.WaitForSync(publisher.Publish(Devices(3)), kSyncDeadline));
  EXPECT_EQ(api.Known(), ResourceApiVersion::kV1beta1);
  rapidjson::Document slice;
  slice.Parse(env.server().GetObject("/apis/resource.k8s.io/v1beta1/resourceslices", "node-1-dra.net-0")
                  .value_or("{}")
                  .c_str());
  ASSERT_TRUE(slice.IsObject() && slice.HasMember("spec"));
  EXPECT_EQ(slice["spec"]["devices"].Size(), 3u);
  EXPECT_EQ(Discoveries(env), 2u);
  EXPECT_GE(publisher.Stats().errors, 1u) << "the pass that met the 404";
}

}  // namespace dranet::kube
