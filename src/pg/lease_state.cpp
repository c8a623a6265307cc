// The worker id's lease as every process reads it from shared memory: the
// lease worker (lease_worker.cpp) publishes it; backends and the HTTP
// worker ask here whether ids may be issued, which worker id is held, and
// raise SF003 saying why not.

#include <cstdio>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "lease_state.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "stats.hpp"

namespace core = snowflake::core;

namespace snowflake::pg {

// Initialises the lease's shared state (lease_state.hpp).
void init_lease(SharedState* s) {
    LeaseShared& l = s->lease;
    l.leasing = leasing_configured();
    pg_atomic_init_u32(&l.state, static_cast<uint32>(l.leasing ? core::LeaseState::Acquiring
                                                             : core::LeaseState::Static));
    pg_atomic_init_u32(&l.worker_plus1, 0);
    pg_atomic_init_u64(&l.deadline_ns, 0);
    pg_atomic_init_u64(&l.coord_reserved_ms_plus1, 0);
    l.lease_id = 0;
    l.granted_ttl_ms = 0;
    l.renewals = 0;
    l.failures = 0;
    l.last_error[0] = '\0';
    l.last_error_reason = static_cast<uint32_t>(core::LeaseError::None);
    l.mark_attempts = 0;
    l.mark_failures = 0;
    l.mark_error[0] = '\0';
    l.lease_worker_latch = nullptr;
    pg_atomic_init_u32(&l.backup_wanted, 0);
    pg_atomic_init_u32(&l.backup_worker_plus1, 0);
    l.own_last_ms = -1;
    l.own_high_ms = -1;
    l.clock_failovers = 0;
    l.backup_attempts = 0;
    l.backup_error[0] = '\0';
}

// The leased worker id, or snowflake.worker_id without leasing.
int32_t current_worker_id() {
    if (shared == nullptr || !shared->lease.leasing) return worker_id;
    return static_cast<int32_t>(pg_atomic_read_u32(&shared->lease.worker_plus1)) - 1;
}

// May ids be issued now? Without leasing, always; with leasing, while the
// lease worker holds an id and its deadline (on the boot clock) has not
// passed (core::lease::may_issue). Cheap: the fast path calls it for every
// id. Which worker id an id gets is not decided here: it comes from the
// position word its swap replaces (the invariant in shared_state.hpp).
bool lease_allows_ids() {
    LeaseShared& l = shared->lease;
    if (!l.leasing) return true;
    const auto state = static_cast<core::LeaseState>(pg_atomic_read_u32(&l.state));
    pg_read_barrier();  // the lease worker publishes the state last
    const auto deadline = static_cast<int64_t>(pg_atomic_read_u64(&l.deadline_ns));
    return core::lease::may_issue(state, deadline, boottime_ns());
}

// What the lease worker is doing while no id may be issued (a phrase after
// "The lease worker"), and its last error (empty when none).
const char* lease_trouble(char (&error)[kErrorTextSize]) {
    LWLockAcquire(shared->lock, LW_SHARED);
    snprintf(error, sizeof(error), "%s", shared->lease.last_error);
    const bool running = shared->lease.lease_worker_latch != nullptr;
    LWLockRelease(shared->lock);
    const auto state = static_cast<core::LeaseState>(pg_atomic_read_u32(&shared->lease.state));
    return !running ? "is not running"
           : state == core::LeaseState::Held ? "holds a worker id whose lease may have expired (its deadline passed) and is renewing it"
           : state == core::LeaseState::Expired ? "lost its worker id and is acquiring one again"
                                                 : "is acquiring a worker id";
}

// SF003, saying what the lease worker is doing; for a refusal the operator
// must act on (a clone, the fleet's settings) the core's hint.
[[noreturn]] void refuse_no_lease() {
    char error[kErrorTextSize];
    const char* doing = lease_trouble(error);
    const auto reason = static_cast<core::LeaseError>(shared->lease.last_error_reason);
    const char* hint = core::lease::error_hint(reason);
    count_refusal(core::Refusal::NoLease);
    ereport(ERROR,
            (errcode(ERRCODE_SF_NO_LEASE),
             reason == core::LeaseError::FleetSettings ? errmsg("this node's settings differ from its fleet's")
                                                       : errmsg("no worker id lease is held"),
             error[0] != '\0'
                 ? errdetail("The lease worker %s from %s at %s; last error: %s.", doing,
                             coordinator_display(), coordinator_hosts(), error)
                 : errdetail("The lease worker %s from %s at %s.", doing, coordinator_display(),
                             coordinator_hosts()),
             hint != nullptr ? errhint("%s", hint)
                             : errhint("Check that %s is reachable at %s and that no other "
                                       "node holds the worker id; ids resume as soon as a lease is held. "
                                       "snowflake_stats shows the lease.",
                                       coordinator_display(), coordinator_setting())));
}

}  // namespace snowflake::pg
