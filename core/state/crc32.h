#pragma once
// core/state/crc32.h — CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320),
// the checksum of each claim's checkpoint file, computed by zlib (its crc32_z
// works a word at a time, several times faster than a byte table: every write
// and every load sums whole files). Detects torn and bit-flipped files; it is not a
// defence against someone who can write the state directory.
#include <zlib.h>

#include <cstdint>
#include <string_view>

namespace dranet::state {

// CRC-32 of `data` continued from `crc` (the CRC-32 of what came before it;
// 0 to start); Crc32("123456789") == 0xCBF43926.
inline uint32_t Crc32(std::string_view data, uint32_t crc = 0) {
  return static_cast<uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

}  // namespace dranet::state
