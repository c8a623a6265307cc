// Shared declarations of the PostgreSQL glue. Each glue source includes the
// C++ standard headers it needs first, then this header, which brings in the
// core and then PostgreSQL's headers (whose macros break C++ headers that
// come after them).
#pragma once

#include "../core/generator.hpp"
#include "../core/layout.hpp"
#include "../core/mark.hpp"
#include "../core/uuid.hpp"

#include <cstdint>

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#else
#include "storage/backendid.h"
#endif
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#if PG_VERSION_NUM < 150000
#include "postmaster/autovacuum.h"
#include "replication/walsender.h"
#endif
}

#include "compat.hpp"

// Dedicated SQLSTATEs, documented in docs/reference.md.
#define ERRCODE_SF_CLOCK_BEHIND MAKE_SQLSTATE('S', 'F', '0', '0', '1')
#define ERRCODE_SF_CLOCK_OUT_OF_RANGE MAKE_SQLSTATE('S', 'F', '0', '0', '2')

namespace sf {

// Microseconds between 1970-01-01 and PostgreSQL's 2000-01-01 epoch.
constexpr int64_t kPgEpochUnixUs =
    static_cast<int64_t>(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

// Settings (guc.cpp).
extern int worker_id;            // -1 while unset
extern int clock_tolerance_ms;
extern bool preloaded;           // loaded through shared_preload_libraries
void define_settings();
// The epoch in effect, as a TimestampTz. Without preload it is the value the
// session started with (a SET is ignored), parsed the same way, or the default.
TimestampTz current_epoch();
// The epoch in Unix microseconds; an id-space millisecond as a timestamp.
inline int64_t epoch_unix_us() { return current_epoch() + kPgEpochUnixUs; }
inline TimestampTz ms_to_timestamptz(int64_t rel_ms) { return current_epoch() + rel_ms * 1000; }

// Shared memory (shmem.cpp).
void install_shmem_hooks();

// One cache line per backend for its count of ids issued, so that the hot
// path never writes a line another backend writes.
struct alignas(PG_CACHE_LINE_SIZE) IdCounter {
    pg_atomic_uint64 ids;  // written only by the backend owning the slot
};

struct SharedState {
    // Packed position (core::pack_position), advanced only by
    // compare-and-swap, by the fast path without the lock and by the slow
    // path under it.
    alignas(PG_CACHE_LINE_SIZE) pg_atomic_uint64 position;
    // Ids may be issued up to this millisecond; written under the lock.
    pg_atomic_uint64 reserved_until_ms;

    alignas(PG_CACHE_LINE_SIZE) LWLock* lock;  // serialises the slow path and the fields below
    // Counters and the floor loaded at start (set once by the postmaster);
    // last_ms/sequence are unused (see position), reserved_until_ms mirrors
    // the atomic above.
    snowflake::core::GeneratorState slow;
    uint64_t ids_baseline;                    // sum of the id counters at the last reset
    TimestampTz stats_since;
    pg_atomic_uint64 ids_unslotted;           // ids of processes without a counter slot

    // High-water mark (mark.cpp), loaded by the postmaster at start.
    LWLock* mark_lock;            // serialises writes of the mark file
    int mark_status;              // MarkStatus
    int mark_errno;               // for a mark that could not be read: the OS error
    char mark_problem[200];       // why the mark is unusable, a sentence for the error detail
    pg_atomic_uint64 reservation_waits;  // id requests that had to write the mark themselves
    int counter_slots;
    IdCounter counters[FLEXIBLE_ARRAY_MEMBER];
};
extern SharedState* shared;

enum MarkStatus { kMarkNone = 0, kMarkOk = 1, kMarkCorrupt = 2 };

// The mark file, relative to the data directory.
constexpr const char* kMarkFile = "snowflake.mark";
// How far ahead of the clock a reservation reaches, and when it is renewed.
constexpr int64_t kReserveWindowMs = 1000;
constexpr int64_t kRenewTickMs = 100;

// mark.cpp
void load_mark(SharedState* s);          // postmaster, at shared memory creation
void register_mark_shutdown();           // postmaster: write the exact mark at a clean stop
void register_mark_worker();             // _PG_init
// Makes sure the reservation covers needed_ms, writing the mark (up to
// new_until_ms) if it does not. Returns 0, or an errno with *step naming what
// failed. Never raises an error.
int reserve_until(int64_t needed_ms, int64_t new_until_ms, const char** step);

// Adds n to this backend's count of ids issued.
void count_ids(uint64_t n);
// Ids issued since the last reset; the caller holds the lock.
uint64_t ids_issued_locked();

// Reads CLOCK_REALTIME: microseconds since 1970; or milliseconds since 1970
// and the nanoseconds within that millisecond.
int64_t unix_now_us();
void unix_now_ms_ns(int64_t* ms, int64_t* sub_ms_ns);
// The current millisecond in the id space of the epoch given in Unix
// microseconds (epoch_unix_us()).
inline int64_t now_ms(int64_t epoch_us) {
    return snowflake::core::floor_div(unix_now_us() - epoch_us, 1000);
}

}  // namespace sf
