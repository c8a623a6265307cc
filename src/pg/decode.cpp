// Decoders and constructors of Snowflake ids. They need no shared state and
// work without shared_preload_libraries. Bad input is an error naming the
// value, never a clamped or wrapped result. The checks both they and the
// functions of any layout (layouts.cpp) make are published in decode.hpp.

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/id_layout.hpp"
#include "../core/layout.hpp"
#include "decode.hpp"
#include "guc.hpp"

extern "C" {
#include "access/htup_details.h"
#include "common/int.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_timestamp_epoch);
PG_FUNCTION_INFO_V1(snowflake_worker_id);
PG_FUNCTION_INFO_V1(snowflake_sequence);
PG_FUNCTION_INFO_V1(snowflake_decode);
PG_FUNCTION_INFO_V1(snowflake_decode_epoch);
PG_FUNCTION_INFO_V1(snowflake_from_timestamp);
PG_FUNCTION_INFO_V1(snowflake_compose);
}

namespace core = snowflake::core;

namespace snowflake::pg {

void refuse_negative_id(int64 id) {
    if (!core::valid_id(id))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("snowflake id %lld is negative", static_cast<long long>(id)),
                        errhint("Snowflake ids are positive bigints; bit 63 is always zero.")));
}

void require_finite(TimestampTz ts, const char* what, const char* hint) {
    if (TIMESTAMP_NOT_FINITE(ts))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE), errmsg("%s must be finite", what),
                        errhint("%s", hint)));
}

TimestampTz time_after_epoch(int64 ms, TimestampTz epoch) {
    require_finite(epoch, "epoch", "Give the epoch the ids were made with, such as '2025-01-01 00:00:00+00'.");
    TimestampTz ts;
    int64 us;
    if (pg_mul_s64_overflow(ms, 1000, &us) || pg_add_s64_overflow(epoch, us, &ts) || !IS_VALID_TIMESTAMP(ts)) {
        char* epoch_text = pstrdup(timestamptz_to_str(epoch));
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("epoch %s plus %lld ms is out of range for timestamp with time zone", epoch_text,
                               static_cast<long long>(ms)),
                        errhint("Give the epoch the ids were made with.")));
    }
    return ts;
}

Datum decoded_row(FunctionCallInfo fcinfo, TimestampTz ts, int32 worker, int32 sequence) {
    TupleDesc tupdesc;
    if (get_call_result_type(fcinfo, nullptr, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "return type must be a row type");
    Datum values[3] = {TimestampTzGetDatum(ts), Int32GetDatum(worker), Int32GetDatum(sequence)};
    bool nulls[3] = {false, false, false};
    HeapTuple tuple = heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls);
    return HeapTupleGetDatum(tuple);
}

}  // namespace snowflake::pg

namespace {

using snowflake::pg::require_finite;
using snowflake::pg::time_after_epoch;

// The fields of an id in the node's layout (snowflake.layout); a negative
// id, or one with bits above the layout's, is an error.
core::Fields checked_fields(int64 id) {
    snowflake::pg::refuse_negative_id(id);
    const core::Geometry& g = snowflake::pg::node_geometry();
    if (!core::id_in(g, id))
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("snowflake id %lld does not fit %s '%s'", static_cast<long long>(id),
                               snowflake::pg::layout_setting_name(), core::geometry_text(g).c_str()),
                        errdetail("Its ids are below 2^%d.", g.time_shift + g.time_bits),
                        errhint("Decode an id of another layout with snowflake_decode_as(id, layout).")));
    return core::decompose(g, id);
}

// The lifetime of the node's layout in Julian years (365.25 days): 69.7 for
// 41 bits of milliseconds.
double lifetime_years(const core::Geometry& g) {
    return static_cast<double>(g.max_ms + 1) / (365.25 * 24 * 3600 * 1000);
}

// Milliseconds since the configured epoch of a timestamp that ids can carry.
int64 id_ms(TimestampTz ts) {
    if (TIMESTAMP_NOT_FINITE(ts)) {
        char hint[160];
        snprintf(hint, sizeof(hint),
                 "Snowflake ids carry times from snowflake.epoch to about %.1f years after it.",
                 lifetime_years(snowflake::pg::node_geometry()));
        require_finite(ts, "timestamp", hint);
    }
    const TimestampTz epoch = snowflake::pg::current_epoch();
    int64 diff_us = 0;
    const bool overflow = pg_sub_s64_overflow(ts, epoch, &diff_us);
    const int64 ms = overflow ? -1 : core::floor_div(diff_us, 1000);
    const core::Geometry& g = snowflake::pg::node_geometry();
    if (overflow || !core::valid_ms(g, ms)) {
        // Print both instants before raising: timestamptz_to_str returns a
        // static buffer.
        char* ts_text = pstrdup(timestamptz_to_str(ts));
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp %s is outside the id range of snowflake.epoch", ts_text),
                        errdetail("Ids of epoch %s cover %lld ms from it; the timestamp is %lld ms from it.",
                                  timestamptz_to_str(epoch), static_cast<long long>(g.max_ms),
                                  static_cast<long long>(ms)),
                        errhint("Give a timestamp from snowflake.epoch to about %.1f years after it.",
                                lifetime_years(g))));
    }
    return ms;
}

// The (ts, worker_id, sequence) row of an id.
Datum decode_row(FunctionCallInfo fcinfo, int64 id, TimestampTz epoch) {
    const core::Fields f = checked_fields(id);
    return snowflake::pg::decoded_row(fcinfo, time_after_epoch(f.ms, epoch), f.worker, f.sequence);
}

}  // namespace

extern "C" {

// snowflake_timestamp(id): its time, in the configured epoch.
Datum snowflake_timestamp(PG_FUNCTION_ARGS) {
    const core::Fields f = checked_fields(PG_GETARG_INT64(0));
    PG_RETURN_TIMESTAMPTZ(time_after_epoch(f.ms, snowflake::pg::current_epoch()));
}

// snowflake_timestamp(id, epoch): its time in the given epoch.
Datum snowflake_timestamp_epoch(PG_FUNCTION_ARGS) {
    const core::Fields f = checked_fields(PG_GETARG_INT64(0));
    PG_RETURN_TIMESTAMPTZ(time_after_epoch(f.ms, PG_GETARG_TIMESTAMPTZ(1)));
}

// snowflake_worker_id(id): its worker id.
Datum snowflake_worker_id(PG_FUNCTION_ARGS) {
    PG_RETURN_INT32(checked_fields(PG_GETARG_INT64(0)).worker);
}

// snowflake_sequence(id): its sequence.
Datum snowflake_sequence(PG_FUNCTION_ARGS) {
    PG_RETURN_INT32(checked_fields(PG_GETARG_INT64(0)).sequence);
}

// snowflake_decode(id): all its fields, in the configured epoch.
Datum snowflake_decode(PG_FUNCTION_ARGS) {
    PG_RETURN_DATUM(decode_row(fcinfo, PG_GETARG_INT64(0), snowflake::pg::current_epoch()));
}

// snowflake_decode(id, epoch): all its fields in the given epoch.
Datum snowflake_decode_epoch(PG_FUNCTION_ARGS) {
    PG_RETURN_DATUM(decode_row(fcinfo, PG_GETARG_INT64(0), PG_GETARG_TIMESTAMPTZ(1)));
}

// snowflake_from_timestamp(ts): the lowest id of ts's millisecond.
Datum snowflake_from_timestamp(PG_FUNCTION_ARGS) {
    const int64 ms = id_ms(PG_GETARG_TIMESTAMPTZ(0));
    PG_RETURN_INT64(core::first_id_of_ms(snowflake::pg::node_geometry(), ms));
}

// snowflake_compose(ts, worker, sequence): the id of these fields.
Datum snowflake_compose(PG_FUNCTION_ARGS) {
    const int64 ms = id_ms(PG_GETARG_TIMESTAMPTZ(0));
    const int32 worker = PG_GETARG_INT32(1);
    const int32 sequence = PG_GETARG_INT32(2);
    const core::Geometry& g = snowflake::pg::node_geometry();
    if (!core::valid_worker(g, worker))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("worker id %d is out of range", worker),
                        errhint("Worker ids run from 0 to %d.", g.max_worker)));
    if (!core::valid_sequence(g, sequence))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("sequence %d is out of range", sequence),
                        errhint("Sequences run from 0 to %d.", g.max_sequence)));
    PG_RETURN_INT64(core::compose(g, ms, worker, sequence));
}
}
