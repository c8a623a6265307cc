// Clock failover to a backup worker id (core/backup.hpp) and the backup's
// position word (core/generator.hpp).
#include <gtest/gtest.h>

#include "core/backup.hpp"
#include "core/generator.hpp"
#include "core/handover.hpp"
#include "core/position.hpp"
#include "plain_words.hpp"

#include <algorithm>

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

TEST(Backup, EndsOnceTheClockPassesTheOwnIdsLastMillisecondAndTheHoldIsOver) {
    const int64_t hold = sc::kMinBackupHoldMs;
    EXPECT_FALSE(sc::backup_may_end(1000, 1000, hold));
    EXPECT_FALSE(sc::backup_may_end(999, 1000, hold));
    EXPECT_TRUE(sc::backup_may_end(1001, 1000, hold));
    EXPECT_FALSE(sc::backup_may_end(1001, 1000, hold - 1));  // the clock passed, the hold not yet
    EXPECT_FALSE(sc::backup_may_end(999, 1000, 100 * hold));
}

namespace {

constexpr int64_t kMsNs = 1000000;

// A reading of the word `last_ms` (an id issued there), the clock at now_ms.
sc::ClockReading reading(int64_t last_ms, int64_t now_ms, int64_t tolerance_ms = 5) {
    sc::ClockReading r;
    r.generator = sc::state_after(-1);
    r.generator.last_ms = last_ms;
    r.generator.sequence = 7;
    r.now_ms = now_ms;
    r.tolerance_ms = tolerance_ms;
    return r;
}

// The node on backup worker id 9 since boot time since_ns, its own id's
// last millisecond own_last_ms.
sc::BackupState on_backup(int64_t since_ns, int64_t own_last_ms) {
    sc::BackupState b;
    b.worker = 9;
    b.since_ns = since_ns;
    b.own_last_ms = own_last_ms;
    return b;
}

}  // namespace

TEST(Backup, TheClockIsRefusedOnlyWhereTheIdPathRefusesIt) {
    EXPECT_TRUE(sc::clock_refused(reading(1000, 994)));   // 6 ms behind, tolerance 5
    EXPECT_FALSE(sc::clock_refused(reading(1000, 995)));  // within the tolerance: waited out
    EXPECT_FALSE(sc::clock_refused(reading(1000, 1000)));
    EXPECT_FALSE(sc::clock_refused(reading(1000, 1040)));  // ahead of the last id
    EXPECT_FALSE(sc::clock_refused(reading(-1, 0)));       // nothing issued yet
    EXPECT_TRUE(sc::clock_refused(reading(1000, 999, 0)));  // the caller's tolerance, not a default
    // A floor that is a reservation of the previous run (after a crash),
    // its grace 1,500 ms: waited out, not refused, whatever the tolerance.
    sc::ClockReading r;
    r.generator = sc::state_after(5000, 1500);
    r.tolerance_ms = 5;
    for (const int64_t now : {3500, 4000, 4999, 5000, 5001}) {
        r.now_ms = now;
        EXPECT_FALSE(sc::clock_refused(r)) << now;
    }
    r.now_ms = 3499;  // behind it by more than its grace
    EXPECT_TRUE(sc::clock_refused(r));
    // An exact floor (no grace): refused past the tolerance, as an id call is.
    r.generator = sc::state_after(5000);
    r.now_ms = 4990;
    EXPECT_TRUE(sc::clock_refused(r));
    r.now_ms = 4996;
    EXPECT_FALSE(sc::clock_refused(r));
}

TEST(Backup, TheReadingIsNotChanged) {
    sc::ClockReading r = reading(1000, 500);
    ASSERT_TRUE(sc::clock_refused(r));
    EXPECT_EQ(r.generator.last_ms, 1000);
    EXPECT_EQ(r.generator.sequence, 7);
    EXPECT_EQ(r.generator.counters.clock_backwards_events, 0u);
}

TEST(Backup, NothingToDoWhileNobodyAsksAndNoBackupIsInUse) {
    const sc::BackupState none;
    EXPECT_EQ(sc::plan_backup(none, false, reading(1000, 10), 0), sc::BackupStep::Stay);  // behind, not asked
    EXPECT_EQ(sc::plan_backup(none, false, reading(1000, 2000), 0), sc::BackupStep::Stay);
}

TEST(Backup, ARequestIsJudgedOnTheDriversOwnReading) {
    const sc::BackupState none;
    EXPECT_EQ(sc::plan_backup(none, true, reading(1000, 500), 0), sc::BackupStep::Take);
    // The caller asked 6 ms behind; by this reading the clock caught up (it
    // was issue 28's "the clock is -40 ms behind the last id"): no backup,
    // the callers decide again.
    EXPECT_EQ(sc::plan_backup(none, true, reading(1000, 1040), 0), sc::BackupStep::NotNeeded);
    EXPECT_EQ(sc::plan_backup(none, true, reading(1000, 997), 0), sc::BackupStep::NotNeeded);
    // A floor waited out within its grace (a restart after a crash).
    sc::ClockReading r;
    r.generator = sc::state_after(5000, 1500);
    r.now_ms = 4400;
    r.tolerance_ms = 5;
    EXPECT_EQ(sc::plan_backup(none, true, r, 0), sc::BackupStep::NotNeeded);
}

TEST(Backup, NoNewAttemptBeforeTheRetryTimeAfterOneFailed) {
    sc::BackupState none;
    none.retry_at_ns = 2000 * kMsNs;
    EXPECT_EQ(sc::plan_backup(none, true, reading(1000, 500), 1999 * kMsNs), sc::BackupStep::Stay);
    EXPECT_EQ(sc::plan_backup(none, true, reading(1000, 500), 2000 * kMsNs), sc::BackupStep::Take);
}

TEST(Backup, ABackupIsHeldAtLeastTheMinimumHold) {
    const sc::BackupState b = on_backup(10000 * kMsNs, 1000);
    const int64_t end_of_hold = 10000 * kMsNs + sc::kMinBackupHoldMs * kMsNs;
    // The backup's word at 700, the clock past the own id's last millisecond
    // 100 ms after the backup started: held on.
    EXPECT_EQ(sc::plan_backup(b, false, reading(700, 1001), 10100 * kMsNs), sc::BackupStep::Stay);
    EXPECT_EQ(sc::plan_backup(b, false, reading(700, 1001), end_of_hold - 1), sc::BackupStep::Stay);
    EXPECT_EQ(sc::plan_backup(b, false, reading(700, 1001), end_of_hold), sc::BackupStep::Return);
    // Held long enough, the clock not past the own id's ids: held on.
    EXPECT_EQ(sc::plan_backup(b, false, reading(700, 1000), end_of_hold * 10), sc::BackupStep::Stay);
    // A caller that asks while the backup serves it (it judged the own
    // id's word before the switch): answered, nothing else.
    EXPECT_EQ(sc::plan_backup(b, true, reading(700, 800), 10100 * kMsNs), sc::BackupStep::NotNeeded);
}

TEST(Backup, OnABackupTheClockBehindItsIdsTooTakesAnotherOnceHeld) {
    // A backup whose ids reach 5,000,000 ms; the clock steps back an hour.
    const int64_t start = 10000 * kMsNs, end_of_hold = start + sc::kMinBackupHoldMs * kMsNs;
    const sc::BackupState b = on_backup(start, 6000000);
    const sc::ClockReading r = reading(5000000, 5000000 - 3600 * 1000);
    EXPECT_EQ(sc::plan_backup(b, true, r, end_of_hold), sc::BackupStep::Switch);
    EXPECT_EQ(sc::plan_backup(b, true, r, end_of_hold - 1), sc::BackupStep::Stay);  // held on first
    EXPECT_EQ(sc::plan_backup(b, false, r, end_of_hold), sc::BackupStep::Stay);    // nobody asks
    sc::BackupState failed = b;
    failed.retry_at_ns = end_of_hold + 1000 * kMsNs;
    EXPECT_EQ(sc::plan_backup(failed, true, r, end_of_hold), sc::BackupStep::Stay);
    // Not behind the backup's ids, behind the own id's: held on.
    EXPECT_EQ(sc::plan_backup(b, true, reading(5000000, 5000001), end_of_hold), sc::BackupStep::NotNeeded);
}

namespace {

// A lease driver's turns over `seconds` of boot time, one every 100 ms
// (its longest sleep), against a host whose callers ask for a backup at
// every turn (stale requests included) and whose clock is clock(turn);
// the word ids are issued from follows the clock (ids issued at every
// turn). Returns how many backups were started.
template <class Clock>
int failovers_over(int seconds, Clock clock) {
    sc::BackupState b;
    int64_t word_ms = -1;  // the word in use: its last millisecond
    int64_t own_ms = -1;   // the own id's last millisecond
    int started = 0;
    for (int turn = 0; turn < seconds * 10; turn++) {
        const int64_t boot = turn * 100 * kMsNs;
        const int64_t now = clock(turn);
        // The callers before the turn: an id whenever the clock is not refused.
        if (!sc::clock_refused(reading(word_ms, now)) && now > word_ms) word_ms = now;
        if (b.worker < 0) own_ms = word_ms;
        switch (sc::plan_backup(b, true, reading(word_ms, now), boot)) {
            case sc::BackupStep::Take:
            case sc::BackupStep::Switch:
                started++;
                b.worker = 9;
                b.since_ns = boot;
                b.own_last_ms = std::max(own_ms, word_ms);
                own_ms = b.own_last_ms;
                word_ms = -1;  // a backup never used: no mark
                break;
            case sc::BackupStep::Return:
                b.worker = -1;
                word_ms = std::max(own_ms, word_ms);
                break;
            case sc::BackupStep::Stay:
            case sc::BackupStep::NotNeeded:
                break;
        }
    }
    return started;
}

}  // namespace

TEST(Backup, NoFailoverWhileTheClockIsAheadOfTheLastId) {
    // Issue 28: a freshly started node, asked for a backup at every turn,
    // its clock ahead of its last id all along.
    EXPECT_EQ(failovers_over(20, [](int turn) { return int64_t{1000000} + turn * 100; }), 0);
}

TEST(Backup, AnUnsteadyClockFailsOverAtMostOncePerHold) {
    // The clock steps back 50 ms at every other turn (and forward again):
    // each step is real, but the backup is held and the flapping bounded.
    const int seconds = 60;
    const int n = failovers_over(seconds, [](int turn) { return int64_t{1000000} + turn * 100 - (turn % 2) * 150; });
    EXPECT_GE(n, 1);
    EXPECT_LE(n, seconds * 1000 / sc::kMinBackupHoldMs + 1);
}

TEST(Backup, PositionStartsAfterTheMarkWithTheBackupsWorkerId) {
    snowflake::test::PlainWords w;
    w.word = sc::pack_position(50000, 12, 3);
    const uint64_t own = w.word;
    EXPECT_EQ(sc::fence(sc::kTwitter, w), 50000);  // the own id's last millisecond
    EXPECT_EQ(sc::start_tenure(sc::kTwitter, w, 9, 1000), 1001);
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
    EXPECT_EQ(sc::start_tenure(sc::kTwitter, fresh, 9, -1), 0);
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

TEST(Backup, ChoosesOnlyInsideTheLeaseRange) {
    sc::TakenIds taken, tried;
    sc::taken_add(taken, 512);
    EXPECT_EQ(sc::choose_backup(taken, 513, tried, 512, 515), 514);  // 512 taken, 513 the own
    sc::taken_add(tried, 514);
    EXPECT_EQ(sc::choose_backup(taken, 513, tried, 512, 515), 515);
    sc::taken_add(tried, 515);
    EXPECT_EQ(sc::choose_backup(taken, 513, tried, 512, 515), -1);  // 0..511 are free but outside
}

// The host's side of the hand-over (core/handover.hpp), shared by the
// extension's lease worker and the C library's host: after a failover the
// position is a backup's, below the own id's ids, and a new tenure starts
// above those.
TEST(Backup, ANewTenureStartsAboveTheOwnIdsIssuedBeforeAFailover) {
    sc::Handover h;
    h.floor_ms = 1000;  // the new id's mark
    h.grace_ms = 7500;
    // On a backup: position 500, the own id's ids reached 2000.
    sc::TenureFloor t = sc::tenure_floor(h, 500, 2000);
    EXPECT_EQ(t.floor_ms, 2000);
    EXPECT_EQ(t.grace_ms, 0);
    EXPECT_FALSE(t.at_handover);
    // No failover: the mark is above the position, its grace kept.
    t = sc::tenure_floor(h, 500, -1);
    EXPECT_EQ(t.floor_ms, 1000);
    EXPECT_EQ(t.grace_ms, 7500);
    EXPECT_TRUE(t.at_handover);
}

TEST(Backup, ThePositionsMarkCoversTheOwnIdsIssuedBeforeAFailover) {
    // On a backup whose position is still at its floor: the own id's ids
    // are above it, so the mark is theirs, exact.
    sc::Mark m = sc::position_mark(500, 500, 7500, 2000);
    EXPECT_EQ(m.ms, 2000);
    EXPECT_TRUE(m.clean);
    EXPECT_EQ(m.window_ms, 0);
    // At a reserved floor of the previous run (a crash), no failover: not
    // clean, its grace the window.
    m = sc::position_mark(500, 500, 7500, -1);
    EXPECT_EQ(m.ms, 500);
    EXPECT_FALSE(m.clean);
    EXPECT_EQ(m.window_ms, 7500);
    // Past the floor: exact.
    m = sc::position_mark(600, 500, 7500, -1);
    EXPECT_EQ(m.ms, 600);
    EXPECT_TRUE(m.clean);
}
