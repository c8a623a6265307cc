#include "clock_health.hpp"

#include <cstdio>

namespace snowflake::core {

ClockHealth clock_health_from_timex(int state, int64_t status, int64_t maxerror_us,
                                    int64_t esterror_us, int64_t offset) noexcept {
    ClockHealth h;
    h.state = state < 0 ? -1 : state;
    h.known = state >= 0;
    if (!h.known) return h;
    h.status = status;
    h.max_error_us = maxerror_us < 0 ? -1 : maxerror_us;
    h.est_error_us = esterror_us < 0 ? -1 : esterror_us;
    if (status & kStaNano) {
        h.offset_ns = offset;
    } else if (offset > INT64_MAX / 1000) {
        h.offset_ns = INT64_MAX;
    } else if (offset < INT64_MIN / 1000) {
        h.offset_ns = INT64_MIN;
    } else {
        h.offset_ns = offset * 1000;
    }
    h.synchronized = state != kTimeError && (status & (kStaUnsync | kStaClockErr)) == 0;
    return h;
}

double clock_error_ms(int64_t error_us) noexcept {
    if (error_us < 0) return -1.0;
    return static_cast<double>(error_us) / 1000.0;
}

ClockVerdict judge_clock(const ClockHealth& health, int64_t max_error_ms) noexcept {
    ClockVerdict v;
    if (max_error_ms <= 0) return v;
    v.refuse = true;
    if (!health.known) {
        v.problem = ClockProblem::Unknown;
        std::snprintf(v.reason, sizeof v.reason,
                      "The kernel's clock synchronisation state could not be read.");
    } else if (!health.synchronized) {
        v.problem = ClockProblem::Unsynchronized;
        std::snprintf(v.reason, sizeof v.reason,
                      "The kernel reports the system clock as not synchronised "
                      "(clock state %d, status 0x%04llx).",
                      health.state, static_cast<unsigned long long>(health.status));
    } else if (health.max_error_us < 0) {
        v.problem = ClockProblem::ErrorTooLarge;
        std::snprintf(v.reason, sizeof v.reason,
                      "The kernel reports no maximum clock error; snowflake.max_clock_error_ms "
                      "is %lld.",
                      static_cast<long long>(max_error_ms));
    } else if (max_error_ms <= INT64_MAX / 1000 && health.max_error_us > max_error_ms * 1000) {
        v.problem = ClockProblem::ErrorTooLarge;
        std::snprintf(v.reason, sizeof v.reason,
                      "The kernel reports a maximum clock error of %lld.%03lld ms, above "
                      "snowflake.max_clock_error_ms (%lld).",
                      static_cast<long long>(health.max_error_us / 1000),
                      static_cast<long long>(health.max_error_us % 1000),
                      static_cast<long long>(max_error_ms));
    } else {
        v.refuse = false;
    }
    return v;
}

bool clock_check_due(int64_t now_mono_ms, int64_t checked_mono_ms) noexcept {
    if (checked_mono_ms < 0 || now_mono_ms < checked_mono_ms) return true;
    return now_mono_ms - checked_mono_ms >= kClockCheckIntervalMs;
}

}  // namespace snowflake::core
