// clock.cpp: the clocks the glue reads, and PostgreSQL's epoch against Unix
// time.
#pragma once

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"

#include "pg_headers.hpp"

namespace snowflake::pg {

// Microseconds between 1970-01-01 and PostgreSQL's 2000-01-01 epoch.
constexpr int64_t kPgEpochUnixUs =
    static_cast<int64_t>(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

// Reads CLOCK_REALTIME: microseconds since 1970; or milliseconds since 1970
// and the nanoseconds within that millisecond. CLOCK_MONOTONIC in
// microseconds or nanoseconds, for measuring waits.
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
