#include "position.hpp"

#include <algorithm>

namespace snowflake::core {

uint64_t raise_position(const Geometry& g, uint64_t packed, int64_t floor_ms) noexcept {
    // A floor past the lifetime (a mark holds up to kMaxMs, a geometry's
    // lifetime may be shorter) uses the whole lifetime up; packed further it
    // would run into the fenced values.
    floor_ms = std::min(floor_ms, g.max_ms);
    if (packed_ms(g, packed) >= floor_ms) return packed;
    const int32_t worker = packed_worker(g, packed);
    return is_fenced(g, packed) ? pack_fenced(g, floor_ms, worker)
                                : pack_position(g, floor_ms, g.max_sequence, worker);
}

uint64_t fence_position(const Geometry& g, uint64_t packed) noexcept {
    return is_fenced(g, packed) ? packed : pack_fenced(g, packed_ms(g, packed), packed_worker(g, packed));
}

int64_t tenure_start_ms(const Geometry& g, uint64_t fenced, int64_t floor_ms, int32_t worker) noexcept {
    int64_t base = std::max<int64_t>(floor_ms, -1);
    if (packed_worker(g, fenced) == worker) base = std::max(base, packed_ms(g, fenced));
    return std::min(base + 1, g.max_ms);
}

bool fast_next(const Geometry& g, uint64_t packed, int64_t now_ms, int64_t reserved_until_ms, FastNext* out,
               int32_t new_ms_sequence) noexcept {
    if (is_fenced(g, packed) || now_ms > g.max_ms) return false;
    const int64_t last_ms = packed_ms(g, packed);
    const int32_t sequence = packed_sequence(g, packed);
    const int32_t worker = packed_worker(g, packed);
    if (now_ms == last_ms && sequence < g.max_sequence) {
        out->next = packed + 1;
        out->id = compose(g, last_ms, worker, sequence + 1);
        return true;
    }
    if (now_ms > last_ms && now_ms <= reserved_until_ms) {
        const int32_t first = std::clamp<int32_t>(new_ms_sequence, 0, g.max_sequence);
        out->next = pack_position(g, now_ms, first, worker);
        out->id = compose(g, now_ms, worker, first);
        return true;
    }
    return false;
}

}  // namespace snowflake::core
