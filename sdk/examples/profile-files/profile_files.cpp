// profile-files: a profile plugin (plugin ABI 1.2) written with
// dranet/plugin.hpp. With --profile-provider=cloud, a claim config's
// "profile": "<name>" resolves to the NetworkConfig in
// <profile-dir>/<name>.json — e.g. a ConfigMap of named MTU, route and
// ethtool settings that many claim templates share.
//
// The files are read at every prepare, so an edited ConfigMap takes effect
// for the next claim. Nothing is allocated, so release has nothing to free.
#include <dranet/plugin.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace {

const dranet_config_key_t kKeys[] = {
    {sizeof(dranet_config_key_t), "profile-dir", "/etc/dranet/profiles",
     "directory of <profile>.json NetworkConfig files"},
    {0, nullptr, nullptr, nullptr}};

constexpr std::size_t kMaxProfileBytes = DRANET_PROFILE_CONFIG_MAX;

// A profile name is one file name: no path separators, no dot files.
bool IsFileName(const std::string& name) {
  if (name.empty() || name.size() > 253 || name[0] == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

class ProfileFiles {
 public:
  static constexpr const char* kName = "profile-files";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription = "example C++ plugin: claim config profiles from JSON files";
  static constexpr const dranet_config_key_t* kConfigKeys = kKeys;

  explicit ProfileFiles(const dranet::sdk::Host& host)
      : host_(host), dir_(host.Config("profile-dir", "/etc/dranet/profiles")) {}

  std::optional<std::string> GetProfile(const dranet::sdk::ProfileRequest& request) {
    const std::string name = request.profile();
    if (!IsFileName(name)) return std::nullopt;  // cannot be one of ours
    const std::string path = dir_ + "/" + name + ".json";
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (errno == ENOENT) return std::nullopt;  // another plugin's profile
      throw dranet::sdk::Error(DRANET_ERR_IO, "cannot read " + path + ": " + std::strerror(errno), errno);
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str().size() > kMaxProfileBytes)
      throw dranet::sdk::Error(DRANET_ERR_INVALID_ARG, path + " is larger than " + std::to_string(kMaxProfileBytes) +
                                                           " bytes");
    host_.Debug("profile " + name + " for " + request.device().name() + " from " + path);
    return text.str();  // the host checks that it is a JSON object, prepare that it is a NetworkConfig
  }

  void ReleaseProfile(const dranet::sdk::ProfileRequest&) {}

 private:
  dranet::sdk::Host host_;
  std::string dir_;
};

}  // namespace

DRANET_CXX_PLUGIN(ProfileFiles)
