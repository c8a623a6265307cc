// The one copy of time arithmetic (core/time.hpp) and of JSON and UUID text
// (core/text.hpp) that the HTTP endpoint, the lease and snowflake-inspect use.
#include "core/text.hpp"
#include "core/time.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace snowflake::core;

TEST(Time, FloorDivAndUnits) {
    EXPECT_EQ(floor_div(-1, 1000), -1);
    EXPECT_EQ(floor_div(-1000, 1000), -1);
    EXPECT_EQ(floor_div(999, 1000), 0);
    EXPECT_EQ(kNsPerMs, 1000000);
    EXPECT_EQ(kUsPerS, 1000000);
    EXPECT_EQ(kMsPerDay, 86400000);
}

TEST(Time, UtcFields) {
    const UtcTime t = utc_from_unix_us(-1);
    EXPECT_EQ(t.date.year, 1969);
    EXPECT_EQ(t.date.month, 12);
    EXPECT_EQ(t.date.day, 31);
    EXPECT_EQ(t.hour, 23);
    EXPECT_EQ(t.second, 59);
    EXPECT_EQ(t.micros, 999999);
    const UtcTime m = utc_from_unix_ms(951782400050);  // 2000-02-29
    EXPECT_EQ(m.date.month, 2);
    EXPECT_EQ(m.date.day, 29);
    EXPECT_EQ(m.micros, 50000);
}

TEST(Time, EndsOfTheRange) {
    // No overflow at the ends (the sanitized build checks).
    for (const int64_t v : {INT64_MIN, INT64_MAX}) {
        const UtcTime m = utc_from_unix_ms(v);
        const UtcTime u = utc_from_unix_us(v);
        EXPECT_TRUE(m.hour >= 0 && m.hour < 24 && m.micros >= 0 && m.micros < 1000000);
        EXPECT_TRUE(u.hour >= 0 && u.hour < 24 && u.micros >= 0 && u.micros < 1000000);
    }
    EXPECT_EQ(utc_from_unix_ms(INT64_MIN).micros, 192000);  // ...808 ms into its second
}

TEST(Time, Rfc3339Styles) {
    char buf[40];
    Rfc3339Style plain;
    ASSERT_GT(format_rfc3339(buf, sizeof buf, utc_from_unix_us(1001), plain), 0u);
    EXPECT_STREQ(buf, "1970-01-01T00:00:00.001Z");
    Rfc3339Style micros;
    micros.micros_when_present = true;
    ASSERT_GT(format_rfc3339(buf, sizeof buf, utc_from_unix_us(1001), micros), 0u);
    EXPECT_STREQ(buf, "1970-01-01T00:00:00.001001Z");
    ASSERT_GT(format_rfc3339(buf, sizeof buf, utc_from_unix_us(2000), micros), 0u);
    EXPECT_STREQ(buf, "1970-01-01T00:00:00.002Z");
    const int64_t year_10000_ms = days_from_civil(10000, 1, 1) * kMsPerDay;
    ASSERT_GT(format_rfc3339(buf, sizeof buf, utc_from_unix_ms(year_10000_ms), plain), 0u);
    EXPECT_STREQ(buf, "10000-01-01T00:00:00.000Z");
    ASSERT_GT(format_rfc3339_ms(buf, sizeof buf, year_10000_ms), 0u);
    EXPECT_STREQ(buf, "+10000-01-01T00:00:00.000Z");
    EXPECT_EQ(format_rfc3339_ms(buf, 24, 0), 0u);  // 24 bytes and the NUL do not fit
    EXPECT_EQ(format_rfc3339_ms(buf, 25, 0), 24u);
}

TEST(Text, JsonStringBothWriters) {
    const std::string in("a\"\\\n\x01\xc3\xa9\xff", 8);
    const std::string want = "\"a\\\"\\\\\\u000a\\u0001\xc3\xa9\\ufffd\"";
    EXPECT_EQ(json_string(in), want);
    char buf[64];
    BufWriter w(buf, sizeof buf);
    w.json_string(in.c_str());
    ASSERT_EQ(w.finish(), want.size());
    EXPECT_EQ(std::string(buf), want);
    BufWriter small(buf, 4);
    small.json_string("abcdef");
    EXPECT_EQ(small.finish(), 0u);
}

TEST(Text, UuidRoundTrip) {
    Uuid u{};
    ASSERT_TRUE(parse_uuid_text("{01A22700F63A78F3A26F1DB9E426F23A}", &u));
    char text[kUuidTextLen + 1];
    format_uuid(text, u);
    EXPECT_STREQ(text, "01a22700-f63a-78f3-a26f-1db9e426f23a");
    EXPECT_FALSE(parse_uuid_text("01a22700-f63a-78f3-a26f-1db9e426f23", &u));
    EXPECT_FALSE(parse_uuid_text("01a22700f63a-78f3-a26f-1db9e426f23a0", &u));
}
