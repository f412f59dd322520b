// dranet/plugin.hpp — header-only C++17 helper for writing dranet plugins.
//
// Turns a C++ class into the C descriptor of dranet/plugin.h and guards
// every entry point: no exception ever leaves the plugin. Nothing here
// crosses the ABI; it is compiled into the plugin.
//
//   class MyPlugin {
//    public:
//     static constexpr const char* kName = "my-vendor";          // required
//     static constexpr const char* kVersion = "1.0.0";           // required
//     static constexpr const char* kDescription = "what it does"; // required
//     static constexpr const dranet_match_t* kMatchTable = kMatches;     // optional
//     static constexpr const dranet_config_key_t* kConfigKeys = kKeys;   // optional
//     static constexpr const char* const* kAttributeDomains = kDomains;  // optional (ABI 1.3)
//     static constexpr uint32_t kMinHostAbi = DRANET_ABI_VERSION(1, 2);   // optional (ABI 1.3)
//     static constexpr const char* const* kSnapshotPaths = kPaths;         // optional (ABI 1.3)
//     explicit MyPlugin(const dranet::sdk::Host& host);   // throw NotApplicable to opt out
//     void Discover(dranet::sdk::DeviceSink& sink);                           // optional
//     void Annotate(const dranet::sdk::DeviceView& dev, dranet::sdk::AttrSink& sink);  // optional
//     void Inject(const dranet::sdk::InjectRequest& req, dranet::sdk::EditSink& sink); // optional
//     // optional, both or neither (ABI 1.2): nullopt = "not my profile"
//     std::optional<std::string> GetProfile(const dranet::sdk::ProfileRequest& req);
//     void ReleaseProfile(const dranet::sdk::ProfileRequest& req);
//   };
//   DRANET_CXX_PLUGIN(MyPlugin)
//
// Capabilities follow from the methods the class has; a method with one of
// these names but another signature fails to compile (static_assert) rather
// than silently dropping its capability. Methods report
// failure by throwing dranet::sdk::Error (a status code plus message); any
// other exception becomes DRANET_ERR_INTERNAL with its what() text.
#ifndef DRANET_PLUGIN_HPP
#define DRANET_PLUGIN_HPP

#include <dranet/plugin.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace dranet {
namespace sdk {

// A failure with a dranet status code. Thrown by plugin code and by the
// wrappers below when the host reports an error.
class Error : public std::runtime_error {
 public:
  Error(dranet_status_t status, const std::string& message, int32_t sys_errno = 0)
      : std::runtime_error(message), status_(status), sys_errno_(sys_errno) {}
  dranet_status_t status() const noexcept { return status_; }
  int32_t sys_errno() const noexcept { return sys_errno_; }

 private:
  dranet_status_t status_;
  int32_t sys_errno_;
};

// Thrown from the constructor when the plugin does not apply to this node.
class NotApplicable : public std::runtime_error {
 public:
  explicit NotApplicable(const std::string& why) : std::runtime_error(why) {}
};

struct HttpResponse {
  int32_t status = 0;
  std::string body;
};

// The host's services. Copyable view; valid until the plugin is destroyed.
class Host {
 public:
  explicit Host(const dranet_host_t* host) : host_(host) {}

  std::string host_root() const { return Str(host_->host_root); }
  std::string sysfs_root() const { return Str(host_->sysfs_root); }
  std::string devfs_root() const { return Str(host_->devfs_root); }
  std::string procfs_root() const { return Str(host_->procfs_root); }
  std::string node_name() const { return Str(host_->node_name); }
  uint32_t abi_version() const { return host_->abi_version; }
  const dranet_host_t* raw() const { return host_; }

  bool LogEnabled(int32_t level) const {
    return host_->log_enabled == nullptr || host_->log_enabled(host_->host_ctx, level) != 0;
  }
  void Log(int32_t level, const std::string& message, const char* file = nullptr,
           int32_t line = 0) const {
    if (host_->log != nullptr && LogEnabled(level))
      host_->log(host_->host_ctx, level, file, line, message.c_str());
  }
  void Info(const std::string& m) const { Log(DRANET_LOG_INFO, m); }
  void Warn(const std::string& m) const { Log(DRANET_LOG_WARN, m); }
  void Debug(const std::string& m) const { Log(DRANET_LOG_DEBUG, m); }

  // A configuration value, or nullopt when the operator did not set it.
  std::optional<std::string> Config(const char* key) const {
    const char* value = nullptr;
    if (host_->config_get == nullptr) return std::nullopt;
    if (host_->config_get(host_->host_ctx, key, &value) != DRANET_OK || value == nullptr)
      return std::nullopt;
    return std::string(value);
  }
  std::string Config(const char* key, const std::string& fallback) const {
    auto v = Config(key);
    return v ? *v : fallback;
  }

  // HTTP GET through the host; throws Error on transport failure. Bodies
  // larger than max_body fail with DRANET_ERR_OVERFLOW.
  HttpResponse HttpGet(const std::string& url, const std::vector<std::string>& headers,
                       uint32_t timeout_ms, std::size_t max_body = 1 << 20) const {
    return HttpRequest("GET", url, headers, timeout_ms, max_body);
  }

  // GET or (host ABI 1.4+) PUT with an empty body; a plugin that sends PUT
  // declares DRANET_PLUGIN_DEFINE_MIN_HOST(4) or checks abi_version().
  HttpResponse HttpRequest(const std::string& method, const std::string& url,
                           const std::vector<std::string>& headers, uint32_t timeout_ms,
                           std::size_t max_body = 1 << 20) const {
    if (host_->http_get == nullptr) throw Error(DRANET_ERR_UNSUPPORTED, "host offers no http_get");
    if (method != "GET" && DRANET_ABI_MINOR_OF(host_->abi_version) < 4)
      throw Error(DRANET_ERR_UNSUPPORTED, method + " " + url + ": the host (ABI 1." +
                                              std::to_string(DRANET_ABI_MINOR_OF(host_->abi_version)) +
                                              ") sends only GET; " + method + " needs host ABI 1.4");
    std::vector<const char*> hdrs;
    hdrs.reserve(headers.size());
    for (const auto& h : headers) hdrs.push_back(h.c_str());
    dranet_http_request_t req{};
    req.struct_size = sizeof req;
    req.timeout_ms = timeout_ms;
    req.url = url.c_str();
    req.headers = hdrs.empty() ? nullptr : hdrs.data();
    req.n_headers = static_cast<uint32_t>(hdrs.size());
    req.method = method.c_str();
    std::string body(max_body, '\0');
    int32_t status = 0;
    uint64_t len = 0;
    dranet_error_t err{};
    err.struct_size = sizeof err;
    dranet_status_t st = host_->http_get(host_->host_ctx, &req, body.data(), body.size(), &status,
                                         &len, &err);
    if (st != DRANET_OK) throw Error(st, method + " " + url + ": " + err.message, err.sys_errno);
    body.resize(static_cast<std::size_t>(len));
    return HttpResponse{status, std::move(body)};
  }

 private:
  static std::string Str(const char* s) { return s ? std::string(s) : std::string(); }
  const dranet_host_t* host_;
};

// Read-only view of a device handed to the plugin (borrowed for the call).
class DeviceView {
 public:
  explicit DeviceView(const dranet_device_t* d) : d_(d) {}
  std::string name() const { return S(d_->name); }
  std::string pci_address() const { return S(d_->pci_address); }
  std::string if_name() const { return S(d_->if_name); }
  std::string rdma_device() const { return S(d_->rdma_device); }
  std::string driver() const { return S(d_->driver); }
  int32_t numa_node() const { return d_->numa_node; }
  uint32_t pci_vendor() const { return d_->pci_vendor; }
  uint32_t pci_device() const { return d_->pci_device; }
  const dranet_device_t* raw() const { return d_; }

  // The attribute called `name`, or nullptr.
  const dranet_attr_t* Attr(const char* name) const {
    for (uint32_t i = 0; i < d_->n_attrs; ++i)
      if (d_->attrs[i].name != nullptr && std::strcmp(d_->attrs[i].name, name) == 0)
        return &d_->attrs[i];
    return nullptr;
  }

 private:
  static std::string S(const char* s) { return s ? std::string(s) : std::string(); }
  const dranet_device_t* d_;
};

namespace detail {
inline void Check(dranet_status_t st, const char* what) {
  if (st != DRANET_OK) throw Error(st, std::string("host rejected ") + what);
}
}  // namespace detail

// Adds attributes to the device being annotated.
class AttrSink {
 public:
  explicit AttrSink(const dranet_attr_sink_t* s) : s_(s) {}
  // Each returns false when the host rejected the attribute (it logs why).
  bool String(const std::string& name, const std::string& value) const {
    return Add(name, DRANET_ATTR_STRING, value.c_str(), 0);
  }
  bool Int(const std::string& name, int64_t value) const {
    return Add(name, DRANET_ATTR_INT, nullptr, value);
  }
  bool Bool(const std::string& name, bool value) const {
    return Add(name, DRANET_ATTR_BOOL, nullptr, value ? 1 : 0);
  }
  bool Version(const std::string& name, const std::string& value) const {
    return Add(name, DRANET_ATTR_VERSION, value.c_str(), 0);
  }

 private:
  bool Add(const std::string& name, uint32_t type, const char* str, int64_t i) const {
    dranet_attr_t a{};
    a.struct_size = sizeof a;
    a.type = type;
    a.name = name.c_str();
    a.str_value = str;
    a.int_value = i;
    return s_->add_attr(s_->sink_ctx, &a) == DRANET_OK;
  }
  const dranet_attr_sink_t* s_;
};

// Reports discovered devices.
class DeviceSink {
 public:
  explicit DeviceSink(const dranet_device_sink_t* s) : s_(s) {}
  void Add(const dranet_device_t& device) const {
    detail::Check(s_->add_device(s_->sink_ctx, &device), "device");
  }

 private:
  const dranet_device_sink_t* s_;
};

// A route for one netdev of the claim (ABI 1.1; see dranet_route_t).
struct Route {
  std::string destination;  // CIDR, "0.0.0.0/0" / "::/0" for default
  std::string gateway;      // "" = on-link (needs scope DRANET_ROUTE_SCOPE_LINK)
  std::string source;       // preferred source address; "" = none
  uint32_t table = 0;       // 0 = main
  uint32_t metric = 0;
  uint32_t scope = DRANET_ROUTE_SCOPE_UNIVERSE;
};

// A policy rule for one netdev of the claim (ABI 1.1; see dranet_rule_t).
struct Rule {
  std::string source;       // CIDR or "" (from all)
  std::string destination;  // CIDR or "" (to all)
  uint32_t table = 0;
  uint32_t priority = 0;    // 0 = the kernel chooses
};

// Adds container edits for the claim being prepared.
class EditSink {
 public:
  explicit EditSink(const dranet_edit_sink_t* s) : s_(s) {}
  // A character device; major/minor -1 let the host stat the node.
  void CharDevice(const std::string& path, int64_t major = -1, int64_t minor = -1,
                  const char* permissions = "rw") const {
    dranet_dev_node_t n{};
    n.struct_size = sizeof n;
    n.type = 'c';
    n.path = path.c_str();
    n.major = major;
    n.minor = minor;
    n.permissions = permissions;
    detail::Check(s_->add_dev_node(s_->sink_ctx, &n), "device node");
  }
  void Env(const std::string& name, const std::string& value) const {
    detail::Check(s_->add_env(s_->sink_ctx, name.c_str(), value.c_str()), "env");
  }
  void Annotation(const std::string& key, const std::string& value) const {
    detail::Check(s_->add_annotation(s_->sink_ctx, key.c_str(), value.c_str()), "annotation");
  }
  void Mount(const std::string& host_path, const std::string& container_path,
             const std::vector<std::string>& options) const {
    std::vector<const char*> opts;
    for (const auto& o : options) opts.push_back(o.c_str());
    dranet_mount_t m{};
    m.struct_size = sizeof m;
    m.host_path = host_path.c_str();
    m.container_path = container_path.c_str();
    m.options = opts.empty() ? nullptr : opts.data();
    m.n_options = static_cast<uint32_t>(opts.size());
    detail::Check(s_->add_mount(s_->sink_ctx, &m), "mount");
  }

  // True when the host takes routes and rules (ABI 1.1+). A 1.0 host hands
  // a shorter sink; AddRoute/AddRule then throw Error(DRANET_ERR_UNSUPPORTED),
  // so check this first when routes are optional for the plugin.
  bool SupportsRoutes() const noexcept {
    return DRANET_HAS_FIELD(s_, dranet_edit_sink_t, add_route) && s_->add_route != nullptr &&
           DRANET_HAS_FIELD(s_, dranet_edit_sink_t, add_rule) && s_->add_rule != nullptr;
  }
  // `device` is the published name of one of the request's devices with a
  // netdev (DeviceView::name()). Throws Error when the host refuses it.
  void AddRoute(const std::string& device, const Route& route) const {
    dranet_route_t r{};
    r.struct_size = sizeof r;
    r.table = route.table;
    r.metric = route.metric;
    r.scope = route.scope;
    r.destination = route.destination.c_str();
    r.gateway = route.gateway.c_str();
    r.source = route.source.c_str();
    Checked(dranet_sink_add_route(s_, device.c_str(), &r), "route " + route.destination + " on " + device);
  }
  void AddRule(const std::string& device, const Rule& rule) const {
    dranet_rule_t r{};
    r.struct_size = sizeof r;
    r.priority = rule.priority;
    r.table = rule.table;
    r.source = rule.source.c_str();
    r.destination = rule.destination.c_str();
    Checked(dranet_sink_add_rule(s_, device.c_str(), &r), "rule for " + device);
  }

 private:
  static void Checked(dranet_status_t st, const std::string& what) {
    if (st == DRANET_ERR_UNSUPPORTED)
      throw Error(st, "the host (plugin ABI 1.0) does not take routes or rules: " + what +
                          " (check SupportsRoutes() first)");
    if (st != DRANET_OK) throw Error(st, "host rejected " + what);
  }
  const dranet_edit_sink_t* s_;
};

// The claim being prepared and its devices.
class InjectRequest {
 public:
  explicit InjectRequest(const dranet_inject_request_t* r) : r_(r) {}
  std::string claim_namespace() const { return r_->claim_namespace ? r_->claim_namespace : ""; }
  std::string claim_name() const { return r_->claim_name ? r_->claim_name : ""; }
  std::string claim_uid() const { return r_->claim_uid ? r_->claim_uid : ""; }
  std::vector<DeviceView> devices() const {
    std::vector<DeviceView> out;
    for (uint32_t i = 0; i < r_->n_devices; ++i) out.emplace_back(&r_->devices[i]);
    return out;
  }

 private:
  const dranet_inject_request_t* r_;
};

// A claim config's profile to resolve for one device (ABI 1.2; see
// dranet_profile_request_t for what the device carries at release).
class ProfileRequest {
 public:
  explicit ProfileRequest(const dranet_profile_request_t* r) : r_(r) {}
  std::string profile() const { return r_->profile ? r_->profile : ""; }
  std::string claim_uid() const { return r_->claim_uid ? r_->claim_uid : ""; }
  // The merged NetworkConfig JSON object, "profile" included.
  std::string config_json() const { return r_->config_json ? r_->config_json : ""; }
  DeviceView device() const { return DeviceView(r_->device); }

 private:
  const dranet_profile_request_t* r_;
};

namespace detail {

// Runs f and turns every exception into a status code plus message.
template <typename F>
dranet_status_t Guard(dranet_error_t* err, F&& f) noexcept {
  try {
    f();
    return DRANET_OK;
  } catch (const Error& e) {
    return dranet_error_set(err, e.status(), e.sys_errno(), "%s", e.what());
  } catch (const NotApplicable& e) {
    return dranet_error_set(err, DRANET_ERR_UNSUPPORTED, 0, "%s", e.what());
  } catch (const std::bad_alloc&) {
    return dranet_error_set(err, DRANET_ERR_NO_MEMORY, 0, "out of memory");
  } catch (const std::exception& e) {
    return dranet_error_set(err, DRANET_ERR_INTERNAL, 0, "%s", e.what());
  } catch (...) {
    return dranet_error_set(err, DRANET_ERR_INTERNAL, 0, "unknown exception");
  }
}

template <typename, typename = void>
struct HasDiscover : std::false_type {};
template <typename P>
struct HasDiscover<P, std::void_t<decltype(std::declval<P&>().Discover(std::declval<DeviceSink&>()))>>
    : std::true_type {};
template <typename, typename = void>
struct HasAnnotate : std::false_type {};
template <typename P>
struct HasAnnotate<P, std::void_t<decltype(std::declval<P&>().Annotate(
                          std::declval<const DeviceView&>(), std::declval<AttrSink&>()))>>
    : std::true_type {};
template <typename, typename = void>
struct HasInject : std::false_type {};
template <typename P>
struct HasInject<P, std::void_t<decltype(std::declval<P&>().Inject(
                        std::declval<const InjectRequest&>(), std::declval<EditSink&>()))>>
    : std::true_type {};
template <typename, typename = void>
struct HasGetProfile : std::false_type {};
template <typename P>
struct HasGetProfile<P, std::void_t<decltype(std::declval<P&>().GetProfile(std::declval<const ProfileRequest&>()))>>
    : std::is_convertible<decltype(std::declval<P&>().GetProfile(std::declval<const ProfileRequest&>())),
                          std::optional<std::string>> {};
template <typename, typename = void>
struct HasReleaseProfile : std::false_type {};
template <typename P>
struct HasReleaseProfile<P, std::void_t<decltype(std::declval<P&>().ReleaseProfile(
                                std::declval<const ProfileRequest&>()))>> : std::true_type {};
// Trait::value is P::member when the class defines it, else `fallback`:
// the optional static members of a plugin class.
#define DRANET_SDK_OPTIONAL_MEMBER(Trait, member, Type, fallback)                 \
  template <typename, typename = void>                                            \
  struct Trait {                                                                  \
    static constexpr Type value = fallback;                                       \
  };                                                                              \
  template <typename P>                                                           \
  struct Trait<P, std::void_t<decltype(P::member)>> {                             \
    static constexpr Type value = P::member;                                      \
  };
DRANET_SDK_OPTIONAL_MEMBER(MatchTableOf, kMatchTable, const dranet_match_t*, nullptr)
DRANET_SDK_OPTIONAL_MEMBER(ConfigKeysOf, kConfigKeys, const dranet_config_key_t*, nullptr)
DRANET_SDK_OPTIONAL_MEMBER(AttributeDomainsOf, kAttributeDomains, const char* const*, nullptr)
DRANET_SDK_OPTIONAL_MEMBER(SnapshotPathsOf, kSnapshotPaths, const char* const*, nullptr)
DRANET_SDK_OPTIONAL_MEMBER(MinHostAbiOf, kMinHostAbi, uint32_t, 0)
#undef DRANET_SDK_OPTIONAL_MEMBER

// True when P has exactly one member of that name, whatever its signature:
// with the Has* traits above it tells a near miss (a method the helper
// would not call) from an absent method.
#define DRANET_SDK_NAMES_MEMBER(Trait, member)                                    \
  template <typename, typename = void>                                            \
  struct Trait : std::false_type {};                                              \
  template <typename P>                                                           \
  struct Trait<P, std::void_t<decltype(&P::member)>> : std::true_type {};
DRANET_SDK_NAMES_MEMBER(NamesDiscover, Discover)
DRANET_SDK_NAMES_MEMBER(NamesAnnotate, Annotate)
DRANET_SDK_NAMES_MEMBER(NamesInject, Inject)
DRANET_SDK_NAMES_MEMBER(NamesGetProfile, GetProfile)
DRANET_SDK_NAMES_MEMBER(NamesReleaseProfile, ReleaseProfile)
#undef DRANET_SDK_NAMES_MEMBER

template <typename P>
struct Adapter {
  static dranet_status_t Init(const dranet_host_t* host, void** state_out,
                              dranet_error_t* err) noexcept {
    return Guard(err, [&] {
      if (host == nullptr || state_out == nullptr)
        throw Error(DRANET_ERR_INVALID_ARG, "init: NULL argument");
      *state_out = new P(Host(host));
    });
  }
  static void Fini(void* state) noexcept {
    try {
      delete static_cast<P*>(state);
    } catch (...) {
      // A destructor that throws is a plugin bug; fini must not fail.
    }
  }
  static dranet_status_t Discover(void* state, const dranet_device_sink_t* sink,
                                  dranet_error_t* err) noexcept {
    return Guard(err, [&] {
      DeviceSink s(sink);
      static_cast<P*>(state)->Discover(s);
    });
  }
  static dranet_status_t Annotate(void* state, const dranet_device_t* device,
                                  const dranet_attr_sink_t* sink, dranet_error_t* err) noexcept {
    return Guard(err, [&] {
      AttrSink s(sink);
      static_cast<P*>(state)->Annotate(DeviceView(device), s);
    });
  }
  static dranet_status_t Inject(void* state, const dranet_inject_request_t* request,
                                const dranet_edit_sink_t* sink, dranet_error_t* err) noexcept {
    return Guard(err, [&] {
      EditSink s(sink);
      static_cast<P*>(state)->Inject(InjectRequest(request), s);
    });
  }
  static dranet_status_t GetProfile(void* state, const dranet_profile_request_t* request,
                                    const dranet_profile_sink_t* sink, dranet_error_t* err) noexcept {
    return Guard(err, [&] {
      ProfileRequest req(request);
      std::optional<std::string> config = static_cast<P*>(state)->GetProfile(req);
      if (!config) throw Error(DRANET_ERR_NOT_FOUND, "profile \"" + req.profile() + "\" is not one of " + P::kName + "'s");
      detail::Check(sink->set_config(sink->sink_ctx, config->c_str()), "profile config");
    });
  }
  static dranet_status_t ReleaseProfile(void* state, const dranet_profile_request_t* request,
                                        dranet_error_t* err) noexcept {
    return Guard(err, [&] { static_cast<P*>(state)->ReleaseProfile(ProfileRequest(request)); });
  }
};

}  // namespace detail

// The descriptor for plugin class P, built at compile time (no code runs
// when the library is loaded).
template <typename P>
constexpr dranet_plugin_t MakeDescriptor() {
  using A = detail::Adapter<P>;
  constexpr bool kProfiles = detail::HasGetProfile<P>::value;
  static_assert(!detail::NamesDiscover<P>::value || detail::HasDiscover<P>::value,
                "dranet::sdk: Discover has the wrong signature; it must be callable as "
                "void Discover(dranet::sdk::DeviceSink& sink)");
  static_assert(!detail::NamesAnnotate<P>::value || detail::HasAnnotate<P>::value,
                "dranet::sdk: Annotate has the wrong signature; it must be callable as "
                "void Annotate(const dranet::sdk::DeviceView& dev, dranet::sdk::AttrSink& sink)");
  static_assert(!detail::NamesInject<P>::value || detail::HasInject<P>::value,
                "dranet::sdk: Inject has the wrong signature; it must be callable as "
                "void Inject(const dranet::sdk::InjectRequest& req, dranet::sdk::EditSink& sink)");
  static_assert(!detail::NamesGetProfile<P>::value || detail::HasGetProfile<P>::value,
                "dranet::sdk: GetProfile has the wrong signature; it must be "
                "std::optional<std::string> GetProfile(const dranet::sdk::ProfileRequest& req)");
  static_assert(!detail::NamesReleaseProfile<P>::value || detail::HasReleaseProfile<P>::value,
                "dranet::sdk: ReleaseProfile has the wrong signature; it must be callable as "
                "void ReleaseProfile(const dranet::sdk::ProfileRequest& req)");
  static_assert(kProfiles == detail::HasReleaseProfile<P>::value,
                "a profile plugin defines both std::optional<std::string> GetProfile(const ProfileRequest&) "
                "and void ReleaseProfile(const ProfileRequest&)");
  dranet_plugin_t d{};
  d.struct_size = sizeof(dranet_plugin_t);
  d.abi_version = DRANET_ABI_CURRENT;
  d.name = P::kName;
  d.version = P::kVersion;
  d.description = P::kDescription;
  d.capabilities = (detail::HasDiscover<P>::value ? DRANET_CAP_DISCOVERY : 0u) |
                   (detail::HasAnnotate<P>::value ? DRANET_CAP_ATTRIBUTES : 0u) |
                   (detail::HasInject<P>::value ? DRANET_CAP_INJECTION : 0u) |
                   (kProfiles ? DRANET_CAP_PROFILES : 0u);
  d.flags = 0;  // no flags are defined (plugin.h)
  d.match_table = detail::MatchTableOf<P>::value;
  d.config_keys = detail::ConfigKeysOf<P>::value;
  d.attribute_domains = detail::AttributeDomainsOf<P>::value;
  d.min_host_abi = detail::MinHostAbiOf<P>::value;
  d.snapshot_paths = detail::SnapshotPathsOf<P>::value;
  d.init = &A::Init;
  d.fini = &A::Fini;
  if constexpr (detail::HasDiscover<P>::value) d.discover = &A::Discover;
  if constexpr (detail::HasAnnotate<P>::value) d.annotate = &A::Annotate;
  if constexpr (detail::HasInject<P>::value) d.inject = &A::Inject;
  if constexpr (kProfiles) {
    d.get_profile = &A::GetProfile;
    d.release_profile = &A::ReleaseProfile;
  }
  return d;
}

}  // namespace sdk
}  // namespace dranet

// Defines the plugin's descriptor and its exported entry symbol. Use once,
// at namespace scope, in one source file of the plugin. A host older than
// kMinHostAbi is refused by the entry (DRANET_PLUGIN_DEFINE_MIN_HOST).
#define DRANET_CXX_PLUGIN(PluginClass)                                       \
  static constexpr dranet_plugin_t dranet_cxx_plugin_descriptor_ =           \
      ::dranet::sdk::MakeDescriptor<PluginClass>();                          \
  extern "C" DRANET_PLUGIN_DEFINE_MIN_HOST(                                  \
      dranet_cxx_plugin_descriptor_,                                         \
      DRANET_ABI_MINOR_OF(dranet_cxx_plugin_descriptor_.min_host_abi))

#endif  // DRANET_PLUGIN_HPP
