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
// into it runs inside PG_TRY with only plain data in scope, in a helper that
// owns no C++ object, and an error becomes a 503 answer with the SQLSTATE,
// message and hint of the SQL error. A batch that fails midway is answered
// with the error only; the ids taken before it are dropped (a gap, never an
// id given twice). An error can never unwind through libmicrohttpd's frames.
//
// Limits: at most http::kMaxConnections connections (more are closed at
// once), a connection idle for kIdleTimeoutS seconds is closed, a request's
// headers must fit in kConnectionMemory bytes (larger: 431 from
// libmicrohttpd), and a client has http::kClientTurnLimitMs to send each
// request and as long to read each answer (core::http::ClientClocks; the
// worker shuts down the socket of a client past it, and libmicrohttpd then
// closes the connection). The worker itself never blocks on a client.

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "../core/http_api.hpp"
#include "snowflake.hpp"

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
constexpr unsigned kIdleTimeoutS = 10;
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
MHD_Connection* slot_connection[http::kMaxConnections];

// Requests answered since this worker started (/metrics).
http::RequestStats request_stats;

#ifndef SNOWFLAKE_VERSION
#define SNOWFLAKE_VERSION ""
#endif

int64_t mono_ms() { return monotonic_us() / 1000; }

int slot_of(MHD_Connection* c) {
    const MHD_ConnectionInfo* i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i == nullptr ? -1 : static_cast<int>(reinterpret_cast<intptr_t>(i->socket_context)) - 1;
}

void on_connection(void*, MHD_Connection* c, void** socket_context, MHD_ConnectionNotificationCode toe) {
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const int slot = clocks.open(mono_ms());
        if (slot >= 0)
            slot_connection[slot] = c;
        else  // cannot happen: libmicrohttpd keeps to the same limit
            elog(LOG, "snowflake HTTP endpoint: a connection beyond %d has no time limit", http::kMaxConnections);
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
    int slots[http::kMaxConnections];
    const int n = clocks.overdue(now_ms, slots, http::kMaxConnections);
    for (int i = 0; i < n; i++) {
        MHD_Connection* c = slot_connection[slots[i]];
        const MHD_ConnectionInfo* info =
            c == nullptr ? nullptr : MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (info != nullptr) (void)shutdown(info->connect_fd, SHUT_RDWR);
    }
    if (n > 0)
        ereport(DEBUG1, (errmsg_internal("snowflake HTTP endpoint: closed %d connection(s) past their time", n)));
}

// An error of the id path, copied out of PostgreSQL's error state.
struct ErrorReply {
    char code[6];
    char message[512];
    char detail[512];
    char hint[512];
};

// Copies the current error into *out and clears the error state. Called in
// PG_CATCH, in the memory context the try began in.
void capture_error(MemoryContext cxt, ErrorReply* out) {
    MemoryContextSwitchTo(cxt);
    // Nothing on the id path holds these across an error; released in case.
    ConditionVariableCancelSleep();
    LWLockReleaseAll();
    ErrorData* e = CopyErrorData();
    FlushErrorState();
    snprintf(out->code, sizeof(out->code), "%s", unpack_sql_state(e->sqlerrcode));
    snprintf(out->message, sizeof(out->message), "%s", e->message != nullptr ? e->message : "");
    snprintf(out->detail, sizeof(out->detail), "%s", e->detail != nullptr ? e->detail : "");
    snprintf(out->hint, sizeof(out->hint), "%s", e->hint != nullptr ? e->hint : "");
    FreeErrorData(e);
}

// Fills ids[0..count-1] from the node's generator, a millisecond's worth
// (at most 4,096) per call. Raises the id path's errors.
void fill_ids(int64_t* ids, int32_t count) {
    int32_t got = 0;
    while (got < count) {
        const core::Next r = issue(count - got < core::kIdsPerMs ? count - got : core::kIdsPerMs);
        for (int32_t i = 0; i < r.count; i++) ids[got + i] = r.first_id + i;
        got += r.count;
    }
}

void fill_uuids(core::Uuid* out, int32_t count) {
    for (int32_t i = 0; i < count; i++) out[i] = new_uuidv7();
}

// Runs fn(arg) inside PG_TRY: true, or false with the error in *err.
bool try_call(void (*fn)(void*), void* arg, ErrorReply* err) {
    volatile bool ok = true;
    const MemoryContext cxt = CurrentMemoryContext;
    PG_TRY();
    {
        fn(arg);
    }
    PG_CATCH();
    {
        capture_error(cxt, err);
        ok = false;
    }
    PG_END_TRY();
    return ok;
}

struct IdsCall {
    int64_t* ids;
    int32_t count;
};
struct UuidsCall {
    core::Uuid* uuids;
    int32_t count;
};
void call_fill_ids(void* arg) {
    auto* a = static_cast<IdsCall*>(arg);
    fill_ids(a->ids, a->count);
}
void call_fill_uuids(void* arg) {
    auto* a = static_cast<UuidsCall*>(arg);
    fill_uuids(a->uuids, a->count);
}
void call_snapshot(void* arg) { *static_cast<StatsSnapshot*>(arg) = take_stats_snapshot(); }

// An answer: status, a malloc'd body (nullptr: a fixed one) and what goes in
// the headers.
struct Reply {
    unsigned status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    char* body = nullptr;
    size_t len = 0;
    const char* content_type = "application/json";
    const char* allow = nullptr;  // 405
    bool www_authenticate = false;  // 401
    bool retry_after = false;       // 503 of the id path: "Retry-After: 1"
};

const char kOutOfMemory[] =
    "{\"code\":\"53200\",\"message\":\"out of memory\",\"hint\":\"Ask for fewer ids per request.\"}";

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

void id_error_reply(Reply* r, const ErrorReply& e) {
    error_reply(r, MHD_HTTP_SERVICE_UNAVAILABLE, e.code, e.message, e.hint, e.detail);
    r->retry_after = true;
}

void ids_batch(Reply* r, int32_t count) {
    const size_t cap = http::ids_json_capacity(count);
    auto* ids = static_cast<int64_t*>(malloc(sizeof(int64_t) * static_cast<size_t>(count)));
    char* body = static_cast<char*>(malloc(cap));
    if (ids == nullptr || body == nullptr) {
        free(ids);
        free(body);
        return;  // 500, out of memory
    }
    ErrorReply err;
    IdsCall call{ids, count};
    // A request waits for ids (the next millisecond, a reservation, the
    // floor) at most kRequestWaitLimitMs, and not past a shutdown request:
    // then a 503 the client may retry, so that one request never holds the
    // worker (and /healthz) for long.
    id_wait_deadline_us = monotonic_us() + kRequestWaitLimitMs * 1000;
    const bool filled = try_call(call_fill_ids, &call, &err);
    id_wait_deadline_us = 0;
    if (!filled) {
        free(ids);
        free(body);
        id_error_reply(r, err);
        return;
    }
    request_stats.add_ids(count);
    r->len = http::format_ids_json(body, cap, ids, count);
    free(ids);
    r->body = body;
    r->status = MHD_HTTP_OK;
}

void uuids_batch(Reply* r, int32_t count) {
    const size_t cap = http::uuids_json_capacity(count);
    auto* uuids = static_cast<core::Uuid*>(malloc(sizeof(core::Uuid) * static_cast<size_t>(count)));
    char* body = static_cast<char*>(malloc(cap));
    if (uuids == nullptr || body == nullptr) {
        free(uuids);
        free(body);
        return;
    }
    ErrorReply err;
    UuidsCall call{uuids, count};
    if (!try_call(call_fill_uuids, &call, &err)) {
        free(uuids);
        free(body);
        id_error_reply(r, err);
        return;
    }
    request_stats.add_uuids(count);
    r->len = http::format_uuids_json(body, cap, uuids, count);
    free(uuids);
    r->body = body;
    r->status = MHD_HTTP_OK;
}

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

void healthz(Reply* r) {
    char code[6] = "";
    char reason[512] = "";
    const bool ready = generator_ready(code, reason, sizeof(reason));
    r->body = static_cast<char*>(malloc(kSmallCapacity));
    if (r->body == nullptr) return;
    r->len = http::format_health_json(r->body, kSmallCapacity, ready, code, reason);
    r->status = ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
}

void metrics(Reply* r) {
    StatsSnapshot s;
    ErrorReply err;
    if (!try_call(call_snapshot, &s, &err)) {
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

// The "count" arguments of the query: how many, and the first one's value.
struct CountArg {
    int occurrences = 0;
    const char* value = nullptr;
};

MHD_Result count_arg(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* a = static_cast<CountArg*>(cls);
    if (key != nullptr && strcmp(key, "count") == 0) {
        if (a->occurrences++ == 0) a->value = value;
    }
    return MHD_YES;
}

bool parse_count_arg(MHD_Connection* c, int32_t* count) {
    CountArg a;
    (void)MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_arg, &a);
    return http::parse_count(a.occurrences, a.value, count);
}

// What to answer to a request whose headers are complete.
void decide(MHD_Connection* c, const http::Route& route, Reply* r) {
    const char* auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (http::needs_token(route.endpoint) && !http::bearer_ok(auth, http_token)) {
        error_reply(r, MHD_HTTP_UNAUTHORIZED, "28000", "missing or wrong bearer token",
                    "Send the header \"Authorization: Bearer\" with the token of snowflake.http_token.");
        r->www_authenticate = true;
        return;
    }
    if (route.endpoint == http::Endpoint::NotFound) {
        error_reply(r, MHD_HTTP_NOT_FOUND, "42704", "no such path",
                    "Paths: /v1/ids/batch?count=N, /v1/ids/{id}, /v1/uuids/batch?count=N, /healthz, "
                    "/metrics.");
        return;
    }
    if (!route.method_allowed) {
        error_reply(r, MHD_HTTP_METHOD_NOT_ALLOWED, "0A000", "method not allowed",
                    "Use GET (or HEAD where it changes nothing).");
        r->allow = http::allowed_methods(route.endpoint);
        return;
    }
    int32_t count = 1;
    switch (route.endpoint) {
        case http::Endpoint::IdsBatch:
        case http::Endpoint::UuidsBatch:
            if (!parse_count_arg(c, &count)) {
                error_reply(r, MHD_HTTP_BAD_REQUEST, "22023", "count must be a number from 1 to 10000",
                            "Give count once, as decimal digits; without it, one value is returned.");
                return;
            }
            if (route.endpoint == http::Endpoint::IdsBatch)
                ids_batch(r, count);
            else
                uuids_batch(r, count);
            return;
        case http::Endpoint::IdDecode:
            decode(r, route.id_text);
            return;
        case http::Endpoint::Healthz:
            healthz(r);
            return;
        case http::Endpoint::Metrics:
            metrics(r);
            return;
        case http::Endpoint::NotFound:
            return;
    }
}

MHD_Result send_reply(MHD_Connection* c, Reply* r) {
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
    if (r->retry_after) (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    const MHD_Result ret = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

// libmicrohttpd's access handler. A GET or HEAD is answered once the
// request is complete (its second call), which keeps the connection
// alive; any other method at once, which closes it after the answer.
MHD_Result handle_request(void*, MHD_Connection* c, const char* url, const char* method, const char*,
                          const char*, size_t* upload_size, void** con_cls) {
    const http::Route route = http::route(method, url);
    const bool get_or_head = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (get_or_head && *con_cls == nullptr) {
        *con_cls = &marker;
        return MHD_YES;
    }
    if (get_or_head && *upload_size != 0) {
        *upload_size = 0;  // a body on a GET is ignored
        return MHD_YES;
    }
    Reply r;
    const int64_t started_us = monotonic_us();
    const int slot = slot_of(c);
    clocks.server_turn(slot);
    const MemoryContext old = MemoryContextSwitchTo(request_cxt);
    decide(c, route, &r);
    MemoryContextSwitchTo(old);
    MemoryContextReset(request_cxt);
    const MHD_Result ret = send_reply(c, &r);
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
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (a.ipv6) flags |= MHD_USE_IPv6;
    errno = 0;
    MHD_Daemon* d = MHD_start_daemon(
        flags, static_cast<uint16_t>(a.port), nullptr, nullptr, &handle_request, nullptr,
        MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&ss),
        MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(http::kMaxConnections),
        MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutS,
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

void register_http_worker() {
    // Started with the postmaster, so that /healthz answers during recovery
    // and on a standby.
    register_worker("snowflake_http_worker_main", "snowflake HTTP endpoint", BgWorkerStart_PostmasterStart,
                    kRestartS);
}

}  // namespace snowflake::pg

extern "C" void snowflake_http_worker_main(Datum) {
    namespace sp = snowflake::pg;
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();

    sp::id_wait_yields = true;
    sp::request_cxt = AllocSetContextCreate(TopMemoryContext, "snowflake HTTP request",
                                            ALLOCSET_DEFAULT_SIZES);
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
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        const int64_t turn_ms = sp::mono_ms();
        (void)MHD_run(d);
        sp::close_overdue_clients(turn_ms);
    }
    // Closes the listening socket and every connection, kept-alive ones too.
    MHD_stop_daemon(d);
    // As the mark worker: quietly at a server shutdown, else "restart me".
    proc_exit(sp::postmaster_stopping() ? 0 : 1);
}
