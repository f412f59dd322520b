#pragma once
// core/base/files.h — bounded, error-tolerant file reading for sysfs-like trees.
//
// sysfs content is treated as hostile input: reads are capped, missing files
// are not exceptional, and no read follows an unbounded chain of symlinks.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace dranet {

// The largest file any reader in the core takes in one read.
inline constexpr std::size_t kMaxSysfsFileBytes = 64 * 1024;

// Reads at most `max_bytes` of `path`. nullopt when it cannot be opened or read.
std::optional<std::string> ReadFileCapped(const std::filesystem::path& path,
                                          std::size_t max_bytes = kMaxSysfsFileBytes);

// ReadFileCapped with trailing whitespace/newlines removed.
std::optional<std::string> ReadTrimmed(const std::filesystem::path& path,
                                       std::size_t max_bytes = kMaxSysfsFileBytes);

// Writes `content` to `path` atomically: temp file + fsync + rename + fsync of
// the directory. Throws std::system_error naming the file on failure.
void WriteFileAtomic(const std::filesystem::path& path, const std::string& content);

}  // namespace dranet
