#pragma once
// core/plugins/plugin_library.h — opening one plugin file and validating
// what it exports, before any of its code other than the entry runs.
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>
#include <dranet/plugin.h>

namespace dranet::plugins {

// Why a plugin file was refused; the message is the one log/report line.
class PluginRejected : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The descriptor fields the host uses, copied out of the plugin after
// validation. Ops that are NULL or whose capability bit is clear are
// replaced by stubs returning DRANET_ERR_UNSUPPORTED.
struct ValidatedDescriptor {
  std::string name;
  std::string version;
  std::string description;
  uint32_t abi_version = 0;
  uint32_t struct_size = 0;
  uint32_t capabilities = 0;  // known DRANET_CAP_* bits only
  uint32_t flags = 0;
  std::vector<dranet_match_t> match_table;  // without the END entry; empty = always
  struct ConfigKey {
    std::string name, default_value, description;
  };
  std::vector<ConfigKey> config_keys;
  // ABI 1.3: the further attribute domains it declares (validated DNS
  // subdomains, none of the core's), and the oldest host it works with.
  std::vector<std::string> attribute_domains;
  uint32_t min_host_abi = 0;
  // ABI 1.3: the sysfs paths (globs) it reads, validated (SnapshotGlobProblem).
  std::vector<std::string> snapshot_paths;
  decltype(dranet_plugin_t::init) init = nullptr;
  decltype(dranet_plugin_t::fini) fini = nullptr;
  decltype(dranet_plugin_t::discover) discover = nullptr;
  decltype(dranet_plugin_t::annotate) annotate = nullptr;
  decltype(dranet_plugin_t::inject) inject = nullptr;
  // ABI 1.2; non-NULL only with DRANET_CAP_PROFILES.
  decltype(dranet_plugin_t::get_profile) get_profile = nullptr;
  decltype(dranet_plugin_t::release_profile) release_profile = nullptr;
  std::vector<std::string> notes;  // non-fatal findings worth a log line
};

// A loaded, validated plugin file. The library stays mapped for the
// object's lifetime (the host keeps it until shutdown).
class PluginLibrary {
 public:
  // Loads `path` with RTLD_NOW | RTLD_LOCAL and validates it. Throws
  // PluginRejected with a one-line reason on any failure.
  static std::unique_ptr<PluginLibrary> Open(const std::filesystem::path& path);

  const ValidatedDescriptor& descriptor() const { return descriptor_; }
  const std::filesystem::path& path() const { return path_; }

  // Leaves the library mapped for the rest of the process: used when a
  // plugin call never returned, so its code must stay in memory.
  void Leak();
  ~PluginLibrary();

 private:
  PluginLibrary() = default;
  std::filesystem::path path_;
  std::unique_ptr<boost::dll::shared_library> library_;
  ValidatedDescriptor descriptor_;
};

// The file name a plugin called `name` must have.
std::string PluginFileName(const std::string& name);

// Validates a descriptor returned by a plugin loaded from `file` (checks
// that its pointers lie in that file's image). Exposed for tests.
ValidatedDescriptor ValidateDescriptor(const dranet_plugin_t* descriptor,
                                       const std::filesystem::path& file);

}  // namespace dranet::plugins
