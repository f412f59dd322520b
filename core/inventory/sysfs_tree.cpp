#include "inventory/sysfs_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <system_error>

#include "inventory/naming.h"

namespace dranet::inventory {

namespace fs = std::filesystem;

namespace {

// Absolute and normalised without a trailing separator, so that lexical
// comparisons against resolved links work for relative roots too.
fs::path NormalizeRoot(const fs::path& host_root) {
  if (host_root.empty()) return "/";
  std::error_code error;
  fs::path absolute = fs::absolute(host_root, error);
  fs::path normal = (error ? host_root : absolute).lexically_normal();
  if (normal.has_relative_path() && normal.filename().empty()) normal = normal.parent_path();
  return normal;
}

}  // namespace

HostPaths::HostPaths(const fs::path& host_root)
    : root(NormalizeRoot(host_root)), sysfs(root / "sys"), dev(root / "dev") {}

void RequireContainedReads(const HostPaths& paths) {
  if (paths.root != "/" && !ContainedOpenSupported()) {
    throw std::runtime_error("host root " + paths.root.string() +
                             " cannot be read safely: keeping reads inside it needs openat2 (Linux 5.6 or later)");
  }
}

namespace {

constexpr int kDirectoryFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;

// One read of at most a page: sysfs returns a whole attribute in one read,
// and anything longer than a page is cut anyway. Closes `fd`.
std::optional<std::string> ReadPage(int fd) {
  if (fd < 0) return std::nullopt;
  char buffer[kMaxSysfsAttributeBytes];
  ssize_t length;
  do {
    length = ::read(fd, buffer, sizeof(buffer));
  } while (length < 0 && errno == EINTR);
  ::close(fd);
  if (length < 0) return std::nullopt;
  std::size_t end = static_cast<std::size_t>(length);
  while (end > 0 && (buffer[end - 1] == '\n' || buffer[end - 1] == ' ' || buffer[end - 1] == '\t' ||
                     buffer[end - 1] == '\r' || buffer[end - 1] == '\0')) {
    --end;
  }
  return std::string(buffer, end);
}

// `target` (a link's text) joined to `link_dir` (a path under `root`) and
// normalised, with ".." stopping at `root` and absolute targets starting
// there: where the kernel's RESOLVE_IN_ROOT would look, as far as the
// lexical path tells.
fs::path JoinInRoot(const fs::path& root, const fs::path& link_dir, const fs::path& target) {
  std::vector<fs::path> parts;
  auto walk = [&parts](const fs::path& path) {
    for (const auto& part : path.relative_path()) {
      if (part.empty() || part == ".") continue;
      if (part != "..") {
        parts.push_back(part);
      } else if (!parts.empty()) {
        parts.pop_back();
      }
    }
  };
  if (target.is_relative()) walk(link_dir.lexically_relative(root));
  walk(target);
  fs::path out = root;
  for (const auto& part : parts) out /= part;
  return out;
}

}  // namespace

SysfsDirectory::SysfsDirectory(std::shared_ptr<const RootDirectory> root, fs::path path, int fd)
    : root_(std::move(root)), path_(std::move(path)), fd_(fd) {}

SysfsDirectory SysfsDirectory::OpenRoot(const fs::path& root) {
  auto directory = std::make_shared<const RootDirectory>(root);
  int fd = directory->fd();
  return SysfsDirectory(std::move(directory), root, fd);
}

SysfsDirectory::SysfsDirectory(const SysfsDirectory& base, const std::string& relative)
    : root_(base.root_), path_(base.path_ / relative), fd_(base.Open(relative.c_str(), kDirectoryFlags)) {}

SysfsDirectory::~SysfsDirectory() {
  // The root's own fd belongs to root_, which outlives this object.
  if (fd_ >= 0 && fd_ != root_->fd()) ::close(fd_);
}

SysfsDirectory::SysfsDirectory(SysfsDirectory&& other) noexcept
    : root_(std::move(other.root_)), path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

int SysfsDirectory::Open(const char* name, int flags) const {
  if (fd_ < 0) {
    errno = EBADF;
    return -1;
  }
  return root_->OpenAt(fd_, path_, name, flags);
}

std::optional<std::string> SysfsDirectory::Read(const char* name) const {
  return ReadPage(Open(name, kReadOpenFlags));
}

std::optional<std::string> SysfsDirectory::ReadFile(const char* name, std::size_t max_bytes) const {
  return ReadFdCapped(Open(name, kReadOpenFlags), max_bytes);
}

std::optional<std::string> SysfsDirectory::ReadLink(const std::string& name) const {
  if (fd_ < 0 || name == "." || name == "..") return std::nullopt;
  char target[4096];
  ssize_t length;
  if (!root_->contained() || name.find('/') == std::string::npos) {
    // Nothing but the link itself is looked up.
    length = ::readlinkat(fd_, name.c_str(), target, sizeof(target) - 1);
  } else {
    // The directories on the way may be links too: reach the link itself
    // through the root's containment, then read it.
    int link_fd = Open(name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (link_fd < 0) return std::nullopt;
    length = ::readlinkat(link_fd, "", target, sizeof(target) - 1);
    ::close(link_fd);
  }
  if (length <= 0) return std::nullopt;
  return std::string(target, static_cast<std::size_t>(length));
}

std::optional<std::string> SysfsDirectory::LinkTargetName(const std::string& name) const {
  auto target = ReadLink(name);
  if (!target) return std::nullopt;
  std::string_view text(*target);
  while (!text.empty() && text.back() == '/') text.remove_suffix(1);
  auto slash = text.rfind('/');
  return std::string(slash == std::string_view::npos ? text : text.substr(slash + 1));
}

std::optional<fs::path> SysfsDirectory::ResolveLink(const std::string& name) const {
  auto target = ReadLink(name);
  if (!target) return std::nullopt;
  return JoinInRoot(root_->path(), (path_ / name).parent_path(), *target);
}

std::vector<std::string> SysfsDirectory::List(const std::string& name, std::error_code* error_out) const {
  std::vector<std::string> names;
  std::error_code error;
  // Listed through a contained open, never by path: a directory that is a
  // link out of the root is not followed there.
  int fd = Open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!dir) {
    error.assign(errno, std::generic_category());
    if (fd >= 0) ::close(fd);
  } else {
    errno = 0;
    while (const dirent* entry = ::readdir(dir)) {
      std::string_view entry_name(entry->d_name);
      if (entry_name != "." && entry_name != "..") names.emplace_back(entry_name);
    }
    if (errno != 0) {
      error.assign(errno, std::generic_category());
      names.clear();
    }
    ::closedir(dir);
  }
  if (error_out) *error_out = error;
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<unsigned> SysfsDirectory::FileType(const char* name, bool follow_link) const {
  int fd = Open(name, O_PATH | O_CLOEXEC | (follow_link ? 0 : O_NOFOLLOW));
  if (fd < 0) return std::nullopt;
  struct stat status {};
  int result = ::fstat(fd, &status);
  ::close(fd);
  if (result != 0) return std::nullopt;
  return status.st_mode & S_IFMT;
}

std::optional<std::string> ReadSysfsValue(const fs::path& path) {
  return ReadPage(::open(path.c_str(), kReadOpenFlags));
}

std::string PciAddressInPath(const fs::path& path) {
  std::vector<std::string> components;
  for (const auto& part : path) components.push_back(part.string());
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    if (IsPciAddress(*it)) return *it;
  }
  return {};
}

std::string PcieRootInPath(const fs::path& resolved, const fs::path& sysfs) {
  fs::path relative = resolved.lexically_relative((sysfs / "devices").lexically_normal());
  if (relative.empty() || *relative.begin() == "..") return {};
  for (const auto& part : relative) {
    if (IsPciRootBusName(part.string())) return part.string();
  }
  return {};
}

std::optional<int64_t> ParseDecimal(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<uint64_t> ParseHex(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace dranet::inventory
