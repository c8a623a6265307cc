// Shared generator state.
//
// Locking protocol. There is one LWLock, `lock`; nothing else is ever held
// with it, so there is no lock order to keep.
// - `position` (the last issued millisecond and sequence, and the worker id
//   they are composed with, packed: core::pack_position) is only ever
//   changed by compare-and-swap, so every id belongs to exactly one
//   successful swap and a node's ids strictly increase while its worker id
//   stays the same.
// - THE INVARIANT: an id is issued only by the compare-and-swap that saw the
//   worker id it composes with, and the reservation it is issued under. The
//   id's worker id is taken from the word the swap replaces, never from
//   anything read beside it; every lease transition moves the word under
//   `lock` (fence_ids_locked() when a tenure ends; start_tenure_locked()
//   while that fence still holds the reservation down, lift_fence_locked()
//   after it), so no reservation of a new tenure is ever visible beside an
//   old tenure's word. A caller that read the word
//   before a transition (and was then descheduled for any length of time)
//   fails its swap and decides again from the new word. No sleep or margin
//   is part of this argument.
// - A fence (a lease lost, a clean shutdown) brings `reserved_until_ms` down
//   to the position's millisecond (`fence_ms_plus1`), then swaps in the word
//   with that millisecond used up: from that swap on no id is issued at all
//   until a new tenure, so the exact mark written at a shutdown is exact.
// - The fast path (one id, same millisecond with sequence left, or a later
//   millisecond inside the reservation) reads `position`, then the clock,
//   and swaps without any lock. Reading the position before the clock
//   matters: a clock read after the position was published is never earlier
//   than the clock read of whoever published it, so "behind" is a real step.
// - Everything else (waits, clock steps, errors, batches, statistics resets,
//   publishing a reservation, snowflake_advance_floor) takes `lock`
//   exclusively, briefly: under it the same read-position, read-clock, swap
//   sequence runs the core state machine and retries if a fast-path swap came
//   between. `lock` protects the fields marked "lock" in snowflake.hpp.
// - `lock` is never held across I/O, a sleep or anything that can raise an
//   error: the caller copies what it needs, releases it, then waits or
//   reports.
// - Only the mark worker (worker.cpp) writes the mark file while the server
//   runs (during recovery, only the startup process, replaying wal.cpp's
//   records under `lock`): it writes a reservation to disk first and only then publishes it
//   under `lock`; nothing issues an id past `reserved_until_ms`. With worker
//   ids leased from etcd, the lease worker (lease_worker.cpp) does the same
//   with the worker id's mark in etcd, and `reserved_until_ms` is the lower
//   of the two reservations (publish_reservation_locked()).
// - The lease is published in `lease` (atomics: state, worker id, deadline);
//   a backend checks it before every id, the fast path included.
//   Backends never do file I/O on the id path: one that needs a reservation
//   raises `demand_ms_plus1`, sets the worker's latch and sleeps on
//   `reservation_cv` in short, interruptible slices.
// - Each backend counts its ids in its own cache line; readers sum them.

#include <cstddef>
#include <cstring>

#include "snowflake.hpp"

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

Size shared_size(int slots) {
    return add_size(offsetof(SharedState, counters), mul_size(slots, sizeof(IdCounter)));
}

void request_shmem() {
    RequestAddinShmemSpace(shared_size(sf_backend_slots()));
    RequestNamedLWLockTranche(kTranche, 1);
}

#if SF_HAVE_SHMEM_REQUEST_HOOK
void shmem_request() {
    if (prev_shmem_request_hook != nullptr) prev_shmem_request_hook();
    request_shmem();
}
#endif

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
        shared->worker_latch = nullptr;
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

}  // namespace

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

void lift_fence_locked() {
    pg_atomic_write_u64(&shared->fence_ms_plus1, 0);
    publish_reservation_locked();
}

int64_t start_tenure_locked(int32_t worker, int64_t floor_ms) {
    const uint64 next = swap_position(
        [&](uint64 p) { return snowflake::core::tenure_position(p, floor_ms, worker); });
    return snowflake::core::packed_ms(next);
}

uint64 raise_position_locked(int64_t floor_ms) {
    return swap_position([&](uint64 p) { return snowflake::core::raise_position(p, floor_ms); });
}

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
