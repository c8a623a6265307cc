// The catching half of ereport_guard.hpp: an error raised inside
// call_catching_error() copied into plain data.

#include <cstdio>

#include "ereport_guard.hpp"

extern "C" {
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
}

namespace snowflake::pg {

// Copies the error, then clears PostgreSQL's error state (ereport_guard.hpp).
void capture_error(MemoryContext cxt, CaughtError* out) {
    MemoryContextSwitchTo(cxt);
    // Not in a critical section or an interrupt hold-off: an error there
    // cannot be caught and carried on from (errfinish resets both counts).
    Assert(CritSectionCount == 0 && InterruptHoldoffCount == 0);
    // A background worker without a database connection (the HTTP worker)
    // owns whatever the raised error left held: a condition-variable sleep,
    // LWLocks (the caller holds none of its own). Elsewhere (the postmaster,
    // a backend loading the library) nothing is released: what is held there
    // belongs to the caller or its transaction, as it did before the wrapper.
    if (MyBackendType == B_BG_WORKER) {
        ConditionVariableCancelSleep();
        LWLockReleaseAll();
    }
    ErrorData* e = CopyErrorData();
    FlushErrorState();
    snprintf(out->code, sizeof(out->code), "%s", unpack_sql_state(e->sqlerrcode));
    snprintf(out->message, sizeof(out->message), "%s", e->message != nullptr ? e->message : "");
    snprintf(out->detail, sizeof(out->detail), "%s", e->detail != nullptr ? e->detail : "");
    snprintf(out->hint, sizeof(out->hint), "%s", e->hint != nullptr ? e->hint : "");
    FreeErrorData(e);
}

}  // namespace snowflake::pg
