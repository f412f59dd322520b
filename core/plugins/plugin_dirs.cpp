#include "plugins/plugin_dirs.h"

#include "dranet/build_info.h"

namespace dranet::plugins {

std::filesystem::path DefaultPluginDir() {
  std::error_code ec;
  // The running binary itself, not the node: no host root applies here.
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = (exe.parent_path() / build::kPluginDirFromExe).lexically_normal();
    if (std::filesystem::is_directory(beside, ec)) return beside;
  }
  return build::kInstalledPluginDir;
}

}  // namespace dranet::plugins
