#include "plugins/plugin_host.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <regex>
#include <set>

#include "base/json.h"
#include "plugins/attribute_rules.h"
#include "plugins/device_abi.h"
#include "plugins/network_edit_rules.h"
#include "plugins/plugin_library.h"
#include "plugins/plugin_status.h"
#include "plugins/plugin_worker.h"

namespace dranet::plugins {
namespace fs = std::filesystem;

const char* OutcomeName(PluginOutcome outcome) {
  switch (outcome) {
    case PluginOutcome::kLoaded: return "loaded";
    case PluginOutcome::kNotApplicable: return "not-applicable";
    case PluginOutcome::kSkipped: return "skipped";
    case PluginOutcome::kRejected: return "rejected";
    case PluginOutcome::kFailed: return "failed";
  }
  return "unknown";
}

bool MatchesTable(const std::vector<dranet_match_t>& table, const inventory::Device& device) {
  if (table.empty()) return true;
  for (const auto& m : table) {
    switch (m.kind) {
      case DRANET_MATCH_ALWAYS: return true;
      case DRANET_MATCH_PCI:
        if (device.pci_vendor_id != 0 &&
            (m.pci_vendor == DRANET_MATCH_ANY_ID || m.pci_vendor == device.pci_vendor_id) &&
            (m.pci_device == DRANET_MATCH_ANY_ID || m.pci_device == device.pci_device_id))
          return true;
        break;
      case DRANET_MATCH_DRIVER:
        if (m.pattern != nullptr && !device.driver.empty() && device.driver == m.pattern) return true;
        break;
      case DRANET_MATCH_IFNAME:
        if (m.pattern != nullptr && !device.if_name.empty() &&
            fnmatch(m.pattern, device.if_name.c_str(), 0) == 0)
          return true;
        break;
      case DRANET_MATCH_RDMA:
        if (!device.rdma_device.empty()) return true;
        break;
      default: break;  // a kind from a newer minor never matches
    }
  }
  return false;
}

std::vector<inventory::Device> WithPlugins(PluginHost& host, std::vector<inventory::Device> discovered,
                                           Logger& logger) {
  std::set<std::string> names;
  for (const auto& d : discovered) names.insert(d.name);
  for (auto& d : host.Discover()) {
    if (!names.insert(d.name).second) {
      logger.Warning("plugin device dropped: the name is taken by a discovered device", {{"device", d.name}});
      continue;
    }
    discovered.push_back(std::move(d));
  }
  host.Annotate(discovered);
  std::sort(discovered.begin(), discovered.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return discovered;
}

// One initialised plugin: its library, host services, worker and state.
// Declaration order matters: the worker stops (joins) before the services
// and the library go away.
struct PluginHost::Loaded {
  std::unique_ptr<PluginLibrary> library;
  std::unique_ptr<HostServices> services;
  std::unique_ptr<PluginWorker> worker;
  void* state = nullptr;
  bool initialised = false;
  std::size_t report_index = 0;
  // Disabled after a missed deadline, until retry_at (PluginHost::state_mu_).
  bool disabled = false;
  std::chrono::steady_clock::time_point retry_at{};
  std::chrono::milliseconds backoff{0};
  const ValidatedDescriptor& d() const { return library->descriptor(); }

  ~Loaded() {
    if (worker && worker->hung()) {
      // A call never returned: plugin code may still run, so neither its
      // state nor its code can be released.
      library->Leak();
      (void)services.release();
      return;
    }
    if (initialised && worker) {
      auto fini = d().fini;
      void* s = state;
      worker->Run([fini, s] {
        try {
          fini(s);
        } catch (...) {
        }
      }, std::chrono::milliseconds(2000));
      if (worker->hung()) {
        library->Leak();
        (void)services.release();
        return;
      }
    }
    worker.reset();
  }
};

namespace {

// Runs a plugin op, turning a stray C++ exception into a status.
template <typename F>
dranet_status_t CallGuarded(F&& f, dranet_error_t& err) {
  try {
    return f();
  } catch (const std::exception& e) {
    return dranet_error_set(&err, DRANET_ERR_INTERNAL, 0, "plugin threw: %s", e.what());
  } catch (...) {
    return dranet_error_set(&err, DRANET_ERR_INTERNAL, 0, "plugin threw an unknown exception");
  }
}

dranet_error_t NewError() {
  dranet_error_t e{};
  e.struct_size = sizeof e;
  return e;
}

std::string StatusText(dranet_status_t st, const dranet_error_t& err) { return DescribeStatus(st, err); }

// A problem with the directory itself, or "" when it may be used.
std::string CheckDirectory(const fs::path& dir, bool require_root_owned) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "plugin directory " + dir.string() + " does not exist";
  if (!S_ISDIR(st.st_mode)) return "plugin directory " + dir.string() + " is not a directory";
  if (require_root_owned && st.st_uid != 0)
    return "plugin directory " + dir.string() + " is not owned by root (uid " +
           std::to_string(st.st_uid) + "): refusing to load code from it";
  if (require_root_owned && (st.st_mode & S_IWOTH))
    return "plugin directory " + dir.string() + " is world-writable: refusing to load code from it";
  return {};
}

std::string CheckFile(const fs::path& file, bool require_root_owned) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return "cannot stat " + file.string();
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (require_root_owned && st.st_uid != 0) return "file is not owned by root";
  if (require_root_owned && (st.st_mode & S_IWOTH)) return "file is world-writable";
  return {};
}

bool Listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string AbiText(uint32_t v) {
  return std::to_string(DRANET_ABI_MAJOR_OF(v)) + "." + std::to_string(DRANET_ABI_MINOR_OF(v));
}

}  // namespace

bool PluginHost::Usable(Loaded& plugin) {
  if (!plugin.initialised || plugin.worker->hung()) return false;
  std::lock_guard lock(state_mu_);
  if (!plugin.disabled) return true;
  if (std::chrono::steady_clock::now() < plugin.retry_at) return false;
  plugin.disabled = false;
  auto& report = reports_[plugin.report_index];
  logger_.Info("plugin re-enabled after its back-off",
               {{"name", report.name}, {"backoffMs", static_cast<int64_t>(plugin.backoff.count())}});
  report.outcome = PluginOutcome::kLoaded;
  report.reason.clear();
  return true;
}

void PluginHost::Disable(Loaded& plugin, const std::string& what) {
  std::lock_guard lock(state_mu_);
  plugin.backoff = plugin.backoff.count() == 0 ? options_.retry_backoff
                                               : std::min(plugin.backoff * 2, options_.max_retry_backoff);
  plugin.disabled = true;
  plugin.retry_at = std::chrono::steady_clock::now() + plugin.backoff;
  auto& report = reports_[plugin.report_index];
  report.outcome = PluginOutcome::kFailed;
  report.reason = what + " missed its deadline of " + std::to_string(options_.call_deadline.count()) +
                  " ms; disabled, retried " + std::to_string(plugin.backoff.count()) +
                  " ms after the call comes back";
  logger_.Error("plugin call missed its deadline; plugin disabled",
                {{"name", report.name}, {"op", what},
                 {"deadlineMs", static_cast<int64_t>(options_.call_deadline.count())},
                 {"retryAfterMs", static_cast<int64_t>(plugin.backoff.count())}});
}

void PluginHost::CallReturned(Loaded& plugin) {
  std::lock_guard lock(state_mu_);
  if (!plugin.disabled) plugin.backoff = std::chrono::milliseconds(0);
}

std::string CapabilityNames(uint32_t capabilities, const char* separator) {
  std::string s;
  for (const auto& [bit, name] : {std::pair{DRANET_CAP_DISCOVERY, "discovery"}, std::pair{DRANET_CAP_ATTRIBUTES, "attributes"},
                                  std::pair{DRANET_CAP_INJECTION, "injection"}, std::pair{DRANET_CAP_PROFILES, "profiles"}})
    if (capabilities & bit) s += (s.empty() ? "" : separator) + std::string(name);
  return s;
}

PluginHost::PluginHost(PluginHostOptions options, Logger& logger)
    : options_(std::move(options)), logger_(logger) {
  for (const auto& dir : options_.plugin_dirs) LoadDirectory(dir);
  AssignAttributeDomains();
}

void PluginHost::AssignAttributeDomains() {
  std::vector<AttributeDomains::Plugin> plugins;
  for (const auto& lp : loaded_)
    if (lp->initialised) plugins.push_back({lp->d().name, lp->d().abi_version, lp->d().attribute_domains});
  std::set<std::string> present;
  for (const auto& r : reports_)
    if (!r.name.empty()) present.insert(r.name);
  domains_ = std::make_shared<const AttributeDomains>(plugins, present);
  for (const auto& lp : loaded_) {
    if (!lp->initialised) continue;
    auto& report = reports_[lp->report_index];
    report.attribute_domains = domains_->OwnedBy(report.name);
    report.refused_domains = domains_->RefusedDeclarations(report.name);
    for (const auto& why : report.refused_domains)
      logger_.Warning("plugin attribute domain not granted", {{"name", report.name}, {"reason", why}});
  }
}

PluginHost::~PluginHost() {
  // Shut plugins down in reverse load order.
  while (!loaded_.empty()) loaded_.pop_back();
}

std::size_t PluginHost::loaded_count() const {
  return static_cast<std::size_t>(std::count_if(reports_.begin(), reports_.end(), [](const auto& r) {
    return r.outcome == PluginOutcome::kLoaded;
  }));
}

void PluginHost::Report(PluginReport report) {
  std::vector<LogField> fields{{"file", report.file}};
  if (!report.name.empty()) fields.emplace_back("name", report.name);
  if (!report.version.empty()) fields.emplace_back("version", report.version);
  if (report.abi_version != 0) fields.emplace_back("abi", AbiText(report.abi_version));
  fields.emplace_back("hostAbi", AbiText(DRANET_ABI_CURRENT));
  if (report.outcome == PluginOutcome::kLoaded) {
    fields.emplace_back("capabilities", CapabilityNames(report.capabilities, ","));
    logger_.Info("plugin loaded", fields);
  } else {
    fields.emplace_back("reason", report.reason);
    std::string msg = std::string("plugin ") + OutcomeName(report.outcome);
    if (report.outcome == PluginOutcome::kRejected || report.outcome == PluginOutcome::kFailed)
      logger_.Error(msg, fields);
    else
      logger_.Info(msg, fields);
  }
  reports_.push_back(std::move(report));
}

void PluginHost::LoadDirectory(const fs::path& dir) {
  if (auto problem = CheckDirectory(dir, options_.require_root_owned); !problem.empty()) {
    PluginReport r;
    r.file = dir.string();
    r.outcome = PluginOutcome::kRejected;
    r.reason = problem;
    Report(std::move(r));
    return;
  }
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& p = it->path();
    if (p.extension() == ".so") {
      files.push_back(p);
    } else {
      logger_.Verbose(2, "ignoring non-plugin file in plugin directory", {{"file", p.string()}});
    }
  }
  if (ec) {
    PluginReport r;
    r.file = dir.string();
    r.reason = "cannot list plugin directory: " + ec.message();
    Report(std::move(r));
    return;
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) LoadFile(f);
}

void PluginHost::LoadFile(const fs::path& file) {
  PluginReport report;
  report.file = file.string();
  static const std::regex kFileRe("^dranet-plugin-([a-z0-9-]+)\\.so$");
  std::smatch m;
  const std::string base = file.filename().string();
  std::string expected_name = std::regex_match(base, m, kFileRe) ? m[1].str() : "";
  if (!expected_name.empty()) {
    report.name = expected_name;
    if (Listed(options_.deny, expected_name) ||
        (!options_.allow.empty() && !Listed(options_.allow, expected_name))) {
      report.outcome = PluginOutcome::kSkipped;
      report.reason = Listed(options_.deny, expected_name) ? "on the deny list" : "not on the allow list";
      Report(std::move(report));
      return;
    }
  }
  if (auto problem = CheckFile(file, options_.require_root_owned); !problem.empty()) {
    report.outcome = PluginOutcome::kRejected;
    report.reason = problem;
    Report(std::move(report));
    return;
  }
  if (!loader_held_by_.empty()) {
    report.outcome = PluginOutcome::kFailed;
    report.reason = "not loaded: the loading of " + loader_held_by_ +
                    " never finished and may hold the dynamic loader";
    Report(std::move(report));
    return;
  }
  // Loading runs plugin code (static constructors, the entry), so it runs
  // on the plugin's worker under the init deadline, like init.
  auto worker = std::make_unique<PluginWorker>(expected_name.empty() ? file.stem().string() : expected_name);
  struct OpenCall {
    std::unique_ptr<PluginLibrary> library;
    std::string rejected;
  };
  auto open = std::make_shared<OpenCall>();
  const bool opened = worker->Run(
      [open, file] {
        try {
          open->library = PluginLibrary::Open(file);
        } catch (const PluginRejected& e) {
          open->rejected = e.what();
        } catch (const std::exception& e) {
          open->rejected = std::string("cannot load: ") + e.what();
        }
      },
      options_.init_deadline);
  if (!opened) {
    loader_held_by_ = file.string();
    report.outcome = PluginOutcome::kFailed;
    report.reason = "loading (the library's static constructors and its entry) did not finish within " +
                    std::to_string(options_.init_deadline.count()) + " ms; abandoned";
    Report(std::move(report));
    return;  // the hung worker is detached; the late load closes itself
  }
  if (!open->rejected.empty()) {
    report.outcome = PluginOutcome::kRejected;
    report.reason = open->rejected;
    Report(std::move(report));
    return;
  }
  auto loaded = std::make_unique<Loaded>();
  loaded->library = std::move(open->library);
  loaded->worker = std::move(worker);
  const auto& d = loaded->d();
  report.name = d.name;
  report.version = d.version;
  report.description = d.description;
  report.abi_version = d.abi_version;
  report.capabilities = d.capabilities;
  for (const auto& k : d.config_keys)
    report.config_keys.push_back(k.name + "=" + k.default_value + ": " + k.description);
  report.snapshot_paths = d.snapshot_paths;
  for (const auto& note : d.notes) logger_.Warning("plugin note", {{"name", d.name}, {"note", note}});

  for (const auto& other : loaded_) {
    if (other->d().name == d.name) {
      report.outcome = PluginOutcome::kRejected;
      report.reason = "duplicate plugin name, already loaded from " + other->library->path().string();
      Report(std::move(report));
      return;
    }
  }

  if (options_.load_only) {
    report.outcome = PluginOutcome::kSkipped;
    report.reason = "descriptor read only (not initialised)";
    Report(std::move(report));
    return;
  }

  // Configuration: only declared keys reach the plugin.
  std::map<std::string, std::string> config;
  if (auto it = options_.config.find(d.name); it != options_.config.end()) {
    for (const auto& [key, value] : it->second) {
      bool declared = std::any_of(d.config_keys.begin(), d.config_keys.end(),
                                  [&](const auto& k) { return k.name == key; });
      if (declared) {
        config[key] = value;
      } else {
        logger_.Warning("unknown plugin configuration key ignored", {{"name", d.name}, {"key", key}});
      }
    }
  }
  loaded->services = std::make_unique<HostServices>(d.name, logger_, options_.host_root.string(),
                                                    options_.node_name, std::move(config),
                                                    options_.http);

  struct InitCall {
    dranet_status_t status = DRANET_ERR_INTERNAL;
    void* state = nullptr;
    dranet_error_t err = NewError();
  };
  auto call = std::make_shared<InitCall>();
  auto init = d.init;
  const dranet_host_t* host = loaded->services->host();
  auto started = std::chrono::steady_clock::now();
  bool finished = loaded->worker->Run(
      [call, init, host] {
        call->status = CallGuarded([&] { return init(host, &call->state, &call->err); }, call->err);
      },
      options_.init_deadline);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (!finished) {
    report.outcome = PluginOutcome::kFailed;
    report.reason = "init did not return within " + std::to_string(options_.init_deadline.count()) +
                    " ms; plugin abandoned";
    Report(std::move(report));
    loaded_.push_back(std::move(loaded));  // kept so its code stays mapped
    return;
  }
  if (call->status == DRANET_ERR_UNSUPPORTED) {
    report.outcome = PluginOutcome::kNotApplicable;
    report.reason = call->err.message[0] ? call->err.message : "does not apply to this node";
    Report(std::move(report));
    return;
  }
  if (call->status != DRANET_OK) {
    report.outcome = PluginOutcome::kFailed;
    report.reason = "init failed: " + StatusText(call->status, call->err);
    Report(std::move(report));
    return;
  }
  loaded->state = call->state;
  loaded->initialised = true;
  report.outcome = PluginOutcome::kLoaded;
  logger_.Verbose(2, "plugin initialised", {{"name", d.name}, {"initMs", ms.count()}});
  loaded->report_index = reports_.size();
  Report(std::move(report));
  loaded_.push_back(std::move(loaded));
}

namespace {

// Call state shared with the worker thread: it must own everything the
// plugin may touch, because a call that misses its deadline keeps running.
struct AnnotateCall {
  std::vector<std::unique_ptr<DeviceAbi>> inputs;
  std::vector<std::size_t> device_index;
  std::string plugin_name;
  std::shared_ptr<const AttributeDomains> domains;
  std::atomic<std::size_t> current{0};  // the device being annotated
  struct Output {
    std::vector<std::pair<std::string, inventory::AttributeValue>> attrs;
    std::vector<std::string> rejected;
    dranet_status_t status = DRANET_OK;
    std::string error;
  };
  std::vector<Output> outputs;
};

struct AttrSinkCtx {
  AnnotateCall* call;
  std::size_t k;
};

dranet_status_t AddAttrTrampoline(void* ctx, const dranet_attr_t* attr) noexcept {
  try {
    auto* c = static_cast<AttrSinkCtx*>(ctx);
    auto& out = c->call->outputs[c->k];
    if (attr == nullptr || attr->struct_size < offsetof(dranet_attr_t, int_value) + sizeof(int64_t)) {
      out.rejected.push_back("attribute struct missing or too small");
      return DRANET_ERR_INVALID_ARG;
    }
    std::string why;
    auto accepted = AcceptAttribute(*attr, c->call->plugin_name, why);
    if (accepted) why = c->call->domains->Refusal(c->call->plugin_name, accepted->first);
    if (accepted && !why.empty()) accepted.reset();
    if (!accepted) {
      out.rejected.push_back(why);
      return DRANET_ERR_INVALID_ARG;
    }
    out.attrs.push_back(std::move(*accepted));
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

struct DiscoverCall {
  std::string plugin_name;
  std::vector<inventory::Device> devices;
  std::vector<std::string> rejected;
  dranet_status_t status = DRANET_OK;
  dranet_error_t err = NewError();
};

dranet_status_t AddDeviceTrampoline(void* ctx, const dranet_device_t* device) noexcept {
  auto* c = static_cast<DiscoverCall*>(ctx);
  try {
    if (device == nullptr || device->struct_size < offsetof(dranet_device_t, n_attrs) + sizeof(uint32_t)) {
      c->rejected.push_back("device struct missing or too small");
      return DRANET_ERR_INVALID_ARG;
    }
    c->devices.push_back(DeviceFromAbi(*device, c->plugin_name, c->rejected));
    return DRANET_OK;
  } catch (const std::exception& e) {
    c->rejected.push_back(e.what());
    return DRANET_ERR_INVALID_ARG;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

struct InjectCall {
  std::string plugin_name;
  std::vector<std::unique_ptr<DeviceAbi>> inputs;
  std::vector<dranet_device_t> devices;  // copies of inputs[i]->get()
  std::string ns, name, uid;
  InjectionEdits edits;  // this plugin's edits only
  std::vector<std::string> rejected;
  dranet_status_t status = DRANET_OK;
  dranet_error_t err = NewError();
};

bool SafeContainerPath(const std::string& p) {
  return !p.empty() && p[0] == '/' && p.find("/../") == std::string::npos &&
         !(p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0);
}

dranet_status_t AddDevNodeTrampoline(void* ctx, const dranet_dev_node_t* node) noexcept {
  auto* c = static_cast<InjectCall*>(ctx);
  try {
    if (node == nullptr || node->path == nullptr) return DRANET_ERR_INVALID_ARG;
    std::string path(node->path);
    if (path.rfind("/dev/", 0) != 0 || !SafeContainerPath(path) || (node->type != 'c' && node->type != 'b')) {
      c->rejected.push_back("device node \"" + path + "\": must be a 'c' or 'b' node under /dev/");
      return DRANET_ERR_INVALID_ARG;
    }
    std::string perms = node->permissions ? node->permissions : "rw";
    if (perms.empty() || perms.find_first_not_of("rwm") != std::string::npos) {
      c->rejected.push_back("device node \"" + path + "\": permissions must be a subset of rwm");
      return DRANET_ERR_INVALID_ARG;
    }
    c->edits.dev_nodes.push_back({path, node->major, node->minor, perms, c->plugin_name});
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

dranet_status_t AddMountTrampoline(void* ctx, const dranet_mount_t* mount) noexcept {
  auto* c = static_cast<InjectCall*>(ctx);
  try {
    if (mount == nullptr || mount->host_path == nullptr || mount->container_path == nullptr)
      return DRANET_ERR_INVALID_ARG;
    InjectionEdits::Mount m{mount->host_path, mount->container_path, {}, c->plugin_name};
    if (!SafeContainerPath(m.host_path) || !SafeContainerPath(m.container_path)) {
      c->rejected.push_back("mount " + m.host_path + " -> " + m.container_path + ": paths must be absolute");
      return DRANET_ERR_INVALID_ARG;
    }
    for (uint32_t i = 0; mount->options != nullptr && i < mount->n_options && i < 32; ++i)
      if (mount->options[i] != nullptr) m.options.emplace_back(mount->options[i]);
    c->edits.mounts.push_back(std::move(m));
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

dranet_status_t AddEnvTrampoline(void* ctx, const char* name, const char* value) noexcept {
  auto* c = static_cast<InjectCall*>(ctx);
  try {
    if (name == nullptr || value == nullptr) return DRANET_ERR_INVALID_ARG;
    static const std::regex kEnvName("^[A-Za-z_][A-Za-z0-9_]*$");
    if (!std::regex_match(name, kEnvName) || std::strlen(value) > 4096) {
      c->rejected.push_back(std::string("env \"") + name + "\": invalid name or value over 4096 bytes");
      return DRANET_ERR_INVALID_ARG;
    }
    auto [it, inserted] = c->edits.env.emplace(name, value);
    if (!inserted && it->second != value) {
      c->rejected.push_back(std::string("env \"") + name + "\" set twice with different values");
      return DRANET_ERR_INVALID_ARG;
    }
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

dranet_status_t AddAnnotationTrampoline(void* ctx, const char* key, const char* value) noexcept {
  auto* c = static_cast<InjectCall*>(ctx);
  try {
    if (key == nullptr || value == nullptr || *key == '\0') return DRANET_ERR_INVALID_ARG;
    c->edits.annotations[key] = value;
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

// ABI 1.1: routes and rules for one of the request's netdevs.
dranet_status_t AddRouteTrampoline(void* ctx, const char* device_name, const dranet_route_t* route) noexcept {
  auto* c = static_cast<InjectCall*>(ctx);
  try {
    std::string why;
    auto accepted = AcceptRoute(device_name, route, c->devices, c->plugin_name, why);
    if (!accepted) {
      c->rejected.push_back(why);
      return DRANET_ERR_INVALID_ARG;
    }
    c->edits.routes.push_back(std::move(*accepted));
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

dranet_status_t AddRuleTrampoline(void* ctx, const char* device_name, const dranet_rule_t* rule) noexcept {
  auto* c = static_cast<InjectCall*>(ctx);
  try {
    std::string why;
    auto accepted = AcceptRule(device_name, rule, c->devices, c->plugin_name, why);
    if (!accepted) {
      c->rejected.push_back(why);
      return DRANET_ERR_INVALID_ARG;
    }
    c->edits.rules.push_back(std::move(*accepted));
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

struct ProfileCall {
  std::string plugin_name;
  std::unique_ptr<DeviceAbi> device;
  ProfileQuery query;
  std::optional<std::string> answer;
  std::string rejected;
  dranet_status_t status = DRANET_OK;
  dranet_error_t err = NewError();

  dranet_profile_request_t Request() const {
    dranet_profile_request_t req{};
    req.struct_size = sizeof req;
    req.profile = query.profile.c_str();
    req.claim_uid = query.claim_uid.c_str();
    req.config_json = query.config_json.c_str();
    req.device = device->get();
    return req;
  }
};

// "" when `text` is one JSON object, else why not.
std::string NotAJsonObject(const std::string& text) {
  rapidjson::Document doc;
  if (auto error = ParseJson(doc, text); !error.empty()) return error;
  return doc.IsObject() ? "" : "not a JSON object";
}

dranet_status_t SetProfileConfigTrampoline(void* ctx, const char* json) noexcept {
  auto* c = static_cast<ProfileCall*>(ctx);
  try {
    if (json == nullptr) {
      c->rejected = "set_config: NULL config";
      return DRANET_ERR_INVALID_ARG;
    }
    const std::size_t n = strnlen(json, DRANET_PROFILE_CONFIG_MAX + 1);
    if (n > DRANET_PROFILE_CONFIG_MAX) {
      c->rejected = "set_config: config longer than " + std::to_string(DRANET_PROFILE_CONFIG_MAX) + " bytes";
      return DRANET_ERR_INVALID_ARG;
    }
    std::string text(json, n);
    if (auto why = NotAJsonObject(text); !why.empty()) {
      c->rejected = "set_config: the config is not a NetworkConfig object: " + why;
      return DRANET_ERR_INVALID_ARG;
    }
    c->rejected.clear();
    c->answer = std::move(text);
    return DRANET_OK;
  } catch (...) {
    return DRANET_ERR_NO_MEMORY;
  }
}

}  // namespace

std::vector<std::string> PluginHost::ProfilePlugins() const {
  std::vector<std::string> names;
  for (const auto& lp : loaded_)
    if (lp->initialised && (lp->d().capabilities & DRANET_CAP_PROFILES)) names.push_back(lp->d().name);
  return names;
}

std::optional<ProfileAnswer> PluginHost::GetProfile(const ProfileQuery& query, const inventory::Device& device) {
  for (auto& lp : loaded_) {
    if (!lp->initialised || !(lp->d().capabilities & DRANET_CAP_PROFILES)) continue;
    if (!MatchesTable(lp->d().match_table, device)) continue;
    const std::string who = "plugin " + lp->d().name;
    if (!Usable(*lp)) throw ProfileCallFailed(who + " is disabled: an earlier call missed its deadline");
    auto call = std::make_shared<ProfileCall>();
    call->plugin_name = lp->d().name;
    call->device = std::make_unique<DeviceAbi>(device);
    call->query = query;
    auto op = lp->d().get_profile;
    void* state = lp->state;
    bool ok = lp->worker->Run(
        [call, op, state] {
          const dranet_profile_request_t req = call->Request();
          dranet_profile_sink_t sink{sizeof(dranet_profile_sink_t), call.get(), &SetProfileConfigTrampoline};
          call->status = CallGuarded([&] { return op(state, &req, &sink, &call->err); }, call->err);
        },
        options_.call_deadline);
    if (!ok) {
      Disable(*lp, "get_profile");
      throw ProfileCallFailed(who + ": get_profile missed its deadline of " +
                              std::to_string(options_.call_deadline.count()) + " ms");
    }
    CallReturned(*lp);
    // The host's own refusal of the answer first: the plugin may have
    // passed the sink's status on without a message.
    if (!call->rejected.empty()) throw ProfileCallFailed(who + ": " + call->rejected);
    if (call->status == DRANET_ERR_NOT_FOUND || call->status == DRANET_ERR_UNSUPPORTED) continue;
    if (call->status != DRANET_OK)
      throw ProfileCallFailed(who + ": get_profile failed: " + StatusText(call->status, call->err));
    if (!call->answer) throw ProfileCallFailed(who + ": get_profile succeeded without calling set_config");
    logger_.Verbose(2, "plugin resolved a profile",
                    {{"name", call->plugin_name}, {"profile", query.profile}, {"device", device.name}});
    return ProfileAnswer{call->plugin_name, std::move(*call->answer)};
  }
  return std::nullopt;
}

std::vector<std::string> PluginHost::ReleaseProfile(const ProfileQuery& query, const inventory::Device& device) {
  std::vector<std::string> failures;
  for (auto& lp : loaded_) {
    if (!lp->initialised || !(lp->d().capabilities & DRANET_CAP_PROFILES)) continue;
    const std::string who = "plugin " + lp->d().name;
    if (!Usable(*lp)) {
      failures.push_back(who + " is disabled: an earlier call missed its deadline");
      continue;
    }
    auto call = std::make_shared<ProfileCall>();
    call->plugin_name = lp->d().name;
    call->device = std::make_unique<DeviceAbi>(device);
    call->query = query;
    auto op = lp->d().release_profile;
    void* state = lp->state;
    bool ok = lp->worker->Run(
        [call, op, state] {
          const dranet_profile_request_t req = call->Request();
          call->status = CallGuarded([&] { return op(state, &req, &call->err); }, call->err);
        },
        options_.call_deadline);
    if (!ok) {
      Disable(*lp, "release_profile");
      failures.push_back(who + ": release_profile missed its deadline of " +
                         std::to_string(options_.call_deadline.count()) + " ms");
      continue;
    }
    CallReturned(*lp);
    if (call->status != DRANET_OK && call->status != DRANET_ERR_NOT_FOUND &&
               call->status != DRANET_ERR_UNSUPPORTED) {
      failures.push_back(who + ": release_profile failed: " + StatusText(call->status, call->err));
    }
  }
  return failures;
}

std::vector<inventory::Device> PluginHost::Discover() {
  std::vector<inventory::Device> out;
  for (auto& lp : loaded_) {
    if (!(lp->d().capabilities & DRANET_CAP_DISCOVERY) || !Usable(*lp)) continue;
    auto call = std::make_shared<DiscoverCall>();
    call->plugin_name = lp->d().name;
    auto op = lp->d().discover;
    void* state = lp->state;
    bool ok = lp->worker->Run(
        [call, op, state] {
          dranet_device_sink_t sink{sizeof(dranet_device_sink_t), call.get(), &AddDeviceTrampoline};
          call->status = CallGuarded([&] { return op(state, &sink, &call->err); }, call->err);
        },
        options_.call_deadline);
    if (!ok) {
      Disable(*lp, "discover");
      continue;
    }
    CallReturned(*lp);
    auto& tally = reports_[lp->report_index].discovered;
    tally = {};
    for (const auto& why : call->rejected) {
      logger_.Warning("plugin device rejected", {{"name", call->plugin_name}, {"reason", why}});
      ++tally.rejected[why];
    }
    if (call->status != DRANET_OK) {
      logger_.Error("plugin discover failed", {{"name", call->plugin_name}, {"error", StatusText(call->status, call->err)}});
      continue;
    }
    for (auto& d : call->devices) {
      // A discovered device is the plugin's own, so the core's domains are
      // its to fill (dra.net/*); other domains follow their owners.
      for (auto it = d.attributes.begin(); it != d.attributes.end();) {
        const std::string why = IsCoreDomain(it->first) ? "" : domains_->Refusal(call->plugin_name, it->first);
        if (why.empty()) {
          ++tally.published[it->first];
          ++it;
          continue;
        }
        logger_.Warning("plugin attribute rejected", {{"name", call->plugin_name}, {"device", d.name}, {"reason", why}});
        ++tally.rejected[why];
        it = d.attributes.erase(it);
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

void PluginHost::Annotate(std::vector<inventory::Device>& devices) {
  // (device index, attribute) -> the plugin that set it, for attributes in
  // domains nobody owns (ABI < 1.3 plugins); a disagreement drops it for all.
  std::map<std::pair<std::size_t, std::string>, std::string> unowned_writer;
  std::map<std::pair<std::size_t, std::string>, std::set<std::string>> disputed;
  for (auto& lp : loaded_) {
    if (lp->initialised) reports_[lp->report_index].annotated = {};
  }
  for (auto& lp : loaded_) {
    if (!(lp->d().capabilities & DRANET_CAP_ATTRIBUTES) || !Usable(*lp)) continue;
    auto call = std::make_shared<AnnotateCall>();
    call->plugin_name = lp->d().name;
    call->domains = domains_;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (!MatchesTable(lp->d().match_table, devices[i])) continue;
      call->inputs.push_back(std::make_unique<DeviceAbi>(devices[i]));
      call->device_index.push_back(i);
    }
    if (call->inputs.empty()) continue;
    call->outputs.resize(call->inputs.size());
    auto op = lp->d().annotate;
    void* state = lp->state;
    auto started = std::chrono::steady_clock::now();
    // The deadline is per device: a pass over hundreds of devices may take
    // far longer than one call, as long as each device is quick.
    bool ok = lp->worker->RunSteps(
        [call, op, state](const PluginWorker::StepDone& step_done) {
          for (std::size_t k = 0; k < call->inputs.size(); ++k) {
            call->current = k;
            AttrSinkCtx ctx{call.get(), k};
            dranet_attr_sink_t sink{sizeof(dranet_attr_sink_t), &ctx, &AddAttrTrampoline};
            dranet_error_t err = NewError();
            auto& out = call->outputs[k];
            out.status = CallGuarded([&] { return op(state, call->inputs[k]->get(), &sink, &err); }, err);
            if (out.status != DRANET_OK) out.error = StatusText(out.status, err);
            step_done();
          }
        },
        options_.call_deadline);
    if (!ok) {
      Disable(*lp, "annotate of device " + devices[call->device_index[call->current.load()]].name);
      continue;
    }
    CallReturned(*lp);
    std::size_t added = 0;
    auto& tally = reports_[lp->report_index].annotated;
    // Only plugins built before 1.3 can write a domain nobody owns.
    const bool legacy = DRANET_ABI_MINOR_OF(lp->d().abi_version) < 3;
    for (std::size_t k = 0; k < call->outputs.size(); ++k) {
      const std::size_t index = call->device_index[k];
      auto& dev = devices[index];
      auto& out = call->outputs[k];
      for (const auto& why : out.rejected) {
        logger_.Warning("plugin attribute rejected", {{"name", call->plugin_name}, {"device", dev.name}, {"reason", why}});
        ++tally.rejected[why];
      }
      if (out.status != DRANET_OK && out.status != DRANET_ERR_UNSUPPORTED) {
        logger_.Error("plugin annotate failed", {{"name", call->plugin_name}, {"device", dev.name}, {"error", out.error}});
        ++tally.rejected["annotate failed: " + out.error];
        continue;
      }
      for (auto& [name, value] : out.attrs) {
        auto [it, inserted] = dev.attributes.emplace(name, value);
        if (inserted) {
          ++added;
          ++tally.published[name];
          if (legacy) unowned_writer[{index, name}] = call->plugin_name;
        } else if (it->second == value) {
          ++tally.published[name];  // e.g. a device annotated again
        } else {
          // Only possible in a domain nobody owns: owned domains have one writer.
          auto& writers = disputed[{index, name}];
          if (auto first = unowned_writer.find({index, name}); first != unowned_writer.end())
            writers.insert(first->second);
          writers.insert(call->plugin_name);
        }
      }
    }
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    logger_.Verbose(3, "plugin annotated devices",
                    {{"name", call->plugin_name}, {"devices", call->inputs.size()}, {"attributes", added},
                     {"latencyUs", static_cast<int64_t>(us.count())}});
  }
  for (const auto& [key, writers] : disputed) {
    const auto& [index, name] = key;
    std::string who;
    for (const auto& w : writers) who += (who.empty() ? "" : " and ") + w;
    const std::string why = "attribute \"" + name + "\": " + who + " set different values in a domain nobody owns; dropped";
    logger_.Warning("plugin attribute rejected", {{"device", devices[index].name}, {"reason", why}});
    devices[index].attributes.erase(name);
    const auto first = unowned_writer.find(key);
    for (auto& lp : loaded_) {
      if (!lp->initialised || !writers.count(lp->d().name)) continue;
      auto& tally = reports_[lp->report_index].annotated;
      if (first != unowned_writer.end() && first->second == lp->d().name)
        if (auto it = tally.published.find(name); it != tally.published.end() && --it->second == 0)
          tally.published.erase(it);
      ++tally.rejected[why];
    }
  }
}

InjectionEdits PluginHost::Inject(const ClaimRef& claim, const std::vector<inventory::Device>& devices) {
  InjectionEdits merged;
  for (auto& lp : loaded_) {
    if (!lp->initialised || !(lp->d().capabilities & DRANET_CAP_INJECTION)) continue;
    auto call = std::make_shared<InjectCall>();
    call->plugin_name = lp->d().name;
    for (const auto& dev : devices)
      if (MatchesTable(lp->d().match_table, dev)) call->inputs.push_back(std::make_unique<DeviceAbi>(dev));
    if (call->inputs.empty()) continue;
    if (!Usable(*lp)) {
      // Fail closed: a claim prepared without this plugin's edits (its env,
      // its routes) would run wrongly; the kubelet retries prepare.
      merged.errors.push_back("plugin " + call->plugin_name +
                              " is disabled: an earlier call missed its deadline (retried after its back-off)");
      continue;
    }
    for (const auto& in : call->inputs) call->devices.push_back(*in->get());
    call->ns = claim.namespace_name;
    call->name = claim.name;
    call->uid = claim.uid;
    auto op = lp->d().inject;
    void* state = lp->state;
    bool ok = lp->worker->Run(
        [call, op, state] {
          dranet_inject_request_t req{};
          req.struct_size = sizeof req;
          req.n_devices = static_cast<uint32_t>(call->devices.size());
          req.claim_namespace = call->ns.c_str();
          req.claim_name = call->name.c_str();
          req.claim_uid = call->uid.c_str();
          req.devices = call->devices.data();
          dranet_edit_sink_t sink{};
          sink.struct_size = sizeof sink;  // ABI 1.1: add_route and add_rule included
          sink.sink_ctx = call.get();
          sink.add_dev_node = &AddDevNodeTrampoline;
          sink.add_mount = &AddMountTrampoline;
          sink.add_env = &AddEnvTrampoline;
          sink.add_annotation = &AddAnnotationTrampoline;
          sink.add_route = &AddRouteTrampoline;
          sink.add_rule = &AddRuleTrampoline;
          call->status = CallGuarded([&] { return op(state, &req, &sink, &call->err); }, call->err);
        },
        options_.call_deadline);
    const std::string who = "plugin " + call->plugin_name;
    if (!ok) {
      Disable(*lp, "inject");
      merged.errors.push_back(who + ": inject missed its deadline of " +
                              std::to_string(options_.call_deadline.count()) + " ms");
      continue;
    }
    CallReturned(*lp);
    for (const auto& why : call->rejected) {
      logger_.Warning("plugin edit rejected",
                      {{"name", call->plugin_name}, {"claim", claim.namespace_name + "/" + claim.name}, {"reason", why}});
      merged.errors.push_back(who + ": " + why);
    }
    if (call->status != DRANET_OK && call->status != DRANET_ERR_UNSUPPORTED) {
      merged.errors.push_back(who + ": inject failed: " + StatusText(call->status, call->err));
      continue;
    }
    for (auto& n : call->edits.dev_nodes) merged.dev_nodes.push_back(std::move(n));
    for (auto& m : call->edits.mounts) merged.mounts.push_back(std::move(m));
    for (auto& r : call->edits.routes) merged.routes.push_back(std::move(r));
    for (auto& r : call->edits.rules) merged.rules.push_back(std::move(r));
    for (auto& [k, v] : call->edits.annotations) merged.annotations[k] = v;
    for (auto& [k, v] : call->edits.env) {
      auto [it, inserted] = merged.env.emplace(k, v);
      if (inserted) {
        merged.env_owner[k] = call->plugin_name;
      } else if (it->second != v) {
        merged.errors.push_back("env " + k + ": plugin " + merged.env_owner[k] + " sets \"" + it->second +
                                "\" but plugin " + call->plugin_name + " sets \"" + v + "\"");
      }
    }
  }
  return merged;
}

}  // namespace dranet::plugins
