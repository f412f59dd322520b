// The C++ helper: capabilities follow the class's methods, descriptors are
// built at compile time, and no exception escapes an entry point.
#include <dranet/plugin.hpp>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

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

constexpr const char* kEverythingDomains[] = {"everything.example.com", nullptr};

class Everything {
 public:
  static constexpr const char* kName = "everything";
  static constexpr const char* kVersion = "2.0.0";
  static constexpr const char* kDescription = "test";
  static constexpr const char* const* kAttributeDomains = kEverythingDomains;
  static constexpr uint32_t kMinHostAbi = DRANET_ABI_VERSION(1, 3);
  explicit Everything(const dranet::sdk::Host&) {}
  void Discover(dranet::sdk::DeviceSink&) {}
  void Annotate(const dranet::sdk::DeviceView&, dranet::sdk::AttrSink&) {}
  void Inject(const dranet::sdk::InjectRequest&, dranet::sdk::EditSink&) {}
};

// A profile plugin: knows "jumbo", fails "broken", declines the rest.
class Profiles {
 public:
  static constexpr const char* kName = "profiles";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription = "test";
  explicit Profiles(const dranet::sdk::Host&) {}
  std::optional<std::string> GetProfile(const dranet::sdk::ProfileRequest& req) {
    if (req.profile() == "broken") throw dranet::sdk::Error(DRANET_ERR_IO, "ipam down", 111);
    if (req.profile() != "jumbo") return std::nullopt;
    return R"({"interface":{"mtu":9000,"name":")" + req.device().name() + R"("}})";
  }
  void ReleaseProfile(const dranet::sdk::ProfileRequest& req) { released.push_back(req.claim_uid()); }
  std::vector<std::string> released;
};

constexpr dranet_plugin_t kProfiles = dranet::sdk::MakeDescriptor<Profiles>();
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
  EXPECT_EQ(kEverything.flags, 0u);
  EXPECT_EQ(kEverything.attribute_domains, kEverythingDomains);
  EXPECT_EQ(kEverything.min_host_abi, DRANET_ABI_VERSION(1, 3));
  EXPECT_EQ(kAnnotateOnly.attribute_domains, nullptr);
  EXPECT_EQ(kAnnotateOnly.min_host_abi, 0u);
  EXPECT_EQ(kAnnotateOnly.struct_size, sizeof(dranet_plugin_t));
  EXPECT_EQ(kAnnotateOnly.abi_version, DRANET_ABI_CURRENT);
  EXPECT_STREQ(kAnnotateOnly.name, "annotate-only");
  static_assert(kProfiles.capabilities == DRANET_CAP_PROFILES);
  EXPECT_EQ(kEverything.get_profile, nullptr);
  EXPECT_EQ(kEverything.release_profile, nullptr);
}

TEST(CxxHelper, ProfilesAnswerDeclineAndFailThroughTheAbi) {
  dranet_host_t host = HostNamed("node");
  void* state = nullptr;
  dranet_error_t err = NewError();
  ASSERT_EQ(kProfiles.init(&host, &state, &err), DRANET_OK);
  dranet_device_t device{};
  device.struct_size = sizeof device;
  device.name = "pci-0000-8a-00-0";
  struct Answer {
    int calls = 0;
    std::string json;
  } answer;
  dranet_profile_sink_t sink{sizeof(dranet_profile_sink_t), &answer,
                             [](void* ctx, const char* json) -> dranet_status_t {
                               auto* a = static_cast<Answer*>(ctx);
                               ++a->calls;
                               a->json = json;
                               return DRANET_OK;
                             }};
  auto request = [&](const char* profile) {
    dranet_profile_request_t r{};
    r.struct_size = sizeof r;
    r.profile = profile;
    r.claim_uid = "uid-7";
    r.config_json = "{}";
    r.device = &device;
    return r;
  };
  auto jumbo = request("jumbo");
  EXPECT_EQ(kProfiles.get_profile(state, &jumbo, &sink, &err), DRANET_OK);
  EXPECT_EQ(answer.json, R"({"interface":{"mtu":9000,"name":"pci-0000-8a-00-0"}})");
  auto other = request("other");
  EXPECT_EQ(kProfiles.get_profile(state, &other, &sink, &err), DRANET_ERR_NOT_FOUND);
  EXPECT_STREQ(err.message, "profile \"other\" is not one of profiles's");
  auto broken = request("broken");
  EXPECT_EQ(kProfiles.get_profile(state, &broken, &sink, &err), DRANET_ERR_IO);
  EXPECT_STREQ(err.message, "ipam down");
  EXPECT_EQ(err.sys_errno, 111);
  EXPECT_EQ(answer.calls, 1);
  EXPECT_EQ(kProfiles.release_profile(state, &jumbo, &err), DRANET_OK);
  EXPECT_EQ(static_cast<Profiles*>(state)->released, std::vector<std::string>{"uid-7"});
  kProfiles.fini(state);
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

namespace {

// Adds one route and one rule per request device when the host takes them,
// and says so through env otherwise.
class Router {
 public:
  static constexpr const char* kName = "router";
  static constexpr const char* kVersion = "1.1.0";
  static constexpr const char* kDescription = "test";
  explicit Router(const dranet::sdk::Host&) {}
  void Inject(const dranet::sdk::InjectRequest& request, dranet::sdk::EditSink& sink) {
    if (!sink.SupportsRoutes()) {
      sink.Env("ROUTES", "unsupported");
      return;
    }
    for (const auto& dev : request.devices()) {
      dranet::sdk::Route route;
      route.destination = "0.0.0.0/0";
      route.gateway = "10.0.1.1";
      route.table = 101;
      sink.AddRoute(dev.name(), route);
      dranet::sdk::Rule rule;
      rule.source = "10.0.1.0/24";
      rule.table = 101;
      sink.AddRule(dev.name(), rule);
    }
  }
};
constexpr dranet_plugin_t kRouter = dranet::sdk::MakeDescriptor<Router>();

struct EditRecorder {
  std::vector<std::string> lines;
  dranet_status_t answer = DRANET_OK;
};

dranet_edit_sink_t RecordingSink(EditRecorder& recorder) {
  dranet_edit_sink_t s{};
  s.struct_size = sizeof s;
  s.sink_ctx = &recorder;
  s.add_env = [](void* ctx, const char* name, const char* value) -> dranet_status_t {
    static_cast<EditRecorder*>(ctx)->lines.push_back(std::string("env ") + name + "=" + value);
    return DRANET_OK;
  };
  s.add_route = [](void* ctx, const char* dev, const dranet_route_t* r) -> dranet_status_t {
    auto* rec = static_cast<EditRecorder*>(ctx);
    rec->lines.push_back(std::string("route ") + dev + " " + r->destination + " via " + r->gateway + " table " +
                         std::to_string(r->table) + " size " + std::to_string(r->struct_size));
    return rec->answer;
  };
  s.add_rule = [](void* ctx, const char* dev, const dranet_rule_t* r) -> dranet_status_t {
    auto* rec = static_cast<EditRecorder*>(ctx);
    rec->lines.push_back(std::string("rule ") + dev + " from " + r->source + " to '" + r->destination +
                         "' table " + std::to_string(r->table));
    return rec->answer;
  };
  return s;
}

}  // namespace

TEST(CxxHelper, RoutesAndRulesReachA11Host) {
  dranet_host_t host = HostNamed("ok");
  void* state = nullptr;
  dranet_error_t err = NewError();
  ASSERT_EQ(kRouter.init(&host, &state, &err), DRANET_OK);
  dranet_device_t dev{};
  dev.struct_size = sizeof dev;
  dev.name = "eth1";
  dev.if_name = "eth1";
  dranet_inject_request_t req{};
  req.struct_size = sizeof req;
  req.n_devices = 1;
  req.devices = &dev;
  EditRecorder rec;
  dranet_edit_sink_t sink = RecordingSink(rec);
  EXPECT_EQ(kRouter.inject(state, &req, &sink, &err), DRANET_OK) << err.message;
  EXPECT_EQ(rec.lines, (std::vector<std::string>{"route eth1 0.0.0.0/0 via 10.0.1.1 table 101 size 40",
                                                 "rule eth1 from 10.0.1.0/24 to '' table 101"}));

  // A rejection becomes the plugin's error, naming the route.
  rec.lines.clear();
  rec.answer = DRANET_ERR_INVALID_ARG;
  EXPECT_EQ(kRouter.inject(state, &req, &sink, &err), DRANET_ERR_INVALID_ARG);
  EXPECT_NE(std::string(err.message).find("route 0.0.0.0/0 on eth1"), std::string::npos) << err.message;
  kRouter.fini(state);
}

TEST(CxxHelper, RoutesOnA10HostTakeTheUnsupportedPath) {
  dranet_host_t host = HostNamed("ok");
  void* state = nullptr;
  dranet_error_t err = NewError();
  ASSERT_EQ(kRouter.init(&host, &state, &err), DRANET_OK);
  dranet_device_t dev{};
  dev.struct_size = sizeof dev;
  dev.name = "eth1";
  dranet_inject_request_t req{};
  req.struct_size = sizeof req;
  req.n_devices = 1;
  req.devices = &dev;
  EditRecorder rec;
  dranet_edit_sink_t sink = RecordingSink(rec);
  sink.struct_size = offsetof(dranet_edit_sink_t, add_route);  // a 1.0 host's sink
  EXPECT_EQ(kRouter.inject(state, &req, &sink, &err), DRANET_OK) << err.message;
  EXPECT_EQ(rec.lines, std::vector<std::string>{"env ROUTES=unsupported"});

  // Calling AddRoute anyway is a clean error, not a read past the sink.
  dranet::sdk::EditSink s(&sink);
  EXPECT_FALSE(s.SupportsRoutes());
  try {
    s.AddRoute("eth1", dranet::sdk::Route{});
    ADD_FAILURE() << "AddRoute on a 1.0 sink must throw";
  } catch (const dranet::sdk::Error& e) {
    EXPECT_EQ(e.status(), DRANET_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("plugin ABI 1.0"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(rec.lines.size() == 1u) << "nothing reached the recorder";
  kRouter.fini(state);
}
