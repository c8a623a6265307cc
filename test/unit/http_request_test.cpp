// The order of the HTTP endpoint's checks (core/http_request.hpp): each
// check alone, and a request failing two of them gets the first one's
// error, for every pair that can fail together.
#include "core/http_request.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace snowflake::core::http;

namespace {

// The checks that can fail, in their order.
const Check kChecks[] = {Check::Exposure, Check::Host,  Check::Token, Check::Route,
                         Check::Method,   Check::Query, Check::Count, Check::Format};
constexpr int kCheckCount = sizeof(kChecks) / sizeof(kChecks[0]);

// A request to /v1/ids/batch on 127.0.0.1:8080 that passes every check, with
// the faults of `failing` (bits: index in kChecks) put into it. Exposure and
// Host need an endpoint without a token, Token one with a token; Count and
// Format need /v1/ids/batch, Route a path that is none.
struct Case {
    Tokens tokens;
    ListenAddress listen;
    Request request;
    Access access;
    const char* names[1] = {"foo"};
    bool possible = true;

    explicit Case(unsigned failing) {
        const auto has = [failing](Check c) {
            for (int i = 0; i < kCheckCount; i++)
                if (kChecks[i] == c) return (failing >> i & 1u) != 0;
            return false;
        };
        const bool no_token = has(Check::Exposure) || has(Check::Host);
        if (no_token && has(Check::Token)) possible = false;
        if (has(Check::Route) && (has(Check::Count) || has(Check::Format))) possible = false;
        if (has(Check::Token)) {
            tokens.configured = true;
            EXPECT_EQ(add_tokens(&tokens, "good"), nullptr);
        }
        EXPECT_EQ(parse_listen(has(Check::Exposure) ? "10.0.0.1:8080" : "127.0.0.1:8080", &listen), nullptr);
        request.route = route(has(Check::Method) ? "POST" : "GET", has(Check::Route) ? "/nope" : "/v1/ids/batch");
        request.host = has(Check::Host) ? "evil.example" : listen.host;
        request.authorization = has(Check::Token) ? "Bearer wrong" : nullptr;
        if (has(Check::Query)) {
            request.query_names = names;
            request.query_name_count = 1;
        }
        if (has(Check::Count)) {
            request.count_occurrences = 1;
            request.count = "0";
        }
        if (has(Check::Format)) {
            request.format_occurrences = 1;
            request.format = "base64";
        }
        access.tokens = &tokens;
        access.listen = &listen;
        access.kind = has(Check::Exposure) ? AddressKind::Other : AddressKind::Loopback;
    }
};

// The answer each check's failure gives in these cases.
struct Expected {
    Check check;
    unsigned status;
    const char* code;
    const char* message;
};
const Expected kExpected[] = {
    {Check::Exposure, 403, "28000", "no token is set for a non-loopback address"},
    {Check::Host, 403, "28000", "host \"evil.example\" is not the address of this endpoint"},
    {Check::Token, 401, "28000", "missing or wrong bearer token"},
    {Check::Route, 404, "42704", "no such path"},
    {Check::Method, 405, "0A000", "method not allowed"},
    {Check::Query, 400, "22023", "unknown query parameter \"foo\""},
    {Check::Count, 400, "22023", "count must be a number from 1 to 10000"},
    {Check::Format, 400, "22023", "format must be decimal, base32 or base62"},
};

void expect_refused_by(const Decision& d, int i, const std::string& what) {
    const Expected& e = kExpected[i];
    EXPECT_EQ(d.failed, e.check) << what;
    EXPECT_EQ(d.refusal.status, e.status) << what;
    EXPECT_STREQ(d.refusal.code, e.code) << what;
    EXPECT_STREQ(d.refusal.message, e.message) << what;
    EXPECT_NE(d.refusal.hint, nullptr) << what;
    EXPECT_GT(std::strlen(d.refusal.hint), 0u) << what;
}

}  // namespace

TEST(HttpRequest, AGoodRequestPasses) {
    Case c(0);
    const Decision d = check_request(c.request, c.access);
    EXPECT_EQ(d.failed, Check::Passed);
    EXPECT_EQ(d.count, 1);
    EXPECT_FALSE(d.full_reason) << "no token configured";
}

TEST(HttpRequest, EachCheckAlone) {
    for (int i = 0; i < kCheckCount; i++) {
        Case c(1u << i);
        ASSERT_TRUE(c.possible);
        expect_refused_by(check_request(c.request, c.access), i, "check " + std::to_string(i));
    }
}

TEST(HttpRequest, OfTwoFailingChecksTheFirstAnswers) {
    std::vector<std::pair<int, int>> exclusive;
    for (int i = 0; i < kCheckCount; i++) {
        for (int j = i + 1; j < kCheckCount; j++) {
            Case c((1u << i) | (1u << j));
            if (!c.possible) {
                exclusive.emplace_back(i, j);
                continue;
            }
            expect_refused_by(check_request(c.request, c.access), i,
                              "checks " + std::to_string(i) + " and " + std::to_string(j));
        }
    }
    // Exposure and Host are checked only without a token, Token only with
    // one; Count and Format only on paths that take them, which are routes.
    const std::vector<std::pair<int, int>> expected = {{0, 2}, {1, 2}, {3, 6}, {3, 7}};
    EXPECT_EQ(exclusive, expected);
}

TEST(HttpRequest, TheHeadersThatGoWithARefusal) {
    Case token(1u << 2);
    const Decision t = check_request(token.request, token.access);
    EXPECT_TRUE(t.refusal.www_authenticate);
    EXPECT_EQ(t.refusal.allow, nullptr);
    Case method(1u << 4);
    const Decision m = check_request(method.request, method.access);
    EXPECT_FALSE(m.refusal.www_authenticate);
    EXPECT_STREQ(m.refusal.allow, "GET");
}

TEST(HttpRequest, LivezNeedsNeitherExposureNorToken) {
    Case c(1u << 0);  // a non-loopback address without a token
    c.request.route = route("GET", "/livez");
    EXPECT_EQ(check_request(c.request, c.access).failed, Check::Passed);
    Case r(1u << 0);
    r.request.route = route("GET", "/readyz");
    EXPECT_EQ(check_request(r.request, r.access).failed, Check::Exposure);
    Case t(1u << 2);  // a token set, a wrong one sent
    t.request.route = route("GET", "/readyz");
    const Decision d = check_request(t.request, t.access);
    EXPECT_EQ(d.failed, Check::Passed);
    EXPECT_FALSE(d.full_reason) << "the wrong token gets the short reason";
    t.request.authorization = "Bearer good";
    EXPECT_TRUE(check_request(t.request, t.access).full_reason);
}

TEST(HttpRequest, TheCountAndTheRepeatedParameter) {
    Case c(0);
    c.request.count_occurrences = 1;
    c.request.count = "250";
    const Decision d = check_request(c.request, c.access);
    EXPECT_EQ(d.failed, Check::Passed);
    EXPECT_EQ(d.count, 250);
    const char* twice[2] = {"count", "count"};
    c.request.query_names = twice;
    c.request.query_name_count = 2;
    c.request.count_occurrences = 2;
    const Decision r = check_request(c.request, c.access);
    EXPECT_EQ(r.failed, Check::Query);
    EXPECT_STREQ(r.refusal.message, "query parameter \"count\" is given more than once");
    EXPECT_STREQ(r.refusal.hint, "This path takes two parameters, count and format, each at most once.");
}

TEST(HttpRequest, TheFormat) {
    Case c(0);
    EXPECT_EQ(check_request(c.request, c.access).format, snowflake::core::TextFormat::Decimal) << "the default";
    const char* format[1] = {"format"};
    c.request.query_names = format;
    c.request.query_name_count = 1;
    c.request.format_occurrences = 1;
    const std::pair<const char*, snowflake::core::TextFormat> good[] = {
        {"decimal", snowflake::core::TextFormat::Decimal},
        {"base32", snowflake::core::TextFormat::Base32},
        {"base62", snowflake::core::TextFormat::Base62}};
    for (const auto& [name, f] : good) {
        c.request.format = name;
        const Decision d = check_request(c.request, c.access);
        EXPECT_EQ(d.failed, Check::Passed) << name;
        EXPECT_EQ(d.format, f) << name;
    }
    // Exact names only: no case folding, no guessing, no empty value.
    for (const char* bad : {"Base32", "BASE62", "base64", "hex", "", " base32", "base32 ", "b32"}) {
        c.request.format = bad;
        const Decision d = check_request(c.request, c.access);
        EXPECT_EQ(d.failed, Check::Format) << bad;
        EXPECT_EQ(d.refusal.status, 400u);
        EXPECT_STREQ(d.refusal.code, "22023");
        EXPECT_STREQ(d.refusal.message, "format must be decimal, base32 or base62");
    }
    c.request.format = nullptr;  // "?format" without "="
    EXPECT_EQ(check_request(c.request, c.access).failed, Check::Format);
    // /v1/ids/{id} takes format too; /v1/uuids/batch does not.
    c.request.format = "base62";
    c.request.route = route("GET", "/v1/ids/0IfbtDtw5i4");
    const Decision d = check_request(c.request, c.access);
    EXPECT_EQ(d.failed, Check::Passed);
    EXPECT_EQ(d.format, snowflake::core::TextFormat::Base62);
    c.request.route = route("GET", "/v1/uuids/batch");
    const Decision u = check_request(c.request, c.access);
    EXPECT_EQ(u.failed, Check::Query);
    EXPECT_STREQ(u.refusal.message, "unknown query parameter \"format\"");
    EXPECT_STREQ(u.refusal.hint, "This path takes one parameter, count, at most once.");
    // Given twice: a refused query, before the format's value is looked at.
    const char* twice[2] = {"format", "format"};
    c.request.route = route("GET", "/v1/ids/batch");
    c.request.query_names = twice;
    c.request.query_name_count = 2;
    c.request.format_occurrences = 2;
    const Decision t = check_request(c.request, c.access);
    EXPECT_EQ(t.failed, Check::Query);
    EXPECT_STREQ(t.refusal.message, "query parameter \"format\" is given more than once");
    EXPECT_STREQ(t.refusal.hint, "This path takes two parameters, count and format, each at most once.");
    // An unknown path's hint lists the paths with their parameters.
    Case nowhere(1u << 3);
    const std::string hint = check_request(nowhere.request, nowhere.access).refusal.hint;
    EXPECT_NE(hint.find("/v1/ids/batch?count=N&format=F"), std::string::npos) << hint;
    EXPECT_NE(hint.find("/v1/ids/{id}?format=F"), std::string::npos) << hint;
}

TEST(HttpTokens, TheTokenFileIsCheckedInOrder) {
    EXPECT_EQ(token_file_problem(true, true, false), nullptr);
    EXPECT_STREQ(token_file_problem(false, false, true), "It is not a regular file.");
    EXPECT_STREQ(token_file_problem(true, false, true), "It is owned by neither the server's user nor root.");
    EXPECT_STREQ(token_file_problem(true, true, true),
                 "It is readable or writable by group or others; allow its owner only (chmod 600).");
}
