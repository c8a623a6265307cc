// Shared memory: requests and creates the shared state (shared_state.hpp,
// where the locking protocol is written down) and moves its position word
// through the transitions that protocol allows.

#include <cstddef>
#include <cstring>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "shmem.hpp"
#include "guc.hpp"
#include "lease_state.hpp"
#include "mark_file.hpp"
#include "reservation_limit.hpp"
#include "stats.hpp"

extern "C" {
#include "storage/ipc.h"
#include "storage/shmem.h"
}

namespace snowflake::pg {

SharedState* shared = nullptr;

namespace {

constexpr const char* kTranche = "snowflake";

#if SF_HAVE_SHMEM_REQUEST_HOOK
shmem_request_hook_type prev_shmem_request_hook = nullptr;
#endif
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;

// The size of the shared state with `slots` id counters.
Size shared_size(int slots) {
    return add_size(offsetof(SharedState, counters), mul_size(slots, sizeof(IdCounter)));
}

// Asks the postmaster for the memory and the LWLock.
void request_shmem() {
    RequestAddinShmemSpace(shared_size(sf_backend_slots()));
    RequestNamedLWLockTranche(kTranche, 1);
}

#if SF_HAVE_SHMEM_REQUEST_HOOK
// shmem_request_hook: chains to the previous hook, then asks.
void shmem_request() {
    if (prev_shmem_request_hook != nullptr) prev_shmem_request_hook();
    request_shmem();
}
#endif

// shmem_startup_hook: creates (postmaster) or attaches to the shared state.
void shmem_startup() {
    if (prev_shmem_startup_hook != nullptr) prev_shmem_startup_hook();

    const int slots = sf_backend_slots();
    bool found = false;
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    shared = static_cast<SharedState*>(ShmemInitStruct("snowflake", shared_size(slots), &found));
    if (!found) {
        std::memset(static_cast<void*>(shared), 0, shared_size(slots));
        shared->lock = &GetNamedLWLockTranche(kTranche)[0].lock;
        // A static worker id is in the word from the start; a leased one
        // comes with the first tenure (start_tenure_locked()).
        pg_atomic_init_u64(&shared->position,
                           snowflake::core::pack_position(-1, snowflake::core::kMaxSequence,
                                                          worker_id >= 0 ? worker_id : 0));
        pg_atomic_init_u64(&shared->fence_ms_plus1, 0);
        pg_atomic_init_u64(&shared->reserved_until_ms, static_cast<uint64>(snowflake::core::kMaxMs));
        pg_atomic_init_u64(&shared->local_reserved_ms, static_cast<uint64>(snowflake::core::kMaxMs));
        pg_atomic_init_u64(&shared->demand_ms_plus1, 0);
        ConditionVariableInit(&shared->reservation_cv);
        shared->mark_worker_latch = nullptr;
        init_stats(shared, slots);
        init_lease(shared);
        // Only the postmaster creates the segment: read the mark from disk
        // and start above it.
        load_mark(shared);
    }
    LWLockRelease(AddinShmemInitLock);
    if (!IsUnderPostmaster) register_mark_shutdown();
}

}  // namespace

// Raises an error unless the library was preloaded (shmem.hpp).
void require_shared() {
    if (!preloaded || shared == nullptr)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("snowflake must be loaded via shared_preload_libraries"),
                 errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart "
                         "the server.")));
}

namespace {

// Swaps the position for f(position) until it sticks; fast-path swaps may
// come in between (the caller holds `lock`, which the fast path never takes).
template <typename F>
uint64 swap_position(F f) {
    uint64 cur = pg_atomic_read_u64(&shared->position);
    for (;;) {
        const uint64 next = f(cur);
        if (next == cur || pg_atomic_compare_exchange_u64(&shared->position, &cur, next)) return next;
    }
}

// Records the generator's floor: where the position was moved, how far a
// clock behind it is waited out, and what set it (for messages).
void set_floor_locked(int64_t floor_ms, int64_t grace_ms, FloorSource source) {
    shared->floor_ms = floor_ms;
    shared->floor_grace_ms = grace_ms;
    shared->floor_source = source;
}

}  // namespace

// Fences ids at the position's millisecond (shmem.hpp).
int64_t fence_ids_locked() {
    const int64_t ms = snowflake::core::packed_ms(pg_atomic_read_u64(&shared->position));
    // First the reservation, so that a caller that reads the fenced word
    // reads the lowered reservation after it. A fast-path swap between the
    // read above and the swap below only makes the word's millisecond later
    // than the reservation: still nothing to issue.
    pg_atomic_write_u64(&shared->fence_ms_plus1, static_cast<uint64>(ms + 1));
    publish_reservation_locked();
    const uint64 fenced = swap_position([](uint64 p) { return snowflake::core::fence_position(p); });
    return snowflake::core::packed_ms(fenced);
}

// Lifts the fence (shmem.hpp).
void lift_fence_locked() {
    pg_atomic_write_u64(&shared->fence_ms_plus1, 0);
    publish_reservation_locked();
}

// Starts a tenure of `worker` above floor_ms (shmem.hpp).
int64_t start_tenure_locked(int32_t worker, int64_t floor_ms, int64_t grace_ms, FloorSource source) {
    const uint64 next = swap_position(
        [&](uint64 p) { return snowflake::core::tenure_position(p, floor_ms, worker); });
    const int64_t ms = snowflake::core::packed_ms(next);
    if (ms == floor_ms) set_floor_locked(floor_ms, grace_ms, source);
    return ms;
}

// Starts a backup tenure of `worker` after floor_ms (shmem.hpp).
int64_t start_backup_tenure_locked(int32_t worker, int64_t floor_ms) {
    const uint64 next =
        swap_position([&](uint64) { return snowflake::core::backup_position(floor_ms, worker); });
    const int64_t ms = snowflake::core::packed_ms(next);
    set_floor_locked(ms, 0, kFloorHandover);
    return ms;
}

// Raises the position to "floor_ms used up" (shmem.hpp).
bool raise_floor_locked(int64_t floor_ms, int64_t grace_ms, FloorSource source) {
    const uint64 before = pg_atomic_read_u64(&shared->position);
    if (swap_position([&](uint64 p) { return snowflake::core::raise_position(p, floor_ms); }) == before)
        return false;
    set_floor_locked(floor_ms, grace_ms, source);
    return true;
}

// Installs the shared-memory hooks (_PG_init, while preloading).
void install_shmem_hooks() {
#if SF_HAVE_SHMEM_REQUEST_HOOK
    prev_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = shmem_request;
#else
    request_shmem();
#endif
    prev_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = shmem_startup;
}

}  // namespace snowflake::pg
