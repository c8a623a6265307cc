// Text shared by the HTTP endpoint (http_api.cpp) and snowflake-inspect
// (src/inspect): JSON string literals and the text form of a UUID. One copy
// of each, so the two surfaces escape and spell values the same way.
#pragma once

#include "pure.hpp"

#include "uuid.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace snowflake::core {

// Length of the well-formed UTF-8 sequence at p, of which n bytes are
// readable (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF),
// or 0 when it is not one.
size_t utf8_sequence_length(const unsigned char* p, size_t n) noexcept;

// Writes s as a JSON string literal, quotes included, through
// out(const char* bytes, size_t len): quotes, backslashes and control
// characters (and DEL) escaped, bytes that are not well-formed UTF-8
// replaced with U+FFFD. The writer decides where the text goes (a fixed
// buffer in the HTTP endpoint, a std::string in the inspector).
template <class Out>
void write_json_string(std::string_view s, Out&& out) noexcept {
    static constexpr char kHex[] = "0123456789abcdef";
    out("\"", 1);
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            const char esc[2] = {'\\', static_cast<char>(c)};
            out(esc, 2);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
            out(esc, 6);
            i++;
        } else if (c < 0x80) {
            out(reinterpret_cast<const char*>(p + i), 1);
            i++;
        } else if (const size_t n = utf8_sequence_length(p + i, s.size() - i); n > 0) {
            out(reinterpret_cast<const char*>(p + i), n);
            i += n;
        } else {
            out("\\ufffd", 6);
            i++;
        }
    }
    out("\"", 1);
}

// Appends to a caller-provided buffer without allocating (the HTTP
// endpoint's answers); once something does not fit, everything after it is
// dropped and finish() returns 0, never a truncated document.
struct BufWriter {
    char* buf;
    size_t cap;
    size_t len = 0;
    bool overflow = false;

    BufWriter(char* b, size_t c) noexcept : buf(b), cap(c) {}

    // Appends n bytes.
    void raw(const char* s, size_t n) noexcept {
        if (overflow || n > cap - len) {
            overflow = true;
            return;
        }
        std::memcpy(buf + len, s, n);
        len += n;
    }
    // Appends a NUL-terminated string.
    void str(const char* s) noexcept { raw(s, std::strlen(s)); }
    // Appends one byte.
    void ch(char c) noexcept { raw(&c, 1); }
    // Appends a signed decimal.
    void i64(int64_t v) noexcept {
        char tmp[24];
        const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
        raw(tmp, static_cast<size_t>(r.ptr - tmp));
    }
    // Appends an unsigned decimal.
    void u64(uint64_t v) noexcept {
        char tmp[24];
        const auto r = std::to_chars(tmp, tmp + sizeof(tmp), v);
        raw(tmp, static_cast<size_t>(r.ptr - tmp));
    }
    // Appends a JSON string literal (write_json_string).
    void json_string(const char* s) noexcept {
        write_json_string(s, [this](const char* bytes, size_t n) { raw(bytes, n); });
    }
    // NUL-terminates; the length, or 0 if anything did not fit.
    size_t finish() noexcept {
        if (overflow || len >= cap) return 0;
        buf[len] = '\0';
        return len;
    }
};

// The same into a new string.
std::string json_string(std::string_view s) noexcept;

// Canonical 8-4-4-4-12 lower-case text of a UUID, 36 bytes plus NUL.
constexpr size_t kUuidTextLen = 36;
void format_uuid(char* out37, const Uuid& u) noexcept;

// 32 hexadecimal digits (any case), plain or as 8-4-4-4-12, optionally in
// braces, into *out; false when s is not of that form (*out then undefined).
bool parse_uuid_text(std::string_view s, Uuid* out) noexcept;

}  // namespace snowflake::core
