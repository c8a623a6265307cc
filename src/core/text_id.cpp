#include "text_id.hpp"

namespace snowflake::core {

namespace {

constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr char kCrockfordLower[] = "0123456789abcdefghjkmnpqrstvwxyz";
constexpr char kBase62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// A Crockford digit's value, -1 if it is none. lenient: either case, and
// I, L as 1 and O as 0 (Crockford's decoding rules); else lower case
// letters of the alphabet only (TypeID).
int crockford_value(char c, bool lenient) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (lenient) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        if (c == 'I' || c == 'L') return 1;
        if (c == 'O') return 0;
        for (int v = 10; v < 32; v++)
            if (kCrockford[v] == c) return v;
        return -1;
    }
    for (int v = 10; v < 32; v++)
        if (kCrockfordLower[v] == c) return v;
    return -1;
}

int base62_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    if (c >= 'a' && c <= 'z') return c - 'a' + 36;
    return -1;
}

bool fail(TextError* err, const char* sentence, int at = -1) noexcept {
    if (err != nullptr) {
        err->sentence = sentence;
        err->at = at;
    }
    return false;
}

// 128 bits as two words, most significant first.
struct U128 {
    uint64_t hi;
    uint64_t lo;
};

U128 uuid_words(const Uuid& u) noexcept {
    U128 w{0, 0};
    for (int i = 0; i < 8; i++) w.hi = (w.hi << 8) | u.bytes[i];
    for (int i = 8; i < 16; i++) w.lo = (w.lo << 8) | u.bytes[i];
    return w;
}

// The 5-bit group i (0..25) of the 130 bits "00" + the UUID's 128.
int group_of(const U128& w, int i) noexcept {
    const int shift = (25 - i) * 5;  // bit offset of the group's lowest bit
    uint64_t v;
    if (shift >= 64)
        v = w.hi >> (shift - 64);
    else if (shift + 5 <= 64)
        v = w.lo >> shift;
    else
        v = (w.lo >> shift) | (w.hi << (64 - shift));
    return static_cast<int>(v & 31);
}

std::string uuid_base32(const Uuid& u, const char* alphabet) noexcept {
    const U128 w = uuid_words(u);
    std::string s(kUuidBase32Chars, '0');
    for (int i = 0; i < kUuidBase32Chars; i++) s[static_cast<size_t>(i)] = alphabet[group_of(w, i)];
    return s;
}

bool base32_uuid(std::string_view text, bool lenient, Uuid* out, TextError* err, int offset) noexcept {
    if (text.size() != kUuidBase32Chars) return fail(err, "a UUID in base32 is 26 characters");
    U128 w{0, 0};
    for (int i = 0; i < kUuidBase32Chars; i++) {
        const int v = crockford_value(text[static_cast<size_t>(i)], lenient);
        if (v < 0)
            return fail(
                err,
                lenient ? "not a character of Crockford's base32 (0-9 and A-Z without I, L, O, U)"
                        : "not a character of the TypeID alphabet (0-9 and a-z without i, l, o, u; lower case)",
                offset + i);
        if (i == 0 && v > 7)
            return fail(err, "the first character is above 7: the value exceeds 128 bits", offset);
        w.hi = (w.hi << 5) | (w.lo >> 59);
        w.lo = (w.lo << 5) | static_cast<uint64_t>(v);
    }
    for (int i = 0; i < 8; i++) out->bytes[i] = static_cast<uint8_t>(w.hi >> (56 - 8 * i));
    for (int i = 0; i < 8; i++) out->bytes[8 + i] = static_cast<uint8_t>(w.lo >> (56 - 8 * i));
    return true;
}

}  // namespace

bool parse_text_format(std::string_view name, TextFormat* out) noexcept {
    if (name == "decimal")
        *out = TextFormat::Decimal;
    else if (name == "base32")
        *out = TextFormat::Base32;
    else if (name == "base62")
        *out = TextFormat::Base62;
    else
        return false;
    return true;
}

const char* text_format_name(TextFormat f) noexcept {
    switch (f) {
        case TextFormat::Decimal: return "decimal";
        case TextFormat::Base32: return "base32";
        case TextFormat::Base62: return "base62";
    }
    return "?";
}

size_t write_id_text(char* out, size_t cap, int64_t id, TextFormat f) noexcept {
    if (id < 0 || cap < static_cast<size_t>(kMaxIdTextChars)) return 0;
    uint64_t v = static_cast<uint64_t>(id);
    if (f == TextFormat::Decimal) {
        char digits[kMaxIdTextChars];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        for (int i = 0; i < n; i++) out[i] = digits[n - 1 - i];
        return static_cast<size_t>(n);
    }
    const int width = f == TextFormat::Base32 ? kBase32IdChars : kBase62IdChars;
    const uint64_t base = f == TextFormat::Base32 ? 32 : 62;
    const char* alphabet = f == TextFormat::Base32 ? kCrockford : kBase62;
    for (int i = width - 1; i >= 0; i--) {
        out[i] = alphabet[v % base];
        v /= base;
    }
    return static_cast<size_t>(width);
}

std::string encode_id(int64_t id, TextFormat f) noexcept {
    char buf[kMaxIdTextChars];
    return std::string(buf, write_id_text(buf, sizeof(buf), id, f));
}

bool decode_id(std::string_view text, TextFormat f, int64_t* out, TextError* err) noexcept {
    constexpr uint64_t kMaxId = static_cast<uint64_t>(INT64_MAX);
    uint64_t v = 0;
    if (f == TextFormat::Decimal) {
        if (text.empty() || text.size() > 19) return fail(err, "a decimal id is 1 to 19 digits");
        for (size_t i = 0; i < text.size(); i++) {
            const char c = text[i];
            if (c < '0' || c > '9') return fail(err, "not a decimal digit", static_cast<int>(i));
            v = v * 10 + static_cast<uint64_t>(c - '0');  // 19 digits fit in 64 bits unsigned
        }
        if (v > kMaxId) return fail(err, "the value is above 2^63 - 1, the largest id");
        *out = static_cast<int64_t>(v);
        return true;
    }
    if (f == TextFormat::Base62) {
        if (text.size() != kBase62IdChars) return fail(err, "a base62 id is 11 characters");
        for (size_t i = 0; i < text.size(); i++) {
            const int d = base62_value(text[i]);
            if (d < 0) return fail(err, "not a base62 character (0-9, A-Z, a-z)", static_cast<int>(i));
            if (v > (kMaxId - static_cast<uint64_t>(d)) / 62)
                return fail(err, "the value is above 2^63 - 1, the largest id");
            v = v * 62 + static_cast<uint64_t>(d);
        }
        *out = static_cast<int64_t>(v);
        return true;
    }
    int digits = 0;
    for (size_t i = 0; i < text.size(); i++) {
        const char c = text[i];
        if (c == '-') continue;  // Crockford: hyphens only group the digits
        const int d = crockford_value(c, true);
        if (d < 0)
            return fail(err, "not a character of Crockford's base32 (0-9 and A-Z without I, L, O, U)",
                        static_cast<int>(i));
        if (++digits > kBase32IdChars) break;
        if (digits == 1 && d > 7)
            return fail(err, "the first character is above 7: the value is above 2^63 - 1, the largest id",
                        static_cast<int>(i));
        v = (v << 5) | static_cast<uint64_t>(d);
    }
    if (digits != kBase32IdChars) return fail(err, "a base32 id is 13 characters (hyphens aside)");
    if (v > kMaxId) return fail(err, "the value is above 2^63 - 1, the largest id");
    *out = static_cast<int64_t>(v);
    return true;
}

std::string uuid_to_ulid(const Uuid& u) noexcept { return uuid_base32(u, kCrockford); }

bool ulid_to_uuid(std::string_view text, Uuid* out, TextError* err) noexcept {
    if (text.size() != kUuidBase32Chars) return fail(err, "a ULID is 26 characters");
    return base32_uuid(text, true, out, err, 0);
}

bool check_typeid_prefix(std::string_view prefix, TextError* err) noexcept {
    if (prefix.size() > kMaxTypeidPrefix) return fail(err, "a TypeID prefix is at most 63 characters");
    for (size_t i = 0; i < prefix.size(); i++) {
        const char c = prefix[i];
        if (c == '_') {
            if (i == 0 || i + 1 == prefix.size())
                return fail(err, "a TypeID prefix starts and ends with a letter", static_cast<int>(i));
        } else if (c < 'a' || c > 'z') {
            return fail(err, "a TypeID prefix holds only a-z and '_' (lower case, no digits)",
                        static_cast<int>(i));
        }
    }
    return true;
}

std::string encode_typeid(std::string_view prefix, const Uuid& u) noexcept {
    std::string s(prefix);
    if (!s.empty()) s += '_';
    s += uuid_base32(u, kCrockfordLower);
    return s;
}

bool decode_typeid(std::string_view text, std::string* prefix, Uuid* out, TextError* err) noexcept {
    if (text.size() < kUuidBase32Chars || text.size() > kMaxTypeidPrefix + 1 + kUuidBase32Chars)
        return fail(err, "a TypeID is 26 to 90 characters: a prefix of up to 63, '_', and 26 of base32");
    const size_t sep = text.rfind('_');
    std::string_view pre, suffix = text;
    if (sep != std::string_view::npos) {
        pre = text.substr(0, sep);
        suffix = text.substr(sep + 1);
        if (pre.empty()) return fail(err, "a TypeID without a prefix has no '_'", 0);
    }
    if (suffix.size() != kUuidBase32Chars)
        return fail(err, "a TypeID ends in 26 characters of base32 after its '_'");
    if (!check_typeid_prefix(pre, err)) return false;
    Uuid u;
    if (!base32_uuid(suffix, false, &u, err, static_cast<int>(text.size() - suffix.size()))) return false;
    *prefix = std::string(pre);
    *out = u;
    return true;
}

}  // namespace snowflake::core
