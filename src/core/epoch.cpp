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
    const int64_t seconds = days * kSPerDay + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    *unix_us = seconds * kUsPerS + micros;
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
