// mark_worker.cpp: the process that keeps the reservation ahead of the clock.
#pragma once

namespace snowflake::pg {

// _PG_init: registers the mark worker.
void register_mark_worker();

}  // namespace snowflake::pg
