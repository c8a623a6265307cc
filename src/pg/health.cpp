// Readiness: whether ids can be issued now, and why not, without issuing
// one or raising an error (the HTTP worker's /healthz, /readyz, /metrics).

#include <cstdio>
#include <cstring>

#include "../core/backup.hpp"
#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/position.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "health.hpp"
#include "clock.hpp"
#include "ereport_guard.hpp"
#include "guc.hpp"
#include "id_path.hpp"
#include "lease_state.hpp"
#include "mark_file.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"
#include "wal.hpp"

namespace core = snowflake::core;

namespace snowflake::pg {

namespace {

// The clock against generator gen's last id, the floor and the epoch: what
// the state machine would decide for one id now, on a copy (nothing is
// issued).
bool generator_state_ready(Generator gen, char* code, char* reason, size_t len) {
    const int64_t epoch_us = epoch_unix_us();
    uint64 cur = 0;
    int64_t now = 0;
    LWLockAcquire(shared->lock, LW_SHARED);
    core::GeneratorState g = load_state(gen, epoch_us, &cur, &now);
    const WriteReport report = shared->report;
    char coord_error[kErrorTextSize];
    snprintf(coord_error, sizeof(coord_error), "%s", shared->lease.mark_error);
    LWLockRelease(shared->lock);
    core::Config config{core::packed_worker(node_geometry(), cur), clock_tolerance_ms};
    config.geometry = &node_geometry();
    const core::Next r = core::next_ids(g, now, config, 1);
    switch (r.status) {
        case core::Status::ClockBehind: {
            // snowflake.clock_backwards = failover: a probe asks for the
            // backup worker id too, as an id call would, so that a node
            // that only serves ready traffic is not kept out until its
            // clock catches up; the next probe finds it on the backup.
            // On a backup already, the clock is behind its ids too: the
            // lease worker takes another (core::plan_backup).
            // The HTTP generator takes no backup id (id_path.cpp).
            const bool failover = clock_backwards == static_cast<int>(core::ClockPolicy::Failover) &&
                                  shared->lease.leasing && gen == Generator::Sql;
            if (failover) {
                pg_atomic_write_u32(&shared->lease.backup_wanted, static_cast<uint32>(clock_tolerance_ms) + 1);
                LWLockAcquire(shared->lock, LW_SHARED);
                Latch* lease_latch = shared->lease.lease_worker_latch;
                LWLockRelease(shared->lock);
                if (lease_latch != nullptr) SetLatch(lease_latch);
            }
            snprintf(code, 6, "%s", "SF001");
            snprintf(reason, len,
                     "system clock is %lld ms behind the last %sid, beyond "
                     "snowflake.clock_tolerance_ms (%d)%s",
                     static_cast<long long>(r.behind_ms), gen == Generator::Http ? "HTTP " : "",
                     clock_tolerance_ms,
                     failover ? "; a backup worker id was asked for (snowflake.clock_backwards = failover)" : "");
            return false;
        }
        case core::Status::BeforeEpoch:
        case core::Status::EndOfTime:
            snprintf(code, 6, "%s", "SF002");
            snprintf(reason, len, "system clock is %s the id range of snowflake.epoch",
                     r.status == core::Status::BeforeEpoch ? "before" : "past the end of");
            return false;
        case core::Status::NeedReservation:
            // The mark worker writes one when asked, unless writes fail.
            if (report.err != 0) {
                snprintf(code, 6, "%s", "58030");
                snprintf(reason, len, "could not write snowflake high-water mark file \"%s\" (%s): %s",
                         kMarkFile, report.step, strerror(report.err));
                return false;
            }
            // Likewise the worker id's reservation in the coordinator.
            if (shared->lease.leasing && coord_error[0] != '\0') {
                snprintf(code, 6, "%s", "SF003");
                snprintf(reason, len, "could not extend the worker id's reservation in %s: %s",
                         coordinator_display(), coord_error);
                return false;
            }
            return true;
        case core::Status::Fenced:
        case core::Status::LeaseEnded:  // next_ids() never answers these
        case core::Status::Issued:
        case core::Status::WaitNextMs:
        case core::Status::WaitClock:
        case core::Status::WaitFloor:
            return true;
    }
    return true;
}

}  // namespace

// The id path's checks, run on copies (health.hpp).
bool generator_ready(char* code, char* reason, size_t len) {
    // The id path's own checks; their error becomes the reason.
    CaughtError e;
    if (!call_catching_error(
            [] {
                require_generator();
                check_replicated_mark(/*count=*/false);
            },
            &e)) {
        snprintf(code, 6, "%s", e.code);
        snprintf(reason, len, "%s", e.message[0] != '\0' ? e.message : "ids cannot be issued");
        return false;
    }

    if (!lease_allows_ids()) {
        char error[kErrorTextSize];
        const char* doing = lease_trouble(error);
        snprintf(code, 6, "%s", "SF003");
        snprintf(reason, len, "no worker id lease is held: the lease worker %s%s%s", doing,
                 error[0] != '\0' ? "; last error: " : "", error);
        return false;
    }
    if (max_clock_error_ms > 0) {
        const core::ClockVerdict v = core::judge_clock(read_clock_health(), max_clock_error_ms);
        if (v.refuse) {
            snprintf(code, 6, "%s", "SF004");
            snprintf(reason, len, "%s", v.reason);
            return false;
        }
    }

    // Each generator in use (snowflake.http_worker_id: the HTTP one too).
    for (const Generator gen : kGenerators)
        if (generator_in_use(gen) && !generator_state_ready(gen, code, reason, len)) return false;
    return true;
}

}  // namespace snowflake::pg
