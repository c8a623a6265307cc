// Clock health: the kernel's view of time synchronisation, and whether a
// node should issue ids with it.
//
// Ids are only as ordered, across nodes, as the clocks that make them. The
// kernel knows what the time daemon (chrony, ntpd, systemd-timesyncd) told
// it: ntp_adjtime()/adjtimex() return the clock state (TIME_OK ...
// TIME_ERROR), status bits (STA_UNSYNC: not synchronised) and the maximum
// and estimated error in microseconds. The glue makes that call and passes
// the plain numbers in; the decisions here are pure and unit-tested with
// any clock state, whatever the machine's own clock is doing.
//
// What the kernel reports where nobody disciplines the clock (no time
// daemon, or a container, which sees its host's kernel state and cannot
// change it): state TIME_ERROR, STA_UNSYNC set, maximum and estimated error
// 16 s (NTP_PHASE_LIMIT), offset 0. chrony and ntpd clear STA_UNSYNC and set
// the errors from their estimates when they synchronise the clock; the
// kernel then adds 500 ppm (0.5 ms per second) to the maximum error until
// they update it again, and sets STA_UNSYNC once it passes 16 s.
#pragma once

#include "pure.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core {

// Values of the Linux kernel ABI (<sys/timex.h>, <linux/timex.h>), stable
// since Linux 2.6; the unit tests check them against the system header.
constexpr int kTimeOk = 0;             // return value: clock synchronised
constexpr int kTimeError = 5;          // return value: clock not synchronised
constexpr int64_t kStaUnsync = 0x0040;    // status: clock not synchronised
constexpr int64_t kStaClockErr = 0x1000;  // status: clock hardware fault
constexpr int64_t kStaNano = 0x2000;      // status: offset in ns, not us
// The kernel's maximum error for a clock nobody synchronises (16 s).
constexpr int64_t kNtpPhaseLimitUs = 16000000;

// What the kernel reports about the system clock, in our own terms.
struct ClockHealth {
    bool known = false;         // the query succeeded
    bool synchronized = false;  // the kernel considers the clock synchronised
    int64_t max_error_us = -1;  // maximum error, microseconds (-1: not reported)
    int64_t est_error_us = -1;  // estimated error, microseconds (-1: not reported)
    int64_t offset_ns = 0;      // the time daemon's last offset, nanoseconds
    int64_t status = 0;         // status bits, as the kernel returns them
    int state = -1;             // return value of the call (TIME_OK ... TIME_ERROR; -1 failed)
};

// Turns what ntp_adjtime()/adjtimex() returned into ClockHealth.
//   state:  the call's return value (-1 when it failed)
//   status, maxerror, esterror, offset: the fields of struct timex
// The clock is unsynchronised when the call failed, when it returns
// TIME_ERROR, or when the status has STA_UNSYNC or STA_CLOCKERR. A negative
// maximum or estimated error is "not reported" (-1). The offset is in
// nanoseconds when the status has STA_NANO, microseconds otherwise.
ClockHealth clock_health_from_timex(int state, int64_t status, int64_t maxerror_us,
                                    int64_t esterror_us, int64_t offset) noexcept;

// Microseconds as milliseconds for display (snowflake_stats): -1 stays -1.
double clock_error_ms(int64_t error_us) noexcept;

enum class ClockProblem {
    None,            // ids may be issued
    Unknown,         // the kernel's clock state could not be read
    Unsynchronized,  // the kernel reports the clock as not synchronised
    ErrorTooLarge,   // the maximum error is above the limit (or not reported)
};

struct ClockVerdict {
    bool refuse = false;
    ClockProblem problem = ClockProblem::None;
    char reason[192] = {0};  // a sentence for errdetail ("" when not refused)
};

// The policy of snowflake.max_clock_error_ms: 0 (or less) checks nothing.
// Otherwise a clock the kernel does not report as synchronised, or whose
// maximum error is above max_error_ms, is refused, with a reason sentence.
// A maximum error of exactly the limit is accepted.
ClockVerdict judge_clock(const ClockHealth& health, int64_t max_error_ms) noexcept;

// How often the glue should ask the kernel again on the id path (a system
// call, not a vDSO read): at most every kClockCheckIntervalMs milliseconds
// of a monotonic clock. True when checked_ms < 0 (never) or the interval has
// passed, or the monotonic clock went backwards (cannot happen; re-check).
constexpr int64_t kClockCheckIntervalMs = 100;
bool clock_check_due(int64_t now_mono_ms, int64_t checked_mono_ms) noexcept;

}  // namespace snowflake::core
