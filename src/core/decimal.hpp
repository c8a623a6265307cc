// Strict decimal parsing of the numbers in etcd values, keys and settings
// (coord_schema.cpp, endpoints.cpp): no blanks, no '+', no leading zeros.
#pragma once

#include "pure.hpp"

#include <cstdint>
#include <limits>
#include <string_view>

namespace snowflake::core {

// Strict decimal: optional '-', digits, no leading zeros (except "0").
inline bool parse_i64(std::string_view s, int64_t* out) noexcept {
    bool neg = false;
    if (!s.empty() && s[0] == '-') {
        neg = true;
        s.remove_prefix(1);
    }
    if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (v > limit) return false;
    *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return true;
}

// Strict decimal: digits, no leading zeros (except "0"), at most UINT64_MAX.
inline bool parse_u64(std::string_view s, uint64_t* out) noexcept {
    if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        const auto d = static_cast<uint64_t>(c - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

}  // namespace snowflake::core
