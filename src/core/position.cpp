#include "position.hpp"

#include <algorithm>

namespace snowflake::core {

uint64_t raise_position(uint64_t packed, int64_t floor_ms) noexcept {
    if (packed_ms(packed) >= floor_ms) return packed;
    const int32_t worker = packed_worker(packed);
    return is_fenced(packed) ? pack_fenced(floor_ms, worker) : pack_position(floor_ms, kMaxSequence, worker);
}

uint64_t fence_position(uint64_t packed) noexcept {
    return is_fenced(packed) ? packed : pack_fenced(packed_ms(packed), packed_worker(packed));
}

int64_t tenure_start_ms(uint64_t fenced, int64_t floor_ms, int32_t worker) noexcept {
    int64_t base = std::max<int64_t>(floor_ms, -1);
    if (packed_worker(fenced) == worker) base = std::max(base, packed_ms(fenced));
    return std::min(base + 1, kMaxMs);
}

bool fast_next(uint64_t packed, int64_t now_ms, int64_t reserved_until_ms, FastNext* out) noexcept {
    if (is_fenced(packed) || now_ms > kMaxMs) return false;
    const int64_t last_ms = packed_ms(packed);
    const int32_t sequence = packed_sequence(packed);
    const int32_t worker = packed_worker(packed);
    if (now_ms == last_ms && sequence < kMaxSequence) {
        out->next = packed + 1;
        out->id = compose(last_ms, worker, sequence + 1);
        return true;
    }
    if (now_ms > last_ms && now_ms <= reserved_until_ms) {
        out->next = pack_position(now_ms, 0, worker);
        out->id = compose(now_ms, worker, 0);
        return true;
    }
    return false;
}

}  // namespace snowflake::core
