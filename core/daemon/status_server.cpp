#include "daemon/status_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <pthread.h>

namespace dranet::daemon {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct StatusServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::map<std::string, HttpHandler> handlers;
  std::atomic<bool> stopping{false};
  std::thread thread;
  Logger* logger = nullptr;

  void Serve() {
    while (!stopping) {
      boost::system::error_code ec;
      tcp::socket socket(io);
      acceptor.accept(socket, ec);
      if (ec) {
        if (stopping) return;
        continue;
      }
      HandleOne(socket);
    }
  }

  void HandleOne(tcp::socket& socket) {
    boost::system::error_code ec;
    boost::beast::flat_buffer buffer;
    http::request_parser<http::empty_body> parser;
    parser.header_limit(8 * 1024);
    // A slow or silent client must not stall the probes: bound the read.
    timeval tv{2, 0};
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    http::read(socket, buffer, parser, ec);
    if (ec) return;
    const auto& req = parser.get();
    std::string target(req.target());
    if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
    HttpReply reply;
    auto it = handlers.find(target);
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      reply = {405, "text/plain; charset=utf-8", "method not allowed\n"};
    } else if (it == handlers.end()) {
      reply = {404, "text/plain; charset=utf-8", "not found\n"};
    } else {
      try {
        reply = it->second();
      } catch (const std::exception& e) {
        reply = {500, "text/plain; charset=utf-8", std::string("handler failed: ") + e.what() + "\n"};
      }
    }
    http::response<http::string_body> res{static_cast<http::status>(reply.status), req.version()};
    res.set(http::field::content_type, reply.content_type);
    res.keep_alive(false);
    res.body() = req.method() == http::verb::head ? "" : reply.body;
    res.prepare_payload();
    http::write(socket, res, ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
  }
};

StatusServer::StatusServer(const std::string& address, std::map<std::string, HttpHandler> handlers,
                           Logger& logger)
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
  tcp::endpoint endpoint(ip, static_cast<uint16_t>(port_number));
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec && ip.is_v6() && host.empty()) impl_->acceptor.set_option(asio::ip::v6_only(false), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(16, ec);
  if (ec) throw std::runtime_error("cannot listen on " + address + ": " + ec.message());
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->thread = std::thread([impl = impl_.get()] { impl->Serve(); });
  pthread_setname_np(impl_->thread.native_handle(), "status-http");
  logger.Info("serving metrics and health", {{"address", address}, {"port", static_cast<int64_t>(port_)}});
}

StatusServer::~StatusServer() {
  if (!impl_->thread.joinable()) return;
  impl_->stopping = true;
  boost::system::error_code ec;
  // Unblock accept(): shutting the listening socket down makes it return.
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  impl_->thread.join();
  impl_->acceptor.close(ec);
}

}  // namespace dranet::daemon
