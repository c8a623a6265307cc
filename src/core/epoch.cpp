#include "epoch.hpp"

namespace snowflake::core {

namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Reads exactly n digits.
bool digits(const char*& p, int n, int* out) noexcept {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(p[i])) return false;
        v = v * 10 + (p[i] - '0');
    }
    p += n;
    *out = v;
    return true;
}

// Case-insensitive match of a word, advancing on success.
bool word(const char*& p, const char* w) noexcept {
    int i = 0;
    for (; w[i] != '\0'; i++)
        if (lower(p[i]) != w[i]) return false;
    p += i;
    return true;
}

bool leap(int64_t y) noexcept { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int64_t y, int m) noexcept {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

}  // namespace

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

EpochParse parse_epoch(const char* text, int64_t* unix_us) noexcept {
    if (text == nullptr) return EpochParse::Syntax;
    const char* p = text;
    while (*p == ' ') p++;

    int year, month, day;
    if (!digits(p, 4, &year) || *p++ != '-' || !digits(p, 2, &month) || *p++ != '-' ||
        !digits(p, 2, &day))
        return EpochParse::Syntax;

    int hour = 0, minute = 0, second = 0, micros = 0;
    if ((*p == 'T' || *p == 't' || *p == ' ') && is_digit(p[1])) {
        p++;
        if (!digits(p, 2, &hour) || *p++ != ':' || !digits(p, 2, &minute)) return EpochParse::Syntax;
        if (*p == ':') {
            p++;
            if (!digits(p, 2, &second)) return EpochParse::Syntax;
            if (*p == '.') {
                p++;
                int n = 0;
                while (is_digit(*p)) {
                    if (n == 6) return EpochParse::Syntax;  // finer than a microsecond
                    micros = micros * 10 + (*p++ - '0');
                    n++;
                }
                if (n == 0) return EpochParse::Syntax;
                for (; n < 6; n++) micros *= 10;
            }
        }
    }

    while (*p == ' ') p++;
    int offset_minutes = 0;
    if (*p == '\0') return EpochParse::MissingOffset;
    if (word(p, "utc") || word(p, "gmt") || word(p, "z")) {
        offset_minutes = 0;
    } else if (*p == '+' || *p == '-') {
        const int sign = *p++ == '-' ? -1 : 1;
        int oh, om = 0;
        if (!digits(p, 2, &oh)) return EpochParse::Syntax;
        if (*p == ':') p++;
        if (is_digit(*p) && !digits(p, 2, &om)) return EpochParse::Syntax;
        if (oh > 15 || om > 59) return EpochParse::FieldRange;
        offset_minutes = sign * (oh * 60 + om);
    } else {
        return EpochParse::Syntax;
    }
    while (*p == ' ') p++;
    if (*p != '\0') return EpochParse::Syntax;

    if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
        hour > 23 || minute > 59 || second > 59)
        return EpochParse::FieldRange;

    const int64_t days = days_from_civil(year, month, day);
    const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    *unix_us = seconds * 1000000 + micros;
    return EpochParse::Ok;
}

const char* epoch_parse_text(EpochParse p) noexcept {
    switch (p) {
        case EpochParse::Ok: return "valid";
        case EpochParse::Syntax:
            return "It is not an ISO 8601 timestamp of the form YYYY-MM-DD HH:MM:SS+HH:MM.";
        case EpochParse::FieldRange: return "A field of the date, time or offset is out of range.";
        case EpochParse::MissingOffset:
            return "It has no UTC offset, so its meaning would depend on the server's time zone.";
    }
    return "unknown";
}

}  // namespace snowflake::core
