// The high-water mark carried by the WAL: a custom WAL resource manager
// (PostgreSQL 15+, RegisterCustomRmgr), so that a standby's mark follows its
// primary's and a promoted standby starts above every reservation it
// replayed, whatever the clocks say.
//
// Record (kRmgrId, info kInfoReserve): 24 bytes, the end of the reservation
// in the id space (milliseconds since the epoch) and the epoch those count
// from, the window and the worker id (core/wal_record.hpp has both
// layouts). 1.1 and 1.2 wrote 16 bytes, the end in Unix milliseconds and no
// epoch; redo reads both. Ids are unique in the id space, not in Unix time:
// read in a standby's own epoch, 4 s later than its primary's, Unix time
// gave a floor 4 s too low, and the promoted standby issued its primary's
// ids again. A record now means the same to every reader:
//   - its milliseconds raise the floor as they are; a worker id other than
//     the record's changes nothing;
//   - replayed in archive recovery, a record of another epoch than the
//     reader's snowflake.epoch makes the reader refuse ids once promoted
//     (55000, both epochs named) until the two agree: it is not converted.
//     snowflake.walepoch keeps that refusal over restarts (written by redo;
//     removed by redo or the mark worker once the epochs agree);
//   - a 16-byte record does not say its epoch: it is read in the reader's,
//     as 1.2 did, and leaves the refusal as it was.
// A 1.2 standby cannot replay a 24-byte record (its redo stops with a
// PANIC): upgrade standbys before their primary (docs/operations.md,
// "Upgrading a primary and its standbys").
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
#include "../core/position.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/promotion.hpp"
#include "../core/reservation.hpp"
#include "../core/stats_snapshot.hpp"
#include "../core/time.hpp"
#include "../core/wal_record.hpp"
#include "wal.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "layout_glue.hpp"
#include "lease_state.hpp"
#include "mark_file.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"
#include "stats.hpp"

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
constexpr const char* kEpochFile = "snowflake.walepoch";

// The epoch of a snowflake.walepoch that cannot be read.
constexpr int64_t kUnreadableEpoch = INT64_MIN;

// An id-space millisecond as Unix milliseconds, for the epoch in effect.
int64_t to_unix_ms(int64_t ms) { return core::id_ms_to_unix_ms(ms, epoch_unix_us()); }

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

// Whether the refusal for a mark that did not come through the WAL holds.
bool refusing_no_mark() { return (pg_atomic_read_u32(&shared->wal.refusing) & kRefuseNoMark) != 0; }

// Ends the refusal for a mark that did not come through the WAL (not the
// epoch refusal); the caller removes the file if *was_on_disk. Lock held.
void end_refusal_locked(bool* was_on_disk) {
    WalMarkShared& w = shared->wal;
    *was_on_disk = w.refusal_on_disk;
    w.refusal_on_disk = false;
    pg_atomic_fetch_and_u32(&w.refusing, ~kRefuseNoMark);
}

// An epoch as the text snowflake.epoch takes: "2025-01-01T00:00:00.000Z".
void format_epoch(char* buf, size_t cap, int64_t unix_us) {
    core::Rfc3339Style style;
    style.micros_when_present = true;
    if (core::format_rfc3339(buf, cap, core::utc_from_unix_us(unix_us), style) == 0)
        snprintf(buf, cap, "%" PRId64 " us after 1970-01-01", unix_us);
}

// Writes snowflake.walepoch (the epoch refusal, naming the records' epoch)
// durably, or removes it. Reports failures at elevel.
bool write_epoch_file(int64_t records_epoch_unix_us, int elevel) {
    char text[32];
    snprintf(text, sizeof(text), "%" PRId64 "\n", records_epoch_unix_us);
    return write_small_file(kEpochFile, text, elevel);
}
bool remove_epoch_file(int elevel) { return durable_unlink(kEpochFile, elevel) == 0; }

// Raises the epoch refusal's error.
void refuse_other_epoch() {
    LWLockAcquire(shared->lock, LW_SHARED);
    const int64_t records_epoch = shared->wal.records_epoch_unix_us;
    LWLockRelease(shared->lock);
    char theirs[48], ours[48];
    format_epoch(ours, sizeof(ours), epoch_unix_us());
    if (records_epoch == kUnreadableEpoch)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("snowflake.epoch differs from the epoch of the replayed snowflake WAL records"),
                 errdetail("This server replayed snowflake WAL records whose milliseconds count from another "
                           "epoch than its snowflake.epoch, %s; the file %s that names that epoch "
                           "cannot be read.",
                           ours, kEpochFile),
                 errhint("Set snowflake.epoch to the former primary's, remove %s from the data directory "
                         "and restart the server (docs/operations.md).",
                         kEpochFile)));
    format_epoch(theirs, sizeof(theirs), records_epoch);
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("snowflake.epoch differs from the epoch of the replayed snowflake WAL records"),
             errdetail("This server replayed snowflake WAL records whose milliseconds count from %s, "
                       "its former primary's snowflake.epoch; its own is %s. Ids counted from another "
                       "epoch can repeat its former primary's.",
                       theirs, ours),
             errhint("Set snowflake.epoch to '%s', the former primary's, and restart the server; every "
                     "node that issues ids into the same tables needs the same epoch "
                     "(docs/operations.md).",
                     theirs)));
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

void replay_reservation(const core::WalReservation& rec) {
    // A record of another layout: this server would go on to issue ids that
    // can equal the primary's; stops unless it is a change (layout_glue.cpp).
    check_record_layout(rec.layout, shared->wal.archive_recovery);
    const core::ReplayedReservation r = core::read_reservation(rec, epoch_unix_us());
    const int64_t ms = r.until_ms;
    WalMarkShared& w = shared->wal;

    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    w.replayed++;
    bool remove_refusal = false;
    // A record replayed in archive recovery: the mark comes through the WAL.
    const bool mark_marker = w.archive_recovery && !w.marker_on_disk;
    if (w.archive_recovery && refusing_no_mark()) end_refusal_locked(&remove_refusal);
    // The epoch refusal (core/promotion.hpp), and what snowflake.walepoch
    // must say: only the startup process writes it during recovery.
    const bool epoch_was = (pg_atomic_read_u32(&w.refusing) & kRefuseEpoch) != 0;
    const bool epoch_now = core::epoch_refusal_after_record(epoch_was, r.epoch, w.archive_recovery);
    if (epoch_now && r.epoch == core::RecordEpoch::Differs) w.records_epoch_unix_us = rec.epoch_unix_us;
    if (epoch_now && !epoch_was) pg_atomic_fetch_or_u32(&w.refusing, kRefuseEpoch);
    if (!epoch_now && epoch_was) pg_atomic_fetch_and_u32(&w.refusing, ~kRefuseEpoch);
    const int64_t records_epoch = w.records_epoch_unix_us;
    bool raised = false;
    core::Mark mark;
    const core::ReplayedFloor f = core::replayed_floor(ms, rec.window_ms, issued_ms(), w.archive_recovery);
    if (f.raise) {
        // Every word in use (snowflake.http_worker_id's too); the worker ids stay.
        (void)raise_floor_locked(f.floor_ms, f.grace_ms, kFloorReplayed);
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
    if (epoch_now && (!w.epoch_file_on_disk || w.epoch_file_unix_us != records_epoch)) {
        if (write_epoch_file(records_epoch, ERROR)) {
            w.epoch_file_on_disk = true;
            w.epoch_file_unix_us = records_epoch;
        }
        if (!epoch_was) {
            char theirs[48], ours[48];
            format_epoch(theirs, sizeof(theirs), records_epoch);
            format_epoch(ours, sizeof(ours), epoch_unix_us());
            ereport(WARNING,
                    (errmsg("snowflake WAL records count from another epoch than snowflake.epoch"),
                     errdetail("The record replayed counts from %s, this server's snowflake.epoch is %s; "
                               "once promoted, this server refuses ids until the two agree.",
                               theirs, ours),
                     errhint("Set snowflake.epoch to '%s' on this server and restart it.", theirs)));
        }
    } else if (!epoch_now && w.epoch_file_on_disk && remove_epoch_file(ERROR)) {
        w.epoch_file_on_disk = false;
    }
    if (remove_refusal) remove_refusal_file(LOG);
}

// A record's reservation, of either layout; false if it is none.
bool decode_record(XLogReaderState* record, core::WalReservation* out) {
    const uint8 info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
    return info == kInfoReserve &&
           core::decode_reservation(reinterpret_cast<const uint8_t*>(XLogRecGetData(record)),
                                    XLogRecGetDataLen(record), out);
}

// The resource manager's redo: replays a reservation record.
void rmgr_redo(XLogReaderState* record) {
    core::WalReservation rec;
    if (!decode_record(record, &rec))
        elog(PANIC, "snowflake_redo: unknown record (info 0x%02X, %u bytes)",
             XLogRecGetInfo(record) & ~XLR_INFO_MASK, static_cast<unsigned>(XLogRecGetDataLen(record)));
    replay_reservation(rec);
}

// The resource manager's description of a record (pg_walinspect), from the
// record alone: "until <time>, epoch <epoch>, window N ms, worker N" (1.1
// and 1.2: "until <time> (Unix time), window ...").
void rmgr_desc(StringInfo buf, XLogReaderState* record) {
    core::WalReservation rec;
    if (!decode_record(record, &rec)) return;
    if (rec.epoch_known) {
        char epoch[48];
        format_epoch(epoch, sizeof(epoch), rec.epoch_unix_us);
        const int64_t unix_ms = core::id_ms_to_unix_ms(rec.until_ms, rec.epoch_unix_us);
        appendStringInfo(buf, "until %s, epoch %s", timestamptz_to_str(unix_ms * 1000 - kPgEpochUnixUs),
                         epoch);
    } else {
        appendStringInfo(buf, "until %s (Unix time)",
                         timestamptz_to_str(rec.until_ms * 1000 - kPgEpochUnixUs));
    }
    appendStringInfo(buf, ", window %d ms, worker %d", rec.window_ms, rec.worker_id);
    core::Geometry g{};  // a layout other than twitter, as its widths
    if (rec.layout != 0 && core::geometry_of_mark_code(rec.layout, &g))
        appendStringInfo(buf, ", layout %d/%d/%d", g.time_bits, g.worker_bits, g.sequence_bits);
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
    w.records_epoch_unix_us = 0;
    w.epoch_file_on_disk = false;
    w.epoch_file_unix_us = 0;
    pg_atomic_init_u32(&w.refusing, 0);

    // An epoch refusal kept from an earlier run of this data directory: it
    // holds while this server's epoch differs from the one it names, and
    // an unreadable file refuses rather than not at all.
    if (FILE* f = fopen(kEpochFile, "r")) {
        long long epoch = 0;
        const bool parsed = fscanf(f, "%lld", &epoch) == 1;
        fclose(f);
        w.epoch_file_on_disk = true;
        w.epoch_file_unix_us = parsed ? epoch : kUnreadableEpoch;
        if (!parsed || core::epoch_refusal_at_start(true, epoch, epoch_unix_us())) {
            w.records_epoch_unix_us = w.epoch_file_unix_us;
            pg_atomic_fetch_or_u32(&w.refusing, kRefuseEpoch);
        }
    }
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
        pg_atomic_fetch_or_u32(&w.refusing, kRefuseNoMark);
        return;
    }
    // The start of an archive recovery whose end (a promotion) would find
    // no mark that came through the WAL.
    if (core::arm_promotion_refusal(w.archive_recovery, w.marker_on_disk,
                                    worker_id >= 0 && !leasing_configured()))
        pg_atomic_fetch_or_u32(&w.refusing, kRefuseNoMark);
}

// Logs a reservation in the WAL, flushes it, waits for the synchronous
// standbys (wal.hpp).
bool log_reservation(int64_t until_ms, int64_t window_ms) {
    LWLockAcquire(shared->lock, LW_SHARED);
    const int64_t floor = std::max(shared->floor_ms, shared->loaded.ms);
    LWLockRelease(shared->lock);
    core::WalReservation rec;
    rec.until_ms = std::max(until_ms, floor);
    rec.epoch_known = true;
    rec.epoch_unix_us = epoch_unix_us();
    rec.window_ms = static_cast<int32>(std::clamp<int64_t>(window_ms, 0, core::kMaxWindowMs));
    rec.worker_id = current_worker_id();
    rec.layout = core::mark_layout_code(node_geometry());
#ifndef SNOWFLAKE_WAL_RECORD_12
    uint8_t data[core::kReserveRecordSizeLayout];
    const size_t data_len = core::encode_reservation(rec, data);
#else
    // The record of 1.1 and 1.2 (16 bytes, the end in Unix time, no epoch),
    // in a build made only by test/standby.sh, which stands in for a 1.2
    // primary with it; no package defines this.
    struct {
        int64 until_unix_ms;
        int32 window_ms;
        int32 worker_id;
    } data{to_unix_ms(rec.until_ms), rec.window_ms, rec.worker_id};
    static_assert(sizeof(data) == core::kReserveRecordSize12, "the 1.2 layout");
    const size_t data_len = sizeof(data);
#endif
    XLogBeginInsert();
    XLogRegisterData(reinterpret_cast<char*>(&data), static_cast<uint32>(data_len));
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
    if (refusing_no_mark()) {
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
                if (refusing_no_mark()) w.refusal_on_disk = true;
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
    // An epoch refusal that no longer holds (this server's epoch was set to
    // the records'): its file goes.
    const bool epoch_refused = (pg_atomic_read_u32(&w.refusing) & kRefuseEpoch) != 0;
    if (w.epoch_file_on_disk && !epoch_refused && remove_epoch_file(LOG)) {
        w.epoch_file_on_disk = false;
        ereport(LOG, (errmsg("snowflake.epoch agrees with the replayed snowflake WAL records again")));
    }
}

// Raises the refusal error while one holds (wal.hpp).
void check_replicated_mark(bool count) {
    const uint32 why = pg_atomic_read_u32(&shared->wal.refusing);
    if (likely(why == 0)) return;
    if ((why & kRefuseEpoch) != 0) {
        if (count) count_refusal(core::Refusal::WalEpoch);
        refuse_other_epoch();
    }
    if ((why & kRefuseLostMark) != 0) {
        if (count) count_refusal(core::Refusal::LostMark);
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
    }
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    const int64_t bound = refusal_bound_locked();
    const bool refusing = refusing_no_mark();
    LWLockRelease(shared->lock);
    if (!refusing || unix_now_us() / 1000 > bound) return;
    const TimestampTz until = bound * 1000 - kPgEpochUnixUs;
    char* until_text = pstrdup(timestamptz_to_str(until));
    if (count) count_refusal(core::Refusal::ReplicatedMark);
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
    if ((pg_atomic_read_u32(&shared->wal.refusing) & (kRefuseNoMark | kRefuseLostMark)) == 0) return;
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
