#include "plugins/plugin_flags.h"

#include <stdexcept>

#include "plugins/plugin_dirs.h"

namespace dranet::plugins {

void AddPluginFlags(CLI::App& app, PluginFlags& flags) {
  app.add_option("--plugin-dir", flags.dirs,
                 "Plugin directory (repeatable); default: " + DefaultPluginDir().string());
  app.add_option("--plugin-allow", flags.allow, "Load only these plugins (comma-separated)")->delimiter(',');
  app.add_option("--plugin-deny", flags.deny, "Never load these plugins (comma-separated)")->delimiter(',');
  app.add_option("--plugin-config", flags.config, "Plugin setting NAME.KEY=VALUE (repeatable)");
  app.add_option("--plugin-timeout-ms", flags.timeout_ms, "Deadline of loading a plugin, of its init and of each call (per device for annotate)")
      ->check(CLI::Range(10, 60000));
  app.add_flag("--allow-non-root-plugin-dir", flags.allow_non_root_dir,
               "Accept a plugin directory not owned by root (development only)");
}

void ApplyPluginFlags(const PluginFlags& flags, PluginHostOptions& options) {
  options.plugin_dirs.clear();
  if (flags.dirs.empty()) {
    options.plugin_dirs.push_back(DefaultPluginDir());
  } else {
    for (const auto& d : flags.dirs) options.plugin_dirs.emplace_back(d);
  }
  options.allow = flags.allow;
  options.deny = flags.deny;
  options.require_root_owned = !flags.allow_non_root_dir;
  options.init_deadline = std::chrono::milliseconds(flags.timeout_ms);
  options.call_deadline = std::chrono::milliseconds(flags.timeout_ms);
  for (const auto& entry : flags.config) {
    auto dot = entry.find('.');
    auto eq = entry.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot == 0 || dot + 1 >= eq)
      throw std::invalid_argument("--plugin-config \"" + entry + "\": want NAME.KEY=VALUE");
    options.config[entry.substr(0, dot)][entry.substr(dot + 1, eq - dot - 1)] = entry.substr(eq + 1);
  }
}

}  // namespace dranet::plugins
