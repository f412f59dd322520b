#pragma once
// `dranetctl plugins`: which plugins load from the plugin directories, and
// why the others were skipped or rejected.
#include <CLI/CLI.hpp>

namespace dranet::ctl {
void AddPluginsCommand(CLI::App& app, int& exit_code);
}
