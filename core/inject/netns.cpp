#include "inject/netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

namespace {

bool IsNsfs(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == static_cast<decltype(fs.f_type)>(NSFS_MAGIC);
}

}  // namespace

NetnsHandle OpenNetns(const std::string& path, bool missing_ok) {
  // Non-blocking: a FIFO planted at the path must not hang the caller.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (missing_ok && errno == ENOENT) return NetnsHandle();
    throw InjectError("cannot open network namespace " + path + ": " + std::strerror(errno));
  }
  NetnsHandle handle(fd);
  if (!IsNsfs(fd)) {
    if (missing_ok) return NetnsHandle();  // an unmounted leftover: the namespace is gone
    throw InjectError(path + " is not a network namespace file");
  }
  return handle;
}

NetnsId IdOf(const NetnsHandle& ns) {
  struct stat st {};
  if (!ns.valid() || ::fstat(ns.fd(), &st) != 0) return {};
  return {static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)};
}

std::optional<NetnsId> IdAtPath(const std::string& path) {
  NetnsHandle ns = OpenNetns(path, /*missing_ok=*/true);
  if (!ns.valid()) return std::nullopt;
  return IdOf(ns);
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
