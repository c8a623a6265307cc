// Unit tests of the generator state machine (src/core/generator.hpp), driven
// by injected clocks: the tests choose every "now" the generator sees.

#include "core/generator.hpp"
#include "core/position.hpp"
#include "plain_words.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <unordered_set>
#include <vector>

namespace {

using namespace snowflake::core;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

Config config_for(int32_t worker, int64_t tolerance_ms) {
    Config c;
    c.worker = worker;
    c.tolerance_ms = tolerance_ms;
    return c;
}

uint64_t position_of(const GeneratorState& s, int32_t worker) {
    return pack_position(s.last_ms, s.sequence, worker);
}

bool same_counters(const Counters& a, const Counters& b) {
    return a.overflow_waits == b.overflow_waits &&
           a.clock_backwards_events == b.clock_backwards_events &&
           a.clock_backwards_errors == b.clock_backwards_errors &&
           a.clock_backwards_max_ms == b.clock_backwards_max_ms &&
           a.reservations == b.reservations;
}

// ---------------------------------------------------------------------------
// First id and plain issuing

TEST(Generator, DefaultStateHasIssuedNothing) {
    const GeneratorState s;
    EXPECT_EQ(s.last_ms, -1);
    EXPECT_EQ(s.sequence, kMaxSequence);
    EXPECT_EQ(s.reserved_until_ms, kMaxMs);
    EXPECT_TRUE(same_counters(s.counters, Counters{}));
}

TEST(Generator, FirstIdIsSequenceZeroOfTheCurrentMillisecond) {
    GeneratorState s;
    const Next n = next_id(s, 1000, config_for(5, 0));
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, 1);
    EXPECT_EQ(n.first_id, compose(1000, 5, 0));
    EXPECT_EQ(s.last_ms, 1000);
    EXPECT_EQ(s.sequence, 0);
    EXPECT_TRUE(same_counters(s.counters, Counters{}));
}

TEST(Generator, FirstIdAtTheEpochItself) {
    GeneratorState s;
    const Next n = next_id(s, 0, config_for(0, 0));
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, 0);  // ms 0, worker 0, sequence 0
}

TEST(Generator, IdsCarryTheWorkerAndTheClockMillisecond) {
    for (int32_t worker : {0, 1, 513, kMaxWorker}) {
        GeneratorState s;
        const Config c = config_for(worker, 0);
        for (int64_t now = 10; now < 20; now++) {
            const Next n = next_id(s, now, c);
            ASSERT_EQ(n.status, Status::Issued);
            const Fields f = decompose(n.first_id);
            EXPECT_EQ(f.ms, now);
            EXPECT_EQ(f.worker, worker);
            EXPECT_EQ(f.sequence, 0);
        }
    }
}

TEST(Generator, SameMillisecondContinuesTheSequence) {
    GeneratorState s;
    const Config c = config_for(9, 0);
    for (int32_t seq = 0; seq < 10; seq++) {
        const Next n = next_id(s, 42, c);
        ASSERT_EQ(n.status, Status::Issued);
        EXPECT_EQ(n.first_id, compose(42, 9, seq));
        EXPECT_EQ(s.sequence, seq);
    }
    // A later millisecond starts again at zero, even with sequence left.
    const Next n = next_id(s, 43, c);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, compose(43, 9, 0));
}

// Simulates a caller that sleeps until wait_until_ms when told to wait: ids
// must strictly increase whatever the clock does, and nothing may error
// while the clock stays within tolerance.
void drive_and_check_increasing(std::mt19937_64& rng, int64_t max_back, int64_t tolerance) {
    GeneratorState s;
    const Config c = config_for(77, tolerance);
    int64_t clock = 1'000'000;
    int64_t prev = -1;
    int issued = 0;
    int waits = 0;
    std::uniform_int_distribution<int> kind(0, 9);
    std::uniform_int_distribution<int64_t> back(0, max_back);
    while (issued < 60'000) {
        switch (kind(rng)) {
            case 0: case 1: clock += 1; break;           // advances
            case 2: clock += 3; break;
            case 3: clock -= back(rng); break;           // jitters back
            default: break;                              // stands still
        }
        const Next n = next_id(s, clock, c);
        if (n.status == Status::Issued) {
            ASSERT_EQ(n.count, 1);
            ASSERT_GT(n.first_id, prev);
            EXPECT_EQ(decompose(n.first_id).ms, clock);
            prev = n.first_id;
            issued++;
        } else {
            ASSERT_TRUE(n.status == Status::WaitClock || n.status == Status::WaitNextMs)
                << "status " << static_cast<int>(n.status) << " at clock " << clock;
            ASSERT_GT(n.wait_until_ms, clock);
            clock = n.wait_until_ms;  // the caller's sleep
            waits++;
        }
    }
    if (max_back > 0) {
        EXPECT_GT(waits, 0) << "the jittering clock never stepped back";
    }
}

TEST(Generator, StrictlyIncreasingWithAdvancingAndStandingClock) {
    std::mt19937_64 rng(0xC10C1);
    drive_and_check_increasing(rng, 0, 0);
}

TEST(Generator, StrictlyIncreasingWithJitteringClockWithinTolerance) {
    std::mt19937_64 rng(0xC10C2);
    drive_and_check_increasing(rng, 5, 5);
}

// ---------------------------------------------------------------------------
// Exhaustion of a millisecond

TEST(Generator, ExhaustionWaitsForTheNextMillisecondAndResumesAtZero) {
    GeneratorState s;
    const Config c = config_for(3, 10);
    for (int32_t seq = 0; seq <= kMaxSequence; seq++) {
        const Next n = next_id(s, 500, c);
        ASSERT_EQ(n.status, Status::Issued) << "seq " << seq;
        ASSERT_EQ(n.first_id, compose(500, 3, seq));
    }
    EXPECT_EQ(s.sequence, kMaxSequence);

    Next n = next_id(s, 500, c);
    ASSERT_EQ(n.status, Status::WaitNextMs);
    EXPECT_EQ(n.wait_until_ms, 501);
    EXPECT_EQ(n.count, 0);
    EXPECT_EQ(s.counters.overflow_waits, 1u);
    EXPECT_EQ(s.last_ms, 500);
    EXPECT_EQ(s.sequence, kMaxSequence);

    // Every call that finds the millisecond used up counts.
    n = next_id(s, 500, c);
    ASSERT_EQ(n.status, Status::WaitNextMs);
    EXPECT_EQ(s.counters.overflow_waits, 2u);
    EXPECT_EQ(s.counters.clock_backwards_events, 0u);

    n = next_id(s, 501, c);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, compose(501, 3, 0));
    EXPECT_EQ(s.last_ms, 501);
    EXPECT_EQ(s.sequence, 0);
}

// ---------------------------------------------------------------------------
// Batches

TEST(Generator, BatchReturnsConsecutiveIdsOfOneMillisecond) {
    GeneratorState s;
    const Config c = config_for(12, 0);
    Next n = next_ids(s, 900, c, 100);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, 100);
    EXPECT_EQ(n.first_id, compose(900, 12, 0));
    EXPECT_EQ(s.sequence, 99);
    // The last id of the batch is first_id + count - 1, same ms and worker.
    const Fields last = decompose(n.first_id + (n.count - 1));
    EXPECT_EQ(last.ms, 900);
    EXPECT_EQ(last.worker, 12);
    EXPECT_EQ(last.sequence, 99);

    n = next_ids(s, 900, c, 100);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, 100);
    EXPECT_EQ(n.first_id, compose(900, 12, 100));

    // A single id after a batch follows it directly.
    n = next_id(s, 900, c);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, compose(900, 12, 200));
}

TEST(Generator, BatchIsCappedAtWhatIsLeftInTheMillisecond) {
    GeneratorState s;
    const Config c = config_for(1, 0);
    Next n = next_ids(s, 900, c, 4001);  // sequences 0..4000
    ASSERT_EQ(n.status, Status::Issued);
    ASSERT_EQ(n.count, 4001);

    n = next_ids(s, 900, c, 200);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, 95);  // 4001..4095
    EXPECT_EQ(n.first_id, compose(900, 1, 4001));
    EXPECT_EQ(s.sequence, kMaxSequence);

    n = next_ids(s, 900, c, 200);
    EXPECT_EQ(n.status, Status::WaitNextMs);
    EXPECT_EQ(n.wait_until_ms, 901);
}

TEST(Generator, LargeBatchTakesAWholeMillisecond) {
    GeneratorState s;
    const Config c = config_for(1, 0);
    Next n = next_ids(s, 900, c, std::numeric_limits<int32_t>::max());
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, kIdsPerMs);
    EXPECT_EQ(n.first_id, compose(900, 1, 0));
    EXPECT_EQ(s.sequence, kMaxSequence);

    n = next_ids(s, 901, c, kIdsPerMs);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, kIdsPerMs);
    EXPECT_EQ(n.first_id, compose(901, 1, 0));
}

TEST(Generator, MaxCountBelowOneIsTreatedAsOne) {
    for (int32_t max_count : {0, -1, std::numeric_limits<int32_t>::min()}) {
        GeneratorState s;
        const Config c = config_for(1, 0);
        Next n = next_ids(s, 900, c, max_count);
        ASSERT_EQ(n.status, Status::Issued) << "max_count " << max_count;
        EXPECT_EQ(n.count, 1);
        EXPECT_EQ(s.sequence, 0);
        n = next_ids(s, 900, c, max_count);
        ASSERT_EQ(n.status, Status::Issued);
        EXPECT_EQ(n.count, 1);
        EXPECT_EQ(n.first_id, compose(900, 1, 1));
    }
}

// ---------------------------------------------------------------------------
// Clock moving backwards

TEST(Generator, SmallStepBackWithSequenceLeftWaitsForLastMs) {
    GeneratorState s;
    const Config c = config_for(2, 5);
    ASSERT_EQ(next_id(s, 100, c).status, Status::Issued);  // sequence 0 of ms 100

    const Next n = next_id(s, 97, c);
    ASSERT_EQ(n.status, Status::WaitClock);
    EXPECT_EQ(n.behind_ms, 3);
    EXPECT_EQ(n.wait_until_ms, 100);  // ms 100 still has sequence left
    EXPECT_EQ(n.count, 0);
    EXPECT_EQ(s.counters.clock_backwards_events, 1u);
    EXPECT_EQ(s.counters.clock_backwards_max_ms, 3);
    EXPECT_EQ(s.counters.clock_backwards_errors, 0u);
    EXPECT_EQ(s.last_ms, 100);
    EXPECT_EQ(s.sequence, 0);

    // At wait_until_ms the sequence continues.
    const Next later = next_id(s, n.wait_until_ms, c);
    ASSERT_EQ(later.status, Status::Issued);
    EXPECT_EQ(later.first_id, compose(100, 2, 1));
}

TEST(Generator, SmallStepBackAfterUsedUpMsWaitsForTheMsAfter) {
    GeneratorState s;
    const Config c = config_for(2, 5);
    ASSERT_EQ(next_ids(s, 100, c, kIdsPerMs).count, kIdsPerMs);

    const Next n = next_id(s, 98, c);
    ASSERT_EQ(n.status, Status::WaitClock);
    EXPECT_EQ(n.behind_ms, 2);
    EXPECT_EQ(n.wait_until_ms, 101);
    EXPECT_EQ(s.counters.overflow_waits, 0u);  // a backwards clock is not an overflow

    const Next later = next_id(s, n.wait_until_ms, c);
    ASSERT_EQ(later.status, Status::Issued);
    EXPECT_EQ(later.first_id, compose(101, 2, 0));
}

TEST(Generator, BehindExactlyToleranceWaitsOneMoreErrors) {
    const Config c = config_for(2, 5);
    GeneratorState s;
    ASSERT_EQ(next_id(s, 100, c).status, Status::Issued);

    Next n = next_id(s, 95, c);
    EXPECT_EQ(n.status, Status::WaitClock);
    EXPECT_EQ(n.behind_ms, 5);

    n = next_id(s, 94, c);
    EXPECT_EQ(n.status, Status::ClockBehind);
    EXPECT_EQ(n.behind_ms, 6);
    EXPECT_EQ(n.wait_until_ms, 100);
}

TEST(Generator, BackwardsCountersTrackEventsAndTheLargestDistance) {
    GeneratorState s;
    const Config c = config_for(2, 1000);
    ASSERT_EQ(next_id(s, 10'000, c).status, Status::Issued);

    ASSERT_EQ(next_id(s, 9'997, c).status, Status::WaitClock);  // 3 behind
    ASSERT_EQ(next_id(s, 9'998, c).status, Status::WaitClock);  // 2 behind: max stays 3
    EXPECT_EQ(s.counters.clock_backwards_events, 2u);
    EXPECT_EQ(s.counters.clock_backwards_max_ms, 3);

    ASSERT_EQ(next_id(s, 9'500, c).status, Status::WaitClock);  // 500 behind
    EXPECT_EQ(s.counters.clock_backwards_events, 3u);
    EXPECT_EQ(s.counters.clock_backwards_max_ms, 500);

    ASSERT_EQ(next_id(s, 7'000, c).status, Status::ClockBehind);  // 3000 behind
    EXPECT_EQ(s.counters.clock_backwards_events, 4u);
    EXPECT_EQ(s.counters.clock_backwards_errors, 1u);
    EXPECT_EQ(s.counters.clock_backwards_max_ms, 3000);
    EXPECT_EQ(s.counters.overflow_waits, 0u);
}

TEST(Generator, BeyondToleranceRefusesAndLeavesThePositionUntouched) {
    GeneratorState s;
    const Config c = config_for(4, 5);
    std::unordered_set<int64_t> seen;
    for (int i = 0; i < 10; i++) {
        const Next n = next_id(s, 2'000, c);
        ASSERT_EQ(n.status, Status::Issued);
        seen.insert(n.first_id);
    }
    const int64_t last_ms = s.last_ms;
    const int32_t sequence = s.sequence;
    const int64_t reserved = s.reserved_until_ms;

    for (int i = 1; i <= 3; i++) {
        const Next n = next_id(s, 1'000, c);
        ASSERT_EQ(n.status, Status::ClockBehind);
        EXPECT_EQ(n.behind_ms, 1'000);
        EXPECT_EQ(n.wait_until_ms, 2'000);
        EXPECT_EQ(n.count, 0);
        EXPECT_EQ(s.last_ms, last_ms);
        EXPECT_EQ(s.sequence, sequence);
        EXPECT_EQ(s.reserved_until_ms, reserved);
        EXPECT_EQ(s.counters.clock_backwards_errors, static_cast<uint64_t>(i));
        EXPECT_EQ(s.counters.clock_backwards_events, static_cast<uint64_t>(i));
    }

    // Once the clock is back at wait_until_ms, issuing continues where it
    // stopped, with no duplicate.
    const Next resumed = next_id(s, 2'000, c);
    ASSERT_EQ(resumed.status, Status::Issued);
    EXPECT_EQ(resumed.first_id, compose(2'000, 4, 10));
    EXPECT_TRUE(seen.insert(resumed.first_id).second);
    for (int64_t now : {2'000, 2'001}) {
        const Next n = next_id(s, now, c);
        ASSERT_EQ(n.status, Status::Issued);
        EXPECT_TRUE(seen.insert(n.first_id).second) << "duplicate id " << n.first_id;
    }
}

TEST(Generator, ToleranceZeroRefusesAnyStepBack) {
    GeneratorState s;
    const Config c = config_for(4, 0);
    ASSERT_EQ(next_id(s, 2'000, c).status, Status::Issued);
    const Next n = next_id(s, 1'999, c);
    EXPECT_EQ(n.status, Status::ClockBehind);
    EXPECT_EQ(n.behind_ms, 1);
    EXPECT_EQ(n.wait_until_ms, 2'000);
    EXPECT_EQ(s.counters.clock_backwards_errors, 1u);
    // A clock that stands still is not behind.
    EXPECT_EQ(next_id(s, 2'000, c).status, Status::Issued);
    EXPECT_EQ(s.counters.clock_backwards_events, 1u);
}

// ---------------------------------------------------------------------------
// Range of the clock

TEST(Generator, NegativeClockIsBeforeTheEpoch) {
    GeneratorState s;
    const Config c = config_for(4, 1'000'000);
    ASSERT_EQ(next_id(s, 50, c).status, Status::Issued);
    const GeneratorState before = s;
    for (int64_t now : {int64_t{-1}, int64_t{-1000}, kI64Min}) {
        const Next n = next_id(s, now, c);
        EXPECT_EQ(n.status, Status::BeforeEpoch) << now;
        EXPECT_EQ(n.count, 0);
    }
    EXPECT_EQ(s.last_ms, before.last_ms);
    EXPECT_EQ(s.sequence, before.sequence);
    EXPECT_TRUE(same_counters(s.counters, before.counters));
}

TEST(Generator, ClockPastTheRangeIsEndOfTime) {
    GeneratorState s;
    const Config c = config_for(4, 0);
    for (int64_t now : {kMaxMs + 1, kMaxMs + 1000, kI64Max}) {
        const Next n = next_id(s, now, c);
        EXPECT_EQ(n.status, Status::EndOfTime) << now;
        EXPECT_EQ(n.count, 0);
    }
    EXPECT_EQ(s.last_ms, -1);
    EXPECT_TRUE(same_counters(s.counters, Counters{}));
}

TEST(Generator, TheLastMillisecondStillWorks) {
    GeneratorState s;
    const Config c = config_for(kMaxWorker, 0);
    Next n = next_id(s, kMaxMs, c);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, compose(kMaxMs, kMaxWorker, 0));
    EXPECT_GT(n.first_id, 0);

    n = next_ids(s, kMaxMs, c, kIdsPerMs);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, kMaxSequence);
    EXPECT_EQ(n.first_id + (n.count - 1), kI64Max);  // the very largest id

    n = next_id(s, kMaxMs, c);
    EXPECT_EQ(n.status, Status::WaitNextMs);
    EXPECT_EQ(next_id(s, kMaxMs + 1, c).status, Status::EndOfTime);
}

// ---------------------------------------------------------------------------
// Starting after a high-water mark

TEST(Generator, StateAfterMinusOneIsAFreshState) {
    for (int64_t floor_ms : {int64_t{-1}, int64_t{-2}, kI64Min}) {
        const GeneratorState s = state_after(floor_ms);
        EXPECT_EQ(s.last_ms, -1) << floor_ms;
        EXPECT_EQ(s.sequence, kMaxSequence);
        EXPECT_EQ(s.reserved_until_ms, kMaxMs);
        EXPECT_TRUE(same_counters(s.counters, Counters{}));
    }
}

TEST(Generator, StateAfterFloorIssuesFromTheNextMillisecond) {
    GeneratorState s = state_after(5'000);
    EXPECT_EQ(s.reserved_until_ms, kMaxMs);
    const Next n = next_id(s, 5'001, config_for(8, 0));
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, compose(5'001, 8, 0));
}

TEST(Generator, StateAfterFloorWaitsWhenTheClockIsAtTheFloor) {
    for (int64_t tolerance : {0, 5}) {
        GeneratorState s = state_after(5'000);
        const Next n = next_id(s, 5'000, config_for(8, tolerance));
        // The floor counts as used up: wait for the next ms, never an error,
        // and no millisecond was used up by this run.
        EXPECT_EQ(n.status, Status::WaitFloor) << "tolerance " << tolerance;
        EXPECT_EQ(n.wait_until_ms, 5'001);
        EXPECT_EQ(s.last_ms, 5'000);
        EXPECT_EQ(s.counters.overflow_waits, 0u);
    }
}

TEST(Generator, StateAfterFloorWaitsOrErrorsPerToleranceWhenBehindIt) {
    {
        GeneratorState s = state_after(5'000);
        const Next n = next_id(s, 4'997, config_for(8, 5));
        EXPECT_EQ(n.status, Status::WaitClock);
        EXPECT_EQ(n.behind_ms, 3);
        EXPECT_EQ(n.wait_until_ms, 5'001);  // the floor itself is used up
    }
    {
        GeneratorState s = state_after(5'000);
        const Next n = next_id(s, 4'997, config_for(8, 2));
        EXPECT_EQ(n.status, Status::ClockBehind);
        EXPECT_EQ(n.behind_ms, 3);
        EXPECT_EQ(n.wait_until_ms, 5'001);
        EXPECT_EQ(s.counters.clock_backwards_errors, 1u);
        EXPECT_EQ(s.last_ms, 5'000);
        EXPECT_EQ(s.sequence, kMaxSequence);
    }
}

TEST(Generator, StateAfterFloorNeverIssuesAtOrBelowTheFloor) {
    std::mt19937_64 rng(0xF100);
    std::uniform_int_distribution<int64_t> offset(-20, 3);
    std::uniform_int_distribution<int64_t> tol(0, 10);
    for (int run = 0; run < 200; run++) {
        const int64_t floor_ms = 1'000 + run;
        GeneratorState s = state_after(floor_ms);
        const Config c = config_for(run % (kMaxWorker + 1), tol(rng));
        for (int i = 0; i < 200; i++) {
            const Next n = next_ids(s, floor_ms + offset(rng), c, 7);
            if (n.status == Status::Issued) {
                ASSERT_GT(decompose(n.first_id).ms, floor_ms);
                ASSERT_GT(n.first_id, compose(floor_ms, kMaxWorker, kMaxSequence));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Reservations (persisted high-water mark)

TEST(Generator, NewMillisecondPastTheReservationNeedsOne) {
    GeneratorState s;
    s.reserved_until_ms = 100;
    const Config c = config_for(6, 0);
    Next n = next_id(s, 100, c);  // the reserved ms itself is allowed
    ASSERT_EQ(n.status, Status::Issued);

    const GeneratorState before = s;
    n = next_id(s, 101, c);
    EXPECT_EQ(n.status, Status::NeedReservation);
    EXPECT_EQ(n.count, 0);
    EXPECT_EQ(s.last_ms, before.last_ms);
    EXPECT_EQ(s.sequence, before.sequence);
    EXPECT_TRUE(same_counters(s.counters, before.counters));

    extend_reservation(s, 200);
    EXPECT_EQ(s.reserved_until_ms, 200);
    EXPECT_EQ(s.counters.reservations, 1u);
    n = next_id(s, 101, c);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, compose(101, 6, 0));
}

TEST(Generator, SameMillisecondContinuesPastTheReservation) {
    // The glue reloads reserved_until_ms from shared memory on every call, so
    // the state may hold a last_ms the reservation does not cover. Ids of the
    // millisecond already in use are still issued; a new one is not.
    GeneratorState s;
    const Config c = config_for(6, 0);
    ASSERT_EQ(next_id(s, 100, c).status, Status::Issued);
    s.reserved_until_ms = 99;

    Next n = next_id(s, 100, c);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.first_id, compose(100, 6, 1));
    n = next_ids(s, 100, c, 10);
    ASSERT_EQ(n.status, Status::Issued);
    EXPECT_EQ(n.count, 10);

    EXPECT_EQ(next_id(s, 101, c).status, Status::NeedReservation);
}

TEST(Generator, UsedUpReservedMsWaitsThenNeedsAReservation) {
    GeneratorState s;
    s.reserved_until_ms = 100;
    const Config c = config_for(6, 0);
    ASSERT_EQ(next_ids(s, 100, c, kIdsPerMs).count, kIdsPerMs);
    Next n = next_id(s, 100, c);
    EXPECT_EQ(n.status, Status::WaitNextMs);
    EXPECT_EQ(n.wait_until_ms, 101);
    EXPECT_EQ(next_id(s, 101, c).status, Status::NeedReservation);
}

TEST(Generator, ClockChecksComeBeforeTheReservationCheck) {
    GeneratorState s;
    s.reserved_until_ms = 100;
    const Config c = config_for(6, 0);
    ASSERT_EQ(next_id(s, 100, c).status, Status::Issued);
    EXPECT_EQ(next_id(s, -1, c).status, Status::BeforeEpoch);
    EXPECT_EQ(next_id(s, kMaxMs + 1, c).status, Status::EndOfTime);
    EXPECT_EQ(next_id(s, 99, c).status, Status::ClockBehind);
}

TEST(Generator, ExtendReservationOnlyMovesForward) {
    GeneratorState s;
    s.reserved_until_ms = 100;

    extend_reservation(s, 150);
    EXPECT_EQ(s.reserved_until_ms, 150);
    EXPECT_EQ(s.counters.reservations, 1u);

    extend_reservation(s, 150);  // same value: nothing to do
    extend_reservation(s, 120);  // backwards: ignored
    extend_reservation(s, -5);
    EXPECT_EQ(s.reserved_until_ms, 150);
    EXPECT_EQ(s.counters.reservations, 1u);

    extend_reservation(s, 151);
    EXPECT_EQ(s.reserved_until_ms, 151);
    EXPECT_EQ(s.counters.reservations, 2u);
}

TEST(Generator, ExtendReservationIsCappedAtTheEndOfTime) {
    GeneratorState s;
    s.reserved_until_ms = 100;
    extend_reservation(s, kI64Max);
    EXPECT_EQ(s.reserved_until_ms, kMaxMs);
    EXPECT_EQ(s.counters.reservations, 1u);

    extend_reservation(s, kMaxMs + 1);  // already at the cap
    EXPECT_EQ(s.reserved_until_ms, kMaxMs);
    EXPECT_EQ(s.counters.reservations, 1u);

    GeneratorState fresh;  // unlimited by default: nothing to extend
    extend_reservation(fresh, kMaxMs);
    EXPECT_EQ(fresh.counters.reservations, 0u);
}

// ---------------------------------------------------------------------------
// Epoch validation and floor division

TEST(CheckEpoch, EpochInTheFutureIsRefused) {
    const int64_t now = 1'700'000'000'000;
    EXPECT_EQ(check_epoch(now + 1, now), EpochCheck::InFuture);
    EXPECT_EQ(check_epoch(kI64Max, now), EpochCheck::InFuture);
    EXPECT_EQ(check_epoch(now, now), EpochCheck::Ok);
    EXPECT_EQ(check_epoch(now - 1, now), EpochCheck::Ok);
}

TEST(CheckEpoch, AtLeastOneYearOfRangeMustRemain) {
    EXPECT_EQ(kMinRemainingRangeMs, int64_t{31'536'000'000});
    const int64_t now = 1'700'000'000'000;
    // The id space of an epoch ends at epoch + kMaxMs; remaining = epoch + kMaxMs - now.
    const int64_t epoch_exactly_one_year_left = now - (kMaxMs - kMinRemainingRangeMs);
    EXPECT_EQ(check_epoch(epoch_exactly_one_year_left, now), EpochCheck::Ok);
    EXPECT_EQ(check_epoch(epoch_exactly_one_year_left + 1, now), EpochCheck::Ok);
    EXPECT_EQ(check_epoch(epoch_exactly_one_year_left - 1, now), EpochCheck::TooLittleRange);
    EXPECT_EQ(check_epoch(now - kMaxMs, now), EpochCheck::TooLittleRange);
    EXPECT_EQ(check_epoch(now - kMaxMs - 1, now), EpochCheck::TooLittleRange);
}

TEST(CheckEpoch, EpochsBefore1970Work) {
    EXPECT_EQ(check_epoch(-1'000, 0), EpochCheck::Ok);
    EXPECT_EQ(check_epoch(-1'000, -500), EpochCheck::Ok);
    EXPECT_EQ(check_epoch(-500, -1'000), EpochCheck::InFuture);
    // 1900-01-01 against 2023: ~123 years used of ~69.7.
    EXPECT_EQ(check_epoch(-2'208'988'800'000, 1'700'000'000'000), EpochCheck::TooLittleRange);
}

TEST(FloorDiv, RoundsTowardsMinusInfinity) {
    static_assert(floor_div(-1, 1000) == -1, "usable at compile time");
    EXPECT_EQ(floor_div(7, 2), 3);
    EXPECT_EQ(floor_div(-7, 2), -4);
    EXPECT_EQ(floor_div(-8, 2), -4);
    EXPECT_EQ(floor_div(7, -2), -4);
    EXPECT_EQ(floor_div(-7, -2), 3);
    EXPECT_EQ(floor_div(0, 1000), 0);
    EXPECT_EQ(floor_div(999, 1000), 0);
    EXPECT_EQ(floor_div(1000, 1000), 1);
    EXPECT_EQ(floor_div(-1, 1000), -1);
    EXPECT_EQ(floor_div(-999, 1000), -1);
    EXPECT_EQ(floor_div(-1000, 1000), -1);
    EXPECT_EQ(floor_div(-1001, 1000), -2);
    EXPECT_EQ(floor_div(kI64Min, 1000), kI64Min / 1000 - 1);
    EXPECT_EQ(floor_div(kI64Max, 1000), kI64Max / 1000);
}

TEST(FloorDiv, QuotientBracketsTheDividend) {
    std::mt19937_64 rng(0xD1F);
    std::uniform_int_distribution<int64_t> a_d(-(int64_t{1} << 60), int64_t{1} << 60);
    std::uniform_int_distribution<int64_t> b_d(1, 1'000'000);
    for (int i = 0; i < 20000; i++) {
        const int64_t a = a_d(rng);
        const int64_t b = b_d(rng);
        const int64_t q = floor_div(a, b);
        ASSERT_LE(q * b, a) << a << " / " << b;
        ASSERT_GT((q + 1) * b, a) << a << " / " << b;
        // Negative divisor: the same quotient as -a / -b.
        ASSERT_EQ(floor_div(-a, -b), q) << a << " / " << b;
    }
}

// ---------------------------------------------------------------------------
// Packed position and the lock-free fast path

TEST(PackedPosition, RoundTripsIncludingNothingIssued) {
    for (int64_t ms : {int64_t{-1}, int64_t{0}, int64_t{1}, kMaxMs - 1, kMaxMs}) {
        for (int32_t seq : {0, 1, 2048, kMaxSequence - 1, kMaxSequence}) {
            const uint64_t p = pack_position(ms, seq, 9);
            EXPECT_EQ(packed_ms(p), ms) << ms << "/" << seq;
            EXPECT_EQ(packed_sequence(p), seq) << ms << "/" << seq;
        }
    }
    // The fresh state packs to the documented value.
    EXPECT_EQ(pack_position(-1, kMaxSequence, 0), static_cast<uint64_t>(kMaxSequence));
    const GeneratorState fresh;
    EXPECT_EQ(position_of(fresh, 0), static_cast<uint64_t>(kMaxSequence));
}

TEST(PackedPosition, GrowsWithMillisecondThenSequence) {
    std::vector<std::pair<int64_t, int32_t>> ordered;
    for (int64_t ms : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}, kMaxMs - 1, kMaxMs}) {
        for (int32_t seq : {0, 1, kMaxSequence - 1, kMaxSequence}) ordered.emplace_back(ms, seq);
    }
    for (size_t i = 1; i < ordered.size(); i++) {
        EXPECT_LT(pack_position(ordered[i - 1].first, ordered[i - 1].second, 9),
                  pack_position(ordered[i].first, ordered[i].second, 9))
            << ordered[i].first << "/" << ordered[i].second;
    }
    // Within a ms, the next sequence is the next integer: what fast_next's +1 relies on.
    EXPECT_EQ(pack_position(70, 5, 9) + 1, pack_position(70, 6, 9));
}

TEST(FastNext, IssuesTheFirstIdOfAFreshState) {
    FastNext f{};
    ASSERT_TRUE(fast_next(pack_position(-1, kMaxSequence, 9), 0, kMaxMs, &f));
    EXPECT_EQ(f.id, compose(0, 9, 0));
    EXPECT_EQ(f.next, pack_position(0, 0, 9));
}

TEST(FastNext, ContinuesTheSequenceOrStartsANewMillisecond) {
    FastNext f{};
    ASSERT_TRUE(fast_next(pack_position(300, 41, 9), 300, kMaxMs, &f));
    EXPECT_EQ(f.id, compose(300, 9, 42));
    EXPECT_EQ(f.next, pack_position(300, 42, 9));

    ASSERT_TRUE(fast_next(pack_position(300, 41, 9), 305, 305, &f));
    EXPECT_EQ(f.id, compose(305, 9, 0));
    EXPECT_EQ(f.next, pack_position(305, 0, 9));

    // Last sequence of a ms via fast path.
    ASSERT_TRUE(fast_next(pack_position(300, kMaxSequence - 1, 9), 300, kMaxMs, &f));
    EXPECT_EQ(f.id, compose(300, 9, kMaxSequence));
    EXPECT_EQ(f.next, pack_position(300, kMaxSequence, 9));
}

TEST(FastNext, RefusesWhatOnlyTheSlowPathMayDecide) {
    FastNext f{~uint64_t{0}, -1};
    const uint64_t p = pack_position(300, 41, 9);
    EXPECT_FALSE(fast_next(p, 299, kMaxMs, &f)) << "clock one ms back";
    EXPECT_FALSE(fast_next(p, 0, kMaxMs, &f)) << "clock far back";
    EXPECT_FALSE(fast_next(pack_position(300, kMaxSequence, 9), 300, kMaxMs, &f)) << "exhausted";
    EXPECT_FALSE(fast_next(p, 301, 300, &f)) << "past the reservation";
    EXPECT_FALSE(fast_next(p, kMaxMs + 1, kI64Max, &f)) << "past kMaxMs";
    EXPECT_FALSE(fast_next(pack_position(-1, kMaxSequence, 9), -1, kMaxMs, &f)) << "before epoch";
    EXPECT_FALSE(fast_next(pack_position(-1, kMaxSequence, 9), kI64Min, kMaxMs, &f));
    // Refusals leave *out alone.
    EXPECT_EQ(f.next, ~uint64_t{0});
    EXPECT_EQ(f.id, -1);

    // The last millisecond is still fine.
    EXPECT_TRUE(fast_next(p, kMaxMs, kMaxMs, &f));
    EXPECT_EQ(f.id, compose(kMaxMs, 9, 0));
}

// Drives next_id() and fast_next() from the same randomized clock and checks
// they agree: fast_next issues exactly when next_id would, the same id and the
// same resulting position. When the fast path refuses, the slow path's result
// (wait, error, reservation, or a batch that moves the sequence) becomes the
// shared state for the next step.
TEST(FastNext, AgreesWithNextIdOnRandomizedClocks) {
    std::mt19937_64 rng(0xFA57);
    std::uniform_int_distribution<int> kind(0, 99);
    std::uniform_int_distribution<int64_t> forward(1, 3);
    std::uniform_int_distribution<int64_t> small(1, 5);
    std::uniform_int_distribution<int64_t> big(100, 10'000);
    std::uniform_int_distribution<int32_t> batch(1, kIdsPerMs);
    std::uniform_int_distribution<int32_t> worker_d(0, kMaxWorker);

    constexpr int kSteps = 200'000;
    constexpr int kPhase = 10'000;  // a fresh state (and settings) every phase
    const int64_t tolerances[] = {0, 5, 1'000};

    GeneratorState s;
    Config c;
    int64_t clock = 0;
    int64_t last_issued = -1;
    uint64_t fast_issued = 0, refused_backwards = 0, refused_exhausted = 0,
             refused_reservation = 0, refused_end = 0, refused_epoch = 0;

    for (int step = 0; step < kSteps; step++) {
        if (step % kPhase == 0) {
            const int phase = step / kPhase;
            clock = 1'000'000 + phase * 100'000;
            // Some phases start just before the end of time.
            if (phase % 4 == 3) clock = kMaxMs - 300;
            s = state_after(phase % 2 ? clock - 3 : -1);
            s.reserved_until_ms = phase % 3 == 0 ? kMaxMs : clock + 20;
            c = config_for(worker_d(rng), tolerances[phase % 3]);
            last_issued = -1;
        }

        // The next clock reading. `clock` is the time that persists from
        // step to step; a few readings are one-off outliers.
        const int k = kind(rng);
        if (k < 40) clock += forward(rng);            // advances
        else if (k < 65) {}                           // stands still
        else if (k < 80) clock -= small(rng);         // small step back
        else if (k < 83) clock -= big(rng);           // big step back
        else if (k < 86) clock += big(rng);           // big step forward
        else if (k < 90) clock = s.last_ms + 1;       // the caller slept until ids resume
        else if (k >= 93 && s.last_ms >= 0) clock = s.last_ms;  // same ms, then a batch below
        int64_t now = clock;
        if (k == 90 || k == 91) now = -small(rng);    // before the epoch
        if (k == 92) now = kMaxMs + small(rng);       // past the end of time
        const bool burn_batch = k >= 93;

        const uint64_t packed = position_of(s, c.worker);
        FastNext f{};
        const bool fast = fast_next(packed, now, s.reserved_until_ms, &f);

        GeneratorState slow = s;
        const Next n = next_id(slow, now, c);
        const bool slow_issued = n.status == Status::Issued;

        ASSERT_EQ(fast, slow_issued)
            << "step " << step << " now " << now << " last_ms " << s.last_ms << " seq "
            << s.sequence << " reserved " << s.reserved_until_ms << " status "
            << static_cast<int>(n.status);
        if (fast) {
            ASSERT_EQ(f.id, n.first_id) << "step " << step;
            ASSERT_EQ(f.next, position_of(slow, c.worker)) << "step " << step;
            ASSERT_GT(f.next, packed) << "step " << step;
            ASSERT_GT(f.id, last_issued) << "step " << step;
            last_issued = f.id;
            fast_issued++;
            s = slow;
            if (burn_batch) {
                // Use up part of the millisecond through the slow path, so
                // that exhausted milliseconds come up.
                const Next b = next_ids(s, now, c, batch(rng));
                if (b.status == Status::Issued) {
                    ASSERT_GT(b.first_id, last_issued);
                    last_issued = b.first_id + (b.count - 1);
                }
            }
            continue;
        }

        switch (n.status) {
            case Status::WaitClock:
            case Status::ClockBehind: refused_backwards++; break;
            case Status::WaitNextMs: refused_exhausted++; break;
            case Status::NeedReservation:
                refused_reservation++;
                extend_reservation(slow, now + small(rng) * 4);
                break;
            case Status::EndOfTime: refused_end++; break;
            case Status::BeforeEpoch: refused_epoch++; break;
            case Status::WaitFloor: refused_exhausted++; break;  // the floor counts as used up
            case Status::Issued: break;
            case Status::Fenced:
            case Status::LeaseEnded: ADD_FAILURE() << "next_ids() answers only its own statuses"; break;
        }
        // The refusal must not have moved the position.
        ASSERT_EQ(position_of(slow, c.worker), packed) << "step " << step;
        s = slow;
    }

    // The clock model must have exercised every branch.
    EXPECT_GT(fast_issued, uint64_t{kSteps / 4});
    EXPECT_GT(refused_backwards, 100u);
    EXPECT_GT(refused_exhausted, 1000u);
    EXPECT_GT(refused_reservation, 1000u);
    EXPECT_GT(refused_end, 100u);
    EXPECT_GT(refused_epoch, 1000u);
}

}  // namespace

TEST(Generator, ARepeatedDecisionCountsItsWaitOnceButEveryError) {
    GeneratorState s;
    Config first{3, 5};
    Config again{3, 5, true};
    ASSERT_EQ(next_id(s, 1000, first).status, Status::Issued);
    // Clock 3 ms behind: a wait, counted once however often the call decides again.
    EXPECT_EQ(next_id(s, 997, first).status, Status::WaitClock);
    EXPECT_EQ(next_id(s, 997, again).status, Status::WaitClock);
    EXPECT_EQ(next_id(s, 998, again).status, Status::WaitClock);
    EXPECT_EQ(s.counters.clock_backwards_events, 1u);
    EXPECT_EQ(s.counters.clock_backwards_max_ms, 3);
    // The clock steps further back while the call waits: an error, counted.
    EXPECT_EQ(next_id(s, 400, again).status, Status::ClockBehind);
    EXPECT_EQ(s.counters.clock_backwards_errors, 1u);
    EXPECT_EQ(s.counters.clock_backwards_events, 1u);
    EXPECT_EQ(s.counters.clock_backwards_max_ms, 600);

    // A used-up millisecond and the start floor, likewise.
    GeneratorState f = state_after(2000);
    EXPECT_EQ(next_id(f, 2000, first).status, Status::WaitFloor);
    EXPECT_EQ(next_id(f, 2000, again).status, Status::WaitFloor);
    EXPECT_EQ(f.counters.startup_waits, 1u);
    ASSERT_EQ(next_ids(f, 2001, first, kIdsPerMs).count, kIdsPerMs);
    EXPECT_EQ(next_id(f, 2001, first).status, Status::WaitNextMs);
    EXPECT_EQ(next_id(f, 2001, again).status, Status::WaitNextMs);
    EXPECT_EQ(f.counters.overflow_waits, 1u);
}

// ---------------------------------------------------------------------------
// The worker id in the position word: lease transitions fence ids in flight
// (core/position.hpp; position_check_test.cpp tries every interleaving).

namespace {

// One node's shared words, and the transitions the lease worker makes under
// its lock, through the core's protocol.
struct Node {
    snowflake::test::PlainWords w;

    Node() { w.word = pack_fenced(-1, 0); }
    int64_t fence() { return snowflake::core::fence(snowflake::core::kTwitter, w); }
    // A new tenure, then a reservation published.
    int64_t hand_over(int32_t worker, int64_t floor_ms, int64_t reserved_until) {
        const int64_t start = start_tenure(snowflake::core::kTwitter, w, worker, floor_ms);
        w.reserved = reserved_until;
        return start;
    }
    // The fast path's decision on a word read earlier (maybe much earlier),
    // with the clock and the reservation read now, then the swap.
    bool issue_from(uint64_t word, int64_t now, int64_t* id) {
        FastNext f{};
        if (!fast_next(word, now, w.reserved, &f)) return false;
        uint64_t expected = word;
        if (!w.cas_word(expected, f.next)) return false;
        *id = f.id;
        return true;
    }
};

}  // namespace

TEST(PositionWorker, PacksBesideMillisecondAndSequenceWithoutDisturbingThem) {
    for (int32_t w : {0, 1, 511, kMaxWorker}) {
        for (int64_t ms : {int64_t{-1}, int64_t{0}, kMaxMs}) {
            for (int32_t seq : {0, kMaxSequence}) {
                const uint64_t p = pack_position(ms, seq, w);
                EXPECT_EQ(packed_worker(p), w);
                EXPECT_EQ(packed_ms(p), ms);
                EXPECT_EQ(packed_sequence(p), seq);
                EXPECT_EQ(position_order(p), pack_position(ms, seq, 0));
                EXPECT_FALSE(is_fenced(p));
            }
            // The fenced word of every millisecond, for every worker id.
            const uint64_t f = pack_fenced(ms, w);
            EXPECT_TRUE(is_fenced(f));
            EXPECT_EQ(packed_worker(f), w);
            EXPECT_EQ(packed_ms(f), ms);
            EXPECT_EQ(packed_sequence(f), kMaxSequence);
        }
    }
    // Normal and fenced words never meet: the last normal word lies below the first fenced one.
    EXPECT_LT(position_order(pack_position(kMaxMs, kMaxSequence, 0)), position_order(pack_fenced(-1, 0)));
    FastNext f{};
    ASSERT_TRUE(fast_next(pack_position(10, 3, 777), 10, kMaxMs, &f));
    EXPECT_EQ(decompose(f.id).worker, 777);
    EXPECT_EQ(packed_worker(f.next), 777);
    ASSERT_TRUE(fast_next(pack_position(10, kMaxSequence, kMaxWorker), 11, kMaxMs, &f));
    EXPECT_EQ(decompose(f.id).worker, kMaxWorker);
    EXPECT_EQ(f.next, pack_position(11, 0, kMaxWorker));
}

// Issue 28's first finding: a fence at a full millisecond left the word as it
// was, so a swap prepared before it succeeded after the exact mark was read.
TEST(PositionWorker, AFenceMovesTheWordWhateverItHeldAFullMillisecondIncluded) {
    for (int32_t seq : {0, 7, kMaxSequence - 1, kMaxSequence}) {
        const uint64_t p = pack_position(500, seq, 3);
        EXPECT_NE(fence_position(p), p) << seq;
        EXPECT_TRUE(is_fenced(fence_position(p)));
        EXPECT_EQ(packed_ms(fence_position(p)), 500);
        EXPECT_EQ(fence_position(fence_position(p)), fence_position(p));  // a fenced word stays
    }
    // The stale caller of the finding: it read the full word, the clock one
    // millisecond on and the reservation, then stopped; the shutdown fenced.
    snowflake::test::PlainWords w;
    w.word = pack_position(500, kMaxSequence, 3);
    w.reserved = 600;
    const uint64_t stale = w.word;
    FastNext f{};
    ASSERT_TRUE(fast_next(stale, 501, 600, &f));
    EXPECT_EQ(snowflake::core::fence(snowflake::core::kTwitter, w), 500);  // the exact mark
    uint64_t expected = stale;
    EXPECT_FALSE(w.cas_word(expected, f.next)) << "the stale swap must fail after the fence";
    // Nothing is issued from a fenced word, by either path.
    for (int64_t now : {500, 501, 599, 600, 601}) EXPECT_FALSE(fast_next(w.word, now, kMaxMs, &f)) << now;
    GeneratorState g;
    int64_t now_out = 0;
    w.clock = 501;
    EXPECT_EQ(slow_issue(snowflake::core::kTwitter, w, g, Config{}, 1, &now_out).status, Status::Fenced);
}

TEST(PositionWorker, ATenureStartsPastTheFenceAndTheFloorAndOnlyFromAFence) {
    snowflake::test::PlainWords w;
    w.word = pack_position(500, kMaxSequence, 3);
    w.reserved = 900;
    // A new worker id: one past the floor, counted as used up; nothing reserved past it.
    EXPECT_EQ(start_tenure(snowflake::core::kTwitter, w, 4, 100), 101);
    EXPECT_EQ(w.word, pack_position(101, kMaxSequence, 4));
    EXPECT_EQ(w.reserved, 101);
    // The same worker id again: past its own fence too, even with the floor below.
    EXPECT_EQ(start_tenure(snowflake::core::kTwitter, w, 4, 50), 102);
    EXPECT_EQ(start_tenure(snowflake::core::kTwitter, w, 4, 900), 901);
    // A lifted fence resumes one past it, reservation unchanged.
    w.reserved = 950;
    EXPECT_EQ(snowflake::core::fence(snowflake::core::kTwitter, w), 901);
    lift(snowflake::core::kTwitter, w);
    EXPECT_EQ(w.word, pack_position(902, kMaxSequence, 4));
    EXPECT_EQ(w.reserved, 950);
    lift(snowflake::core::kTwitter, w);  // not fenced: nothing
    EXPECT_EQ(w.word, pack_position(902, kMaxSequence, 4));
    // raise_position keeps the worker id and a fence, and never lowers.
    const uint64_t p = pack_position(500, 7, 3);
    EXPECT_EQ(raise_position(p, 800), pack_position(800, kMaxSequence, 3));
    EXPECT_EQ(raise_position(p, 400), p);
    EXPECT_EQ(raise_position(p, 500), p);
    EXPECT_EQ(raise_position(pack_fenced(500, 3), 800), pack_fenced(800, 3));
    EXPECT_EQ(raise_position(pack_fenced(500, 3), 400), pack_fenced(500, 3));
    // At the end of the id space a tenure cannot start past it.
    EXPECT_EQ(tenure_start_ms(pack_fenced(kMaxMs, 3), kMaxMs, 3), kMaxMs);
}

// Issue 16's interleaving: backend X reads the word while the node holds
// worker 0 and is descheduled; the node loses worker 0, leases worker 1 and
// issues under it, so its reservation runs ahead; another node takes worker 0
// above its mark. X resumes with a fresh clock and the new reservation: its
// swap from the old word fails, and its next try composes worker 1.
TEST(PositionWorker, ACallerDescheduledAcrossAHandOverNeverComposesTheOldWorker) {
    Node a;
    a.hand_over(0, 999, 1'000 + 5'000);  // worker 0, reservation in the coordinator up to 6000
    int64_t id = 0;
    ASSERT_TRUE(a.issue_from(a.w.word, 1'001, &id));
    ASSERT_EQ(decompose(id).worker, 0);

    const uint64_t x_word = a.w.word;  // X read the word, then stalled

    // A loses worker 0 and leases worker 1; B starts worker 0 above its mark.
    a.fence();
    a.hand_over(1, -1, 20'000);
    const int64_t b_first_id = compose(6'001, 0, 0);
    for (int64_t now = 1'002; now < 9'000; now += 37) ASSERT_TRUE(a.issue_from(a.w.word, now, &id));

    // X resumes at 9000 (inside B's range for worker 0) with the new reservation.
    EXPECT_FALSE(a.issue_from(x_word, 9'000, &id)) << "the swap from the stale word must fail";
    ASSERT_TRUE(a.issue_from(a.w.word, 9'000, &id));
    EXPECT_EQ(decompose(id).worker, 1);
    EXPECT_FALSE(decompose(id).worker == 0 && id >= b_first_id);
}

// Every point at which a caller can read the word during a tenure change
// (before the fence, between the fence and the hand-over, after it), and
// resume early or late: a swap from its word succeeds only if the word is
// the new tenure's, and then composes the new worker id.
TEST(PositionWorker, EveryStallPointOfACallerIsFenced) {
    for (int read_at = 0; read_at < 3; read_at++) {
        for (int64_t resume_ms : {1'500, 6'000, 6'001, 50'000}) {
            Node a;
            a.hand_over(0, 999, 6'000);
            int64_t id = 0;
            ASSERT_TRUE(a.issue_from(a.w.word, 1'001, &id));
            uint64_t word = a.w.word;
            a.fence();
            if (read_at == 1) word = a.w.word;
            a.hand_over(1, -1, 60'000);
            if (read_at == 2) word = a.w.word;

            int64_t got = 0;
            const bool issued = a.issue_from(word, resume_ms, &got);
            EXPECT_EQ(issued, read_at == 2) << "read at " << read_at << ", resumed at " << resume_ms;
            if (issued) {
                EXPECT_EQ(decompose(got).worker, 1);
            }
            // The glue's retry from a fresh word composes the new worker id.
            if (a.issue_from(a.w.word, resume_ms + 1, &got)) {
                EXPECT_EQ(decompose(got).worker, 1);
            }
        }
    }
}

// Issue 28's third finding: a call that passed the lease check before the
// deadline and completed its swap after it returned an id under a worker id
// another node may hold by then. The deadline is read after the word and
// the boot clock after the swap: the id is a gap and the call refuses.
TEST(PositionWorker, AnIdSwappedAfterTheLeaseDeadlineIsGivenUp) {
    snowflake::test::PlainWords w;
    w.word = pack_position(1'000, 4, 9);
    w.reserved = 2'000;
    w.clock = 1'001;
    w.deadline = 5'000;
    w.boot = 4'999;
    int64_t id = 0;
    EXPECT_EQ(fast_issue(snowflake::core::kTwitter, w, &id), Fast::Issued);
    w.boot = 5'000;
    EXPECT_EQ(fast_issue(snowflake::core::kTwitter, w, &id), Fast::LeaseEnded);
    EXPECT_EQ(decompose(id).sequence, 1);  // swapped: the id is a gap, never issued again
    GeneratorState g;
    int64_t now = 0;
    EXPECT_EQ(slow_issue(snowflake::core::kTwitter, w, g, Config{}, 10, &now).status, Status::LeaseEnded);
    w.deadline = 0;  // the lease worker unpublished the lease
    EXPECT_EQ(fast_issue(snowflake::core::kTwitter, w, &id), Fast::NoLease);
    EXPECT_EQ(slow_issue(snowflake::core::kTwitter, w, g, Config{}, 10, &now).status, Status::Fenced);
}
