#pragma once
// core/inject/netns.h — network namespace handles and running code inside a
// namespace without moving any shared thread.
//
// RunInNetns starts a short-lived thread that setns()'s into the target and
// runs the function there; sockets created by it stay bound to that
// namespace after the thread is gone. The calling thread never changes
// namespace.
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace dranet::inject {

// Owns an open namespace fd (O_RDONLY|O_CLOEXEC). Move-only.
class NetnsHandle {
 public:
  NetnsHandle() = default;
  explicit NetnsHandle(int fd) : fd_(fd) {}
  NetnsHandle(NetnsHandle&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  NetnsHandle& operator=(NetnsHandle&& o) noexcept;
  NetnsHandle(const NetnsHandle&) = delete;
  NetnsHandle& operator=(const NetnsHandle&) = delete;
  ~NetnsHandle();

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Opens the namespace file at `path` (a /var/run/netns entry or
// /proc/<pid>/ns/net). Throws InjectError naming the path; `missing_ok`
// returns an invalid handle instead when the file does not exist.
NetnsHandle OpenNetns(const std::string& path, bool missing_ok = false);

// Which namespace a handle or path refers to (the nsfs inode).
struct NetnsId {
  unsigned long long dev = 0, ino = 0;
  friend bool operator==(const NetnsId&, const NetnsId&) = default;
};
// The namespace of an open handle (zero when invalid).
NetnsId IdOf(const NetnsHandle& ns);
// The namespace `path` names now; nullopt when the path is gone or is not a
// namespace file (a runtime unmounted it and left the empty file).
std::optional<NetnsId> IdAtPath(const std::string& path);

// Runs `fn` on a fresh thread inside `ns`; rethrows what `fn` throws.
void RunInNetns(const NetnsHandle& ns, const std::function<void()>& fn);

}  // namespace dranet::inject
