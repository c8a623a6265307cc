// wal.cpp: the high-water mark carried by the WAL (its shared state is
// SharedState::wal, shared_state.hpp).
#pragma once

#include "pg_headers.hpp"

namespace snowflake::pg {

struct SharedState;

// module.cpp, while preloading: registers the resource manager.
void register_wal_rmgr();
// mark_file.cpp, postmaster, at shared memory creation (after the mark is
// loaded): tells a promotion from a crash recovery, a lost mark file from a
// first start, loads a refusal kept on disk.
void init_wal_mark(SharedState* s);
// The mark worker: logs a reservation reaching until_ms (id space), flushes
// it and, under synchronous replication, waits until the synchronous
// standbys have flushed it too, before the reservation is published. False
// if a shutdown ended that wait: the reservation must not be published.
// Raises an error (ERROR) if the WAL cannot be written.
bool log_reservation(int64_t until_ms, int64_t window_ms);
// The mark worker, every turn: ends a refusal whose time has come, keeps it
// on disk while it lasts; removes the file of an epoch refusal that no
// longer holds.
void tend_refusal();
// The id path (id_path.cpp) and readiness (health.cpp): raises the error of
// a refusal while one holds: the replayed records count from another epoch
// than snowflake.epoch (55000), a lost mark file (58P01), a promotion
// without a replicated mark (55000). The id path counts the refusal in
// snowflake_ids_refused_total (count = true); readiness asks without one.
void check_replicated_mark(bool count = true);
// snowflake_advance_floor() (nextval.cpp), once the floor is durable: ends
// the refusals of a lost mark file and of a mark that did not come through
// the WAL (not the epoch refusal).
void end_refusal_after_floor();

}  // namespace snowflake::pg
