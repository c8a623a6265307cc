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

}  // namespace snowflake::core
