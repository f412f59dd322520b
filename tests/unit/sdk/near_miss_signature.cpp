// A C++ plugin class whose method has almost the signature the helper calls
// must not compile: without the helper's static_assert it would compile and
// silently lose the capability. Built by ctest once per NEAR_MISS_<method>
// (each must fail with the helper's message) and once with none defined
// (must compile: the right signatures).
#include <dranet/plugin.hpp>

class NearMiss {
 public:
  static constexpr const char* kName = "near-miss";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription = "test";
  explicit NearMiss(const dranet::sdk::Host&) {}
#if defined(NEAR_MISS_Discover)
  void Discover(const dranet::sdk::DeviceView&) {}  // a device sink was meant
#else
  void Discover(dranet::sdk::DeviceSink&) {}
#endif
#if defined(NEAR_MISS_Annotate)
  void Annotate(dranet::sdk::DeviceView&, dranet::sdk::AttrSink&) {}  // non-const view
#else
  void Annotate(const dranet::sdk::DeviceView&, dranet::sdk::AttrSink&) {}
#endif
#if defined(NEAR_MISS_Inject)
  void Inject(const dranet::sdk::InjectRequest&) {}  // the sink forgotten
#else
  void Inject(const dranet::sdk::InjectRequest&, dranet::sdk::EditSink&) {}
#endif
#if defined(NEAR_MISS_GetProfile)
  std::optional<std::string> GetProfile(dranet::sdk::ProfileRequest&) { return std::nullopt; }  // non-const
#else
  std::optional<std::string> GetProfile(const dranet::sdk::ProfileRequest&) { return std::nullopt; }
#endif
  void ReleaseProfile(const dranet::sdk::ProfileRequest&) {}
};

DRANET_CXX_PLUGIN(NearMiss)
