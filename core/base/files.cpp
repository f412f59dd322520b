#include "base/files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace dranet {

std::optional<std::string> ReadFdCapped(int fd, std::size_t max_bytes) {
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

std::optional<std::string> ReadFileCapped(const std::filesystem::path& path, std::size_t max_bytes) {
  return ReadFdCapped(::open(path.c_str(), kReadOpenFlags), max_bytes);
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

namespace {

// glibc has no wrapper for openat2.
int OpenAt2(int dir_fd, const char* name, int flags, uint64_t resolve) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = resolve;
  long fd;
  // Scoped lookups fail with EAGAIN when any rename or mount on the system
  // raced with a ".." step (common on a busy node); the kernel expects the
  // caller to try again.
  int attempts = 0;
  do {
    fd = ::syscall(SYS_openat2, dir_fd, name, &how, sizeof how);
  } while (fd < 0 && (errno == EAGAIN || errno == EINTR) && ++attempts < 128);
  return static_cast<int>(fd);
}

// Magic links (/proc/<pid>/fd/...) jump anywhere whatever the scope.
constexpr uint64_t kBeneath = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
constexpr uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

}  // namespace

bool ContainedOpenSupported() {
  int fd = OpenAt2(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

RootDirectory::RootDirectory(const std::filesystem::path& root)
    : path_(root),
      contained_(root.lexically_normal() != "/"),
      fd_(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {}

RootDirectory::~RootDirectory() {
  if (fd_ >= 0) ::close(fd_);
}

int RootDirectory::OpenAt(int dir_fd, std::string_view dir_path, const char* name, int flags) const {
  if (!contained_) return ::openat(dir_fd, name, flags);
  // Most opens stay below their directory and take one walk from it.
  int fd = OpenAt2(dir_fd, name, flags, kBeneath);
  if (fd >= 0 || errno != EXDEV) return fd;
  // A symlink left the directory (sysfs links climb to devices/ all the
  // time, snapshot links may be absolute): walk again from the root, where
  // ".." and absolute targets stop. Not lexically normalised: ".." after a
  // symlink is the kernel's to resolve.
  std::string_view root = path_.native();
  std::string_view dir = dir_path;
  if (dir.substr(0, root.size()) != root || (dir.size() > root.size() && root.back() != '/' &&
                                             dir[root.size()] != '/')) {
    errno = EXDEV;  // not a directory of this tree
    return -1;
  }
  dir.remove_prefix(root.size());
  while (!dir.empty() && dir.front() == '/') dir.remove_prefix(1);
  std::string from_root = dir.empty() || name[0] == '/' ? std::string(name) : std::string(dir) + "/" + name;
  return OpenAt2(fd_, from_root.c_str(), flags, kInRoot);
}

void WriteFileSynced(const std::filesystem::path& path, std::string_view content,
                     const std::function<void()>& on_half_written) {
  // Once this call has created the file, a failure removes it (a partial
  // file must not stay) — unless something else has taken its name since.
  struct stat created {};
  auto fail = [&](const char* what, int fd) {
    const int error = errno;
    if (fd >= 0) {
      struct stat now {};
      // created is zeroed when its fstat failed: then the name is still ours.
      const bool ours = created.st_ino == 0 || (::lstat(path.c_str(), &now) == 0 && now.st_dev == created.st_dev &&
                                                now.st_ino == created.st_ino);
      if (ours) ::unlink(path.c_str());
      ::close(fd);
    }
    throw std::system_error(error, std::generic_category(), std::string(what) + " " + path.string());
  };
  // Whatever is at the path is not ours to write into: a symlink planted
  // there would redirect the write (and the rename after it would install
  // the link), a file someone else created keeps their owner and mode.
  // It is removed (a directory is refused: EISDIR) and the file created
  // anew; O_EXCL|O_NOFOLLOW refuse whatever appears in between.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) fail("remove the existing", -1);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) fail("create", fd);
  if (::fstat(fd, &created) != 0) fail("stat", fd);
  // Written in two halves so that a test can stop the process between them.
  const std::size_t half = content.size() / 2;
  std::size_t off = 0;
  for (std::size_t end : {half, content.size()}) {
    while (off < end) {
      ssize_t n = ::write(fd, content.data() + off, end - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail("write", fd);
      }
      off += static_cast<std::size_t>(n);
    }
    if (end == half && on_half_written) on_half_written();
  }
  if (::fsync(fd) != 0) fail("fsync", fd);
  ::close(fd);
}

void SyncDirectory(const std::filesystem::path& dir) {
  const auto name = dir.empty() ? std::filesystem::path(".") : dir;
  int fd = ::open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw std::system_error(error, std::generic_category(), "fsync of directory " + name.string());
  }
  ::close(fd);
}

void WriteFileAtomic(const std::filesystem::path& path, const std::string& content,
                     const std::function<void(AtomicWriteStep)>& on_step) {
  auto tmp = path;
  tmp += ".tmp";
  WriteFileSynced(tmp, content, [&] {
    if (on_step) on_step(AtomicWriteStep::kHalfWritten);
  });
  if (on_step) on_step(AtomicWriteStep::kBeforeRename);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::system_error(errno, std::generic_category(), "rename " + path.string());
  SyncDirectory(path.parent_path());
}

}  // namespace dranet
