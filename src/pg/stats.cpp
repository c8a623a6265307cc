// snowflake_stats() and snowflake_stats_reset(): the one place that turns
// the statistics (Stats in shared_state.hpp) into SQL.

#include <cstdio>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/id_layout.hpp"
#include "../core/position.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/reservation.hpp"
#include "../core/stats_columns.hpp"
#include "../core/stats_snapshot.hpp"
#include "stats.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "lease_state.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xlog.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

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
    for (auto& r : s->stats.refusals) pg_atomic_init_u64(&r, 0);
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

void count_refusal(core::Refusal why) {
    const int i = static_cast<int>(why);
    if (shared != nullptr && i >= 0 && i < core::kRefusalCount)
        pg_atomic_fetch_add_u64(&shared->stats.refusals[i], 1);
}

namespace {

// Sum of every id counter; the caller holds the lock.
uint64_t ids_counted_locked() {
    uint64_t sum = pg_atomic_read_u64(&shared->stats.ids_unslotted);
    for (int i = 0; i < shared->counter_slots; i++) sum += pg_atomic_read_u64(&shared->counters[i].ids);
    return sum;
}

}  // namespace

StatsSnapshot take_stats_snapshot() {
    Stats* st = &shared->stats;
    StatsSnapshot s;
    s.worker_id = current_worker_id();
    s.epoch_unix_us = epoch_unix_us();
    LeaseShared& ls = shared->lease;
    LWLockAcquire(shared->lock, LW_SHARED);
    s.generator = st->generator;
    s.ids_issued = ids_counted_locked() - st->ids_baseline;
    s.since_unix_us = st->since + kPgEpochUnixUs;
    s.reserved_until_ms = static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms));
    s.lease_id = ls.lease_id;
    s.lease_granted_ttl_ms = ls.granted_ttl_ms;
    s.lease_renewals = ls.renewals;
    s.coord_mark_write_failures = ls.mark_failures;
    s.mark_write_failures = shared->report.failures;
    s.lease_failures = ls.failures;
    snprintf(s.lease_last_error, sizeof(s.lease_last_error), "%s", ls.last_error);
    s.lease_last_error_reason = static_cast<core::LeaseError>(ls.last_error_reason);
    s.backup_worker_id = static_cast<int32_t>(pg_atomic_read_u32(&ls.backup_worker_plus1)) - 1;
    s.backup_until_ms = s.backup_worker_id >= 0 ? ls.own_last_ms : -1;
    s.clock_failovers = ls.clock_failovers;
    LWLockRelease(shared->lock);
    // The coordinator's own way to print the lease: etcd's lease id in
    // decimal, ZooKeeper's session id in hex (as zkCli and the server log
    // print it).
    snprintf(s.coordinator, sizeof(s.coordinator), "%s", coordinator_name());
    if (s.lease_id != 0) {
        if (zookeeper_configured())
            snprintf(s.lease_session, sizeof(s.lease_session), "0x%llx",
                     static_cast<unsigned long long>(s.lease_id));
        else
            snprintf(s.lease_session, sizeof(s.lease_session), "%lld", static_cast<long long>(s.lease_id));
    }
    s.lease_state = static_cast<core::LeaseState>(pg_atomic_read_u32(&ls.state));
    // A standby takes no lease (the lease worker starts at promotion).
    if (ls.leasing && RecoveryInProgress()) s.lease_state = core::LeaseState::Standby;
    const auto deadline_ns = static_cast<int64_t>(pg_atomic_read_u64(&ls.deadline_ns));
    if (s.lease_state == core::LeaseState::Held && deadline_ns > 0)  // the boot-clock deadline as wall time
        s.lease_deadline_unix_us = unix_now_us() + (deadline_ns - boottime_ns()) / 1000;
    const core::ClockHealth clock = read_clock_health();
    s.clock_known = clock.known;
    s.clock_synchronized = clock.synchronized;
    s.clock_max_error_us = clock.known ? clock.max_error_us : -1;
    s.clock_est_error_us = clock.known ? clock.est_error_us : -1;
    s.clock_health_refusals = pg_atomic_read_u64(&st->clock_health_refusals);
    s.last_ms = issued_ms();  // either generator's (snowflake.http_worker_id)
    s.http_worker_id = http_worker_id;
    const core::Geometry& g = node_geometry();
    snprintf(s.layout, sizeof(s.layout), "%s", core::geometry_text(g).c_str());
    s.ids_per_ms = g.max_sequence + 1;
    s.lifetime_end_unix_us = s.epoch_unix_us + (g.max_ms + 1) * 1000;
    s.reservation_waits = pg_atomic_read_u64(&st->reservation_waits);
    s.reservation_window_ms = pg_atomic_read_u64(&st->window_ms);
    s.last_mark_write_ms = pg_atomic_read_u64(&st->last_write_ms);
    s.server_start_unix_us = PgStartTime + kPgEpochUnixUs;
    for (int i = 0; i < core::kRefusalCount; i++) s.refusals[i] = pg_atomic_read_u64(&st->refusals[i]);
    return s;
}

}  // namespace snowflake::pg

extern "C" {

Datum snowflake_stats(PG_FUNCTION_ARGS) {
    namespace sp = snowflake::pg;
    sp::require_shared();
    TupleDesc tupdesc;
    if (get_call_result_type(fcinfo, nullptr, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "return type must be a row type");

    // One column per row of core::kStatsColumns, in order; /metrics shows the
    // same snapshot from the same table (core/prometheus.cpp). A database
    // still on 1.1's or 1.2's definition gets its first columns.
    const int natts = tupdesc->natts;
    if (natts != core::kStatsColumnCount && natts != core::kStatsColumnCount_1_1 &&
        natts != core::kStatsColumnCount_1_2)
        elog(ERROR, "snowflake_stats: expected %d columns, got %d", core::kStatsColumnCount, natts);
    const sp::StatsSnapshot s = sp::take_stats_snapshot();
    Datum values[core::kStatsColumnCount];
    bool nulls[core::kStatsColumnCount];
    for (int i = 0; i < natts; i++) {
        const core::StatValue v = core::kStatsColumns[i].value(s);
        nulls[i] = !v.present;
        values[i] = 0;
        if (!v.present) continue;
        switch (core::kStatsColumns[i].sql_type) {
            case core::SqlType::Int4: values[i] = Int32GetDatum(static_cast<int32>(v.n)); break;
            case core::SqlType::Int8: values[i] = Int64GetDatum(v.n); break;
            case core::SqlType::TimestampTz: values[i] = TimestampTzGetDatum(v.n - sp::kPgEpochUnixUs); break;
            case core::SqlType::Text: values[i] = CStringGetTextDatum(v.text); break;
            case core::SqlType::Bool: values[i] = BoolGetDatum(v.n != 0); break;
            case core::SqlType::Float8: values[i] = Float8GetDatum(v.f); break;
        }
    }

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
