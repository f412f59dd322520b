// core/kube/claim_status.cpp — server-side apply of ResourceClaim status.devices.
#include "kube/claim_status.h"

#include <ctime>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace dranet::kube {
namespace {

// API limits on AllocatedDeviceStatus (kubernetes/kubernetes pkg/apis/resource/validation).
constexpr std::size_t kMaxConditions = 8;
constexpr std::size_t kMaxIps = 16;

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void Field(JsonWriter& writer, const char* key, const std::string& value) {
  writer.Key(key);
  writer.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteCondition(JsonWriter& writer, const DeviceCondition& condition, const std::string& now) {
  writer.StartObject();
  Field(writer, "type", condition.type);
  Field(writer, "status", condition.status);
  Field(writer, "reason", condition.reason);
  Field(writer, "message", condition.message);  // required by the schema, may be empty
  Field(writer, "lastTransitionTime",
        condition.last_transition_time.empty() ? now : condition.last_transition_time);
  if (condition.observed_generation > 0) {
    writer.Key("observedGeneration");
    writer.Int64(condition.observed_generation);
  }
  writer.EndObject();
}

void WriteNetworkData(JsonWriter& writer, const NetworkDeviceData& data, const std::string& device,
                      Logger& log) {
  writer.StartObject();
  if (!data.interface_name.empty()) Field(writer, "interfaceName", data.interface_name);
  if (!data.ips.empty()) {
    writer.Key("ips");
    writer.StartArray();
    for (std::size_t i = 0; i < data.ips.size() && i < kMaxIps; ++i)
      writer.String(data.ips[i].c_str(), static_cast<rapidjson::SizeType>(data.ips[i].size()));
    writer.EndArray();
    if (data.ips.size() > kMaxIps)
      log.Warning("claim status: too many IPs, only the first 16 are reported",
                  {{"device", device}, {"ips", data.ips.size()}});
  }
  if (!data.hardware_address.empty()) Field(writer, "hardwareAddress", data.hardware_address);
  writer.EndObject();
}

}  // namespace

std::string NowRfc3339() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string ClaimStatusApplyJson(const std::string& namespace_name, const std::string& name,
                                 const std::vector<AllocatedDeviceStatus>& devices,
                                 const std::string& now, Logger& log, ResourceApiVersion version) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  Field(writer, "apiVersion", GroupVersion(version));
  Field(writer, "kind", "ResourceClaim");
  writer.Key("metadata");
  writer.StartObject();
  Field(writer, "name", name);
  Field(writer, "namespace", namespace_name);
  writer.EndObject();
  writer.Key("status");
  writer.StartObject();
  writer.Key("devices");
  writer.StartArray();
  for (const auto& device : devices) {
    writer.StartObject();
    Field(writer, "driver", device.driver);
    Field(writer, "pool", device.pool);
    Field(writer, "device", device.device);
    if (!device.share_id.empty()) Field(writer, "shareID", device.share_id);
    if (!device.conditions.empty()) {
      writer.Key("conditions");
      writer.StartArray();
      for (std::size_t i = 0; i < device.conditions.size() && i < kMaxConditions; ++i)
        WriteCondition(writer, device.conditions[i], now);
      writer.EndArray();
      if (device.conditions.size() > kMaxConditions)
        log.Warning("claim status: too many conditions, only the first 8 are reported",
                    {{"device", device.device}});
    }
    if (device.network_data) {
      writer.Key("networkData");
      WriteNetworkData(writer, *device.network_data, device.device, log);
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  writer.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

ClaimStatusWriter::ClaimStatusWriter(ApiClient& client, std::string field_manager, Logger& log,
                                     ResourceApi* resource_api)
    : client_(client), field_manager_(std::move(field_manager)), log_(log), resource_api_(resource_api) {}

void ClaimStatusWriter::Apply(const std::string& namespace_name, const std::string& name,
                              const std::vector<AllocatedDeviceStatus>& devices,
                              std::stop_token stop) {
  const ResourceApiVersion version = ResourceApi::Of(resource_api_, stop);
  std::string body = ClaimStatusApplyJson(namespace_name, name, devices, NowRfc3339(), log_, version);
  client_.Apply(NamespacedPath(GroupVersionPath(version), namespace_name, "resourceclaims", name) + "/status",
                body, field_manager_, /*force=*/true, stop);
  log_.Verbose(1, "claim status applied",
               {{"claim", namespace_name + "/" + name}, {"devices", devices.size()}});
}

}  // namespace dranet::kube
