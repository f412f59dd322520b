// The fake plugin, built once per variant (FAKE_VARIANT_*): a well-behaved
// plugin using every capability, and plugins broken in one way each, so the
// host and the conformance suite can prove they cope.
//
// Well-behaved ("fake") behaviour, all driven by configuration keys:
//   annotate: fake.dra.net/hello = <greeting> on every device, and
//             fake.dra.net/linkFile = whether <sysfs_root>/class/net/<if> exists;
//   discover: one device "fake-0" (attribute fake.dra.net/discovered=true);
//   inject:   env FAKE_DEVICES=<comma-joined device names>, device node /dev/fake0.
// ABI 1.1 variants:
//   fake-routes:   inject also adds routes and rules (config "routes" /
//                  "rules", or by default one table-100+i default route and
//                  rule per request device with a netdev) and reports each
//                  sink status in env FAKE_ROUTE_STATUS;
//   fake-badroute: adds routes for every device it ever annotated and for
//                  every request device, netdev or not (must fail conformance);
//   fake-abi10:    the well-behaved plugin, built as an ABI 1.0 plugin.
// ABI 1.2 (every variant but fake-abi10 and the broken descriptors):
//   profiles:      "fake-profile" (config "profile-config") resolves to that
//                  NetworkConfig JSON; "fake-device" to the device's own
//                  identity as an interface name; "fake-fail" fails with
//                  DRANET_ERR_IO; "fake-garbage" hands the host text that is
//                  not JSON; "fake-hang" blocks for 10 s; every other
//                  profile is not this plugin's. Releases are logged.
//   fake-greedyprofile: answers every profile, even ones it cannot know
//                  (must fail conformance).
// ABI 1.3:
//   Every variant writes its attributes under its own domain
//   (<FAKE_PLUGIN_NAME>.dra.net).
//   fake-intruder: declares the attribute domains intruder.example.com and
//                  fake.dra.net, and also writes fake.dra.net/hello ("intruded")
//                  and an undeclared gce.dra.net/machineType: only its own and
//                  intruder.example.com/owned may be published.
//   fake-slow:     init blocks init-delay-ms; annotate takes annotate-delay-ms
//                  per device and waits for the file annotate-gate.
//   fake-slowload: its static constructor blocks 2 s (inside dlopen).
//   fake-rawsyssnap: also publishes whether /sys/class/infiniband/<rdma device>
//                  exists, read from the machine's own /sys (a cheat only a
//                  node snapshot reveals; must fail conformance check 4).
//   fake-aborts:   aborts in annotate (the kit must name the check).
//   fake-narrow:   the well-behaved plugin whose match table takes only
//                  netdevs named ib-narrow*.
//   every variant: <name>.dra.net/rxBytes from <sysfs_root>/class/net/<if>/
//                  statistics/rx_bytes when that file exists, a path it
//                  declares in snapshot_paths.
//   fake-needsnewer: needs host ABI 1.99 (min_host_abi) and its entry refuses
//                  every real host, leaving its descriptor to say why.
//   fake-abi10 and fake-legacy (built as ABI 1.2) also write
//   shared.example.com/writer = their name, a domain nobody owns.
#include <dranet/plugin.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct FakeState {
  const dranet_host_t* host = nullptr;
  std::string greeting = "hello";
  std::string bad_attributes;
  std::string routes, rules;            // fake-routes: explicit entries
  std::vector<std::string> annotated;   // fake-badroute: netdev devices seen in annotate
  std::string profile_config;           // the answer for "fake-profile"
  long annotate_delay_ms = 0;           // fake-slow
  std::string annotate_gate;            // fake-slow
};

#if defined(FAKE_VARIANT_NARROW)
// Matches only netdevs named ib-narrow*: asked for profiles of those alone,
// yet told of every release.
[[maybe_unused]] const dranet_match_t kMatches[] = {{DRANET_MATCH_IFNAME, 0, 0, "ib-narrow*"},
                                                    {DRANET_MATCH_END, 0, 0, nullptr}};
#else
[[maybe_unused]] const dranet_match_t kMatches[] = {{DRANET_MATCH_ALWAYS, 0, 0, nullptr}, {DRANET_MATCH_END, 0, 0, nullptr}};
#endif
[[maybe_unused]] const dranet_config_key_t kConfigKeys[] = {
    {sizeof(dranet_config_key_t), "greeting", "hello", "value of fake.dra.net/hello"},
    {sizeof(dranet_config_key_t), "bad-attributes", "", "emit invalid attributes (\"true\")"},
    {sizeof(dranet_config_key_t), "init-delay-ms", "10000", "fake-slow: how long init blocks"},
    {sizeof(dranet_config_key_t), "annotate-delay-ms", "0", "fake-slow: how long annotating one device takes"},
    {sizeof(dranet_config_key_t), "annotate-gate", "",
     "fake-slow: annotate blocks (up to 10 s) until this file exists"},
    {sizeof(dranet_config_key_t), "throw-in", "init", "fake-throws: init or annotate"},
    {sizeof(dranet_config_key_t), "routes", "",
     "fake-routes: routes to add, \"device|destination|gateway|source|table|metric|scope\" joined by ;"},
    {sizeof(dranet_config_key_t), "rules", "",
     "fake-routes: rules to add, \"device|source|destination|table|priority\" joined by ;"},
    {sizeof(dranet_config_key_t), "profile-config", "{\"interface\":{\"mtu\":1400}}",
     "the NetworkConfig JSON profile \"fake-profile\" resolves to"},
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
  s->routes = ConfigOr(host, "routes", "");
  s->rules = ConfigOr(host, "rules", "");
  s->profile_config = ConfigOr(host, "profile-config", "{\"interface\":{\"mtu\":1400}}");
  s->annotate_delay_ms = std::stol(ConfigOr(host, "annotate-delay-ms", "0"));
  s->annotate_gate = ConfigOr(host, "annotate-gate", "");
  DRANET_LOG(host, DRANET_LOG_INFO, "fake plugin initialised with greeting %s", s->greeting.c_str());
  *state_out = s;
  return DRANET_OK;
#endif
}

[[maybe_unused]] void Fini(void* state) { delete static_cast<FakeState*>(state); }

[[maybe_unused]] dranet_status_t Discover(void* state, const dranet_device_sink_t* sink, dranet_error_t* err) {
  (void)state;
  dranet_attr_t attr{sizeof(dranet_attr_t), DRANET_ATTR_BOOL, FAKE_PLUGIN_NAME ".dra.net/discovered", nullptr, 1};
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
#if defined(FAKE_VARIANT_ABORTS)
  std::abort();
#endif
#if defined(FAKE_VARIANT_RAWSYSSNAP)
  if (device->rdma_device != nullptr && device->rdma_device[0] != '\0') {
    const std::string raw = std::string("/sys/class/infiniband/") + device->rdma_device;  // ignores the roots
    dranet_attr_t ib{sizeof(dranet_attr_t), DRANET_ATTR_BOOL, FAKE_PLUGIN_NAME ".dra.net/ibDevice", nullptr,
                     access(raw.c_str(), F_OK) == 0 ? 1 : 0};
    sink->add_attr(sink->sink_ctx, &ib);
  }
#endif
#if defined(FAKE_VARIANT_SLOW)
  std::this_thread::sleep_for(std::chrono::milliseconds(s->annotate_delay_ms));
  for (int i = 0; !s->annotate_gate.empty() && access(s->annotate_gate.c_str(), F_OK) != 0 && i < 2000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
#endif
  dranet_attr_t hello{sizeof(dranet_attr_t), DRANET_ATTR_STRING, FAKE_PLUGIN_NAME ".dra.net/hello", s->greeting.c_str(), 0};
  sink->add_attr(sink->sink_ctx, &hello);
#if defined(FAKE_VARIANT_ABI10) || defined(FAKE_VARIANT_LEGACY)
  dranet_attr_t writer{sizeof(dranet_attr_t), DRANET_ATTR_STRING, "shared.example.com/writer", FAKE_PLUGIN_NAME, 0};
  sink->add_attr(sink->sink_ctx, &writer);
#endif
#if defined(FAKE_VARIANT_INTRUDER)
  const dranet_attr_t intrusions[] = {
      {sizeof(dranet_attr_t), DRANET_ATTR_STRING, "fake.dra.net/hello", "intruded", 0},
      {sizeof(dranet_attr_t), DRANET_ATTR_STRING, "gce.dra.net/machineType", "intruded", 0},
      {sizeof(dranet_attr_t), DRANET_ATTR_BOOL, "intruder.example.com/owned", nullptr, 1}};
  for (const auto& attr : intrusions) sink->add_attr(sink->sink_ctx, &attr);
#endif
#if defined(FAKE_VARIANT_BADROUTE)
  if (device->if_name != nullptr && device->if_name[0] != '\0') s->annotated.emplace_back(device->name);
#endif
  if (device->if_name != nullptr && device->if_name[0] != '\0') {
#if defined(FAKE_VARIANT_RAWSYS)
    std::string path = std::string("/sys/class/net/") + device->if_name;  // ignores the roots: forbidden
#else
    std::string path = std::string(s->host->sysfs_root) + "/class/net/" + device->if_name;
#endif
    std::ifstream rx(std::string(s->host->sysfs_root) + "/class/net/" + device->if_name + "/statistics/rx_bytes");
    long long rx_bytes = -1;
    if (rx >> rx_bytes) {
      dranet_attr_t rx_attr{sizeof(dranet_attr_t), DRANET_ATTR_INT, FAKE_PLUGIN_NAME ".dra.net/rxBytes", nullptr, rx_bytes};
      sink->add_attr(sink->sink_ctx, &rx_attr);
    }
    dranet_attr_t link{sizeof(dranet_attr_t), DRANET_ATTR_BOOL, FAKE_PLUGIN_NAME ".dra.net/linkFile", nullptr,
                       access(path.c_str(), F_OK) == 0 ? 1 : 0};
    sink->add_attr(sink->sink_ctx, &link);
  }
  if (s->bad_attributes == "true") {
    const std::string long_value(100, 'x');
    dranet_attr_t too_long{sizeof(dranet_attr_t), DRANET_ATTR_STRING, FAKE_PLUGIN_NAME ".dra.net/tooLong", long_value.c_str(), 0};
    dranet_attr_t core{sizeof(dranet_attr_t), DRANET_ATTR_STRING, "dra.net/ifName", "spoofed", 0};
    dranet_attr_t bad_name{sizeof(dranet_attr_t), DRANET_ATTR_INT, FAKE_PLUGIN_NAME ".dra.net/not-an-identifier", nullptr, 1};
    if (sink->add_attr(sink->sink_ctx, &too_long) == DRANET_OK ||
        sink->add_attr(sink->sink_ctx, &core) == DRANET_OK ||
        sink->add_attr(sink->sink_ctx, &bad_name) == DRANET_OK)
      return dranet_error_set(err, DRANET_ERR_INTERNAL, 0, "host accepted an invalid attribute");
  }
  return DRANET_OK;
#endif
}

#if defined(FAKE_VARIANT_ROUTES) || defined(FAKE_VARIANT_BADROUTE)
[[maybe_unused]] std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

uint32_t Number(const std::string& text) { return static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10)); }

// Adds one route; fields as in the "routes" configuration key.
dranet_status_t AddRoute(const dranet_edit_sink_t* sink, const std::vector<std::string>& f) {
  dranet_route_t r{};
  r.struct_size = sizeof r;
  r.destination = f.at(1).c_str();
  r.gateway = f.at(2).c_str();
  r.source = f.at(3).c_str();
  r.table = Number(f.at(4));
  r.metric = Number(f.at(5));
  r.scope = Number(f.at(6));
  return dranet_sink_add_route(sink, f.at(0).c_str(), &r);
}

dranet_status_t AddRule(const dranet_edit_sink_t* sink, const std::vector<std::string>& f) {
  dranet_rule_t r{};
  r.struct_size = sizeof r;
  r.source = f.at(1).c_str();
  r.destination = f.at(2).c_str();
  r.table = Number(f.at(3));
  r.priority = Number(f.at(4));
  return dranet_sink_add_rule(sink, f.at(0).c_str(), &r);
}
#endif

#if defined(FAKE_VARIANT_ROUTES)
// Every configured route and rule (or the default pair per netdev), with
// the sink's answers in env FAKE_ROUTE_STATUS.
dranet_status_t InjectRoutes(const FakeState* s, const dranet_inject_request_t* req, const dranet_edit_sink_t* sink) {
  std::string statuses;
  auto record = [&](dranet_status_t st) {
    if (!statuses.empty()) statuses += ",";
    statuses += std::to_string(st);
  };
  if (s->routes.empty() && s->rules.empty()) {
    for (uint32_t i = 0; i < req->n_devices; ++i) {
      const dranet_device_t& d = req->devices[i];
      if (d.if_name == nullptr || d.if_name[0] == '\0') continue;
      std::string table = std::to_string(100 + i);
      record(AddRoute(sink, {d.name, "0.0.0.0/0", "192.0.2.1", "", table, "", "0"}));
      record(AddRule(sink, {d.name, "192.0.2.0/24", "", table, ""}));
    }
  }
  for (const auto& entry : s->routes.empty() ? std::vector<std::string>{} : Split(s->routes, ';')) {
    auto f = Split(entry, '|');
    f.resize(7);
    record(AddRoute(sink, f));
  }
  for (const auto& entry : s->rules.empty() ? std::vector<std::string>{} : Split(s->rules, ';')) {
    auto f = Split(entry, '|');
    f.resize(5);
    record(AddRule(sink, f));
  }
  return sink->add_env(sink->sink_ctx, "FAKE_ROUTE_STATUS", statuses.c_str());
}
#endif

#if defined(FAKE_VARIANT_BADROUTE)
// The bug the conformance suite must catch: routes for devices remembered
// from annotate (not necessarily in this request) and for request devices
// without a netdev; the host's refusals are ignored.
void InjectBadRoutes(const FakeState* s, const dranet_inject_request_t* req, const dranet_edit_sink_t* sink) {
  std::vector<std::string> targets = s->annotated;
  for (uint32_t i = 0; i < req->n_devices; ++i) targets.emplace_back(req->devices[i].name);
  for (const auto& name : targets) {
    (void)AddRoute(sink, {name, "192.0.2.0/24", "", "", "", "", "253"});
    (void)AddRule(sink, {name, "192.0.2.0/24", "", "100", ""});
  }
}
#endif

[[maybe_unused]] dranet_status_t Inject(void* state, const dranet_inject_request_t* req, const dranet_edit_sink_t* sink,
                       dranet_error_t* err) {
#if defined(FAKE_VARIANT_ROUTES)
  dranet_status_t rs = InjectRoutes(static_cast<const FakeState*>(state), req, sink);
  if (rs != DRANET_OK) return dranet_error_set(err, rs, 0, "env FAKE_ROUTE_STATUS refused");
#elif defined(FAKE_VARIANT_BADROUTE)
  InjectBadRoutes(static_cast<const FakeState*>(state), req, sink);
#else
  (void)state;
#endif
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

#if !defined(FAKE_VARIANT_ABI10) && !defined(FAKE_VARIANT_GARBAGE)
#define FAKE_HAS_PROFILES 1
dranet_status_t GetProfile(void* state, const dranet_profile_request_t* req, const dranet_profile_sink_t* sink,
                           dranet_error_t* err) {
  const auto* s = static_cast<const FakeState*>(state);
  const std::string profile = req->profile;
#if defined(FAKE_VARIANT_GREEDYPROFILE)
  return sink->set_config(sink->sink_ctx, s->profile_config.c_str());  // claims every profile
#endif
  if (profile == "fake-profile") return sink->set_config(sink->sink_ctx, s->profile_config.c_str());
  if (profile == "fake-device") {
    // Proves the host handed over the allocated device: its name, PCI address and netdev.
    const std::string json = std::string("{\"interface\":{\"name\":\"") + req->device->name + "\"},\"x-pci\":\"" +
                             req->device->pci_address + "\",\"x-if\":\"" + req->device->if_name + "\"}";
    return sink->set_config(sink->sink_ctx, json.c_str());
  }
  if (profile == "fake-fail")
    return dranet_error_set(err, DRANET_ERR_IO, 111, "simulated IPAM outage for %s", req->device->name);
  if (profile == "fake-garbage") return sink->set_config(sink->sink_ctx, "this is not json");
  if (profile == "fake-hang") {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    return DRANET_OK;
  }
  return dranet_error_set(err, DRANET_ERR_NOT_FOUND, 0, "profile %s is not mine", profile.c_str());
}

dranet_status_t ReleaseProfile(void* state, const dranet_profile_request_t* req, dranet_error_t* err) {
  const auto* s = static_cast<const FakeState*>(state);
  const std::string profile = req->profile;
  if (profile == "fake-fail")
    return dranet_error_set(err, DRANET_ERR_IO, 111, "simulated IPAM outage releasing %s", req->device->name);
  if (profile.rfind("fake-", 0) != 0) return DRANET_ERR_NOT_FOUND;
  DRANET_LOG(s->host, DRANET_LOG_INFO, "%s released profile %s of %s (pci %s) for claim %s", FAKE_PLUGIN_NAME,
             profile.c_str(), req->device->name, req->device->pci_address, req->claim_uid);
  return DRANET_OK;
}
#endif

#if defined(FAKE_VARIANT_SLOWLOAD)
// Runs inside dlopen, before the host sees the entry: loading itself stalls.
[[maybe_unused]] const int kSlowLoad = [] {
  std::this_thread::sleep_for(std::chrono::seconds(2));
  return 0;
}();
#endif

#if defined(FAKE_VARIANT_GARBAGE)
// A descriptor whose every field is wrong: the host must reject it without
// calling anything.
const unsigned char kGarbage[sizeof(dranet_plugin_t)] = {0xff, 0xff, 0xff, 0x7f, 0xde, 0xad, 0xbe, 0xef};
#else
#if defined(FAKE_VARIANT_INTRUDER)
const char* const kIntruderDomains[] = {"intruder.example.com", "fake.dra.net", nullptr};
#endif
const char* const kReads[] = {"class/net/*/statistics/rx_bytes", nullptr};
const dranet_plugin_t kDescriptor = {
    sizeof(dranet_plugin_t),
#if defined(FAKE_VARIANT_BADABI)
    DRANET_ABI_VERSION(2, 0),
#elif defined(FAKE_VARIANT_ABI10)
    DRANET_ABI_VERSION(1, 0),  // built before routes existed: never touches add_route
#elif defined(FAKE_VARIANT_LEGACY)
    DRANET_ABI_VERSION(1, 2),  // built before attribute domains were owned
#else
    DRANET_ABI_CURRENT,
#endif
    FAKE_PLUGIN_NAME,
    "0.1.0",
    "test plugin (" FAKE_PLUGIN_NAME ")",
#if defined(FAKE_HAS_PROFILES)
    DRANET_CAP_ALL | DRANET_CAP_PROFILES,
#else
    DRANET_CAP_ALL,
#endif
    0,
    kMatches,
    kConfigKeys,
    &Init,
    &Fini,
    &Discover,
    &Annotate,
    &Inject,
#if defined(FAKE_HAS_PROFILES)
    &GetProfile,
    &ReleaseProfile,
#else
    nullptr,
    nullptr,
#endif
#if defined(FAKE_VARIANT_INTRUDER)
    kIntruderDomains,
#else
    nullptr,
#endif
#if defined(FAKE_VARIANT_NEEDSNEWER)
    DRANET_ABI_VERSION(1, 99),  // min_host_abi: no host is new enough
#else
    0,  // min_host_abi
#endif
    0,  // reserved
    kReads,
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
#if defined(FAKE_VARIANT_NEEDSNEWER)
  // As DRANET_PLUGIN_DEFINE_MIN_HOST: refuses, leaving the descriptor to say why.
  if (DRANET_ABI_MINOR_OF(host_abi_version) < 99) return DRANET_ERR_ABI_MISMATCH;
#endif
  return DRANET_OK;
}
