// The azure plugin: Azure Instance Metadata Service (IMDS) facts on every
// device, under azure.dra.net/ (the names and values DRANET publishes).
//
// Probe (init, no network): DMI sys_vendor "Microsoft Corporation" and the
// Azure chassis asset tag. IMDS is read on the first annotate, with one GET
// of /metadata/instance (compute and network together), a short deadline,
// header "Metadata: true", and kept for the process lifetime; a failure is
// logged and retried after a backoff while devices are published without
// the azure attributes.
#include <dranet/plugin.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "metadata_client.h"

namespace {

namespace common = dranet::plugins::common;
using dranet::sdk::AttrSink;
using dranet::sdk::DeviceView;
using dranet::sdk::Host;

constexpr const char* kAzureAssetTag = "7783-7084-3265-9085-8269-3286-77";
constexpr std::size_t kMaxImdsBody = 256 * 1024;

const dranet_config_key_t kAzureKeys[] = {
    {sizeof(dranet_config_key_t), "imds-endpoint", "http://169.254.169.254",
     "IMDS base URL (plain http://host[:port])"},
    {sizeof(dranet_config_key_t), "imds-timeout-ms", "1000", "deadline of one IMDS request, in ms"},
    {sizeof(dranet_config_key_t), "imds-api-version", "2025-11-11",
     "IMDS api-version (2025-11-11 reports interconnectGroupId/interconnectSubgroupId)"},
    {sizeof(dranet_config_key_t), "retry-backoff-ms", "5000",
     "first wait before retrying a failed IMDS read; doubles up to 5 minutes"},
    {0, nullptr, nullptr, nullptr}};

// The IMDS facts we publish.
struct AzureInstance {
  std::string vm_size, placement_group_id, interconnect_group_id, interconnect_subgroup_id;
  struct Nic {
    std::string mac;     // normalised (lower-case hex, no separators)
    std::string subnet;  // first IPv4 subnet as "address/prefix"; "" when none
  };
  std::vector<Nic> nics;
};

AzureInstance ParseInstance(const rapidjson::Document& doc, const std::string& url) {
  if (!doc.IsObject()) throw common::MetadataError("GET " + url + ": expected a JSON object");
  auto compute = doc.FindMember("compute");
  if (compute == doc.MemberEnd() || !compute->value.IsObject())
    throw common::MetadataError("GET " + url + ": no \"compute\" object in the answer");
  AzureInstance inst;
  inst.vm_size = common::JsonString(compute->value, "vmSize");
  inst.placement_group_id = common::JsonString(compute->value, "placementGroupId");
  inst.interconnect_group_id = common::JsonString(compute->value, "interconnectGroupId");
  inst.interconnect_subgroup_id = common::JsonString(compute->value, "interconnectSubgroupId");
  auto network = doc.FindMember("network");
  if (network == doc.MemberEnd() || !network->value.IsObject()) return inst;
  auto interfaces = network->value.FindMember("interface");
  if (interfaces == network->value.MemberEnd() || !interfaces->value.IsArray()) return inst;
  for (const auto& nic : interfaces->value.GetArray()) {
    AzureInstance::Nic out{common::NormalizeMac(common::JsonString(nic, "macAddress")), ""};
    if (nic.IsObject() && nic.HasMember("ipv4") && nic["ipv4"].IsObject() && nic["ipv4"].HasMember("subnet") &&
        nic["ipv4"]["subnet"].IsArray() && !nic["ipv4"]["subnet"].Empty()) {
      const auto& subnet = nic["ipv4"]["subnet"][0];
      std::string address = common::JsonString(subnet, "address"), prefix = common::JsonString(subnet, "prefix");
      if (!address.empty() && !prefix.empty()) out.subnet = address + "/" + prefix;
    }
    if (!out.mac.empty()) inst.nics.push_back(std::move(out));
  }
  return inst;
}

class AzurePlugin {
 public:
  static constexpr const char* kName = "azure";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription =
      "Azure IMDS facts (vmSize, placementGroupId, interconnect group) on every device";
  static constexpr const dranet_config_key_t* kConfigKeys = kAzureKeys;

  explicit AzurePlugin(const Host& host)
      : host_(host),
        endpoint_(common::ConfigEndpoint(host, "imds-endpoint", "http://169.254.169.254")),
        timeout_ms_(common::ConfigMs(host, "imds-timeout-ms", 1000)),
        api_version_(host.Config("imds-api-version", "2025-11-11")),
        instance_(std::chrono::milliseconds(common::ConfigMs(host, "retry-backoff-ms", 5000)),
                  std::chrono::minutes(5)) {
    std::string vendor = common::ReadDmi(host, "sys_vendor");
    std::string asset_tag = common::ReadDmi(host, "chassis_asset_tag");
    if (vendor != "Microsoft Corporation" || asset_tag != kAzureAssetTag)
      throw dranet::sdk::NotApplicable("not an Azure VM (DMI sys_vendor \"" + vendor + "\", chassis_asset_tag \"" +
                                       asset_tag + "\")");
    if (timeout_ms_ == 0) timeout_ms_ = 1000;
  }

  void Annotate(const DeviceView& device, AttrSink& sink) {
    const AzureInstance* inst = Instance();
    if (inst == nullptr) return;
    auto add = [&](const char* name, const std::string& value) {
      if (!value.empty()) sink.String(std::string("azure.dra.net/") + name, value);
    };
    add("vmSize", inst->vm_size);
    add("placementGroupId", inst->placement_group_id);
    add("interconnectGroupId", inst->interconnect_group_id);
    add("interconnectSubgroupId", inst->interconnect_subgroup_id);
    std::string mac = common::NormalizeMac(common::DeviceMac(device));
    if (mac.empty()) return;
    for (const auto& nic : inst->nics) {
      if (nic.mac != mac) continue;
      add("subnet", nic.subnet);
      break;
    }
  }

 private:
  const AzureInstance* Instance() {
    return instance_.Get(
        [&] {
          std::string url = endpoint_ + "/metadata/instance?api-version=" + api_version_ + "&format=json";
          return ParseInstance(common::FetchJson(host_, url, {"Metadata: true"}, timeout_ms_, kMaxImdsBody), url);
        },
        [&](const std::string& why, std::chrono::milliseconds retry_in) {
          host_.Warn("Azure IMDS unavailable, devices are published without azure.dra.net attributes: " + why +
                     " (retry in " + std::to_string(retry_in.count()) + " ms)");
        },
        [&](const AzureInstance& inst) {
          host_.Info("Azure IMDS: vmSize=" + inst.vm_size + " placementGroupId=" + inst.placement_group_id +
                     " interconnectGroupId=" + inst.interconnect_group_id +
                     " interconnectSubgroupId=" + inst.interconnect_subgroup_id + " nics=" +
                     std::to_string(inst.nics.size()));
        });
  }

  Host host_;
  std::string endpoint_;
  uint32_t timeout_ms_;
  std::string api_version_;
  common::LazyMetadata<AzureInstance> instance_;
};

}  // namespace

DRANET_CXX_PLUGIN(AzurePlugin)
