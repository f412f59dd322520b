#include "nri/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace dranet::nri {
namespace {

sockaddr_un Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    throw std::system_error(ENAMETOOLONG, std::generic_category(), "socket path " + path);
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

[[noreturn]] void Fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

UniqueFd ConnectUnixSocket(const std::string& path) {
  const auto addr = Address(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) Fail("socket for " + path);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    Fail("connect to " + path);
  }
  return fd;
}

UniqueFd ListenUnixSocket(const std::string& path) {
  const auto addr = Address(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) Fail("socket for " + path);
  ::unlink(path.c_str());
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    Fail("bind " + path);
  }
  if (::listen(fd.get(), 16) != 0) Fail("listen on " + path);
  return fd;
}

UniqueFd AcceptUnixSocket(const UniqueFd& listener, std::chrono::milliseconds timeout) {
  pollfd p{listener.get(), POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (r < 0 && errno == EINTR);
  if (r < 0) Fail("poll on listening socket");
  if (r == 0) return UniqueFd();
  UniqueFd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!fd.valid()) Fail("accept");
  return fd;
}

}  // namespace dranet::nri
