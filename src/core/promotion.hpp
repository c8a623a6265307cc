// The high-water mark carried by the WAL (src/pg/wal.cpp): the decisions a
// standby's replay and a promoted node take, pure, with the clock passed in.
#pragma once

#include "pure.hpp"

#include "wal_record.hpp"  // RecordEpoch

#include <cstdint>

namespace snowflake::core {

// The longest window a reservation reaches ahead of its node's clock
// (kMaxWindowMs): a node promoted without its primary's reservations counts
// its primary's last known time plus this much as issued.
constexpr int64_t kPromotionMarginMs = 60000;

// An id-space millisecond (since the epoch, given in Unix microseconds) as
// the Unix millisecond that holds its end, and back: a round trip never
// lowers a mark.
int64_t id_ms_to_unix_ms(int64_t ms, int64_t epoch_unix_us) noexcept;
int64_t unix_ms_to_id_ms(int64_t unix_ms, int64_t epoch_unix_us) noexcept;  // clamped to -1 .. kMaxMs

// What replaying one reservation (reaching record_ms in the id space, with
// the primary's window) does to a generator whose position is at
// position_ms: raise its floor there, and how far a clock behind it is
// waited out. After a crash of the same data directory, the window; after
// a promotion (archive recovery), the old primary's clock may also have run
// ahead of this one: kPromotionMarginMs more.
struct ReplayedFloor {
    bool raise = false;
    int64_t floor_ms = -1;
    int64_t grace_ms = 0;
    int64_t window_ms = 0;  // the record's, within kMinWindowMs .. kMaxWindowMs
};
ReplayedFloor replayed_floor(int64_t record_ms, int64_t record_window_ms, int64_t position_ms,
                             bool archive_recovery) noexcept;

// The grace of the floor loaded from the mark file at start (grace_ms, of
// a mark with window_ms; 0 for an exact mark): in archive recovery the
// file's mark came from the primary (a base backup's copy, or replay
// before a restart of the standby), whose clock may run ahead of this one,
// so a promotion waits for it as for a replayed one.
int64_t start_grace_ms(int64_t grace_ms, int64_t window_ms, bool archive_recovery) noexcept;

// Whether a run that starts now must hold ids back once it is promoted:
// it starts in archive recovery (a standby, or a restore), with a static
// worker id, and its data directory does not say that its mark comes
// through the WAL. Replaying a snowflake record before the promotion
// lifts it.
bool arm_promotion_refusal(bool archive_recovery, bool marker_present, bool static_worker_id) noexcept;

// The last reservation a promoted node without its primary's records can
// know of, in Unix ms: its copy of the mark (-1: none), or the time of the
// last commit it replayed (in the old primary's clock; -1: none) plus
// kPromotionMarginMs; knowing neither, its own clock now plus the margin.
// Ids are refused while the clock is at or before it.
int64_t promotion_refusal_until(int64_t mark_unix_ms, int64_t last_commit_unix_ms,
                                int64_t now_unix_ms) noexcept;

// The epoch refusal. Ids count milliseconds from snowflake.epoch, which
// every node of a fleet must share: a standby whose epoch differs from its
// primary's would, once promoted, put its primary's milliseconds into other
// bits than its primary did. It refuses ids instead, from the promotion on,
// until the two agree; a worker id of its own is no reason to refuse.
// Whether the refusal holds after replaying one record (refusing: whether
// it held before): in archive recovery (a standby, a restore) a record of
// another epoch arms it, one of the node's own epoch lifts it (its primary
// now counts as it does), a 16-byte record (1.1, 1.2: no epoch) leaves it
// as it was. Crash recovery replays the node's own records and changes
// nothing: a node that moved its own epoch waits for its clock to pass its
// mark, as after a clean restart (docs/operations.md).
bool epoch_refusal_after_record(bool refusing, RecordEpoch epoch, bool archive_recovery) noexcept;
// At start: a refusal kept on disk, naming the records' epoch, holds while
// the node's own epoch differs from it.
bool epoch_refusal_at_start(bool kept, int64_t records_epoch_unix_us, int64_t own_epoch_unix_us) noexcept;

}  // namespace snowflake::core
