#include "plugins/plugin_library.h"

#include <dlfcn.h>

#include <cstring>
#include <regex>
#include <system_error>

#include "base/k8s_names.h"
#include "inventory/snapshot.h"
#include "plugins/attribute_rules.h"
#include "plugins/plugin_status.h"

namespace dranet::plugins {
namespace {

constexpr uint32_t kMaxDescriptorSize = 4096;
constexpr std::size_t kMaxMatchEntries = 256;
constexpr std::size_t kMaxConfigKeys = 128;
constexpr std::size_t kMaxNameLength = 32;
constexpr std::size_t kMaxTextLength = 256;
constexpr std::size_t kMaxAttributeDomains = 16;
constexpr std::size_t kMaxDomainLength = 63;
constexpr std::size_t kMaxSnapshotPaths = 32;
constexpr std::size_t kMaxSnapshotPathLength = 255;

std::string AbiString(uint32_t v) {
  return std::to_string(DRANET_ABI_MAJOR_OF(v)) + "." + std::to_string(DRANET_ABI_MINOR_OF(v));
}

// The real path of the object file that contains `address`, or "" when the
// address belongs to no loaded object (a garbage pointer).
std::string ObjectOf(const void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  auto real = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : real.string();
}

// A string the plugin hands over must live inside some loaded object (its
// .rodata) and be NUL-terminated within `max` bytes.
std::string CopyPluginString(const char* s, std::size_t max, const char* field, bool required) {
  if (s == nullptr) {
    if (required) throw PluginRejected(std::string("descriptor field ") + field + " is NULL");
    return {};
  }
  if (ObjectOf(s).empty())
    throw PluginRejected(std::string("descriptor field ") + field +
                         " points outside any loaded object");
  std::size_t n = strnlen(s, max + 1);
  if (n > max)
    throw PluginRejected(std::string("descriptor field ") + field + " is longer than " +
                         std::to_string(max) + " bytes");
  return std::string(s, n);
}

template <typename Fn>
void RequireInFile(Fn fn, const std::string& file, const char* what) {
  if (fn == nullptr) return;
  if (ObjectOf(reinterpret_cast<const void*>(fn)) != file)
    throw PluginRejected(std::string(what) + " does not point into the plugin file");
}

dranet_status_t UnsupportedDiscover(void*, const dranet_device_sink_t*, dranet_error_t* err) {
  return dranet_error_set(err, DRANET_ERR_UNSUPPORTED, 0, "discovery not supported");
}
dranet_status_t UnsupportedAnnotate(void*, const dranet_device_t*, const dranet_attr_sink_t*,
                                    dranet_error_t* err) {
  return dranet_error_set(err, DRANET_ERR_UNSUPPORTED, 0, "attributes not supported");
}
dranet_status_t UnsupportedInject(void*, const dranet_inject_request_t*, const dranet_edit_sink_t*,
                                  dranet_error_t* err) {
  return dranet_error_set(err, DRANET_ERR_UNSUPPORTED, 0, "injection not supported");
}

// Why the entry refused this host. ABI 1.3: a refusing entry may leave its
// descriptor in *out; only its identity and min_host_abi are read, after
// checking that it lies in the plugin file.
std::string RefusalReason(const dranet_plugin_t* d, const std::string& real_file) {
  std::string reason = "plugin refused host ABI " + AbiString(DRANET_ABI_CURRENT);
  if (d == nullptr || ObjectOf(d) != real_file || d->struct_size < DRANET_PLUGIN_V1_0_SIZE) return reason;
  try {
    std::string who = CopyPluginString(d->name, kMaxNameLength, "name", true);
    const std::string version = CopyPluginString(d->version, kMaxTextLength, "version", false);
    if (!version.empty()) who += " " + version;
    reason = "plugin " + who + " (built for ABI " + AbiString(d->abi_version) + ") refused host ABI " +
             AbiString(DRANET_ABI_CURRENT);
    if (DRANET_HAS_FIELD(d, dranet_plugin_t, min_host_abi) && d->min_host_abi != 0)
      reason += ": it needs host ABI " + AbiString(d->min_host_abi) + " or newer";
  } catch (const PluginRejected&) {
    // An unreadable identity: the short reason stands.
  }
  return reason;
}

}  // namespace

std::string PluginFileName(const std::string& name) { return "dranet-plugin-" + name + ".so"; }

ValidatedDescriptor ValidateDescriptor(const dranet_plugin_t* d, const std::filesystem::path& file) {
  std::error_code ec;
  const std::string real_file = std::filesystem::canonical(file, ec).string();
  if (d == nullptr) throw PluginRejected("entry returned no descriptor");
  if (ObjectOf(d) != real_file)
    throw PluginRejected("descriptor does not point into the plugin file");
  ValidatedDescriptor v;
  v.struct_size = d->struct_size;
  v.abi_version = d->abi_version;
  if (d->struct_size < DRANET_PLUGIN_V1_0_SIZE || d->struct_size > kMaxDescriptorSize)
    throw PluginRejected("descriptor struct_size " + std::to_string(d->struct_size) +
                         " outside [" + std::to_string(DRANET_PLUGIN_V1_0_SIZE) + ", " +
                         std::to_string(kMaxDescriptorSize) + "]");
  if (DRANET_ABI_MAJOR_OF(d->abi_version) != DRANET_ABI_MAJOR)
    throw PluginRejected("plugin ABI " + AbiString(d->abi_version) + " does not match host ABI " +
                         AbiString(DRANET_ABI_CURRENT));
  if (DRANET_ABI_MINOR_OF(d->abi_version) > DRANET_ABI_MINOR)
    v.notes.push_back("plugin built for ABI " + AbiString(d->abi_version) + ", host has " +
                      AbiString(DRANET_ABI_CURRENT) + ": newer features are ignored");

  v.name = CopyPluginString(d->name, kMaxNameLength, "name", true);
  static const std::regex kNameRe("^[a-z0-9]([a-z0-9-]*[a-z0-9])?$");
  if (!std::regex_match(v.name, kNameRe))
    throw PluginRejected("plugin name \"" + v.name + "\" must match [a-z0-9-]{1,32}");
  if (file.filename().string() != PluginFileName(v.name))
    throw PluginRejected("plugin name \"" + v.name + "\" requires the file name " +
                         PluginFileName(v.name));
  v.version = CopyPluginString(d->version, kMaxTextLength, "version", true);
  v.description = CopyPluginString(d->description, kMaxTextLength, "description", false);

  if (d->init == nullptr || d->fini == nullptr) throw PluginRejected("init or fini is NULL");
  RequireInFile(d->init, real_file, "init");
  RequireInFile(d->fini, real_file, "fini");
  RequireInFile(d->discover, real_file, "discover");
  RequireInFile(d->annotate, real_file, "annotate");
  RequireInFile(d->inject, real_file, "inject");
  // ABI 1.2 members exist only in descriptors built with a 1.2+ header.
  const bool has_profile_ops = DRANET_HAS_FIELD(d, dranet_plugin_t, release_profile);
  const auto get_profile = has_profile_ops ? d->get_profile : nullptr;
  const auto release_profile = has_profile_ops ? d->release_profile : nullptr;
  RequireInFile(get_profile, real_file, "get_profile");
  RequireInFile(release_profile, real_file, "release_profile");
  v.init = d->init;
  v.fini = d->fini;

  if ((d->capabilities & ~(DRANET_CAP_ALL | DRANET_CAP_PROFILES)) != 0)
    v.notes.push_back("unknown capability bits ignored");
  struct CapabilityOp {
    uint32_t bit;
    bool present;
    const char* name;
  };
  const CapabilityOp ops[] = {{DRANET_CAP_DISCOVERY, d->discover != nullptr, "discover"},
                              {DRANET_CAP_ATTRIBUTES, d->annotate != nullptr, "annotate"},
                              {DRANET_CAP_INJECTION, d->inject != nullptr, "inject"},
                              {DRANET_CAP_PROFILES, get_profile != nullptr && release_profile != nullptr,
                               "get_profile/release_profile"}};
  for (const auto& op : ops) {
    bool declared = (d->capabilities & op.bit) != 0;
    if (declared && !op.present && op.bit == DRANET_CAP_PROFILES && !has_profile_ops)
      throw PluginRejected("capability profiles declared but the descriptor (struct_size " +
                           std::to_string(d->struct_size) + ") ends before get_profile/release_profile");
    if (declared && !op.present)
      throw PluginRejected(std::string("capability ") + op.name + " declared but its op is NULL");
    if (!declared && op.present)
      v.notes.push_back(std::string(op.name) + " given without its capability bit: ignored");
    if (declared) v.capabilities |= op.bit;
  }
  v.discover = (v.capabilities & DRANET_CAP_DISCOVERY) ? d->discover : &UnsupportedDiscover;
  v.annotate = (v.capabilities & DRANET_CAP_ATTRIBUTES) ? d->annotate : &UnsupportedAnnotate;
  v.inject = (v.capabilities & DRANET_CAP_INJECTION) ? d->inject : &UnsupportedInject;
  if (v.capabilities & DRANET_CAP_PROFILES) {
    v.get_profile = get_profile;
    v.release_profile = release_profile;
  }
  v.flags = d->flags;
  if (v.flags & 1u)
    v.notes.push_back("flag bit 0 (DRANET_FLAG_THREAD_SAFE, removed in ABI 1.3) has no effect: "
                      "calls into a plugin are always serialised");
  if (v.flags & ~1u) v.notes.push_back("unknown flag bits ignored");

  // ABI 1.3 members exist only in descriptors built with a 1.3+ header.
  if (DRANET_HAS_FIELD(d, dranet_plugin_t, min_host_abi)) {
    v.min_host_abi = d->min_host_abi;
    if (v.min_host_abi != 0 && (DRANET_ABI_MAJOR_OF(v.min_host_abi) != DRANET_ABI_MAJOR ||
                                DRANET_ABI_MINOR_OF(v.min_host_abi) > DRANET_ABI_MINOR))
      throw PluginRejected("plugin needs host ABI " + AbiString(v.min_host_abi) + " or newer; this host has " +
                           AbiString(DRANET_ABI_CURRENT));
    if (d->attribute_domains != nullptr) {
      if (ObjectOf(d->attribute_domains).empty())
        throw PluginRejected("attribute_domains points outside any loaded object");
      std::size_t i = 0;
      for (; i < kMaxAttributeDomains && d->attribute_domains[i] != nullptr; ++i) {
        std::string domain = CopyPluginString(d->attribute_domains[i], kMaxDomainLength, "attribute_domains entry", true);
        if (!IsDnsSubdomain(domain))
          throw PluginRejected("attribute domain \"" + domain + "\" is not a DNS subdomain of at most 63 characters");
        if (IsCoreDomain(domain + "/x"))
          throw PluginRejected("attribute domain \"" + domain + "\" belongs to the core, not to a plugin");
        v.attribute_domains.push_back(std::move(domain));
      }
      if (i == kMaxAttributeDomains && d->attribute_domains[i] != nullptr)
        throw PluginRejected("attribute_domains has more than " + std::to_string(kMaxAttributeDomains) +
                             " entries (or no terminating NULL)");
    }
  }
  if (DRANET_HAS_FIELD(d, dranet_plugin_t, snapshot_paths) && d->snapshot_paths != nullptr) {
    if (ObjectOf(d->snapshot_paths).empty()) throw PluginRejected("snapshot_paths points outside any loaded object");
    std::size_t i = 0;
    for (; i < kMaxSnapshotPaths && d->snapshot_paths[i] != nullptr; ++i) {
      std::string path = CopyPluginString(d->snapshot_paths[i], kMaxSnapshotPathLength, "snapshot_paths entry", true);
      if (auto problem = inventory::SnapshotGlobProblem(path); !problem.empty())
        throw PluginRejected("snapshot path \"" + path + "\": " + problem);
      v.snapshot_paths.push_back(std::move(path));
    }
    if (i == kMaxSnapshotPaths && d->snapshot_paths[i] != nullptr)
      throw PluginRejected("snapshot_paths has more than " + std::to_string(kMaxSnapshotPaths) +
                           " entries (or no terminating NULL)");
  }

  if (d->match_table != nullptr) {
    if (ObjectOf(d->match_table).empty())
      throw PluginRejected("match_table points outside any loaded object");
    std::size_t i = 0;
    for (; i < kMaxMatchEntries && d->match_table[i].kind != DRANET_MATCH_END; ++i) {
      dranet_match_t m = d->match_table[i];
      if (m.kind == DRANET_MATCH_DRIVER || m.kind == DRANET_MATCH_IFNAME) {
        CopyPluginString(m.pattern, kMaxTextLength, "match_table pattern", true);
      } else if (m.kind > DRANET_MATCH_ALWAYS) {
        v.notes.push_back("match entry " + std::to_string(i) + " has unknown kind " +
                          std::to_string(m.kind) + ": it never matches");
      }
      v.match_table.push_back(m);
    }
    if (i == kMaxMatchEntries)
      throw PluginRejected("match_table has no DRANET_MATCH_END within " +
                           std::to_string(kMaxMatchEntries) + " entries");
  }
  if (d->config_keys != nullptr) {
    if (ObjectOf(d->config_keys).empty())
      throw PluginRejected("config_keys points outside any loaded object");
    std::size_t i = 0;
    for (; i < kMaxConfigKeys && d->config_keys[i].name != nullptr; ++i) {
      const auto& k = d->config_keys[i];
      ValidatedDescriptor::ConfigKey key;
      key.name = CopyPluginString(k.name, 63, "config key name", true);
      key.default_value = CopyPluginString(k.default_value, kMaxTextLength, "config default", false);
      key.description = CopyPluginString(k.description, kMaxTextLength, "config description", false);
      v.config_keys.push_back(std::move(key));
    }
    if (i == kMaxConfigKeys)
      throw PluginRejected("config_keys has no terminating entry within " +
                           std::to_string(kMaxConfigKeys) + " entries");
  }
  return v;
}

std::unique_ptr<PluginLibrary> PluginLibrary::Open(const std::filesystem::path& path) {
  std::unique_ptr<PluginLibrary> lib(new PluginLibrary());
  lib->path_ = path;
  namespace dll = boost::dll;
  lib->library_ = std::make_unique<dll::shared_library>();
  try {
    // The throwing overload is used for its message: it carries dlerror().
    lib->library_->load(path.string(), dll::load_mode::rtld_now | dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    throw PluginRejected(std::string("cannot load: ") + e.what());
  }
  if (!lib->library_->has(DRANET_PLUGIN_ENTRY_SYMBOL))
    throw PluginRejected("missing entry symbol " DRANET_PLUGIN_ENTRY_SYMBOL
                         " (not a dranet plugin, or built for another ABI major)");
  auto& entry = lib->library_->get<dranet_plugin_entry_fn>(DRANET_PLUGIN_ENTRY_SYMBOL);
  std::error_code fec;
  const std::string real_file = std::filesystem::canonical(path, fec).string();
  if (ObjectOf(reinterpret_cast<const void*>(&entry)) != real_file)
    throw PluginRejected(DRANET_PLUGIN_ENTRY_SYMBOL " resolves from another library, not the plugin file");

  const dranet_plugin_t* descriptor = nullptr;
  dranet_status_t st = DRANET_ERR_INTERNAL;
  try {
    st = entry(DRANET_ABI_CURRENT, &descriptor);
  } catch (...) {
    throw PluginRejected("entry threw an exception");
  }
  if (st == DRANET_ERR_ABI_MISMATCH) throw PluginRejected(RefusalReason(descriptor, real_file));
  if (st != DRANET_OK) throw PluginRejected("entry failed with " + DescribeStatus(st, 0, ""));
  lib->descriptor_ = ValidateDescriptor(descriptor, path);
  return lib;
}

void PluginLibrary::Leak() { (void)library_.release(); }

PluginLibrary::~PluginLibrary() = default;

}  // namespace dranet::plugins
