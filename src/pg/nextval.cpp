// snowflake_nextval(), snowflake_nextval_batch(), snowflake_stats().
//
// Every function here keeps only plain data in scope: an ereport() may jump
// out of any of them at any point after the lock is released.

#include <algorithm>
#include <cerrno>

#include "snowflake.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xlog.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_nextval_batch);
PG_FUNCTION_INFO_V1(snowflake_stats);
PG_FUNCTION_INFO_V1(snowflake_stats_reset);
}

namespace core = snowflake::core;

namespace sf {
namespace {

constexpr int32 kMaxBatch = 1000000;

void require_shared() {
    if (!preloaded || shared == nullptr)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("snowflake must be loaded via shared_preload_libraries"),
                 errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart "
                         "the server.")));
}

void require_generator() {
    require_shared();
    if (worker_id < 0)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("snowflake.worker_id is not set"),
                 errhint("Set snowflake.worker_id in postgresql.conf to a number from 0 to 1023 "
                         "that no other node uses, then restart the server.")));
    if (RecoveryInProgress())
        ereport(ERROR,
                (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                 errmsg("cannot issue snowflake ids during recovery"),
                 errdetail("This server is a standby or is still replaying WAL."),
                 errhint("Issue ids on the primary. A standby made from a base backup carries its "
                         "primary's snowflake.worker_id: give it a worker id of its own before "
                         "promoting it.")));
    if (shared->mark_status == kMarkCorrupt) {
        errno = shared->mark_errno;
        ereport(ERROR,
                (shared->mark_errno != 0 ? errcode_for_file_access() : errcode(ERRCODE_DATA_CORRUPTED),
                 errmsg("snowflake high-water mark file \"%s\" is unusable", kMarkFile),
                 errdetail("%s", shared->mark_problem),
                 errhint("Ids are refused so that none is issued twice. Follow \"Repairing the "
                         "high-water mark\" in docs/operations.md, then restart the server.")));
    }
}

// Sleeps, then spins, until the clock reaches the start of millisecond
// target_ms (relative to the epoch). Interruptible.
void wait_until(int64_t target_ms, int64_t epoch_us) {
    const int64_t target_us = target_ms * 1000;
    for (;;) {
        const int64_t remaining_us = target_us - (unix_now_us() - epoch_us);
        if (remaining_us <= 0) return;
        if (remaining_us > 2000) {
            (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                            static_cast<long>((remaining_us - 1000) / 1000), PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
        }
        CHECK_FOR_INTERRUPTS();
    }
}

void report_clock(const core::Next& r, int64_t now_ms) {
    if (r.status == core::Status::ClockBehind) {
        const TimestampTz resume = ms_to_timestamptz(r.wait_until_ms);
        // timestamptz_to_str() returns a static buffer: copy the first one.
        char* last_text = pstrdup(timestamptz_to_str(ms_to_timestamptz(now_ms + r.behind_ms)));
        ereport(ERROR,
                (errcode(ERRCODE_SF_CLOCK_BEHIND),
                 errmsg("system clock moved backwards by %lld ms", static_cast<long long>(r.behind_ms)),
                 r.at_floor ? errdetail("Before this start the server may have issued ids up to %s, "
                                      "its high-water mark; snowflake.clock_tolerance_ms is %d.",
                                      last_text, clock_tolerance_ms)
                          : errdetail("Ids have been issued up to %s; snowflake.clock_tolerance_ms is %d.",
                                      last_text, clock_tolerance_ms),
                 errhint("Check the time synchronisation of this server; ids resume when the clock "
                         "reaches %s.",
                         timestamptz_to_str(resume))));
    }
    const char* when = r.status == core::Status::BeforeEpoch ? "before" : "past the end of";
    ereport(ERROR,
            (errcode(ERRCODE_SF_CLOCK_OUT_OF_RANGE),
             errmsg("system clock is %s the id range of snowflake.epoch", when),
             errdetail("The clock reads %lld ms from the epoch %s; ids cover 0 to %lld ms.",
                       static_cast<long long>(now_ms), timestamptz_to_str(current_epoch()),
                       static_cast<long long>(core::kMaxMs)),
             errhint("Check the system clock, or choose a snowflake.epoch that covers it.")));
}

// One step of the state machine under the lock: position first, then the
// clock, then a swap (see the protocol in shmem.cpp).
core::Next slow_step(const core::Config& config, int64_t epoch_us, int32_t max_count,
                     int64_t* now_out) {
    core::Next r;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    for (;;) {
        uint64 cur = pg_atomic_read_u64(&shared->position);
        pg_read_barrier();  // the position is read before the clock
        const int64_t now = now_ms(epoch_us);
        core::GeneratorState g = shared->slow;
        g.last_ms = core::packed_ms(cur);
        g.sequence = core::packed_sequence(cur);
        g.reserved_until_ms = static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms));
        r = core::next_ids(g, now, config, max_count);
        if (r.status == core::Status::Issued &&
            !pg_atomic_compare_exchange_u64(&shared->position, &cur,
                                            core::pack_position(g.last_ms, g.sequence)))
            continue;  // a fast-path swap came in between: decide again
        shared->slow.counters = g.counters;
        *now_out = now;
        break;
    }
    LWLockRelease(shared->lock);
    return r;
}

// Issues up to max_count ids of one millisecond, waiting as the core asks.
core::Next issue(int32_t max_count) {
    require_generator();
    const core::Config config{worker_id, clock_tolerance_ms};
    const int64_t epoch_us = epoch_unix_us();

    if (max_count == 1) {
        // Lock-free fast path; a few lost races fall through to the lock.
        for (int attempt = 0; attempt < 3; attempt++) {
            uint64 cur = pg_atomic_read_u64(&shared->position);
            pg_read_barrier();  // the position is read before the clock (shmem.cpp)
            const int64_t now = now_ms(epoch_us);
            const auto reserved = static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms));
            core::FastNext f;
            if (!core::fast_next(cur, now, reserved, config.worker, &f)) break;
            if (pg_atomic_compare_exchange_u64(&shared->position, &cur, f.next)) {
                count_ids(1);
                core::Next r;
                r.status = core::Status::Issued;
                r.first_id = f.id;
                r.count = 1;
                return r;
            }
        }
    }

    for (;;) {
        int64_t now = 0;
        const core::Next r = slow_step(config, epoch_us, max_count, &now);
        switch (r.status) {
            case core::Status::Issued:
                count_ids(static_cast<uint64_t>(r.count));
                return r;
            case core::Status::WaitNextMs:
            case core::Status::WaitClock:
            case core::Status::WaitFloor:
                wait_until(r.wait_until_ms, epoch_us);
                break;
            case core::Status::ClockBehind:
            case core::Status::BeforeEpoch:
            case core::Status::EndOfTime:
                report_clock(r, now);
                break;
            case core::Status::NeedReservation: {
                // No reservation covers the clock (idle server, or the
                // background worker fell behind): write one now.
                pg_atomic_fetch_add_u64(&shared->reservation_waits, 1);
                const char* step = "";
                if (int err = reserve_until(now, now + kReserveWindowMs, &step)) {
                    errno = err;
                    ereport(ERROR,
                            (errcode_for_file_access(),
                             errmsg("could not write snowflake high-water mark file \"%s\" (%s): %m",
                                    kMarkFile, step),
                             errhint("Ids are refused until the mark can be written, so that none "
                                     "is issued twice after a crash. Check the data directory's "
                                     "file system.")));
                }
                break;
            }
        }
    }
}

struct BatchState {
    int32_t remaining;  // ids still to return
    int32_t chunk_left; // ids left in the current chunk
    int64_t next_id;
};

}  // namespace
}  // namespace sf

extern "C" {

Datum snowflake_nextval(PG_FUNCTION_ARGS) {
    const core::Next r = sf::issue(1);
    PG_RETURN_INT64(r.first_id);
}

Datum snowflake_nextval_batch(PG_FUNCTION_ARGS) {
    FuncCallContext* funcctx;
    if (SRF_IS_FIRSTCALL()) {
        const int32 count = PG_GETARG_INT32(0);
        if (count < 1 || count > sf::kMaxBatch)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("batch size %d is out of range", count),
                     errhint("Ask for 1 to %d ids per call.", sf::kMaxBatch)));
        sf::require_generator();
        funcctx = SRF_FIRSTCALL_INIT();
        auto* st = static_cast<sf::BatchState*>(
            MemoryContextAllocZero(funcctx->multi_call_memory_ctx, sizeof(sf::BatchState)));
        st->remaining = count;
        funcctx->user_fctx = st;
    }
    funcctx = SRF_PERCALL_SETUP();
    auto* st = static_cast<sf::BatchState*>(funcctx->user_fctx);
    if (st->remaining == 0) SRF_RETURN_DONE(funcctx);
    if (st->chunk_left == 0) {
        // One lock round trip for up to a whole millisecond of ids.
        const core::Next r = sf::issue(std::min<int32_t>(st->remaining, core::kIdsPerMs));
        st->next_id = r.first_id;
        st->chunk_left = r.count;
    }
    const int64 id = st->next_id;
    // Step only while ids are left in the chunk: the last id of the range
    // is INT64_MAX.
    if (--st->chunk_left > 0) st->next_id++;
    st->remaining--;
    SRF_RETURN_NEXT(funcctx, Int64GetDatum(id));
}

Datum snowflake_stats(PG_FUNCTION_ARGS) {
    sf::require_shared();
    TupleDesc tupdesc;
    if (get_call_result_type(fcinfo, nullptr, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "return type must be a row type");

    LWLockAcquire(sf::shared->lock, LW_SHARED);
    const core::Counters counters = sf::shared->slow.counters;
    const uint64 ids_issued = sf::ids_issued_locked();
    const TimestampTz since = sf::shared->stats_since;
    const int64 reserved = static_cast<int64>(pg_atomic_read_u64(&sf::shared->reserved_until_ms));
    LWLockRelease(sf::shared->lock);
    const int64 last_ms = core::packed_ms(pg_atomic_read_u64(&sf::shared->position));

    Datum values[13];
    bool nulls[13] = {false};
    int i = 0;
    if (sf::worker_id >= 0)
        values[i++] = Int32GetDatum(sf::worker_id);
    else
        nulls[i++] = true;
    values[i++] = TimestampTzGetDatum(sf::current_epoch());
    values[i++] = Int64GetDatum(static_cast<int64>(ids_issued));
    if (last_ms >= 0)
        values[i++] = TimestampTzGetDatum(sf::ms_to_timestamptz(last_ms));
    else
        nulls[i++] = true;
    values[i++] = Int64GetDatum(static_cast<int64>(counters.overflow_waits));
    values[i++] = Int64GetDatum(static_cast<int64>(counters.clock_backwards_events));
    values[i++] = Int64GetDatum(counters.clock_backwards_max_ms);
    values[i++] = Int64GetDatum(static_cast<int64>(counters.clock_backwards_errors));
    values[i++] = TimestampTzGetDatum(since);
    if (reserved >= 0)
        values[i++] = TimestampTzGetDatum(sf::ms_to_timestamptz(reserved));
    else
        nulls[i++] = true;
    values[i++] = Int64GetDatum(static_cast<int64>(counters.reservations));
    values[i++] = Int64GetDatum(static_cast<int64>(pg_atomic_read_u64(&sf::shared->reservation_waits)));
    values[i++] = Int64GetDatum(static_cast<int64>(counters.startup_waits));
    if (i != tupdesc->natts) elog(ERROR, "snowflake_stats: expected %d columns, got %d", i, tupdesc->natts);

    HeapTuple tuple = heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls);
    PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}

Datum snowflake_stats_reset(PG_FUNCTION_ARGS) {
    sf::require_shared();
    const TimestampTz now = GetCurrentTimestamp();
    LWLockAcquire(sf::shared->lock, LW_EXCLUSIVE);
    sf::shared->slow.counters = core::Counters{};
    pg_atomic_write_u64(&sf::shared->reservation_waits, 0);
    sf::shared->ids_baseline = 0;
    sf::shared->ids_baseline = sf::ids_issued_locked();
    sf::shared->stats_since = now;
    LWLockRelease(sf::shared->lock);
    PG_RETURN_VOID();
}
}
