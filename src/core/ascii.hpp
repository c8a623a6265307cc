// ASCII text helpers shared by the core and the id inspector.
#pragma once

#include "pure.hpp"

#include <cstddef>
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

}  // namespace snowflake::core
