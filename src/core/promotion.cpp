#include "promotion.hpp"

#include "generator.hpp"
#include "layout.hpp"
#include "reservation.hpp"

#include <algorithm>

namespace snowflake::core {

static_assert(kPromotionMarginMs == kMaxWindowMs, "the margin is the longest window");

int64_t id_ms_to_unix_ms(int64_t ms, int64_t epoch_unix_us) noexcept {
    const int64_t us = epoch_unix_us + ms * 1000;
    return -floor_div(-us, 1000);  // ceiling: the Unix millisecond holding the id-space one's start
}

int64_t unix_ms_to_id_ms(int64_t unix_ms, int64_t epoch_unix_us) noexcept {
    return std::clamp<int64_t>(floor_div(unix_ms * 1000 - epoch_unix_us, 1000), -1, kMaxMs);
}

ReplayedFloor replayed_floor(int64_t record_ms, int64_t record_window_ms, int64_t position_ms,
                             bool archive_recovery) noexcept {
    ReplayedFloor f;
    f.window_ms = std::clamp<int64_t>(record_window_ms, kMinWindowMs, kMaxWindowMs);
    if (record_ms <= position_ms) return f;
    f.raise = true;
    f.floor_ms = record_ms;
    f.grace_ms = archive_recovery ? f.window_ms + kPromotionMarginMs : f.window_ms;
    return f;
}

int64_t start_grace_ms(int64_t grace_ms, int64_t window_ms, bool archive_recovery) noexcept {
    if (!archive_recovery) return grace_ms;
    const int64_t window = std::clamp<int64_t>(window_ms, kMinWindowMs, kMaxWindowMs);
    return std::max(grace_ms, window + kPromotionMarginMs);
}

bool arm_promotion_refusal(bool archive_recovery, bool marker_present, bool static_worker_id) noexcept {
    return archive_recovery && !marker_present && static_worker_id;
}

int64_t promotion_refusal_until(int64_t mark_unix_ms, int64_t last_commit_unix_ms,
                                int64_t now_unix_ms) noexcept {
    int64_t until = mark_unix_ms >= 0 ? mark_unix_ms : -1;
    if (last_commit_unix_ms >= 0) until = std::max(until, last_commit_unix_ms + kPromotionMarginMs);
    if (until < 0) until = now_unix_ms + kPromotionMarginMs;
    return until;
}

bool epoch_refusal_after_record(bool refusing, RecordEpoch epoch, bool archive_recovery) noexcept {
    if (!archive_recovery) return refusing;
    switch (epoch) {
        case RecordEpoch::Differs: return true;
        case RecordEpoch::Same: return false;
        case RecordEpoch::Unknown: break;
    }
    return refusing;
}

bool epoch_refusal_at_start(bool kept, int64_t records_epoch_unix_us, int64_t own_epoch_unix_us) noexcept {
    return kept && records_epoch_unix_us != own_epoch_unix_us;
}

}  // namespace snowflake::core
