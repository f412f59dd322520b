#include "kubelet/dra_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "kubelet_test_support.h"

namespace dranet::kubelet {
namespace {

using ::testing::HasSubstr;
using namespace testing;

// PreparedClaims in memory, counting writes.
class MemoryClaims : public state::PreparedClaims {
 public:
  void Put(const std::vector<inject::ClaimPlan>& plans) override {
    std::lock_guard lock(mu_);
    if (fail_writes) throw std::runtime_error("disk full");
    ++puts;
    for (const auto& p : plans) plans_[p.claim_uid] = p;
  }
  void Remove(const std::vector<std::string>& uids) override {
    std::lock_guard lock(mu_);
    ++removes;
    for (const auto& u : uids) plans_.erase(u);
  }
  std::optional<inject::ClaimPlan> Get(const std::string& uid) const override {
    std::lock_guard lock(mu_);
    auto it = plans_.find(uid);
    return it == plans_.end() ? std::nullopt : std::optional(it->second);
  }
  std::vector<inject::ClaimPlan> ForPod(const std::string&) const override { return {}; }
  std::vector<inject::ClaimPlan> All() const override {
    std::lock_guard lock(mu_);
    std::vector<inject::ClaimPlan> out;
    for (const auto& [u, p] : plans_) out.push_back(p);
    return out;
  }
  std::atomic<int> puts{0}, removes{0};
  std::atomic<bool> fail_writes{false};

 private:
  mutable std::mutex mu_;
  std::map<std::string, inject::ClaimPlan> plans_;
};

class DraServiceTest : public ::testing::Test {
 protected:
  DraServiceTest() : log_(log_text_) {
    claims_["one"] = Claim("one", {"pci-0101-00-00-0"});
    claims_["two"] = Claim("two", {"pci-0101-00-00-0", "pci-0102-00-00-0"});
    inventory_ = std::make_shared<const std::vector<inventory::Device>>(
        std::vector<inventory::Device>{IbDevice(0), IbDevice(1), IbDevice(2), NetDevice("gpu0rdma0", 0),
                                       NetDevice("gpu1rdma0", 1)});
  }

  std::unique_ptr<DraService> Make() {
    DraServiceOptions options;
    options.plan.pool_name = kNode;
    options.prepare_timeout = prepare_timeout_;
    options.prepare_workers = workers_;
    DraServiceDeps deps;
    deps.claims = [this](const std::string& ns, const std::string& name, const std::string& uid,
                         std::stop_token stop) {
      ++lookups_;
      if (gate_) gate_->wait();
      if (hanging_.contains(name)) {
        // An API server that never answers: only the stop token ends the wait.
        std::mutex mu;
        std::condition_variable_any cv;
        std::unique_lock lock(mu);
        cv.wait_for(lock, stop, std::chrono::seconds(20), [] { return false; });
        if (stop.stop_requested()) ++lookups_stopped_;
        throw kube::ApiError(0, "Cancelled", "GET /apis/.../" + name + ": cancelled");
      }
      std::lock_guard lock(mu_);
      auto it = claims_.find(name);
      if (it == claims_.end() || ns != it->second.namespace_name)
        throw kube::ClaimError("claim " + ns + "/" + name + " not found");
      if (it->second.uid != uid) throw kube::ClaimError("claim " + ns + "/" + name + " was replaced");
      return it->second;
    };
    deps.inventory = [this] {
      ++inventory_calls_;
      return inventory_;
    };
    deps.prepared = &store_;
    deps.events = [this](const ClaimRequest& c, const std::string& reason, const std::string& message) {
      std::lock_guard lock(mu_);
      events_.push_back(c.name + " " + reason + " " + message);
    };
    deps.netdevs = netdevs_;
    // The host as the netdev devices of the inventory have it.
    deps.host.request_dhcp = [this](const std::string& if_name, std::stop_token stop, const std::string&) {
      if (dhcp_) return dhcp_(if_name, stop);
      inject::DhcpLease lease;
      lease.address = "192.0.2.10/24";
      lease.server_id = "192.0.2.1";
      lease.client_mac = "02:00:00:00:00:00";
      return lease;
    };
    deps.host.release_dhcp = [this](const std::string& if_name, const inject::DhcpLease&, std::stop_token stop) {
      if (release_) release_(if_name, stop);
    };
    deps.host.profiles = profiles_;
    deps.host.read_network = [] {
      inventory::NetlinkFacts facts;
      for (int n : {0, 1}) {
        inventory::LinkFacts link;
        link.ifindex = 10 + n;
        link.name = "gpu" + std::to_string(n) + "rdma0";
        link.mac = "02:00:00:00:00:0" + std::to_string(n);
        facts.links.push_back(link);
      }
      return facts;
    };
    return std::make_unique<DraService>(options, std::move(deps), log_);
  }

  static ClaimRequest Req(const std::string& name) { return {"ml", name, "uid-" + name}; }

  std::ostringstream log_text_;
  Logger log_;
  std::mutex mu_;
  std::map<std::string, kube::ResourceClaim> claims_;
  std::shared_ptr<const std::vector<inventory::Device>> inventory_;
  MemoryClaims store_;
  std::atomic<int> lookups_{0}, inventory_calls_{0}, lookups_stopped_{0};
  std::chrono::milliseconds prepare_timeout_{30'000};
  unsigned workers_ = 8;
  std::set<std::string> hanging_;  // claims whose lookup never answers
  std::latch* gate_ = nullptr;
  std::shared_ptr<ProfileProvider> profiles_;  // none unless a test sets one
  std::vector<std::string> events_;
  inject::PodNetnsApplier* netdevs_ = nullptr;
  std::function<inject::DhcpLease(const std::string&, std::stop_token)> dhcp_;
  std::function<void(const std::string&, std::stop_token)> release_;
};

// Polls `done` for up to 20 s.
template <typename Predicate>
bool Eventually(Predicate done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// Blocks until `stop` is requested (or 20 s); true when it was.
bool WaitForStop(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, std::chrono::seconds(20), [] { return false; });
  return stop.stop_requested();
}

// Detaches recorded as "<pod uid> <claim uid>"; fails when told to.
class DetachRecorder : public inject::PodNetnsApplier {
 public:
  void AttachNetdevs(const inject::PodSandboxRef&, const std::vector<inject::ClaimPlan>&) override {}
  void DetachNetdevs(const inject::PodSandboxRef& pod, const std::vector<inject::ClaimPlan>& plans) override {
    for (const auto& p : plans) detached.push_back(pod.uid + " " + p.claim_uid);
    if (!fail_with.empty()) throw inject::InjectError(fail_with);
  }
  std::vector<std::string> detached;
  std::string fail_with;
};

TEST_F(DraServiceTest, PreparesSeveralClaimsWithOneWrite) {
  auto service = Make();
  auto answers = service->Prepare({Req("one"), Req("two")});
  ASSERT_EQ(answers.size(), 2U);
  EXPECT_EQ(answers["uid-one"].error, "");
  ASSERT_EQ(answers["uid-two"].devices.size(), 2U);
  EXPECT_EQ(answers["uid-two"].devices[1], (PreparedDevice{{"nic"}, kNode, "pci-0102-00-00-0", {}}));
  EXPECT_EQ(store_.puts, 1);
  EXPECT_TRUE(store_.Get("uid-two"));
  EXPECT_NE(log_text_.str().find("claim prepared"), std::string::npos);
}

TEST_F(DraServiceTest, OneBadClaimDoesNotFailTheOthers) {
  auto service = Make();
  claims_["bad"] = Claim("bad", {"pci-0999-00-00-0"});
  auto answers = service->Prepare({Req("one"), Req("missing"), Req("bad"), Req("two")});
  EXPECT_EQ(answers["uid-one"].error, "");
  EXPECT_EQ(answers["uid-two"].error, "");
  EXPECT_THAT(answers["uid-missing"].error, HasSubstr("not found"));
  EXPECT_THAT(answers["uid-bad"].error, HasSubstr("pci-0999-00-00-0"));
  EXPECT_TRUE(answers["uid-bad"].devices.empty());
  EXPECT_FALSE(store_.Get("uid-bad"));
  EXPECT_EQ(events_.size(), 2U);
  EXPECT_THAT(events_, ::testing::Contains(HasSubstr("missing ClaimPrepareFailed")));
}

TEST_F(DraServiceTest, ReplacedClaimIsRefused) {
  auto service = Make();
  auto answers = service->Prepare({{"ml", "one", "uid-stale"}});
  EXPECT_THAT(answers["uid-stale"].error, HasSubstr("replaced"));
}

TEST_F(DraServiceTest, SecondPrepareAnswersIdenticallyWithoutRebuilding) {
  auto service = Make();
  auto first = service->Prepare({Req("two")});
  auto second = service->Prepare({Req("two")});
  EXPECT_EQ(first, second);
  EXPECT_EQ(inventory_calls_, 1);
  EXPECT_EQ(store_.puts, 1);
}

TEST_F(DraServiceTest, SameClaimAskedConcurrentlyIsPreparedOnce) {
  auto service = Make();
  constexpr int kCallers = 16;
  std::latch gate(1);
  gate_ = &gate;
  std::vector<std::map<std::string, PrepareAnswer>> answers(kCallers);
  std::vector<std::thread> callers;
  std::latch started(kCallers);
  for (int i = 0; i < kCallers; ++i)
    callers.emplace_back([&, i] {
      started.count_down();
      answers[i] = service->Prepare({Req("two")});
    });
  started.wait();
  gate.count_down();
  for (auto& t : callers) t.join();
  for (const auto& a : answers) EXPECT_EQ(a, answers[0]);
  EXPECT_EQ(answers[0].at("uid-two").devices.size(), 2U);
  EXPECT_EQ(inventory_calls_, 1);  // built once
  EXPECT_EQ(store_.puts, 1);       // written once
}

TEST_F(DraServiceTest, SharedClaimFollowsReservedPods) {
  auto service = Make();
  service->Prepare({Req("one")});
  claims_["one"].reserved_for.push_back({"", "pods", "second", "pod-2"});
  auto again = service->Prepare({Req("one")});
  EXPECT_EQ(again["uid-one"].error, "");
  EXPECT_EQ(store_.Get("uid-one")->pod_uids, (std::vector<std::string>{"pod-1", "pod-2"}));
  EXPECT_EQ(inventory_calls_, 1);
  EXPECT_EQ(store_.puts, 2);
}

TEST_F(DraServiceTest, UnprepareIsIdempotentAndNeedsNoClaimObject) {
  auto service = Make();
  service->Prepare({Req("one"), Req("two")});
  claims_.clear();  // the claim objects are deleted
  const int lookups = lookups_;
  auto errors = service->Unprepare({Req("one"), Req("never-prepared")});
  EXPECT_EQ(errors, (std::map<std::string, std::string>{{"uid-one", ""}, {"uid-never-prepared", ""}}));
  EXPECT_EQ(service->Unprepare({Req("one")}).at("uid-one"), "");
  EXPECT_EQ(lookups_, lookups);
  EXPECT_FALSE(store_.Get("uid-one"));
  EXPECT_TRUE(store_.Get("uid-two"));
}

// A pod the runtime removed without StopPodSandbox reaching the NRI plugin
// still holds its netdevs at unprepare: they go home before the claim's
// state (their host configuration) is dropped. A failure is reported and
// does not keep the claim (that would hold the pod in Terminating).
TEST_F(DraServiceTest, UnprepareReturnsNetdevsStillInThePod) {
  DetachRecorder netdevs;
  netdevs_ = &netdevs;
  auto service = Make();
  inject::ClaimPlan plan;
  plan.claim_uid = "uid-a4";
  plan.claim_namespace = "ml";
  plan.claim_name = "a4";
  plan.pod_uids = {"pod-1"};
  plan.netdevs.push_back({});
  plan.netdevs.back().host_if_name = "gpu0rdma0";
  store_.Put({plan});
  service->Prepare({Req("one")});
  EXPECT_EQ(service->Unprepare({{"ml", "a4", "uid-a4"}, Req("one")}),
            (std::map<std::string, std::string>{{"uid-a4", ""}, {"uid-one", ""}}));
  EXPECT_EQ(netdevs.detached, std::vector<std::string>{"pod-1 uid-a4"});  // claim "one" has no netdev
  EXPECT_FALSE(store_.Get("uid-a4"));

  store_.Put({plan});
  netdevs.fail_with = "netdev gpu0rdma0 is neither in the pod nor on the host";
  EXPECT_EQ(service->Unprepare({{"ml", "a4", "uid-a4"}}).at("uid-a4"), "");
  EXPECT_FALSE(store_.Get("uid-a4"));
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_THAT(events_[0], HasSubstr("a4 NetworkRestoreFailed netdev gpu0rdma0"));
}

// Names from the kubelet socket become API paths: only Kubernetes names are
// looked up.
TEST_F(DraServiceTest, ClaimNamesThatAreNotKubernetesNamesAreRefusedUnread) {
  auto service = Make();
  auto answers = service->Prepare({{"ml", "../../../../../api/v1/nodes/x", "uid-a"}, {"kube-system/x", "c", "uid-b"}});
  EXPECT_THAT(answers["uid-a"].error, HasSubstr("DNS-1123"));
  EXPECT_THAT(answers["uid-b"].error, HasSubstr("DNS-1123"));
  EXPECT_EQ(lookups_, 0);
}

TEST_F(DraServiceTest, FailedWriteFailsTheClaimsOfTheCall) {
  auto service = Make();
  store_.fail_writes = true;
  auto answers = service->Prepare({Req("one")});
  EXPECT_THAT(answers["uid-one"].error, HasSubstr("cannot save the prepared state: disk full"));
  EXPECT_TRUE(answers["uid-one"].devices.empty());
  store_.fail_writes = false;
  EXPECT_EQ(service->Prepare({Req("one")})["uid-one"].error, "");
}

// A claim whose API read never ends fails at the deadline, with a message
// that says so; the claims beside it are prepared.
TEST_F(DraServiceTest, ClaimStuckOnTheApiServerFailsAtThePrepareDeadline) {
  prepare_timeout_ = std::chrono::milliseconds(100);
  claims_["stuck"] = Claim("stuck", {"pci-0102-00-00-0"});
  hanging_.insert("stuck");
  auto service = Make();
  auto answers = service->Prepare({Req("one"), Req("stuck")});
  EXPECT_EQ(answers["uid-one"].error, "");
  EXPECT_THAT(answers["uid-stuck"].error, HasSubstr("before the prepare deadline"));
  EXPECT_EQ(lookups_stopped_.load(), 1) << "the lookup was never told to give up";
  EXPECT_EQ(store_.All().size(), 1U);
}

// Kubelet's own deadline counts too: an earlier caller deadline wins over
// the configured timeout.
TEST_F(DraServiceTest, CallerDeadlineEndsThePrepareEarlier) {
  claims_["stuck"] = Claim("stuck", {"pci-0102-00-00-0"});
  hanging_.insert("stuck");
  auto service = Make();
  auto answers =
      service->Prepare({Req("stuck")}, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  EXPECT_THAT(answers["uid-stuck"].error, HasSubstr("before the prepare deadline"));
  EXPECT_EQ(lookups_stopped_.load(), 1);
}

// Every worker is held by stuck claims of another call: a later call's
// claims are answered by its own deadline (not started, kubelet retries)
// instead of waiting for the stuck ones.
TEST_F(DraServiceTest, ClaimsThatFoundNoFreeWorkerFailAtTheirDeadline) {
  workers_ = 1;
  claims_["stuck"] = Claim("stuck", {"pci-0102-00-00-0"});
  hanging_.insert("stuck");
  prepare_timeout_ = std::chrono::seconds(2);
  auto service = Make();
  std::thread stuck_call([&] { service->Prepare({Req("stuck")}); });
  ASSERT_TRUE([&] {
    for (int i = 0; i < 5000 && lookups_.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return lookups_.load() == 1;
  }());
  auto answers = service->Prepare({Req("one"), Req("two")}, std::chrono::steady_clock::now() +
                                                                std::chrono::milliseconds(50));
  EXPECT_EQ(lookups_stopped_.load(), 0) << "the later call waited for the stuck claim's deadline";
  stuck_call.join();
  EXPECT_THAT(answers["uid-one"].error, HasSubstr("not started before the prepare deadline"));
  EXPECT_THAT(answers["uid-two"].error, HasSubstr("not started before the prepare deadline"));
  EXPECT_EQ(lookups_.load(), 1) << "claims past their deadline must not reach the API server";
}

TEST_F(DraServiceTest, MissingDependenciesAreRejected) {
  EXPECT_THROW(DraService({}, {}, log_), std::invalid_argument);
}

// Two claims allocated the same netdev (two allocations prepared before
// either pod starts): the second is refused, naming the first, until the
// first is unprepared; an RDMA-only device may be in both.
TEST_F(DraServiceTest, ANetdevHeldByAPreparedClaimIsNotPreparedForAnother) {
  claims_["a"] = Claim("a", {"pci-0000-80-00-0", "pci-0101-00-00-0"}, {"pod-a"});
  claims_["b"] = Claim("b", {"pci-0000-80-00-0"}, {"pod-b"});
  claims_["c"] = Claim("c", {"pci-0101-00-00-0", "pci-0000-81-00-0"}, {"pod-c"});
  auto service = Make();
  EXPECT_EQ(service->Prepare({Req("a")}).at("uid-a").error, "");
  auto answers = service->Prepare({Req("b"), Req("c")});
  EXPECT_THAT(answers.at("uid-b").error, HasSubstr("device pci-0000-80-00-0 is a netdev that claim ml/a (uid uid-a) holds"));
  EXPECT_EQ(answers.at("uid-c").error, "");
  EXPECT_FALSE(store_.Get("uid-b"));
  // Retried (kubelet does): still refused; the holder's answer is unchanged.
  EXPECT_THAT(service->Prepare({Req("b")}).at("uid-b").error, HasSubstr("holds already"));
  EXPECT_EQ(service->Prepare({Req("a")}).at("uid-a").error, "");
  service->Unprepare({Req("a")});
  EXPECT_EQ(service->Prepare({Req("b")}).at("uid-b").error, "");
}

// Two instances of a rollout on one checkpoint: each sees the netdevs the
// claims the other prepared hold, and a claim the other unprepared holds
// nothing any more, whenever either started.
TEST_F(DraServiceTest, TwoInstancesOnOneCheckpointAgreeWhoHoldsANetdev) {
  claims_["a"] = Claim("a", {"pci-0000-80-00-0"}, {"pod-a"});
  claims_["b"] = Claim("b", {"pci-0000-80-00-0"}, {"pod-b"});
  auto old_one = Make();
  auto new_one = Make();
  EXPECT_EQ(old_one->Prepare({Req("a")}).at("uid-a").error, "");
  EXPECT_THAT(new_one->Prepare({Req("b")}).at("uid-b").error, HasSubstr("claim ml/a (uid uid-a) holds"));
  old_one->Unprepare({Req("a")});
  EXPECT_EQ(new_one->Prepare({Req("b")}).at("uid-b").error, "") << "the claim the other unprepared still held it";
  EXPECT_THAT(old_one->Prepare({Req("a")}).at("uid-a").error, HasSubstr("claim ml/b (uid uid-b) holds"));
}

// Both in one call: one wins. After a restart the holder is known from the
// checkpoint alone, and the other is still refused.
TEST_F(DraServiceTest, ANetdevIsPreparedForOneOfTwoClaimsInOneCallAndAfterARestart) {
  claims_["a"] = Claim("a", {"pci-0000-80-00-0"}, {"pod-a"});
  claims_["b"] = Claim("b", {"pci-0000-80-00-0"}, {"pod-b"});
  std::string winner, loser;
  {
    auto service = Make();
    auto answers = service->Prepare({Req("a"), Req("b")});
    ASSERT_EQ(answers.at("uid-a").error.empty() + answers.at("uid-b").error.empty(), 1);
    winner = answers.at("uid-a").error.empty() ? "a" : "b";
    loser = winner == "a" ? "b" : "a";
    EXPECT_THAT(answers.at("uid-" + loser).error, HasSubstr("claim ml/" + winner));
  }
  ASSERT_TRUE(store_.Get("uid-" + winner));
  ASSERT_FALSE(store_.Get("uid-" + loser));
  auto restarted = Make();
  EXPECT_THAT(restarted->Prepare({Req(loser)}).at("uid-" + loser).error, HasSubstr("claim ml/" + winner));
  restarted->Unprepare({Req(winner)});
  EXPECT_EQ(restarted->Prepare({Req(loser)}).at("uid-" + loser).error, "");
}

// A netdev held by one claim is also allocated, with adminAccess, to a
// monitoring claim: prepared without taking the netdev (no reservation, no
// move), so the holder keeps it and a third, ordinary claim is still refused
// naming the holder.
TEST_F(DraServiceTest, AdminAccessToAHeldNetdevIsPreparedBesideItsHolder) {
  claims_["holder"] = Claim("holder", {"pci-0000-80-00-0"}, {"pod-h"});
  claims_["admin"] = Claim("admin", {"pci-0000-80-00-0"}, {"pod-m", "pod-n"});
  claims_["admin"].results[0].admin_access = true;
  claims_["second"] = Claim("second", {"pci-0000-80-00-0"}, {"pod-s"});
  auto service = Make();
  ASSERT_EQ(service->Prepare({Req("holder")}).at("uid-holder").error, "");
  const auto answer = service->Prepare({Req("admin")}).at("uid-admin");
  ASSERT_EQ(answer.error, "");
  ASSERT_EQ(answer.devices.size(), 1U);
  EXPECT_EQ(answer.devices[0].device_name, "pci-0000-80-00-0");
  const auto plan = store_.Get("uid-admin");
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->netdevs.empty());
  EXPECT_TRUE(plan->device_nodes.empty());
  EXPECT_TRUE(plan->devices.at(0).admin_access);
  EXPECT_EQ(plan->env.at("DRANET_ADMIN_NETDEVS"), "gpu0rdma0");
  EXPECT_THAT(service->Prepare({Req("second")}).at("uid-second").error, HasSubstr("claim ml/holder"));
  // The monitoring claim goes and comes back; the holder is untouched.
  service->Unprepare({Req("admin")});
  EXPECT_EQ(service->Prepare({Req("admin")}).at("uid-admin").error, "");
  EXPECT_EQ(store_.Get("uid-holder")->netdevs.size(), 1U);
  // Restarted: the stored monitoring plan is answered again, never as a holder.
  auto restarted = Make();
  EXPECT_EQ(restarted->Prepare({Req("admin")}).at("uid-admin").error, "");
  EXPECT_THAT(restarted->Prepare({Req("second")}).at("uid-second").error, HasSubstr("claim ml/holder"));
}

// The allocation was rewritten under the same UID (another device, another
// pod): the stored plan would hand pod B the old device; refused instead.
TEST_F(DraServiceTest, AClaimWhoseAllocationChangedIsNotAnsweredFromItsStoredPlan) {
  claims_["a"] = Claim("a", {"pci-0000-80-00-0"}, {"pod-a"});
  auto service = Make();
  ASSERT_EQ(service->Prepare({Req("a")}).at("uid-a").error, "");
  claims_["a"].results[0].device = "pci-0000-81-00-0";
  claims_["a"].reserved_for = {{"", "pods", "pod-b", "pod-b"}};
  const auto answer = service->Prepare({Req("a")}).at("uid-a");
  EXPECT_THAT(answer.error, HasSubstr("allocation changed since it was prepared (prepared: pci-0000-80-00-0; "
                                      "allocated now: pci-0000-81-00-0)"));
  EXPECT_TRUE(answer.devices.empty());
  EXPECT_EQ(store_.Get("uid-a")->pod_uids, std::vector<std::string>{"pod-a"});  // the stored plan unchanged
}

// A first prepare with two pods is refused for a netdev claim; so is a
// later one that finds the claim reserved for two pods now.
TEST_F(DraServiceTest, ANetdevClaimReservedForASecondPodIsRefusedAtRePrepareToo) {
  claims_["a"] = Claim("a", {"pci-0000-80-00-0"}, {"pod-a", "pod-b"});
  auto service = Make();
  EXPECT_THAT(service->Prepare({Req("a")}).at("uid-a").error, HasSubstr("driver only supports one pod per claim, got 2"));
  claims_["a"].reserved_for.pop_back();
  ASSERT_EQ(service->Prepare({Req("a")}).at("uid-a").error, "");
  claims_["a"].reserved_for.push_back({"", "pods", "pod-b", "pod-b"});
  EXPECT_THAT(service->Prepare({Req("a")}).at("uid-a").error, HasSubstr("driver only supports one pod per claim, got 2"));
  EXPECT_EQ(store_.Get("uid-a")->pod_uids, std::vector<std::string>{"pod-a"});
}

kube::ResourceClaim DhcpClaim(const std::string& name, const std::vector<std::string>& devices) {
  auto claim = Claim(name, devices, {"pod-" + name});
  claim.configs.push_back(Opaque(R"({"interface":{"dhcp":true}})"));
  return claim;
}

// A DHCP server that never answers: the exchange is stopped at the call's
// deadline instead of running its own timeout per netdev (8 NICs at 5 s
// each would pass the kubelet's 45 s).
TEST_F(DraServiceTest, ADhcpExchangeIsStoppedAtThePrepareDeadline) {
  claims_["d"] = DhcpClaim("d", {"pci-0000-80-00-0", "pci-0000-81-00-0"});
  std::atomic<int> stopped{0}, asked{0};
  dhcp_ = [&](const std::string& if_name, std::stop_token stop) -> inject::DhcpLease {
    ++asked;
    if (WaitForStop(stop)) ++stopped;
    throw inject::InjectError("DHCP on " + if_name + ": stopped with no offer yet");
  };
  prepare_timeout_ = std::chrono::milliseconds(200);
  auto service = Make();
  const auto answer = service->Prepare({Req("d")}).at("uid-d");
  EXPECT_THAT(answer.error, HasSubstr("DHCP on gpu0rdma0: stopped"));
  EXPECT_EQ(asked.load(), 1);  // the second NIC is not started past the deadline
  EXPECT_EQ(stopped.load(), 1);
  EXPECT_FALSE(store_.Get("uid-d"));
  // Its netdevs are free again.
  claims_["e"] = Claim("e", {"pci-0000-80-00-0"}, {"pod-e"});
  EXPECT_EQ(service->Prepare({Req("e")}).at("uid-e").error, "");
}

// A DHCP stand-in that ignores the stop: the call is answered at its
// deadline anyway; the claim stays in flight (a retry joins it rather than
// starting a second exchange) and, when the exchange ends, its plan is
// saved and answers the next prepare.
TEST_F(DraServiceTest, APrepareStuckPastItsStopIsAnsweredAndFinishesOnItsOwn) {
  claims_["d"] = DhcpClaim("d", {"pci-0000-80-00-0"});
  std::latch release(1);
  std::atomic<int> asked{0};
  dhcp_ = [&](const std::string&, std::stop_token) {
    ++asked;
    release.wait();
    inject::DhcpLease lease;
    lease.address = "192.0.2.10/24";
    lease.server_id = "192.0.2.1";
    lease.client_mac = "02:00:00:00:00:00";
    return lease;
  };
  prepare_timeout_ = std::chrono::milliseconds(100);
  auto service = Make();
  EXPECT_THAT(service->Prepare({Req("d")}).at("uid-d").error, HasSubstr("not prepared by the deadline"));
  EXPECT_THAT(service->Prepare({Req("d")}).at("uid-d").error, HasSubstr("still being prepared by an earlier call"));
  EXPECT_EQ(asked.load(), 1);
  release.count_down();
  ASSERT_TRUE(Eventually([&] { return store_.Get("uid-d").has_value(); }));
  const auto answer = service->Prepare({Req("d")}).at("uid-d");
  EXPECT_EQ(answer.error, "");
  EXPECT_EQ(answer.devices.size(), 1U);
  EXPECT_EQ(asked.load(), 1);
}

// Releases at unprepare end at the deadline too: a DHCP release that waits
// for carrier is stopped, reported, and the claim is unprepared.
TEST_F(DraServiceTest, ReleasesAtUnprepareEndAtTheDeadline) {
  claims_["d"] = DhcpClaim("d", {"pci-0000-80-00-0"});
  auto service = Make();
  ASSERT_EQ(service->Prepare({Req("d")}).at("uid-d").error, "");
  std::atomic<int> stopped{0};
  release_ = [&](const std::string& if_name, std::stop_token stop) {
    if (WaitForStop(stop)) ++stopped;
    throw inject::InjectError("DHCP release on " + if_name + ": stopped");
  };
  EXPECT_EQ(service->Unprepare({Req("d")}, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)).at("uid-d"),
            "");
  EXPECT_EQ(stopped.load(), 1);
  EXPECT_FALSE(store_.Get("uid-d"));
  EXPECT_THAT(events_, ::testing::Contains(HasSubstr("d ClaimReleaseFailed releasing DHCP lease 192.0.2.10/24 of gpu0rdma0")));
}

// One call is stuck on a claim (its lookup blocks, its deadline far off); a
// second call for the same claim joins it and is answered by its own
// deadline, while the first still waits.
TEST_F(DraServiceTest, ASecondCallForAClaimAnotherIsStuckOnIsAnsweredByItsOwnDeadline) {
  auto service = Make();
  std::latch gate(1);
  gate_ = &gate;
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool opened = false;
  auto open_gate = [&] {
    std::lock_guard lock(gate_mu);
    if (!opened) gate.count_down();
    opened = true;
    gate_cv.notify_all();
  };
  std::atomic<bool> first_done{false};
  // The first call answers at its deadline (5 s) although its lookup is
  // still blocked; the lookup itself ends when the gate opens: after the
  // second call's answer, or at 8 s should the second wait for the first.
  std::thread first([&] {
    service->Prepare({Req("two")}, std::chrono::steady_clock::now() + std::chrono::seconds(5));
    first_done = true;
  });
  std::thread watchdog([&] {
    {
      std::unique_lock lock(gate_mu);
      gate_cv.wait_for(lock, std::chrono::seconds(8), [&] { return opened; });
    }
    open_gate();
  });
  ASSERT_TRUE(Eventually([&] { return lookups_.load() == 1; }));
  const auto second =
      service->Prepare({Req("two")}, std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
  EXPECT_FALSE(first_done.load()) << "the second call waited for the first one's answer";
  EXPECT_THAT(second.at("uid-two").error, HasSubstr("still being prepared by an earlier call"));
  EXPECT_EQ(lookups_.load(), 1) << "the second call prepared the claim again";
  open_gate();
  first.join();
  watchdog.join();
}

// What a profile provider was asked to release.
class ProfileRecorder : public ProfileProvider {
 public:
  std::string GetProfileConfig(const ProfileDevice&, const std::string&, const std::string&,
                               std::stop_token) override {
    return R"({"interface":{"mtu":4000}})";
  }
  void ReleaseProfileConfig(const ProfileDevice& device, const std::string& claim_uid, const std::string&,
                            std::stop_token) override {
    std::lock_guard lock(mu);
    released.push_back(claim_uid + " " + device.name);
  }
  std::string Describe() const override { return "recorder"; }
  std::mutex mu;
  std::vector<std::string> released;
};

// NodeUnprepareResources through the service gives back what prepare took
// beyond the host: the DHCP lease of one claim, the profile of another (a
// claim with a profile and no lease too).
TEST_F(DraServiceTest, UnprepareReleasesTheDhcpLeaseAndTheProfile) {
  auto profiles = std::make_shared<ProfileRecorder>();
  profiles_ = profiles;
  std::vector<std::string> dhcp_released;
  std::mutex dhcp_mu;
  release_ = [&](const std::string& if_name, std::stop_token) {
    std::lock_guard lock(dhcp_mu);
    dhcp_released.push_back(if_name);
  };
  claims_["d"] = DhcpClaim("d", {"pci-0000-80-00-0"});
  claims_["p"] = Claim("p", {"pci-0000-81-00-0"}, {"pod-p"});
  claims_["p"].configs.push_back(Opaque(R"({"profile":"gold"})"));
  auto service = Make();
  const auto answers = service->Prepare({Req("d"), Req("p")});
  ASSERT_EQ(answers.at("uid-d").error, "");
  ASSERT_EQ(answers.at("uid-p").error, "");
  ASSERT_EQ(store_.Get("uid-p")->profiles.size(), 1U);
  const auto errors = service->Unprepare({Req("d"), Req("p")});
  EXPECT_EQ(errors.at("uid-d"), "");
  EXPECT_EQ(errors.at("uid-p"), "");
  EXPECT_EQ(dhcp_released, std::vector<std::string>{"gpu0rdma0"});
  EXPECT_EQ(profiles->released, std::vector<std::string>{"uid-p pci-0000-81-00-0"});
  EXPECT_FALSE(store_.Get("uid-d"));
  EXPECT_FALSE(store_.Get("uid-p"));
}

}  // namespace
}  // namespace dranet::kubelet
