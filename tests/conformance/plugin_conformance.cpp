// plugin_conformance --plugin FILE.so [--nodes DIR] [--expect-failure TEST --expect-message TEXT]
//
// --nodes: the node snapshots the checks run on (default: those installed
// beside the program, <prefix>/share/dranet/conformance/nodes).
//
// The checks every dranet plugin must pass, whoever wrote it:
//   1. it loads strictly and negotiates ABI 1 (name matches the file);
//   2. it exports nothing but the entry symbol;
//   3. it survives repeated init/fini cycles, on an empty node and on every
//      node snapshot of --nodes (loaded or not-applicable, never failed);
//   4. it honours the roots: on an empty node and on every node snapshot
//      (with the snapshot's own devices), its output is identical when the
//      machine's own /sys is replaced by a canary: an empty tmpfs for the
//      empty node, a copy of the snapshot's sys in which every file says
//      "dranet-conformance-canary" for a snapshot — so a plugin that reads
//      /sys instead of its sysfs root sees other values than through the
//      root (needs root; skipped otherwise);
//   5. it never prints to stdout or stderr;
//   6. every edit it makes at inject is accepted by the host, and its routes
//      and rules (ABI 1.1) name only the request's devices that have a
//      netdev — also when the request is a subset of what it annotated;
//   7. a profile plugin (ABI 1.2) declines a profile it cannot know with
//      DRANET_ERR_NOT_FOUND — it neither answers nor fails — and releasing
//      it succeeds, for every sample device, also in the reduced form
//      release sees.
// Metadata HTTP is answered by a stub that refuses, so no check reaches a
// real metadata service. A plugin that crashes the kit (abort, SIGSEGV) is
// named with the check that was running ("the plugin crashed during check
// Conformance.X (signal 6)") and the kit exits 128 + the signal.
//
// With --expect-failure the run proves that a check can fail: it passes
// (exit 0) only when TEST is the one check that failed and one of its
// failure messages contains TEXT. Anything else is a wrong verdict (exit 1):
// TEST passed or did not run, another check failed too, or TEST failed for
// another reason. A plugin that cannot be found is a usage error (exit 2),
// never the wanted rejection. When TEST was skipped (it needs root) the
// verdict is unknown and the exit code is 77, which ctest reports as skipped.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>

#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "plugins/plugin_host.h"
#include "plugins/plugin_library.h"

namespace fs = std::filesystem;
using namespace dranet::plugins;

namespace {

fs::path g_plugin;

fs::path TempDir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("dranet-conformance-" + std::to_string(getpid()) + "-" + tag);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

PluginHostOptions OptionsFor(const fs::path& plugin_dir, const fs::path& host_root) {
  PluginHostOptions o;
  o.plugin_dirs = {plugin_dir};
  o.host_root = host_root;
  o.node_name = "conformance-node";
  o.require_root_owned = false;
  o.http = [](const dranet::plugins::HttpRequest&) -> HttpResult {
    return HttpResult{404, "not found"};
  };
  return o;
}

// A plugin directory holding only the plugin under test.
fs::path PluginDir() {
  static fs::path dir = [] {
    fs::path d = TempDir("plugins");
    fs::copy_file(g_plugin, d / g_plugin.filename());
    return d;
  }();
  return dir;
}

std::vector<dranet::inventory::Device> SampleDevices() {
  dranet::inventory::Device rdma;
  rdma.name = "pci-0000-00-03-0";
  rdma.pci_address = "0000:00:03.0";
  rdma.if_name = "lo";  // exists on every live host, never in a test root
  rdma.rdma_device = "mlx5_0";
  rdma.driver = "mlx5_core";
  rdma.pci_vendor_id = 0x15b3;
  rdma.pci_device_id = 0x101e;
  rdma.numa_node = 0;
  rdma.attributes["dra.net/rdma"] = true;
  rdma.attributes["dra.net/ifName"] = std::string("lo");
  dranet::inventory::Device virt;
  virt.name = "gpu0rdma0";
  virt.if_name = "gpu0rdma0";
  dranet::inventory::Device ib_only;  // an IB VF: RDMA device, no netdev
  ib_only.name = "pci-0000-00-04-0";
  ib_only.pci_address = "0000:00:04.0";
  ib_only.rdma_device = "mlx5_1";
  ib_only.driver = "mlx5_core";
  ib_only.pci_vendor_id = 0x15b3;
  ib_only.pci_device_id = 0x101e;
  ib_only.numa_node = 0;
  ib_only.attributes["dra.net/rdma"] = true;
  ib_only.attributes["dra.net/rdmaDevice"] = std::string("mlx5_1");
  return {rdma, virt, ib_only};
}

// The sample devices, and on a node snapshot the snapshot's own devices
// too (as dranetd would discover them there).
std::vector<dranet::inventory::Device> DevicesOf(const fs::path& host_root, dranet::Logger& logger) {
  auto devices = SampleDevices();
  if (!dranet::inventory::IsSnapshot(host_root)) return devices;
  dranet::inventory::DiscoveryOptions options;
  options.host_root = host_root;
  for (auto& d : dranet::inventory::Discoverer(options, logger).Discover()) devices.push_back(std::move(d));
  return devices;
}

// Everything observable the plugin produced, as text.
std::string RunAll(const fs::path& host_root, dranet::Logger& logger) {
  PluginHost host(OptionsFor(PluginDir(), host_root), logger);
  std::ostringstream out;
  for (const auto& r : host.reports()) out << "report " << OutcomeName(r.outcome) << " " << r.reason << "\n";
  auto devices = DevicesOf(host_root, logger);
  host.Annotate(devices);
  for (const auto& d : devices)
    for (const auto& [k, v] : d.attributes) {
      out << d.name << " " << k << "=" << dranet::inventory::FormatAttributeValue(v) << "\n";
    }
  for (const auto& d : host.Discover()) out << "discovered " << d.name << "\n";
  auto edits = host.Inject({"ns", "claim", "uid"}, devices);
  for (const auto& [k, v] : edits.env) out << "env " << k << "=" << v << "\n";
  for (const auto& n : edits.dev_nodes) out << "node " << n.path << "\n";
  for (const auto& r : edits.routes)
    out << "route " << r.device << " " << r.destination << " via " << r.gateway << " table " << r.table << "\n";
  for (const auto& r : edits.rules) out << "rule " << r.device << " from " << r.source << " table " << r.table << "\n";
  for (const auto& e : edits.errors) out << "error " << e << "\n";
  return out.str();
}

// Check 6 for one inject: routes and rules only on `request`'s netdevs, and
// nothing the host refused.
void ExpectOnlyRequestNetdevs(const InjectionEdits& edits, const std::vector<dranet::inventory::Device>& request,
                              const std::string& where) {
  auto netdev_of_request = [&](const std::string& name) {
    for (const auto& d : request)
      if (d.name == name) return !d.if_name.empty();
    return false;
  };
  for (const auto& r : edits.routes)
    EXPECT_TRUE(netdev_of_request(r.device))
        << where << ": route " << r.destination << " on \"" << r.device << "\", not a netdev of the request";
  for (const auto& r : edits.rules)
    EXPECT_TRUE(netdev_of_request(r.device))
        << where << ": rule lookup " << r.table << " on \"" << r.device << "\", not a netdev of the request";
  for (const auto& e : edits.errors) ADD_FAILURE() << where << ": the host refused an edit (the claim would fail): " << e;
}

// Runs `body` in a child process and returns what it wrote to `result_fd`,
// plus (separately) everything the child wrote to its stdout and stderr.
struct ChildOutput {
  bool ok = false;
  int signal = 0;  // the signal that ended the child, if any
  std::string result;
  std::string printed;
  // Why the child did not finish, for a failure message.
  std::string Failure() const {
    if (signal != 0) return "the plugin crashed (signal " + std::to_string(signal) + ", " + strsignal(signal) + ")";
    return ok ? "" : "the child failed: " + printed;
  }
};

std::string Drain(int fd) {
  std::string s;
  std::array<char, 4096> buf{};
  for (;;) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    s.append(buf.data(), static_cast<std::size_t>(n));
  }
  return s;
}

template <typename Body>
ChildOutput InChild(Body body) {
  int result_pipe[2], print_pipe[2];
  if (pipe(result_pipe) != 0 || pipe(print_pipe) != 0) return {};
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    close(result_pipe[0]);
    close(print_pipe[0]);
    dup2(print_pipe[1], STDOUT_FILENO);
    dup2(print_pipe[1], STDERR_FILENO);
    std::string result;
    int code = body(result) ? 0 : 3;
    fflush(stdout);
    fflush(stderr);
    if (write(result_pipe[1], result.data(), result.size()) < 0) code = 4;
    _exit(code);
  }
  close(result_pipe[1]);
  close(print_pipe[1]);
  ChildOutput out;
  // Both pipes at once: either may hold more than a pipe buffer (a
  // snapshot's devices), and the child blocks until it is read.
  std::array<pollfd, 2> fds{pollfd{print_pipe[0], POLLIN, 0}, pollfd{result_pipe[0], POLLIN, 0}};
  std::array<std::string*, 2> into{&out.printed, &out.result};
  for (int open_fds = 2; open_fds > 0;) {
    if (poll(fds.data(), fds.size(), -1) < 0) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      std::array<char, 4096> buf{};
      const ssize_t n = read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        into[i]->append(buf.data(), static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  out.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return out;
}

// The directory of node snapshots the checks run on (--nodes).
fs::path g_nodes;

std::vector<fs::path> Snapshots() {
  std::vector<fs::path> roots;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(g_nodes, ec))
    if (e.is_directory() && fs::exists(e.path() / "sys")) roots.push_back(e.path());
  std::sort(roots.begin(), roots.end());
  return roots;
}

TEST(Conformance, LoadsStrictlyAndNegotiatesAbi1) {
  auto lib = PluginLibrary::Open(g_plugin);
  const auto& d = lib->descriptor();
  EXPECT_EQ(DRANET_ABI_MAJOR_OF(d.abi_version), 1u);
  EXPECT_EQ(g_plugin.filename().string(), PluginFileName(d.name));
  EXPECT_FALSE(d.version.empty());
  EXPECT_FALSE(d.description.empty()) << "dranetctl plugins shows the description";
  EXPECT_NE(d.capabilities, 0u) << "a plugin with no capability does nothing";
}

TEST(Conformance, ExportsOnlyTheEntrySymbol) {
  std::string cmd = "nm -D --defined-only '" + g_plugin.string() + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string all = Drain(fileno(p));
  pclose(p);
  std::istringstream lines(all);
  std::vector<std::string> exported;
  for (std::string line; std::getline(lines, line);) {
    auto sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    char kind = line.size() > 17 ? line[17] : '?';
    if (kind == 'T' || kind == 'D' || kind == 'B' || kind == 'R' || kind == 'W' || kind == 'V' || kind == 'i')
      exported.push_back(line.substr(sp + 1, line.find('@', sp) - sp - 1));  // drop @@VERSION
  }
  ASSERT_FALSE(exported.empty()) << "nm found no symbols in " << g_plugin;
  for (const auto& s : exported)
    EXPECT_TRUE(s == "dranet_plugin_entry_v1" || s.rfind("DRANET_PLUGIN_1", 0) == 0) << "extra export: " << s;
}

TEST(Conformance, SurvivesInitFiniCyclesOnEveryNode) {
  std::vector<fs::path> roots{TempDir("empty-root")};
  for (const auto& s : Snapshots()) roots.push_back(s);
  for (const auto& root : roots) {
    for (int cycle = 0; cycle < 3; ++cycle) {
      std::ostringstream log;
      dranet::Logger logger(log);
      PluginHost host(OptionsFor(PluginDir(), root), logger);
      ASSERT_EQ(host.reports().size(), 1u);
      auto outcome = host.reports()[0].outcome;
      EXPECT_TRUE(outcome == PluginOutcome::kLoaded || outcome == PluginOutcome::kNotApplicable)
          << root << ": " << OutcomeName(outcome) << ": " << host.reports()[0].reason;
      auto devices = SampleDevices();
      host.Annotate(devices);
      (void)host.Discover();
      (void)host.Inject({"ns", "claim", "uid"}, devices);
    }
  }
}

// A claim gets the plugin's routes and rules for its own netdevs only:
// never for a device without a netdev, never for a device of another claim
// (e.g. one remembered from annotate). Every request is checked: all
// sample devices and each device alone, on an empty node and every snapshot.
TEST(Conformance, InjectEditsOnlyTheRequestsNetdevs) {
  std::vector<fs::path> roots{TempDir("inject-root")};
  for (const auto& s : Snapshots()) roots.push_back(s);
  for (const auto& root : roots) {
    std::ostringstream log;
    dranet::Logger logger(log);
    PluginHost host(OptionsFor(PluginDir(), root), logger);
    auto devices = SampleDevices();
    host.Annotate(devices);
    std::vector<std::vector<dranet::inventory::Device>> requests{devices};
    for (const auto& d : devices) requests.push_back({d});
    for (const auto& request : requests) {
      std::string where = root.filename().string() + ", request {";
      for (const auto& d : request) where += d.name + (&d == &request.back() ? "}" : ",");
      ExpectOnlyRequestNetdevs(host.Inject({"ns", "claim", "uid"}, request), request, where);
    }
  }
}

// Check 7. The host asks every profile plugin in turn: one that answers or
// fails for a profile it does not own takes other plugins' profiles hostage.
TEST(Conformance, ProfilesNotItsOwnAreDeclined) {
  std::vector<fs::path> roots{TempDir("profile-root")};
  for (const auto& s : Snapshots()) roots.push_back(s);
  const std::string unknown = "dranet-conformance-unknown-" + std::to_string(getpid());
  for (const auto& root : roots) {
    std::ostringstream log;
    dranet::Logger logger(log);
    PluginHost host(OptionsFor(PluginDir(), root), logger);
    if (host.ProfilePlugins().empty()) continue;
    for (const auto& device : SampleDevices()) {
      const std::string where = root.filename().string() + ", device " + device.name;
      const ProfileQuery query{unknown, "uid", "{\"profile\":\"" + unknown + "\"}"};
      try {
        auto answer = host.GetProfile(query, device);
        EXPECT_FALSE(answer) << where << ": answered a profile it cannot know: " << answer->config_json;
      } catch (const ProfileCallFailed& e) {
        ADD_FAILURE() << where << ": failed instead of declining (DRANET_ERR_NOT_FOUND): " << e.what();
      }
      dranet::inventory::Device reduced;  // what release sees: identifiers only
      reduced.name = device.name;
      reduced.pci_address = device.pci_address;
      for (const auto& d : {device, reduced})
        for (const auto& failure : host.ReleaseProfile(query, d))
          ADD_FAILURE() << where << ": releasing a profile it never gave failed: " << failure;
    }
  }
}

// Fills `sys` (the canary tmpfs) with a copy of `snapshot_sys` in which
// every regular file says kCanary instead of its value.
constexpr const char* kCanary = "dranet-conformance-canary\n";
bool FillCanary(const fs::path& snapshot_sys, const fs::path& sys) {
  std::error_code ec;
  fs::copy(snapshot_sys, sys, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  if (ec) return false;
  for (fs::recursive_directory_iterator it(sys, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink() || !it->is_regular_file()) continue;
    std::ofstream(it->path(), std::ios::trunc) << kCanary;
  }
  return !ec;
}

TEST(Conformance, HonoursTheRoots) {
  if (geteuid() != 0) GTEST_SKIP() << "replacing /sys needs a private mount namespace (root)";
  std::vector<fs::path> roots{TempDir("roots")};
  for (const auto& snapshot : Snapshots()) roots.push_back(snapshot);
  for (const auto& root : roots) {
    auto run = [&](bool canary) {
      return InChild([&, canary](std::string& result) {
        if (canary) {
          if (unshare(CLONE_NEWNS) != 0) return false;
          if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
          if (mount("tmpfs", "/sys", "tmpfs", 0, nullptr) != 0) return false;
          if (fs::exists(root / "sys") && !FillCanary(root / "sys", "/sys")) return false;
        }
        std::ostringstream log;
        dranet::Logger logger(log);
        result = RunAll(root, logger);
        return true;
      });
    };
    ChildOutput live = run(false);
    ChildOutput canary = run(true);
    ASSERT_TRUE(live.ok) << root << ": " << live.Failure();
    ASSERT_TRUE(canary.ok) << root << ": could not replace /sys with a canary, or " << canary.Failure();
    EXPECT_EQ(live.result, canary.result)
        << "on " << root.filename()
        << ": the plugin's output depends on the machine's own /sys, not on the sysfs root it was given";
  }
}

TEST(Conformance, NeverPrints) {
  fs::path root = TempDir("prints");
  std::vector<fs::path> roots{root};
  for (const auto& s : Snapshots()) roots.push_back(s);
  for (const auto& r : roots) {
    ChildOutput out = InChild([&](std::string& result) {
      std::ostringstream log;
      dranet::Logger logger(log);
      result = RunAll(r, logger);
      return true;
    });
    ASSERT_TRUE(out.ok) << r << ": " << out.Failure();
    EXPECT_EQ(out.printed, "") << "plugin printed on " << r;
  }
}

// What each check did, for --expect-failure's verdict.
struct CheckResult {
  bool failed = false;
  bool skipped = false;
  std::vector<std::string> messages;
};

// Written at each check's start, read by the crash handler (which may only
// write(2) what is already there).
char g_crash_line[512] = "plugin_conformance: the plugin crashed before any check started (signal ";

void NameTheCheckOnCrash(int sig) {
  const std::size_t n = strnlen(g_crash_line, sizeof g_crash_line);
  char digits[16];
  int k = 0;
  for (int v = sig; k == 0 || v > 0; v /= 10) digits[k++] = static_cast<char>('0' + v % 10);
  ssize_t ignored = write(STDERR_FILENO, g_crash_line, n);
  while (k > 0) ignored = write(STDERR_FILENO, &digits[--k], 1);
  ignored = write(STDERR_FILENO, ")\n", 2);
  (void)ignored;
  _exit(128 + sig);  // as a shell reports a death by signal
}

// OnTestPartResult runs while gtest holds the lock that current_test_info()
// takes, so the current check is remembered at its start instead.
class ResultRecorder : public ::testing::EmptyTestEventListener {
 public:
  explicit ResultRecorder(std::map<std::string, CheckResult>& results) : results_(results) {}
  void OnTestStart(const ::testing::TestInfo& info) override {
    const std::string check = std::string(info.test_suite_name()) + "." + info.name();
    current_ = &results_[check];
    std::snprintf(g_crash_line, sizeof g_crash_line, "plugin_conformance: the plugin crashed during check %s (signal ",
                  check.c_str());
  }
  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    if (current_ == nullptr) return;
    if (part.skipped()) current_->skipped = true;
    if (part.failed()) {
      current_->failed = true;
      current_->messages.emplace_back(part.message());
    }
  }
  void OnTestEnd(const ::testing::TestInfo&) override { current_ = nullptr; }

 private:
  std::map<std::string, CheckResult>& results_;
  CheckResult* current_ = nullptr;
};

// The verdict of an --expect-failure run; see the file comment.
int ExpectedFailureVerdict(int gtest_exit, const std::map<std::string, CheckResult>& results,
                           const std::string& expected, const std::string& message) {
  auto it = results.find(expected);
  if (it == results.end()) {
    std::fprintf(stderr, "WRONG VERDICT: %s did not run\n", expected.c_str());
    return 1;
  }
  int wrong = 0;
  for (const auto& [name, result] : results)
    if (name != expected && result.failed) {
      std::fprintf(stderr, "WRONG VERDICT: %s failed too, only %s was expected to\n", name.c_str(),
                   expected.c_str());
      ++wrong;
    }
  if (it->second.skipped && !it->second.failed) {
    std::fprintf(stderr, "UNKNOWN VERDICT: %s was skipped\n", expected.c_str());
    return wrong != 0 ? 1 : 77;
  }
  if (!it->second.failed) {
    std::fprintf(stderr, "WRONG VERDICT: %s passed, the plugin was expected to fail it\n", expected.c_str());
    ++wrong;
  }
  bool said = false;
  for (const auto& m : it->second.messages) said = said || m.find(message) != std::string::npos;
  if (it->second.failed && !said) {
    std::fprintf(stderr, "WRONG VERDICT: %s failed, but no failure says \"%s\"\n", expected.c_str(), message.c_str());
    ++wrong;
  }
  if (gtest_exit != 1) {
    std::fprintf(stderr, "WRONG VERDICT: the checks exited %d, a failed check exits 1\n", gtest_exit);
    ++wrong;
  }
  if (wrong != 0) return 1;
  std::printf("expected rejection: %s failed saying \"%s\"\n", expected.c_str(), message.c_str());
  return 0;
}

// <prefix>/share/dranet/conformance/nodes for <prefix>/bin/plugin_conformance: where the
// sdk install component puts the sample snapshots (found from the program's own path, so
// an installed kit can be moved).
fs::path InstalledNodes() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path().parent_path() / "share/dranet/conformance/nodes";
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string expect_failure, expect_message;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--plugin") g_plugin = fs::absolute(argv[i + 1]);
    if (arg == "--nodes") g_nodes = fs::absolute(argv[i + 1]);
    if (arg == "--expect-failure") expect_failure = argv[i + 1];
    if (arg == "--expect-message") expect_message = argv[i + 1];
  }
  if (g_plugin.empty() || !fs::exists(g_plugin) || expect_failure.empty() != expect_message.empty()) {
    std::fprintf(stderr,
                 "usage: plugin_conformance --plugin FILE.so [--nodes DIR] "
                 "[--expect-failure TEST --expect-message TEXT]\n"
                 "  --nodes DIR  node snapshots to run the checks on (each a directory with sys/ in it);\n"
                 "               default: the ones installed beside this program (%s)\n",
                 InstalledNodes().c_str());
    return 2;
  }
  if (g_nodes.empty()) g_nodes = InstalledNodes();
  const auto snapshots = Snapshots();
  if (snapshots.empty()) {
    std::fprintf(stderr,
                 "plugin_conformance: no node snapshot in %s (a snapshot is a directory with sys/ in it, as "
                 "`dranetctl snapshot` writes); pass --nodes DIR\n",
                 g_nodes.c_str());
    return 2;
  }
  std::printf("conformance of %s\n", g_plugin.c_str());
  std::printf("on %zu node snapshots in %s:", snapshots.size(), g_nodes.c_str());
  for (const auto& snapshot : snapshots) std::printf(" %s", snapshot.filename().c_str());
  std::printf("\n");
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, &NameTheCheckOnCrash);
  std::map<std::string, CheckResult> results;
  ::testing::UnitTest::GetInstance()->listeners().Append(new ResultRecorder(results));
  int exit_code = RUN_ALL_TESTS();
  if (expect_failure.empty()) return exit_code;
  return ExpectedFailureVerdict(exit_code, results, expect_failure, expect_message);
}
