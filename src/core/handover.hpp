// Hand-over and mark planning for leased worker ids (id-space
// milliseconds): where a new holder of a worker id starts (above every mark
// an earlier holder left, locally or in the coordinator), how long it waits out a
// reservation that may lie past its writer's clock, how far ids may be
// issued, and the exact mark written at a clean shutdown. Pure, like the
// lease state machine (lease.hpp) that decides when these are needed.
#pragma once

#include "pure.hpp"

#include "mark.hpp"

#include <cstdint>

namespace snowflake::core {

// The window of the coordinator's mark (etcd's or ZooKeeper's): renewed when
// less than half of it is left, by this much from the old end
// (plan_reservation), so the mark is 0.5 to 1.5 of it (2.5 to 7.5 s) ahead
// of the clock. Larger than the local window because a
// write is a network round trip. A new holder after a crash waits out at
// most 1.5 times this long (plan_handover's grace), less the TTL it already
// waited for the lease to expire.
constexpr int64_t kCoordMarkWindowMs = 5000;

struct Handover {
    int64_t floor_ms = -1;  // the generator starts above this (state_after)
    int64_t grace_ms = 0;   // a clock behind the floor by this much is waited out
    bool from_coordinator = false;  // the floor is the coordinator's mark, above the local one
};
// floor = max(local, coord); the grace is how far a reservation that reaches
// the floor can lie past its writer's clock: the local window as given (the
// mark file records its lead), 1.5 windows for the coordinator's mark
// (renewed from its old end); a clean mark is exact: no grace. coord_mark_is_ours:
// the coordinator mark's revision is the one this process's own last write of
// it returned (it lost the lease and got the same id back): nobody else
// issued under that id since, so the process's own position (pass the
// generator's last_ms as an exact local mark) is the floor and the
// coordinator's reservation is not waited out.
Handover plan_handover(const Mark& local, int64_t local_window_ms, const Mark& coord, int64_t coord_window_ms,
                       bool coord_mark_is_ours = false) noexcept;

// The host's side of a hand-over, the same for the extension's lease worker
// and the C library's host (LeaseHost::local_mark and start_tenure).
// position_ms: the position word's millisecond; own_high_ms: the highest
// millisecond issued under the own (leased) worker id before a clock
// failover (-1: none), which a backup's position lies below.
//
// The generator's local mark: the higher of the two; not clean while the
// position is still at the floor it started from with a grace (a
// reservation of the previous run, after a crash), whose grace is then its
// window.
Mark position_mark(int64_t position_ms, int64_t floor_ms, int64_t floor_grace_ms, int64_t own_high_ms) noexcept;

// Where a newly claimed worker id's tenure starts: after the hand-over's
// floor, with its grace, when that is at or above everything this process
// issued (position_ms, own_high_ms); else after the latter, no grace (the
// mark does not cover the rest of this process's current millisecond).
struct TenureFloor {
    int64_t floor_ms = -1;
    int64_t grace_ms = 0;
    bool at_handover = false;  // the floor is the hand-over's
};
TenureFloor tenure_floor(const Handover& h, int64_t position_ms, int64_t own_high_ms) noexcept;

// Ids may be issued up to min(local reservation, coordinator's reservation).
constexpr int64_t issue_limit_ms(int64_t local_reserved_until_ms, int64_t coord_reserved_until_ms) noexcept {
    return local_reserved_until_ms < coord_reserved_until_ms ? local_reserved_until_ms : coord_reserved_until_ms;
}

// The mark written at a clean shutdown, after ids stopped: the generator's
// last_ms (which starts at the hand-over floor, so it is never below an
// earlier holder's mark), flagged exact.
Mark exact_shutdown_mark(int64_t generator_last_ms) noexcept;

}  // namespace snowflake::core
