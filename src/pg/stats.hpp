// stats.cpp: the statistics' counters and their snapshot.
#pragma once

#include "../core/stats_snapshot.hpp"

#include "shared_state.hpp"

namespace snowflake::pg {

// Adds n to this backend's count of ids issued.
void count_ids(uint64_t n);
// Counts a refusal (snowflake_ids_refused_total); call just before the error.
void count_refusal(snowflake::core::Refusal why);
// The postmaster, at shared memory creation.
void init_stats(SharedState* s, int slots);
// Every value of snowflake_stats, read under the lock: what both
// snowflake_stats() and /metrics show. The caller has checked
// require_shared() (or that shared memory exists).
using StatsSnapshot = snowflake::core::StatsSnapshot;
StatsSnapshot take_stats_snapshot();

}  // namespace snowflake::pg
