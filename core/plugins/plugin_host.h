#pragma once
// core/plugins/plugin_host.h — the plugin host: the front door of core/plugins.
//
// Loads every plugin of a plugin directory (Boost.DLL, RTLD_NOW|RTLD_LOCAL),
// validates and initialises each on its own worker thread, and runs the
// three plugin capabilities for the rest of the daemon:
//   Discover()  — extra devices from discovery plugins;
//   Annotate()  — plugin attributes added to inventory devices;
//   Inject()    — container edits for a claim being prepared.
// A plugin that is broken (cannot load, wrong ABI, garbage descriptor,
// failing or throwing init, duplicate name, too slow) is skipped and
// reported; it never takes the host down. One log line per plugin says
// whether it was loaded, skipped or rejected, and why.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/log.h"
#include "inventory/device.h"
#include "plugins/attribute_rules.h"
#include "plugins/host_services.h"

namespace dranet::plugins {

struct PluginHostOptions {
  // Searched in order; a plugin name found again in a later directory is
  // rejected as a duplicate.
  std::vector<std::filesystem::path> plugin_dirs;
  // Node facts handed to plugins through dranet_host_t.
  std::filesystem::path host_root = "/";
  std::string node_name;
  // Only these plugin names load when non-empty; these never load.
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  // Per plugin name: its configuration keys and values (config_get).
  std::map<std::string, std::map<std::string, std::string>> config;
  // Refuse a plugin directory (or file) not owned by root or writable by
  // others. Tests that run unprivileged turn this off.
  bool require_root_owned = true;
  // Loading (dlopen with the library's static constructors, and the entry
  // call) and init each get init_deadline; every other call gets
  // call_deadline, and an annotate pass gets it per device.
  std::chrono::milliseconds init_deadline{5000};
  std::chrono::milliseconds call_deadline{5000};
  // A plugin whose call missed its deadline is disabled; once that call has
  // come back, it is used again after retry_backoff, doubled after each
  // further miss up to max_retry_backoff (reset by a call that succeeds).
  std::chrono::milliseconds retry_backoff{30000};
  std::chrono::milliseconds max_retry_backoff{600000};
  // Load and validate each plugin and report its descriptor, but never
  // call init or anything else (dranetctl snapshot reads snapshot_paths).
  bool load_only = false;
  // HTTP client behind dranet_host_t.http_get (defaults to libcurl; GET and PUT).
  HttpFunction http;
};

enum class PluginOutcome { kLoaded, kNotApplicable, kSkipped, kRejected, kFailed };
const char* OutcomeName(PluginOutcome outcome);
// "discovery<sep>attributes<sep>injection<sep>profiles" for the DRANET_CAP_*
// bits set; "" for none.
std::string CapabilityNames(uint32_t capabilities, const char* separator);

struct PluginReport {
  std::string file;  // path of the .so (or the directory, for directory errors)
  std::string name;  // descriptor name; empty when unknown
  std::string version;
  std::string description;
  uint32_t abi_version = 0;
  uint32_t capabilities = 0;
  PluginOutcome outcome = PluginOutcome::kRejected;
  std::string reason;  // empty for kLoaded
  std::vector<std::string> config_keys;  // declared keys, "name=default: description"
  std::vector<std::string> snapshot_paths;  // ABI 1.3: sysfs globs it reads (dranetctl snapshot captures them)
  // ABI 1.3 attribute domains: those it owns (its own "<name>.dra.net" and
  // the granted declarations) and why a declaration was not granted.
  std::vector<std::string> attribute_domains;
  std::vector<std::string> refused_domains;
  // What its last pass published and what the host rejected: attribute
  // name -> devices it was published on; reason -> devices it was given for.
  struct AttributeTally {
    std::map<std::string, std::size_t> published;
    std::map<std::string, std::size_t> rejected;
  };
  AttributeTally annotated;   // the last Annotate()
  AttributeTally discovered;  // attributes of the devices of the last Discover()
};

// Edits collected from injection plugins for one claim.
struct InjectionEdits {
  struct DevNode {
    std::string path;  // in the container
    int64_t major = -1, minor = -1;
    std::string permissions;
    std::string plugin;
  };
  struct Mount {
    std::string host_path, container_path;
    std::vector<std::string> options;
    std::string plugin;
  };
  // Network config for one netdev of the claim (ABI 1.1 add_route /
  // add_rule), e.g. a cloud's per-NIC policy routing. `device` is the
  // published device name; the plan builder merges these between the host's
  // harvested routes and the claim's own config.
  struct Route {
    std::string device;
    std::string destination;  // CIDR; "0.0.0.0/0" / "::/0" for default
    std::string gateway;      // empty: on-link
    std::string source;       // preferred source; may be empty
    uint32_t table = 0;       // 0 = main
    uint32_t metric = 0;
    uint8_t scope = 0;        // RT_SCOPE_*: 0 universe, 253 link
    std::string plugin;
  };
  struct Rule {
    std::string device;
    uint32_t priority = 0;    // 0 = the kernel chooses
    std::string source;       // CIDR or empty (all)
    std::string destination;  // CIDR or empty (all)
    uint32_t table = 0;
    std::string plugin;
  };
  std::vector<DevNode> dev_nodes;
  std::vector<Mount> mounts;
  std::vector<Route> routes;
  std::vector<Rule> rules;
  std::map<std::string, std::string> env;          // name -> value
  std::map<std::string, std::string> env_owner;    // name -> plugin that set it
  std::map<std::string, std::string> annotations;
  std::vector<std::string> errors;  // per-plugin failures and conflicts
};

struct ClaimRef {
  std::string namespace_name, name, uid;
};

// ABI 1.2: one claim config's profile for one device.
struct ProfileQuery {
  std::string profile;
  std::string claim_uid;
  std::string config_json;  // the merged NetworkConfig, "profile" included
};

// The NetworkConfig JSON object a plugin resolved a profile to.
struct ProfileAnswer {
  std::string plugin;
  std::string config_json;
};

// A profile plugin that failed (not "does not know it"); what() names the
// plugin and carries its status and message.
class ProfileCallFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PluginHost {
 public:
  // Scans and loads `options.plugin_dirs`. Never throws for plugin problems:
  // they end up in reports(). A missing or unsafe directory is one report.
  PluginHost(PluginHostOptions options, Logger& logger);
  ~PluginHost();
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  const std::vector<PluginReport>& reports() const { return reports_; }
  std::size_t loaded_count() const;

  // Devices reported by discovery plugins.
  std::vector<inventory::Device> Discover();
  // Adds plugin attributes to `devices` (in place). A plugin writes only
  // the attribute domains it owns (AttributeDomains); an attribute two
  // plugins built for ABI < 1.3 set to different values in a domain nobody
  // owns is dropped for both. Rejections are logged and tallied in
  // reports() (PluginReport::annotated).
  void Annotate(std::vector<inventory::Device>& devices);
  // Container edits for one claim's allocated devices.
  InjectionEdits Inject(const ClaimRef& claim, const std::vector<inventory::Device>& devices);

  // ABI 1.2 profiles. Asks the loaded profile plugins whose match table
  // matches `device`, in load order; the first that knows query.profile
  // answers. nullopt when none knows it. Throws ProfileCallFailed when a
  // plugin fails, misses its deadline or answers something that is not a
  // JSON object.
  std::optional<ProfileAnswer> GetProfile(const ProfileQuery& query, const inventory::Device& device);
  // Asks every loaded profile plugin (whatever its match table: the device
  // may be gone from the inventory by now) to release what it gave for this
  // device and claim. Returns one message per plugin that failed.
  std::vector<std::string> ReleaseProfile(const ProfileQuery& query, const inventory::Device& device);
  // The names of the loaded plugins with DRANET_CAP_PROFILES.
  std::vector<std::string> ProfilePlugins() const;

 private:
  struct Loaded;
  void LoadDirectory(const std::filesystem::path& dir);
  void LoadFile(const std::filesystem::path& file);
  void Report(PluginReport report);
  void AssignAttributeDomains();
  // Whether `plugin` may be called now (initialised, not hung, not within
  // its back-off); re-enables it when its back-off has passed.
  bool Usable(Loaded& plugin);
  // After a missed deadline: disables `plugin` for its back-off and says so
  // in its report and the log. `what` names the op (and device).
  void Disable(Loaded& plugin, const std::string& what);
  // After a call that returned in time.
  void CallReturned(Loaded& plugin);

  PluginHostOptions options_;
  Logger& logger_;
  std::vector<PluginReport> reports_;
  std::vector<std::unique_ptr<Loaded>> loaded_;
  // A plugin file whose loading never finished: it may hold the dynamic
  // loader's lock, so no further file is loaded.
  std::string loader_held_by_;
  // Guards the disable/back-off state of every Loaded and the reports'
  // outcome and reason after loading (calls come from several threads).
  std::mutex state_mu_;
  // Shared with calls on the workers (a call that misses its deadline may
  // still use it after the host is gone).
  std::shared_ptr<const AttributeDomains> domains_ = std::make_shared<AttributeDomains>();
};

// The node's published device list: `discovered` (from core/inventory) plus
// devices from discovery plugins (a name the core already has is dropped
// with a log line), then plugin attributes on all of them. Sorted by name.
std::vector<inventory::Device> WithPlugins(PluginHost& host, std::vector<inventory::Device> discovered,
                                           Logger& logger);

// True when `device` matches one entry of `table` (empty table: always).
bool MatchesTable(const std::vector<dranet_match_t>& table, const inventory::Device& device);

}  // namespace dranet::plugins
