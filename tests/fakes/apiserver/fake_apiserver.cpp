// tests/fakes/apiserver/fake_apiserver.cpp — see fake_apiserver.h.
//
// One thread accepts; each connection gets a thread that reads requests (keep-alive) and
// answers them, streaming watch events as HTTP chunks. The object store, the event history
// and the fault plan share one mutex; watchers wait on one condition variable.
#include "fake_apiserver.h"

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace dranet::fakes {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct ResourceInfo {
  const char* kind;
  bool namespaced;
};

// The resources the fake serves, by URL segment.
const std::map<std::string, ResourceInfo>& KnownResources() {
  static const std::map<std::string, ResourceInfo> resources = {
      {"resourceslices", {"ResourceSlice", false}}, {"resourceclaims", {"ResourceClaim", true}},
      {"deviceclasses", {"DeviceClass", false}},    {"nodes", {"Node", false}},
      {"events", {"Event", true}},                  {"pods", {"Pod", true}},
  };
  return resources;
}

// A request target split into its Kubernetes parts.
struct Target {
  std::string prefix;         // "/api/v1" or "/apis/resource.k8s.io/v1"
  std::string group_version;  // "v1" or "resource.k8s.io/v1"
  std::string namespace_name; // empty: cluster-scoped, or all namespaces
  std::string resource;
  std::string name;
  std::string subresource;
  std::map<std::string, std::string> query;
  std::string StoreKey() const { return prefix + "/" + resource; }
};

std::string UrlDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i] == '+' ? ' ' : text[i]);
    }
  }
  return out;
}

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::optional<Target> ParseTarget(std::string_view target) {
  Target parsed;
  std::string_view path = target;
  if (auto q = target.find('?'); q != std::string_view::npos) {
    path = target.substr(0, q);
    for (const auto& pair : Split(target.substr(q + 1), '&')) {
      auto eq = pair.find('=');
      if (eq == std::string::npos) parsed.query[pair] = "";
      else parsed.query[UrlDecode(pair.substr(0, eq))] = UrlDecode(pair.substr(eq + 1));
    }
  }
  std::vector<std::string> segments;
  for (auto& segment : Split(path, '/'))
    if (!segment.empty()) segments.push_back(std::move(segment));
  std::size_t i = 0;
  if (segments.size() >= 2 && segments[0] == "api") {
    parsed.group_version = segments[1];
    i = 2;
  } else if (segments.size() >= 3 && segments[0] == "apis") {
    parsed.group_version = segments[1] + "/" + segments[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  parsed.prefix = (i == 2 ? "/api/" : "/apis/") + parsed.group_version;
  if (segments.size() >= i + 3 && segments[i] == "namespaces") {
    parsed.namespace_name = segments[i + 1];
    i += 2;
  }
  if (i >= segments.size()) return std::nullopt;
  parsed.resource = segments[i];
  if (i + 1 < segments.size()) parsed.name = segments[i + 1];
  if (i + 2 < segments.size()) parsed.subresource = segments[i + 2];
  if (i + 3 < segments.size()) return std::nullopt;
  return parsed;
}

// "/apis/resource.k8s.io" (with an optional trailing slash or query).
bool IsResourceGroupPath(std::string_view target) {
  target = target.substr(0, target.find('?'));
  if (target.ends_with('/')) target.remove_suffix(1);
  return target == "/apis/resource.k8s.io";
}

std::string ToJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

const rapidjson::Value* Lookup(const rapidjson::Value& object, const std::string& dotted_path) {
  const rapidjson::Value* current = &object;
  for (const auto& part : Split(dotted_path, '.')) {
    if (!current->IsObject()) return nullptr;
    auto it = current->FindMember(part.c_str());
    if (it == current->MemberEnd()) return nullptr;
    current = &it->value;
  }
  return current;
}

std::string StringAt(const rapidjson::Value& object, const std::string& dotted_path) {
  const auto* value = Lookup(object, dotted_path);
  return value && value->IsString() ? value->GetString() : "";
}

// Field selectors: "a=b,c==d,e!=f" against dotted JSON paths.
bool MatchesFieldSelector(const rapidjson::Value& object, const std::string& selector) {
  if (selector.empty()) return true;
  for (const auto& term : Split(selector, ',')) {
    bool negate = term.find("!=") != std::string::npos;
    auto op = term.find(negate ? "!=" : "=");
    if (op == std::string::npos) return false;
    std::string field = term.substr(0, op);
    std::string value = term.substr(op + (negate ? 2 : 1));
    if (!value.empty() && value[0] == '=') value.erase(0, 1);
    bool equal = StringAt(object, field) == value;
    if (equal == negate) return false;
  }
  return true;
}

// Equality-based label selectors: "k=v", "k!=v", "k".
bool MatchesLabelSelector(const rapidjson::Value& object, const std::string& selector) {
  if (selector.empty()) return true;
  const auto* labels = Lookup(object, "metadata.labels");
  auto label = [labels](const std::string& key) -> std::optional<std::string> {
    if (!labels || !labels->IsObject() || !labels->HasMember(key.c_str())) return std::nullopt;
    return (*labels)[key.c_str()].GetString();
  };
  for (const auto& term : Split(selector, ',')) {
    bool negate = term.find("!=") != std::string::npos;
    auto op = term.find(negate ? "!=" : "=");
    if (op == std::string::npos) {
      if (!label(term)) return false;
      continue;
    }
    std::string value = term.substr(op + (negate ? 2 : 1));
    if (!value.empty() && value[0] == '=') value.erase(0, 1);
    bool equal = label(term.substr(0, op)) == value;
    if (equal == negate) return false;
  }
  return true;
}

std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("kind");
  writer.String("Status");
  writer.Key("apiVersion");
  writer.String("v1");
  writer.Key("metadata");
  writer.StartObject();
  writer.EndObject();
  writer.Key("status");
  writer.String("Failure");
  writer.Key("message");
  writer.String(message.c_str());
  writer.Key("reason");
  writer.String(reason.c_str());
  writer.Key("code");
  writer.Int(code);
  writer.EndObject();
  return buffer.GetString();
}

struct Answer {
  int status = 200;
  std::string body;
  int retry_after_seconds = -1;
  bool drop_connection = false;
  std::string content_type = "application/json";
};

// What kube-apiserver answers for a path no handler serves (a group version
// it does not serve): its last-resort handler's plain http.NotFound, not a
// Status object.
Answer PageNotFound() { return {404, "404 page not found\n", -1, false, "text/plain; charset=utf-8"}; }

Answer Failure(int code, const std::string& reason, const std::string& message) {
  return {code, StatusJson(code, reason, message), -1, false};
}

void SetMember(rapidjson::Value& object, const char* key, rapidjson::Value value,
               rapidjson::Document::AllocatorType& allocator) {
  if (auto it = object.FindMember(key); it != object.MemberEnd()) {
    it->value = std::move(value);
  } else {
    object.AddMember(rapidjson::Value(key, allocator), std::move(value), allocator);
  }
}

void SetString(rapidjson::Value& object, const char* key, const std::string& text,
               rapidjson::Document::AllocatorType& allocator) {
  SetMember(object, key, rapidjson::Value(text.c_str(), allocator), allocator);
}

}  // namespace

class FakeApiServer::Impl {
 public:
  explicit Impl(uint16_t port)
      : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port)) {
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    changed_.notify_all();
    // Wake the blocking accept() with a connection of our own.
    try {
      asio::io_context wake_io;
      tcp::socket wake(wake_io);
      wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    } catch (const std::exception&) {
    }
    accept_thread_.join();
    std::lock_guard lock(connections_mu_);
    for (auto& connection : connections_) ::shutdown(connection->socket.native_handle(), SHUT_RDWR);
    for (auto& connection : connections_) connection->thread.join();
    connections_.clear();
  }

  uint16_t port() const { return port_; }

  // --- configuration -------------------------------------------------------------------
  void RequireToken(const std::string& token) {
    std::lock_guard lock(mu_);
    required_token_ = token;
  }
  void InjectFault(FakeFault fault) {
    std::lock_guard lock(mu_);
    faults_.push_back(std::move(fault));
  }
  void ClearFaults() {
    std::lock_guard lock(mu_);
    faults_.clear();
  }
  void SetDown(bool down) {
    {
      std::lock_guard lock(mu_);
      down_ = down;
    }
    changed_.notify_all();
    if (down) {
      std::lock_guard lock(connections_mu_);
      for (auto& connection : connections_)
        if (!connection->finished) ::shutdown(connection->socket.native_handle(), SHUT_RDWR);
    }
  }
  void CompactHistory() {
    {
      std::lock_guard lock(mu_);
      history_.clear();
      compacted_through_ = resource_version_;
    }
    changed_.notify_all();
  }
  void ExpireWatches() {
    {
      std::lock_guard lock(mu_);
      ++watch_expiry_epoch_;
    }
    changed_.notify_all();
  }
  void SetBookmarkInterval(std::chrono::milliseconds interval) {
    std::lock_guard lock(mu_);
    bookmark_interval_ = interval;
  }
  void SetValidator(const std::string& resource, FakeValidator validator) {
    std::lock_guard lock(mu_);
    validators_[resource] = std::move(validator);
  }
  void DropDeviceTaints(bool drop) {
    std::lock_guard lock(mu_);
    drop_device_taints_ = drop;
  }
  void DropConsumableCapacity(bool drop) {
    std::lock_guard lock(mu_);
    drop_consumable_capacity_ = drop;
  }
  void SetServerVersion(std::string git_version) {
    std::lock_guard lock(mu_);
    server_version_ = std::move(git_version);
  }

  // GET /version: "v1.37.2" as {"major":"1","minor":"37","gitVersion":"v1.37.2",…}.
  Answer VersionLocked() const {
    const auto dot = server_version_.find('.');
    const auto second = server_version_.find('.', dot + 1);
    const std::string major = dot == std::string::npos ? "" : server_version_.substr(1, dot - 1);
    const std::string minor = dot == std::string::npos ? "" : server_version_.substr(dot + 1, second - dot - 1);
    return {200, R"({"major":")" + major + R"(","minor":")" + minor + R"(","gitVersion":")" + server_version_ +
                     R"(","platform":"linux/amd64"})",
            -1, false};
  }

  std::size_t AcceptedConnections() const { return accepted_.load(); }

  std::vector<RecordedRequest> Requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  void ClearRequests() {
    std::lock_guard lock(mu_);
    requests_.clear();
  }

  // --- direct store access ---------------------------------------------------------------
  std::string PutObject(const std::string& collection, const std::string& object_json) {
    auto target = ParseTarget(collection);
    if (!target) throw std::invalid_argument("not a collection path: " + collection);
    std::lock_guard lock(mu_);
    rapidjson::Document object;
    object.Parse(object_json.c_str());
    if (object.HasParseError() || !object.IsObject())
      throw std::invalid_argument("object is not JSON");
    std::string name = StringAt(object, "metadata.name");
    auto& bucket = objects_[target->StoreKey()];
    auto key = target->namespace_name + "/" + name;
    bool exists = bucket.count(key) != 0;
    Stamp(object, *target, exists ? StringAt(ParseStored(bucket[key]), "metadata.uid") : "");
    std::string stored = ToJson(object);
    bucket[key] = stored;
    Record(target->StoreKey(), target->namespace_name, exists ? "MODIFIED" : "ADDED", stored);
    return stored;
  }
  void ServeResourceVersions(std::vector<std::string> versions) {
    std::lock_guard lock(mu_);
    resource_versions_ = std::move(versions);
  }
  std::optional<std::string> GetObject(const std::string& collection, const std::string& name) const {
    auto target = ParseTarget(collection);
    if (!target) return std::nullopt;
    std::lock_guard lock(mu_);
    auto bucket = objects_.find(target->StoreKey());
    if (bucket == objects_.end()) return std::nullopt;
    auto it = bucket->second.find(target->namespace_name + "/" + name);
    if (it == bucket->second.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> ListObjects(const std::string& collection) const {
    std::vector<std::string> out;
    auto target = ParseTarget(collection);
    if (!target) return out;
    std::lock_guard lock(mu_);
    auto bucket = objects_.find(target->StoreKey());
    if (bucket == objects_.end()) return out;
    for (const auto& [key, json] : bucket->second)
      if (target->namespace_name.empty() || key.starts_with(target->namespace_name + "/"))
        out.push_back(json);
    return out;
  }
  bool DeleteObject(const std::string& collection, const std::string& name) {
    auto target = ParseTarget(collection);
    if (!target) return false;
    std::lock_guard lock(mu_);
    return EraseLocked(*target, target->namespace_name + "/" + name).has_value();
  }

 private:
  struct Connection {
    explicit Connection(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    std::thread thread;
    std::atomic<bool> finished{false};
  };
  struct HistoryEntry {
    uint64_t resource_version;
    std::string store_key;
    std::string namespace_name;
    std::string type;
    std::string object_json;
  };

  static rapidjson::Document ParseStored(const std::string& json) {
    rapidjson::Document document;
    document.Parse(json.c_str());
    return document;
  }

  void AcceptLoop() {
    while (true) {
      tcp::socket socket(io_);
      beast::error_code ec;
      acceptor_.accept(socket, ec);
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        if (down_ || ec) continue;  // the socket closes as it goes out of scope
      }
      std::lock_guard lock(connections_mu_);
      // Reap connections that ended.
      for (auto it = connections_.begin(); it != connections_.end();) {
        if ((*it)->finished) {
          (*it)->thread.join();
          it = connections_.erase(it);
        } else {
          ++it;
        }
      }
      ++accepted_;
      auto connection = std::make_unique<Connection>(std::move(socket));
      Connection* raw = connection.get();
      connection->thread = std::thread([this, raw] {
        Serve(raw->socket);
        beast::error_code ignored;
        raw->socket.shutdown(tcp::socket::shutdown_both, ignored);
        raw->finished = true;
      });
      connections_.push_back(std::move(connection));
    }
  }

  void Serve(tcp::socket& socket) {
    beast::flat_buffer buffer;
    while (true) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64 * 1024 * 1024);
      beast::error_code ec;
      http::read(socket, buffer, parser, ec);
      if (ec) return;
      auto request = parser.release();
      {
        std::lock_guard lock(mu_);
        if (down_ || stopping_) return;
      }
      if (!Handle(socket, request)) return;
    }
  }

  // Serves one request; false when the connection must close.
  bool Handle(tcp::socket& socket, const http::request<http::string_body>& request) {
    std::string method(request.method_string());
    std::string target_text(request.target());
    std::optional<FakeFault> fault = TakeFault(method, target_text);
    if (fault && fault->delay.count() > 0) {
      std::unique_lock lock(mu_);
      changed_.wait_for(lock, fault->delay, [this] { return stopping_ || down_; });
    }
    Answer answer;
    if (fault && fault->status == 0) {
      Log(method, target_text, 0);
      return false;
    }
    if (fault && fault->status > 0) {
      answer = Failure(fault->status, fault->status == 429 ? "TooManyRequests" : "InternalError",
                       "injected fault");
      answer.retry_after_seconds = fault->retry_after_seconds;
    } else if (!Authorized(request)) {
      answer = Failure(401, "Unauthorized", "Unauthorized");
    } else if (method == "GET" && IsResourceGroupPath(target_text)) {
      std::lock_guard lock(mu_);
      answer = ResourceGroupLocked();
    } else if (method == "GET" && target_text == "/version") {
      std::lock_guard lock(mu_);
      answer = VersionLocked();
    } else {
      auto target = ParseTarget(target_text);
      bool served = true;
      if (target) {
        std::lock_guard lock(mu_);
        served = ServesLocked(target->group_version);
      }
      if (target && !served) {
        answer = PageNotFound();
      } else if (!target || !KnownResources().count(target->resource)) {
        answer = Failure(404, "NotFound", "the server could not find the requested resource");
      } else if (method == "GET" && target->name.empty() && target->query["watch"] == "true") {
        return ServeWatch(socket, request, *target);
      } else {
        std::string content_type(request[http::field::content_type]);
        answer = Route(method, *target, request.body(), content_type);
      }
    }
    Log(method, target_text, answer.status);
    http::response<http::string_body> response{static_cast<http::status>(answer.status),
                                               request.version()};
    response.set(http::field::content_type, answer.content_type);
    if (answer.retry_after_seconds >= 0)
      response.set(http::field::retry_after, std::to_string(answer.retry_after_seconds));
    response.keep_alive(request.keep_alive());
    response.body() = std::move(answer.body);
    response.prepare_payload();
    beast::error_code ec;
    http::write(socket, response, ec);
    return !ec && request.keep_alive();
  }

  std::optional<FakeFault> TakeFault(const std::string& method, const std::string& target) {
    std::lock_guard lock(mu_);
    for (auto it = faults_.begin(); it != faults_.end(); ++it) {
      if (!it->method.empty() && it->method != method) continue;
      if (!it->path_contains.empty() && target.find(it->path_contains) == std::string::npos) continue;
      FakeFault fault = *it;
      if (it->times > 0 && --it->times == 0) faults_.erase(it);
      return fault;
    }
    return std::nullopt;
  }

  bool Authorized(const http::request<http::string_body>& request) {
    std::lock_guard lock(mu_);
    if (required_token_.empty()) return true;
    return request[http::field::authorization] == "Bearer " + required_token_;
  }

  void Log(const std::string& method, const std::string& target, int status) {
    std::lock_guard lock(mu_);
    requests_.push_back({method, target, status});
  }

  Answer Route(const std::string& method, const Target& target, const std::string& body,
               const std::string& content_type) {
    std::lock_guard lock(mu_);
    if (method == "GET" && !target.name.empty()) return GetLocked(target);
    if (method == "GET") return ListLocked(target);
    if (method == "POST" && target.name.empty()) return CreateLocked(target, body);
    if (method == "PUT" && !target.name.empty()) return UpdateLocked(target, body);
    if (method == "DELETE" && !target.name.empty()) return DeleteLocked(target, body);
    if (method == "DELETE") return DeleteCollectionLocked(target);
    if (method == "PATCH" && target.subresource == "status" && target.resource == "resourceclaims")
      return ApplyClaimStatusLocked(target, body, content_type);
    return Failure(405, "MethodNotAllowed", method + " is not supported on this path");
  }

  std::string Kind(const Target& target) const { return KnownResources().at(target.resource).kind; }

  // Fills server-owned metadata: uid (kept across updates), resourceVersion, namespace.
  void Stamp(rapidjson::Document& object, const Target& target, const std::string& existing_uid) {
    auto& allocator = object.GetAllocator();
    if (!object.HasMember("metadata")) object.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), allocator);
    auto& metadata = object["metadata"];
    SetString(object, "apiVersion", target.group_version, allocator);
    SetString(object, "kind", Kind(target), allocator);
    std::string uid = existing_uid;
    if (uid.empty()) {
      char buffer[48];
      std::snprintf(buffer, sizeof buffer, "00000000-0000-4000-8000-%012llx",
                    static_cast<unsigned long long>(++uid_counter_));
      uid = buffer;
    }
    SetString(metadata, "uid", uid, allocator);
    SetString(metadata, "resourceVersion", std::to_string(++resource_version_), allocator);
    if (!target.namespace_name.empty())
      SetString(metadata, "namespace", target.namespace_name, allocator);
    if (!metadata.HasMember("creationTimestamp"))
      SetString(metadata, "creationTimestamp", "2025-01-01T00:00:00Z", allocator);
  }

  void Record(const std::string& store_key, const std::string& namespace_name, const char* type,
              const std::string& object_json) {
    history_.push_back({resource_version_, store_key, namespace_name, type, object_json});
    // Bounded history, like etcd compaction.
    while (history_.size() > 50'000) {
      compacted_through_ = history_.front().resource_version;
      history_.pop_front();
    }
    changed_.notify_all();
  }


  bool ServesLocked(const std::string& group_version) const {
    constexpr std::string_view kGroup = "resource.k8s.io/";
    if (!group_version.starts_with(kGroup)) return true;
    const std::string version = group_version.substr(kGroup.size());
    return std::find(resource_versions_.begin(), resource_versions_.end(), version) != resource_versions_.end();
  }

  // GET /apis/resource.k8s.io: the APIGroup discovery document.
  Answer ResourceGroupLocked() const {
    if (resource_versions_.empty())
      return Failure(404, "NotFound", "the server could not find the requested resource");
    rapidjson::Document group(rapidjson::kObjectType);
    auto& allocator = group.GetAllocator();
    SetString(group, "kind", "APIGroup", allocator);
    SetString(group, "apiVersion", "v1", allocator);
    SetString(group, "name", "resource.k8s.io", allocator);
    rapidjson::Value versions(rapidjson::kArrayType);
    for (const auto& version : resource_versions_) {
      rapidjson::Value entry(rapidjson::kObjectType);
      SetString(entry, "groupVersion", "resource.k8s.io/" + version, allocator);
      SetString(entry, "version", version, allocator);
      versions.PushBack(entry, allocator);
    }
    rapidjson::Value preferred(versions[0], allocator);
    group.AddMember("versions", versions, allocator);
    group.AddMember("preferredVersion", preferred, allocator);
    return {200, ToJson(group), -1, false};
  }

  // What the API server's decoding and validation say about the shape of a written object
  // in `target`'s version; nullopt when it is fine.
  static std::optional<Answer> CheckShape(const Target& target, const rapidjson::Value& object) {
    const std::string sent = StringAt(object, "apiVersion");
    if (!sent.empty() && sent != target.group_version)
      return Failure(400, "BadRequest", "the API version in the data (" + sent +
                                            ") does not match the expected API version (" + target.group_version + ")");
    if (target.resource != "resourceslices") return std::nullopt;
    const auto* devices = Lookup(object, "spec.devices");
    if (devices == nullptr || !devices->IsArray()) return std::nullopt;
    const bool v1beta1 = target.group_version == "resource.k8s.io/v1beta1";
    const bool lists = target.group_version == "resource.k8s.io/v1";
    auto unknown = [](const std::string& field) {
      return Failure(400, "BadRequest", "strict decoding error: unknown field \"" + field + "\"");
    };
    for (rapidjson::SizeType i = 0; i < devices->Size(); ++i) {
      const auto& device = (*devices)[i];
      if (!device.IsObject()) continue;
      const std::string at = "spec.devices[" + std::to_string(i) + "]";
      const rapidjson::Value* fields = &device;
      if (v1beta1) {
        for (const auto& member : device.GetObject())
          if (std::string_view(member.name.GetString()) != "name" && std::string_view(member.name.GetString()) != "basic")
            return unknown(at + "." + member.name.GetString());
        if (!device.HasMember("basic") || !device["basic"].IsObject())
          return Failure(422, "Invalid", "ResourceSlice.resource.k8s.io is invalid: " + at + ".basic: Required value");
        fields = &device["basic"];
      } else if (device.HasMember("basic")) {
        return unknown(at + ".basic");
      }
      if (!fields->HasMember("attributes") || !(*fields)["attributes"].IsObject() || lists) continue;
      for (const auto& attribute : (*fields)["attributes"].GetObject()) {
        if (!attribute.value.IsObject()) continue;
        for (const auto& kind : attribute.value.GetObject()) {
          const std::string_view name = kind.name.GetString();
          if (name != "int" && name != "bool" && name != "string" && name != "version")
            return unknown(at + (v1beta1 ? ".basic" : "") + ".attributes." + attribute.name.GetString() + "." +
                           std::string(name));
        }
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> ValidateLocked(const Target& target, const std::string& body) {
    auto it = validators_.find(target.resource);
    if (it == validators_.end()) return std::nullopt;
    std::string problem = it->second(body);
    if (problem.empty()) return std::nullopt;
    return problem;
  }

  Answer GetLocked(const Target& target) {
    auto bucket = objects_.find(target.StoreKey());
    if (bucket != objects_.end()) {
      auto it = bucket->second.find(target.namespace_name + "/" + target.name);
      if (it != bucket->second.end()) return {200, it->second, -1, false};
    }
    return Failure(404, "NotFound", target.resource + " \"" + target.name + "\" not found");
  }

  Answer ListLocked(const Target& target) {
    auto query = target.query;
    const std::string& rv = query["resourceVersion"];
    if (!rv.empty() && rv != "0" && std::stoull(rv) < compacted_through_)
      return Failure(410, "Expired", "too old resource version: " + rv);
    rapidjson::Document list(rapidjson::kObjectType);
    auto& allocator = list.GetAllocator();
    SetString(list, "apiVersion", target.group_version, allocator);
    SetString(list, "kind", Kind(target) + "List", allocator);
    rapidjson::Value metadata(rapidjson::kObjectType);
    SetString(metadata, "resourceVersion", std::to_string(resource_version_), allocator);
    list.AddMember("metadata", metadata, allocator);
    rapidjson::Value items(rapidjson::kArrayType);
    for (const auto& json : MatchingLocked(target)) {
      rapidjson::Document item(&allocator);
      item.Parse(json.c_str());
      items.PushBack(rapidjson::Value(item, allocator), allocator);
    }
    list.AddMember("items", items, allocator);
    return {200, ToJson(list), -1, false};
  }

  std::vector<std::string> MatchingLocked(const Target& target) {
    std::vector<std::string> out;
    auto bucket = objects_.find(target.StoreKey());
    if (bucket == objects_.end()) return out;
    auto query = target.query;
    for (const auto& [key, json] : bucket->second) {
      if (!target.namespace_name.empty() && !key.starts_with(target.namespace_name + "/")) continue;
      rapidjson::Document object = ParseStored(json);
      if (MatchesFieldSelector(object, query["fieldSelector"]) &&
          MatchesLabelSelector(object, query["labelSelector"]))
        out.push_back(json);
    }
    return out;
  }

  // Device taints as a server stores them: stamped with timeAdded (1.36+), or dropped on a
  // server without the DRADeviceTaints feature (before 1.36), as it drops disabled fields.
  void TreatTaintsLocked(const Target& target, rapidjson::Document& object) {
    if (target.resource != "resourceslices") return;
    auto* devices = object.HasMember("spec") && object["spec"].IsObject() && object["spec"].HasMember("devices")
                        ? &object["spec"]["devices"]
                        : nullptr;
    if (devices == nullptr || !devices->IsArray()) return;
    for (auto& device : devices->GetArray()) {
      if (!device.IsObject()) continue;
      rapidjson::Value* holder = device.HasMember("basic") && device["basic"].IsObject() ? &device["basic"] : &device;
      if (drop_consumable_capacity_) {
        holder->RemoveMember("allowMultipleAllocations");
        if (holder->HasMember("capacity") && (*holder)["capacity"].IsObject())
          for (auto& capacity : (*holder)["capacity"].GetObject())
            if (capacity.value.IsObject()) capacity.value.RemoveMember("requestPolicy");
      }
      if (!holder->HasMember("taints")) continue;
      if (drop_device_taints_) {
        holder->RemoveMember("taints");
        continue;
      }
      if (!(*holder)["taints"].IsArray()) continue;
      for (auto& taint : (*holder)["taints"].GetArray())
        if (taint.IsObject() && !taint.HasMember("timeAdded"))
          taint.AddMember("timeAdded", rapidjson::Value("2026-01-01T00:00:00Z", object.GetAllocator()),
                          object.GetAllocator());
    }
  }

  Answer CreateLocked(const Target& target, const std::string& body) {
    rapidjson::Document object;
    object.Parse(body.c_str());
    if (object.HasParseError() || !object.IsObject())
      return Failure(400, "BadRequest", "body is not a JSON object");
    if (auto refused = CheckShape(target, object)) return *refused;
    if (auto problem = ValidateLocked(target, body)) return Failure(422, "Invalid", *problem);
    std::string name = StringAt(object, "metadata.name");
    if (name.empty()) {
      std::string generate = StringAt(object, "metadata.generateName");
      if (generate.empty()) return Failure(422, "Invalid", "metadata.name: Required value");
      char suffix[8];
      std::snprintf(suffix, sizeof suffix, "%05llx",
                    static_cast<unsigned long long>(++name_counter_ & 0xFFFFF));
      name = generate + suffix;
      if (!object.HasMember("metadata"))
        object.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), object.GetAllocator());
      SetString(object["metadata"], "name", name, object.GetAllocator());
    }
    auto& bucket = objects_[target.StoreKey()];
    std::string key = target.namespace_name + "/" + name;
    if (bucket.count(key))
      return Failure(409, "AlreadyExists", target.resource + " \"" + name + "\" already exists");
    TreatTaintsLocked(target, object);
    Stamp(object, target, "");
    std::string stored = ToJson(object);
    bucket[key] = stored;
    Record(target.StoreKey(), target.namespace_name, "ADDED", stored);
    return {201, stored, -1, false};
  }

  Answer UpdateLocked(const Target& target, const std::string& body) {
    rapidjson::Document object;
    object.Parse(body.c_str());
    if (object.HasParseError() || !object.IsObject())
      return Failure(400, "BadRequest", "body is not a JSON object");
    if (StringAt(object, "metadata.name") != target.name)
      return Failure(400, "BadRequest", "the name of the object does not match the name in the URL");
    if (auto refused = CheckShape(target, object)) return *refused;
    auto& bucket = objects_[target.StoreKey()];
    std::string key = target.namespace_name + "/" + target.name;
    auto it = bucket.find(key);
    if (it == bucket.end())
      return Failure(404, "NotFound", target.resource + " \"" + target.name + "\" not found");
    rapidjson::Document current = ParseStored(it->second);
    std::string sent_rv = StringAt(object, "metadata.resourceVersion");
    if (!sent_rv.empty() && sent_rv != StringAt(current, "metadata.resourceVersion"))
      return Failure(409, "Conflict",
                     "Operation cannot be fulfilled on " + target.resource + " \"" + target.name +
                         "\": the object has been modified; please apply your changes to the "
                         "latest version and try again");
    if (auto problem = ValidateLocked(target, body)) return Failure(422, "Invalid", *problem);
    TreatTaintsLocked(target, object);
    Stamp(object, target, StringAt(current, "metadata.uid"));
    std::string stored = ToJson(object);
    it->second = stored;
    Record(target.StoreKey(), target.namespace_name, "MODIFIED", stored);
    return {200, stored, -1, false};
  }

  std::optional<std::string> EraseLocked(const Target& target, const std::string& key) {
    auto bucket = objects_.find(target.StoreKey());
    if (bucket == objects_.end()) return std::nullopt;
    auto it = bucket->second.find(key);
    if (it == bucket->second.end()) return std::nullopt;
    rapidjson::Document object = ParseStored(it->second);
    bucket->second.erase(it);
    ++resource_version_;
    SetString(object["metadata"], "resourceVersion", std::to_string(resource_version_),
              object.GetAllocator());
    std::string last = ToJson(object);
    Record(target.StoreKey(), target.namespace_name.empty() ? key.substr(0, key.find('/'))
                                                             : target.namespace_name,
           "DELETED", last);
    return last;
  }

  Answer DeleteLocked(const Target& target, const std::string& body) {
    std::string key = target.namespace_name + "/" + target.name;
    auto bucket = objects_.find(target.StoreKey());
    if (bucket == objects_.end() || !bucket->second.count(key))
      return Failure(404, "NotFound", target.resource + " \"" + target.name + "\" not found");
    if (!body.empty()) {
      rapidjson::Document options;
      options.Parse(body.c_str());
      rapidjson::Document current = ParseStored(bucket->second[key]);
      if (!options.HasParseError() && options.IsObject()) {
        std::string uid = StringAt(options, "preconditions.uid");
        std::string rv = StringAt(options, "preconditions.resourceVersion");
        if ((!uid.empty() && uid != StringAt(current, "metadata.uid")) ||
            (!rv.empty() && rv != StringAt(current, "metadata.resourceVersion")))
          return Failure(409, "Conflict",
                         "Precondition failed for " + target.resource + " \"" + target.name + "\"");
      }
    }
    return {200, *EraseLocked(target, key), -1, false};
  }

  Answer DeleteCollectionLocked(const Target& target) {
    for (const auto& json : MatchingLocked(target)) {
      rapidjson::Document object = ParseStored(json);
      EraseLocked(target, StringAt(object, "metadata.namespace") + "/" +
                              StringAt(object, "metadata.name"));
    }
    return ListLocked(target);
  }

  // Server-side apply of status.devices: entries merge by (driver, pool, device, shareID), the
  // list-map key of AllocatedDeviceStatus, so other drivers' entries survive.
  Answer ApplyClaimStatusLocked(const Target& target, const std::string& body,
                                const std::string& content_type) {
    if (content_type.find("application/apply-patch+yaml") == std::string::npos)
      return Failure(415, "UnsupportedMediaType", "apply needs application/apply-patch+yaml");
    auto query = target.query;
    if (query["fieldManager"].empty())
      return Failure(422, "Invalid", "fieldManager is required for apply patch");
    rapidjson::Document patch;
    patch.Parse(body.c_str());
    if (patch.HasParseError() || !patch.IsObject())
      return Failure(400, "BadRequest", "apply body must be a JSON object (YAML is not parsed)");
    if (StringAt(patch, "apiVersion") != target.group_version)
      return Failure(400, "BadRequest", "Incorrect version specified in apply patch. Specified patch version: " +
                                            StringAt(patch, "apiVersion") + ", expected: " + target.group_version);
    auto& bucket = objects_[target.StoreKey()];
    std::string key = target.namespace_name + "/" + target.name;
    auto it = bucket.find(key);
    if (it == bucket.end())
      return Failure(404, "NotFound", "resourceclaims \"" + target.name + "\" not found");
    if (auto problem = ValidateLocked(target, body)) return Failure(422, "Invalid", *problem);
    rapidjson::Document current = ParseStored(it->second);
    auto& allocator = current.GetAllocator();
    if (!current.HasMember("status")) current.AddMember("status", rapidjson::Value(rapidjson::kObjectType), allocator);
    auto& status = current["status"];
    if (!status.HasMember("devices")) status.AddMember("devices", rapidjson::Value(rapidjson::kArrayType), allocator);
    auto& devices = status["devices"];
    const auto* patch_devices = Lookup(patch, "status.devices");
    if (patch_devices && patch_devices->IsArray()) {
      auto entry_key = [](const rapidjson::Value& entry) {
        return StringAt(entry, "driver") + "|" + StringAt(entry, "pool") + "|" +
               StringAt(entry, "device") + "|" + StringAt(entry, "shareID");
      };
      for (const auto& entry : patch_devices->GetArray()) {
        rapidjson::Value copy(entry, allocator);
        bool replaced = false;
        for (auto& existing : devices.GetArray()) {
          if (entry_key(existing) == entry_key(entry)) {
            existing = std::move(copy);
            replaced = true;
            break;
          }
        }
        if (!replaced) devices.PushBack(std::move(copy), allocator);
      }
    }
    Stamp(current, target, StringAt(current, "metadata.uid"));
    std::string stored = ToJson(current);
    it->second = stored;
    Record(target.StoreKey(), target.namespace_name, "MODIFIED", stored);
    return {200, stored, -1, false};
  }

  static std::string EventLine(const std::string& type, const std::string& object_json) {
    return "{\"type\":\"" + type + "\",\"object\":" + object_json + "}\n";
  }

  bool ServeWatch(tcp::socket& socket, const http::request<http::string_body>& request,
                  const Target& target) {
    auto query = target.query;
    int timeout_seconds = query["timeoutSeconds"].empty() ? 1800 : std::stoi(query["timeoutSeconds"]);
    bool bookmarks = query["allowWatchBookmarks"] == "true";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
    // A watch the log shows is one ExpireWatches() from then on ends.
    uint64_t expiry_epoch = 0;
    {
      std::lock_guard lock(mu_);
      expiry_epoch = watch_expiry_epoch_;
    }
    Log("GET", std::string(request.target()), 200);

    http::response<http::empty_body> response{http::status::ok, request.version()};
    response.set(http::field::content_type, "application/json");
    response.chunked(true);
    response.keep_alive(request.keep_alive());
    http::response_serializer<http::empty_body> serializer{response};
    beast::error_code ec;
    http::write_header(socket, serializer, ec);
    if (ec) return false;
    auto send = [&socket, &ec](const std::string& line) {
      asio::write(socket, http::make_chunk(asio::buffer(line)), ec);
      return !ec;
    };

    std::unique_lock lock(mu_);
    const std::string& rv_text = query["resourceVersion"];
    uint64_t sent_through = 0;
    std::vector<std::string> initial;
    if (rv_text.empty() || rv_text == "0") {
      initial = MatchingLocked(target);
      sent_through = resource_version_;
    } else {
      sent_through = std::stoull(rv_text);
    }
    auto last_send = std::chrono::steady_clock::now();
    for (const auto& json : initial) {
      lock.unlock();
      bool ok = send(EventLine("ADDED", json));
      lock.lock();
      if (!ok) return false;
    }
    while (true) {
      if (stopping_ || down_) return false;
      if (sent_through < compacted_through_ || expiry_epoch != watch_expiry_epoch_) {
        std::string error = StatusJson(410, "Expired", "too old resource version: " +
                                                           std::to_string(sent_through));
        lock.unlock();
        send(EventLine("ERROR", error));
        break;
      }
      std::vector<std::pair<std::string, std::string>> pending;
      for (const auto& entry : history_) {
        if (entry.resource_version <= sent_through) continue;
        sent_through = entry.resource_version;
        if (entry.store_key != target.StoreKey()) continue;
        if (!target.namespace_name.empty() && entry.namespace_name != target.namespace_name) continue;
        rapidjson::Document object = ParseStored(entry.object_json);
        if (!MatchesFieldSelector(object, query["fieldSelector"]) ||
            !MatchesLabelSelector(object, query["labelSelector"]))
          continue;
        pending.emplace_back(entry.type, entry.object_json);
      }
      auto now = std::chrono::steady_clock::now();
      std::string bookmark;
      if (pending.empty() && bookmarks && now - last_send >= bookmark_interval_) {
        bookmark = "{\"kind\":\"" + Kind(target) + "\",\"apiVersion\":\"" + target.group_version +
                   "\",\"metadata\":{\"resourceVersion\":\"" + std::to_string(resource_version_) +
                   "\"}}";
        sent_through = std::max(sent_through, resource_version_);
      }
      if (!pending.empty() || !bookmark.empty()) {
        lock.unlock();
        bool ok = true;
        for (const auto& [type, json] : pending) ok = ok && send(EventLine(type, json));
        if (!bookmark.empty()) ok = ok && send(EventLine("BOOKMARK", bookmark));
        lock.lock();
        if (!ok) return false;
        last_send = std::chrono::steady_clock::now();
        continue;
      }
      if (now >= deadline) {
        lock.unlock();
        break;
      }
      auto wake = std::min(deadline, last_send + bookmark_interval_);
      changed_.wait_until(lock, wake);
    }
    asio::write(socket, http::make_chunk_last(), ec);
    return !ec && request.keep_alive();
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread accept_thread_;

  std::mutex connections_mu_;
  std::atomic<std::size_t> accepted_{0};
  std::list<std::unique_ptr<Connection>> connections_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  bool down_ = false;
  std::string required_token_;
  std::vector<FakeFault> faults_;
  std::vector<RecordedRequest> requests_;
  std::map<std::string, FakeValidator> validators_;
  bool drop_device_taints_ = false;
  bool drop_consumable_capacity_ = false;
  std::string server_version_ = "v1.37.2";
  std::vector<std::string> resource_versions_{"v1"};  // resource.k8s.io versions served
  std::chrono::milliseconds bookmark_interval_{5000};
  // store key → "namespace/name" → object JSON
  std::map<std::string, std::map<std::string, std::string>> objects_;
  std::deque<HistoryEntry> history_;
  uint64_t resource_version_ = 1000;
  uint64_t compacted_through_ = 0;
  uint64_t watch_expiry_epoch_ = 0;
  uint64_t uid_counter_ = 0;
  uint64_t name_counter_ = 0;
};

FakeApiServer::FakeApiServer(uint16_t port) : impl_(std::make_unique<Impl>(port)) {}
FakeApiServer::~FakeApiServer() = default;
uint16_t FakeApiServer::port() const { return impl_->port(); }
std::string FakeApiServer::url() const { return "http://127.0.0.1:" + std::to_string(port()); }
void FakeApiServer::RequireToken(const std::string& token) { impl_->RequireToken(token); }
void FakeApiServer::InjectFault(FakeFault fault) { impl_->InjectFault(std::move(fault)); }
void FakeApiServer::ClearFaults() { impl_->ClearFaults(); }
void FakeApiServer::SetDown(bool down) { impl_->SetDown(down); }
void FakeApiServer::CompactHistory() { impl_->CompactHistory(); }
void FakeApiServer::ExpireWatches() { impl_->ExpireWatches(); }
void FakeApiServer::SetBookmarkInterval(std::chrono::milliseconds interval) {
  impl_->SetBookmarkInterval(interval);
}
void FakeApiServer::ServeResourceVersions(std::vector<std::string> versions) {
  impl_->ServeResourceVersions(std::move(versions));
}
void FakeApiServer::SetValidator(const std::string& resource, FakeValidator validator) {
  impl_->SetValidator(resource, std::move(validator));
}
void FakeApiServer::DropDeviceTaints(bool drop) { impl_->DropDeviceTaints(drop); }
void FakeApiServer::DropConsumableCapacity(bool drop) { impl_->DropConsumableCapacity(drop); }
void FakeApiServer::SetServerVersion(std::string git_version) { impl_->SetServerVersion(std::move(git_version)); }
std::vector<RecordedRequest> FakeApiServer::Requests() const { return impl_->Requests(); }
std::size_t FakeApiServer::CountRequests(const std::string& method,
                                         const std::string& path_contains) const {
  std::size_t count = 0;
  for (const auto& request : impl_->Requests())
    if ((method.empty() || request.method == method) &&
        request.target.find(path_contains) != std::string::npos)
      ++count;
  return count;
}
void FakeApiServer::ClearRequests() { impl_->ClearRequests(); }
std::size_t FakeApiServer::AcceptedConnections() const { return impl_->AcceptedConnections(); }
std::string FakeApiServer::PutObject(const std::string& collection, const std::string& object_json) {
  return impl_->PutObject(collection, object_json);
}
std::optional<std::string> FakeApiServer::GetObject(const std::string& collection,
                                                    const std::string& name) const {
  return impl_->GetObject(collection, name);
}
std::vector<std::string> FakeApiServer::ListObjects(const std::string& collection) const {
  return impl_->ListObjects(collection);
}
bool FakeApiServer::DeleteObject(const std::string& collection, const std::string& name) {
  return impl_->DeleteObject(collection, name);
}

}  // namespace dranet::fakes
