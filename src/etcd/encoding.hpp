// The encodings of etcd's v3 gateway that the client (client.hpp) writes
// and reads: bytes fields as base64 (RFC 4648, with padding, canonical form
// only), and the range end of a key prefix. Exposed for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace snowflake::etcd {

inline std::string base64_encode(const std::string& bytes) noexcept {
    static const char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                           static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                           static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
        out += kAlphabet[v >> 6 & 63];
        out += kAlphabet[v & 63];
    }
    const size_t rest = bytes.size() - i;
    if (rest > 0) {
        uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
        if (rest == 2) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
        out += rest == 2 ? kAlphabet[v >> 6 & 63] : '=';
        out += '=';
    }
    return out;
}

inline bool base64_decode(const std::string& text, std::string* out) noexcept {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    out->clear();
    if (text.size() % 4 != 0) return false;
    for (size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            const char c = text[i + static_cast<size_t>(k)];
            if (c == '=' && last && k >= 2) {
                pad++;
                v[k] = 0;
                continue;
            }
            if (pad > 0) return false;  // data after padding
            v[k] = value(c);
            if (v[k] < 0) return false;
        }
        const uint32_t n = static_cast<uint32_t>(v[0]) << 18 | static_cast<uint32_t>(v[1]) << 12 |
                           static_cast<uint32_t>(v[2]) << 6 | static_cast<uint32_t>(v[3]);
        // Canonical form only: the bits that padding drops must be zero.
        if ((pad == 1 && (n & 0xff) != 0) || (pad == 2 && (n & 0xffff) != 0)) return false;
        out->push_back(static_cast<char>(n >> 16 & 0xff));
        if (pad < 2) out->push_back(static_cast<char>(n >> 8 & 0xff));
        if (pad < 1) out->push_back(static_cast<char>(n & 0xff));
    }
    return true;
}

// The range_end that selects every key starting with prefix ("\0" for all
// keys when prefix is empty or all 0xff bytes).
inline std::string prefix_range_end(const std::string& prefix) noexcept {
    std::string end = prefix;
    while (!end.empty()) {
        auto& last = reinterpret_cast<unsigned char&>(end.back());
        if (last < 0xff) {
            last++;
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');
}

}  // namespace snowflake::etcd
