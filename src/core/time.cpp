// Time arithmetic: civil dates and RFC 3339 text; see time.hpp.
#include "time.hpp"

#include <cstdio>

namespace snowflake::core {

int64_t days_from_civil(int64_t year, int month, int day) noexcept {
    // Count from 0000-03-01, so that the leap day ends each 4-year cycle;
    // 400-year eras of 146,097 days.
    const int64_t y = month <= 2 ? year - 1 : year;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t year_of_era = y - era * 400;                                  // 0..399
    const int64_t m = month > 2 ? month - 3 : month + 9;                        // March = 0
    const int64_t day_of_year = (153 * m + 2) / 5 + day - 1;                    // 0..365
    const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;  // 719468: days from 0000-03-01 to 1970-01-01
}

CivilDate civil_from_days(int64_t days) noexcept {
    // The steps of days_from_civil backwards, in the same March-based eras.
    const int64_t z = days + 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t day_of_era = z - era * 146097;                                              // 0..146096
    const int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;    // 0..399
    const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    const int64_t m = (5 * day_of_year + 2) / 153;                                            // March = 0
    const int day = static_cast<int>(day_of_year - (153 * m + 2) / 5 + 1);
    const int month = static_cast<int>(m < 10 ? m + 3 : m - 9);
    const int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
    return CivilDate{year, month, day};
}

namespace {

// a mod b in [0, b) for b > 0, without the overflow of a - floor_div(a, b) * b
// at the ends of the range.
int64_t floor_mod(int64_t a, int64_t b) noexcept {
    const int64_t r = a % b;
    return r < 0 ? r + b : r;
}

// The fields of a day count and the microseconds into that day.
UtcTime utc_fields(int64_t days, int64_t us_of_day) noexcept {
    const int64_t second_of_day = us_of_day / kUsPerS;
    return UtcTime{civil_from_days(days), static_cast<int>(second_of_day / 3600),
                   static_cast<int>(second_of_day / 60 % 60), static_cast<int>(second_of_day % 60),
                   static_cast<int>(us_of_day % kUsPerS)};
}

}  // namespace

UtcTime utc_from_unix_us(int64_t unix_us) noexcept {
    constexpr int64_t kUsPerDay = kMsPerDay * kUsPerMs;
    return utc_fields(floor_div(unix_us, kUsPerDay), floor_mod(unix_us, kUsPerDay));
}

UtcTime utc_from_unix_ms(int64_t unix_ms) noexcept {
    return utc_fields(floor_div(unix_ms, kMsPerDay), floor_mod(unix_ms, kMsPerDay) * kUsPerMs);
}

size_t format_rfc3339(char* buf, size_t cap, const UtcTime& t, Rfc3339Style style) noexcept {
    if (cap == 0) return 0;
    const long long year = static_cast<long long>(t.date.year);
    int n;
    if (style.signed_long_years && year < 0)
        n = std::snprintf(buf, cap, "-%04lld", -year);
    else if (style.signed_long_years && year > 9999)
        n = std::snprintf(buf, cap, "+%lld", year);
    else
        n = std::snprintf(buf, cap, "%04lld", year);
    if (n < 0 || static_cast<size_t>(n) >= cap) return 0;
    const bool micros = style.micros_when_present && t.micros % 1000 != 0;
    const int m = std::snprintf(buf + n, cap - static_cast<size_t>(n),
                                micros ? "-%02d-%02dT%02d:%02d:%02d.%06dZ" : "-%02d-%02dT%02d:%02d:%02d.%03dZ",
                                t.date.month, t.date.day, t.hour, t.minute, t.second,
                                micros ? t.micros : t.micros / 1000);
    if (m < 0 || static_cast<size_t>(n + m) >= cap) return 0;
    return static_cast<size_t>(n + m);
}

size_t format_rfc3339_ms(char* buf, size_t cap, int64_t unix_ms) noexcept {
    Rfc3339Style style;
    style.signed_long_years = true;
    return format_rfc3339(buf, cap, utc_from_unix_ms(unix_ms), style);
}

}  // namespace snowflake::core
