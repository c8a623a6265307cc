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

// The position's transitions (core/position.hpp's protocol over the shared
// words); each with `lock` held exclusively, never raising an error.
// Fences ids: the word is fenced, so no id is issued from the return on
// (until lift_fence_locked() or a new tenure) and every swap prepared
// before fails; returns the last millisecond the tenure may have issued.
int64_t fence_ids_locked();
// The fenced tenure goes on (a lease that came back): ids resume one
// millisecond past the fence. Nothing happens unless the word is fenced.
void lift_fence_locked();
// A new tenure of `worker` (a hand-over, a backup worker id, the return to
// the own id): the tenure in force is fenced, the reservation brought down
// to the start, and the word moves to "start used up" with the new worker
// id, start being one past floor_ms (and past the fence, for the same
// worker id); returns start. The start becomes the generator's floor, a
// clock up to grace_ms behind floor_ms waited out, named by source.
// floor_ms must be at or above every millisecond an earlier tenure of
// `worker` reached in this server (core::tenure_start_ms()).
int64_t start_tenure_locked(int32_t worker, int64_t floor_ms, int64_t grace_ms, FloorSource source);
// Raises the position (or its fence) to "floor_ms used up" (worker id
// unchanged); when it moved, floor_ms becomes the generator's floor
// (grace_ms, source) and the result is true.
bool raise_floor_locked(int64_t floor_ms, int64_t grace_ms, FloorSource source);

}  // namespace snowflake::pg
