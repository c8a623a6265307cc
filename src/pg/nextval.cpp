// The SQL functions that issue ids: snowflake_nextval(),
// snowflake_nextval_batch(), and snowflake_advance_floor(), which raises
// the floor every later id of this node is above. The id path itself is
// id_path.cpp.

#include <algorithm>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/id_layout.hpp"
#include "../core/layout.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "guc.hpp"
#include "id_path.hpp"
#include "lease_state.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"
#include "wal.hpp"

extern "C" {
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_nextval_batch);
PG_FUNCTION_INFO_V1(snowflake_advance_floor);
}

namespace core = snowflake::core;

namespace snowflake::pg {
namespace {

constexpr int32 kMaxBatch = 1000000;
// snowflake_advance_floor() refuses ids further ahead of the clock.
constexpr int64_t kAdvanceAheadLimitMs = 3600 * 1000;

// Where snowflake_nextval_batch() is between its calls.
struct BatchState {
    int32_t remaining;  // ids still to return
    int32_t chunk_left; // ids left in the current chunk
    int64_t next_id;
};

}  // namespace
}  // namespace snowflake::pg

extern "C" {

// snowflake_nextval(): one id.
Datum snowflake_nextval(PG_FUNCTION_ARGS) {
    const core::Next r = snowflake::pg::issue_ids(snowflake::pg::Generator::Sql, 1, snowflake::pg::kBackendWait);
    PG_RETURN_INT64(r.first_id);
}

// snowflake_nextval_batch(n): n ids, a millisecond's worth per call into the id path.
Datum snowflake_nextval_batch(PG_FUNCTION_ARGS) {
    namespace sp = snowflake::pg;
    FuncCallContext* funcctx;
    if (SRF_IS_FIRSTCALL()) {
        const int32 count = PG_GETARG_INT32(0);
        if (count < 1 || count > sp::kMaxBatch)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("batch size %d is out of range", count),
                     errhint("Ask for 1 to %d ids per call.", sp::kMaxBatch)));
        sp::require_generator();
        funcctx = SRF_FIRSTCALL_INIT();
        auto* st = static_cast<sp::BatchState*>(
            MemoryContextAllocZero(funcctx->multi_call_memory_ctx, sizeof(sp::BatchState)));
        st->remaining = count;
        funcctx->user_fctx = st;
    }
    funcctx = SRF_PERCALL_SETUP();
    auto* st = static_cast<sp::BatchState*>(funcctx->user_fctx);
    if (st->remaining == 0) SRF_RETURN_DONE(funcctx);
    if (st->chunk_left == 0) {
        // One lock round trip for up to a whole millisecond of ids.
        const core::Next r = sp::issue_ids(sp::Generator::Sql, std::min<int32_t>(st->remaining, core::kIdsPerMs),
                                           sp::kBackendWait);
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

// snowflake_advance_floor(after_id): every later id of this node is greater
// than after_id, across restarts and crashes. For what PostgreSQL does not
// carry: a restore, pg_upgrade, pg_rewind, a promotion (docs/operations.md).
Datum snowflake_advance_floor(PG_FUNCTION_ARGS) {
    namespace sp = snowflake::pg;
    const int64 after_id = PG_GETARG_INT64(0);
    sp::require_generator();
    if (!core::valid_id(after_id))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("snowflake id %lld is negative", static_cast<long long>(after_id)),
                        errhint("Snowflake ids are positive bigints; bit 63 is always zero.")));
    const core::Geometry& g = sp::node_geometry();
    if (!core::id_in(g, after_id))
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("snowflake id %lld does not fit %s '%s'", static_cast<long long>(after_id),
                               sp::layout_setting_name(), core::geometry_text(g).c_str()),
                        errdetail("Ids of this node's layout are below 2^%d.", g.time_shift + g.time_bits),
                        errhint("Give an id this node's layout can issue: its time decides the floor.")));
    const int64_t epoch_us = sp::epoch_unix_us();
    const int64_t target = core::decompose(g, after_id).ms;
    const int64_t now = sp::now_ms(epoch_us);
    if (target - now > sp::kAdvanceAheadLimitMs) {
        char* id_time = pstrdup(timestamptz_to_str(sp::ms_to_timestamptz(target)));
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("snowflake id %lld is more than an hour ahead of the clock",
                        static_cast<long long>(after_id)),
                 errdetail("The id's time is %s; the clock reads %s.", id_time,
                           timestamptz_to_str(sp::ms_to_timestamptz(now))),
                 errhint("Check the id (a typo?) and the epoch it was made with. An id up to an "
                         "hour ahead is accepted; ids then wait for the clock to pass it.")));
    }

    // In memory first, so that no id at or below after_id is issued from now
    // on: the position moves to "the id's millisecond used up".
    LWLockAcquire(sp::shared->lock, LW_EXCLUSIVE);
    (void)sp::raise_floor_locked(target, 0, sp::kFloorAdvanced);
    LWLockRelease(sp::shared->lock);

    // Then on disk: the worker writes a reservation covering it. With
    // leasing, that needs a held lease (the reservation in etcd is the
    // worker id's): without one, SF003 rather than a wait for ever.
    sp::ReservationWait wait;
    while (static_cast<int64_t>(pg_atomic_read_u64(&sp::shared->reserved_until_ms)) < target) {
        if (!sp::lease_allows_ids()) sp::refuse_no_lease();
        sp::await_reservation(target, &wait);
        CHECK_FOR_INTERRUPTS();
    }
    sp::end_refusal_after_floor();  // wal.cpp: a promotion without a replicated mark
    PG_RETURN_VOID();
}
}
