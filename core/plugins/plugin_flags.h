#pragma once
// core/plugins/plugin_flags.h — the plugin host's command-line surface,
// shared by dranetd and dranetctl so both accept the same flags:
//   --plugin-dir DIR (repeatable)   --plugin-allow NAME,...   --plugin-deny NAME,...
//   --plugin-config NAME.KEY=VALUE (repeatable)   --plugin-timeout-ms MS
//   --allow-non-root-plugin-dir (development only)
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "plugins/plugin_host.h"

namespace dranet::plugins {

struct PluginFlags {
  std::vector<std::string> dirs;
  std::vector<std::string> allow, deny, config;
  int timeout_ms = 5000;
  bool allow_non_root_dir = false;
};

void AddPluginFlags(CLI::App& app, PluginFlags& flags);

// Fills the plugin part of PluginHostOptions; throws std::invalid_argument
// with a message naming the bad flag value.
void ApplyPluginFlags(const PluginFlags& flags, PluginHostOptions& options);

}  // namespace dranet::plugins
