// The high-water mark file: a millisecond (since the epoch, in the id
// space) at or beyond every id the node may have issued, so that a restarted
// server never issues an id at or below it.
//
// 32 bytes, little-endian:
//   0-7    magic "SFMARK01"
//   8-15   mark, int64 milliseconds since the epoch (-1 .. kMaxMs)
//   16-19  flags: bit 0 = written at a clean shutdown (mark is exact);
//          bits 1-7 zero; bits 8-26 the layout of the ids the mark bounds
//          (mark_layout_code(): 0 for twitter, as every mark before
//          snowflake.layout, so that 1.2 and earlier refuse a mark of
//          another layout as a bad value rather than read it)
//   20-23  window, uint32 milliseconds: how far a reservation reached ahead
//          of the clock when it was written (0 in marks of version 1.0:
//          read as kMinWindowMs; at most kMaxWindowMs)
//   24-27  CRC-32C of bytes 0-23
//   28-31  zero
#pragma once

#include "pure.hpp"

#include "layout.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core {

constexpr size_t kMarkSize = 32;

struct Mark {
    int64_t ms = -1;
    bool clean = false;
    int64_t window_ms = 0;  // 0: not recorded (read back as kMinWindowMs)
    uint32_t layout = 0;    // mark_layout_code() of its ids' layout; 0: twitter
};

// A layout as the mark records it: 0 for twitter, else
// 1 << 18 | time_bits << 12 | worker_bits << 6 | sequence_bits.
uint32_t mark_layout_code(const Geometry& g) noexcept;
// The geometry of a code; false for a code no geometry has.
bool geometry_of_mark_code(uint32_t code, Geometry* out) noexcept;

enum class MarkDecode { Ok, WrongSize, BadMagic, BadChecksum, BadValue };

void encode_mark(const Mark& mark, uint8_t out[kMarkSize]) noexcept;
MarkDecode decode_mark(const uint8_t* data, size_t len, Mark* out) noexcept;
const char* mark_decode_text(MarkDecode d) noexcept;

// The mark a data directory gets when it has none and its marker file
// snowflake.walmark (src/pg/wal.cpp) is about to be written: nothing issued
// (-1), exact. So the marker is only ever on disk beside a mark file, and
// 1.0 reads this mark too (its window field is zero).
constexpr Mark kNothingIssued{-1, true, 0};

// What a start that finds no mark file means. The marker snowflake.walmark
// is written only once a mark file is on disk (kNothingIssued if need be),
// so a marker without a mark file says that the file was lost: removed, or
// left behind by a file-level restore or a copy of the data directory.
// - No marker: a first start (or a data directory last run by 1.0, which
//   wrote no marker: no telling the two apart). Silent, ids as usual.
// - Marker, worker ids leased from a coordinator (a static
//   snowflake.worker_id leased too): each worker id's mark there is the floor
//   a tenure starts above (plan_handover), whatever this file said, and
//   every id was issued under a reservation of that mark. Logged, not
//   refused.
// - Marker, no coordinator: nothing else knows the ids this data
//   directory issued; uniqueness would rest on the clock alone. Refused
//   until a snowflake WAL record is replayed (the last one covers every
//   reservation this WAL logged before it, and replay writes the mark file
//   from it) or snowflake_advance_floor() has made a floor durable (the mark
//   file is then on disk again, so a restart does not refuse).
enum class MissingMark { FirstStart, CoveredByCoordinator, Lost };
MissingMark judge_missing_mark(bool marker_present, bool leasing) noexcept;

// CRC-32C (Castagnoli), as used by iSCSI and PostgreSQL's WAL.
uint32_t crc32c(const uint8_t* data, size_t len) noexcept;

}  // namespace snowflake::core
