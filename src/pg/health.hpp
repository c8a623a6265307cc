// health.cpp: whether ids can be issued now (/healthz, /readyz, /metrics).
#pragma once

#include "pg_headers.hpp"

namespace snowflake::pg {

// Whether ids can be issued now, by the checks of the id path (preload,
// worker id, recovery, the mark, the lease, the clock's health) and the
// clock against the last id and the epoch. Never raises an error. When not
// ready, code gets the SQLSTATE (5 characters and a NUL) the id path would
// raise and reason a sentence. Add a condition here and /healthz and
// /metrics (snowflake_ready) follow.
bool generator_ready(char* code, char* reason, size_t len);

}  // namespace snowflake::pg
