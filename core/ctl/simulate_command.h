#pragma once
// `dranetctl simulate`: would these ResourceClaimTemplates allocate on this
// node, which devices, and what would each pod receive — or, when nothing
// matches, which selector clause each device failed.
// `dranetctl templates`: aligned ResourceClaimTemplates (a GPU plus its
// nearest NICs) generated for a node, ready to apply.
#include <CLI/CLI.hpp>

namespace dranet::ctl {
void AddSimulateCommand(CLI::App& app, int& exit_code);
void AddTemplatesCommand(CLI::App& app, int& exit_code);
}
