// RFC 9562 UUID version 7, built from an injected clock and random bytes.
//
//   bytes 0-5   unix_ts_ms, 48 bits big-endian
//   byte  6     version 7 in the high nibble, then rand_a's top 4 bits
//   byte  7     rand_a's low 8 bits: a 12-bit sub-millisecond fraction
//               (RFC 9562 section 6.2, method 3)
//   byte  8     variant 0b10 in the top two bits, then 6 random bits
//   bytes 9-15  56 random bits (rand_b is 62 bits in all)
//
// Time is handled as "ticks": milliseconds * 4096 + fraction, a 60-bit
// count of 1/4096 ms. Monotonicity works on ticks: a clock that stands
// still or steps back advances the previous value by one tick.
#pragma once

#include "pure.hpp"

#include <cstdint>

namespace snowflake::core {

constexpr int kUuidFractionBits = 12;
constexpr int64_t kUuidMaxMs = (int64_t{1} << 48) - 1;
constexpr int64_t kUuidMaxTicks = (int64_t{1} << (48 + kUuidFractionBits)) - 1;
constexpr int kUuidRandomBytes = 8;  // bytes of randomness one UUID consumes

struct Uuid {
    uint8_t bytes[16];
};

// Milliseconds since 1970 and nanoseconds within that millisecond
// (0..999999) to ticks; no intermediate nanosecond count, so it holds over
// the whole 48-bit millisecond range.
constexpr int64_t uuid_ticks_from_ms(int64_t unix_ms, int64_t sub_ms_ns) noexcept {
    return unix_ms * 4096 + (sub_ms_ns * 4096) / 1000000;
}

// Nanoseconds since 1970 to ticks (floor of the fraction). Negative input
// gives a negative result: the caller range-checks with valid_uuid_ticks.
constexpr int64_t uuid_ticks_from_ns(int64_t unix_ns) noexcept {
    // Floor division without negating (which would overflow at INT64_MIN);
    // |ms| < 2^44, so the ticks cannot overflow.
    const int64_t rem = unix_ns % 1000000;
    return rem < 0 ? uuid_ticks_from_ms(unix_ns / 1000000 - 1, rem + 1000000)
                   : uuid_ticks_from_ms(unix_ns / 1000000, rem);
}

constexpr bool valid_uuid_ticks(int64_t ticks) noexcept {
    return ticks >= 0 && ticks <= kUuidMaxTicks;
}

// Per-process monotonic state.
struct UuidClock {
    int64_t last_ticks = -1;
};

// The ticks to use for the next UUID: now_ticks, or one more than the last
// value when the clock has not moved past it.
int64_t ascending_ticks(UuidClock& clock, int64_t now_ticks) noexcept;

// Builds a UUIDv7 from valid ticks and kUuidRandomBytes random bytes.
Uuid build_uuidv7(int64_t ticks, const uint8_t* random) noexcept;

// The smallest version-7 UUID of millisecond `ms` (0..kUuidMaxMs): all
// fraction and random bits zero, version and variant set.
Uuid uuidv7_floor(int64_t ms) noexcept;

// Version nibble of any UUID.
constexpr int uuid_version(const Uuid& u) noexcept { return u.bytes[6] >> 4; }

// RFC 9562 variant (0b10x).
constexpr bool uuid_rfc_variant(const Uuid& u) noexcept { return (u.bytes[8] & 0xC0) == 0x80; }

// The 48-bit millisecond field.
int64_t uuid_ms(const Uuid& u) noexcept;

}  // namespace snowflake::core
