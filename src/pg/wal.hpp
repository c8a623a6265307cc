// The high-water mark carried by the WAL (wal.cpp): shared state and entry
// points. Included by snowflake.hpp, after PostgreSQL's headers.
#pragma once

#include <cstdint>

namespace snowflake::pg {

struct SharedState;

// The custom WAL resource manager id of snowflake (PostgreSQL 15+; custom
// ids are 128-255, RM_EXPERIMENTAL_ID = 128 is for experiments). Records
// written with it can only be replayed by a server that preloads this
// library: docs/operations.md, "The mark in the WAL".
constexpr int kRmgrId = 168;
constexpr const char* kRmgrName = "snowflake";

// What wal.cpp keeps in shared memory (SharedState::wal).
struct WalMarkShared {
    // Set by the postmaster at start: this run began in archive recovery
    // (standby.signal or recovery.signal in the data directory), so its end
    // is a promotion (or the end of a point-in-time recovery), not a crash
    // recovery of the same data directory.
    bool archive_recovery;
    // lock: snowflake records replayed in this run.
    uint64_t replayed;
    // Ids are refused (1) because this node was promoted with a static
    // worker id and its mark did not come through the WAL; the refusal
    // ends when the clock passes refuse_until_unix_ms or
    // snowflake_advance_floor() is called. Read without the lock by the id
    // path; written under it.
    pg_atomic_uint32 refusing;
    int64_t refuse_until_unix_ms;  // lock: -1 while not yet worked out
    bool refusal_on_disk;          // lock: the file snowflake.promoted holds it
    // The marker file snowflake.walmark exists. Written by the startup
    // process during recovery, by the mark worker after it.
    bool marker_on_disk;
};

// module.cpp, while preloading: registers the resource manager.
void register_wal_rmgr();
// mark.cpp, postmaster, at shared memory creation (after the mark is
// loaded): tells a promotion from a crash recovery, loads a refusal kept on
// disk.
void init_wal_mark(SharedState* s);
// The mark worker: logs a reservation reaching until_ms (id space) and
// flushes it, before the reservation is published. Raises an error
// (ERROR) if the WAL cannot be written.
void log_reservation(int64_t until_ms, int64_t window_ms);
// The mark worker, every turn: ends a refusal whose time has come, keeps it
// on disk while it lasts.
void tend_refusal();
// The id path (nextval.cpp): raises the refusal error while it holds.
void check_replicated_mark();
// snowflake_advance_floor() (nextval.cpp), once the floor is durable: ends
// the refusal.
void end_refusal_after_floor();

}  // namespace snowflake::pg
