// Request handling of the HTTP endpoint (src/pg/http_worker.cpp), pure so
// that it is unit-tested without a server: routing, the count and id
// parameters, the Bearer token and Host checks, the listen address, and the
// JSON answers. Beside it: http_request.hpp (the order of those checks and
// the refusals they answer with), http_limits.hpp (client timers and the ids
// ceiling, time passed in) and prometheus.hpp (the /metrics text).
//
// The HTTP protocol itself (request line, headers, keep-alive, percent
// decoding of the path and the query) is libmicrohttpd's; nothing here parses
// HTTP or JSON. Output is written into caller-provided buffers: nothing here
// allocates (the extension is built without exceptions, where a failed
// allocation would abort the process), and a buffer that is too small gives
// a length of 0, never a truncated document.
#pragma once

#include "pure.hpp"

#include "layout.hpp"  // Geometry
#include "text.hpp"     // format_uuid
#include "text_id.hpp"  // TextFormat
#include "time.hpp"  // format_rfc3339_ms
#include "uuid.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core::http {

// The largest count of one batch request.
constexpr int32_t kMaxCount = 10000;

// Decimal digits of a positive number.
constexpr size_t decimal_digits(int64_t v) noexcept { return v < 10 ? 1 : 1 + decimal_digits(v / 10); }

// The message of the 400 answer to a bad count, "count must be a number from
// 1 to 10000", written from kMaxCount.
struct CountMessage {
    char text[64] = {};
};
constexpr CountMessage make_count_message() noexcept {
    CountMessage m;
    constexpr char kHead[] = "count must be a number from 1 to ";
    size_t n = 0;
    for (; kHead[n] != '\0'; n++) m.text[n] = kHead[n];
    const size_t digits = decimal_digits(kMaxCount);
    int64_t v = kMaxCount;
    for (size_t k = digits; k > 0; k--, v /= 10) m.text[n + k - 1] = static_cast<char>('0' + v % 10);
    return m;
}
inline constexpr CountMessage kCountMessage = make_count_message();

// Livez: the worker answers. Readyz (also /healthz): ids can be issued now.
enum class Endpoint { IdsBatch, IdDecode, UuidsBatch, Livez, Readyz, Metrics, NotFound };

struct Route {
    Endpoint endpoint = Endpoint::NotFound;
    // GET; HEAD too where a request changes nothing (not the batches, which
    // would use up ids for a body nobody reads).
    bool method_allowed = false;
    const char* id_text = nullptr;  // IdDecode: the path after "/v1/ids/"
};

// method and path as libmicrohttpd gives them (the path percent-decoded, no
// query string). "/healthz" is "/readyz". A path with more segments below
// "/v1/ids/" ("/v1/ids/batch/", "/v1/ids/1/") is NotFound, not an id.
Route route(const char* method, const char* path) noexcept;

// The Allow header of a 405 answer.
constexpr const char* allowed_methods(Endpoint e) noexcept {
    return e == Endpoint::IdsBatch || e == Endpoint::UuidsBatch ? "GET" : "GET, HEAD";
}

// Every path but the health probes needs the token when one is set.
constexpr bool needs_token(Endpoint e) noexcept { return e != Endpoint::Livez && e != Endpoint::Readyz; }

// The query parameters: an endpoint takes only its own ("count" on the
// batches, "format" on /v1/ids/batch and /v1/ids/{id}, none elsewhere),
// each at most once. check_query() looks at the
// names in the order given (the caller passes at most a few dozen: with one
// name allowed, the first offender is always among them) and names the
// first one that is unknown, or known and repeated.
struct QueryVerdict {
    enum class Kind { Ok, Unknown, Repeated } kind = Kind::Ok;
    const char* name = nullptr;  // one of the names given
};
QueryVerdict check_query(Endpoint e, const char* const* names, int n) noexcept;

// A request body on a GET or HEAD (refused with 400): a Transfer-Encoding
// header, or a Content-Length other than 0. Each argument may be nullptr.
bool has_body(const char* content_length, const char* transfer_encoding) noexcept;

// Whether the answer keeps the connection open, as libmicrohttpd decides it:
// HTTP/1.1 unless "Connection: close"; HTTP/1.0 with "Connection:
// keep-alive"; never when the server closes. Such answers say "Keep-Alive:
// timeout=<kIdleTimeoutS>".
constexpr unsigned kIdleTimeoutS = 10;
bool keeps_alive(const char* version, const char* connection, bool server_closes) noexcept;

// The reason /readyz gives without the token: the reason up to its first
// ':' or ';' (what is wrong, without the etcd endpoints, errors and the
// lease holder's host, port and system identifier that follow). Writes into
// out (cap > 0), returns the length.
size_t short_reason(char* out, size_t cap, const char* reason) noexcept;

// --- tokens -----------------------------------------------------------------

// The accepted Bearer tokens: up to kMaxTokens (the old and the new one
// during a rotation) from snowflake.http_token (comma-separated) and as many
// from snowflake.http_token_file (one per line, or comma-separated).
// configured: a token is asked for (even when none could be read: then
// nothing is accepted).
constexpr int kMaxTokens = 2;
constexpr size_t kMaxTokenLen = 256;
struct Tokens {
    bool configured = false;
    int n = 0;
    char token[2 * kMaxTokens][kMaxTokenLen + 1] = {};
};
// Adds the tokens of text (separators: commas and line ends; blanks around
// a token are dropped; empty entries skipped). nullptr, or why the text is
// refused (more than kMaxTokens, too long, a byte that is not visible ASCII);
// then nothing is added.
const char* add_tokens(Tokens* t, const char* text) noexcept;
// The Authorization header against the tokens: true when none is configured
// or the header is "Bearer <one of them>" (scheme in any case, one or more
// spaces). Each comparison takes the same time wherever the first differing
// byte is.
bool authorized(const Tokens& t, const char* authorization) noexcept;

// snowflake.http_token_file (read by src/pg/token_file.cpp): at most
// kMaxTokenFileBytes, a regular file owned by the server's user or root that
// its owner alone may read or write. What makes the file unusable from what
// fstat() told, in that order, or nullptr.
constexpr size_t kMaxTokenFileBytes = 4096;
const char* token_file_problem(bool regular, bool owned_by_server_or_root, bool open_to_others) noexcept;

// The count parameter: occurrences of "count" in the query, and the first
// one's value (nullptr for "?count" without "="). Absent: 1. Accepted: decimal
// digits (at most as many as kMaxCount has), value 1 to kMaxCount; anything else (sign, blanks, junk
// after the digits, repeated parameter) is refused.
bool parse_count(int occurrences, const char* value, int32_t* out) noexcept;

// A Snowflake id in a path: 1 to 19 decimal digits, at most INT64_MAX.
bool parse_id(const char* text, int64_t* out) noexcept;

// The format parameter of /v1/ids/batch and /v1/ids/{id}: occurrences of
// "format" in the query and the first one's value (nullptr for "?format"
// without "="). Absent: decimal. Accepted: "decimal", "base32", "base62"
// exactly (core::parse_text_format); a format is never guessed from an id.
bool takes_format(Endpoint e) noexcept;
bool parse_format(int occurrences, const char* value, TextFormat* out) noexcept;
// The message and hint of the 400 answer to a bad format.
inline constexpr const char* kFormatMessage = "format must be decimal, base32 or base62";
inline constexpr const char* kFormatHint =
    "Give format at most once, in lower case: decimal (the default), base32 or base62; a text "
    "format is never guessed from the id.";

// The {id} of /v1/ids/{id} in the format of its query (decimal: as
// parse_id). False, and the 400 answer's message, detail ("At character 3:
// not a base62 character (0-9, A-Z, a-z)." or the text as a whole) and hint
// (what an id of the format looks like) in *err.
struct IdTextError {
    const char* message = "";
    char detail[160] = {};
    const char* hint = "";
};
bool parse_id_text(const char* text, TextFormat f, int64_t* out, IdTextError* err) noexcept;

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

// What the listen address is (its bytes as inet_pton gives them): loopback
// (127.0.0.0/8, ::1, ::ffff:127.x.y.z), a wildcard (0.0.0.0, ::), or other.
enum class AddressKind { Loopback, Wildcard, Other };
AddressKind classify_address(bool ipv6, const unsigned char* bytes) noexcept;

// Safe defaults: beyond loopback the endpoint needs a token unless
// snowflake.http_allow_unauthenticated is on.
constexpr bool exposure_allowed(AddressKind k, bool token_configured, bool allow_unauthenticated) noexcept {
    return k == AddressKind::Loopback || token_configured || allow_unauthenticated;
}

// Without a token, the Host header must name the listen address or
// localhost (any case, any port), so that a web page whose name an attacker
// points at this address (DNS rebinding) is refused. On a wildcard address,
// any numeric address is accepted (a rebinding always has a name). A missing
// Host (HTTP/1.0) is accepted.
bool host_allowed(const char* host, const ListenAddress& listen, AddressKind kind) noexcept;

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
// The same with the ids in a text format: {"ids":["070FNENJ40W00"]} (base32),
// {"ids":["0IfbtDtw5i4"]} (base62); decimal is the function above. Room:
// ids_json_capacity(count), as for decimal (the longest form).
size_t format_ids_json(char* buf, size_t cap, const int64_t* ids, int32_t count, TextFormat f) noexcept;
// {"uuids":["0190...","..."]}
size_t format_uuids_json(char* buf, size_t cap, const Uuid* uuids, int32_t count) noexcept;
// {"id":"...","timestamp":"2025-01-01T00:00:00.000Z","worker_id":N,"sequence":N,
//  "ms_since_epoch":N,"base32":"...","base62":"..."} under the epoch given in
// Unix milliseconds: the decoded-id vocabulary (docs/reference.md, "Decoded
// ids") that the inspector's JSON shares, and the id's text forms.
size_t format_decoded_json(char* buf, size_t cap, int64_t id, int64_t epoch_unix_ms,
                           const Geometry& g = kTwitter) noexcept;
// {"code":"SF001","message":"...","detail":"...","hint":"..."}; detail and
// hint may be nullptr or empty (left out). Strings are escaped; bytes that
// are not UTF-8 become U+FFFD.
size_t format_error_json(char* buf, size_t cap, const char* code, const char* message,
                         const char* detail, const char* hint) noexcept;
// {"status":"ok"} or {"status":"unavailable","code":"...","reason":"..."}
size_t format_health_json(char* buf, size_t cap, bool ready, const char* code,
                          const char* reason) noexcept;

// --- endpoints as labels ---------------------------------------------------

// "ids_batch", "id_decode", "uuids_batch", "healthz", "metrics", "not_found":
// the endpoint label of the request metrics.
const char* endpoint_name(Endpoint e) noexcept;
constexpr int kEndpointCount = static_cast<int>(Endpoint::NotFound) + 1;

}  // namespace snowflake::core::http
