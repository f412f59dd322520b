#pragma once
// core/base/files.h — bounded, error-tolerant file reading for sysfs-like trees.
//
// sysfs content is treated as hostile input: reads are capped, missing files
// are not exceptional, and no read follows an unbounded chain of symlinks.
// A host root other than "/" (a node snapshot) is a tree of untrusted
// symlinks: RootDirectory keeps every open inside it.
#include <fcntl.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace dranet {

// The largest file any reader in the core takes in one read.
inline constexpr std::size_t kMaxSysfsFileBytes = 64 * 1024;

// Reads at most `max_bytes` of `path`. nullopt when it cannot be opened or read.
std::optional<std::string> ReadFileCapped(const std::filesystem::path& path,
                                          std::size_t max_bytes = kMaxSysfsFileBytes);

// How readers open a file: non-blocking, so that a FIFO planted in a
// snapshot cannot hang them.
inline constexpr int kReadOpenFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

// Reads at most `max_bytes` from `fd` and closes it. nullopt when `fd` is
// negative (a failed open) or on a read error.
std::optional<std::string> ReadFdCapped(int fd, std::size_t max_bytes = kMaxSysfsFileBytes);

// ReadFileCapped with trailing whitespace/newlines removed.
std::optional<std::string> ReadTrimmed(const std::filesystem::path& path,
                                       std::size_t max_bytes = kMaxSysfsFileBytes);

// A directory tree whose paths resolve as if it were "/": absolute symlink
// targets and ".." stop at its root, the way the kernel's openat2
// RESOLVE_IN_ROOT (Linux 5.6+) resolves them, so no symlink in the tree
// makes a reader open or list anything outside it. The root "/" cannot be
// left and keeps plain openat. Neither copied nor moved; closes its fd.
class RootDirectory {
 public:
  // `root` is opened following links (it is the caller's, not the tree's).
  // ok() is false when it cannot be opened.
  explicit RootDirectory(const std::filesystem::path& root);
  ~RootDirectory();
  RootDirectory(const RootDirectory&) = delete;
  RootDirectory& operator=(const RootDirectory&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }
  // False for "/", whose opens need no containment.
  bool contained() const { return contained_; }

  // open(2) of `name` relative to `dir_fd`, a directory of this tree whose
  // path is `dir_path` (path() itself, or path() / a relative path it was
  // opened by). `name` is relative; an absolute one starts at the root.
  // Returns the fd, or -1 with errno set (ENOSYS without openat2: a tree is
  // never read without containment).
  int OpenAt(int dir_fd, std::string_view dir_path, const char* name, int flags) const;
  // OpenAt() from the root itself.
  int Open(const char* name, int flags) const { return OpenAt(fd_, path_.native(), name, flags); }

 private:
  std::filesystem::path path_;
  bool contained_;
  int fd_ = -1;
};

// Whether this kernel offers openat2 (Linux 5.6+), without which a root
// other than "/" cannot be read. One syscall per call.
bool ContainedOpenSupported();

// The steps of WriteFileAtomic a caller may observe (kill -9 tests stop the
// process there: base/fault_points.h).
enum class AtomicWriteStep {
  kHalfWritten,    // the first half of the content is in the temp file
  kBeforeRename,   // the temp file is complete and synced, not yet renamed
};

// Creates `path` anew, writes `content` and fsyncs it. Whatever was at
// `path` is removed first and never written through: a symlink there is
// replaced, not followed, a file someone else created is replaced, not
// reused (the new file is created with O_EXCL|O_NOFOLLOW, mode 0644 less the
// umask). A directory there is an error. On failure std::system_error naming
// `path` is thrown, and the file this call created, if any, is removed.
// `on_half_written`, when given, runs once the first half is written (kill -9
// tests stop the process there).
void WriteFileSynced(const std::filesystem::path& path, std::string_view content,
                     const std::function<void()>& on_half_written = {});

// fsync of the directory `dir`: renames, creations and removals in it are
// durable once it returns. Throws std::system_error naming it on failure.
void SyncDirectory(const std::filesystem::path& dir);

// Writes `content` to `path` atomically: temp file (`path` + ".tmp", made by
// WriteFileSynced: anything already there, a planted symlink included, is
// replaced) + fsync + rename + fsync of the directory. Throws
// std::system_error naming the file on failure.
// `on_step`, when given, is called at each AtomicWriteStep.
void WriteFileAtomic(const std::filesystem::path& path, const std::string& content,
                     const std::function<void(AtomicWriteStep)>& on_step = {});

}  // namespace dranet
