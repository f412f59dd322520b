#pragma once
// tests/support/dnsmasq_server.h — a real DHCP server for root tests:
// Debian's dnsmasq (package dnsmasq-base) serving one interface of a network
// namespace, with its lease file and log in a directory of the caller's.
// Header-only; tests add tests/support to their include path.
//
// dnsmasq runs in the foreground as a child and is stopped (SIGTERM, then
// reaped) by Stop() or the destructor, so a failing test leaves nothing.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dranet::testing {

inline constexpr const char* kDnsmasqPath = "/usr/sbin/dnsmasq";

// Waits (at most 10 s) for `done`, which an asynchronous process makes true.
template <typename Predicate>
bool Eventually(Predicate done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class DnsmasqServer {
 public:
  // Files go to `dir` (leases, pid, dnsmasq.log), which must exist.
  explicit DnsmasqServer(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~DnsmasqServer() { Stop(); }
  DnsmasqServer(const DnsmasqServer&) = delete;
  DnsmasqServer& operator=(const DnsmasqServer&) = delete;

  // Serves `interface` in namespace `netns` (a /var/run/netns name) with
  // `range` ("first,last") in a /24 for an hour, plus `extra` dnsmasq
  // arguments (--dhcp-option=121,... for classless routes). Returns once
  // dnsmasq has opened its sockets; throws std::runtime_error with its log
  // when it exits instead.
  void Start(const std::string& netns, const std::string& interface, const std::string& range,
             const std::vector<std::string>& extra = {}) {
    Stop();
    std::filesystem::remove(dir_ / "pid");
    std::vector<std::string> args = {
        "ip", "netns", "exec", netns, kDnsmasqPath, "--keep-in-foreground", "--conf-file=/dev/null",
        "--port=0", "--bind-interfaces", "--interface=" + interface, "--user=root", "--group=root", "--no-ping",
        "--dhcp-range=" + range + ",255.255.255.0,1h", "--dhcp-leasefile=" + (dir_ / "leases").string(),
        "--pid-file=" + (dir_ / "pid").string(), "--log-facility=-", "--log-dhcp"};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string log = log_path().string();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      if (!std::freopen(log.c_str(), "a", stderr) || !std::freopen(log.c_str(), "a", stdout)) ::_exit(126);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    // dnsmasq writes its pid file once its sockets are open.
    Eventually([&] { return std::filesystem::exists(dir_ / "pid") || ::waitpid(pid_, nullptr, WNOHANG) != 0; });
    if (!std::filesystem::exists(dir_ / "pid")) {
      pid_ = -1;
      throw std::runtime_error("dnsmasq exited: " + ReadAll(log));
    }
  }

  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // The lease file: one line per lease ("<expiry> <mac> <ip> <name> <id>").
  std::string Leases() const { return ReadAll(dir_ / "leases"); }
  std::filesystem::path log_path() const { return dir_ / "dnsmasq.log"; }

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

}  // namespace dranet::testing
