// The v1 layouts agree between C and C++ and with the frozen numbers; the
// has-field check reads sizes the way a v1 reader of a newer struct must.
#include <dranet/plugin.h>
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>

extern "C" size_t dranet_test_c_sizeof_plugin(void);
extern "C" size_t dranet_test_c_sizeof_host(void);
extern "C" size_t dranet_test_c_sizeof_device(void);
extern "C" size_t dranet_test_c_sizeof_edit_sink(void);
extern "C" size_t dranet_test_c_sizeof_route(void);
extern "C" size_t dranet_test_c_sizeof_rule(void);
extern "C" size_t dranet_test_c_sizeof_profile_request(void);

static_assert(std::is_standard_layout_v<dranet_plugin_t> && std::is_trivial_v<dranet_plugin_t>);
static_assert(std::is_standard_layout_v<dranet_host_t> && std::is_trivial_v<dranet_host_t>);
static_assert(std::is_standard_layout_v<dranet_route_t> && std::is_trivial_v<dranet_route_t>);
static_assert(std::is_standard_layout_v<dranet_rule_t> && std::is_trivial_v<dranet_rule_t>);
static_assert(offsetof(dranet_plugin_t, struct_size) == 0 && offsetof(dranet_host_t, struct_size) == 0 &&
              offsetof(dranet_device_t, struct_size) == 0 && offsetof(dranet_attr_t, struct_size) == 0 &&
              offsetof(dranet_route_t, struct_size) == 0 && offsetof(dranet_rule_t, struct_size) == 0 &&
              offsetof(dranet_edit_sink_t, struct_size) == 0 &&
              offsetof(dranet_profile_request_t, struct_size) == 0 &&
              offsetof(dranet_profile_sink_t, struct_size) == 0,
              "every boundary struct starts with struct_size");
#if defined(__LP64__)
static_assert(sizeof(dranet_plugin_t) == 136 && offsetof(dranet_plugin_t, inject) == 88);
static_assert(offsetof(dranet_plugin_t, snapshot_paths) == 128);
static_assert(offsetof(dranet_plugin_t, attribute_domains) == 112 && offsetof(dranet_plugin_t, min_host_abi) == 120);
static_assert(DRANET_PLUGIN_V1_0_SIZE == 96 && offsetof(dranet_plugin_t, get_profile) == 96);
static_assert(sizeof(dranet_profile_request_t) == 40 && sizeof(dranet_profile_sink_t) == 24);
static_assert(sizeof(dranet_host_t) == 88 && sizeof(dranet_device_t) == 72);
static_assert(sizeof(dranet_edit_sink_t) == 64 && offsetof(dranet_edit_sink_t, add_route) == 48);
static_assert(sizeof(dranet_route_t) == 40 && sizeof(dranet_rule_t) == 32);
#endif

TEST(AbiLayout, CAndCxxAgree) {
  EXPECT_EQ(dranet_test_c_sizeof_plugin(), sizeof(dranet_plugin_t));
  EXPECT_EQ(dranet_test_c_sizeof_host(), sizeof(dranet_host_t));
  EXPECT_EQ(dranet_test_c_sizeof_device(), sizeof(dranet_device_t));
  EXPECT_EQ(dranet_test_c_sizeof_edit_sink(), sizeof(dranet_edit_sink_t));
  EXPECT_EQ(dranet_test_c_sizeof_route(), sizeof(dranet_route_t));
  EXPECT_EQ(dranet_test_c_sizeof_rule(), sizeof(dranet_rule_t));
  EXPECT_EQ(dranet_test_c_sizeof_profile_request(), sizeof(dranet_profile_request_t));
}

TEST(AbiLayout, VersionMacros) {
  EXPECT_EQ(DRANET_ABI_VERSION(1, 7), 0x00010007u);
  EXPECT_EQ(DRANET_ABI_MAJOR_OF(DRANET_ABI_VERSION(3, 9)), 3u);
  EXPECT_EQ(DRANET_ABI_MINOR_OF(DRANET_ABI_VERSION(3, 9)), 9u);
  EXPECT_EQ(DRANET_ABI_CURRENT, DRANET_ABI_VERSION(DRANET_ABI_MAJOR, DRANET_ABI_MINOR));
  EXPECT_EQ(DRANET_ABI_CURRENT, DRANET_ABI_VERSION(1, 4))
      << "routes and rules are ABI 1.1, profiles 1.2, attribute domains 1.3, HTTP PUT 1.4";
}

// A 1.1 plugin on a 1.0 host: the sink ends after add_annotation, so the
// helpers say "unsupported" without reading past the host's struct.
TEST(AbiLayout, RouteHelpersOnA10SinkAreUnsupported) {
  struct Recorder {
    int routes = 0, rules = 0;
  } rec;
  dranet_edit_sink_t sink{};
  sink.struct_size = sizeof sink;
  sink.sink_ctx = &rec;
  sink.add_route = [](void* ctx, const char*, const dranet_route_t*) -> dranet_status_t {
    ++static_cast<Recorder*>(ctx)->routes;
    return DRANET_OK;
  };
  sink.add_rule = [](void* ctx, const char*, const dranet_rule_t*) -> dranet_status_t {
    ++static_cast<Recorder*>(ctx)->rules;
    return DRANET_OK;
  };
  dranet_route_t route{};
  route.struct_size = sizeof route;
  dranet_rule_t rule{};
  rule.struct_size = sizeof rule;
  EXPECT_EQ(dranet_sink_add_route(&sink, "eth1", &route), DRANET_OK);
  EXPECT_EQ(dranet_sink_add_rule(&sink, "eth1", &rule), DRANET_OK);
  EXPECT_EQ(rec.routes, 1);
  EXPECT_EQ(rec.rules, 1);

  sink.struct_size = offsetof(dranet_edit_sink_t, add_route);  // as a 1.0 host built it
  EXPECT_FALSE(DRANET_HAS_FIELD(&sink, dranet_edit_sink_t, add_route));
  EXPECT_EQ(dranet_sink_add_route(&sink, "eth1", &route), DRANET_ERR_UNSUPPORTED);
  EXPECT_EQ(dranet_sink_add_rule(&sink, "eth1", &rule), DRANET_ERR_UNSUPPORTED);
  EXPECT_EQ(rec.routes, 1) << "a 1.0 sink's memory past struct_size is never called";
  sink.struct_size = sizeof sink;
  sink.add_rule = nullptr;  // a 1.1 host that leaves one NULL
  EXPECT_EQ(dranet_sink_add_rule(&sink, "eth1", &rule), DRANET_ERR_UNSUPPORTED);
  EXPECT_EQ(dranet_sink_add_route(nullptr, "eth1", &route), DRANET_ERR_UNSUPPORTED);
}

TEST(AbiLayout, HasFieldReadsTheWritersSize) {
  dranet_host_t host{};
  host.struct_size = offsetof(dranet_host_t, node_name);  // an older, shorter writer
  EXPECT_TRUE(DRANET_HAS_FIELD(&host, dranet_host_t, procfs_root));
  EXPECT_FALSE(DRANET_HAS_FIELD(&host, dranet_host_t, node_name));
  EXPECT_FALSE(DRANET_HAS_FIELD(&host, dranet_host_t, http_get));
  host.struct_size = sizeof host;
  EXPECT_TRUE(DRANET_HAS_FIELD(&host, dranet_host_t, http_get));
  const dranet_host_t* none = nullptr;
  EXPECT_FALSE(DRANET_HAS_FIELD(none, dranet_host_t, log));
}

TEST(AbiLayout, ErrorSetFormatsTruncatesAndReturnsCode) {
  dranet_error_t err{};
  err.struct_size = sizeof err;
  EXPECT_EQ(dranet_error_set(&err, DRANET_ERR_IO, 2, "read %s failed", "/x"), DRANET_ERR_IO);
  EXPECT_STREQ(err.message, "read /x failed");
  EXPECT_EQ(err.sys_errno, 2);
  std::string big(2000, 'a');
  dranet_error_set(&err, DRANET_ERR_IO, 0, "%s", big.c_str());
  EXPECT_EQ(std::strlen(err.message), DRANET_ERROR_MSG_MAX - 1);
  EXPECT_EQ(dranet_error_set(nullptr, DRANET_ERR_BUSY, 0, "ignored"), DRANET_ERR_BUSY);
  dranet_error_t too_small{};
  too_small.struct_size = 4;  // a writer must not overrun a smaller buffer
  dranet_error_set(&too_small, DRANET_ERR_IO, 9, "x");
  EXPECT_EQ(too_small.sys_errno, 0);
}

TEST(AbiLayout, StatusNamesCoverTheClosedList) {
  EXPECT_STREQ(dranet_status_name(DRANET_OK), "DRANET_OK");
  EXPECT_STREQ(dranet_status_name(DRANET_ERR_IO), "DRANET_ERR_IO");
  EXPECT_STREQ(dranet_status_name(DRANET_ERR_OVERFLOW), "DRANET_ERR_OVERFLOW");
  EXPECT_STREQ(dranet_status_name(-11), "DRANET_ERR_UNKNOWN");
  for (dranet_status_t st = DRANET_ERR_OVERFLOW; st <= DRANET_OK; ++st)
    EXPECT_STRNE(dranet_status_name(st), "DRANET_ERR_UNKNOWN") << st;
}

namespace {
dranet_plugin_t MinHostDescriptor() {
  dranet_plugin_t d{};
  d.struct_size = sizeof d;
  d.min_host_abi = DRANET_ABI_VERSION(1, 3);
  return d;
}
const dranet_plugin_t kNeeds13 = MinHostDescriptor();
}  // namespace
// The refusing entry of a plugin that needs host ABI 1.3 (the macro defines
// dranet_plugin_entry_v1 in this test binary).
extern "C" DRANET_PLUGIN_DEFINE_MIN_HOST(kNeeds13, 3)

TEST(AbiLayout, MinHostEntryRefusesOlderHostsAndStillNamesItself) {
  const dranet_plugin_t* out = nullptr;
  EXPECT_EQ(dranet_plugin_entry_v1(DRANET_ABI_VERSION(1, 2), &out), DRANET_ERR_ABI_MISMATCH);
  EXPECT_EQ(out, &kNeeds13) << "a refusal leaves the descriptor so that the host can say why";
  out = nullptr;
  EXPECT_EQ(dranet_plugin_entry_v1(DRANET_ABI_VERSION(1, 3), &out), DRANET_OK);
  EXPECT_EQ(out, &kNeeds13);
  EXPECT_EQ(dranet_plugin_entry_v1(DRANET_ABI_VERSION(1, 9), &out), DRANET_OK);
  out = nullptr;
  EXPECT_EQ(dranet_plugin_entry_v1(DRANET_ABI_VERSION(2, 3), &out), DRANET_ERR_ABI_MISMATCH);
  EXPECT_EQ(out, nullptr) << "another major gets nothing";
}
