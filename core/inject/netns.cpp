#include "inject/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "inject/pod_netns_applier.h"

namespace dranet::inject {

NetnsHandle& NetnsHandle::operator=(NetnsHandle&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

NetnsHandle::~NetnsHandle() {
  if (fd_ >= 0) ::close(fd_);
}

NetnsHandle OpenNetns(const std::string& path, bool missing_ok) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (missing_ok && errno == ENOENT) return NetnsHandle();
    throw InjectError("cannot open network namespace " + path + ": " + std::strerror(errno));
  }
  return NetnsHandle(fd);
}

void RunInNetns(const NetnsHandle& ns, const std::function<void()>& fn) {
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      if (::setns(ns.fd(), CLONE_NEWNET) != 0) {
        throw InjectError(std::string("setns into network namespace failed: ") + std::strerror(errno));
      }
      fn();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  worker.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace dranet::inject
