// Clock failover (snowflake.clock_backwards = failover): when the clock
// steps back further than the tolerance, a node with a leased worker id
// issues ids under a second, backup worker id instead of refusing them, and
// goes back to its own id once the clock passes the last millisecond it
// issued under it. Pure decisions only; the lease driver
// (src/coord/lease_driver.hpp) makes the calls and the host moves the
// generator's position.
//
// Why it stays unique. A backup id is claimed in the node's own lease (etcd)
// or session (ZooKeeper), beside its own worker key, so it is fenced by the
// same deadline; its ids are issued only after its mark, like any new
// holder's (handover.hpp), and only inside reservations written to that mark
// first. A backup is used only if its mark is below the current clock, so
// ids resume at once, from the current millisecond. The own id is kept
// while the backup is in use: nobody else can issue under it, and coming
// back needs no hand-over (its ids continue after its last millisecond).
//
// What it gives up: ids are no longer increasing node-wide during a
// failover (ids issued after the step sort before the ids issued before it,
// as their timestamps do). Per worker id they still increase.
#pragma once

#include "pure.hpp"

#include "generator.hpp"
#include "lease.hpp"

#include <cstdint>

namespace snowflake::core {

// snowflake.clock_backwards.
enum class ClockPolicy {
    Refuse,    // SF001 until the clock passes the last id (the default)
    Failover,  // a backup worker id while the clock is behind (leased ids only)
};

// How many free ids one attempt claims (and gives back when their mark is
// ahead of the clock) before it reports that no backup id was usable.
constexpr int32_t kMaxBackupTries = 8;

// The next id to try as a backup: the lowest worker id of [lo, hi] (the
// lease's range: LeaseConfig::worker_min/worker_max) that is not taken, not
// the node's own (own) and not tried yet in this attempt; -1 if none.
int32_t choose_backup(const TakenIds& taken, int32_t own, const TakenIds& tried, int32_t lo = 0,
                      int32_t hi = kMaxWorker) noexcept;

// A claimed id can serve as a backup at now_ms if its mark (the highest
// millisecond any holder may have issued under it; -1: no mark) and the
// millisecond after it, where its tenure starts (position.hpp), are below
// the clock: ids resume at once, at the current millisecond.
bool backup_usable(int64_t mark_ms, int64_t now_ms) noexcept;

// The failover and the return are decided on the same kind of reading: the
// clock against the last millisecond of a word, read as the id path reads
// them (the word and the floor it started from first, then the clock).
// generator: the word ids are issued from now (the own id's, or the
// backup's), with its floor and the floor's grace; tolerance_ms: the
// snowflake.clock_tolerance_ms of the caller that asked for a backup.
struct ClockReading {
    GeneratorState generator;
    int64_t now_ms = 0;
    int64_t tolerance_ms = 0;
};

// True if the id path refuses ids for the clock on this reading
// (Status::ClockBehind): the clock is behind the word's last id by more
// than the tolerance, or behind the floor the word started from by more
// than the floor's grace and the tolerance. A clock at or ahead of the last
// id, or behind it within what is waited out (the tolerance, the floor's
// grace: a reservation of the previous run after a crash), is no reason for
// a backup; a request made on an earlier reading is judged again on this one.
bool clock_refused(const ClockReading& r) noexcept;

// The shortest time a backup is held (on the boot clock), whatever the
// clock does meanwhile, before it is given back (the return to the own id,
// or another backup when the clock steps back behind the backup's ids
// too): a failover costs about five coordinator calls (claim, mark read and
// write, the exact mark, the delete), so a clock that goes back and forth
// costs at most one failover per hold. Shorter than the 5 s a caller waits
// for a backup: one that finds the clock behind a backup just taken still
// gets ids under the next one.
constexpr int64_t kMinBackupHoldMs = 2000;

// The node goes back to its own id once the clock has passed the last
// millisecond issued under it (own_last_ms) and the backup has been held
// for kMinBackupHoldMs (held_ms, on the boot clock).
bool backup_may_end(int64_t now_ms, int64_t own_last_ms, int64_t held_ms) noexcept;

// The backup state of one turn of the lease driver.
struct BackupState {
    int32_t worker = -1;        // the backup worker id in use, -1: none
    int64_t since_ns = 0;       // boot clock: when it started
    int64_t own_last_ms = -1;   // the own id's last millisecond
    int64_t retry_at_ns = 0;    // boot clock: no new attempt before this after one failed
};

enum class BackupStep {
    Stay,       // nothing to do
    NotNeeded,  // a caller asked, but the clock is not refused on this reading: answer it
    Take,       // take a backup worker id
    Return,     // back to the own id
    Switch,     // on a backup held long enough, the clock behind its ids too: give it back, take another
};

// One turn's decision. wanted: a caller asks for a backup (its tolerance is
// in r); r: the reading (needed when wanted or on a backup); boot_ns: the
// boot clock now.
BackupStep plan_backup(const BackupState& b, bool wanted, const ClockReading& r, int64_t boot_ns) noexcept;

}  // namespace snowflake::core
