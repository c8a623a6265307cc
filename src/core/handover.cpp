// Hand-over and mark planning; see handover.hpp.
#include "handover.hpp"

#include "layout.hpp"

#include <algorithm>

namespace snowflake::core {

Handover plan_handover(const Mark& local, int64_t local_window_ms, const Mark& etcd_in,
                       int64_t etcd_window_ms, bool etcd_mark_is_ours) noexcept {
    const Mark etcd = etcd_mark_is_ours ? Mark{-1, true} : etcd_in;
    Handover h;
    h.floor_ms = std::max<int64_t>(std::max(local.ms, etcd.ms), -1);
    if (h.floor_ms < 0) return h;
    h.from_coordinator = etcd.ms > local.ms;
    if (local.ms == h.floor_ms && !local.clean) h.grace_ms = std::max(h.grace_ms, local_window_ms);
    // A reservation in etcd is renewed from its old end when less than half
    // a window is left: it reaches up to 1.5 windows past the writer's clock.
    if (etcd.ms == h.floor_ms && !etcd.clean)
        h.grace_ms = std::max(h.grace_ms, etcd_window_ms + etcd_window_ms / 2);
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
