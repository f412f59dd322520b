#include "inventory/host_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dranet::inventory {

std::string HostRootProblem(const std::filesystem::path& host_root) {
  if (host_root.lexically_normal() == "/") return "";
  if (host_root.empty()) return "\"\": does not exist";
  const std::string name = host_root.string();
  auto cannot_read = [&](int error) { return name + ": cannot be read: " + std::strerror(error); };
  // O_NONBLOCK: whatever sits at the path (a FIFO), the open never waits.
  const int fd = ::open(host_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return name + ": does not exist";
    if (error == ENOTDIR) return name + ": not a directory";
    return cannot_read(error);
  }
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int error = errno;
    ::close(fd);
    return cannot_read(error);
  }
  std::string problem;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      problem = errno != 0 ? cannot_read(errno) : name + ": empty directory";
      break;
    }
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    // Listing needs read permission, every later open search permission:
    // one open of an entry shows the directory can be entered too.
    const int entry_fd = ::openat(::dirfd(dir), entry->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (entry_fd < 0) problem = cannot_read(errno);
    else ::close(entry_fd);
    break;
  }
  ::closedir(dir);
  return problem;
}

}  // namespace dranet::inventory
