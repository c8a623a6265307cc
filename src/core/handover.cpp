// Hand-over and mark planning; see handover.hpp.
#include "handover.hpp"

#include "layout.hpp"

#include <algorithm>

namespace snowflake::core {

Handover plan_handover(const Mark& local, int64_t local_window_ms, const Mark& coord_in, int64_t coord_window_ms,
                       bool coord_mark_is_ours) noexcept {
    const Mark coord = coord_mark_is_ours ? Mark{-1, true} : coord_in;
    Handover h;
    h.floor_ms = std::max<int64_t>(std::max(local.ms, coord.ms), -1);
    if (h.floor_ms < 0) return h;
    h.from_coordinator = coord.ms > local.ms;
    if (local.ms == h.floor_ms && !local.clean) h.grace_ms = std::max(h.grace_ms, local_window_ms);
    // A reservation in the coordinator is renewed from its old end when less than half
    // a window is left: it reaches up to 1.5 windows past the writer's clock.
    if (coord.ms == h.floor_ms && !coord.clean)
        h.grace_ms = std::max(h.grace_ms, coord_window_ms + coord_window_ms / 2);
    h.grace_ms = std::max<int64_t>(h.grace_ms, 0);
    return h;
}

Mark position_mark(int64_t position_ms, int64_t floor_ms, int64_t floor_grace_ms, int64_t own_high_ms) noexcept {
    const bool at_reserved_floor = position_ms == floor_ms && floor_grace_ms > 0 && position_ms >= own_high_ms;
    Mark m;
    m.ms = std::max(position_ms, own_high_ms);
    m.clean = !at_reserved_floor;
    m.window_ms = at_reserved_floor ? floor_grace_ms : 0;
    return m;
}

TenureFloor tenure_floor(const Handover& h, int64_t position_ms, int64_t own_high_ms) noexcept {
    const int64_t issued = std::max(position_ms, own_high_ms);
    TenureFloor t;
    t.at_handover = h.floor_ms >= issued;
    t.floor_ms = t.at_handover ? h.floor_ms : issued;
    t.grace_ms = t.at_handover ? h.grace_ms : 0;
    return t;
}

Mark exact_shutdown_mark(int64_t generator_last_ms) noexcept {
    Mark m;
    m.ms = std::clamp<int64_t>(generator_last_ms, -1, kMaxMs);
    m.clean = true;
    return m;
}

}  // namespace snowflake::core
