// The mark worker: a background worker that keeps the high-water mark
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
// and SIGTERM between writes, and at a fast shutdown exits quietly.

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "snowflake.hpp"

extern "C" {
#include "pgstat.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "utils/pidfile.h"

PGDLLEXPORT void snowflake_mark_worker_main(Datum arg);
}

namespace core = snowflake::core;

namespace snowflake::pg {
namespace {

// How often the worker looks at the clock when nobody wakes it, and how
// soon it tries again after a failed write.
constexpr long kTickMs = 100;
constexpr long kRetryMs = 100;

void detach_worker(int, Datum) {
    if (shared == nullptr) return;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    shared->worker_latch = nullptr;
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
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
    // mark a step back (mark.cpp).
    mark.window_ms = core::reservation_lead(plan.until_ms, now, window);
    const char* step = "";
    const int64_t t0 = monotonic_us();
    const int err = write_mark(mark, &step);
    // Then into the WAL, flushed (wal.cpp), so that standbys replay it and a
    // promoted one starts above it. An error here ends the worker (it is
    // started again), before anything is published.
    if (err == 0) log_reservation(plan.until_ms, mark.window_ms);
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

// The postmaster marks its lock file "stopping" before it signals its
// children (snowflake.hpp).
bool postmaster_stopping() {
    FILE* f = fopen("postmaster.pid", "r");
    if (f == nullptr) return true;
    char line[MAXPGPATH];
    int n = 0;
    bool stopping = false;
    while (fgets(line, sizeof(line), f) != nullptr) {
        if (++n == LOCK_FILE_LINE_PM_STATUS) {
            stopping = strncmp(line, PM_STATUS_STOPPING, strlen(PM_STATUS_STOPPING)) == 0;
            break;
        }
    }
    fclose(f);
    return stopping;
}

int64_t demand_ms() {
    return static_cast<int64_t>(pg_atomic_read_u64(&shared->demand_ms_plus1)) - 1;
}

void publish_reservation_locked() {
    auto until = static_cast<int64_t>(pg_atomic_read_u64(&shared->local_reserved_ms));
    if (shared->lease.leasing) {
        const int64_t etcd =
            static_cast<int64_t>(pg_atomic_read_u64(&shared->lease.etcd_reserved_ms_plus1)) - 1;
        until = core::issue_limit_ms(until, etcd);
    }
    // A fence (shmem.cpp) holds ids at the fenced millisecond.
    const auto fence_plus1 = static_cast<int64_t>(pg_atomic_read_u64(&shared->fence_ms_plus1));
    if (fence_plus1 > 0) until = core::issue_limit_ms(until, fence_plus1 - 1);
    pg_atomic_write_u64(&shared->reserved_until_ms, static_cast<uint64>(until));
}

void raise_demand(int64_t ms) {
    const auto want = static_cast<uint64>(ms + 1);
    uint64 cur = pg_atomic_read_u64(&shared->demand_ms_plus1);
    while (cur < want && !pg_atomic_compare_exchange_u64(&shared->demand_ms_plus1, &cur, want)) {
    }
}

void register_worker(const char* function, const char* name, BgWorkerStartTime start, int restart_s) {
    BackgroundWorker worker;
    std::memset(&worker, 0, sizeof(worker));
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS;  // shared memory only, no database
    worker.bgw_start_time = start;
    worker.bgw_restart_time = restart_s;  // restarted this long after it exits with code 1
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "snowflake");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "%s", function);
    snprintf(worker.bgw_name, BGW_MAXLEN, "%s", name);
    snprintf(worker.bgw_type, BGW_MAXLEN, "%s", name);
    RegisterBackgroundWorker(&worker);
}

void register_mark_worker() { register_worker("snowflake_mark_worker_main", "snowflake high-water mark"); }

}  // namespace snowflake::pg

extern "C" void snowflake_mark_worker_main(Datum) {
    namespace sp = snowflake::pg;
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();

    before_shmem_exit(sp::detach_worker, 0);
    LWLockAcquire(sp::shared->lock, LW_EXCLUSIVE);
    sp::shared->worker_latch = MyLatch;
    LWLockRelease(sp::shared->lock);

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
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        sleep_ms = sp::reserve_once(&last_logged_err);
    }
    // At a server shutdown, exit quietly (code 0). Stopped otherwise (a
    // SIGTERM sent to this pid; pg_terminate_backend() cannot reach a worker
    // without a database connection), exit with code 1: the postmaster starts
    // the worker again after bgw_restart_time; code 0 would unregister it.
    proc_exit(sp::postmaster_stopping() ? 0 : 1);
}
