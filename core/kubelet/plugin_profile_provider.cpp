#include "kubelet/plugin_profile_provider.h"

#include <optional>
#include <vector>

#include "base/json.h"
#include "inventory/inventory.h"
#include "plugins/plugin_host.h"

namespace dranet::kubelet {
namespace {

// The profile value of a config JSON object, or "" when it has none.
std::string ProfileOf(const std::string& config_json) {
  rapidjson::Document doc;
  if (!ParseJson(doc, config_json).empty() || !doc.IsObject()) return {};
  auto it = doc.FindMember("profile");
  return it != doc.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// What a release request tells a plugin about a device that may no longer be
// in the inventory: the identifiers prepare recorded.
inventory::Device ReleasedDevice(const ProfileDevice& id) {
  inventory::Device device;
  device.name = id.name;
  device.pci_address = id.pci_address;
  if (!id.mac_address.empty()) device.attributes[std::string(inventory::attr::kMac)] = id.mac_address;
  if (!id.pci_address.empty()) device.attributes[std::string(inventory::attr::kPciAddress)] = id.pci_address;
  return device;
}

class PluginProfileProvider : public ProfileProvider {
 public:
  explicit PluginProfileProvider(plugins::PluginHost& host) : host_(host) {}

  // Plugin calls are bounded by the plugin host's own call timeout; a stop
  // is seen before each call.
  std::string GetProfileConfig(const ProfileDevice& id, const std::string& claim_uid,
                               const std::string& config_json, std::stop_token stop) override {
    if (stop.stop_requested()) throw ProfileError("stopped: the call's deadline passed before the plugins were asked");
    const plugins::ProfileQuery query{ProfileOf(config_json), claim_uid, config_json};
    const inventory::Device device = id.device ? *id.device : ReleasedDevice(id);
    std::optional<plugins::ProfileAnswer> answer;
    try {
      answer = host_.GetProfile(query, device);
    } catch (const plugins::ProfileCallFailed& e) {
      throw ProfileError(e.what());
    }
    if (answer) return answer->config_json;
    const auto asked = host_.ProfilePlugins();
    if (asked.empty())
      throw ProfileError("no loaded plugin provides profiles (--profile-provider=cloud); load one with "
                         "DRANET_CAP_PROFILES, or choose --profile-provider=webhook");
    throw ProfileError("no plugin knows this profile for device " + id.name + " (asked: " + JoinNames(asked) + ")");
  }

  void ReleaseProfileConfig(const ProfileDevice& id, const std::string& claim_uid,
                            const std::string& config_json, std::stop_token stop) override {
    if (stop.stop_requested()) throw ProfileError("stopped: the call's deadline passed before the plugins were asked");
    const plugins::ProfileQuery query{ProfileOf(config_json), claim_uid, config_json};
    const auto failures = host_.ReleaseProfile(query, id.device ? *id.device : ReleasedDevice(id));
    if (!failures.empty()) throw ProfileError(JoinNames(failures));
  }

  std::string Describe() const override { return "the cloud plugins (" + JoinNames(host_.ProfilePlugins()) + ")"; }

 private:
  plugins::PluginHost& host_;
};

}  // namespace

std::shared_ptr<ProfileProvider> MakePluginProfileProvider(plugins::PluginHost& host) {
  return std::make_shared<PluginProfileProvider>(host);
}

}  // namespace dranet::kubelet
