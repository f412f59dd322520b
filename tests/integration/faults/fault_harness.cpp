#include "fault_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <rapidjson/document.h>

#include "base/log.h"
#include "inventory/snapshot.h"

namespace dranet::faults {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void PollPause() { std::this_thread::sleep_for(10ms); }

HttpAnswer LoopbackGet(int port, const std::string& path) {
  HttpAnswer answer;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return answer;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string raw;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) raw.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  std::smatch m;
  static const std::regex kStatusLine(R"(^HTTP/1\.[01] (\d{3}))");
  if (std::regex_search(raw, m, kStatusLine)) answer.status = std::stoi(m[1].str());
  if (auto body = raw.find("\r\n\r\n"); body != std::string::npos) answer.body = raw.substr(body + 4);
  return answer;
}

// ---- DaemonProcess ----

DaemonProcess::DaemonProcess(const std::string& binary, const std::vector<std::string>& args,
                             const fs::path& log_file, const std::string& fault)
    : log_file_(log_file) {
  std::vector<std::string> argv_strings{binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "DRANET_FAULT=", 13) != 0) env_strings.emplace_back(*e);
  if (!fault.empty()) env_strings.push_back("DRANET_FAULT=" + fault);
  std::vector<char*> argv, envp;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  // Everything the child needs is ready before fork: the test process has
  // threads, so the child only calls async-signal-safe functions.
  const int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot create " + log_file.string());
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(log_fd, STDERR_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  if (pid_ < 0) throw std::runtime_error("fork failed");
}

DaemonProcess::~DaemonProcess() {
  if (!status_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

bool DaemonProcess::Exited() {
  if (status_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
  return status_.has_value();
}

std::optional<int> DaemonProcess::WaitExit(std::chrono::milliseconds deadline) {
  PollUntil([&] { return Exited(); }, deadline);
  return status_;
}

std::optional<int> DaemonProcess::Terminate() {
  if (!Exited()) ::kill(pid_, SIGTERM);
  return WaitExit();
}

std::string DaemonProcess::Log() const {
  std::ifstream in(log_file_);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int MetricsPortIn(const std::string& log) {
  static const std::regex kServing(R"re("serving metrics and health".*port="?(\d+))re");
  std::smatch m;
  return std::regex_search(log, m, kServing) ? std::stoi(m[1].str()) : 0;
}

int DaemonProcess::MetricsPort() {
  int port = 0;
  PollUntil([&] {
    port = MetricsPortIn(Log());
    return port != 0 || Exited();
  });
  return port;
}

bool KilledBySigkill(int wait_status) { return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL; }

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return std::string("signal ") + ::strsignal(WTERMSIG(wait_status));
  return "status " + std::to_string(wait_status);
}

std::string KubeconfigFor(const std::string& server) {
  std::ostringstream y;
  y << "apiVersion: v1\nkind: Config\ncurrent-context: faults\n"
    << "clusters:\n- name: fake\n  cluster:\n    server: " << server << "\n"
    << "users:\n- name: tester\n  user:\n    token: faults\n"
    << "contexts:\n- name: faults\n  context:\n    cluster: fake\n    user: tester\n";
  return y.str();
}

std::string ClaimsPath(const std::string& version) {
  return "/apis/resource.k8s.io/" + version + "/namespaces/ml/resourceclaims";
}

std::string SlicesPath(const std::string& version) { return "/apis/resource.k8s.io/" + version + "/resourceslices"; }

const rapidjson::Value* DeviceAttributes(const rapidjson::Value& device) {
  if (!device.IsObject()) return nullptr;
  const rapidjson::Value& fields = device.HasMember("basic") ? device["basic"] : device;
  return fields.IsObject() && fields.HasMember("attributes") ? &fields["attributes"] : nullptr;
}

std::string AllocatedClaim(const std::string& name, const std::string& pool, const std::vector<std::string>& devices,
                           const std::string& pod_uid, const std::string& version, const std::string& share_id,
                           const std::string& config) {
  std::string results;
  for (const auto& d : devices) {
    if (!results.empty()) results += ",";
    results += std::string(R"({"request":"nic","driver":")") + kDriver + R"(","pool":")" + pool +
               R"(","device":")" + d + R"(")" +
               (share_id.empty() ? "" : R"(,"shareID":")" + share_id + R"(","consumedCapacity":{"dra.net/shares":"1"})") +
               "}";
  }
  const std::string request = version == "v1beta1" ? R"({"name":"nic","deviceClassName":"dranet.net"})"
                                                    : R"({"name":"nic","exactly":{"deviceClassName":"dranet.net"}})";
  return R"({"apiVersion":"resource.k8s.io/)" + version + R"(","kind":"ResourceClaim",)"
         R"("metadata":{"name":")" + name + R"(","namespace":"ml"},)"
         R"("spec":{"devices":{"requests":[)" + request + R"(]}},)"
         R"("status":{"allocation":{"devices":{"results":[)" + results + "]" +
         (config.empty() ? "" : R"(,"config":[{"source":"FromClaim","requests":["nic"],"opaque":{"driver":")" +
                                    std::string(kDriver) + R"(","parameters":)" + config + "}}]") +
         R"(}},)"
         R"("reservedFor":[{"resource":"pods","name":"worker-)" + pod_uid + R"(","uid":")" + pod_uid + R"("}]}})";
}

std::map<std::string, std::string> PublishedIfNames(const std::vector<std::string>& slices) {
  std::map<std::string, std::string> by_device;
  for (const auto& text : slices) {
    rapidjson::Document slice;
    slice.Parse(text.c_str());
    if (!slice.IsObject() || !slice.HasMember("spec") || !slice["spec"].HasMember("devices")) continue;
    for (const auto& d : slice["spec"]["devices"].GetArray()) {
      const auto* attributes = DeviceAttributes(d);
      if (attributes == nullptr || !attributes->HasMember("dra.net/ifName")) continue;
      const auto& value = (*attributes)["dra.net/ifName"];
      if (value.HasMember("string")) by_device[d["name"].GetString()] = value["string"].GetString();
    }
  }
  return by_device;
}

std::string DeviceWithIfName(const std::vector<std::string>& slices, const std::string& if_name) {
  for (const auto& [device, name] : PublishedIfNames(slices))
    if (name == if_name) return device;
  return {};
}

// ---- FaultNode ----

namespace {


std::string DescribePrepare(const std::vector<fakes::KubeletClaim>& claims,
                            const std::map<std::string, fakes::KubeletPrepareResult>& answers) {
  std::ostringstream s;
  for (const auto& c : claims) {
    s << c.name << ":";
    auto it = answers.find(c.uid);
    if (it == answers.end()) {
      s << " <no answer>\n";
      continue;
    }
    if (!it->second.error.empty()) s << " error=" << it->second.error;
    for (const auto& d : it->second.devices) {
      s << " " << d.pool_name << "/" << d.device_name << "[";
      for (const auto& r : d.request_names) s << r << ",";
      s << "]{";
      for (const auto& id : d.cdi_device_ids) s << id << ",";
      s << "}";
    }
    s << "\n";
  }
  return s.str();
}

// The stand-in netdevs' state in one network namespace, as stable text: the
// kernel's IPv6 link-local addresses (re-derived at every move) are left out,
// and so are the veth peers of the node namespace.
std::string DescribeNetwork(const inventory::NetlinkFacts& facts) {
  std::map<std::string, std::string> links;
  for (const auto& link : facts.links) {
    if (link.name == "lo" || link.name.starts_with("p-")) continue;
    std::ostringstream s;
    s << link.name << ((link.flags & IFF_UP) ? " up" : " down") << " mtu " << link.mtu << " " << link.mac << "\n";
    std::vector<std::string> lines;
    for (const auto& a : link.addresses)
      if (!a.starts_with("fe80:")) lines.push_back("  addr " + a);
    for (const auto& r : netlab::CarriedRoutes(facts, link.ifindex)) lines.push_back("  route " + netlab::FormatRoute(r, link.name));
    for (const auto& n : facts.neighbors)
      if (n.ifindex == link.ifindex && !n.lladdr.empty()) lines.push_back("  neigh " + n.destination + " " + n.lladdr);
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines) s << l << "\n";
    links[link.name] = s.str();
  }
  std::vector<std::string> rules;
  for (const auto& r : facts.rules)
    if (r.table != RT_TABLE_MAIN && r.table != RT_TABLE_LOCAL && r.table != RT_TABLE_DEFAULT)
      rules.push_back("rule " + std::to_string(r.priority) + " from " + (r.source.empty() ? "all" : r.source) +
                      " to " + (r.destination.empty() ? "all" : r.destination) + " table " +
                      std::to_string(r.table) + "\n");
  std::sort(rules.begin(), rules.end());
  std::string out;
  for (const auto& [name, text] : links) out += text;
  for (const auto& r : rules) out += r;
  return out;
}

// dra.net/ifName of the published device `device`; empty when none.
std::string IfNameOfDevice(const std::vector<std::string>& slices, const std::string& device) {
  const auto names = PublishedIfNames(slices);
  const auto it = names.find(device);
  return it == names.end() ? std::string() : it->second;
}

// The RDMA NICs' netdevs on GPU nodes (gpu0rdma0).
const std::regex& RdmaNetdevName() {
  static const std::regex kName("gpu[0-9]+rdma[0-9]+");
  return kName;
}

// The node of a real-netdev run: a network namespace with a veth standing in
// for each RDMA netdev of the snapshot, entered by the calling thread.
std::unique_ptr<netlab::NetnsLab> MakeLab(const FaultNode::Options& options) {
  if (!options.real_netdevs) return nullptr;
  auto lab = std::make_unique<netlab::NetnsLab>();
  std::ostringstream quiet;
  Logger log(quiet);
  const auto facts = inventory::ReadSnapshotNetlinkFacts(options.snapshot, log);
  for (const auto& link : facts.links)
    if (std::regex_match(link.name, RdmaNetdevName())) lab->AddStandIn(facts, link.name);
  lab->EnterNode();
  return lab;
}

std::string DescribeAdjustment(const testing::api::ContainerAdjustment& adjust) {
  std::set<std::string> lines;
  for (const auto& d : adjust.linux().devices())
    lines.insert("dev " + d.path() + " " + d.type() + " " + std::to_string(d.major()) + ":" + std::to_string(d.minor()));
  for (const auto& e : adjust.env()) lines.insert("env " + e.key() + "=" + e.value());
  for (const auto& m : adjust.mounts()) lines.insert("mount " + m.source() + " -> " + m.destination());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

const char* StepName(Step step) {
  switch (step) {
    case Step::kPrepare: return "NodePrepareResources";
    case Step::kRunPodA: return "RunPodSandbox(A)";
    case Step::kCreateA: return "CreateContainer(A)";
    case Step::kRunPodB: return "RunPodSandbox(B)";
    case Step::kCreateB: return "CreateContainer(B)";
    case Step::kStopPodA: return "StopPodSandbox(A)";
    case Step::kRemovePodA: return "RemovePodSandbox(A)";
    case Step::kStopPodB: return "StopPodSandbox(B)";
    case Step::kRemovePodB: return "RemovePodSandbox(B)";
    case Step::kUnprepare: return "NodeUnprepareResources";
  }
  return "?";
}

FaultNode::FaultNode(Options options) : options_(std::move(options)), lab_(MakeLab(options_)) {
  std::string pattern = "/tmp/dranet-faults-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  if (options_.resource_api == "none") {
    api_.ServeResourceVersions({});
  } else {
    std::vector<std::string> served = {options_.resource_api};
    served.insert(served.end(), options_.also_served.begin(), options_.also_served.end());
    api_.ServeResourceVersions(served);
  }
  fs::create_directories(dir_ / "kubelet/plugins_registry");
  std::ofstream(dir_ / "kubeconfig") << KubeconfigFor(api_.url());
  api_.PutObject("/api/v1/nodes",
                 std::string(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")") + kNode + R"("}})");
  testing::FakeNriRuntime::Options runtime_options;
  runtime_options.socket_path = (dir_ / "nri.sock").string();
  runtime_ = std::make_unique<testing::FakeNriRuntime>(runtime_options);
  runtime_->Listen();
  RestartKubelet();
  for (const char* pod : {"A", "B"}) {
    const std::string lower = pod == std::string("A") ? "a" : "b";
    if (lab_) pod_netns_[pod] = lab_->AddPod();
    pods_[pod] = testing::FakeNriRuntime::MakePod("pod-" + lower, "ml", "worker-pod-" + lower,
                                                  lab_ ? netlab::NetnsLab::PathOf(pod_netns_[pod]) : "");
  }
}

std::string FaultNode::NodeNetwork() const {
  if (!lab_) return {};
  std::ostringstream quiet;
  Logger log(quiet);
  return DescribeNetwork(netlab::ReadFactsIn(netlab::NetnsLab::PathOf(lab_->node_netns()), log));
}

std::string FaultNode::PodNetwork(const std::string& pod) const {
  if (!lab_) return {};
  std::ostringstream quiet;
  Logger log(quiet);
  return DescribeNetwork(netlab::ReadFactsIn(netlab::NetnsLab::PathOf(pod_netns_.at(pod)), log));
}

void FaultNode::VaryClaimedNetdevs(const std::vector<std::string>& slices,
                                   const std::vector<std::pair<std::string, std::vector<std::string>>>& claims) {
  const std::string first = IfNameOfDevice(slices, claims.at(0).second.at(0));
  const std::string second = IfNameOfDevice(slices, claims.at(1).second.at(0));
  if (first.empty() || second.empty()) throw std::runtime_error("the claimed devices have no netdev");
  const std::string& node = lab_->node_netns();
  std::vector<std::vector<std::string>> commands = {
      {"ip", "-n", node, "-4", "addr", "add", "10.250.0.1/24", "dev", first},
      {"ip", "-n", node, "-6", "addr", "add", "2001:db8:250::1/64", "dev", first, "nodad"}};
  // Shares of one netdev: it stays up on the host for both pods' children.
  if (second != first) commands.push_back({"ip", "-n", node, "link", "set", second, "down"});
  for (const auto& argv : commands) {
    if (auto r = netlab::RunCommand(argv); r.rc != 0) throw std::runtime_error(argv[4] + ": " + r.output);
  }
  node_network_at_start_ = NodeNetwork();
}

FaultNode::~FaultNode() {
  daemon_.reset();
  kubelet_.reset();
  runtime_.reset();
  std::error_code ec;
  // Kept when the test failed, for the dranetd logs.
  if (!std::getenv("DRANET_FAULTS_KEEP")) fs::remove_all(dir_, ec);
}

void FaultNode::StopKubelet() {
  if (kubelet_) kubelet_->Stop();
  kubelet_.reset();
}

void FaultNode::RestartKubelet() {
  StopKubelet();
  fakes::FakeKubeletOptions options;
  options.registry_dir = dir_ / "kubelet/plugins_registry";
  kubelet_ = std::make_unique<fakes::FakeKubelet>(options);
  kubelet_->Start();
}

void FaultNode::RestartRuntime() {
  runtime_->SetExistingPods(RunningPods());
  std::vector<testing::api::Container> containers;
  for (const auto& [key, container] : containers_) containers.push_back(container);
  runtime_->SetExistingContainers(containers);
  runtime_->Restart();
}

std::string FaultNode::StartedPod() const {
  for (const char* pod : {"A", "B"})
    if (running_.count(pod) && !stopped_.count(pod)) return pod;
  return {};
}

bool FaultNode::AcceptPlugin() {
  runtime_->SetExistingPods(RunningPods());
  std::vector<testing::api::Container> containers;
  for (const auto& [key, container] : containers_) containers.push_back(container);
  runtime_->SetExistingContainers(containers);
  return runtime_->AcceptPlugin(std::chrono::duration_cast<std::chrono::milliseconds>(kDeadline));
}

std::vector<testing::api::PodSandbox> FaultNode::RunningPods() const {
  std::vector<testing::api::PodSandbox> pods;
  for (const auto& key : running_) pods.push_back(pods_.at(key));
  return pods;
}

std::vector<std::string> FaultNode::DaemonArgs(const std::string& pod_uid) const {
  std::vector<std::string> args{"--kubeconfig", (dir_ / "kubeconfig").string(), "--node-name", kNode, "--host-root",
                                options_.snapshot.string(), "--kubelet-root-dir", (dir_ / "kubelet").string(),
                                "--state-dir", (dir_ / "state").string(), "--nri-socket", (dir_ / "nri.sock").string(),
                                "--metrics-address", "127.0.0.1:0", "-v", "2", "--host-network-source",
                                options_.real_netdevs ? "live" : "auto"};
  if (!pod_uid.empty()) args.insert(args.end(), {"--pod-uid", pod_uid});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  return args;
}

bool FaultNode::StartSuccessor(const std::string& pod_uid, std::string* why) {
  const auto before = kubelet_->Plugin(kDriver);
  const uint64_t generation = before ? before->generation : 0;
  ++daemon_starts_;
  predecessor_ = std::move(daemon_);
  daemon_ = std::make_unique<DaemonProcess>(options_.dranetd, DaemonArgs(pod_uid),
                                            dir_ / ("dranetd-" + std::to_string(daemon_starts_) + ".log"), "");
  if (!kubelet_->WaitForPlugin(kDriver, std::chrono::duration_cast<std::chrono::milliseconds>(kDeadline),
                               generation)) {
    *why = "the successor did not register with the kubelet";
    return false;
  }
  const int port = daemon_->MetricsPort();
  if (port == 0 || !PollUntil([&] { return LoopbackGet(port, "/readyz").status == 200; })) {
    *why = "the successor did not turn ready: " + LoopbackGet(port, "/readyz").body;
    return false;
  }
  return true;
}

bool FaultNode::StartDaemon(const std::string& fault, std::string* why, bool wait_ready) {
  const auto before = kubelet_->Plugin(kDriver);
  const uint64_t generation = before ? before->generation : 0;
  ++daemon_starts_;
  daemon_ = std::make_unique<DaemonProcess>(options_.dranetd, DaemonArgs(options_.pod_uid),
                                            dir_ / ("dranetd-" + std::to_string(daemon_starts_) + ".log"), fault);
  // A dranetd that refuses its flags exits at once: no need to wait out the deadline.
  bool registered = false;
  PollUntil([&] {
    registered = kubelet_->WaitForPlugin(kDriver, std::chrono::milliseconds(100), generation).has_value();
    return registered || daemon_->Exited();
  });
  if (!registered) {
    *why = daemon_->Exited() ? "dranetd exited before it registered with the kubelet"
                             : "dranetd did not register with the kubelet";
    return false;
  }
  if (!AcceptPlugin()) {
    *why = "dranetd did not connect to the NRI runtime: " + runtime_->last_error();
    return false;
  }
  if (wait_ready) {
    const int port = daemon_->MetricsPort();
    if (port == 0 || !PollUntil([&] { return LoopbackGet(port, "/readyz").status == 200; })) {
      *why = "dranetd did not turn ready: " + LoopbackGet(port, "/readyz").body;
      return false;
    }
  }
  // The claims name devices of the published slices: created once, on the
  // first start, so every run of a test sees the same objects and UIDs (none
  // where the cluster has no DRA to publish to).
  if (claims_.empty() && options_.resource_api != "none") {
    std::vector<std::string> slices;
    PollUntil([&] {
      slices = api_.ListObjects(SlicesPath(options_.resource_api));
      return !slices.empty();
    });
    std::string pool;
    std::vector<std::string> devices;
    for (const auto& json : slices) {
      rapidjson::Document doc;
      doc.Parse(json.c_str());
      if (doc.HasParseError() || !doc.HasMember("spec")) continue;
      const auto& spec = doc["spec"];
      if (std::string(spec["driver"].GetString()) != kDriver) continue;
      pool = spec["pool"]["name"].GetString();
      if (spec.HasMember("devices"))
        for (const auto& d : spec["devices"].GetArray()) devices.emplace_back(d["name"].GetString());
    }
    // With real netdevs: the RDMA NICs, which have stand-ins.
    if (lab_)
      std::erase_if(devices, [&](const std::string& d) { return !std::regex_match(IfNameOfDevice(slices, d), RdmaNetdevName()); });
    std::sort(devices.begin(), devices.end());
    if (devices.size() < 3) {
      *why = "dranetd published fewer than 3 devices";
      return false;
    }
    const std::vector<std::pair<std::string, std::vector<std::string>>> wanted = {
        {"claim-a", {devices[0]}},
        {"claim-b", options_.shared_claims ? std::vector<std::string>{devices[0]}
                                           : std::vector<std::string>{devices[1], devices[2]}}};
    const char* pods[] = {"pod-a", "pod-b"};
    const char* shares[] = {"share-a", "share-b"};
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      rapidjson::Document doc;
      doc.Parse(api_.PutObject(ClaimsPath(options_.resource_api),
                               AllocatedClaim(wanted[i].first, pool, wanted[i].second, pods[i], options_.resource_api,
                                              options_.shared_claims ? shares[i] : "", options_.claim_config))
                    .c_str());
      claims_.push_back({"ml", doc["metadata"]["name"].GetString(), doc["metadata"]["uid"].GetString()});
    }
    if (lab_) VaryClaimedNetdevs(slices, wanted);
  }
  return true;
}

StepAnswer FaultNode::CreateContainer(const std::string& pod, const std::string& container) {
  const auto& sandbox = pods_.at(pod);
  testing::api::ContainerAdjustment adjust;
  auto created = testing::FakeNriRuntime::MakeContainer(sandbox, container, {});
  created.set_id(sandbox.id().substr(0, 32) + std::string(32 - std::min<std::size_t>(container.size(), 32), '0') +
                 container.substr(0, 32));  // one id per container of the pod
  auto status = runtime_->CreateContainer(sandbox, created, &adjust);
  if (!status.ok()) {
    // containerd starts the container anyway, without this plugin's edits.
    bypassed_.push_back(pod + "/" + container);
    containers_[pod + "/" + container] = created;
    return {false, status.message};
  }
  for (const auto& d : adjust.linux().devices()) *created.mutable_linux()->add_devices() = d;
  containers_[pod + "/" + container] = created;
  return {true, DescribeAdjustment(adjust)};
}

StepAnswer FaultNode::PodEvent(Step step) {
  const std::string pod = (step == Step::kRunPodA || step == Step::kStopPodA || step == Step::kRemovePodA) ? "A" : "B";
  const auto& sandbox = pods_.at(pod);
  nri::RpcStatus status;
  switch (step) {
    case Step::kRunPodA:
    case Step::kRunPodB:
      running_.insert(pod);  // the runtime starts the sandbox whatever the plugin says
      stopped_.erase(pod);
      status = runtime_->RunPodSandbox(sandbox);
      if (status.ok() && lab_) return {true, "pod " + pod + ":\n" + PodNetwork(pod)};
      break;
    case Step::kStopPodA:
    case Step::kStopPodB:
      stopped_.insert(pod);
      status = runtime_->StopPodSandbox(sandbox);
      if (status.ok() && lab_) return {true, "pod " + pod + ":\n" + PodNetwork(pod) + "node:\n" + NodeNetwork()};
      break;
    default:
      running_.erase(pod);
      stopped_.erase(pod);
      std::erase_if(containers_, [&](const auto& entry) { return entry.first.starts_with(pod + "/"); });
      status = runtime_->RemovePodSandbox(sandbox);
      break;
  }
  return {status.ok(), status.ok() ? "" : status.message};
}

StepAnswer FaultNode::Run(Step step) {
  try {
    switch (step) {
      case Step::kPrepare: {
        auto answers = kubelet_->Prepare(kDriver, dra_api(), claims_);
        bool ok = true;
        for (const auto& [uid, r] : answers) ok = ok && r.error.empty();
        return {ok && answers.size() == claims_.size(), DescribePrepare(claims_, answers)};
      }
      case Step::kUnprepare: {
        auto answers = kubelet_->Unprepare(kDriver, dra_api(), claims_);
        std::string text;
        bool ok = answers.size() == claims_.size();
        for (const auto& c : claims_) {
          auto it = answers.find(c.uid);
          text += c.name + ": " + (it == answers.end() ? "<no answer>" : it->second.empty() ? "ok" : it->second) + "\n";
          ok = ok && it != answers.end() && it->second.empty();
        }
        return {ok, text};
      }
      case Step::kCreateA: return CreateContainer("A", "worker");
      case Step::kCreateB: return CreateContainer("B", "worker");
      default: return PodEvent(step);
    }
  } catch (const std::exception& e) {
    return {false, e.what()};
  }
}

FaultNode::Checkpoint FaultNode::ReadCheckpoint() const {
  std::ostringstream quiet;
  Logger log(quiet);
  state::CheckpointOptions options;
  options.state_dir = dir_ / "state";
  state::CheckpointStore store(options, log);
  Checkpoint c;
  c.outcome = store.load_outcome();
  for (auto& plan : store.All()) c.by_claim_name[plan.claim_name] = plan;
  return c;
}

}  // namespace dranet::faults
