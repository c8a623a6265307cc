// Time arithmetic, the one copy: unit constants, floor division, civil
// (proleptic Gregorian) dates and RFC 3339 text. The core, the glue and
// snowflake-inspect all call these; parsing of timestamps is epoch.hpp's
// parse_epoch(), which builds on days_from_civil() here.
#pragma once

#include "pure.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core {

// Units.
constexpr int64_t kNsPerUs = 1000;
constexpr int64_t kUsPerMs = 1000;
constexpr int64_t kMsPerS = 1000;
constexpr int64_t kNsPerMs = kNsPerUs * kUsPerMs;
constexpr int64_t kUsPerS = kUsPerMs * kMsPerS;
constexpr int64_t kSPerDay = 86400;
constexpr int64_t kMsPerDay = kSPerDay * kMsPerS;

// a / b rounded towards minus infinity (Unix milliseconds to epoch-relative
// milliseconds, microseconds to milliseconds, for instants before 1970 too).
constexpr int64_t floor_div(int64_t a, int64_t b) noexcept {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Days from 1970-01-01 to the given proleptic Gregorian date.
int64_t days_from_civil(int64_t year, int month, int day) noexcept;

// The inverse: the proleptic Gregorian date of a day count from 1970-01-01.
struct CivilDate {
    int64_t year;
    int month;  // 1..12
    int day;    // 1..31
};
CivilDate civil_from_days(int64_t days) noexcept;

// An instant in UTC, broken into calendar fields.
struct UtcTime {
    CivilDate date;
    int hour;    // 0..23
    int minute;  // 0..59
    int second;  // 0..59
    int micros;  // 0..999999
};
// The UTC fields of Unix microseconds.
UtcTime utc_from_unix_us(int64_t unix_us) noexcept;
// The UTC fields of Unix milliseconds.
UtcTime utc_from_unix_ms(int64_t unix_ms) noexcept;

// How format_rfc3339 writes what plain RFC 3339 cannot hold.
struct Rfc3339Style {
    // Six fraction digits when the instant has microseconds (else three).
    bool micros_when_present = false;
    // Years past 9999 get a '+', years before 0 a '-' (ISO 8601 expanded
    // years); otherwise the year is written with at least four digits.
    bool signed_long_years = false;
};
// "2025-01-01T00:00:00.000Z" into buf; returns the length, or 0 (nothing
// usable) when it does not fit with its NUL. 40 bytes always suffice.
size_t format_rfc3339(char* buf, size_t cap, const UtcTime& t, Rfc3339Style style) noexcept;

// RFC 3339 UTC with milliseconds, "2025-01-01T00:00:00.000Z"; at most 31
// bytes with the NUL. Years outside 0..9999 get a sign and more digits.
size_t format_rfc3339_ms(char* buf, size_t cap, int64_t unix_ms) noexcept;

}  // namespace snowflake::core
