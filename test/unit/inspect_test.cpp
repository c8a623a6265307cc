// Unit tests of snowflake-inspect's decisions (src/inspect/inspect.hpp):
// command line, classification of inputs, text and JSON output.

#include "inspect/inspect.hpp"

#include "core/epoch.hpp"
#include "core/layout.hpp"
#include "core/uuid.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

using namespace snowflake::inspect;
namespace core = snowflake::core;

constexpr int64_t kDefaultEpochUs = int64_t{1735689600} * 1000000;  // 2025-01-01T00:00:00Z

Request parse(std::initializer_list<const char*> args) {
    std::vector<const char*> argv = {"snowflake-inspect"};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_args(static_cast<int>(argv.size()), argv.data());
}

Decoded decode(const char* token, int64_t epoch_us = kDefaultEpochUs) { return decode_token(token, epoch_us); }

std::string error_of(const char* token) {
    const Decoded d = decode(token);
    EXPECT_EQ(d.kind, Kind::Invalid) << token;
    return d.error;
}

// ---------------------------------------------------------------------------
// Command line

TEST(InspectArgs, DefaultsDecodeArgumentsWithTheExtensionsDefaultEpoch) {
    const Request r = parse({"1", "2"});
    EXPECT_EQ(r.action, Action::Decode);
    EXPECT_EQ(r.format, Format::Text);
    EXPECT_EQ(r.epoch_unix_us, kDefaultEpochUs);
    EXPECT_EQ(r.epoch_name, "default");
    EXPECT_EQ(r.inputs, (std::vector<std::string>{"1", "2"}));
    EXPECT_FALSE(r.read_stdin);
}

TEST(InspectArgs, DefaultEpochIsTheCoreDefault) {
    int64_t us = 0;
    ASSERT_EQ(core::parse_epoch(core::kDefaultEpoch, &us), core::EpochParse::Ok);
    EXPECT_EQ(parse({}).epoch_unix_us, us);
}

TEST(InspectArgs, NoInputsReadsStdin) {
    const Request r = parse({"--json"});
    EXPECT_EQ(r.action, Action::Decode);
    EXPECT_EQ(r.format, Format::Json);
    EXPECT_TRUE(r.read_stdin);
    EXPECT_TRUE(r.inputs.empty());
    const Request dash = parse({"-"});
    EXPECT_FALSE(dash.read_stdin);  // "-" is read in its place among the inputs
    EXPECT_EQ(dash.inputs, (std::vector<std::string>{"-"}));
}

TEST(InspectArgs, EpochPresetsAndForms) {
    EXPECT_EQ(parse({"--epoch", "twitter", "1"}).epoch_unix_us, int64_t{1288834974657} * 1000);
    EXPECT_EQ(parse({"--epoch=discord", "1"}).epoch_unix_us, int64_t{1420070400000} * 1000);
    EXPECT_EQ(parse({"-e", "default", "1"}).epoch_unix_us, kDefaultEpochUs);
    EXPECT_EQ(parse({"-e", "1420070400000", "1"}).epoch_unix_us, int64_t{1420070400000} * 1000);
    EXPECT_EQ(parse({"--epoch", "2015-01-01T00:00:00Z"}).epoch_unix_us, int64_t{1420070400000} * 1000);
    EXPECT_EQ(parse({"--epoch", "2015-01-01 01:00:00+01"}).epoch_unix_us, int64_t{1420070400000} * 1000);
    EXPECT_EQ(parse({"--epoch", "2010-11-04T01:42:54.657Z"}).epoch_unix_us, int64_t{1288834974657} * 1000);
    const Request r = parse({"--epoch", "twitter", "--epoch", "discord"});  // the last one counts
    EXPECT_EQ(r.epoch_unix_us, int64_t{1420070400000} * 1000);
    EXPECT_EQ(r.epoch_name, "discord");
}

TEST(InspectArgs, PresetsAreTheDocumentedInstants) {
    int64_t us = 0;
    ASSERT_EQ(core::parse_epoch("2010-11-04T01:42:54.657Z", &us), core::EpochParse::Ok);
    EXPECT_EQ(kTwitterEpochMs * 1000, us);
    ASSERT_EQ(core::parse_epoch("2015-01-01T00:00:00Z", &us), core::EpochParse::Ok);
    EXPECT_EQ(kDiscordEpochMs * 1000, us);
}

TEST(InspectArgs, UsageErrors) {
    for (auto args : {std::vector<const char*>{"--epoch"}, {"-e"}, {"--epoch", "yesterday"},
                      {"--epoch=2025-01-01 00:00:00"},  // no UTC offset
                      {"--epoch", "2025-02-30T00:00:00Z"}, {"--epoch="}, {"--epoch", "99999999999999999999"},
                      {"--epoch", "253402300800000"},  // 10000-01-01 in Unix ms
                      {"--jsn"}, {"-x", "1"}, {"-jx"}, {"-je"}, {"--epoch", "Twit ter"}}) {
        std::vector<const char*> argv = {"snowflake-inspect"};
        argv.insert(argv.end(), args.begin(), args.end());
        const Request r = parse_args(static_cast<int>(argv.size()), argv.data());
        EXPECT_EQ(r.action, Action::Usage) << args[0];
        EXPECT_FALSE(r.error.empty());
    }
    EXPECT_NE(parse({"--epoch", "yesterday"}).error.find("\"yesterday\""), std::string::npos);
    EXPECT_NE(parse({"--epoch=2025-01-01 00:00:00"}).error.find("no UTC offset"), std::string::npos);
    EXPECT_NE(parse({"--frobnicate"}).error.find("--frobnicate"), std::string::npos);
}

TEST(InspectArgs, ShortOptionsCombineAndPresetsIgnoreCase) {
    Request r = parse({"-je", "discord", "175928847299117063"});
    EXPECT_EQ(r.action, Action::Decode);
    EXPECT_EQ(r.format, Format::Json);
    EXPECT_EQ(r.epoch_unix_us, kDiscordEpochMs * 1000);
    EXPECT_EQ(r.inputs, (std::vector<std::string>{"175928847299117063"}));
    r = parse({"-jeTWITTER", "1"});
    EXPECT_EQ(r.format, Format::Json);
    EXPECT_EQ(r.epoch_unix_us, kTwitterEpochMs * 1000);
    EXPECT_EQ(r.inputs, (std::vector<std::string>{"1"}));
    r = parse({"-ej", "1"});  // the rest of the token is -e's value: "j" is no epoch
    EXPECT_EQ(r.action, Action::Usage);
    EXPECT_EQ(parse({"-jV"}).action, Action::Version);
    EXPECT_EQ(parse({"-Vh"}).action, Action::Help);
    r = parse({"--epoch", "Discord"});
    EXPECT_EQ(r.action, Action::Decode);
    EXPECT_EQ(r.epoch_unix_us, kDiscordEpochMs * 1000);
    int64_t us = 0;
    std::string why;
    EXPECT_TRUE(parse_epoch_option("DEFAULT", &us, &why));
    int64_t want = 0;
    ASSERT_EQ(core::parse_epoch(core::kDefaultEpoch, &want), core::EpochParse::Ok);
    EXPECT_EQ(us, want);
    EXPECT_NE(parse({"-jx"}).error.find("\"-x\""), std::string::npos);
}

TEST(InspectArgs, NegativeNumbersAreInputsNotOptions) {
    const Request r = parse({"-5", "--json"});
    EXPECT_EQ(r.action, Action::Decode);
    EXPECT_EQ(r.inputs, (std::vector<std::string>{"-5"}));
    EXPECT_EQ(r.format, Format::Json);
}

TEST(InspectArgs, DoubleDashEndsOptions) {
    const Request r = parse({"--", "--json", "1"});
    EXPECT_EQ(r.action, Action::Decode);
    EXPECT_EQ(r.format, Format::Text);
    EXPECT_EQ(r.inputs, (std::vector<std::string>{"--json", "1"}));
}

TEST(InspectArgs, HelpAndVersion) {
    EXPECT_EQ(parse({"--help"}).action, Action::Help);
    EXPECT_EQ(parse({"-h", "1"}).action, Action::Help);
    EXPECT_EQ(parse({"1", "--version"}).action, Action::Version);
    EXPECT_EQ(parse({"-V"}).action, Action::Version);
    EXPECT_EQ(parse({"--help", "--version"}).action, Action::Help);
    EXPECT_NE(usage_text().find("--epoch"), std::string::npos);
    EXPECT_NE(usage_text().find("Exit status"), std::string::npos);
    EXPECT_EQ(version_text().rfind("snowflake-inspect ", 0), 0u);
    // Every line of the help fits in 80 columns.
    const std::string u = usage_text();
    size_t start = 0;
    for (size_t nl; (nl = u.find('\n', start)) != std::string::npos; start = nl + 1)
        EXPECT_LE(nl - start, 80u) << u.substr(start, nl - start);
}

// ---------------------------------------------------------------------------
// Snowflake ids

TEST(InspectDecode, SnowflakeIdAgreesWithTheLayout) {
    const int64_t ms = 60260996497;
    const int64_t id = core::compose(ms, 7, 0);
    const Decoded d = decode(std::to_string(id).c_str());
    ASSERT_EQ(d.kind, Kind::Snowflake);
    EXPECT_EQ(d.canonical, "252752938651381760");
    EXPECT_EQ(d.ms, ms);
    EXPECT_EQ(d.worker, 7);
    EXPECT_EQ(d.sequence, 0);
    EXPECT_EQ(d.unix_us, kDefaultEpochUs + ms * 1000);
    EXPECT_EQ(format_text(d), "252752938651381760 time=2026-11-29T11:09:56.497Z worker=7 sequence=0");
}

TEST(InspectDecode, EdgeIds) {
    const Decoded zero = decode("0");
    ASSERT_EQ(zero.kind, Kind::Snowflake);
    EXPECT_EQ(format_text(zero), "0 time=2025-01-01T00:00:00.000Z worker=0 sequence=0");

    const Decoded max = decode("9223372036854775807");
    ASSERT_EQ(max.kind, Kind::Snowflake);
    EXPECT_EQ(max.ms, core::kMaxMs);
    EXPECT_EQ(max.worker, core::kMaxWorker);
    EXPECT_EQ(max.sequence, core::kMaxSequence);
    EXPECT_EQ(format_time(max.unix_us), "2094-09-07T15:47:35.551Z");

    // Leading zeros and -0 are the same numbers, as bigint input reads them.
    EXPECT_EQ(decode("000252752938651381760").canonical, "252752938651381760");
    EXPECT_EQ(decode("-0").kind, Kind::Snowflake);
    EXPECT_EQ(decode("-0").canonical, "0");
    EXPECT_EQ(decode("-0").input, "-0");
}

TEST(InspectDecode, EveryFieldAtItsEdges) {
    for (int64_t ms : {int64_t{0}, int64_t{1}, core::kMaxMs / 2, core::kMaxMs})
        for (int32_t w : {0, 1, 512, core::kMaxWorker})
            for (int32_t s : {0, 1, 2048, core::kMaxSequence}) {
                const Decoded d = decode(std::to_string(core::compose(ms, w, s)).c_str());
                ASSERT_EQ(d.kind, Kind::Snowflake);
                EXPECT_EQ(d.ms, ms);
                EXPECT_EQ(d.worker, w);
                EXPECT_EQ(d.sequence, s);
            }
}

TEST(InspectDecode, EpochsMoveTheTimeOnly) {
    const char* id = "175928847299117063";  // Discord's documentation example
    const Decoded d = decode(id, kDiscordEpochMs * 1000);
    ASSERT_EQ(d.kind, Kind::Snowflake);
    EXPECT_EQ(format_time(d.unix_us), "2016-04-30T11:18:25.796Z");
    EXPECT_EQ(d.worker, 1 << 5 | 0);  // Discord: 5 bits worker + 5 bits process = our 10 bits
    EXPECT_EQ(d.sequence, 7);
    const Decoded t = decode("1288834974657", kTwitterEpochMs * 1000);
    EXPECT_EQ(t.worker, decode("1288834974657").worker);

    // Twitter's epoch: 1288834974657 + (id >> 22) = 1577836801935 ms after 1970.
    const Decoded tw = decode("1212161520163201024", kTwitterEpochMs * 1000);
    EXPECT_EQ(tw.unix_us, int64_t{1577836801935} * 1000);
    EXPECT_EQ(format_time(tw.unix_us), "2020-01-01T00:00:01.935Z");
}

TEST(InspectDecode, EpochWithMicrosecondsGivesMicrosecondTimes) {
    int64_t epoch = 0;
    ASSERT_EQ(core::parse_epoch("2020-02-29 12:34:56.789012+05:30", &epoch), core::EpochParse::Ok);
    const Decoded d = decode(std::to_string(core::compose(1, 0, 0)).c_str(), epoch);
    EXPECT_EQ(format_time(d.unix_us), "2020-02-29T07:04:56.790012Z");
    EXPECT_EQ(format_time(epoch), "2020-02-29T07:04:56.789012Z");
}

TEST(InspectDecode, InvalidNumbers) {
    EXPECT_EQ(error_of("-1").rfind("negative", 0), 0u);
    EXPECT_EQ(error_of("-9223372036854775808").rfind("negative", 0), 0u);
    EXPECT_EQ(error_of("-99999999999999999999").rfind("negative", 0), 0u);
    EXPECT_EQ(error_of("9223372036854775808").rfind("out of range", 0), 0u);
    EXPECT_EQ(error_of("99999999999999999999999").rfind("out of range", 0), 0u);
    for (const char* t : {"12a", "1.5", "1e18", "+5", "0x1f", "-", "--1", "-1a", "12-34", "٣"})
        EXPECT_EQ(error_of(t).rfind("not a number", 0), 0u) << t;
    EXPECT_EQ(error_of("hello"), "not a number or a UUID");
    EXPECT_EQ(error_of(""), "empty input");
}

// ---------------------------------------------------------------------------
// UUIDs

TEST(InspectDecode, Uuidv7Time) {
    const Decoded d = decode("01a22700-f63a-78f3-a26f-1db9e426f23a");
    ASSERT_EQ(d.kind, Kind::Uuid);
    EXPECT_EQ(d.canonical, "01a22700-f63a-78f3-a26f-1db9e426f23a");
    EXPECT_EQ(d.unix_us, int64_t{0x01a22700f63a} * 1000);
    EXPECT_EQ(format_text(d), "01a22700-f63a-78f3-a26f-1db9e426f23a time=2026-11-29T11:11:44.186Z");
}

TEST(InspectDecode, UuidForms) {
    const std::string canonical = "01a22700-f63a-78f3-a26f-1db9e426f23a";
    for (const char* t : {"01A22700-F63A-78F3-A26F-1DB9E426F23A", "01a22700f63a78f3a26f1db9e426f23a",
                          "{01a22700-f63a-78f3-a26f-1db9e426f23a}", "{01a22700f63a78f3a26f1db9e426f23a}"}) {
        const Decoded d = decode(t);
        ASSERT_EQ(d.kind, Kind::Uuid) << t;
        EXPECT_EQ(d.canonical, canonical);
        EXPECT_EQ(d.input, t);
    }
}

TEST(InspectDecode, UuidAgreesWithTheCoreBuilder) {
    const uint8_t random[core::kUuidRandomBytes] = {0xff, 1, 2, 3, 4, 5, 6, 7};
    for (int64_t ms : {int64_t{0}, int64_t{1}, int64_t{1795950704186}, core::kUuidMaxMs}) {
        const core::Uuid u = core::build_uuidv7(core::uuid_ticks_from_ms(ms, 999999), random);
        char text[40];
        std::snprintf(text, sizeof text,
                      "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u.bytes[0],
                      u.bytes[1], u.bytes[2], u.bytes[3], u.bytes[4], u.bytes[5], u.bytes[6], u.bytes[7],
                      u.bytes[8], u.bytes[9], u.bytes[10], u.bytes[11], u.bytes[12], u.bytes[13],
                      u.bytes[14], u.bytes[15]);
        const Decoded d = decode(text);
        ASSERT_EQ(d.kind, Kind::Uuid) << text;
        EXPECT_EQ(d.canonical, text);
        EXPECT_EQ(d.unix_us, ms * 1000);  // the sub-millisecond fraction is not part of the time
    }
    EXPECT_EQ(format_time(core::kUuidMaxMs * 1000), "10889-08-02T05:31:50.655Z");
    EXPECT_EQ(format_time(0), "1970-01-01T00:00:00.000Z");
}

TEST(InspectDecode, OtherUuidVersionsAreNotVersion7) {
    EXPECT_EQ(error_of("5c3a1f38-9d4e-4b1a-8f3e-2a1b3c4d5e6f"), "UUID version 4 is not a version-7 UUID");
    EXPECT_EQ(error_of("00000000-0000-0000-0000-000000000000"), "UUID version 0 is not a version-7 UUID");
    EXPECT_EQ(error_of("ffffffff-ffff-ffff-ffff-ffffffffffff"), "UUID version 15 is not a version-7 UUID");
    EXPECT_EQ(error_of("1ef5f2a4-8c1b-11ef-9f8e-0242ac120002"), "UUID version 1 is not a version-7 UUID");
    // Version 7 with another variant: uuidv7_timestamp() returns NULL for it too.
    EXPECT_EQ(error_of("01a22700-f63a-78f3-c26f-1db9e426f23a").rfind("not a version-7 UUID", 0), 0u);
}

TEST(InspectDecode, MalformedUuids) {
    for (const char* t : {"01a22700-f63a-78f3-a26f-1db9e426f23", "01a22700-f63a-78f3-a26f-1db9e426f23ab",
                          "01a22700f63a-78f3-a26f-1db9e426f23a-", "01a22700-f63a-78f3-a26f-1db9e426f23g",
                          "{01a22700-f63a-78f3-a26f-1db9e426f23a", "01a2-2700", "urn:uuid:01a22700-f63a-78f3"})
        EXPECT_EQ(error_of(t).rfind("not a UUID", 0), 0u) << t;
}

// ---------------------------------------------------------------------------
// Output

TEST(InspectFormat, Times) {
    EXPECT_EQ(format_time(kDefaultEpochUs), "2025-01-01T00:00:00.000Z");
    EXPECT_EQ(format_time(kDefaultEpochUs - 1000), "2024-12-31T23:59:59.999Z");
    EXPECT_EQ(format_time(kDefaultEpochUs - 1), "2024-12-31T23:59:59.999999Z");
    EXPECT_EQ(format_time(int64_t{951782400} * 1000000), "2000-02-29T00:00:00.000Z");
    EXPECT_EQ(format_time(-1000), "1969-12-31T23:59:59.999Z");
    int64_t year1 = 0;
    ASSERT_EQ(core::parse_epoch("0001-01-01T00:00:00Z", &year1), core::EpochParse::Ok);
    EXPECT_EQ(format_time(year1), "0001-01-01T00:00:00.000Z");
}

TEST(InspectFormat, JsonOfAnId) {
    EXPECT_EQ(format_json(decode("252752938651381760")),
              "{\"input\":\"252752938651381760\",\"type\":\"snowflake\",\"id\":\"252752938651381760\","
              "\"time\":\"2026-11-29T11:09:56.497Z\",\"ms_since_epoch\":60260996497,\"worker\":7,"
              "\"sequence\":0,\"epoch\":\"2025-01-01T00:00:00.000Z\","
              "\"timestamp\":\"2026-11-29T11:09:56.497Z\",\"worker_id\":7}");
    EXPECT_NE(format_json(decode("0007")).find("\"input\":\"0007\",\"type\":\"snowflake\",\"id\":\"7\""),
              std::string::npos);
}

TEST(InspectFormat, SharedVocabulary) {
    // timestamp, worker_id, sequence, ms_since_epoch: the names HTTP's
    // /v1/ids/{id} uses; time and worker stay beside them.
    const std::string j = format_json(decode("252752938651381760"));
    for (const char* field : {"\"timestamp\":\"2026-11-29T11:09:56.497Z\"", "\"worker_id\":7", "\"sequence\":0",
                              "\"ms_since_epoch\":60260996497", "\"time\":\"2026-11-29T11:09:56.497Z\"",
                              "\"worker\":7"})
        EXPECT_NE(j.find(field), std::string::npos) << field;
}

TEST(InspectFormat, JsonOfAUuid) {
    EXPECT_EQ(format_json(decode("01A22700F63A78F3A26F1DB9E426F23A")),
              "{\"input\":\"01A22700F63A78F3A26F1DB9E426F23A\",\"type\":\"uuidv7\","
              "\"uuid\":\"01a22700-f63a-78f3-a26f-1db9e426f23a\",\"time\":\"2026-11-29T11:11:44.186Z\","
              "\"unix_ms\":1795950704186,\"timestamp\":\"2026-11-29T11:11:44.186Z\"}");
}

TEST(InspectFormat, JsonOfInvalidInputEscapesIt) {
    EXPECT_EQ(format_json(decode("a\"b\\c")),
              "{\"input\":\"a\\\"b\\\\c\",\"type\":\"invalid\",\"error\":\"not a number or a UUID\"}");
    EXPECT_EQ(format_text(decode("abc")), "");
}

TEST(InspectFormat, JsonStrings) {
    EXPECT_EQ(json_string(""), "\"\"");
    EXPECT_EQ(json_string("plain"), "\"plain\"");
    EXPECT_EQ(json_string(std::string("\x01\x1f\x7f\t", 4)), "\"\\u0001\\u001f\\u007f\\u0009\"");
    EXPECT_EQ(json_string(std::string("a\0b", 3)), "\"a\\u0000b\"");
    EXPECT_EQ(json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    EXPECT_EQ(json_string("\xff"), "\"\\ufffd\"");
    EXPECT_EQ(json_string("\xc3"), "\"\\ufffd\"");                 // truncated
    EXPECT_EQ(json_string("\xc0\xaf"), "\"\\ufffd\\ufffd\"");       // overlong
    EXPECT_EQ(json_string("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
    EXPECT_EQ(json_string("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // past U+10FFFF
}

TEST(InspectFormat, ErrorMessagesNameTheTokenAndWhere) {
    EXPECT_EQ(error_message(decode("abc"), 0), "snowflake-inspect: \"abc\": not a number or a UUID");
    EXPECT_EQ(error_message(decode("-3"), 12),
              "snowflake-inspect: stdin line 12: \"-3\": negative: Snowflake ids are positive bigints "
              "(bit 63 is zero)");
    EXPECT_EQ(error_message(decode("\x1b[31m"), 0).find('\x1b'), std::string::npos);
}

TEST(InspectSplit, Separators) {
    EXPECT_EQ(split_tokens(" 1\t2,3,,  4\r\n"), (std::vector<std::string_view>{"1", "2", "3", "4"}));
    EXPECT_TRUE(split_tokens("").empty());
    EXPECT_TRUE(split_tokens(" ,\n").empty());
    EXPECT_EQ(split_tokens("{01a22700-f63a-78f3-a26f-1db9e426f23a}"),
              (std::vector<std::string_view>{"{01a22700-f63a-78f3-a26f-1db9e426f23a}"}));
}

}  // namespace

TEST(InspectCompose, FromTimestampAsSql) {
    Request r = parse({"--from-timestamp", "2025-01-01T00:00:01.5Z"});
    ASSERT_EQ(r.action, Action::Compose);
    int64_t id = 0;
    std::string why;
    ASSERT_TRUE(compose_from_timestamp(r.compose_unix_us, r.epoch_unix_us, &id, &why));
    EXPECT_EQ(id, int64_t{1500} << 22);
    EXPECT_EQ(format_composed(Format::Text, r.compose_unix_us, id), "6291456000");
    EXPECT_EQ(format_composed(Format::Json, r.compose_unix_us, id),
              "{\"from_timestamp\":\"2025-01-01T00:00:01.500Z\",\"id\":\"6291456000\"}");
    // Within a millisecond: its first id (floor), also before 1970.
    r = parse({"--epoch=1000", "--from-timestamp=1999"});
    ASSERT_EQ(r.action, Action::Compose);
    ASSERT_TRUE(compose_from_timestamp(r.compose_unix_us, r.epoch_unix_us, &id, &why));
    EXPECT_EQ(id, int64_t{999} << 22);
    ASSERT_TRUE(compose_from_timestamp(1999999, 1000000, &id, &why));
    EXPECT_EQ(id, int64_t{999} << 22);
    // The epoch itself is id 0; a microsecond before it is refused; the
    // last millisecond of the range is the last one.
    ASSERT_TRUE(compose_from_timestamp(5000, 5000, &id, &why));
    EXPECT_EQ(id, 0);
    EXPECT_FALSE(compose_from_timestamp(4999, 5000, &id, &why));
    EXPECT_NE(why.find("before the epoch"), std::string::npos);
    ASSERT_TRUE(compose_from_timestamp(core::kMaxMs * 1000, 0, &id, &why));
    EXPECT_EQ(id, core::kMaxMs << 22);
    EXPECT_FALSE(compose_from_timestamp((core::kMaxMs + 1) * 1000, 0, &id, &why));
    // The command line: a time is needed and must parse; no ids beside it.
    EXPECT_EQ(parse({"--from-timestamp"}).action, Action::Usage);
    EXPECT_EQ(parse({"--from-timestamp", "yesterday"}).action, Action::Usage);
    EXPECT_EQ(parse({"--from-timestamp", "2025-01-01 00:00:00"}).action, Action::Usage);  // no offset
    EXPECT_EQ(parse({"--from-timestamp=1", "123"}).action, Action::Usage);
    EXPECT_EQ(parse({"-j", "--from-timestamp=1"}).format, Format::Json);
}

TEST(InspectPresets, WorkerHalvesOfTwitterAndDiscordIds) {
    EXPECT_EQ(parse({"--epoch", "Twitter"}).preset, Preset::Twitter);
    EXPECT_EQ(parse({"-ediscord"}).preset, Preset::Discord);
    EXPECT_EQ(parse({"--epoch=1420070400000"}).preset, Preset::None) << "Discord's epoch, not its name";
    EXPECT_EQ(parse({}).preset, Preset::None);
    // Discord's documented example: internal worker 1, internal process 0.
    Decoded d = decode_token("175928847299117063", kDiscordEpochMs * 1000);
    add_preset_fields(&d, Preset::Discord);
    EXPECT_EQ(d.worker_high, 1);
    EXPECT_EQ(d.worker_low, 0);
    EXPECT_EQ(format_text(d),
              "175928847299117063 time=2016-04-30T11:18:25.796Z worker=32 sequence=7 internal_worker=1 "
              "internal_process=0");
    EXPECT_NE(format_json(d).find(",\"internal_worker\":1,\"internal_process\":0}"), std::string::npos);
    d = decode_token("1212161520163201024", kTwitterEpochMs * 1000);
    add_preset_fields(&d, Preset::Twitter);
    EXPECT_EQ(d.worker, 922);
    EXPECT_EQ(d.worker_high, 28);
    EXPECT_EQ(d.worker_low, 26);
    EXPECT_NE(format_text(d).find(" datacenter=28 datacenter_worker=26"), std::string::npos);
    // Nothing added without a preset, nor to UUIDs and invalid input.
    d = decode_token("175928847299117063", 0);
    add_preset_fields(&d, Preset::None);
    EXPECT_EQ(format_text(d).find("internal"), std::string::npos);
    d = decode_token("abc", 0);
    add_preset_fields(&d, Preset::Twitter);
    EXPECT_EQ(d.preset, Preset::None);
}

// ---------------------------------------------------------------------------
// Text formats of ids (--format, --text-forms)

TEST(InspectTextIds, FormatOption) {
    EXPECT_EQ(parse({"1"}).id_format, core::TextFormat::Decimal) << "decimal by default";
    EXPECT_EQ(parse({"--format", "base32", "x"}).id_format, core::TextFormat::Base32);
    EXPECT_EQ(parse({"--format=base62", "x"}).id_format, core::TextFormat::Base62);
    EXPECT_EQ(parse({"-f", "decimal", "1"}).id_format, core::TextFormat::Decimal);
    const Request combined = parse({"-tjfbase62", "x"});
    EXPECT_EQ(combined.action, Action::Decode);
    EXPECT_EQ(combined.id_format, core::TextFormat::Base62);
    EXPECT_TRUE(combined.text_forms);
    EXPECT_EQ(combined.format, Format::Json);
    const Request separate = parse({"-tf", "base32", "x"});
    EXPECT_EQ(separate.id_format, core::TextFormat::Base32);
    EXPECT_EQ(separate.inputs, std::vector<std::string>{"x"});
    EXPECT_TRUE(parse({"--text-forms", "1"}).text_forms);
    EXPECT_FALSE(parse({"1"}).text_forms);
    // Exact names only, as in SQL: no case folding, no other names.
    for (const char* bad : {"Base32", "BASE62", "base64", "hex", ""}) {
        const Request r = parse({"--format", bad, "1"});
        EXPECT_EQ(r.action, Action::Usage) << bad;
        EXPECT_NE(r.error.find("decimal, base32 or base62"), std::string::npos) << r.error;
    }
    EXPECT_EQ(parse({"--format"}).action, Action::Usage);
    EXPECT_EQ(parse({"-f"}).action, Action::Usage);
    EXPECT_EQ(parse({"--from-timestamp", "0", "--format", "base32"}).action, Action::Usage);
    EXPECT_EQ(parse({"--from-timestamp", "0", "-t"}).action, Action::Usage);
    EXPECT_NE(usage_text().find("--format=FORMAT"), std::string::npos);
    EXPECT_NE(usage_text().find("--text-forms"), std::string::npos);
}

TEST(InspectTextIds, DecodedOnlyInTheFormatNamed) {
    const Decoded b32 = decode_token("070FNENJ40W00", kDefaultEpochUs, core::TextFormat::Base32);
    ASSERT_EQ(b32.kind, Kind::Snowflake);
    EXPECT_EQ(b32.id, 252752938651381760);
    EXPECT_EQ(b32.canonical, "252752938651381760");
    EXPECT_EQ(b32.input, "070FNENJ40W00");
    EXPECT_EQ(b32.worker, 7);
    const Decoded dec = decode("252752938651381760");
    EXPECT_EQ(b32.unix_us, dec.unix_us);
    // Lenient as Crockford's base32 and SQL: either case, hyphens ignored.
    EXPECT_EQ(decode_token("070f-nenj-40w00", kDefaultEpochUs, core::TextFormat::Base32).id, 252752938651381760);
    EXPECT_EQ(decode_token("0IfbtDtw5i4", kDefaultEpochUs, core::TextFormat::Base62).id, 252752938651381760);
    // Never guessed: a base32 id is not decimal, and digits are not base32
    // unless the format says so.
    EXPECT_EQ(decode("070FNENJ40W00").kind, Kind::Invalid);
    EXPECT_EQ(decode("0000000000001").id, 1);
    EXPECT_EQ(decode_token("0000000000001", kDefaultEpochUs, core::TextFormat::Base32).id, 1);
    const Decoded digits = decode_token("252752938651381760", kDefaultEpochUs, core::TextFormat::Base32);
    EXPECT_EQ(digits.kind, Kind::Invalid);
    EXPECT_EQ(digits.error, "not a base32 id: a base32 id is 13 characters (hyphens aside)");
    const Decoded bad = decode_token("0IfbtDtw5i-", kDefaultEpochUs, core::TextFormat::Base62);
    EXPECT_EQ(bad.error, "not a base62 id: not a base62 character (0-9, A-Z, a-z) (character 11)");
    EXPECT_EQ(decode_token("AzL8n0Y58m8", kDefaultEpochUs, core::TextFormat::Base62).error,
              "not a base62 id: the value is above 2^63 - 1, the largest id");
    EXPECT_EQ(decode_token("870FNENJ40W00", kDefaultEpochUs, core::TextFormat::Base32).kind, Kind::Invalid);
    // A UUID is a UUID in every format (no id of any format has 32 digits).
    const Decoded u = decode_token("01a22700-f63a-78f3-a26f-1db9e426f23a", kDefaultEpochUs,
                                   core::TextFormat::Base62);
    EXPECT_EQ(u.kind, Kind::Uuid);
    EXPECT_EQ(format_text(u), format_text(decode("01a22700-f63a-78f3-a26f-1db9e426f23a")));
}

TEST(InspectTextIds, TextForms) {
    Decoded d = decode("252752938651381760");
    const std::string plain_text = format_text(d), plain_json = format_json(d);
    add_text_forms(&d);
    EXPECT_EQ(format_text(d), plain_text + " base32=070FNENJ40W00 base62=0IfbtDtw5i4");
    EXPECT_EQ(format_json(d), plain_json.substr(0, plain_json.size() - 1) +
                                  ",\"base32\":\"070FNENJ40W00\",\"base62\":\"0IfbtDtw5i4\"}");
    Decoded max = decode("9223372036854775807");
    add_text_forms(&max);
    EXPECT_EQ(max.base32, "7ZZZZZZZZZZZZ");
    EXPECT_EQ(max.base62, "AzL8n0Y58m7");
    // After a preset's halves of the worker id.
    Decoded tw = decode("1");
    add_preset_fields(&tw, Preset::Twitter);
    add_text_forms(&tw);
    EXPECT_NE(format_json(tw).find(
                  "\"datacenter_worker\":0,\"base32\":\"0000000000001\",\"base62\":\"00000000001\"}"),
              std::string::npos)
        << format_json(tw);
    // Nothing for UUIDs and invalid input.
    Decoded u = decode("01a22700-f63a-78f3-a26f-1db9e426f23a");
    const std::string ut = format_text(u);
    add_text_forms(&u);
    EXPECT_EQ(format_text(u), ut);
    Decoded x = decode("abc");
    add_text_forms(&x);
    EXPECT_TRUE(x.base32.empty());
}

// ---------------------------------------------------------------------------
// Layouts (--layout): ids of other systems and other splits

namespace {

const core::IdLayout& profile_layout(const char* name) {
    const core::LayoutProfile* p = core::find_layout_profile(name);
    EXPECT_NE(p, nullptr) << name;
    static core::IdLayout none;
    return p != nullptr ? p->layout : none;
}

constexpr int64_t kSonyflakeEpochUs = int64_t{1409529600000} * 1000;  // 2014-09-01T00:00:00Z

}  // namespace

TEST(InspectLayout, AProfileBringsItsEpochUnlessOneIsGiven) {
    Request r = parse({"--layout", "discord", "175928847299117063"});
    ASSERT_EQ(r.action, Action::Decode) << r.error;
    EXPECT_EQ(r.layout, profile_layout("discord"));
    EXPECT_EQ(r.epoch_unix_us, kDiscordEpochMs * 1000);
    EXPECT_EQ(r.preset, Preset::Discord) << "Discord's worker halves";
    r = parse({"--layout=sonyflake"});
    EXPECT_EQ(r.layout, profile_layout("sonyflake"));
    EXPECT_EQ(r.epoch_unix_us, kSonyflakeEpochUs);
    EXPECT_EQ(r.epoch_name, "sonyflake");
    // An epoch given wins, before or after --layout.
    EXPECT_EQ(parse({"--epoch=1000", "--layout", "sonyflake"}).epoch_unix_us, 1000000);
    EXPECT_EQ(parse({"--layout", "sonyflake", "-e", "1000"}).epoch_unix_us, 1000000);
    // A layout without an epoch of its own keeps the default, as without --layout.
    r = parse({"--layout", "js-safe"});
    EXPECT_EQ(r.layout, profile_layout("js-safe"));
    EXPECT_EQ(r.epoch_unix_us, kDefaultEpochUs);
    r = parse({"--layout", "time 39, sequence 8, worker 16, unit 10ms"});
    ASSERT_EQ(r.action, Action::Decode) << r.error;
    EXPECT_EQ(r.layout, profile_layout("sonyflake"));
    EXPECT_EQ(r.epoch_unix_us, kDefaultEpochUs) << "written fields name no system";
    // Without --layout: the node's layout, as before.
    EXPECT_EQ(parse({}).layout, core::IdLayout{});
}

TEST(InspectLayout, WorkerHalvesOnlyWhereTheWorkerIdHasTenBits) {
    EXPECT_EQ(parse({"--layout", "sonyflake", "--epoch", "discord"}).preset, Preset::None);
    EXPECT_EQ(parse({"--epoch", "twitter", "--layout", "twitter"}).preset, Preset::Twitter);
    EXPECT_EQ(parse({"--epoch", "twitter", "--layout", "discord"}).preset, Preset::Twitter);
    EXPECT_EQ(parse({"--layout", "instagram"}).preset, Preset::None);
}

TEST(InspectLayout, BadLayoutsAreUsageErrors) {
    Request r = parse({"--layout", "time 41, worker 10"});
    ASSERT_EQ(r.action, Action::Usage);
    EXPECT_NE(r.error.find("invalid layout \"time 41, worker 10\""), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("all three fields"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("twitter, js-safe, sonyflake, discord, instagram"), std::string::npos) << r.error;
    EXPECT_EQ(parse({"--layout", "Discord"}).action, Action::Usage);
    EXPECT_EQ(parse({"--layout"}).action, Action::Usage);
    EXPECT_EQ(parse({"--layout="}).action, Action::Usage);
}

TEST(InspectLayout, DecodesUnderTheLayout) {
    // Discord's documented id, as SQL's snowflake_decode_as(id, 'discord').
    Decoded d = decode_token("175928847299117063", kDiscordEpochMs * 1000, core::TextFormat::Decimal,
                             profile_layout("discord"));
    ASSERT_EQ(d.kind, Kind::Snowflake) << d.error;
    EXPECT_EQ(d.ms, 41944705796);
    EXPECT_EQ(d.worker, 32);
    EXPECT_EQ(d.sequence, 7);
    // sonyflake: unit 3 of 10 ms, sequence 5, machine 4660 (the lowest bits).
    d = decode_token("50663988", kSonyflakeEpochUs, core::TextFormat::Decimal, profile_layout("sonyflake"));
    ASSERT_EQ(d.kind, Kind::Snowflake) << d.error;
    EXPECT_EQ(d.ms, 30) << "milliseconds, not units";
    EXPECT_EQ(d.worker, 4660);
    EXPECT_EQ(d.sequence, 5);
    EXPECT_EQ(format_text(d), "50663988 time=2014-09-01T00:00:00.030Z worker=4660 sequence=5");
    EXPECT_NE(format_json(d).find("\"ms_since_epoch\":30,"), std::string::npos) << format_json(d);
    // An id above the layout's bits is not one of its ids.
    d = decode_token("9007199254740992", kDefaultEpochUs, core::TextFormat::Decimal, profile_layout("js-safe"));
    ASSERT_EQ(d.kind, Kind::Invalid);
    EXPECT_EQ(d.error, "not an id of the layout: its ids are below 2^53 (9007199254740992)");
    d = decode_token("9007199254740991", kDefaultEpochUs, core::TextFormat::Decimal, profile_layout("js-safe"));
    EXPECT_EQ(d.kind, Kind::Snowflake);
    EXPECT_EQ(d.worker, 63);
    EXPECT_EQ(d.sequence, 63);
    // A base32 id and -0 under a layout.
    EXPECT_EQ(decode_token("00000001G0001", kSonyflakeEpochUs, core::TextFormat::Base32,
                           profile_layout("sonyflake"))
                  .worker,
              1);
    EXPECT_EQ(decode_token("-0", kSonyflakeEpochUs, core::TextFormat::Decimal, profile_layout("sonyflake")).kind,
              Kind::Snowflake);
    // A time past what 64-bit microseconds hold is refused, not wrapped.
    core::IdLayout wide;
    char why[200];
    ASSERT_TRUE(core::parse_layout("time 61, worker 1, sequence 1, unit 1000ms", &wide, why, sizeof(why)));
    d = decode_token("9223372036854775807", 0, core::TextFormat::Decimal, wide);
    ASSERT_EQ(d.kind, Kind::Invalid);
    EXPECT_NE(d.error.find("out of range"), std::string::npos) << d.error;
}

TEST(InspectLayout, FromTimestampUnderTheLayout) {
    int64_t id = 0;
    std::string why;
    // sonyflake: floored to its 10 ms unit.
    ASSERT_TRUE(compose_from_timestamp(kSonyflakeEpochUs + 39999, kSonyflakeEpochUs, &id, &why,
                                       profile_layout("sonyflake")));
    EXPECT_EQ(id, int64_t{3} << 24);
    EXPECT_FALSE(
        compose_from_timestamp(kSonyflakeEpochUs - 1, kSonyflakeEpochUs, &id, &why, profile_layout("sonyflake")));
    EXPECT_NE(why.find("before the epoch"), std::string::npos);
    const int64_t end_ms = core::lifetime_end_unix_ms(profile_layout("sonyflake"), 0);
    EXPECT_FALSE(compose_from_timestamp(end_ms * 1000, 0, &id, &why, profile_layout("sonyflake")));
    EXPECT_EQ(why, "the time lies past the end of the layout's 39-bit range of 10 ms units (about 174.2 years)");
    // The fixed layout's sentence is unchanged.
    EXPECT_FALSE(compose_from_timestamp((core::kMaxMs + 1) * 1000, 0, &id, &why));
    EXPECT_EQ(why, "the time lies past the end of the epoch's 41-bit millisecond range (about 69.7 years)");
    // No bound where ids do not order by time.
    core::IdLayout l;
    char w[200];
    ASSERT_TRUE(core::parse_layout("worker 4, time 30, sequence 2", &l, w, sizeof(w)));
    EXPECT_FALSE(compose_from_timestamp(1000, 0, &id, &why, l));
    EXPECT_NE(why.find("does not order ids by time"), std::string::npos) << why;
    // The command line takes --layout beside --from-timestamp.
    const Request r = parse({"--layout", "discord", "--from-timestamp", "2016-04-30T11:18:25.796Z"});
    ASSERT_EQ(r.action, Action::Compose) << r.error;
    ASSERT_TRUE(compose_from_timestamp(r.compose_unix_us, r.epoch_unix_us, &id, &why, r.layout));
    EXPECT_EQ(id, 175928847299117063 - 32 * 4096 - 7);
}

TEST(InspectLayout, ShortOptionL) {
    EXPECT_EQ(parse({"-l", "sonyflake"}).layout, profile_layout("sonyflake"));
    const Request r = parse({"-jlsonyflake"});
    EXPECT_EQ(r.format, Format::Json);
    EXPECT_EQ(r.layout, profile_layout("sonyflake"));
    EXPECT_EQ(parse({"-l"}).action, Action::Usage);
}
