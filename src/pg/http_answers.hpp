// http_answers.cpp: the HTTP endpoint's answers, one per path, written into
// a Reply that the worker (http_worker.cpp) sends. Each is called from the
// worker's one thread, inside MHD_run, and raises no error: the id path's
// are caught and become 503 answers.
#pragma once

#include <cstddef>
#include <cstdint>

#include <microhttpd.h>

#include "../core/http_request.hpp"
#include "../core/prometheus.hpp"
#include "../core/text_id.hpp"

#include "pg_headers.hpp"

namespace snowflake::pg {

// An answer: status, a malloc'd body (nullptr: a fixed one, kOutOfMemory)
// and what goes in the headers.
struct Reply {
    unsigned status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    char* body = nullptr;
    size_t len = 0;
    const char* content_type = "application/json";
    const char* allow = nullptr;    // 405
    bool www_authenticate = false;  // 401
    int64_t retry_after_s = 0;      // > 0: "Retry-After" (503 of the id path: 1)
    int64_t retry_after_ms = 0;     // > 0: "Retry-After-Ms", the same finer (429 of the ceiling)
    bool close = false;             // "Connection: close"
};

// The body of a 500 answer when no other could be made.
inline constexpr char kOutOfMemory[] =
    "{\"code\":\"53200\",\"message\":\"out of memory\",\"hint\":\"Ask for fewer ids per request.\"}";

// An error answer: status and a JSON body with the SQLSTATE and texts
// (detail may be nullptr).
void error_reply(Reply* r, unsigned status, const char* code, const char* message, const char* hint,
                 const char* detail = nullptr);
// A refusal of the request's checks (core::http::check_request).
void refusal_reply(Reply* r, const snowflake::core::http::Refusal& f);

// /v1/ids/batch and /v1/uuids/batch: count values as JSON; true when they
// were made (else a 500 or the id path's 503 in *r). An ids request waits
// at most kRequestWaitLimitMs (id_path.hpp).
bool ids_batch(Reply* r, int32_t count, snowflake::core::TextFormat format);
bool uuids_batch(Reply* r, int32_t count);
// /v1/ids/{id}: the id, in the format named by the query, decoded (400 for
// a bad one).
void decode(Reply* r, const char* id_text, snowflake::core::TextFormat format);
// /readyz (and /healthz): the full reason only to a request with a valid
// token; to others what is wrong without the details (coordinator endpoints
// and errors, the lease holder's host, port and system identifier).
void readyz(Reply* r, bool full_reason);
// /livez: the worker answers (whatever the generator's state).
void livez(Reply* r);
// /metrics: the statistics in Prometheus' text format, with the worker's
// request counters.
void metrics(Reply* r, const snowflake::core::http::RequestStats& requests);

}  // namespace snowflake::pg
