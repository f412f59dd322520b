// linkspeed-cxx: a C++17 plugin written with dranet/plugin.hpp.
// Publishes each netdev's link speed and tells containers which devices
// they received.
#include <dranet/plugin.hpp>

#include <fstream>
#include <string>

namespace {

const dranet_match_t kMatches[] = {{DRANET_MATCH_IFNAME, 0, 0, "*"}, {DRANET_MATCH_END, 0, 0, nullptr}};

class LinkSpeed {
 public:
  static constexpr const char* kName = "linkspeed-cxx";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription = "example C++ plugin: link speed attribute";
  static constexpr const dranet_match_t* kMatchTable = kMatches;

  explicit LinkSpeed(const dranet::sdk::Host& host) : host_(host) {}

  void Annotate(const dranet::sdk::DeviceView& device, dranet::sdk::AttrSink& sink) {
    // Paths come from the host's sysfs root, never from a literal /sys.
    std::ifstream in(host_.sysfs_root() + "/class/net/" + device.if_name() + "/speed");
    long long mbps = -1;
    if (in >> mbps && mbps > 0) sink.Int("linkspeed-cxx.dra.net/speedMbps", mbps);
  }

  void Inject(const dranet::sdk::InjectRequest& request, dranet::sdk::EditSink& sink) {
    std::string names;
    for (const auto& d : request.devices()) names += (names.empty() ? "" : ",") + d.if_name();
    sink.Env("LINKSPEED_DEVICES", names);
  }

 private:
  dranet::sdk::Host host_;
};

}  // namespace

DRANET_CXX_PLUGIN(LinkSpeed)
