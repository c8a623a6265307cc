// The mark worker: the background worker process that keeps the high-water mark
// reservation ahead of the clock, so that no backend ever writes or fsyncs
// the mark on the id path.
//
// Each turn of its loop asks the core (core/reservation.hpp) whether to
// write: when less than half a window is left of a reservation the clock is
// inside (idle servers too), or when a backend waits beyond the reservation.
// A write goes to disk first (the mark file, then the WAL record of
// wal.cpp, flushed) and is then published under the lock; the
// window grows with slow storage, so that ids slow down but never stop; a
// failed write is reported to the waiting backends and tried again.
//
// It sleeps on its latch (backends set it when they wait), answers SIGHUP
// and SIGTERM between writes, and at a fast shutdown exits quietly. Under
// synchronous replication a write also waits for the synchronous standbys
// (wal.cpp); SIGTERM ends that wait (ProcDiePending), and the reservation
// is then not published.

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/reservation.hpp"
#include "../core/stats_snapshot.hpp"
#include "mark_worker.hpp"
#include "bgworker.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "mark_file.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"
#include "wal.hpp"

extern "C" {
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"

PGDLLEXPORT void snowflake_mark_worker_main(Datum arg);
}

namespace core = snowflake::core;

namespace snowflake::pg {
namespace {

// How often the worker looks at the clock when nobody wakes it, and how
// soon it tries again after a failed write.
constexpr long kTickMs = 100;
constexpr long kRetryMs = 100;

// SIGTERM: the shutdown request of every worker (bgworker.cpp), and
// ProcDiePending, which is what ends SyncRepWaitForLSN()'s wait for the
// synchronous standbys (a fast shutdown must not hang on a standby that is
// down). InterruptPending stays unset: CHECK_FOR_INTERRUPTS() does not turn
// it into an error.
void handle_sigterm(SIGNAL_ARGS) {
    const int save_errno = errno;
    ShutdownRequestPending = true;
    ProcDiePending = true;
    SetLatch(MyLatch);
    errno = save_errno;
}

// One turn: writes a reservation if the core says so. Returns how long to
// sleep before the next turn.
long reserve_once(int* last_logged_err) {
    tend_refusal();  // wal.cpp: a promotion without a replicated mark
    if ((worker_id < 0 && !shared->lease.leasing) || shared->mark_status == kMarkCorrupt)
        return kTickMs * 10;
    const int64_t now = now_ms(epoch_unix_us());
    const auto reserved = static_cast<int64_t>(pg_atomic_read_u64(&shared->local_reserved_ms));
    const auto window = static_cast<int64_t>(pg_atomic_read_u64(&shared->stats.window_ms));
    // After a failed write, keep trying even with nobody asking: the error
    // stays visible (/healthz, snowflake_ready) until a write succeeds, so
    // an idle node behind a readiness probe recovers by itself.
    LWLockAcquire(shared->lock, LW_SHARED);
    const bool last_failed = shared->report.err != 0;
    LWLockRelease(shared->lock);
    const int64_t demand = last_failed ? std::max(demand_ms(), now) : demand_ms();
    const core::ReservationPlan plan = core::plan_reservation(now, reserved, demand, window);
    if (!plan.write) return kTickMs;

    core::Mark mark;
    mark.ms = plan.until_ms;
    // The file records how far this reservation reaches past the clock (a
    // renewal extends from the old end: up to 1.5 windows), the time a
    // restart after a crash waits out before it calls a clock behind the
    // mark a step back (mark_file.cpp).
    mark.window_ms = core::reservation_lead(plan.until_ms, now, window);
    const char* step = "";
    const int64_t t0 = monotonic_us();
    const int err = write_mark(mark, &step);
    // Then into the WAL, flushed (wal.cpp), so that standbys replay it and a
    // promoted one starts above it. An error here ends the worker (it is
    // started again), before anything is published.
    if (err == 0 && !log_reservation(plan.until_ms, mark.window_ms)) {
        // A shutdown ended the wait for the synchronous standbys.
        ereport(LOG, (errmsg("snowflake reservation not used: the worker stopped before the "
                             "synchronous standbys confirmed it")));
        return 0;
    }
    const int64_t took_ms = (monotonic_us() - t0 + 999) / 1000;

    pg_atomic_write_u64(&shared->stats.last_write_ms, static_cast<uint64>(took_ms));
    pg_atomic_write_u64(&shared->stats.window_ms, static_cast<uint64>(core::reservation_window(took_ms)));
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    WriteReport& r = shared->report;
    r.attempts++;
    r.err = err;
    if (err != 0) r.failures++;
    snprintf(r.step, sizeof(r.step), "%s", err != 0 ? step : "");
    if (err == 0 && plan.until_ms > reserved) {
        // On disk: now ids may be issued in it.
        pg_atomic_write_u64(&shared->local_reserved_ms, static_cast<uint64>(plan.until_ms));
        publish_reservation_locked();
        shared->stats.generator.reservations++;
    }
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);

    if (err != 0) {
        if (err != *last_logged_err) {
            errno = err;
            ereport(LOG, (errcode_for_file_access(),
                          errmsg("could not write snowflake high-water mark file \"%s\" (%s): %m",
                                 kMarkFile, step),
                          errdetail("Ids past the current reservation are refused until a write "
                                    "succeeds; the worker tries again every %ld ms.",
                                    kRetryMs)));
            *last_logged_err = err;
        }
        return kRetryMs;
    }
    if (*last_logged_err != 0) {
        ereport(LOG, (errmsg("snowflake high-water mark file \"%s\" written again", kMarkFile)));
        *last_logged_err = 0;
    }
    // Decide again at once: the clock may have moved on during a slow write.
    return 0;
}

}  // namespace

// Registers the mark worker (_PG_init).
void register_mark_worker() {
    register_background_worker("snowflake_mark_worker_main", "snowflake high-water mark");
}

}  // namespace snowflake::pg

// The mark worker's main function: a write whenever the core asks for one,
// between sleeps on its latch.
extern "C" void snowflake_mark_worker_main(Datum) {
    namespace sp = snowflake::pg;
    sp::start_background_worker(&sp::shared->mark_worker_latch);
    pqsignal(SIGTERM, sp::handle_sigterm);
    int last_logged_err = 0;
    long sleep_ms = 0;
    while (!ShutdownRequestPending) {
        if (sleep_ms > 0) {
            (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, sleep_ms,
                            PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
        }
        CHECK_FOR_INTERRUPTS();
        if (ShutdownRequestPending) break;
        (void)sp::reload_if_requested();
        sleep_ms = sp::reserve_once(&last_logged_err);
    }
    sp::exit_background_worker();
}
