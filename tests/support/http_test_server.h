#pragma once
// tests/support/http_test_server.h — a small HTTP/1.1 server for fakes: real
// sockets on 127.0.0.1 (an ephemeral port by default) and, when asked, on a
// unix socket, so clients are tested through their real HTTP stack.
//
// Boost.Beast, synchronous: one thread accepts per listener, each connection
// gets a thread that serves keep-alive requests in order and calls the
// handler for each. The handler decides everything else (routing, faults,
// recording); it may block, watching the stop token, which is requested when
// the server stops.
//
// Thread-safety: the handler runs on several threads at once. Destroying the
// server requests the stop token, closes every connection and joins every
// thread, so it returns only after every handler call has returned.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

namespace dranet::testing {

struct HttpTestRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path + query, e.g. "/health"
  std::string host;    // the Host header
  std::string content_type;
  std::string body;
  bool over_unix_socket = false;  // arrived on the unix socket rather than TCP
};

struct HttpTestResponse {
  int status = 200;  // 0: close the connection without answering
  std::string body;
  std::string content_type = "application/json";
};

using HttpTestHandler = std::function<HttpTestResponse(const HttpTestRequest& request, std::stop_token stop)>;

class HttpTestServer {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port) and, when
  // `unix_socket_path` is not empty, on that path (an existing file there is
  // replaced; the socket file is removed when the server stops). Throws
  // std::system_error when a listener cannot be opened.
  explicit HttpTestServer(HttpTestHandler handler, uint16_t port = 0, std::filesystem::path unix_socket_path = {});
  ~HttpTestServer();
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  uint16_t port() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dranet::testing
