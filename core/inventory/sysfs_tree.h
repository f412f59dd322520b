#pragma once
// core/inventory/sysfs_tree.h — reading a (possibly hostile) sysfs tree.
//
// Everything here takes paths built from a configured root, never a literal
// "/sys". Reads are capped at one page (sysfs attribute files never exceed a
// page), symlinks are resolved one hop at a time without following chains,
// nothing outside the host root is opened, and every failure is a value
// (nullopt / empty), never an exception.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/files.h"

namespace dranet::inventory {

// sysfs attribute files hold at most one page.
inline constexpr std::size_t kMaxSysfsAttributeBytes = 4096;

// The roots every path is built from.
struct HostPaths {
  explicit HostPaths(const std::filesystem::path& host_root);
  std::filesystem::path root;   // "/" on a live node, the snapshot directory otherwise
  std::filesystem::path sysfs;  // <root>/sys
  std::filesystem::path dev;    // <root>/dev
};

// Throws std::runtime_error when `paths.root` is not "/" and the kernel lacks
// openat2 (Linux < 5.6): such a root is never read without containment.
void RequireContainedReads(const HostPaths& paths);

// An open directory of a host root whose files are read relative to it
// (openat/readlinkat), so the kernel walks the long device path once per
// directory instead of once per file. Every path is resolved inside the host
// root (RootDirectory, base/files.h): under a snapshot, ".." and absolute
// symlink targets stop at the snapshot directory, as under chroot, so no link
// leads a read, a listing or a resolved path out of it. Names passed in are
// relative to the directory. Move-only; closes its fd.
class SysfsDirectory {
 public:
  // The host root itself (HostPaths::root), from which the others are opened.
  static SysfsDirectory OpenRoot(const std::filesystem::path& root);
  // `relative` opened from an already open directory: the kernel walks only
  // the relative part.
  SysfsDirectory(const SysfsDirectory& base, const std::string& relative);
  ~SysfsDirectory();
  SysfsDirectory(SysfsDirectory&& other) noexcept;
  SysfsDirectory& operator=(SysfsDirectory&&) = delete;
  SysfsDirectory(const SysfsDirectory&) = delete;
  SysfsDirectory& operator=(const SysfsDirectory&) = delete;

  bool ok() const { return fd_ >= 0; }
  // The root joined with the relative paths this directory was opened by.
  std::filesystem::path path() const { return path_; }

  // Trimmed content of `name` (may contain '/'), capped at one page.
  std::optional<std::string> Read(const char* name) const;
  // At most `max_bytes` of `name`, as stored.
  std::optional<std::string> ReadFile(const char* name, std::size_t max_bytes) const;
  // Last component of the target of symlink `name` ("mlx5_core" for
  // "driver"); nullopt when `name` is not a symlink.
  std::optional<std::string> LinkTargetName(const std::string& name) const;
  // The target of the symlink `name`, made absolute and lexically normalised
  // against the link's directory, with ".." stopping at the host root and
  // absolute targets re-rooted under it: always a path inside the root.
  // nullopt when `name` is not a symlink. Never follows further links, so
  // loops are harmless here.
  std::optional<std::filesystem::path> ResolveLink(const std::string& name) const;
  // Entry names of the directory `name`, sorted; empty (with `error_out`
  // set) on failure.
  std::vector<std::string> List(const std::string& name = ".", std::error_code* error_out = nullptr) const;
  // The file type (S_IFREG, S_IFDIR, ...) of `name`, of what it points to
  // when it is a link and `follow_link`; nullopt when it does not exist or
  // cannot be reached.
  std::optional<unsigned> FileType(const char* name, bool follow_link = true) const;

 private:
  SysfsDirectory(std::shared_ptr<const RootDirectory> root, std::string path, int fd);
  int Open(const char* name, int flags) const;
  // The link text of `name`; nullopt when it is not a symlink.
  std::optional<std::string> ReadLink(const std::string& name) const;

  std::shared_ptr<const RootDirectory> root_;
  std::string path_;  // path(), kept as text: made per directory, read only by logs and ResolveLink
  int fd_ = -1;
};

// Trimmed content of a file at a path the caller trusts (no containment),
// capped at one page.
std::optional<std::string> ReadSysfsValue(const std::filesystem::path& path);

// The nearest PCI address component walking up from the end of `path`
// (".../0000:8a:00.0/net/eth0" -> "0000:8a:00.0"); empty when there is none.
std::string PciAddressInPath(std::string_view path);

// The PCI root bus ("pci0000:80") a resolved device path hangs from: the first
// component under <sysfs>/devices that names a root bus. Empty when none.
std::string PcieRootInPath(const std::filesystem::path& resolved, const std::filesystem::path& sysfs);

// What a PCI function's `uevent` file says (the kernel's dev_uevent and
// pci_uevent: DRIVER=, PCI_CLASS=, PCI_ID=, PCI_SUBSYS_ID=, ...). A key that
// is missing or malformed is left empty.
struct PciUevent {
  std::string driver;  // empty when no driver is bound
  std::optional<uint64_t> vendor_id, device_id;
  std::optional<uint64_t> subsystem_vendor_id, subsystem_device_id;
};
PciUevent ParsePciUevent(std::string_view text);

// Integer parsing for sysfs content ("0x15b3", "-1", "1500"). nullopt on
// anything but one well-formed number.
std::optional<int64_t> ParseDecimal(std::string_view text);
std::optional<uint64_t> ParseHex(std::string_view text);

// An RDMA port's rate file ("400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)") in
// Mbit/s; 0 for anything else (no rate, "0 Gb/sec", an unknown unit).
int64_t RdmaRateMbps(std::string_view text);

}  // namespace dranet::inventory
