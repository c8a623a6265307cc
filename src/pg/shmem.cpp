// Shared memory: requests and creates the shared state (shared_state.hpp,
// where the locking protocol is written down) and moves its position word
// through the transitions that protocol allows.

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/position.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "shmem.hpp"
#include "guc.hpp"
#include "layout_glue.hpp"
#include "lease_state.hpp"
#include "mark_file.hpp"
#include "position_words.hpp"
#include "reservation_limit.hpp"
#include "stats.hpp"

extern "C" {
#include "storage/ipc.h"
#include "storage/shmem.h"
}

namespace core = snowflake::core;

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
        const core::Geometry& geo = node_geometry();
        // A static worker id is in the word from the start; a leased node
        // starts fenced: its worker id comes with the first tenure
        // (start_tenure_locked()).
        pg_atomic_init_u64(&shared->position,
                           leasing_configured()
                               ? core::pack_fenced(geo, -1, 0)
                               : core::pack_position(geo, -1, geo.max_sequence, worker_id >= 0 ? worker_id : 0));
        // The HTTP generator's word: its own worker id from the start when
        // snowflake.http_worker_id is set (static only), else fenced for good.
        pg_atomic_init_u64(&shared->http_position,
                           generator_in_use(Generator::Http)
                               ? core::pack_position(geo, -1, geo.max_sequence, http_worker_id)
                               : core::pack_fenced(geo, -1, 0));
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
    if (!found) report_mark_layout();  // the mark's layout against snowflake.layout: FATAL unless a change
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

// Records the generator's floor: where the position was moved, how far a
// clock behind it is waited out, and what set it (for messages).
void set_floor_locked(int64_t floor_ms, int64_t grace_ms, FloorSource source) {
    shared->floor_ms = floor_ms;
    shared->floor_grace_ms = grace_ms;
    shared->floor_source = source;
}

}  // namespace

// Whether a generator's word is in use (shmem.hpp).
bool generator_in_use(Generator g) { return g == Generator::Sql || http_worker_id >= 0; }

// This node's last millisecond under any worker id (shmem.hpp).
int64_t issued_ms() {
    int64_t ms = -1;
    for (const Generator g : kGenerators) {
        if (!generator_in_use(g)) continue;
        const int64_t w = core::packed_ms(node_geometry(), pg_atomic_read_u64(position_word(g)));
        if (w > ms) ms = w;
    }
    return ms;
}

// Every transition below runs the core's protocol (core/position.hpp) over
// the shared words; the clock is not read by any of them.

// Fences ids (shmem.hpp).
int64_t fence_ids_locked() {
    int64_t sql_fence = -1;
    for (const Generator g : kGenerators) {
        if (!generator_in_use(g)) continue;
        PositionWords words(g, 0);
        const int64_t fenced = core::fence(node_geometry(), words);
        if (g == Generator::Sql) sql_fence = fenced;
    }
    return sql_fence;
}

// Lifts the fences (shmem.hpp).
void lift_fence_locked() {
    for (const Generator g : kGenerators) {
        if (!generator_in_use(g)) continue;
        PositionWords words(g, 0);
        core::lift(node_geometry(), words);
    }
}

// Starts a tenure of `worker` after floor_ms (shmem.hpp).
int64_t start_tenure_locked(int32_t worker, int64_t floor_ms, int64_t grace_ms, FloorSource source) {
    PositionWords words(Generator::Sql, 0);
    const int64_t start = core::start_tenure(node_geometry(), words, worker, floor_ms);
    // The start counts as used up: a clock up to grace_ms behind the floor
    // is still waited out.
    // (a floor past a short layout's lifetime starts at its end: no grace)
    set_floor_locked(start, grace_ms > 0 ? std::max<int64_t>(0, grace_ms + (start - floor_ms)) : 0, source);
    return start;
}

// Raises the words to "floor_ms used up" (shmem.hpp).
bool raise_floor_locked(int64_t floor_ms, int64_t grace_ms, FloorSource source) {
    bool moved = false;
    for (const Generator g : kGenerators) {
        if (!generator_in_use(g)) continue;
        PositionWords words(g, 0);
        if (core::raise_floor(node_geometry(), words, floor_ms)) moved = true;
    }
    if (!moved) return false;
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
