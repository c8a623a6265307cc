#include "reservation.hpp"

#include "layout.hpp"

#include <algorithm>

namespace snowflake::core {

int64_t reservation_window(int64_t last_write_ms) noexcept {
    if (last_write_ms < 0) last_write_ms = 0;
    if (last_write_ms > kMaxWindowMs / 2) return kMaxWindowMs;
    return std::max(kMinWindowMs, 2 * last_write_ms);
}

ReservationPlan plan_reservation(int64_t now_ms, int64_t reserved_ms, int64_t demand_ms,
                                 int64_t window_ms) noexcept {
    ReservationPlan plan;
    window_ms = std::clamp(window_ms, kMinWindowMs, kMaxWindowMs);
    if (reserved_ms >= kMaxMs) return plan;

    if (demand_ms > reserved_ms && demand_ms <= kMaxMs) {
        int64_t base = demand_ms;
        if (now_ms > base && now_ms - base <= window_ms && now_ms <= kMaxMs) base = now_ms;
        plan.write = true;
        plan.until_ms = std::min(base + window_ms, kMaxMs);
        return plan;
    }
    if (now_ms >= 0 && now_ms <= reserved_ms && reserved_ms - now_ms < window_ms / 2) {
        plan.write = true;
        plan.until_ms = std::min(reserved_ms + window_ms, kMaxMs);
    }
    return plan;
}

int64_t reservation_lead(int64_t until_ms, int64_t now_ms, int64_t window_ms) noexcept {
    const int64_t lead = until_ms > now_ms ? until_ms - now_ms : 0;
    return std::clamp(std::max(lead, window_ms), kMinWindowMs, kMaxWindowMs);
}

}  // namespace snowflake::core
