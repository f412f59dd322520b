// The azure plugin: Azure Instance Metadata Service (IMDS) facts on every
// device, under azure.dra.net/ (the names and values DRANET publishes), and
// at prepare DRANET's per-NIC policy routing for secondary NICs moved into a
// pod (policy_routing.h).
//
// Probe (init, no network): DMI sys_vendor "Microsoft Corporation" and the
// Azure chassis asset tag (see cloud_detection.h). IMDS is read on the first annotate, with one GET
// of /metadata/instance (compute and network together), a short deadline,
// header "Metadata: true", and kept for the process lifetime; a failure is
// logged and retried after a backoff while devices are published without
// the azure attributes. Inject uses the same cached answer (or tries the
// read itself); without it, the claim is prepared without routes.
#include <dranet/plugin.hpp>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cloud_detection.h"
#include "policy_routing.h"

namespace {

namespace common = dranet::plugins::common;
namespace azure = dranet::plugins::azure;
using dranet::sdk::AttrSink;
using dranet::sdk::DeviceView;
using dranet::sdk::EditSink;
using dranet::sdk::Host;
using dranet::sdk::InjectRequest;

constexpr const char* kAzureAssetTag = "7783-7084-3265-9085-8269-3286-77";
constexpr std::size_t kMaxImdsBody = 256 * 1024;
constexpr std::size_t kMaxIpv6RouteText = 1 << 20;  // /proc/net/ipv6_route, ~150 bytes a route

const dranet_config_key_t kAzureKeys[] = {
    {sizeof(dranet_config_key_t), "imds-endpoint", "http://169.254.169.254",
     "IMDS base URL (plain http://host[:port])"},
    {sizeof(dranet_config_key_t), "imds-timeout-ms", "1000", "deadline of one IMDS request, in ms"},
    {sizeof(dranet_config_key_t), "imds-api-version", "2025-11-11",
     "IMDS api-version (2025-11-11 reports interconnectGroupId/interconnectSubgroupId)"},
    {sizeof(dranet_config_key_t), "retry-backoff-ms", "5000",
     "first wait before retrying a failed IMDS read; doubles up to 5 minutes"},
    DRANET_CLOUD_DETECTION_KEYS,
    {0, nullptr, nullptr, nullptr}};

// The IMDS facts we publish.
struct AzureInstance {
  std::string vm_size, placement_group_id, interconnect_group_id, interconnect_subgroup_id;
  struct Nic {
    azure::ImdsNic imds;  // index in IMDS's list, normalised MAC, subnet, IPv6
    std::string subnet;   // first IPv4 subnet as "address/prefix"; "" when none
  };
  std::vector<Nic> nics;  // those with a MAC, in IMDS order

  const Nic* FindByMac(const std::string& normalised_mac) const {
    for (const auto& nic : nics)
      if (nic.imds.mac == normalised_mac) return &nic;
    return nullptr;
  }
};

// nic[family][list][0] when it is there ("ipv4"/"subnet", "ipv6"/"ipAddress").
const rapidjson::Value* FirstOf(const rapidjson::Value& nic, const char* family, const char* list) {
  if (!nic.IsObject()) return nullptr;
  auto f = nic.FindMember(family);
  if (f == nic.MemberEnd() || !f->value.IsObject()) return nullptr;
  auto l = f->value.FindMember(list);
  if (l == f->value.MemberEnd() || !l->value.IsArray() || l->value.Empty()) return nullptr;
  return &l->value[0];
}

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
  std::size_t index = 0;
  for (const auto& nic : interfaces->value.GetArray()) {
    AzureInstance::Nic out;
    out.imds.index = index++;  // the list position picks the table, as in DRANET
    out.imds.mac = common::NormalizeMac(common::JsonString(nic, "macAddress"));
    if (const auto* subnet = FirstOf(nic, "ipv4", "subnet")) {
      std::string address = common::JsonString(*subnet, "address"), prefix = common::JsonString(*subnet, "prefix");
      if (!address.empty() && !prefix.empty()) {
        out.subnet = address + "/" + prefix;
        out.imds.subnet_address = address;
        out.imds.subnet_prefix = prefix;
      }
    }
    if (const auto* ipv6 = FirstOf(nic, "ipv6", "ipAddress")) out.imds.ipv6 = common::JsonString(*ipv6, "privateIpAddress");
    if (!out.imds.mac.empty()) inst.nics.push_back(std::move(out));
  }
  return inst;
}

class AzurePlugin {
 public:
  static constexpr const char* kName = "azure";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription =
      "Azure IMDS facts (vmSize, placementGroupId, interconnect group) on every device; "
      "per-NIC policy routing for secondary NICs at prepare";
  static constexpr const dranet_config_key_t* kConfigKeys = kAzureKeys;

  explicit AzurePlugin(const Host& host)
      : host_(host),
        api_version_(host.Config("imds-api-version", "2025-11-11")),
        imds_(host, {"an Azure VM", "Azure IMDS", "imds-endpoint", "http://169.254.169.254", "imds-timeout-ms"},
              common::ReadDmi(host, "sys_vendor") == "Microsoft Corporation" &&
                  common::ReadDmi(host, "chassis_asset_tag") == kAzureAssetTag,
              "sys_vendor \"" + common::ReadDmi(host, "sys_vendor") + "\", chassis_asset_tag \"" +
                  common::ReadDmi(host, "chassis_asset_tag") + "\"") {}

  void Annotate(const DeviceView& device, AttrSink& sink) {
    const AzureInstance* inst = Instance("devices are published without azure.dra.net attributes");
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
    if (const auto* nic = inst->FindByMac(mac)) add("subnet", nic->subnet);
  }

  // DRANET's per-NIC policy routing: each request device with a netdev
  // that is a secondary interface in IMDS (matched by MAC) gets its own
  // table, a default route via its subnet's gateway and a rule from its
  // subnet (and the IPv6 pair when it has a global address). Never fails
  // the claim for metadata trouble: without IMDS the claim simply gets no
  // routes (logged).
  void Inject(const InjectRequest& request, EditSink& sink) {
    std::vector<DeviceView> netdevs;
    for (const auto& device : request.devices())
      if (!device.if_name().empty()) netdevs.push_back(device);
    if (netdevs.empty()) return;  // IB-only claims: nothing to route, no IMDS read
    const std::string claim = request.claim_namespace() + "/" + request.claim_name();
    if (!sink.SupportsRoutes()) {
      host_.Warn("claim " + claim + ": the host takes no routes (plugin ABI 1.0); no Azure per-NIC policy routing");
      return;
    }
    bool reported = false;
    const AzureInstance* inst =
        Instance("claim " + claim + " is prepared without Azure per-NIC policy routes", &reported);
    if (inst == nullptr) {
      if (!reported)
        host_.Warn("Azure IMDS unavailable (an earlier read failed; retry pending): claim " + claim +
                   " is prepared without Azure per-NIC policy routes");
      return;
    }
    std::optional<std::string> ipv6_routes;  // <procfs_root>/net/ipv6_route, read on first need
    for (const auto& device : netdevs) {
      std::string mac = common::NormalizeMac(common::DeviceMac(device));
      const AzureInstance::Nic* nic = mac.empty() ? nullptr : inst->FindByMac(mac);
      if (nic == nullptr) {
        host_.Debug("claim " + claim + ": device " + device.name() + " (" + device.if_name() + ", MAC " +
                    (mac.empty() ? "unknown" : mac) + ") is not an IMDS network interface; no policy routing");
        continue;
      }
      std::string ipv6_gateway;
      if (azure::IsGlobalIpv6(nic->imds.ipv6)) {
        if (!ipv6_routes) ipv6_routes = ReadIpv6Routes();
        ipv6_gateway = azure::Ipv6DefaultGateway(*ipv6_routes, device.if_name());
      }
      azure::NicRouting plan = azure::PlanNicRouting(nic->imds, ipv6_gateway);
      std::string skipped;
      for (const auto& why : plan.skipped) skipped += (skipped.empty() ? "" : "; ") + why;
      if (plan.routes.empty() && plan.rules.empty()) {
        host_.Info("claim " + claim + ": device " + device.name() + " (" + device.if_name() +
                   ", IMDS interface " + std::to_string(nic->imds.index) + "): no policy routing: " + skipped);
        continue;
      }
      std::string added;
      for (const auto& rule : plan.rules) {
        sink.AddRule(device.name(), rule);
        added += " rule from " + rule.source + " lookup " + std::to_string(rule.table) + ";";
      }
      for (const auto& route : plan.routes) {
        sink.AddRoute(device.name(), route);
        added += " route " + route.destination + " via " + route.gateway + " table " + std::to_string(route.table) + ";";
      }
      host_.Info("claim " + claim + ": device " + device.name() + " (" + device.if_name() + ", IMDS interface " +
                 std::to_string(nic->imds.index) + "): Azure policy routing:" + added +
                 (skipped.empty() ? "" : " skipped: " + skipped));
    }
  }

 private:
  std::string ReadIpv6Routes() const {
    std::ifstream in(host_.procfs_root() + "/net/ipv6_route");
    if (!in) return "";
    std::string text(kMaxIpv6RouteText, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
  }

  // The cached IMDS answer, or nullptr. `consequence` completes the warning
  // logged when this call's read fails; *reported says whether it was.
  const AzureInstance* Instance(const std::string& consequence, bool* reported = nullptr) {
    return imds_.Get(
        [&] {
          std::string url = imds_.endpoint() + "/metadata/instance?api-version=" + api_version_ + "&format=json";
          return ParseInstance(common::FetchJson(host_, url, {"Metadata: true"}, imds_.deadline(), kMaxImdsBody), url);
        },
        consequence,
        [&](const AzureInstance& inst) {
          host_.Info("Azure IMDS: vmSize=" + inst.vm_size + " placementGroupId=" + inst.placement_group_id +
                     " interconnectGroupId=" + inst.interconnect_group_id +
                     " interconnectSubgroupId=" + inst.interconnect_subgroup_id + " nics=" +
                     std::to_string(inst.nics.size()));
        },
        reported);
  }

  Host host_;
  std::string api_version_;
  common::CloudMetadata<AzureInstance> imds_;
};

}  // namespace

DRANET_CXX_PLUGIN(AzurePlugin)
