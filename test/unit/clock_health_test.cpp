// Clock health (src/core/clock_health.hpp): what the kernel's
// ntp_adjtime()/adjtimex() report becomes ClockHealth, and the policy of
// snowflake.max_clock_error_ms. The kernel query is replaced by the numbers
// it returns, so that every clock state is tested whatever this machine's
// clock is doing.
#include "core/clock_health.hpp"

#include <gtest/gtest.h>

#include <sys/timex.h>

#include <cstdint>
#include <cstring>
#include <string>

using namespace snowflake::core;

// The core defines the kernel's values itself (it includes no system time
// headers): they must be the system's.
static_assert(kTimeOk == TIME_OK, "TIME_OK");
static_assert(kTimeError == TIME_ERROR, "TIME_ERROR");
static_assert(kStaUnsync == STA_UNSYNC, "STA_UNSYNC");
static_assert(kStaClockErr == STA_CLOCKERR, "STA_CLOCKERR");
static_assert(kStaNano == STA_NANO, "STA_NANO");

namespace {

constexpr int64_t kStaPll = 0x0001;  // STA_PLL: what chrony and ntpd run with

// A clock chrony keeps synchronised: TIME_OK, STA_PLL, errors of a few ms.
ClockHealth synced(int64_t max_error_us, int64_t est_error_us = 50) {
    return clock_health_from_timex(kTimeOk, kStaPll, max_error_us, est_error_us, -12);
}

// What this kind of machine reports with no time daemon (a container, a VM
// nobody synchronises): TIME_ERROR, STA_UNSYNC, 16 s of error.
ClockHealth undisciplined() {
    return clock_health_from_timex(kTimeError, kStaUnsync, kNtpPhaseLimitUs, kNtpPhaseLimitUs, 0);
}

}  // namespace

TEST(ClockHealthFromTimex, ASynchronisedClock) {
    ClockHealth h = synced(3500, 120);
    EXPECT_TRUE(h.known);
    EXPECT_TRUE(h.synchronized);
    EXPECT_EQ(h.max_error_us, 3500);
    EXPECT_EQ(h.est_error_us, 120);
    EXPECT_EQ(h.offset_ns, -12000);  // microseconds without STA_NANO
    EXPECT_EQ(h.status, kStaPll);
    EXPECT_EQ(h.state, kTimeOk);
    EXPECT_DOUBLE_EQ(clock_error_ms(h.max_error_us), 3.5);
    EXPECT_DOUBLE_EQ(clock_error_ms(h.est_error_us), 0.12);
}

TEST(ClockHealthFromTimex, UnsynchronisedByReturnValueOrStatusBits) {
    ClockHealth h = undisciplined();
    EXPECT_TRUE(h.known);
    EXPECT_FALSE(h.synchronized);
    EXPECT_EQ(h.max_error_us, kNtpPhaseLimitUs);
    EXPECT_DOUBLE_EQ(clock_error_ms(h.max_error_us), 16000.0);
    // Each sign alone is enough.
    EXPECT_FALSE(clock_health_from_timex(kTimeError, 0, 100, 10, 0).synchronized);
    EXPECT_FALSE(clock_health_from_timex(kTimeOk, kStaUnsync, 100, 10, 0).synchronized);
    EXPECT_FALSE(clock_health_from_timex(kTimeOk, kStaPll | kStaClockErr, 100, 10, 0).synchronized);
    // Other states (leap second pending or in progress) are synchronised.
    for (int state : {TIME_INS, TIME_DEL, TIME_OOP, TIME_WAIT}) {
        EXPECT_TRUE(clock_health_from_timex(state, kStaPll, 100, 10, 0).synchronized) << state;
    }
}

TEST(ClockHealthFromTimex, AFailedCallIsUnknownAndUnsynchronised) {
    ClockHealth h = clock_health_from_timex(-1, kStaPll, 100, 10, 5);
    EXPECT_FALSE(h.known);
    EXPECT_FALSE(h.synchronized);
    EXPECT_EQ(h.state, -1);
    EXPECT_EQ(h.max_error_us, -1);
    EXPECT_EQ(h.est_error_us, -1);
    EXPECT_EQ(h.offset_ns, 0);
    EXPECT_EQ(clock_health_from_timex(-38, 0, 0, 0, 0).state, -1);  // any negative
}

TEST(ClockHealthFromTimex, OffsetUnitsAndNegativeErrors) {
    EXPECT_EQ(clock_health_from_timex(kTimeOk, kStaPll | kStaNano, 1, 1, -12345).offset_ns, -12345);
    EXPECT_EQ(clock_health_from_timex(kTimeOk, kStaPll, 1, 1, 250).offset_ns, 250000);
    EXPECT_EQ(clock_health_from_timex(kTimeOk, kStaPll, 1, 1, INT64_MAX).offset_ns, INT64_MAX);
    EXPECT_EQ(clock_health_from_timex(kTimeOk, kStaPll, 1, 1, INT64_MIN).offset_ns, INT64_MIN);
    ClockHealth h = clock_health_from_timex(kTimeOk, kStaPll, -7, -1, 0);
    EXPECT_EQ(h.max_error_us, -1);
    EXPECT_EQ(h.est_error_us, -1);
    EXPECT_DOUBLE_EQ(clock_error_ms(h.max_error_us), -1.0);
}

TEST(JudgeClock, ZeroChecksNothing) {
    for (const ClockHealth& h : {undisciplined(), synced(999999999), ClockHealth{}}) {
        for (int64_t limit : {int64_t{0}, int64_t{-1}}) {
            ClockVerdict v = judge_clock(h, limit);
            EXPECT_FALSE(v.refuse);
            EXPECT_EQ(v.problem, ClockProblem::None);
            EXPECT_STREQ(v.reason, "");
        }
    }
}

TEST(JudgeClock, ASynchronisedClockWithinTheLimitIssues) {
    EXPECT_FALSE(judge_clock(synced(3500), 10).refuse);
    EXPECT_FALSE(judge_clock(synced(0), 1).refuse);
    // Exactly the limit is accepted; one microsecond above is not.
    EXPECT_FALSE(judge_clock(synced(10000), 10).refuse);
    ClockVerdict v = judge_clock(synced(10001), 10);
    EXPECT_TRUE(v.refuse);
    EXPECT_EQ(v.problem, ClockProblem::ErrorTooLarge);
    EXPECT_STREQ(v.reason,
                 "The kernel reports a maximum clock error of 10.001 ms, above "
                 "snowflake.max_clock_error_ms (10).");
}

TEST(JudgeClock, AnUnsynchronisedClockIsRefusedWhateverItsError) {
    ClockVerdict v = judge_clock(undisciplined(), 100);
    EXPECT_TRUE(v.refuse);
    EXPECT_EQ(v.problem, ClockProblem::Unsynchronized);
    EXPECT_STREQ(v.reason,
                 "The kernel reports the system clock as not synchronised (clock state 5, "
                 "status 0x0040).");
    // Even with a small error and a huge limit.
    v = judge_clock(clock_health_from_timex(kTimeOk, kStaUnsync, 100, 10, 0), 86400000);
    EXPECT_TRUE(v.refuse);
    EXPECT_EQ(v.problem, ClockProblem::Unsynchronized);
}

TEST(JudgeClock, UnknownStateOrNoMaximumErrorIsRefused) {
    ClockVerdict v = judge_clock(clock_health_from_timex(-1, 0, 0, 0, 0), 100);
    EXPECT_TRUE(v.refuse);
    EXPECT_EQ(v.problem, ClockProblem::Unknown);
    EXPECT_STREQ(v.reason, "The kernel's clock synchronisation state could not be read.");
    v = judge_clock(clock_health_from_timex(kTimeOk, kStaPll, -1, 10, 0), 100);
    EXPECT_TRUE(v.refuse);
    EXPECT_EQ(v.problem, ClockProblem::ErrorTooLarge);
    EXPECT_STREQ(v.reason,
                 "The kernel reports no maximum clock error; snowflake.max_clock_error_ms is 100.");
}

TEST(JudgeClock, HugeValuesDoNotOverflow) {
    EXPECT_FALSE(judge_clock(synced(INT64_MAX), INT64_MAX).refuse);
    EXPECT_FALSE(judge_clock(synced(INT64_MAX), INT64_MAX / 1000 + 1).refuse);
    ClockVerdict v = judge_clock(synced(INT64_MAX), INT64_MAX / 1000);
    EXPECT_TRUE(v.refuse);
    EXPECT_LT(std::strlen(v.reason), sizeof v.reason - 1);  // not cut off
    EXPECT_EQ(std::string(v.reason).substr(0, 44), "The kernel reports a maximum clock error of ");
}

TEST(JudgeClock, TheRealKernelStateIsJudgedWithoutSurprises) {
    // Whatever this machine's clock is doing (or a sandbox that refuses the
    // call), the conversion and the policy agree with each other on it.
    struct timex tx;
    std::memset(&tx, 0, sizeof tx);  // modes = 0: read only
    const int state = ntp_adjtime(&tx);
    const ClockHealth h = clock_health_from_timex(state, tx.status, tx.maxerror, tx.esterror, tx.offset);
    EXPECT_EQ(h.known, state >= 0);
    const ClockVerdict v = judge_clock(h, 100);
    EXPECT_EQ(v.refuse, !h.known || !h.synchronized || h.max_error_us < 0 || h.max_error_us > 100000);
    EXPECT_FALSE(judge_clock(h, 0).refuse);
}

TEST(ClockCheckDue, AtMostEveryIntervalOfTheMonotonicClock) {
    EXPECT_TRUE(clock_check_due(5, -1));  // never checked
    EXPECT_FALSE(clock_check_due(1000, 1000));
    EXPECT_FALSE(clock_check_due(1000 + kClockCheckIntervalMs - 1, 1000));
    EXPECT_TRUE(clock_check_due(1000 + kClockCheckIntervalMs, 1000));
    EXPECT_TRUE(clock_check_due(999, 1000));  // cannot happen: check again
}
