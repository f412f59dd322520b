// nri_message_fuzz: the NRI Plugin service (core/nri/plugin_service.h) on
// arbitrary request payloads, and CreateContainer's adjustment
// (inject::BuildContainerEdits + nri::FillAdjustment) on arbitrary plans.
//
// byte 0, bit 0 clear — one runtime request:
//   byte 1 picks the method, the rest is the protobuf payload. Every pod
//   has the fixed prepared claims below, so CreateContainer always builds
//   an adjustment from the (fuzzed) container env.
// byte 0, bit 0 set — fuzzed plans (FuzzedDataProvider) and container env.
// Checked: Handle never throws; a malformed payload is INVALID_ARGUMENT and
// the rest answer with a payload that parses as the response type; the
// adjustment has one device and one cgroup rule per distinct container
// path, never overrides the container's own env, and lists env keys once,
// sorted.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "fuzz_support.h"
#include "inject/container_edits.h"
#include "nri/adjustment.h"
#include "nri/plugin_service.h"

namespace dranet {
namespace {

// Prepared claims that apply to every pod.
class EveryPodClaims : public state::PreparedClaims {
 public:
  explicit EveryPodClaims(std::vector<inject::ClaimPlan> plans) : plans_(std::move(plans)) {}
  void Put(const std::vector<inject::ClaimPlan>&) override {}
  void Remove(const std::vector<std::string>&) override {}
  std::optional<inject::ClaimPlan> Get(const std::string&) const override { return std::nullopt; }
  std::vector<inject::ClaimPlan> ForPod(const std::string&) const override { return plans_; }
  std::vector<inject::ClaimPlan> All() const override { return plans_; }

 private:
  std::vector<inject::ClaimPlan> plans_;
};

// Moves nothing; refuses a pod without a netns, as the real mover does.
class NoopApplier : public inject::PodNetnsApplier {
 public:
  void AttachNetdevs(const inject::PodSandboxRef& pod, const std::vector<inject::ClaimPlan>&) override {
    if (pod.netns_path.empty()) throw inject::InjectError("pod " + pod.Describe() + " has no netns");
  }
  void DetachNetdevs(const inject::PodSandboxRef&, const std::vector<inject::ClaimPlan>&) override {}
};

std::vector<inject::ClaimPlan> FixedPlans() {
  inject::ClaimPlan a;
  a.claim_uid = "uid-a";
  a.claim_namespace = "default";
  a.claim_name = "rdma";
  a.device_nodes = {{"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs0", 231, 192, "rw", 0666},
                    {"/dev/infiniband/rdma_cm", "/dev/infiniband/rdma_cm", 10, 58, "", 0666}};
  a.env = {{"NCCL_IB_HCA", "mlx5_0"}, {"PATH", "/should/not/override"}};
  a.mounts = {{"/sys/class/infiniband", "/sys/class/infiniband", {}}};
  a.netdevs.push_back({});
  a.netdevs.back().host_if_name = "gpu0rdma0";
  inject::ClaimPlan b = a;
  b.claim_uid = "uid-b";
  b.device_nodes[0].container_path = "/dev/infiniband/uverbs1";
  b.env = {{"NCCL_IB_HCA", "mlx5_1"}, {"UCX_NET_DEVICES", "mlx5_1:1"}};
  return {a, b};
}

template <typename Response>
void CheckReply(const nri::RpcResult& result, const std::string& method) {
  if (result.status.code == nri::RpcCode::kInvalidArgument) return;  // malformed request
  if (!result.status.ok()) return;  // e.g. RunPodSandbox refused: a status, not a crash
  Response response;
  fuzz::Check(response.ParseFromString(result.payload), method + ": reply does not parse");
}

void HandleOneRequest(FuzzedDataProvider& fdp) {
  static const char* const kMethods[] = {"Configure",        "Synchronize",   "Shutdown",
                                         "CreateContainer",  "RunPodSandbox", "StopPodSandbox",
                                         "RemovePodSandbox", "StateChange",   "UpdateContainer"};
  EveryPodClaims claims(FixedPlans());
  NoopApplier applier;
  nri::PluginService service(claims, applier, fuzz::DiscardingLogger());
  nri::RpcRequest request;
  request.service = nri::kPluginService;
  request.method = kMethods[fdp.ConsumeIntegralInRange<std::size_t>(0, std::size(kMethods) - 1)];
  request.payload = fdp.ConsumeRemainingBytesAsString();
  nri::RpcResult result = service.Handle(request);
  const std::string& m = request.method;
  if (m == "Configure") {
    CheckReply<nri::api::ConfigureResponse>(result, m);
  } else if (m == "Synchronize") {
    CheckReply<nri::api::SynchronizeResponse>(result, m);
  } else if (m == "CreateContainer") {
    CheckReply<nri::api::CreateContainerResponse>(result, m);
    nri::api::CreateContainerRequest in;
    nri::api::CreateContainerResponse out;
    if (result.status.ok() && in.ParseFromString(request.payload) && out.ParseFromString(result.payload)) {
      // The container's own env is never overridden.
      std::set<std::string> own_keys;
      for (const auto& kv : in.container().env()) own_keys.insert(kv.substr(0, kv.find('=')));
      for (const auto& kv : out.adjust().env()) {
        fuzz::Check(!own_keys.count(kv.key()), "CreateContainer overrides the container's env " + kv.key());
      }
    }
  } else if (m == "UpdateContainer") {
    fuzz::Check(result.status.code == nri::RpcCode::kUnimplemented, "unsubscribed method answered");
  } else {
    CheckReply<nri::api::Empty>(result, m);
  }
}

// Printable ASCII only: proto3 string fields must be UTF-8, and plans are
// built by our own code from validated input.
std::string Text(FuzzedDataProvider& fdp, std::size_t max_length) {
  std::string s = fdp.ConsumeRandomLengthString(max_length);
  for (char& c : s) c = static_cast<char>(0x20 + static_cast<unsigned char>(c) % 0x5f);
  return s;
}

void BuildFuzzedAdjustment(FuzzedDataProvider& fdp) {
  std::vector<inject::ClaimPlan> plans(fdp.ConsumeIntegralInRange<std::size_t>(0, 4));
  for (auto& plan : plans) {
    plan.claim_uid = Text(fdp, 16);
    for (std::size_t n = fdp.ConsumeIntegralInRange<std::size_t>(0, 4); n > 0; --n) {
      inject::DeviceNode node;
      node.container_path = Text(fdp, 24);
      node.host_path = node.container_path;
      node.major = fdp.ConsumeIntegral<uint32_t>();
      node.minor = fdp.ConsumeIntegral<uint32_t>();
      node.permissions = Text(fdp, 4);
      node.file_mode = fdp.ConsumeIntegral<uint32_t>();
      plan.device_nodes.push_back(node);
    }
    for (std::size_t n = fdp.ConsumeIntegralInRange<std::size_t>(0, 4); n > 0; --n) {
      std::string key = Text(fdp, 12);
      plan.env[key] = Text(fdp, 12);
    }
    for (std::size_t n = fdp.ConsumeIntegralInRange<std::size_t>(0, 2); n > 0; --n) {
      inject::Mount mount{Text(fdp, 16), Text(fdp, 16), {}};
      if (fdp.ConsumeBool()) mount.options.push_back(Text(fdp, 8));
      plan.mounts.push_back(mount);
    }
  }
  std::vector<std::string> container_env;
  for (std::size_t n = fdp.ConsumeIntegralInRange<std::size_t>(0, 6); n > 0; --n) {
    container_env.push_back(Text(fdp, 16));
  }

  const inject::ContainerEdits edits = inject::BuildContainerEdits(plans, container_env);
  nri::api::ContainerAdjustment adjust;
  nri::FillAdjustment(edits, &adjust);

  std::set<std::string> paths;
  for (const auto& plan : plans) {
    for (const auto& node : plan.device_nodes) paths.insert(node.container_path);
  }
  fuzz::Check(static_cast<std::size_t>(adjust.linux().devices_size()) == paths.size(),
              "adjustment: not one device per distinct container path");
  fuzz::Check(adjust.linux().resources().devices_size() == adjust.linux().devices_size(),
              "adjustment: device and cgroup rule counts differ");
  std::set<std::string> own_keys;
  for (const auto& kv : container_env) own_keys.insert(kv.substr(0, kv.find('=')));
  std::string previous;
  for (int i = 0; i < adjust.env_size(); ++i) {
    const std::string& key = adjust.env(i).key();
    fuzz::Check(!own_keys.count(key), "adjustment overrides the container's env");
    fuzz::Check(i == 0 || previous < key, "adjustment env not sorted or not unique");
    previous = key;
  }
  nri::api::ContainerAdjustment reparsed;
  fuzz::Check(reparsed.ParseFromString(adjust.SerializeAsString()), "adjustment does not round-trip");
}

}  // namespace
}  // namespace dranet

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 in a string field is a parse failure we handle; protobuf
  // would also log every one of them.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  FuzzedDataProvider fdp(data + 1, size - 1);
  if (data[0] & 1) {
    dranet::BuildFuzzedAdjustment(fdp);
  } else {
    dranet::HandleOneRequest(fdp);
  }
  return 0;
}
