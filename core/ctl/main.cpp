// dranetctl — the operator's and ML engineer's tool: plugins, inspect,
// snapshot, simulate, doctor. Each subcommand lives in its own file.
#include <iostream>

#include <CLI/CLI.hpp>

#include "ctl/doctor_command.h"
#include "ctl/inspect_command.h"
#include "ctl/plugins_command.h"
#include "ctl/simulate_command.h"
#include "dranet/build_info.h"
#include <dranet/plugin.h>

int main(int argc, char** argv) {
  CLI::App app{"dranetctl — inspect and check the dranet DRA network driver on a node"};
  app.require_subcommand(1);
  int exit_code = 0;
  app.add_subcommand("version", "Print the version")->callback([] {
    std::cout << "dranetctl " << dranet::build::kVersion << " (driver " << dranet::build::kDriverName
              << ", plugin ABI " << DRANET_ABI_MAJOR << "." << DRANET_ABI_MINOR << ")\n";
  });
  dranet::ctl::AddPluginsCommand(app, exit_code);
  dranet::ctl::AddInspectCommand(app, exit_code);
  dranet::ctl::AddSnapshotCommand(app, exit_code);
  dranet::ctl::AddSimulateCommand(app, exit_code);
  dranet::ctl::AddTemplatesCommand(app, exit_code);
  dranet::ctl::AddDoctorCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "dranetctl: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
