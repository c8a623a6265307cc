// The Snowflake generator state machine and its clock guard.
//
// Pure: the caller passes in the current time (milliseconds since the epoch)
// and holds whatever lock protects the state. Nothing here sleeps, reads a
// clock or allocates; every outcome is a Status the caller acts on.
#pragma once

#include "pure.hpp"

#include "layout.hpp"
#include "time.hpp"  // floor_div

#include <cstdint>

namespace snowflake::core {

// Counters of the slow path. Ids issued are counted by the caller, which
// may issue most of them through fast_next() without touching this state.
struct Counters {
    uint64_t overflow_waits = 0;          // a millisecond's 4,096 ids were used up
    uint64_t clock_backwards_events = 0;  // calls that found the clock behind the last id
    uint64_t clock_backwards_errors = 0;  // ... and refused because it was beyond tolerance
    int64_t clock_backwards_max_ms = 0;   // largest distance seen
    uint64_t reservations = 0;            // times the reserved window was extended
    uint64_t startup_waits = 0;           // calls held back (waited or refused) by the floor
};

struct GeneratorState {
    // Millisecond of the last id issued (or of the high-water mark at start);
    // -1 when nothing has been issued.
    int64_t last_ms = -1;
    // Last sequence used in last_ms. kMaxSequence means last_ms is used up.
    int32_t sequence = kMaxSequence;
    // Ids may be issued up to and including this millisecond: the persisted
    // high-water mark. kMaxMs when no reservation is in use.
    int64_t reserved_until_ms = kMaxMs;
    // The high-water mark the state started from (-1 for none), and how far
    // the clock may be behind it and still be waited out whatever the
    // tolerance: after a crash the mark is a reservation of the previous run
    // that reaches ahead of the clock, not a sign of a clock step.
    int64_t floor_ms = -1;
    int64_t floor_grace_ms = 0;
    Counters counters;
};

// Starts a state that will only issue ids in milliseconds after `floor_ms`
// (a high-water mark: -1 for none), as if floor_ms had been used up. A clock
// behind the floor by at most grace_ms is waited out (WaitFloor). The
// reservation is left unlimited (kMaxMs); set reserved_until_ms to use one.
GeneratorState state_after(int64_t floor_ms, int64_t grace_ms = 0) noexcept;

struct Config {
    int32_t worker = 0;         // 0..kMaxWorker
    int64_t tolerance_ms = 0;   // a clock this far behind last_ms is waited out
    // The caller decides again after waiting in the same call: the wait was
    // counted already (overflow_waits, clock_backwards_events,
    // startup_waits are counted once per call); errors are always counted.
    bool repeat = false;
    // snowflake.clock_backwards = failover: ClockBehind asks for a backup
    // worker id instead of refusing, so it is not counted as an error here;
    // the caller counts the call's refusal if it ends in one.
    bool failover = false;
    // The node's layout: the ids' widths and the lifetime's end. The
    // position protocol's slow_issue() sets it to the geometry it is given.
    const Geometry* geometry = &kTwitter;
    // The sequence a later millisecond's first id takes: 0, or the offset
    // of snowflake.sequence_spread (id_layout.hpp's first_sequence()).
    int32_t new_ms_sequence = 0;
};

enum class Status {
    Issued,           // `count` ids, first_id .. first_id + count - 1
    WaitNextMs,       // this millisecond is used up: wait until wait_until_ms
    WaitClock,        // clock behind by behind_ms <= tolerance: wait until wait_until_ms
    WaitFloor,        // clock at or behind the starting floor, within its grace: wait
    ClockBehind,      // clock behind by behind_ms > tolerance: refuse, state untouched
    BeforeEpoch,      // clock earlier than the epoch
    EndOfTime,        // clock past the layout's lifetime (41 bits of milliseconds: ~69.7 years)
    NeedReservation,  // clock past reserved_until_ms: extend the mark, then retry
    // The position protocol's (position.hpp), never next_ids():
    Fenced,      // no tenure is in force (a fence, no lease): nothing issued
    LeaseEnded,  // ids swapped, but the lease may have ended first: gaps, refuse
};

struct Next {
    Status status = Status::Issued;
    int64_t first_id = 0;
    int32_t count = 0;
    int64_t behind_ms = 0;      // WaitClock, WaitFloor, ClockBehind
    int64_t wait_until_ms = 0;  // WaitNextMs, WaitClock, WaitFloor, ClockBehind: when ids resume
    // WaitFloor, WaitClock, ClockBehind: what holds ids back is the floor the
    // state started from, not an id issued since.
    bool at_floor = false;
};

// Issues up to max_count (>= 1) ids of the current millisecond. The ids of one
// call share a millisecond, so they are consecutive integers.
Next next_ids(GeneratorState& state, int64_t now_ms, const Config& config,
              int32_t max_count) noexcept;

inline Next next_id(GeneratorState& state, int64_t now_ms, const Config& config) noexcept {
    return next_ids(state, now_ms, config, 1);
}

// Extends the reservation: ids may now be issued up to new_until_ms. Only
// ever moves forward.
void extend_reservation(GeneratorState& state, int64_t new_until_ms) noexcept;

// Validation of an epoch, in Unix milliseconds, against the current time.
enum class EpochCheck { Ok, InFuture, TooLittleRange };
constexpr int64_t kMinRemainingRangeMs = 365 * kMsPerDay;  // one year
EpochCheck check_epoch(int64_t epoch_unix_ms, int64_t now_unix_ms, const Geometry& g = kTwitter) noexcept;

}  // namespace snowflake::core
