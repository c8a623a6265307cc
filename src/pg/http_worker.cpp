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
// The decisions are pure: the order of a request's checks and their
// refusals (core/http_request.hpp), routing, count, id, tokens and the output
// formats (core/http_api.hpp). The answers of each path are
// http_answers.cpp's (an error of the id path becomes a 503 there, and can
// never unwind through libmicrohttpd's frames); the token file is read by
// token_file.cpp.
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
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "../core/http_api.hpp"
#include "../core/http_limits.hpp"
#include "../core/http_request.hpp"
#include "../core/prometheus.hpp"
#include "http_worker.hpp"
#include "bgworker.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "http_answers.hpp"
#include "token_file.hpp"

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

namespace http = snowflake::core::http;

namespace snowflake::pg {
namespace {

constexpr long kTurnMs = 100;  // longest wait between turns of the loop
constexpr size_t kConnectionMemory = 16 * 1024;
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

// The query's parameters: the first kMaxNames names (enough: an endpoint
// takes at most two), and the first "count" and "format" values.
constexpr int kMaxNames = 32;
struct QueryArgs {
    int n = 0;
    const char* names[kMaxNames];
    int counts = 0;
    const char* count = nullptr;
    int formats = 0;
    const char* format = nullptr;
};

// libmicrohttpd's callback for each query parameter: into QueryArgs.
MHD_Result collect_arg(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* a = static_cast<QueryArgs*>(cls);
    if (a->n < kMaxNames) a->names[a->n++] = key;
    if (key != nullptr && strcmp(key, "count") == 0 && a->counts++ == 0) a->count = value;
    if (key != nullptr && strcmp(key, "format") == 0 && a->formats++ == 0) a->format = value;
    return MHD_YES;
}

// What to answer to a request whose headers are complete: the core's
// checks in their order (core/http_request.hpp), then the endpoint.
void answer_request(MHD_Connection* c, const http::Route& route, Reply* r) {
    QueryArgs args;
    (void)MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
    http::Request rq;
    rq.route = route;
    rq.host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    rq.authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    rq.query_names = args.names;
    rq.query_name_count = args.n;
    rq.count_occurrences = args.counts;
    rq.count = args.count;
    rq.format_occurrences = args.formats;
    rq.format = args.format;
    http::Access access;
    access.tokens = &tokens;
    access.listen = &listen_address;
    access.kind = listen_kind;
    access.allow_unauthenticated = http_allow_unauthenticated;
    const http::Decision d = http::check_request(rq, access);
    if (d.failed != http::Check::Passed) {
        refusal_reply(r, d.refusal);
        return;
    }
    const int32_t count = d.count;
    switch (route.endpoint) {
        case http::Endpoint::IdsBatch:
        case http::Endpoint::UuidsBatch:
            if (route.endpoint == http::Endpoint::IdsBatch) {
                const http::IdRateLimit::Verdict v = id_rate.take(count, monotonic_us());
                if (!v.allowed) {
                    char hint[200];
                    snprintf(hint, sizeof(hint),
                             "Retry after %lld ms; snowflake.http_max_ids_per_second is %d.",
                             static_cast<long long>(v.retry_after_ms), http_max_ids_per_second);
                    error_reply(r, MHD_HTTP_TOO_MANY_REQUESTS, "53400",
                                "too many ids requested over HTTP", hint);
                    r->retry_after_s = v.retry_after_s;
                    r->retry_after_ms = v.retry_after_ms;
                    return;
                }
                if (ids_batch(r, count, d.format)) request_stats.add_ids(count);
            } else {
                if (uuids_batch(r, count)) request_stats.add_uuids(count);
            }
            return;
        case http::Endpoint::IdDecode: decode(r, route.id_text, d.format); return;
        case http::Endpoint::Livez:
            livez(r);
            return;
        case http::Endpoint::Readyz: readyz(r, d.full_reason); return;
        case http::Endpoint::Metrics: metrics(r, request_stats); return;
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
    if (r->retry_after_ms > 0) {
        char v[24];
        snprintf(v, sizeof(v), "%lld", static_cast<long long>(r->retry_after_ms));
        (void)MHD_add_response_header(resp, "Retry-After-Ms", v);
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
        char hint[128];
        snprintf(hint, sizeof(hint),
                 "The endpoint serves %d connections at once; retry, or keep fewer connections open.",
                 http::kMaxConnections);
        error_reply(&r, MHD_HTTP_SERVICE_UNAVAILABLE, "53300", "too many connections", hint);
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
