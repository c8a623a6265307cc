// Shared generator state.
//
// Locking protocol.
// - `position` (the last issued millisecond and sequence, packed) is only
//   ever advanced by compare-and-swap, so every id belongs to exactly one
//   successful swap and ids strictly increase.
// - The fast path (one id, same millisecond with sequence left, or a later
//   millisecond inside the reservation) reads `position`, then the clock,
//   and swaps without any lock. Reading the position before the clock
//   matters: a clock read after the position was published is never earlier
//   than the clock read of whoever published it, so "behind" is a real step.
// - Everything else (waits, clock steps, errors, batches, reservations,
//   statistics resets) takes `lock` exclusively, so slow paths run one at a
//   time; under it the same read-position, read-clock, swap sequence runs
//   the core state machine and retries if a fast-path swap came between.
// - The lock is never held across anything that can raise an error or
//   sleep: the caller releases it and then waits or reports.
// - `mark_lock` serialises writes of the high-water mark file (mark.cpp). A
//   reservation is written to disk first and only then published, under
//   `lock`, in `reserved_until_ms`; nothing issues an id past it.
// - Each backend counts its ids in its own cache line; readers sum them.

#include <cstddef>
#include <cstring>

#include "snowflake.hpp"

extern "C" {
#include "storage/ipc.h"
#include "storage/shmem.h"
}

namespace sf {

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
    RequestNamedLWLockTranche(kTranche, 2);
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
        pg_atomic_init_u64(&shared->position, snowflake::core::pack_position(-1, snowflake::core::kMaxSequence));
        pg_atomic_init_u64(&shared->reserved_until_ms, static_cast<uint64>(snowflake::core::kMaxMs));
        shared->slow = snowflake::core::state_after(-1);
        shared->stats_since = GetCurrentTimestamp();
        pg_atomic_init_u64(&shared->ids_unslotted, 0);
        shared->counter_slots = slots;
        for (int i = 0; i < slots; i++) pg_atomic_init_u64(&shared->counters[i].ids, 0);
        shared->mark_lock = &GetNamedLWLockTranche(kTranche)[1].lock;
        pg_atomic_init_u64(&shared->reservation_waits, 0);
        // Only the postmaster creates the segment: read the mark from disk
        // and start above it.
        load_mark(shared);
    }
    LWLockRelease(AddinShmemInitLock);
    if (!IsUnderPostmaster) register_mark_shutdown();
}

}  // namespace

void count_ids(uint64_t n) {
    const int slot = sf_my_backend_slot();
    if (slot >= 1 && slot <= shared->counter_slots) {
        pg_atomic_uint64* c = &shared->counters[slot - 1].ids;
        // Only this backend writes its slot: no locked instruction needed.
        pg_atomic_write_u64(c, pg_atomic_read_u64(c) + n);
    } else {
        pg_atomic_fetch_add_u64(&shared->ids_unslotted, static_cast<int64>(n));
    }
}

uint64_t ids_issued_locked() {
    uint64_t sum = pg_atomic_read_u64(&shared->ids_unslotted);
    for (int i = 0; i < shared->counter_slots; i++) sum += pg_atomic_read_u64(&shared->counters[i].ids);
    return sum - shared->ids_baseline;
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

}  // namespace sf
