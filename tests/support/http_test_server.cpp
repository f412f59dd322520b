// tests/support/http_test_server.cpp — the accept loops and the per-connection
// request loop. Stopping wakes each blocking accept with a connection of our
// own and shuts every client socket down, which ends the blocking reads.
#include "http_test_server.h"

#include <sys/socket.h>

#include <utility>  // before Boost.Asio, which uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <list>
#include <mutex>
#include <optional>
#include <thread>

namespace dranet::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using unix_stream = asio::local::stream_protocol;

class HttpTestServer::Impl {
 public:
  Impl(HttpTestHandler handler, uint16_t port, std::filesystem::path unix_socket_path)
      : handler_(std::move(handler)),
        tcp_acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)),
        unix_socket_path_(std::move(unix_socket_path)) {
    port_ = tcp_acceptor_.local_endpoint().port();
    if (!unix_socket_path_.empty()) {
      std::error_code ignored;
      std::filesystem::remove(unix_socket_path_, ignored);
      unix_acceptor_.emplace(io_, unix_stream::endpoint(unix_socket_path_.string()));
    }
    tcp_accept_thread_ = std::thread([this] { AcceptLoop<tcp::socket>(tcp_acceptor_, false); });
    if (unix_acceptor_)
      unix_accept_thread_ = std::thread([this] { AcceptLoop<unix_stream::socket>(*unix_acceptor_, true); });
  }

  ~Impl() {
    stop_.request_stop();
    try {
      asio::io_context wake_io;
      tcp::socket wake(wake_io);
      wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    } catch (const std::exception&) {
    }
    tcp_accept_thread_.join();
    if (unix_acceptor_) {
      try {
        asio::io_context wake_io;
        unix_stream::socket wake(wake_io);
        wake.connect(unix_stream::endpoint(unix_socket_path_.string()));
      } catch (const std::exception&) {
      }
      unix_accept_thread_.join();
      std::error_code ignored;
      std::filesystem::remove(unix_socket_path_, ignored);
    }
    std::list<Connection> connections;
    {
      std::lock_guard lock(mu_);
      for (auto& c : connections_)
        if (!c.finished) ::shutdown(c.fd, SHUT_RDWR);
      connections.swap(connections_);
    }
    for (auto& c : connections) c.thread.join();
  }

  uint16_t port() const { return port_; }

 private:
  struct Connection {
    int fd = -1;
    bool finished = false;  // guarded by mu_; set before the socket closes, so a set flag
                            // means the fd may already be reused: never shut it down
    std::thread thread;
  };

  template <typename Socket, typename Acceptor>
  void AcceptLoop(Acceptor& acceptor, bool over_unix_socket) {
    for (;;) {
      auto socket = std::make_unique<Socket>(io_);
      beast::error_code ec;
      acceptor.accept(*socket, ec);
      if (stop_.stop_requested()) return;
      if (ec) continue;
      std::lock_guard lock(mu_);
      connections_.remove_if([](Connection& c) {
        if (!c.finished) return false;
        c.thread.join();
        return true;
      });
      Connection& connection = connections_.emplace_back();
      connection.fd = socket->native_handle();
      connection.thread = std::thread([this, &connection, over_unix_socket, socket = std::move(socket)]() mutable {
        Serve(*socket, over_unix_socket);
        {
          std::lock_guard done(mu_);
          connection.finished = true;
        }
        socket.reset();
      });
    }
  }

  template <typename Socket>
  void Serve(Socket& socket, bool over_unix_socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      beast::error_code ec;
      http::read(socket, buffer, req, ec);
      if (ec) return;
      HttpTestRequest request;
      request.method = std::string(req.method_string());
      request.target = std::string(req.target());
      request.host = std::string(req[http::field::host]);
      request.content_type = std::string(req[http::field::content_type]);
      request.body = std::move(req.body());
      request.over_unix_socket = over_unix_socket;
      HttpTestResponse answer = handler_(request, stop_.get_token());
      if (answer.status == 0 || stop_.stop_requested()) return;
      http::response<http::string_body> res{static_cast<http::status>(answer.status), req.version()};
      res.set(http::field::server, "dranet-http-test-server");
      res.set(http::field::content_type, answer.content_type);
      res.keep_alive(req.keep_alive());
      // 1xx, 204 and 304 answers carry no body (RFC 9110).
      const bool bodyless = answer.status < 200 || answer.status == 204 || answer.status == 304;
      if (!bodyless) res.body() = std::move(answer.body);
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !res.keep_alive()) return;
    }
  }

  HttpTestHandler handler_;
  asio::io_context io_;
  tcp::acceptor tcp_acceptor_;
  std::filesystem::path unix_socket_path_;
  std::optional<unix_stream::acceptor> unix_acceptor_;
  uint16_t port_ = 0;
  std::stop_source stop_;
  std::thread tcp_accept_thread_, unix_accept_thread_;

  std::mutex mu_;
  std::list<Connection> connections_;
};

HttpTestServer::HttpTestServer(HttpTestHandler handler, uint16_t port, std::filesystem::path unix_socket_path)
    : impl_(std::make_unique<Impl>(std::move(handler), port, std::move(unix_socket_path))) {}
HttpTestServer::~HttpTestServer() = default;

uint16_t HttpTestServer::port() const { return impl_->port(); }

}  // namespace dranet::testing
