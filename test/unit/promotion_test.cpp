// The decisions of the WAL-carried high-water mark (core/promotion.hpp).
#include "core/layout.hpp"
#include "core/promotion.hpp"
#include "core/reservation.hpp"

#include <gtest/gtest.h>

using namespace snowflake::core;

namespace {
constexpr int64_t kEpochUs = int64_t{1704067200} * 1000000;  // 2024-01-01, whole ms
}

TEST(Promotion, UnixRoundTripNeverLowersTheMark) {
    for (int64_t epoch_us : {kEpochUs, kEpochUs + 1, kEpochUs + 999, kEpochUs - 456}) {
        for (int64_t ms : {int64_t{0}, int64_t{1}, int64_t{123456789}, kMaxMs - 1}) {
            const int64_t unix_ms = id_ms_to_unix_ms(ms, epoch_us);
            EXPECT_GE(unix_ms_to_id_ms(unix_ms, epoch_us), ms) << epoch_us << " " << ms;
            EXPECT_LE(unix_ms_to_id_ms(unix_ms, epoch_us), ms + 1) << epoch_us << " " << ms;
        }
    }
    // A whole-millisecond epoch is exact.
    EXPECT_EQ(id_ms_to_unix_ms(5, kEpochUs), kEpochUs / 1000 + 5);
    EXPECT_EQ(unix_ms_to_id_ms(kEpochUs / 1000 + 5, kEpochUs), 5);
}

TEST(Promotion, UnixToIdSpaceIsClamped) {
    EXPECT_EQ(unix_ms_to_id_ms(0, kEpochUs), -1);  // before the epoch
    EXPECT_EQ(unix_ms_to_id_ms(kEpochUs / 1000 + kMaxMs + 5000, kEpochUs), kMaxMs);
}

TEST(Promotion, ReplayRaisesOnlyAboveThePosition) {
    EXPECT_FALSE(replayed_floor(100, 1000, 100, true).raise);
    EXPECT_FALSE(replayed_floor(99, 1000, 100, false).raise);
    const ReplayedFloor f = replayed_floor(101, 1000, 100, false);
    EXPECT_TRUE(f.raise);
    EXPECT_EQ(f.floor_ms, 101);
}

TEST(Promotion, GraceAfterCrashIsTheWindowAfterPromotionMore) {
    EXPECT_EQ(replayed_floor(5000, 2000, -1, false).grace_ms, 2000);
    EXPECT_EQ(replayed_floor(5000, 2000, -1, true).grace_ms, 2000 + kPromotionMarginMs);
    // A window out of range (a record of a damaged or foreign writer) is clamped.
    EXPECT_EQ(replayed_floor(5000, 0, -1, false).window_ms, kMinWindowMs);
    EXPECT_EQ(replayed_floor(5000, 10 * kMaxWindowMs, -1, false).window_ms, kMaxWindowMs);
}

TEST(Promotion, StartGraceGrowsOnlyInArchiveRecovery) {
    EXPECT_EQ(start_grace_ms(1000, 1000, false), 1000);
    EXPECT_EQ(start_grace_ms(0, 0, false), 0);  // an exact mark after a clean stop
    EXPECT_EQ(start_grace_ms(0, 0, true), kMinWindowMs + kPromotionMarginMs);
    EXPECT_EQ(start_grace_ms(3000, 3000, true), 3000 + kPromotionMarginMs);
}

TEST(Promotion, RefusalArmsOnlyForAStaticIdInArchiveRecoveryWithoutMarker) {
    EXPECT_TRUE(arm_promotion_refusal(true, false, true));
    EXPECT_FALSE(arm_promotion_refusal(false, false, true));  // crash recovery
    EXPECT_FALSE(arm_promotion_refusal(true, true, true));    // the mark comes through the WAL
    EXPECT_FALSE(arm_promotion_refusal(true, false, false));  // leased ids: etcd's mark
}

TEST(Promotion, RefusalLastsUntilTheLastReservationKnown) {
    const int64_t now = 1'800'000'000'000;
    // The last commit's time (the old primary's clock) plus the margin,
    // or the mark if later.
    EXPECT_EQ(promotion_refusal_until(now - 10000, now - 5000, now), now - 5000 + kPromotionMarginMs);
    EXPECT_EQ(promotion_refusal_until(now + 90000, now - 5000, now), now + 90000);
    EXPECT_EQ(promotion_refusal_until(now - 10000, -1, now), now - 10000);
    // An old primary's clock far ahead holds ids back until this clock passes it.
    EXPECT_EQ(promotion_refusal_until(-1, now + 3'600'000, now), now + 3'600'000 + kPromotionMarginMs);
    // Nothing known: this clock plus the margin.
    EXPECT_EQ(promotion_refusal_until(-1, -1, now), now + kPromotionMarginMs);
}
