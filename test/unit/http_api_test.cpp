// The HTTP endpoint's pure decisions and formats (core/http_api.hpp).
#include "core/http_api.hpp"
#include "core/http_limits.hpp"
#include "core/prometheus.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

using namespace snowflake::core;
using namespace snowflake::core::http;

TEST(HttpRoute, Paths) {
    EXPECT_EQ(route("GET", "/v1/ids/batch").endpoint, Endpoint::IdsBatch);
    EXPECT_EQ(route("GET", "/v1/uuids/batch").endpoint, Endpoint::UuidsBatch);
    EXPECT_EQ(route("GET", "/healthz").endpoint, Endpoint::Readyz);
    EXPECT_EQ(route("GET", "/readyz").endpoint, Endpoint::Readyz);
    EXPECT_EQ(route("GET", "/livez").endpoint, Endpoint::Livez);
    EXPECT_EQ(route("GET", "/metrics").endpoint, Endpoint::Metrics);
    const Route r = route("GET", "/v1/ids/123");
    EXPECT_EQ(r.endpoint, Endpoint::IdDecode);
    EXPECT_STREQ(r.id_text, "123");
    EXPECT_EQ(route("GET", "/v1/ids/").endpoint, Endpoint::IdDecode);
    for (const char* p : {"/", "", "/v1", "/v1/ids", "/v1/uuids", "/v1/uuids/1", "/healthz/", "/metrics/x",
                          "/V1/ids/batch", "//v1/ids/batch", "/v2/ids/batch", "/v1/ids/batch/",
                          "/v1/ids/1/", "/v1/ids/batch/x", "/v1/ids//", "/livez/", "/readyz/"})
        EXPECT_EQ(route("GET", p).endpoint, Endpoint::NotFound) << p;
    EXPECT_EQ(route(nullptr, "/healthz").endpoint, Endpoint::NotFound);
}

TEST(HttpRoute, Methods) {
    EXPECT_TRUE(route("GET", "/healthz").method_allowed);
    EXPECT_TRUE(route("HEAD", "/healthz").method_allowed);
    EXPECT_TRUE(route("HEAD", "/metrics").method_allowed);
    EXPECT_TRUE(route("HEAD", "/v1/ids/1").method_allowed);
    // A HEAD would use up ids nobody reads.
    EXPECT_FALSE(route("HEAD", "/v1/ids/batch").method_allowed);
    EXPECT_FALSE(route("HEAD", "/v1/uuids/batch").method_allowed);
    EXPECT_STREQ(allowed_methods(Endpoint::IdsBatch), "GET");
    EXPECT_STREQ(allowed_methods(Endpoint::Readyz), "GET, HEAD");
    EXPECT_TRUE(route("HEAD", "/livez").method_allowed);
    for (const char* m : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "TRACE"})
        EXPECT_FALSE(route(m, "/v1/ids/batch").method_allowed) << m;
}

TEST(HttpRoute, Token) {
    EXPECT_FALSE(needs_token(Endpoint::Readyz));
    EXPECT_FALSE(needs_token(Endpoint::Livez));
    EXPECT_TRUE(needs_token(Endpoint::Metrics));
    EXPECT_TRUE(needs_token(Endpoint::IdsBatch));
    EXPECT_TRUE(needs_token(Endpoint::NotFound));
}

TEST(HttpCount, Accepted) {
    int32_t n = 0;
    EXPECT_TRUE(parse_count(0, nullptr, &n));
    EXPECT_EQ(n, 1);
    EXPECT_TRUE(parse_count(1, "1", &n));
    EXPECT_EQ(n, 1);
    EXPECT_TRUE(parse_count(1, "100", &n));
    EXPECT_EQ(n, 100);
    EXPECT_TRUE(parse_count(1, "10000", &n));
    EXPECT_EQ(n, 10000);
    EXPECT_TRUE(parse_count(1, "007", &n));
    EXPECT_EQ(n, 7);
}

TEST(HttpCount, Refused) {
    for (const char* v : {"", "0", "10001", "99999", "100000", "-1", "+1", " 1", "1 ", "10abc", "abc",
                          "1e3", "0x10", "1.0", "99999999999999999999", "\xff", "１"}) {
        int32_t n = 42;
        EXPECT_FALSE(parse_count(1, v, &n)) << v;
        EXPECT_EQ(n, 42);
    }
    int32_t n = 0;
    EXPECT_FALSE(parse_count(1, nullptr, &n));  // "?count"
    EXPECT_FALSE(parse_count(2, "1", &n));      // "?count=1&count=2"
}

TEST(HttpId, Parse) {
    int64_t id = 0;
    EXPECT_TRUE(parse_id("0", &id));
    EXPECT_EQ(id, 0);
    EXPECT_TRUE(parse_id("252752938651381760", &id));
    EXPECT_EQ(id, 252752938651381760);
    EXPECT_TRUE(parse_id("9223372036854775807", &id));
    EXPECT_EQ(id, INT64_MAX);
    for (const char* v : {"", "9223372036854775808", "18446744073709551615", "99999999999999999999",
                          "-1", "+1", "1a", "a", " 1", "1/2", "12345678901234567890123"})
        EXPECT_FALSE(parse_id(v, &id)) << v;
    EXPECT_FALSE(parse_id(nullptr, &id));
}

TEST(HttpToken, Bearer) {
    EXPECT_TRUE(bearer_ok(nullptr, ""));
    EXPECT_TRUE(bearer_ok("anything", nullptr));
    EXPECT_TRUE(bearer_ok("Bearer s3cret", "s3cret"));
    EXPECT_TRUE(bearer_ok("bearer s3cret", "s3cret"));
    EXPECT_TRUE(bearer_ok("BEARER   s3cret", "s3cret"));
    EXPECT_FALSE(bearer_ok(nullptr, "s3cret"));
    EXPECT_FALSE(bearer_ok("", "s3cret"));
    EXPECT_FALSE(bearer_ok("Bearer", "s3cret"));
    EXPECT_FALSE(bearer_ok("Bearer ", "s3cret"));
    EXPECT_FALSE(bearer_ok("Bearer s3cre", "s3cret"));
    EXPECT_FALSE(bearer_ok("Bearer s3crett", "s3cret"));
    EXPECT_FALSE(bearer_ok("Bearer S3cret", "s3cret"));
    EXPECT_FALSE(bearer_ok("Basic czNjcmV0", "s3cret"));
    EXPECT_FALSE(bearer_ok("s3cret", "s3cret"));
    EXPECT_FALSE(bearer_ok("Bearers3cret", "s3cret"));
}

TEST(HttpJson, Ids) {
    const int64_t ids[] = {1, 252752938651381760, INT64_MAX};
    char buf[ids_json_capacity(3)];
    const size_t n = format_ids_json(buf, sizeof(buf), ids, 3);
    EXPECT_EQ(std::string(buf, n), "{\"ids\":[\"1\",\"252752938651381760\",\"9223372036854775807\"]}");
    // The capacity holds the longest ids.
    std::vector<int64_t> big(kMaxCount, INT64_MAX);
    std::vector<char> out(ids_json_capacity(kMaxCount));
    EXPECT_GT(format_ids_json(out.data(), out.size(), big.data(), kMaxCount), 0u);
    // Too small: nothing, not a truncated document.
    char small[10];
    EXPECT_EQ(format_ids_json(small, sizeof(small), ids, 3), 0u);
}

TEST(HttpJson, IdsRunsAndCarries) {
    // Consecutive runs (text incremented in place) across carries, gaps,
    // and runs that end: the same text as formatting each id.
    std::vector<int64_t> ids;
    for (int64_t v : {int64_t{0}, int64_t{7}, int64_t{97}, int64_t{995}, int64_t{999999}, int64_t{252752938651381755},
                      INT64_MAX - 3})
        for (int k = 0; k < 6 && k <= INT64_MAX - v; k++) ids.push_back(v + k);
    ids.push_back(5);  // a step back: formatted afresh
    ids.push_back(6);
    std::string want = "{\"ids\":[";
    for (size_t i = 0; i < ids.size(); i++) want += (i > 0 ? ",\"" : "\"") + std::to_string(ids[i]) + "\"";
    want += "]}";
    const auto count = static_cast<int32_t>(ids.size());
    std::vector<char> out(ids_json_capacity(count));
    const size_t n = format_ids_json(out.data(), out.size(), ids.data(), count);
    EXPECT_EQ(std::string(out.data(), n), want);
    // An empty batch is a valid document.
    char empty[ids_json_capacity(0)];
    EXPECT_EQ(std::string(empty, format_ids_json(empty, sizeof(empty), nullptr, 0)), "{\"ids\":[]}");
}

TEST(HttpJson, Uuids) {
    Uuid u{};
    for (int i = 0; i < 16; i++) u.bytes[i] = static_cast<uint8_t>(i * 17);
    char text[37];
    format_uuid(text, u);
    EXPECT_STREQ(text, "00112233-4455-6677-8899-aabbccddeeff");
    Uuid two[2] = {u, u};
    char buf[uuids_json_capacity(2)];
    const size_t n = format_uuids_json(buf, sizeof(buf), two, 2);
    EXPECT_EQ(std::string(buf, n),
              "{\"uuids\":[\"00112233-4455-6677-8899-aabbccddeeff\",\"00112233-4455-6677-8899-aabbccddeeff\"]}");
}

TEST(HttpJson, Decoded) {
    // An id under the default epoch 2025-01-01.
    const int64_t epoch_ms = 1735689600000;
    const int64_t id = compose(60260000497, 7, 5);
    char buf[300];
    const size_t n = format_decoded_json(buf, sizeof(buf), id, epoch_ms);
    EXPECT_EQ(std::string(buf, n), "{\"id\":\"" + std::to_string(id) +
                                       "\",\"timestamp\":\"2026-11-29T10:53:20.497Z\",\"worker_id\":7,"
                                       "\"sequence\":5,\"ms_since_epoch\":60260000497,\"base32\":\"" +
                                       encode_id(id, TextFormat::Base32) + "\",\"base62\":\"" +
                                       encode_id(id, TextFormat::Base62) + "\"}");
    // The documented example (docs/reference.md, HTTP API).
    const size_t m = format_decoded_json(buf, sizeof(buf), 252752938651381760, epoch_ms);
    EXPECT_EQ(
        std::string(buf, m),
        "{\"id\":\"252752938651381760\",\"timestamp\":\"2026-11-29T11:09:56.497Z\",\"worker_id\":7,"
        "\"sequence\":0,\"ms_since_epoch\":60260996497,\"base32\":\"070FNENJ40W00\",\"base62\":\"0IfbtDtw5i4\"}");
    // The largest id fits the worker's buffer many times over.
    EXPECT_GT(format_decoded_json(buf, sizeof(buf), INT64_MAX, epoch_ms), 0u);
    EXPECT_EQ(format_decoded_json(buf, 20, INT64_MAX, epoch_ms), 0u) << "too small: nothing, not a cut document";
}

TEST(HttpJson, IdsInATextFormat) {
    const int64_t ids[3] = {252752938651381760, 252752938651381761, INT64_MAX};
    char buf[ids_json_capacity(3)];
    size_t n = format_ids_json(buf, sizeof(buf), ids, 3, TextFormat::Base32);
    EXPECT_EQ(std::string(buf, n), "{\"ids\":[\"070FNENJ40W00\",\"070FNENJ40W01\",\"7ZZZZZZZZZZZZ\"]}");
    n = format_ids_json(buf, sizeof(buf), ids, 3, TextFormat::Base62);
    EXPECT_EQ(std::string(buf, n), "{\"ids\":[\"0IfbtDtw5i4\",\"0IfbtDtw5i5\",\"AzL8n0Y58m7\"]}");
    n = format_ids_json(buf, sizeof(buf), ids, 3, TextFormat::Decimal);
    EXPECT_EQ(std::string(buf, n),
              "{\"ids\":[\"252752938651381760\",\"252752938651381761\",\"9223372036854775807\"]}");
    EXPECT_EQ(format_ids_json(buf, sizeof(buf) - 1, ids, 3, TextFormat::Base62), 0u);
    // The decimal capacity holds the longest batch in every format.
    std::vector<int64_t> many(kMaxCount, INT64_MAX);
    std::vector<char> big(ids_json_capacity(kMaxCount));
    for (TextFormat f : {TextFormat::Decimal, TextFormat::Base32, TextFormat::Base62})
        EXPECT_GT(format_ids_json(big.data(), big.size(), many.data(), kMaxCount, f), 0u);
}

TEST(HttpIdText, EachFormatNamedNeverGuessed) {
    int64_t id = -1;
    IdTextError err;
    EXPECT_TRUE(parse_id_text("252752938651381760", TextFormat::Decimal, &id, &err));
    EXPECT_EQ(id, 252752938651381760);
    EXPECT_TRUE(parse_id_text("070FNENJ40W00", TextFormat::Base32, &id, &err));
    EXPECT_EQ(id, 252752938651381760);
    EXPECT_TRUE(parse_id_text("070f-nenj-40w00", TextFormat::Base32, &id, &err)) << "lenient, as in SQL";
    EXPECT_EQ(id, 252752938651381760);
    EXPECT_TRUE(parse_id_text("0IfbtDtw5i4", TextFormat::Base62, &id, &err));
    EXPECT_EQ(id, 252752938651381760);
    // A base32 or base62 id is not read as decimal, nor the other way round.
    IdTextError d;
    EXPECT_FALSE(parse_id_text("070FNENJ40W00", TextFormat::Decimal, &id, &d));
    EXPECT_STREQ(d.message, "invalid snowflake id");
    EXPECT_STREQ(d.detail, "At character 4: not a decimal digit.");
    EXPECT_NE(std::string(d.hint).find("?format=base32"), std::string::npos);
    IdTextError b;
    EXPECT_FALSE(parse_id_text("252752938651381760", TextFormat::Base32, &id, &b));
    EXPECT_STREQ(b.message, "invalid base32 id");
    EXPECT_STREQ(b.detail, "The text as a whole: a base32 id is 13 characters (hyphens aside).");
    IdTextError u;
    EXPECT_FALSE(parse_id_text("070FNENJ40W0U", TextFormat::Base32, &id, &u));
    EXPECT_STREQ(u.detail,
                 "At character 13: not a character of Crockford's base32 (0-9 and A-Z without I, L, O, U).");
    IdTextError s;
    EXPECT_FALSE(parse_id_text("0IfbtDtw5i-", TextFormat::Base62, &id, &s));
    EXPECT_STREQ(s.message, "invalid base62 id");
    EXPECT_STREQ(s.detail, "At character 11: not a base62 character (0-9, A-Z, a-z).");
    EXPECT_GT(std::strlen(s.hint), 0u);
    IdTextError o;
    EXPECT_FALSE(parse_id_text("AzL8n0Y58m8", TextFormat::Base62, &id, &o));
    EXPECT_STREQ(o.detail, "The text as a whole: the value is above 2^63 - 1, the largest id.");
    IdTextError e;
    EXPECT_FALSE(parse_id_text("", TextFormat::Base62, &id, &e));
    EXPECT_FALSE(parse_id_text(nullptr, TextFormat::Decimal, &id, &e));
    // Decimal reads as parse_id does.
    for (const char* v : {"0", "9223372036854775807", "9223372036854775808", "-1", "+1", " 1", "1a", ""}) {
        int64_t a = 0, b2 = 0;
        IdTextError x;
        EXPECT_EQ(parse_id_text(v, TextFormat::Decimal, &a, &x), parse_id(v, &b2)) << v;
    }
}

TEST(HttpQuery, FormatOnTheIdsBatchAndTheDecodeOnce) {
    const char* both[] = {"format", "count"};
    EXPECT_EQ(check_query(Endpoint::IdsBatch, both, 2).kind, QueryVerdict::Kind::Ok);
    const char* format[] = {"format"};
    EXPECT_EQ(check_query(Endpoint::IdDecode, format, 1).kind, QueryVerdict::Kind::Ok);
    for (Endpoint e : {Endpoint::UuidsBatch, Endpoint::Readyz, Endpoint::Livez, Endpoint::Metrics}) {
        const QueryVerdict v = check_query(e, format, 1);
        EXPECT_EQ(v.kind, QueryVerdict::Kind::Unknown);
        EXPECT_STREQ(v.name, "format");
    }
    const char* twice[] = {"count", "format", "format"};
    const QueryVerdict v = check_query(Endpoint::IdsBatch, twice, 3);
    EXPECT_EQ(v.kind, QueryVerdict::Kind::Repeated);
    EXPECT_STREQ(v.name, "format");
    TextFormat f = TextFormat::Base62;
    EXPECT_TRUE(parse_format(0, nullptr, &f));
    EXPECT_EQ(f, TextFormat::Decimal);
    EXPECT_TRUE(parse_format(1, "base32", &f));
    EXPECT_EQ(f, TextFormat::Base32);
    EXPECT_FALSE(parse_format(2, "base32", &f));
    EXPECT_FALSE(parse_format(1, nullptr, &f));
}

TEST(HttpJson, Rfc3339) {
    char buf[40];
    ASSERT_GT(format_rfc3339_ms(buf, sizeof(buf), 0), 0u);
    EXPECT_STREQ(buf, "1970-01-01T00:00:00.000Z");
    ASSERT_GT(format_rfc3339_ms(buf, sizeof(buf), -1), 0u);
    EXPECT_STREQ(buf, "1969-12-31T23:59:59.999Z");
    ASSERT_GT(format_rfc3339_ms(buf, sizeof(buf), 1735689600000 + 86399999), 0u);
    EXPECT_STREQ(buf, "2025-01-01T23:59:59.999Z");
    ASSERT_GT(format_rfc3339_ms(buf, sizeof(buf), 951782400050), 0u);
    EXPECT_STREQ(buf, "2000-02-29T00:00:00.050Z");
}

TEST(HttpJson, ErrorEscapes) {
    char buf[300];
    size_t n = format_error_json(buf, sizeof(buf), "SF001", "a \"quoted\" \\ back\nslash", nullptr, nullptr);
    EXPECT_EQ(std::string(buf, n), "{\"code\":\"SF001\",\"message\":\"a \\\"quoted\\\" \\\\ back\\u000aslash\"}");
    n = format_error_json(buf, sizeof(buf), "22023", "m", "", "h");
    EXPECT_EQ(std::string(buf, n), "{\"code\":\"22023\",\"message\":\"m\",\"hint\":\"h\"}");
    n = format_error_json(buf, sizeof(buf), "SF001", "m", "d", "h");
    EXPECT_EQ(std::string(buf, n), "{\"code\":\"SF001\",\"message\":\"m\",\"detail\":\"d\",\"hint\":\"h\"}");
    // Valid UTF-8 passes; invalid bytes, overlong forms and surrogates become U+FFFD.
    n = format_error_json(buf, sizeof(buf), "x", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", nullptr, "");
    EXPECT_EQ(std::string(buf, n), "{\"code\":\"x\",\"message\":\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}");
    n = format_error_json(buf, sizeof(buf), "x", "\xff\xc0\xaf\xed\xa0\x80\xc3", nullptr, nullptr);
    EXPECT_EQ(std::string(buf, n),
              "{\"code\":\"x\",\"message\":\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"}");
}

TEST(HttpJson, Health) {
    char buf[200];
    size_t n = format_health_json(buf, sizeof(buf), true, nullptr, nullptr);
    EXPECT_EQ(std::string(buf, n), "{\"status\":\"ok\"}");
    n = format_health_json(buf, sizeof(buf), false, "25006", "recovery");
    EXPECT_EQ(std::string(buf, n), "{\"status\":\"unavailable\",\"code\":\"25006\",\"reason\":\"recovery\"}");
}

TEST(HttpMetrics, EveryColumnAndNulls) {
    StatsSnapshot s;
    s.worker_id = 7;
    s.epoch_unix_us = 1735689600000000;
    s.ids_issued = 12345;
    s.last_ms = 1500;
    s.generator.overflow_waits = 3;
    s.generator.clock_backwards_max_ms = 12;
    s.since_unix_us = 1735689600000000;
    s.reserved_until_ms = -1;
    s.reservation_window_ms = 1000;
    Health h;
    h.ready = true;
    h.now_ms = 1000;
    std::vector<char> buf(16384);
    const size_t n = format_metrics(buf.data(), buf.size(), s, h);
    ASSERT_GT(n, 0u);
    const std::string text(buf.data(), n);
    for (const char* col : {"worker_id", "epoch", "ids_issued", "last_timestamp", "overflow_waits",
                            "clock_backwards_events", "clock_backwards_max_ms", "clock_backwards_errors",
                            "since", "high_water_mark", "reservations", "reservation_waits",
                            "startup_waits", "reservation_window_ms", "last_mark_write_ms",
                            "lease_state", "lease_id", "lease_deadline", "lease_renewals",
                            "lease_failures", "lease_last_error", "clock_synchronized",
                            "clock_max_error_ms", "clock_est_error_ms", "clock_health_refusals"})
        EXPECT_TRUE(text.find(std::string("snowflake_stats.") + col + ")") != std::string::npos ||
                    text.find(std::string("snowflake_stats.") + col + ",") != std::string::npos)
            << col;
    EXPECT_NE(text.find("snowflake_info{worker_id=\"7\",epoch=\"2025-01-01T00:00:00.000Z\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_ids_issued_total 12345\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_last_id_timestamp_seconds 1735689601.5\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_clock_backwards_max_seconds 0.012\n"), std::string::npos);
    EXPECT_NE(text.find("# TYPE snowflake_overflow_waits_total counter\n"), std::string::npos);
    // A NULL column: HELP and TYPE, no sample.
    EXPECT_NE(text.find("# TYPE snowflake_high_water_mark_timestamp_seconds gauge\n"), std::string::npos);
    EXPECT_EQ(text.find("\nsnowflake_high_water_mark_timestamp_seconds "), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_ready 1\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_clock_behind_last_id_seconds 0.5\n"), std::string::npos);
    // Lease and clock: labels escaped, NULLs without a sample.
    EXPECT_NE(text.find("\nsnowflake_lease_info{state=\"static\",lease_id=\"\"} 1\n"), std::string::npos);
    EXPECT_EQ(text.find("snowflake_lease_id "), std::string::npos);  // a label now, never a rounded float
    EXPECT_EQ(text.find("\nsnowflake_lease_last_error_info{"), std::string::npos);
    EXPECT_EQ(text.find("\nsnowflake_clock_synchronized "), std::string::npos);
    s.lease_state = LeaseState::Held;
    s.lease_id = 2844482973189514759;
    std::snprintf(s.lease_last_error, sizeof(s.lease_last_error), "%s", "etcd said \"no\"\\\nnow");
    s.lease_last_error_reason = LeaseError::KeepAlive;
    s.clock_known = true;
    s.clock_synchronized = true;
    s.clock_max_error_us = 2500;
    const std::string held(buf.data(), format_metrics(buf.data(), buf.size(), s, h));
    // The lease id exact, in a label; no error series while the lease is held.
    EXPECT_NE(held.find("\nsnowflake_lease_info{state=\"held\",lease_id=\"2844482973189514759\"} 1\n"),
              std::string::npos);
    EXPECT_EQ(held.find("\nsnowflake_lease_last_error_info{"), std::string::npos) << held;
    EXPECT_EQ(held.find("etcd said"), std::string::npos);  // free text never reaches /metrics
    EXPECT_NE(held.find("\nsnowflake_clock_synchronized 1\n"), std::string::npos);
    EXPECT_NE(held.find("\nsnowflake_clock_max_error_seconds 0.003\n"), std::string::npos);
    // Lost: the kind of the last failure, a bounded word, never the text.
    s.lease_state = LeaseState::Expired;
    const std::string lost(buf.data(), format_metrics(buf.data(), buf.size(), s, h));
    EXPECT_NE(lost.find("\nsnowflake_lease_last_error_info{reason=\"keepalive\"} 1\n"), std::string::npos)
        << lost;
    EXPECT_EQ(lost.find("etcd said"), std::string::npos);
    // Unset worker id: empty label, -1.
    s.worker_id = -1;
    const size_t m = format_metrics(buf.data(), buf.size(), s, h);
    const std::string unset(buf.data(), m);
    EXPECT_NE(unset.find("snowflake_info{worker_id=\"\","), std::string::npos);
    EXPECT_NE(unset.find("\nsnowflake_worker_id -1\n"), std::string::npos);
    // Too small a buffer: nothing.
    char small[100];
    EXPECT_EQ(format_metrics(small, sizeof(small), s, h), 0u);
}

TEST(HttpMetrics, BuildStartAndRequests) {
    StatsSnapshot s;
    s.epoch_unix_us = 1735689600000000;
    s.server_start_unix_us = 1735689600250000;
    Health h;
    h.version = "1.1";
    std::vector<char> buf(65536);
    std::string text(buf.data(), format_metrics(buf.data(), buf.size(), s, h));
    EXPECT_NE(text.find("\nsnowflake_build_info{version=\"1.1\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("\nprocess_start_time_seconds 1735689600.25\n"), std::string::npos);
    // No request statistics given (snowflake_http_worker_id is a column's).
    for (const char* m : {"snowflake_http_requests", "snowflake_http_ids", "snowflake_http_uuids",
                          "snowflake_http_request_duration"})
        EXPECT_EQ(text.find(m), std::string::npos) << m;
    // Refusals: every cause always present (rate() works from the first one).
    for (int i = 0; i < kRefusalCount; i++)
        EXPECT_NE(text.find(std::string("\nsnowflake_ids_refused_total{cause=\"") + kRefusalCause[i] +
                            "\",sqlstate=\"" + kRefusalSqlstate[i] + "\"} 0\n"),
                  std::string::npos)
            << kRefusalCause[i];
    s.refusals[static_cast<int>(Refusal::NoLease)] = 4;
    s.mark_write_failures = 2;
    s.coord_mark_write_failures = 3;
    text.assign(buf.data(), format_metrics(buf.data(), buf.size(), s, h));
    EXPECT_NE(text.find("\nsnowflake_ids_refused_total{cause=\"no_lease\",sqlstate=\"SF003\"} 4\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_mark_write_failures_total{mark=\"file\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_mark_write_failures_total{mark=\"etcd\"} 3\n"), std::string::npos);
    RequestStats r;
    r.record(Endpoint::IdsBatch, 200, 90);       // first bucket (le 0.0001)
    r.record(Endpoint::IdsBatch, 200, 300);      // le 0.0005
    r.record(Endpoint::IdsBatch, 503, 5000000);  // beyond the last bucket
    r.record(Endpoint::NotFound, 404, 100);      // a bound is inclusive
    r.add_ids(10);
    r.add_ids(5);
    r.add_uuids(3);
    h.requests = &r;
    text.assign(buf.data(), format_metrics(buf.data(), buf.size(), s, h));
    EXPECT_NE(text.find("# TYPE snowflake_http_requests_total counter\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_requests_total{endpoint=\"ids_batch\",code=\"200\"} 2\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_requests_total{endpoint=\"ids_batch\",code=\"503\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_requests_total{endpoint=\"not_found\",code=\"404\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("# TYPE snowflake_http_request_duration_seconds histogram\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_ids_issued_total 15\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_uuids_issued_total 3\n"), std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_request_duration_seconds_bucket{endpoint=\"ids_batch\",le=\"0.0001\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_request_duration_seconds_bucket{endpoint=\"ids_batch\",le=\"0.0005\"} 2\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_request_duration_seconds_bucket{endpoint=\"ids_batch\",le=\"2.5\"} 2\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_request_duration_seconds_bucket{endpoint=\"ids_batch\",le=\"+Inf\"} 3\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_request_duration_seconds_sum{endpoint=\"ids_batch\"} 5.00039\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_request_duration_seconds_count{endpoint=\"ids_batch\"} 3\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_request_duration_seconds_bucket{endpoint=\"not_found\",le=\"0.0001\"} 1\n"),
              std::string::npos);
    // Status codes are bounded: past the table, "other".
    RequestStats many;
    for (int code = 200; code < 200 + RequestStats::kMaxCodes + 5; code++) many.record(Endpoint::Readyz, code, 1);
    h.requests = &many;
    text.assign(buf.data(), format_metrics(buf.data(), buf.size(), s, h));
    EXPECT_NE(text.find("\nsnowflake_http_requests_total{endpoint=\"readyz\",code=\"other\"} 6\n"),
              std::string::npos);
    EXPECT_NE(text.find("\nsnowflake_http_requests_total{endpoint=\"readyz\",code=\"222\"} 1\n"),
              std::string::npos);
    EXPECT_EQ(text.find("code=\"223\""), std::string::npos);
    // The worst case fits the worker's buffer (kMetricsCapacity in
    // http_worker.cpp, 64 KiB): every endpoint with every code slot used,
    // every counter and time at its widest.
    RequestStats full;
    for (int e = 0; e < kEndpointCount; e++)
        for (int code = 100; code < 100 + RequestStats::kMaxCodes + 1; code++)
            full.record(static_cast<Endpoint>(e), code, INT64_MAX / 1024);
    StatsSnapshot wide;
    wide.worker_id = 1023;
    wide.ids_issued = UINT64_MAX;
    wide.last_ms = (int64_t{1} << 41) - 1;
    wide.reserved_until_ms = (int64_t{1} << 41) - 1;
    wide.lease_state = LeaseState::Expired;
    wide.lease_id = INT64_MAX;
    wide.lease_last_error_reason = LeaseError::DeadlinePassed;
    wide.lease_deadline_unix_us = INT64_MAX / 2;
    wide.clock_known = true;
    wide.clock_max_error_us = INT64_MAX / 2;
    wide.clock_est_error_us = INT64_MAX / 2;
    wide.server_start_unix_us = INT64_MAX / 2;
    for (auto& r : wide.refusals) r = UINT64_MAX;
    wide.mark_write_failures = UINT64_MAX;
    wide.coord_mark_write_failures = UINT64_MAX;
    h.requests = &full;
    h.version = "1.1";
    const size_t worst = format_metrics(buf.data(), buf.size(), wide, h);
    ASSERT_GT(worst, 0u);
    EXPECT_LT(worst, 48u * 1024) << "raise kMetricsCapacity in http_worker.cpp";
}

TEST(HttpListen, Parse) {
    ListenAddress a;
    EXPECT_EQ(parse_listen("127.0.0.1:8080", &a), nullptr);
    EXPECT_STREQ(a.host, "127.0.0.1");
    EXPECT_EQ(a.port, 8080);
    EXPECT_FALSE(a.ipv6);
    EXPECT_EQ(parse_listen(":9000", &a), nullptr);
    EXPECT_STREQ(a.host, "127.0.0.1");
    EXPECT_EQ(a.port, 9000);
    EXPECT_EQ(parse_listen("localhost:1", &a), nullptr);
    EXPECT_STREQ(a.host, "127.0.0.1");
    EXPECT_EQ(parse_listen("*:65535", &a), nullptr);
    EXPECT_STREQ(a.host, "0.0.0.0");
    EXPECT_EQ(a.port, 65535);
    EXPECT_EQ(parse_listen("[::1]:8080", &a), nullptr);
    EXPECT_STREQ(a.host, "::1");
    EXPECT_TRUE(a.ipv6);
    EXPECT_EQ(parse_listen("10.1.2.3:80", &a), nullptr);
    EXPECT_STREQ(a.host, "10.1.2.3");
    for (const char* bad : {"", "8080", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                            "127.0.0.1:80a", "127.0.0.1:-1", "::1:8080", "[]:80", "127.0.0.1:123456"})
        EXPECT_NE(parse_listen(bad, &a), nullptr) << bad;
    EXPECT_NE(parse_listen(nullptr, &a), nullptr);
}

TEST(ClientClocks, AClientThatNeverFinishesIsOverdueOnceAfterTheLimit) {
    ClientClocks c;
    const int s = c.open(1000);
    ASSERT_GE(s, 0);
    int out[kMaxConnections];
    EXPECT_EQ(c.overdue(1000 + kClientTurnLimitMs, out, kMaxConnections), 0);
    ASSERT_EQ(c.overdue(1001 + kClientTurnLimitMs, out, kMaxConnections), 1);
    EXPECT_EQ(out[0], s);
    EXPECT_EQ(c.overdue(5000 + kClientTurnLimitMs, out, kMaxConnections), 0) << "named once";
}

TEST(ClientClocks, TheServersTimeIsNotCounted) {
    ClientClocks c;
    int out[kMaxConnections];
    const int s = c.open(0);
    c.server_turn(s);  // headers complete at once, then a long wait for ids
    EXPECT_EQ(c.overdue(60000, out, kMaxConnections), 0);
    c.client_turn(s, 60000);  // the answer is queued: the client reads it
    EXPECT_EQ(c.overdue(60000 + kClientTurnLimitMs, out, kMaxConnections), 0);
    EXPECT_EQ(c.overdue(60001 + kClientTurnLimitMs, out, kMaxConnections), 1);
}

TEST(ClientClocks, EachRequestStartsTheClientsTimeAgain) {
    ClientClocks c;
    int out[kMaxConnections];
    const int s = c.open(0);
    // A kept-alive connection with a request every 6 s is never overdue.
    for (int64_t t = 6000; t < 100000; t += 6000) {
        c.server_turn(s);
        c.client_turn(s, t);
        EXPECT_EQ(c.overdue(t + 5999, out, kMaxConnections), 0) << t;
    }
    // ... though 100 s have passed since it connected; without a request it
    // is overdue once its last turn is too old.
    EXPECT_EQ(c.overdue(96000 + kClientTurnLimitMs + 1, out, kMaxConnections), 1);
}

TEST(ClientClocks, EveryTurnMayBeOverdueOnce) {
    ClientClocks c;
    int out[kMaxConnections];
    const int s = c.open(0);
    ASSERT_EQ(c.overdue(kClientTurnLimitMs + 1, out, kMaxConnections), 1);
    // Still open (the close had not taken effect): a new turn is timed anew
    // and named again when it runs over.
    c.server_turn(s);
    c.client_turn(s, 20000);
    EXPECT_EQ(c.overdue(20000 + kClientTurnLimitMs, out, kMaxConnections), 0);
    EXPECT_EQ(c.overdue(20001 + kClientTurnLimitMs, out, kMaxConnections), 1);
}

TEST(ClientClocks, SlotsAreReusedAndLimited) {
    ClientClocks c;
    int slots[kMaxConnections];
    for (int i = 0; i < kMaxConnections; i++) {
        slots[i] = c.open(i);
        ASSERT_EQ(slots[i], i);
    }
    for (int i = 0; i < kMaxConnections; i++) EXPECT_TRUE(c.admitted(slots[i]));
    // The spare slots: open, but not admitted (answered 503 and closed).
    for (int i = 0; i < kSpareConnections; i++) {
        const int spare = c.open(100);
        EXPECT_EQ(spare, kMaxConnections + i);
        EXPECT_FALSE(c.admitted(spare));
    }
    EXPECT_EQ(c.open(100), -1);
    EXPECT_EQ(c.in_use(), kSlots);
    for (int i = 0; i < kSpareConnections; i++) c.close(kMaxConnections + i);
    c.close(slots[10]);
    EXPECT_EQ(c.in_use(), kMaxConnections - 1);
    EXPECT_EQ(c.open(200), 10);
    EXPECT_TRUE(c.admitted(10));
    // A reused slot starts fresh: only the old connections are overdue.
    int out[kMaxConnections];
    EXPECT_EQ(c.overdue(200 + kClientTurnLimitMs, out, kMaxConnections), kMaxConnections - 1);
    for (int i = 0; i < kMaxConnections - 1; i++) EXPECT_NE(out[i], 10);
}

TEST(ClientClocks, BadSlotsAreIgnored) {
    ClientClocks c;
    c.client_turn(-1, 0);
    c.server_turn(kMaxConnections);
    c.close(-5);
    c.client_turn(3, 0);  // not open
    int out[kMaxConnections];
    EXPECT_EQ(c.overdue(1000000, out, kMaxConnections), 0);
    EXPECT_EQ(c.in_use(), 0);
}

TEST(ClientClocks, OverdueNamesAtMostCapAndTheRestLater) {
    ClientClocks c;
    for (int i = 0; i < 5; i++) c.open(0);
    int out[kMaxConnections];
    EXPECT_EQ(c.overdue(kClientTurnLimitMs + 1, out, 2), 2);
    EXPECT_EQ(c.overdue(kClientTurnLimitMs + 1, out, kMaxConnections), 3);
    EXPECT_EQ(c.overdue(kClientTurnLimitMs + 1, out, kMaxConnections), 0);
}

TEST(ClientClocks, SpareSlotsHaveAShortLimitAndDoNotCount) {
    ClientClocks c;
    for (int i = 0; i < kMaxConnections; i++) c.open(0);
    const int spare = c.open(0);
    ASSERT_EQ(spare, kMaxConnections);
    EXPECT_FALSE(c.admitted(spare));
    int out[kSlots];
    EXPECT_EQ(c.overdue(kSpareTurnLimitMs, out, kSlots), 0);
    ASSERT_EQ(c.overdue(kSpareTurnLimitMs + 1, out, kSlots), 1);
    EXPECT_EQ(out[0], spare);
    // One admitted connection goes: the next one is admitted, though a spare
    // one is still open.
    c.close(3);
    const int next = c.open(50);
    EXPECT_EQ(next, 3);
    EXPECT_TRUE(c.admitted(next));
    EXPECT_FALSE(c.admitted(c.open(60)));
    EXPECT_FALSE(c.admitted(-1));
    EXPECT_FALSE(c.admitted(kSlots));
}

TEST(HttpQuery, OnlyCountOnTheBatchesOnce) {
    const char* none[] = {nullptr};
    EXPECT_EQ(check_query(Endpoint::IdsBatch, none, 0).kind, QueryVerdict::Kind::Ok);
    const char* count[] = {"count"};
    EXPECT_EQ(check_query(Endpoint::IdsBatch, count, 1).kind, QueryVerdict::Kind::Ok);
    EXPECT_EQ(check_query(Endpoint::UuidsBatch, count, 1).kind, QueryVerdict::Kind::Ok);
    const char* twice[] = {"count", "count"};
    QueryVerdict v = check_query(Endpoint::IdsBatch, twice, 2);
    EXPECT_EQ(v.kind, QueryVerdict::Kind::Repeated);
    EXPECT_STREQ(v.name, "count");
    const char* other[] = {"count", "other", "count"};
    v = check_query(Endpoint::IdsBatch, other, 3);
    EXPECT_EQ(v.kind, QueryVerdict::Kind::Unknown);
    EXPECT_STREQ(v.name, "other");
    for (Endpoint e : {Endpoint::Readyz, Endpoint::Livez, Endpoint::Metrics, Endpoint::IdDecode}) {
        v = check_query(e, count, 1);
        EXPECT_EQ(v.kind, QueryVerdict::Kind::Unknown);
        EXPECT_STREQ(v.name, "count");
    }
    const char* empty[] = {nullptr};
    v = check_query(Endpoint::IdsBatch, empty, 1);
    EXPECT_EQ(v.kind, QueryVerdict::Kind::Unknown);
    EXPECT_STREQ(v.name, "");
    const char* upper[] = {"Count"};
    EXPECT_EQ(check_query(Endpoint::IdsBatch, upper, 1).kind, QueryVerdict::Kind::Unknown);
}

TEST(HttpBody, ContentLengthAndTransferEncoding) {
    EXPECT_FALSE(has_body(nullptr, nullptr));
    EXPECT_FALSE(has_body("0", nullptr));
    EXPECT_FALSE(has_body("000", nullptr));
    EXPECT_FALSE(has_body(" 0 ", nullptr));
    EXPECT_TRUE(has_body("3", nullptr));
    EXPECT_TRUE(has_body("10", nullptr));
    EXPECT_TRUE(has_body("", nullptr));
    EXPECT_TRUE(has_body("0x", nullptr));
    EXPECT_TRUE(has_body(nullptr, "chunked"));
    EXPECT_TRUE(has_body("0", "chunked"));
}

TEST(HttpKeepAlive, AsLibmicrohttpdDecides) {
    EXPECT_TRUE(keeps_alive("HTTP/1.1", nullptr, false));
    EXPECT_TRUE(keeps_alive("HTTP/1.1", "keep-alive", false));
    EXPECT_FALSE(keeps_alive("HTTP/1.1", "close", false));
    EXPECT_FALSE(keeps_alive("HTTP/1.1", "Upgrade, Close", false));
    EXPECT_TRUE(keeps_alive("HTTP/1.1", "closed", false));
    EXPECT_FALSE(keeps_alive("HTTP/1.1", nullptr, true));
    EXPECT_FALSE(keeps_alive("HTTP/1.0", nullptr, false));
    EXPECT_TRUE(keeps_alive("HTTP/1.0", "Keep-Alive", false));
    EXPECT_FALSE(keeps_alive(nullptr, nullptr, false));
    EXPECT_EQ(kIdleTimeoutS, 10u);
}

TEST(HttpHealth, ShortReasonStopsBeforeTheDetails) {
    char out[128];
    EXPECT_EQ(short_reason(out, sizeof(out),
                           "no worker id lease is held: the lease worker is acquiring a worker id; last "
                           "error: connection refused to http://10.0.0.1:2379"),
              26u);
    EXPECT_STREQ(out, "no worker id lease is held");
    short_reason(out, sizeof(out), "worker id 3 is held by another node: db2:5432 (system identifier 7)");
    EXPECT_STREQ(out, "worker id 3 is held by another node");
    short_reason(out, sizeof(out), "could not extend the worker id's reservation in etcd: etcdserver: no space");
    EXPECT_STREQ(out, "could not extend the worker id's reservation in etcd");
    short_reason(out, sizeof(out), "cannot issue snowflake ids during recovery");
    EXPECT_STREQ(out, "cannot issue snowflake ids during recovery");
    short_reason(out, sizeof(out), "");
    EXPECT_STREQ(out, "");
    short_reason(out, sizeof(out), nullptr);
    EXPECT_STREQ(out, "");
    EXPECT_EQ(short_reason(out, 5, "abcdefgh"), 4u);
    EXPECT_STREQ(out, "abcd");
}

TEST(HttpTokens, TwoTokensForARotation) {
    Tokens t;
    EXPECT_TRUE(authorized(t, nullptr)) << "none configured";
    t.configured = true;
    EXPECT_EQ(add_tokens(&t, " old-token , new-token "), nullptr);
    ASSERT_EQ(t.n, 2);
    EXPECT_STREQ(t.token[0], "old-token");
    EXPECT_STREQ(t.token[1], "new-token");
    EXPECT_TRUE(authorized(t, "Bearer old-token"));
    EXPECT_TRUE(authorized(t, "Bearer new-token"));
    EXPECT_FALSE(authorized(t, "Bearer old-token, new-token"));
    EXPECT_FALSE(authorized(t, "Bearer other"));
    EXPECT_FALSE(authorized(t, nullptr));
    EXPECT_FALSE(authorized(t, "Bearer "));
    // A file's lines.
    Tokens f;
    f.configured = true;
    EXPECT_EQ(add_tokens(&f, "file-a\r\nfile-b\n\n"), nullptr);
    ASSERT_EQ(f.n, 2);
    EXPECT_TRUE(authorized(f, "Bearer file-b"));
    // Refused, and nothing added.
    Tokens r;
    r.configured = true;
    EXPECT_NE(add_tokens(&r, "a,b,c"), nullptr);
    EXPECT_NE(add_tokens(&r, "a b"), nullptr);
    EXPECT_NE(add_tokens(&r, "caf\xc3\xa9"), nullptr);
    EXPECT_NE(add_tokens(&r, std::string(257, 'x').c_str()), nullptr);
    EXPECT_EQ(r.n, 0);
    EXPECT_FALSE(authorized(r, "Bearer a")) << "configured, none readable: nothing accepted";
    EXPECT_FALSE(authorized(r, nullptr));
    EXPECT_EQ(add_tokens(&r, std::string(256, 'x').c_str()), nullptr);
    EXPECT_EQ(add_tokens(&r, ",,"), nullptr);
    EXPECT_EQ(r.n, 1);
}

TEST(HttpListen, AddressKinds) {
    const unsigned char lo4[4] = {127, 0, 0, 1}, lo4b[4] = {127, 1, 2, 3}, any4[4] = {0, 0, 0, 0},
                        ten[4] = {10, 0, 0, 1};
    EXPECT_EQ(classify_address(false, lo4), AddressKind::Loopback);
    EXPECT_EQ(classify_address(false, lo4b), AddressKind::Loopback);
    EXPECT_EQ(classify_address(false, any4), AddressKind::Wildcard);
    EXPECT_EQ(classify_address(false, ten), AddressKind::Other);
    unsigned char v6[16] = {0};
    EXPECT_EQ(classify_address(true, v6), AddressKind::Wildcard);
    v6[15] = 1;
    EXPECT_EQ(classify_address(true, v6), AddressKind::Loopback);
    const unsigned char mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
    EXPECT_EQ(classify_address(true, mapped), AddressKind::Loopback);
    const unsigned char doc[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    EXPECT_EQ(classify_address(true, doc), AddressKind::Other);
    EXPECT_TRUE(exposure_allowed(AddressKind::Loopback, false, false));
    EXPECT_FALSE(exposure_allowed(AddressKind::Wildcard, false, false));
    EXPECT_FALSE(exposure_allowed(AddressKind::Other, false, false));
    EXPECT_TRUE(exposure_allowed(AddressKind::Other, true, false));
    EXPECT_TRUE(exposure_allowed(AddressKind::Wildcard, false, true));
}

TEST(HttpListen, HostHeaderAgainstDnsRebinding) {
    ListenAddress lo;
    ASSERT_EQ(parse_listen("127.0.0.1:8080", &lo), nullptr);
    for (const char* h : {"127.0.0.1", "127.0.0.1:8080", "localhost", "LocalHost:8080", "localhost:1"})
        EXPECT_TRUE(host_allowed(h, lo, AddressKind::Loopback)) << h;
    EXPECT_TRUE(host_allowed(nullptr, lo, AddressKind::Loopback));
    for (const char* h : {"evil.example", "evil.example:8080", "127.0.0.2:8080", "localhost.", "", ":8080",
                          "127.0.0.1.evil.example", "localhost.evil.example", "[::1]:8080", "[127.0.0.1]"})
        EXPECT_FALSE(host_allowed(h, lo, AddressKind::Loopback)) << h;
    ListenAddress v6;
    ASSERT_EQ(parse_listen("[::1]:8080", &v6), nullptr);
    EXPECT_TRUE(host_allowed("[::1]:8080", v6, AddressKind::Loopback));
    EXPECT_TRUE(host_allowed("[::1]", v6, AddressKind::Loopback));
    EXPECT_TRUE(host_allowed("localhost:8080", v6, AddressKind::Loopback));
    EXPECT_FALSE(host_allowed("::1", v6, AddressKind::Loopback));
    EXPECT_FALSE(host_allowed("[::1", v6, AddressKind::Loopback));
    EXPECT_FALSE(host_allowed("[::1]x", v6, AddressKind::Loopback));
    ListenAddress any;
    ASSERT_EQ(parse_listen("*:8080", &any), nullptr);
    for (const char* h : {"10.1.2.3:8080", "192.168.0.1", "localhost", "[fe80::1]:8080", "0.0.0.0"})
        EXPECT_TRUE(host_allowed(h, any, AddressKind::Wildcard)) << h;
    for (const char* h : {"evil.example", "10.1.2", "10.1.2.300", "1.2.3.4.5", "[evil]"})
        EXPECT_FALSE(host_allowed(h, any, AddressKind::Wildcard)) << h;
}

TEST(IdRateLimit, BucketWithTimePassedIn) {
    IdRateLimit l;
    EXPECT_TRUE(l.take(1000000, 0).allowed) << "no rate: no limit";
    l.set_rate(1000, 0);  // 1,000 ids/s, a bucket of 100
    EXPECT_TRUE(l.take(60, 0).allowed);
    EXPECT_TRUE(l.take(60, 0).allowed) << "40 left: still not in debt";
    IdRateLimit::Verdict v = l.take(1, 0);  // 20 in debt
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.retry_after_s, 1);
    EXPECT_EQ(v.retry_after_ms, 20) << "20 ids at 1,000 a second";
    v = l.take(1, 19500);
    EXPECT_EQ(v.retry_after_ms, 1) << "0.5 ms left: rounded up";
    EXPECT_EQ(v.retry_after_s, 1);
    EXPECT_FALSE(l.take(1, 19999).allowed) << "19.999 ids refilled";
    EXPECT_TRUE(l.take(1, 20000).allowed) << "the debt paid";
    // A big batch passes once, then its debt is waited out.
    l.set_rate(100, 1000000);  // new rate: a full bucket of 10
    EXPECT_TRUE(l.take(10000, 1000000).allowed);
    v = l.take(1, 1000000);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.retry_after_s, 100);
    EXPECT_EQ(v.retry_after_ms, 99900);
    v = l.take(1, 51000000);
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.retry_after_s, 50);
    EXPECT_TRUE(l.take(1, 101000000).allowed);
    // A long pause fills the bucket, never more.
    EXPECT_TRUE(l.take(11, 1000000000000).allowed);
    EXPECT_FALSE(l.take(1, 1000000000000 + 10).allowed) << "only 10 were there";
    // A clock that did not move, or went back, adds nothing.
    EXPECT_FALSE(l.take(1, 5).allowed);
    // The default ceiling: 2,048,000 ids/s, 204,800 at once.
    IdRateLimit d;
    d.set_rate(2048000, 0);
    EXPECT_TRUE(d.take(204800, 0).allowed);
    EXPECT_TRUE(d.take(1, 0).allowed) << "empty, not in debt";
    EXPECT_FALSE(d.take(1, 0).allowed);
    EXPECT_TRUE(d.take(10000, 1).allowed) << "2.048 ids a microsecond";
    d.set_rate(0, 5);
    EXPECT_TRUE(d.take(100000000, 5).allowed);
}
