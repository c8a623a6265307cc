// Shared declarations of the PostgreSQL glue. Each glue source includes the
// C++ standard headers it needs first, then this header, which brings in the
// core and then PostgreSQL's headers (whose macros break C++ headers that
// come after them).
#pragma once

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/layout.hpp"
#include "../core/lease.hpp"
#include "../core/endpoints.hpp"
#include "../core/etcd_schema.hpp"
#include "../core/handover.hpp"
#include "../core/mark.hpp"
#include "../core/promotion.hpp"
#include "../core/reservation.hpp"
#include "../core/stats_snapshot.hpp"
#include "../core/uuid.hpp"

#include <cstdint>

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#else
#include "storage/backendid.h"
#endif
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#if PG_VERSION_NUM < 150000
#include "postmaster/autovacuum.h"
#include "replication/walsender.h"
#endif
}

#include "compat.hpp"
#include "wal.hpp"

// Dedicated SQLSTATEs, documented in docs/reference.md.
#define ERRCODE_SF_CLOCK_BEHIND MAKE_SQLSTATE('S', 'F', '0', '0', '1')
#define ERRCODE_SF_CLOCK_OUT_OF_RANGE MAKE_SQLSTATE('S', 'F', '0', '0', '2')
#define ERRCODE_SF_NO_LEASE MAKE_SQLSTATE('S', 'F', '0', '0', '3')
#define ERRCODE_SF_CLOCK_UNHEALTHY MAKE_SQLSTATE('S', 'F', '0', '0', '4')

namespace snowflake::pg {

constexpr size_t kErrorTextSize = snowflake::core::kLeaseErrorSize;

// Microseconds between 1970-01-01 and PostgreSQL's 2000-01-01 epoch.
constexpr int64_t kPgEpochUnixUs =
    static_cast<int64_t>(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

// Settings (guc.cpp).
extern int worker_id;            // -1 while unset
extern int clock_tolerance_ms;
extern int max_clock_error_ms;   // 0: the kernel's clock state is not checked
extern char* etcd_endpoints;     // "" (or NULL): no leasing
extern int lease_ttl_s;
extern char* lease_prefix;
extern bool preloaded;           // loaded through shared_preload_libraries
// Worker ids are leased from etcd (snowflake.etcd_endpoints is set).
bool leasing_configured();
extern char* http_listen;        // "host:port" of the HTTP endpoint, "" when off
extern char* http_token;         // Bearer token(s) the HTTP endpoint requires, "" for none
extern char* http_token_file;    // a file with the token(s), "" for none
extern bool http_allow_unauthenticated;  // no token beyond loopback is allowed
extern int http_max_ids_per_second;      // 0: no ceiling
constexpr int kDefaultHttpMaxIdsPerSecond = 2048000;  // half of 4,096 ids a millisecond
void define_settings();
// The postmaster, once at start: a clock outside the epoch's range is a
// WARNING (ids are refused with SF002 while it lasts), never a failed start.
void warn_if_clock_outside_epoch();
// The epoch in effect, as a TimestampTz. Without preload it is the value the
// session started with (a SET is ignored), parsed the same way, or the default.
TimestampTz current_epoch();
// The epoch in Unix microseconds; an id-space millisecond as a timestamp.
inline int64_t epoch_unix_us() { return current_epoch() + kPgEpochUnixUs; }
inline TimestampTz ms_to_timestamptz(int64_t rel_ms) { return current_epoch() + rel_ms * 1000; }

// Shared memory (shmem.cpp).
void install_shmem_hooks();
// The position's transitions (the invariant is written in shmem.cpp); each
// with `lock` held exclusively, never raising an error.
// Fences ids: no id is issued from the return on (until lift_fence_locked()
// or a new tenure); returns the last millisecond issued.
int64_t fence_ids_locked();
void lift_fence_locked();
// A new tenure of `worker`: the position moves to "after max(floor_ms, its
// own millisecond)" with the new worker id; returns that millisecond. Call
// it with the previous tenure's fence in place, and lift the fence after.
int64_t start_tenure_locked(int32_t worker, int64_t floor_ms);
// Raises the position to "floor_ms used up" (worker id unchanged); returns
// the position.
uint64 raise_position_locked(int64_t floor_ms);
// Raises an error unless the library was preloaded and its shared memory exists.
void require_shared();

// One cache line per backend for its count of ids issued, so that the hot
// path never writes a line another backend writes.
struct alignas(PG_CACHE_LINE_SIZE) IdCounter {
    pg_atomic_uint64 ids;  // written only by the backend owning the slot
};

// Every statistic of snowflake_stats, owned by stats.cpp, which turns it
// into SQL. The generator's counters are counted by the core's state machine
// under SharedState::lock; the rest are atomics counted without it, and the
// per-backend id counters sit at the end of SharedState.
struct Stats {
    snowflake::core::Counters generator;  // lock
    uint64_t ids_baseline;                // lock: sum of the id counters at the last reset
    TimestampTz since;                    // lock
    pg_atomic_uint64 ids_unslotted;       // ids of processes without a counter slot
    pg_atomic_uint64 reservation_waits;   // id requests that waited for a reservation
    pg_atomic_uint64 window_ms;           // reservation window in force
    pg_atomic_uint64 last_write_ms;       // duration of the last mark write
    pg_atomic_uint64 clock_health_refusals;  // calls refused by snowflake.max_clock_error_ms
    // Metrics only (not reset by snowflake_stats_reset()):
    pg_atomic_uint64 refusals[snowflake::core::kRefusalCount];  // by core::Refusal
};

// What the mark worker reports of its writes (lock).
struct WriteReport {
    uint64_t attempts;  // writes tried since start
    int err;            // errno of the last attempt, 0 if it succeeded
    uint64_t failures;  // writes that failed since start
    char step[48];      // what the last attempt was doing when it failed
};

// The worker-id lease (lease_worker.cpp), published for backends. The
// lease worker writes the worker id, the etcd reservation and the position's
// hand-over floor before it publishes state Held; backends read the state
// first (see may_issue_now() in nextval.cpp).
struct LeaseShared {
    bool leasing;                    // set at start: snowflake.etcd_endpoints is not empty
    pg_atomic_uint32 state;          // core::LeaseState
    pg_atomic_uint32 worker_plus1;   // leased worker id + 1 (0: none)
    pg_atomic_uint64 deadline_ns;    // CLOCK_BOOTTIME: ids may be issued while now < deadline
    // The end of the worker id's reservation in etcd (<prefix>/marks/<id>),
    // plus one (0: none): ids are issued up to min(local, etcd).
    pg_atomic_uint64 etcd_reserved_ms_plus1;
    // lock:
    int64_t lease_id;                // 0: none
    uint64_t renewals;
    uint64_t failures;
    char last_error[kErrorTextSize];
    uint32_t last_error_reason;      // core::LeaseError of last_error
    uint64_t mark_attempts;          // writes of the etcd mark tried
    uint64_t mark_failures;          // ... that failed
    char mark_error[kErrorTextSize];  // the last one's failure; "" if it succeeded
    Latch* worker_latch;             // nullptr while the lease worker is not running
};

struct SharedState {
    // --- The lock-free id path -------------------------------------------
    // Packed position (core::pack_position), advanced only by
    // compare-and-swap, by the fast path without the lock and by the slow
    // path under it.
    alignas(PG_CACHE_LINE_SIZE) pg_atomic_uint64 position;
    // Ids may be issued up to this millisecond: the end of the durable
    // reservation, the lower of the local mark's and (leasing) the etcd
    // mark's. Written under lock by publish_reservation_locked(), after the
    // mark is on disk.
    pg_atomic_uint64 reserved_until_ms;
    // The end of the local mark's reservation (the file), written under lock.
    pg_atomic_uint64 local_reserved_ms;
    // The fenced millisecond plus one (0: no fence), written under lock by
    // fence_ids_locked(): reserved_until_ms is at most the fenced millisecond.
    pg_atomic_uint64 fence_ms_plus1;

    // --- Everything else ----------------------------------------------------
    // Serialises the slow path and protects the fields marked "lock".
    alignas(PG_CACHE_LINE_SIZE) LWLock* lock;
    // The high-water mark the generator started from, raised by
    // snowflake_advance_floor(); how far the clock may be behind it and be
    // waited out (the loaded reservation's window after a crash).
    int64_t floor_ms;        // lock
    int64_t floor_grace_ms;  // lock
    int floor_source;        // lock: FloorSource, what set floor_ms (for messages)
    Stats stats;

    // The mark (mark.cpp): loaded by the postmaster at start, raised by
    // redo during recovery (wal.cpp, under lock), then written only by the
    // mark worker (worker.cpp) until the postmaster's shutdown.
    int mark_status;               // MarkStatus; set at start
    int mark_errno;                // for a mark that could not be read: the OS error
    char mark_problem[200];        // why the mark is unusable, a sentence for the error detail
    snowflake::core::Mark loaded;  // the mark read at start (ms -1: none)
    // The latest millisecond a backend waits to have reserved, plus one (0:
    // none); only ever raised (raise_demand()).
    pg_atomic_uint64 demand_ms_plus1;
    WriteReport report;            // lock
    Latch* worker_latch;           // lock: the mark worker's, nullptr while it is not running
    // Broadcast by the mark worker and the lease worker after every write
    // attempt of a reservation, and by the lease worker at every change of
    // the lease.
    ConditionVariable reservation_cv;

    LeaseShared lease;
    WalMarkShared wal;  // the mark carried by the WAL (wal.cpp)

    int counter_slots;
    IdCounter counters[FLEXIBLE_ARRAY_MEMBER];  // Stats: ids per backend
};
extern SharedState* shared;

enum MarkStatus { kMarkNone = 0, kMarkOk = 1, kMarkCorrupt = 2 };
// Where the generator's floor came from: the mark file of the previous run,
// snowflake_advance_floor(), (leasing) the previous holder's mark in etcd, or
// a reservation replayed from the primary's WAL (wal.cpp).
enum FloorSource { kFloorMarkFile = 0, kFloorAdvanced = 1, kFloorHandover = 2, kFloorReplayed = 3 };

// The mark file, relative to the data directory.
constexpr const char* kMarkFile = "snowflake.mark";

// nextval.cpp: the id path. Issues up to max_count (1 to kIdsPerMs) ids of
// one millisecond: r.first_id .. r.first_id + r.count - 1, waiting as needed
// in interruptible slices. Raises an error (ereport) when ids cannot be
// issued: callers outside a SQL function (a background worker) call it inside
// PG_TRY with only plain data in scope.
snowflake::core::Next issue(int32_t max_count);
// Whether this process's waits for the next millisecond (a millisecond's
// 4,096 ids used up) sleep instead of spinning for their last two
// milliseconds: set by the HTTP worker, which shares the CPUs with its
// clients; backends spin (lowest latency).
extern bool id_wait_yields;
// A limit on how long issue() may wait, on the monotonic clock in
// microseconds (0: none, as in backends, where statement_timeout applies),
// also ended by a shutdown request (ShutdownRequestPending): set by the HTTP
// worker around each request, whose ids then fail with 57014 (canceling
// statement due to the limit) or 57P01 (shutdown).
extern int64_t id_wait_deadline_us;
constexpr int64_t kRequestWaitLimitMs = 1000;
// Whether ids can be issued now, by the checks of the id path (preload,
// worker id, recovery, the mark) and the clock against the last id and the
// epoch. Never raises an error. When not ready, code gets the SQLSTATE (5
// characters and a NUL) the id path would raise and reason a sentence.
// Add a condition here and /healthz and /metrics (snowflake_ready) follow.
bool generator_ready(char* code, char* reason, size_t len);

// mark.cpp: the file.
void load_mark(SharedState* s);          // postmaster, at shared memory creation
void register_mark_shutdown();           // postmaster: write the exact mark at a clean stop
// Writes the mark durably (temp file, fsync, rename, fsync of the directory).
// Returns 0, or an errno with *step naming what failed. Never raises an error.
int write_mark(const snowflake::core::Mark& mark, const char** step);

// worker.cpp: the process that keeps the reservation ahead of the clock.
void register_mark_worker();             // _PG_init
// Registers a background worker of this library (shared memory, no
// database), started at start and restarted restart_s seconds after it
// exits with code 1; by default after recovery, a second later.
void register_worker(const char* function, const char* name,
                     BgWorkerStartTime start = BgWorkerStart_RecoveryFinished, int restart_s = 1);
// Asks the workers for a reservation covering ms (a backend, any lock free).
void raise_demand(int64_t ms);
int64_t demand_ms();
// Publishes min(local, etcd) reservation in reserved_until_ms; lock held.
void publish_reservation_locked();
// True when the postmaster is shutting down (its lock file says so): a
// worker then exits with code 0, quietly; otherwise with 1, to be restarted.
bool postmaster_stopping();

// lease_worker.cpp
void register_lease_worker();            // _PG_init, when leasing is configured
void init_lease(SharedState* s);         // postmaster, at shared memory creation
// The leased worker id (-1: none) or, without leasing, snowflake.worker_id.
int32_t current_worker_id();

// http_worker.cpp: the HTTP endpoint (snowflake.http_listen), registered
// only when the setting is not empty.
void register_http_worker();

// uuid.cpp: the next UUIDv7 of this process's ascending clock; raises an
// error (ereport) for a clock outside the UUIDv7 range.
snowflake::core::Uuid new_uuidv7();

// stats.cpp
// Adds n to this backend's count of ids issued.
void count_ids(uint64_t n);
// Counts a refusal (snowflake_ids_refused_total); call just before the error.
void count_refusal(snowflake::core::Refusal why);
void init_stats(SharedState* s, int slots);
// Every value of snowflake_stats, read under the lock: what both
// snowflake_stats() and /metrics show. The caller has checked
// require_shared() (or that shared memory exists).
using StatsSnapshot = snowflake::core::StatsSnapshot;
StatsSnapshot take_stats_snapshot();

// Reads CLOCK_REALTIME: microseconds since 1970; or milliseconds since 1970
// and the nanoseconds within that millisecond. CLOCK_MONOTONIC in
// microseconds, for measuring waits.
int64_t unix_now_us();
void unix_now_ms_ns(int64_t* ms, int64_t* sub_ms_ns);
int64_t monotonic_us();
int64_t monotonic_ns();
// CLOCK_BOOTTIME, which counts a suspend as CLOCK_MONOTONIC does not: lease
// deadlines, which must pass while a machine sleeps as etcd's TTL does.
int64_t boottime_ns();
// The kernel's view of time synchronisation (ntp_adjtime()).
snowflake::core::ClockHealth read_clock_health();
// The current millisecond in the id space of the epoch given in Unix
// microseconds (epoch_unix_us()).
inline int64_t now_ms(int64_t epoch_us) {
    return snowflake::core::floor_div(unix_now_us() - epoch_us, 1000);
}

}  // namespace snowflake::pg
