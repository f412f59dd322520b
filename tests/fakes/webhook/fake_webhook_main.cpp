// fake-webhook: the fake webhook profile provider as a process, for
// end-to-end runs of dranetd with --profile-provider=webhook.
//   fake-webhook [--port N] [--unix-socket PATH] [--no-profile-provider]
//                [--profile NAME=NETWORK_CONFIG_JSON]...
// Prints "listening on http://127.0.0.1:<port>" (and "listening on
// unix://<path>") once ready, serves until SIGINT/SIGTERM.
#include <csignal>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "fake_webhook.h"

namespace {

int Usage() {
  std::cerr << "usage: fake-webhook [--port N] [--unix-socket PATH] [--no-profile-provider] "
               "[--profile NAME=NETWORK_CONFIG_JSON]...\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  dranet::fakes::FakeWebhook::Options options;
  std::vector<std::pair<std::string, std::string>> profiles;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-profile-provider") {
      options.profile_provider = false;
      continue;
    }
    if (i + 1 >= argc) return Usage();
    const std::string value = argv[++i];
    if (arg == "--port") {
      try {
        const long port = std::stol(value);
        if (port < 0 || port > 65535) return Usage();
        options.port = static_cast<uint16_t>(port);
      } catch (const std::exception&) {
        return Usage();
      }
    } else if (arg == "--unix-socket") {
      options.unix_socket_path = value;
    } else if (arg == "--profile" && value.find('=') != std::string::npos) {
      profiles.emplace_back(value.substr(0, value.find('=')), value.substr(value.find('=') + 1));
    } else {
      return Usage();
    }
  }

  // Block the stop signals before any thread starts, then wait for one.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  dranet::fakes::FakeWebhook webhook(options);
  for (const auto& [name, config] : profiles) webhook.SetProfile(name, config);
  std::cout << "listening on " << webhook.url() << std::endl;
  if (!webhook.unix_url().empty()) std::cout << "listening on " << webhook.unix_url() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  return 0;
}
