#include "backup.hpp"

namespace snowflake::core {

int32_t choose_backup(const TakenIds& taken, int32_t own, const TakenIds& tried) noexcept {
    for (int32_t w = 0; w <= kMaxWorker; w++)
        if (w != own && !taken_has(taken, w) && !taken_has(tried, w)) return w;
    return -1;
}

// A tenure starts one millisecond past its mark (position.hpp): that one
// must be behind the clock too.
bool backup_usable(int64_t mark_ms, int64_t now_ms) noexcept { return mark_ms + 1 < now_ms; }

bool backup_may_end(int64_t now_ms, int64_t own_last_ms) noexcept { return now_ms > own_last_ms; }

}  // namespace snowflake::core
