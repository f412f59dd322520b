// One thread accepts; each connection gets its own thread that serves
// keep-alive requests synchronously. Stopping closes the listener and shuts
// every client socket down, which ends the blocking reads.
#include "fake_metadata_server.h"

#include <sys/socket.h>

#include <utility>  // before Boost.Asio, which uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <fstream>
#include <list>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace dranet::fakes {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
namespace fs = std::filesystem;

namespace {

std::optional<std::string> ReadFile(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool HasQueryParam(const std::string& query, const std::string& name) {
  std::size_t pos = 0;
  while (pos <= query.size()) {
    std::size_t end = query.find('&', pos);
    std::string item = query.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (item.compare(0, name.size() + 1, name + "=") == 0) return true;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return false;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Answer {
  int status = 200;
  std::string body;
  bool drop = false;
};

}  // namespace

class FakeMetadataServer::Impl {
 public:
  Impl(fs::path root, uint16_t port)
      : root_(std::move(root)), acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)) {
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
    // Wake the blocking accept with a connection of our own.
    try {
      asio::io_context wake_io;
      tcp::socket wake(wake_io);
      wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    } catch (...) {
    }
    accept_thread_.join();
    std::list<Connection> connections;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& c : connections_)
        if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
      connections.swap(connections_);
    }
    for (auto& c : connections) c.thread.join();
  }

  uint16_t port() const { return port_; }

  void InjectFault(MetadataFault fault) {
    std::lock_guard<std::mutex> lock(mu_);
    faults_.push_back(std::move(fault));
  }
  void ClearFaults() {
    std::lock_guard<std::mutex> lock(mu_);
    faults_.clear();
  }
  std::vector<MetadataRequest> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  void ClearRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.clear();
  }

 private:
  struct Connection {
    int fd = -1;
    std::thread thread;
  };

  void AcceptLoop() {
    for (;;) {
      tcp::socket socket(io_);
      beast::error_code ec;
      acceptor_.accept(socket, ec);
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      if (ec) continue;
      // Reap finished connections (their fd is already -1).
      for (auto it = connections_.begin(); it != connections_.end();) {
        if (it->fd < 0) {
          it->thread.join();
          it = connections_.erase(it);
        } else {
          ++it;
        }
      }
      auto* shared = new tcp::socket(std::move(socket));
      connections_.push_back(Connection{shared->native_handle(), {}});
      Connection* self = &connections_.back();
      self->thread = std::thread([this, shared, self] {
        Serve(*shared);
        {
          // Forget the fd before it is closed, so nobody shuts down a reused one.
          std::lock_guard<std::mutex> done(mu_);
          self->fd = -1;
        }
        delete shared;
      });
    }
  }

  // Returns the fault that applies to `target` (consuming one use), if any.
  std::optional<MetadataFault> TakeFault(const std::string& target) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = faults_.begin(); it != faults_.end(); ++it) {
      if (!it->path_contains.empty() && target.find(it->path_contains) == std::string::npos) continue;
      MetadataFault f = *it;
      if (it->times > 0 && --it->times == 0) faults_.erase(it);
      return f;
    }
    return std::nullopt;
  }

  // Sleeps up to `d`; false when the server is stopping.
  bool Wait(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return !stop_cv_.wait_for(lock, d, [this] { return stopping_; });
  }

  // Requests are recorded on arrival (so a client that gave up still
  // counts) and get their status once answered.
  std::size_t Record(const std::string& target) {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back({target, -1});
    return requests_.size() - 1;
  }
  void SetStatus(std::size_t index, int status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < requests_.size()) requests_[index].status = status;
  }

  void Serve(tcp::socket& socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      beast::error_code ec;
      http::read(socket, buffer, req, ec);
      if (ec) return;
      std::string target(req.target());
      std::size_t index = Record(target);
      Answer answer = Handle(req, target);
      SetStatus(index, answer.drop ? 0 : answer.status);
      if (answer.drop) {
        socket.shutdown(tcp::socket::shutdown_both, ec);
        return;
      }
      http::response<http::string_body> res{static_cast<http::status>(answer.status), req.version()};
      res.set(http::field::server, "fake-metadata");
      bool json = !answer.body.empty() && (answer.body[0] == '{' || answer.body[0] == '[');
      res.set(http::field::content_type, json ? "application/json; charset=utf-8" : "text/plain; charset=utf-8");
      if (target.rfind("/computeMetadata", 0) == 0) res.set("Metadata-Flavor", "Google");
      res.keep_alive(req.keep_alive());
      res.body() = std::move(answer.body);
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !res.keep_alive()) {
        socket.shutdown(tcp::socket::shutdown_both, ec);
        return;
      }
    }
  }

  Answer Handle(const http::request<http::string_body>& req, const std::string& target) {
    if (auto fault = TakeFault(target)) {
      if (fault->delay.count() > 0 && !Wait(fault->delay)) return {0, "", true};
      switch (fault->action) {
        case MetadataFault::Action::kServe: break;
        case MetadataFault::Action::kStatus: return {fault->status, "injected fault\n", false};
        case MetadataFault::Action::kDrop: return {0, "", true};
        case MetadataFault::Action::kGarbage: return {200, std::string("\x01\x02 not json {{{ ]]", 18), false};
        case MetadataFault::Action::kHuge: {
          std::string body = "{\"padding\":\"";
          body.append(fault->huge_bytes, 'x');
          body += "\"}";
          return {200, std::move(body), false};
        }
      }
    }
    std::string path = target.substr(0, target.find('?'));
    std::string query = target.find('?') == std::string::npos ? "" : target.substr(target.find('?') + 1);
    if (path == "/latest/api/token") return Token(req);
    if (req.method() != http::verb::get) return {405, "method not allowed\n", false};
    if (path.rfind("/latest/", 0) == 0) {
      // AWS IMDSv2 (tokens required) and Alibaba's hardened mode: a GET
      // without a token this server issued is 401.
      std::string aws(req["X-aws-ec2-metadata-token"]), ali(req["X-aliyun-ecs-metadata-token"]);
      if (aws != FakeMetadataServer::kAwsToken && ali != FakeMetadataServer::kAlibabaToken)
        return {401, "Unauthorized\n", false};
    } else if (path.rfind("/opc/", 0) == 0) {
      if (std::string(req["Authorization"]) != "Bearer Oracle")
        return {401, R"({"code": "NotAuthorized", "message": "Authorization header is required"})", false};
    } else if (path.rfind("/metadata", 0) == 0) {
      if (Lower(std::string(req["Metadata"])) != "true")
        return {400, R"({"error": "Bad request. Required metadata header not specified"})", false};
      if (req.find("X-Forwarded-For") != req.end())
        return {400, R"({"error": "Bad request. X-Forwarded-For header is not allowed"})", false};
      if (path != "/metadata/versions" && !HasQueryParam(query, "api-version"))
        return {400, R"({"error": "Bad request. api-version was not specified in the request"})", false};
    } else if (path.rfind("/computeMetadata", 0) == 0) {
      if (std::string(req["Metadata-Flavor"]) != "Google")
        return {403, "Missing required header \"Metadata-Flavor\": \"Google\"\n", false};
    }
    if (auto body = Lookup(path, query)) return {200, std::move(*body), false};
    return {404, "Not Found\n", false};
  }

  // PUT /latest/api/token: AWS IMDSv2 and Alibaba hand out a session token
  // to a PUT carrying the TTL header (AWS answers 400 without it; a GET is
  // 405 on AWS, kept so here).
  Answer Token(const http::request<http::string_body>& req) {
    if (req.method() != http::verb::put) return {405, "method not allowed\n", false};
    if (req.find("X-aws-ec2-metadata-token-ttl-seconds") != req.end())
      return {200, FakeMetadataServer::kAwsToken, false};
    if (req.find("X-aliyun-ecs-metadata-token-ttl-seconds") != req.end())
      return {200, FakeMetadataServer::kAlibabaToken, false};
    return {400, "Bad Request: missing token TTL header\n", false};
  }

  std::optional<std::string> Lookup(const std::string& path, const std::string& query) {
    if (path.empty() || path[0] != '/' || path.find("/../") != std::string::npos || path.find("/./") != std::string::npos ||
        (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0))
      return std::nullopt;
    fs::path file = root_ / path.substr(1);
    std::error_code ec;
    if (path.back() == '/' || fs::is_directory(file, ec)) file /= "index";
    if (!query.empty())
      if (auto body = ReadFile(file.string() + "@" + FakeMetadataServer::EncodeQuery(query))) return body;
    if (auto body = ReadFile(file)) return body;
    return JsonMember(path);
  }

  // /a/b/c/d where <root>/a/b is a JSON file: its member c.d.
  std::optional<std::string> JsonMember(const std::string& path) {
    std::vector<std::string> parts;
    std::stringstream ss(path.substr(1));
    for (std::string part; std::getline(ss, part, '/');)
      if (!part.empty()) parts.push_back(part);
    for (std::size_t n = parts.size(); n-- > 1;) {
      fs::path file = root_;
      for (std::size_t i = 0; i < n; ++i) file /= parts[i];
      auto text = ReadFile(file);
      if (!text) continue;
      rapidjson::Document doc;
      doc.Parse(text->c_str());
      if (doc.HasParseError()) return std::nullopt;
      const rapidjson::Value* v = &doc;
      for (std::size_t i = n; i < parts.size(); ++i) {
        if (!v->IsObject() || !v->HasMember(parts[i].c_str())) return std::nullopt;
        v = &(*v)[parts[i].c_str()];
      }
      if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
      rapidjson::StringBuffer out;
      rapidjson::Writer<rapidjson::StringBuffer> writer(out);
      v->Accept(writer);
      return std::string(out.GetString(), out.GetSize());
    }
    return std::nullopt;
  }

  fs::path root_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread accept_thread_;

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::list<Connection> connections_;
  std::vector<MetadataFault> faults_;
  std::vector<MetadataRequest> requests_;
};

FakeMetadataServer::FakeMetadataServer(fs::path root, uint16_t port)
    : impl_(std::make_unique<Impl>(std::move(root), port)) {}
FakeMetadataServer::~FakeMetadataServer() = default;

uint16_t FakeMetadataServer::port() const { return impl_->port(); }
std::string FakeMetadataServer::url() const { return "http://127.0.0.1:" + std::to_string(port()); }
void FakeMetadataServer::InjectFault(MetadataFault fault) { impl_->InjectFault(std::move(fault)); }
void FakeMetadataServer::ClearFaults() { impl_->ClearFaults(); }
std::vector<MetadataRequest> FakeMetadataServer::Requests() const { return impl_->Requests(); }
void FakeMetadataServer::ClearRequests() { impl_->ClearRequests(); }

std::size_t FakeMetadataServer::Hits(const std::string& path_contains) const {
  auto requests = Requests();
  return static_cast<std::size_t>(std::count_if(requests.begin(), requests.end(), [&](const MetadataRequest& r) {
    return path_contains.empty() || r.target.find(path_contains) != std::string::npos;
  }));
}

std::string FakeMetadataServer::EncodeQuery(const std::string& query) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : query) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '~' || c == '=' || c == ',' || c == '-') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

}  // namespace dranet::fakes
