// parse_epoch and days_from_civil.
#include "core/epoch.hpp"

#include <gtest/gtest.h>

using namespace snowflake::core;

namespace {
int64_t us(const char* text) {
    int64_t v = 0;
    EXPECT_EQ(parse_epoch(text, &v), EpochParse::Ok) << text;
    return v;
}
EpochParse status(const char* text) {
    int64_t v = 0;
    return parse_epoch(text, &v);
}
}  // namespace

TEST(DaysFromCivil, KnownDates) {
    EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
    EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
    EXPECT_EQ(days_from_civil(2000, 1, 1), 10957);
    EXPECT_EQ(days_from_civil(2000, 3, 1), 11017);  // 2000 is a leap year
    EXPECT_EQ(days_from_civil(2025, 1, 1), 20089);
    EXPECT_EQ(days_from_civil(1, 1, 1), -719162);
    EXPECT_EQ(days_from_civil(9999, 12, 31), 2932896);
}

TEST(DaysFromCivil, ConsecutiveDaysAreOneApart) {
    // Walk every day of 1600..2400 through month ends and leap days.
    int64_t prev = days_from_civil(1599, 12, 31);
    for (int y = 1600; y <= 2400; y++) {
        const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        const int mdays[12] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        for (int m = 1; m <= 12; m++)
            for (int d = 1; d <= mdays[m - 1]; d++) {
                const int64_t cur = days_from_civil(y, m, d);
                ASSERT_EQ(cur, prev + 1) << y << "-" << m << "-" << d;
                prev = cur;
            }
    }
}

TEST(ParseEpoch, AcceptedForms) {
    const int64_t jan2025 = int64_t{1735689600} * 1000000;  // 2025-01-01 00:00:00 UTC
    EXPECT_EQ(us("2025-01-01 00:00:00+00"), jan2025);
    EXPECT_EQ(us("2025-01-01T00:00:00Z"), jan2025);
    EXPECT_EQ(us("2025-01-01t00:00:00z"), jan2025);
    EXPECT_EQ(us("2025-01-01 00:00 UTC"), jan2025);
    EXPECT_EQ(us("2025-01-01 gmt"), jan2025);
    EXPECT_EQ(us("2025-01-01+00"), jan2025);
    EXPECT_EQ(us("  2025-01-01 00:00:00 +00:00  "), jan2025);
    EXPECT_EQ(us("2025-01-01 01:00:00+01"), jan2025);
    EXPECT_EQ(us("2024-12-31 19:00:00-0500"), jan2025);
    EXPECT_EQ(us("2025-01-01 05:30:00+05:30"), jan2025);
    // Twitter's epoch, 1288834974657 ms.
    EXPECT_EQ(us("2010-11-04 01:42:54.657+00"), int64_t{1288834974657} * 1000);
    EXPECT_EQ(us("1970-01-01 00:00:00.000001+00"), 1);
    EXPECT_EQ(us("1969-12-31 23:59:59.999999Z"), -1);
    EXPECT_EQ(us("2024-02-29 00:00:00+00"), int64_t{1709164800} * 1000000);
}

TEST(ParseEpoch, MissingOffsetIsRefused) {
    EXPECT_EQ(status("2025-01-01"), EpochParse::MissingOffset);
    EXPECT_EQ(status("2025-01-01 00:00:00"), EpochParse::MissingOffset);
    EXPECT_EQ(status("2025-01-01T00:00:00.5  "), EpochParse::MissingOffset);
}

TEST(ParseEpoch, SyntaxErrors) {
    for (const char* bad : {"", "now", "infinity", "epoch", "garbage", "2025-1-01+00", "25-01-01+00",
                            "2025/01/01+00", "2025-01-01 00+00", "2025-01-01 00:00:0+00",
                            "2025-01-01 00:00:00.+00", "2025-01-01 00:00:00.1234567+00",
                            "2025-01-01 00:00:00 Europe/Berlin", "2025-01-01 00:00:00 CET",
                            "2025-01-01 00:00:00+0", "2025-01-01 00:00:00+00 junk",
                            "2025-01-01 00:00:00+00:0x", "12025-01-01+00"}) {
        EXPECT_EQ(status(bad), EpochParse::Syntax) << "'" << bad << "'";
    }
    int64_t v;
    EXPECT_EQ(parse_epoch(nullptr, &v), EpochParse::Syntax);
}

TEST(ParseEpoch, FieldRanges) {
    for (const char* bad : {"2025-13-01+00", "2025-00-01+00", "2025-02-29+00", "2024-02-30+00",
                            "2025-04-31+00", "2025-01-00+00", "0000-01-01+00", "2025-01-01 24:00:00+00",
                            "2025-01-01 23:60:00+00", "2025-01-01 23:59:60+00", "2025-01-01+16",
                            "2025-01-01+15:60"}) {
        EXPECT_EQ(status(bad), EpochParse::FieldRange) << "'" << bad << "'";
    }
    EXPECT_EQ(status("2025-01-01+15:59"), EpochParse::Ok);
    EXPECT_EQ(status("2000-02-29+00"), EpochParse::Ok);
    EXPECT_EQ(status("1900-02-29+00"), EpochParse::FieldRange);
}

TEST(ParseEpoch, EveryStatusHasText) {
    for (EpochParse p : {EpochParse::Ok, EpochParse::Syntax, EpochParse::FieldRange, EpochParse::MissingOffset})
        EXPECT_NE(epoch_parse_text(p)[0], '\0');
}

TEST(CivilFromDays, InverseOfDaysFromCivil) {
    // Every day from year 1 to 10999 (the inspector prints UUIDv7 times up
    // to about 10889), through month ends, leap days and era boundaries.
    const int64_t first = days_from_civil(1, 1, 1);
    const int64_t last = days_from_civil(10999, 12, 31);
    CivilDate prev = civil_from_days(first);
    EXPECT_EQ(prev.year, 1);
    EXPECT_EQ(prev.month, 1);
    EXPECT_EQ(prev.day, 1);
    for (int64_t d = first + 1; d <= last; d++) {
        const CivilDate c = civil_from_days(d);
        ASSERT_EQ(days_from_civil(c.year, c.month, c.day), d) << c.year << "-" << c.month << "-" << c.day;
        ASSERT_TRUE(c.day == prev.day + 1 || (c.day == 1 && (c.month == prev.month + 1 ||
                                                             (c.month == 1 && prev.month == 12))))
            << d;
        prev = c;
    }
    EXPECT_EQ(prev.year, 10999);
}

TEST(CivilFromDays, KnownDates) {
    const CivilDate epoch = civil_from_days(0);
    EXPECT_EQ(epoch.year, 1970);
    EXPECT_EQ(epoch.month, 1);
    EXPECT_EQ(epoch.day, 1);
    const CivilDate leap = civil_from_days(11016);
    EXPECT_EQ(leap.year, 2000);
    EXPECT_EQ(leap.month, 2);
    EXPECT_EQ(leap.day, 29);
    const CivilDate before = civil_from_days(-1);
    EXPECT_EQ(before.year, 1969);
    EXPECT_EQ(before.month, 12);
    EXPECT_EQ(before.day, 31);
}

TEST(ParseEpoch, DefaultEpochParses) {
    EXPECT_EQ(us(kDefaultEpoch), int64_t{1735689600} * 1000000);
}
