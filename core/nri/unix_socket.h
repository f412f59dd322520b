#pragma once
// core/nri/unix_socket.h — an owned file descriptor and the unix stream
// socket calls the NRI trunk needs (connect for the plugin, listen/accept
// for the test runtime).
#include <chrono>
#include <string>
#include <utility>

namespace dranet::nri {

// Owns one fd; closes it on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Connects to the unix stream socket at `path`. Throws std::system_error
// naming the path.
UniqueFd ConnectUnixSocket(const std::string& path);

// Binds and listens on `path`, replacing a stale socket file. Throws
// std::system_error naming the path.
UniqueFd ListenUnixSocket(const std::string& path);

// Waits up to `timeout` for a connection. An invalid fd on timeout; throws
// std::system_error on a listening-socket error.
UniqueFd AcceptUnixSocket(const UniqueFd& listener, std::chrono::milliseconds timeout);

}  // namespace dranet::nri
