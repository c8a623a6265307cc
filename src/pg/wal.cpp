// The high-water mark carried by the WAL: a custom WAL resource manager
// (PostgreSQL 15+, RegisterCustomRmgr), so that a standby's mark follows its
// primary's and a promoted standby starts above every reservation it
// replayed, whatever the clocks say.
//
// Record (kRmgrId, info kInfoReserve, 16 bytes of data, ReserveRecord):
//   int64 until_unix_ms  the primary issued or may issue ids up to and
//                        including this millisecond (Unix time), until its
//                        next record: the end of its reservation, or its
//                        floor if higher
//   int32 window_ms      how far the reservation reached ahead of its clock
//   int32 worker_id      the primary's worker id then (-1: none), for
//                        pg_waldump / pg_walinspect readers
// Unix time, not the epoch's id space, so that a standby reads it the same
// whatever its snowflake.epoch.
//
// Writing (the mark worker, mark_worker.cpp): each reservation goes to the mark
// file first (fsync), then into the WAL (XLogInsert, XLogFlush), and only
// then is it published for ids. In that order a base backup that misses the
// record (logged before the backup's redo point) has the file with it.
// Under synchronous replication (synchronous_standby_names, with the
// server's synchronous_commit above local) the worker also waits, as a
// commit does, until the synchronous standbys have flushed the record: a
// standby that may be promoted without the old primary's last WAL (a
// failover, a switchover to a lagging replica) then has every reservation
// an id was issued under, ids returned outside a write transaction too.
// Under asynchronous replication the record reaches a standby exactly when
// the WAL around it does: a promotion that loses the last commits loses the
// reservations they were issued under with them (docs/patroni.md).
//
// Redo (the startup process: crash recovery, a standby, archive recovery)
// raises the generator's position and floor, the loaded mark and the
// reservation in shared memory, and the mark file, to the replayed
// reservation. On promotion the generator starts from there: a clock behind
// it (the old primary's ran ahead) is waited out for up to the record's
// window plus kMaxWindowMs, then refused with SF001 naming when ids resume.
//
// Promotion or crash recovery? The postmaster looks for standby.signal and
// recovery.signal when it creates shared memory (mark_file.cpp's load_mark, before
// the startup process runs): only archive recovery has them, and a promotion
// ends one. A data directory whose mark comes through the WAL carries the
// marker file snowflake.walmark: written by the mark worker of every primary
// at its start (base backups copy it) and by redo in archive recovery,
// always after a mark file is on disk (core::kNothingIssued if there was
// none). A marker without a mark file therefore means that the file was
// lost (core::judge_missing_mark): without a coordinator, ids are refused
// from the start (after a promotion, in archive recovery) until replay
// writes the mark file again from a snowflake record (the last one covers
// every reservation logged before it), or snowflake_advance_floor() is
// called. Nothing but the files keeps that refusal: the mark file stays
// missing until one of the two. A run that begins in archive recovery with
// a static worker id and without the marker (its primary ran 1.1, or did
// not load the library) refuses ids from the moment it is promoted unless
// it replays a snowflake record: until the clock passes the last
// reservation it can know of (its copy of the mark file; the last replayed
// commit's time plus kMaxWindowMs, in the old primary's clock) or
// snowflake_advance_floor() is called. The refusal is kept in
// snowflake.promoted while it lasts, so that a restart keeps it.
//
// Locking: the fields of SharedState::wal marked "lock" and the generator's
// fields are written under SharedState::lock (shared_state.hpp); no file
// I/O under it.

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/promotion.hpp"
#include "../core/reservation.hpp"
#include "../core/stats_snapshot.hpp"
#include "wal.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "lease_state.hpp"
#include "mark_file.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"

extern "C" {
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogrecovery.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "storage/fd.h"
}

namespace core = snowflake::core;

namespace snowflake::pg {
namespace {

// The custom WAL resource manager id of snowflake (PostgreSQL 15+; custom
// ids are 128-255, RM_EXPERIMENTAL_ID = 128 is for experiments). Records
// written with it can only be replayed by a server that preloads this
// library: docs/operations.md, "The mark in the WAL".
constexpr int kRmgrId = 168;
constexpr const char* kRmgrName = "snowflake";

constexpr uint8 kInfoReserve = 0x00;
constexpr const char* kMarkerFile = "snowflake.walmark";
constexpr const char* kRefusalFile = "snowflake.promoted";

struct ReserveRecord {
    int64 until_unix_ms;
    int32 window_ms;
    int32 worker_id;
};
static_assert(sizeof(ReserveRecord) == 16, "the record's layout is part of the WAL format");

// Id-space milliseconds and Unix milliseconds, for the epoch in effect.
int64_t to_unix_ms(int64_t ms) { return core::id_ms_to_unix_ms(ms, epoch_unix_us()); }
int64_t from_unix_ms(int64_t unix_ms) { return core::unix_ms_to_id_ms(unix_ms, epoch_unix_us()); }

// Writes text to name durably (temp file, fsync, rename, fsync of the
// directory). Reports failures at elevel; false if it failed.
bool write_small_file(const char* name, const char* text, int elevel) {
    char tmp[MAXPGPATH];
    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    const int fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
    if (fd < 0) {
        ereport(elevel, (errcode_for_file_access(), errmsg("could not create file \"%s\": %m", tmp)));
        return false;
    }
    const size_t len = strlen(text);
    errno = 0;
    if (write(fd, text, len) != static_cast<ssize_t>(len) || pg_fsync(fd) != 0) {
        if (errno == 0) errno = ENOSPC;
        const int err = errno;
        CloseTransientFile(fd);
        errno = err;
        ereport(elevel, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", tmp)));
        return false;
    }
    if (CloseTransientFile(fd) != 0) {
        ereport(elevel, (errcode_for_file_access(), errmsg("could not close file \"%s\": %m", tmp)));
        return false;
    }
    return durable_rename(tmp, name, elevel) == 0;
}

// The last reservation a node promoted without a replicated mark can know
// of, in Unix milliseconds; works it out once. Lock held exclusively.
int64_t refusal_bound_locked() {
    WalMarkShared& w = shared->wal;
    if (w.refuse_until_unix_ms >= 0) return w.refuse_until_unix_ms;
    // The old primary's clock at its last replayed commit: it never
    // reserved more than kMaxWindowMs ahead of it.
    const TimestampTz xtime = GetLatestXTime();
    w.refuse_until_unix_ms = core::promotion_refusal_until(
        shared->loaded.ms >= 0 ? to_unix_ms(shared->loaded.ms) : -1,
        xtime != 0 ? core::floor_div(xtime + kPgEpochUnixUs, 1000) : -1, unix_now_us() / 1000);
    return w.refuse_until_unix_ms;
}

// Ends the refusal; the caller removes the file if *was_on_disk. Lock held.
void end_refusal_locked(bool* was_on_disk) {
    WalMarkShared& w = shared->wal;
    *was_on_disk = w.refusal_on_disk;
    w.refusal_on_disk = false;
    (void)pg_atomic_fetch_and_u32(&w.refusing, ~kRefusePromotion);
}

// Ends a lost mark's refusal; true if it held. Lock held.
bool end_lost_mark_locked() {
    return (pg_atomic_fetch_and_u32(&shared->wal.refusing, ~kRefuseLostMark) & kRefuseLostMark) != 0;
}

// Writes core::kNothingIssued unless a mark file is on disk, so that the
// marker is never on disk without one. Reports failures at elevel; false if
// it failed.
bool ensure_mark_file(int elevel) {
    if (access(kMarkFile, F_OK) == 0 || errno != ENOENT) return true;
    const char* step = "";
    if (const int err = write_mark(core::kNothingIssued, &step)) {
        errno = err;
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not write snowflake high-water mark file \"%s\" (%s): %m",
                                kMarkFile, step)));
        return false;
    }
    return true;
}

// Writes the marker file, after the mark file (ensure_mark_file()).
bool write_marker(int elevel) {
    return ensure_mark_file(elevel) &&
           write_small_file(kMarkerFile, "snowflake high-water mark kept through the WAL\n", elevel);
}

// The postmaster, at start, without a mark file: judges the loss
// (core::judge_missing_mark) and logs it. Returns whether ids are refused.
bool judge_lost_mark(const WalMarkShared& w) {
    const core::MissingMark m = core::judge_missing_mark(w.marker_on_disk, leasing_configured());
    if (m == core::MissingMark::FirstStart) return false;
    if (m == core::MissingMark::CoveredByCoordinator) {
        ereport(LOG, (errcode(ERRCODE_UNDEFINED_FILE),
                      errmsg("snowflake high-water mark file \"%s\" is missing", kMarkFile),
                      errdetail("The data directory holds %s, which is written only once a mark file "
                                "is on disk, so it issued ids before. Worker ids are leased from %s: "
                                "each worker id's mark there is the floor its next tenure starts "
                                "above, so ids are issued as usual.",
                                kMarkerFile, coordinator_display())));
        return false;
    }
    ereport(LOG, (errcode(ERRCODE_UNDEFINED_FILE),
                  errmsg("snowflake high-water mark file \"%s\" is missing", kMarkFile),
                  errdetail("The data directory holds %s, which is written only once a mark file is "
                            "on disk, so it issued ids before; with no coordinator configured, "
                            "nothing else records them.",
                            kMarkerFile),
                  errhint("snowflake_nextval() refuses ids until snowflake_advance_floor() is called "
                          "with the highest id this node issued, or WAL replay finds a snowflake "
                          "record; see \"Repairing the high-water mark\" in docs/operations.md.")));
    return true;
}

// Removes snowflake.promoted, durably; logs that ids are no longer held back.
void remove_refusal_file(int elevel) {
    if (durable_unlink(kRefusalFile, elevel) == 0)
        ereport(LOG, (errmsg("snowflake ids are no longer held back after the promotion")));
}

// --- the resource manager ----------------------------------------------------

void replay_reservation(const ReserveRecord& rec) {
    const int64_t ms = from_unix_ms(rec.until_unix_ms);
    WalMarkShared& w = shared->wal;

    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    w.replayed++;
    bool remove_refusal = false;
    // A record replayed in archive recovery: the mark comes through the WAL.
    const bool mark_marker = w.archive_recovery && !w.marker_on_disk;
    if (w.archive_recovery && (pg_atomic_read_u32(&w.refusing) & kRefusePromotion) != 0)
        end_refusal_locked(&remove_refusal);
    bool raised = false;
    core::Mark mark;
    const core::ReplayedFloor f = core::replayed_floor(
        ms, rec.window_ms, core::packed_ms(pg_atomic_read_u64(&shared->position)), w.archive_recovery);
    if (f.raise) {
        (void)raise_floor_locked(f.floor_ms, f.grace_ms, kFloorReplayed);  // the worker id stays
        shared->loaded = core::Mark{f.floor_ms, false, f.window_ms};
        if (static_cast<int64_t>(pg_atomic_read_u64(&shared->local_reserved_ms)) < ms)
            pg_atomic_write_u64(&shared->local_reserved_ms, static_cast<uint64>(ms));
        publish_reservation_locked();
        mark = shared->loaded;
        raised = shared->mark_status != kMarkCorrupt;
    }
    LWLockRelease(shared->lock);

    // Durable before replay moves on: a restartpoint after this record
    // means the record is not replayed again after a crash of this server.
    if (raised) {
        const char* step = "";
        if (const int err = write_mark(mark, &step)) {
            errno = err;
            ereport(ERROR, (errcode_for_file_access(),
                            errmsg("could not write snowflake high-water mark file \"%s\" during "
                                   "replay (%s): %m",
                                   kMarkFile, step)));
        }
        // A lost mark file is on disk again, from a record that covers
        // every reservation this data directory's WAL logged before it.
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        const bool was_lost = end_lost_mark_locked();
        LWLockRelease(shared->lock);
        if (was_lost)
            ereport(LOG, (errmsg("snowflake high-water mark file \"%s\" recreated from the WAL", kMarkFile),
                          errdetail("A replayed snowflake record covers every reservation logged "
                                    "before it; ids are no longer refused for the missing file.")));
    }
    if (mark_marker && write_marker(ERROR))
        w.marker_on_disk = true;  // only the startup process writes it during recovery
    if (remove_refusal) remove_refusal_file(LOG);
}

// The resource manager's redo: replays a reservation record.
void rmgr_redo(XLogReaderState* record) {
    const uint8 info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
    if (info != kInfoReserve || XLogRecGetDataLen(record) != sizeof(ReserveRecord))
        elog(PANIC, "snowflake_redo: unknown record (info 0x%02X, %u bytes)", info,
             static_cast<unsigned>(XLogRecGetDataLen(record)));
    ReserveRecord rec;
    std::memcpy(&rec, XLogRecGetData(record), sizeof(rec));
    replay_reservation(rec);
}

// The resource manager's description of a record (pg_waldump).
void rmgr_desc(StringInfo buf, XLogReaderState* record) {
    const uint8 info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
    if (info != kInfoReserve || XLogRecGetDataLen(record) != sizeof(ReserveRecord)) return;
    ReserveRecord rec;
    std::memcpy(&rec, XLogRecGetData(record), sizeof(rec));
    appendStringInfo(buf, "until %s, window %d ms, worker %d",
                     timestamptz_to_str(rec.until_unix_ms * 1000 - kPgEpochUnixUs), rec.window_ms,
                     rec.worker_id);
}

// The resource manager's name of a record type.
const char* rmgr_identify(uint8 info) {
    return (info & ~XLR_INFO_MASK) == kInfoReserve ? "RESERVE" : nullptr;
}

// The resource manager's callbacks.
RmgrData make_rmgr() {
    RmgrData r;
    std::memset(&r, 0, sizeof(r));
    r.rm_name = kRmgrName;
    r.rm_redo = rmgr_redo;
    r.rm_desc = rmgr_desc;
    r.rm_identify = rmgr_identify;
    return r;
}
// Not const: PostgreSQL 15 takes a pointer to non-const.
RmgrData rmgr = make_rmgr();

}  // namespace

// Registers the resource manager (wal.hpp).
void register_wal_rmgr() { RegisterCustomRmgr(static_cast<RmgrId>(kRmgrId), &rmgr); }

// Initialises SharedState::wal at shared memory creation (wal.hpp).
void init_wal_mark(SharedState* s) {
    WalMarkShared& w = s->wal;
    w.archive_recovery = access("standby.signal", F_OK) == 0 || access("recovery.signal", F_OK) == 0;
    w.replayed = 0;
    w.marker_on_disk = access(kMarkerFile, F_OK) == 0;
    w.refuse_until_unix_ms = -1;
    w.refusal_on_disk = false;
    pg_atomic_init_u32(&w.refusing, 0);
    // load_mark() set the floor for a crash restart; a standby's mark file
    // holds its primary's reservation, in that primary's clock.
    if (s->floor_ms >= 0)
        s->floor_grace_ms = core::start_grace_ms(s->floor_grace_ms, s->loaded.window_ms, w.archive_recovery);
    // No mark file (load_mark() found none): a first start, or a lost file.
    if (s->mark_status == kMarkNone && judge_lost_mark(w))
        (void)pg_atomic_fetch_or_u32(&w.refusing, kRefuseLostMark);

    // A refusal kept from an earlier run of this data directory.
    if (FILE* f = fopen(kRefusalFile, "r")) {
        long long until = -1;
        const bool parsed = fscanf(f, "%lld", &until) == 1;
        fclose(f);
        // Unreadable: refuse until snowflake_advance_floor() (a bound far
        // ahead), rather than not at all.
        w.refuse_until_unix_ms = parsed && until >= 0 ? until : INT64_MAX / 4;
        w.refusal_on_disk = true;
        (void)pg_atomic_fetch_or_u32(&w.refusing, kRefusePromotion);
        return;
    }
    // The start of an archive recovery whose end (a promotion) would find
    // no mark that came through the WAL.
    if (core::arm_promotion_refusal(w.archive_recovery, w.marker_on_disk,
                                    worker_id >= 0 && !leasing_configured()))
        (void)pg_atomic_fetch_or_u32(&w.refusing, kRefusePromotion);
}

// Logs a reservation in the WAL, flushes it, waits for the synchronous
// standbys (wal.hpp).
bool log_reservation(int64_t until_ms, int64_t window_ms) {
    LWLockAcquire(shared->lock, LW_SHARED);
    const int64_t floor = std::max(shared->floor_ms, shared->loaded.ms);
    LWLockRelease(shared->lock);
    ReserveRecord rec;
    rec.until_unix_ms = to_unix_ms(std::max(until_ms, floor));
    rec.window_ms = static_cast<int32>(std::clamp<int64_t>(window_ms, 0, core::kMaxWindowMs));
    rec.worker_id = current_worker_id();
    XLogBeginInsert();
    XLogRegisterData(reinterpret_cast<char*>(&rec), sizeof(rec));
    // Not "activity": an idle server renews its reservation, and must not
    // force checkpoints or WAL segment switches (archive_timeout) for it.
    XLogSetRecordFlags(XLOG_MARK_UNIMPORTANT);
    const XLogRecPtr lsn = XLogInsert(static_cast<RmgrId>(kRmgrId), kInfoReserve);
    XLogFlush(lsn);
    // Returns at once without synchronous standbys. A wait ends when they
    // have the record, or when the mark worker's SIGTERM (mark_worker.cpp)
    // or the postmaster's death sets ProcDiePending: then the reservation is
    // on disk here but perhaps not there, and is not published. Called, as
    // at a commit, with interrupts held.
    HOLD_INTERRUPTS();
    SyncRepWaitForLSN(lsn, false);
    RESUME_INTERRUPTS();
    return !ProcDiePending;
}

// Ends a refusal whose time has come, keeps it on disk while it lasts (wal.hpp).
void tend_refusal() {
    WalMarkShared& w = shared->wal;
    if ((pg_atomic_read_u32(&w.refusing) & kRefusePromotion) != 0) {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        const int64_t bound = refusal_bound_locked();
        bool on_disk = w.refusal_on_disk;
        bool remove = false;
        const bool over = unix_now_us() / 1000 > bound;
        if (over) end_refusal_locked(&remove);
        LWLockRelease(shared->lock);
        if (over) {
            if (remove) remove_refusal_file(LOG);
        } else if (!on_disk) {
            char text[32];
            snprintf(text, sizeof(text), "%" PRId64 "\n", bound);
            if (write_small_file(kRefusalFile, text, LOG)) {
                LWLockAcquire(shared->lock, LW_EXCLUSIVE);
                // Unless snowflake_advance_floor() ended it meanwhile.
                if ((pg_atomic_read_u32(&w.refusing) & kRefusePromotion) != 0) w.refusal_on_disk = true;
                else on_disk = true;  // ended: remove the file again
                LWLockRelease(shared->lock);
                if (on_disk) remove_refusal_file(LOG);
            }
        }
    }
    // Kept after the refusal, so that a crash between the two never leaves
    // the marker without the refusal; and after a mark file (write_marker()).
    // A marker already on disk beside a lost mark file stays as it is: the
    // mark file is written again only by a reservation, which only
    // snowflake_advance_floor() asks for while the loss refuses ids.
    if (!w.marker_on_disk && write_marker(LOG))
        w.marker_on_disk = true;  // only the mark worker writes it while the server runs
}

// Raises the refusal error while one holds (wal.hpp).
void check_replicated_mark() {
    const uint32 why = pg_atomic_read_u32(&shared->wal.refusing);
    if (likely(why == 0)) return;
    if ((why & kRefuseLostMark) != 0)
        ereport(ERROR,
                (errcode(ERRCODE_UNDEFINED_FILE),
                 errmsg("snowflake high-water mark file \"%s\" is missing", kMarkFile),
                 errdetail("The data directory holds %s, which is written only once a mark file is "
                           "on disk, so it issued ids before; with snowflake.worker_id %d and no "
                           "coordinator, nothing else records them, and a new id could repeat one.",
                           kMarkerFile, worker_id),
                 errhint("Call snowflake_advance_floor() with the highest id this node issued "
                         "(\"Repairing the high-water mark\" in docs/operations.md); ids resume "
                         "at once after it.")));
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    const int64_t bound = refusal_bound_locked();
    const bool refusing = (pg_atomic_read_u32(&shared->wal.refusing) & kRefusePromotion) != 0;
    LWLockRelease(shared->lock);
    if (!refusing || unix_now_us() / 1000 > bound) return;
    const TimestampTz until = bound * 1000 - kPgEpochUnixUs;
    char* until_text = pstrdup(timestamptz_to_str(until));
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("snowflake high-water mark did not come through the WAL"),
             errdetail("This server was promoted with snowflake.worker_id %d without replaying a "
                       "snowflake WAL record, so it does not know the ids its former primary "
                       "issued; the last reservation it can know of reaches %s.",
                       worker_id, until_text),
             errhint("Ids resume when the clock passes %s, or at once after "
                     "snowflake_advance_floor() is called with the highest id in the replicated "
                     "tables (docs/operations.md).",
                     until_text)));
}

// Ends the refusals once snowflake_advance_floor() made a floor durable (wal.hpp).
void end_refusal_after_floor() {
    if (pg_atomic_read_u32(&shared->wal.refusing) == 0) return;
    bool remove = false;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    end_refusal_locked(&remove);
    const bool was_lost = end_lost_mark_locked();
    LWLockRelease(shared->lock);
    if (remove) remove_refusal_file(LOG);
    // The floor's reservation is in the mark file: a restart finds it.
    if (was_lost)
        ereport(LOG, (errmsg("snowflake ids are no longer refused for the missing high-water mark file"),
                      errdetail("snowflake_advance_floor() made a floor durable; \"%s\" holds it.",
                                kMarkFile)));
}

}  // namespace snowflake::pg
