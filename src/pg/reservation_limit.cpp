// How far ids may be issued, as shared memory publishes it: the demand of
// callers waiting beyond the reservation (read by the mark and lease
// workers), and the limit reserved_until_ms made of the local mark's
// reservation and the coordinator mark's (shared_state.hpp).

#include "../core/generator.hpp"
#include "../core/handover.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"

namespace core = snowflake::core;

namespace snowflake::pg {

// The latest millisecond a waiting caller asked to have reserved (-1: none).
int64_t demand_ms() {
    return static_cast<int64_t>(pg_atomic_read_u64(&shared->demand_ms_plus1)) - 1;
}

// Raises the demand to ms; it only ever grows (compare-and-swap, no lock).
void raise_demand(int64_t ms) {
    const auto want = static_cast<uint64>(ms + 1);
    uint64 cur = pg_atomic_read_u64(&shared->demand_ms_plus1);
    while (cur < want && !pg_atomic_compare_exchange_u64(&shared->demand_ms_plus1, &cur, want)) {
    }
}

// Publishes min(local, coordinator) in reserved_until_ms; lock held.
void publish_reservation_locked() {
    auto until = static_cast<int64_t>(pg_atomic_read_u64(&shared->local_reserved_ms));
    if (shared->lease.leasing) until = core::issue_limit_ms(until, coord_reserved_ms());
    pg_atomic_write_u64(&shared->reserved_until_ms, static_cast<uint64>(until));
}

// The end of the worker id's reservation in the coordinator (-1: none).
int64_t coord_reserved_ms() {
    return static_cast<int64_t>(pg_atomic_read_u64(&shared->lease.coord_reserved_ms_plus1)) - 1;
}

// Raises the coordinator's reservation to until_ms (never lowers it) and publishes
// the limit; lock held.
void raise_coord_reservation_locked(int64_t until_ms) {
    if (until_ms > coord_reserved_ms())
        pg_atomic_write_u64(&shared->lease.coord_reserved_ms_plus1, static_cast<uint64>(until_ms + 1));
    publish_reservation_locked();
}

}  // namespace snowflake::pg
