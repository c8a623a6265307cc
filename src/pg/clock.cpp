// The clocks the glue reads.

#include <cstring>
#include <ctime>

#include <sys/timex.h>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "clock.hpp"

namespace snowflake::pg {

// CLOCK_REALTIME in microseconds since 1970.
int64_t unix_now_us() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// CLOCK_REALTIME as milliseconds since 1970 and the nanoseconds within.
void unix_now_ms_ns(int64_t* ms, int64_t* sub_ms_ns) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    // Seconds and nanoseconds kept apart: a nanosecond count would overflow
    // 64 bits after the year 2262.
    *ms = static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
    *sub_ms_ns = ts.tv_nsec % 1000000;
}

// CLOCK_MONOTONIC in nanoseconds.
int64_t monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// CLOCK_BOOTTIME in nanoseconds (counts a suspend).
int64_t boottime_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// CLOCK_MONOTONIC in microseconds.
int64_t monotonic_us() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// The kernel's synchronisation state and error bounds (ntp_adjtime, read only).
snowflake::core::ClockHealth read_clock_health() {
    struct timex tx;
    memset(&tx, 0, sizeof(tx));  // modes 0: read only, no privilege needed
    const int state = ntp_adjtime(&tx);
    return snowflake::core::clock_health_from_timex(state, tx.status, tx.maxerror, tx.esterror,
                                                    tx.offset);
}

}  // namespace snowflake::pg
