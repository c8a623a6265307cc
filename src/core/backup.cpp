#include "backup.hpp"

namespace snowflake::core {

int32_t choose_backup(const TakenIds& taken, int32_t own, const TakenIds& tried, int32_t lo, int32_t hi) noexcept {
    for (int32_t w = lo < 0 ? 0 : lo; w <= hi && w <= kMaxWorker; w++)
        if (w != own && !taken_has(taken, w) && !taken_has(tried, w)) return w;
    return -1;
}

// A tenure starts one millisecond past its mark (position.hpp): that one
// must be behind the clock too.
bool backup_usable(int64_t mark_ms, int64_t now_ms) noexcept { return mark_ms + 1 < now_ms; }

bool clock_refused(const ClockReading& r) noexcept {
    // The id path's own decision, on a copy: nothing is issued.
    GeneratorState g = r.generator;
    Config c;
    c.tolerance_ms = r.tolerance_ms;
    c.failover = true;
    return next_id(g, r.now_ms, c).status == Status::ClockBehind;
}

bool backup_may_end(int64_t now_ms, int64_t own_last_ms, int64_t held_ms) noexcept {
    return now_ms > own_last_ms && held_ms >= kMinBackupHoldMs;
}

BackupStep plan_backup(const BackupState& b, bool wanted, const ClockReading& r, int64_t boot_ns) noexcept {
    const bool refused = wanted && clock_refused(r);
    if (b.worker < 0) {
        if (!wanted) return BackupStep::Stay;
        if (!refused) return BackupStep::NotNeeded;
        return boot_ns >= b.retry_at_ns ? BackupStep::Take : BackupStep::Stay;
    }
    const int64_t held_ms = (boot_ns - b.since_ns) / 1000000;
    // r.generator is the backup's word: the clock stepped back behind the
    // backup's own ids too. Another backup once this one's hold is over.
    if (refused)
        return held_ms >= kMinBackupHoldMs && boot_ns >= b.retry_at_ns ? BackupStep::Switch : BackupStep::Stay;
    if (backup_may_end(r.now_ms, b.own_last_ms, held_ms)) return BackupStep::Return;
    return wanted ? BackupStep::NotNeeded : BackupStep::Stay;
}

}  // namespace snowflake::core
