// KubeletPlugin in-process, the fake kubelet over the real unix sockets, the
// fake API server on loopback and the GB300 node snapshot.
#include "kubelet/kubelet_plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdio.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/unique_fd.h"
#include "integration_support.h"
#include "inventory/inventory.h"
#include "kube/api_client.h"
#include "state/checkpoint_store.h"

namespace dranet::kubelet {
namespace {

using ::testing::HasSubstr;
using namespace testing;
using fakes::DraApi;

template <typename Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a condition, not a fixed wait
  }
  return true;
}

std::set<std::string> NodeNames(const inject::ClaimPlan& plan) {
  std::set<std::string> out;
  for (const auto& n : plan.device_nodes) out.insert(std::filesystem::path(n.container_path).filename().string());
  return out;
}

class KubeletPluginTest : public ::testing::Test {
 protected:
  KubeletPluginTest()
      : log_(log_text_),
        client_(LoopbackCluster(api_.url()), log_),
        reader_(client_, log_),
        kubelet_(KubeletOptions(dir_.path() / "kubelet/plugins_registry")) {
    state::CheckpointOptions state_options;
    state_options.state_dir = dir_.path() / "state";
    store_ = std::make_unique<state::CheckpointStore>(state_options, log_);
    inventory::DiscoveryOptions discovery;
    discovery.host_root = Gb300Root();
    devices_ = std::make_shared<const std::vector<inventory::Device>>(inventory::Discover(discovery, log_));
  }
  ~KubeletPluginTest() override {
    kubelet_.Stop();
    if (plugin_) plugin_->Stop();
  }

  KubeletPluginOptions Options(std::chrono::milliseconds socket_check_interval = std::chrono::milliseconds(50),
                               const std::string& pod_uid = "") {
    KubeletPluginOptions options;
    options.node_name = kGb300Node;
    options.kubelet_root_dir = dir_.path() / "kubelet";
    options.host_root = Gb300Root();
    options.socket_check_interval = socket_check_interval;
    options.pod_uid = pod_uid;
    return options;
  }
  std::unique_ptr<KubeletPlugin> MakePlugin(const KubeletPluginOptions& options) {
    auto devices = devices_;
    return std::make_unique<KubeletPlugin>(options, [devices] { return devices; }, ClaimLookupFrom(reader_),
                                           *store_, nullptr, log_);
  }
  void StartPlugin(std::chrono::milliseconds socket_check_interval = std::chrono::milliseconds(50),
                   const std::string& pod_uid = "") {
    plugin_ = MakePlugin(Options(socket_check_interval, pod_uid));
    plugin_->Start();
    kubelet_.Start();
    auto registered = kubelet_.WaitForPlugin("dra.net", std::chrono::seconds(20));
    ASSERT_TRUE(registered) << "failures: " << ::testing::PrintToString(kubelet_.failures());
    generation_ = registered->generation;
  }

  // A claim on mlx5_0 prepares over the DRA socket, once the kubelet's
  // channel has reconnected to a socket made again.
  bool ClaimPreparesOnTheNewSocket() {
    auto claim = PutClaim(api_, ClaimJson("c", kGb300Node, {DeviceFor("mlx5_0")}));
    return WaitUntil([&] {
      try {
        return kubelet_.Prepare("dra.net", DraApi::kV1, {claim}).at(claim.uid).error.empty();
      } catch (const std::exception&) {
        return false;  // the channel reconnects to the new socket
      }
    });
  }

  std::string DeviceFor(const std::string& rdma) {
    for (const auto& d : *devices_)
      if (d.rdma_device == rdma) return d.name;
    ADD_FAILURE() << "no device for " << rdma << " in the GB300 snapshot";
    return "";
  }

  TempDir dir_;
  std::ostringstream log_text_;
  Logger log_;
  fakes::FakeApiServer api_;
  kube::ApiClient client_;
  kube::ResourceClaimReader reader_;
  std::unique_ptr<state::CheckpointStore> store_;
  std::shared_ptr<const std::vector<inventory::Device>> devices_;
  fakes::FakeKubelet kubelet_;
  std::unique_ptr<KubeletPlugin> plugin_;
  uint64_t generation_ = 0;
};

TEST_F(KubeletPluginTest, RegistersTheWayKubeletExpects) {
  StartPlugin();
  auto info = kubelet_.Plugin("dra.net");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->type, "DRAPlugin");
  EXPECT_EQ(info->endpoint, (dir_.path() / "kubelet/plugins/dra.net/dra.sock").string());
  EXPECT_EQ(info->socket, dir_.path() / "kubelet/plugins_registry/dra.net-reg.sock");
  EXPECT_EQ(info->supported_versions, (std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin"}));
  EXPECT_EQ(info->chosen_version, "v1.DRAPlugin");
  EXPECT_TRUE(WaitUntil([&] { return plugin_->registered(); }));
  EXPECT_EQ(plugin_->registration_error(), "");
}

TEST_F(KubeletPluginTest, OlderKubeletPicksV1beta1) {
  StartPlugin();
  fakes::FakeKubelet old_kubelet(KubeletOptions(dir_.path() / "kubelet/plugins_registry", {"v1beta1.DRAPlugin"}));
  old_kubelet.Start();
  auto info = old_kubelet.WaitForPlugin("dra.net", std::chrono::seconds(20));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->chosen_version, "v1beta1.DRAPlugin");
}

TEST_F(KubeletPluginTest, StaleSocketFilesAreReplaced) {
  std::filesystem::create_directories(dir_.path() / "kubelet/plugins_registry");
  std::filesystem::create_directories(dir_.path() / "kubelet/plugins/dra.net");
  std::ofstream(dir_.path() / "kubelet/plugins_registry/dra.net-reg.sock") << "stale";
  std::ofstream(dir_.path() / "kubelet/plugins/dra.net/dra.sock") << "stale";
  StartPlugin();
  auto claim = PutClaim(api_, ClaimJson("c", kGb300Node, {DeviceFor("mlx5_0")}));
  EXPECT_EQ(kubelet_.Prepare("dra.net", DraApi::kV1, {claim}).at(claim.uid).error, "");
}

// The watcher wakes on the directories' changes, not on its interval (an
// hour here): a removed socket, and a removed socket directory, are served
// again within the test's wait.
TEST_F(KubeletPluginTest, RemovedSocketsAreServedAgainWithoutWaitingForTheInterval) {
  StartPlugin(std::chrono::hours(1));
  ASSERT_TRUE(WaitUntil([&] { return plugin_->registered(); }));
  std::filesystem::remove(plugin_->registration_socket());
  auto again = kubelet_.WaitForPlugin("dra.net", std::chrono::seconds(20), generation_);
  ASSERT_TRUE(again) << "not registered again after the socket was removed";
  EXPECT_TRUE(WaitUntil([&] { return plugin_->socket_restarts() == 1; }));
  // The whole DRA socket directory, as a kubelet reset might replace it
  // (moved away in one step, so that the plugin's new socket cannot race a
  // recursive removal).
  const auto dra_dir = plugin_->dra_socket().parent_path();
  std::filesystem::rename(dra_dir, dir_.path() / "old-dra-dir");
  ASSERT_TRUE(WaitUntil([&] { return plugin_->socket_restarts() == 2; }));
  EXPECT_TRUE(WaitUntil([&] { return std::filesystem::exists(plugin_->dra_socket()); }));
  // And again in the directory made anew: its new watch wakes the watcher too.
  std::filesystem::remove(plugin_->dra_socket());
  ASSERT_TRUE(WaitUntil([&] { return plugin_->socket_restarts() == 3; }));
  EXPECT_TRUE(ClaimPreparesOnTheNewSocket());
}

// A socket that cannot be made again (a file where its directory belongs) is
// retried soon, not only at the interval (an hour here), though nothing
// inotify sees changes when the file goes: the directory's watch went with it.
TEST_F(KubeletPluginTest, SocketThatCannotBeMadeAgainIsRetriedSoon) {
  StartPlugin(std::chrono::hours(1));
  ASSERT_TRUE(WaitUntil([&] { return plugin_->registered(); }));
  const auto dra_dir = plugin_->dra_socket().parent_path();
  const auto blocker = dir_.path() / "blocker";
  { std::ofstream(blocker) << "not a directory"; }
  // One step, so the watcher cannot make the directory again in between.
  ASSERT_EQ(::renameat2(AT_FDCWD, dra_dir.c_str(), AT_FDCWD, blocker.c_str(), RENAME_EXCHANGE), 0)
      << std::strerror(errno);
  ASSERT_TRUE(WaitUntil([&] { return plugin_->failed_socket_restarts() >= 1; }));
  const auto restarts = plugin_->socket_restarts();
  std::filesystem::remove(dra_dir);  // the file now at the directory's path
  ASSERT_TRUE(WaitUntil([&] { return plugin_->socket_restarts() == restarts + 1; }, std::chrono::seconds(10)))
      << "not served again within 10 s of the obstacle going";
  EXPECT_TRUE(std::filesystem::is_socket(plugin_->dra_socket()));
  EXPECT_TRUE(ClaimPreparesOnTheNewSocket());
}

TEST_F(KubeletPluginTest, ReRegistersWhenItsSocketsAreRemoved) {
  StartPlugin();
  ASSERT_TRUE(WaitUntil([&] { return plugin_->registered(); }));
  std::filesystem::remove(plugin_->registration_socket());
  auto again = kubelet_.WaitForPlugin("dra.net", std::chrono::seconds(20), generation_);
  ASSERT_TRUE(again) << "not registered again after the socket was removed";
  EXPECT_TRUE(WaitUntil([&] { return plugin_->registered(); }));
  std::filesystem::remove(plugin_->dra_socket());
  ASSERT_TRUE(WaitUntil([&] { return plugin_->socket_restarts() >= 2; }));
  EXPECT_TRUE(ClaimPreparesOnTheNewSocket());
}

// A rollout with surge: two instances, each with sockets named after its pod,
// registered side by side; the kubelet calls the newest. At start an
// instance removes the sockets of one that no longer answers, never those of
// one that does; at stop it removes its registration first and answers on
// its DRA socket for the grace it was given.
TEST_F(KubeletPluginTest, InstancesOfARolloutRegisterSideBySide) {
  const auto registry = dir_.path() / "kubelet/plugins_registry";
  const auto plugins = dir_.path() / "kubelet/plugins/dra.net";
  std::filesystem::create_directories(registry);
  std::filesystem::create_directories(plugins);
  auto dead_socket = [](const std::filesystem::path& path) {  // bound, then nobody listens
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  };
  dead_socket(registry / "dra.net-dead0000-reg.sock");
  dead_socket(plugins / "dra-dead0000.sock");
  dead_socket(registry / "other.driver-dead0000-reg.sock");  // another driver's: not ours to remove

  StartPlugin(std::chrono::milliseconds(50), "old00000-1");
  EXPECT_EQ(plugin_->registration_socket(), registry / "dra.net-old00000-1-reg.sock");
  EXPECT_EQ(plugin_->dra_socket(), plugins / "dra-old00000-1.sock");
  EXPECT_EQ(kubelet_.Plugin("dra.net")->endpoint, plugin_->dra_socket().string());
  EXPECT_FALSE(std::filesystem::exists(registry / "dra.net-dead0000-reg.sock"));
  EXPECT_FALSE(std::filesystem::exists(plugins / "dra-dead0000.sock"));
  EXPECT_TRUE(std::filesystem::exists(registry / "other.driver-dead0000-reg.sock"));

  auto new_options = Options(std::chrono::milliseconds(50), "new00000-2");
  new_options.deregistration_grace = std::chrono::milliseconds(1500);
  auto successor = MakePlugin(new_options);
  successor->Start();
  auto newest = kubelet_.WaitForPlugin("dra.net", std::chrono::seconds(20), generation_);
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->endpoint, successor->dra_socket().string()) << "the newest is called";
  EXPECT_TRUE(std::filesystem::exists(plugin_->registration_socket())) << "a live instance's sockets are kept";
  auto claim = PutClaim(api_, ClaimJson("c", kGb300Node, {DeviceFor("mlx5_0")}));
  EXPECT_EQ(kubelet_.Prepare("dra.net", DraApi::kV1, {claim}).at(claim.uid).error, "");

  std::thread stop([&] { successor->Stop(); });
  ASSERT_TRUE(WaitUntil([&] { return !std::filesystem::exists(successor->registration_socket()); }));
  EXPECT_TRUE(std::filesystem::exists(successor->dra_socket())) << "the DRA socket went with the registration";
  // The kubelet turns to the other instance, which serves the claim the
  // first one prepared (one checkpoint).
  ASSERT_TRUE(WaitUntil([&] { return kubelet_.Plugin("dra.net")->endpoint == plugin_->dra_socket().string(); }));
  EXPECT_EQ(kubelet_.Unprepare("dra.net", DraApi::kV1, {claim}).at(claim.uid), "");
  stop.join();
  EXPECT_FALSE(std::filesystem::exists(successor->dra_socket()));
}

class Gb300EndToEnd : public KubeletPluginTest, public ::testing::WithParamInterface<DraApi> {};

TEST_P(Gb300EndToEnd, PlansHoldExactlyTheAllocatedCharDevices) {
  StartPlugin();
  struct Case {
    std::string name;
    std::vector<std::string> rdma;
    std::set<std::string> nodes;
  };
  const std::vector<Case> cases = {
      {"1nic-aligned", {"mlx5_0"}, {"uverbs0", "umad0", "rdma_cm"}},
      {"2nic-aligned", {"mlx5_0", "mlx5_1"}, {"uverbs0", "uverbs1", "umad0", "umad1", "rdma_cm"}},
      {"1nic-unaligned", {"mlx5_2"}, {"uverbs2", "umad2", "rdma_cm"}},
  };
  std::vector<fakes::KubeletClaim> claims;
  for (const auto& c : cases) {
    std::vector<std::string> devices;
    for (const auto& r : c.rdma) devices.push_back(DeviceFor(r));
    claims.push_back(PutClaim(api_, ClaimJson(c.name, kGb300Node, devices)));
  }
  auto answers = kubelet_.Prepare("dra.net", GetParam(), claims);
  ASSERT_EQ(answers.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& answer = answers.at(claims[i].uid);
    EXPECT_EQ(answer.error, "") << cases[i].name;
    ASSERT_EQ(answer.devices.size(), cases[i].rdma.size()) << cases[i].name;
    for (std::size_t d = 0; d < cases[i].rdma.size(); ++d) {
      EXPECT_EQ(answer.devices[d].device_name, DeviceFor(cases[i].rdma[d]));
      EXPECT_EQ(answer.devices[d].pool_name, kGb300Node);
      EXPECT_EQ(answer.devices[d].request_names, std::vector<std::string>{"nic"});
    }
    auto plan = store_->Get(claims[i].uid);
    ASSERT_TRUE(plan) << cases[i].name;
    EXPECT_EQ(NodeNames(*plan), cases[i].nodes) << cases[i].name;
    for (const auto& n : plan->device_nodes) {
      EXPECT_GT(n.major, 0U) << n.container_path;
      EXPECT_EQ(n.host_path, (Gb300Root() / "dev" / n.container_path.substr(5)).string());
    }
    EXPECT_TRUE(plan->netdevs.empty());
    EXPECT_EQ(plan->pod_uids, std::vector<std::string>{"pod-1"});
  }
  EXPECT_EQ(store_->writes(), 1U);  // one fsync for the three claims
  auto unprepared = kubelet_.Unprepare("dra.net", GetParam(), claims);
  for (const auto& c : claims) EXPECT_EQ(unprepared.at(c.uid), "");
  EXPECT_TRUE(store_->All().empty());
}

INSTANTIATE_TEST_SUITE_P(BothApiVersions, Gb300EndToEnd, ::testing::Values(DraApi::kV1, DraApi::kV1beta1),
                         [](const auto& param_info) { return std::string(fakes::DraApiName(param_info.param)); });

TEST_F(KubeletPluginTest, AnErrorOnOneClaimLeavesTheOthersPrepared) {
  StartPlugin();
  auto good = PutClaim(api_, ClaimJson("good", kGb300Node, {DeviceFor("mlx5_0")}));
  auto bad_config =
      PutClaim(api_, ClaimJson("bad-config", kGb300Node, {DeviceFor("mlx5_1")}, {"pod-1"}, R"({"interfaze":{}})"));
  auto rdma_only = PutClaim(
      api_, ClaimJson("rdma-mtu", kGb300Node, {DeviceFor("mlx5_2")}, {"pod-1"}, R"({"interface":{"mtu":9000}})"));
  fakes::KubeletClaim missing{"ml", "missing", "uid-missing"};
  fakes::KubeletClaim replaced{"ml", "good", "uid-of-an-older-claim"};
  auto answers = kubelet_.Prepare("dra.net", DraApi::kV1, {good, bad_config, rdma_only, missing, replaced});
  ASSERT_EQ(answers.size(), 5U);
  EXPECT_EQ(answers.at(good.uid).error, "");
  EXPECT_EQ(answers.at(good.uid).devices.size(), 1U);
  EXPECT_THAT(answers.at(bad_config.uid).error, HasSubstr("claim ml/bad-config"));
  EXPECT_THAT(answers.at(bad_config.uid).error, HasSubstr("interfaze: unknown field"));
  EXPECT_THAT(answers.at(rdma_only.uid).error, HasSubstr("RDMA-only"));
  EXPECT_FALSE(answers.at(missing.uid).error.empty());
  EXPECT_FALSE(answers.at(replaced.uid).error.empty());
  EXPECT_TRUE(store_->Get(good.uid));
  EXPECT_EQ(store_->All().size(), 1U);
}

// An API server that holds one claim's GET does not cost the kubelet its
// call: the answer arrives before kubelet's gRPC deadline, the claim beside
// it prepared and the held one failed with a reason kubelet retries on.
TEST_F(KubeletPluginTest, AClaimTheApiServerHoldsIsAnsweredBeforeKubeletsDeadline) {
  StartPlugin();
  auto good = PutClaim(api_, ClaimJson("good", kGb300Node, {DeviceFor("mlx5_0")}));
  auto held = PutClaim(api_, ClaimJson("held", kGb300Node, {DeviceFor("mlx5_1")}));
  api_.InjectFault({"GET", "resourceclaims/held", 500, -1, std::chrono::seconds(120), -1});
  std::map<std::string, fakes::KubeletPrepareResult> answers;
  ASSERT_NO_THROW(answers = kubelet_.Prepare("dra.net", DraApi::kV1, {good, held}, std::chrono::seconds(6)))
      << "the call ran past kubelet's deadline";
  api_.ClearFaults();
  EXPECT_EQ(answers.at(good.uid).error, "");
  EXPECT_EQ(answers.at(good.uid).devices.size(), 1U);
  EXPECT_THAT(answers.at(held.uid).error, HasSubstr("before the prepare deadline"));
  EXPECT_FALSE(store_->Get(held.uid));
}

TEST_F(KubeletPluginTest, SameClaimFromManyCallersIsPreparedOnce) {
  StartPlugin();
  auto claim = PutClaim(api_, ClaimJson("busy", kGb300Node, {DeviceFor("mlx5_0"), DeviceFor("mlx5_1")}));
  constexpr int kCallers = 16;
  std::vector<fakes::KubeletPrepareResult> results(kCallers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i)
    threads.emplace_back([&, i] {
      results[i] = kubelet_.Prepare("dra.net", i % 2 ? DraApi::kV1 : DraApi::kV1beta1, {claim}).at(claim.uid);
    });
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, results[0]);
  EXPECT_EQ(results[0].devices.size(), 2U);
  EXPECT_EQ(store_->writes(), 1U);
}

TEST_F(KubeletPluginTest, UnprepareWorksAfterTheClaimIsDeletedAndTwice) {
  StartPlugin();
  auto claim = PutClaim(api_, ClaimJson("short-lived", kGb300Node, {DeviceFor("mlx5_3")}));
  ASSERT_EQ(kubelet_.Prepare("dra.net", DraApi::kV1, {claim}).at(claim.uid).error, "");
  ASSERT_TRUE(api_.DeleteObject(kClaims, "short-lived"));
  EXPECT_EQ(kubelet_.Unprepare("dra.net", DraApi::kV1, {claim}).at(claim.uid), "");
  EXPECT_EQ(kubelet_.Unprepare("dra.net", DraApi::kV1beta1, {claim}).at(claim.uid), "");
  EXPECT_FALSE(store_->Get(claim.uid));
}

TEST_F(KubeletPluginTest, ClaimSharedByPodsServesEachPod) {
  StartPlugin();
  auto claim = PutClaim(api_, ClaimJson("shared", kGb300Node, {DeviceFor("mlx5_0")}, {"pod-a", "pod-b"}));
  auto first = kubelet_.Prepare("dra.net", DraApi::kV1, {claim});
  auto second = kubelet_.Prepare("dra.net", DraApi::kV1, {claim});  // kubelet asks again for the second pod
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.at(claim.uid).error, "");
  EXPECT_EQ(store_->ForPod("pod-a").size(), 1U);
  EXPECT_EQ(store_->ForPod("pod-b").size(), 1U);
}

}  // namespace
}  // namespace dranet::kubelet
