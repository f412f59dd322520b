#pragma once
// core/plugins/plugin_dirs.h — where the binaries look for plugins when no
// --plugin-dir is given: <dir of the executable>/../lib/dranet/plugins
// (true both in the build tree and after install), else the configured
// install prefix's lib/dranet/plugins.
#include <filesystem>

namespace dranet::plugins {
std::filesystem::path DefaultPluginDir();
}
