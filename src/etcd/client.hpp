// A small client of etcd 3.4's v3 HTTP/JSON gateway (grpc-gateway): the calls
// a node needs to lease a worker id. Plain C++17 on libcurl and nlohmann-json;
// no PostgreSQL header, no exception escapes (it builds with -fno-exceptions
// and JSON_NOEXCEPTION; a malformed or hostile answer is a BadAnswer status,
// never an abort). Every call returns a status with an error sentence.
//
// Blocking, one call at a time, for a background worker:
// - Each call has a total time budget (Options::timeout_ms, shared by the
//   endpoints it tries) and a connect timeout per endpoint.
// - Options::should_abort is polled at least every 50 ms while a call waits,
//   so SIGTERM handling (the handler sets a flag the hook returns) ends a
//   pending call within ~50 ms, whatever etcd does.
// - Endpoints are tried in order, starting from the last one that answered;
//   only failures before the request reached a server (refused, unresolvable,
//   connect timeout) move on to the next one, so a request is never sent twice.
// - No signals (CURLOPT_NOSIGNAL); no global state of ours. The caller calls
//   curl_global_init(CURL_GLOBAL_DEFAULT) once per process before the first
//   Client, in the process that uses it (the background worker, after fork),
//   and may call curl_global_cleanup() at exit.
// - Allocations are ordinary C++ (std::string); the glue keeps Client and
//   results out of reach of ereport's longjmp (PostgreSQL's "Using C++ for
//   Extensibility": src/pg/lease_worker.cpp holds them in a function where
//   nothing raises an error).
//
// Usage sketch (lease_driver.hpp is the whole lease loop built on it):
//
//   curl_global_init(CURL_GLOBAL_DEFAULT);
//   snowflake::etcd::Options o;
//   core::parse_endpoints(endpoints_setting, &o.endpoints, &reason);
//   o.should_abort = [](void*) { return got_sigterm; };
//   snowflake::etcd::Client c(o);
//   auto g = c.grant(30);           // g.status.ok(), g.lease_id, g.ttl_s
//   auto k = c.claim("/snowflake/workers/3", identity, g.lease_id);
//   if (k.status.ok() && !k.claimed) ... k.holder_value names the holder
//   auto a = c.keepalive(g.lease_id);  // a.ttl_s == 0: the lease is gone
//   c.revoke(g.lease_id);
#pragma once

#include "encoding.hpp"  // base64_encode, base64_decode, prefix_range_end

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace snowflake::etcd {

enum class Code {
    Ok,
    Unreachable,    // no endpoint accepted a connection (or none configured)
    Timeout,        // the call's time budget ran out
    Aborted,        // should_abort returned true
    HttpError,      // etcd (or something else) answered with a non-200 status
    LeaseNotFound,  // etcd: "requested lease not found"
    BadAnswer,      // an answer that is not the JSON etcd gives
    Failed,         // any other transfer failure
};
const char* code_name(Code c) noexcept;

struct Status {
    Code code = Code::Ok;
    std::string error;     // a sentence for logs and lease_last_error; empty when ok
    long http_status = 0;  // last HTTP status seen (0: none)
    bool ok() const noexcept { return code == Code::Ok; }
};

struct Options {
    std::vector<std::string> endpoints;  // "http://host:port" (core::parse_endpoints)
    long timeout_ms = 1000;              // total per call, across endpoints
    long connect_timeout_ms = 500;       // per endpoint, within the total
    bool (*should_abort)(void* arg) = nullptr;
    void* abort_arg = nullptr;
    size_t max_answer_bytes = size_t{4} << 20;  // larger answers are BadAnswer
};

struct KeyValue {
    std::string key;
    std::string value;
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
    int64_t lease = 0;  // 0: none
};

struct GrantResult {
    Status status;
    int64_t lease_id = 0;
    int64_t ttl_s = 0;  // what etcd granted (it raises TTLs below its minimum)
};

struct KeepaliveResult {
    Status status;
    int64_t ttl_s = 0;  // 0 with status ok: the lease does not exist any more
};

struct ClaimResult {
    Status status;
    bool claimed = false;      // true: the key was created, attached to the lease
    KeyValue holder;           // !claimed: the key as it is (value, lease)
    int64_t revision = 0;      // store revision after the call
};

struct GetResult {
    Status status;
    bool found = false;
    KeyValue kv;
};

struct RangeResult {
    Status status;
    std::vector<KeyValue> kvs;  // in key order
};

struct PutResult {
    Status status;
    int64_t revision = 0;  // the key's new mod revision
};

struct CasResult {
    Status status;
    bool succeeded = false;
    int64_t revision = 0;  // succeeded: the key's new mod revision
    bool found = false;    // !succeeded: the key as it is now
    KeyValue current;
    // !succeeded, with a guard: the guard key as it is now (found), and
    // whether the guard failed: the guard key is absent or not attached to
    // the guard lease (read, never inferred from the key's revision).
    bool guard_found = false;
    KeyValue guard;
    bool guard_failed = false;
    // !succeeded, the guard held: key was last written in the same txn as
    // the guard key's last stamp (equal mod revisions): by a compare_and_put
    // of the guard lease's holder, whose answer may have been lost.
    bool written_with_guard = false;
};

class Client {
public:
    explicit Client(Options options) noexcept;
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // POST /v3/lease/grant {"TTL": ttl_s}
    GrantResult grant(int64_t ttl_s) noexcept;
    // POST /v3/lease/keepalive {"ID": lease}: one renewal.
    KeepaliveResult keepalive(int64_t lease) noexcept;
    // POST /v3/lease/revoke. A lease that no longer exists is LeaseNotFound.
    Status revoke(int64_t lease) noexcept;
    // A txn that creates key (attached to lease) only if it does not exist
    // (create_revision == 0); otherwise reads it.
    ClaimResult claim(const std::string& key, const std::string& value, int64_t lease) noexcept;
    GetResult get(const std::string& key) noexcept;
    // A txn that deletes key only if it is attached to lease (a worker key
    // of ours); a key that is absent or attached to another lease is left
    // alone. Both count as ok: the key is not ours afterwards either way.
    Status delete_if_lease(const std::string& key, int64_t lease) noexcept;
    // Every key starting with prefix.
    RangeResult range(const std::string& prefix) noexcept;
    // Unconditional put; lease 0 for none.
    PutResult put(const std::string& key, const std::string& value, int64_t lease = 0) noexcept;
    // Puts only if key's mod revision is expected_mod_revision (0: the key
    // does not exist) and, if guard_key is not empty, guard_key is attached to
    // guard_lease; then, in the same txn, stamps guard_key (a put that keeps
    // its value and lease: its mod revision becomes key's). Otherwise reads
    // key and guard_key. The caller decides the value (for a mark: only
    // forward, see core/handover.hpp) and, with the revision compare, no
    // write it did not read can be overtaken.
    CasResult compare_and_put(const std::string& key, const std::string& value,
                              int64_t expected_mod_revision, const std::string& guard_key = {},
                              int64_t guard_lease = 0) noexcept;

    // The endpoint the next call starts from.
    const std::string& current_endpoint() const noexcept;

private:
    // POSTs body to path on the endpoints in turn; *answer is the body of a
    // 200 answer.
    Status post(const char* path, const std::string& body, std::string* answer) noexcept;
    // post() of a JSON request; *answer is the answer's JSON object.
    Status call(const char* path, const nlohmann::json& request, nlohmann::json* answer) noexcept;

    Options options_;
    size_t current_ = 0;
    void* easy_ = nullptr;   // CURL*, reused so connections are kept alive
    void* multi_ = nullptr;  // CURLM*, for polling the abort hook while waiting
};

}  // namespace snowflake::etcd
