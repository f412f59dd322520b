// fake-apiserver: the fake Kubernetes API server as a process, for end-to-end tests of dranetd.
//   fake-apiserver [--port N] [--token T] [--node NAME]... [--bookmark-ms N]
//                  [--resource-versions v1,v1beta2,v1beta1 | none]
// Prints "listening on http://127.0.0.1:<port>" once ready, serves until SIGINT/SIGTERM.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "fake_apiserver.h"

int main(int argc, char** argv) {
  uint16_t port = 0;
  std::string token;
  std::vector<std::string> nodes;
  long bookmark_ms = -1;
  std::optional<std::vector<std::string>> resource_versions;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "fake-apiserver: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--port") port = static_cast<uint16_t>(std::stoi(value()));
    else if (arg == "--token") token = value();
    else if (arg == "--node") nodes.push_back(value());
    else if (arg == "--bookmark-ms") bookmark_ms = std::stol(value());
    else if (arg == "--resource-versions") {
      resource_versions.emplace();
      std::string list = value();
      for (std::size_t start = 0; list != "none" && start <= list.size();) {
        std::size_t end = std::min(list.find(',', start), list.size());
        if (end > start) resource_versions->push_back(list.substr(start, end - start));
        start = end + 1;
      }
    } else {
      std::cerr << "usage: fake-apiserver [--port N] [--token T] [--node NAME]... [--bookmark-ms N] "
                   "[--resource-versions v1,v1beta2,v1beta1|none]\n";
      return 2;
    }
  }
  // Block the stop signals before any thread starts, then wait for one synchronously.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  dranet::fakes::FakeApiServer server(port);
  if (!token.empty()) server.RequireToken(token);
  if (resource_versions) server.ServeResourceVersions(*resource_versions);
  if (bookmark_ms >= 0) server.SetBookmarkInterval(std::chrono::milliseconds(bookmark_ms));
  for (const auto& node : nodes)
    server.PutObject("/api/v1/nodes",
                     R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node + R"("}})");
  std::cout << "listening on " << server.url() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  return 0;
}
