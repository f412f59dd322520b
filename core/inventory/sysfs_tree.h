#pragma once
// core/inventory/sysfs_tree.h — reading a (possibly hostile) sysfs tree.
//
// Everything here takes paths built from a configured root, never a literal
// "/sys". Reads are capped at one page (sysfs attribute files never exceed a
// page), symlinks are resolved one hop at a time without following chains, and
// every failure is a value (nullopt / empty), never an exception.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// An open sysfs directory whose attribute files are read relative to it
// (openat/readlinkat), so the kernel walks the long device path once per
// directory instead of once per file. Move-only; closes its fd.
class SysfsDirectory {
 public:
  explicit SysfsDirectory(const std::filesystem::path& path);
  // `relative` opened from an already open directory: the kernel walks only
  // the relative part.
  SysfsDirectory(const SysfsDirectory& base, const std::string& relative);
  ~SysfsDirectory();
  SysfsDirectory(SysfsDirectory&& other) noexcept;
  SysfsDirectory& operator=(SysfsDirectory&&) = delete;
  SysfsDirectory(const SysfsDirectory&) = delete;
  SysfsDirectory& operator=(const SysfsDirectory&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::filesystem::path& path() const { return path_; }

  // Trimmed content of `name` (may contain '/'), capped at one page.
  std::optional<std::string> Read(const char* name) const;
  // Last component of the target of symlink `name` ("mlx5_core" for
  // "driver"); nullopt when `name` is not a symlink.
  std::optional<std::string> LinkTargetName(const char* name) const;
  // ResolveLink() (below) for the symlink `name` inside this directory.
  std::optional<std::filesystem::path> ResolveLink(const std::string& name, const std::filesystem::path& root) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// Trimmed content of a sysfs attribute file, capped at one page.
std::optional<std::string> ReadSysfsValue(const std::filesystem::path& path);

// The target of the symlink `link`, made absolute and lexically normalised
// against the link's directory. Absolute targets are re-rooted under `root`
// (so a snapshot with absolute links still resolves inside itself). nullopt
// when `link` is not a symlink. Never follows further links, so loops are
// harmless here.
std::optional<std::filesystem::path> ResolveLink(const std::filesystem::path& link,
                                                 const std::filesystem::path& root);

// Entry names of a directory, sorted; empty (with `error_out` set) on failure.
std::vector<std::string> ListDirectory(const std::filesystem::path& dir, std::error_code* error_out = nullptr);

// The nearest PCI address component walking up from the end of `path`
// (".../0000:8a:00.0/net/eth0" -> "0000:8a:00.0"); empty when there is none.
std::string PciAddressInPath(const std::filesystem::path& path);

// The PCI root bus ("pci0000:80") a resolved device path hangs from: the first
// component under <sysfs>/devices that names a root bus. Empty when none.
std::string PcieRootInPath(const std::filesystem::path& resolved, const std::filesystem::path& sysfs);

// Integer parsing for sysfs content ("0x15b3", "-1", "1500"). nullopt on
// anything but one well-formed number.
std::optional<int64_t> ParseDecimal(std::string_view text);
std::optional<uint64_t> ParseHex(std::string_view text);

}  // namespace dranet::inventory
