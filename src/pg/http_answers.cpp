// The answers of the HTTP endpoint, one function per path, each filling a
// Reply (http_answers.hpp); the order of the checks before them is the
// core's (core/http_request.hpp), the formats are core/http_api.hpp's.
//
// The id path raises errors with ereport: each call into it goes through
// call_catching_error() (ereport_guard.hpp) with only plain data in scope,
// and an error becomes a 503 answer with the SQLSTATE, message and hint of
// the SQL error. A batch that fails midway is answered with the error only;
// the ids taken before it are dropped (a gap, never an id given twice).

#include <cstdint>
#include <cstdlib>

#include <microhttpd.h>

#include "../core/generator.hpp"
#include "../core/http_api.hpp"
#include "../core/http_request.hpp"
#include "../core/layout.hpp"
#include "../core/prometheus.hpp"
#include "../core/stats_snapshot.hpp"
#include "../core/uuid.hpp"
#include "http_answers.hpp"
#include "clock.hpp"
#include "ereport_guard.hpp"
#include "guc.hpp"
#include "health.hpp"
#include "id_path.hpp"
#include "shmem.hpp"
#include "stats.hpp"
#include "uuidv7.hpp"

namespace core = snowflake::core;
namespace http = snowflake::core::http;

namespace snowflake::pg {
namespace {

constexpr size_t kMetricsCapacity = 64 * 1024;  // the worst case is under 48 KiB (http_api_test)
constexpr size_t kSmallCapacity = 2048;
// An error's message, detail and hint (511 bytes each) escaped at worst.
constexpr size_t kErrorCapacity = 10 * 1024;

#ifndef SNOWFLAKE_VERSION
#define SNOWFLAKE_VERSION ""
#endif

// Fills ids[0..count-1] from the HTTP generator (snowflake.http_worker_id)
// if it is in use, else from the node's one generator, SQL's, a
// millisecond's worth (at most 4,096) per call, waiting as wait allows.
// Raises the id path's errors.
void fill_ids(int64_t* ids, int32_t count, const IdWait& wait) {
    const Generator gen = generator_in_use(Generator::Http) ? Generator::Http : Generator::Sql;
    int32_t got = 0;
    while (got < count) {
        const core::Next r = issue_ids(gen, count - got < core::kIdsPerMs ? count - got : core::kIdsPerMs, wait);
        for (int32_t i = 0; i < r.count; i++) ids[got + i] = r.first_id + i;
        got += r.count;
    }
}

// Fills out[0..count-1] with new UUIDv7 values. Raises uuidv7's errors.
void fill_uuids(core::Uuid* out, int32_t count) {
    for (int32_t i = 0; i < count; i++) out[i] = new_uuidv7();
}

// An error of the id path: 503 with the SQL error, retry after a second.
void id_error_reply(Reply* r, const CaughtError& e) {
    error_reply(r, MHD_HTTP_SERVICE_UNAVAILABLE, e.code, e.message, e.hint, e.detail);
    r->retry_after_s = 1;
}

// A batch answer: count values made by fill(values, count) (its errors
// caught: 503; a trivially destructible callable), as JSON by
// format(body, cap, values, count); false (and 500 or 503 in *r) unless the
// answer is made.
template <typename T, typename Fill, typename Format>
bool batch_reply(Reply* r, int32_t count, size_t cap, Fill fill, Format format) {
    auto* values = static_cast<T*>(malloc(sizeof(T) * static_cast<size_t>(count)));
    char* body = static_cast<char*>(malloc(cap));
    if (values == nullptr || body == nullptr) {
        free(values);
        free(body);
        return false;  // 500, out of memory
    }
    CaughtError err;
    if (!call_catching_error([&] { fill(values, count); }, &err)) {
        free(values);
        free(body);
        id_error_reply(r, err);
        return false;
    }
    r->len = format(body, cap, values, count);
    free(values);
    r->body = body;
    r->status = MHD_HTTP_OK;
    return true;
}

}  // namespace

// An error answer: status and a JSON body with the SQLSTATE and texts.
void error_reply(Reply* r, unsigned status, const char* code, const char* message, const char* hint,
                 const char* detail) {
    r->status = status;
    r->content_type = "application/json";
    r->body = static_cast<char*>(malloc(kErrorCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_error_json(r->body, kErrorCapacity, code, message, detail, hint);
    if (r->len == 0) {  // cannot happen with the texts used here: kept whole
        free(r->body);
        r->body = nullptr;
    }
}

// A refusal of the request's checks (core/http_request.hpp).
void refusal_reply(Reply* r, const http::Refusal& f) {
    error_reply(r, f.status, f.code, f.message, f.hint);
    r->www_authenticate = f.www_authenticate;
    r->allow = f.allow;
}

// /v1/ids/batch: count ids as JSON, as strings in the format.
bool ids_batch(Reply* r, int32_t count, core::TextFormat format) {
    // A request waits for ids (the next millisecond, a reservation, the
    // floor) at most kRequestWaitLimitMs, and not past a shutdown request:
    // then a 503 the client may retry, so that one request never holds the
    // worker (and /healthz) for long. Its waits for the next millisecond
    // sleep rather than spin: the worker shares the CPUs with its clients.
    IdWait wait;
    wait.yields = true;
    wait.deadline_us = monotonic_us() + kRequestWaitLimitMs * 1000;
    const auto fill = [wait](int64_t* ids, int32_t n) { fill_ids(ids, n, wait); };
    const auto write = [format](char* buf, size_t cap, const int64_t* ids, int32_t n) {
        return http::format_ids_json(buf, cap, ids, n, format);
    };
    return batch_reply<int64_t>(r, count, http::ids_json_capacity(count), fill, write);
}

// /v1/uuids/batch: count UUIDv7 values as JSON.
bool uuids_batch(Reply* r, int32_t count) {
    return batch_reply<core::Uuid>(r, count, http::uuids_json_capacity(count), &fill_uuids,
                                   &http::format_uuids_json);
}

// /v1/ids/{id}: the id, in the format of the query, decoded.
void decode(Reply* r, const char* id_text, core::TextFormat format) {
    int64_t id = 0;
    http::IdTextError err;
    if (!http::parse_id_text(id_text, format, &id, &err)) {
        error_reply(r, MHD_HTTP_BAD_REQUEST, "22P02", err.message, err.hint, err.detail);
        return;
    }
    if (!core::id_in(node_geometry(), id)) {
        // decode.cpp's check: the top bits lie outside this node's layout.
        error_reply(r, MHD_HTTP_BAD_REQUEST, "22003", "the id does not fit this node's snowflake.layout",
                    "Decode ids of another layout with snowflake_decode_as(id, layout) in SQL.", nullptr);
        return;
    }
    r->body = static_cast<char*>(malloc(kSmallCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_decoded_json(r->body, kSmallCapacity, id, core::floor_div(epoch_unix_us(), 1000),
                                       node_geometry());
    r->status = MHD_HTTP_OK;
}

// /readyz (and /healthz): the full reason only to a request with a valid
// token; to others what is wrong without the details (etcd endpoints and
// errors, the lease holder's host, port and system identifier).
void readyz(Reply* r, bool full_reason) {
    char code[6] = "";
    char reason[512] = "";
    char brief[512] = "";
    const bool ready = generator_ready(code, reason, sizeof(reason));
    if (!full_reason) (void)http::short_reason(brief, sizeof(brief), reason);
    r->body = static_cast<char*>(malloc(kSmallCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_health_json(r->body, kSmallCapacity, ready, code, full_reason ? reason : brief);
    r->status = ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
}

// /livez: the worker answers (whatever the generator's state).
void livez(Reply* r) {
    r->body = static_cast<char*>(malloc(kSmallCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_health_json(r->body, kSmallCapacity, true, nullptr, nullptr);
    r->status = MHD_HTTP_OK;
}

// /metrics: the statistics in Prometheus' text format.
void metrics(Reply* r, const http::RequestStats& requests) {
    StatsSnapshot s;
    CaughtError err;
    if (!call_catching_error([&] { s = take_stats_snapshot(); }, &err)) {
        id_error_reply(r, err);
        return;
    }
    char code[6];
    char reason[256];
    http::Health h;
    h.ready = generator_ready(code, reason, sizeof(reason));
    h.now_ms = now_ms(s.epoch_unix_us);
    h.version = SNOWFLAKE_VERSION;
    h.requests = &requests;
    r->body = static_cast<char*>(malloc(kMetricsCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_metrics(r->body, kMetricsCapacity, s, h);
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    r->status = MHD_HTTP_OK;
}

}  // namespace snowflake::pg
