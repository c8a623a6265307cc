#!/bin/bash
# HTTP endpoint suite of snowflake (snowflake.http_listen): real servers on
# loopback ports, real clients (curl, wrk, raw sockets from bash).
#
# Prints one line per check, "ok - ..." or "not ok - ..." (details on "#"
# lines), and ends with "N passed, N failed"; exits non-zero on any failure.
#
#   1  every endpoint: /healthz, /v1/ids/batch (default, 100, 10000),
#      /v1/uuids/batch, /v1/ids/{id} against snowflake_decode(), /metrics
#      against snowflake_stats (every column has a metric, same values)
#   2  every error: bad counts, bad ids, unknown paths, other methods; JSON
#      bodies with a SQLSTATE code and a message
#   3  ids from HTTP (curl with keep-alive, wrk) and SQL (pgbench) at the same
#      time, all into one primary-key table: no conflict, all increasing per
#      source
#   4  snowflake.http_token: 401 without or with a wrong token, /healthz
#      open, reload to change it, non-superusers cannot read it
#   5  a few hundred malformed or hostile requests (bad paths and request
#      lines, huge headers, slowloris, invalid counts, non-UTF-8 bytes):
#      the worker answers throughout and afterwards, never restarted
#   6  the clock behind the last id (libfaketime): /healthz and the batch 503
#      with SF001, snowflake_ready 0; both recover
#   7  a hot standby (pg_basebackup -R): /healthz and ids 503 with 25006,
#      decoding works; 200 once promoted
#   8  fast shutdown with open keep-alive connections and load: prompt, and
#      the worker exits quietly
#   9  no worker id: /healthz 503 (55000); a bad snowflake.http_listen stops
#      the server at start, naming the setting
#  10  64 clients that trickle header lines and never finish (slowloris):
#      the server closes each after 10 s and answers others again
#  11  the kernel reports the clock unsynchronised, or its error above
#      snowflake.max_clock_error_ms (a shim of ntp_adjtime): /healthz and the
#      batch 503 with SF004; both recover
#  12  a batch that would wait on a floor 3 s ahead: 503 with 57014 and
#      Retry-After after at most 1 s of waiting (not 200 seconds later);
#      ids again once the clock passes the floor
#  13  /livez 200 while ids cannot be issued, /readyz (= /healthz) 503; its
#      reason without the token is short (no etcd URL), full with it
#  14  64 connections held: the next one gets 503 with Retry-After at once;
#      keep-alive answers say Keep-Alive: timeout=10
#  15  a GET with a body: 400; /v1/ids/batch/: 404; unknown or repeated
#      query parameters: 400 naming them
#  16  '*:port' without a token: FATAL unless
#      snowflake.http_allow_unauthenticated; without a token, a Host that is
#      not the listen address or localhost: 403 (DNS rebinding)
#  17  two tokens (rotation), snowflake.http_token_file (0600, read at
#      reload; readable by others: refused); a pg_monitor member cannot read
#      the token
#  18  snowflake.http_max_ids_per_second: 429 with Retry-After beyond it
#  19  a lost mark file (snowflake.walmark without snowflake.mark): /readyz
#      and ids 503 with 58P01, snowflake_ready 0; 200 after
#      snowflake_advance_floor()
#  20  text formats: /v1/ids/batch?format=base32 and base62 (SQL decodes the
#      ids), /v1/ids/{id}?format=... the same answer as the decimal id, never
#      guessed; bad format names (22023) and bad text ids (22P02): 400
#  21  snowflake.http_worker_id: HTTP ids under it, SQL ids under
#      snowflake.worker_id, none twice under load from both; after kill -9
#      and a restart with the clock behind, HTTP ids above every earlier one
#  22  snowflake.http_worker_id misconfigured (snowflake.worker_id's id, out
#      of range, no worker id, leased ids): FATAL at start with a hint
#
# The cases live in test/http/, in files by theme, each a set of case_N
# functions:
#   endpoints.sh  1, 2, 15, 20      every endpoint, every error, strict requests,
#                                   text formats
#   auth.sh       4, 16, 17         tokens, the safe defaults without one
#   load.sh       3, 5, 10, 14, 18  load, hostile and slow clients, limits
#   health.sh     6-9, 11-13, 19    clock, standby, no worker id, shutdown,
#                                   a lost mark
#   worker_id.sh  21, 22            HTTP ids under snowflake.http_worker_id
# This file sets the suite up, sources them all and runs the cases in order
# of their numbers (instance A, in test/http/lib.sh, is shared by the cases
# of every file). Helpers shared by the cases are in test/http/lib.sh.
#
# Usage: test/http.sh [case number ...]   (default: every case_N the case
# files define)
# Needs root or the postgres user, curl, wrk, jq, pgbench, pg_basebackup,
# libfaketime. KEEP_TMP=1 keeps the instances' directories (logs).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh
. test/lib/timex.sh
. test/http/lib.sh

suite_begin http
SHIM_DIR=$SUITE_DIR
BG_PIDS=()
suite_cleanup() {
    local p
    for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}

require_tools curl wrk jq
ft_build_shim "$SHIM_DIR" || echo "# could not compile select_shim.c: workers keep the real clock"
timex_build_shim "$SHIM_DIR"

for http_file in endpoints auth load health worker_id; do
    # shellcheck source=/dev/null
    . "$HTTP_DIR/$http_file.sh"
done

run_cases http "$@"
