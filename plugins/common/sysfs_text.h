// plugins/common/sysfs_text.h — reading small sysfs attribute files.
//
// Header-only, C++17, standard library only: shared by the in-tree plugins
// (which, like third-party plugins, see only sdk/ and their own sources).
#ifndef DRANET_PLUGINS_COMMON_SYSFS_TEXT_H
#define DRANET_PLUGINS_COMMON_SYSFS_TEXT_H

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace dranet::plugins::common {

// The first line of a small text file without trailing whitespace, or
// nullopt when the file cannot be read. Reads at most 4 KiB: sysfs
// attributes are tiny, and a hostile snapshot must not make us read a lot.
inline std::optional<std::string> ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  auto newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.pop_back();
  return text;
}

// A hex attribute such as "0x10de" or "0x030200"; nullopt when absent or
// malformed.
inline std::optional<uint32_t> ReadHex(const std::string& path) {
  auto text = ReadTrimmed(path);
  if (!text || text->empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    unsigned long value = std::stoul(*text, &used, 16);
    if (used != text->size() || value > 0xffffffffUL) return std::nullopt;
    return static_cast<uint32_t>(value);
  } catch (...) {
    return std::nullopt;
  }
}

// A decimal attribute such as numa_node ("-1" allowed); `fallback` when
// absent or malformed.
inline int32_t ReadInt(const std::string& path, int32_t fallback) {
  auto text = ReadTrimmed(path);
  if (!text || text->empty()) return fallback;
  try {
    std::size_t used = 0;
    long value = std::stol(*text, &used, 10);
    if (used != text->size() || value < INT32_MIN || value > INT32_MAX) return fallback;
    return static_cast<int32_t>(value);
  } catch (...) {
    return fallback;
  }
}

}  // namespace dranet::plugins::common

#endif  // DRANET_PLUGINS_COMMON_SYSFS_TEXT_H
