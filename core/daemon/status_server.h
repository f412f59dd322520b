#pragma once
// core/daemon/status_server.h — the daemon's own HTTP endpoint
// (--metrics-address, default :9177): /metrics, /livez, /readyz, /healthz.
// Boost.Beast, asynchronous on one named thread ("status-http"): one request
// per connection, each connection under a 2 s deadline, at most 64 at once
// (more are closed at accept), so a silent or slow client never holds up the
// kubelet's probes, and stopping never waits for a client. Handlers run on
// that thread and must be fast.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/log.h"
#include "base/unique_fd.h"

namespace dranet::daemon {

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};
using HttpHandler = std::function<HttpReply()>;

class StatusServer {
 public:
  // `address` is "host:port", ":port" (all interfaces) or "" (disabled).
  // Throws std::runtime_error naming the address when it cannot listen,
  // except for a port in use with `wait_for_port`: then it listens once the
  // port is free, trying every second (listening() says when).
  // `inherited`: a listening socket another instance gave (HandoverServer),
  // served instead of binding one.
  StatusServer(const std::string& address, std::map<std::string, HttpHandler> handlers, Logger& logger,
               UniqueFd inherited = {}, bool wait_for_port = false);
  ~StatusServer();
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  // The bound port (useful with port 0 in tests).
  uint16_t port() const { return port_; }
  // Whether it accepts connections now.
  bool listening() const;
  // Stops accepting and returns a descriptor of the listening socket, still
  // open, for a successor to serve (invalid when not listening).
  UniqueFd GiveAway();
  // Listens again after GiveAway (the successor went away): at once when the
  // port is free, else every second until it is.
  void TakeBack();
  // Connections being served now, and those closed at accept because the
  // cap was reached (tests, metrics).
  int open_connections() const;
  std::uint64_t refused_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

}  // namespace dranet::daemon
