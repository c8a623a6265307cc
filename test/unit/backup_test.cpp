// Clock failover to a backup worker id (core/backup.hpp) and the backup's
// position word (core/generator.hpp).
#include <gtest/gtest.h>

#include "core/backup.hpp"
#include "core/generator.hpp"

namespace sc = snowflake::core;

TEST(Backup, ChoosesTheLowestFreeIdThatIsNeitherOwnNorTried) {
    sc::TakenIds taken, tried;
    EXPECT_EQ(sc::choose_backup(taken, 0, tried), 1);  // 0 is the node's own
    sc::taken_add(taken, 1);
    sc::taken_add(taken, 2);
    EXPECT_EQ(sc::choose_backup(taken, 0, tried), 3);
    sc::taken_add(tried, 3);
    EXPECT_EQ(sc::choose_backup(taken, 0, tried), 4);
    EXPECT_EQ(sc::choose_backup(taken, 7, tried), 0);  // the own id is not taken by others, but never chosen
}

TEST(Backup, NoneWhenEveryOtherIdIsTakenOrTried) {
    sc::TakenIds taken, tried;
    for (int32_t w = 0; w <= sc::kMaxWorker; w++)
        if (w != 5) sc::taken_add(w % 2 == 0 ? taken : tried, w);
    EXPECT_EQ(sc::choose_backup(taken, 5, tried), -1);
}

TEST(Backup, UsableOnlyWithTheMarkBelowTheClock) {
    EXPECT_TRUE(sc::backup_usable(-1, 0));      // never used
    EXPECT_TRUE(sc::backup_usable(999, 1000));  // ids start at the clock's millisecond
    EXPECT_FALSE(sc::backup_usable(1000, 1000));
    EXPECT_FALSE(sc::backup_usable(5000, 1000));
}

TEST(Backup, EndsOnceTheClockPassesTheOwnIdsLastMillisecond) {
    EXPECT_FALSE(sc::backup_may_end(1000, 1000));
    EXPECT_FALSE(sc::backup_may_end(999, 1000));
    EXPECT_TRUE(sc::backup_may_end(1001, 1000));
}

TEST(Backup, PositionStartsAfterTheMarkWithTheBackupsWorkerId) {
    const uint64_t own = sc::pack_position(50000, 12, 3);
    const uint64_t b = sc::backup_position(1000, 9);
    EXPECT_EQ(sc::packed_worker(b), 9);
    EXPECT_EQ(sc::packed_ms(b), 1000);
    EXPECT_EQ(sc::packed_sequence(b), sc::kMaxSequence);  // the mark's millisecond counts as used up
    EXPECT_LT(sc::position_order(b), sc::position_order(own));  // lower than the own id's position
    const uint64_t never = sc::backup_position(-1, 9);
    EXPECT_EQ(sc::packed_ms(never), -1);
    // The fast path issues its first id in a millisecond after the mark.
    sc::FastNext f;
    ASSERT_TRUE(sc::fast_next(b, 1001, 2000, &f));
    EXPECT_EQ((f.id >> sc::kWorkerShift) & sc::kMaxWorker, 9);
    EXPECT_FALSE(sc::fast_next(b, 1000, 2000, &f));
}

TEST(Backup, AClockBehindWithFailoverIsNotCountedAsAnError) {
    sc::GeneratorState g = sc::state_after(1000);
    sc::Config c{3, 5};
    c.failover = true;
    EXPECT_EQ(sc::next_id(g, 500, c).status, sc::Status::ClockBehind);
    EXPECT_EQ(g.counters.clock_backwards_errors, 0u);
    EXPECT_EQ(g.counters.clock_backwards_events, 1u);
    c.failover = false;
    EXPECT_EQ(sc::next_id(g, 500, c).status, sc::Status::ClockBehind);
    EXPECT_EQ(g.counters.clock_backwards_errors, 1u);
}
