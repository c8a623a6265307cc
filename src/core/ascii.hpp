// ASCII text helpers shared by the core and the id inspector.
#pragma once

#include "pure.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace snowflake::core {

// Equal ignoring the case of ASCII letters (no locale: protocol tokens,
// host names and preset names).
constexpr bool ascii_iequal(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// A copy of s safe to quote in a message: control characters, bytes that
// are not ASCII and '"' become '?'; cut at max_len bytes, with "..." then.
inline std::string printable(std::string_view s, size_t max_len) noexcept {
    std::string out;
    for (char c : s.substr(0, std::min(s.size(), max_len))) {
        out += (c < 0x20 || c >= 0x7f || c == '"') ? '?' : c;
    }
    if (s.size() > max_len) out += "...";
    return out;
}

}  // namespace snowflake::core
