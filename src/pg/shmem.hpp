// shmem.cpp: the shared state's creation and the transitions of its
// position word (the protocol is in shared_state.hpp).
#pragma once

#include "shared_state.hpp"

namespace snowflake::pg {

// _PG_init, while preloading: requests the memory and the LWLock, and
// creates the shared state at startup.
void install_shmem_hooks();
// Raises an error unless the library was preloaded and its shared memory exists.
void require_shared();

// The position's transitions; each with `lock` held exclusively, never
// raising an error.
// Fences ids: no id is issued from the return on (until lift_fence_locked()
// or a new tenure); returns the last millisecond issued.
int64_t fence_ids_locked();
void lift_fence_locked();
// A new tenure of `worker`: the position moves to "after max(floor_ms, its
// own millisecond)" with the new worker id; returns that millisecond. When
// it is floor_ms, floor_ms becomes the generator's floor, waited out for
// grace_ms and named by source. Call it with the previous tenure's fence in
// place, and lift the fence after.
int64_t start_tenure_locked(int32_t worker, int64_t floor_ms, int64_t grace_ms, FloorSource source);
// A tenure of a backup worker id (clock failover, core/backup.hpp): the
// position moves to "after floor_ms" (the backup's mark) with `worker`,
// whatever its millisecond was (it belongs to the own id); floor_ms becomes
// the generator's floor, no grace. Same protocol as start_tenure_locked().
int64_t start_backup_tenure_locked(int32_t worker, int64_t floor_ms);
// Raises the position to "floor_ms used up" (worker id unchanged); when it
// moved, floor_ms becomes the generator's floor (grace_ms, source) and the
// result is true.
bool raise_floor_locked(int64_t floor_ms, int64_t grace_ms, FloorSource source);

}  // namespace snowflake::pg
