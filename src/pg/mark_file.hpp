// mark_file.cpp: the high-water mark file in the data directory.
#pragma once

#include "../core/mark.hpp"

#include "shared_state.hpp"

namespace snowflake::pg {

// The mark file, relative to the data directory.
constexpr const char* kMarkFile = "snowflake.mark";

// The postmaster, at shared memory creation: reads the mark and starts the
// generator above it.
void load_mark(SharedState* s);
// The postmaster: writes the exact mark at a clean stop.
void register_mark_shutdown();
// Writes the mark durably (temp file, fsync, rename, fsync of the directory).
// Returns 0, or an errno with *step naming what failed. Never raises an error.
int write_mark(const snowflake::core::Mark& mark, const char** step);

}  // namespace snowflake::pg
