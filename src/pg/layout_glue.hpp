// layout_glue.cpp: snowflake.layout in the server: the setting's hooks, the
// geometry the id path issues ids in, and what the data directory's records
// (the mark file, WAL records) say about the layout of the ids they bound.
#pragma once

#include <cstdint>

#include "../core/layout.hpp"
#include "../core/mark.hpp"

#include "pg_headers.hpp"

extern "C" {
#include "utils/guc.h"
}

namespace snowflake::pg {

// snowflake.layout's check and assign hooks, snowflake.sequence_spread's
// check hook (defined after snowflake.layout: it reads the layout).
bool check_layout_hook(char** newval, void** extra, GucSource source);
void assign_layout_hook(const char* newval, void* extra);
bool check_sequence_spread_hook(int* newval, void** extra, GucSource source);

// The postmaster, with the mark file's contents (load_mark, under
// AddinShmemInitLock): notes whether its layout is the node's; nothing is
// raised there. report_mark_layout(), after the lock is released, stops the
// server (FATAL naming both) unless snowflake.accept_layout_change is on,
// and logs the change when it is.
void note_mark_layout(const core::Mark& mark);
void report_mark_layout();

// WAL replay of a record of layout code `record`: returns whether to replay
// it; stops the server (FATAL naming both) for a record of another layout
// unless core::judge_record_layout() accepts it (crash recovery with
// snowflake.accept_layout_change on: then a WARNING, once per process).
void check_record_layout(uint32_t record, bool archive_recovery);

}  // namespace snowflake::pg
