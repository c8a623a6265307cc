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

// The next id to try as a backup: the lowest worker id that is not taken,
// not the node's own (own) and not tried yet in this attempt; -1 if none.
int32_t choose_backup(const TakenIds& taken, int32_t own, const TakenIds& tried) noexcept;

// A claimed id can serve as a backup at now_ms if its mark (the highest
// millisecond any holder may have issued under it; -1: no mark) and the
// millisecond after it, where its tenure starts (position.hpp), are below
// the clock: ids resume at once, at the current millisecond.
bool backup_usable(int64_t mark_ms, int64_t now_ms) noexcept;

// The node goes back to its own id once the clock has passed the last
// millisecond issued under it (own_last_ms).
bool backup_may_end(int64_t now_ms, int64_t own_last_ms) noexcept;

}  // namespace snowflake::core
