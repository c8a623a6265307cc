// lease_state.cpp: the worker id's lease as every process reads it from
// shared memory (the lease worker publishes it), and the error (SF003)
// that says why no id may be issued.
#pragma once

#include "shared_state.hpp"

namespace snowflake::pg {

// The postmaster, at shared memory creation.
void init_lease(SharedState* s);
// The leased worker id (-1: none) or, without leasing, snowflake.worker_id.
int32_t current_worker_id();
// Whether ids may be issued now: without leasing always, with leasing while
// a lease is held and its deadline has not passed. Cheap (every id asks).
bool lease_allows_ids();
// What the lease worker is doing while no id may be issued (a phrase after
// "The lease worker"), and its last error in `error` ("" when none).
const char* lease_trouble(char (&error)[kErrorTextSize]);
// Raises SF003, saying what the lease worker is doing.
[[noreturn]] void refuse_no_lease();

}  // namespace snowflake::pg
