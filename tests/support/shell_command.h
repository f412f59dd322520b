#pragma once
// tests/support/shell_command.h — running `ip` and friends from root tests
// and looking at what they print. Header-only; tests add tests/support to
// their include path.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dranet::testing {

struct CommandResult {
  int status = -1;     // exit status; -1 when it did not exit normally
  std::string output;  // stdout and stderr together
};

// Runs `command` with /bin/sh.
inline CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) result.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// What `command` prints (stdout and stderr).
inline std::string Capture(const std::string& command) { return RunCommand(command).output; }

// Whether `command` exits 0 (its output discarded).
inline bool Ok(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()) == 0; }

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Whether this kernel makes child links of `kind` ("ipvlan", "macvlan") of
// an Ethernet netdev: a kernel may lack the driver (root only; a veth made
// and deleted in the caller's namespace to find out).
inline bool KernelMakesChildren(const std::string& kind) {
  const std::string parent = "dnprobe" + std::to_string(::getpid() % 100000);
  if (!Ok("ip link add " + parent + " type veth peer name " + parent + "p")) return false;
  const bool made = Ok("ip link add link " + parent + " name " + parent + "c type " + kind);
  Ok("ip link del " + parent);
  return made;
}

}  // namespace dranet::testing
