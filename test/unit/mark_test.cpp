// The high-water mark file format and uuid_ticks_from_ms.
#include "core/generator.hpp"
#include "core/handover.hpp"
#include "core/mark.hpp"
#include "core/layout.hpp"
#include "core/uuid.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace snowflake::core;

TEST(Crc32c, KnownCheckValue) {
    // The standard check value of CRC-32C over "123456789".
    const char* text = "123456789";
    EXPECT_EQ(crc32c(reinterpret_cast<const uint8_t*>(text), 9), 0xE3069283u);
    EXPECT_EQ(crc32c(nullptr, 0), 0u);
}

TEST(Mark, RoundTripsEdgeValues) {
    for (int64_t ms : {int64_t{-1}, int64_t{0}, int64_t{123456789}, kMaxMs}) {
        for (bool clean : {false, true}) {
            uint8_t buf[kMarkSize];
            encode_mark(Mark{ms, clean}, buf);
            Mark out;
            ASSERT_EQ(decode_mark(buf, sizeof(buf), &out), MarkDecode::Ok) << ms;
            EXPECT_EQ(out.ms, ms);
            EXPECT_EQ(out.clean, clean);
        }
    }
}

TEST(Mark, EveryFlippedBitIsDetected) {
    uint8_t good[kMarkSize];
    encode_mark(Mark{987654321, true}, good);
    for (size_t byte = 0; byte < kMarkSize; byte++) {
        for (int bit = 0; bit < 8; bit++) {
            uint8_t buf[kMarkSize];
            std::memcpy(buf, good, sizeof(buf));
            buf[byte] ^= static_cast<uint8_t>(1u << bit);
            Mark out;
            EXPECT_NE(decode_mark(buf, sizeof(buf), &out), MarkDecode::Ok)
                << "byte " << byte << " bit " << bit;
        }
    }
}

TEST(Mark, RejectsWrongSizesAndMagic) {
    uint8_t buf[kMarkSize + 1];
    encode_mark(Mark{5, false}, buf);
    Mark out;
    EXPECT_EQ(decode_mark(buf, kMarkSize - 1, &out), MarkDecode::WrongSize);
    EXPECT_EQ(decode_mark(buf, kMarkSize + 1, &out), MarkDecode::WrongSize);
    EXPECT_EQ(decode_mark(buf, 0, &out), MarkDecode::WrongSize);
    buf[0] = 'X';
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::BadMagic);
}

TEST(Mark, RejectsOutOfRangeValuesEvenWithAValidChecksum) {
    // Hand-built files whose checksum matches but whose fields are invalid.
    auto forge = [](int64_t ms, uint32_t flags, uint8_t* buf) {
        encode_mark(Mark{0, false}, buf);
        for (int i = 0; i < 8; i++) buf[8 + i] = static_cast<uint8_t>(static_cast<uint64_t>(ms) >> (8 * i));
        for (int i = 0; i < 4; i++) buf[16 + i] = static_cast<uint8_t>(flags >> (8 * i));
        const uint32_t crc = crc32c(buf, 24);
        for (int i = 0; i < 4; i++) buf[24 + i] = static_cast<uint8_t>(crc >> (8 * i));
    };
    uint8_t buf[kMarkSize];
    Mark out;
    forge(kMaxMs + 1, 0, buf);
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::BadValue);
    forge(-2, 0, buf);
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::BadValue);
    forge(7, 2, buf);
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::BadValue);
    forge(7, 1, buf);
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::Ok);
    EXPECT_TRUE(out.clean);
    forge(7, 1u | ((1u << 18) | 41u << 12 | 10u << 6 | 12u) << 8, buf);  // twitter spelled out
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::BadValue);
    forge(7, 1u | ((1u << 18) | 41u << 12 | 6u << 6 | 6u) << 8, buf);  // js-safe
    EXPECT_EQ(decode_mark(buf, kMarkSize, &out), MarkDecode::Ok);
    EXPECT_EQ(out.layout, mark_layout_code(geometry_of(41, 6, 6)));
}

// snowflake.layout (issue 31): the mark records the layout of the ids it
// bounds in its flags, 0 for twitter (so a twitter mark is the bytes of
// 1.2's), and a code no layout has is a bad value.
TEST(Mark, RecordsItsLayoutInTheFlags) {
    EXPECT_EQ(mark_layout_code(kTwitter), 0u);
    for (const Geometry& g : {kTwitter, geometry_of(41, 6, 6), geometry_of(40, 13, 10), geometry_of(11, 4, 2)}) {
        uint8_t buf[kMarkSize];
        encode_mark(Mark{1234, true, 1500, mark_layout_code(g)}, buf);
        Mark out;
        ASSERT_EQ(decode_mark(buf, sizeof(buf), &out), MarkDecode::Ok);
        EXPECT_EQ(out.layout, mark_layout_code(g));
        Geometry back{};
        ASSERT_TRUE(geometry_of_mark_code(out.layout, &back));
        EXPECT_EQ(back, g);
        EXPECT_TRUE(out.clean);
        EXPECT_EQ(out.ms, 1234);
    }
    // A twitter mark is the bytes of a mark written before layouts.
    uint8_t a[kMarkSize], b[kMarkSize];
    encode_mark(Mark{99, false, 1500}, a);
    encode_mark(Mark{99, false, 1500, mark_layout_code(kTwitter)}, b);
    EXPECT_EQ(std::memcmp(a, b, kMarkSize), 0);
    // Codes no layout has: twitter spelled out, widths that do not fit, no marker bit.
    Geometry g{};
    EXPECT_FALSE(geometry_of_mark_code((1u << 18) | 41u << 12 | 10u << 6 | 12u, &g));
    EXPECT_FALSE(geometry_of_mark_code((1u << 18) | 42u << 12 | 6u << 6 | 6u, &g));
    EXPECT_FALSE(geometry_of_mark_code((1u << 18) | 41u << 12 | 0u << 6 | 6u, &g));
    EXPECT_FALSE(geometry_of_mark_code(41u << 12 | 6u << 6 | 6u, &g));
    EXPECT_FALSE(geometry_of_mark_code((3u << 18) | 41u << 12 | 6u << 6 | 6u, &g));
}

TEST(Mark, EveryStatusHasText) {
    for (MarkDecode d : {MarkDecode::Ok, MarkDecode::WrongSize, MarkDecode::BadMagic,
                         MarkDecode::BadChecksum, MarkDecode::BadValue}) {
        EXPECT_GT(std::strlen(mark_decode_text(d)), 0u);
    }
}

// The mark written before the marker when a data directory has none: it
// reads back as "nothing issued, exact", starts the generator where no mark
// would, and keeps bytes 20-23 zero, as 1.0 requires.
TEST(Mark, NothingIssuedIsAnExactMarkBeforeEveryId) {
    uint8_t buf[kMarkSize];
    encode_mark(kNothingIssued, buf);
    for (size_t i = 20; i < 24; i++) EXPECT_EQ(buf[i], 0u) << "byte " << i;
    Mark out;
    ASSERT_EQ(decode_mark(buf, sizeof(buf), &out), MarkDecode::Ok);
    EXPECT_EQ(out.ms, -1);
    EXPECT_TRUE(out.clean);
    const GeneratorState s = state_after(out.ms);
    const GeneratorState none = state_after(Mark{}.ms);
    EXPECT_EQ(s.last_ms, none.last_ms);
    EXPECT_EQ(s.sequence, none.sequence);
    EXPECT_EQ(s.floor_ms, none.floor_ms);
    EXPECT_EQ(s.floor_grace_ms, 0);
    GeneratorState g = s;
    const Next r = next_id(g, 0, Config{3, 5});  // the first millisecond of the epoch
    ASSERT_EQ(r.status, Status::Issued);
    EXPECT_EQ(decompose(r.first_id).ms, 0);
}

// No mark file at start: only the marker (written only beside a mark file)
// tells a lost file from a first start; a coordinator's marks cover a loss.
TEST(MissingMark, FirstStartWithoutTheMarker) {
    EXPECT_EQ(judge_missing_mark(false, false), MissingMark::FirstStart);
    EXPECT_EQ(judge_missing_mark(false, true), MissingMark::FirstStart);
}

TEST(MissingMark, LostBesideTheMarkerWithoutACoordinator) {
    EXPECT_EQ(judge_missing_mark(true, false), MissingMark::Lost);
}

TEST(MissingMark, CoveredWhenWorkerIdsAreLeased) {
    EXPECT_EQ(judge_missing_mark(true, true), MissingMark::CoveredByCoordinator);
    // Why: a tenure starts above the worker id's mark in the coordinator
    // whatever the file said, the file missing (no mark) included.
    const Mark coordinator{50'000, false, 0};
    const Handover lost = plan_handover(Mark{}, 0, coordinator, kCoordMarkWindowMs);
    const Handover kept = plan_handover(Mark{40'000, true, 0}, 0, coordinator, kCoordMarkWindowMs);
    EXPECT_EQ(lost.floor_ms, 50'000);
    EXPECT_EQ(lost.floor_ms, kept.floor_ms);
    EXPECT_EQ(lost.grace_ms, kept.grace_ms);
}

TEST(UuidTicksFromMs, AgreesWithNanosecondsWhereBothFit) {
    for (int64_t ms : {int64_t{0}, int64_t{1}, int64_t{1645557742000}, int64_t{9'000'000'000'000}}) {
        for (int64_t sub : {int64_t{0}, int64_t{244}, int64_t{245}, int64_t{500'000}, int64_t{999'999}}) {
            EXPECT_EQ(uuid_ticks_from_ms(ms, sub), uuid_ticks_from_ns(ms * 1'000'000 + sub));
        }
    }
}

TEST(UuidTicksFromMs, HoldsAtTheEndOfThe48BitRange) {
    // Past the year 2262 a nanosecond count no longer fits in 64 bits.
    EXPECT_EQ(uuid_ticks_from_ms(kUuidMaxMs, 999'999), kUuidMaxTicks);
    EXPECT_TRUE(valid_uuid_ticks(uuid_ticks_from_ms(kUuidMaxMs, 0)));
    EXPECT_FALSE(valid_uuid_ticks(uuid_ticks_from_ms(kUuidMaxMs + 1, 0)));
}

// A state started from a crash's reservation waits out a clock up to the
// grace behind it, whatever the tolerance, and counts no clock step.
TEST(FloorGrace, WaitsWithinGraceAndRefusesBeyond) {
    const Config cfg{3, 5};
    GeneratorState s = state_after(10'000, 1'000);
    Next r = next_id(s, 9'500, cfg);
    EXPECT_EQ(r.status, Status::WaitFloor);
    EXPECT_EQ(r.behind_ms, 500);
    EXPECT_EQ(r.wait_until_ms, 10'001);
    EXPECT_TRUE(r.at_floor);
    r = next_id(s, 10'000, cfg);  // at the floor itself: it is used up
    EXPECT_EQ(r.status, Status::WaitFloor);
    EXPECT_EQ(s.counters.clock_backwards_events, 0u);
    EXPECT_EQ(s.counters.overflow_waits, 0u);
    EXPECT_EQ(s.counters.startup_waits, 2u);

    r = next_id(s, 8'999, cfg);  // beyond the grace: a real clock problem
    EXPECT_EQ(r.status, Status::ClockBehind);
    EXPECT_EQ(r.behind_ms, 1'001);
    EXPECT_TRUE(r.at_floor);
    EXPECT_EQ(s.counters.startup_waits, 3u);

    r = next_id(s, 10'001, cfg);
    ASSERT_EQ(r.status, Status::Issued);
    EXPECT_EQ(decompose(r.first_id).ms, 10'001);
    // Once past the floor, the ordinary tolerance applies again, and a step
    // back is not blamed on the floor.
    r = next_id(s, 9'990, cfg);
    EXPECT_EQ(r.status, Status::ClockBehind);
    EXPECT_FALSE(r.at_floor);
    EXPECT_EQ(s.counters.startup_waits, 3u);
}

TEST(FloorGrace, CleanFloorHasNoGrace) {
    const Config cfg{3, 5};
    GeneratorState s = state_after(10'000);
    EXPECT_EQ(next_id(s, 9'990, cfg).status, Status::ClockBehind);
    EXPECT_EQ(next_id(s, 9'997, cfg).status, Status::WaitClock);
    EXPECT_EQ(next_id(s, 10'000, cfg).status, Status::WaitFloor);  // used up, grace 0
    GeneratorState none = state_after(-1, 1'000);
    EXPECT_EQ(none.floor_grace_ms, 0);
    EXPECT_EQ(next_id(none, 0, cfg).status, Status::Issued);
}
