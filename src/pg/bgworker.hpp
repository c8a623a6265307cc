// bgworker.cpp: what every background worker of this library shares.
#pragma once

#include "pg_headers.hpp"

namespace snowflake::pg {

// Registers a background worker of this library (shared memory, no
// database), started at start and restarted restart_s seconds after it
// exits with code 1; by default after recovery, a second later.
void register_background_worker(const char* function, const char* name,
                                BgWorkerStartTime start = BgWorkerStart_RecoveryFinished,
                                int restart_s = 1);
// The preamble of a worker's main function: SIGHUP and SIGTERM handlers,
// signals unblocked; with latch_slot (a field of the shared state), MyLatch
// published there under the lock until the process exits (then nullptr
// again, and reservation_cv broadcast so that waiting callers notice).
void start_background_worker(Latch** latch_slot);
// Applies a reload asked for with SIGHUP; true if there was one.
bool reload_if_requested();
// Ends the worker: code 0 (quietly) at a server shutdown, else 1, so that
// the postmaster starts it again.
[[noreturn]] void exit_background_worker();

}  // namespace snowflake::pg
