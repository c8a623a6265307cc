// The reservation policy (core/reservation.hpp) and the mark's window field.
#include "core/layout.hpp"
#include "core/mark.hpp"
#include "core/reservation.hpp"

#include <gtest/gtest.h>

using namespace snowflake::core;

TEST(ReservationWindow, TwiceTheLastWriteWithinBounds) {
    EXPECT_EQ(reservation_window(0), kMinWindowMs);
    EXPECT_EQ(reservation_window(-5), kMinWindowMs);
    EXPECT_EQ(reservation_window(3), kMinWindowMs);
    EXPECT_EQ(reservation_window(500), 1000);
    EXPECT_EQ(reservation_window(1200), 2400);  // a 1.2 s fsync
    EXPECT_EQ(reservation_window(29999), 59998);
    EXPECT_EQ(reservation_window(30001), kMaxWindowMs);
    EXPECT_EQ(reservation_window(INT64_MAX), kMaxWindowMs);
}

TEST(PlanReservation, IdleServerRenewsWhereThePreviousEnds) {
    // Clock inside the reservation with less than half a window left.
    ReservationPlan p = plan_reservation(10'600, 11'000, -1, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, 12'000);  // starts where the previous one ends
    // Half a window or more left: nothing to do.
    EXPECT_FALSE(plan_reservation(10'500, 11'000, -1, 1000).write);
    EXPECT_FALSE(plan_reservation(10'000, 11'000, -1, 1000).write);
    // A grown window reaches further and renews earlier.
    p = plan_reservation(10'000, 11'000, -1, 2400);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, 13'400);
}

TEST(PlanReservation, AClockPastTheReservationWithNobodyAskingWritesNothing) {
    // A forward jump of a day, or a server that has not issued an id yet.
    EXPECT_FALSE(plan_reservation(10'000 + 86'400'000, 11'000, -1, 1000).write);
    EXPECT_FALSE(plan_reservation(11'001, 11'000, 10'500, 1000).write);  // old demand, covered
    // Clock far behind the reservation (stepped back): nothing either.
    EXPECT_FALSE(plan_reservation(11'000 - 3'600'000, 11'000, -1, 1000).write);
}

TEST(PlanReservation, ACallerWaitingBeyondTheReservationIsServed) {
    // Demand just past the reservation, clock there too.
    ReservationPlan p = plan_reservation(11'005, 11'000, 11'005, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, 12'005);
    // The clock moved on since the caller asked (a slow write): reserve from
    // the clock, so that the new reservation still covers it.
    p = plan_reservation(11'800, 11'000, 11'005, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, 12'800);
    // A caller issuing at a clock far ahead (a real jump with ids in it).
    p = plan_reservation(11'100 + 86'400'000, 11'000, 11'100 + 86'400'000, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, 12'100 + 86'400'000);
    // The worker's clock far beyond the demand (jumped, with nobody there):
    // reserve for the caller only.
    p = plan_reservation(11'100 + 86'400'000, 11'000, 11'050, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, 12'050);
    // The worker's clock behind the demand (stepped back meanwhile).
    p = plan_reservation(10'000, 11'000, 11'050, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, 12'050);
}

TEST(PlanReservation, StaysInsideTheIdRange) {
    ReservationPlan p = plan_reservation(kMaxMs - 100, kMaxMs - 50, -1, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, kMaxMs);
    EXPECT_FALSE(plan_reservation(kMaxMs, kMaxMs, kMaxMs, 1000).write);
    p = plan_reservation(kMaxMs, kMaxMs - 1, kMaxMs, 1000);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, kMaxMs);
    // Out-of-range windows are clamped.
    p = plan_reservation(0, -1, 0, 0);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, kMinWindowMs);
    p = plan_reservation(0, -1, 0, INT64_MAX);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(p.until_ms, kMaxWindowMs);
}

TEST(MarkWindow, RoundTripsAndReadsLegacyZeroAsTheMinimum) {
    uint8_t buf[kMarkSize];
    Mark m;
    m.ms = 123;
    m.window_ms = 2400;
    encode_mark(m, buf);
    Mark out;
    ASSERT_EQ(decode_mark(buf, sizeof(buf), &out), MarkDecode::Ok);
    EXPECT_EQ(out.window_ms, 2400);
    m.window_ms = 0;  // as version 1.0 wrote it
    encode_mark(m, buf);
    ASSERT_EQ(decode_mark(buf, sizeof(buf), &out), MarkDecode::Ok);
    EXPECT_EQ(out.window_ms, kMinWindowMs);
    m.window_ms = kMaxWindowMs * 10;  // clamped on the way out
    encode_mark(m, buf);
    ASSERT_EQ(decode_mark(buf, sizeof(buf), &out), MarkDecode::Ok);
    EXPECT_EQ(out.window_ms, kMaxWindowMs);
}

TEST(MarkWindow, AWindowBeyondTheMaximumIsRejected) {
    uint8_t buf[kMarkSize];
    encode_mark(Mark{}, buf);
    const uint32_t w = kMaxWindowMs + 1;
    for (int i = 0; i < 4; i++) buf[20 + i] = static_cast<uint8_t>(w >> (8 * i));
    const uint32_t crc = crc32c(buf, 24);
    for (int i = 0; i < 4; i++) buf[24 + i] = static_cast<uint8_t>(crc >> (8 * i));
    Mark out;
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::BadValue);
}

// Issue 22: a renewal extends from the old end, so the reservation reaches
// up to 1.5 windows ahead; the mark records that lead, which a restart
// after a crash waits out.
TEST(ReservationLead, RecordsHowFarTheReservationReachesPastTheClock) {
    const int64_t w = 1000;
    // Renewed with 400 ms left: the new end is 1400 ms ahead.
    const ReservationPlan p = plan_reservation(10'600, 11'000, -1, w);
    ASSERT_TRUE(p.write);
    EXPECT_EQ(reservation_lead(p.until_ms, 10'600, w), 1400);
    // Never below the window, never above the largest window.
    EXPECT_EQ(reservation_lead(10'500, 10'000, w), 1000);
    EXPECT_EQ(reservation_lead(9'000, 10'000, w), 1000);
    EXPECT_EQ(reservation_lead(10'000 + 3'600'000, 10'000, w), kMaxWindowMs);
}
