// Ids of any layout (issue 31): decoding, composing and the range-scan bound
// under a layout given by name or text (src/core/id_layout.hpp), with the
// epoch given or the profile's own, and the table of profiles. For ids of
// other systems (Discord's, sonyflake's, Instagram's) and of other splits;
// the node's own ids keep the fixed layout of decode.cpp. Nothing here reads
// a setting or shared memory: every function is IMMUTABLE.

#include <cstdio>
#include <string>

#include "../core/id_layout.hpp"
#include "../core/time.hpp"
#include "clock.hpp"
#include "decode.hpp"

extern "C" {
#include "access/htup_details.h"
#include "common/int.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(snowflake_decode_as);
PG_FUNCTION_INFO_V1(snowflake_decode_as_epoch);
PG_FUNCTION_INFO_V1(snowflake_compose_as);
PG_FUNCTION_INFO_V1(snowflake_compose_as_epoch);
PG_FUNCTION_INFO_V1(snowflake_from_timestamp_as);
PG_FUNCTION_INFO_V1(snowflake_from_timestamp_as_epoch);
PG_FUNCTION_INFO_V1(snowflake_layouts);
}

namespace core = snowflake::core;
namespace sp = snowflake::pg;

namespace {

constexpr int kNoEpochArg = -1;

// A layout argument as read: plain data only, so that errors may be raised
// with it in scope.
struct Layout {
    core::IdLayout layout;
    TimestampTz epoch;  // the one given, else the profile's own
    const char* text;   // the argument as given (palloc'd), for messages
};

TimestampTz timestamptz_of_unix_ms(int64 unix_ms) { return unix_ms * 1000 - sp::kPgEpochUnixUs; }

// Reads the layout of argument layout_arg and the epoch of argument epoch_arg
// (kNoEpochArg: the profile's own). fn and args name the call for the hint
// of a missing epoch: "snowflake_decode_as", "id".
Layout read_layout(FunctionCallInfo fcinfo, int layout_arg, int epoch_arg, const char* fn, const char* args) {
    Layout l;
    l.text = text_to_cstring(PG_GETARG_TEXT_PP(layout_arg));
    core::LayoutArg arg;
    char why[256] = "";
    if (!core::parse_layout_arg(l.text, &arg, why, sizeof(why))) {
        char names[128];
        core::profile_names(names, sizeof(names), false);
        why[0] = static_cast<char>(pg_toupper(static_cast<unsigned char>(why[0])));
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("invalid layout \"%s\"", l.text),
                        errdetail("%s.", why),
                        errhint("Name a profile (%s; SELECT * FROM snowflake_layouts() lists them) or write "
                                "the fields from the top bit down, each with its width in bits, then optionally "
                                "the time unit: 'time 39, sequence 8, worker 16, unit 10ms'.",
                                names)));
    }
    l.layout = arg.layout;
    if (epoch_arg != kNoEpochArg) {
        l.epoch = PG_GETARG_TIMESTAMPTZ(epoch_arg);
        sp::require_finite(l.epoch, "epoch",
                           "Give the epoch the ids were made with, such as '2025-01-01 00:00:00+00'.");
    } else if (arg.own_epoch_unix_ms >= 0) {
        l.epoch = timestamptz_of_unix_ms(arg.own_epoch_unix_ms);
    } else {
        char names[128];
        core::profile_names(names, sizeof(names), true);
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("layout \"%s\" has no epoch of its own", l.text),
                 errdetail("Only the profiles %s carry the epoch of the system whose ids they read.", names),
                 errhint("Give the epoch the ids were made with as the last argument: "
                         "%s(%s, '%s', '2025-01-01 00:00:00+00').",
                         fn, args, l.text)));
    }
    return l;
}

// The time field of ts under the layout and its epoch; outside the
// lifetime is an error.
int64 time_field(TimestampTz ts, const Layout& l) {
    sp::require_finite(ts, "timestamp", "Give a timestamp from the epoch to the end of the layout's lifetime.");
    int64 diff_us = 0;
    const bool overflow = pg_sub_s64_overflow(ts, l.epoch, &diff_us);
    const int64 ms = overflow ? -1 : core::floor_div(diff_us, 1000);
    int64 time = 0;
    if (overflow || !core::time_of_ms(l.layout, ms, &time)) {
        // Both instants printed before raising: timestamptz_to_str returns a
        // static buffer.
        char* ts_text = pstrdup(timestamptz_to_str(ts));
        char* epoch_text = pstrdup(timestamptz_to_str(l.epoch));
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp %s is outside the id range of layout \"%s\"", ts_text, l.text),
                        errdetail("Ids of this layout and epoch %s cover %lld units of %d ms from it; the "
                                  "timestamp is %lld ms from it.",
                                  epoch_text, static_cast<long long>(core::max_time(l.layout)) + 1,
                                  l.layout.unit_ms, static_cast<long long>(ms)),
                        errhint("Give a timestamp from the epoch to the end of the layout's lifetime "
                                "(snowflake_layouts() shows the profiles' lifetimes).")));
    }
    return time;
}

Datum decode_as(FunctionCallInfo fcinfo, int epoch_arg) {
    const int64 id = PG_GETARG_INT64(0);
    const Layout l = read_layout(fcinfo, 1, epoch_arg, "snowflake_decode_as", "id");
    sp::refuse_negative_id(id);
    if (!core::id_fits(l.layout, id)) {
        const int bits = core::id_bits(l.layout);  // below 63: every other id fits
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("snowflake id %lld does not fit layout \"%s\"", static_cast<long long>(id), l.text),
                        errdetail("The layout's fields fill the low %d bits: its ids are below %lld.", bits,
                                  static_cast<long long>(int64{1} << bits)),
                        errhint("Decode the id under the layout it was made with.")));
    }
    const core::Fields f = core::decompose_in(l.layout, id);
    int64 ms = 0;
    if (!core::ms_of_time(l.layout, f.ms, &ms)) {
        char* epoch_text = pstrdup(timestamptz_to_str(l.epoch));
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("epoch %s plus %lld units of %d ms is out of range for timestamp with time zone",
                               epoch_text, static_cast<long long>(f.ms), l.layout.unit_ms),
                        errhint("Give the epoch the ids were made with.")));
    }
    return sp::decoded_row(fcinfo, sp::time_after_epoch(ms, l.epoch), f.worker, f.sequence);
}

Datum compose_as(FunctionCallInfo fcinfo, int epoch_arg) {
    const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
    const int32 worker = PG_GETARG_INT32(1);
    const int32 sequence = PG_GETARG_INT32(2);
    const Layout l = read_layout(fcinfo, 3, epoch_arg, "snowflake_compose_as", "ts, worker_id, sequence");
    const int64 time = time_field(ts, l);
    if (worker < 0 || worker > core::max_worker_id(l.layout))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("worker id %d is out of range", worker),
                 errhint("Worker ids of layout \"%s\" run from 0 to %d.", l.text, core::max_worker_id(l.layout))));
    if (sequence < 0 || sequence > core::max_sequence_of(l.layout))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("sequence %d is out of range", sequence),
                        errhint("Sequences of layout \"%s\" run from 0 to %d.", l.text,
                                core::max_sequence_of(l.layout))));
    return Int64GetDatum(core::compose_in(l.layout, time, worker, sequence));
}

Datum from_timestamp_as(FunctionCallInfo fcinfo, int epoch_arg) {
    const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
    const Layout l = read_layout(fcinfo, 1, epoch_arg, "snowflake_from_timestamp_as", "ts");
    if (!core::time_leads(l.layout))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("layout \"%s\" does not order ids by time", l.text),
                 errdetail("Its top field is not the time: the ids of a time lie among those of other "
                           "times, and no id bounds them."),
                 errhint("Compare decoded times instead: (snowflake_decode_as(id, layout, epoch)).ts >= ts.")));
    return Int64GetDatum(core::compose_in(l.layout, time_field(ts, l), 0, 0));
}

}  // namespace

extern "C" {

// snowflake_decode_as(id, layout[, epoch]): (ts, worker_id, sequence).
Datum snowflake_decode_as(PG_FUNCTION_ARGS) { return decode_as(fcinfo, kNoEpochArg); }
Datum snowflake_decode_as_epoch(PG_FUNCTION_ARGS) { return decode_as(fcinfo, 2); }

// snowflake_compose_as(ts, worker_id, sequence, layout[, epoch]): the id.
Datum snowflake_compose_as(PG_FUNCTION_ARGS) { return compose_as(fcinfo, kNoEpochArg); }
Datum snowflake_compose_as_epoch(PG_FUNCTION_ARGS) { return compose_as(fcinfo, 4); }

// snowflake_from_timestamp_as(ts, layout[, epoch]): the smallest id of ts's unit.
Datum snowflake_from_timestamp_as(PG_FUNCTION_ARGS) { return from_timestamp_as(fcinfo, kNoEpochArg); }
Datum snowflake_from_timestamp_as_epoch(PG_FUNCTION_ARGS) { return from_timestamp_as(fcinfo, 2); }

// snowflake_layouts(): a row per profile, in the core's order.
Datum snowflake_layouts(PG_FUNCTION_ARGS) {
    size_t count = 0;
    const core::LayoutProfile* profiles = core::layout_profiles(&count);
    FuncCallContext* funcctx;
    if (SRF_IS_FIRSTCALL()) {
        funcctx = SRF_FIRSTCALL_INIT();
        MemoryContext old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
        TupleDesc tupdesc;
        if (get_call_result_type(fcinfo, nullptr, &tupdesc) != TYPEFUNC_COMPOSITE)
            elog(ERROR, "return type must be a row type");
        funcctx->tuple_desc = BlessTupleDesc(tupdesc);
        funcctx->max_calls = count;
        MemoryContextSwitchTo(old);
    }
    funcctx = SRF_PERCALL_SETUP();
    if (funcctx->call_cntr >= funcctx->max_calls) SRF_RETURN_DONE(funcctx);
    const core::LayoutProfile& p = profiles[funcctx->call_cntr];

    char text[96];
    {
        const std::string t = core::layout_text(p.layout);  // gone before anything can raise
        snprintf(text, sizeof(text), "%s", t.c_str());
    }
    // Julian years (365.25 days), to one decimal: 69.7 for 41 bits of ms.
    char years[32];
    snprintf(years, sizeof(years), "%.1f",
             static_cast<double>(core::lifetime_end_unix_ms(p.layout, 0)) / (365.25 * 86400000.0));
    Datum values[10];
    bool nulls[10] = {false, false, false, false, false, false, false, false, false, false};
    values[0] = CStringGetTextDatum(p.name);
    values[1] = CStringGetTextDatum(text);
    values[2] = Int32GetDatum(core::id_bits(p.layout));
    values[3] = Int32GetDatum(core::max_worker_id(p.layout) + 1);
    values[4] = Int32GetDatum(core::ids_per_unit(p.layout));
    values[5] = Int32GetDatum(p.layout.unit_ms);
    values[6] = DirectFunctionCall3(numeric_in, CStringGetDatum(years), ObjectIdGetDatum(InvalidOid),
                                    Int32GetDatum(-1));
    if (p.foreign_epoch_unix_ms >= 0) {
        values[7] = TimestampTzGetDatum(timestamptz_of_unix_ms(p.foreign_epoch_unix_ms));
        values[8] = TimestampTzGetDatum(
            timestamptz_of_unix_ms(core::lifetime_end_unix_ms(p.layout, p.foreign_epoch_unix_ms)));
    } else {
        nulls[7] = nulls[8] = true;
    }
    values[9] = CStringGetTextDatum(p.note);
    SRF_RETURN_NEXT(funcctx, HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc, values, nulls)));
}
}
