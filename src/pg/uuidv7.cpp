// uuidv7() and its helpers. No shared state: these work without preload.
//
// Randomness: pg_strong_random() is read in blocks into a per-process buffer
// and served 8 bytes per UUID, so that one UUID does not pay a whole call
// into the random source. The buffer remembers the pid that filled it and is
// refilled whenever the current process is another one, and a fork handler
// empties it in the child of any fork(), so a process forked from one that
// holds bytes never serves the same bytes. It is never filled in the
// postmaster. Served bytes are wiped.

#include <cstring>

#include <pthread.h>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/uuid.hpp"
#include "uuidv7.hpp"
#include "clock.hpp"

extern "C" {
#include "utils/builtins.h"
#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(snowflake_uuidv7);
PG_FUNCTION_INFO_V1(snowflake_uuidv7_shift);
PG_FUNCTION_INFO_V1(snowflake_uuidv7_timestamp);
PG_FUNCTION_INFO_V1(snowflake_uuidv7_from_timestamp);
PG_FUNCTION_INFO_V1(snowflake_uuidv7_at);
}

namespace core = snowflake::core;

namespace {

constexpr size_t kRandomBlock = 8192;  // 1,024 UUIDs per call into the random source

uint8_t random_buf[kRandomBlock];
size_t random_pos = kRandomBlock;
int random_pid = 0;
bool atfork_registered = false;

// In a child of fork() (a procedural language may call it), whatever the
// parent had buffered is dropped: MyProcPid does not change in such a child.
void drop_random_in_child() {
    random_pos = kRandomBlock;
    random_pid = 0;
}

core::UuidClock uuid_clock;

const char* const kRangeHint =
    "UUIDv7 holds Unix milliseconds in 48 bits: from 1970-01-01 to about the year 10889.";

// Returns kUuidRandomBytes fresh random bytes, valid until the next call.
uint8_t* take_random() {
    if (random_pid != MyProcPid || random_pos + core::kUuidRandomBytes > kRandomBlock) {
        if (!IsUnderPostmaster && IsPostmasterEnvironment)
            elog(ERROR, "snowflake: random buffer must not be filled in the postmaster");
        if (!atfork_registered) {
            if (pthread_atfork(nullptr, nullptr, drop_random_in_child) != 0)
                ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
                                errmsg("could not register a fork handler for the UUID random buffer")));
            atfork_registered = true;
        }
        if (!pg_strong_random(random_buf, kRandomBlock))
            ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                            errmsg("could not generate random values"),
                            errhint("Check the server's source of cryptographic randomness.")));
        random_pos = 0;
        random_pid = MyProcPid;
    }
    uint8_t* p = random_buf + random_pos;
    random_pos += core::kUuidRandomBytes;
    return p;
}

// A UUID as a uuid Datum.
Datum uuid_datum(const core::Uuid& u) {
    auto* out = static_cast<pg_uuid_t*>(palloc(sizeof(pg_uuid_t)));
    static_assert(sizeof(out->data) == sizeof(u.bytes), "UUIDs are 16 bytes");
    std::memcpy(out->data, u.bytes, sizeof(u.bytes));
    return UUIDPGetDatum(out);
}

// A UUIDv7 of the given ticks with fresh random bytes.
Datum make_uuid(int64_t ticks) {
    uint8_t* random = take_random();
    const core::Uuid u = core::build_uuidv7(ticks, random);
    std::memset(random, 0, core::kUuidRandomBytes);
    return uuid_datum(u);
}

// The next ticks of this backend's strictly ascending UUID clock.
int64_t next_ticks() {
    int64_t ms, sub_ms_ns;
    snowflake::pg::unix_now_ms_ns(&ms, &sub_ms_ns);
    return core::ascending_ticks(uuid_clock, core::uuid_ticks_from_ms(ms, sub_ms_ns));
}

// Unix microseconds of a finite timestamp, or false if out of the UUIDv7
// range (which also keeps the addition from overflowing).
bool uuid_unix_us(TimestampTz ts, int64_t* unix_us) {
    constexpr int64_t kMaxUnixUs = (core::kUuidMaxMs + 1) * 1000 - 1;
    if (TIMESTAMP_NOT_FINITE(ts) || ts < -snowflake::pg::kPgEpochUnixUs || ts > kMaxUnixUs - snowflake::pg::kPgEpochUnixUs)
        return false;
    *unix_us = ts + snowflake::pg::kPgEpochUnixUs;
    return true;
}

// Raises the error of a timestamp outside the UUIDv7 range.
void report_out_of_range(TimestampTz ts) {
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("timestamp %s is out of range for UUIDv7", timestamptz_to_str(ts)),
                    errhint("%s", kRangeHint)));
}

// A uuid value as the core's Uuid.
core::Uuid to_core(const pg_uuid_t* u) {
    core::Uuid c;
    std::memcpy(c.bytes, u->data, sizeof(c.bytes));
    return c;
}

}  // namespace

namespace snowflake::pg {

// uuidv7() and the HTTP endpoint's /v1/uuids/batch.
core::Uuid new_uuidv7() {
    const int64_t ticks = next_ticks();
    if (!core::valid_uuid_ticks(ticks))  // a system clock before 1970 or past the 48-bit range
        report_out_of_range(core::floor_div(ticks, 4096) * 1000 - kPgEpochUnixUs);
    uint8_t* random = take_random();
    const core::Uuid u = core::build_uuidv7(ticks, random);
    std::memset(random, 0, core::kUuidRandomBytes);
    return u;
}

}  // namespace snowflake::pg

extern "C" {

// uuidv7(): a new UUIDv7.
Datum snowflake_uuidv7(PG_FUNCTION_ARGS) {
    PG_RETURN_DATUM(uuid_datum(snowflake::pg::new_uuidv7()));
}

// uuidv7(shift): a new UUIDv7 of the clock shifted by an interval.
Datum snowflake_uuidv7_shift(PG_FUNCTION_ARGS) {
    Interval* shift = PG_GETARG_INTERVAL_P(0);
    const int64_t ticks = next_ticks();

    // The fraction of a millisecond to nanoseconds, rounding up so that the
    // way back gives the same fraction; then a timestamp in microseconds plus
    // the nanoseconds below a microsecond. Milliseconds are never multiplied
    // up to nanoseconds: that overflows 64 bits after the year 2262.
    const int64_t ms = core::floor_div(ticks, 4096);
    const int64_t frac_ns = ((ticks - ms * 4096) * 1000000 + 4095) / 4096;
    const int64_t sub_us_ns = frac_ns % 1000;
    const TimestampTz base = ms * 1000 + frac_ns / 1000 - snowflake::pg::kPgEpochUnixUs;

    // Calendar-aware, as timestamptz + interval; raises its own error when
    // the result leaves the timestamp range.
    const TimestampTz shifted =
        DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval, TimestampTzGetDatum(base),
                                                PointerGetDatum(shift)));
    if (TIMESTAMP_NOT_FINITE(shifted))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("shifted timestamp is not finite"), errhint("%s", kRangeHint)));
    int64_t unix_us = 0;
    if (!uuid_unix_us(shifted, &unix_us))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("shifted timestamp %s is out of range for UUIDv7",
                               timestamptz_to_str(shifted)),
                        errhint("%s", kRangeHint)));
    // In range by uuid_unix_us(), so the ticks are valid.
    PG_RETURN_DATUM(make_uuid(
        core::uuid_ticks_from_ms(unix_us / 1000, (unix_us % 1000) * 1000 + sub_us_ns)));
}

// uuidv7_timestamp(u): the time of a UUIDv7 (NULL for other UUIDs).
Datum snowflake_uuidv7_timestamp(PG_FUNCTION_ARGS) {
    const core::Uuid u = to_core(PG_GETARG_UUID_P(0));
    if (core::uuid_version(u) != 7 || !core::uuid_rfc_variant(u)) PG_RETURN_NULL();
    PG_RETURN_TIMESTAMPTZ(core::uuid_ms(u) * 1000 - snowflake::pg::kPgEpochUnixUs);
}

// uuidv7_from_timestamp(ts): the lowest UUIDv7 of ts's millisecond.
Datum snowflake_uuidv7_from_timestamp(PG_FUNCTION_ARGS) {
    const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
    if (TIMESTAMP_NOT_FINITE(ts))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp must be finite"), errhint("%s", kRangeHint)));
    int64_t unix_us = 0;
    if (!uuid_unix_us(ts, &unix_us)) report_out_of_range(ts);
    PG_RETURN_DATUM(uuid_datum(core::uuidv7_floor(unix_us / 1000)));
}

// uuidv7_at(ts): a UUIDv7 of the time ts (its millisecond, and its
// microseconds as the fraction) with fresh random bits, for rows whose time
// is known (a backfill). Not from this backend's ascending clock: values of
// one tick are ordered only by their random bits.
Datum snowflake_uuidv7_at(PG_FUNCTION_ARGS) {
    const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
    int64_t unix_us = 0;
    if (TIMESTAMP_NOT_FINITE(ts) || !uuid_unix_us(ts, &unix_us))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp %s is out of range for UUIDv7", timestamptz_to_str(ts)),
                        errdetail("uuidv7_at() takes a finite time from 1970-01-01 00:00:00+00 to "
                                  "10889-08-02 05:31:50.655999+00."),
                        errhint("%s", kRangeHint)));
    // In range by uuid_unix_us(), so the ticks are valid.
    PG_RETURN_DATUM(make_uuid(core::uuid_ticks_from_ms(unix_us / 1000, (unix_us % 1000) * 1000)));
}
}
