// JSON string literals and UUID text; see text.hpp.
#include "text.hpp"

namespace snowflake::core {

size_t utf8_sequence_length(const unsigned char* p, size_t n) noexcept {
    if (n == 0) return 0;
    const unsigned char c = p[0];
    auto cont = [p, n](size_t k) { return k < n && (p[k] & 0xC0) == 0x80; };
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
        if (c == 0xED && p[1] >= 0xA0) return 0;  // surrogate
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
        if (c == 0xF4 && p[1] >= 0x90) return 0;  // past U+10FFFF
        return 4;
    }
    return 0;
}

std::string json_string(std::string_view s) noexcept {
    std::string out;
    out.reserve(s.size() + 2);
    write_json_string(s, [&out](const char* bytes, size_t len) { out.append(bytes, len); });
    return out;
}

void format_uuid(char* out, const Uuid& u) noexcept {
    static const char hex[] = "0123456789abcdef";
    size_t j = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[j++] = '-';
        out[j++] = hex[u.bytes[i] >> 4];
        out[j++] = hex[u.bytes[i] & 15];
    }
    out[j] = '\0';
}

namespace {

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

bool parse_uuid_text(std::string_view s, Uuid* out) noexcept {
    if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
    const bool grouped = s.size() == 36;
    if (!grouped && s.size() != 32) return false;
    int n = 0;
    for (size_t i = 0; i < s.size(); i++) {
        if (grouped && (i == 8 || i == 13 || i == 18 || i == 23)) {
            if (s[i] != '-') return false;
            continue;
        }
        const int v = hex_value(s[i]);
        if (v < 0) return false;
        if (n % 2 == 0)
            out->bytes[n / 2] = static_cast<uint8_t>(v << 4);
        else
            out->bytes[n / 2] = static_cast<uint8_t>(out->bytes[n / 2] | v);
        n++;
    }
    return n == 32;
}

}  // namespace snowflake::core
