// Routing, parameters, token and output formats of the HTTP endpoint; see
// http_api.hpp.
#include "http_api.hpp"

#include "ascii.hpp"
#include "layout.hpp"
#include "text.hpp"
#include "time.hpp"

#include <charconv>
#include <cstring>

namespace snowflake::core::http {
namespace {

// Appends to a fixed buffer; once something does not fit, everything after
// it is dropped and finish() returns 0.
struct Writer {
    char* buf;
    size_t cap;
    size_t len = 0;
    bool overflow = false;

    Writer(char* b, size_t c) noexcept : buf(b), cap(c) {}

    void raw(const char* s, size_t n) noexcept {
        if (overflow || n > cap - len) {
            overflow = true;
            return;
        }
        std::memcpy(buf + len, s, n);
        len += n;
    }
    void str(const char* s) noexcept { raw(s, std::strlen(s)); }
    void ch(char c) noexcept { raw(&c, 1); }
    void i64(int64_t v) noexcept {
        char tmp[24];
        const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
        raw(tmp, static_cast<size_t>(r.ptr - tmp));
    }
    void u64(uint64_t v) noexcept {
        char tmp[24];
        const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
        raw(tmp, static_cast<size_t>(r.ptr - tmp));
    }
    // Seconds from milliseconds, exact: "1.5", "0.001", "-2".
    void seconds_from_ms(int64_t ms) noexcept {
        if (ms < 0) {
            ch('-');
            ms = -ms;  // ms is far from INT64_MIN here (times and durations)
        }
        i64(ms / 1000);
        if (ms % 1000 != 0) {
            char frac[4] = {static_cast<char>('0' + ms % 1000 / 100),
                            static_cast<char>('0' + ms % 100 / 10), static_cast<char>('0' + ms % 10), 0};
            size_t n = 3;
            while (frac[n - 1] == '0') n--;
            ch('.');
            raw(frac, n);
        }
    }
    // Seconds from microseconds, exact: "0.00025", "2.5".
    void seconds_from_us(int64_t us) noexcept {
        if (us < 0) {
            ch('-');
            us = -us;
        }
        i64(us / 1000000);
        if (us % 1000000 != 0) {
            char frac[7];
            int64_t f = us % 1000000;
            for (int k = 5; k >= 0; k--) {
                frac[k] = static_cast<char>('0' + f % 10);
                f /= 10;
            }
            size_t n = 6;
            while (frac[n - 1] == '0') n--;
            ch('.');
            raw(frac, n);
        }
    }
    // A Prometheus label value: backslash, double quote and newline escaped,
    // other control characters dropped.
    void label_value(const char* s) noexcept {
        for (const char* p = s; *p != '\0'; p++) {
            if (*p == '\\' || *p == '"') {
                ch('\\');
                ch(*p);
            } else if (*p == '\n') {
                str("\\n");
            } else if (static_cast<unsigned char>(*p) >= 0x20) {
                ch(*p);
            }
        }
    }
    // A JSON string literal (text.hpp).
    void json_string(const char* s) noexcept {
        write_json_string(s, [this](const char* bytes, size_t n) { raw(bytes, n); });
    }
    size_t finish() noexcept {
        if (overflow || len >= cap) return 0;
        buf[len] = '\0';
        return len;
    }
};

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }


}  // namespace

Route route(const char* method, const char* path) noexcept {
    Route r;
    if (method == nullptr || path == nullptr) return r;
    constexpr const char kIds[] = "/v1/ids/";
    if (std::strcmp(path, "/v1/ids/batch") == 0) {
        r.endpoint = Endpoint::IdsBatch;
    } else if (std::strcmp(path, "/v1/uuids/batch") == 0) {
        r.endpoint = Endpoint::UuidsBatch;
    } else if (std::strcmp(path, "/readyz") == 0 || std::strcmp(path, "/healthz") == 0) {
        r.endpoint = Endpoint::Readyz;
    } else if (std::strcmp(path, "/livez") == 0) {
        r.endpoint = Endpoint::Livez;
    } else if (std::strcmp(path, "/metrics") == 0) {
        r.endpoint = Endpoint::Metrics;
    } else if (std::strncmp(path, kIds, sizeof(kIds) - 1) == 0 &&
               std::strchr(path + sizeof(kIds) - 1, '/') == nullptr) {
        r.endpoint = Endpoint::IdDecode;
        r.id_text = path + sizeof(kIds) - 1;
    } else {
        return r;
    }
    r.method_allowed = std::strcmp(method, "GET") == 0 ||
                       (std::strcmp(method, "HEAD") == 0 && r.endpoint != Endpoint::IdsBatch &&
                        r.endpoint != Endpoint::UuidsBatch);
    return r;
}

QueryVerdict check_query(Endpoint e, const char* const* names, int n) noexcept {
    QueryVerdict v;
    const bool takes_count = e == Endpoint::IdsBatch || e == Endpoint::UuidsBatch;
    bool count_seen = false;
    for (int i = 0; i < n; i++) {
        const char* name = names[i] != nullptr ? names[i] : "";
        if (takes_count && std::strcmp(name, "count") == 0) {
            if (count_seen) {
                v.kind = QueryVerdict::Kind::Repeated;
                v.name = name;
                return v;
            }
            count_seen = true;
        } else {
            v.kind = QueryVerdict::Kind::Unknown;
            v.name = name;
            return v;
        }
    }
    return v;
}

bool has_body(const char* content_length, const char* transfer_encoding) noexcept {
    if (transfer_encoding != nullptr) return true;
    if (content_length == nullptr) return false;
    const char* p = content_length;
    while (*p == ' ' || *p == '\t') p++;
    const char* start = p;
    while (*p == '0') p++;
    const bool zeros = p != start;
    while (*p == ' ' || *p == '\t') p++;
    return !(zeros && *p == '\0');  // "0" (or "000"): no body
}

namespace {

// Whether the comma-separated header value has the token (any case).
bool has_token(const char* value, const char* token) noexcept {
    if (value == nullptr) return false;
    const size_t tlen = std::strlen(token);
    const char* p = value;
    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        const char* start = p;
        while (*p != '\0' && *p != ',') p++;
        const char* end = p;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t')) end--;
        if (static_cast<size_t>(end - start) == tlen && ascii_iequal(std::string_view(start, tlen), std::string_view(token, tlen))) return true;
    }
    return false;
}

}  // namespace

bool keeps_alive(const char* version, const char* connection, bool server_closes) noexcept {
    if (server_closes || version == nullptr) return false;
    if (std::strcmp(version, "HTTP/1.1") == 0) return !has_token(connection, "close");
    if (std::strcmp(version, "HTTP/1.0") == 0) return has_token(connection, "keep-alive");
    return false;
}

size_t short_reason(char* out, size_t cap, const char* reason) noexcept {
    if (cap == 0) return 0;
    size_t n = 0;
    if (reason != nullptr) {
        while (reason[n] != '\0' && reason[n] != ':' && reason[n] != ';') n++;
        while (n > 0 && reason[n - 1] == ' ') n--;
    }
    if (n >= cap) n = cap - 1;
    if (n > 0) std::memcpy(out, reason, n);
    out[n] = '\0';
    return n;
}

const char* add_tokens(Tokens* t, const char* text) noexcept {
    if (text == nullptr) return nullptr;
    // First pass: check; second: add.
    for (int pass = 0; pass < 2; pass++) {
        int found = 0;
        const char* p = text;
        while (*p != '\0') {
            while (*p == ',' || *p == '\n' || *p == '\r' || *p == ' ' || *p == '\t') p++;
            if (*p == '\0') break;
            const char* start = p;
            while (*p != '\0' && *p != ',' && *p != '\n' && *p != '\r') p++;
            const char* end = p;
            while (end > start && (end[-1] == ' ' || end[-1] == '\t')) end--;
            const size_t len = static_cast<size_t>(end - start);
            if (pass == 0) {
                if (len > kMaxTokenLen) return "A token is longer than 256 bytes.";
                for (size_t i = 0; i < len; i++) {
                    const auto c = static_cast<unsigned char>(start[i]);
                    if (c <= 0x20 || c >= 0x7f)
                        return "A token has a blank, a control character or a byte that is not ASCII.";
                }
                if (++found > kMaxTokens) return "More than two tokens are given.";
            } else {
                std::memcpy(t->token[t->n], start, len);
                t->token[t->n][len] = '\0';
                t->n++;
            }
        }
        if (pass == 0 && t->n + found > 2 * kMaxTokens) return "More than four tokens in all.";
    }
    return nullptr;
}

bool authorized(const Tokens& t, const char* authorization) noexcept {
    if (!t.configured) return true;
    bool ok = false;
    // Every token is compared (no early exit), each in constant time.
    for (int i = 0; i < t.n; i++) ok |= t.token[i][0] != '\0' && bearer_ok(authorization, t.token[i]);
    return ok;
}

const char* parse_listen(const char* text, ListenAddress* out) noexcept {
    if (text == nullptr || text[0] == '\0') return "The value is empty.";
    const char* colon = std::strrchr(text, ':');
    if (colon == nullptr) return "The value has no \":port\".";
    // Port: 1 to 5 digits, 1 to 65535.
    const char* p = colon + 1;
    const size_t plen = std::strlen(p);
    if (plen == 0 || plen > 5) return "The port is not a number from 1 to 65535.";
    int port = 0;
    for (size_t i = 0; i < plen; i++) {
        if (!is_digit(p[i])) return "The port is not a number from 1 to 65535.";
        port = port * 10 + (p[i] - '0');
    }
    if (port < 1 || port > 65535) return "The port is not a number from 1 to 65535.";
    ListenAddress a;
    a.port = port;
    const char* host = text;
    size_t hlen = static_cast<size_t>(colon - text);
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
        host++;
        hlen -= 2;
        a.ipv6 = true;
        if (hlen == 0) return "The IPv6 address between the brackets is empty.";
    } else if (std::memchr(host, ':', hlen) != nullptr) {
        return "An IPv6 address must be written in brackets, as in [::1]:8080.";
    }
    if (hlen >= sizeof(a.host)) return "The host is too long.";
    if (hlen == 0 || (hlen == 9 && std::strncmp(host, "localhost", 9) == 0)) {
        std::memcpy(a.host, "127.0.0.1", 10);
    } else if (hlen == 1 && host[0] == '*') {
        std::memcpy(a.host, "0.0.0.0", 8);
    } else {
        std::memcpy(a.host, host, hlen);
        a.host[hlen] = '\0';
    }
    *out = a;
    return nullptr;
}

AddressKind classify_address(bool ipv6, const unsigned char* b) noexcept {
    if (!ipv6) {
        if (b[0] == 127) return AddressKind::Loopback;
        if (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0) return AddressKind::Wildcard;
        return AddressKind::Other;
    }
    bool zero10 = true;
    for (int i = 0; i < 10; i++) zero10 = zero10 && b[i] == 0;
    bool zero15 = zero10;
    for (int i = 10; i < 15; i++) zero15 = zero15 && b[i] == 0;
    if (zero15 && b[15] == 1) return AddressKind::Loopback;
    if (zero15 && b[15] == 0) return AddressKind::Wildcard;
    if (zero10 && b[10] == 0xff && b[11] == 0xff && b[12] == 127) return AddressKind::Loopback;
    return AddressKind::Other;
}

namespace {

// A dotted-quad IPv4 address, each part 0 to 255.
bool numeric_ipv4(const char* s, size_t n) noexcept {
    int parts = 0, digits = 0, value = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (digits == 0 || value > 255) return false;
            parts++;
            digits = value = 0;
        } else if (is_digit(s[i]) && digits < 3) {
            value = value * 10 + (s[i] - '0');
            digits++;
        } else {
            return false;
        }
    }
    return parts == 4;
}

}  // namespace

bool host_allowed(const char* host, const ListenAddress& listen, AddressKind kind) noexcept {
    if (host == nullptr) return true;
    // The name: "[v6]" or everything before ":port".
    size_t n = std::strlen(host);
    const char* name = host;
    bool bracketed = false;
    if (n > 0 && host[0] == '[') {
        const char* close = std::strchr(host, ']');
        if (close == nullptr) return false;
        name = host + 1;
        n = static_cast<size_t>(close - name);
        bracketed = true;
        if (close[1] != '\0' && close[1] != ':') return false;
    } else if (const char* colon = std::strchr(host, ':')) {
        n = static_cast<size_t>(colon - host);
    }
    if (n == 0) return false;
    if (!bracketed && n == 9 && ascii_iequal(std::string_view(name, 9), "localhost")) return true;
    const size_t ln = std::strlen(listen.host);
    if (bracketed == listen.ipv6 && n == ln && ascii_iequal(std::string_view(name, n), std::string_view(listen.host, n))) return true;
    if (kind == AddressKind::Wildcard) {
        if (bracketed) {
            for (size_t i = 0; i < n; i++) {
                const char c = name[i];
                if (!(is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.'))
                    return false;
            }
            return true;
        }
        return numeric_ipv4(name, n);
    }
    return false;
}

void IdRateLimit::set_rate(int64_t ids_per_s, int64_t now_us) noexcept {
    if (ids_per_s < 0) ids_per_s = 0;
    if (ids_per_s == rate_) return;
    rate_ = ids_per_s;
    level_ = capacity();
    last_us_ = now_us;
}

IdRateLimit::Verdict IdRateLimit::take(int64_t count, int64_t now_us) noexcept {
    Verdict v;
    if (rate_ == 0) return v;
    // Refill: rate_ ids per second is rate_ micro-ids per microsecond. A
    // clock that did not advance adds nothing; a long pause fills it.
    const int64_t elapsed = now_us - last_us_;
    if (elapsed > 0) {
        last_us_ = now_us;
        const int64_t room = capacity() - level_;  // >= 0
        // elapsed * rate_ cannot overflow below room / rate_ + 1.
        level_ = elapsed > room / rate_ ? capacity() : level_ + elapsed * rate_;
    }
    if (level_ < 0) {
        const int64_t wait_us = (-level_ + rate_ - 1) / rate_;
        v.allowed = false;
        v.retry_after_s = (wait_us + 999999) / 1000000;
        if (v.retry_after_s < 1) v.retry_after_s = 1;
        return v;
    }
    level_ -= count * 1000000;
    return v;
}

bool parse_count(int occurrences, const char* value, int32_t* out) noexcept {
    if (occurrences == 0) {
        *out = 1;
        return true;
    }
    if (occurrences != 1 || value == nullptr) return false;
    const size_t n = std::strlen(value);
    if (n == 0 || n > 5) return false;
    int32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(value[i])) return false;
        v = v * 10 + (value[i] - '0');
    }
    if (v < 1 || v > kMaxCount) return false;
    *out = v;
    return true;
}

bool parse_id(const char* text, int64_t* out) noexcept {
    if (text == nullptr) return false;
    const size_t n = std::strlen(text);
    if (n == 0 || n > 19) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(text[i])) return false;
        v = v * 10 + static_cast<uint64_t>(text[i] - '0');  // 19 digits fit in 64 bits
    }
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
    return true;
}

bool bearer_ok(const char* authorization, const char* token) noexcept {
    if (token == nullptr || token[0] == '\0') return true;
    if (authorization == nullptr) return false;
    if (std::strlen(authorization) < 7 || !ascii_iequal(std::string_view(authorization, 7), "bearer ")) return false;
    const char* given = authorization + 7;
    while (*given == ' ') given++;
    // Constant time in the position of the first difference: every byte of
    // the token is compared, and a length mismatch is folded in at the end.
    const size_t want_len = std::strlen(token);
    const size_t given_len = std::strlen(given);
    unsigned diff = given_len == want_len ? 0u : 1u;
    for (size_t i = 0; i < want_len; i++) {
        const unsigned char g = i < given_len ? static_cast<unsigned char>(given[i]) : 0;
        diff |= static_cast<unsigned>(g ^ static_cast<unsigned char>(token[i]));
    }
    return diff == 0;
}

size_t format_ids_json(char* buf, size_t cap, const int64_t* ids, int32_t count) noexcept {
    // The hot path of the endpoint: the ids of a batch are mostly
    // consecutive integers (one run per millisecond), so the decimal text of
    // the previous id is incremented in place instead of formatting each id
    // again. Room is checked once: each id takes at most 22 bytes.
    constexpr char kHead[] = "{\"ids\":[";
    constexpr char kTail[] = "]}";
    if (count < 0 || cap < ids_json_capacity(count)) return 0;
    char* p = buf;
    std::memcpy(p, kHead, sizeof(kHead) - 1);
    p += sizeof(kHead) - 1;
    char digits[24];
    size_t ndigits = 0;
    for (int32_t i = 0; i < count; i++) {
        const bool next = i > 0 && ids[i - 1] != INT64_MAX && ids[i] == ids[i - 1] + 1 && ids[i] > 0;
        if (next) {
            // Add one to the text: carry through the trailing nines.
            size_t k = ndigits;
            while (k > 0 && digits[k - 1] == '9') digits[--k] = '0';
            if (k > 0) {
                digits[k - 1]++;
            } else {
                std::memmove(digits + 1, digits, ndigits);
                digits[0] = '1';
                ndigits++;
            }
        } else {
            const auto r = std::to_chars(digits, digits + sizeof(digits), ids[i]);
            ndigits = static_cast<size_t>(r.ptr - digits);
        }
        if (i > 0) *p++ = ',';
        *p++ = '"';
        std::memcpy(p, digits, ndigits);
        p += ndigits;
        *p++ = '"';
    }
    std::memcpy(p, kTail, sizeof(kTail) - 1);
    p += sizeof(kTail) - 1;
    *p = '\0';
    return static_cast<size_t>(p - buf);
}

size_t format_uuids_json(char* buf, size_t cap, const Uuid* uuids, int32_t count) noexcept {
    Writer w(buf, cap);
    w.str("{\"uuids\":[");
    char text[37];
    for (int32_t i = 0; i < count; i++) {
        if (i > 0) w.ch(',');
        format_uuid(text, uuids[i]);
        w.ch('"');
        w.raw(text, 36);
        w.ch('"');
    }
    w.str("]}");
    return w.finish();
}

size_t format_decoded_json(char* buf, size_t cap, int64_t id, int64_t epoch_unix_ms) noexcept {
    const Fields f = decompose(id);
    char ts[40];
    if (format_rfc3339_ms(ts, sizeof(ts), epoch_unix_ms + f.ms) == 0) return 0;
    Writer w(buf, cap);
    w.str("{\"id\":\"");
    w.i64(id);
    w.str("\",\"timestamp\":\"");
    w.str(ts);
    w.str("\",\"worker_id\":");
    w.i64(f.worker);
    w.str(",\"sequence\":");
    w.i64(f.sequence);
    w.ch('}');
    return w.finish();
}

size_t format_error_json(char* buf, size_t cap, const char* code, const char* message,
                         const char* detail, const char* hint) noexcept {
    Writer w(buf, cap);
    w.str("{\"code\":");
    w.json_string(code != nullptr ? code : "");
    w.str(",\"message\":");
    w.json_string(message != nullptr ? message : "");
    if (detail != nullptr && detail[0] != '\0') {
        w.str(",\"detail\":");
        w.json_string(detail);
    }
    if (hint != nullptr && hint[0] != '\0') {
        w.str(",\"hint\":");
        w.json_string(hint);
    }
    w.ch('}');
    return w.finish();
}

size_t format_health_json(char* buf, size_t cap, bool ready, const char* code,
                          const char* reason) noexcept {
    Writer w(buf, cap);
    if (ready) {
        w.str("{\"status\":\"ok\"}");
    } else {
        w.str("{\"status\":\"unavailable\",\"code\":");
        w.json_string(code != nullptr ? code : "");
        w.str(",\"reason\":");
        w.json_string(reason != nullptr ? reason : "");
        w.ch('}');
    }
    return w.finish();
}

namespace {

// One metric: HELP naming the snowflake_stats column (or "health"), TYPE,
// and one sample unless the value is missing (a NULL column).
void metric_head(Writer& w, const char* name, const char* type, const char* help,
                 const char* column) {
    w.str("# HELP ");
    w.str(name);
    w.ch(' ');
    w.str(help);
    if (column != nullptr) {
        w.str(" (snowflake_stats.");
        w.str(column);
        w.ch(')');
    }
    w.str("\n# TYPE ");
    w.str(name);
    w.ch(' ');
    w.str(type);
    w.ch('\n');
}

void counter(Writer& w, const char* name, const char* help, const char* column, uint64_t v) {
    metric_head(w, name, "counter", help, column);
    w.str(name);
    w.ch(' ');
    w.u64(v);
    w.ch('\n');
}

void gauge_int(Writer& w, const char* name, const char* help, const char* column, int64_t v) {
    metric_head(w, name, "gauge", help, column);
    w.str(name);
    w.ch(' ');
    w.i64(v);
    w.ch('\n');
}

// A gauge in seconds from milliseconds; no sample when present is false.
void gauge_seconds(Writer& w, const char* name, const char* help, const char* column, int64_t ms,
                   bool present = true) {
    metric_head(w, name, "gauge", help, column);
    if (!present) return;
    w.str(name);
    w.ch(' ');
    w.seconds_from_ms(ms);
    w.ch('\n');
}

void request_metrics(Writer& w, const RequestStats& r) {
    constexpr Endpoint kAll[] = {Endpoint::IdsBatch, Endpoint::IdDecode, Endpoint::UuidsBatch,
                                 Endpoint::Livez,    Endpoint::Readyz,   Endpoint::Metrics,
                                 Endpoint::NotFound};
    metric_head(w, "snowflake_http_requests_total", "counter",
                "Requests the HTTP endpoint answered since its worker started, by endpoint and status code.",
                nullptr);
    for (const Endpoint e : kAll) {
        for (const RequestStats::CodeCount& c : r.of(e).codes) {
            if (c.status == 0) continue;
            w.str("snowflake_http_requests_total{endpoint=\"");
            w.str(endpoint_name(e));
            w.str("\",code=\"");
            if (c.status > 0)
                w.i64(c.status);
            else
                w.str("other");
            w.str("\"} ");
            w.u64(c.count);
            w.ch('\n');
        }
    }
    counter(w, "snowflake_http_ids_issued_total",
            "Ids the HTTP endpoint handed out since its worker started (a share of snowflake_ids_issued_total).",
            nullptr, r.ids());
    counter(w, "snowflake_http_uuids_issued_total",
            "UUIDv7 values the HTTP endpoint handed out since its worker started.", nullptr, r.uuids());
    metric_head(w, "snowflake_http_request_duration_seconds", "histogram",
                "Time the HTTP endpoint took to decide and queue each answer, by endpoint.", nullptr);
    for (const Endpoint e : kAll) {
        const RequestStats::PerEndpoint& p = r.of(e);
        uint64_t cumulative = 0;
        for (int i = 0; i <= kDurationBuckets; i++) {
            w.str("snowflake_http_request_duration_seconds_bucket{endpoint=\"");
            w.str(endpoint_name(e));
            w.str("\",le=\"");
            if (i < kDurationBuckets) {
                cumulative += p.buckets[i];
                w.seconds_from_us(kDurationBucketsUs[i]);
            } else {
                cumulative = p.count;
                w.str("+Inf");
            }
            w.str("\"} ");
            w.u64(cumulative);
            w.ch('\n');
        }
        w.str("snowflake_http_request_duration_seconds_sum{endpoint=\"");
        w.str(endpoint_name(e));
        w.str("\"} ");
        w.seconds_from_us(p.sum_us);
        w.str("\nsnowflake_http_request_duration_seconds_count{endpoint=\"");
        w.str(endpoint_name(e));
        w.str("\"} ");
        w.u64(p.count);
        w.ch('\n');
    }
}

}  // namespace

const char* endpoint_name(Endpoint e) noexcept {
    switch (e) {
        case Endpoint::IdsBatch: return "ids_batch";
        case Endpoint::IdDecode: return "id_decode";
        case Endpoint::UuidsBatch: return "uuids_batch";
        case Endpoint::Livez: return "livez";
        case Endpoint::Readyz: return "readyz";
        case Endpoint::Metrics: return "metrics";
        case Endpoint::NotFound: return "not_found";
    }
    return "not_found";
}

void RequestStats::record(Endpoint e, int status, int64_t duration_us) noexcept {
    const int i = static_cast<int>(e);
    if (i < 0 || i >= kEndpointCount) return;
    PerEndpoint& p = per_[i];
    if (status < 100 || status > 599) status = -1;
    // The code's slot or a free one; the last slot is kept for "other".
    CodeCount* slot = &p.codes[kMaxCodes - 1];
    for (int k = 0; k < kMaxCodes - 1; k++) {
        if (p.codes[k].status == status || p.codes[k].status == 0) {
            slot = &p.codes[k];
            break;
        }
    }
    if (slot == &p.codes[kMaxCodes - 1]) status = -1;
    slot->status = status;
    slot->count++;
    if (duration_us < 0) duration_us = 0;
    int b = 0;
    while (b < kDurationBuckets && duration_us > kDurationBucketsUs[b]) b++;
    if (b < kDurationBuckets) p.buckets[b]++;
    p.count++;
    p.sum_us += duration_us;
}

size_t format_metrics(char* buf, size_t cap, const StatsSnapshot& s, const Health& h) noexcept {
    Writer w(buf, cap);
    const int64_t epoch_ms = floor_div(s.epoch_unix_us, 1000);
    char epoch_text[40];
    if (format_rfc3339_ms(epoch_text, sizeof(epoch_text), epoch_ms) == 0) return 0;

    // Identity: the worker id as a label, and as a value (-1 while unset).
    metric_head(w, "snowflake_info", "gauge", "Always 1; the labels name this node's worker id and epoch.",
                nullptr);
    w.str("snowflake_info{worker_id=\"");
    if (s.worker_id >= 0) w.i64(s.worker_id);
    w.str("\",epoch=\"");
    w.str(epoch_text);
    w.str("\"} 1\n");
    metric_head(w, "snowflake_build_info", "gauge", "Always 1; the label is the version of the snowflake library loaded.",
                nullptr);
    w.str("snowflake_build_info{version=\"");
    w.label_value(h.version != nullptr ? h.version : "");
    w.str("\"} 1\n");
    gauge_seconds(w, "process_start_time_seconds", "Start time of the PostgreSQL server, Unix time.", nullptr,
                  floor_div(s.server_start_unix_us, 1000), s.server_start_unix_us > 0);
    gauge_int(w, "snowflake_worker_id", "Worker id of this node, -1 while unset.", "worker_id",
              s.worker_id);
    gauge_seconds(w, "snowflake_epoch_seconds", "Start of the id range, Unix time.", "epoch", epoch_ms);

    counter(w, "snowflake_ids_issued_total", "Ids issued by this node.", "ids_issued", s.ids_issued);
    gauge_seconds(w, "snowflake_last_id_timestamp_seconds", "Time of the last id issued, Unix time.",
                  "last_timestamp", epoch_ms + s.last_ms, s.last_ms >= 0);
    counter(w, "snowflake_overflow_waits_total",
            "Calls that waited because a millisecond's 4096 ids were used up.", "overflow_waits",
            s.generator.overflow_waits);
    counter(w, "snowflake_clock_backwards_events_total",
            "Calls that found the clock behind the last id.", "clock_backwards_events",
            s.generator.clock_backwards_events);
    gauge_seconds(w, "snowflake_clock_backwards_max_seconds",
                  "Largest distance the clock was seen behind the last id.", "clock_backwards_max_ms",
                  s.generator.clock_backwards_max_ms);
    counter(w, "snowflake_clock_backwards_errors_total",
            "Calls refused because the clock was behind beyond snowflake.clock_tolerance_ms.",
            "clock_backwards_errors", s.generator.clock_backwards_errors);
    gauge_seconds(w, "snowflake_stats_since_timestamp_seconds",
                  "When the counters started (server start or snowflake_stats_reset()), Unix time.",
                  "since", floor_div(s.since_unix_us, 1000));
    gauge_seconds(w, "snowflake_high_water_mark_timestamp_seconds",
                  "End of the durable reservation: ids may be issued up to this time, Unix time.",
                  "high_water_mark", epoch_ms + s.reserved_until_ms, s.reserved_until_ms >= 0);
    counter(w, "snowflake_reservations_total", "Times the reservation was extended on disk.",
            "reservations", s.generator.reservations);
    counter(w, "snowflake_reservation_waits_total", "Id requests that waited for a reservation.",
            "reservation_waits", s.reservation_waits);
    counter(w, "snowflake_startup_waits_total",
            "Calls held back by the high-water mark of the previous run.", "startup_waits",
            s.generator.startup_waits);
    gauge_seconds(w, "snowflake_reservation_window_seconds", "Reservation window in force.",
                  "reservation_window_ms", static_cast<int64_t>(s.reservation_window_ms));
    gauge_seconds(w, "snowflake_last_mark_write_seconds", "Duration of the last mark write.",
                  "last_mark_write_ms", static_cast<int64_t>(s.last_mark_write_ms));

    // The worker-id lease (static: no etcd). The lease id is a label: as a
    // sample value (a float) Prometheus would round it.
    metric_head(w, "snowflake_lease_info", "gauge",
                "Always 1; the labels name the lease state (static, acquiring, held, expired or "
                "standby) and the etcd lease id (empty for none).",
                "lease_state, snowflake_stats.lease_id");
    w.str("snowflake_lease_info{state=\"");
    w.str(lease_state_name(s.lease_state));
    w.str("\",lease_id=\"");
    if (s.lease_id != 0) w.i64(s.lease_id);
    w.str("\"} 1\n");
    gauge_seconds(w, "snowflake_lease_deadline_timestamp_seconds",
                  "Ids are refused after this time unless a keepalive is confirmed, Unix time.",
                  "lease_deadline", floor_div(s.lease_deadline_unix_us, 1000), s.lease_deadline_unix_us >= 0);
    counter(w, "snowflake_lease_renewals_total", "Keepalives etcd confirmed.", "lease_renewals",
            s.lease_renewals);
    counter(w, "snowflake_lease_failures_total", "Failed etcd calls.", "lease_failures", s.lease_failures);
    // The kind of the last failure, a bounded word; its sentence is in
    // snowflake_stats and the server log, never in a label.
    metric_head(w, "snowflake_lease_last_error_info", "gauge",
                "Always 1 while no lease is held after a failure; the reason label is the kind of the "
                "last failure (grant, list_workers, claim, read_mark, keepalive, revoke, held_by_other, "
                "previous_run, lease_gone, deadline_passed); the text is in the column",
                "lease_last_error");
    if (s.lease_last_error_reason != LeaseError::None &&
        (s.lease_state == LeaseState::Acquiring || s.lease_state == LeaseState::Expired)) {
        w.str("snowflake_lease_last_error_info{reason=\"");
        w.str(lease_error_name(s.lease_last_error_reason));
        w.str("\"} 1\n");
    }
    // Clock health as the kernel reports it.
    metric_head(w, "snowflake_clock_synchronized", "gauge",
                "1 when the kernel reports the clock synchronised, 0 when not.", "clock_synchronized");
    if (s.clock_known) {
        w.str("snowflake_clock_synchronized ");
        w.i64(s.clock_synchronized ? 1 : 0);
        w.ch('\n');
    }
    gauge_seconds(w, "snowflake_clock_max_error_seconds", "Maximum clock error the kernel reports.",
                  "clock_max_error_ms", (s.clock_max_error_us + 999) / 1000, s.clock_max_error_us >= 0);
    gauge_seconds(w, "snowflake_clock_est_error_seconds", "Estimated clock error the kernel reports.",
                  "clock_est_error_ms", (s.clock_est_error_us + 999) / 1000, s.clock_est_error_us >= 0);
    counter(w, "snowflake_clock_health_refusals_total",
            "Calls refused by snowflake.max_clock_error_ms.", "clock_health_refusals",
            s.clock_health_refusals);

    // Refusals and failed mark writes, since the server started (not reset
    // by snowflake_stats_reset()).
    metric_head(w, "snowflake_ids_refused_total", "counter",
                "Calls refused ids since the server started, by cause and SQLSTATE of the error.", nullptr);
    for (int i = 0; i < kRefusalCount; i++) {
        w.str("snowflake_ids_refused_total{cause=\"");
        w.str(kRefusalCause[i]);
        w.str("\",sqlstate=\"");
        w.str(kRefusalSqlstate[i]);
        w.str("\"} ");
        w.u64(s.refusals[i]);
        w.ch('\n');
    }
    metric_head(w, "snowflake_mark_write_failures_total", "counter",
                "Writes of the high-water mark that failed since the server started: the mark file "
                "(mark=\"file\") and the worker id's mark in etcd (mark=\"etcd\").",
                nullptr);
    w.str("snowflake_mark_write_failures_total{mark=\"file\"} ");
    w.u64(s.mark_write_failures);
    w.str("\nsnowflake_mark_write_failures_total{mark=\"etcd\"} ");
    w.u64(s.etcd_mark_write_failures);
    w.ch('\n');

    // Health, computed when scraped.
    gauge_int(w, "snowflake_ready", "1 when this node can issue ids now (what /healthz says), else 0.",
              nullptr, h.ready ? 1 : 0);
    const int64_t behind = s.last_ms >= 0 && h.now_ms < s.last_ms ? s.last_ms - h.now_ms : 0;
    gauge_seconds(w, "snowflake_clock_behind_last_id_seconds",
                  "How far the clock is behind the last id issued (0 when it is not).", nullptr,
                  behind);
    if (h.requests != nullptr) request_metrics(w, *h.requests);
    return w.finish();
}

// --- time limits on clients -------------------------------------------------

int ClientClocks::open(int64_t now_ms) noexcept {
    int admitted = 0;
    for (const Slot& s : slots_) admitted += s.used && s.admitted ? 1 : 0;
    for (int i = 0; i < kSlots; i++) {
        if (!slots_[i].used) {
            slots_[i] = Slot{true, true, false, admitted < kMaxConnections, now_ms};
            return i;
        }
    }
    return -1;
}

bool ClientClocks::admitted(int slot) const noexcept {
    return slot >= 0 && slot < kSlots && slots_[slot].used && slots_[slot].admitted;
}

void ClientClocks::client_turn(int slot, int64_t now_ms) noexcept {
    if (slot < 0 || slot >= kSlots || !slots_[slot].used) return;
    slots_[slot].timed = true;
    slots_[slot].reported = false;
    slots_[slot].since_ms = now_ms;
}

void ClientClocks::server_turn(int slot) noexcept {
    if (slot < 0 || slot >= kSlots || !slots_[slot].used) return;
    slots_[slot].timed = false;
    slots_[slot].reported = false;
}

void ClientClocks::close(int slot) noexcept {
    if (slot < 0 || slot >= kSlots) return;
    slots_[slot] = Slot{};
}

int ClientClocks::overdue(int64_t now_ms, int* out, int cap) noexcept {
    int n = 0;
    for (int i = 0; i < kSlots && n < cap; i++) {
        Slot& s = slots_[i];
        const int64_t limit = s.admitted ? kClientTurnLimitMs : kSpareTurnLimitMs;
        if (s.used && s.timed && !s.reported && now_ms - s.since_ms > limit) {
            s.reported = true;
            out[n++] = i;
        }
    }
    return n;
}

int ClientClocks::in_use() const noexcept {
    int n = 0;
    for (const Slot& s : slots_) n += s.used ? 1 : 0;
    return n;
}

}  // namespace snowflake::core::http
