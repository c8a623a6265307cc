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

// Whether generator g's word is in use: the SQL one always, the HTTP one
// with snowflake.http_worker_id set (shared_state.hpp).
bool generator_in_use(Generator g);
// The highest millisecond the words in use may have issued ids in (their
// last ids', or their fences): this node's last millisecond under any
// worker id. Any process, no lock needed (atomics): a transition under way
// may have moved one word and not yet the other.
int64_t issued_ms();

// The position's transitions (core/position.hpp's protocol over the shared
// words); each with `lock` held exclusively, never raising an error. The
// fence, its lift and a raised floor move every word in use the same way;
// a tenure is the SQL word's alone (with leased worker ids, where tenures
// change, the HTTP word is not in use: guc.cpp refuses it).
// Fences ids: every word in use is fenced, so no id is issued from the
// return on (until lift_fence_locked() or a new tenure) and every swap
// prepared before fails; returns the last millisecond the SQL word's
// tenure (the worker id's, leased or not) may have issued.
int64_t fence_ids_locked();
// The fenced tenures go on (a lease that came back): ids resume one
// millisecond past each fence. Nothing happens to a word that is not fenced.
void lift_fence_locked();
// A new tenure of `worker` (a hand-over, a backup worker id, the return to
// the own id) for the SQL word: its tenure in force is fenced, the
// reservation brought down to the start, and the word moves to "start used
// up" with the new worker id, start being one past floor_ms (and past the
// fence, for the same worker id); returns start. The start becomes the
// generator's floor, a clock up to grace_ms behind floor_ms waited out,
// named by source. floor_ms must be at or above every millisecond an
// earlier tenure of `worker` reached in this server (core::tenure_start_ms()).
int64_t start_tenure_locked(int32_t worker, int64_t floor_ms, int64_t grace_ms, FloorSource source);
// Raises every word in use (or its fence) to "floor_ms used up" (worker ids
// unchanged); when one moved, floor_ms becomes the generators' floor
// (grace_ms, source) and the result is true.
bool raise_floor_locked(int64_t floor_ms, int64_t grace_ms, FloorSource source);

}  // namespace snowflake::pg
