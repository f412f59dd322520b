// PersistentResourceSliceAttributes: what allocated devices published at
// prepare fills in what discovery no longer sees.
#include "daemon/persistent_attributes.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dranet::daemon {
namespace {

inventory::Device Live(const std::string& name, inventory::Attributes attributes) {
  inventory::Device d;
  d.name = name;
  d.if_name = "live-" + name;
  d.attributes = std::move(attributes);
  return d;
}

inject::ClaimPlan PlanRecording(std::map<std::string, std::string> published) {
  inject::ClaimPlan plan;
  plan.claim_namespace = "ml";
  plan.claim_name = "nics";
  plan.published_attributes = std::move(published);
  return plan;
}

TEST(PersistentAttributes, AVanishedDeviceIsPublishedFromItsRecord) {
  std::ostringstream logs;
  Logger log(logs, Logger::Format::kJson);
  std::vector<inventory::Device> devices = {Live("pci-0000-8a-00-0", {{"dra.net/ifName", std::string("gpu0rdma0")}})};
  const auto added = MergePublishedAttributes(
      devices,
      {PlanRecording({{"veth-pod", R"({"dra.net/ifName":{"string":"veth-pod"},"dra.net/type":{"string":"veth"},)"
                                    R"("dra.net/mtu":{"int":1500},"dra.net/virtual":{"bool":true}})"}})},
      log);
  EXPECT_EQ(added, std::set<std::string>{"veth-pod"});
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].name, "veth-pod");
  EXPECT_EQ(devices[1].attributes.at("dra.net/ifName"), inventory::AttributeValue(std::string("veth-pod")));
  EXPECT_EQ(devices[1].attributes.at("dra.net/mtu"), inventory::AttributeValue(int64_t{1500}));
  EXPECT_EQ(devices[1].attributes.at("dra.net/virtual"), inventory::AttributeValue(true));
  EXPECT_TRUE(devices[1].if_name.empty()) << "no host facts come from a record";
  EXPECT_EQ(devices[0].attributes.size(), 1u) << "an unrecorded device is left alone";
}

TEST(PersistentAttributes, ADiscoveredDeviceKeepsLiveValuesAndRegainsLostAttributes) {
  std::ostringstream logs;
  Logger log(logs, Logger::Format::kJson);
  std::vector<inventory::Device> devices = {
      Live("pci-0000-8a-00-0", {{"dra.net/pciAddress", std::string("0000:8a:00.0")}, {"dra.net/numaNode", int64_t{1}}})};
  const auto added = MergePublishedAttributes(
      devices,
      {PlanRecording({{"pci-0000-8a-00-0", R"({"dra.net/ifName":{"string":"gpu0rdma0"},"dra.net/numaNode":{"int":0},)"
                                            R"("dra.net/pciAddress":{"string":"0000:8a:00.0"}})"}})},
      log);
  EXPECT_TRUE(added.empty());
  ASSERT_EQ(devices.size(), 1u);
  const auto& a = devices[0].attributes;
  EXPECT_EQ(a.at("dra.net/ifName"), inventory::AttributeValue(std::string("gpu0rdma0")));
  EXPECT_EQ(a.at("dra.net/numaNode"), inventory::AttributeValue(int64_t{1})) << "live wins";
  EXPECT_EQ(devices[0].if_name, "live-pci-0000-8a-00-0");
}

TEST(PersistentAttributes, AnUnreadableRecordIsSkippedWithAWarning) {
  std::ostringstream logs;
  Logger log(logs, Logger::Format::kJson);
  std::vector<inventory::Device> devices;
  const auto added = MergePublishedAttributes(
      devices, {PlanRecording({{"a", R"({"dra.net/x":{"float":1.5}})"}, {"b", "not json"}, {"c", R"({})"}})}, log);
  EXPECT_EQ(added, std::set<std::string>{"c"});
  EXPECT_EQ(devices.size(), 1u);
  EXPECT_NE(logs.str().find("\"device\":\"a\""), std::string::npos) << logs.str();
  EXPECT_NE(logs.str().find("\"device\":\"b\""), std::string::npos) << logs.str();
}

}  // namespace
}  // namespace dranet::daemon
