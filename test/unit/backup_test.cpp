// Clock failover to a backup worker id (core/backup.hpp) and the backup's
// position word (core/generator.hpp).
#include <gtest/gtest.h>

#include "core/backup.hpp"
#include "core/generator.hpp"
#include "core/position.hpp"
#include "plain_words.hpp"

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
    EXPECT_TRUE(sc::backup_usable(-1, 1));      // never used: its tenure starts at 0, used up
    EXPECT_FALSE(sc::backup_usable(-1, 0));
    EXPECT_TRUE(sc::backup_usable(998, 1000));  // ids start at the clock's millisecond
    EXPECT_FALSE(sc::backup_usable(999, 1000));  // the tenure starts at 1000, used up
    EXPECT_FALSE(sc::backup_usable(1000, 1000));
    EXPECT_FALSE(sc::backup_usable(5000, 1000));
}

TEST(Backup, EndsOnceTheClockPassesTheOwnIdsLastMillisecond) {
    EXPECT_FALSE(sc::backup_may_end(1000, 1000));
    EXPECT_FALSE(sc::backup_may_end(999, 1000));
    EXPECT_TRUE(sc::backup_may_end(1001, 1000));
}

TEST(Backup, PositionStartsAfterTheMarkWithTheBackupsWorkerId) {
    snowflake::test::PlainWords w;
    w.word = sc::pack_position(50000, 12, 3);
    const uint64_t own = w.word;
    EXPECT_EQ(sc::fence(w), 50000);  // the own id's last millisecond
    EXPECT_EQ(sc::start_tenure(w, 9, 1000), 1001);
    EXPECT_EQ(sc::packed_worker(w.word), 9);
    EXPECT_EQ(sc::packed_ms(w.word), 1001);  // one past the mark, counted as used up
    EXPECT_EQ(sc::packed_sequence(w.word), sc::kMaxSequence);
    EXPECT_LT(sc::position_order(w.word), sc::position_order(own));  // lower than the own id's position
    EXPECT_EQ(w.reserved, 1001);  // nothing of the backup reserved yet
    // The fast path issues its first id in a millisecond after that.
    w.reserved = 2000;
    sc::FastNext f;
    ASSERT_TRUE(sc::fast_next(w.word, 1002, w.reserved, &f));
    EXPECT_EQ((f.id >> sc::kWorkerShift) & sc::kMaxWorker, 9);
    EXPECT_FALSE(sc::fast_next(w.word, 1001, w.reserved, &f));
    // A backup id that was never used starts at 0.
    snowflake::test::PlainWords fresh;
    EXPECT_EQ(sc::start_tenure(fresh, 9, -1), 0);
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
