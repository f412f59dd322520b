#include "netns_lab.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <linux/fib_rules.h>

#include "inject/host_network.h"

extern char** environ;

namespace dranet::netlab {
namespace fs = std::filesystem;
namespace {

// iproute2's NETNS_RUN_DIR: `ip netns add NAME` bind-mounts the namespace here.
constexpr const char* kNetnsDir = "/var/run/netns/";
constexpr const char* kPrefix = "dranet-demo-";

// `ip` may live in /usr/sbin or /sbin, which a non-login PATH can lack.
const std::string& IpPath() {
  static const std::string path = [] {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("PATH")) {
      std::stringstream s(env);
      for (std::string dir; std::getline(s, dir, ':');)
        if (!dir.empty()) dirs.push_back(dir);
    }
    for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) dirs.emplace_back(dir);
    for (const auto& dir : dirs) {
      const std::string candidate = dir + "/ip";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::string();
  }();
  return path;
}

// Namespaces to delete when a signal ends the demo, and dranetd to stop first.
std::mutex g_mu;
std::set<std::string> g_tracked_netns;
pid_t g_daemon = -1;

void Track(const std::string& name, bool add) {
  std::lock_guard lock(g_mu);
  if (add) g_tracked_netns.insert(name);
  else g_tracked_netns.erase(name);
}

CommandResult Ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

void IpOrThrow(const std::vector<std::string>& args) {
  auto r = Ip(args);
  if (r.rc == 0) return;
  std::string cmd = "ip";
  for (const auto& a : args) cmd += " " + a;
  while (!r.output.empty() && r.output.back() == '\n') r.output.pop_back();
  throw std::runtime_error("`" + cmd + "` failed: " + r.output);
}

std::string FamilyFlag(int family) { return family == AF_INET6 ? "-6" : "-4"; }

std::string ProtocolName(uint8_t protocol) {
  static const std::map<uint8_t, std::string> kNames{
      {RTPROT_KERNEL, "kernel"}, {RTPROT_BOOT, "boot"}, {RTPROT_STATIC, "static"}, {RTPROT_RA, "ra"},
      {RTPROT_DHCP, "dhcp"}};
  auto it = kNames.find(protocol);
  return it != kNames.end() ? it->second : std::to_string(protocol);
}

std::string ScopeName(uint8_t scope) {
  if (scope == RT_SCOPE_LINK) return "link";
  if (scope == RT_SCOPE_HOST) return "host";
  if (scope == RT_SCOPE_SITE) return "site";
  return std::to_string(scope);
}

bool SpecialTable(uint32_t table) {
  return table == RT_TABLE_UNSPEC || table == RT_TABLE_MAIN || table == RT_TABLE_LOCAL ||
         table == RT_TABLE_DEFAULT;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv) {
  CommandResult result;
  if (argv.empty()) return result;
  std::string file = argv[0] == "ip" && !IpPath().empty() ? IpPath() : argv[0];
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawn_error = ::posix_spawnp(&pid, file.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (spawn_error != 0) {
    ::close(fds[0]);
    result.output = "cannot run " + file + ": " + std::strerror(spawn_error);
    return result;
  }
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    result.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

namespace {
bool g_rootless = false;

bool WriteProcFile(const char* path, const std::string& data) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ::close(fd);
  return ok;
}
}  // namespace

std::string EnterRootlessNamespaces() {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
    return std::string("cannot create a user namespace: ") + std::strerror(errno) +
           " (unprivileged user namespaces disabled?)";
  if (!WriteProcFile("/proc/self/setgroups", "deny") ||
      !WriteProcFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
      !WriteProcFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
    return std::string("cannot map this user into its user namespace: ") + std::strerror(errno);
  const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  const bool up = sock >= 0 && ::ioctl(sock, SIOCGIFFLAGS, &ifr) == 0 &&
                  (ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP), ::ioctl(sock, SIOCSIFFLAGS, &ifr) == 0);
  if (sock >= 0) ::close(sock);
  if (!up) return std::string("cannot bring up loopback in its network namespace: ") + std::strerror(errno);
  g_rootless = true;
  return {};
}

bool Rootless() { return g_rootless; }

std::string NetnsUnavailableReason() {
  if (g_rootless || ::geteuid() != 0) return "not root";
  if (IpPath().empty()) return "no `ip` command (iproute2)";
  return {};
}

std::vector<std::string> RemoveStaleNamespaces() {
  std::vector<std::string> removed;
  std::error_code ec;
  static const std::regex kOurs(R"(dranet-demo-(?:node|pod)-(\d+)(?:-\d+)?)");
  for (const auto& entry : fs::directory_iterator(kNetnsDir, ec)) {
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, kOurs)) continue;
    const pid_t owner = static_cast<pid_t>(std::stol(m[1].str()));
    if (owner == ::getpid() || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
    if (Ip({"netns", "del", name}).rc == 0) removed.push_back(name);
  }
  return removed;
}

void BlockTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void StartSignalCleanup() {
  std::thread([] {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return;
    pid_t daemon;
    std::set<std::string> names;
    {
      std::lock_guard lock(g_mu);
      daemon = g_daemon;
      names = g_tracked_netns;
    }
    if (daemon > 0) {
      ::kill(daemon, SIGTERM);
      ::waitpid(daemon, nullptr, 0);
    }
    // Pods first: their veth ends die with them, then the node's.
    for (auto it = names.rbegin(); it != names.rend(); ++it) Ip({"netns", "del", *it});
    std::fflush(stdout);
    std::fprintf(stderr, "\ndranet-demo: %s: stopped dranetd, removed %zu network namespace(s)\n", strsignal(sig),
                 names.size());
    std::_Exit(128 + sig);
  }).detach();
}

void TrackDaemon(pid_t pid) {
  std::lock_guard lock(g_mu);
  g_daemon = pid;
}

inventory::NetlinkFacts ReadFactsIn(const std::string& netns_path, Logger& log) {
  inventory::NetlinkFacts facts;
  std::string error;
  std::thread reader([&] {
    const int fd = ::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = "cannot open " + netns_path + ": " + std::strerror(errno);
      return;
    }
    const int rc = ::setns(fd, CLONE_NEWNET);
    const int saved = errno;
    ::close(fd);
    if (rc != 0) {
      error = "cannot enter " + netns_path + ": " + std::strerror(saved);
      return;
    }
    facts = inventory::ReadLiveNetlinkFacts(log);
  });
  reader.join();
  if (!error.empty()) throw std::runtime_error(error);
  return facts;
}

std::vector<inventory::RouteFacts> CarriedRoutes(const inventory::NetlinkFacts& facts, int ifindex) {
  std::vector<inventory::RouteFacts> routes;
  for (const auto& route : facts.routes) {
    if (!inject::IsCarriedRoute(route)) continue;
    for (const auto& hop : route.nexthops) {
      if (hop.ifindex != ifindex) continue;
      auto one = route;
      one.nexthops = {hop};
      one.nexthops.front().weight = 1;
      routes.push_back(std::move(one));
      break;
    }
  }
  return routes;
}

std::string FormatRoute(const inventory::RouteFacts& route, const std::string& dev) {
  std::string out = route.IsDefault() ? "default" : route.destination;
  // A host route is printed without its /32 (/128), as iproute2 does.
  const std::string host_suffix = route.family == AF_INET6 ? "/128" : "/32";
  if (out.size() > host_suffix.size() && out.ends_with(host_suffix)) out.resize(out.size() - host_suffix.size());
  if (!route.nexthops.empty() && !route.nexthops.front().gateway.empty())
    out += " via " + route.nexthops.front().gateway;
  out += " dev " + dev;
  if (route.table != RT_TABLE_MAIN) out += " table " + std::to_string(route.table);
  if (route.protocol != 0) out += " proto " + ProtocolName(route.protocol);
  if (route.scope != RT_SCOPE_UNIVERSE) out += " scope " + ScopeName(route.scope);
  if (!route.source.empty()) out += " src " + route.source;
  if (route.metric != 0) out += " metric " + std::to_string(route.metric);
  return out;
}

NetnsLab::NetnsLab() : prefix_(std::string(kPrefix)), node_(prefix_ + "node-" + std::to_string(::getpid())) {
  original_netns_fd_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original_netns_fd_ < 0)
    throw std::runtime_error(std::string("cannot open this thread's network namespace: ") + std::strerror(errno));
  Ip({"netns", "del", node_});  // a leftover of an earlier run with our pid
  try {
    IpOrThrow({"netns", "add", node_});
    Track(node_, true);
    IpOrThrow({"-n", node_, "link", "set", "lo", "up"});
  } catch (...) {  // no destructor runs for a throwing constructor
    Ip({"netns", "del", node_});
    Track(node_, false);
    ::close(original_netns_fd_);
    throw;
  }
}

NetnsLab::~NetnsLab() {
  if (original_netns_fd_ >= 0) {
    if (::setns(original_netns_fd_, CLONE_NEWNET) != 0)
      std::fprintf(stderr, "dranet-demo: cannot return to the original network namespace: %s\n",
                   std::strerror(errno));
    ::close(original_netns_fd_);
  }
  for (const auto& pod : pods_) {
    Ip({"netns", "del", pod});
    Track(pod, false);
  }
  if (auto r = Ip({"netns", "del", node_}); r.rc != 0)
    std::fprintf(stderr, "dranet-demo: cannot delete network namespace %s: %s", node_.c_str(), r.output.c_str());
  Track(node_, false);
}

void NetnsLab::AddStandIn(const inventory::NetlinkFacts& snapshot, const std::string& if_name) {
  auto link = std::find_if(snapshot.links.begin(), snapshot.links.end(),
                           [&](const inventory::LinkFacts& l) { return l.name == if_name; });
  if (link == snapshot.links.end()) throw std::runtime_error("netdev " + if_name + " is not in the snapshot");
  const std::string peer = "p-" + std::to_string(peer_counter_++);
  std::vector<std::string> add{"-n", node_, "link", "add", if_name};
  // Ethernet MACs only (IPoIB's 20-byte addresses do not fit a veth); the
  // kernel then derives the snapshot's IPv6 link-local address itself.
  if (link->mac.size() == 17 && (std::stoi(link->mac.substr(0, 2), nullptr, 16) & 1) == 0)
    add.insert(add.end(), {"address", link->mac});
  if (link->mtu > 0) add.insert(add.end(), {"mtu", std::to_string(link->mtu)});
  add.insert(add.end(), {"type", "veth", "peer", "name", peer});
  if (link->mtu > 0) add.insert(add.end(), {"mtu", std::to_string(link->mtu)});
  IpOrThrow(add);
  for (const auto& address : link->addresses) {
    const bool v6 = address.find(':') != std::string::npos;
    std::vector<std::string> cmd{"-n", node_, v6 ? "-6" : "-4", "addr", "replace", address, "dev", if_name};
    if (v6) cmd.push_back("nodad");
    IpOrThrow(cmd);
  }
  if ((link->flags & IFF_UP) == 0) return;  // a link that is down carries no routes
  IpOrThrow({"-n", node_, "link", "set", peer, "up"});
  IpOrThrow({"-n", node_, "link", "set", if_name, "up"});
  auto routes = CarriedRoutes(snapshot, link->ifindex);
  // On-link routes first: a route via a gateway needs the gateway reachable.
  std::stable_sort(routes.begin(), routes.end(), [](const auto& a, const auto& b) {
    return a.nexthops.front().gateway.empty() && !b.nexthops.front().gateway.empty();
  });
  std::set<uint32_t> tables;
  for (const auto& route : routes) {
    std::vector<std::string> cmd{"-n", node_, FamilyFlag(route.family), "route", "replace", route.destination};
    if (!route.nexthops.front().gateway.empty()) cmd.insert(cmd.end(), {"via", route.nexthops.front().gateway});
    cmd.insert(cmd.end(), {"dev", if_name, "table", std::to_string(route.table), "scope",
                           std::to_string(route.scope), "metric", std::to_string(route.metric)});
    if (!route.source.empty()) cmd.insert(cmd.end(), {"src", route.source});
    if (route.protocol != 0) cmd.insert(cmd.end(), {"proto", std::to_string(route.protocol)});
    IpOrThrow(cmd);
    tables.insert(route.table);
  }
  for (const auto& rule : snapshot.rules) {
    if (rule.other_selectors || rule.action != FR_ACT_TO_TBL) continue;
    if (SpecialTable(rule.table) || !tables.count(rule.table)) continue;
    std::vector<std::string> cmd{"-n", node_, FamilyFlag(rule.family), "rule", "add", "priority",
                                 std::to_string(rule.priority)};
    if (!rule.source.empty()) cmd.insert(cmd.end(), {"from", rule.source});
    if (!rule.destination.empty()) cmd.insert(cmd.end(), {"to", rule.destination});
    cmd.insert(cmd.end(), {"lookup", std::to_string(rule.table)});
    Ip(cmd);  // a rule shared by several netdevs is added once; the repeats fail harmlessly
  }
  for (const auto& neighbor : snapshot.neighbors) {
    if (neighbor.ifindex != link->ifindex || neighbor.lladdr.empty()) continue;
    IpOrThrow({"-n", node_, "neigh", "replace", neighbor.destination, "lladdr", neighbor.lladdr, "dev", if_name,
               "nud", "permanent"});
  }
}

void NetnsLab::EnterNode() {
  const std::string path = PathOf(node_);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  const int rc = ::setns(fd, CLONE_NEWNET);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error("cannot enter " + path + ": " + std::strerror(saved));
}

std::string NetnsLab::AddPod() {
  const std::string name = prefix_ + "pod-" + std::to_string(::getpid()) + "-" + std::to_string(pod_counter_++);
  IpOrThrow({"netns", "add", name});
  pods_.push_back(name);
  Track(name, true);
  IpOrThrow({"-n", name, "link", "set", "lo", "up"});
  return name;
}

void NetnsLab::RemovePod(const std::string& name) {
  Ip({"netns", "del", name});
  Track(name, false);
  pods_.erase(std::remove(pods_.begin(), pods_.end(), name), pods_.end());
}

std::string NetnsLab::PathOf(const std::string& name) { return kNetnsDir + name; }

}  // namespace dranet::netlab
