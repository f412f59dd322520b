#include "daemon/status_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <pthread.h>

#include <fcntl.h>
#include <sys/socket.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>

namespace dranet::daemon {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// Per connection: the whole request must arrive, and the reply leave, within
// this; a client that connects and stays silent is dropped after it.
constexpr auto kConnectionDeadline = std::chrono::seconds(2);
// Connections served at once; more are closed at accept (the probes of one
// kubelet need one or two).
constexpr int kMaxConnections = 64;

}  // namespace

struct StatusServer::Impl {
  std::atomic<int> connections{0};  // first: outlives the sessions freed with `io`
  std::atomic<std::uint64_t> refused{0};
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  tcp::endpoint endpoint;
  std::string address;
  std::atomic<bool> listening{false};
  std::map<std::string, HttpHandler> handlers;
  std::thread thread;
  Logger* logger = nullptr;

  HttpReply Answer(const http::request<http::empty_body>& req) const {
    std::string target(req.target());
    if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
    auto it = handlers.find(target);
    if (req.method() != http::verb::get && req.method() != http::verb::head)
      return {405, "text/plain; charset=utf-8", "method not allowed\n"};
    if (it == handlers.end()) return {404, "text/plain; charset=utf-8", "not found\n"};
    try {
      return it->second();
    } catch (const std::exception& e) {
      return {500, "text/plain; charset=utf-8", std::string("handler failed: ") + e.what() + "\n"};
    }
  }

  // One connection: read one request, write one reply, close; all of it
  // asynchronous on the server thread under one deadline.
  struct Session : std::enable_shared_from_this<Session> {
    Session(tcp::socket socket, Impl& owner) : stream(std::move(socket)), impl(owner) {}
    ~Session() { impl.connections.fetch_sub(1); }

    void Start() {
      parser.header_limit(8 * 1024);
      stream.expires_after(kConnectionDeadline);
      http::async_read(stream, buffer, parser,
                       [self = shared_from_this()](boost::system::error_code ec, std::size_t) { self->OnRead(ec); });
    }
    void OnRead(boost::system::error_code ec) {
      if (ec) return;  // closed, malformed or too slow: the stream closes with us
      const auto& req = parser.get();
      const HttpReply reply = impl.Answer(req);
      res = http::response<http::string_body>{static_cast<http::status>(reply.status), req.version()};
      res.set(http::field::content_type, reply.content_type);
      res.keep_alive(false);
      res.body() = req.method() == http::verb::head ? "" : reply.body;
      res.prepare_payload();
      http::async_write(stream, res, [self = shared_from_this()](boost::system::error_code, std::size_t) {
        boost::system::error_code ignored;
        self->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
      });
    }

    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    http::request_parser<http::empty_body> parser;
    http::response<http::string_body> res;
    Impl& impl;
  };

  // Opens, binds and listens; on the io thread once it runs.
  boost::system::error_code Listen() {
    boost::system::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec && endpoint.address().is_v6() && endpoint.address().is_unspecified())
      acceptor.set_option(asio::ip::v6_only(false), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      boost::system::error_code ignored;
      acceptor.close(ignored);
      return ec;
    }
    listening = true;
    Accept();
    return ec;
  }

  // Listens now or, while the port is in use, every second until it can.
  void ListenWhenFree() {
    if (listening) return;
    const auto ec = Listen();
    if (!ec) {
      logger->Info("serving metrics and health",
                   {{"address", address}, {"port", static_cast<int64_t>(acceptor.local_endpoint().port())}});
      return;
    }
    logger->Verbose(2, "status port not free yet; trying again in a second",
                    {{"address", address}, {"error", ec.message()}});
    retry.expires_after(std::chrono::seconds(1));
    retry.async_wait([this](boost::system::error_code wait_ec) {
      if (!wait_ec) ListenWhenFree();
    });
  }

  // Runs `work` on the io thread and waits for it.
  void OnIoThread(const std::function<void()>& work) {
    std::promise<void> done;
    asio::post(io, [&] {
      work();
      done.set_value();
    });
    done.get_future().wait();
  }

  void Accept() {
    acceptor.async_accept(asio::make_strand(io), [this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        if (connections.fetch_add(1) >= kMaxConnections) {
          connections.fetch_sub(1);
          refused.fetch_add(1);
          boost::system::error_code ignored;
          socket.close(ignored);
        } else {
          std::make_shared<Session>(std::move(socket), *this)->Start();
        }
      }
      Accept();
    });
  }
};

StatusServer::StatusServer(const std::string& address, std::map<std::string, HttpHandler> handlers,
                           Logger& logger, UniqueFd inherited, bool wait_for_port)
    : impl_(std::make_unique<Impl>()) {
  impl_->handlers = std::move(handlers);
  impl_->logger = &logger;
  if (address.empty()) return;
  auto colon = address.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--metrics-address \"" + address + "\": want host:port");
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned long port_number = 0;
  try {
    port_number = std::stoul(address.substr(colon + 1));
  } catch (...) {
    port_number = 70000;
  }
  if (port_number > 65535) throw std::runtime_error("--metrics-address \"" + address + "\": bad port");
  boost::system::error_code ec;
  auto ip = host.empty() ? asio::ip::address(asio::ip::address_v6::any()) : asio::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("--metrics-address \"" + address + "\": bad host: " + ec.message());
  impl_->endpoint = tcp::endpoint(ip, static_cast<uint16_t>(port_number));
  impl_->address = address;
  if (inherited.valid()) {
    sockaddr_storage bound{};
    socklen_t size = sizeof(bound);
    ::getsockname(inherited.get(), reinterpret_cast<sockaddr*>(&bound), &size);
    impl_->acceptor.assign(bound.ss_family == AF_INET ? tcp::v4() : tcp::v6(), inherited.get(), ec);
    if (ec) throw std::runtime_error("cannot serve the status socket handed over: " + ec.message());
    [[maybe_unused]] const int owned = inherited.Release();  // the acceptor owns it now
    impl_->listening = true;
    impl_->Accept();
    port_ = impl_->acceptor.local_endpoint().port();
    logger.Info("serving metrics and health", {{"address", address}, {"port", static_cast<int64_t>(port_)},
                                               {"from", "the instance before"}});
  } else if (ec = impl_->Listen(); !ec) {
    port_ = impl_->acceptor.local_endpoint().port();
    logger.Info("serving metrics and health", {{"address", address}, {"port", static_cast<int64_t>(port_)}});
  } else if (wait_for_port && ec == asio::error::address_in_use) {
    port_ = impl_->endpoint.port();
    logger.Warning("status port in use (an instance without hand-over still runs?); listening once it is free",
                   {{"address", address}});
    impl_->ListenWhenFree();
  } else {
    throw std::runtime_error("cannot listen on " + address + ": " + ec.message());
  }
  // Taken back (TakeBack) on the port it had, also when it was asked for 0.
  impl_->endpoint.port(port_);
  impl_->thread = std::thread([impl = impl_.get()] {
    // Runs until the destructor stops it, listening or not.
    auto work = asio::make_work_guard(impl->io);
    impl->io.run();
  });
  pthread_setname_np(impl_->thread.native_handle(), "status-http");
}

bool StatusServer::listening() const { return impl_->listening.load(); }

UniqueFd StatusServer::GiveAway() {
  if (!impl_->thread.joinable()) return {};
  UniqueFd given;
  impl_->OnIoThread([&] {
    impl_->retry.cancel();
    if (!impl_->acceptor.is_open() || !impl_->listening) return;
    given.Reset(::fcntl(impl_->acceptor.native_handle(), F_DUPFD_CLOEXEC, 0));
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);  // the socket stays open through `given`
    impl_->listening = false;
  });
  if (given.valid()) impl_->logger->Info("status port given to the successor", {{"port", static_cast<int64_t>(port_)}});
  return given;
}

void StatusServer::TakeBack() {
  if (!impl_->thread.joinable()) return;
  impl_->OnIoThread([&] { impl_->ListenWhenFree(); });
}

StatusServer::~StatusServer() {
  if (!impl_->thread.joinable()) return;
  // Never waits for a client: open connections are dropped with the server.
  impl_->io.stop();
  impl_->thread.join();
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
}

int StatusServer::open_connections() const { return impl_->connections.load(); }
std::uint64_t StatusServer::refused_connections() const { return impl_->refused.load(); }

}  // namespace dranet::daemon
