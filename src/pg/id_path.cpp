// The id path: issues ids from a generator's shared position word (SQL's,
// or the HTTP endpoint's own with snowflake.http_worker_id), by the
// lock-free fast path or the core's state machine under the lock, and waits
// (next millisecond, clock, floor, reservation) or refuses (clock, lease,
// clock health, mark) on the way. Both generators take the same path, the
// same waits and refusals; only the word differs.
//
// Every function here keeps only plain data in scope: an ereport() may jump
// out of any of them at any point after the lock is released.
//
// Every wait on the id path sleeps in slices of at most kSliceMs (a backend
// spins, checking for interrupts, through the last 2 ms before the
// millisecond it waits for: wait_slice) and decides
// again after each one, with the clock read anew: cancel, terminate and
// statement_timeout end it within a slice, and a clock that steps back
// further while a call waits is an error at once, not a longer wait.

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "../core/backup.hpp"
#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/id_layout.hpp"
#include "../core/layout.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/position.hpp"
#include "../core/stats_snapshot.hpp"
#include "id_path.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "lease_state.hpp"
#include "mark_file.hpp"
#include "position_words.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"
#include "stats.hpp"
#include "wal.hpp"

extern "C" {
#include "access/xlog.h"
#include "common/pg_prng.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "utils/builtins.h"
}

namespace core = snowflake::core;

namespace snowflake::pg {

namespace {

// The longest wait between two decisions.
constexpr int64_t kSliceMs = 5;
// How long a backend waits for a reservation while no mark worker runs (the
// postmaster restarts it within a second) before it reports that.
constexpr int64_t kNoMarkWorkerGraceUs = 5 * 1000 * 1000;
// How long a caller whose clock stepped back waits for a backup worker id
// (snowflake.clock_backwards = failover) before it refuses (SF001).
constexpr int64_t kBackupWaitUs = 5 * 1000 * 1000;
// How long a caller waits for a reservation in the coordinator whose writes
// fail before it reports the failure (SF003).
constexpr int64_t kCoordErrorGraceUs = 2 * 1000 * 1000;

// The caller's limit on a wait (IdWait::deadline_us).
void check_wait_limit(const IdWait& wait) {
    if (wait.deadline_us == 0) return;
    if (ShutdownRequestPending)
        ereport(ERROR, (errcode(ERRCODE_ADMIN_SHUTDOWN), errmsg("the server is shutting down"),
                        errhint("Ask another node, or this one again once it is back.")));
    if (monotonic_us() >= wait.deadline_us)
        ereport(ERROR,
                (errcode(ERRCODE_QUERY_CANCELED), errmsg("ids were not ready within %lld ms",
                                                          static_cast<long long>(kRequestWaitLimitMs)),
                 errdetail("The generator is waiting for the clock, the floor or a reservation."),
                 errhint("Retry the request; GET /healthz says why the node is not ready.")));
}

// snowflake.max_clock_error_ms: refuses ids (SF004) while the kernel reports
// the clock unsynchronised or its maximum error above the limit. The
// kernel is asked at most every kClockCheckIntervalMs per backend.
void check_clock_health() {
    static core::ClockHealth cached;
    static int64_t checked_ms = -1;
    const int64_t mono_ms = monotonic_us() / 1000;
    if (checked_ms < 0 || core::clock_check_due(mono_ms, checked_ms)) {
        cached = read_clock_health();
        checked_ms = mono_ms;
    }
    const core::ClockVerdict v = core::judge_clock(cached, max_clock_error_ms);
    if (!v.refuse) return;
    pg_atomic_fetch_add_u64(&shared->stats.clock_health_refusals, 1);
    count_refusal(core::Refusal::ClockUnhealthy);
    const bool unsynced = v.problem != core::ClockProblem::ErrorTooLarge;
    ereport(ERROR,
            (errcode(ERRCODE_SF_CLOCK_UNHEALTHY),
             errmsg(v.problem == core::ClockProblem::Unknown ? "system clock synchronisation state is unknown"
                    : unsynced                                ? "system clock is not synchronised"
                                                              : "system clock error is too large"),
             errdetail("%s", v.reason),
             unsynced ? errhint("Check the time synchronisation of this server (chrony with \"rtcsync\", "
                                "or ntpd); ids resume once the kernel reports the clock synchronised, or "
                                "set snowflake.max_clock_error_ms to 0 to issue ids without this check.")
                      : errhint("Check the time synchronisation of this server (chronyc tracking, or ntpq "
                                "-p); ids resume when the kernel's maximum error is at most "
                                "snowflake.max_clock_error_ms (%d ms).",
                                max_clock_error_ms)));
}

// Waits for the clock to reach the start of millisecond target_ms, for at
// most one slice: returns early when the clock steps back, so that the
// caller decides again. Interruptible; spins for the last two milliseconds
// (sleeps them in precise pg_usleep() steps where the caller yields).
void wait_slice(int64_t target_ms, int64_t epoch_us, const IdWait& wait) {
    const int64_t target_us = target_ms * 1000;
    const int64_t start_us = unix_now_us() - epoch_us;
    const int64_t slice_end = monotonic_us() + kSliceMs * 1000;
    for (;;) {
        CHECK_FOR_INTERRUPTS();
        const int64_t now_us = unix_now_us() - epoch_us;
        if (now_us >= target_us || now_us < start_us - 1000 || monotonic_us() >= slice_end) return;
        const int64_t remaining_us = target_us - now_us;
        if (remaining_us > 2000) {
            const long sleep_ms = static_cast<long>(std::min<int64_t>((remaining_us - 1000) / 1000, kSliceMs));
            (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, sleep_ms,
                            PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
        } else if (wait.yields) {
            // A signal ends the sleep early; the loop then checks again.
            pg_usleep(static_cast<long>(remaining_us));
        }
    }
}

// Raises the error of a clock the state machine refused (SF001, SF002).
// backup_note: why no backup worker id took over (failover), or null.
void report_clock(const core::Next& r, int64_t now_ms, const char* backup_note = nullptr) {
    if (r.status == core::Status::ClockBehind) {
        count_refusal(core::Refusal::ClockBehind);
        const TimestampTz resume = ms_to_timestamptz(r.wait_until_ms);
        // timestamptz_to_str() returns a static buffer: copy the first one.
        char* last_text = pstrdup(timestamptz_to_str(ms_to_timestamptz(now_ms + r.behind_ms)));
        const char* floor_text = shared->floor_source == kFloorHandover
                                     ? (zookeeper_configured() ? "The mark in ZooKeeper of the worker id's previous holder"
                                                               : "The mark in etcd of the worker id's previous holder")
                                 : shared->floor_source == kFloorAdvanced
                                     ? "The high-water mark raised by snowflake_advance_floor()"
                                 : shared->floor_source == kFloorReplayed
                                     ? "The high-water mark replayed from the primary's WAL"
                                     : "The high-water mark of the previous run";
        char backup_text[kErrorTextSize + 64] = "";
        if (backup_note != nullptr) snprintf(backup_text, sizeof(backup_text), " No backup worker id took over: %s.", backup_note);
        ereport(ERROR,
                (errcode(ERRCODE_SF_CLOCK_BEHIND),
                 errmsg("system clock moved backwards by %lld ms", static_cast<long long>(r.behind_ms)),
                 r.at_floor ? errdetail("%s reaches %s; snowflake.clock_tolerance_ms is %d.%s", floor_text, last_text,
                                        clock_tolerance_ms, backup_text)
                            : errdetail("Ids have been issued up to %s; snowflake.clock_tolerance_ms is %d.%s",
                                        last_text, clock_tolerance_ms, backup_text),
                 errhint("Check the time synchronisation of this server; ids resume when the clock "
                         "reaches %s.",
                         timestamptz_to_str(resume))));
    }
    const char* when = r.status == core::Status::BeforeEpoch ? "before" : "past the end of";
    count_refusal(core::Refusal::ClockOutOfRange);
    ereport(ERROR, (errcode(ERRCODE_SF_CLOCK_OUT_OF_RANGE),
                    errmsg("system clock is %s the id range of snowflake.epoch", when),
                    errdetail("The clock reads %lld ms from the epoch %s; ids cover 0 to %lld ms.",
                              static_cast<long long>(now_ms), timestamptz_to_str(current_epoch()),
                              static_cast<long long>(node_geometry().max_ms)),
                    errhint("Check the system clock, or choose a snowflake.epoch that covers it.")));
}

// One step of the state machine under the lock: the core's slow path
// (core::slow_issue(), the protocol of core/position.hpp) over generator gen's
// word, with the floor and the counters kept in shared memory (one floor and
// one set of counters for both generators).
core::Next slow_step(Generator gen, const core::Config& config, int64_t epoch_us, int32_t max_count,
                     int64_t* now_out) {
    PositionWords words(gen, epoch_us);
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    core::GeneratorState g;
    g.floor_ms = shared->floor_ms;
    g.floor_grace_ms = shared->floor_grace_ms;
    g.counters = shared->stats.generator;
    const core::Next r = core::slow_issue(node_geometry(), words, g, config, max_count, now_out);
    shared->stats.generator = g.counters;
    LWLockRelease(shared->lock);
    return r;
}

}  // namespace

// Raises an error unless this server may issue ids at all (id_path.hpp).
void require_generator() {
    require_shared();
    if (worker_id < 0 && !shared->lease.leasing)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake.worker_id is not set"),
                 errhint("Set snowflake.worker_id in postgresql.conf to a number from 0 to %d "
                         "that no other node uses, then restart the server.",
                         std::min<int32_t>(core::kMaxWorker, node_geometry().max_worker))));
    if (RecoveryInProgress())
        ereport(ERROR,
                (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                 errmsg("cannot issue snowflake ids during recovery"),
                 errdetail("This server is a standby or is still replaying WAL."),
                 errhint("Issue ids on the primary. A standby made from a base backup carries its "
                         "primary's snowflake.worker_id: give it a worker id of its own before "
                         "promoting it.")));
    if (shared->mark_status == kMarkCorrupt) {
        errno = shared->mark_errno;
        ereport(ERROR,
                (shared->mark_errno != 0 ? errcode_for_file_access() : errcode(ERRCODE_DATA_CORRUPTED),
                 errmsg("snowflake high-water mark file \"%s\" is unusable", kMarkFile),
                 errdetail("%s", shared->mark_problem),
                 errhint("Ids are refused so that none is issued twice. Follow \"Repairing the "
                         "high-water mark\" in docs/operations.md, then restart the server.")));
    }
}

// Asks for a reservation and waits a slice for it (id_path.hpp).
void await_reservation(int64_t needed_ms, ReservationWait* w) {
    raise_demand(needed_ms);
    ConditionVariablePrepareToSleep(&shared->reservation_cv);
    char coord_error[kErrorTextSize];
    LWLockAcquire(shared->lock, LW_SHARED);
    const WriteReport report = shared->report;
    Latch* latch = shared->mark_worker_latch;
    Latch* lease_latch = shared->lease.lease_worker_latch;
    const uint64_t coord_attempts = shared->lease.mark_attempts;
    snprintf(coord_error, sizeof(coord_error), "%s", shared->lease.mark_error);
    LWLockRelease(shared->lock);
    if (!w->asked) {
        w->asked = true;
        w->since_us = monotonic_us();
        w->attempts = report.attempts;
        w->coord_attempts = coord_attempts;
        pg_atomic_fetch_add_u64(&shared->stats.reservation_waits, 1);
    }
    if (latch != nullptr) SetLatch(latch);
    if (lease_latch != nullptr) SetLatch(lease_latch);

    if (static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms)) >= needed_ms) {
        ConditionVariableCancelSleep();
        return;
    }
    if (report.attempts > w->attempts && report.err != 0) {
        ConditionVariableCancelSleep();
        count_refusal(core::Refusal::MarkWrite);
        errno = report.err;
        ereport(ERROR,
                (errcode_for_file_access(),
                 errmsg("could not write snowflake high-water mark file \"%s\" (%s): %m", kMarkFile,
                        report.step),
                 errdetail("No id is issued beyond the mark on disk, so that none is issued twice "
                           "after a crash."),
                 errhint("Check the data directory's file system; ids resume as soon as the mark "
                         "can be written.")));
    }
    // A coordinator fails for a moment when it elects a leader: only a failure that
    // outlasts kCoordErrorGraceUs is an error for the caller.
    if (coord_attempts > w->coord_attempts && coord_error[0] != '\0' &&
        monotonic_us() - w->since_us > kCoordErrorGraceUs) {
        ConditionVariableCancelSleep();
        count_refusal(core::Refusal::CoordReservation);
        ereport(ERROR, (errcode(ERRCODE_SF_NO_LEASE),
                        errmsg("could not extend the worker id's reservation in %s", coordinator_display()),
                        errdetail("%s.", coord_error),
                        errhint("Check that %s is reachable at %s; no id is "
                                "issued beyond the reservation in %s, so that a later holder of the "
                                "worker id never issues it again.",
                                coordinator_display(), coordinator_setting(), coordinator_display())));
    }
    if (latch == nullptr && monotonic_us() - w->since_us > kNoMarkWorkerGraceUs) {
        ConditionVariableCancelSleep();
        count_refusal(core::Refusal::MarkWorkerMissing);
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("snowflake high-water mark worker is not running"),
                 errdetail("Ids past the current reservation need the worker to write the mark."),
                 errhint("Check the server log for why the worker exited; the server starts it "
                         "again within a second.")));
    }
    (void)ConditionVariableTimedSleep(&shared->reservation_cv, kSliceMs, PG_WAIT_EXTENSION);
    ConditionVariableCancelSleep();
}

// Asks the lease worker for a backup worker id and waits a slice for it
// (id_path.hpp).
const char* await_backup(BackupWait* w, char (&why)[kErrorTextSize]) {
    // On a backup already, the clock behind the backup's ids too: the lease
    // worker gives it back and takes another (core::plan_backup).
    LeaseShared& l = shared->lease;
    ConditionVariablePrepareToSleep(&shared->reservation_cv);
    LWLockAcquire(shared->lock, LW_SHARED);
    const uint64_t attempts = l.backup_attempts;
    snprintf(why, sizeof(why), "%s", l.backup_error);
    Latch* lease_latch = l.lease_worker_latch;
    LWLockRelease(shared->lock);
    if (!w->asked) {
        w->asked = true;
        w->since_us = monotonic_us();
        w->attempts = attempts;
    }
    if (attempts > w->attempts && why[0] != '\0') {
        ConditionVariableCancelSleep();
        return why;  // an attempt made after this call asked found none
    }
    if (monotonic_us() - w->since_us > kBackupWaitUs) {
        ConditionVariableCancelSleep();
        const int on_backup = static_cast<int>(pg_atomic_read_u32(&l.backup_worker_plus1)) - 1;
        if (on_backup >= 0 && lease_latch != nullptr)
            snprintf(why, sizeof(why), "the node is on backup worker id %d, the clock is behind its ids too, and "
                     "no other was taken within %lld s", on_backup, static_cast<long long>(kBackupWaitUs / 1000000));
        else
            snprintf(why, sizeof(why), "none was taken within %lld s (the lease worker %s)",
                     static_cast<long long>(kBackupWaitUs / 1000000),
                     lease_latch != nullptr ? "did not finish an attempt" : "is not running");
        return why;
    }
    // The lease worker judges the clock again with this call's tolerance.
    pg_atomic_write_u32(&l.backup_wanted, static_cast<uint32>(clock_tolerance_ms) + 1);
    if (lease_latch != nullptr) SetLatch(lease_latch);
    (void)ConditionVariableTimedSleep(&shared->reservation_cv, kSliceMs, PG_WAIT_EXTENSION);
    ConditionVariableCancelSleep();
    return nullptr;
}

// A generator's state, position before clock (id_path.hpp).
core::GeneratorState load_state(Generator gen, int64_t epoch_us, uint64* cur, int64_t* now) {
    *cur = pg_atomic_read_u64(position_word(gen));
    pg_read_barrier();  // the position is read before the clock
    *now = now_ms(epoch_us);
    core::GeneratorState g;
    g.last_ms = core::packed_ms(node_geometry(), *cur);
    g.sequence = core::packed_sequence(node_geometry(), *cur);
    g.reserved_until_ms = static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms));
    g.floor_ms = shared->floor_ms;
    g.floor_grace_ms = shared->floor_grace_ms;
    g.counters = shared->stats.generator;
    return g;
}

// Issues up to max_count ids of one millisecond, waiting as the core asks.
core::Next issue_ids(Generator gen, int32_t max_count, const IdWait& wait) {
    require_generator();
    check_replicated_mark();  // wal.cpp: a promotion without a replicated mark
    if (max_clock_error_ms > 0) check_clock_health();
    core::Config config{0, clock_tolerance_ms};  // slow_step() takes the worker id from the word
    // snowflake.sequence_spread: a later millisecond's first sequence, drawn
    // once per call (this backend's PRNG, seeded at its start).
    if (sequence_spread > 1)
        config.new_ms_sequence = core::first_sequence(sequence_spread, pg_prng_uint32(&pg_global_prng_state));
    // A backup worker id takes over the SQL generator's ids only: the HTTP
    // one (static worker ids only) refuses a clock step (SF001).
    config.failover = clock_backwards == static_cast<int>(core::ClockPolicy::Failover) && shared->lease.leasing &&
                      gen == Generator::Sql;
    const int64_t epoch_us = epoch_unix_us();

    if (max_count == 1) {
        // Lock-free fast path (core::fast_issue()); a few lost races fall
        // through to the lock.
        PositionWords words(gen, epoch_us);
        const core::Geometry& geo = node_geometry();
        for (int attempt = 0; attempt < 3; attempt++) {
            core::Next r;
            const core::Fast f = core::fast_issue(geo, words, &r.first_id, config.new_ms_sequence);
            if (f == core::Fast::Issued) {
                count_ids(1);
                r.status = core::Status::Issued;
                r.count = 1;
                return r;
            }
            // No lease, or the swap came after its deadline may have
            // passed (its id is a gap: another node may hold the worker
            // id by now).
            if (f == core::Fast::NoLease || f == core::Fast::LeaseEnded) refuse_no_lease();
        }
    }
    ReservationWait reservation;
    BackupWait backup;
    for (;;) {
        int64_t now = 0;
        const core::Next r = slow_step(gen, config, epoch_us, max_count, &now);
        switch (r.status) {
            case core::Status::Issued:
                count_ids(static_cast<uint64_t>(r.count));
                return r;
            case core::Status::WaitNextMs:
            case core::Status::WaitClock:
            case core::Status::WaitFloor: wait_slice(r.wait_until_ms, epoch_us, wait); break;
            case core::Status::ClockBehind:
                // snowflake.clock_backwards = failover: a backup worker id
                // takes over, or the refusal says why none did.
                if (config.failover) {
                    char why[kErrorTextSize];
                    if (const char* note = await_backup(&backup, why)) {
                        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
                        shared->stats.generator.clock_backwards_errors++;
                        LWLockRelease(shared->lock);
                        report_clock(r, now, note);
                    }
                    break;
                }
                report_clock(r, now);
                break;
            case core::Status::BeforeEpoch:
            case core::Status::EndOfTime:
                report_clock(r, now);
                break;
            case core::Status::NeedReservation:
                // No reservation covers the clock (the first id after start,
                // or the clock moved past it): the worker writes one.
                await_reservation(now, &reservation);
                break;
            case core::Status::Fenced:
                // No tenure in force: no lease (refused below), or one that
                // is coming back; the lease worker broadcasts every change.
                if (!lease_allows_ids()) refuse_no_lease();
                ConditionVariablePrepareToSleep(&shared->reservation_cv);
                (void)ConditionVariableTimedSleep(&shared->reservation_cv, kSliceMs, PG_WAIT_EXTENSION);
                ConditionVariableCancelSleep();
                break;
            case core::Status::LeaseEnded:
                // The ids were swapped after the lease's deadline may have
                // passed: another node may hold the worker id by now. They
                // are given up (gaps) and the call refused.
                refuse_no_lease();
        }
        config.repeat = true;
        CHECK_FOR_INTERRUPTS();
        // A wait may outlast the lease (a change of hands moves the word).
        if (!lease_allows_ids()) refuse_no_lease();
        check_wait_limit(wait);
    }
}

}  // namespace snowflake::pg
