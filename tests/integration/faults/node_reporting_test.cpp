// What the real dranetd reports about a node's work, read where users read
// it: claim status.devices and Events on the fake API server, and /metrics
// over HTTP. The conditions, reasons and metric families are DRANET's (its
// dashboards, alerts and tools keep working); the exposition follows the
// Prometheus naming rules.
//
//   GB300 snapshot (IB-only devices): every device of a running pod's claims
//   is Ready/RDMAOnlyDeviceReady; DRANET's request counters and published-
//   device gauges match what happened and what the slices hold.
//   A4 with real netdevs (root): a moved netdev is Ready + NetworkReady with
//   networkData (name, addresses, MAC); a netdev gone before RunPodSandbox
//   fails the sandbox, marks the claim's device not ready and puts a
//   NetworkDeviceAttachFailed Event on the pod. With the feature gate
//   PersistentResourceSliceAttributes, devices whose netdevs sit in a pod
//   keep in the slice what they published before; without it the slice
//   follows the host.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "fake_webhook.h"
#include "fault_harness.h"

namespace dranet::faults {
namespace {

namespace fs = std::filesystem;
const char* const kClaims = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";
const char* const kSlices = "/apis/resource.k8s.io/v1/resourceslices";
const char* const kEvents = "/api/v1/namespaces/ml/events";

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

// "<device>: <type>=<status>/<reason> ..." per status.devices entry, sorted by device.
std::vector<std::string> DeviceConditions(const rapidjson::Document& claim) {
  std::vector<std::string> out;
  if (!claim.IsObject() || !claim.HasMember("status") || !claim["status"].HasMember("devices")) return out;
  for (const auto& d : claim["status"]["devices"].GetArray()) {
    std::string line = std::string(d["device"].GetString()) + ":";
    EXPECT_STREQ(d["driver"].GetString(), kDriver);
    EXPECT_STREQ(d["pool"].GetString(), kNode);
    for (const auto& c : d["conditions"].GetArray())
      line += std::string(" ") + c["type"].GetString() + "=" + c["status"].GetString() + "/" + c["reason"].GetString();
    out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> AllocatedDevices(const rapidjson::Document& claim) {
  std::vector<std::string> out;
  for (const auto& r : claim["status"]["allocation"]["devices"]["results"].GetArray()) out.emplace_back(r["device"].GetString());
  std::sort(out.begin(), out.end());
  return out;
}

// The value of one series ("name{labels}") in a text exposition; nullopt when absent.
std::optional<double> Sample(const std::string& exposition, const std::string& series) {
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return std::nullopt;
}

// The Prometheus naming rules over a whole exposition: every family has
// HELP and TYPE, counters end in _total, nothing else does (but DRANET's
// published-devices gauge), no sample belongs to an undeclared family.
void ExpectPrometheusConventions(const std::string& exposition) {
  std::map<std::string, std::string> types;
  std::set<std::string> helped;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, std::regex(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram))"))) {
      EXPECT_TRUE(types.emplace(m[1], m[2]).second) << "declared twice: " << line;
    } else if (std::regex_match(line, m, std::regex(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+)"))) {
      helped.insert(m[1]);
    } else if (!line.empty()) {
      ASSERT_TRUE(std::regex_match(line, m, std::regex(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? \S+)"))) << line;
      std::string family = m[1];
      for (const char* suffix : {"_bucket", "_sum", "_count"})
        if (!types.count(family) && family.ends_with(suffix)) family.resize(family.size() - std::strlen(suffix));
      EXPECT_TRUE(types.count(family)) << "sample of an undeclared family: " << line;
    }
  }
  EXPECT_GT(types.size(), 10u);
  for (const auto& [name, type] : types) {
    EXPECT_TRUE(helped.count(name)) << name << " has no HELP";
    if (type == "counter") {
      EXPECT_TRUE(name.ends_with("_total")) << "counter " << name;
    } else if (name != "dranet_driver_published_devices_total") {
      EXPECT_FALSE(name.ends_with("_total")) << type << " " << name;
    }
  }
  EXPECT_EQ(types["process_cpu_seconds_total"], "counter");
}

class NodeReportingTest : public ::testing::Test {
 protected:
  void Start(FaultNode& node) {
    std::string why;
    ASSERT_TRUE(node.StartDaemon("", &why)) << why;
    port_ = node.daemon().MetricsPort();
    ASSERT_NE(port_, 0) << node.daemon().Log();
  }
  rapidjson::Document Claim(FaultNode& node, const std::string& name) {
    return Parse(node.api().GetObject(kClaims, name).value_or("{}"));
  }
  // Waits until claim `name` has `entries` status.devices entries.
  std::vector<std::string> WaitForStatus(FaultNode& node, const std::string& name, std::size_t entries) {
    std::vector<std::string> got;
    PollUntil([&] {
      got = DeviceConditions(Claim(node, name));
      return got.size() == entries;
    });
    return got;
  }
  int port_ = 0;
};

TEST_F(NodeReportingTest, IbOnlyClaimsGetReadyStatusAndDranetsMetricsCountTheWork) {
  FaultNode node({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6"});
  Start(node);
  for (Step step : {Step::kPrepare, Step::kRunPodA, Step::kCreateA, Step::kRunPodB}) {
    const auto got = node.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text << node.daemon().Log();
  }
  // A pod without claims of ours: a no-op hook.
  ASSERT_TRUE(node.runtime().RunPodSandbox(testing::FakeNriRuntime::MakePod("pod-web", "ml", "web", "")).ok());

  for (const char* name : {"claim-a", "claim-b"}) {
    const auto claim = Claim(node, name);
    std::vector<std::string> want;
    for (const auto& device : AllocatedDevices(claim)) want.push_back(device + ": Ready=True/RDMAOnlyDeviceReady");
    EXPECT_EQ(WaitForStatus(node, name, want.size()), want) << name << "\n" << node.daemon().Log();
  }

  // Published devices, as DRANET counts them: all, and dra.net/rdma true.
  double total = 0, rdma = 0;
  for (const auto& json : node.api().ListObjects(kSlices)) {
    const auto slice = Parse(json);
    for (const auto& d : slice["spec"]["devices"].GetArray()) {
      ++total;
      if (d.HasMember("attributes") && d["attributes"].HasMember("dra.net/rdma") &&
          d["attributes"]["dra.net/rdma"]["bool"].GetBool())
        ++rdma;
    }
  }
  ASSERT_GT(rdma, 0);
  std::string metrics;
  ASSERT_TRUE(PollUntil([&] {
    metrics = LoopbackGet(port_, "/metrics").body;
    return Sample(metrics, R"(dranet_driver_nri_plugin_requests_total{method="RunPodSandbox",status="noop"})").has_value();
  })) << metrics;
  auto expect = [&](const std::string& series, double value) {
    EXPECT_EQ(Sample(metrics, series), std::optional<double>(value)) << series;
  };
  expect(R"(dranet_driver_dra_plugin_requests_total{method="PrepareResourceClaims",status="success"})", 1);
  expect(R"(dranet_driver_dra_plugin_requests_latency_seconds_count{method="PrepareResourceClaims"})", 1);
  expect(R"(dranet_driver_nri_plugin_requests_total{method="RunPodSandbox",status="success"})", 2);
  expect(R"(dranet_driver_nri_plugin_requests_total{method="RunPodSandbox",status="noop"})", 1);
  expect(R"(dranet_driver_nri_plugin_requests_total{method="CreateContainer",status="success"})", 1);
  expect(R"(dranet_driver_nri_plugin_requests_latency_seconds_count{method="RunPodSandbox",status="success"})", 2);
  expect(R"(dranet_driver_published_devices_total{feature="total"})", total);
  expect(R"(dranet_driver_published_devices_total{feature="rdma"})", rdma);
  expect(R"(dranet_operations_total{operation="prepare",result="success"})", 2);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const auto published = Sample(metrics, "dranet_driver_last_published_time_seconds");
  ASSERT_TRUE(published);
  EXPECT_GT(*published, now - 600);
  EXPECT_LE(*published, now + 1);
  ExpectPrometheusConventions(metrics);
  if (HasFailure()) std::cout << metrics << node.daemon().Log();
}

TEST_F(NodeReportingTest, A4NetdevStatusHasNetworkDataAndAFailedAttachIsAnEventOnThePod) {
  if (const auto why = netlab::NetnsUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  FaultNode node({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "a4-highgpu-8g", /*real_netdevs=*/true});
  Start(node);
  ASSERT_TRUE(node.Run(Step::kPrepare).ok) << node.daemon().Log();
  const auto if_names = PublishedIfNames(node.api().ListObjects(kSlices));

  // Pod B: both netdevs move; status says so, with what the pod has.
  const auto run_b = node.Run(Step::kRunPodB);
  ASSERT_TRUE(run_b.ok) << run_b.text << node.daemon().Log();
  const auto devices_b = AllocatedDevices(Claim(node, "claim-b"));
  std::vector<std::string> want;
  for (const auto& device : devices_b)
    want.push_back(device + ": Ready=True/NetworkDeviceReady NetworkReady=True/NetworkReady");
  EXPECT_EQ(WaitForStatus(node, "claim-b", want.size()), want) << node.daemon().Log();
  const auto claim_b = Claim(node, "claim-b");
  for (const auto& d : claim_b["status"]["devices"].GetArray()) {
    ASSERT_TRUE(d.HasMember("networkData")) << d["device"].GetString();
    const auto& data = d["networkData"];
    const std::string if_name = data["interfaceName"].GetString();
    EXPECT_EQ(if_name, if_names.at(d["device"].GetString()));
    EXPECT_NE(run_b.text.find(if_name), std::string::npos) << run_b.text;
    ASSERT_TRUE(data.HasMember("hardwareAddress"));
    const std::string mac = data["hardwareAddress"].GetString();
    EXPECT_TRUE(std::regex_match(mac, std::regex("([0-9a-f]{2}:){5}[0-9a-f]{2}"))) << mac;
    EXPECT_NE(node.node_network_at_start().find(mac), std::string::npos) << mac << "\n" << node.node_network_at_start();
    ASSERT_TRUE(data.HasMember("ips") && data["ips"].Size() > 0);
    for (const auto& ip : data["ips"].GetArray())
      EXPECT_NE(run_b.text.find(ip.GetString()), std::string::npos) << ip.GetString() << " not in the pod:\n" << run_b.text;
  }

  // Pod A: its netdev is gone from the node before the sandbox starts.
  const auto devices_a = AllocatedDevices(Claim(node, "claim-a"));
  ASSERT_EQ(devices_a.size(), 1u);
  const std::string gone = if_names.at(devices_a[0]);
  ASSERT_EQ(std::system(("ip link del " + gone).c_str()), 0) << gone;
  const auto run_a = node.Run(Step::kRunPodA);
  EXPECT_FALSE(run_a.ok);
  EXPECT_NE(run_a.text.find(gone), std::string::npos) << run_a.text;
  EXPECT_EQ(WaitForStatus(node, "claim-a", 1),
            std::vector<std::string>{devices_a[0] + ": Ready=False/NetworkDeviceAttachFailed"});
  std::string event_message;
  ASSERT_TRUE(PollUntil([&] {
    for (const auto& json : node.api().ListObjects(kEvents)) {
      const auto event = Parse(json);
      if (std::string(event["reason"].GetString()) == "NetworkDeviceAttachFailed" &&
          std::string(event["involvedObject"]["kind"].GetString()) == "Pod" &&
          std::string(event["involvedObject"]["name"].GetString()) == "worker-pod-a") {
        EXPECT_STREQ(event["type"].GetString(), "Warning");
        event_message = event["message"].GetString();
        return true;
      }
    }
    return false;
  })) << node.daemon().Log();
  EXPECT_NE(event_message.find(gone), std::string::npos) << event_message;
  const auto metrics = LoopbackGet(port_, "/metrics").body;
  EXPECT_EQ(Sample(metrics, R"(dranet_driver_nri_plugin_requests_total{method="RunPodSandbox",status="failed"})"),
            std::optional<double>(1))
      << metrics;
  if (HasFailure()) std::cout << node.daemon().Log();
}

// Puts claim `name`, allocated `device` (adminAccess when `admin`) with
// opaque config `config` (JSON; none when empty), and has the kubelet
// prepare it with `deadline`. Throws when the kubelet's call fails (its
// deadline passed before dranetd answered).
fakes::KubeletPrepareResult PrepareNewClaim(FaultNode& node, const std::string& name, const std::string& device,
                                            const std::string& config, bool admin,
                                            std::chrono::milliseconds deadline = std::chrono::seconds(45)) {
  auto doc = Parse(AllocatedClaim(name, kNode, {device}, "pod-" + name));
  auto& allocator = doc.GetAllocator();
  auto& allocation = doc["status"]["allocation"]["devices"];
  if (admin) allocation["results"][0].AddMember("adminAccess", true, allocator);
  if (!config.empty()) {
    rapidjson::Document entry;
    entry.Parse((R"({"source":"FromClaim","requests":["nic"],"opaque":{"driver":"dra.net","parameters":)" + config +
                 "}}")
                    .c_str());
    rapidjson::Value list(rapidjson::kArrayType);
    list.PushBack(rapidjson::Value(entry, allocator), allocator);
    allocation.AddMember("config", list, allocator);
  }
  rapidjson::StringBuffer text;
  rapidjson::Writer<rapidjson::StringBuffer> writer(text);
  doc.Accept(writer);
  const auto stored = Parse(node.api().PutObject(kClaims, text.GetString()));
  const fakes::KubeletClaim request{"ml", name, stored["metadata"]["uid"].GetString()};
  return node.kubelet().Prepare(kDriver, node.dra_api(), {request}, deadline).at(request.uid);
}

// A profile webhook that never answers: dranetd stops its call at the
// kubelet's deadline (less its margin) and answers, instead of holding the
// call for the webhook's own 10 s timeout while the kubelet gives up at 6 s.
TEST_F(NodeReportingTest, AHangingProfileWebhookIsStoppedByTheKubeletsDeadline) {
  fakes::FakeWebhook webhook;
  webhook.SetProfileAnswer("acme.com/slow", {200, "{}", /*hang=*/true});
  FaultNode slow({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false,
                  {"--profile-provider", "webhook", "--webhook-url", webhook.url()}});
  Start(slow);
  fakes::KubeletPrepareResult answer;
  ASSERT_NO_THROW(answer = PrepareNewClaim(slow, "slow-profile", "pci-0101-00-00-0", R"({"profile":"acme.com/slow"})",
                                           false, std::chrono::seconds(6)))
      << "the kubelet's call ran out before dranetd answered\n" << slow.daemon().Log();
  EXPECT_NE(answer.error.find("stopped: the call's deadline passed"), std::string::npos) << answer.error;
  EXPECT_TRUE(answer.devices.empty());
  EXPECT_EQ(webhook.Requests("/GetProfileConfig").size(), 1u);
}

// Claims written to do harm, sent by the kubelet to the real dranetd on A4
// with real netdevs: each is refused at prepare, naming why, and the node's
// network is as it was.
TEST_F(NodeReportingTest, HostileClaimsAreRefusedAtPrepareAndTheNodeIsUntouched) {
  if (const auto why = netlab::NetnsUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  FaultNode node({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "a4-highgpu-8g", /*real_netdevs=*/true});
  Start(node);
  ASSERT_TRUE(node.Run(Step::kPrepare).ok) << node.daemon().Log();
  const auto if_names = PublishedIfNames(node.api().ListObjects(kSlices));
  const auto held = AllocatedDevices(Claim(node, "claim-a"));
  const auto taken = AllocatedDevices(Claim(node, "claim-b"));
  std::string free_device;
  for (const auto& [device, if_name] : if_names)
    if (std::find(held.begin(), held.end(), device) == held.end() &&
        std::find(taken.begin(), taken.end(), device) == taken.end())
      free_device = device;
  ASSERT_FALSE(free_device.empty());
  // The MAC of claim-b's NIC, as the node has it.
  const std::string victim = if_names.at(taken.at(0));
  std::string victim_mac;
  {
    FILE* out = ::popen(("ip -o link show " + victim).c_str(), "r");
    ASSERT_NE(out, nullptr);
    char line[1024] = {};
    const std::string text = std::fgets(line, sizeof line, out) ? line : "";
    ::pclose(out);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("link/ether ([0-9a-f:]{17})"))) << text;
    victim_mac = m[1];
  }
  const std::string network_before = node.NodeNetwork();

  auto claim = [&](const std::string& name, const std::string& device, const std::string& config, bool admin) {
    return PrepareNewClaim(node, name, device, config, admin).error;
  };
  auto refused = [&](const std::string& error, const std::string& why) {
    EXPECT_NE(error.find(why), std::string::npos) << "wanted \"" << why << "\" in: " << error;
  };
  refused(claim("mac-thief", free_device, R"({"interface":{"hardwareAddr":")" + victim_mac + R"("}})", false),
          "which node netdev " + victim + " already has");
  refused(claim("multicast-mac", free_device, R"({"interface":{"hardwareAddr":"01:00:5e:00:00:01"}})", false),
          "a multicast address");
  refused(claim("second-holder", held.at(0), "", false), "is a netdev that claim ml/claim-a");
  refused(claim("admin", held.at(0), R"({"interface":{"hardwareAddr":")" + victim_mac + R"("}})", true),
          "adminAccess gives read-only access, which configures nothing; its config may not set "
          "interface.hardwareAddr");
  refused(claim("sysctl-name", free_device, R"({"interface":{"name":"all"}})", false),
          "reserved in every network namespace");
  EXPECT_EQ(node.NodeNetwork(), network_before);
  // The claims that were prepared still run their pods.
  EXPECT_TRUE(node.Run(Step::kRunPodA).ok) << node.daemon().Log();
  if (HasFailure()) std::cout << node.daemon().Log();
}

// Device name -> its attributes in the published slices, as compact JSON.
std::map<std::string, std::string> PublishedAttributes(FaultNode& node) {
  std::map<std::string, std::string> out;
  for (const auto& json : node.api().ListObjects(kSlices)) {
    const auto slice = Parse(json);
    for (const auto& d : slice["spec"]["devices"].GetArray()) {
      rapidjson::StringBuffer text;
      rapidjson::Writer<rapidjson::StringBuffer> writer(text);
      if (d.HasMember("attributes")) d["attributes"].Accept(writer);
      out[d["name"].GetString()] = text.GetString();
    }
  }
  return out;
}

// A copy of a node snapshot that a test can change under a running dranetd.
class SnapshotCopy {
 public:
  explicit SnapshotCopy(const fs::path& original) : original_(original) {
    std::string pattern = "/tmp/dranet-snapshot-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = fs::path(pattern) / original.filename();
    fs::copy(original_, dir_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~SnapshotCopy() { fs::remove_all(dir_.parent_path()); }
  const fs::path& path() const { return dir_; }

  // What the host shows once netdev `if_name` left it for a pod: no
  // sys/class/net entry, no net/ directory under its PCI function, no link
  // in netlink.json.
  void RemoveNetdev(const std::string& if_name) {
    const fs::path entry = dir_ / "sys/class/net" / if_name;
    const fs::path target = fs::weakly_canonical(entry.parent_path() / fs::read_symlink(entry));
    fs::remove_all(target);
    fs::remove(entry);
    const fs::path netlink = dir_ / "netlink.json";
    std::ifstream in(netlink);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    auto& links = doc["links"];
    for (auto it = links.Begin(); it != links.End();) {
      it = std::string((*it)["name"].GetString()) == if_name ? links.Erase(it) : it + 1;
    }
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> writer(out);
    doc.Accept(writer);
    std::ofstream(netlink) << out.GetString();
  }
  // Back to the original (swapped in whole, so dranetd never reads half of it).
  void Restore() {
    const fs::path fresh = dir_.string() + ".fresh", old = dir_.string() + ".old";
    fs::copy(original_, fresh, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::rename(dir_, old);
    fs::rename(fresh, dir_);
    fs::remove_all(old);
  }

 private:
  fs::path original_, dir_;
};

class PersistentAttributesTest : public NodeReportingTest, public ::testing::WithParamInterface<bool> {
 protected:
  double Metric(const std::string& series) { return Sample(LoopbackGet(port_, "/metrics").body, series).value_or(0); }
  // Waits for a discovery that starts after now, and its publish.
  bool WaitForRepublish() {
    const double seen = Metric("dranet_discoveries_total");
    if (!PollUntil([&] { return Metric("dranet_discoveries_total") >= seen + 2; })) return false;
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    return PollUntil([&] { return Metric("dranet_driver_last_published_time_seconds") > now; });
  }
};

// The node snapshot is discovery's host: the test takes the netdevs out of a
// copy of it once they are in the pod, as the kernel takes them out of the
// host, and puts them back when the claim is unprepared.
TEST_P(PersistentAttributesTest, A4DevicesInAPodKeepTheirSliceAttributesOnlyUnderTheGate) {
  if (const auto why = netlab::NetnsUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  const bool gate = GetParam();
  SnapshotCopy snapshot(fs::path(DRANET_TEST_NODES_DIR) / "a4-highgpu-8g");
  FaultNode::Options options{DRANETD_BINARY, snapshot.path(), /*real_netdevs=*/true,
                             {"--inventory-max-poll-interval=1s"}};
  if (gate) options.extra_args.push_back("--feature-gates=PersistentResourceSliceAttributes=true");
  FaultNode node(options);
  Start(node);
  ASSERT_TRUE(node.Run(Step::kPrepare).ok) << node.daemon().Log();
  const auto before = PublishedAttributes(node);
  const auto if_names = PublishedIfNames(node.api().ListObjects(kSlices));
  const auto devices_b = AllocatedDevices(Claim(node, "claim-b"));
  const auto run_b = node.Run(Step::kRunPodB);
  ASSERT_TRUE(run_b.ok) << run_b.text << node.daemon().Log();
  for (const auto& device : devices_b) snapshot.RemoveNetdev(if_names.at(device));
  ASSERT_TRUE(WaitForRepublish()) << node.daemon().Log();

  const auto during = PublishedAttributes(node);
  for (const auto& device : devices_b) {
    ASSERT_TRUE(before.count(device)) << device;
    ASSERT_NE(before.at(device).find("dra.net/ifName"), std::string::npos) << before.at(device);
    if (gate) {
      ASSERT_TRUE(during.count(device)) << device << " left the slice";
      EXPECT_EQ(during.at(device), before.at(device)) << device;
    } else {
      EXPECT_TRUE(!during.count(device) || during.at(device).find("dra.net/ifName") == std::string::npos)
          << device << " still publishes its netdev: " << during.at(device);
    }
  }
  // Devices not in the pod are untouched either way.
  for (const auto& [device, attributes] : before) {
    if (std::find(devices_b.begin(), devices_b.end(), device) == devices_b.end()) {
      ASSERT_TRUE(during.count(device)) << device << " left the slice";
      EXPECT_EQ(during.at(device), attributes) << device;
    }
  }

  // The pod ends, the netdevs come home, the claim is unprepared: the slice
  // follows the host again.
  ASSERT_TRUE(node.Run(Step::kStopPodB).ok);
  ASSERT_TRUE(node.Run(Step::kRemovePodB).ok);
  ASSERT_TRUE(node.Run(Step::kUnprepare).ok);
  // The record went with the claim: until the snapshot has the netdevs back,
  // the slice shows the host without them, gate or not.
  ASSERT_TRUE(WaitForRepublish()) << node.daemon().Log();
  const auto unprepared = PublishedAttributes(node);
  for (const auto& device : devices_b)
    EXPECT_TRUE(!unprepared.count(device) || unprepared.at(device).find("dra.net/ifName") == std::string::npos)
        << device << " still publishes its record after unprepare: " << unprepared.at(device);
  snapshot.Restore();
  EXPECT_TRUE(PollUntil([&] { return PublishedAttributes(node) == before; })) << node.daemon().Log();
  if (HasFailure()) std::cout << node.daemon().Log();
}

INSTANTIATE_TEST_SUITE_P(Gate, PersistentAttributesTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) { return param.param ? "On" : "Off"; });

}  // namespace
}  // namespace dranet::faults
