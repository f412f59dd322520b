// fake-kubelet — registers DRA drivers the way kubelet does and calls them.
//
//   fake-kubelet --registry-dir /var/lib/kubelet/plugins_registry --driver dra.net
//                --api v1 --prepare ns/name/uid [--prepare ...] [--unprepare ns/name/uid ...]
//
// Waits for the driver to register (--wait-ms), then runs the prepares, then
// the unprepares, printing one JSON object per claim on stdout. Exit status:
// 0 all calls succeeded, 1 a claim answered with an error, 2 registration
// or a gRPC call failed.
#include <iostream>

#include <CLI/CLI.hpp>

#include "fake_kubelet.h"

namespace {

dranet::fakes::KubeletClaim ParseClaim(const std::string& text) {
  auto first = text.find('/');
  auto second = text.find('/', first == std::string::npos ? first : first + 1);
  if (first == std::string::npos || second == std::string::npos)
    throw std::invalid_argument("claim \"" + text + "\" is not namespace/name/uid");
  return {text.substr(0, first), text.substr(first + 1, second - first - 1), text.substr(second + 1)};
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fake-kubelet — a kubelet stand-in for DRA drivers"};
  std::string registry_dir, driver = "dra.net", api = "v1";
  std::vector<std::string> prepare, unprepare;
  int wait_ms = 10000;
  app.add_option("--registry-dir", registry_dir, "<kubelet-root>/plugins_registry")->required();
  app.add_option("--driver", driver, "Driver name to wait for");
  app.add_option("--api", api, "v1 or v1beta1")->check(CLI::IsMember({"v1", "v1beta1"}));
  app.add_option("--prepare", prepare, "Claims to prepare: namespace/name/uid");
  app.add_option("--unprepare", unprepare, "Claims to unprepare: namespace/name/uid");
  app.add_option("--wait-ms", wait_ms, "How long to wait for the driver to register");
  CLI11_PARSE(app, argc, argv);

  dranet::fakes::FakeKubelet kubelet({registry_dir});
  kubelet.Start();
  auto plugin = kubelet.WaitForPlugin(driver, std::chrono::milliseconds(wait_ms));
  if (!plugin) {
    std::cerr << "driver " << driver << " did not register within " << wait_ms << " ms\n";
    for (const auto& f : kubelet.failures()) std::cerr << "  " << f << "\n";
    return 2;
  }
  std::cout << "{\"registered\":" << Quote(plugin->name) << ",\"endpoint\":" << Quote(plugin->endpoint)
            << ",\"version\":" << Quote(plugin->chosen_version) << "}\n";
  const auto which = api == "v1" ? dranet::fakes::DraApi::kV1 : dranet::fakes::DraApi::kV1beta1;
  int rc = 0;
  try {
    std::vector<dranet::fakes::KubeletClaim> claims;
    for (const auto& c : prepare) claims.push_back(ParseClaim(c));
    if (!claims.empty()) {
      for (const auto& [uid, result] : kubelet.Prepare(driver, which, claims)) {
        std::cout << "{\"prepared\":" << Quote(uid) << ",\"error\":" << Quote(result.error) << ",\"devices\":[";
        for (std::size_t i = 0; i < result.devices.size(); ++i)
          std::cout << (i ? "," : "") << Quote(result.devices[i].pool_name + "/" + result.devices[i].device_name);
        std::cout << "]}\n";
        if (!result.error.empty()) rc = 1;
      }
    }
    claims.clear();
    for (const auto& c : unprepare) claims.push_back(ParseClaim(c));
    if (!claims.empty()) {
      for (const auto& [uid, error] : kubelet.Unprepare(driver, which, claims)) {
        std::cout << "{\"unprepared\":" << Quote(uid) << ",\"error\":" << Quote(error) << "}\n";
        if (!error.empty()) rc = 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return rc;
}
