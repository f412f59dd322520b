#pragma once
// `dranetctl doctor`: checks what dranetd needs on this node — kubelet
// plugin directories, the NRI socket, capabilities, CDI and state
// directories, RDMA char devices and netns mode, plugins, competing network
// device plugins — and prints how to fix each problem. Exit 1 on a problem.
#include <CLI/CLI.hpp>

namespace dranet::ctl {
void AddDoctorCommand(CLI::App& app, int& exit_code);
}
