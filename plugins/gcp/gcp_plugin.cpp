// The gcp plugin: GCE metadata facts under gce.dra.net/ (the names and
// values DRANET publishes), plus gce.dra.net/gpuIndex from the GKE naming
// contract for RDMA NICs (netdev "gpu<N>rdma0" is wired to GPU N).
//
// Probe (init, no network): DMI product_name "Google Compute Engine" (or
// "Google…", or sys_vendor "Google"). The metadata server is read on the
// first annotate — machine-type, network-interfaces (recursive JSON) and the
// optional attributes/physical_host — with header "Metadata-Flavor: Google"
// and a short deadline, and kept for the process lifetime; a failure is
// logged and retried after a backoff.
#include <dranet/plugin.hpp>

#include <array>
#include <cctype>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cloud_detection.h"

namespace {

namespace common = dranet::plugins::common;
using dranet::sdk::AttrSink;
using dranet::sdk::DeviceView;
using dranet::sdk::Host;

constexpr std::size_t kMaxMetadataBody = 256 * 1024;
constexpr std::size_t kMaxAttributeValue = 64;  // resource.k8s.io/v1 string attribute limit

const dranet_config_key_t kGcpKeys[] = {
    {sizeof(dranet_config_key_t), "metadata-endpoint", "http://169.254.169.254",
     "GCE metadata server base URL (plain http://host[:port])"},
    {sizeof(dranet_config_key_t), "metadata-timeout-ms", "1000", "deadline of one metadata request, in ms"},
    {sizeof(dranet_config_key_t), "retry-backoff-ms", "5000",
     "first wait before retrying a failed metadata read; doubles up to 5 minutes"},
    DRANET_CLOUD_DETECTION_KEYS,
    {0, nullptr, nullptr, nullptr}};

struct GceInterface {
  std::string mac;  // as the metadata server writes it ("42:01:0a:80:00:46")
  std::string network;  // "projects/<number>/networks/<name>"
  std::vector<std::string> ip_aliases;
};

struct GceInstance {
  std::string machine_type;  // basename of projects/<n>/machineTypes/<type>
  std::string physical_host; // "/<block>/<subBlock>/<host>"; "" when not reported
  std::vector<GceInterface> interfaces;
};

std::vector<GceInterface> ParseInterfaces(const rapidjson::Document& doc, const std::string& url) {
  if (!doc.IsArray()) throw common::MetadataError("GET " + url + ": expected a JSON array");
  std::vector<GceInterface> out;
  for (const auto& nic : doc.GetArray()) {
    if (!nic.IsObject()) continue;
    GceInterface i{common::JsonString(nic, "mac"), common::JsonString(nic, "network"), {}};
    auto aliases = nic.FindMember("ipAliases");
    if (aliases != nic.MemberEnd() && aliases->value.IsArray())
      for (const auto& a : aliases->value.GetArray())
        if (a.IsString()) i.ip_aliases.emplace_back(a.GetString(), a.GetStringLength());
    out.push_back(std::move(i));
  }
  return out;
}

// "projects/%d/networks/%s" as DRANET reads it: the project number and the
// rest of the string up to the first blank.
bool ParseNetwork(const std::string& network, int64_t& project_out, std::string& name_out) {
  const std::string prefix = "projects/";
  if (network.compare(0, prefix.size(), prefix) != 0) return false;
  std::size_t pos = prefix.size(), digits = pos;
  while (digits < network.size() && std::isdigit(static_cast<unsigned char>(network[digits]))) ++digits;
  const std::string middle = "/networks/";
  if (digits == pos || digits - pos > 18 || network.compare(digits, middle.size(), middle) != 0) return false;
  std::string name = network.substr(digits + middle.size());
  name = name.substr(0, name.find_first_of(" \t\n"));
  if (name.empty()) return false;
  project_out = std::stoll(network.substr(pos, digits - pos));
  name_out = name;
  return true;
}

// Comma-joined aliases, dropping whole entries that would pass the 64-byte limit.
std::string JoinAliases(const std::vector<std::string>& aliases, bool& truncated) {
  std::string out;
  truncated = false;
  for (const auto& a : aliases) {
    std::size_t extra = a.size() + (out.empty() ? 0 : 1);
    if (out.size() + extra > kMaxAttributeValue) {
      truncated = true;
      break;
    }
    out += (out.empty() ? "" : ",") + a;
  }
  return out;
}

// "/<block>/<subBlock>/<host>" split as DRANET does (leading '/' optional,
// the host part keeps any further '/'); nullopt when there are fewer parts.
std::optional<std::array<std::string, 3>> SplitPhysicalHost(const std::string& physical_host) {
  std::string rest = !physical_host.empty() && physical_host[0] == '/' ? physical_host.substr(1) : physical_host;
  std::size_t first = rest.find('/');
  std::size_t second = first == std::string::npos ? std::string::npos : rest.find('/', first + 1);
  if (second == std::string::npos) return std::nullopt;
  return std::array<std::string, 3>{rest.substr(0, first), rest.substr(first + 1, second - first - 1),
                                    rest.substr(second + 1)};
}

// N from "gpu<N>rdma0" (GKE's name for the RDMA NIC wired to GPU N).
std::optional<int64_t> GpuIndexFromIfName(const std::string& if_name) {
  const std::string head = "gpu", tail = "rdma0";
  if (if_name.size() <= head.size() + tail.size() || if_name.compare(0, head.size(), head) != 0 ||
      if_name.compare(if_name.size() - tail.size(), tail.size(), tail) != 0)
    return std::nullopt;
  std::string digits = if_name.substr(head.size(), if_name.size() - head.size() - tail.size());
  if (digits.size() > 4) return std::nullopt;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return std::stoll(digits);
}

// DRANET publishes GCE facts under gce.dra.net, not under the plugin's own
// gcp.dra.net: the plugin declares that domain (ABI 1.3).
constexpr const char* kGcpDomains[] = {"gce.dra.net", nullptr};

class GcpPlugin {
 public:
  static constexpr const char* kName = "gcp";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription =
      "GCE metadata facts (machineType, network, ipAliases, block/subBlock/host) and gpuIndex from gpuNrdma0";
  static constexpr const dranet_config_key_t* kConfigKeys = kGcpKeys;
  static constexpr const char* const* kAttributeDomains = kGcpDomains;

  explicit GcpPlugin(const Host& host)
      : host_(host),
        metadata_(host,
                  {"a GCE VM", "GCE metadata", "metadata-endpoint", "http://169.254.169.254", "metadata-timeout-ms"},
                  common::ReadDmi(host, "product_name").rfind("Google", 0) == 0 ||
                      common::ReadDmi(host, "sys_vendor") == "Google",
                  "product_name \"" + common::ReadDmi(host, "product_name") + "\", sys_vendor \"" +
                      common::ReadDmi(host, "sys_vendor") + "\"") {}

  void Annotate(const DeviceView& device, AttrSink& sink) {
    // First: on a node without DMI this read is the probe that decides.
    const GceInstance* inst = Instance();
    if (metadata_.off()) return;
    if (auto index = GpuIndexFromIfName(device.if_name())) sink.Int("gce.dra.net/gpuIndex", *index);
    if (inst == nullptr) return;
    sink.String("gce.dra.net/machineType", inst->machine_type);
    AddTopology(*inst, sink);
    AddNetwork(*inst, device, sink);
  }

 private:
  void AddTopology(const GceInstance& inst, AttrSink& sink) {
    auto parts = SplitPhysicalHost(inst.physical_host);
    if (!parts) return;  // logged once when fetched
    sink.String("gce.dra.net/block", (*parts)[0]);
    sink.String("gce.dra.net/subBlock", (*parts)[1]);
    sink.String("gce.dra.net/host", (*parts)[2]);
  }

  void AddNetwork(const GceInstance& inst, const DeviceView& device, AttrSink& sink) {
    std::string mac = common::DeviceMac(device);
    if (mac.empty()) return;
    for (const auto& nic : inst.interfaces) {
      if (common::NormalizeMac(nic.mac) != common::NormalizeMac(mac)) continue;
      bool truncated = false;
      std::string aliases = JoinAliases(nic.ip_aliases, truncated);
      if (!aliases.empty()) sink.String("gce.dra.net/ipAliases", aliases);
      if (truncated)
        host_.Warn("gce.dra.net/ipAliases of " + device.name() + " truncated to 64 bytes (whole entries)");
      int64_t project = 0;
      std::string name;
      if (!ParseNetwork(nic.network, project, name)) {
        host_.Warn("GCE network \"" + nic.network + "\" of " + device.name() +
                   " is not projects/<number>/networks/<name>; networkName/networkProjectNumber omitted");
        return;
      }
      sink.String("gce.dra.net/networkName", name);
      sink.Int("gce.dra.net/networkProjectNumber", project);
      return;
    }
  }

  GceInstance Fetch() {
    const std::vector<std::string> headers{"Metadata-Flavor: Google"};
    const std::string base = metadata_.endpoint() + "/computeMetadata/v1/instance/";
    GceInstance inst;
    const uint32_t deadline = metadata_.deadline();
    std::string type =
        common::TrimSpace(common::FetchText(host_, base + "machine-type", headers, deadline, kMaxMetadataBody));
    inst.machine_type = type.substr(type.rfind('/') + 1);
    if (inst.machine_type.empty()) throw common::MetadataError("GET " + base + "machine-type: empty machine type");
    std::string url = base + "network-interfaces/?recursive=true&alt=json";
    inst.interfaces = ParseInterfaces(common::FetchJson(host_, url, headers, deadline, kMaxMetadataBody), url);
    try {
      inst.physical_host = common::TrimSpace(
          common::FetchText(host_, base + "attributes/physical_host", headers, deadline, kMaxMetadataBody));
    } catch (const common::MetadataError& e) {
      // Not every VM type reports its physical host; the rest stays useful.
      host_.Info(std::string("GCE physical_host not available (normal on many VM types): ") + e.what());
    }
    return inst;
  }

  const GceInstance* Instance() {
    return metadata_.Get(
        [&] { return Fetch(); }, "devices are published without gce.dra.net metadata attributes",
        [&](const GceInstance& inst) {
          host_.Info("GCE metadata: machineType=" + inst.machine_type + " physicalHost=" + inst.physical_host +
                     " interfaces=" + std::to_string(inst.interfaces.size()));
          if (!inst.physical_host.empty() && !SplitPhysicalHost(inst.physical_host))
            host_.Warn("GCE physical_host \"" + inst.physical_host +
                       "\" is not /<block>/<subBlock>/<host>; block attributes omitted");
        });
  }

  Host host_;
  common::CloudMetadata<GceInstance> metadata_;
};

}  // namespace

DRANET_CXX_PLUGIN(GcpPlugin)
