// The aws plugin: EC2 facts from the instance metadata service (IMDSv2,
// session token first) under aws.dra.net/, and on Trainium instances the
// EFA device groups DRANET publishes under resource.aws.com/ (the
// devicegroupN_id attributes, from sysfs and the instance type alone).
//
// Probe (init, no network): DMI as cloud_detection.h describes, sys_vendor
// or board_vendor "Amazon EC2" (Nitro) or a bios_version naming amazon (Xen).
// IMDS is read on the first annotate — PUT /latest/api/token, then the
// identity document and the placement facts with that token — kept for the
// process lifetime; a failure is logged and retried after a backoff while
// devices are published without the aws.dra.net attributes.
#include <dranet/plugin.hpp>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cloud_detection.h"
#include "neuron_efa_groups.h"

namespace {

namespace common = dranet::plugins::common;
namespace aws = dranet::plugins::aws;
using dranet::sdk::AttrSink;
using dranet::sdk::DeviceView;
using dranet::sdk::Host;

constexpr std::size_t kMaxImdsBody = 64 * 1024;
constexpr std::size_t kMaxAttributeValue = 64;

const dranet_config_key_t kAwsKeys[] = {
    {sizeof(dranet_config_key_t), "imds-endpoint", "http://169.254.169.254",
     "IMDS base URL (plain http://host[:port])"},
    {sizeof(dranet_config_key_t), "imds-timeout-ms", "1000", "deadline of one IMDS request, in ms"},
    {sizeof(dranet_config_key_t), "retry-backoff-ms", "5000",
     "first wait before retrying a failed IMDS read; doubles up to 5 minutes"},
    DRANET_CLOUD_DETECTION_KEYS,
    {0, nullptr, nullptr, nullptr}};

struct Ec2Instance {
  std::string instance_type, region, availability_zone;  // identity document
  std::string availability_zone_id, placement_group;     // meta-data/placement; "" when not reported
  std::optional<int64_t> partition_number;
};

// The first 16 hex digits of SHA-256 over `text` (the device-group id form).
std::string Sha256Prefix16(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1 || length < 8)
    throw dranet::sdk::Error(DRANET_ERR_INTERNAL, "SHA-256 failed");
  std::string out;
  char hex[3];
  for (unsigned int i = 0; i < 8; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    out += hex;
  }
  return out;
}

constexpr const char* kAwsDomains[] = {"resource.aws.com", nullptr};

class AwsPlugin {
 public:
  static constexpr const char* kName = "aws";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription =
      "EC2 instance type and placement (IMDSv2) and the EFA device groups of Trainium instances";
  static constexpr const dranet_config_key_t* kConfigKeys = kAwsKeys;
  static constexpr const char* const* kAttributeDomains = kAwsDomains;
  static constexpr uint32_t kMinHostAbi = DRANET_ABI_VERSION(1, 4);  // PUT for the IMDSv2 token

  explicit AwsPlugin(const Host& host)
      : host_(host),
        product_(common::ReadDmi(host, "product_name")),
        imds_(host, {"AWS", "AWS IMDS", "imds-endpoint", "http://169.254.169.254", "imds-timeout-ms"}, OnEc2(host),
              DmiSummary(host)) {
    // DMI product_name is the instance type on Nitro; the device-group
    // tables are keyed by it (as the Neuron lookup reads it).
    groups_ = aws::NeuronEfaGroupsFor(product_);
    if (groups_ != nullptr)
      host.Info("EFA device groups for " + product_ + " (" + std::to_string(groups_->efa_of_neuron.size()) +
                " Neuron devices)");
  }

  void Annotate(const DeviceView& device, AttrSink& sink) {
    AddDeviceGroups(device, sink);
    const Ec2Instance* inst = Instance();
    if (inst == nullptr) return;
    sink.String("aws.dra.net/instanceType", inst->instance_type);
    sink.String("aws.dra.net/region", inst->region);
    sink.String("aws.dra.net/availabilityZone", inst->availability_zone);
    if (!inst->availability_zone_id.empty()) sink.String("aws.dra.net/availabilityZoneId", inst->availability_zone_id);
    if (!inst->placement_group.empty()) sink.String("aws.dra.net/placementGroup", inst->placement_group);
    if (inst->partition_number) sink.Int("aws.dra.net/partitionNumber", *inst->partition_number);
  }

 private:
  static bool OnEc2(const Host& host) {
    std::string bios = common::ReadDmi(host, "bios_version");
    std::transform(bios.begin(), bios.end(), bios.begin(), [](unsigned char c) { return std::tolower(c); });
    return common::ReadDmi(host, "sys_vendor") == "Amazon EC2" || common::ReadDmi(host, "board_vendor") == "Amazon EC2" ||
           bios.find("amazon") != std::string::npos;
  }
  static std::string DmiSummary(const Host& host) {
    return "sys_vendor \"" + common::ReadDmi(host, "sys_vendor") + "\", bios_version \"" +
           common::ReadDmi(host, "bios_version") + "\"";
  }

  // resource.aws.com/devicegroup{1,4,8,16}_id for an EFA function (driver
  // efa) of a Trainium instance: its own PCI address, then a hash of the
  // EFA addresses serving each aligned group of 4, 8 and 16 Neuron devices.
  void AddDeviceGroups(const DeviceView& device, AttrSink& sink) {
    if (groups_ == nullptr || device.pci_address().empty() || device.driver() != "efa") return;
    const std::string bdf = device.pci_address();
    const auto& efa = groups_->efa_of_neuron;
    auto first = std::find(efa.begin(), efa.end(), bdf);
    if (first == efa.end()) {
      host_.Warn("EFA " + bdf + " is not in the " + product_ + " Neuron map; no device groups");
      return;
    }
    const std::size_t neuron = static_cast<std::size_t>(first - efa.begin());
    sink.String("resource.aws.com/devicegroup1_id", bdf);
    for (std::size_t size : {4u, 8u, 16u}) {
      std::set<std::string> members;  // sorted, each once
      for (std::size_t i = neuron / size * size; i < (neuron / size + 1) * size && i < efa.size(); ++i)
        members.insert(efa[i]);
      std::string joined;
      for (const auto& m : members) joined += (joined.empty() ? "" : ",") + m;
      sink.String("resource.aws.com/devicegroup" + std::to_string(size) + "_id", Sha256Prefix16(joined));
    }
  }

  std::string Get(const std::string& path, const std::string& token, bool optional) {
    const std::string url = imds_.endpoint() + path;
    auto r = host_.HttpRequest("GET", url, {"X-aws-ec2-metadata-token: " + token}, imds_.deadline(), kMaxImdsBody);
    if (optional && r.status == 404) return "";
    if (r.status != 200) throw common::MetadataError("GET " + url + ": HTTP " + std::to_string(r.status));
    return common::TrimSpace(r.body);
  }

  Ec2Instance Fetch() {
    Ec2Instance inst;
    const std::string t = common::FetchSessionToken(host_, imds_.endpoint() + "/latest/api/token",
                                                    "X-aws-ec2-metadata-token-ttl-seconds: 21600", imds_.deadline(),
                                                    "IMDS disabled, or the hop limit is too low for a pod");
    try {
      const std::string path = "/latest/dynamic/instance-identity/document";
      std::string body = Get(path, t, false);
      rapidjson::Document doc;
      doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
      if (doc.HasParseError() || !doc.IsObject())
        throw common::MetadataError("GET " + imds_.endpoint() + path + ": not a JSON object (" +
                                    (doc.HasParseError() ? rapidjson::GetParseError_En(doc.GetParseError()) : "wrong type") +
                                    ")");
      inst.instance_type = common::JsonString(doc, "instanceType");
      inst.region = common::JsonString(doc, "region");
      inst.availability_zone = common::JsonString(doc, "availabilityZone");
      if (inst.instance_type.empty() || inst.region.empty() || inst.availability_zone.empty())
        throw common::MetadataError("GET " + imds_.endpoint() + path +
                                    ": instanceType, region or availabilityZone missing");
      for (std::string* s : {&inst.instance_type, &inst.region, &inst.availability_zone})
        if (s->size() > kMaxAttributeValue)
          throw common::MetadataError("GET " + imds_.endpoint() + path + ": value too long");
      inst.availability_zone_id = Get("/latest/meta-data/placement/availability-zone-id", t, true);
      inst.placement_group = Get("/latest/meta-data/placement/group-name", t, true);
      std::string partition = Get("/latest/meta-data/placement/partition-number", t, true);
      if (!partition.empty() && partition.size() <= 4 &&
          std::all_of(partition.begin(), partition.end(), [](unsigned char c) { return std::isdigit(c); }))
        inst.partition_number = std::stoll(partition);
      for (std::string* s : {&inst.availability_zone_id, &inst.placement_group})
        if (s->size() > kMaxAttributeValue) {
          host_.Warn("IMDS value \"" + *s + "\" is longer than 64 bytes; not published");
          s->clear();
        }
    } catch (const dranet::sdk::Error& e) {
      throw common::MetadataError(e.what());
    }
    return inst;
  }

  const Ec2Instance* Instance() {
    return imds_.Get([&] { return Fetch(); }, "devices are published without aws.dra.net attributes",
                     [&](const Ec2Instance& inst) {
                       host_.Info("AWS IMDS: instanceType=" + inst.instance_type + " region=" + inst.region +
                                  " zone=" + inst.availability_zone + " zoneId=" + inst.availability_zone_id +
                                  " placementGroup=" + inst.placement_group);
                     });
  }

  Host host_;
  std::string product_;
  common::CloudMetadata<Ec2Instance> imds_;
  const aws::NeuronEfaGroups* groups_ = nullptr;
};

}  // namespace

DRANET_CXX_PLUGIN(AwsPlugin)
