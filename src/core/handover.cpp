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

Mark exact_shutdown_mark(int64_t generator_last_ms) noexcept {
    Mark m;
    m.ms = std::clamp<int64_t>(generator_last_ms, -1, kMaxMs);
    m.clean = true;
    return m;
}

}  // namespace snowflake::core
