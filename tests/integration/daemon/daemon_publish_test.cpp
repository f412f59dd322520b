// dranetd end to end: the real binary on the GB300 snapshot publishes its
// ResourceSlices to the fake API server over HTTP, turns ready, serves
// metrics, writes nothing at all on a restart with nothing changed, reports
// a corrupt checkpoint as an Event on its Node, publishes numaNode as a list
// under --feature-gates=DRAListTypeAttributes=true, and shuts down cleanly on
// SIGTERM.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "fake_apiserver.h"
#include "fake_kubelet.h"
#include "plugins/host_services.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr auto kDeadline = 60s;
const std::string kNode = "aks-gpu-45139532-vmss000081";

// A running dranetd whose stderr is collected on a thread.
class Dranetd {
 public:
  explicit Dranetd(const std::vector<std::string>& args) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      close(fds[0]);
      std::vector<char*> argv{const_cast<char*>(DRANETD_BINARY)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(DRANETD_BINARY, argv.data());
      _exit(127);
    }
    close(fds[1]);
    reader_ = std::thread([this, fd = fds[0]] {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
        std::lock_guard lock(mu_);
        log_.append(buf, static_cast<std::size_t>(n));
      }
      close(fd);
    });
  }
  ~Dranetd() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
  }
  std::string Log() {
    std::lock_guard lock(mu_);
    return log_;
  }
  // Waits for a log line matching `re`; returns its first capture group.
  std::string WaitForLog(const std::regex& re) {
    auto until = std::chrono::steady_clock::now() + kDeadline;
    std::smatch m;
    while (std::chrono::steady_clock::now() < until) {
      std::string log = Log();
      if (std::regex_search(log, m, re)) return m.size() > 1 ? m[1].str() : m[0].str();
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no log line matching the pattern; log:\n" << Log();
    return {};
  }
  int Terminate() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  std::thread reader_;
  std::mutex mu_;
  std::string log_;
};

dranet::plugins::HttpResult Get(uint16_t port, const std::string& path) {
  return dranet::plugins::CurlHttpGet("http://127.0.0.1:" + std::to_string(port) + path, {}, 5000);
}

// Polls `condition` until it holds or kDeadline passes; returns its last value.
template <typename Condition>
bool WaitUntil(Condition condition) {
  auto until = std::chrono::steady_clock::now() + kDeadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return condition();
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// The value of an unlabelled metric on /metrics; -1 when it is not there.
double Metric(uint16_t port, const std::string& name) {
  std::string body = "\n" + Get(port, "/metrics").body;
  auto at = body.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(body.substr(at + name.size() + 2));
}

bool IsMutating(const dranet::fakes::RecordedRequest& r) {
  return r.method == "POST" || r.method == "PUT" || r.method == "PATCH" || r.method == "DELETE";
}

std::string Describe(const std::vector<dranet::fakes::RecordedRequest>& requests) {
  std::ostringstream out;
  for (const auto& r : requests) out << "  " << r.method << " " << r.target << " -> " << r.status << "\n";
  return out.str();
}

class DaemonPublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dranetd-e2e-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    api_.RequireToken("e2e-token");
    api_.PutObject("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + kNode + R"("}})");
    // A kubelet to register with: readiness waits for the registration.
    fs::create_directories(dir_ / "kubelet/plugins_registry");
    dranet::fakes::FakeKubeletOptions kubelet_options;
    kubelet_options.registry_dir = dir_ / "kubelet/plugins_registry";
    kubelet_ = std::make_unique<dranet::fakes::FakeKubelet>(kubelet_options);
    kubelet_->Start();
    std::ofstream(dir_ / "kubeconfig") << "apiVersion: v1\nkind: Config\ncurrent-context: e2e\n"
                                       << "clusters:\n- name: fake\n  cluster:\n    server: " << api_.url() << "\n"
                                       << "users:\n- name: u\n  user:\n    token: e2e-token\n"
                                       << "contexts:\n- name: e2e\n  context:\n    cluster: fake\n    user: u\n";
  }
  void TearDown() override {
    kubelet_.reset();
    fs::remove_all(dir_);
  }

  std::vector<std::string> Args(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--kubeconfig", (dir_ / "kubeconfig").string(), "--node-name", kNode,
                                  "--host-root", host_root_.string(),
                                  "--metrics-address", "127.0.0.1:0", "-v", "2",
                                  "--kubelet-root-dir", (dir_ / "kubelet").string(),
                                  "--state-dir", (dir_ / "state").string(), "--nri=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::size_t SliceWrites() {
    return api_.CountRequests("POST", "resourceslices") + api_.CountRequests("PUT", "resourceslices") +
           api_.CountRequests("DELETE", "resourceslices");
  }

  // Requests recorded after the first `from`, keeping those `keep` accepts.
  template <typename Keep>
  std::vector<dranet::fakes::RecordedRequest> RequestsSince(std::size_t from, Keep keep) {
    auto all = api_.Requests();
    std::vector<dranet::fakes::RecordedRequest> kept;
    for (std::size_t i = from; i < all.size(); ++i)
      if (keep(all[i])) kept.push_back(all[i]);
    return kept;
  }

  fs::path dir_;
  fs::path host_root_ = fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6";
  dranet::fakes::FakeApiServer api_;
  std::unique_ptr<dranet::fakes::FakeKubelet> kubelet_;
};

uint16_t WaitForReady(Dranetd& d, std::chrono::milliseconds deadline = kDeadline) {
  std::string port = d.WaitForLog(std::regex("\"serving metrics and health\" .*port=\"([0-9]+)\""));
  if (port.empty()) return 0;
  uint16_t p = static_cast<uint16_t>(std::stoi(port));
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (Get(p, "/readyz").status == 200) return p;
    std::this_thread::sleep_for(50ms);
  }
  ADD_FAILURE() << "never ready: " << Get(p, "/readyz").body << "\nlog:\n" << d.Log();
  return p;
}

TEST_F(DaemonPublishTest, PublishesGb300SliceAndIsQuietOnRestart) {
  std::size_t writes_first_run = 0;
  {
    Dranetd d(Args());
    uint16_t port = WaitForReady(d);
    ASSERT_NE(port, 0);
    auto slices = api_.ListObjects("/apis/resource.k8s.io/v1/resourceslices");
    ASSERT_EQ(slices.size(), 1u);
    const std::string& slice = slices[0];
    for (int i = 0; i < 4; ++i)
      EXPECT_NE(slice.find("\"pci-010" + std::to_string(i + 1) + "-00-00-0\""), std::string::npos) << slice;
    EXPECT_NE(slice.find("\"azure.dra.net/placementGroupId\":{\"string\":\"c6c749e8-a38b-470e-8c94-2a7d00001bf0\"}"),
              std::string::npos)
        << "the azure plugin read the snapshot's recorded IMDS response";
    EXPECT_NE(slice.find("\"nvidia.dra.net/gpuLink\""), std::string::npos);
    EXPECT_NE(slice.find("\"kind\":\"Node\""), std::string::npos) << "ownerReference to the Node";

    auto metrics = Get(port, "/metrics");
    EXPECT_EQ(metrics.status, 200);
    EXPECT_NE(metrics.body.find("dranet_published_devices 4\n"), std::string::npos) << metrics.body;
    EXPECT_NE(metrics.body.find("dranet_build_info{version="), std::string::npos);
    EXPECT_NE(metrics.body.find("process_resident_memory_bytes "), std::string::npos);
    EXPECT_NE(metrics.body.find("dranet_plugins{plugin=\"azure\",outcome=\"loaded\"} 1"), std::string::npos);
    EXPECT_EQ(Get(port, "/livez").status, 200);
    EXPECT_EQ(Get(port, "/nope").status, 404);
    writes_first_run = SliceWrites();
    EXPECT_GE(writes_first_run, 1u);
    EXPECT_EQ(d.Terminate(), 0) << d.Log();
    EXPECT_NE(d.Log().find("\"shutting down\""), std::string::npos);
  }
  EXPECT_EQ(SliceWrites(), writes_first_run) << "nothing was written while stopping";

  // A restart with nothing changed writes nothing at all: no slice, no Event, no claim status,
  // from its first request until well after it is ready. Writes that come later than
  // readiness come from the periodic paths, so the window stays open until each of them has
  // run again: discovery resyncs (every second here) with the publisher pass each one asks
  // for, and the slice watch ended by the server, relisted and re-established, with bookmarks
  // flowing on it meanwhile.
  const std::size_t before_restart = api_.Requests().size();
  api_.SetBookmarkInterval(100ms);
  Dranetd again(Args({"--resync-seconds", "1"}));
  uint16_t port = WaitForReady(again);
  ASSERT_NE(port, 0);
  auto slice_lists = [&] {
    return RequestsSince(before_restart, [](const auto& r) {
             return r.method == "GET" && r.target.find("/resourceslices?") != std::string::npos &&
                    r.target.find("watch=true") == std::string::npos;
           }).size();
  };
  auto slice_watches = [&] {
    return RequestsSince(before_restart, [](const auto& r) {
             return r.method == "GET" && r.target.find("/resourceslices?") != std::string::npos &&
                    r.target.find("watch=true") != std::string::npos;
           }).size();
  };
  const double discoveries_at_ready = Metric(port, "dranet_discoveries_total");
  ASSERT_GE(discoveries_at_ready, 1) << Get(port, "/metrics").body;
  const std::size_t lists_at_ready = slice_lists();
  const std::size_t watches_at_ready = slice_watches();
  ASSERT_GE(watches_at_ready, 1u) << "the slice watch is open once ready\n" << Describe(api_.Requests());
  api_.ExpireWatches();
  // Three more discoveries: the pass asked for by the second one has finished before the
  // third starts a second later.
  EXPECT_TRUE(WaitUntil([&] {
    return Metric(port, "dranet_discoveries_total") >= discoveries_at_ready + 3 &&
           slice_lists() >= lists_at_ready + 3 && slice_watches() >= watches_at_ready + 1;
  })) << "discoveries " << Metric(port, "dranet_discoveries_total") << " (at ready " << discoveries_at_ready
      << "), slice lists " << slice_lists() << " (" << lists_at_ready << "), slice watches " << slice_watches()
      << " (" << watches_at_ready << ")\nlog:\n"
      << again.Log();
  auto writes = RequestsSince(before_restart, IsMutating);
  EXPECT_TRUE(writes.empty()) << "the restart wrote:\n" << Describe(writes) << "log:\n" << again.Log();
  EXPECT_EQ(again.Terminate(), 0);
}

// A node that ran DRANET switches over: the image changes, the DaemonSet's
// args and paths stay. DRANET's slice for the node (its own name, a stale
// device, its pool generation) gives way to ours with a newer generation;
// DRANET's bbolt file in the state directory is left as it was; a claim
// DRANET prepared is unprepared without error when its pod ends.
TEST_F(DaemonPublishTest, TakesTheNodeOverFromDranetSlicesStateAndPreparedClaims) {
  const std::string slices = "/apis/resource.k8s.io/v1/resourceslices";
  const std::string dranet_slice = kNode + "-dra.net-x7k2p";
  api_.PutObject(slices, R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)"
                         R"("metadata":{"name":")" + dranet_slice + R"(","generateName":")" + kNode + R"(-dra.net-",)"
                         R"("ownerReferences":[{"apiVersion":"v1","kind":"Node","name":")" + kNode +
                             R"(","uid":"u","controller":true}]},)"
                         R"("spec":{"driver":"dra.net","nodeName":")" + kNode + R"(",)"
                         R"("pool":{"name":")" + kNode + R"(","generation":3,"resourceSliceCount":1},)"
                         R"("devices":[{"name":"pci-0101-00-00-0","attributes":{"dra.net/rdma":{"bool":true}}},)"
                         R"({"name":"pci-0109-00-00-0","attributes":{"dra.net/rdma":{"bool":true}}}]}})");
  fs::create_directories(dir_ / "state");
  const std::string bolt = "bbolt file of DRANET: pod configs, device snapshots";
  std::ofstream(dir_ / "state/dranet.db") << bolt;

  // DRANET's spellings for the node name and the state: --hostname-override, --db-path.
  std::vector<std::string> args = Args();
  for (const char* ours : {"--node-name", "--state-dir"}) {
    auto at = std::find(args.begin(), args.end(), ours);
    args.erase(at, at + 2);
  }
  args.insert(args.end(), {"--hostname-override", kNode, "--db-path", (dir_ / "state/dranet.db").string()});
  Dranetd d(args);
  ASSERT_NE(WaitForReady(d), 0);
  EXPECT_FALSE(api_.GetObject(slices, dranet_slice)) << "DRANET's slice is gone";
  const auto published = api_.ListObjects(slices);
  ASSERT_EQ(published.size(), 1u);
  rapidjson::Document ours;
  ours.Parse(published[0].c_str());
  EXPECT_STRNE(ours["metadata"]["name"].GetString(), dranet_slice.c_str());
  EXPECT_GT(ours["spec"]["pool"]["generation"].GetInt64(), 3) << "the scheduler must see ours as the newer pool";
  EXPECT_EQ(published[0].find("pci-0109-00-00-0"), std::string::npos) << "DRANET's stale device is not carried over";
  EXPECT_NE(published[0].find("pci-0101-00-00-0"), std::string::npos);
  std::ifstream kept(dir_ / "state/dranet.db");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>()), bolt);

  // The pod DRANET prepared for ends: kubelet unprepares its claim here.
  const auto unprepared = kubelet_->Unprepare("dra.net", dranet::fakes::DraApi::kV1,
                                              {{"ml", "prepared-by-dranet", "0b6f9f1e-0000-4000-8000-000000000001"}});
  ASSERT_EQ(unprepared.size(), 1u);
  EXPECT_EQ(unprepared.begin()->second, "") << d.Log();
  EXPECT_EQ(d.Terminate(), 0) << d.Log();
}

// A checkpoint that cannot be read is moved aside, the daemon starts with no prepared claims,
// and the user learns of it from a Warning Event on the Node. Node is cluster-scoped, so the
// Event lives in "default" and names the Node with an empty namespace and the Node's uid.
TEST_F(DaemonPublishTest, CorruptCheckpointIsAnEventOnTheNodeAndStartsAnyway) {
  fs::create_directories(dir_ / "state");
  std::ofstream(dir_ / "state/prepared-claims.json") << R"({"kind":"DranetCheckpoint","version":1,"bootId":")";
  Dranetd d(Args());
  uint16_t port = WaitForReady(d);
  ASSERT_NE(port, 0);
  EXPECT_EQ(Metric(port, "dranet_state_corrupt_total"), 1);
  EXPECT_TRUE(fs::exists(dir_ / "state/prepared-claims.json.corrupt")) << "moved aside for a post-mortem";

  // Written from the daemon's Event thread, so it may land just after readiness; a write that
  // failed is logged, and ends the wait at once.
  std::vector<std::string> events;
  WaitUntil([&] {
    events = api_.ListObjects("/api/v1/namespaces/default/events");
    return !events.empty() || d.Log().find("\"could not record Event\"") != std::string::npos;
  });
  EXPECT_FALSE(events.empty()) << "no Event in default; requests:\n"
      << Describe(api_.Requests()) << "log:\n"
      << d.Log();
  ASSERT_EQ(events.size(), 1u);
  rapidjson::Document event;
  event.Parse(events[0].c_str());
  ASSERT_TRUE(event.IsObject()) << events[0];
  rapidjson::Document node;
  node.Parse(api_.GetObject("/api/v1/nodes", kNode).value_or("").c_str());
  ASSERT_TRUE(node.IsObject());
  auto text = [](const rapidjson::Value& object, const char* key) -> std::string {
    return object.IsObject() && object.HasMember(key) && object[key].IsString() ? object[key].GetString() : "?";
  };
  EXPECT_EQ(text(event, "reason"), "StateCorrupt") << events[0];
  EXPECT_EQ(text(event, "type"), "Warning") << events[0];
  EXPECT_NE(text(event, "message").find("starting with no prepared claims"), std::string::npos) << events[0];
  EXPECT_EQ(text(event["metadata"], "namespace"), "default") << events[0];
  ASSERT_TRUE(event.HasMember("involvedObject")) << events[0];
  const auto& involved = event["involvedObject"];
  EXPECT_EQ(text(involved, "kind"), "Node") << events[0];
  EXPECT_EQ(text(involved, "name"), kNode) << events[0];
  EXPECT_EQ(text(involved, "namespace"), "") << events[0];
  EXPECT_EQ(text(involved, "uid"), text(node["metadata"], "uid")) << events[0];

  auto posts = RequestsSince(0, [](const auto& r) { return r.target.find("/events") != std::string::npos; });
  ASSERT_EQ(posts.size(), 1u) << Describe(posts);
  EXPECT_EQ(posts[0].method, "POST");
  EXPECT_EQ(posts[0].target, "/api/v1/namespaces/default/events");
  EXPECT_EQ(posts[0].status, 201);
  EXPECT_EQ(d.Terminate(), 0) << d.Log();
}

// Each device's value of attribute `key` in a published slice, as compact JSON.
std::map<std::string, std::string> AttributeByDevice(const std::string& slice, const char* key) {
  rapidjson::Document json;
  json.Parse(slice.c_str());
  std::map<std::string, std::string> out;
  if (!json.IsObject() || !json.HasMember("spec") || !json["spec"]["devices"].IsArray()) {
    ADD_FAILURE() << "not a slice: " << slice;
    return out;
  }
  for (const auto& device : json["spec"]["devices"].GetArray()) {
    auto it = device["attributes"].FindMember(key);
    if (it == device["attributes"].MemberEnd()) continue;
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    it->value.Accept(writer);
    out[device["name"].GetString()] = buffer.GetString();
  }
  return out;
}

// --feature-gates=DRAListTypeAttributes=true on a GB300 node whose NUMA nodes 0 and 1 share a
// socket (node<N>/distance added to a copy of the snapshot): resource.kubernetes.io/numaNode is
// the device's node, then the other; dra.net/numaNode stays an int. Restarted without the gate,
// the daemon puts the int back.
TEST_F(DaemonPublishTest, ListTypeAttributesGatePublishesNumaNodeAsAList) {
  host_root_ = dir_ / "node";
  fs::copy(fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", host_root_,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::ofstream(host_root_ / "sys/devices/system/node/node0/distance") << "10 12\n";
  std::ofstream(host_root_ / "sys/devices/system/node/node1/distance") << "12 10\n";
  const std::map<std::string, std::string> legacy = {{"pci-0101-00-00-0", R"({"int":0})"},
                                                     {"pci-0102-00-00-0", R"({"int":0})"},
                                                     {"pci-0103-00-00-0", R"({"int":1})"},
                                                     {"pci-0104-00-00-0", R"({"int":1})"}};
  {
    Dranetd d(Args({"--feature-gates=DRAListTypeAttributes=true"}));
    ASSERT_NE(WaitForReady(d), 0);
    auto slices = api_.ListObjects("/apis/resource.k8s.io/v1/resourceslices");
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_NE(slices[0].find(R"("resource.kubernetes.io/numaNode":{"ints":[1,0]})"), std::string::npos) << slices[0];
    EXPECT_EQ(AttributeByDevice(slices[0], "resource.kubernetes.io/numaNode"),
              (std::map<std::string, std::string>{{"pci-0101-00-00-0", R"({"ints":[0,1]})"},
                                                  {"pci-0102-00-00-0", R"({"ints":[0,1]})"},
                                                  {"pci-0103-00-00-0", R"({"ints":[1,0]})"},
                                                  {"pci-0104-00-00-0", R"({"ints":[1,0]})"}}));
    EXPECT_EQ(AttributeByDevice(slices[0], "dra.net/numaNode"), legacy);
    EXPECT_NE(d.Log().find("the Kubernetes control plane needs the gate DRAListTypeAttributes too"),
              std::string::npos)
        << d.Log();
    EXPECT_EQ(d.Terminate(), 0) << d.Log();
  }
  Dranetd d(Args());
  ASSERT_NE(WaitForReady(d), 0);
  auto slices = api_.ListObjects("/apis/resource.k8s.io/v1/resourceslices");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(AttributeByDevice(slices[0], "resource.kubernetes.io/numaNode"), legacy) << slices[0];
  EXPECT_EQ(AttributeByDevice(slices[0], "dra.net/numaNode"), legacy);
  EXPECT_EQ(d.Log().find("DRAListTypeAttributes too"), std::string::npos) << "said only when the gate is on";
  EXPECT_EQ(d.Terminate(), 0) << d.Log();
}

TEST_F(DaemonPublishTest, NotReadyWhileTheApiServerIsDown) {
  api_.SetDown(true);
  Dranetd d(Args());
  std::string port = d.WaitForLog(std::regex("\"serving metrics and health\" .*port=\"([0-9]+)\""));
  ASSERT_FALSE(port.empty());
  uint16_t p = static_cast<uint16_t>(std::stoi(port));
  d.WaitForLog(std::regex("\"inventory updated\""));
  auto ready = Get(p, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_NE(ready.body.find("[-]first-publish"), std::string::npos) << ready.body;
  EXPECT_NE(ready.body.find("kubelet-registered"), std::string::npos) << ready.body;
  api_.SetDown(false);
  // Readiness is woken by the publisher's confirmation: well within the 30 s
  // it otherwise sleeps for (about 0.3 s here).
  ASSERT_NE(WaitForReady(d, 15s), 0) << "publishing resumes once the API server is back";
  EXPECT_EQ(api_.ListObjects("/apis/resource.k8s.io/v1/resourceslices").size(), 1u);
  EXPECT_EQ(d.Terminate(), 0);
}

}  // namespace
