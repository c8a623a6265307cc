// The position protocol's shared words as plain fields (core/position.hpp's
// `Shared`), for tests that drive it one call at a time.
#pragma once

#include "core/position.hpp"

#include <cstdint>

namespace snowflake::test {

struct PlainWords {
    uint64_t word = core::pack_position(-1, core::kMaxSequence, 0);
    int64_t reserved = core::kMaxMs;
    int64_t clock = 0;
    int64_t deadline = core::kNoDeadline;
    int64_t boot = 0;

    uint64_t load_word() { return word; }
    bool cas_word(uint64_t& expected, uint64_t desired) {
        if (word != expected) {
            expected = word;
            return false;
        }
        word = desired;
        return true;
    }
    int64_t load_reserved() { return reserved; }
    void limit_reserved(int64_t ms) { reserved = ms; }
    int64_t now_ms() { return clock; }
    int64_t lease_deadline_ns() { return deadline; }
    int64_t boot_ns() { return boot; }
};

}  // namespace snowflake::test
