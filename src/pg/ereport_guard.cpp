// The catching half of ereport_guard.hpp: an error raised inside
// call_catching_error() copied into plain data.

#include <cstdio>

#include "ereport_guard.hpp"

extern "C" {
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
}

namespace snowflake::pg {

// Copies the error, then clears PostgreSQL's error state (ereport_guard.hpp).
void capture_error(MemoryContext cxt, CaughtError* out) {
    MemoryContextSwitchTo(cxt);
    // Nothing the glue calls holds these across an error; released in case.
    ConditionVariableCancelSleep();
    LWLockReleaseAll();
    ErrorData* e = CopyErrorData();
    FlushErrorState();
    snprintf(out->code, sizeof(out->code), "%s", unpack_sql_state(e->sqlerrcode));
    snprintf(out->message, sizeof(out->message), "%s", e->message != nullptr ? e->message : "");
    snprintf(out->detail, sizeof(out->detail), "%s", e->detail != nullptr ? e->detail : "");
    snprintf(out->hint, sizeof(out->hint), "%s", e->hint != nullptr ? e->hint : "");
    FreeErrorData(e);
}

}  // namespace snowflake::pg
