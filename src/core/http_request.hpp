// The order of the checks a request of the HTTP endpoint passes before it is
// answered, and the error each refusal answers with, pure so that the order
// is unit-tested without a server (test/unit/http_request_test.cpp). The
// worker (src/pg/http_worker.cpp) gathers the request's headers and query
// names, asks check_request(), and either sends the refusal or answers.
//
// The order, first failing check wins:
//   1. exposure: a non-loopback address needs a token (or
//      snowflake.http_allow_unauthenticated); /livez is exempt, so that a
//      liveness probe never restarts a server whose token went at a reload
//   2. Host: without a token, the Host header names the endpoint (DNS
//      rebinding)
//   3. token: every path but the health probes needs a valid Bearer token
//      when one is set (so an unknown path is a 401, not a 404, to a
//      client without the token)
//   4. route: the path is known
//   5. method: GET, or HEAD where it changes nothing
//   6. query: only the endpoint's own parameters, each once
//   7. count: the batches' count is valid
//   8. format: /v1/ids/batch's and /v1/ids/{id}'s format is a known one
//      (the {id} itself is read in that format when the path is answered)
// The ceiling on ids per second comes after all of them (it takes from a
// bucket: only a request that is otherwise answered may).
#pragma once

#include "pure.hpp"

#include "http_api.hpp"

#include <cstdint>

namespace snowflake::core::http {

// What the worker read of a request whose headers are complete. Each
// pointer may be nullptr (header or parameter absent).
struct Request {
    Route route;
    const char* host = nullptr;                // the Host header
    const char* authorization = nullptr;       // the Authorization header
    const char* const* query_names = nullptr;  // the query's parameter names, in order
    int query_name_count = 0;
    int count_occurrences = 0;    // of "count" in the query
    const char* count = nullptr;  // the first count's value
    int format_occurrences = 0;   // of "format" in the query
    const char* format = nullptr;  // the first format's value
};

// Where the endpoint listens and who may ask.
struct Access {
    const Tokens* tokens = nullptr;         // never nullptr when asked
    const ListenAddress* listen = nullptr;  // never nullptr when asked
    AddressKind kind = AddressKind::Loopback;
    bool allow_unauthenticated = false;
};

// The checks in their order; Passed: none failed.
enum class Check { Passed, Exposure, Host, Token, Route, Method, Query, Count, Format };

// An error answer: HTTP status, SQLSTATE, message and hint (never null), and
// the headers that go with it.
struct Refusal {
    unsigned status = 0;
    const char* code = "";
    char message[200] = {};
    const char* hint = "";
    bool www_authenticate = false;  // 401
    const char* allow = nullptr;    // 405: the Allow header
};

struct Decision {
    Check failed = Check::Passed;
    Refusal refusal;           // failed != Passed
    int32_t count = 1;         // the batches' count (Passed)
    TextFormat format = TextFormat::Decimal;  // the ids' text format (Passed)
    bool full_reason = false;  // /readyz: a valid token came, so the whole reason goes
};

Decision check_request(const Request& request, const Access& access) noexcept;

}  // namespace snowflake::core::http
