// snowflake_stats() and snowflake_stats_reset(): the one place that turns
// the statistics (Stats in snowflake.hpp) into SQL.

#include <cstdio>

#include "snowflake.hpp"

extern "C" {
#include "access/htup_details.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(snowflake_stats);
PG_FUNCTION_INFO_V1(snowflake_stats_reset);
}

namespace core = snowflake::core;

namespace snowflake::pg {

void init_stats(SharedState* s, int slots) {
    s->stats.generator = core::Counters{};
    s->stats.ids_baseline = 0;
    s->stats.since = GetCurrentTimestamp();
    pg_atomic_init_u64(&s->stats.ids_unslotted, 0);
    pg_atomic_init_u64(&s->stats.reservation_waits, 0);
    pg_atomic_init_u64(&s->stats.window_ms, static_cast<uint64>(core::kMinWindowMs));
    pg_atomic_init_u64(&s->stats.last_write_ms, 0);
    pg_atomic_init_u64(&s->stats.clock_health_refusals, 0);
    s->counter_slots = slots;
    for (int i = 0; i < slots; i++) pg_atomic_init_u64(&s->counters[i].ids, 0);
}

void count_ids(uint64_t n) {
    const int slot = sf_my_backend_slot();
    if (slot >= 1 && slot <= shared->counter_slots) {
        pg_atomic_uint64* c = &shared->counters[slot - 1].ids;
        // Only this backend writes its slot: no locked instruction needed.
        pg_atomic_write_u64(c, pg_atomic_read_u64(c) + n);
    } else {
        pg_atomic_fetch_add_u64(&shared->stats.ids_unslotted, static_cast<int64>(n));
    }
}

namespace {

// Sum of every id counter; the caller holds the lock.
uint64_t ids_counted_locked() {
    uint64_t sum = pg_atomic_read_u64(&shared->stats.ids_unslotted);
    for (int i = 0; i < shared->counter_slots; i++) sum += pg_atomic_read_u64(&shared->counters[i].ids);
    return sum;
}

}  // namespace
}  // namespace snowflake::pg

extern "C" {

Datum snowflake_stats(PG_FUNCTION_ARGS) {
    namespace sp = snowflake::pg;
    sp::require_shared();
    TupleDesc tupdesc;
    if (get_call_result_type(fcinfo, nullptr, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "return type must be a row type");

    sp::Stats* st = &sp::shared->stats;
    LWLockAcquire(sp::shared->lock, LW_SHARED);
    const core::Counters counters = st->generator;
    const uint64 ids_issued = sp::ids_counted_locked() - st->ids_baseline;
    const TimestampTz since = st->since;
    const int64 reserved = static_cast<int64>(pg_atomic_read_u64(&sp::shared->reserved_until_ms));
    sp::LeaseShared& ls = sp::shared->lease;
    const int64 lease_id = ls.lease_id;
    const uint64 renewals = ls.renewals;
    const uint64 failures = ls.failures;
    char last_error[sp::kErrorTextSize];
    snprintf(last_error, sizeof(last_error), "%s", ls.last_error);
    LWLockRelease(sp::shared->lock);
    const auto lease_state = static_cast<core::LeaseState>(pg_atomic_read_u32(&ls.state));
    const auto deadline_ns = static_cast<int64>(pg_atomic_read_u64(&ls.deadline_ns));
    const int32 worker = sp::current_worker_id();
    const int64 last_ms = core::packed_ms(pg_atomic_read_u64(&sp::shared->position));

    const core::ClockHealth clock = sp::read_clock_health();

    Datum values[25];
    bool nulls[25] = {false};
    int i = 0;
    if (worker >= 0)
        values[i++] = Int32GetDatum(worker);
    else
        nulls[i++] = true;
    values[i++] = TimestampTzGetDatum(sp::current_epoch());
    values[i++] = Int64GetDatum(static_cast<int64>(ids_issued));
    if (last_ms >= 0)
        values[i++] = TimestampTzGetDatum(sp::ms_to_timestamptz(last_ms));
    else
        nulls[i++] = true;
    values[i++] = Int64GetDatum(static_cast<int64>(counters.overflow_waits));
    values[i++] = Int64GetDatum(static_cast<int64>(counters.clock_backwards_events));
    values[i++] = Int64GetDatum(counters.clock_backwards_max_ms);
    values[i++] = Int64GetDatum(static_cast<int64>(counters.clock_backwards_errors));
    values[i++] = TimestampTzGetDatum(since);
    if (reserved >= 0)
        values[i++] = TimestampTzGetDatum(sp::ms_to_timestamptz(reserved));
    else
        nulls[i++] = true;
    values[i++] = Int64GetDatum(static_cast<int64>(counters.reservations));
    values[i++] = Int64GetDatum(static_cast<int64>(pg_atomic_read_u64(&st->reservation_waits)));
    values[i++] = Int64GetDatum(static_cast<int64>(counters.startup_waits));
    values[i++] = Int64GetDatum(static_cast<int64>(pg_atomic_read_u64(&st->window_ms)));
    values[i++] = Int64GetDatum(static_cast<int64>(pg_atomic_read_u64(&st->last_write_ms)));
    values[i++] = CStringGetTextDatum(core::lease_state_name(lease_state));
    if (lease_id != 0)
        values[i++] = Int64GetDatum(lease_id);
    else
        nulls[i++] = true;
    if (lease_state == core::LeaseState::Held && deadline_ns > 0) {
        // The monotonic deadline as a wall-clock time.
        values[i++] = TimestampTzGetDatum(GetCurrentTimestamp() + (deadline_ns - sp::monotonic_ns()) / 1000);
    } else {
        nulls[i++] = true;
    }
    values[i++] = Int64GetDatum(static_cast<int64>(renewals));
    values[i++] = Int64GetDatum(static_cast<int64>(failures));
    if (last_error[0] != '\0')
        values[i++] = CStringGetTextDatum(last_error);
    else
        nulls[i++] = true;
    if (clock.known)
        values[i++] = BoolGetDatum(clock.synchronized);
    else
        nulls[i++] = true;
    for (int64_t us : {clock.max_error_us, clock.est_error_us}) {
        if (clock.known && us >= 0)
            values[i++] = Float8GetDatum(core::clock_error_ms(us));
        else
            nulls[i++] = true;
    }
    values[i++] = Int64GetDatum(static_cast<int64>(pg_atomic_read_u64(&st->clock_health_refusals)));
    if (i != tupdesc->natts) elog(ERROR, "snowflake_stats: expected %d columns, got %d", i, tupdesc->natts);

    HeapTuple tuple = heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls);
    PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}

Datum snowflake_stats_reset(PG_FUNCTION_ARGS) {
    namespace sp = snowflake::pg;
    sp::require_shared();
    const TimestampTz now = GetCurrentTimestamp();
    sp::Stats* st = &sp::shared->stats;
    LWLockAcquire(sp::shared->lock, LW_EXCLUSIVE);
    st->generator = core::Counters{};
    pg_atomic_write_u64(&st->reservation_waits, 0);
    pg_atomic_write_u64(&st->clock_health_refusals, 0);
    st->ids_baseline = sp::ids_counted_locked();
    st->since = now;
    LWLockRelease(sp::shared->lock);
    PG_RETURN_VOID();
}
}
