#include "base/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace dranet {

std::optional<std::string> ReadFileCapped(const std::filesystem::path& path, std::size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  // Grow with what the file holds: most reads are a few bytes of sysfs, some
  // a few hundred KiB of JSON; the cap only bounds hostile content.
  std::string out;
  char chunk[16 * 1024];
  bool ok = true;
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd, chunk, std::min(sizeof chunk, max_bytes - out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (n == 0) break;
    out.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> ReadTrimmed(const std::filesystem::path& path, std::size_t max_bytes) {
  auto s = ReadFileCapped(path, max_bytes);
  if (!s) return s;
  while (!s->empty() && (s->back() == '\n' || s->back() == ' ' || s->back() == '\t' ||
                         s->back() == '\r' || s->back() == '\0')) {
    s->pop_back();
  }
  return s;
}

void WriteFileAtomic(const std::filesystem::path& path, const std::string& content) {
  auto fail = [&](const std::string& what) {
    throw std::system_error(errno, std::generic_category(), what + " " + path.string());
  };
  auto tmp = path;
  tmp += ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create");
  std::size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write");
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
  auto dir = path.parent_path();
  if (dir.empty()) dir = ".";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace dranet
