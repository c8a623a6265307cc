// The high-water mark file: a millisecond (since the epoch, in the id
// space) at or beyond every id the node may have issued, so that a restarted
// server never issues an id at or below it.
//
// 32 bytes, little-endian:
//   0-7    magic "SFMARK01"
//   8-15   mark, int64 milliseconds since the epoch (-1 .. kMaxMs)
//   16-19  flags: bit 0 = written at a clean shutdown (mark is exact)
//   20-23  window, uint32 milliseconds: how far a reservation reached ahead
//          of the clock when it was written (0 in marks of version 1.0:
//          read as kMinWindowMs; at most kMaxWindowMs)
//   24-27  CRC-32C of bytes 0-23
//   28-31  zero
#pragma once

#include "pure.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core {

constexpr size_t kMarkSize = 32;

struct Mark {
    int64_t ms = -1;
    bool clean = false;
    int64_t window_ms = 0;  // 0: not recorded (read back as kMinWindowMs)
};

enum class MarkDecode { Ok, WrongSize, BadMagic, BadChecksum, BadValue };

void encode_mark(const Mark& mark, uint8_t out[kMarkSize]) noexcept;
MarkDecode decode_mark(const uint8_t* data, size_t len, Mark* out) noexcept;
const char* mark_decode_text(MarkDecode d) noexcept;

// CRC-32C (Castagnoli), as used by iSCSI and PostgreSQL's WAL.
uint32_t crc32c(const uint8_t* data, size_t len) noexcept;

}  // namespace snowflake::core
