// The HTTP endpoint: a background worker that hands out ids, UUIDv7 values,
// decoded ids, health and metrics over HTTP/1.1 (snowflake.http_listen;
// paths and answers in docs/reference.md, "HTTP API").
//
// HTTP is libmicrohttpd's, run without any thread of its own: the daemon
// uses epoll, and the worker waits on that epoll descriptor, its latch and
// postmaster death in one WaitEventSet, for at most kTurnMs or the daemon's
// next timeout, then lets libmicrohttpd work (MHD_run) and answers SIGHUP
// and SIGTERM between turns. Every request is answered from this one thread,
// inside MHD_run, so PostgreSQL functions are only ever called from the
// process's main thread.
//
// The decisions (routing, count, id, token) and the output formats are pure
// (core/http_api.hpp). The id path raises errors with ereport: each call
// into it goes through call_catching_error() (ereport_guard.hpp) with only
// plain data in scope, and an error becomes a 503 answer with the SQLSTATE,
// message and hint of the SQL error. A batch that fails midway is answered
// with the error only; the ids taken before it are dropped (a gap, never an
// id given twice). An error can never unwind through libmicrohttpd's frames.
//
// Limits: at most http::kMaxConnections connections; http::kSpareConnections
// more are accepted only to be answered 503 with Retry-After and closed
// (beyond those, connections wait in the listen queue). A connection idle
// for http::kIdleTimeoutS seconds is closed (keep-alive answers say so), a
// request's headers must fit in kConnectionMemory bytes (larger: 431 from
// libmicrohttpd), and a client has http::kClientTurnLimitMs to send each
// request and as long to read each answer (core::http::ClientClocks; the
// worker shuts down the socket of a client past it, and libmicrohttpd then
// closes the connection). The worker itself never blocks on a client.
// HTTP ids are also held to snowflake.http_max_ids_per_second (a token
// bucket, core::http::IdRateLimit; 429 beyond it).
//
// Access: the Bearer tokens (snowflake.http_token, snowflake.http_token_file)
// are read at start and at every reload into one core::http::Tokens. Without
// a token, a non-loopback address stops the server at start (unless
// snowflake.http_allow_unauthenticated), and requests whose Host is not the
// listen address or localhost are refused (DNS rebinding). The health
// probes need no token; /readyz gives its full reason only to a request
// that carries a valid one.

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/http_api.hpp"
#include "../core/http_limits.hpp"
#include "../core/layout.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/prometheus.hpp"
#include "../core/stats_snapshot.hpp"
#include "../core/uuid.hpp"
#include "http_worker.hpp"
#include "bgworker.hpp"
#include "clock.hpp"
#include "ereport_guard.hpp"
#include "guc.hpp"
#include "health.hpp"
#include "id_path.hpp"
#include "stats.hpp"
#include "uuidv7.hpp"

extern "C" {
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"

PGDLLEXPORT void snowflake_http_worker_main(Datum arg);
}

namespace core = snowflake::core;
namespace http = snowflake::core::http;

namespace snowflake::pg {
namespace {

constexpr long kTurnMs = 100;  // longest wait between turns of the loop
constexpr size_t kConnectionMemory = 16 * 1024;
constexpr size_t kMetricsCapacity = 64 * 1024;  // the worst case is under 48 KiB (http_api_test)
constexpr size_t kSmallCapacity = 2048;
// An error's message, detail and hint (511 bytes each) escaped at worst.
constexpr size_t kErrorCapacity = 10 * 1024;
constexpr int kRestartS = 5;  // bgw_restart_time

MemoryContext request_cxt = nullptr;
int marker;  // *con_cls of a GET request whose headers were seen

// Each connection's client time (the slot is the connection's socket
// context, plus one), and the connection in each slot.
http::ClientClocks clocks;
MHD_Connection* slot_connection[http::kSlots];

// Who may ask (read at start and at every reload), and the ceiling on ids.
http::Tokens tokens;
http::ListenAddress listen_address;
http::AddressKind listen_kind = http::AddressKind::Loopback;
http::IdRateLimit id_rate;

// Requests answered since this worker started (/metrics).
http::RequestStats request_stats;

#ifndef SNOWFLAKE_VERSION
#define SNOWFLAKE_VERSION ""
#endif

// The monotonic clock in milliseconds (client time limits).
int64_t mono_ms() { return monotonic_us() / 1000; }

// The connection's slot in `clocks` (-1: none).
int slot_of(MHD_Connection* c) {
    const MHD_ConnectionInfo* i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i == nullptr ? -1 : static_cast<int>(reinterpret_cast<intptr_t>(i->socket_context)) - 1;
}

// A connection opened or closed: its slot in `clocks` is taken or freed.
void on_connection(void*, MHD_Connection* c, void** socket_context, MHD_ConnectionNotificationCode toe) {
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const int slot = clocks.open(mono_ms());
        if (slot >= 0)
            slot_connection[slot] = c;
        else  // cannot happen: libmicrohttpd keeps to the same limit
            elog(LOG, "snowflake HTTP endpoint: a connection beyond %d has no time limit", http::kSlots);
        *socket_context = reinterpret_cast<void*>(static_cast<intptr_t>(slot + 1));
    } else {
        const int slot = static_cast<int>(reinterpret_cast<intptr_t>(*socket_context)) - 1;
        if (slot >= 0) {
            clocks.close(slot);
            slot_connection[slot] = nullptr;
        }
        *socket_context = nullptr;
    }
}

// A request ended (answer sent, or the connection closed): the client's
// time for the next one starts.
void on_completed(void*, MHD_Connection* c, void**, MHD_RequestTerminationCode) {
    clocks.client_turn(slot_of(c), mono_ms());
}

// Shuts down the sockets of clients past their time; libmicrohttpd sees the
// end of the stream and closes each connection (and calls on_connection).
// now_ms: before the turn's MHD_run, which read whatever clients had sent
// by then (a client whose request waited while the worker answered others
// is not cut off for the worker's delay).
void close_overdue_clients(int64_t now_ms) {
    int slots[http::kSlots];
    const int n = clocks.overdue(now_ms, slots, http::kSlots);
    for (int i = 0; i < n; i++) {
        MHD_Connection* c = slot_connection[slots[i]];
        const MHD_ConnectionInfo* info =
            c == nullptr ? nullptr : MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (info != nullptr) (void)shutdown(info->connect_fd, SHUT_RDWR);
    }
    if (n > 0)
        ereport(DEBUG1, (errmsg_internal("snowflake HTTP endpoint: closed %d connection(s) past their time", n)));
}

// Fills ids[0..count-1] from the node's generator, a millisecond's worth
// (at most 4,096) per call. Raises the id path's errors.
void fill_ids(int64_t* ids, int32_t count) {
    int32_t got = 0;
    while (got < count) {
        const core::Next r = issue_ids(count - got < core::kIdsPerMs ? count - got : core::kIdsPerMs);
        for (int32_t i = 0; i < r.count; i++) ids[got + i] = r.first_id + i;
        got += r.count;
    }
}

// Fills out[0..count-1] with new UUIDv7 values. Raises uuidv7's errors.
void fill_uuids(core::Uuid* out, int32_t count) {
    for (int32_t i = 0; i < count; i++) out[i] = new_uuidv7();
}

// An answer: status, a malloc'd body (nullptr: a fixed one) and what goes in
// the headers.
struct Reply {
    unsigned status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    char* body = nullptr;
    size_t len = 0;
    const char* content_type = "application/json";
    const char* allow = nullptr;  // 405
    bool www_authenticate = false;  // 401
    int64_t retry_after_s = 0;      // > 0: "Retry-After" (503 of the id path: 1)
    bool close = false;             // "Connection: close"
};

const char kOutOfMemory[] =
    "{\"code\":\"53200\",\"message\":\"out of memory\",\"hint\":\"Ask for fewer ids per request.\"}";

// An error answer: status and a JSON body with the SQLSTATE and texts.
void error_reply(Reply* r, unsigned status, const char* code, const char* message, const char* hint,
                 const char* detail = nullptr) {
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

// An error of the id path: 503 with the SQL error, retry after a second.
void id_error_reply(Reply* r, const CaughtError& e) {
    error_reply(r, MHD_HTTP_SERVICE_UNAVAILABLE, e.code, e.message, e.hint, e.detail);
    r->retry_after_s = 1;
}

// A batch answer: count values made by fill (its errors caught: 503), as
// JSON by format; false (and 500 or 503 in *r) unless the answer is made.
template <typename T>
bool batch_reply(Reply* r, int32_t count, size_t cap, void (*fill)(T*, int32_t),
                 size_t (*format)(char*, size_t, const T*, int32_t)) {
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

// /v1/ids/batch: count ids as JSON.
void ids_batch(Reply* r, int32_t count) {
    // A request waits for ids (the next millisecond, a reservation, the
    // floor) at most kRequestWaitLimitMs, and not past a shutdown request:
    // then a 503 the client may retry, so that one request never holds the
    // worker (and /healthz) for long.
    id_wait_deadline_us = monotonic_us() + kRequestWaitLimitMs * 1000;
    const bool answered = batch_reply<int64_t>(r, count, http::ids_json_capacity(count), fill_ids,
                                               http::format_ids_json);
    id_wait_deadline_us = 0;
    if (answered) request_stats.add_ids(count);
}

// /v1/uuids/batch: count UUIDv7 values as JSON.
void uuids_batch(Reply* r, int32_t count) {
    if (batch_reply<core::Uuid>(r, count, http::uuids_json_capacity(count), fill_uuids,
                                http::format_uuids_json))
        request_stats.add_uuids(count);
}

// /v1/ids/{id}: the id decoded.
void decode(Reply* r, const char* id_text) {
    int64_t id = 0;
    if (!http::parse_id(id_text, &id)) {
        error_reply(r, MHD_HTTP_BAD_REQUEST, "22P02", "invalid snowflake id",
                    "Give the id in the path as decimal digits, 0 to 9223372036854775807.");
        return;
    }
    r->body = static_cast<char*>(malloc(kSmallCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_decoded_json(r->body, kSmallCapacity, id,
                                       core::floor_div(epoch_unix_us(), 1000));
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
void metrics(Reply* r) {
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
    h.requests = &request_stats;
    r->body = static_cast<char*>(malloc(kMetricsCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_metrics(r->body, kMetricsCapacity, s, h);
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    r->status = MHD_HTTP_OK;
}

// The query's parameters: the first kMaxNames names (enough: an endpoint
// takes at most one), and the first "count" value.
constexpr int kMaxNames = 32;
struct QueryArgs {
    int n = 0;
    const char* names[kMaxNames];
    int counts = 0;
    const char* count = nullptr;
};

// libmicrohttpd's callback for each query parameter: into QueryArgs.
MHD_Result collect_arg(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* a = static_cast<QueryArgs*>(cls);
    if (a->n < kMaxNames) a->names[a->n++] = key;
    if (key != nullptr && strcmp(key, "count") == 0 && a->counts++ == 0) a->count = value;
    return MHD_YES;
}

// What to answer to a request whose headers are complete.
void answer_request(MHD_Connection* c, const http::Route& route, Reply* r) {
    const char* auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (route.endpoint != http::Endpoint::Livez &&
        !http::exposure_allowed(listen_kind, tokens.configured, http_allow_unauthenticated)) {
        // The token was removed at a reload: the server would not start so.
        // (/livez still answers: a liveness probe must not restart the server.)
        error_reply(r, MHD_HTTP_FORBIDDEN, "28000", "no token is set for a non-loopback address",
                    "Set snowflake.http_token or snowflake.http_token_file, or "
                    "snowflake.http_allow_unauthenticated = on, and reload.");
        return;
    }
    if (!tokens.configured) {
        const char* host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
        if (!http::host_allowed(host, listen_address, listen_kind)) {
            char message[200];
            snprintf(message, sizeof(message), "host \"%.100s\" is not the address of this endpoint", host);
            error_reply(r, MHD_HTTP_FORBIDDEN, "28000", message,
                        "Without snowflake.http_token, requests must name the listen address or "
                        "localhost in Host (a defence against DNS rebinding); set a token to serve "
                        "other names.");
            return;
        }
    }
    const bool authorized = http::authorized(tokens, auth);
    if (http::needs_token(route.endpoint) && !authorized) {
        error_reply(r, MHD_HTTP_UNAUTHORIZED, "28000", "missing or wrong bearer token",
                    "Send the header \"Authorization: Bearer\" with a token of snowflake.http_token "
                    "or snowflake.http_token_file.");
        r->www_authenticate = true;
        return;
    }
    if (route.endpoint == http::Endpoint::NotFound) {
        error_reply(r, MHD_HTTP_NOT_FOUND, "42704", "no such path",
                    "Paths: /v1/ids/batch?count=N, /v1/ids/{id}, /v1/uuids/batch?count=N, /livez, "
                    "/readyz (or /healthz), /metrics.");
        return;
    }
    if (!route.method_allowed) {
        error_reply(r, MHD_HTTP_METHOD_NOT_ALLOWED, "0A000", "method not allowed",
                    "Use GET (or HEAD where it changes nothing).");
        r->allow = http::allowed_methods(route.endpoint);
        return;
    }
    QueryArgs args;
    (void)MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
    const http::QueryVerdict q = http::check_query(route.endpoint, args.names, args.n);
    if (q.kind != http::QueryVerdict::Kind::Ok) {
        char message[200];
        if (q.kind == http::QueryVerdict::Kind::Repeated)
            snprintf(message, sizeof(message), "query parameter \"%.64s\" is given more than once", q.name);
        else
            snprintf(message, sizeof(message), "unknown query parameter \"%.64s\"", q.name);
        error_reply(r, MHD_HTTP_BAD_REQUEST, "22023", message,
                    route.endpoint == http::Endpoint::IdsBatch || route.endpoint == http::Endpoint::UuidsBatch
                        ? "This path takes one parameter, count, at most once."
                        : "This path takes no query parameters.");
        return;
    }
    int32_t count = 1;
    switch (route.endpoint) {
        case http::Endpoint::IdsBatch:
        case http::Endpoint::UuidsBatch:
            if (!http::parse_count(args.counts, args.count, &count)) {
                error_reply(r, MHD_HTTP_BAD_REQUEST, "22023", http::kCountMessage.text,
                            "Give count once, as decimal digits; without it, one value is returned.");
                return;
            }
            if (route.endpoint == http::Endpoint::IdsBatch) {
                const http::IdRateLimit::Verdict v = id_rate.take(count, monotonic_us());
                if (!v.allowed) {
                    char hint[200];
                    snprintf(hint, sizeof(hint),
                             "Retry after %lld s; snowflake.http_max_ids_per_second is %d.",
                             static_cast<long long>(v.retry_after_s), http_max_ids_per_second);
                    error_reply(r, MHD_HTTP_TOO_MANY_REQUESTS, "53400",
                                "too many ids requested over HTTP", hint);
                    r->retry_after_s = v.retry_after_s;
                    return;
                }
                ids_batch(r, count);
            } else {
                uuids_batch(r, count);
            }
            return;
        case http::Endpoint::IdDecode:
            decode(r, route.id_text);
            return;
        case http::Endpoint::Livez:
            livez(r);
            return;
        case http::Endpoint::Readyz:
            readyz(r, tokens.configured && authorized);
            return;
        case http::Endpoint::Metrics:
            metrics(r);
            return;
        case http::Endpoint::NotFound:
            return;
    }
}

// Queues the answer with its headers; frees the body.
MHD_Result send_reply(MHD_Connection* c, const char* version, Reply* r) {
    MHD_Response* resp;
    if (r->body != nullptr && r->len > 0) {
        resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
        if (resp == nullptr) free(r->body);
    } else {
        free(r->body);
        r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        r->content_type = "application/json";
        resp = MHD_create_response_from_buffer(sizeof(kOutOfMemory) - 1, const_cast<char*>(kOutOfMemory),
                                               MHD_RESPMEM_PERSISTENT);
    }
    if (resp == nullptr) return MHD_NO;  // closes the connection
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (r->allow != nullptr) (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->www_authenticate)
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"snowflake\"");
    if (r->retry_after_s > 0) {
        char v[24];
        snprintf(v, sizeof(v), "%lld", static_cast<long long>(r->retry_after_s));
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
    }
    const char* connection = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONNECTION);
    if (r->close) {
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    } else if (http::keeps_alive(version, connection, false)) {
        char v[32];
        snprintf(v, sizeof(v), "timeout=%u", http::kIdleTimeoutS);
        (void)MHD_add_response_header(resp, "Keep-Alive", v);
    }
    const MHD_Result ret = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

// Answers at once and closes the connection (the request's body, if any,
// is not read).
MHD_Result answer_and_close(MHD_Connection* c, const char* version, Reply* r) {
    r->close = true;
    return send_reply(c, version, r);
}

// libmicrohttpd's access handler. A GET or HEAD is answered once the
// request is complete (its second call), which keeps the connection
// alive; any other method at once, which closes it after the answer, as do
// a GET or HEAD with a body (400) and a connection beyond the limit (503).
MHD_Result handle_request(void*, MHD_Connection* c, const char* url, const char* method, const char* version,
                          const char*, size_t* upload_size, void** con_cls) {
    const http::Route route = http::route(method, url);
    const bool get_or_head = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    const int slot = slot_of(c);
    if (*con_cls == nullptr && !clocks.admitted(slot)) {
        *con_cls = &marker;
        Reply r;
        error_reply(&r, MHD_HTTP_SERVICE_UNAVAILABLE, "53300", "too many connections",
                    "The endpoint serves 64 connections at once; retry, or keep fewer connections open.");
        r.retry_after_s = 1;
        return answer_and_close(c, version, &r);
    }
    if (get_or_head && *con_cls == nullptr) {
        *con_cls = &marker;
        const char* length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const char* te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
        if (!http::has_body(length, te)) return MHD_YES;
        Reply r;
        error_reply(&r, MHD_HTTP_BAD_REQUEST, "08P01", "a GET or HEAD request must not have a body",
                    "Send the parameters in the query string, with no body.");
        return answer_and_close(c, version, &r);
    }
    if (get_or_head && *upload_size != 0) {
        *upload_size = 0;  // cannot happen: refused above
        return MHD_YES;
    }
    Reply r;
    const int64_t started_us = monotonic_us();
    clocks.server_turn(slot);
    const MemoryContext old = MemoryContextSwitchTo(request_cxt);
    answer_request(c, route, &r);
    MemoryContextSwitchTo(old);
    MemoryContextReset(request_cxt);
    if (!get_or_head) r.close = true;  // libmicrohttpd closes it: say so
    const MHD_Result ret = send_reply(c, version, &r);
    request_stats.record(route.endpoint, static_cast<int>(r.status), monotonic_us() - started_us);
    clocks.client_turn(slot, mono_ms());  // to read the answer
    return ret;
}

// Percent-decoding of the path and the query, by libmicrohttpd's own
// decoder; a decoded NUL byte ("%00") would cut the C string it hands over
// ("/v1/ids/batch%00junk" read as "/v1/ids/batch"), so such a value becomes
// empty instead: an unknown path (404) or an invalid count (400).
size_t unescape(void*, MHD_Connection*, char* s) {
    const size_t n = MHD_http_unescape(s);
    if (strlen(s) != n) {
        s[0] = '\0';
        return 0;
    }
    return n;
}

// libmicrohttpd's messages concern single clients (malformed requests,
// closed connections): DEBUG1, so that a hostile client cannot flood the log.
__attribute__((format(printf, 2, 0))) void log_mhd(void*, const char* fmt, va_list ap) {
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    const size_t n = strlen(buf);
    if (n > 0 && buf[n - 1] == '\n') buf[n - 1] = '\0';
    ereport(DEBUG1, (errmsg_internal("snowflake HTTP endpoint: %s", buf)));
}

// The tokens of snowflake.http_token and snowflake.http_token_file, into
// *out (configured when either is set). Plain POSIX calls, no error raised:
// nullptr, or why the file was not used (then none of its tokens is in
// *out, which stays configured: nothing is accepted rather than anything).
const char* load_tokens(http::Tokens* out, char* why, size_t cap) {
    *out = http::Tokens{};
    const bool has_file = http_token_file != nullptr && http_token_file[0] != '\0';
    out->configured = has_file || (http_token != nullptr && http_token[0] != '\0');
    // The setting's check hook accepted it.
    if (http::add_tokens(out, http_token) != nullptr) return "snowflake.http_token is invalid.";
    if (!has_file) return nullptr;
    // O_NONBLOCK: a FIFO must not hold up the start (it is refused below).
    const int fd = open(http_token_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, cap, "could not open it: %s.", strerror(errno));
        return why;
    }
    struct stat st;
    char text[4097];
    ssize_t n = 0;
    const char* problem = nullptr;
    if (fstat(fd, &st) != 0) {
        snprintf(why, cap, "could not stat it: %s.", strerror(errno));
        problem = why;
    } else if (!S_ISREG(st.st_mode)) {
        problem = "It is not a regular file.";
    } else if (st.st_uid != geteuid() && st.st_uid != 0) {
        problem = "It is owned by neither the server's user nor root.";
    } else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        problem = "It is readable or writable by group or others; allow its owner only (chmod 600).";
    } else if ((n = read(fd, text, sizeof(text) - 1)) < 0) {
        snprintf(why, cap, "could not read it: %s.", strerror(errno));
        problem = why;
    } else if (n == static_cast<ssize_t>(sizeof(text) - 1)) {
        problem = "It is longer than 4 kB.";
    }
    close(fd);
    if (problem != nullptr) return problem;
    text[n] = '\0';
    http::Tokens from_file = *out;
    if (const char* bad = http::add_tokens(&from_file, text)) {
        snprintf(why, cap, "%s", bad);
        return why;
    }
    *out = from_file;
    memset(text, 0, sizeof(text));
    return nullptr;
}

// At start and at every reload, in the worker: the tokens and the ceiling.
void load_settings() {
    char why[256];
    if (const char* problem = load_tokens(&tokens, why, sizeof(why)))
        ereport(LOG, (errmsg("snowflake HTTP endpoint: could not use snowflake.http_token_file \"%s\"; no "
                             "token is accepted until it is fixed",
                             http_token_file),
                      errdetail("%s", problem)));
    id_rate.set_rate(http_max_ids_per_second, monotonic_us());
}

// The daemon on the configured address, or nullptr (and a LOG line).
MHD_Daemon* start_daemon() {
    http::ListenAddress a;
    sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    const char* why = http::parse_listen(http_listen, &a);
    if (why == nullptr) {
        if (a.ipv6) {
            auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
            s6->sin6_family = AF_INET6;
            s6->sin6_port = htons(static_cast<uint16_t>(a.port));
            if (inet_pton(AF_INET6, a.host, &s6->sin6_addr) != 1) why = "bad address";
        } else {
            auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
            s4->sin_family = AF_INET;
            s4->sin_port = htons(static_cast<uint16_t>(a.port));
            if (inet_pton(AF_INET, a.host, &s4->sin_addr) != 1) why = "bad address";
        }
    }
    if (why != nullptr) {  // the check hook accepted it: cannot happen
        elog(LOG, "snowflake HTTP endpoint: invalid snowflake.http_listen \"%s\"", http_listen);
        return nullptr;
    }
    listen_address = a;
    listen_kind = a.ipv6 ? http::classify_address(true, reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr.s6_addr)
                         : http::classify_address(
                               false, reinterpret_cast<unsigned char*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr));
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (a.ipv6) flags |= MHD_USE_IPv6;
    errno = 0;
    MHD_Daemon* d = MHD_start_daemon(
        flags, static_cast<uint16_t>(a.port), nullptr, nullptr, &handle_request, nullptr,
        MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&ss),
        MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(http::kSlots),
        MHD_OPTION_CONNECTION_TIMEOUT, http::kIdleTimeoutS,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemory,
        MHD_OPTION_EXTERNAL_LOGGER, &log_mhd, nullptr,
        MHD_OPTION_UNESCAPE_CALLBACK, &unescape, nullptr,
        MHD_OPTION_NOTIFY_CONNECTION, &on_connection, nullptr,
        MHD_OPTION_NOTIFY_COMPLETED, &on_completed, nullptr,
        MHD_OPTION_END);
    if (d == nullptr) {
        ereport(LOG, (errcode_for_socket_access(),
                      errmsg("snowflake HTTP endpoint could not listen on %s: %m", http_listen),
                      errhint("Check that no other process uses the address; the server tries again "
                              "in %d seconds.",
                              kRestartS)));
    }
    return d;
}

}  // namespace

// Checks the endpoint's settings and registers its worker (http_worker.hpp).
void register_http_worker() {
    // Safe defaults, checked in the postmaster at start: a token file that
    // cannot be used, or a non-loopback address without a token (unless
    // allowed), stop the server.
    http::ListenAddress a;
    unsigned char addr[16] = {0};
    if (http::parse_listen(http_listen, &a) == nullptr && inet_pton(a.ipv6 ? AF_INET6 : AF_INET, a.host, addr) == 1) {
        http::Tokens t;
        char why[256];
        if (const char* problem = load_tokens(&t, why, sizeof(why)))
            ereport(FATAL, (errcode(ERRCODE_CONFIG_FILE_ERROR),
                            errmsg("could not use snowflake.http_token_file \"%s\"", http_token_file),
                            errdetail("%s", problem),
                            errhint("Write one token per line (at most two) into a file that only the "
                                    "server's user can read.")));
        if (!http::exposure_allowed(http::classify_address(a.ipv6, addr), t.configured,
                                    http_allow_unauthenticated))
            ereport(FATAL,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("snowflake.http_listen \"%s\" is not a loopback address, and no "
                            "snowflake.http_token is set",
                            http_listen),
                     errdetail("Anyone who can reach the address would get ids without a token."),
                     errhint("Set snowflake.http_token or snowflake.http_token_file, listen on "
                             "127.0.0.1, or set snowflake.http_allow_unauthenticated = on to serve "
                             "without a token.")));
    }
    // Started with the postmaster, so that /healthz answers during recovery
    // and on a standby.
    register_background_worker("snowflake_http_worker_main", "snowflake HTTP endpoint",
                               BgWorkerStart_PostmasterStart, kRestartS);
}

}  // namespace snowflake::pg

// The HTTP worker's main function: libmicrohttpd's turns between waits.
extern "C" void snowflake_http_worker_main(Datum) {
    namespace sp = snowflake::pg;
    sp::start_background_worker(nullptr);

    sp::id_wait_yields = true;
    sp::request_cxt = AllocSetContextCreate(TopMemoryContext, "snowflake HTTP request",
                                            ALLOCSET_DEFAULT_SIZES);
    sp::load_settings();
    MHD_Daemon* d = sp::start_daemon();
    if (d == nullptr) proc_exit(1);  // started again after bgw_restart_time
    const MHD_DaemonInfo* info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == nullptr) {
        MHD_stop_daemon(d);
        elog(LOG, "snowflake HTTP endpoint: libmicrohttpd gave no epoll descriptor");
        proc_exit(1);
    }
    WaitEventSet* set = sf_create_wait_event_set(3);
    AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, nullptr);
    AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, nullptr, nullptr);
    AddWaitEventToSet(set, WL_SOCKET_READABLE, info->epoll_fd, nullptr, nullptr);
    ereport(LOG, (errmsg("snowflake HTTP endpoint listening on %s", sp::http_listen)));

    while (!ShutdownRequestPending) {
        long timeout = sp::kTurnMs;
        MHD_UNSIGNED_LONG_LONG mhd_timeout = 0;
        if (MHD_get_timeout(d, &mhd_timeout) == MHD_YES && mhd_timeout < static_cast<MHD_UNSIGNED_LONG_LONG>(timeout))
            timeout = static_cast<long>(mhd_timeout);
        WaitEvent events[3];
        (void)WaitEventSetWait(set, timeout, events, 3, PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
        if (ShutdownRequestPending) break;
        if (sp::reload_if_requested()) sp::load_settings();
        const int64_t turn_ms = sp::mono_ms();
        (void)MHD_run(d);
        sp::close_overdue_clients(turn_ms);
    }
    // Closes the listening socket and every connection, kept-alive ones too.
    MHD_stop_daemon(d);
    // Quietly at a server shutdown, else "restart me".
    sp::exit_background_worker();
}
