// dranet-demo — dranet end to end on one machine, against the bundled node
// snapshot and the fakes of tests/fakes (API server, kubelet, NRI runtime):
//
//   1. reads how the node type's deployment runs dranetd (the cloud's
//      kustomize overlay: demo_overlay.h; e.g. IPoIB skipped on AKS) and
//      allocates the node's claim templates the way the scheduler would
//      (core/simulate, with the GPU driver's slices) on the devices dranetd
//      will publish with those flags;
//   2. as root: builds a private "node" network namespace with a real
//      stand-in (veth) for every netdev the claims can allocate, carrying the
//      snapshot's MTU, addresses and routes, and enters it (tests/support/netns_lab.h);
//   3. starts the real dranetd on the snapshot (--host-root) with those flags;
//      it publishes its slices, registers with the fake kubelet and connects
//      to the fake NRI runtime;
//   4. the fake kubelet prepares every claim over the DRA gRPC API, the fake
//      runtime starts each claim's pod in a network namespace of its own
//      (RunPodSandbox, CreateContainer);
//   5. prints what each pod received — device nodes, env, and inside its
//      network namespace the netdevs with MTU, addresses and routes — and
//      whether its GPUs and NICs share NUMA nodes (the NICs' as dranetd
//      published them); stops the pod, reads the netdevs back on the node;
//      unprepares.
// Without root (or without `ip`) step 2 is skipped, netdevs are not moved
// and pods with netdevs get device-only checks (one line says so); dranetd
// then runs in a user namespace of its own so that its capability check
// passes.
//
// --check turns the printout into a test against a hand-written oracle,
// <templates' directory>/expected.yaml (demo_expected.h), written from the
// snapshot's files: each claim's container must receive exactly the device
// nodes and env listed there, its pod exactly the netdevs listed (MAC, MTU,
// addresses, routes) and get them back on the node after it stops, and its
// GPUs and NICs must sit on the NUMA nodes listed, aligned or not as listed.
// Every difference, a claim missing on either side and a missing expected
// file are failures, as is any step that does not work. The allocation above
// uses the daemon's discovery code (it plays the scheduler); the check never
// does, so a discovery bug shared by both cannot pass unseen.
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cel/publish_filter.h"
#include "demo_expected.h"
#include "netns_lab.h"
#include "demo_overlay.h"
#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "fake_nri_runtime.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "plugins/plugin_flags.h"
#include "plugins/plugin_host.h"
#include "plugins/recorded_metadata.h"
#include "simulate/simulate.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct DemoFlags {
  std::string dranetd, snapshot, templates, gpu_slices, work_dir, plugin_dir, overlay, expected;
  bool check = false;
  bool require_netns = false;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// dranetd as a child process; its log (stderr) goes to a file in the work dir.
class DaemonProcess {
 public:
  DaemonProcess(const std::string& binary, const std::vector<std::string>& args, const fs::path& log_file) {
    // Everything the child needs is made before fork(): after it, only
    // async-signal-safe calls (the parent has threads).
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int log_fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) throw std::runtime_error("cannot write " + log_file.string());
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      dup2(log_fd, STDERR_FILENO);
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive a demo killed outright
      if (getppid() != parent) _exit(1);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      execv(binary.c_str(), argv.data());
      static const char kExec[] = "dranet-demo: cannot exec dranetd\n";
      (void)!write(STDERR_FILENO, kExec, sizeof kExec - 1);
      _exit(127);
    }
    close(log_fd);
    if (pid_ < 0) throw std::runtime_error("fork failed");
    dranet::netlab::TrackDaemon(pid_);
  }
  ~DaemonProcess() { Stop(); }
  pid_t pid() const { return pid_; }
  // True (and the exit status kept) once the process has ended.
  bool Exited() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    Reaped(status);
    return true;
  }
  int Stop() {
    if (pid_ <= 0) return status_;
    kill(pid_, SIGTERM);
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_) Reaped(status);
    else pid_ = -1;  // reaped by the signal cleanup thread
    return status_;
  }

 private:
  void Reaped(int status) {
    pid_ = -1;
    dranet::netlab::TrackDaemon(-1);
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  pid_t pid_ = -1;
  int status_ = -1;
};

// The allocation as a ResourceClaim the scheduler would have written.
std::string AllocatedClaimJson(const dranet::simulate::TemplateResult& r, const std::string& pod_uid) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("apiVersion"); w.String("resource.k8s.io/v1");
  w.Key("kind"); w.String("ResourceClaim");
  w.Key("metadata"); w.StartObject();
  w.Key("name"); w.String((r.template_name + "-claim").c_str());
  w.Key("namespace"); w.String("ml");
  w.EndObject();
  w.Key("spec"); w.StartObject(); w.Key("devices"); w.StartObject(); w.Key("requests"); w.StartArray();
  std::set<std::string> requests;
  for (const auto& a : r.allocation) requests.insert(a.request.substr(0, a.request.find('/')));
  for (const auto& req : requests) {
    w.StartObject(); w.Key("name"); w.String(req.c_str()); w.EndObject();
  }
  w.EndArray(); w.EndObject(); w.EndObject();
  w.Key("status"); w.StartObject();
  w.Key("allocation"); w.StartObject(); w.Key("devices"); w.StartObject(); w.Key("results"); w.StartArray();
  for (const auto& a : r.allocation) {
    w.StartObject();
    w.Key("request"); w.String(a.request.c_str());
    w.Key("driver"); w.String(a.driver.c_str());
    w.Key("pool"); w.String(a.pool.c_str());
    w.Key("device"); w.String(a.device.c_str());
    w.EndObject();
  }
  w.EndArray(); w.EndObject(); w.EndObject();
  w.Key("reservedFor"); w.StartArray(); w.StartObject();
  w.Key("resource"); w.String("pods");
  w.Key("name"); w.String((r.template_name + "-worker").c_str());
  w.Key("uid"); w.String(pod_uid.c_str());
  w.EndObject(); w.EndArray();
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

std::optional<int64_t> IntAttribute(const dranet::inventory::Attributes& attributes, const std::string& key) {
  auto it = attributes.find(key);
  if (it == attributes.end()) return std::nullopt;
  if (const auto* v = std::get_if<int64_t>(&it->second)) return *v;
  return std::nullopt;
}

std::string StringAttribute(const dranet::inventory::Attributes& attributes, const std::string& key) {
  auto it = attributes.find(key);
  if (it == attributes.end()) return "";
  if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
  return "";
}

// The devices dranetd published (read back from the API server), by pool and
// name, with qualified attribute names.
using PublishedDevices = std::map<std::pair<std::string, std::string>, dranet::simulate::SliceDevice>;
PublishedDevices ReadPublishedDevices(const dranet::fakes::FakeApiServer& api) {
  PublishedDevices out;
  for (const auto& json : api.ListObjects("/apis/resource.k8s.io/v1/resourceslices"))
    for (auto& d : dranet::simulate::ParseResourceSlices(json)) out[{d.pool, d.name}] = std::move(d);
  return out;
}

// One GPU or NIC of a claim, as the check sees it.
struct Placed {
  std::string name;             // GPU: its slice device; NIC: rdmaDevice, else ifName, else device
  std::optional<int64_t> numa;  // nullopt: unknown
  std::string pcie_root;
  std::string problem;          // why its facts are not to be trusted ("" when they are)
};

// A NIC as dranetd published it: the standard and the dra.net NUMA
// attributes must agree.
Placed PublishedNic(const dranet::simulate::SliceDevice& d) {
  Placed p;
  p.name = StringAttribute(d.attributes, "dra.net/rdmaDevice");
  if (p.name.empty()) p.name = StringAttribute(d.attributes, "dra.net/ifName");
  if (p.name.empty()) p.name = d.name;
  const auto standard = IntAttribute(d.attributes, "resource.kubernetes.io/numaNode");
  const auto ours = IntAttribute(d.attributes, "dra.net/numaNode");
  p.numa = standard ? standard : ours;
  if (standard && ours && *standard != *ours)
    p.problem = d.name + " is published with resource.kubernetes.io/numaNode " + std::to_string(*standard) +
                " but dra.net/numaNode " + std::to_string(*ours);
  p.pcie_root = StringAttribute(d.attributes, "resource.kubernetes.io/pcieRoot");
  return p;
}

// A GPU of the GPU driver's slices. Drivers that publish no NUMA node (the
// AMD one) are placed by the snapshot's sysfs numa_node of their PCI address.
Placed GpuOf(const dranet::simulate::AllocatedDevice& a, const fs::path& snapshot) {
  Placed p;
  p.name = a.device;
  if (a.slice_device == nullptr) return p;
  const auto& attributes = a.slice_device->attributes;
  p.numa = IntAttribute(attributes, "resource.kubernetes.io/numaNode");
  p.pcie_root = StringAttribute(attributes, "resource.kubernetes.io/pcieRoot");
  if (!p.numa) {
    std::string bdf = StringAttribute(attributes, "resource.kubernetes.io/pciBusID");
    if (bdf.empty()) bdf = StringAttribute(attributes, a.driver + "/pciAddr");
    std::ifstream in(snapshot / "sys/bus/pci/devices" / bdf / "numa_node");
    int64_t numa = -1;
    if (!bdf.empty() && in >> numa && numa >= 0) p.numa = numa;
  }
  return p;
}

std::string NumaList(const std::set<int64_t>& numa) {
  std::string out;
  for (auto n : numa) out += (out.empty() ? "" : ", ") + std::to_string(n);
  return out;
}

// "0000000000201000 (CAP_NET_ADMIN, CAP_SYS_ADMIN)" from /proc/<pid>/status's CapEff.
std::string CapabilitiesShown(const std::string& cap_eff) {
  static const char* const kNames[] = {
      "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
      "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
      "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE",
      "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT",
      "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
      "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
      "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
      "CAP_CHECKPOINT_RESTORE"};
  uint64_t mask = 0;
  try {
    mask = std::stoull(cap_eff, nullptr, 16);
  } catch (const std::exception&) {
    return cap_eff.empty() ? "unknown" : cap_eff;
  }
  std::vector<std::string> names;
  for (std::size_t bit = 0; bit < 64; ++bit)
    if (mask & (uint64_t{1} << bit))
      names.push_back(bit < std::size(kNames) ? kNames[bit] : "capability " + std::to_string(bit));
  std::string list;
  if (names.size() > 4) list = std::to_string(names.size()) + " capabilities";
  else
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return cap_eff + " (" + (list.empty() ? "none" : list) + ")";
}

std::string Kubeconfig(const std::string& server) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: demo\nclusters:\n- name: fake\n  cluster:\n    server: " +
         server + "\nusers:\n- name: u\n  user:\n    token: demo\ncontexts:\n- name: demo\n  context:\n" +
         "    cluster: fake\n    user: u\n";
}

// What dranetd hands a pod for an RDMA device: uverbsN, umadN and rdma_cm —
// never issmN, which lets a process claim the subnet-manager role
// (docs/kubelet.md, kubelet/claim_plan_builder.h). The simulation's pod view
// lists every char device of the device, issmN included.
bool PodGetsCharDevice(const std::string& path) {
  const std::string base = fs::path(path).filename().string();
  return base.rfind("uverbs", 0) == 0 || base.rfind("umad", 0) == 0 || base == "rdma_cm";
}

std::string Join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

const dranet::inventory::LinkFacts* LinkNamed(const dranet::inventory::NetlinkFacts& facts, const std::string& name) {
  for (const auto& link : facts.links)
    if (link.name == name) return &link;
  return nullptr;
}

// `path` relative to the working directory when it lies below it.
std::string Shown(const fs::path& path) {
  std::error_code ec;
  const auto relative = fs::relative(path, fs::current_path(ec), ec);
  if (ec || relative.empty() || *relative.begin() == "..") return path.string();
  return relative.string();
}

// Up to `lines` last lines of a file, indented.
std::string Tail(const fs::path& file, std::size_t lines) {
  std::ifstream in(file);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "    " + all[i] + "\n";
  return out;
}

int Run(const DemoFlags& flags) {
  int failures = 0;
  auto fail = [&](const std::string& what) {
    ++failures;
    std::cout << "  FAILED: " << what << "\n";
  };
  fs::path work = flags.work_dir.empty() ? fs::temp_directory_path() / ("dranet-demo-" + std::to_string(getpid()))
                                         : fs::path(flags.work_dir);
  fs::remove_all(work);
  fs::create_directories(work / "kubelet/plugins_registry");

  // 0. How the node type's deployment runs dranetd.
  dranet::demo::DaemonBehaviour behaviour;
  const std::string cloud = dranet::demo::CloudOf(flags.snapshot);
  if (flags.overlay != "none") {
    const fs::path overlay =
        flags.overlay.empty() ? fs::path(DRANET_DEMO_OVERLAYS_DIR) / cloud : fs::path(flags.overlay);
    if (flags.overlay.empty() && !fs::exists(overlay / "daemonset-patch.yaml")) {
      std::cout << "no deployment overlay at " << overlay.string() << ": dranetd runs with its defaults\n";
    } else {
      behaviour = dranet::demo::ReadOverlay(overlay);
    }
  }
  if (!behaviour.source.empty())
    std::cout << "dranetd flags " << (flags.overlay.empty() ? "of the " + cloud + " deployment" : std::string("of"))
              << " (" << Shown(behaviour.source)
              << "): " << (behaviour.args.empty() ? "(none)" : Join(behaviour.args, " ")) << "\n";

  // The oracle: what each pod must receive, written by hand from the
  // snapshot. With --check, having none is a failure, not a skip.
  std::optional<dranet::demo::ExpectedResults> expected;
  const fs::path expected_file = flags.expected.empty() ? fs::path(flags.templates).parent_path() / "expected.yaml"
                                                        : fs::path(flags.expected);
  if (flags.check || fs::exists(expected_file)) {
    try {
      expected = dranet::demo::ReadExpectedResults(expected_file);
      std::cout << "expected results: " << Shown(expected_file) << " (" << expected->claims.size() << " claims)\n";
    } catch (const std::exception& e) {
      fail(e.what());
    }
  } else {
    std::cout << "no expected results at " << Shown(expected_file) << ": printing only\n";
  }

  // 1. The scheduler's part: allocate the templates on this node, on the
  // devices dranetd will publish (discovery with the deployment's flags, its
  // plugins reading the snapshot's recorded cloud metadata, the publish filter).
  std::ostringstream quiet;
  dranet::Logger quiet_logger(quiet);
  dranet::inventory::DiscoveryOptions discovery;
  discovery.host_root = flags.snapshot;
  discovery.skip_ipoib = !behaviour.move_ib_interfaces;
  dranet::plugins::PluginHostOptions plugin_options;
  dranet::plugins::ApplyPluginFlags(behaviour.plugins, plugin_options);
  if (dranet::netlab::Rootless()) plugin_options.require_root_owned = false;  // as dranetd, below
  plugin_options.plugin_dirs = {flags.plugin_dir.empty() ? fs::path(flags.dranetd).parent_path() / "../lib/dranet/plugins"
                                                        : fs::path(flags.plugin_dir)};
  plugin_options.host_root = flags.snapshot;
  plugin_options.http = dranet::plugins::RecordedMetadataGetter(flags.snapshot);
  dranet::plugins::PluginHost plugin_host(plugin_options, quiet_logger);
  const auto devices = dranet::cel::ApplyPublishFilter(
      dranet::cel::CompilePublishFilter(behaviour.filter),
      dranet::plugins::WithPlugins(plugin_host, dranet::inventory::Discover(discovery, quiet_logger), quiet_logger),
      quiet_logger);
  std::string node = "demo-node";
  if (auto info = dranet::inventory::ReadSnapshotInfo(flags.snapshot, quiet_logger)) node = info->node_name;
  auto slice_devices = dranet::simulate::FromInventory(devices, node);
  if (!flags.gpu_slices.empty())
    for (auto& d : dranet::simulate::ParseResourceSlices(ReadFile(flags.gpu_slices))) slice_devices.push_back(std::move(d));
  auto results = dranet::simulate::Simulate(dranet::simulate::ParseClaimTemplates(ReadFile(flags.templates)), slice_devices);
  if (expected) {
    if (expected->node != node)
      fail("the snapshot's node is " + node + " but " + Shown(expected->source) + " is for " + expected->node);
    for (const auto& want : expected->claims) {
      auto r = std::find_if(results.begin(), results.end(),
                            [&](const auto& result) { return result.template_name == want.template_name; });
      if (r == results.end())
        fail("template " + want.template_name + " of " + Shown(expected->source) + " is not among the templates");
      else if (!r->allocated)
        fail("template " + want.template_name + " is not allocated on this node: " + Join(r->problems, "; "));
    }
  }

  // 2. The node's netdevs: real stand-ins in a node network namespace.
  const auto snapshot_facts = dranet::inventory::ReadSnapshotNetlinkFacts(flags.snapshot, quiet_logger);
  std::vector<std::string> netdevs;  // every netdev a claim can allocate
  for (const auto& d : devices)
    if (!d.if_name.empty()) netdevs.push_back(d.if_name);
  std::string skip = dranet::netlab::NetnsUnavailableReason();
  std::unique_ptr<dranet::netlab::NetnsLab> lab;
  if (skip.empty()) {
    for (const auto& name : dranet::netlab::RemoveStaleNamespaces())
      std::cout << "removed network namespace " << name << " (left by a demo that was killed)\n";
    try {
      lab = std::make_unique<dranet::netlab::NetnsLab>();
    } catch (const std::exception& e) {
      skip = e.what();
    }
  }
  if (lab) {
    for (const auto& name : netdevs) {
      try {
        lab->AddStandIn(snapshot_facts, name);
      } catch (const std::exception& e) {
        fail(std::string("stand-in for ") + name + ": " + e.what());
      }
    }
    std::cout << "node network namespace " << lab->node_netns() << ": ";
    if (netdevs.empty()) std::cout << "no netdev among the devices to allocate\n";
    else
      std::cout << netdevs.size() << " stand-in netdev(s) (veth) with the snapshot's MTU, addresses and routes: "
                << Join(netdevs) << "\n";
    // The fakes' sockets and dranetd (a child) live in it from here on.
    lab->EnterNode();
  } else {
    std::cout << "network namespaces skipped (" << skip
              << "): netdevs are not moved, pods with netdevs get device-only checks"
              << (dranet::netlab::Rootless() ? "; the demo and dranetd run in a user namespace of their own" : "")
              << "\n";
  }

  dranet::fakes::FakeApiServer api;
  api.RequireToken("demo");
  api.PutObject("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node + R"("}})");
  struct Claim {
    const dranet::simulate::TemplateResult* result;
    dranet::fakes::KubeletClaim kubelet;
    std::string pod_uid;
  };
  std::vector<Claim> claims;
  for (const auto& r : results) {
    if (!r.allocated) {
      std::cout << "template " << r.template_name << ": no allocation on this node (dranetctl simulate explains)\n";
      continue;
    }
    std::string pod_uid = "pod-" + r.template_name;
    std::string stored = api.PutObject("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims",
                                       AllocatedClaimJson(r, pod_uid));
    rapidjson::Document doc;
    doc.Parse(stored.c_str());
    claims.push_back({&r, {"ml", doc["metadata"]["name"].GetString(), doc["metadata"]["uid"].GetString()}, pod_uid});
  }

  // 3. The node's part: runtime, kubelet, dranetd.
  dranet::testing::FakeNriRuntime::Options runtime_options;
  runtime_options.socket_path = (work / "nri.sock").string();
  dranet::testing::FakeNriRuntime runtime(runtime_options);
  runtime.Listen();
  dranet::fakes::FakeKubeletOptions kubelet_options;
  kubelet_options.registry_dir = work / "kubelet/plugins_registry";
  dranet::fakes::FakeKubelet kubelet(kubelet_options);
  kubelet.Start();
  std::ofstream(work / "kubeconfig") << Kubeconfig(api.url());
  std::vector<std::string> daemon_args{"--kubeconfig", (work / "kubeconfig").string(), "--node-name", node,
                                       "--host-root", flags.snapshot, "--kubelet-root-dir", (work / "kubelet").string(),
                                       "--state-dir", (work / "state").string(), "--nri-socket",
                                       runtime_options.socket_path, "--metrics-address", "off", "-v", "2"};
  daemon_args.insert(daemon_args.end(), behaviour.args.begin(), behaviour.args.end());
  // In the demo's own user namespace the root-owned plugin directory shows
  // up as owned by nobody (the host's root is not mapped there).
  if (dranet::netlab::Rootless()) daemon_args.push_back("--allow-non-root-plugin-dir");
  const auto spawned = std::chrono::steady_clock::now();
  DaemonProcess dranetd(flags.dranetd, daemon_args, work / "dranetd.log");
  std::cout << "dranetd on " << node << " (snapshot " << flags.snapshot << "), log: " << (work / "dranetd.log").string()
            << "\n";
  bool registered = false;
  for (auto deadline = spawned + 60s; !registered && std::chrono::steady_clock::now() < deadline;) {
    registered = kubelet.WaitForPlugin("dra.net", 250ms).has_value();
    if (!registered && dranetd.Exited()) break;
  }
  if (!registered) {
    const bool exited = dranetd.Exited();
    const int rc = dranetd.Stop();
    const std::string tail = Tail(work / "dranetd.log", 5);
    fail((exited ? "dranetd exited with " + std::to_string(rc) + " before registering with the kubelet"
                 : std::string("dranetd did not register with the kubelet within 60 s")) +
         (tail.empty() ? "; its log is empty" : "; the end of its log:\n" + tail));
    return 1;
  }
  if (!runtime.AcceptPlugin(60s)) fail("dranetd did not connect to the NRI runtime");
  std::cout << "registered with kubelet (DRA v1), connected to NRI as " << runtime.plugin_name() << "/"
            << runtime.plugin_index() << "\n";
  for (int i = 0; i < 600 && api.ListObjects("/apis/resource.k8s.io/v1/resourceslices").empty(); ++i)
    std::this_thread::sleep_for(100ms);
  const auto up_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - spawned);
  std::cout << "published " << api.ListObjects("/apis/resource.k8s.io/v1/resourceslices").size()
            << " ResourceSlice(s); registered, connected and published " << up_ms.count() << " ms after exec\n\n";

  // 4. Each claim in turn, as the kubelet runs one pod after another: prepare
  // it, start its pod, stop it, unprepare it. The templates are allocated
  // each on its own (simulate), so several name the same NIC: a netdev is
  // prepared for one claim at a time, as the scheduler would allocate it.
  const auto published = ReadPublishedDevices(api);
  int unchecked_netdevs = 0;  // claims whose netdevs could not be checked (no network namespaces)
  for (const auto& c : claims) {
    const auto prepared = kubelet.Prepare("dra.net", dranet::fakes::DraApi::kV1, {c.kubelet});
    struct UnprepareAtEnd {
      std::function<void()> run;
      ~UnprepareAtEnd() { run(); }
    } unprepare_at_end{[&] {
      for (const auto& [uid, error] : kubelet.Unprepare("dra.net", dranet::fakes::DraApi::kV1, {c.kubelet}))
        if (!error.empty()) fail("unprepare " + uid + ": " + error);
    }};
    const auto& r = *c.result;
    std::cout << "claim " << c.kubelet.name << " (template " << r.template_name << ")\n";
    const dranet::demo::ExpectedClaim* want = expected ? expected->Find(r.template_name) : nullptr;
    if (expected && want == nullptr)
      fail("template " + r.template_name + " is allocated but " + Shown(expected->source) + " does not list it");
    auto it = prepared.find(c.kubelet.uid);
    if (it == prepared.end() || !it->second.error.empty()) {
      fail("prepare: " + (it == prepared.end() ? std::string("no answer") : it->second.error));
      continue;
    }
    std::cout << "  prepared: " << it->second.devices.size() << " dra.net device(s)\n";
    const std::vector<std::string>& pod_netdevs = r.pod.netdevs;
    // Without network namespaces, a pod with netdevs gets no sandbox hooks
    // (dranetd would have nowhere to move them): device-only checks.
    const bool sandbox_hooks = lab || pod_netdevs.empty();
    std::string pod_netns;
    if (lab) pod_netns = lab->AddPod();
    const std::string pod_name = r.template_name + "-worker";
    auto pod = dranet::testing::FakeNriRuntime::MakePod(
        c.pod_uid, "ml", pod_name, lab ? dranet::netlab::NetnsLab::PathOf(pod_netns) : "");
    if (sandbox_hooks)
      if (auto st = runtime.RunPodSandbox(pod); !st.ok()) fail("RunPodSandbox: " + st.message);
    auto container = dranet::testing::FakeNriRuntime::MakeContainer(pod, "worker", {});
    dranet::testing::api::ContainerAdjustment adjust;
    if (auto st = runtime.CreateContainer(pod, container, &adjust); !st.ok()) fail("CreateContainer: " + st.message);
    std::map<std::string, std::string> got_devices, got_env;
    std::vector<std::string> withheld;
    std::cout << "  container receives:\n";
    for (const auto& d : adjust.linux().devices()) {
      const std::string number = std::to_string(d.major()) + ":" + std::to_string(d.minor());
      std::cout << "    " << d.path() << " (" << d.type() << " " << number << ")\n";
      got_devices[d.path()] = d.type() + " " + number;
    }
    for (const auto& e : adjust.env()) {
      std::cout << "    env " << e.key() << "=" << e.value() << "\n";
      got_env[e.key()] = e.value();
    }
    for (const auto& cd : r.pod.char_devices)
      if (!PodGetsCharDevice(cd.path)) withheld.push_back(fs::path(cd.path).filename().string());
    if (!withheld.empty())
      std::cout << "    (withheld: " << Join(withheld)
                << " — issmN grants the subnet-manager role, never given to pods)\n";
    if (want) {
      for (const auto& problem : dranet::demo::MapDifferences("device node", want->devices, got_devices)) fail(problem);
      for (const auto& problem : dranet::demo::MapDifferences("env", want->env, got_env)) fail(problem);
    }
    // The pod's network namespace: exactly the claim's netdevs, as listed.
    if (lab && sandbox_hooks) {
      try {
        const auto facts = dranet::netlab::ReadFactsIn(dranet::netlab::NetnsLab::PathOf(pod_netns), quiet_logger);
        std::vector<const dranet::inventory::LinkFacts*> links;
        for (const auto& link : facts.links)
          if (!(link.flags & IFF_LOOPBACK)) links.push_back(&link);
        if (!links.empty()) std::cout << "  pod network namespace " << pod_netns << " receives:\n";
        for (const auto* link : links) {
          std::cout << "    " << link->name << " mtu " << link->mtu << ((link->flags & IFF_UP) ? " up" : " down");
          for (const auto& a : link->addresses) std::cout << " " << a;
          std::cout << "\n";
          auto routes = dranet::demo::RoutesThrough(facts, link->ifindex, link->name);
          std::stable_sort(routes.begin(), routes.end(), [](const auto& a, const auto& b) {
            return a.find(" via ") == std::string::npos && b.find(" via ") != std::string::npos;
          });  // on-link routes first, as they are installed
          for (const auto& route : routes) std::cout << "      route " << route << "\n";
          if (want && !want->netdevs.count(link->name)) fail("in the pod: unexpected netdev " + link->name);
        }
        if (want)
          for (const auto& [name, netdev] : want->netdevs)
            for (const auto& problem : dranet::demo::NetdevDifferences(facts, netdev)) fail("in the pod: " + problem);
      } catch (const std::exception& e) {
        fail(std::string("reading the pod network namespace: ") + e.what());
      }
    } else if (!pod_netdevs.empty() || (want && !want->netdevs.empty())) {
      ++unchecked_netdevs;
      std::vector<std::string> names = pod_netdevs;
      if (want) {
        names.clear();
        for (const auto& [name, netdev] : want->netdevs) names.push_back(name);
      }
      if (flags.require_netns) fail("netdevs " + Join(names) + " not checked: no network namespaces (" + skip + ")");
      else std::cout << "  netdevs " << Join(names) << ": not moved, not checked (network namespaces skipped)\n";
    }
    // GPUs and NICs: NUMA nodes and PCIe roots, the NICs' as dranetd
    // published them for the devices it prepared.
    std::vector<Placed> gpus, nics;
    for (const auto& a : r.allocation)
      if (a.driver != "dra.net") gpus.push_back(GpuOf(a, flags.snapshot));
    for (const auto& d : it->second.devices) {
      auto pub = published.find({d.pool_name, d.device_name});
      if (pub == published.end()) {
        fail("prepared device " + d.pool_name + "/" + d.device_name + " is in no published ResourceSlice");
        continue;
      }
      nics.push_back(PublishedNic(pub->second));
      if (!nics.back().problem.empty()) fail(nics.back().problem);
    }
    std::set<int64_t> gpu_numa, nic_numa;
    bool numa_known = true;
    for (const auto* group : {&gpus, &nics})
      for (const auto& p : *group) {
        if (p.numa) (group == &gpus ? gpu_numa : nic_numa).insert(*p.numa);
        else numa_known = false;
      }
    // Aligned: every GPU has a NIC of the claim on its NUMA node and every NIC a GPU.
    const bool aligned = numa_known && !gpu_numa.empty() && gpu_numa == nic_numa;
    if (!gpus.empty() && !nics.empty()) {
      std::cout << (gpus.size() == 1 ? "  GPU on NUMA" : "  GPUs on NUMA");
      for (auto n : gpu_numa) std::cout << " " << n;
      std::cout << ", NIC(s) on NUMA";
      for (auto n : nic_numa) std::cout << " " << n;
      if (!numa_known) std::cout << " (some unknown)";
      std::cout << (aligned ? "  -> aligned\n" : "  -> NOT aligned (cross-NUMA traffic)\n");
    }
    if (want && want->alignment) {
      const auto& wa = *want->alignment;
      auto numa_map = [](const std::vector<Placed>& placed) {
        std::map<std::string, std::string> out;
        for (const auto& p : placed) out[p.name] = p.numa ? "NUMA " + std::to_string(*p.numa) : "NUMA unknown";
        return out;
      };
      auto wanted_map = [](const std::map<std::string, int64_t>& listed) {
        std::map<std::string, std::string> out;
        for (const auto& [name, numa] : listed) out[name] = "NUMA " + std::to_string(numa);
        return out;
      };
      for (const auto& problem : dranet::demo::MapDifferences("GPU", wanted_map(wa.gpus), numa_map(gpus)))
        fail(problem);
      for (const auto& problem : dranet::demo::MapDifferences("NIC", wanted_map(wa.nics), numa_map(nics)))
        fail(problem);
      if (wa.aligned && aligned != *wa.aligned)
        fail(std::string("GPUs on NUMA ") + NumaList(gpu_numa) + " and NICs on NUMA " + NumaList(nic_numa) + " are " +
             (aligned ? "aligned" : "not aligned") + ", expected " + (*wa.aligned ? "aligned" : "not aligned"));
      if (!wa.pcie_root.empty())
        for (const auto* group : {&gpus, &nics})
          for (const auto& p : *group)
            if (p.pcie_root != wa.pcie_root)
              fail(p.name + " is under PCIe root \"" + p.pcie_root + "\", expected " + wa.pcie_root);
    } else if (want && !gpus.empty()) {
      fail(Shown(expected->source) + " states no alignment for " + r.template_name + ", which has GPUs");
    }
    if (sandbox_hooks)
      if (auto st = runtime.StopPodSandbox(pod); !st.ok()) fail("StopPodSandbox: " + st.message);
    // Back on the node as they were.
    std::vector<std::string> moved = pod_netdevs;
    if (want) {
      moved.clear();
      for (const auto& [name, netdev] : want->netdevs) moved.push_back(name);
    }
    if (lab && sandbox_hooks && !moved.empty()) {
      try {
        const auto node_facts =
            dranet::netlab::ReadFactsIn(dranet::netlab::NetnsLab::PathOf(lab->node_netns()), quiet_logger);
        const auto pod_facts = dranet::netlab::ReadFactsIn(dranet::netlab::NetnsLab::PathOf(pod_netns), quiet_logger);
        int bad = 0;
        auto bad_if = [&](const std::string& problem) {
          fail(problem);
          ++bad;
        };
        for (const auto& name : moved) {
          if (LinkNamed(pod_facts, name)) bad_if("after StopPodSandbox " + name + " is still in the pod");
          if (want) {
            for (const auto& problem : dranet::demo::NetdevDifferences(node_facts, want->netdevs.at(name)))
              bad_if("after StopPodSandbox on the node: " + problem);
          } else if (!LinkNamed(node_facts, name)) {
            bad_if("after StopPodSandbox " + name + " is not back on the node");
          }
        }
        if (bad == 0)
          std::cout << "  after StopPodSandbox: " << Join(moved) << " back in the node namespace"
                    << (want ? " with MAC, MTU, addresses and routes as expected" : "") << "\n";
      } catch (const std::exception& e) {
        fail(std::string("reading the network namespaces after StopPodSandbox: ") + e.what());
      }
    }
    if (sandbox_hooks)
      if (auto st = runtime.RemovePodSandbox(pod); !st.ok()) fail("RemovePodSandbox: " + st.message);
    if (lab) lab->RemovePod(pod_netns);
  }
  // The daemon's footprint after serving every claim.
  {
    std::ifstream status("/proc/" + std::to_string(dranetd.pid()) + "/status");
    std::string rss, anon, file, caps;
    for (std::string line; std::getline(status, line);) {
      auto value = [&](std::size_t n) { return line.substr(line.find_first_not_of(" \t", n)); };
      if (line.rfind("VmRSS:", 0) == 0) rss = value(6);
      if (line.rfind("RssAnon:", 0) == 0) anon = value(8);
      if (line.rfind("RssFile:", 0) == 0) file = value(8);
      if (line.rfind("CapEff:", 0) == 0) caps = value(7);
    }
    std::cout << "\ndranetd resident memory: " << rss << " (" << anon << " private, " << file
              << " shared library pages)\n";
    // What it really ran with (tests that reduce its capabilities read this).
    std::cout << "dranetd effective capabilities: " << CapabilitiesShown(caps) << "\n";
  }
  int rc = dranetd.Stop();
  if (rc != 0) fail("dranetd exited with " + std::to_string(rc));
  if (expected)
    std::cout << "\nchecked against " << Shown(expected->source)
              << (unchecked_netdevs > 0 ? "; the netdevs of " + std::to_string(unchecked_netdevs) +
                                              " claim(s) not checked (network namespaces skipped)"
                                        : std::string())
              << "\n";
  std::cout << "\n" << claims.size() << " claims prepared, started, stopped and unprepared; " << failures
            << " failure(s)\n";
  if (failures == 0 && flags.work_dir.empty()) fs::remove_all(work);
  return flags.check && failures > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists: termination signals go to the cleanup thread.
  dranet::netlab::BlockTerminationSignals();
  CLI::App app{"dranet end to end on one machine: snapshot + fake API server, kubelet and NRI runtime"};
  DemoFlags flags;
  app.add_option("--dranetd", flags.dranetd, "The dranetd binary")->required()->check(CLI::ExistingFile);
  app.add_option("--snapshot", flags.snapshot, "Node snapshot")->required()->check(CLI::ExistingDirectory);
  app.add_option("--templates", flags.templates, "ResourceClaimTemplates to allocate")->required()->check(CLI::ExistingFile);
  app.add_option("--gpu-slices", flags.gpu_slices, "The GPU driver's ResourceSlices")->check(CLI::ExistingFile);
  app.add_option("--plugin-dir", flags.plugin_dir, "dranetd's plugin directory (default: beside --dranetd)");
  app.add_option("--overlay", flags.overlay,
                 "Deployment overlay whose dranetd flags to use (default: packaging/deploy/overlays/<the "
                 "snapshot's cloud>; \"none\": dranetd's defaults)");
  app.add_option("--work-dir", flags.work_dir, "Keep sockets, state and the dranetd log here");
  app.add_flag("--check", flags.check,
               "Exit non-zero when a pod does not receive what the expected results list (or they are missing)");
  app.add_option("--expected", flags.expected,
                 "Hand-written expected results (default: expected.yaml beside --templates)");
  app.add_flag("--require-netns", flags.require_netns,
               "Fail when network namespaces are unavailable and netdevs cannot be moved and checked");
  CLI11_PARSE(app, argc, argv);
  if (geteuid() != 0) {
    if (auto error = dranet::netlab::EnterRootlessNamespaces(); !error.empty())
      std::cerr << "dranet-demo: without root, dranetd cannot pass its capability check: " << error << "\n";
  }
  dranet::netlab::StartSignalCleanup();
  try {
    return Run(flags);
  } catch (const std::exception& e) {
    std::cerr << "dranet-demo: " << e.what() << "\n";
    return 2;
  }
}
