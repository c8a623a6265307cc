// id_path.cpp: issuing ids from the shared position, with every wait and
// refusal on the way.
#pragma once

#include "../core/generator.hpp"

#include "pg_headers.hpp"
#include "shared_state.hpp"

namespace snowflake::pg {

// How a call of issue_ids() may wait. Backends pass kBackendWait: no limit
// (statement_timeout applies) and spinning (lowest latency).
struct IdWait {
    // Whether waits for the next millisecond (a millisecond's 4,096 ids used
    // up) sleep instead of spinning for their last two milliseconds: the
    // HTTP worker's, which shares the CPUs with its clients.
    bool yields = false;
    // A limit on the wait, on the monotonic clock in microseconds (0: none),
    // also ended by a shutdown request (ShutdownRequestPending): the HTTP
    // worker's, kRequestWaitLimitMs from the request's start; its ids then
    // fail with 57014 (canceling statement due to the limit) or 57P01
    // (shutdown).
    int64_t deadline_us = 0;
};
inline constexpr IdWait kBackendWait{};
constexpr int64_t kRequestWaitLimitMs = 1000;

// Issues up to max_count (1 to kIdsPerMs) ids of one millisecond from
// generator gen's word (shared_state.hpp; Generator::Http only while
// generator_in_use() says so): r.first_id .. r.first_id + r.count - 1,
// waiting as needed in interruptible slices, as wait allows. Raises an
// error (ereport) when ids cannot be issued: callers outside a SQL function
// (a background worker) call it through call_catching_error()
// (ereport_guard.hpp).
snowflake::core::Next issue_ids(Generator gen, int32_t max_count, const IdWait& wait);

// Raises an error unless this server may issue ids at all: preloaded, a
// worker id (set or leased), not in recovery, a usable mark.
void require_generator();

// A call's wait for a reservation, across the slices it takes.
struct ReservationWait {
    bool asked = false;
    int64_t since_us = 0;         // monotonic, when the call first asked
    uint64_t attempts = 0;        // the mark worker's write attempts when it asked
    uint64_t coord_attempts = 0;  // the lease worker's writes of the coordinator's mark then
};
// Asks the workers for a reservation covering needed_ms and sleeps on
// reservation_cv for at most one slice. Raises the error of a write a
// worker attempted after the call asked, or the absence of the mark worker.
void await_reservation(int64_t needed_ms, ReservationWait* w);

// A call's wait for a backup worker id (snowflake.clock_backwards =
// failover), across the slices it takes.
struct BackupWait {
    bool asked = false;
    int64_t since_us = 0;   // monotonic, when the call first asked
    uint64_t attempts = 0;  // the lease worker's finished attempts then
};
// Asks the lease worker for a backup worker id and sleeps on
// reservation_cv for at most one slice; returns null to decide again, or
// why no backup id takes over (written into why): an attempt made after
// the call asked found none, or the wait passed its limit. The request
// carries the call's snowflake.clock_tolerance_ms: the lease worker fails
// over only if the clock is refused on its own, later reading (on a backup
// already: behind the backup's ids too, and it takes another).
const char* await_backup(BackupWait* w, char (&why)[kErrorTextSize]);
// Generator gen's state from shared memory, the position read before the
// clock (the protocol in shared_state.hpp); *cur is the position read, *now
// the clock. The caller holds the lock.
snowflake::core::GeneratorState load_state(Generator gen, int64_t epoch_us, uint64* cur, int64_t* now);

}  // namespace snowflake::pg
