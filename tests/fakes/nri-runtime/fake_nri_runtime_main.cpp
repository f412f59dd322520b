// fake-nri-runtime: plays containerd's NRI side for one plugin, runs the
// pods given on the command line through RunPodSandbox and CreateContainer,
// prints what each container would receive, then stops and removes them.
//
//   fake-nri-runtime --socket /tmp/nri.sock
//       --pod 3c7e...:default/train-0:/var/run/netns/pod0 [--pod ...]
//       [--state-change-only] [--timeout-ms 2000] [--keep-running] [--hold]
//
// --hold keeps the plugin connected after the pods, until SIGINT or SIGTERM:
// a runtime that stays up, for tests of a long-running daemon.
#include <CLI/CLI.hpp>

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <csignal>
#include <iostream>

#include "fake_nri_runtime.h"

namespace {

std::string Status(const dranet::nri::RpcStatus& s) {
  return s.ok() ? "OK" : "code=" + std::to_string(static_cast<int>(s.code)) + " " + s.message;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fake NRI runtime (containerd's side of NRI) for tests and demos"};
  dranet::testing::FakeNriRuntime::Options options;
  std::vector<std::string> pods;
  int timeout_ms = 2000;
  int accept_ms = 30000;
  bool keep = false;
  bool hold = false;
  app.add_option("--socket", options.socket_path, "NRI socket to listen on")->required();
  app.add_option("--pod", pods, "UID:NAMESPACE/NAME:NETNS_PATH (empty netns: hostNetwork)");
  app.add_flag("--state-change-only", options.state_change_only, "play a runtime with NRI <= 0.11");
  app.add_option("--timeout-ms", timeout_ms, "per-request deadline");
  app.add_option("--accept-timeout-ms", accept_ms, "how long to wait for the plugin");
  app.add_flag("--keep-running", keep, "do not stop the pods at the end");
  app.add_flag("--hold", hold, "stay connected to the plugin until SIGINT or SIGTERM");
  CLI11_PARSE(app, argc, argv);
  // Block the stop signals before any thread starts; --hold waits for one synchronously.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  if (hold) pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  options.request_timeout = std::chrono::milliseconds(timeout_ms);

  dranet::testing::FakeNriRuntime runtime(options);
  runtime.Listen();
  std::cout << "listening socket=" << options.socket_path << std::endl;
  if (!runtime.AcceptPlugin(std::chrono::milliseconds(accept_ms))) {
    std::cerr << "no plugin: " << runtime.last_error() << std::endl;
    return 1;
  }
  std::cout << "plugin registered name=" << runtime.plugin_index() << "-" << runtime.plugin_name()
            << " events=0x" << std::hex << runtime.subscribed_events() << std::dec << std::endl;

  std::vector<dranet::testing::api::PodSandbox> sandboxes;
  for (const auto& spec : pods) {
    const auto c1 = spec.find(':');
    const auto slash = spec.find('/', c1);
    const auto c2 = spec.find(':', slash);
    if (c1 == std::string::npos || slash == std::string::npos || c2 == std::string::npos) {
      std::cerr << "bad --pod " << spec << " (want UID:NAMESPACE/NAME:NETNS)" << std::endl;
      return 2;
    }
    sandboxes.push_back(dranet::testing::FakeNriRuntime::MakePod(
        spec.substr(0, c1), spec.substr(c1 + 1, slash - c1 - 1), spec.substr(slash + 1, c2 - slash - 1),
        spec.substr(c2 + 1)));
  }
  int failures = 0;
  for (const auto& pod : sandboxes) {
    const auto run = runtime.RunPodSandbox(pod);
    std::cout << "pod=" << pod.namespace_() << "/" << pod.name() << " RunPodSandbox " << Status(run) << std::endl;
    if (!run.ok()) {
      ++failures;
      continue;
    }
    dranet::testing::api::ContainerAdjustment adjust;
    const auto container = dranet::testing::FakeNriRuntime::MakeContainer(pod, "main", {});
    const auto created = runtime.CreateContainer(pod, container, &adjust);
    std::string json;
    google::protobuf::util::JsonPrintOptions print;
    (void)google::protobuf::util::MessageToJsonString(adjust, &json, print);
    std::cout << "pod=" << pod.namespace_() << "/" << pod.name() << " CreateContainer " << Status(created)
              << " adjustment=" << json << std::endl;
    if (!created.ok()) ++failures;
  }
  if (hold) {
    std::cout << "holding the plugin connection until SIGINT or SIGTERM" << std::endl;
    int received = 0;
    sigwait(&stop_signals, &received);
    std::cout << "signal " << received << ": plugin connected=" << (runtime.plugin_connected() ? "yes" : "no")
              << std::endl;
  }
  if (!keep) {
    for (const auto& pod : sandboxes) {
      std::cout << "pod=" << pod.namespace_() << "/" << pod.name() << " StopPodSandbox "
                << Status(runtime.StopPodSandbox(pod)) << " RemovePodSandbox "
                << Status(runtime.RemovePodSandbox(pod)) << std::endl;
    }
  }
  runtime.Shutdown();
  return failures == 0 ? 0 : 1;
}
