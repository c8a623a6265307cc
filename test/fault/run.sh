#!/bin/bash
# Fault-injection suite of snowflake: real servers whose clock is moved with
# libfaketime (see test/lib/faketime.sh), crashed with kill -9, given corrupt mark files,
# run as hot standbys, and started with bad settings.
#
# Prints one line per check, "ok - ..." or "not ok - ..." (with details on
# "#" lines), and ends with "N passed, N failed"; exits non-zero on any
# failure. Every case checks that no id is issued twice and every id is above
# the ones before it.
#
#   0  the clock of a running server really moves, for backends and for the
#      mark worker (so nothing passes vacuously)
#   1  clock back 1-4 ms under load: waited out, no error
#   2  clock back 10 ms, 1 s, 1 h: SF001 with a hint naming when ids resume;
#      they resume then (10 ms, 1 s) or when the clock is put right (1 h)
#   3  clock forward 1 h: ids follow; clock before the epoch: SF002
#   4  missing mark on first start (the mark worker writes "nothing issued"
#      before the marker); clean restart with the clock 1 s behind the last
#      id (refused until it passes); clean restart without waiting
#   5  kill -9 under load, restart with the clock 2 s back: refused until the
#      clock passes the mark, then every id above every committed one
#   6  corrupt mark (bad checksum, truncated, bad magic): XX001 and a LOG at
#      start; the repair of docs/operations.md (remove, snowflake_advance_floor())
#   7  hot standby: 25006, decoders work; ids once promoted
#   8  bad settings: FATAL at start naming the setting; a bad reload is
#      ignored and the previous value kept
#   9  a clock glitch far ahead (past the id range; +1 day) with no id issued
#      in it, then kill -9: ids must resume within a second of the restart
#  10  a backend killed with SIGKILL resets shared memory: ids wait out the
#      reservation on disk, no clock error
#  11  storage under the mark (an LD_PRELOAD shim, storage_shim.c): fsync
#      delayed 1.2 s (ids keep flowing), 10 s (statement_timeout and cancel
#      end a waiting call at once), failing with EIO, ENOSPC on the temp file;
#      an idle renewal that failed is retried by itself once the fault is gone
#  12  the clock steps back an hour while a call waits for it: SF001 at once
#  13  a crash, then a clean stop with no id issued: the next start still
#      waits out the crash reservation instead of failing
#  14  snowflake_advance_floor(): durable, above a restored id, limits
#  15  snowflake.max_clock_error_ms: the kernel's clock state (timex_shim.c)
#      turns ids away (SF004) and back on
#  16  kill -9 with a correct clock at points of the mark's renewal cycle
#      (the mark 0.6 to 1.5 s ahead of the clock): the first id after the
#      restart waits the reservation out, never SF001 (issue 22)
#  17  a mark file lost after ids were issued (snowflake.walmark without
#      snowflake.mark): a LOG at start, 58P01 with a hint naming
#      snowflake_advance_floor(), kept across a restart, lifted by the floor
#      (ids above the old ones) or by crash recovery replaying a record
#  18  snowflake.layout (issue 31) at start: layouts a node cannot issue and a
#      worker id the layout cannot hold (FATAL naming them); a mark of js-safe
#      under twitter (FATAL naming both), the explicit change
#      (snowflake.accept_layout_change: twitter ids above every js-safe one,
#      and back, with a WARNING)
#  19  snowflake.sequence_spread: ids one a millisecond all end in 0 mod 16
#      without it, take every id % 16 about equally with 16; increasing; a
#      batch still whole; values that are not a power of two up to a quarter
#      of a millisecond's ids refused (reload, start)
#  20  WAL records of another layout: a js-safe standby of a twitter primary
#      stops at a record even with snowflake.accept_layout_change on (FATAL
#      naming both); crash recovery of a data directory started in js-safe
#      with the setting on replays its twitter records with a WARNING
#
# The instances of the mark and crash cases (4-6, 9-11, 13, 14, 17) run with
# fsync = on, so that the durable path and its errors are exercised.
#
# The cases live in files by theme, each a set of case_N functions:
#   clock.sh       0-3, 12, 15   the clock moved under a running server
#   restart.sh     4-6, 17       restarts and the mark file of one instance
#   crash.sh       9, 10, 13, 16 crashes and the reservation after them
#   durability.sh  11, 14        the storage under the mark, the floor
#   settings.sh    7, 8          a hot standby, bad settings
#   layout.sh      18-20         snowflake.layout at start, snowflake.sequence_spread, WAL of another layout
# Case -> file: 0-3 clock, 4-6 restart, 7-8 settings, 9-10 crash, 11 durability, 12 clock, 13 crash, 14 durability, 15 clock, 16 crash, 17 restart, 18-20 layout.
# This file sources them all and runs the cases in order of their numbers.
# Helpers of the cases are in lib.sh; those this suite shares with others in
# test/lib/fault.sh (instances, pgbench, checks; also test/standby.sh) and
# test/lib/timex.sh (the kernel's clock state; also test/http.sh).
#
# Usage: test/fault/run.sh [case number ...]   (default: every case_N the
# case files define)
# Needs root or the postgres user, pgbench, pg_basebackup, libfaketime.
# KEEP_TMP=1 keeps the instances' directories (logs) after the run.
set -uo pipefail
cd "$(dirname "$0")/../.."

. test/lib/suite.sh
. test/lib/fault.sh
. test/lib/timex.sh
. test/fault/lib.sh

suite_begin fault
SHIM_DIR=$SUITE_DIR

ft_require "$SHIM_DIR"

for fault_file in clock restart crash durability settings layout; do
    # shellcheck source=/dev/null
    . "$FAULT_DIR/$fault_file.sh"
done

run_cases fault "$@"
