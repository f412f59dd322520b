// The fake plugin, built once per variant (FAKE_VARIANT_*): a well-behaved
// plugin using every capability, and plugins broken in one way each, so the
// host and the conformance suite can prove they cope.
//
// Well-behaved ("fake") behaviour, all driven by configuration keys:
//   annotate: fake.dra.net/hello = <greeting> on every device, and
//             fake.dra.net/linkFile = whether <sysfs_root>/class/net/<if> exists;
//   discover: one device "fake-0" (attribute fake.dra.net/discovered=true);
//   inject:   env FAKE_DEVICES=<comma-joined device names>, device node /dev/fake0.
#include <dranet/plugin.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

struct FakeState {
  const dranet_host_t* host = nullptr;
  std::string greeting = "hello";
  std::string bad_attributes;
};

[[maybe_unused]] const dranet_match_t kMatches[] = {{DRANET_MATCH_ALWAYS, 0, 0, nullptr}, {DRANET_MATCH_END, 0, 0, nullptr}};
[[maybe_unused]] const dranet_config_key_t kConfigKeys[] = {
    {sizeof(dranet_config_key_t), "greeting", "hello", "value of fake.dra.net/hello"},
    {sizeof(dranet_config_key_t), "bad-attributes", "", "emit invalid attributes (\"true\")"},
    {sizeof(dranet_config_key_t), "init-delay-ms", "10000", "fake-slow: how long init blocks"},
    {sizeof(dranet_config_key_t), "throw-in", "init", "fake-throws: init or annotate"},
    {0, nullptr, nullptr, nullptr}};

[[maybe_unused]] std::string ConfigOr(const dranet_host_t* host, const char* key, const char* fallback) {
  const char* v = nullptr;
  if (host->config_get(host->host_ctx, key, &v) == DRANET_OK && v != nullptr) return v;
  return fallback;
}

[[maybe_unused]] dranet_status_t Init(const dranet_host_t* host, void** state_out, dranet_error_t* err) {
#if defined(FAKE_VARIANT_ERROR)
  (void)host;
  (void)state_out;
  return dranet_error_set(err, DRANET_ERR_IO, 5, "simulated init failure reading %s", "/fake/file");
#elif defined(FAKE_VARIANT_NOTAPPLICABLE)
  (void)host;
  (void)state_out;
  return dranet_error_set(err, DRANET_ERR_UNSUPPORTED, 0, "not on a fake cloud");
#else
#if defined(FAKE_VARIANT_THROWS)
  // Crosses the C ABI unguarded: the host must cope.
  if (ConfigOr(host, "throw-in", "init") == "init") throw std::runtime_error("init exploded");
#endif
#if defined(FAKE_VARIANT_SLOW)
  std::this_thread::sleep_for(std::chrono::milliseconds(std::stol(ConfigOr(host, "init-delay-ms", "10000"))));
#endif
#if defined(FAKE_VARIANT_PRINTS)
  std::printf("fake plugin says hello on stdout\n");  // forbidden: plugins never print
  std::fflush(stdout);
#endif
  auto* s = new (std::nothrow) FakeState();
  if (s != nullptr) s->host = host;
  if (s == nullptr) return dranet_error_set(err, DRANET_ERR_NO_MEMORY, 0, "no memory");
  s->greeting = ConfigOr(host, "greeting", "hello");
  s->bad_attributes = ConfigOr(host, "bad-attributes", "");
  DRANET_LOG(host, DRANET_LOG_INFO, "fake plugin initialised with greeting %s", s->greeting.c_str());
  *state_out = s;
  return DRANET_OK;
#endif
}

[[maybe_unused]] void Fini(void* state) { delete static_cast<FakeState*>(state); }

[[maybe_unused]] dranet_status_t Discover(void* state, const dranet_device_sink_t* sink, dranet_error_t* err) {
  (void)state;
  dranet_attr_t attr{sizeof(dranet_attr_t), DRANET_ATTR_BOOL, "fake.dra.net/discovered", nullptr, 1};
  dranet_device_t dev{};
  dev.struct_size = sizeof dev;
  dev.numa_node = 0;
  dev.name = "fake-0";
  dev.pci_address = "";
  dev.if_name = "";
  dev.rdma_device = "";
  dev.driver = "";
  dev.attrs = &attr;
  dev.n_attrs = 1;
  dranet_status_t st = sink->add_device(sink->sink_ctx, &dev);
  if (st != DRANET_OK) return dranet_error_set(err, st, 0, "host refused fake-0");
  return DRANET_OK;
}

[[maybe_unused]] dranet_status_t Annotate(void* state, const dranet_device_t* device, const dranet_attr_sink_t* sink,
                         dranet_error_t* err) {
  auto* s = static_cast<FakeState*>(state);
#if defined(FAKE_VARIANT_THROWS)
  (void)s;
  (void)device;
  (void)sink;
  (void)err;
  throw std::logic_error("annotate exploded");
#else
  dranet_attr_t hello{sizeof(dranet_attr_t), DRANET_ATTR_STRING, "fake.dra.net/hello", s->greeting.c_str(), 0};
  sink->add_attr(sink->sink_ctx, &hello);
  if (device->if_name != nullptr && device->if_name[0] != '\0') {
#if defined(FAKE_VARIANT_RAWSYS)
    std::string path = std::string("/sys/class/net/") + device->if_name;  // ignores the roots: forbidden
#else
    std::string path = std::string(s->host->sysfs_root) + "/class/net/" + device->if_name;
#endif
    dranet_attr_t link{sizeof(dranet_attr_t), DRANET_ATTR_BOOL, "fake.dra.net/linkFile", nullptr,
                       access(path.c_str(), F_OK) == 0 ? 1 : 0};
    sink->add_attr(sink->sink_ctx, &link);
  }
  if (s->bad_attributes == "true") {
    const std::string long_value(100, 'x');
    dranet_attr_t too_long{sizeof(dranet_attr_t), DRANET_ATTR_STRING, "fake.dra.net/tooLong", long_value.c_str(), 0};
    dranet_attr_t core{sizeof(dranet_attr_t), DRANET_ATTR_STRING, "dra.net/ifName", "spoofed", 0};
    dranet_attr_t bad_name{sizeof(dranet_attr_t), DRANET_ATTR_INT, "fake.dra.net/not-an-identifier", nullptr, 1};
    if (sink->add_attr(sink->sink_ctx, &too_long) == DRANET_OK ||
        sink->add_attr(sink->sink_ctx, &core) == DRANET_OK ||
        sink->add_attr(sink->sink_ctx, &bad_name) == DRANET_OK)
      return dranet_error_set(err, DRANET_ERR_INTERNAL, 0, "host accepted an invalid attribute");
  }
  return DRANET_OK;
#endif
}

[[maybe_unused]] dranet_status_t Inject(void* state, const dranet_inject_request_t* req, const dranet_edit_sink_t* sink,
                       dranet_error_t* err) {
  (void)state;
  std::string names;
  for (uint32_t i = 0; i < req->n_devices; ++i) {
    if (!names.empty()) names += ",";
    names += req->devices[i].name;
  }
#if defined(FAKE_VARIANT_CONFLICT)
  names = "conflicting-value";  // disagrees with the well-behaved fake
#endif
  dranet_status_t st = sink->add_env(sink->sink_ctx, "FAKE_DEVICES", names.c_str());
  if (st != DRANET_OK) return dranet_error_set(err, st, 0, "env refused");
  dranet_dev_node_t node{};
  node.struct_size = sizeof node;
  node.type = 'c';
  node.path = "/dev/fake0";
  node.major = 1;
  node.minor = 3;
  node.permissions = "rw";
  st = sink->add_dev_node(sink->sink_ctx, &node);
  if (st != DRANET_OK) return dranet_error_set(err, st, 0, "device node refused");
  return DRANET_OK;
}

#if defined(FAKE_VARIANT_GARBAGE)
// A descriptor whose every field is wrong: the host must reject it without
// calling anything.
const unsigned char kGarbage[sizeof(dranet_plugin_t)] = {0xff, 0xff, 0xff, 0x7f, 0xde, 0xad, 0xbe, 0xef};
#else
const dranet_plugin_t kDescriptor = {
    sizeof(dranet_plugin_t),
#if defined(FAKE_VARIANT_BADABI)
    DRANET_ABI_VERSION(2, 0),
#else
    DRANET_ABI_CURRENT,
#endif
    FAKE_PLUGIN_NAME,
    "0.1.0",
    "test plugin (" FAKE_PLUGIN_NAME ")",
    DRANET_CAP_ALL,
    0,
    kMatches,
    kConfigKeys,
    &Init,
    &Fini,
    &Discover,
    &Annotate,
    &Inject,
};
#endif

}  // namespace

extern "C" DRANET_EXPORT dranet_status_t dranet_plugin_entry_v1(uint32_t host_abi_version,
                                                                const dranet_plugin_t** out) {
  if (out == nullptr || DRANET_ABI_MAJOR_OF(host_abi_version) != DRANET_ABI_MAJOR) return DRANET_ERR_ABI_MISMATCH;
#if defined(FAKE_VARIANT_GARBAGE)
  *out = reinterpret_cast<const dranet_plugin_t*>(kGarbage);
#else
  *out = &kDescriptor;
#endif
  return DRANET_OK;
}
