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

// Calls `on_part` with each component of `path` other than "" and ".".
template <typename OnPart>
void ForEachPart(std::string_view path, OnPart on_part) {
  while (!path.empty()) {
    auto slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    if (!part.empty() && part != ".") on_part(part);
  }
}

// `target` (a link's text) joined to `link_dir` (a path under `root`) and
// normalised, with ".." stopping at `root` and absolute targets starting
// there: where the kernel's RESOLVE_IN_ROOT would look, as far as the
// lexical path tells. On text: this runs for every link discovery reads.
fs::path JoinInRoot(const std::string& root, std::string_view link_dir, std::string_view target) {
  std::vector<std::string_view> parts;
  auto walk = [&parts](std::string_view part) {
    if (part != "..") {
      parts.push_back(part);
    } else if (!parts.empty()) {
      parts.pop_back();
    }
  };
  std::string outside;  // link_dir relative to root, where it does not start with it
  if (target.empty() || target.front() != '/') {
    std::string_view root_text = root;
    bool below = link_dir.substr(0, root_text.size()) == root_text &&
                 (link_dir.size() == root_text.size() || root_text.back() == '/' || link_dir[root_text.size()] == '/');
    if (below) {
      ForEachPart(link_dir.substr(root_text.size()), walk);
    } else {
      outside = fs::path(link_dir).lexically_relative(root).string();
      ForEachPart(outside, walk);
    }
  }
  ForEachPart(target, walk);
  std::string out = root;
  for (const auto& part : parts) {
    if (out.empty() || out.back() != '/') out += '/';
    out += part;
  }
  return fs::path(std::move(out));
}

}  // namespace

SysfsDirectory::SysfsDirectory(std::shared_ptr<const RootDirectory> root, std::string path, int fd)
    : root_(std::move(root)), path_(std::move(path)), fd_(fd) {}

SysfsDirectory SysfsDirectory::OpenRoot(const fs::path& root) {
  auto directory = std::make_shared<const RootDirectory>(root);
  int fd = directory->fd();
  return SysfsDirectory(std::move(directory), root.native(), fd);
}

SysfsDirectory::SysfsDirectory(const SysfsDirectory& base, const std::string& relative)
    : root_(base.root_),
      path_(base.path_.empty() || base.path_.back() == '/' ? base.path_ + relative : base.path_ + "/" + relative),
      fd_(base.Open(relative.c_str(), kDirectoryFlags)) {}

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
  // The link's directory: this one, or the one `name` names below it.
  std::string link_dir = path_;
  if (auto slash = name.rfind('/'); slash != std::string::npos) link_dir += "/" + name.substr(0, slash);
  return JoinInRoot(root_->path().native(), link_dir, *target);
}

std::vector<std::string> SysfsDirectory::List(const std::string& name, std::error_code* error_out) const {
  std::vector<std::string> names;
  std::error_code error;
  // Listed through a contained open, never by path: a directory that is a
  // link out of the root is not followed there. getdents64 straight on the
  // fd: opendir's checks would cost two more system calls per listing.
  int fd = Open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    error.assign(errno, std::generic_category());
  } else {
    alignas(struct dirent64) char buffer[16 * 1024];
    for (;;) {
      ssize_t length = ::getdents64(fd, buffer, sizeof(buffer));
      if (length < 0 && errno == EINTR) continue;
      if (length < 0) {
        error.assign(errno, std::generic_category());
        names.clear();
        break;
      }
      if (length == 0) break;
      for (ssize_t offset = 0; offset < length;) {
        const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + offset);
        offset += entry->d_reclen;
        std::string_view entry_name(entry->d_name);
        if (entry_name != "." && entry_name != "..") names.emplace_back(entry_name);
      }
    }
    ::close(fd);
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

std::string PciAddressInPath(std::string_view path) {
  while (!path.empty()) {
    auto slash = path.rfind('/');
    std::string_view part = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (IsPciAddress(part)) return std::string(part);
    path.remove_suffix(slash == std::string_view::npos ? path.size() : path.size() - slash);
  }
  return {};
}

std::string PcieRootInPath(const fs::path& resolved, const fs::path& sysfs) {
  // Both normalised: `resolved` as ResolveLink() makes it, lexically below
  // <sysfs>/devices or not at all.
  const std::string devices = (sysfs / "devices").lexically_normal().native();
  std::string_view path = resolved.native();
  if (path.substr(0, devices.size()) != devices || path.size() <= devices.size() || path[devices.size()] != '/') {
    return {};
  }
  std::string root;
  ForEachPart(path.substr(devices.size()), [&root](std::string_view part) {
    if (root.empty() && IsPciRootBusName(part)) root = part;
  });
  return root;
}

PciUevent ParsePciUevent(std::string_view text) {
  PciUevent uevent;
  // "1AF4:1041": two hex ids.
  auto id_pair = [](std::string_view value, std::optional<uint64_t>& first, std::optional<uint64_t>& second) {
    auto colon = value.find(':');
    if (colon == std::string_view::npos) return;
    auto a = ParseHex(value.substr(0, colon));
    auto b = ParseHex(value.substr(colon + 1));
    if (!a || !b || *a > 0xffff || *b > 0xffff) return;
    first = a;
    second = b;
  };
  while (!text.empty()) {
    auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    auto equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    std::string_view key = line.substr(0, equals), value = line.substr(equals + 1);
    if (key == "DRIVER") {
      uevent.driver = std::string(value);
    } else if (key == "PCI_ID") {
      id_pair(value, uevent.vendor_id, uevent.device_id);
    } else if (key == "PCI_SUBSYS_ID") {
      id_pair(value, uevent.subsystem_vendor_id, uevent.subsystem_device_id);
    }
  }
  return uevent;
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

int64_t RdmaRateMbps(std::string_view text) {
  // "<whole>[.<fraction>] Gb/sec ..." — the kernel prints the fraction as one digit.
  int64_t whole = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [p, error] = std::from_chars(begin, end, whole, 10);
  if (error != std::errc() || p == begin || whole < 0 || whole > 1'000'000) return 0;
  int64_t tenths = 0;
  if (p != end && *p == '.') {
    ++p;
    if (p == end || *p < '0' || *p > '9') return 0;
    tenths = *p++ - '0';
    while (p != end && *p >= '0' && *p <= '9') ++p;
  }
  if (std::string_view(p, end - p).rfind(" Gb/sec", 0) != 0) return 0;
  return whole * 1000 + tenths * 100;
}

}  // namespace dranet::inventory
