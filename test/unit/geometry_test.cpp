// Unit tests of the node's own layout (core::Geometry, layout.hpp): the
// geometry a snowflake.layout gives, the bounds of its ids (the last
// millisecond of the lifetime, the last sequence, the largest worker id),
// its position words and the generator at those bounds.

#include "core/generator.hpp"
#include "core/id_layout.hpp"
#include "core/mark.hpp"
#include "core/layout.hpp"
#include "core/position.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

using namespace snowflake::core;

Geometry node(const char* text) {
    IdLayout l;
    char why[320] = "";
    EXPECT_TRUE(parse_layout(text, &l, why, sizeof(why))) << text << ": " << why;
    Geometry g{};
    EXPECT_TRUE(node_geometry(l, &g, why, sizeof(why))) << text << ": " << why;
    return g;
}

std::string refused(const char* text) {
    IdLayout l;
    char why[320] = "";
    EXPECT_TRUE(parse_layout(text, &l, why, sizeof(why))) << text << ": " << why;
    Geometry g{};
    EXPECT_FALSE(node_geometry(l, &g, why, sizeof(why))) << text;
    return why;
}

constexpr int64_t kTwoTo53 = int64_t{1} << 53;

TEST(Geometry, TwitterIsTheFixedLayout) {
    const Geometry g = node("twitter");
    EXPECT_EQ(g, kTwitter);
    EXPECT_EQ(g.max_ms, kMaxMs);
    EXPECT_EQ(g.max_worker, kMaxWorker);
    EXPECT_EQ(g.max_sequence, kMaxSequence);
    EXPECT_EQ(g.fenced_base, kFencedBase);
    EXPECT_EQ(compose(g, 123456789, 1023, 4095), compose(123456789, 1023, 4095));
    EXPECT_EQ(pack_position(g, 77, 12, 900), pack_position(77, 12, 900));
    EXPECT_EQ(pack_fenced(g, 77, 900), pack_fenced(77, 900));
    EXPECT_EQ(geometry_text(g), "twitter");
}

// js-safe: 41/6/6. Its largest id, the last sequence of the largest worker
// id in the last millisecond of the lifetime, is 2^53 - 1 exactly
// (Number.MAX_SAFE_INTEGER); one more millisecond is past the lifetime.
TEST(Geometry, JsSafeBoundsAreTheLastSafeInteger) {
    const Geometry g = node("js-safe");
    EXPECT_EQ(geometry_text(g), "js-safe");
    EXPECT_EQ(g.max_ms, (int64_t{1} << 41) - 1);
    EXPECT_EQ(g.max_worker, 63);
    EXPECT_EQ(g.max_sequence, 63);
    EXPECT_EQ(compose(g, g.max_ms, g.max_worker, g.max_sequence), kTwoTo53 - 1);
    EXPECT_TRUE(id_in(g, kTwoTo53 - 1));
    EXPECT_FALSE(id_in(g, kTwoTo53));
    EXPECT_FALSE(id_in(g, -1));
    const Fields f = decompose(g, kTwoTo53 - 1);
    EXPECT_EQ(f.ms, g.max_ms);
    EXPECT_EQ(f.worker, 63);
    EXPECT_EQ(f.sequence, 63);
    // Fields out of range are masked, never carried into a neighbour.
    EXPECT_EQ(compose(g, 5, 64, 0), compose(g, 5, 0, 0));
    EXPECT_EQ(compose(g, 5, 0, 64), compose(g, 5, 0, 0));
}

TEST(Geometry, InstagramsSplitIsANodeLayout) {
    const Geometry g = node("instagram");
    EXPECT_EQ(g.max_worker, 8191);
    EXPECT_EQ(g.max_sequence, 1023);
    EXPECT_EQ(g.word_worker_shift + g.worker_bits, 64);  // 13 + 41 + 10: the word is full
    // Every worker id survives the word.
    for (int32_t w : {0, 1, 4096, 8191}) {
        EXPECT_EQ(packed_worker(g, pack_position(g, 10, 3, w)), w);
        EXPECT_EQ(packed_worker(g, pack_fenced(g, 10, w)), w);
    }
    EXPECT_EQ(geometry_text(g), "time 40, worker 13, sequence 10, unit 1ms");
}

// With one bit of time and one of sequence the fenced values would run into
// the worker id: no geometry; and a node's time field has a year at least.
TEST(Geometry, WidthsWhoseFencedWordsWouldCarryAreNoGeometry) {
    EXPECT_FALSE(geometry_valid(1, 5, 1));
    EXPECT_TRUE(geometry_valid(2, 5, 1));
    EXPECT_TRUE(geometry_valid(1, 5, 2));
    for (int t = 1; t <= 4; t++)
        for (int q = 1; q <= 4; q++) {
            if (!geometry_valid(t, 3, q)) continue;
            const Geometry g = geometry_of(t, 3, q);
            for (int32_t w : {0, 6, 7}) {
                const uint64_t f = pack_fenced(g, g.max_ms, w);
                EXPECT_TRUE(is_fenced(g, f)) << t << "/" << q;
                EXPECT_EQ(packed_worker(g, f), w) << t << "/" << q;
            }
        }
    EXPECT_NE(refused("time 34, worker 10, sequence 12").find("at least 35 bits"), std::string::npos);
    EXPECT_NE(refused("time 1, worker 1, sequence 1").find("at least 35 bits"), std::string::npos);
}

// The glue's decisions about a change of layout (mark_file.cpp, wal.cpp) and
// the lease range (guc.cpp).
TEST(Geometry, ChangesRecordsAndLeaseRanges) {
    const Geometry js = geometry_of(41, 6, 6);
    EXPECT_TRUE(change_keeps_ids_above(js, kTwitter));
    EXPECT_FALSE(change_keeps_ids_above(kTwitter, js));
    EXPECT_FALSE(change_keeps_ids_above(geometry_of(40, 13, 10), kTwitter));
    EXPECT_TRUE(change_keeps_ids_above(kTwitter, kTwitter));

    const uint32_t t = mark_layout_code(kTwitter), j = mark_layout_code(js);
    EXPECT_EQ(judge_record_layout(t, t, false, true), RecordLayout::Same);
    EXPECT_EQ(judge_record_layout(t, j, false, false), RecordLayout::Refused);
    EXPECT_EQ(judge_record_layout(t, j, true, false), RecordLayout::AcceptedChange);  // crash recovery
    EXPECT_EQ(judge_record_layout(t, j, true, true), RecordLayout::Refused);          // a standby, always
    EXPECT_EQ(judge_record_layout(j, t, true, true), RecordLayout::Refused);

    int32_t lo = 0, hi = 1023;
    EXPECT_TRUE(fit_lease_range(js, true, &lo, &hi));
    EXPECT_EQ(hi, 63);
    lo = 0, hi = 1023;
    EXPECT_FALSE(fit_lease_range(js, false, &lo, &hi));  // given beyond the layout
    lo = 100, hi = 1023;
    EXPECT_FALSE(fit_lease_range(js, true, &lo, &hi));
    lo = 10, hi = 20;
    EXPECT_TRUE(fit_lease_range(js, false, &lo, &hi));
    EXPECT_EQ(hi, 20);
    lo = 0, hi = 1023;
    EXPECT_TRUE(fit_lease_range(kTwitter, false, &lo, &hi));
    EXPECT_EQ(hi, 1023);
}

TEST(Geometry, ANodeRefusesWhatItCannotIssue) {
    EXPECT_NE(refused("sonyflake").find("order (time, sequence, worker)"), std::string::npos);
    EXPECT_NE(refused("time 39, worker 16, sequence 8, unit 10ms").find("unit of 10 ms"), std::string::npos);
    EXPECT_NE(refused("time 42, worker 9, sequence 12").find("at most 41 bits"), std::string::npos);
    EXPECT_NE(refused("worker 10, time 41, sequence 12").find("time, worker, sequence"), std::string::npos);
}

// In every geometry the fenced words lie above every normal word and the
// fields come back as packed, at the ends of each field.
TEST(Geometry, WordsRoundTripAtEveryBound) {
    for (const char* text :
         {"twitter", "js-safe", "instagram", "time 11, worker 4, sequence 2", "time 41, worker 1, sequence 1",
          "time 35, worker 14, sequence 14", "time 2, worker 3, sequence 1", "time 1, worker 3, sequence 2"}) {
        // The small ones are no node's layout (under 35 bits of time): the
        // word's form is the same, built here directly.
        Geometry g = geometry_of(0, 0, 0);
        if (std::string(text).rfind("time ", 0) == 0 &&
            std::stoi(std::string(text).substr(5)) < kMinNodeTimeBits) {
            int t = 0, w = 0, q = 0;
            ASSERT_EQ(std::sscanf(text, "time %d, worker %d, sequence %d", &t, &w, &q), 3);
            ASSERT_TRUE(geometry_valid(t, w, q)) << text;
            g = geometry_of(t, w, q);
        } else {
            g = node(text);
        }
        for (int64_t ms : {int64_t{-1}, int64_t{0}, g.max_ms - 1, g.max_ms})
            for (int32_t seq : {0, g.max_sequence})
                for (int32_t w : {0, g.max_worker}) {
                    const uint64_t p = pack_position(g, ms, seq, w);
                    EXPECT_FALSE(is_fenced(g, p)) << text;
                    EXPECT_EQ(packed_ms(g, p), ms) << text;
                    EXPECT_EQ(packed_sequence(g, p), seq) << text;
                    EXPECT_EQ(packed_worker(g, p), w) << text;
                    const uint64_t f = pack_fenced(g, ms, w);
                    EXPECT_TRUE(is_fenced(g, f)) << text;
                    EXPECT_EQ(packed_ms(g, f), ms) << text;
                    EXPECT_EQ(packed_sequence(g, f), g.max_sequence) << text;
                    EXPECT_EQ(packed_worker(g, f), w) << text;
                    EXPECT_GT(position_order(g, f),
                              position_order(g, pack_position(g, g.max_ms, g.max_sequence, w)));
                }
    }
}

// The last millisecond of the lifetime and its last sequence: the fast path
// issues up to them and refuses past them, a tenure cannot start past the
// lifetime, and a floor past it (a mark holds up to 2^41 - 1) uses it up
// instead of running into the fenced values.
TEST(Geometry, TheLifetimesLastMillisecondAndSequence) {
    const Geometry g = geometry_of(11, 4, 2);  // a short lifetime, to reach its end
    FastNext f{};
    const uint64_t last = pack_position(g, g.max_ms, g.max_sequence - 1, 9);
    ASSERT_TRUE(fast_next(g, last, g.max_ms, g.max_ms, &f));
    EXPECT_EQ(f.id, compose(g, g.max_ms, 9, g.max_sequence));
    EXPECT_FALSE(fast_next(g, f.next, g.max_ms, g.max_ms, &f)) << "the last id of the lifetime was issued";
    EXPECT_FALSE(fast_next(g, pack_position(g, 5, 0, 9), g.max_ms + 1, kMaxMs, &f)) << "past the lifetime";

    EXPECT_EQ(tenure_start_ms(g, pack_fenced(g, g.max_ms, 9), -1, 9), g.max_ms);
    const uint64_t raised = raise_position(g, pack_position(g, 5, 0, 9), kMaxMs);
    EXPECT_FALSE(is_fenced(g, raised));
    EXPECT_EQ(packed_ms(g, raised), g.max_ms);
    EXPECT_EQ(packed_sequence(g, raised), g.max_sequence);
    EXPECT_FALSE(fast_next(g, raised, g.max_ms, g.max_ms, &f));
    const uint64_t fence_raised = raise_position(g, pack_fenced(g, 5, 9), kMaxMs);
    EXPECT_TRUE(is_fenced(g, fence_raised));
    EXPECT_EQ(packed_ms(g, fence_raised), g.max_ms);
    EXPECT_EQ(packed_worker(g, fence_raised), 9);
}

// The generator in a geometry: the millisecond is full after its last
// sequence, a batch stops there, and past the lifetime is EndOfTime.
TEST(Geometry, TheGeneratorFillsTheLayoutsMillisecond) {
    const Geometry g = node("js-safe");
    GeneratorState s = state_after(-1);
    Config c;
    c.worker = g.max_worker;
    c.geometry = &g;
    Next r = next_ids(s, 100, c, 1000);
    ASSERT_EQ(r.status, Status::Issued);
    EXPECT_EQ(r.count, 64);
    EXPECT_EQ(r.first_id, compose(g, 100, 63, 0));
    EXPECT_LT(r.first_id + r.count - 1, kTwoTo53);
    r = next_ids(s, 100, c, 1);
    EXPECT_EQ(r.status, Status::WaitNextMs);
    EXPECT_EQ(r.wait_until_ms, 101);
    r = next_ids(s, g.max_ms, c, 1);
    ASSERT_EQ(r.status, Status::Issued);
    EXPECT_EQ(r.first_id, compose(g, g.max_ms, 63, 0));
    EXPECT_EQ(next_ids(s, g.max_ms + 1, c, 1).status, Status::EndOfTime);

    const Geometry small = node("time 36, worker 14, sequence 7");
    c.geometry = &small;
    GeneratorState t = state_after(-1);
    EXPECT_EQ(next_ids(t, small.max_ms + 1, c, 1).status, Status::EndOfTime);
    // A lifetime of 2^36 ms (about 2.2 years) leaves a year from an epoch a year back only.
    EXPECT_EQ(check_epoch(0, kMinRemainingRangeMs, small), EpochCheck::Ok);
    EXPECT_EQ(check_epoch(0, small.max_ms - kMinRemainingRangeMs + 1, small), EpochCheck::TooLittleRange);
}

}  // namespace

namespace {

// snowflake.sequence_spread: a later millisecond's first id takes the
// offset, in the fast path and the slow path alike; the millisecond then
// holds max_sequence + 1 - offset ids, and an offset past the last sequence
// is the last sequence.
TEST(Geometry, ANewMillisecondStartsAtTheSpreadsOffset) {
    const Geometry g = geometry_of(41, 6, 6);
    FastNext f{};
    ASSERT_TRUE(fast_next(g, pack_position(g, 10, 63, 7), 11, 100, &f, 5));
    EXPECT_EQ(f.id, compose(g, 11, 7, 5));
    EXPECT_EQ(packed_sequence(g, f.next), 5);
    ASSERT_TRUE(fast_next(g, f.next, 11, 100, &f, 9));  // the same millisecond: the next sequence
    EXPECT_EQ(f.id, compose(g, 11, 7, 6));
    ASSERT_TRUE(fast_next(g, pack_position(g, 10, 63, 7), 12, 100, &f, 1000));
    EXPECT_EQ(f.id, compose(g, 12, 7, 63));

    GeneratorState s = state_after(-1);
    Config c;
    c.worker = 7;
    c.geometry = &g;
    c.new_ms_sequence = 60;
    Next r = next_ids(s, 50, c, 100);
    ASSERT_EQ(r.status, Status::Issued);
    EXPECT_EQ(r.first_id, compose(g, 50, 7, 60));
    EXPECT_EQ(r.count, 4);
    EXPECT_EQ(next_ids(s, 50, c, 1).status, Status::WaitNextMs);
}

}  // namespace
