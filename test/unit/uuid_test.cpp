// Unit tests of the UUIDv7 core (src/core/uuid.hpp): ticks, monotonicity,
// byte layout and ordering.

#include "core/uuid.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

namespace {

using namespace snowflake::core;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

using Random = std::array<uint8_t, kUuidRandomBytes>;

Random random_bytes(std::mt19937_64& rng) {
    Random r;
    for (auto& b : r) b = static_cast<uint8_t>(rng());
    return r;
}

// memcmp order, which is how PostgreSQL compares uuid values.
int compare(const Uuid& a, const Uuid& b) { return std::memcmp(a.bytes, b.bytes, sizeof a.bytes); }

// floor(ns * 4096 / 1e6) computed in 128 bits: the reference for uuid_ticks_from_ns.
int64_t reference_ticks(int64_t ns) {
    const __int128 scaled = static_cast<__int128>(ns) * 4096;
    __int128 q = scaled / 1000000;
    if (scaled % 1000000 != 0 && scaled < 0) q -= 1;
    return static_cast<int64_t>(q);
}

// ---------------------------------------------------------------------------
// Ticks

TEST(UuidTicks, ConstantsMatchTheLayout) {
    EXPECT_EQ(kUuidMaxMs, int64_t{0xFFFFFFFFFFFF});
    EXPECT_EQ(kUuidMaxTicks, (kUuidMaxMs << 12) | 0xFFF);
    EXPECT_EQ(kUuidRandomBytes, 8);
}

TEST(UuidTicks, FromNanosecondsAtMillisecondBoundaries) {
    EXPECT_EQ(uuid_ticks_from_ns(0), 0);
    EXPECT_EQ(uuid_ticks_from_ns(1), 0);
    EXPECT_EQ(uuid_ticks_from_ns(244), 0);  // 244 * 4096 / 1e6 = 0.999...
    EXPECT_EQ(uuid_ticks_from_ns(245), 1);  // 1.0035
    EXPECT_EQ(uuid_ticks_from_ns(500'000), 2048);
    EXPECT_EQ(uuid_ticks_from_ns(999'999), 4095);
    EXPECT_EQ(uuid_ticks_from_ns(1'000'000), 4096);
    EXPECT_EQ(uuid_ticks_from_ns(1'000'001), 4096);
    EXPECT_EQ(uuid_ticks_from_ns(1'999'999), 4096 + 4095);
    EXPECT_EQ(uuid_ticks_from_ns(2'000'000), 8192);
    // 2022-02-22 19:22:22.797 UTC plus 0.6 microseconds.
    EXPECT_EQ(uuid_ticks_from_ns(1'645'557'742'797'600'000),
              int64_t{1'645'557'742'797} * 4096 + 2457);  // floor(600000 * 4096 / 1e6)
}

TEST(UuidTicks, FromNegativeNanosecondsRoundsDown) {
    EXPECT_EQ(uuid_ticks_from_ns(-1), -1);
    EXPECT_EQ(uuid_ticks_from_ns(-244), -1);
    EXPECT_EQ(uuid_ticks_from_ns(-245), -2);
    EXPECT_EQ(uuid_ticks_from_ns(-999'999), -4096);
    EXPECT_EQ(uuid_ticks_from_ns(-1'000'000), -4096);
    EXPECT_EQ(uuid_ticks_from_ns(-1'000'001), -4097);
    EXPECT_EQ(uuid_ticks_from_ns(-2'000'000), -8192);
    EXPECT_FALSE(valid_uuid_ticks(uuid_ticks_from_ns(-1)));
}

TEST(UuidTicks, FromNanosecondsMatchesTheExactFloorOnRandomInput) {
    std::mt19937_64 rng(0x71C5);
    // The whole int64 range except its lowest millisecond (see the test below).
    std::uniform_int_distribution<int64_t> any_ns(kI64Min + 1'000'000, kI64Max);
    std::uniform_int_distribution<int64_t> near_zero(-5'000'000'000, 5'000'000'000);
    for (int i = 0; i < 50'000; i++) {
        const int64_t ns = i % 2 ? any_ns(rng) : near_zero(rng);
        ASSERT_EQ(uuid_ticks_from_ns(ns), reference_ticks(ns)) << "ns " << ns;
    }
    EXPECT_EQ(uuid_ticks_from_ns(kI64Max), reference_ticks(kI64Max));
    EXPECT_EQ(uuid_ticks_from_ns(kI64Min + 1'000'000), reference_ticks(kI64Min + 1'000'000));
}

TEST(UuidTicks, FromNanosecondsIsMonotonic) {
    std::mt19937_64 rng(0x71C6);
    std::uniform_int_distribution<int64_t> ns_d(-(int64_t{1} << 62), int64_t{1} << 62);
    std::uniform_int_distribution<int64_t> step(0, 2'000'000);
    for (int i = 0; i < 20'000; i++) {
        const int64_t a = ns_d(rng);
        const int64_t b = a + step(rng);
        ASSERT_LE(uuid_ticks_from_ns(a), uuid_ticks_from_ns(b)) << a << " " << b;
    }
}

// The header promises: "Negative input gives a negative result". For the
// lowest millisecond of int64 (ns < INT64_MIN + 1'000'000) the function
// negates unix_ns and adds 999'999 in int64: signed overflow, undefined
// behaviour. Built with -O2 it returns a *positive, valid* tick count (a
// UUID time in the year 2262) for these negative inputs.
// Under the sanitizers the overflow aborts the whole binary (the build uses
// -fno-sanitize-recover), so the check only runs in the plain build.
TEST(UuidTicks, LowestNegativeNanosecondsGiveNegativeTicks) {
    // volatile: keep the compiler from folding the call at compile time.
    for (int64_t delta : {int64_t{0}, int64_t{1}, int64_t{999'999}}) {
        volatile int64_t ns = kI64Min + delta;
        const int64_t ticks = uuid_ticks_from_ns(ns);
        EXPECT_LT(ticks, 0) << "ns " << ns;
        EXPECT_FALSE(valid_uuid_ticks(ticks)) << "ns " << ns;
    }
}

TEST(UuidTicks, ValidRange) {
    EXPECT_FALSE(valid_uuid_ticks(kI64Min));
    EXPECT_FALSE(valid_uuid_ticks(-1));
    EXPECT_TRUE(valid_uuid_ticks(0));
    EXPECT_TRUE(valid_uuid_ticks(kUuidMaxTicks));
    EXPECT_FALSE(valid_uuid_ticks(kUuidMaxTicks + 1));
    EXPECT_FALSE(valid_uuid_ticks(kI64Max));
    // Every int64 nanosecond from 1970 on (up to 2262) is well inside the 48-bit ms range.
    EXPECT_TRUE(valid_uuid_ticks(uuid_ticks_from_ns(kI64Max)));
}

// ---------------------------------------------------------------------------
// Monotonic clock

TEST(AscendingTicks, FollowsAClockThatMovesForward) {
    UuidClock clock;
    EXPECT_EQ(clock.last_ticks, -1);
    EXPECT_EQ(ascending_ticks(clock, 0), 0);  // a fresh clock accepts tick 0
    EXPECT_EQ(ascending_ticks(clock, 10), 10);
    EXPECT_EQ(ascending_ticks(clock, 11), 11);
    EXPECT_EQ(ascending_ticks(clock, 5'000), 5'000);
    EXPECT_EQ(clock.last_ticks, 5'000);
}

TEST(AscendingTicks, StepsOneTickWhenTheClockStandsStillOrGoesBack) {
    UuidClock clock;
    EXPECT_EQ(ascending_ticks(clock, 100), 100);
    EXPECT_EQ(ascending_ticks(clock, 100), 101);  // still
    EXPECT_EQ(ascending_ticks(clock, 100), 102);
    EXPECT_EQ(ascending_ticks(clock, 50), 103);   // back
    EXPECT_EQ(ascending_ticks(clock, 103), 104);  // reaches the last value
    EXPECT_EQ(ascending_ticks(clock, 105), 105);  // passes it: follows the clock again
    EXPECT_EQ(ascending_ticks(clock, -7), 106);
}

TEST(AscendingTicks, StrictlyIncreasingOnARandomClock) {
    std::mt19937_64 rng(0xA5C);
    std::uniform_int_distribution<int> kind(0, 9);
    std::uniform_int_distribution<int64_t> step(1, 50);
    UuidClock clock;
    int64_t now = int64_t{1'700'000'000'000} * 4096;
    int64_t prev = -1;
    for (int i = 0; i < 100'000; i++) {
        const int k = kind(rng);
        if (k < 4) now += step(rng);
        else if (k < 8) {}  // stands still
        else now -= step(rng) * (k == 9 ? 1000 : 1);
        const int64_t t = ascending_ticks(clock, now);
        ASSERT_GT(t, prev) << "i " << i;
        ASSERT_GE(t, now) << "i " << i;  // never behind the clock
        if (now > prev) {
            ASSERT_EQ(t, now) << "i " << i;  // never ahead when it need not be
        }
        prev = t;
    }
}

TEST(AscendingTicks, CanStepPastTheLastValidTick) {
    // ascending_ticks does not range-check: the caller must test the result
    // with valid_uuid_ticks, as the glue does.
    UuidClock clock;
    EXPECT_EQ(ascending_ticks(clock, kUuidMaxTicks), kUuidMaxTicks);
    const int64_t t = ascending_ticks(clock, kUuidMaxTicks);
    EXPECT_EQ(t, kUuidMaxTicks + 1);
    EXPECT_FALSE(valid_uuid_ticks(t));
}

// ---------------------------------------------------------------------------
// Bytes

TEST(BuildUuidv7, PutsVersionVariantTimeAndRandomInTheirBits) {
    const int64_t ms = 0x010203040506;
    const int64_t ticks = (ms << 12) | 0xABC;
    const Random r = {0xFF, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
    const Uuid u = build_uuidv7(ticks, r.data());
    const uint8_t expected[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06,  // unix_ts_ms, big-endian
                                  0x7A, 0xBC,                          // version 7, rand_a 0xABC
                                  0xBF,  // variant 10, then random[0] & 0x3F
                                  0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
    EXPECT_EQ(std::memcmp(u.bytes, expected, 16), 0);
    EXPECT_EQ(uuid_version(u), 7);
    EXPECT_TRUE(uuid_rfc_variant(u));
    EXPECT_EQ(uuid_ms(u), ms);
}

TEST(BuildUuidv7, Rfc9562AppendixA6Example) {
    // 017F22E2-79B0-7CC3-98C4-DC0C0C07398F: unix_ts_ms 0x017F22E279B0
    // (2022-02-22 19:22:22.000 UTC), rand_a 0xCC3, rand_b from the rest.
    const uint8_t rfc[16] = {0x01, 0x7F, 0x22, 0xE2, 0x79, 0xB0, 0x7C, 0xC3,
                             0x98, 0xC4, 0xDC, 0x0C, 0x0C, 0x07, 0x39, 0x8F};
    Uuid parsed;
    std::memcpy(parsed.bytes, rfc, 16);
    EXPECT_EQ(uuid_ms(parsed), int64_t{0x017F22E279B0});
    EXPECT_EQ(uuid_ms(parsed), int64_t{1'645'557'742'000});
    EXPECT_EQ(uuid_version(parsed), 7);
    EXPECT_TRUE(uuid_rfc_variant(parsed));
    EXPECT_EQ(((rfc[6] & 0x0F) << 8) | rfc[7], 0xCC3);

    const int64_t ticks = int64_t{1'645'557'742'000} * 4096 + 0xCC3;
    ASSERT_TRUE(valid_uuid_ticks(ticks));
    // The random input is the example's own rand_b bytes: byte 8 (its variant
    // bits are ignored) and bytes 9-15.
    const Random r = {rfc[8], rfc[9], rfc[10], rfc[11], rfc[12], rfc[13], rfc[14], rfc[15]};
    const Uuid u = build_uuidv7(ticks, r.data());
    EXPECT_EQ(std::memcmp(u.bytes, rfc, 16), 0);

    // The variant bits of random[0] do not matter.
    const Random r2 = {static_cast<uint8_t>(rfc[8] & 0x3F), rfc[9], rfc[10], rfc[11],
                       rfc[12], rfc[13], rfc[14], rfc[15]};
    EXPECT_EQ(std::memcmp(build_uuidv7(ticks, r2.data()).bytes, rfc, 16), 0);
}

TEST(BuildUuidv7, RandomBytesFillExactlyRandB) {
    std::mt19937_64 rng(0xB17E);
    const int64_t ticks = int64_t{1'700'000'000'123} * 4096 + 77;
    const Random zero{};
    const Uuid base = build_uuidv7(ticks, zero.data());
    EXPECT_EQ(base.bytes[8], 0x80);
    for (int i = 9; i < 16; i++) EXPECT_EQ(base.bytes[i], 0) << i;

    for (int n = 0; n < 2000; n++) {
        // Exactly kUuidRandomBytes on the heap, so ASan catches a read past them.
        auto r = std::make_unique<uint8_t[]>(kUuidRandomBytes);
        for (int i = 0; i < kUuidRandomBytes; i++) r[i] = static_cast<uint8_t>(rng());
        const Uuid u = build_uuidv7(ticks, r.get());
        // The time, version and fraction bytes do not depend on the random bytes.
        ASSERT_EQ(std::memcmp(u.bytes, base.bytes, 8), 0);
        ASSERT_EQ(u.bytes[8], 0x80 | (r[0] & 0x3F));
        for (int i = 9; i < 16; i++) ASSERT_EQ(u.bytes[i], r[i - 8]) << i;
        ASSERT_EQ(uuid_version(u), 7);
        ASSERT_TRUE(uuid_rfc_variant(u));
    }
}

TEST(BuildUuidv7, RandBCarries62RandomBits) {
    // All-ones random bytes set exactly the 62 rand_b bits.
    const Random ones = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    const Random zero{};
    const Uuid a = build_uuidv7(4096, ones.data());
    const Uuid b = build_uuidv7(4096, zero.data());
    int differing_bits = 0;
    for (int i = 0; i < 16; i++) differing_bits += __builtin_popcount(a.bytes[i] ^ b.bytes[i]);
    EXPECT_EQ(differing_bits, 62);
}

TEST(BuildUuidv7, TicksEdges) {
    const Random ones = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    const Random zero{};

    const Uuid lowest = build_uuidv7(0, zero.data());
    const uint8_t lowest_bytes[16] = {0, 0, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(std::memcmp(lowest.bytes, lowest_bytes, 16), 0);
    EXPECT_EQ(uuid_ms(lowest), 0);

    const Uuid highest = build_uuidv7(kUuidMaxTicks, ones.data());
    const uint8_t highest_bytes[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF,
                                       0xBF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    EXPECT_EQ(std::memcmp(highest.bytes, highest_bytes, 16), 0);
    EXPECT_EQ(uuid_ms(highest), kUuidMaxMs);
    EXPECT_EQ(uuid_version(highest), 7);
    EXPECT_TRUE(uuid_rfc_variant(highest));
}

TEST(BuildUuidv7, ByteOrderFollowsTickOrderWhateverTheRandomBytes) {
    std::mt19937_64 rng(0x0D3);
    std::uniform_int_distribution<int64_t> ticks_d(0, kUuidMaxTicks - 1);
    std::uniform_int_distribution<int64_t> gap_d(1, 1 << 20);
    const Random ones = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    const Random zero{};
    for (int i = 0; i < 20'000; i++) {
        int64_t t1 = ticks_d(rng);
        int64_t t2;
        switch (i % 4) {
            case 0:  // adjacent ticks
                t2 = t1 + 1;
                break;
            case 1:  // last tick of a ms, then the first of the next
                t1 |= 0xFFF;
                if (t1 == kUuidMaxTicks) t1 -= 4096;
                t2 = t1 + 1;
                break;
            case 2:  // fraction 0x0FF to 0x100: byte 7 carries into byte 6
                t1 = (t1 & ~int64_t{0xFFF}) | 0xFF;
                t2 = t1 + 1;
                break;
            default:  // random gap
                t2 = std::min(t1 + gap_d(rng), kUuidMaxTicks);
                break;
        }
        ASSERT_LT(t1, t2);
        // Worst case for ordering: the earlier one gets the largest random
        // bytes, the later one the smallest; also random ones.
        ASSERT_LT(compare(build_uuidv7(t1, ones.data()), build_uuidv7(t2, zero.data())), 0)
            << t1 << " " << t2;
        const Random r1 = random_bytes(rng), r2 = random_bytes(rng);
        ASSERT_LT(compare(build_uuidv7(t1, r1.data()), build_uuidv7(t2, r2.data())), 0)
            << t1 << " " << t2;
    }
}

TEST(BuildUuidv7, AscendingClockGivesAscendingUuids) {
    std::mt19937_64 rng(0x0D4);
    UuidClock clock;
    int64_t now = int64_t{1'700'000'000'000} * 4096;
    Uuid prev{};
    for (int i = 0; i < 20'000; i++) {
        if (i % 3 == 0) now += 5;
        if (i % 7 == 0) now -= 40;
        const int64_t t = ascending_ticks(clock, now);
        const Random r = random_bytes(rng);
        const Uuid u = build_uuidv7(t, r.data());
        if (i > 0) {
            ASSERT_LT(compare(prev, u), 0) << "i " << i;
        }
        prev = u;
    }
}

TEST(UuidMs, RoundTripsTheMillisecondOfTheTicks) {
    std::mt19937_64 rng(0x0D5);
    std::uniform_int_distribution<int64_t> ticks_d(0, kUuidMaxTicks);
    for (int i = 0; i < 20'000; i++) {
        const int64_t t = ticks_d(rng);
        const Random r = random_bytes(rng);
        ASSERT_EQ(uuid_ms(build_uuidv7(t, r.data())), t >> 12) << t;
    }
    for (int64_t ms : {int64_t{0}, int64_t{1}, int64_t{1'645'557'742'000}, kUuidMaxMs}) {
        EXPECT_EQ(uuid_ms(uuidv7_floor(ms)), ms);
    }
}

// ---------------------------------------------------------------------------
// Floor of a millisecond

TEST(Uuidv7Floor, IsAVersion7UuidWithNothingBelowTheMillisecond) {
    const Uuid f = uuidv7_floor(0x010203040506);
    const uint8_t expected[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x70, 0x00,
                                  0x80, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(std::memcmp(f.bytes, expected, 16), 0);
    EXPECT_EQ(uuid_version(f), 7);
    EXPECT_TRUE(uuid_rfc_variant(f));
    // It is the UUID of the ms's first tick with all-zero random bytes.
    const Random zero{};
    EXPECT_EQ(compare(f, build_uuidv7(int64_t{0x010203040506} << 12, zero.data())), 0);
}

TEST(Uuidv7Floor, BoundsTheUuidsOfItsMillisecond) {
    std::mt19937_64 rng(0xF1);
    std::uniform_int_distribution<int64_t> ms_d(1, kUuidMaxMs);
    std::uniform_int_distribution<int64_t> frac_d(0, 4095);
    const Random ones = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    const Random zero{};
    std::vector<int64_t> ms_values = {1, 2, 0xFF, 0x100, kUuidMaxMs - 1, kUuidMaxMs};
    for (int i = 0; i < 5'000; i++) ms_values.push_back(ms_d(rng));
    for (int64_t ms : ms_values) {
        const Uuid floor = uuidv7_floor(ms);
        // <= any UUID of ms (equal to the smallest one) ...
        EXPECT_LE(compare(floor, build_uuidv7(ms << 12, zero.data())), 0) << ms;
        const Random r = random_bytes(rng);
        ASSERT_LE(compare(floor, build_uuidv7((ms << 12) | frac_d(rng), r.data())), 0) << ms;
        ASSERT_LT(compare(floor, build_uuidv7((ms << 12) | 0xFFF, ones.data())), 0) << ms;
        // ... and > any UUID of ms - 1 (greater than the largest one).
        ASSERT_GT(compare(floor, build_uuidv7(((ms - 1) << 12) | 0xFFF, ones.data())), 0) << ms;
        ASSERT_GT(compare(floor, build_uuidv7(((ms - 1) << 12) | frac_d(rng), r.data())), 0) << ms;
        // Floors themselves ascend.
        ASSERT_GT(compare(floor, uuidv7_floor(ms - 1)), 0) << ms;
    }
    // ms 0: the smallest possible version-7 UUID.
    EXPECT_EQ(compare(uuidv7_floor(0), build_uuidv7(0, zero.data())), 0);
}

// ---------------------------------------------------------------------------
// Version and variant of arbitrary UUIDs

TEST(UuidIntrospection, VersionAndVariantOfOtherUuids) {
    Uuid nil{};
    EXPECT_EQ(uuid_version(nil), 0);
    EXPECT_FALSE(uuid_rfc_variant(nil));

    Uuid max;
    std::memset(max.bytes, 0xFF, 16);
    EXPECT_EQ(uuid_version(max), 15);
    EXPECT_FALSE(uuid_rfc_variant(max));  // variant 0b111

    // A version-4 UUID: 919108F7-52D1-4320-9BAC-F847DB4148A8 (RFC 9562 A.3).
    const uint8_t v4[16] = {0x91, 0x91, 0x08, 0xF7, 0x52, 0xD1, 0x43, 0x20,
                            0x9B, 0xAC, 0xF8, 0x47, 0xDB, 0x41, 0x48, 0xA8};
    Uuid u;
    std::memcpy(u.bytes, v4, 16);
    EXPECT_EQ(uuid_version(u), 4);
    EXPECT_TRUE(uuid_rfc_variant(u));

    // Microsoft variant 0b110 is not RFC.
    u.bytes[8] = 0xC0;
    EXPECT_FALSE(uuid_rfc_variant(u));
    u.bytes[8] = 0xBF;  // 0b10111111: RFC
    EXPECT_TRUE(uuid_rfc_variant(u));
}

}  // namespace
