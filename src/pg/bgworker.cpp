// What every background worker of this library shares: registration with
// the postmaster, the preamble of its main function (signal handlers, the
// latch it publishes for backends), the reload step of its loop, and how it
// exits (quietly at a server shutdown, "restart me" otherwise).

#include <cstdio>
#include <cstring>

#include "../core/generator.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "bgworker.hpp"
#include "shared_state.hpp"

extern "C" {
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "utils/pidfile.h"
}

namespace snowflake::pg {
namespace {

// At exit: the latch published by start_background_worker() is gone; waiting
// backends are woken to notice.
void unpublish_latch(int, Datum slot) {
    if (shared == nullptr) return;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    *reinterpret_cast<Latch**>(DatumGetPointer(slot)) = nullptr;
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
}

// True when the postmaster is shutting down: it marks its lock file
// "stopping" before it signals its children.
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

}  // namespace

// Registers a worker of this library with the postmaster (bgworker.hpp).
void register_background_worker(const char* function, const char* name, BgWorkerStartTime start,
                                int restart_s) {
    BackgroundWorker bgw;
    std::memset(&bgw, 0, sizeof(bgw));
    bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;  // shared memory only, no database
    bgw.bgw_start_time = start;
    bgw.bgw_restart_time = restart_s;  // restarted this long after it exits with code 1
    snprintf(bgw.bgw_library_name, BGW_MAXLEN, "snowflake");
    snprintf(bgw.bgw_function_name, BGW_MAXLEN, "%s", function);
    snprintf(bgw.bgw_name, BGW_MAXLEN, "%s", name);
    snprintf(bgw.bgw_type, BGW_MAXLEN, "%s", name);
    RegisterBackgroundWorker(&bgw);
}

// The preamble of every worker's main function (bgworker.hpp).
void start_background_worker(Latch** latch_slot) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    if (latch_slot == nullptr) return;
    before_shmem_exit(unpublish_latch, PointerGetDatum(latch_slot));
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    *latch_slot = MyLatch;
    LWLockRelease(shared->lock);
}

// Applies a reload the postmaster asked for with SIGHUP (bgworker.hpp).
bool reload_if_requested() {
    if (!ConfigReloadPending) return false;
    ConfigReloadPending = false;
    ProcessConfigFile(PGC_SIGHUP);
    return true;
}

// At a server shutdown, exit quietly (code 0). Stopped otherwise (a SIGTERM
// sent to this pid; pg_terminate_backend() cannot reach a worker without a
// database connection), exit with code 1: the postmaster starts the worker
// again after bgw_restart_time; code 0 would unregister it.
void exit_background_worker() { proc_exit(postmaster_stopping() ? 0 : 1); }

}  // namespace snowflake::pg
