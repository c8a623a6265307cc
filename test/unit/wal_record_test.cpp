// The snowflake WAL record's layouts and their reading (core/wal_record.hpp),
// and the epoch refusal (core/promotion.hpp).
#include "core/layout.hpp"
#include "core/mark.hpp"
#include "core/promotion.hpp"
#include "core/wal_record.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace snowflake::core;

namespace {

constexpr int64_t kEpochUs = int64_t{1735689600} * 1000000;  // 2025-01-01, the default
constexpr int64_t kLaterUs = kEpochUs + 4 * 1000000;         // 4 s later

// The record of 1.1 and 1.2, as they wrote it: this struct, copied into the WAL.
struct Record12 {
    int64_t until_unix_ms;
    int32_t window_ms;
    int32_t worker_id;
};
static_assert(sizeof(Record12) == kReserveRecordSize12, "the 1.2 layout");

}  // namespace

TEST(WalRecord, RoundTrip) {
    WalReservation r;
    r.until_ms = 63194401500;
    r.epoch_known = true;
    r.epoch_unix_us = kEpochUs + 123;
    r.window_ms = 1500;
    r.worker_id = 1023;
    uint8_t buf[kReserveRecordSizeLayout];
    ASSERT_EQ(encode_reservation(r, buf), kReserveRecordSize);
    WalReservation back;
    ASSERT_TRUE(decode_reservation(buf, kReserveRecordSize, &back));
    EXPECT_EQ(back.until_ms, r.until_ms);
    EXPECT_TRUE(back.epoch_known);
    EXPECT_EQ(back.epoch_unix_us, r.epoch_unix_us);
    EXPECT_EQ(back.window_ms, 1500);
    EXPECT_EQ(back.worker_id, 1023);
}

// snowflake.layout (issue 31): a node of another layout than twitter
// writes 32 bytes, the layout at the end; twitter's record stays 24 bytes.
TEST(WalRecord, ALayoutOtherThanTwitterIsRecorded) {
    WalReservation r;
    r.until_ms = 5000;
    r.epoch_known = true;
    r.epoch_unix_us = kEpochUs;
    r.window_ms = 1500;
    r.worker_id = 63;
    uint8_t buf[kReserveRecordSizeLayout];
    EXPECT_EQ(encode_reservation(r, buf), kReserveRecordSize);
    WalReservation back;
    ASSERT_TRUE(decode_reservation(buf, kReserveRecordSize, &back));
    EXPECT_EQ(back.layout, 0u);
    r.layout = mark_layout_code(geometry_of(41, 6, 6));
    ASSERT_EQ(encode_reservation(r, buf), kReserveRecordSizeLayout);
    ASSERT_TRUE(decode_reservation(buf, kReserveRecordSizeLayout, &back));
    EXPECT_EQ(back.layout, r.layout);
    EXPECT_EQ(back.until_ms, 5000);
    EXPECT_EQ(back.worker_id, 63);
    // A 32-byte record holds a layout other than twitter, and zeros after it.
    uint8_t bad[kReserveRecordSizeLayout];
    std::memcpy(bad, buf, sizeof(bad));
    const uint32_t zero = 0;
    std::memcpy(bad + 24, &zero, 4);
    EXPECT_FALSE(decode_reservation(bad, sizeof(bad), &back));
    std::memcpy(bad, buf, sizeof(bad));
    bad[28] = 1;
    EXPECT_FALSE(decode_reservation(bad, sizeof(bad), &back));
}

TEST(WalRecord, ReadsTheRecordOf12) {
    const Record12 old{kEpochUs / 1000 + 5000, 1000, 7};
    uint8_t buf[sizeof(old)];
    std::memcpy(buf, &old, sizeof(old));
    WalReservation r;
    ASSERT_TRUE(decode_reservation(buf, sizeof(buf), &r));
    EXPECT_FALSE(r.epoch_known);
    EXPECT_EQ(r.until_ms, kEpochUs / 1000 + 5000);  // Unix ms
    EXPECT_EQ(r.window_ms, 1000);
    EXPECT_EQ(r.worker_id, 7);
    // Read in the reader's epoch, the only reading there is (as 1.2 did).
    const ReplayedReservation a = read_reservation(r, kEpochUs);
    EXPECT_EQ(a.until_ms, 5000);
    EXPECT_EQ(a.epoch, RecordEpoch::Unknown);
    EXPECT_EQ(read_reservation(r, kLaterUs).until_ms, 1000);
}

TEST(WalRecord, OtherLengthsAreNotRecords) {
    uint8_t buf[32] = {};
    WalReservation r;
    r.until_ms = 42;
    for (size_t len : {size_t{0}, size_t{8}, size_t{15}, size_t{17}, size_t{23}, size_t{25}, size_t{32}}) {
        EXPECT_FALSE(decode_reservation(buf, len, &r)) << len;
        EXPECT_EQ(r.until_ms, 42) << len;  // untouched
    }
}

TEST(WalRecord, IdSpaceMillisecondsMeanTheSameToEveryReader) {
    WalReservation r;
    r.until_ms = 5000;
    r.epoch_known = true;
    r.epoch_unix_us = kEpochUs;
    // The reader of the same epoch and one 4 s later take the same floor:
    // the bits of the primary's ids, not the Unix time they were made at
    // (that reading gave the later one a floor 4 s too low: issue 28).
    const ReplayedReservation same = read_reservation(r, kEpochUs);
    const ReplayedReservation later = read_reservation(r, kLaterUs);
    EXPECT_EQ(same.until_ms, 5000);
    EXPECT_EQ(same.epoch, RecordEpoch::Same);
    EXPECT_EQ(later.until_ms, 5000);
    EXPECT_EQ(later.epoch, RecordEpoch::Differs);
    // An epoch a microsecond apart is another epoch.
    EXPECT_EQ(read_reservation(r, kEpochUs + 1).epoch, RecordEpoch::Differs);
    // Out of range (a damaged writer): clamped.
    r.until_ms = kMaxMs + 10;
    EXPECT_EQ(read_reservation(r, kEpochUs).until_ms, kMaxMs);
}

TEST(EpochRefusal, ArmedAndLiftedOnlyInArchiveRecovery) {
    EXPECT_TRUE(epoch_refusal_after_record(false, RecordEpoch::Differs, true));
    EXPECT_FALSE(epoch_refusal_after_record(true, RecordEpoch::Same, true));
    // A record of 1.2 says nothing about its epoch.
    EXPECT_TRUE(epoch_refusal_after_record(true, RecordEpoch::Unknown, true));
    EXPECT_FALSE(epoch_refusal_after_record(false, RecordEpoch::Unknown, true));
    // Crash recovery: the node's own records.
    EXPECT_FALSE(epoch_refusal_after_record(false, RecordEpoch::Differs, false));
    EXPECT_TRUE(epoch_refusal_after_record(true, RecordEpoch::Same, false));
}

TEST(EpochRefusal, KeptWhileTheEpochsDiffer) {
    EXPECT_TRUE(epoch_refusal_at_start(true, kEpochUs, kLaterUs));
    EXPECT_FALSE(epoch_refusal_at_start(true, kEpochUs, kEpochUs));  // set to the primary's
    EXPECT_FALSE(epoch_refusal_at_start(false, kEpochUs, kLaterUs));
}
