// The C++ helper: capabilities follow the class's methods, descriptors are
// built at compile time, and no exception escapes an entry point.
#include <dranet/plugin.hpp>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

class AnnotateOnly {
 public:
  static constexpr const char* kName = "annotate-only";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription = "test";
  explicit AnnotateOnly(const dranet::sdk::Host& host) {
    if (host.node_name() == "refuse") throw dranet::sdk::NotApplicable("not here");
    if (host.node_name() == "explode") throw std::runtime_error("boom");
    if (host.node_name() == "typed") throw dranet::sdk::Error(DRANET_ERR_IO, "disk gone", 5);
  }
  void Annotate(const dranet::sdk::DeviceView& dev, dranet::sdk::AttrSink& sink) {
    if (dev.name() == "throw") throw 42;  // not even a std::exception
    sink.String("example.dra.net/name", dev.name());
    sink.Int("example.dra.net/numa", dev.numa_node());
  }
};

class Everything {
 public:
  static constexpr const char* kName = "everything";
  static constexpr const char* kVersion = "2.0.0";
  static constexpr const char* kDescription = "test";
  static constexpr uint32_t kFlags = DRANET_FLAG_THREAD_SAFE;
  explicit Everything(const dranet::sdk::Host&) {}
  void Discover(dranet::sdk::DeviceSink&) {}
  void Annotate(const dranet::sdk::DeviceView&, dranet::sdk::AttrSink&) {}
  void Inject(const dranet::sdk::InjectRequest&, dranet::sdk::EditSink&) {}
};

constexpr dranet_plugin_t kAnnotateOnly = dranet::sdk::MakeDescriptor<AnnotateOnly>();
constexpr dranet_plugin_t kEverything = dranet::sdk::MakeDescriptor<Everything>();

dranet_host_t HostNamed(const char* node) {
  dranet_host_t h{};
  h.struct_size = sizeof h;
  h.abi_version = DRANET_ABI_CURRENT;
  h.node_name = node;
  return h;
}

dranet_error_t NewError() {
  dranet_error_t e{};
  e.struct_size = sizeof e;
  return e;
}

}  // namespace

TEST(CxxHelper, CapabilitiesFollowMethods) {
  static_assert(kAnnotateOnly.capabilities == DRANET_CAP_ATTRIBUTES);
  static_assert(kEverything.capabilities == DRANET_CAP_ALL);
  EXPECT_EQ(kAnnotateOnly.discover, nullptr);
  EXPECT_EQ(kAnnotateOnly.inject, nullptr);
  EXPECT_NE(kAnnotateOnly.annotate, nullptr);
  EXPECT_EQ(kEverything.flags, DRANET_FLAG_THREAD_SAFE);
  EXPECT_EQ(kAnnotateOnly.struct_size, sizeof(dranet_plugin_t));
  EXPECT_EQ(kAnnotateOnly.abi_version, DRANET_ABI_CURRENT);
  EXPECT_STREQ(kAnnotateOnly.name, "annotate-only");
}

TEST(CxxHelper, ConstructorExceptionsBecomeStatuses) {
  struct Case {
    const char* node;
    dranet_status_t want;
    const char* message;
  };
  for (const Case& c : {Case{"refuse", DRANET_ERR_UNSUPPORTED, "not here"},
                        Case{"explode", DRANET_ERR_INTERNAL, "boom"},
                        Case{"typed", DRANET_ERR_IO, "disk gone"}}) {
    dranet_host_t host = HostNamed(c.node);
    void* state = reinterpret_cast<void*>(0x1);
    dranet_error_t err = NewError();
    EXPECT_EQ(kAnnotateOnly.init(&host, &state, &err), c.want) << c.node;
    EXPECT_STREQ(err.message, c.message);
    EXPECT_EQ(state, reinterpret_cast<void*>(0x1)) << "state_out written on failure";
  }
}

TEST(CxxHelper, AnnotateGoesThroughTheSinkAndNonStdThrowIsCaught) {
  dranet_host_t host = HostNamed("ok");
  void* state = nullptr;
  dranet_error_t err = NewError();
  ASSERT_EQ(kAnnotateOnly.init(&host, &state, &err), DRANET_OK);
  std::map<std::string, std::string> got;
  dranet_attr_sink_t sink{sizeof(dranet_attr_sink_t), &got, [](void* ctx, const dranet_attr_t* a) -> dranet_status_t {
                            auto& m = *static_cast<std::map<std::string, std::string>*>(ctx);
                            m[a->name] = a->type == DRANET_ATTR_STRING ? a->str_value : std::to_string(a->int_value);
                            return DRANET_OK;
                          }};
  dranet_device_t dev{};
  dev.struct_size = sizeof dev;
  dev.name = "eth1";
  dev.numa_node = 1;
  EXPECT_EQ(kAnnotateOnly.annotate(state, &dev, &sink, &err), DRANET_OK);
  EXPECT_EQ(got["example.dra.net/name"], "eth1");
  EXPECT_EQ(got["example.dra.net/numa"], "1");
  dev.name = "throw";
  EXPECT_EQ(kAnnotateOnly.annotate(state, &dev, &sink, &err), DRANET_ERR_INTERNAL);
  EXPECT_STREQ(err.message, "unknown exception");
  kAnnotateOnly.fini(state);
}
