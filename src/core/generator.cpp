#include "generator.hpp"

#include <algorithm>

namespace snowflake::core {

GeneratorState state_after(int64_t floor_ms, int64_t grace_ms) noexcept {
    GeneratorState s;
    s.last_ms = floor_ms < -1 ? -1 : floor_ms;
    s.sequence = kMaxSequence;
    s.floor_ms = s.last_ms;
    s.floor_grace_ms = s.last_ms >= 0 && grace_ms > 0 ? grace_ms : 0;
    return s;
}

Next next_ids(GeneratorState& state, int64_t now_ms, const Config& config,
              int32_t max_count) noexcept {
    Next out;
    if (max_count < 1) max_count = 1;
    const Geometry& g = *config.geometry;

    if (now_ms < 0) {
        out.status = Status::BeforeEpoch;
        return out;
    }
    if (now_ms > g.max_ms) {
        out.status = Status::EndOfTime;
        return out;
    }

    // Still at the floor the state started from, and the clock not past it.
    out.at_floor = state.last_ms >= 0 && state.last_ms == state.floor_ms && now_ms <= state.last_ms;
    if (out.at_floor && !config.repeat) state.counters.startup_waits++;

    // Within the floor's grace: wait, without counting a clock step or a
    // used-up millisecond.
    if (out.at_floor && state.last_ms - now_ms <= state.floor_grace_ms) {
        out.status = Status::WaitFloor;
        out.behind_ms = state.last_ms - now_ms;
        out.wait_until_ms = state.last_ms + 1;
        return out;
    }

    if (now_ms < state.last_ms) {
        const int64_t behind = state.last_ms - now_ms;
        Counters& c = state.counters;
        if (!config.repeat) c.clock_backwards_events++;
        c.clock_backwards_max_ms = std::max(c.clock_backwards_max_ms, behind);
        out.behind_ms = behind;
        // Ids resume in last_ms if it has sequence left, otherwise just after.
        out.wait_until_ms = state.sequence < g.max_sequence ? state.last_ms : state.last_ms + 1;
        if (behind <= config.tolerance_ms) {
            out.status = Status::WaitClock;
        } else {
            if (!config.failover) c.clock_backwards_errors++;
            out.status = Status::ClockBehind;
        }
        return out;
    }

    int32_t first_seq;
    if (now_ms == state.last_ms) {
        if (state.sequence >= g.max_sequence) {
            if (!config.repeat) state.counters.overflow_waits++;
            out.status = Status::WaitNextMs;
            out.wait_until_ms = now_ms + 1;
            return out;
        }
        first_seq = state.sequence + 1;
    } else {
        if (now_ms > state.reserved_until_ms) {
            out.status = Status::NeedReservation;
            return out;
        }
        first_seq = std::clamp<int32_t>(config.new_ms_sequence, 0, g.max_sequence);
    }

    const int32_t count = std::min(max_count, g.max_sequence - first_seq + 1);
    state.last_ms = now_ms;
    state.sequence = first_seq + count - 1;

    out.status = Status::Issued;
    out.first_id = compose(g, now_ms, config.worker, first_seq);
    out.count = count;
    return out;
}

void extend_reservation(GeneratorState& state, int64_t new_until_ms) noexcept {
    if (new_until_ms > kMaxMs) new_until_ms = kMaxMs;
    if (new_until_ms > state.reserved_until_ms) {
        state.reserved_until_ms = new_until_ms;
        state.counters.reservations++;
    }
}

EpochCheck check_epoch(int64_t epoch_unix_ms, int64_t now_unix_ms, const Geometry& g) noexcept {
    if (epoch_unix_ms > now_unix_ms) return EpochCheck::InFuture;
    // The id space ends at epoch + max_ms; at least a year of it must be left.
    const int64_t used = now_unix_ms - epoch_unix_ms;
    if (used > g.max_ms - kMinRemainingRangeMs) return EpochCheck::TooLittleRange;
    return EpochCheck::Ok;
}

}  // namespace snowflake::core
