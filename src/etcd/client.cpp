// The etcd v3 gateway client: libcurl for HTTP, nlohmann-json for JSON.
//
// nlohmann-json is used without exceptions: JSON_NOEXCEPTION turns its throws
// into aborts, so only calls that cannot throw are made here: parse() with
// allow_exceptions = false, find()/is_*() before every read, get<>() only
// after the matching is_*(), dump() with the replacing error handler.
#ifndef JSON_NOEXCEPTION
#define JSON_NOEXCEPTION 1
#endif

#include "client.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>

namespace snowflake::etcd {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

long ms_since(Clock::time_point start) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

Status fail(Code code, std::string error, long http_status = 0) {
    Status s;
    s.code = code;
    s.error = std::move(error);
    s.http_status = http_status;
    return s;
}

std::string printable(const std::string& s, size_t max_len) {
    std::string out;
    for (char c : s.substr(0, std::min(s.size(), max_len))) {
        out += (c < 0x20 || c >= 0x7f) ? ' ' : c;
    }
    if (s.size() > max_len) out += "...";
    return out;
}

// --- JSON reading: every accessor checks the type first ---------------------

const json* member(const json& obj, const char* key) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

bool parse_i64_text(const std::string& s, int64_t* out) {
    if (s.empty() || s.size() > 20) return false;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '-') {
        neg = true;
        i = 1;
        if (s.size() == 1) return false;
    }
    uint64_t v = 0;
    for (; i < s.size(); i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        const auto d = static_cast<uint64_t>(s[i] - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
        v = v * 10 + d;
    }
    const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (v > limit) return false;
    *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return true;
}

// proto3 JSON: int64 fields are strings, absent when zero. Numbers are
// accepted too.
bool read_i64(const json& obj, const char* key, int64_t* out) {
    *out = 0;
    const json* v = member(obj, key);
    if (v == nullptr || v->is_null()) return true;
    if (v->is_string()) return parse_i64_text(v->get<std::string>(), out);
    if (v->is_number_integer() && !v->is_number_unsigned()) {
        *out = v->get<int64_t>();
        return true;
    }
    if (v->is_number_unsigned()) {
        const auto u = v->get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
        *out = static_cast<int64_t>(u);
        return true;
    }
    return false;
}

// bytes fields: base64 strings, absent when empty.
bool read_bytes(const json& obj, const char* key, std::string* out) {
    out->clear();
    const json* v = member(obj, key);
    if (v == nullptr || v->is_null()) return true;
    if (!v->is_string()) return false;
    return base64_decode(v->get<std::string>(), out);
}

bool read_bool(const json& obj, const char* key, bool* out) {
    *out = false;
    const json* v = member(obj, key);
    if (v == nullptr || v->is_null()) return true;
    if (!v->is_boolean()) return false;
    *out = v->get<bool>();
    return true;
}

bool read_kv(const json& j, KeyValue* kv) {
    return j.is_object() && read_bytes(j, "key", &kv->key) && read_bytes(j, "value", &kv->value) &&
           read_i64(j, "create_revision", &kv->create_revision) &&
           read_i64(j, "mod_revision", &kv->mod_revision) && read_i64(j, "lease", &kv->lease);
}

// The "kvs" of a range answer.
bool read_kvs(const json& range_answer, std::vector<KeyValue>* out) {
    out->clear();
    const json* kvs = member(range_answer, "kvs");
    if (kvs == nullptr || kvs->is_null()) return true;
    if (!kvs->is_array()) return false;
    for (const json& item : *kvs) {
        KeyValue kv;
        if (!read_kv(item, &kv)) return false;
        out->push_back(std::move(kv));
    }
    return true;
}

bool read_header_revision(const json& answer, int64_t* out) {
    *out = 0;
    const json* h = member(answer, "header");
    if (h == nullptr) return true;
    return read_i64(*h, "revision", out);
}

Status bad_answer(const char* path, const char* what) {
    return fail(Code::BadAnswer, std::string("etcd's answer to ") + path + " " + what);
}

// Parses a 200 answer into an object, or explains why it is not one. The
// gateway reports errors of streaming calls inside a 200 answer.
Status parse_object(const char* path, const std::string& text, json* out) {
    *out = json::parse(text, nullptr, false);
    if (out->is_discarded()) return bad_answer(path, "is not valid JSON");
    if (!out->is_object()) return bad_answer(path, "is not a JSON object");
    const json* err = member(*out, "error");
    if (err != nullptr && err->is_object()) {
        const json* msg = member(*err, "message");
        const std::string m = msg != nullptr && msg->is_string() ? msg->get<std::string>() : "";
        if (m.find("lease not found") != std::string::npos) {
            return fail(Code::LeaseNotFound, "etcd: " + printable(m, 200), 200);
        }
        return fail(Code::HttpError, "etcd answered with an error: " + printable(m, 200), 200);
    }
    return Status{};
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string i64_text(int64_t v) { return std::to_string(v); }

// --- libcurl callbacks -----------------------------------------------------

struct Sink {
    std::string* body;
    size_t max_bytes;
    bool too_large = false;
};

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const size_t n = size * nmemb;
    if (sink->body->size() + n > sink->max_bytes) {
        sink->too_large = true;
        return 0;  // CURLE_WRITE_ERROR
    }
    sink->body->append(data, n);
    return n;
}

struct AbortHook {
    bool (*fn)(void*);
    void* arg;
    bool fired = false;
};

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* hook = static_cast<AbortHook*>(user);
    if (hook->fn != nullptr && hook->fn(hook->arg)) {
        hook->fired = true;
        return 1;  // CURLE_ABORTED_BY_CALLBACK
    }
    return 0;
}

constexpr long kPollSliceMs = 50;

}  // namespace

const char* code_name(Code c) noexcept {
    switch (c) {
        case Code::Ok: return "ok";
        case Code::Unreachable: return "unreachable";
        case Code::Timeout: return "timeout";
        case Code::Aborted: return "aborted";
        case Code::HttpError: return "http error";
        case Code::LeaseNotFound: return "lease not found";
        case Code::BadAnswer: return "bad answer";
        case Code::Failed: return "failed";
    }
    return "unknown";
}

// --- the client --------------------------------------------------------------

Client::Client(Options options) noexcept : options_(std::move(options)) {
    easy_ = curl_easy_init();
    multi_ = curl_multi_init();
}

Client::~Client() {
    if (multi_ != nullptr) curl_multi_cleanup(static_cast<CURLM*>(multi_));
    if (easy_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(easy_));
}

const std::string& Client::current_endpoint() const noexcept {
    static const std::string kNone;
    return options_.endpoints.empty() ? kNone : options_.endpoints[current_ % options_.endpoints.size()];
}

Status Client::post(const char* path, const std::string& body, std::string* answer) noexcept {
    answer->clear();
    if (options_.endpoints.empty()) return fail(Code::Unreachable, "no etcd endpoint is configured");
    if (easy_ == nullptr || multi_ == nullptr) return fail(Code::Failed, "libcurl could not be initialised");
    auto* easy = static_cast<CURL*>(easy_);
    auto* multi = static_cast<CURLM*>(multi_);
    const Clock::time_point start = Clock::now();
    const long budget = std::max(options_.timeout_ms, 1L);
    const size_t n = options_.endpoints.size();
    std::string unreachable;  // what each endpoint that could not be reached said

    for (size_t i = 0; i < n; i++) {
        const size_t idx = (current_ + i) % n;
        const std::string& endpoint = options_.endpoints[idx];
        const long remaining = budget - ms_since(start);
        if (remaining <= 0) break;

        const std::string url = endpoint + path;
        char errbuf[CURL_ERROR_SIZE] = {};
        Sink sink{answer, options_.max_answer_bytes};
        AbortHook hook{options_.should_abort, options_.abort_arg};
        answer->clear();

        curl_easy_reset(easy);
        struct curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
        curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
        curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http");
        curl_easy_setopt(easy, CURLOPT_PROXY, "");  // never an http_proxy from the environment
        curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.c_str());
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, remaining);
        curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                         std::max(1L, std::min(options_.connect_timeout_ms, remaining)));
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, &sink);
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &hook);

        // The multi interface lets us wait in slices and ask the abort hook
        // between them, whatever libcurl's own progress callback rate is.
        CURLcode result = CURLE_OK;
        bool done = false;
        bool stuck = false;
        curl_multi_add_handle(multi, easy);
        for (;;) {
            int running = 0;
            const CURLMcode mc = curl_multi_perform(multi, &running);
            int queued = 0;
            while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
                if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) {
                    result = msg->data.result;
                    done = true;
                }
            }
            if (done) break;
            if (mc != CURLM_OK || running == 0) {
                result = CURLE_FAILED_INIT;
                std::snprintf(errbuf, sizeof errbuf, "%s", curl_multi_strerror(mc));
                break;
            }
            if (hook.fn != nullptr && hook.fn(hook.arg)) {
                hook.fired = true;
                break;
            }
            // Backstop: libcurl enforces the timeout; this only guards it.
            if (ms_since(start) > budget + 2 * kPollSliceMs) {
                stuck = true;
                break;
            }
            curl_multi_poll(multi, nullptr, 0, kPollSliceMs, nullptr);
        }
        long http_status = 0;
        long request_bytes = 0;  // 0: the request was not sent (a reused connection has no connect time)
        long os_errno = 0;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &http_status);
        curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &request_bytes);
        curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
        curl_multi_remove_handle(multi, easy);
        curl_slist_free_all(headers);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);

        if (hook.fired || result == CURLE_ABORTED_BY_CALLBACK) {
            return fail(Code::Aborted, "call to " + endpoint + " aborted after " +
                                           std::to_string(ms_since(start)) + " ms");
        }
        if (stuck || (result == CURLE_OPERATION_TIMEDOUT && request_bytes > 0)) {
            // A member that takes a request and never answers (cut off from
            // the others, it has no quorum) must not take every later call's
            // budget too: the next call starts at the next member.
            current_ = (idx + 1) % n;
            return fail(Code::Timeout, "timed out after " + std::to_string(budget) + " ms waiting for " +
                                           endpoint);
        }
        if (done && result == CURLE_OK) {
            // It answered: start there next time, unless it answered that it
            // cannot serve (5xx: no leader, not ready), then at the next one.
            current_ = http_status >= 500 ? (idx + 1) % n : idx;
            if (http_status == 200) return Status{};
            // etcd's errors are {"error": ..., "message": ..., "code": <grpc code>}.
            const json err = json::parse(*answer, nullptr, false);
            const json* msg = member(err, "message");
            const std::string text = msg != nullptr && msg->is_string() ? msg->get<std::string>()
                                                                        : *answer;
            if (text.find("lease not found") != std::string::npos) {
                return fail(Code::LeaseNotFound, "etcd: " + printable(text, 200), http_status);
            }
            return fail(Code::HttpError,
                        "etcd answered HTTP " + std::to_string(http_status) + ": " +
                            (text.empty() ? std::string("(empty body)") : printable(text, 200)),
                        http_status);
        }
        if (result == CURLE_WRITE_ERROR && sink.too_large) {
            return fail(Code::BadAnswer, "the answer of " + endpoint + " is larger than " +
                                             std::to_string(options_.max_answer_bytes) + " bytes");
        }
        // Not reached a server: the request was not sent, try the next one.
        const bool not_sent = result == CURLE_COULDNT_CONNECT || result == CURLE_COULDNT_RESOLVE_HOST ||
                              (result == CURLE_OPERATION_TIMEDOUT && request_bytes == 0);
        if (not_sent) {
            std::string why;
            if (result == CURLE_COULDNT_CONNECT && os_errno == ECONNREFUSED) {
                why = "connection refused to " + endpoint;
            } else if (result == CURLE_OPERATION_TIMEDOUT) {
                why = "no connection to " + endpoint + " within " +
                      std::to_string(std::min(options_.connect_timeout_ms, remaining)) + " ms";
            } else {
                why = "could not connect to " + endpoint + ": " +
                      (errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(result)));
            }
            unreachable += (unreachable.empty() ? "" : "; ") + why;
            continue;
        }
        return fail(Code::Failed, "request to " + endpoint + " failed: " +
                                      (errbuf[0] != '\0' ? std::string(errbuf)
                                                         : std::string(curl_easy_strerror(result))));
    }
    if (ms_since(start) >= budget) {
        return fail(Code::Timeout, "timed out after " + std::to_string(budget) + " ms" +
                                       (unreachable.empty() ? "" : " (" + unreachable + ")"));
    }
    return fail(Code::Unreachable, unreachable);
}

// POSTs request as JSON; *answer is the JSON object of a 200 answer.
Status Client::call(const char* path, const json& request, json* answer) noexcept {
    std::string text;
    Status s = post(path, dump(request), &text);
    if (!s.ok()) return s;
    return parse_object(path, text, answer);
}

GrantResult Client::grant(int64_t ttl_s) noexcept {
    static const char kPath[] = "/v3/lease/grant";
    GrantResult r;
    json a;
    r.status = call(kPath, json{{"TTL", i64_text(ttl_s)}}, &a);
    if (!r.status.ok()) return r;
    const json* err = member(a, "error");
    if (err != nullptr && err->is_string() && !err->get<std::string>().empty()) {
        r.status = fail(Code::HttpError, "etcd refused the lease: " + printable(err->get<std::string>(), 200), 200);
        return r;
    }
    if (!read_i64(a, "ID", &r.lease_id) || !read_i64(a, "TTL", &r.ttl_s) || r.lease_id == 0 || r.ttl_s <= 0) {
        r.status = bad_answer(kPath, "has no valid lease ID and TTL");
    }
    return r;
}

KeepaliveResult Client::keepalive(int64_t lease) noexcept {
    static const char kPath[] = "/v3/lease/keepalive";
    KeepaliveResult r;
    json a;
    r.status = call(kPath, json{{"ID", i64_text(lease)}}, &a);
    if (r.status.code == Code::LeaseNotFound) {
        r.status = Status{};
        r.ttl_s = 0;
        return r;
    }
    if (!r.status.ok()) return r;
    const json* result = member(a, "result");
    int64_t id = 0;
    if (result == nullptr || !result->is_object() || !read_i64(*result, "TTL", &r.ttl_s) ||
        !read_i64(*result, "ID", &id) || r.ttl_s < 0) {
        r.status = bad_answer(kPath, "has no valid result");
        r.ttl_s = 0;
    }
    return r;
}

Status Client::revoke(int64_t lease) noexcept {
    static const char kPath[] = "/v3/lease/revoke";
    json a;
    return call(kPath, json{{"ID", i64_text(lease)}}, &a);
}

ClaimResult Client::claim(const std::string& key, const std::string& value, int64_t lease) noexcept {
    static const char kPath[] = "/v3/kv/txn";
    const std::string k = base64_encode(key);
    json req;
    req["compare"] = json::array({json{{"key", k}, {"target", "CREATE"}, {"result", "EQUAL"},
                                       {"create_revision", "0"}}});
    req["success"] = json::array({json{{"request_put", json{{"key", k},
                                                            {"value", base64_encode(value)},
                                                            {"lease", i64_text(lease)}}}}});
    req["failure"] = json::array({json{{"request_range", json{{"key", k}}}}});
    ClaimResult r;
    json a;
    r.status = call(kPath, req, &a);
    if (!r.status.ok()) return r;
    if (!read_bool(a, "succeeded", &r.claimed) || !read_header_revision(a, &r.revision)) {
        r.status = bad_answer(kPath, "has an invalid header or succeeded field");
        return r;
    }
    if (r.claimed) return r;
    const json* responses = member(a, "responses");
    std::vector<KeyValue> kvs;
    if (responses == nullptr || !responses->is_array() || responses->size() != 1 ||
        member((*responses)[0], "response_range") == nullptr ||
        !read_kvs(*member((*responses)[0], "response_range"), &kvs) || kvs.size() != 1) {
        r.status = bad_answer(kPath, "lacks the key that made the claim fail");
        return r;
    }
    r.holder = std::move(kvs[0]);
    return r;
}

Status Client::delete_if_lease(const std::string& key, int64_t lease) noexcept {
    static const char kPath[] = "/v3/kv/txn";
    const std::string k = base64_encode(key);
    json req;
    req["compare"] = json::array({json{{"key", k}, {"target", "LEASE"}, {"result", "EQUAL"},
                                       {"lease", i64_text(lease)}}});
    req["success"] = json::array({json{{"request_delete_range", json{{"key", k}}}}});
    json a;
    Status s = call(kPath, req, &a);
    if (!s.ok()) return s;
    bool succeeded = false;
    int64_t revision = 0;
    if (!read_bool(a, "succeeded", &succeeded) || !read_header_revision(a, &revision))
        return bad_answer(kPath, "has an invalid header or succeeded field");
    return s;
}

GetResult Client::get(const std::string& key) noexcept {
    static const char kPath[] = "/v3/kv/range";
    GetResult r;
    json a;
    r.status = call(kPath, json{{"key", base64_encode(key)}}, &a);
    if (!r.status.ok()) return r;
    std::vector<KeyValue> kvs;
    if (!read_kvs(a, &kvs) || kvs.size() > 1 || (kvs.size() == 1 && kvs[0].key != key)) {
        r.status = bad_answer(kPath, "has invalid kvs");
        return r;
    }
    if (!kvs.empty()) {
        r.found = true;
        r.kv = std::move(kvs[0]);
    }
    return r;
}

RangeResult Client::range(const std::string& prefix) noexcept {
    static const char kPath[] = "/v3/kv/range";
    RangeResult r;
    json a;
    r.status = call(kPath,
                    json{{"key", base64_encode(prefix.empty() ? std::string(1, '\0') : prefix)},
                         {"range_end", base64_encode(prefix_range_end(prefix))}},
                    &a);
    if (!r.status.ok()) return r;
    if (!read_kvs(a, &r.kvs)) {
        r.kvs.clear();
        r.status = bad_answer(kPath, "has invalid kvs");
        return r;
    }
    for (const KeyValue& kv : r.kvs) {
        if (kv.key.compare(0, prefix.size(), prefix) != 0) {
            r.kvs.clear();
            r.status = bad_answer(kPath, "has a key outside the prefix");
            return r;
        }
    }
    return r;
}

PutResult Client::put(const std::string& key, const std::string& value, int64_t lease) noexcept {
    static const char kPath[] = "/v3/kv/put";
    json req{{"key", base64_encode(key)}, {"value", base64_encode(value)}};
    if (lease != 0) req["lease"] = i64_text(lease);
    PutResult r;
    json a;
    r.status = call(kPath, req, &a);
    if (!r.status.ok()) return r;
    if (!read_header_revision(a, &r.revision) || r.revision <= 0) {
        r.status = bad_answer(kPath, "has no valid revision");
    }
    return r;
}

CasResult Client::compare_and_put(const std::string& key, const std::string& value,
                                  int64_t expected_mod_revision, const std::string& guard_key,
                                  int64_t guard_lease) noexcept {
    static const char kPath[] = "/v3/kv/txn";
    const std::string k = base64_encode(key), g = base64_encode(guard_key);
    const bool guarded = !guard_key.empty();
    json compare = json::array({json{{"key", k}, {"target", "MOD"}, {"result", "EQUAL"},
                                     {"mod_revision", i64_text(expected_mod_revision)}}});
    json success = json::array({json{{"request_put", json{{"key", k}, {"value", base64_encode(value)}}}}});
    json failure = json::array({json{{"request_range", json{{"key", k}}}}});
    if (guarded) {
        compare.push_back(
            json{{"key", g}, {"target", "LEASE"}, {"result", "EQUAL"}, {"lease", i64_text(guard_lease)}});
        success.push_back(json{{"request_put", json{{"key", g}, {"ignore_value", true}, {"ignore_lease", true}}}});
        failure.push_back(json{{"request_range", json{{"key", g}}}});
    }
    json req;
    req["compare"] = std::move(compare);
    req["success"] = std::move(success);
    req["failure"] = std::move(failure);
    CasResult r;
    json a;
    r.status = call(kPath, req, &a);
    if (!r.status.ok()) return r;
    int64_t header_revision = 0;
    if (!read_bool(a, "succeeded", &r.succeeded) || !read_header_revision(a, &header_revision)) {
        r.status = bad_answer(kPath, "has an invalid header or succeeded field");
        return r;
    }
    if (r.succeeded) {
        r.revision = header_revision;
        return r;
    }
    // The failure branch's ranges: the key, then the guard key.
    const json* responses = member(a, "responses");
    std::vector<KeyValue> kvs[2];
    const size_t n = guarded ? 2 : 1;
    bool valid = responses != nullptr && responses->is_array() && responses->size() == n;
    for (size_t i = 0; valid && i < n; i++)
        valid = member((*responses)[i], "response_range") != nullptr &&
                read_kvs(*member((*responses)[i], "response_range"), &kvs[i]) && kvs[i].size() <= 1;
    if (!valid) {
        r.status = bad_answer(kPath, "lacks the key's current state");
        return r;
    }
    if (!kvs[0].empty()) {
        r.found = true;
        r.current = std::move(kvs[0][0]);
    }
    if (!guarded) return r;
    if (!kvs[1].empty()) {
        r.guard_found = true;
        r.guard = std::move(kvs[1][0]);
    }
    r.guard_failed = !r.guard_found || r.guard.lease != guard_lease;
    r.written_with_guard = !r.guard_failed && r.found && r.guard.mod_revision == r.current.mod_revision;
    return r;
}

}  // namespace snowflake::etcd
