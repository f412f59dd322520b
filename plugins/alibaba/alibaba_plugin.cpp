// The alibaba plugin: Alibaba Cloud ECS facts under alibaba.dra.net/ (the
// names and values DRANET publishes): instanceType on every device, from the
// metadata service (token first: PUT /latest/api/token, then GETs with
// X-aliyun-ecs-metadata-token), and erdma=true on the PCI functions of the
// node's eRDMA devices (sysfs only: /sys/class/infiniband/erdma*/device).
//
// Probe (init, no network): DMI product_name "Alibaba Cloud ECS" or
// sys_vendor "Alibaba Cloud" (see cloud_detection.h). The metadata is read
// on the first annotate with a short deadline and kept for the process
// lifetime; a failure is logged and retried after a backoff while devices
// keep erdma and are published without instanceType.
#include <dranet/plugin.hpp>
#include <dirent.h>
#include <unistd.h>

#include <cctype>
#include <set>
#include <string>

#include "cloud_detection.h"

namespace {

namespace common = dranet::plugins::common;
using dranet::sdk::AttrSink;
using dranet::sdk::DeviceView;
using dranet::sdk::Host;

constexpr std::size_t kMaxBody = 4096;
constexpr std::size_t kMaxAttributeValue = 64;

const dranet_config_key_t kAlibabaKeys[] = {
    {sizeof(dranet_config_key_t), "metadata-endpoint", "http://100.100.100.200",
     "metadata service base URL (plain http://host[:port])"},
    {sizeof(dranet_config_key_t), "metadata-timeout-ms", "1000", "deadline of one metadata request, in ms"},
    {sizeof(dranet_config_key_t), "retry-backoff-ms", "5000",
     "first wait before retrying a failed metadata read; doubles up to 5 minutes"},
    DRANET_CLOUD_DETECTION_KEYS,
    {0, nullptr, nullptr, nullptr}};

// The PCI addresses of the eRDMA devices: the base name of the link
// <sysfs>/class/infiniband/erdma*/device.
std::set<std::string> ErdmaPciAddresses(const Host& host) {
  std::set<std::string> out;
  const std::string dir = host.sysfs_root() + "/class/infiniband";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name.rfind("erdma", 0) != 0) continue;
    char target[4096];
    const std::string link = dir + "/" + name + "/device";
    ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    std::string path(target, static_cast<std::size_t>(n));
    out.insert(path.substr(path.rfind('/') + 1));
  }
  ::closedir(d);
  return out;
}

class AlibabaPlugin {
 public:
  static constexpr const char* kName = "alibaba";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription = "ECS instance type (metadata service) and eRDMA devices (sysfs)";
  static constexpr const dranet_config_key_t* kConfigKeys = kAlibabaKeys;
  static constexpr uint32_t kMinHostAbi = DRANET_ABI_VERSION(1, 4);  // PUT for the metadata token

  explicit AlibabaPlugin(const Host& host)
      : host_(host),
        metadata_(host,
                  {"Alibaba Cloud", "Alibaba Cloud metadata", "metadata-endpoint", "http://100.100.100.200",
                   "metadata-timeout-ms"},
                  common::ReadDmi(host, "product_name") == "Alibaba Cloud ECS" ||
                      common::ReadDmi(host, "sys_vendor") == "Alibaba Cloud",
                  "product_name \"" + common::ReadDmi(host, "product_name") + "\", sys_vendor \"" +
                      common::ReadDmi(host, "sys_vendor") + "\"") {}

  void Annotate(const DeviceView& device, AttrSink& sink) {
    // First: on a node without DMI this read is the probe that decides.
    const std::string* type = InstanceType();
    if (metadata_.off()) return;
    if (type != nullptr) sink.String("alibaba.dra.net/instanceType", *type);
    if (!device.pci_address().empty() && Erdma().count(device.pci_address()) > 0)
      sink.Bool("alibaba.dra.net/erdma", true);
  }

 private:
  // eRDMA devices exist from boot (a driver, not hot-plug): read once.
  const std::set<std::string>& Erdma() {
    if (!erdma_read_) {
      erdma_ = ErdmaPciAddresses(host_);
      erdma_read_ = true;
    }
    return erdma_;
  }

  std::string Fetch() {
    const uint32_t deadline = metadata_.deadline();
    const std::string token =
        common::FetchSessionToken(host_, metadata_.endpoint() + "/latest/api/token",
                                  "X-aliyun-ecs-metadata-token-ttl-seconds: 21600", deadline);
    const std::string url = metadata_.endpoint() + "/latest/meta-data/instance/instance-type";
    std::string type = common::TrimSpace(
        common::FetchText(host_, url, {"X-aliyun-ecs-metadata-token: " + token}, deadline, kMaxBody));
    if (type.empty() || type.size() > kMaxAttributeValue || type.find('\n') != std::string::npos)
      throw common::MetadataError("GET " + url + ": not an instance type: \"" + type.substr(0, 80) + "\"");
    return type;
  }

  const std::string* InstanceType() {
    return metadata_.Get(
        [&] { return Fetch(); }, "devices are published without alibaba.dra.net/instanceType",
        [&](const std::string& type) {
          host_.Info("Alibaba Cloud metadata: instanceType=" + type + ", eRDMA functions: " +
                     std::to_string(Erdma().size()));
        });
  }

  Host host_;
  common::CloudMetadata<std::string> metadata_;
  std::set<std::string> erdma_;
  bool erdma_read_ = false;
};

}  // namespace

DRANET_CXX_PLUGIN(AlibabaPlugin)
