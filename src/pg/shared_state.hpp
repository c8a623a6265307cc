// The state every process of the server shares (shmem.cpp creates it): the
// struct, what protects each of its fields, and the locking protocol.
//
// Locking protocol. There is one LWLock, `lock`; nothing else is ever held
// with it, so there is no lock order to keep.
// - `position` (the last issued millisecond and sequence, and the worker id
//   they are composed with, or a fenced word: core/position.hpp) is only
//   ever changed by compare-and-swap, through the core's protocol
//   (core/position.hpp, run over these words by position_words.hpp), so
//   every id belongs to exactly one successful swap and a node's ids
//   strictly increase while its worker id stays the same.
// - THE INVARIANT (core/position.hpp, where it is argued): an id is issued
//   only by the compare-and-swap that replaced a word that was not fenced,
//   composed with that word's worker id, under the reservation read after
//   that word; and it is returned only if the boot clock read after the
//   swap is still before the lease deadline read after the word. Every
//   transition moves the word under `lock`: fence_ids_locked() (a lease
//   lost or paused, a clean shutdown) makes it fenced, which no normal word
//   equals and no fast path issues from; start_tenure_locked() (a
//   hand-over, a backup worker id and the return from it) and
//   lift_fence_locked() go from a fenced word to one at least a
//   millisecond past the fence and the floor, after bringing the
//   reservation down to the start. A caller that read the word before a
//   transition (and was then descheduled for any length of time) fails its
//   swap and decides again from the new word; one whose swap came after the
//   lease's deadline gives its id up (a gap) and refuses (SF003).
//   test/unit/position_check_test.cpp checks every interleaving. No sleep or
//   margin is part of this argument.
// - Two generators, one protocol (issue 32): `position` is the SQL
//   generator's word (every caller but the HTTP endpoint's batches), and
//   `http_position` the HTTP generator's, in use only with
//   snowflake.http_worker_id set (a static worker id of its own beside
//   snowflake.worker_id; guc.cpp refuses it with leasing). Each word is run
//   by the same core protocol (position_words.hpp over a Generator), so the
//   invariant holds for each word on its own; their ids differ in their
//   worker ids. What bounds ids bounds both: the one `reserved_until_ms`
//   (a demand from either raises the reservation), the one floor, and every
//   transition (shmem.cpp) moves every word in use the same way, under
//   `lock`; a tenure of a leased worker id (start_tenure_locked()) is the
//   SQL word's alone. While off, `http_position` stays fenced at -1 and
//   nothing issues from it or moves it.
// - The fenced millisecond is the exact mark of a clean shutdown: from the
//   fence on no id is issued until a new tenure. The mark at a clean stop
//   is the highest millisecond of the words in use (issued_ms(), shmem.hpp).
// - The fast path (one id, same millisecond with sequence left, or a later
//   millisecond inside the reservation) reads `position`, then the clock,
//   and swaps without any lock. Reading the position before the clock
//   matters: a clock read after the position was published is never earlier
//   than the clock read of whoever published it, so "behind" is a real step.
// - Everything else (waits, clock steps, errors, batches, statistics resets,
//   publishing a reservation, snowflake_advance_floor) takes `lock`
//   exclusively, briefly: under it the same read-position, read-clock, swap
//   sequence runs the core state machine and retries if a fast-path swap came
//   between. `lock` protects the fields marked "lock" below.
// - `lock` is never held across I/O, a sleep or anything that can raise an
//   error: the caller copies what it needs, releases it, then waits or
//   reports.
// - Only the mark worker (mark_worker.cpp) writes the mark file while the server
//   runs (during recovery, only the startup process, replaying wal.cpp's
//   records under `lock`): it writes a reservation to disk first and only then publishes it
//   under `lock`; nothing issues an id past `reserved_until_ms`. With worker
//   ids leased from a coordinator, the lease worker (lease_worker.cpp) does the same
//   with the worker id's mark in etcd or ZooKeeper, and `reserved_until_ms` is the lower
//   of the two reservations (publish_reservation_locked(), reservation_limit.cpp).
// - The lease is published in `lease` (atomics: state, worker id, deadline);
//   every id's call reads the state and deadline after the word and the boot
//   clock after its swap (position_words.hpp), the fast path included.
//   Backends never do file I/O on the id path: one that needs a reservation
//   raises `demand_ms_plus1`, sets the worker's latch and sleeps on
//   `reservation_cv` in short, interruptible slices.
// - Each backend counts its ids in its own cache line; readers sum them.

#pragma once

#include "../core/generator.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"

#include "pg_headers.hpp"

namespace snowflake::pg {

// The size of the lease's error texts.
constexpr size_t kErrorTextSize = snowflake::core::kLeaseErrorSize;

// What load_mark() (mark_file.cpp) found at start: SharedState::mark_status.
enum MarkStatus { kMarkNone = 0, kMarkOk = 1, kMarkCorrupt = 2 };
// Where the generator's floor came from: the mark file of the previous run,
// snowflake_advance_floor(), (leasing) the previous holder's mark in the coordinator, or
// a reservation replayed from the primary's WAL (wal.cpp).
enum FloorSource { kFloorMarkFile = 0, kFloorAdvanced = 1, kFloorHandover = 2, kFloorReplayed = 3 };

// The generators of a node, each issuing from a position word of its own
// (SharedState::position, ::http_position) by the same protocol.
enum class Generator {
    Sql,   // snowflake.worker_id (or the leased one): SQL, and HTTP ids while http_worker_id is off
    Http,  // snowflake.http_worker_id: the HTTP endpoint's ids
};
// Every generator, in the order the transitions move their words.
constexpr Generator kGenerators[] = {Generator::Sql, Generator::Http};

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

// The worker id's lease (lease_worker.cpp), published for backends. The
// lease worker writes the worker id, the coordinator's reservation and the position's
// hand-over floor before it publishes state Held; backends read the state
// first (lease_allows_ids(), lease_state.cpp).
struct LeaseShared {
    bool leasing;                    // set at start: snowflake.etcd_endpoints or zookeeper_hosts is set
    pg_atomic_uint32 state;          // core::LeaseState
    pg_atomic_uint32 worker_plus1;   // leased worker id + 1 (0: none)
    pg_atomic_uint64 deadline_ns;    // CLOCK_BOOTTIME: ids may be issued while now < deadline
    // The end of the worker id's reservation in the coordinator
    // (<prefix>/marks/<id>), plus one (0: none): ids are issued up to
    // min(local, coordinator).
    pg_atomic_uint64 coord_reserved_ms_plus1;
    // lock:
    int64_t lease_id;                // 0: none
    int64_t granted_ttl_ms;          // TTL (ZooKeeper: session timeout) granted; 0: none
    uint64_t renewals;
    uint64_t failures;
    char last_error[kErrorTextSize];
    uint32_t last_error_reason;      // core::LeaseError of last_error
    uint64_t mark_attempts;          // writes of the coordinator's mark tried
    uint64_t mark_failures;          // ... that failed
    char mark_error[kErrorTextSize];  // the last one's failure; "" if it succeeded
    Latch* lease_worker_latch;       // lock: nullptr while the lease worker is not running
    // Clock failover (snowflake.clock_backwards = failover, core/backup.hpp).
    // A backend whose clock is behind past the tolerance sets backup_wanted
    // to its snowflake.clock_tolerance_ms + 1 and waits; the lease worker
    // judges the clock again on its own reading with that tolerance
    // (core::plan_backup) and clears it with each attempt's outcome.
    pg_atomic_uint32 backup_wanted;
    pg_atomic_uint32 backup_worker_plus1;  // the backup worker id in use + 1 (0: none)
    // lock:
    int64_t own_last_ms;             // while on a backup: the own id's last millisecond
    // The highest millisecond ever issued under the own id by this run,
    // kept when a backup started (-1: none): the position's millisecond may
    // be lower while the backup's ids are issued. The exact mark at a clean
    // stop and the hand-over of a new tenure take the higher of the two.
    int64_t own_high_ms;
    uint64_t clock_failovers;        // backups started since the server started
    uint64_t backup_attempts;        // attempts the lease worker finished
    char backup_error[kErrorTextSize];  // the last one's failure; "" if it started a backup or none was needed
};

// The bits of WalMarkShared::refusing (wal.cpp).
constexpr uint32 kRefuseNoMark = 1;    // promoted without a mark that came through the WAL
constexpr uint32 kRefuseEpoch = 2;     // the replayed records count from another epoch
constexpr uint32 kRefuseLostMark = 4;  // the mark file lost from a data directory that issued ids

// What wal.cpp keeps in shared memory (SharedState::wal).
struct WalMarkShared {
    // Set by the postmaster at start: this run began in archive recovery
    // (standby.signal or recovery.signal in the data directory), so its end
    // is a promotion (or the end of a point-in-time recovery), not a crash
    // recovery of the same data directory.
    bool archive_recovery;
    // lock: snowflake records replayed in this run.
    uint64_t replayed;
    // Why ids are refused (kRefuse* bits; 0: they are not). Read without
    // the lock by the id path; written under it (by the postmaster alone at
    // start).
    // - kRefuseNoMark: this node was promoted with a static worker id and
    //   its mark did not come through the WAL; ends when the clock passes
    //   refuse_until_unix_ms or snowflake_advance_floor() is called.
    // - kRefuseEpoch: the replayed records count from another epoch than
    //   this node's; ends only when the epochs agree.
    // - kRefuseLostMark: the mark file is missing from a data directory that
    //   issued ids (core::judge_missing_mark); ends when replay writes the
    //   mark file from a snowflake record or snowflake_advance_floor() is
    //   called.
    pg_atomic_uint32 refusing;
    int64_t refuse_until_unix_ms;  // lock: -1 while not yet worked out
    bool refusal_on_disk;          // lock: the file snowflake.promoted holds it
    // lock: the epoch of the replayed records while the epoch refusal
    // holds, in Unix microseconds.
    int64_t records_epoch_unix_us;
    // The file snowflake.walepoch exists (it keeps the epoch refusal), and
    // the epoch it names. Written by the startup process during recovery,
    // by the mark worker after it (it removes a file whose epoch agrees).
    bool epoch_file_on_disk;
    int64_t epoch_file_unix_us;
    // The marker file snowflake.walmark exists. Written by the startup
    // process during recovery, by the mark worker after it.
    bool marker_on_disk;
};

struct SharedState {
    // --- The lock-free id path -------------------------------------------
    // Packed position (core::pack_position), advanced only by
    // compare-and-swap, by the fast path without the lock and by the slow
    // path under it.
    alignas(PG_CACHE_LINE_SIZE) pg_atomic_uint64 position;
    // Ids may be issued up to this millisecond: the end of the durable
    // reservation, the lower of the local mark's and (leasing) the
    // coordinator mark's. Written under lock by publish_reservation_locked(), after the
    // mark is on disk.
    pg_atomic_uint64 reserved_until_ms;
    // The end of the local mark's reservation (the file), written under lock.
    pg_atomic_uint64 local_reserved_ms;
    // The HTTP generator's packed position (snowflake.http_worker_id), in a
    // cache line of its own so that HTTP swaps never contend with SQL's; the
    // same protocol as `position`, under the same reservation. Fenced at -1
    // (worker 0) while the setting is off.
    alignas(PG_CACHE_LINE_SIZE) pg_atomic_uint64 http_position;

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

    // The mark (mark_file.cpp): loaded by the postmaster at start, raised by
    // redo during recovery (wal.cpp, under lock), then written only by the
    // mark worker (mark_worker.cpp) until the postmaster's shutdown.
    int mark_status;               // MarkStatus; set at start
    int mark_errno;                // for a mark that could not be read: the OS error
    char mark_problem[200];        // why the mark is unusable, a sentence for the error detail
    snowflake::core::Mark loaded;  // the mark read at start (ms -1: none)
    // The latest millisecond a backend waits to have reserved, plus one (0:
    // none); only ever raised (raise_demand(), reservation_limit.cpp).
    pg_atomic_uint64 demand_ms_plus1;
    WriteReport report;            // lock
    Latch* mark_worker_latch;      // lock: nullptr while the mark worker is not running
    // Broadcast by the mark worker and the lease worker after every write
    // attempt of a reservation, and by the lease worker at every change of
    // the lease.
    ConditionVariable reservation_cv;

    LeaseShared lease;
    WalMarkShared wal;  // the mark carried by the WAL (wal.cpp)

    int counter_slots;
    IdCounter counters[FLEXIBLE_ARRAY_MEMBER];  // Stats: ids per backend
};
// The shared state, attached in every process (shmem.cpp); nullptr without
// preload.
extern SharedState* shared;

// The position word of generator g.
inline pg_atomic_uint64* position_word(Generator g) {
    return g == Generator::Http ? &shared->http_position : &shared->position;
}

}  // namespace snowflake::pg
