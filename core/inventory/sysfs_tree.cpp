#include "inventory/sysfs_tree.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <charconv>

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

namespace {

// One read of at most a page: sysfs returns a whole attribute in one read,
// and anything longer than a page is cut anyway.
std::optional<std::string> ReadPageAt(int dir_fd, const char* name) {
  int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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

}  // namespace

SysfsDirectory::SysfsDirectory(const fs::path& path)
    : path_(path), fd_(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {}

SysfsDirectory::SysfsDirectory(const SysfsDirectory& base, const std::string& relative)
    : path_(base.path_ / relative),
      fd_(base.fd_ < 0 ? -1 : ::openat(base.fd_, relative.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {}

SysfsDirectory::~SysfsDirectory() {
  if (fd_ >= 0) ::close(fd_);
}

SysfsDirectory::SysfsDirectory(SysfsDirectory&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

std::optional<std::string> SysfsDirectory::Read(const char* name) const {
  if (fd_ < 0) return std::nullopt;
  return ReadPageAt(fd_, name);
}

std::optional<std::string> SysfsDirectory::LinkTargetName(const char* name) const {
  if (fd_ < 0) return std::nullopt;
  char target[4096];
  ssize_t length = ::readlinkat(fd_, name, target, sizeof(target) - 1);
  if (length <= 0) return std::nullopt;
  std::string_view text(target, static_cast<std::size_t>(length));
  while (!text.empty() && text.back() == '/') text.remove_suffix(1);
  auto slash = text.rfind('/');
  return std::string(slash == std::string_view::npos ? text : text.substr(slash + 1));
}

std::optional<std::string> ReadSysfsValue(const fs::path& path) {
  return ReadPageAt(AT_FDCWD, path.c_str());
}

namespace {

std::optional<fs::path> ResolveLinkAt(int dir_fd, const char* name, const fs::path& link, const fs::path& root) {
  char target[4096];
  ssize_t length = ::readlinkat(dir_fd, name, target, sizeof(target) - 1);
  if (length <= 0) return std::nullopt;
  fs::path target_path(std::string(target, static_cast<std::size_t>(length)));
  if (target_path.is_absolute()) return (root / target_path.relative_path()).lexically_normal();
  return (link.parent_path() / target_path).lexically_normal();
}

}  // namespace

std::optional<fs::path> ResolveLink(const fs::path& link, const fs::path& root) {
  return ResolveLinkAt(AT_FDCWD, link.c_str(), link, root);
}

std::optional<fs::path> SysfsDirectory::ResolveLink(const std::string& name, const fs::path& root) const {
  if (fd_ < 0) return std::nullopt;
  return ResolveLinkAt(fd_, name.c_str(), path_ / name, root);
}

std::vector<std::string> ListDirectory(const fs::path& dir, std::error_code* error_out) {
  std::vector<std::string> names;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  if (error) names.clear();
  if (error_out) *error_out = error;
  std::sort(names.begin(), names.end());
  return names;
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
