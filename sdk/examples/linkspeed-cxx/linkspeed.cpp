// linkspeed-cxx: a C++17 plugin written with dranet/plugin.hpp.
// Publishes each device's link speed (a netdev's speed, else its RDMA
// port's rate, for IB-only devices) and tells containers which devices they
// received.
#include <dranet/plugin.hpp>

#include <fstream>
#include <string>

namespace {

const dranet_match_t kMatches[] = {{DRANET_MATCH_IFNAME, 0, 0, "*"},
                                   {DRANET_MATCH_RDMA, 0, 0, nullptr},
                                   {DRANET_MATCH_END, 0, 0, nullptr}};
// The sysfs files it reads, so that `dranetctl snapshot` captures them.
constexpr const char* kReads[] = {"class/net/*/speed", "class/infiniband/*/ports/*/rate", nullptr};

class LinkSpeed {
 public:
  static constexpr const char* kName = "linkspeed-cxx";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription = "example C++ plugin: link speed attribute";
  static constexpr const dranet_match_t* kMatchTable = kMatches;
  static constexpr const char* const* kSnapshotPaths = kReads;

  explicit LinkSpeed(const dranet::sdk::Host& host) : host_(host) {}

  void Annotate(const dranet::sdk::DeviceView& device, dranet::sdk::AttrSink& sink) {
    // Paths come from the host's sysfs root, never from a literal /sys.
    long long mbps = -1;
    if (!device.if_name().empty()) {
      std::ifstream in(host_.sysfs_root() + "/class/net/" + device.if_name() + "/speed");  // "400000" (Mb/s)
      if (!(in >> mbps)) mbps = -1;
    }
    if (mbps <= 0 && !device.rdma_device().empty()) {
      std::ifstream in(host_.sysfs_root() + "/class/infiniband/" + device.rdma_device() + "/ports/1/rate");
      long long gbps = -1;  // "800 Gb/sec (4X XDR)"
      if (in >> gbps && gbps > 0) mbps = gbps * 1000;
    }
    if (mbps > 0) sink.Int("linkspeed-cxx.dra.net/speedMbps", mbps);
  }

  void Inject(const dranet::sdk::InjectRequest& request, dranet::sdk::EditSink& sink) {
    std::string names;
    for (const auto& d : request.devices()) names += (names.empty() ? "" : ",") + d.name();
    sink.Env("LINKSPEED_DEVICES", names);
  }

 private:
  dranet::sdk::Host host_;
};

}  // namespace

DRANET_CXX_PLUGIN(LinkSpeed)
