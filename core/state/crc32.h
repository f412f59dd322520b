#pragma once
// core/state/crc32.h — CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320),
// the checksum of the checkpoint file. Hand-written because it is twenty lines
// and the alternatives (zlib's crc32, OpenSSL) would be a dependency of
// core/state for one function. Detects torn and bit-flipped files; it is not
// a defence against someone who can write the state directory.
#include <cstdint>
#include <string_view>

namespace dranet::state {

// CRC-32 of `data`; Crc32("123456789") == 0xCBF43926.
uint32_t Crc32(std::string_view data);

}  // namespace dranet::state
