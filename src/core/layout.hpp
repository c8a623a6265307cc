// The 64-bit Snowflake id layout.
//
//   bit 63      always zero (ids are positive bigints)
//   bits 62-22  milliseconds since the configured epoch (41 bits, ~69.7 years)
//   bits 21-12  worker id (10 bits, 0..1023)
//   bits 11-0   sequence within the millisecond (12 bits, 0..4095)
#pragma once

#include "pure.hpp"

#include <cstdint>

namespace snowflake::core {

constexpr int kTimestampBits = 41;
constexpr int kWorkerBits = 10;
constexpr int kSequenceBits = 12;

constexpr int kWorkerShift = kSequenceBits;
constexpr int kTimestampShift = kSequenceBits + kWorkerBits;

constexpr int64_t kMaxMs = (int64_t{1} << kTimestampBits) - 1;
constexpr int32_t kMaxWorker = (1 << kWorkerBits) - 1;
constexpr int32_t kMaxSequence = (1 << kSequenceBits) - 1;
constexpr int32_t kIdsPerMs = kMaxSequence + 1;

static_assert(kTimestampBits + kWorkerBits + kSequenceBits == 63, "one sign bit, 63 payload bits");

struct Fields {
    int64_t ms;        // milliseconds since the epoch
    int32_t worker;    // 0..kMaxWorker
    int32_t sequence;  // 0..kMaxSequence
};

constexpr bool valid_ms(int64_t ms) noexcept { return ms >= 0 && ms <= kMaxMs; }
constexpr bool valid_worker(int64_t w) noexcept { return w >= 0 && w <= kMaxWorker; }
constexpr bool valid_sequence(int64_t s) noexcept { return s >= 0 && s <= kMaxSequence; }
constexpr bool valid_id(int64_t id) noexcept { return id >= 0; }

// Packs the three fields. The caller checks them with the valid_* functions
// first; out-of-range bits are masked off, never carried into a neighbour.
constexpr int64_t compose(int64_t ms, int32_t worker, int32_t sequence) noexcept {
    return static_cast<int64_t>((static_cast<uint64_t>(ms & kMaxMs) << kTimestampShift) |
                                (static_cast<uint64_t>(worker & kMaxWorker) << kWorkerShift) |
                                static_cast<uint64_t>(sequence & kMaxSequence));
}

// Unpacks a non-negative id.
constexpr Fields decompose(int64_t id) noexcept {
    const auto u = static_cast<uint64_t>(id);
    return Fields{static_cast<int64_t>((u >> kTimestampShift) & static_cast<uint64_t>(kMaxMs)),
                  static_cast<int32_t>((u >> kWorkerShift) & static_cast<uint64_t>(kMaxWorker)),
                  static_cast<int32_t>(u & static_cast<uint64_t>(kMaxSequence))};
}

// The smallest id any worker can issue in millisecond `ms`.
constexpr int64_t first_id_of_ms(int64_t ms) noexcept { return compose(ms, 0, 0); }

// ---------------------------------------------------------------------------
// The node's own layout, as the id path uses it (snowflake.layout, issue 31):
// time, worker id and sequence from the top bit down, time in milliseconds,
// any widths of at least one bit each that add up to at most 63 with at
// most 41 bits of time (the mark file, the WAL record and the coordinator's
// marks hold milliseconds up to kMaxMs). Everything above is this geometry's
// special case kTwitter (41/10/12). Other orders and time units are read and
// built by id_layout.hpp, not issued.
//
// The position word (position.hpp) of a geometry packs the worker id above
// an ordered part of time_bits + 1 + sequence_bits bits; with at most 63 bits
// in all it always fits 64.
struct Geometry {
    int32_t time_bits;
    int32_t worker_bits;
    int32_t sequence_bits;
    int64_t max_ms;  // the last millisecond of the lifetime
    int32_t max_worker;
    int32_t max_sequence;  // ids per millisecond: max_sequence + 1
    int32_t worker_shift;
    int32_t time_shift;
    int32_t word_worker_shift;  // the position word's worker id
    uint64_t fenced_base;       // the first fenced value of the word's ordered part
};

constexpr int kMaxNodeTimeBits = kTimestampBits;
// 2^35 ms is 1.09 years: a node needs a year of its lifetime left at start
// (generator.hpp's check_epoch), so a shorter time field is refused.
constexpr int kMinNodeTimeBits = 35;

// Whether widths make a geometry: each at least one bit, 63 in all, time at
// most kMaxNodeTimeBits, sequence at most 30 bits (int32 counts), and time
// and sequence 3 bits together: with one bit each the fenced values,
// fenced_base + ms + 1 up to (2^T + 1) * 2^S + 2^T, would run into the
// worker id above the word's 3-bit ordered part (2^S + 2^T >= 2^(T+S) holds
// for T = S = 1 only).
constexpr bool geometry_valid(int32_t time_bits, int32_t worker_bits, int32_t sequence_bits) noexcept {
    return time_bits >= 1 && worker_bits >= 1 && sequence_bits >= 1 && time_bits <= kMaxNodeTimeBits &&
           worker_bits <= 30 && sequence_bits <= 30 && time_bits + worker_bits + sequence_bits <= 63 &&
           time_bits + sequence_bits >= 3;
}

// The caller checks geometry_valid() first.
constexpr Geometry geometry_of(int32_t time_bits, int32_t worker_bits, int32_t sequence_bits) noexcept {
    Geometry g{};
    g.time_bits = time_bits;
    g.worker_bits = worker_bits;
    g.sequence_bits = sequence_bits;
    g.max_ms = (int64_t{1} << time_bits) - 1;
    g.max_worker = static_cast<int32_t>((int64_t{1} << worker_bits) - 1);
    g.max_sequence = static_cast<int32_t>((int64_t{1} << sequence_bits) - 1);
    g.worker_shift = sequence_bits;
    g.time_shift = sequence_bits + worker_bits;
    g.word_worker_shift = sequence_bits + time_bits + 1;
    g.fenced_base = static_cast<uint64_t>(g.max_ms + 2) << sequence_bits;
    return g;
}

constexpr Geometry kTwitter = geometry_of(kTimestampBits, kWorkerBits, kSequenceBits);

constexpr bool operator==(const Geometry& a, const Geometry& b) noexcept {
    return a.time_bits == b.time_bits && a.worker_bits == b.worker_bits && a.sequence_bits == b.sequence_bits;
}
constexpr bool operator!=(const Geometry& a, const Geometry& b) noexcept { return !(a == b); }

constexpr bool valid_ms(const Geometry& g, int64_t ms) noexcept { return ms >= 0 && ms <= g.max_ms; }
constexpr bool valid_worker(const Geometry& g, int64_t w) noexcept { return w >= 0 && w <= g.max_worker; }
constexpr bool valid_sequence(const Geometry& g, int64_t s) noexcept { return s >= 0 && s <= g.max_sequence; }

constexpr int64_t compose(const Geometry& g, int64_t ms, int32_t worker, int32_t sequence) noexcept {
    return static_cast<int64_t>(
        (static_cast<uint64_t>(ms & g.max_ms) << g.time_shift) |
        (static_cast<uint64_t>(static_cast<uint32_t>(worker) & static_cast<uint32_t>(g.max_worker))
         << g.worker_shift) |
        static_cast<uint64_t>(static_cast<uint32_t>(sequence) & static_cast<uint32_t>(g.max_sequence)));
}
constexpr Fields decompose(const Geometry& g, int64_t id) noexcept {
    const auto u = static_cast<uint64_t>(id);
    return Fields{static_cast<int64_t>((u >> g.time_shift) & static_cast<uint64_t>(g.max_ms)),
                  static_cast<int32_t>((u >> g.worker_shift) & static_cast<uint64_t>(g.max_worker)),
                  static_cast<int32_t>(u & static_cast<uint64_t>(g.max_sequence))};
}
constexpr int64_t first_id_of_ms(const Geometry& g, int64_t ms) noexcept { return compose(g, ms, 0, 0); }
// Whether id can be an id of g: not negative, below 2^(time+worker+sequence).
constexpr bool id_in(const Geometry& g, int64_t id) noexcept {
    return id >= 0 && (static_cast<uint64_t>(id) >> (g.time_shift + g.time_bits)) == 0;
}

static_assert(kTwitter.word_worker_shift + kTwitter.worker_bits == 64, "twitter's position word is full");
static_assert(compose(kTwitter, 5, 7, 9) == compose(5, 7, 9), "kTwitter is the fixed layout");

}  // namespace snowflake::core
