// dranet-demo — dranet end to end on one machine, against the bundled node
// snapshot and the fakes of tests/fakes (API server, kubelet, NRI runtime):
//
//   1. allocates the node's claim templates the way the scheduler would
//      (core/simulate, with the GPU driver's slices) and stores the
//      allocated ResourceClaims in the fake API server;
//   2. starts the real dranetd on the snapshot; it publishes its slices,
//      registers with the fake kubelet and connects to the fake NRI runtime;
//   3. the fake kubelet prepares every claim over the DRA gRPC API, the fake
//      runtime starts each claim's pod (RunPodSandbox, CreateContainer);
//   4. prints what each pod received — device nodes, env — and whether its
//      GPU and NICs share a NUMA node; then tears the pods down.
//
// --check turns the printout into a test: each container must receive
// exactly the char devices the allocation implies, and every step must work.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "fake_nri_runtime.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "plugins/plugin_host.h"
#include "plugins/recorded_metadata.h"
#include "simulate/simulate.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct DemoFlags {
  std::string dranetd, snapshot, templates, gpu_slices, work_dir, plugin_dir;
  bool check = false;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// dranetd as a child process; its log goes to a file in the work dir.
class DaemonProcess {
 public:
  DaemonProcess(const std::string& binary, const std::vector<std::string>& args, const fs::path& log_file) {
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = freopen(log_file.c_str(), "w", stderr);
      (void)f;
      std::vector<char*> argv{const_cast<char*>(binary.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
  }
  ~DaemonProcess() { Stop(); }
  pid_t pid() const { return pid_; }
  int Stop() {
    if (pid_ <= 0) return status_;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return status_;
  }

 private:
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

std::optional<int64_t> NumaOf(const dranet::simulate::AllocatedDevice& a) {
  if (a.slice_device == nullptr) return std::nullopt;
  for (const char* key : {"resource.kubernetes.io/numaNode", "dra.net/numaNode"}) {
    auto it = a.slice_device->attributes.find(key);
    if (it != a.slice_device->attributes.end())
      if (const auto* v = std::get_if<int64_t>(&it->second)) return *v;
  }
  return std::nullopt;
}

std::string Kubeconfig(const std::string& server) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: demo\nclusters:\n- name: fake\n  cluster:\n    server: " +
         server + "\nusers:\n- name: u\n  user:\n    token: demo\ncontexts:\n- name: demo\n  context:\n" +
         "    cluster: fake\n    user: u\n";
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

  // 1. The scheduler's part: allocate the templates on this node.
  std::ostringstream quiet;
  dranet::Logger quiet_logger(quiet);
  dranet::inventory::DiscoveryOptions discovery;
  discovery.host_root = flags.snapshot;
  // The devices dranetd will publish: discovery plus its plugins, which read
  // the snapshot's recorded cloud metadata.
  dranet::plugins::PluginHostOptions plugin_options;
  plugin_options.plugin_dirs = {flags.plugin_dir.empty() ? fs::path(flags.dranetd).parent_path() / "../lib/dranet/plugins"
                                                        : fs::path(flags.plugin_dir)};
  plugin_options.host_root = flags.snapshot;
  plugin_options.http_get = dranet::plugins::RecordedMetadataGetter(flags.snapshot);
  dranet::plugins::PluginHost plugin_host(plugin_options, quiet_logger);
  auto devices = dranet::plugins::WithPlugins(plugin_host, dranet::inventory::Discover(discovery, quiet_logger),
                                              quiet_logger);
  std::string node = "demo-node";
  if (auto info = dranet::inventory::ReadSnapshotInfo(flags.snapshot, quiet_logger)) node = info->node_name;
  auto slice_devices = dranet::simulate::FromInventory(devices, node);
  if (!flags.gpu_slices.empty())
    for (auto& d : dranet::simulate::ParseResourceSlices(ReadFile(flags.gpu_slices))) slice_devices.push_back(std::move(d));
  auto results = dranet::simulate::Simulate(dranet::simulate::ParseClaimTemplates(ReadFile(flags.templates)), slice_devices);

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

  // 2. The node's part: runtime, kubelet, dranetd.
  dranet::testing::FakeNriRuntime::Options runtime_options;
  runtime_options.socket_path = (work / "nri.sock").string();
  dranet::testing::FakeNriRuntime runtime(runtime_options);
  runtime.Listen();
  dranet::fakes::FakeKubeletOptions kubelet_options;
  kubelet_options.registry_dir = work / "kubelet/plugins_registry";
  dranet::fakes::FakeKubelet kubelet(kubelet_options);
  kubelet.Start();
  std::ofstream(work / "kubeconfig") << Kubeconfig(api.url());
  const auto spawned = std::chrono::steady_clock::now();
  DaemonProcess dranetd(flags.dranetd,
                        {"--kubeconfig", (work / "kubeconfig").string(), "--node-name", node, "--host-root",
                         flags.snapshot, "--kubelet-root-dir", (work / "kubelet").string(), "--state-dir",
                         (work / "state").string(), "--nri-socket", runtime_options.socket_path,
                         "--metrics-address", "off", "-v", "2"},
                        work / "dranetd.log");
  std::cout << "dranetd on " << node << " (snapshot " << flags.snapshot << "), log: " << (work / "dranetd.log").string()
            << "\n";
  if (!kubelet.WaitForPlugin("dra.net", 60s)) fail("dranetd did not register with the kubelet");
  if (!runtime.AcceptPlugin(60s)) fail("dranetd did not connect to the NRI runtime");
  std::cout << "registered with kubelet (DRA v1), connected to NRI as " << runtime.plugin_name() << "/"
            << runtime.plugin_index() << "\n";
  for (int i = 0; i < 600 && api.ListObjects("/apis/resource.k8s.io/v1/resourceslices").empty(); ++i)
    std::this_thread::sleep_for(100ms);
  const auto up_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - spawned);
  std::cout << "published " << api.ListObjects("/apis/resource.k8s.io/v1/resourceslices").size()
            << " ResourceSlice(s); registered, connected and published " << up_ms.count() << " ms after exec\n\n";

  // 3. Prepare every claim, start its pod.
  std::vector<dranet::fakes::KubeletClaim> kubelet_claims;
  for (const auto& c : claims) kubelet_claims.push_back(c.kubelet);
  auto prepared = kubelet.Prepare("dra.net", dranet::fakes::DraApi::kV1, kubelet_claims);
  for (const auto& c : claims) {
    const auto& r = *c.result;
    std::cout << "claim " << c.kubelet.name << " (template " << r.template_name << ")\n";
    auto it = prepared.find(c.kubelet.uid);
    if (it == prepared.end() || !it->second.error.empty()) {
      fail("prepare: " + (it == prepared.end() ? std::string("no answer") : it->second.error));
      continue;
    }
    std::cout << "  prepared: " << it->second.devices.size() << " dra.net device(s)\n";
    auto pod = dranet::testing::FakeNriRuntime::MakePod(c.pod_uid, "ml", r.template_name + "-worker", "");
    if (auto st = runtime.RunPodSandbox(pod); !st.ok()) fail("RunPodSandbox: " + st.message);
    auto container = dranet::testing::FakeNriRuntime::MakeContainer(pod, "worker", {});
    dranet::testing::api::ContainerAdjustment adjust;
    if (auto st = runtime.CreateContainer(pod, container, &adjust); !st.ok()) fail("CreateContainer: " + st.message);
    std::set<std::string> got, want;
    std::cout << "  container receives:\n";
    for (const auto& d : adjust.linux().devices()) {
      std::cout << "    " << d.path() << " (" << d.type() << " " << d.major() << ":" << d.minor() << ")\n";
      got.insert(d.path());
    }
    for (const auto& e : adjust.env()) std::cout << "    env " << e.key() << "=" << e.value() << "\n";
    for (const auto& cd : r.pod.char_devices) want.insert("/dev/" + cd.path);
    if (got != want) fail("device nodes differ from what the allocation implies");
    // GPU and NIC NUMA nodes.
    std::optional<int64_t> gpu_numa;
    std::set<int64_t> nic_numa;
    for (const auto& a : r.allocation) {
      auto numa = NumaOf(a);
      if (!numa) continue;
      if (a.driver == "dra.net") nic_numa.insert(*numa);
      else gpu_numa = numa;
    }
    if (gpu_numa && !nic_numa.empty()) {
      bool aligned = nic_numa.size() == 1 && *nic_numa.begin() == *gpu_numa;
      std::cout << "  GPU on NUMA " << *gpu_numa << ", NIC(s) on NUMA";
      for (auto n : nic_numa) std::cout << " " << n;
      std::cout << (aligned ? "  -> aligned\n" : "  -> NOT aligned (cross-NUMA traffic)\n");
    }
    if (auto st = runtime.StopPodSandbox(pod); !st.ok()) fail("StopPodSandbox: " + st.message);
    if (auto st = runtime.RemovePodSandbox(pod); !st.ok()) fail("RemovePodSandbox: " + st.message);
  }
  // The daemon's footprint after serving every claim.
  {
    std::ifstream status("/proc/" + std::to_string(dranetd.pid()) + "/status");
    std::string rss, anon, file;
    for (std::string line; std::getline(status, line);) {
      auto value = [&](std::size_t n) { return line.substr(line.find_first_not_of(" \t", n)); };
      if (line.rfind("VmRSS:", 0) == 0) rss = value(6);
      if (line.rfind("RssAnon:", 0) == 0) anon = value(8);
      if (line.rfind("RssFile:", 0) == 0) file = value(8);
    }
    std::cout << "\ndranetd resident memory: " << rss << " (" << anon << " private, " << file
              << " shared library pages)\n";
  }
  auto unprepared = kubelet.Unprepare("dra.net", dranet::fakes::DraApi::kV1, kubelet_claims);
  for (const auto& [uid, error] : unprepared)
    if (!error.empty()) fail("unprepare " + uid + ": " + error);
  int rc = dranetd.Stop();
  if (rc != 0) fail("dranetd exited with " + std::to_string(rc));
  std::cout << "\n" << claims.size() << " claims prepared, started, stopped and unprepared; " << failures
            << " failure(s)\n";
  if (failures == 0 && flags.work_dir.empty()) fs::remove_all(work);
  return flags.check && failures > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dranet end to end on one machine: snapshot + fake API server, kubelet and NRI runtime"};
  DemoFlags flags;
  app.add_option("--dranetd", flags.dranetd, "The dranetd binary")->required()->check(CLI::ExistingFile);
  app.add_option("--snapshot", flags.snapshot, "Node snapshot")->required()->check(CLI::ExistingDirectory);
  app.add_option("--templates", flags.templates, "ResourceClaimTemplates to allocate")->required()->check(CLI::ExistingFile);
  app.add_option("--gpu-slices", flags.gpu_slices, "The GPU driver's ResourceSlices")->check(CLI::ExistingFile);
  app.add_option("--plugin-dir", flags.plugin_dir, "dranetd's plugin directory (default: beside --dranetd)");
  app.add_option("--work-dir", flags.work_dir, "Keep sockets, state and the dranetd log here");
  app.add_flag("--check", flags.check, "Exit non-zero when a pod does not receive what its allocation implies");
  CLI11_PARSE(app, argc, argv);
  try {
    return Run(flags);
  } catch (const std::exception& e) {
    std::cerr << "dranet-demo: " << e.what() << "\n";
    return 2;
  }
}
