#include "inventory/naming.h"

#include <cctype>
#include <cstdint>

#include "base/utf8.h"

namespace dranet::inventory {
namespace {

bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// True when text[from, from+count) are all hex digits.
bool AllHex(std::string_view text, std::size_t from, std::size_t count) {
  for (std::size_t i = from; i < from + count; ++i) {
    if (!IsHexDigit(text[i])) return false;
  }
  return true;
}

}  // namespace

std::string EncodeBase32Lower(std::string_view bytes) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  out.reserve((bytes.size() * 8 + 4) / 5);
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char byte : bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 0x1f]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 0x1f]);
  return out;
}

std::string DeviceNameForPciAddress(std::string_view pci_address) {
  std::string name = "pci-";
  for (char c : pci_address) {
    name.push_back(c == ':' || c == '.' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return name;
}

std::string DeviceNameForInterface(std::string_view if_name) {
  if (IsDnsLabel(if_name)) return std::string(if_name);
  return "net-" + EncodeBase32Lower(if_name);
}

std::string CapAttributeValue(std::string_view raw, bool* truncated_out, std::size_t max_bytes) {
  // Interface names and sysfs strings are bytes; the API (and -o json) take
  // UTF-8 only.
  const std::string valid = ToValidUtf8(raw);
  const std::string_view value = valid;
  if (truncated_out) *truncated_out = value.size() > max_bytes;
  if (value.size() <= max_bytes) return std::string(value);
  std::size_t cut = max_bytes;
  // Step back over UTF-8 continuation bytes so the result stays valid UTF-8.
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return std::string(value.substr(0, cut));
}

std::string JoinWholeItemsCapped(const std::vector<std::string>& items, std::size_t max_bytes) {
  std::string joined;
  for (const auto& item : items) {
    std::size_t needed = joined.size() + (joined.empty() ? 0 : 1) + item.size();
    if (needed > max_bytes) break;
    if (!joined.empty()) joined.push_back(',');
    joined += item;
  }
  return joined;
}

bool IsPciAddress(std::string_view text) {
  return text.size() == 12 && text[4] == ':' && text[7] == ':' && text[10] == '.' &&
         AllHex(text, 0, 4) && AllHex(text, 5, 2) && AllHex(text, 8, 2) && AllHex(text, 11, 1);
}

bool IsPciRootBusName(std::string_view text) {
  return text.size() == 10 && text.substr(0, 3) == "pci" && text[7] == ':' && AllHex(text, 3, 4) &&
         AllHex(text, 8, 2);
}

}  // namespace dranet::inventory
