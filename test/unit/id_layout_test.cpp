// Unit tests of the configurable layouts (src/core/id_layout.hpp): every
// profile's bounds, the text form, the fit checks and the low-bit spread.

#include "core/id_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace snowflake::core;

const IdLayout& profile(const char* name) {
    const LayoutProfile* p = find_layout_profile(name);
    EXPECT_NE(p, nullptr) << name;
    static IdLayout none;
    return p != nullptr ? p->layout : none;
}

std::vector<const LayoutProfile*> all_profiles() {
    size_t n = 0;
    const LayoutProfile* p = layout_profiles(&n);
    std::vector<const LayoutProfile*> out;
    for (size_t i = 0; i < n; i++) out.push_back(&p[i]);
    return out;
}

IdLayout parsed(const char* text) {
    IdLayout l;
    char why[200] = "";
    EXPECT_TRUE(parse_layout(text, &l, why, sizeof(why))) << text << ": " << why;
    return l;
}

std::string refusal(const char* text) {
    IdLayout l;
    char why[200] = "";
    EXPECT_FALSE(parse_layout(text, &l, why, sizeof(why))) << text;
    return why;
}

constexpr int64_t kYearMs = int64_t{365} * 24 * 3600 * 1000 + int64_t{6} * 3600 * 1000;  // 365.25 days

TEST(IdLayout, TwitterIsTheFixedLayoutBitForBit) {
    const IdLayout& t = profile("twitter");
    EXPECT_EQ(t, IdLayout{});
    std::mt19937_64 rng(42);
    const std::vector<int64_t> ms = {0, 1, kMaxMs - 1, kMaxMs};
    const std::vector<int32_t> workers = {0, 1, kMaxWorker - 1, kMaxWorker};
    const std::vector<int32_t> seqs = {0, 1, kMaxSequence - 1, kMaxSequence};
    for (int64_t m : ms)
        for (int32_t w : workers)
            for (int32_t s : seqs) EXPECT_EQ(compose_in(t, m, w, s), compose(m, w, s));
    for (int i = 0; i < 10000; i++) {
        const int64_t id = static_cast<int64_t>(rng() >> 1);
        const Fields a = decompose_in(t, id), b = decompose(id);
        EXPECT_EQ(a.ms, b.ms);
        EXPECT_EQ(a.worker, b.worker);
        EXPECT_EQ(a.sequence, b.sequence);
    }
    EXPECT_EQ(profile_of(t), find_layout_profile("twitter"));
}

TEST(IdLayout, EveryProfileIsValidAndItsBoundsRoundTripWithoutCarry) {
    for (const LayoutProfile* p : all_profiles()) {
        const IdLayout& l = p->layout;
        char why[200] = "";
        ASSERT_TRUE(layout_valid(l, why, sizeof(why))) << p->name << ": " << why;
        const int64_t top = compose_in(l, max_time(l), max_worker_id(l), max_sequence_of(l));
        EXPECT_GE(top, 0) << p->name;
        EXPECT_EQ(static_cast<uint64_t>(top), (uint64_t{1} << id_bits(l)) - 1) << p->name << ": every bit set";
        for (int64_t t : {int64_t{0}, int64_t{1}, max_time(l)})
            for (int32_t w : {0, 1, max_worker_id(l)})
                for (int32_t s : {0, 1, max_sequence_of(l)}) {
                    const Fields f = decompose_in(l, compose_in(l, t, w, s));
                    EXPECT_EQ(f.ms, t) << p->name;
                    EXPECT_EQ(f.worker, w) << p->name;
                    EXPECT_EQ(f.sequence, s) << p->name;
                }
        // Out-of-range values are masked off, never carried into a neighbour.
        EXPECT_EQ(compose_in(l, 0, max_worker_id(l) + 1, 0), 0) << p->name;
        EXPECT_EQ(compose_in(l, 0, 0, max_sequence_of(l) + 1), 0) << p->name;
        // Time orders ids: the next unit's first id is above this unit's last.
        EXPECT_LT(compose_in(l, 5, max_worker_id(l), max_sequence_of(l)), compose_in(l, 6, 0, 0)) << p->name;
        // The text form reads back as the same layout.
        EXPECT_EQ(parsed(layout_text(l).c_str()), l) << p->name << ": " << layout_text(l);
        EXPECT_EQ(parsed(p->name), l) << p->name;
        EXPECT_EQ(parsed((std::string(" ") + p->name + " \t").c_str()), l) << p->name << ": spaces around";
    }
}

TEST(IdLayout, JsSafeIdsStayBelowTwoToThe53ForSixtyYears) {
    const IdLayout& js = profile("js-safe");
    const int64_t last = compose_in(js, max_time(js), max_worker_id(js), max_sequence_of(js));
    EXPECT_LT(last, int64_t{1} << 53);
    EXPECT_EQ(id_bits(js), 53);
    const int64_t epoch = 1735689600000;  // 2025-01-01, the default snowflake.epoch
    EXPECT_GE(lifetime_end_unix_ms(js, epoch) - epoch, 60 * kYearMs);
    EXPECT_EQ(max_worker_id(js), 63);
    EXPECT_EQ(ids_per_unit(js), 64);
    // A double holds every such id exactly.
    EXPECT_EQ(static_cast<int64_t>(static_cast<double>(last)), last);
}

TEST(IdLayout, SonyflakeOrderPutsTheMachineIdLowest) {
    const IdLayout& sf = profile("sonyflake");
    EXPECT_EQ(sf.unit_ms, 10);
    EXPECT_EQ(field_shift(sf, IdField::Worker), 0);
    EXPECT_EQ(field_shift(sf, IdField::Sequence), 16);
    EXPECT_EQ(field_shift(sf, IdField::Time), 24);
    EXPECT_EQ(compose_in(sf, 3, 0x1234, 5), (int64_t{3} << 24) | (int64_t{5} << 16) | 0x1234);
    // 39 bits of 10 ms: 174 years.
    EXPECT_GT(lifetime_end_unix_ms(sf, 0), 174 * kYearMs);
    EXPECT_LT(lifetime_end_unix_ms(sf, 0), 175 * kYearMs);
}

// Discord's documentation decodes 175928847299117063: 41944705796 ms after
// its epoch (2016-04-30 11:18:25.796 UTC), worker 1, process 0, increment 7.
TEST(IdLayout, DiscordsPublishedIdDecodes) {
    const LayoutProfile* d = find_layout_profile("discord");
    ASSERT_NE(d, nullptr);
    const Fields f = decompose_in(d->layout, 175928847299117063);
    EXPECT_EQ(f.ms, 41944705796);
    EXPECT_EQ(d->foreign_epoch_unix_ms + f.ms, 1462015105796);
    EXPECT_EQ(f.worker, 1 * 32 + 0);
    EXPECT_EQ(f.sequence, 7);
    EXPECT_EQ(compose_in(d->layout, 41944705796, 32, 7), 175928847299117063);
    // Our 41 bits end where Discord's 42-bit field first sets its top bit.
    EXPECT_EQ(lifetime_end_unix_ms(d->layout, d->foreign_epoch_unix_ms), 1420070400000 + (int64_t{1} << 41));
}

TEST(IdLayout, InstagramsBitsWithFortyBitsOfTime) {
    const LayoutProfile* ig = find_layout_profile("instagram");
    ASSERT_NE(ig, nullptr);
    // Instagram: (ms - epoch) << 23 | shard << 10 | sequence.
    EXPECT_EQ(compose_in(ig->layout, 1000, 5001, 7), (int64_t{1000} << 23) | (int64_t{5001} << 10) | 7);
    EXPECT_EQ(max_worker_id(ig->layout), 8191);
    EXPECT_EQ(ids_per_unit(ig->layout), 1024);
    EXPECT_EQ(lifetime_end_unix_ms(ig->layout, ig->foreign_epoch_unix_ms), 1314220021721 + (int64_t{1} << 40));
}

TEST(IdLayout, ACustomSplitIsWrittenAsTheProfilesAre) {
    const IdLayout l = parsed("  time 38 ,worker 13, sequence 12, unit 10ms ");
    EXPECT_EQ(l.time_bits, 38);
    EXPECT_EQ(l.worker_bits, 13);
    EXPECT_EQ(l.sequence_bits, 12);
    EXPECT_EQ(l.unit_ms, 10);
    EXPECT_EQ(layout_text(l), "time 38, worker 13, sequence 12, unit 10ms");
    EXPECT_EQ(profile_of(l), nullptr);
    // The written order is the bit order; fewer than 63 bits is allowed.
    const IdLayout w = parsed("worker 4, time 30, sequence 2");
    EXPECT_EQ(field_shift(w, IdField::Worker), 32);
    EXPECT_EQ(id_bits(w), 36);
    EXPECT_EQ(w.unit_ms, 1);
}

TEST(IdLayout, BadLayoutsAreRefusedWithASentence) {
    EXPECT_NE(refusal("time 42, worker 10, sequence 12").find("64 bits"), std::string::npos);
    EXPECT_NE(refusal("time 41, worker 10").find("all three fields"), std::string::npos);
    EXPECT_NE(refusal("time 41, time 10, sequence 12").find("twice"), std::string::npos);
    EXPECT_NE(refusal("time 41, shard 10, sequence 12").find("neither a profile"), std::string::npos);
    EXPECT_NE(refusal("twiter").find("neither a profile"), std::string::npos);
    EXPECT_NE(refusal("time 41, worker 10, sequence 0").find("at least one bit"), std::string::npos);
    EXPECT_NE(refusal("time 41, worker 17, sequence 5").find("16 bits"), std::string::npos);
    EXPECT_NE(refusal("time 41, worker 10, sequence 12, unit 0ms").find("1 to 1000 ms"), std::string::npos);
    EXPECT_NE(refusal("time 41, worker 10, sequence 12, unit 10").find("unit"), std::string::npos);
    EXPECT_NE(refusal("time 41, worker 10, sequence 12, unit 1ms, unit 2ms").find("once"), std::string::npos);
    EXPECT_NE(refusal("time 41 worker 10 sequence 12").find("commas"), std::string::npos);
    EXPECT_NE(refusal("time x, worker 10, sequence 12").find("number of bits"), std::string::npos);
    EXPECT_NE(refusal("time 99999, worker 10, sequence 12").find("number of bits"), std::string::npos);
    EXPECT_FALSE(refusal("").empty());
    IdLayout l;
    char why[8];
    EXPECT_FALSE(parse_layout(nullptr, &l, why, sizeof(why)));
    EXPECT_FALSE(parse_layout("time 41, worker 10, sequence 13", &l, why, sizeof(why)));  // short buffer: truncated
    EXPECT_EQ(std::string(why).size(), 7u);
}

TEST(IdLayout, FitChecksTheWorkerIdTheEpochAndTheLifetimesLastUnit) {
    const IdLayout& js = profile("js-safe");
    const int64_t epoch = 1735689600000;
    const int64_t end = lifetime_end_unix_ms(js, epoch);
    EXPECT_EQ(layout_fits(js, 63, epoch, epoch), LayoutFit::Ok);
    EXPECT_EQ(layout_fits(js, 64, epoch, epoch), LayoutFit::WorkerTooLarge);
    EXPECT_EQ(layout_fits(js, -1, epoch, epoch), LayoutFit::Ok);  // leased: checked per lease
    EXPECT_EQ(layout_fits(js, 0, epoch, epoch - 1), LayoutFit::EpochAhead);
    EXPECT_EQ(layout_fits(js, 0, epoch, end - 1), LayoutFit::Ok);  // the lifetime's last millisecond
    EXPECT_EQ(layout_fits(js, 0, epoch, end), LayoutFit::LifetimeOver);
    const IdLayout& sf = profile("sonyflake");
    const int64_t sf_end = lifetime_end_unix_ms(sf, 0);
    EXPECT_EQ(sf_end % 10, 0);
    EXPECT_EQ(layout_fits(sf, 0, 0, sf_end - 1), LayoutFit::Ok);  // inside the last 10 ms unit
    EXPECT_EQ(layout_fits(sf, 0, 0, sf_end), LayoutFit::LifetimeOver);
}

// Issue 31's test: at 10 ids a second every id is the first of its
// millisecond; with the spread, id % 16 is even across the 16 shards, and
// without it every id lands on shard 0.
TEST(IdLayout, TheSpreadEvensIdModSixteenAtLowRates) {
    const IdLayout& t = profile("twitter");
    const int32_t spread = spread_for(t, 16);
    ASSERT_EQ(spread, 16);
    std::mt19937 rng(20261206);
    std::vector<int> with(16, 0), without(16, 0);
    const int n = 16000;
    for (int i = 0; i < n; i++) {
        const int64_t ms = 100 * i;  // 10 ids a second
        with[compose_in(t, ms, 7, first_sequence(spread, rng())) % 16]++;
        without[compose_in(t, ms, 7, first_sequence(1, rng())) % 16]++;
    }
    EXPECT_EQ(without[0], n);
    for (int shard = 0; shard < 16; shard++) {
        EXPECT_GT(with[shard], n / 16 * 8 / 10) << "shard " << shard;
        EXPECT_LT(with[shard], n / 16 * 12 / 10) << "shard " << shard;
    }
}

TEST(IdLayout, TheSpreadKeepsIdsIncreasingAndItsCapacityBounded) {
    const IdLayout& t = profile("twitter");
    // Within a unit the sequence counts up from the offset: increasing.
    const int32_t first = first_sequence(16, 0xFFFFFFFFu);
    EXPECT_EQ(first, 15);
    EXPECT_LT(compose_in(t, 9, 3, first), compose_in(t, 9, 3, first + 1));
    // Powers of two, at most a quarter of a unit's sequences.
    EXPECT_EQ(spread_for(t, 1), 1);
    EXPECT_EQ(spread_for(t, 20), 16);
    EXPECT_EQ(spread_for(t, 1 << 20), 1024);
    EXPECT_EQ(spread_for(profile("js-safe"), 64), 16);
    // sonyflake's lowest bits are the worker id: no spread.
    EXPECT_EQ(spread_for(profile("sonyflake"), 16), 1);
    for (uint32_t r : {0u, 1u, 12345u, 0xFFFFFFFFu}) {
        EXPECT_LT(first_sequence(16, r), 16);
        EXPECT_GE(first_sequence(16, r), 0);
        EXPECT_EQ(first_sequence(1, r), 0);
    }
}

}  // namespace

namespace {

// What the SQL functions and snowflake-inspect --layout add to the core:
// the profile an argument names (with its system's epoch), whether ids
// order by time, whether an id fits, and the time field of an instant.

TEST(IdLayoutArg, AProfileNameBringsItsSystemsEpoch) {
    LayoutArg a;
    char why[200] = "";
    ASSERT_TRUE(parse_layout_arg("discord", &a, why, sizeof(why))) << why;
    EXPECT_EQ(a.layout, profile("discord"));
    EXPECT_EQ(a.own_epoch_unix_ms, 1420070400000);
    ASSERT_NE(a.profile, nullptr);
    EXPECT_STREQ(a.profile->name, "discord");
    ASSERT_TRUE(parse_layout_arg("  sonyflake ", &a, why, sizeof(why))) << why;
    EXPECT_EQ(a.own_epoch_unix_ms, 1409529600000);  // 2014-09-01 00:00:00 UTC
    ASSERT_TRUE(parse_layout_arg("instagram", &a, why, sizeof(why))) << why;
    EXPECT_EQ(a.own_epoch_unix_ms, 1314220021721);
    // Our own profiles and a written layout carry no epoch, even when the
    // text is Discord's split.
    ASSERT_TRUE(parse_layout_arg("js-safe", &a, why, sizeof(why))) << why;
    EXPECT_EQ(a.own_epoch_unix_ms, -1);
    EXPECT_STREQ(a.profile->name, "js-safe");
    ASSERT_TRUE(parse_layout_arg("time 41, worker 10, sequence 12", &a, why, sizeof(why))) << why;
    EXPECT_EQ(a.own_epoch_unix_ms, -1);
    EXPECT_EQ(a.profile, nullptr);
    EXPECT_EQ(a.layout, profile("discord"));
    // A refusal is parse_layout's.
    EXPECT_FALSE(parse_layout_arg("Discord", &a, why, sizeof(why)));
    EXPECT_NE(std::string(why).find("neither a profile"), std::string::npos) << why;
    EXPECT_FALSE(parse_layout_arg(nullptr, &a, why, sizeof(why)));
}

TEST(IdLayoutArg, ProfileNamesAreTheTablesInOrder) {
    char names[200];
    profile_names(names, sizeof(names), false);
    EXPECT_STREQ(names, "twitter, js-safe, sonyflake, discord, instagram");
    profile_names(names, sizeof(names), true);
    EXPECT_STREQ(names, "sonyflake, discord, instagram");
    char short_buffer[10];
    profile_names(short_buffer, sizeof(short_buffer), false);
    EXPECT_EQ(std::string(short_buffer).size(), 9u);  // truncated, terminated
}

TEST(IdLayoutArg, TimeLeadsOnlyWhenTheTimeFieldIsTheTopOne) {
    for (const LayoutProfile* p : all_profiles()) EXPECT_TRUE(time_leads(p->layout)) << p->name;
    EXPECT_FALSE(time_leads(parsed("worker 4, time 30, sequence 2")));
    EXPECT_FALSE(time_leads(parsed("sequence 4, worker 4, time 30")));
}

TEST(IdLayoutArg, AnIdFitsBelowTheLayoutsTopBit) {
    const IdLayout& js = profile("js-safe");
    EXPECT_TRUE(id_fits(js, 0));
    EXPECT_TRUE(id_fits(js, (int64_t{1} << 53) - 1));
    EXPECT_FALSE(id_fits(js, int64_t{1} << 53));
    EXPECT_FALSE(id_fits(js, -1));
    EXPECT_TRUE(id_fits(profile("twitter"), INT64_MAX));
    EXPECT_FALSE(id_fits(profile("twitter"), INT64_MIN));
}

TEST(IdLayoutArg, TimeFieldOfAnInstantFloorsToItsUnit) {
    const IdLayout& sf = profile("sonyflake");
    int64_t t = -5;
    ASSERT_TRUE(time_of_ms(sf, 0, &t));
    EXPECT_EQ(t, 0);
    ASSERT_TRUE(time_of_ms(sf, 19, &t));
    EXPECT_EQ(t, 1);
    ASSERT_TRUE(time_of_ms(sf, 20, &t));
    EXPECT_EQ(t, 2);
    EXPECT_FALSE(time_of_ms(sf, -1, &t));  // before the epoch
    // The last unit of the lifetime, and the first millisecond after it.
    const int64_t end = lifetime_end_unix_ms(sf, 0);
    ASSERT_TRUE(time_of_ms(sf, end - 1, &t));
    EXPECT_EQ(t, max_time(sf));
    EXPECT_FALSE(time_of_ms(sf, end, &t));
    const IdLayout& tw = profile("twitter");
    ASSERT_TRUE(time_of_ms(tw, kMaxMs, &t));
    EXPECT_EQ(t, kMaxMs);
    EXPECT_FALSE(time_of_ms(tw, kMaxMs + 1, &t));
    EXPECT_FALSE(time_of_ms(tw, INT64_MAX, &t));
    EXPECT_FALSE(time_of_ms(tw, INT64_MIN, &t));
}

TEST(IdLayoutArg, MillisecondsOfATimeFieldOverflowCleanly) {
    int64_t ms = -5;
    ASSERT_TRUE(ms_of_time(profile("sonyflake"), 3, &ms));
    EXPECT_EQ(ms, 30);
    ASSERT_TRUE(ms_of_time(profile("twitter"), kMaxMs, &ms));
    EXPECT_EQ(ms, kMaxMs);
    // 62 bits of 1000 ms units: the last ones do not fit in 64-bit milliseconds.
    const IdLayout wide = parsed("time 61, worker 1, sequence 1, unit 1000ms");
    ASSERT_TRUE(ms_of_time(wide, 1000, &ms));
    EXPECT_EQ(ms, 1000000);
    EXPECT_FALSE(ms_of_time(wide, max_time(wide), &ms));
    EXPECT_FALSE(ms_of_time(wide, -1, &ms));
}

}  // namespace
