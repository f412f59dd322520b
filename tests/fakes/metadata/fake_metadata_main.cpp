// fake-metadata: the fake cloud metadata service as a process, for
// end-to-end runs of dranetd against a node snapshot.
//   fake-metadata --root DIR [--port N] [--delay-ms N] [--fault 500|404|drop|garbage|huge]
// --root is a snapshot's metadata/azure or metadata/gce folder. Prints
// "listening on http://127.0.0.1:<port>" once ready, serves until SIGINT/SIGTERM.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

#include "fake_metadata_server.h"

namespace {

int Usage() {
  std::cerr << "usage: fake-metadata --root DIR [--port N] [--delay-ms N] [--fault 500|404|drop|garbage|huge]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root, fault;
  long port = 0, delay_ms = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return Usage();
    std::string value = argv[++i];
    try {
      if (arg == "--root") root = value;
      else if (arg == "--port") port = std::stol(value);
      else if (arg == "--delay-ms") delay_ms = std::stol(value);
      else if (arg == "--fault") fault = value;
      else return Usage();
    } catch (const std::exception&) {
      return Usage();
    }
  }
  if (root.empty() || port < 0 || port > 65535 || delay_ms < 0) return Usage();
  dranet::fakes::MetadataFault f;
  f.delay = std::chrono::milliseconds(delay_ms);
  if (fault.empty()) f.action = dranet::fakes::MetadataFault::Action::kServe;
  else if (fault == "drop") f.action = dranet::fakes::MetadataFault::Action::kDrop;
  else if (fault == "garbage") f.action = dranet::fakes::MetadataFault::Action::kGarbage;
  else if (fault == "huge") f.action = dranet::fakes::MetadataFault::Action::kHuge;
  else if (fault.find_first_not_of("0123456789") == std::string::npos && fault.size() == 3) f.status = std::stoi(fault);
  else return Usage();

  // Block the stop signals before any thread starts, then wait for one.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  dranet::fakes::FakeMetadataServer server(root, static_cast<uint16_t>(port));
  if (!fault.empty() || delay_ms > 0) server.InjectFault(f);
  std::cout << "listening on " << server.url() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  return 0;
}
