// The oci plugin: OCI host topology under oke.dra.net/ (the names and values
// DRANET publishes on OKE): hpcIslandId, networkBlockId, localBlockId,
// rackId and gpuMemoryFabricId on every device, from IMDS v2's
// GET /opc/v2/host/ ("Authorization: Bearer Oracle").
//
// Probe (init, no network): DMI chassis_asset_tag "OracleCloud.com" (see
// cloud_detection.h). The host document is read on the first annotate with
// a short deadline and kept for the process lifetime; a failure is logged
// and retried after a backoff while devices are published without the
// oke.dra.net attributes.
//
// Values as DRANET derives them: with rdmaTopologyData, each customer* OCID
// is shortened to the part after its last '.' (its last 60 characters at
// most), rackId stays the host's; without it (shapes or tenancies without
// RDMA topology data) only the host's networkBlockId and rackId.
#include <dranet/plugin.hpp>

#include <string>
#include <utility>

#include "cloud_detection.h"

namespace {

namespace common = dranet::plugins::common;
using dranet::sdk::AttrSink;
using dranet::sdk::DeviceView;
using dranet::sdk::Host;

constexpr std::size_t kMaxImdsBody = 256 * 1024;
constexpr std::size_t kMaxAttributeValue = 64;
constexpr std::size_t kMaxOcidSuffix = 60;

const dranet_config_key_t kOciKeys[] = {
    {sizeof(dranet_config_key_t), "imds-endpoint", "http://169.254.169.254",
     "IMDS base URL (plain http://host[:port]); /opc/v2 is appended"},
    {sizeof(dranet_config_key_t), "imds-timeout-ms", "1000", "deadline of one IMDS request, in ms"},
    {sizeof(dranet_config_key_t), "retry-backoff-ms", "5000",
     "first wait before retrying a failed IMDS read; doubles up to 5 minutes"},
    DRANET_CLOUD_DETECTION_KEYS,
    {0, nullptr, nullptr, nullptr}};

struct OciHost {
  std::string hpc_island_id, network_block_id, local_block_id, rack_id, gpu_memory_fabric_id;
  bool topology_data = false;
};

// "ocid1.hpcisland.oc1.iad.anuwc…" -> "anuwc…" (last 60 characters at most);
// "" stays "". Throws MetadataError for a value that is not an OCID.
std::string OcidSuffix(const std::string& value, const char* field) {
  if (value.empty()) return "";
  const std::size_t dot = value.rfind('.');
  if (value.find("ocid") == std::string::npos || dot == std::string::npos)
    throw common::MetadataError(std::string("rdmaTopologyData.") + field + " \"" + value + "\" is not an OCID");
  std::string suffix = value.substr(dot + 1);
  if (suffix.size() > kMaxOcidSuffix) suffix = suffix.substr(suffix.size() - kMaxOcidSuffix);
  return suffix;
}

OciHost ParseHost(const rapidjson::Document& doc, const std::string& url) {
  if (!doc.IsObject()) throw common::MetadataError("GET " + url + ": expected a JSON object");
  OciHost host;
  host.rack_id = common::JsonString(doc, "rackId");
  auto topology = doc.FindMember("rdmaTopologyData");
  if (topology == doc.MemberEnd() || !topology->value.IsObject()) {
    host.network_block_id = common::JsonString(doc, "networkBlockId");
    return host;
  }
  const auto& t = topology->value;
  host.topology_data = true;
  try {
    host.hpc_island_id = OcidSuffix(common::JsonString(t, "customerHPCIslandId"), "customerHPCIslandId");
    host.network_block_id = OcidSuffix(common::JsonString(t, "customerNetworkBlock"), "customerNetworkBlock");
    host.local_block_id = OcidSuffix(common::JsonString(t, "customerLocalBlock"), "customerLocalBlock");
    host.gpu_memory_fabric_id =
        OcidSuffix(common::JsonString(t, "customerGpuMemoryFabric"), "customerGpuMemoryFabric");
  } catch (const common::MetadataError& e) {
    throw common::MetadataError("GET " + url + ": " + e.what());
  }
  return host;
}

constexpr const char* kOciDomains[] = {"oke.dra.net", nullptr};

class OciPlugin {
 public:
  static constexpr const char* kName = "oci";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription =
      "OCI host topology (hpcIslandId, networkBlockId, localBlockId, rackId, gpuMemoryFabricId) from IMDS v2";
  static constexpr const dranet_config_key_t* kConfigKeys = kOciKeys;
  // DRANET's OKE attributes live under oke.dra.net, not oci.dra.net.
  static constexpr const char* const* kAttributeDomains = kOciDomains;

  explicit OciPlugin(const Host& host)
      : host_(host),
        imds_(host, {"OCI", "OCI IMDS", "imds-endpoint", "http://169.254.169.254", "imds-timeout-ms"},
              common::ReadDmi(host, "chassis_asset_tag") == "OracleCloud.com",
              "chassis_asset_tag \"" + common::ReadDmi(host, "chassis_asset_tag") + "\"") {}

  void Annotate(const DeviceView&, AttrSink& sink) {
    const OciHost* h = HostFacts();
    if (h == nullptr) return;
    for (const auto& [name, value] : {std::pair{"oke.dra.net/hpcIslandId", &h->hpc_island_id},
                                      std::pair{"oke.dra.net/networkBlockId", &h->network_block_id},
                                      std::pair{"oke.dra.net/localBlockId", &h->local_block_id},
                                      std::pair{"oke.dra.net/rackId", &h->rack_id},
                                      std::pair{"oke.dra.net/gpuMemoryFabricId", &h->gpu_memory_fabric_id}})
      if (!value->empty() && value->size() <= kMaxAttributeValue) sink.String(name, *value);
  }

 private:
  OciHost Fetch() {
    const std::string url = imds_.endpoint() + "/opc/v2/host/";
    return ParseHost(common::FetchJson(host_, url, {"Authorization: Bearer Oracle"}, imds_.deadline(), kMaxImdsBody),
                     url);
  }

  const OciHost* HostFacts() {
    return imds_.Get(
        [&] { return Fetch(); }, "devices are published without oke.dra.net attributes", [&](const OciHost& h) {
          host_.Info("OCI IMDS host: hpcIslandId=" + h.hpc_island_id + " networkBlockId=" + h.network_block_id +
                     " localBlockId=" + h.local_block_id + " rackId=" + h.rack_id +
                     " gpuMemoryFabricId=" + h.gpu_memory_fabric_id);
          if (!h.topology_data)
            host_.Info("OCI IMDS host has no rdmaTopologyData: only networkBlockId and rackId are published "
                       "(enable topology data for the tenancy for hpcIslandId and localBlockId)");
          if (h.rack_id.size() > kMaxAttributeValue || h.network_block_id.size() > kMaxAttributeValue)
            host_.Warn("OCI rackId or networkBlockId is longer than 64 bytes and is not published");
        });
  }

  Host host_;
  common::CloudMetadata<OciHost> imds_;
};

}  // namespace

DRANET_CXX_PLUGIN(OciPlugin)
