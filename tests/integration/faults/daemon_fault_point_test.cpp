// kill -9 of the real dranetd at every fault point compiled into
// dranetd-faultpoints, each point twice: the node's workload (prepare, pods
// start and stop, unprepare) runs until the daemon SIGKILLs itself, a
// container starts while it is dead (the runtime proceeds without it), then
// the daemon restarts without the fault and the workload is replayed from the
// interrupted step and once more from the start. Checked at every kill: the
// checkpoint is never corrupt and holds each claim whole (as an
// uninterrupted run writes it) or not at all; the restarted daemon loaded it
// (it says so, and a replayed prepare answers from it instead of preparing
// again); the container started while it was down is reported; after the
// restart every answer — prepare, container edits, unprepare — equals the
// uninterrupted run's.
//
// Two nodes: GB300 (RDMA devices only) and, as root, A4 with real netdevs
// (fault_harness.h), where the kills include the netdev moves and every pod
// step's answer is what the pod's (and at Stop the node's) network namespace
// holds; after the run the node's netdevs must be exactly as before the
// first prepare — a down link down, every address and route back.
// The points × runs matrices are printed at the end (README material).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "fault_harness.h"
#include "base/fault_points.h"

namespace dranet::faults {
namespace {

namespace fs = std::filesystem;
constexpr int kRunsPerPoint = 2;

enum class NodeKind { kGb300, kA4 };

FaultNode::Options NodeOptions(NodeKind kind) {
  if (kind == NodeKind::kA4) return {DRANETD_FAULTPOINTS_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "a4-highgpu-8g", true};
  return {DRANETD_FAULTPOINTS_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false};
}

// Points only a netdev move reaches; a node without netdevs skips them.
bool IsNetdevPoint(const std::string& point) { return point.starts_with("netns-"); }

// How often the current daemon's log has a line matching `pattern`.
int LogLines(FaultNode& node, const std::string& pattern) {
  const std::regex regex(pattern);
  const std::string log = node.daemon().Log();
  return static_cast<int>(std::distance(std::sregex_iterator(log.begin(), log.end(), regex), std::sregex_iterator()));
}

// Every DRANET_FAULT_POINT("...") in the sources: a point added anywhere is
// covered here without editing this test.
std::vector<std::string> FaultPointsInSources() {
  static const std::regex kPoint(R"re(DRANET_FAULT_POINT\("([a-z0-9-]+)"\))re");
  std::set<std::string> points;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(DRANET_SOURCE_DIR) / "core")) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    if (entry.path().filename() == "fault_points.h") continue;  // the macro's own documentation
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), kPoint), end; it != end; ++it) points.insert((*it)[1].str());
  }
  return {points.begin(), points.end()};
}

// A container started without our edits was reported: an Event
// DevicesMissing on its pod, or a non-zero bypass counter (a metric name
// alone, present at zero, proves nothing).
bool BypassReported(FaultNode& node, int metrics_port) {
  static const std::regex kEvent(R"("reason":\s*"DevicesMissing")");
  static const std::regex kCounter(R"(\ndranet_bypassed_containers_total(\{[^}]*\})? [1-9])");
  for (const char* ns : {"ml", "default"})
    for (const auto& e : node.api().ListObjects(std::string("/api/v1/namespaces/") + ns + "/events"))
      if (std::regex_search(e, kEvent)) return true;
  return metrics_port != 0 && std::regex_search(LoopbackGet(metrics_port, "/metrics").body, kCounter);
}

// Failed assertions of the running test so far.
int FailuresSoFar() {
  const auto* result = ::testing::UnitTest::GetInstance()->current_test_info()->result();
  int n = 0;
  for (int i = 0; i < result->total_part_count(); ++i) n += result->GetTestPartResult(i).failed() ? 1 : 0;
  return n;
}

struct Reference {
  std::vector<StepAnswer> answers;  // one per kAllSteps
  std::map<std::string, inject::ClaimPlan> prepared;  // checkpoint after prepare, by claim name
};

// The uninterrupted run.
Reference RunReference(NodeKind kind) {
  Reference ref;
  FaultNode node(NodeOptions(kind));
  std::string why;
  if (!node.StartDaemon("", &why)) {
    ADD_FAILURE() << why;
    return ref;
  }
  for (Step step : kAllSteps) {
    ref.answers.push_back(node.Run(step));
    EXPECT_TRUE(ref.answers.back().ok) << StepName(step) << ": " << ref.answers.back().text;
    if (step == Step::kPrepare) {
      // A graceful stop keeps the checkpoint: read it as a restart would.
      auto status = node.daemon().Terminate();
      EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
      ref.prepared = node.ReadCheckpoint().by_claim_name;
      EXPECT_TRUE(node.StartDaemon("", &why)) << why;
    }
  }
  EXPECT_EQ(ref.prepared.size(), node.claims().size());
  EXPECT_EQ(ref.answers[static_cast<int>(Step::kCreateB)].text.find("dev "), 0U)
      << "pod B's container should receive device nodes:\n" << ref.answers[static_cast<int>(Step::kCreateB)].text;
  if (kind == NodeKind::kA4) {
    // The pods really held the netdevs, and the node got them back as they were.
    EXPECT_NE(ref.answers[static_cast<int>(Step::kRunPodB)].text.find(" up mtu "), std::string::npos)
        << "pod B should hold its netdevs:\n" << ref.answers[static_cast<int>(Step::kRunPodB)].text;
    EXPECT_NE(node.node_network_at_start().find(" down mtu "), std::string::npos) << node.node_network_at_start();
    EXPECT_EQ(node.NodeNetwork(), node.node_network_at_start());
  }
  node.daemon().Terminate();
  return ref;
}

struct MatrixRow {
  std::string point;
  int run = 0;
  std::string killed_during = "not reached";
  std::string checkpoint;  // what a restart found
  std::string bypass;      // the container started while dranetd was dead
  bool converged = false;
};

MatrixRow KillAndRestart(const std::string& point, int run, const Reference& ref, NodeKind kind) {
  MatrixRow row;
  row.point = point;
  row.run = run;
  const int failures_before = FailuresSoFar();
  SCOPED_TRACE("fault point " + point + ", run " + std::to_string(run));
  FaultNode node(NodeOptions(kind));
  std::string why;
  if (!node.StartDaemon(point, &why)) {
    ADD_FAILURE() << why;
    return row;
  }

  // 1. The workload until the kill.
  std::size_t killed_at = std::size(kAllSteps);
  for (std::size_t i = 0; i < std::size(kAllSteps); ++i) {
    StepAnswer got = node.Run(kAllSteps[i]);
    if (!got.ok) node.daemon().WaitExit();
    if (node.daemon().Exited()) {
      killed_at = i;
      break;
    }
    EXPECT_TRUE(got.ok) << StepName(kAllSteps[i]) << ": " << got.text;
    EXPECT_EQ(got.text, ref.answers[i].text) << StepName(kAllSteps[i]);
  }
  if (killed_at == std::size(kAllSteps)) {
    ADD_FAILURE() << "the workload never reached fault point " << point;
    return row;
  }
  row.killed_during = StepName(kAllSteps[killed_at]);
  auto status = node.daemon().WaitExit();
  EXPECT_TRUE(status && KilledBySigkill(*status))
      << "dranetd ended with " << (status ? DescribeWaitStatus(*status) : "no exit") << "\n" << node.daemon().Log();

  // 2. What a restart finds: never corrupt; each claim whole or absent.
  auto checkpoint = node.ReadCheckpoint();
  EXPECT_NE(checkpoint.outcome, state::LoadOutcome::kCorrupt);
  int whole = 0, half = 0;
  for (const auto& [name, plan] : checkpoint.by_claim_name) {
    auto it = ref.prepared.find(name);
    if (it != ref.prepared.end() && it->second == plan) {
      ++whole;
    } else {
      ++half;
      ADD_FAILURE() << "claim " << name << " is in the checkpoint but not as a full prepare wrote it";
    }
  }
  row.checkpoint = std::string(state::LoadOutcomeName(checkpoint.outcome)) + ", " + std::to_string(whole) +
                   " whole / " + std::to_string(half) + " partial";

  // 3. A container starts while dranetd is dead, in a pod already started
  // (none before the first RunPodSandbox or after the last Stop): the runtime
  // goes on without the plugin.
  const std::string started_pod = node.StartedPod();
  const auto bypassed_before = node.bypassed().size();
  if (!started_pod.empty()) {
    EXPECT_FALSE(node.CreateContainer(started_pod, "sidecar").ok);
    EXPECT_EQ(node.bypassed().size(), bypassed_before + 1);
  }

  // 4. Restart without the fault; the kubelet retries the interrupted step,
  // then the node runs everything once more. Answers equal the reference.
  if (!node.StartDaemon("", &why)) {
    ADD_FAILURE() << why << "\n" << node.daemon().Log();
    return row;
  }
  const int metrics_port = node.daemon().MetricsPort();
  // Restored from the checkpoint, not derived again.
  if (whole > 0) {
    EXPECT_EQ(LogLines(node, "\"state checkpoint loaded\".*claims=\"?" + std::to_string(whole) + "\"?(\\s|$)"), 1)
        << node.daemon().Log();
  }
  bool ok = true;
  for (std::size_t i = killed_at; i < std::size(kAllSteps); ++i) {
    StepAnswer got = node.Run(kAllSteps[i]);
    EXPECT_TRUE(got.ok) << "replayed " << StepName(kAllSteps[i]) << ": " << got.text;
    EXPECT_EQ(got.text, ref.answers[i].text) << "replayed " << StepName(kAllSteps[i]);
    ok = ok && got.ok && got.text == ref.answers[i].text;
  }
  if (killed_at == 0) {
    EXPECT_EQ(LogLines(node, "\"claim prepared\".*result=\"?already-prepared"), whole)
        << "a claim whole in the checkpoint was prepared again\n" << node.daemon().Log();
  }
  for (std::size_t i = 0; i < std::size(kAllSteps); ++i) {
    StepAnswer got = node.Run(kAllSteps[i]);
    EXPECT_EQ(got.text, ref.answers[i].text) << "second cycle, " << StepName(kAllSteps[i]);
    ok = ok && got.ok && got.text == ref.answers[i].text;
  }
  const bool reported = BypassReported(node, metrics_port);
  EXPECT_EQ(reported, !node.bypassed().empty())
      << node.bypassed().size() << " container(s) started while dranetd was down";
  row.bypass = node.bypassed().empty() ? "none (no pod running)"
                                       : std::to_string(node.bypassed().size()) + ", reported: " +
                                             (reported ? "yes" : "**no**");
  status = node.daemon().Terminate();
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  auto left = node.ReadCheckpoint();
  EXPECT_NE(left.outcome, state::LoadOutcome::kCorrupt);
  EXPECT_TRUE(left.by_claim_name.empty()) << "claims left prepared after a full unprepare";
  if (kind == NodeKind::kA4) {
    EXPECT_EQ(node.NodeNetwork(), node.node_network_at_start()) << "the node's netdevs are not as they were";
    EXPECT_EQ(node.PodNetwork("A") + node.PodNetwork("B"), "") << "a netdev stayed in a pod";
  }
  row.converged = ok && left.by_claim_name.empty() && left.outcome != state::LoadOutcome::kCorrupt &&
                  FailuresSoFar() == failures_before;
  return row;
}

void RunMatrix(NodeKind kind) {
  const auto points = FaultPointsInSources();
  ASSERT_FALSE(points.empty()) << "no DRANET_FAULT_POINT in " << DRANET_SOURCE_DIR;
  for (const auto& p : dranet::kFaultPoints)
    EXPECT_TRUE(std::find(points.begin(), points.end(), p) != points.end()) << p << " is listed but never placed";

  const Reference ref = RunReference(kind);
  ASSERT_FALSE(::testing::Test::HasFailure()) << "the uninterrupted run failed; nothing to compare with";

  std::vector<MatrixRow> rows;
  for (const auto& point : points) {
    if (kind == NodeKind::kGb300 && IsNetdevPoint(point)) continue;
    for (int run = 1; run <= kRunsPerPoint; ++run) rows.push_back(KillAndRestart(point, run, ref, kind));
  }

  std::ostringstream table;
  table << "\n" << (kind == NodeKind::kA4 ? "A4, real netdevs" : "GB300") << ":\n"
        << "| fault point | run | killed during | checkpoint at restart | started while down | converged |\n"
        << "|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    table << "| `" << r.point << "` | " << r.run << " | " << r.killed_during << " | " << r.checkpoint << " | "
          << r.bypass << " | " << (r.converged ? "yes" : "**no**") << " |\n";
  std::cout << table.str() << std::flush;
  for (const auto& r : rows) EXPECT_TRUE(r.converged) << r.point << " run " << r.run;
}

// A kubelet restarted with the daemon (or retrying a failed prepare) may call
// NodePrepareResources as soon as the plugin registers. dranetd registers
// only after its first discovery, so such a prepare answers exactly as
// before the restart (it once failed with "device ... is not in the
// inventory"). The matrix above waits for /readyz; this test is the race.
TEST(DaemonFaultPoints, PrepareRightAfterRestartAnswersAsBefore) {
  FaultNode node(NodeOptions(NodeKind::kGb300));
  std::string why;
  ASSERT_TRUE(node.StartDaemon("", &why)) << why;
  const StepAnswer before = node.Run(Step::kPrepare);
  ASSERT_TRUE(before.ok) << before.text;
  for (int restart = 1; restart <= 20; ++restart) {
    SCOPED_TRACE("restart " + std::to_string(restart));
    ::kill(node.daemon().pid(), SIGKILL);
    node.daemon().WaitExit();
    ASSERT_TRUE(node.StartDaemon("", &why, /*wait_ready=*/false)) << why;
    // What a kubelet does right after a restart: unprepare what it no longer
    // needs, prepare what it does (the window is tens of milliseconds).
    EXPECT_TRUE(node.Run(Step::kUnprepare).ok);
    const StepAnswer after = node.Run(Step::kPrepare);
    ASSERT_EQ(after.text, before.text) << node.daemon().Log();
  }
}

TEST(DaemonFaultPoints, EveryPointKilledTwiceConvergesAfterRestart) { RunMatrix(NodeKind::kGb300); }

// Netdevs moved into real pod network namespaces and back, killed at every
// point including the moves themselves.
TEST(DaemonFaultPoints, A4WithRealNetdevsKilledEverywhereConvergesAndRestoresTheNode) {
  if (const auto why = netlab::NetnsUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  RunMatrix(NodeKind::kA4);
}

}  // namespace
}  // namespace dranet::faults
