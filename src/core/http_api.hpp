// The decisions and output formats of the HTTP endpoint (src/pg/http_worker.cpp),
// pure so that they are unit-tested without a server: routing, the count and
// id parameters, the Bearer token check, and the JSON and Prometheus text the
// endpoint sends.
//
// The HTTP protocol itself (request line, headers, keep-alive, percent
// decoding of the path and the query) is libmicrohttpd's; nothing here parses
// HTTP or JSON. Output is written into caller-provided buffers: nothing here
// allocates (the extension is built without exceptions, where a failed
// allocation would abort the process), and a buffer that is too small gives
// a length of 0, never a truncated document.
#pragma once

#include "pure.hpp"

#include "stats_snapshot.hpp"
#include "uuid.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core::http {

constexpr int32_t kMaxCount = 10000;

enum class Endpoint { IdsBatch, IdDecode, UuidsBatch, Healthz, Metrics, NotFound };

struct Route {
    Endpoint endpoint = Endpoint::NotFound;
    // GET; HEAD too where a request changes nothing (not the batches, which
    // would use up ids for a body nobody reads).
    bool method_allowed = false;
    const char* id_text = nullptr;  // IdDecode: the path after "/v1/ids/"
};

// method and path as libmicrohttpd gives them (the path percent-decoded, no
// query string).
Route route(const char* method, const char* path) noexcept;

// The Allow header of a 405 answer.
constexpr const char* allowed_methods(Endpoint e) noexcept {
    return e == Endpoint::IdsBatch || e == Endpoint::UuidsBatch ? "GET" : "GET, HEAD";
}

// Every path but /healthz needs the token when one is set.
constexpr bool needs_token(Endpoint e) noexcept { return e != Endpoint::Healthz; }

// The count parameter: occurrences of "count" in the query, and the first
// one's value (nullptr for "?count" without "="). Absent: 1. Accepted: 1 to 5
// decimal digits, value 1 to kMaxCount; anything else (sign, blanks, junk
// after the digits, repeated parameter) is refused.
bool parse_count(int occurrences, const char* value, int32_t* out) noexcept;

// A Snowflake id in a path: 1 to 19 decimal digits, at most INT64_MAX.
bool parse_id(const char* text, int64_t* out) noexcept;

// The Authorization header against the token: true when token is empty (no
// token configured) or the header is "Bearer <token>" (scheme in any case,
// one or more spaces). The comparison takes the same time wherever the first
// differing byte is.
bool bearer_ok(const char* authorization, const char* token) noexcept;

// snowflake.http_listen: "host:port" where host is a numeric IPv4 address,
// "[IPv6]", "localhost" or empty (both 127.0.0.1), or "*" (0.0.0.0, every
// interface); port 1 to 65535. The caller checks the address itself
// (inet_pton). Returns nullptr, or why the text is refused.
struct ListenAddress {
    char host[64] = {0};
    int port = 0;
    bool ipv6 = false;
};
const char* parse_listen(const char* text, ListenAddress* out) noexcept;

// --- time limits on clients -------------------------------------------------

// libmicrohttpd closes a connection that sends nothing for its idle timeout,
// but a client that trickles a byte every few seconds (slowloris) is never
// idle, and a handful of them could hold every connection slot for as long
// as they liked. So each client has kClientTurnLimitMs to send a request
// (from its connection, or from the end of its previous answer) and as long
// to read an answer; the time the server spends deciding is not counted.
// ClientClocks keeps that per connection slot; the worker closes the
// connections overdue() names.
constexpr int kMaxConnections = 64;
constexpr int64_t kClientTurnLimitMs = 10000;

class ClientClocks {
public:
    // A slot for a new connection, its client's turn starting now; -1 when
    // every slot is taken.
    int open(int64_t now_ms) noexcept;
    // The client is to send (or read) from now: its time starts again.
    void client_turn(int slot, int64_t now_ms) noexcept;
    // The server decides: no limit until the next client_turn.
    void server_turn(int slot) noexcept;
    void close(int slot) noexcept;
    // Writes up to cap slots whose client has had its turn for longer than
    // kClientTurnLimitMs into out, each once per turn; returns how many.
    int overdue(int64_t now_ms, int* out, int cap) noexcept;
    int in_use() const noexcept;

private:
    struct Slot {
        bool used = false;
        bool timed = false;     // the client's turn: since_ms counts
        bool reported = false;  // overdue() named it in this turn
        int64_t since_ms = 0;
    };
    Slot slots_[kMaxConnections];
};

// --- output -----------------------------------------------------------------

// Room needed for format_ids_json / format_uuids_json of count values.
constexpr size_t ids_json_capacity(int32_t count) noexcept {
    return 16 + static_cast<size_t>(count) * 23;  // "9223372036854775807",
}
constexpr size_t uuids_json_capacity(int32_t count) noexcept {
    return 16 + static_cast<size_t>(count) * 39;
}

// {"ids":["1","2"]}
size_t format_ids_json(char* buf, size_t cap, const int64_t* ids, int32_t count) noexcept;
// {"uuids":["0190...","..."]}
size_t format_uuids_json(char* buf, size_t cap, const Uuid* uuids, int32_t count) noexcept;
// {"id":"...","timestamp":"2025-01-01T00:00:00.000Z","worker_id":N,"sequence":N}
// under the epoch given in Unix milliseconds.
size_t format_decoded_json(char* buf, size_t cap, int64_t id, int64_t epoch_unix_ms) noexcept;
// {"code":"SF001","message":"...","detail":"...","hint":"..."}; detail and
// hint may be nullptr or empty (left out). Strings are escaped; bytes that
// are not UTF-8 become U+FFFD.
size_t format_error_json(char* buf, size_t cap, const char* code, const char* message,
                         const char* detail, const char* hint) noexcept;
// {"status":"ok"} or {"status":"unavailable","code":"...","reason":"..."}
size_t format_health_json(char* buf, size_t cap, bool ready, const char* code,
                          const char* reason) noexcept;

// --- request statistics -----------------------------------------------------

// "ids_batch", "id_decode", "uuids_batch", "healthz", "metrics", "not_found":
// the endpoint label of the request metrics.
const char* endpoint_name(Endpoint e) noexcept;
constexpr int kEndpointCount = static_cast<int>(Endpoint::NotFound) + 1;

// Upper bounds of the request duration histogram, microseconds.
constexpr int64_t kDurationBucketsUs[] = {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
                                          100000, 250000, 500000, 1000000, 2500000};
constexpr int kDurationBuckets = sizeof(kDurationBucketsUs) / sizeof(kDurationBucketsUs[0]);

// Requests answered by the HTTP worker since it started, by endpoint and
// status code, and how long each took to decide and queue its answer. Kept by
// the worker (one thread), so plain counters; the label sets are bounded:
// six endpoints times at most kMaxCodes status codes (codes beyond are
// counted under code "other").
class RequestStats {
public:
    static constexpr int kMaxCodes = 24;
    void record(Endpoint e, int status, int64_t duration_us) noexcept;
    // Ids and UUIDs handed out by the batch endpoints (taken from the
    // generator, whether or not the answer reached the client).
    void add_ids(int32_t n) noexcept { ids_ += n > 0 ? static_cast<uint64_t>(n) : 0; }
    void add_uuids(int32_t n) noexcept { uuids_ += n > 0 ? static_cast<uint64_t>(n) : 0; }
    uint64_t ids() const noexcept { return ids_; }
    uint64_t uuids() const noexcept { return uuids_; }

    struct CodeCount {
        int status = 0;  // 0: unused; -1: other
        uint64_t count = 0;
    };
    struct PerEndpoint {
        CodeCount codes[kMaxCodes];
        uint64_t buckets[kDurationBuckets] = {};  // not cumulative
        uint64_t count = 0;
        int64_t sum_us = 0;
    };
    const PerEndpoint& of(Endpoint e) const noexcept { return per_[static_cast<int>(e)]; }

private:
    PerEndpoint per_[kEndpointCount];
    uint64_t ids_ = 0;
    uint64_t uuids_ = 0;
};

// What /metrics shows beside the snapshot.
struct Health {
    bool ready = false;   // generator_ready()
    int64_t now_ms = 0;   // the clock, id-space milliseconds
    const char* version = "";                 // snowflake_build_info{version}
    const RequestStats* requests = nullptr;   // the HTTP worker's; nullptr: none shown
};
// Prometheus text exposition (format 0.0.4) of every column of
// snowflake_stats, the health gauges and the request statistics. Each
// metric's HELP ends with "(snowflake_stats.COLUMN)" naming the column it
// shows, when it shows one.
size_t format_metrics(char* buf, size_t cap, const StatsSnapshot& s, const Health& h) noexcept;

// RFC 3339 UTC with milliseconds, "2025-01-01T00:00:00.000Z"; at most 31
// bytes with the NUL. Years outside 0..9999 get a sign and more digits.
size_t format_rfc3339_ms(char* buf, size_t cap, int64_t unix_ms) noexcept;
// Canonical 8-4-4-4-12 lower-case text, 36 bytes plus NUL.
void format_uuid(char* out37, const Uuid& u) noexcept;

}  // namespace snowflake::core::http
