#pragma once
// `dranetctl inspect`: the ResourceSlices dranetd would publish for a node
// (-o table|json|yaml), and `dranetctl snapshot`: capture this node as a
// snapshot directory that every command accepts as --host-root.
#include <CLI/CLI.hpp>

namespace dranet::ctl {
void AddInspectCommand(CLI::App& app, int& exit_code);
void AddSnapshotCommand(CLI::App& app, int& exit_code);
}
