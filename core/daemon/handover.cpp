#include "daemon/handover.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/json.h"
#include "nri/unix_socket.h"

namespace dranet::daemon {
namespace {

constexpr std::size_t kHeaderBytes = 8;
constexpr std::size_t kMaxFds = 4;
constexpr std::uint32_t kMaxJsonBytes = 16u << 20;
constexpr std::uint32_t kMaxBlobBytes = 16u << 20;  // a ttRPC replay is at most one message (4 MiB)
constexpr auto kGreetingTimeout = std::chrono::seconds(5);

[[noreturn]] void Fail(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

void PutU32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::uint32_t GetU32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// Waits until `fd` is readable; false on timeout. `cancel` (optional, an
// eventfd) readable counts as a timeout.
bool WaitReadable(int fd, std::chrono::milliseconds timeout, int cancel = -1) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {cancel, POLLIN, 0}};
  for (;;) {
    const int ready = ::poll(fds, cancel >= 0 ? 2 : 1, timeout.count() < 0 ? -1 : static_cast<int>(timeout.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) Fail("poll");
    if (ready == 0) return false;
    if (cancel >= 0 && (fds[1].revents & POLLIN)) return false;
    return true;
  }
}

// Reads exactly `size` bytes into `out`, collecting passed descriptors into
// `fds`; false when the peer closed or went silent.
bool ReadExactly(int fd, char* out, std::size_t size, std::vector<UniqueFd>* fds, std::chrono::milliseconds timeout) {
  std::size_t got = 0;
  while (got < size) {
    if (!WaitReadable(fd, timeout)) return false;
    iovec iov{out + got, size - got};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = fds ? control : nullptr;
    msg.msg_controllen = fds ? sizeof(control) : 0;
    const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (fds) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
          int passed;
          std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
          fds->emplace_back(passed);
        }
      }
      if (msg.msg_flags & MSG_CTRUNC) throw std::runtime_error("hand-over message carries too many descriptors");
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

std::string Json(const std::function<void(rapidjson::Writer<rapidjson::StringBuffer>&)>& fill) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  fill(writer);
  writer.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

std::string TypeOf(const rapidjson::Document& doc) {
  if (!doc.IsObject()) return "";
  auto it = doc.FindMember("type");
  return it != doc.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

std::optional<rapidjson::Document> Parse(const HandoverMessage& m) {
  rapidjson::Document doc;
  if (!ParseJson(doc, m.json).empty() || !doc.IsObject()) return std::nullopt;
  return doc;
}

UniqueFd MakeEventFd() {
  UniqueFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!fd.valid()) Fail("eventfd");
  return fd;
}

void Wake(const UniqueFd& eventfd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(eventfd.get(), &one, sizeof(one));
}

ino_t InodeOf(const std::filesystem::path& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace

void SendHandoverMessage(int socket, const std::string& json, const std::string& blob, const std::vector<int>& fds) {
  if (fds.size() > kMaxFds) throw std::invalid_argument("at most 4 descriptors per hand-over message");
  std::string bytes;
  PutU32(bytes, static_cast<std::uint32_t>(json.size()));
  PutU32(bytes, static_cast<std::uint32_t>(blob.size()));
  bytes += json;
  bytes += blob;
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    iovec iov{bytes.data() + sent, bytes.size() - sent};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (sent == 0 && !fds.empty()) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Fail("send hand-over message");
    sent += static_cast<std::size_t>(n);
  }
}

std::optional<HandoverMessage> ReceiveHandoverMessage(int socket, std::chrono::milliseconds timeout) {
  HandoverMessage m;
  unsigned char header[kHeaderBytes];
  if (!ReadExactly(socket, reinterpret_cast<char*>(header), kHeaderBytes, &m.fds, timeout)) return std::nullopt;
  const std::uint32_t json_size = GetU32(header), blob_size = GetU32(header + 4);
  if (json_size > kMaxJsonBytes || blob_size > kMaxBlobBytes)
    throw std::runtime_error("hand-over message of " + std::to_string(json_size) + "+" + std::to_string(blob_size) +
                             " bytes is too long");
  m.json.resize(json_size);
  m.blob.resize(blob_size);
  if (!ReadExactly(socket, m.json.data(), json_size, nullptr, timeout) ||
      !ReadExactly(socket, m.blob.data(), blob_size, nullptr, timeout))
    return std::nullopt;
  return m;
}

// ---- holder ----

HandoverServer::HandoverServer(std::filesystem::path socket_path, Hooks hooks, Logger& log)
    : path_(std::move(socket_path)), hooks_(std::move(hooks)), log_(log) {}

HandoverServer::~HandoverServer() { Stop(); }

void HandoverServer::Start() {
  listener_ = nri::ListenUnixSocket(path_.string());
  ::chmod(path_.c_str(), 0600);
  inode_ = InodeOf(path_);
  wake_ = MakeEventFd();
  thread_ = std::thread([this] { Run(); });
  pthread_setname_np(thread_.native_handle(), "handover");
  log_.Info("waiting for a successor to hand the node over to", {{"socket", path_.string()}});
}

bool HandoverServer::has_successor() const {
  std::lock_guard lock(mu_);
  return successor_.valid();
}

void HandoverServer::Run() {
  for (;;) {
    int successor;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      successor = successor_.get();
    }
    pollfd fds[3] = {{wake_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}, {successor, POLLIN, 0}};
    if (::poll(fds, successor >= 0 ? 3 : 2, -1) < 0) {
      if (errno == EINTR) continue;
      log_.Error("hand-over socket: poll failed; no successor will be greeted", {{"error", std::strerror(errno)}});
      return;
    }
    if (fds[0].revents & POLLIN) continue;  // stopping: seen at the top
    if (successor >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      // The successor says nothing before the hand-over: this is its end.
      {
        std::lock_guard lock(mu_);
        successor_.Reset();
      }
      log_.Warning("the successor went away before the hand-over; serving the node on");
      if (hooks_.successor_gone) hooks_.successor_gone();
    }
    if (fds[1].revents & POLLIN) {
      UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (conn.valid()) Greet(std::move(conn));
    }
  }
}

void HandoverServer::Greet(UniqueFd conn) {
  if (has_successor()) {
    log_.Warning("a second successor turned away: one hand-over at a time");
    return;
  }
  try {
    auto hello = ReceiveHandoverMessage(conn.get(), kGreetingTimeout);
    auto doc = hello ? Parse(*hello) : std::nullopt;
    if (!doc || TypeOf(*doc) != "hello") {
      log_.Warning("hand-over socket: a peer that did not say hello was turned away");
      return;
    }
    int64_t pid = 0;
    if (auto it = doc->FindMember("pid"); it != doc->MemberEnd() && it->value.IsInt64()) pid = it->value.GetInt64();
    UniqueFd listener = hooks_.give_status_listener ? hooks_.give_status_listener() : UniqueFd();
    std::vector<int> fds;
    if (listener.valid()) fds.push_back(listener.get());
    SendHandoverMessage(conn.get(), Json([&](auto& w) {
                          w.Key("type");
                          w.String("status");
                          w.Key("listener");
                          w.Bool(listener.valid());
                        }),
                        "", fds);
    log_.Info("a successor started; it answers on the status port now and gets the node when this instance stops",
              {{"pid", pid}, {"statusPort", listener.valid()}});
    std::lock_guard lock(mu_);
    successor_ = std::move(conn);
  } catch (const std::exception& e) {
    log_.Warning("hand-over socket: greeting a successor failed", {{"error", e.what()}});
    if (hooks_.successor_gone) hooks_.successor_gone();
  }
}

void HandoverServer::StopThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  if (wake_.valid()) Wake(wake_);
  if (thread_.joinable()) thread_.join();
}

bool HandoverServer::HandOverNri(std::optional<nri::NriHandover> handed, std::chrono::milliseconds timeout) {
  StopThread();
  UniqueFd successor;
  {
    std::lock_guard lock(mu_);
    successor = std::move(successor_);
    // The file goes before the successor can make its own: removing it
    // later could take the successor's.
    CloseListener();
  }
  if (!successor.valid()) return false;
  const bool connected = handed.has_value();
  try {
    std::vector<int> fds;
    std::string blob;
    if (handed) {
      fds.push_back(handed->socket.get());
      blob = handed->session.replay;
    }
    SendHandoverMessage(successor.get(), Json([&](auto& w) {
                          w.Key("type");
                          w.String("nri");
                          w.Key("connected");
                          w.Bool(connected);
                          if (!handed) return;
                          w.Key("nextStream");
                          w.Uint(handed->session.next_stream);
                          w.Key("lastServedStream");
                          w.Uint(handed->session.last_served_stream);
                          w.Key("pods");
                          w.StartObject();
                          for (const auto& [uid, netns] : handed->pods) {
                            w.Key(uid.c_str(), static_cast<rapidjson::SizeType>(uid.size()));
                            w.String(netns.c_str(), static_cast<rapidjson::SizeType>(netns.size()));
                          }
                          w.EndObject();
                        }),
                        blob, fds);
    auto ack = ReceiveHandoverMessage(successor.get(), timeout);
    auto doc = ack ? Parse(*ack) : std::nullopt;
    if (!doc || TypeOf(*doc) != "ack") {
      log_.Warning("the successor did not confirm the hand-over", {{"timeoutMs", static_cast<int64_t>(timeout.count())}});
      return false;
    }
  } catch (const std::exception& e) {
    log_.Error("handing the node over failed", {{"error", e.what()}});
    return false;
  }
  log_.Info("node handed over to the successor",
            {{"nriConnection", connected}, {"pods", connected ? handed->pods.size() : 0}});
  return true;
}

void HandoverServer::CloseListener() {
  if (!listener_.valid()) return;
  listener_.Reset();
  if (inode_ != 0 && InodeOf(path_) == inode_) ::unlink(path_.c_str());
}

void HandoverServer::Stop() {
  StopThread();
  std::lock_guard lock(mu_);
  successor_.Reset();
  CloseListener();
}

// ---- successor ----

HandoverClient::HandoverClient(UniqueFd conn, Logger& log) : conn_(std::move(conn)), cancel_(MakeEventFd()), log_(log) {}

HandoverClient::~HandoverClient() = default;

std::unique_ptr<HandoverClient> HandoverClient::Connect(const std::filesystem::path& socket_path, Logger& log,
                                                        std::chrono::milliseconds timeout) {
  UniqueFd conn;
  try {
    conn = nri::ConnectUnixSocket(socket_path.string());
  } catch (const std::system_error& e) {
    const int error = e.code().value();
    if (error != ENOENT && error != ECONNREFUSED)  // else nobody holds the node: start alone
      log.Warning("cannot reach the hand-over socket; starting alone",
                  {{"socket", socket_path.string()}, {"error", e.what()}});
    return nullptr;
  }
  try {
    SendHandoverMessage(conn.get(), Json([](auto& w) {
                          w.Key("type");
                          w.String("hello");
                          w.Key("pid");
                          w.Int64(::getpid());
                        }),
                        "", {});
    auto status = ReceiveHandoverMessage(conn.get(), timeout);
    auto doc = status ? Parse(*status) : std::nullopt;
    if (!doc || TypeOf(*doc) != "status") {
      log.Warning("the running instance did not greet this one; starting alone", {{"socket", socket_path.string()}});
      return nullptr;
    }
    std::unique_ptr<HandoverClient> client(new HandoverClient(std::move(conn), log));
    if (!status->fds.empty()) client->status_listener_ = std::move(status->fds.front());
    log.Info("another instance runs the node; it hands it over when it stops",
             {{"socket", socket_path.string()}, {"statusPort", client->status_listener_.valid()}});
    return client;
  } catch (const std::exception& e) {
    log.Warning("hand-over greeting failed; starting alone", {{"socket", socket_path.string()}, {"error", e.what()}});
    return nullptr;
  }
}

std::optional<nri::NriHandover> HandoverClient::WaitForNri() {
  try {
    if (!WaitReadable(conn_.get(), std::chrono::milliseconds(-1), cancel_.get())) return std::nullopt;
    auto message = ReceiveHandoverMessage(conn_.get(), kGreetingTimeout);
    auto doc = message ? Parse(*message) : std::nullopt;
    if (!doc) {
      log_.Warning("the previous instance went away without handing the node over; connecting to the runtime");
      return std::nullopt;
    }
    if (TypeOf(*doc) != "nri") throw std::runtime_error("unexpected hand-over message " + message->json);
    SendHandoverMessage(conn_.get(), Json([](auto& w) {
                          w.Key("type");
                          w.String("ack");
                        }),
                        "", {});
    auto connected = doc->FindMember("connected");
    if (connected == doc->MemberEnd() || !connected->value.IsBool() || !connected->value.GetBool() ||
        message->fds.empty()) {
      log_.Info("the previous instance had no live NRI connection; connecting to the runtime");
      return std::nullopt;
    }
    nri::NriHandover handed;
    handed.socket = std::move(message->fds.front());
    handed.session.replay = std::move(message->blob);
    auto number = [&](const char* key) -> std::uint32_t {
      auto it = doc->FindMember(key);
      if (it == doc->MemberEnd() || !it->value.IsUint()) throw std::runtime_error(std::string("hand-over lacks ") + key);
      return it->value.GetUint();
    };
    handed.session.next_stream = number("nextStream");
    handed.session.last_served_stream = number("lastServedStream");
    if (auto pods = doc->FindMember("pods"); pods != doc->MemberEnd() && pods->value.IsObject())
      for (const auto& pod : pods->value.GetObject())
        if (pod.value.IsString()) handed.pods.emplace(pod.name.GetString(), pod.value.GetString());
    return handed;
  } catch (const std::exception& e) {
    log_.Error("taking the node over failed; connecting to the runtime", {{"error", e.what()}});
    return std::nullopt;
  }
}

void HandoverClient::Cancel() { Wake(cancel_); }

}  // namespace dranet::daemon
