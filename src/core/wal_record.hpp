// The data of snowflake's WAL record (src/pg/wal.cpp, record type RESERVE)
// in both of its layouts, and what a replaying node reads in one: pure, so
// that every format a standby may meet is unit-tested.
//
// 32 bytes, written by a node whose snowflake.layout is not twitter: the 24
// bytes below, then
//   24-27  uint32 layout        mark_layout_code() of the primary's layout
//                               (core/mark.hpp), never 0
//   28-31  zero
// A reader of another layout stops (src/pg/wal.cpp): ids of two layouts can
// be equal bit for bit, so a standby that replays them must issue the same.
// 24 bytes, written since the record carries its epoch (the twitter layout):
//   0-7    int64 until_ms       the primary issued or may issue ids up to and
//                               including this millisecond of the id space
//                               (milliseconds since epoch_unix_us), until its
//                               next record: the end of its reservation, or
//                               its floor if higher
//   8-15   int64 epoch_unix_us  the primary's snowflake.epoch, in Unix
//                               microseconds: what until_ms counts from
//   16-19  int32 window_ms      how far the reservation reached ahead of its
//                               clock
//   20-23  int32 worker_id      the primary's worker id then (-1: none)
// 16 bytes, written by 1.1 and 1.2:
//   0-7    int64 until_unix_ms  the same end, in Unix milliseconds (the
//                               writer's epoch is not recorded)
//   8-11   int32 window_ms
//   12-15  int32 worker_id
// In the byte order of the machine, as the rest of the WAL.
//
// The id space, not Unix time: ids are unique by their bits, and two nodes
// whose epochs differ by 4 s put the same Unix millisecond into ids 4 s
// apart. A record that says which epoch its milliseconds count from means
// the same to every reader; a reader of another epoch refuses ids once
// promoted (core/promotion.hpp) instead of converting.
#pragma once

#include "pure.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core {

constexpr size_t kReserveRecordSizeLayout = 32;
constexpr size_t kReserveRecordSize = 24;
constexpr size_t kReserveRecordSize12 = 16;  // 1.1 and 1.2

struct WalReservation {
    int64_t until_ms = -1;      // id space of epoch_unix_us (24 bytes); Unix ms (16 bytes)
    bool epoch_known = false;   // false: a 16-byte record, until_ms is Unix ms
    int64_t epoch_unix_us = 0;  // when epoch_known
    int32_t window_ms = 0;
    int32_t worker_id = -1;
    uint32_t layout = 0;  // mark_layout_code(); 0 (twitter) in 24- and 16-byte records
};

// The 24-byte layout of r, or the 32-byte one when r.layout is not 0
// (r.epoch_known must be true); returns the length written.
size_t encode_reservation(const WalReservation& r, uint8_t out[kReserveRecordSizeLayout]) noexcept;
// Either layout, told apart by its length; false for any other length.
bool decode_reservation(const uint8_t* data, size_t len, WalReservation* out) noexcept;

// How a record's epoch compares with the reader's.
enum class RecordEpoch {
    Same,     // the reader's snowflake.epoch
    Differs,  // another one: ids are refused after a promotion
    Unknown,  // a 16-byte record: read in the reader's epoch, as 1.2 did
};

// What a reader whose snowflake.epoch is reader_epoch_unix_us takes from a
// record: the reservation's end in its id space and how the epochs
// compare. A 24-byte record's milliseconds are taken as they are, whatever
// the reader's epoch: they bound the bits of the ids the primary issued,
// which is what a floor bounds. A 16-byte record's Unix milliseconds can
// only be read with the reader's own epoch.
struct ReplayedReservation {
    int64_t until_ms = -1;  // id space, -1 .. kMaxMs
    RecordEpoch epoch = RecordEpoch::Unknown;
};
ReplayedReservation read_reservation(const WalReservation& r, int64_t reader_epoch_unix_us) noexcept;

}  // namespace snowflake::core
