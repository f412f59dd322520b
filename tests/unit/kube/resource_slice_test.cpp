#include "kube/resource_slice.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "openapi_schema.h"

namespace dranet::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

inventory::Device MakeDevice(std::string name) {
  inventory::Device device;
  device.name = std::move(name);
  device.attributes["dra.net/pciAddress"] = std::string("0101:00:00.0");
  device.attributes["dra.net/numaNode"] = int64_t{1};
  device.attributes["dra.net/rdma"] = true;
  device.attributes["dra.net/rdmaDevice"] = std::string("mlx5_0");
  device.attributes["azure.dra.net/vmSize"] = std::string("Standard_ND128isr_GB300_v6");
  device.attributes["dra.net/firmware"] = inventory::SemVer{"28.39.1002"};
  device.if_name = "host-only-not-published";
  return device;
}

std::vector<inventory::Device> ManyDevices(int count) {
  std::vector<inventory::Device> devices;
  for (int i = count - 1; i >= 0; --i) {  // reverse order: BuildSlices must sort
    char name[32];
    std::snprintf(name, sizeof name, "pci-0000-%02x-%02x-0", i / 256, i % 256);
    devices.push_back(MakeDevice(name));
  }
  return devices;
}

SliceParams NodeParams() {
  SliceParams params;
  params.node_name = "aks-gpu-45139532-vmss000081";
  params.node_uid = "00c21858-0000-4000-8000-000000000001";
  params.generation = 3;
  return params;
}

class ResourceSliceTest : public ::testing::Test {
 protected:
  std::ostringstream log_text_;
  Logger log_{log_text_};
};

TEST_F(ResourceSliceTest, OneSliceWithPoolNodeOwnerAndDeterministicName) {
  auto slices = BuildSlices(NodeParams(), {MakeDevice("pci-0101-00-00-0")}, log_);
  ASSERT_EQ(slices.size(), 1u);
  const auto& slice = slices[0];
  EXPECT_EQ(slice.name, "aks-gpu-45139532-vmss000081-dra.net-0");
  EXPECT_EQ(slice.driver, "dra.net");
  EXPECT_EQ(slice.node_name, "aks-gpu-45139532-vmss000081");
  EXPECT_EQ(slice.pool_name, "aks-gpu-45139532-vmss000081");
  EXPECT_EQ(slice.pool_generation, 3);
  EXPECT_EQ(slice.resource_slice_count, 1);
  ASSERT_EQ(slice.owner_references.size(), 1u);
  EXPECT_EQ(slice.owner_references[0].kind, "Node");
  EXPECT_EQ(slice.owner_references[0].uid, "00c21858-0000-4000-8000-000000000001");
  EXPECT_TRUE(slice.owner_references[0].controller);
}

TEST_F(ResourceSliceTest, NoOwnerReferenceWithoutNodeUid) {
  SliceParams params = NodeParams();
  params.node_uid.clear();
  auto slices = BuildSlices(params, {MakeDevice("pci-0101-00-00-0")}, log_);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_THAT(slices[0].owner_references, IsEmpty());
  EXPECT_THAT(SliceToJson(slices[0]), ::testing::Not(HasSubstr("ownerReferences")));
}

TEST_F(ResourceSliceTest, SplitsThreeHundredDevicesIntoThreeSortedSlices) {
  auto slices = BuildSlices(NodeParams(), ManyDevices(300), log_);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].devices.size(), 128u);
  EXPECT_EQ(slices[1].devices.size(), 128u);
  EXPECT_EQ(slices[2].devices.size(), 44u);
  std::string previous;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    EXPECT_EQ(slices[i].resource_slice_count, 3);
    EXPECT_EQ(slices[i].name, "aks-gpu-45139532-vmss000081-dra.net-" + std::to_string(i));
    for (const auto& device : slices[i].devices) {
      EXPECT_LT(previous, device.name);
      previous = device.name;
    }
  }
  // Same input, same output.
  auto again = BuildSlices(NodeParams(), ManyDevices(300), log_);
  for (std::size_t i = 0; i < slices.size(); ++i) EXPECT_EQ(SliceToJson(slices[i]), SliceToJson(again[i]));
}

// The API caps a slice at 64 devices only when a device has taints, consumes counters or has a
// list attribute. Ours never consume counters, so a slice without taints or list attributes is
// filled to 128; if a device ever carried another such field, this test's key check fails and
// the 64-device rule has to cover it too (SlicesWithListAttributesHoldAtMost64Devices,
// ...WithTaints...).
TEST_F(ResourceSliceTest, SlicesFillTo128BecauseNoDeviceHasTaintsOrCounters) {
  auto exactly = BuildSlices(NodeParams(), ManyDevices(128), log_);
  ASSERT_EQ(exactly.size(), 1u);
  EXPECT_EQ(exactly[0].devices.size(), 128u);

  auto one_more = BuildSlices(NodeParams(), ManyDevices(129), log_);
  ASSERT_EQ(one_more.size(), 2u);
  EXPECT_EQ(one_more[0].devices.size(), 128u);
  EXPECT_EQ(one_more[1].devices.size(), 1u);

  rapidjson::Document json;
  json.Parse(SliceToJson(one_more[0]).c_str());
  ASSERT_TRUE(json.IsObject());
  for (const auto& device : json["spec"]["devices"].GetArray()) {
    std::vector<std::string> keys;
    for (const auto& member : device.GetObject()) keys.emplace_back(member.name.GetString());
    EXPECT_THAT(keys, ::testing::ElementsAre("name", "attributes"));
  }
}

TEST_F(ResourceSliceTest, StoredTaintsWeDidNotSetOrCountersMakeTheSliceDiffer) {
  auto desired = BuildSlices(NodeParams(), {MakeDevice("pci-0101-00-00-0")}, log_)[0];
  {
    // Another writer's taint is read, and differs from none.
    rapidjson::Document json;
    json.Parse(SliceToJson(desired).c_str());
    rapidjson::Document value(&json.GetAllocator());
    value.Parse(R"([{"key":"k","effect":"NoSchedule"}])");
    json["spec"]["devices"][0].AddMember("taints", rapidjson::Value(value, json.GetAllocator()), json.GetAllocator());
    auto stored = ParseSlice(json);
    EXPECT_FALSE(stored.has_foreign_content);
    EXPECT_EQ(stored.devices[0].taints, (std::vector<inventory::DeviceTaint>{{"k", "", "NoSchedule"}}));
    EXPECT_FALSE(SemanticallyEqual(desired, stored));
  }
  const std::pair<const char*, const char*> fields[] = {
      {"taints", R"([{"key":"k","effect":"NoSchedule","colour":"red"}])"},
      {"consumesCounters", R"([{"counterSet":"c","counters":{"memory":{"value":"1Gi"}}}])"}};
  for (const auto& [key, text] : fields) {
    rapidjson::Document json;
    json.Parse(SliceToJson(desired).c_str());
    rapidjson::Document value(&json.GetAllocator());
    value.Parse(text);
    json["spec"]["devices"][0].AddMember(rapidjson::StringRef(key), rapidjson::Value(value, json.GetAllocator()),
                                         json.GetAllocator());
    auto stored = ParseSlice(json);
    EXPECT_TRUE(stored.has_foreign_content) << key;
    EXPECT_FALSE(SemanticallyEqual(desired, stored)) << key;
  }
}

TEST_F(ResourceSliceTest, NoDevicesNoSlices) {
  EXPECT_THAT(BuildSlices(NodeParams(), {}, log_), IsEmpty());
}

TEST_F(ResourceSliceTest, InvalidDevicesAreDroppedWithALogLineNotTheSlice) {
  std::vector<inventory::Device> devices = {MakeDevice("pci-0101-00-00-0")};
  devices.push_back(MakeDevice("Bad_Name"));
  auto long_string = MakeDevice("pci-0102-00-00-0");
  long_string.attributes["dra.net/alias"] = std::string(65, 'x');
  devices.push_back(long_string);
  auto bad_key = MakeDevice("pci-0103-00-00-0");
  bad_key.attributes["dra.net/bad-key"] = true;
  devices.push_back(bad_key);
  auto bad_version = MakeDevice("pci-0104-00-00-0");
  bad_version.attributes["dra.net/firmware"] = inventory::SemVer{"28.39"};
  devices.push_back(bad_version);
  auto too_many = MakeDevice("pci-0105-00-00-0");
  for (int i = 0; i < 30; ++i) too_many.attributes["dra.net/extra" + std::to_string(i)] = int64_t{i};
  devices.push_back(too_many);
  devices.push_back(MakeDevice("pci-0101-00-00-0"));  // duplicate name

  auto slices = BuildSlices(NodeParams(), devices, log_);
  ASSERT_EQ(slices.size(), 1u);
  ASSERT_EQ(slices[0].devices.size(), 1u);
  EXPECT_EQ(slices[0].devices[0].name, "pci-0101-00-00-0");
  std::string text = log_text_.str();
  for (const char* dropped : {"Bad_Name", "pci-0102-00-00-0", "pci-0103-00-00-0", "pci-0104-00-00-0",
                              "pci-0105-00-00-0", "duplicate"})
    EXPECT_THAT(text, HasSubstr(dropped));
}

TEST_F(ResourceSliceTest, ExactlyTheLimitsAreAccepted) {
  auto device = MakeDevice("d" + std::string(62, 'a'));
  device.attributes["dra.net/alias"] = std::string(64, 'x');
  while (device.attributes.size() < kMaxAttributesPerDevice)
    device.attributes["dra.net/a" + std::to_string(device.attributes.size())] = false;
  EXPECT_EQ(ValidateDevice(device), "");
}

TEST_F(ResourceSliceTest, LongNodeNamesStillGiveValidUniqueSliceNames) {
  std::string node_a(250, 'a');
  std::string node_b = std::string(249, 'a') + "b";
  std::string name_a = SliceName(node_a, "dra.net", 12);
  std::string name_b = SliceName(node_b, "dra.net", 12);
  EXPECT_LE(name_a.size(), kMaxObjectNameLength);
  EXPECT_NE(name_a, name_b);
  EXPECT_THAT(name_a, ::testing::EndsWith("-dra.net-12"));
}

TEST_F(ResourceSliceTest, JsonHasTheApiShape) {
  auto slices = BuildSlices(NodeParams(), {MakeDevice("pci-0101-00-00-0")}, log_);
  rapidjson::Document json;
  json.Parse(SliceToJson(slices[0]).c_str());
  ASSERT_FALSE(json.HasParseError());
  EXPECT_STREQ(json["apiVersion"].GetString(), "resource.k8s.io/v1");
  EXPECT_STREQ(json["kind"].GetString(), "ResourceSlice");
  EXPECT_STREQ(json["metadata"]["name"].GetString(), "aks-gpu-45139532-vmss000081-dra.net-0");
  EXPECT_STREQ(json["metadata"]["labels"]["app.kubernetes.io/managed-by"].GetString(), "dranet");
  EXPECT_FALSE(json["metadata"].HasMember("resourceVersion"));
  EXPECT_STREQ(json["metadata"]["ownerReferences"][0]["apiVersion"].GetString(), "v1");
  EXPECT_STREQ(json["spec"]["driver"].GetString(), "dra.net");
  EXPECT_EQ(json["spec"]["pool"]["generation"].GetInt64(), 3);
  EXPECT_EQ(json["spec"]["pool"]["resourceSliceCount"].GetInt64(), 1);
  const auto& attributes = json["spec"]["devices"][0]["attributes"];
  EXPECT_STREQ(attributes["dra.net/rdmaDevice"]["string"].GetString(), "mlx5_0");
  EXPECT_EQ(attributes["dra.net/numaNode"]["int"].GetInt64(), 1);
  EXPECT_TRUE(attributes["dra.net/rdma"]["bool"].GetBool());
  EXPECT_STREQ(attributes["dra.net/firmware"]["version"].GetString(), "28.39.1002");
  EXPECT_STREQ(attributes["azure.dra.net/vmSize"]["string"].GetString(), "Standard_ND128isr_GB300_v6");
  EXPECT_FALSE(json["spec"]["devices"][0].HasMember("ifName"));
}

TEST_F(ResourceSliceTest, JsonMatchesTheOpenApiSchema) {
  testing::OpenApiSchema schema(DRANET_OPENAPI_PATH);
  ASSERT_TRUE(schema.loaded()) << DRANET_OPENAPI_PATH;
  auto slices = BuildSlices(NodeParams(), ManyDevices(130), log_);
  slices[0].resource_version = "42";
  for (const auto& slice : slices) {
    rapidjson::Document json;
    json.Parse(SliceToJson(slice).c_str());
    EXPECT_THAT(schema.Validate(json, "io.k8s.api.resource.v1.ResourceSlice"), IsEmpty());
  }
  // The checker itself catches what the API would reject.
  rapidjson::Document broken;
  broken.Parse(R"({"spec":{"driver":"dra.net","pool":{"name":"n"},"devices":[{"name":"d",)"
               R"("attributes":{"x":{"int":"1"}},"colour":"red"}]}})");
  EXPECT_EQ(schema.Validate(broken, "io.k8s.api.resource.v1.ResourceSlice").size(), 4u);
}

TEST_F(ResourceSliceTest, InspectArrayHoldsEverySlice) {
  auto slices = BuildSlices(NodeParams(), ManyDevices(200), log_);
  rapidjson::Document json;
  json.Parse(SlicesToJson(slices).c_str());
  ASSERT_TRUE(json.IsArray());
  EXPECT_EQ(json.Size(), 2u);
}

TEST_F(ResourceSliceTest, ParseRoundTripsAndComparesSemantically) {
  auto desired = BuildSlices(NodeParams(), {MakeDevice("pci-0101-00-00-0")}, log_)[0];
  rapidjson::Document json;
  json.Parse(SliceToJson(desired).c_str());
  // What the API server adds must not make the slices differ.
  auto& allocator = json.GetAllocator();
  json["metadata"].AddMember("uid", "u-1", allocator);
  json["metadata"].AddMember("resourceVersion", "77", allocator);
  json["metadata"].AddMember("managedFields", rapidjson::Value(rapidjson::kArrayType), allocator);
  json["metadata"]["labels"].AddMember("team", "net", allocator);
  auto stored = ParseSlice(json);
  EXPECT_EQ(stored.uid, "u-1");
  EXPECT_EQ(stored.resource_version, "77");
  EXPECT_TRUE(SemanticallyEqual(desired, stored));

  auto changed = stored;
  changed.devices[0].attributes["dra.net/numaNode"] = int64_t{0};
  EXPECT_FALSE(SemanticallyEqual(desired, changed));
  changed = stored;
  changed.owner_references.clear();
  EXPECT_FALSE(SemanticallyEqual(desired, changed));
  changed = stored;
  changed.pool_generation = 4;
  EXPECT_FALSE(SemanticallyEqual(desired, changed));
  changed = stored;
  changed.labels.erase(std::string(kManagedByLabel));
  EXPECT_FALSE(SemanticallyEqual(desired, changed));
}

TEST_F(ResourceSliceTest, BareAttributeKeysAreInTheDriverDomain) {
  auto desired = BuildSlices(NodeParams(), {MakeDevice("pci-0101-00-00-0")}, log_)[0];
  std::string text = SliceToJson(desired);
  for (const char* key : {"pciAddress", "numaNode", "rdma", "rdmaDevice", "firmware"}) {
    std::string qualified = std::string("\"dra.net/") + key + "\"";
    text.replace(text.find(qualified), qualified.size(), std::string("\"") + key + "\"");
  }
  rapidjson::Document json;
  json.Parse(text.c_str());
  EXPECT_TRUE(SemanticallyEqual(desired, ParseSlice(json)));
}

TEST_F(ResourceSliceTest, ContentWeNeverWriteMakesTheStoredSliceDiffer) {
  auto desired = BuildSlices(NodeParams(), {MakeDevice("pci-0101-00-00-0")}, log_)[0];
  rapidjson::Document json;
  json.Parse(SliceToJson(desired).c_str());
  auto& allocator = json.GetAllocator();
  rapidjson::Value strings(rapidjson::kObjectType);
  strings.AddMember("strings", rapidjson::Value(rapidjson::kArrayType).PushBack("a", allocator), allocator);
  json["spec"]["devices"][0]["attributes"].AddMember("dra.net/list", strings, allocator);
  auto stored = ParseSlice(json);
  EXPECT_TRUE(stored.has_foreign_content) << "a list kind we never write";
  EXPECT_FALSE(SemanticallyEqual(desired, stored));

  json.Parse(SliceToJson(desired).c_str());
  json["spec"].AddMember("allNodes", true, json.GetAllocator());
  EXPECT_FALSE(SemanticallyEqual(desired, ParseSlice(json)));
}

inventory::Device WithNumaList(inventory::Device device, inventory::IntList nodes = {1, 0, 2}) {
  device.attributes["resource.kubernetes.io/numaNode"] = std::move(nodes);
  return device;
}

TEST_F(ResourceSliceTest, IntListsAreWrittenAsIntsAndReadBack) {
  auto desired = BuildSlices(NodeParams(), {WithNumaList(MakeDevice("pci-0101-00-00-0"))}, log_)[0];
  std::string text = SliceToJson(desired);
  EXPECT_THAT(text, HasSubstr(R"("resource.kubernetes.io/numaNode":{"ints":[1,0,2]})"));
  EXPECT_THAT(text, HasSubstr(R"("dra.net/numaNode":{"int":1})"));
  rapidjson::Document json;
  json.Parse(text.c_str());
  auto stored = ParseSlice(json);
  EXPECT_FALSE(stored.has_foreign_content);
  EXPECT_EQ(stored.devices, desired.devices);
  EXPECT_TRUE(SemanticallyEqual(desired, stored));

  // Compared as values: another order or the scalar form differs.
  auto changed = stored;
  changed.devices[0].attributes["resource.kubernetes.io/numaNode"] = inventory::IntList{1, 2, 0};
  EXPECT_FALSE(SemanticallyEqual(desired, changed));
  changed.devices[0].attributes["resource.kubernetes.io/numaNode"] = int64_t{1};
  EXPECT_FALSE(SemanticallyEqual(desired, changed));

  auto attributes = WithNumaList(MakeDevice("d"), {3}).attributes;
  EXPECT_EQ(AttributesFromJson(AttributesToJson(attributes)), attributes);
}

// v1beta1 (Kubernetes 1.32, 1.33) keeps a device's fields under `basic`; v1beta2 has v1's
// flat shape. Whatever the version, a stored slice reads back the same.
TEST_F(ResourceSliceTest, EachVersionHasItsShapeAndReadsBackTheSame) {
  auto desired = BuildSlices(NodeParams(), {MakeDevice("pci-0101-00-00-0")}, log_)[0];
  for (ResourceApiVersion version : kSpokenResourceApiVersions) {
    SCOPED_TRACE(GroupVersion(version));
    rapidjson::Document json;
    json.Parse(SliceToJson(desired, version).c_str());
    EXPECT_EQ(std::string(json["apiVersion"].GetString()), GroupVersion(version));
    const auto& device = json["spec"]["devices"][0];
    if (version == ResourceApiVersion::kV1beta1) {
      EXPECT_FALSE(device.HasMember("attributes"));
      ASSERT_TRUE(device.HasMember("basic"));
      EXPECT_EQ(device.MemberCount(), 2u);  // name, basic
      EXPECT_STREQ(device["basic"]["attributes"]["dra.net/rdmaDevice"]["string"].GetString(), "mlx5_0");
    } else {
      EXPECT_FALSE(device.HasMember("basic"));
      EXPECT_STREQ(device["attributes"]["dra.net/rdmaDevice"]["string"].GetString(), "mlx5_0");
    }
    auto stored = ParseSlice(json);
    EXPECT_FALSE(stored.has_foreign_content);
    EXPECT_EQ(stored.devices, desired.devices);
    EXPECT_TRUE(SemanticallyEqual(desired, stored));
  }
  // What we never write stays foreign inside `basic` too.
  rapidjson::Document json;
  json.Parse(SliceToJson(desired, ResourceApiVersion::kV1beta1).c_str());
  rapidjson::Value capacity(rapidjson::kObjectType);
  capacity.AddMember("dra.net/bandwidth", rapidjson::Value(rapidjson::kObjectType), json.GetAllocator());
  capacity["dra.net/bandwidth"].AddMember("value", "400G", json.GetAllocator());
  json["spec"]["devices"][0]["basic"].AddMember("capacity", capacity, json.GetAllocator());
  EXPECT_TRUE(ParseSlice(json).has_foreign_content);
  // `basic` inside `basic` is not a device shape.
  json.Parse(R"({"metadata":{"name":"a"},"spec":{"driver":"dra.net","devices":[{"name":"d","basic":{"basic":{"attributes":{"x":{"int":1}}}}}]}})");
  auto nested = ParseSlice(json);
  EXPECT_TRUE(nested.has_foreign_content);
  EXPECT_THAT(nested.devices.at(0).attributes, IsEmpty());
}

TEST_F(ResourceSliceTest, ListAttributesBecomeTheirFirstValueWhereTheVersionHasNoLists) {
  std::vector<inventory::Device> devices = {WithNumaList(MakeDevice("a"), {1, 0, 2}), MakeDevice("b")};
  EXPECT_TRUE(AnyListAttribute(devices));
  auto scalar = WithScalarAttributes(devices);
  EXPECT_FALSE(AnyListAttribute(scalar));
  EXPECT_EQ(scalar[0].attributes.at("resource.kubernetes.io/numaNode"), inventory::AttributeValue(int64_t{1}));
  EXPECT_EQ(scalar[1].attributes, devices[1].attributes);
  auto slices = BuildSlices(NodeParams(), scalar, log_);
  EXPECT_THAT(SliceToJson(slices[0], ResourceApiVersion::kV1beta1),
              HasSubstr(R"("resource.kubernetes.io/numaNode":{"int":1})"));
}

TEST_F(ResourceSliceTest, IntListsWeCannotReadMakeTheSliceForeign) {
  for (const char* value : {R"({"ints":[]})", R"({"ints":[1,"2"]})", R"({"ints":[1.5]})", R"({"ints":7})"}) {
    rapidjson::Document json;
    json.Parse((std::string(R"({"metadata":{"name":"a"},"spec":{"driver":"dra.net","devices":[{"name":"d",)") +
                R"("attributes":{"resource.kubernetes.io/numaNode":)" + value + "}}]}}")
                   .c_str());
    ASSERT_TRUE(json.IsObject()) << value;
    auto stored = ParseSlice(json);
    EXPECT_TRUE(stored.has_foreign_content) << value;
    EXPECT_THAT(stored.devices.at(0).attributes, IsEmpty()) << value;
  }
}

TEST_F(ResourceSliceTest, IntListsAreValidatedAndCountItemByItem) {
  EXPECT_EQ(ValidateDevice(WithNumaList(MakeDevice("d"))), "");
  EXPECT_THAT(ValidateDevice(WithNumaList(MakeDevice("d"), {})),
              HasSubstr("attribute resource.kubernetes.io/numaNode: int list is empty"));

  // MakeDevice has 6 single values: a list of 42 reaches exactly 48 values, 43 is one too many.
  ASSERT_EQ(MakeDevice("d").attributes.size(), 6u);
  EXPECT_EQ(ValidateDevice(WithNumaList(MakeDevice("d"), inventory::IntList(42, 0))), "");
  EXPECT_THAT(ValidateDevice(WithNumaList(MakeDevice("d"), inventory::IntList(43, 0))),
              HasSubstr("49 attribute values"));
  auto slices = BuildSlices(NodeParams(), {WithNumaList(MakeDevice("d"), {})}, log_);
  EXPECT_THAT(slices, IsEmpty());
  EXPECT_THAT(log_text_.str(), HasSubstr("int list is empty"));
}

TEST_F(ResourceSliceTest, SlicesWithListAttributesHoldAtMost64Devices) {
  auto sizes = [&](const std::vector<inventory::Device>& devices) {
    std::vector<std::size_t> out;
    for (const auto& slice : BuildSlices(NodeParams(), devices, log_)) out.push_back(slice.devices.size());
    return out;
  };
  auto devices = ManyDevices(200);
  for (auto& device : devices) device = WithNumaList(device);
  EXPECT_THAT(sizes(devices), ::testing::ElementsAre(64, 64, 64, 8));

  // The rule is per slice. ManyDevices lists the devices in reverse name order: in name order
  // the first 100 have no list and fill a slice past 64; the 101st, with a list, starts the next.
  devices = ManyDevices(300);
  for (std::size_t i = 0; i < 200; ++i) devices[i] = WithNumaList(devices[i]);
  EXPECT_THAT(sizes(devices), ::testing::ElementsAre(100, 64, 64, 64, 8));
  // One list device makes its slice a 64 one; the next slice, without lists, fills to 128.
  devices = ManyDevices(200);
  devices.back() = WithNumaList(devices.back());  // the first in name order
  EXPECT_THAT(sizes(devices), ::testing::ElementsAre(64, 128, 8));
}

TEST_F(ResourceSliceTest, SlicesWithTaintsHoldAtMost64Devices) {
  auto devices = ManyDevices(200);
  devices.back().taints.push_back({"dra.net/unhealthy", "NoCarrier", "NoSchedule"});  // the first in name order
  std::vector<std::size_t> sizes;
  for (const auto& slice : BuildSlices(NodeParams(), devices, log_)) sizes.push_back(slice.devices.size());
  EXPECT_THAT(sizes, ::testing::ElementsAre(64, 128, 8));
}

TEST_F(ResourceSliceTest, TaintsAreWrittenInEachVersionAndReadBackWhateverTheServersTimeAdded) {
  auto device = MakeDevice("pci-0101-00-00-0");
  device.taints.push_back({"dra.net/unhealthy", "RdmaPortDown", "NoSchedule"});
  auto desired = BuildSlices(NodeParams(), {device}, log_)[0];
  for (ResourceApiVersion version : kSpokenResourceApiVersions) {
    SCOPED_TRACE(GroupVersion(version));
    rapidjson::Document json;
    json.Parse(SliceToJson(desired, version).c_str());
    auto& fields = version == ResourceApiVersion::kV1beta1 ? json["spec"]["devices"][0]["basic"]
                                                           : json["spec"]["devices"][0];
    ASSERT_TRUE(fields.HasMember("taints"));
    ASSERT_EQ(fields["taints"].Size(), 1u);
    EXPECT_STREQ(fields["taints"][0]["key"].GetString(), "dra.net/unhealthy");
    EXPECT_STREQ(fields["taints"][0]["value"].GetString(), "RdmaPortDown");
    EXPECT_STREQ(fields["taints"][0]["effect"].GetString(), "NoSchedule");
    fields["taints"][0].AddMember("timeAdded", "2026-11-29T09:00:00Z", json.GetAllocator());
    auto stored = ParseSlice(json);
    EXPECT_FALSE(stored.has_foreign_content);
    EXPECT_TRUE(SemanticallyEqual(desired, stored));
  }
  testing::OpenApiSchema schema(DRANET_OPENAPI_PATH);
  ASSERT_TRUE(schema.loaded()) << DRANET_OPENAPI_PATH;
  rapidjson::Document json;
  json.Parse(SliceToJson(desired).c_str());
  EXPECT_THAT(schema.Validate(json, "io.k8s.api.resource.v1.ResourceSlice"), IsEmpty());
}

inventory::Device Shared(inventory::Device device) {
  device.allow_multiple_allocations = true;
  device.capacity["dra.net/shares"] = {4, inventory::CapacityRequestPolicy{1, 1, 4, 1}};
  device.capacity["dra.net/bandwidth"] = {800, inventory::CapacityRequestPolicy{200, 1, 800, 1}};
  return device;
}

TEST_F(ResourceSliceTest, ASharedDeviceIsWrittenInEachVersionAndReadBackTheSame) {
  auto desired = BuildSlices(NodeParams(), {Shared(MakeDevice("pci-0101-00-00-0"))}, log_)[0];
  for (ResourceApiVersion version : kSpokenResourceApiVersions) {
    SCOPED_TRACE(GroupVersion(version));
    rapidjson::Document json;
    json.Parse(SliceToJson(desired, version).c_str());
    auto& fields = version == ResourceApiVersion::kV1beta1 ? json["spec"]["devices"][0]["basic"]
                                                           : json["spec"]["devices"][0];
    ASSERT_TRUE(fields.HasMember("allowMultipleAllocations"));
    EXPECT_TRUE(fields["allowMultipleAllocations"].GetBool());
    const auto& shares = fields["capacity"]["dra.net/shares"];
    EXPECT_STREQ(shares["value"].GetString(), "4");
    EXPECT_STREQ(shares["requestPolicy"]["default"].GetString(), "1");
    EXPECT_STREQ(shares["requestPolicy"]["validRange"]["min"].GetString(), "1");
    EXPECT_STREQ(shares["requestPolicy"]["validRange"]["max"].GetString(), "4");
    EXPECT_STREQ(shares["requestPolicy"]["validRange"]["step"].GetString(), "1");
    EXPECT_STREQ(fields["capacity"]["dra.net/bandwidth"]["requestPolicy"]["default"].GetString(), "200");
    auto stored = ParseSlice(json);
    EXPECT_FALSE(stored.has_foreign_content);
    EXPECT_TRUE(SemanticallyEqual(desired, stored));
    // Another share count, or the flag gone, is a change to write.
    auto fewer = desired;
    fewer.devices[0].capacity["dra.net/shares"].value = 3;
    fewer.devices[0].capacity["dra.net/shares"].request_policy->max = 3;
    EXPECT_FALSE(SemanticallyEqual(fewer, stored));
    auto exclusive = desired;
    exclusive.devices[0].allow_multiple_allocations = false;
    EXPECT_FALSE(SemanticallyEqual(exclusive, stored));
  }
  testing::OpenApiSchema schema(DRANET_OPENAPI_PATH);
  ASSERT_TRUE(schema.loaded()) << DRANET_OPENAPI_PATH;
  rapidjson::Document json;
  json.Parse(SliceToJson(desired).c_str());
  EXPECT_THAT(schema.Validate(json, "io.k8s.api.resource.v1.ResourceSlice"), IsEmpty());
}

TEST_F(ResourceSliceTest, CapacitiesInAnotherFormThanOursMakeTheSliceForeign) {
  auto desired = BuildSlices(NodeParams(), {Shared(MakeDevice("pci-0101-00-00-0"))}, log_)[0];
  for (const char* replacement : {R"({"value":"4k"})", R"({"value":"4","requestPolicy":{"default":"1","validValues":["1"]}})",
                                  R"({"value":"04"})", R"({"value":4})"}) {
    SCOPED_TRACE(replacement);
    rapidjson::Document json;
    json.Parse(SliceToJson(desired).c_str());
    rapidjson::Document other;
    other.Parse(replacement);
    json["spec"]["devices"][0]["capacity"]["dra.net/shares"].CopyFrom(other, json.GetAllocator());
    EXPECT_TRUE(ParseSlice(json).has_foreign_content);
  }
}

TEST_F(ResourceSliceTest, CapacitiesAreValidatedAsTheApiServerDoes) {
  auto device = Shared(MakeDevice("pci-0101-00-00-0"));
  EXPECT_EQ(ValidateDevice(device), "");
  auto exclusive = device;
  exclusive.allow_multiple_allocations = false;
  EXPECT_THAT(ValidateDevice(exclusive), HasSubstr("does not allow multiple allocations"));
  auto over = device;
  over.capacity["dra.net/shares"].request_policy->max = 5;  // above the value
  EXPECT_THAT(ValidateDevice(over), HasSubstr("request policy outside"));
  auto low_default = device;
  low_default.capacity["dra.net/shares"].request_policy->default_value = 0;
  EXPECT_THAT(ValidateDevice(low_default), HasSubstr("request policy outside"));
  auto no_step = device;
  no_step.capacity["dra.net/shares"].request_policy->step = 0;
  EXPECT_THAT(ValidateDevice(no_step), HasSubstr("request policy outside"));
  // Attributes and capacities share the limit of 32.
  auto crowded = device;
  for (int i = 0; crowded.attributes.size() < 31; ++i) crowded.attributes["dra.net/extra" + std::to_string(i)] = true;
  EXPECT_THAT(ValidateDevice(crowded), HasSubstr("attributes and capacities (limit 32)"));
}

TEST_F(ResourceSliceTest, SlicesWithSharedDevicesHoldAtMost64Devices) {
  auto devices = ManyDevices(200);
  for (auto& device : devices) device = Shared(device);
  std::vector<std::size_t> sizes;
  for (const auto& slice : BuildSlices(NodeParams(), devices, log_)) sizes.push_back(slice.devices.size());
  EXPECT_THAT(sizes, ::testing::ElementsAre(64, 64, 64, 8));
  EXPECT_EQ(log_text_.str(), "");
}

TEST_F(ResourceSliceTest, ParseRejectsNonObjects) {
  rapidjson::Document json;
  json.Parse(R"({"kind":"Status"})");
  EXPECT_THROW(ParseSlice(json), std::invalid_argument);
}

TEST_F(ResourceSliceTest, MalformedOwnerReferencesMakeTheSliceForeign) {
  rapidjson::Document json;
  json.Parse(R"({"metadata":{"name":"a","ownerReferences":[7,"x",{"kind":"Node","name":"n"}]},"spec":{}})");
  ResourceSlice slice = ParseSlice(json);
  EXPECT_TRUE(slice.has_foreign_content) << "entries we never write mean: overwrite it";
  ASSERT_EQ(slice.owner_references.size(), 1u);
  EXPECT_EQ(slice.owner_references[0].kind, "Node");
}

}  // namespace
}  // namespace dranet::kube
