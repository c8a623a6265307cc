// Routing, request checks, tokens and the JSON answers of the HTTP endpoint;
// see http_api.hpp.
#include "http_api.hpp"

#include "ascii.hpp"
#include "layout.hpp"
#include "text.hpp"
#include "time.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace snowflake::core::http {
namespace {

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
    const bool format_taken = takes_format(e);
    bool count_seen = false, format_seen = false;
    for (int i = 0; i < n; i++) {
        const char* name = names[i] != nullptr ? names[i] : "";
        const bool is_count = takes_count && std::strcmp(name, "count") == 0;
        const bool is_format = format_taken && std::strcmp(name, "format") == 0;
        if (is_count || is_format) {
            bool& seen = is_count ? count_seen : format_seen;
            if (seen) {
                v.kind = QueryVerdict::Kind::Repeated;
                v.name = name;
                return v;
            }
            seen = true;
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

const char* token_file_problem(bool regular, bool owned_by_server_or_root, bool open_to_others) noexcept {
    if (!regular) return "It is not a regular file.";
    if (!owned_by_server_or_root) return "It is owned by neither the server's user nor root.";
    if (open_to_others) return "It is readable or writable by group or others; allow its owner only (chmod 600).";
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

bool parse_count(int occurrences, const char* value, int32_t* out) noexcept {
    if (occurrences == 0) {
        *out = 1;
        return true;
    }
    if (occurrences != 1 || value == nullptr) return false;
    const size_t n = std::strlen(value);
    if (n == 0 || n > decimal_digits(kMaxCount)) return false;
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

bool takes_format(Endpoint e) noexcept { return e == Endpoint::IdsBatch || e == Endpoint::IdDecode; }

bool parse_format(int occurrences, const char* value, TextFormat* out) noexcept {
    if (occurrences == 0) {
        *out = TextFormat::Decimal;
        return true;
    }
    return occurrences == 1 && value != nullptr && parse_text_format(value, out);
}

bool parse_id_text(const char* text, TextFormat f, int64_t* out, IdTextError* err) noexcept {
    const std::string_view t = text != nullptr ? std::string_view(text) : std::string_view();
    TextError why;
    if (decode_id(t, f, out, &why)) return true;
    switch (f) {
        case TextFormat::Decimal:
            err->message = "invalid snowflake id";
            err->hint = "Give the id in the path as decimal digits, 0 to 9223372036854775807; a base32 or "
                        "base62 id with ?format=base32 or ?format=base62.";
            break;
        case TextFormat::Base32:
            err->message = "invalid base32 id";
            err->hint = "A base32 id is 13 characters of 0-9 and A-Z without I, L, O, U (either case; hyphens "
                        "are ignored) whose first is at most 7, as /v1/ids/batch?format=base32 gives.";
            break;
        case TextFormat::Base62:
            err->message = "invalid base62 id";
            err->hint = "A base62 id is 11 characters of 0-9, A-Z and a-z, at most AzL8n0Y58m7, as "
                        "/v1/ids/batch?format=base62 gives.";
            break;
    }
    // Every byte before the offending one is ASCII (digits, letters of the
    // alphabet, hyphens): its offset + 1 is the character's position.
    if (why.at >= 0)
        std::snprintf(err->detail, sizeof(err->detail), "At character %d: %s.", why.at + 1, why.sentence);
    else
        std::snprintf(err->detail, sizeof(err->detail), "The text as a whole: %s.", why.sentence);
    return false;
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

size_t format_ids_json(char* buf, size_t cap, const int64_t* ids, int32_t count, TextFormat f) noexcept {
    if (f == TextFormat::Decimal) return format_ids_json(buf, cap, ids, count);
    if (count < 0 || cap < ids_json_capacity(count)) return 0;
    BufWriter w(buf, cap);
    w.str("{\"ids\":[");
    char text[kMaxIdTextChars];
    for (int32_t i = 0; i < count; i++) {
        if (i > 0) w.ch(',');
        w.ch('"');
        w.raw(text, write_id_text(text, sizeof(text), ids[i], f));
        w.ch('"');
    }
    w.str("]}");
    return w.finish();
}

size_t format_uuids_json(char* buf, size_t cap, const Uuid* uuids, int32_t count) noexcept {
    BufWriter w(buf, cap);
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

size_t format_decoded_json(char* buf, size_t cap, int64_t id, int64_t epoch_unix_ms, const Geometry& g) noexcept {
    const Fields f = decompose(g, id);
    char ts[40];
    if (format_rfc3339_ms(ts, sizeof(ts), epoch_unix_ms + f.ms) == 0) return 0;
    BufWriter w(buf, cap);
    w.str("{\"id\":\"");
    w.i64(id);
    w.str("\",\"timestamp\":\"");
    w.str(ts);
    w.str("\",\"worker_id\":");
    w.i64(f.worker);
    w.str(",\"sequence\":");
    w.i64(f.sequence);
    w.str(",\"ms_since_epoch\":");
    w.i64(f.ms);
    char text[kMaxIdTextChars];
    w.str(",\"base32\":\"");
    w.raw(text, write_id_text(text, sizeof(text), id, TextFormat::Base32));
    w.str("\",\"base62\":\"");
    w.raw(text, write_id_text(text, sizeof(text), id, TextFormat::Base62));
    w.str("\"}");
    return w.finish();
}

size_t format_error_json(char* buf, size_t cap, const char* code, const char* message,
                         const char* detail, const char* hint) noexcept {
    BufWriter w(buf, cap);
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
    BufWriter w(buf, cap);
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

}  // namespace snowflake::core::http
