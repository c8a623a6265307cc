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
#   4  missing mark on first start; clean restart with the clock 1 s behind
#      the last id (refused until it passes); clean restart without waiting
#   5  kill -9 under load, restart with the clock 2 s back: refused until the
#      clock passes the mark, then every id above every committed one
#   6  corrupt mark (bad checksum, truncated, bad magic): XX001 and a LOG at
#      start; the repair of docs/operations.md
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
#
# The instances of the mark and crash cases (4-6, 9-11, 13, 14) run with
# fsync = on, so that the durable path and its errors are exercised.
#
# Usage: test/fault/run.sh [case number ...]   (default: every case_N defined
# below)
# Needs root or the postgres user, pgbench, pg_basebackup, libfaketime.
# KEEP_TMP=1 keeps the instances' directories (logs) after the run.
set -uo pipefail
cd "$(dirname "$0")/../.."

. test/lib/suite.sh
. test/fault/lib.sh

suite_begin fault
SHIM_DIR=$SUITE_DIR

ft_require "$SHIM_DIR"
timex_build_shim "$SHIM_DIR"
STORAGE_SHIM=
if cc -shared -fPIC -O2 -o "$SHIM_DIR/storage_shim.so" "$FAULT_DIR/storage_shim.c" -ldl 2>"$SHIM_DIR/storage_shim.log"; then
    chmod 755 "$SHIM_DIR" "$SHIM_DIR/storage_shim.so"
    STORAGE_SHIM=$SHIM_DIR/storage_shim.so
fi

# pgbench DIR ARGS...: pgbench as postgres against the instance.
pgbench_on() {
    local dir=$1; shift
    as_pg "$PGBIN/pgbench" -n -h "$dir" -p "$PG_PORT" -U postgres "$@" postgres
}

# load_script DIR: the pgbench script, where the postgres user can read it.
load_script() {
    cp "$FAULT_DIR/load.sql" "$1/load.sql"
    chmod 644 "$1/load.sql"
    echo "$1/load.sql"
}

# pgbench_clean LOG STATUS DESC: pgbench finished with status 0 and reported
# no failed transaction.
pgbench_clean() {
    local log=$1 status=$2 desc=$3 failed
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$log")
    if [ "$status" = 0 ] && [ "${failed:-0}" = 0 ] && grep -q '^number of transactions actually processed' "$log"; then
        ok "$desc"
    else
        not_ok "$desc" "pgbench exit status $status, failed transactions '${failed:-?}'" \
            "$(grep -E 'error|ERROR|abort|failed' "$log" | head -5)"
    fi
}

# count_where DIR TABLE CONDITION
count_where() { pg_val "$1" "SELECT count(*) FROM $2 WHERE $3"; }

# probe_fields: splits a clock_probe result line into P_*.
probe_fields() {
    IFS=$'\x1f' read -r P_BEFORE P_ISSUED P_STATE P_MSG P_DETAIL P_HINT P_REFUSALS P_OTHER P_AFTER P_VIOL <<<"$1"
}

# run_probe DIR MODE TIMEOUT LABEL: clock_probe(...) as one line, fields
# separated by \x1f (not whitespace, so that empty fields stay fields).
run_probe() {
    pg_psql "$1" -A -t -F $'\x1f' -c "SELECT * FROM clock_probe('$2', $3, '$4')"
}

# behind_ms MSG: N of "system clock moved backwards by N ms".
behind_ms() { sed -n 's/^system clock moved backwards by \([0-9]*\) ms$/\1/p' <<<"$1"; }

# no_duplicates DIR TABLE DESC
no_duplicates() {
    is "$3" "$(pg_val "$1" "SELECT count(*) - count(DISTINCT id) FROM $2")" 0
}

# ordered DIR TABLE DESC: per-client insertion order and the seen bound hold.
ordered() {
    is "$3" "$(pg_val "$1" "SELECT order_violations('$2')")" 0
}

# -------------------------------------------------------------------------
# Instance A: cases 0-3. Its clock starts at the real time (+0).
A=
start_a() {
    [ -n "$A" ] && return 0
    A=$(pg_tmpdir)
    fault_init "$A" || { bail "instance A initialised"; return 1; }
    ft_start "$A" || { bail "instance A started under libfaketime"; return 1; }
    helpers_sql "$A" || { bail "helpers created on instance A"; return 1; }
}

# 0: the clock of a running server moves when the file changes.
case_0() {
    echo "# case 0: libfaketime moves the clock of the running server"
    start_a || return
    local pid
    pid=$(pg_postmaster_pid "$A")
    check "0: libfaketime is loaded in the postmaster" grep -q libfaketime "/proc/$pid/maps"
    local off t0 t1 v clock now lo hi
    for off in -3600 -0.25 +0; do
        ft_set "$A" "$off"
        t0=$(real_now)
        v=$(pg_val "$A" "SELECT extract(epoch FROM clock_timestamp()) || ' ' || extract(epoch FROM now())")
        t1=$(real_now)
        read -r clock now <<<"$v"
        lo=$(awk -v t="$t0" -v o="$off" 'BEGIN { printf "%.6f", t + o - 0.002 }')
        hi=$(awk -v t="$t1" -v o="$off" 'BEGIN { printf "%.6f", t + o + 0.002 }')
        if fcmp "$clock" '>=' "$lo" && fcmp "$clock" '<=' "$hi" && fcmp "$now" '>=' "$lo" && fcmp "$now" '<=' "$hi"; then
            ok "0: offset $off s: clock_timestamp() and now() read real time $off s"
        else
            not_ok "0: offset $off s: clock_timestamp() and now() read real time $off s" \
                "clock_timestamp $clock, now $now, expected within [$lo, $hi]"
        fi
    done
    # The mark worker is a background worker, not a backend: it must see the
    # moved clock too (see select_shim.c). With the clock an hour behind, its
    # renewals must stay about a second ahead of the ids, not of real time.
    ft_set "$A" -3600
    probe_fields "$(run_probe "$A" step 1.5 c0)"
    is "0: 1.5 s of ids with the clock an hour behind, no error" "$P_STATE" ""
    # (A worker on the real clock would reserve an hour past the ids.)
    v=$(pg_val "$A" "SELECT reservations || ' ' || extract(epoch FROM high_water_mark - last_timestamp) FROM snowflake_stats")
    local res gap
    read -r res gap <<<"$v"
    if [[ $res =~ ^[0-9]+$ ]] && [ "$res" -gt 1 ] && fcmp "$gap" '>=' 0 && fcmp "$gap" '<' 3; then
        ok "0: the mark worker renews in the moved clock's time (mark $gap s past the last id)"
    else
        not_ok "0: the mark worker renews in the moved clock's time" \
            "reservations $res, mark $gap s past the last id (want > 1 and 0..3 s)"
    fi
    ft_set "$A" 0
}

# 1: clock steps back within snowflake.clock_tolerance_ms (5 ms) under load.
case_1() {
    echo "# case 1: clock back 1-4 ms while 3 clients issue ids"
    start_a || return
    local script log pid status rows step n_steps
    script=$(load_script "$A")
    log="$A/pgbench_c1.log"
    pg_val "$A" "SELECT snowflake_stats_reset()" >/dev/null
    pgbench_on "$A" -c 3 -j 3 -T 8 -f "$script" -D tbl=load_ids -D phase=c1 >"$log" 2>&1 &
    pid=$!
    if ! wait_for "load started" 20 test_rows_at_least "$A" load_ids 200; then
        kill "$pid" 2>/dev/null; wait "$pid"; bail "1: load started" "$(tail -5 "$log")"; return
    fi
    # Steps 0.3 s apart (the clients issue several hundred ids in between),
    # so that one step is waited out before the next: each is 1-4 ms.
    local steps=(0.001 0.002 0.003 0.004 0.004 0.002)
    for step in "${steps[@]}"; do
        ft_shift "$A" "-$step"
        sleep 0.3
    done
    if kill -0 "$pid" 2>/dev/null; then
        ok "1: the load ran across all ${#steps[@]} steps back"
        n_steps=$(count_where "$A" load_ids true)
    else
        not_ok "1: the load ran across all ${#steps[@]} steps back" "pgbench ended early (slow machine?)"
        n_steps=0
    fi
    wait "$pid"; status=$?
    pgbench_clean "$log" "$status" "1: pgbench: no failed transaction (no error, no duplicate key)"
    rows=$(count_where "$A" load_ids true)
    cmp_num "1: ids issued after the last step ($((rows - n_steps)) of $rows)" "$((rows - n_steps))" -gt 0
    no_duplicates "$A" load_ids "1: no duplicate id"
    ordered "$A" load_ids "1: ids increase per client and exceed every id committed before"
    local ev er mx
    read -r ev er mx <<<"$(pg_val "$A" "SELECT clock_backwards_events || ' ' || clock_backwards_errors || ' ' || clock_backwards_max_ms FROM snowflake_stats")"
    cmp_num "1: clock_backwards_events > 0 ($ev)" "$ev" -gt 0
    is "1: clock_backwards_errors = 0" "$er" 0
    if [[ $mx =~ ^[0-9]+$ ]] && [ "$mx" -ge 1 ] && [ "$mx" -le 5 ]; then
        ok "1: clock_backwards_max_ms within the tolerance ($mx)"
    else
        not_ok "1: clock_backwards_max_ms within the tolerance" "got '$mx', want 1..5"
    fi
}

test_not_running() { ! kill -0 "$1" 2>/dev/null; }
test_rows_at_least() { [ "$(count_where "$1" "$2" true 2>/dev/null || echo 0)" -ge "$3" ]; }

# 2: clock steps back beyond the tolerance.
case_2() {
    echo "# case 2: clock back 10 ms, 1 s, 1 h: SF001, then ids resume"
    start_a || return
    local d label out pid errs0 errs1 n dms
    for d in 0.010 1 3600; do
        label="c2-${d}s"
        dms=$(awk -v d="$d" 'BEGIN { printf "%d", d * 1000 + 0.5 }')
        errs0=$(stat_val "$A" clock_backwards_errors)
        out="$A/probe_$label.out"
        run_probe "$A" step 20 "$label" >"$out" 2>&1 &
        pid=$!
        if ! wait_for "probe issuing" 10 app_running "$A" probe:issuing; then
            wait "$pid"; bail "2 ($d s): probe started" "$(cat "$out")"; continue
        fi
        if [ "$d" = 0.010 ]; then
            # The probe's last id is fresh only if it was running when the
            # clock moved: a probe descheduled for over 5 ms at that moment
            # sees a smaller step and (rightly) waits. Step again then.
            for attempt in 1 2 3 4 5 6 7 8 9 10 11 12; do
                ft_shift "$A" "-$d"
                wait_for "probe done" 0.5 test_not_running "$pid" && break
            done
            echo "# 10 ms steps made until refused: $attempt"
        else
            ft_shift "$A" "-$d"
        fi
        if [ "$d" = 3600 ]; then
            # Refused now; put the clock right again.
            if wait_for "probe refused" 10 app_running "$A" probe:refused; then
                ok "2 ($d s): refused while the clock is an hour behind"
            else
                not_ok "2 ($d s): refused while the clock is an hour behind"
            fi
            ft_shift "$A" "+$d"
        fi
        wait "$pid"
        probe_fields "$(cat "$out")"
        is "2 ($d s): snowflake_nextval() fails with SQLSTATE SF001" "$P_STATE" SF001
        n=$(behind_ms "$P_MSG")
        if [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 5 ] && [ "$n" -le "$dms" ] && [ "$n" -ge $((dms - 100)) ]; then
            ok "2 ($d s): message: $P_MSG"
        else
            not_ok "2 ($d s): message says how far the clock moved back" "got: '$P_MSG'" "want: 'system clock moved backwards by N ms' with 5 < N <= $dms"
        fi
        like "2 ($d s): hint says when ids resume" "$P_HINT" 'ids resume when the clock (passes|reaches) [0-9]{4}-'
        like "2 ($d s): detail names the last issued time and the tolerance" "$P_DETAIL" '^Ids have been issued up to .*snowflake.clock_tolerance_ms is 5\.$'
        if [ -n "$P_AFTER" ]; then
            ok "2 ($d s): ids resume (after $P_REFUSALS refused calls)"
            is "2 ($d s): the resume time of the hint is the last id's millisecond or the next" \
                "$(pg_val "$A" "SELECT resume_at(\$\$$P_HINT\$\$) - snowflake_timestamp($P_BEFORE) IN ('0', '1 ms')")" t
            is "2 ($d s): the first id after it is not earlier than the hint said" \
                "$(pg_val "$A" "SELECT snowflake_timestamp($P_AFTER) >= resume_at(\$\$$P_HINT\$\$)")" t
            cmp_num "2 ($d s): the first id after it is above the last before" "$P_AFTER" -gt "$P_BEFORE"
        else
            not_ok "2 ($d s): ids resume" "no id within 20 s; probe: $(cat "$out")"
        fi
        is "2 ($d s): only SF001 while waiting" "$P_OTHER" ""
        is "2 ($d s): ids strictly increasing in the session ($P_ISSUED before the step)" "$P_VIOL" 0
        errs1=$(stat_val "$A" clock_backwards_errors)
        cmp_num "2 ($d s): clock_backwards_errors counted (+$((errs1 - errs0)))" "$((errs1 - errs0))" -gt 0
    done
    no_duplicates "$A" ids "2: no duplicate id"
    ordered "$A" ids "2: every id above the ones before"
}

# 3: the clock jumps forward an hour.
case_3() {
    echo "# case 3: clock forward 1 h: ids follow"
    start_a || return
    local max0 t0 v id state ahead
    pg_val "$A" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c3-before' FROM generate_series(1, 100)" >/dev/null
    max0=$(pg_val "$A" "SELECT max(id) FROM ids")
    ft_shift "$A" +3600
    local off t1 lo hi
    ft_get_us "$A"; us_to_s "$REPLY"; off=$REPLY     # an hour, plus the earlier steps back
    t0=$(real_now)
    v=$(pg_val "$A" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")
    t1=$(real_now)
    read -r id state <<<"$v"
    is "3: snowflake_nextval() works after the jump" "$state" 00000
    [[ $id =~ ^[0-9]+$ ]] || { bail "3: an id after the jump" "got '$v'"; return; }
    pg_val "$A" "INSERT INTO ids(id, phase) VALUES ($id, 'c3-after')" >/dev/null
    ahead=$(pg_val "$A" "SELECT id_unix($id)")
    lo=$(awk -v t="$t0" -v o="$off" 'BEGIN { printf "%.3f", t + o - 0.002 }')
    hi=$(awk -v t="$t1" -v o="$off" 'BEGIN { printf "%.3f", t + o + 0.002 }')
    if fcmp "$off" '>=' 3598 && fcmp "$off" '<=' 3600 && fcmp "$ahead" '>=' "$lo" && fcmp "$ahead" '<=' "$hi"; then
        ok "3: the new id's time is the real time plus the offset ($off s)"
    else
        not_ok "3: the new id's time is the real time plus the offset ($off s)" "id time $ahead, want [$lo, $hi]"
    fi
    cmp_num "3: the new id is above every id before" "$id" -gt "$max0"
    pg_val "$A" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c3-more' FROM generate_series(1, 1000)" >/dev/null

    # A clock before snowflake.epoch (2025-01-01): SF002, then back.
    local saved v msg
    ft_get_us "$A"; saved=$REPLY
    ft_set_clock "$A" 1704067200                # 2024-01-01 00:00:00 UTC
    v=$(pg_psql "$A" -A -t -F $'\x1f' -c "SELECT state, msg FROM try_nextval()")
    IFS=$'\x1f' read -r state msg <<<"$v"
    is "3: clock before the epoch: SQLSTATE SF002" "$state" SF002
    is "3: ... message" "$msg" "system clock is before the id range of snowflake.epoch"
    ft_set_us "$A" "$saved"
    read -r id state <<<"$(pg_val "$A" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "3: ids again once the clock is back" "$state" 00000
    # uuidv7(interval) with a clock past 2262, where nanoseconds since 1970
    # no longer fit 64 bits.
    ft_set_clock "$A" 10413792000               # 2300-01-01 00:00:00 UTC
    is "3: uuidv7(interval) with the clock in 2300" \
        "$(pg_val "$A" "SELECT uuidv7_timestamp(uuidv7('1 hour')) - '2300-01-01 01:00:00+00' BETWEEN '0' AND '10 s'")" t
    ft_set_us "$A" "$saved"
    [[ $id =~ ^[0-9]+$ ]] && pg_val "$A" "INSERT INTO ids(id, phase) VALUES ($id, 'c3-epoch')" >/dev/null
    no_duplicates "$A" ids "3: no duplicate id"
    ordered "$A" ids "3: every id above the ones before"
}

# -------------------------------------------------------------------------
# Instance B: cases 4-6 (restarts, crash, mark file).
B=
start_b() {
    [ -n "$B" ] && return 0
    B=$(pg_tmpdir)
    fault_init "$B" "fsync = on" || { bail "instance B initialised"; return 1; }
    ft_start "$B" || { bail "instance B started under libfaketime"; return 1; }
    helpers_sql "$B" || { bail "helpers created on instance B"; return 1; }
}

case_4() {
    echo "# case 4: mark on first start, clean restarts"
    start_b || return
    local mf id state L Lunix out ms fl
    mf=$(mark_file "$B")
    check "4: no mark file before the first id" test ! -e "$mf"
    read -r id state <<<"$(pg_val "$B" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "4: a missing mark file on first start is normal: ids work" "$state" 00000
    pg_val "$B" "INSERT INTO ids(id, phase) VALUES ($id, 'c4-first')" >/dev/null
    check "4: the first id wrote the mark file (32 bytes)" test "$(stat -c %s "$mf" 2>/dev/null)" = 32
    ms=$(mark_ms "$B")
    cmp_num "4: the mark (a reservation) is at or past the first id" "$ms" -ge "$((id >> 22))"

    pg_val "$B" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c4-before' FROM generate_series(1, 1000)" >/dev/null
    L=$(pg_val "$B" "SELECT max(id) FROM ids")
    Lunix=$(pg_val "$B" "SELECT id_unix($L)")
    pg_stop "$B"
    is "4: a clean shutdown writes the exact last millisecond" "$(mark_ms "$B")" "$((L >> 22))"
    is "4: ... flagged clean" "$(mark_flags "$B")" 1

    # Restart with the clock 1 s behind the last id.
    ft_set_clock "$B" "$(awk -v l="$Lunix" 'BEGIN { printf "%.6f", l - 1 }')"
    ft_start "$B" || { bail "4: restarted with the clock 1 s behind"; return; }
    # Again, so that the startup time does not eat into the second.
    pg_val "$B" "SELECT snowflake_stats_reset()" >/dev/null
    ft_set_clock "$B" "$(awk -v l="$Lunix" 'BEGIN { printf "%.6f", l - 1 }')"
    out=$(run_probe "$B" resume 10 c4-restart)
    probe_fields "$out"
    is "4: clock 1 s behind the last id after a clean restart: refused with SF001" "$P_STATE" SF001
    local n
    n=$(behind_ms "$P_MSG")
    # Up to 1000 ms, less the time psql took to connect after the clock was set.
    if [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 5 ] && [ "$n" -le 1000 ]; then
        ok "4: message: $P_MSG"
    else
        not_ok "4: message says the clock is behind by up to 1 s" "got '$P_MSG'"
    fi
    if [ -n "$P_AFTER" ]; then
        ok "4: ids resume once the clock passes the last id ($P_REFUSALS refused calls)"
        cmp_num "4: the first id after the restart is above the last before" "$P_AFTER" -gt "$L"
        is "4: ... and not earlier than the hint said" \
            "$(pg_val "$B" "SELECT snowflake_timestamp($P_AFTER) >= resume_at(\$\$$P_HINT\$\$)")" t
    else
        not_ok "4: ids resume once the clock passes the last id" "probe: $out"
    fi
    cmp_num "4: startup_waits counted" "$(stat_val "$B" startup_waits)" -gt 0

    # Clean restart with a correct clock: no wait.
    pg_val "$B" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c4-middle' FROM generate_series(1, 100)" >/dev/null
    L=$(pg_val "$B" "SELECT max(id) FROM ids")
    pg_stop "$B"
    ft_set "$B" 0
    ft_start "$B" || { bail "4: clean restart with a correct clock"; return; }
    read -r id state ms <<<"$(pg_val "$B" "SELECT coalesce(id::text, 'none') || ' ' || state || ' ' || round(ms::numeric, 1) FROM timed_nextval()")"
    is "4: clean restart, correct clock: the first id right away" "$state" 00000
    if fcmp "${ms:-9999}" '<' 250; then ok "4: ... in $ms ms"; else not_ok "4: ... quickly" "took $ms ms"; fi
    cmp_num "4: ... above the last id before the restart" "${id:-0}" -gt "$L"
    pg_val "$B" "INSERT INTO ids(id, phase) VALUES ($id, 'c4-after')" >/dev/null
    local sw ev rw
    read -r sw ev rw <<<"$(pg_val "$B" "SELECT startup_waits || ' ' || clock_backwards_events || ' ' || reservation_waits FROM snowflake_stats")"
    is "4: ... startup_waits = 0" "$sw" 0
    is "4: ... clock_backwards_events = 0" "$ev" 0
    is "4: ... reservation_waits = 1 (the first id waits for the worker's reservation)" "$rw" 1
    # A quiet server: the worker keeps a reservation ahead of the clock, so an
    # id after a pause does not wait for the mark to be written.
    local res0
    res0=$(stat_val "$B" reservations)
    sleep 2.5
    read -r id state <<<"$(pg_val "$B" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "4: an id after 2.5 s of quiet" "$state" 00000
    pg_val "$B" "INSERT INTO ids(id, phase) VALUES ($id, 'c4-quiet')" >/dev/null
    is "4: ... did not wait for a reservation (reservation_waits still 1)" "$(stat_val "$B" reservation_waits)" 1
    cmp_num "4: ... the worker renewed while the server was quiet" "$(stat_val "$B" reservations)" -gt $((res0 + 2))
    no_duplicates "$B" ids "4: no duplicate id"
    ordered "$B" ids "4: every id above the ones before"
}

case_5() {
    echo "# case 5: kill -9 of the postmaster under load, restart with the clock 2 s back"
    start_b || return
    local script log pid status M markms out Munix min_after
    script=$(load_script "$B")
    log="$B/pgbench_c5.log"
    # ids is a logged table: what was committed survives the crash.
    pgbench_on "$B" -c 3 -j 3 -T 60 -f "$script" -D tbl=ids -D phase=c5-before >"$log" 2>&1 &
    pid=$!
    if ! wait_for "load" 30 test_phase_rows_at_least "$B" c5-before 2000; then
        kill "$pid" 2>/dev/null; wait "$pid"; bail "5: load running before the crash" "$(tail -5 "$log")"; return
    fi
    pg_kill9 "$B" || { bail "5: postmaster killed and reaped"; return; }
    if wait_for "gone" 10 pg_gone "$B" && [ ! -e "$B/data/postmaster.pid" ]; then
        ok "5: every process of the killed server is gone, its lock file removed"
    else
        not_ok "5: every process of the killed server is gone, its lock file removed"
    fi
    wait "$pid"; status=$?
    cmp_num "5: pgbench lost its server (exit status $status)" "$status" -ne 0
    is "5: the mark after the crash is a reservation (not flagged clean)" "$(mark_flags "$B")" 0
    markms=$(mark_ms "$B")

    ft_shift "$B" -2
    local off
    off=$(log_size "$B")
    ft_start "$B" || { bail "5: restarted after kill -9 with the clock 2 s back"; return; }
    like "5: the restart ran crash recovery" "$(log_since "$B" "$off")" 'not properly shut down|was interrupted'
    M=$(pg_val "$B" "SELECT max(id) FROM ids")
    cmp_num "5: $(count_where "$B" ids "phase = 'c5-before'") ids committed before the crash survived" \
        "$(count_where "$B" ids "phase = 'c5-before'")" -ge 2000
    cmp_num "5: the mark covers every committed id" "$markms" -ge "$((M >> 22))"
    # Anchor the clock 2 s behind the last committed id, however long the
    # restart took.
    Munix=$(pg_val "$B" "SELECT id_unix($M)")
    ft_set_clock "$B" "$(awk -v l="$Munix" 'BEGIN { printf "%.6f", l - 2 }')"
    pg_val "$B" "SELECT snowflake_stats_reset()" >/dev/null
    out=$(run_probe "$B" resume 15 c5-restart)
    probe_fields "$out"
    is "5: after the restart ids are refused (SF001) while the clock is behind the mark" "$P_STATE" SF001
    like "5: ... the hint names the time after the mark" "$P_HINT" 'ids resume when the clock (passes|reaches) '
    is "5: ... that time is the millisecond after the mark" \
        "$(pg_val "$B" "SELECT id_ms(snowflake_from_timestamp(resume_at(\$\$$P_HINT\$\$)))")" "$((markms + 1))"
    if [ -n "$P_AFTER" ]; then
        ok "5: ids resume once the clock passes the mark ($P_REFUSALS refused calls)"
        cmp_num "5: the first id after the restart is above every committed id" "$P_AFTER" -gt "$M"
        cmp_num "5: ... and beyond the mark" "$((P_AFTER >> 22))" -gt "$markms"
    else
        not_ok "5: ids resume once the clock passes the mark" "probe: $out"
    fi
    cmp_num "5: startup_waits counted" "$(stat_val "$B" startup_waits)" -gt 0

    log="$B/pgbench_c5b.log"
    pgbench_on "$B" -c 3 -j 3 -t 300 -f "$script" -D tbl=ids -D phase=c5-after >"$log" 2>&1
    pgbench_clean "$log" $? "5: load after the restart: no failed transaction"
    min_after=$(pg_val "$B" "SELECT min(id) FROM ids WHERE phase IN ('c5-after', 'c5-restart:after')")
    cmp_num "5: min(new ids) > max(ids committed before the crash)" "${min_after:-0}" -gt "$M"
    no_duplicates "$B" ids "5: no duplicate id"
    ordered "$B" ids "5: ids increase per client and exceed every id committed before"
}

test_phase_rows_at_least() { [ "$(count_where "$1" ids "phase = '$2'" 2>/dev/null || echo 0)" -ge "$3" ]; }

case_6() {
    echo "# case 6: corrupt mark file"
    start_b || return
    local mf good bad M off v state msg detail reason kind
    mf=$(mark_file "$B")
    pg_val "$B" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c6-before' FROM generate_series(1, 10)" >/dev/null
    M=$(pg_val "$B" "SELECT max(id) FROM ids")
    pg_stop "$B"
    ft_set "$B" 0
    good="$B/mark.good"
    cp "$mf" "$good"
    for kind in checksum truncated magic; do
        bad="$B/mark.$kind"
        case $kind in
            checksum) cp "$good" "$bad"; flip_byte "$bad" 9
                      reason="the checksum does not match the contents" ;;
            truncated) head -c 20 "$good" >"$bad"
                       reason="the file does not have the size of a mark" ;;
            magic) cp "$good" "$bad"; flip_byte "$bad" 0
                   reason="the file does not start with the mark's magic bytes" ;;
        esac
        install -o postgres -g postgres -m 600 "$bad" "$mf"
        off=$(log_size "$B")
        ft_start "$B" || { bail "6 ($kind): the server starts with a corrupt mark"; continue; }
        if grep -A1 -F 'LOG:  snowflake high-water mark file "snowflake.mark" is unusable' <(log_since "$B" "$off") |
                grep -qF "DETAIL:  At server start, $reason."; then
            ok "6 ($kind): LOG at start: ...unusable, DETAIL: $reason"
        else
            not_ok "6 ($kind): LOG at start names the problem" "$(log_since "$B" "$off" | grep -i mark | head -3)"
        fi
        v=$(pg_psql "$B" -A -t -F $'\x1f' -c "SELECT state, msg, detail FROM try_nextval()")
        IFS=$'\x1f' read -r state msg detail <<<"$v"
        is "6 ($kind): snowflake_nextval() refused with XX001" "$state" XX001
        is "6 ($kind): message" "$msg" 'snowflake high-water mark file "snowflake.mark" is unusable'
        is "6 ($kind): detail" "$detail" "At server start, $reason."
        is "6 ($kind): snowflake_nextval_batch() refused too" \
            "$(pg_psql "$B" -A -t -c "SELECT count(*) FROM snowflake_nextval_batch(5)" 2>&1 | grep -c 'is unusable')" 1
        is "6 ($kind): snowflake_advance_floor() refused too" \
            "$(pg_psql "$B" -A -t -c "SELECT snowflake_advance_floor(1)" 2>&1 | grep -c 'is unusable')" 1
        is "6 ($kind): decoders still work" "$(pg_val "$B" "SELECT snowflake_worker_id($M) || ' ' || (snowflake_timestamp($M) IS NOT NULL)")" "7 true"
        pg_stop "$B"
        check "6 ($kind): the corrupt file is left as it was at shutdown" cmp -s "$mf" "$bad"
    done

    # The repair of docs/operations.md: with the clock past the last id,
    # remove the file and start.
    rm -f "$mf"
    ft_start "$B" || { bail "6: start after removing the mark"; return; }
    read -r v state <<<"$(pg_val "$B" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "6: after removing the mark (repair) ids work" "$state" 00000
    cmp_num "6: ... above the ids before" "${v:-0}" -gt "$M"
    pg_val "$B" "INSERT INTO ids(id, phase) VALUES ($v, 'c6-after')" >/dev/null
    no_duplicates "$B" ids "6: no duplicate id"
    ordered "$B" ids "6: every id above the ones before"
}

# -------------------------------------------------------------------------
case_7() {
    echo "# case 7: hot standby"
    local P S X v state msg hint
    P=$(pg_tmpdir)
    fault_init "$P" "wal_level = replica" "max_wal_senders = 4" "hot_standby = on" \
        || { bail "7: primary initialised"; return; }
    pg_start "$P" || { bail "7: primary started" "$(tail -5 "$P/server.log")"; return; }
    helpers_sql "$P" || { bail "7: helpers on the primary"; return; }
    pg_val "$P" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c7' FROM generate_series(1, 10)" >/dev/null
    X=$(pg_val "$P" "SELECT max(id) FROM ids")
    S=$(pg_tmpdir)
    if ! as_pg "$PGBIN/pg_basebackup" -h "$P" -p "$PG_PORT" -U postgres -D "$S/data" -R -X stream -c fast \
            >"$S/basebackup.log" 2>&1; then
        bail "7: pg_basebackup -R from the primary" "$(tail -5 "$S/basebackup.log")"; return
    fi
    pg_conf "$S" "unix_socket_directories = '$S'"
    pg_start "$S" || { bail "7: standby started" "$(tail -10 "$S/server.log")"; return; }
    is "7: the standby is in recovery" "$(pg_val "$S" "SELECT pg_is_in_recovery()")" t
    wait_for "replay" 20 test_same_count "$P" "$S" \
        || not_ok "7: the standby replays the primary's ids"
    v=$(pg_psql "$S" -A -t -F $'\x1f' -c "SELECT state, msg, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg hint <<<"$v"
    is "7: snowflake_nextval() on the standby: SQLSTATE 25006" "$state" 25006
    is "7: ... message" "$msg" "cannot issue snowflake ids during recovery"
    like "7: ... hint says where to issue ids" "$hint" 'primary'
    is "7: snowflake_nextval_batch() on the standby refused too" \
        "$(pg_psql "$S" -A -t -c "\\set VERBOSITY verbose" -c "SELECT count(*) FROM snowflake_nextval_batch(5)" 2>&1 | grep -c 'ERROR:  25006')" 1
    is "7: snowflake_advance_floor() on the standby refused too" \
        "$(pg_psql "$S" -A -t -c "\\set VERBOSITY verbose" -c "SELECT snowflake_advance_floor($X)" 2>&1 | grep -c 'ERROR:  25006')" 1
    is "7: decoders work on the standby" \
        "$(pg_val "$S" "SELECT snowflake_worker_id($X) || ' ' || snowflake_sequence($X) || ' ' || snowflake_timestamp($X)")" \
        "$(pg_val "$P" "SELECT snowflake_worker_id($X) || ' ' || snowflake_sequence($X) || ' ' || snowflake_timestamp($X)")"
    is "7: snowflake_decode() on the standby" "$(pg_val "$S" "SELECT worker_id FROM snowflake_decode($X)")" 7
    is "7: the primary still issues ids" "$(pg_val "$P" "SELECT state FROM try_nextval()")" 00000
    pg_stop "$P"
    is "7: pg_promote() on the standby" "$(pg_val "$S" "SELECT pg_promote(true, 60)")" t
    read -r v state <<<"$(pg_val "$S" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "7: the promoted standby issues ids" "$state" 00000
    cmp_num "7: ... above the primary's ids it replayed" "${v:-0}" -gt "$X"
    pg_stop "$S"
}

test_same_count() {
    [ "$(pg_val "$1" "SELECT count(*) FROM ids")" = "$(pg_val "$2" "SELECT count(*) FROM ids" 2>/dev/null)" ]
}

# -------------------------------------------------------------------------
case_8() {
    echo "# case 8: bad settings"
    local E line name off
    E=$(pg_tmpdir)
    fault_init "$E" || { bail "8: instance initialised"; return; }
    local bad=(
        "snowflake.worker_id = 1024|snowflake.worker_id"
        "snowflake.worker_id = -2|snowflake.worker_id"
        "snowflake.epoch = 'not a timestamp'|snowflake.epoch"
        "snowflake.epoch = 'now'|snowflake.epoch"
        "snowflake.epoch = '2024-01-01 00:00:00 Foo/Bar'|snowflake.epoch"
        "snowflake.epoch = '2024-01-01'|snowflake.epoch"
        "snowflake.clock_tolerance_ms = -1|snowflake.clock_tolerance_ms"
        "snowflake.clock_tolerance_ms = 'lots'|snowflake.clock_tolerance_ms"
    )
    for entry in "${bad[@]}"; do
        line=${entry%%|*}
        name=${entry#*|}
        fault_conf "$E" "$line"
        off=$(log_size "$E")
        if pg_start "$E"; then
            not_ok "8: '$line' stops the server from starting" "it started"
            pg_stop "$E"
            continue
        fi
        pg_reap "$E"
        if grep -q "FATAL:  invalid value for parameter \"$name\"" <(log_since "$E" "$off"); then
            ok "8: '$line': no start, FATAL names $name"
        else
            not_ok "8: '$line': no start, FATAL names $name" "$(log_since "$E" "$off" | grep -E 'FATAL|WARNING' | head -3)"
        fi
    done

    fault_conf "$E" "snowflake.clock_tolerance_ms = 7"
    pg_start "$E" || { bail "8: starts with good settings" "$(tail -5 "$E/server.log")"; return; }
    helpers_sql "$E" || { bail "8: helpers created"; return; }
    is "8: clock_tolerance_ms from the configuration" "$(pg_val "$E" "SHOW snowflake.clock_tolerance_ms")" 7ms
    for line in "snowflake.clock_tolerance_ms = -3" "snowflake.clock_tolerance_ms = 20000" \
                "snowflake.clock_tolerance_ms = 'soon'"; do
        fault_conf "$E" "$line"
        off=$(log_size "$E")
        pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
        if wait_for "reload logged" 10 log_has_re "$E" "$off" \
                '(invalid value for parameter|outside the valid range for parameter) "snowflake.clock_tolerance_ms"'; then
            ok "8: reload of '$line' is rejected with a message"
        else
            not_ok "8: reload of '$line' is rejected with a message" "$(log_since "$E" "$off" | head -5)"
        fi
        is "8: ... the previous value is kept" "$(pg_val "$E" "SHOW snowflake.clock_tolerance_ms")" 7ms
    done
    fault_conf "$E" "snowflake.clock_tolerance_ms = 9"
    pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
    if wait_for "reload applied" 10 test_show "$E" snowflake.clock_tolerance_ms 9ms; then
        ok "8: a good reloaded clock_tolerance_ms is applied"
    else
        not_ok "8: a good reloaded clock_tolerance_ms is applied" "SHOW: $(pg_val "$E" "SHOW snowflake.clock_tolerance_ms")"
    fi
    fault_conf "$E" "snowflake.clock_tolerance_ms = 9" "snowflake.worker_id = 8"
    off=$(log_size "$E")
    pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
    if wait_for "reload logged" 10 log_has "$E" "$off" '"snowflake.worker_id" cannot be changed without restarting'; then
        ok "8: a reloaded worker_id is refused with a message"
    else
        not_ok "8: a reloaded worker_id is refused with a message" "$(log_since "$E" "$off" | head -5)"
    fi
    is "8: ... worker_id kept" "$(pg_val "$E" "SHOW snowflake.worker_id")" 7
    is "8: ... ids still carry it" "$(pg_val "$E" "SELECT snowflake_worker_id(snowflake_nextval())")" 7
    # An epoch naming an unknown time zone, reloaded: PostgreSQL 15's own date
    # parser raises an error for those, which in the postmaster's reload would
    # be FATAL; the extension's parser must refuse it quietly instead.
    fault_conf "$E" "snowflake.clock_tolerance_ms = 9" "snowflake.worker_id = 7" \
        "snowflake.epoch = '2024-01-01 00:00:00 Foo/Bar'"
    off=$(log_size "$E")
    pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
    if wait_for "reload logged" 10 log_has_re "$E" "$off" 'invalid value for parameter "snowflake.epoch"'; then
        ok "8: a reloaded epoch with an unknown time zone is refused with a message"
    else
        not_ok "8: a reloaded epoch with an unknown time zone is refused with a message" "$(log_since "$E" "$off" | head -5)"
    fi
    is "8: ... the server is still up and issues ids" \
        "$(pg_val "$E" "SELECT snowflake_worker_id(snowflake_nextval())" 2>&1)" 7
    pg_stop "$E"

    # A clock the epoch does not fit is no bad setting: the server starts,
    # warns once, refuses ids with SF002 while it lasts, and does not warn
    # again in every process at a reload.
    local v state msg label clock epoch
    for entry in "2024-01-01 (before the epoch)|1704067200|2025-01-01 00:00:00+00" \
                 "now (an epoch in 2999)|+0|2999-01-01 00:00:00+00"; do
        IFS='|' read -r label clock epoch <<<"$entry"
        fault_conf "$E" "snowflake.epoch = '$epoch'"
        if [ "$clock" = +0 ]; then ft_set "$E" 0; else ft_set_clock "$E" "$clock"; fi
        off=$(log_size "$E")
        ft_start "$E" || { not_ok "8: clock $label at boot: the server starts"; continue; }
        ok "8: clock $label at boot: the server starts"
        is "8: ... with one WARNING naming the epoch" \
            "$(log_since "$E" "$off" | grep -c 'WARNING:  system clock .* does not fit snowflake.epoch')" 1
        v=$(pg_psql "$E" -A -t -F $'\x1f' -c "SELECT state, msg FROM try_nextval()")
        IFS=$'\x1f' read -r state msg <<<"$v"
        is "8: ... ids refused with SF002" "$state" SF002
        off=$(log_size "$E")
        pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
        sleep 0.5
        pg_val "$E" "SELECT 1" >/dev/null
        sleep 0.5
        is "8: ... a reload warns no more" "$(log_since "$E" "$off" | grep -c 'does not fit snowflake.epoch')" 0
        pg_stop "$E"
    done
    fault_conf "$E"
    ft_set "$E" 0
}

log_has() { log_since "$1" "$2" | grep -qF "$3"; }
log_has_re() { log_since "$1" "$2" | grep -qE "$3"; }
test_show() { [ "$(pg_val "$1" "SHOW $2")" = "$3" ]; }

# -------------------------------------------------------------------------
# 9: a clock glitch far ahead must not move the durable mark. The operations
# guide promises that after a crash "ids resume once the clock passes the last
# reservation: at most one second after the crash with a correct clock".
case_9() {
    echo "# case 9: clock glitches forward, then a crash: ids resume within a second"
    local C out saved markms idms lastms
    C=$(pg_tmpdir)
    fault_init "$C" "fsync = on" || { bail "9: instance initialised"; return; }
    ft_start "$C" || { bail "9: started under libfaketime"; return; }
    helpers_sql "$C" || { bail "9: helpers created"; return; }

    # 9a: while ids are issued, the clock jumps past the end of the id range
    # (year 2100) for a moment: ids are refused (SF002), none is issued there.
    out="$C/probe_9a.out"
    run_probe "$C" step 20 c9a >"$out" 2>&1 &
    local pid=$!
    wait_for "probe issuing" 10 app_running "$C" probe:issuing || { wait "$pid"; bail "9a: probe started" "$(cat "$out")"; return; }
    sleep 0.3
    ft_get_us "$C"; saved=$REPLY
    ft_set_clock "$C" 4102444800                # 2100-01-01 00:00:00 UTC
    wait_for "probe refused" 10 app_running "$C" probe:refused
    sleep 0.5                                   # several ticks of the mark worker
    markms=$(mark_ms "$C")
    ft_set_us "$C" "$saved"
    wait "$pid"
    probe_fields "$(cat "$out")"
    is "9a: clock past the end of the id range: SQLSTATE SF002" "$P_STATE" SF002
    is "9a: ... message" "$P_MSG" "system clock is past the end of the id range of snowflake.epoch"
    cmp_num "9a: ids resume when the clock is put right" "${P_AFTER:-0}" -gt "$P_BEFORE"
    lastms=$((P_BEFORE >> 22))
    if [ "$markms" -le $((lastms + 2000)) ]; then
        ok "9a: the durable mark stayed near the last id"
    else
        not_ok "9a: the durable mark stayed near the last id" \
            "mark $markms ms, last id at $lastms ms: $(( (markms - lastms) / 86400000 )) days ahead (end of range: $(( (1 << 41) - 1 )))"
    fi
    pg_kill9 "$C" && wait_for "gone" 10 pg_gone "$C" || { bail "9a: postmaster killed"; return; }
    ft_start "$C" || { bail "9a: restarted"; return; }
    probe_fields "$(run_probe "$C" resume 3 c9a-restart)"
    if [ -n "$P_AFTER" ]; then
        ok "9a: after kill -9 and restart with a correct clock, ids within 3 s"
    else
        not_ok "9a: after kill -9 and restart with a correct clock, ids within 3 s" \
            "$P_STATE: $P_MSG" "$P_HINT"
    fi

    # 9b: a plain glitch of +1 day right after some ids (the worker still
    # renews), with no id issued during it.
    pg_stop "$C"
    rm -f "$(mark_file "$C")"                   # the repair of docs/operations.md
    ft_start "$C" || { bail "9b: restarted"; return; }
    idms=$(pg_val "$C" "SELECT max(id_ms(snowflake_nextval())) FROM generate_series(1, 20000)")
    ft_shift "$C" 86400
    sleep 0.4                                   # several ticks of the mark worker
    ft_shift "$C" -86400
    markms=$(mark_ms "$C")
    # The worker keeps renewing while the server is quiet, a window ahead of
    # the clock: the mark follows the clock, not the glitch.
    nowms=$(pg_val "$C" "SELECT id_ms(snowflake_from_timestamp(clock_timestamp()))")
    if [ "$markms" -le $((nowms + 2000)) ]; then
        ok "9b: a +1 day glitch with no id in it leaves the durable mark near the clock ($((markms - nowms)) ms ahead)"
    else
        not_ok "9b: a +1 day glitch with no id in it leaves the durable mark near the clock" \
            "mark $markms ms, clock at $nowms ms, last id at $idms ms: $(( (markms - nowms) / 1000 )) s ahead"
    fi
    pg_kill9 "$C" && wait_for "gone" 10 pg_gone "$C" || { bail "9b: postmaster killed"; return; }
    ft_start "$C" || { bail "9b: restarted"; return; }
    probe_fields "$(run_probe "$C" resume 3 c9b-restart)"
    if [ -n "$P_AFTER" ]; then
        ok "9b: after kill -9 and restart with a correct clock, ids within 3 s"
    else
        not_ok "9b: after kill -9 and restart with a correct clock, ids within 3 s" \
            "$P_STATE: $P_MSG" "$P_HINT"
    fi
    pg_stop "$C"
}

# -------------------------------------------------------------------------
# 10: a backend killed with SIGKILL makes the postmaster reset shared memory
# and start again from the mark on disk: the last reservation, up to a second
# ahead of a correct clock. Ids must wait that out, not fail with SF001.
case_10() {
    echo "# case 10: crash restart of shared memory: ids wait out the reservation"
    local C before victim after errors i
    C=$(pg_tmpdir)
    fault_init "$C" "fsync = on" || { bail "10: instance initialised"; return; }
    pg_start "$C" || { bail "10: started"; return; }
    helpers_sql "$C" || { bail "10: helpers created"; return; }
    before=$(pg_val "$C" "SELECT max(x) FROM (SELECT snowflake_nextval() AS x FROM generate_series(1, 20000)) s")
    pg_psql "$C" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
    victim=""
    for i in $(seq 1 100); do
        victim=$(pg_val "$C" "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' AND pid <> pg_backend_pid()")
        [ -n "$victim" ] && break
        sleep 0.05
    done
    [ -n "$victim" ] || { bail "10: a backend to kill"; return; }
    kill -9 "$victim"
    wait 2>/dev/null
    # The first id after the reset, as soon as connections are accepted.
    after=""
    for i in $(seq 1 200); do
        after=$(pg_val "$C" "SELECT snowflake_nextval()" 2>&1) && break
        case "$after" in *SF001*|*"moved backwards"*) break ;; esac
        sleep 0.05
    done
    case "$after" in
        ''|*[!0-9]*) not_ok "10: the first id after the reset is issued (no clock error)" "$after" ;;
        *) ok "10: the first id after the reset is issued (no clock error)" ;;
    esac
    cmp_num "10: ... and it is above every id before the crash" "${after:-0}" -gt "$before"
    echo "# startup_waits after the reset: $(pg_val "$C" "SELECT startup_waits FROM snowflake_stats")"
    errors=$(pg_val "$C" "SELECT clock_backwards_errors + clock_backwards_events FROM snowflake_stats")
    is "10: no clock step counted for the reservation" "$errors" 0
    pg_stop "$C"
}

# -------------------------------------------------------------------------
# -------------------------------------------------------------------------
# 11: the storage under the mark is slow or fails. Only the mark worker
# writes the mark; backends wait for it in interruptible slices.

# storage_fault DIR WHAT...: sets the fault storage_shim.c applies.
storage_fault() {
    local dir=$1; shift
    printf '%s\n' "$*" >"$dir/storage_fault.tmp"
    mv -f "$dir/storage_fault.tmp" "$dir/storage_fault"
}
# reservation_behind DIR [SECONDS]: the reservation ended more than SECONDS
# (default 0) ago.
reservation_behind() {
    [ "$(pg_val "$1" "SELECT high_water_mark < clock_timestamp() - interval '${2:-0} s' FROM snowflake_stats")" = t ]
}
ids_flow() { [ "$(pg_val "$1" "SELECT state FROM try_nextval()" 2>/dev/null)" = 00000 ]; }
nextval_waiting() {
    [ "$(pg_val "$1" "SELECT count(*) FROM pg_stat_activity WHERE query = '$2' AND wait_event_type = 'Extension'")" -gt 0 ]
}
window_is() { [ "$(stat_val "$1" reservation_window_ms)" = "$2" ]; }

case_11() {
    echo "# case 11: slow and failing storage under the mark"
    local D out v t0 el state msg before after pid markms lastms
    [ -n "$STORAGE_SHIM" ] || { bail "11: test/fault/storage_shim.c compiled" "$(head -3 "$SHIM_DIR/storage_shim.log")"; return; }
    D=$(pg_tmpdir)
    fault_init "$D" "fsync = on" || { bail "11: instance initialised"; return; }
    storage_fault "$D" none
    local denv=("LD_PRELOAD=$STORAGE_SHIM" "SF_STORAGE_FAULT_FILE=$D/storage_fault")
    pg_start "$D" "${denv[@]}" || { bail "11: started with the storage shim" "$(tail -5 "$D/server.log")"; return; }
    helpers_sql "$D" || { bail "11: helpers created"; return; }
    pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c11-start' FROM generate_series(1, 1000)" >/dev/null

    # 11a: every fsync of the mark takes 1.2 s: ids slow down, never stop.
    storage_fault "$D" fsync_delay_ms 1200
    probe_fields "$(PG_TIMEOUT=60 run_probe "$D" step 8 c11a)"
    is "11a: 8 s of ids while every mark fsync takes 1.2 s: no error" "$P_STATE" ""
    cmp_num "11a: ... ids kept flowing ($P_ISSUED)" "${P_ISSUED:-0}" -gt 10000
    is "11a: ... in order" "$P_VIOL" 0
    cmp_num "11a: last_mark_write_ms shows the slow write" "$(stat_val "$D" last_mark_write_ms)" -ge 1200
    cmp_num "11a: reservation_window_ms grew to twice that" "$(stat_val "$D" reservation_window_ms)" -ge 2400

    # 10 s per fsync: the reservation runs out while the worker writes. A call
    # waiting for it ends at statement_timeout, or at a cancel, at once. The
    # reservation must have ended 1.5 s ago: a write begun with the 1.2 s
    # delay would have renewed it by then, so the write in flight is a 10 s
    # one, with at least 7 s of it left.
    storage_fault "$D" fsync_delay_ms 10000
    before=$(pg_val "$D" "SELECT max(id) FROM ids")
    if wait_for "reservation behind" 20 reservation_behind "$D" 1.5; then
        t0=$(real_now)
        v=$(PG_TIMEOUT=40 pg_psql "$D" -A -t -c "SET statement_timeout = '500ms'" -c "SELECT snowflake_nextval()" 2>&1)
        el=$(elapsed_since "$t0")
        like "11a: statement_timeout ends a call waiting for the mark" "$v" 'canceling statement due to statement timeout'
        if fcmp "$el" '<' 1.5; then ok "11a: ... after $el s (timeout 0.5 s)"; else not_ok "11a: ... promptly" "took $el s"; fi
        out="$D/c11_cancel.out"
        PG_TIMEOUT=40 pg_psql "$D" -A -t -c "SELECT snowflake_nextval()" >"$out" 2>&1 &
        pid=$!
        if wait_for "waiting" 5 nextval_waiting "$D" "SELECT snowflake_nextval()"; then
            t0=$(real_now)
            pg_val "$D" "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT snowflake_nextval()' AND pid <> pg_backend_pid()" >/dev/null
            wait "$pid"
            el=$(elapsed_since "$t0")
            like "11a: pg_cancel_backend() ends a call waiting for the mark" "$(cat "$out")" 'canceling statement due to user request'
            if fcmp "$el" '<' 1; then ok "11a: ... within $el s"; else not_ok "11a: ... within a second" "took $el s"; fi
        else
            kill "$pid" 2>/dev/null; wait "$pid"
            not_ok "11a: a call waits for the mark (wait event Extension)" "$(cat "$out")"
        fi
    else
        not_ok "11a: the reservation runs out while a 10 s write runs" "high_water_mark $(stat_val "$D" high_water_mark)"
    fi
    storage_fault "$D" none
    if wait_for "ids" 20 ids_flow "$D"; then ok "11a: ids flow again once the storage is fast"; else not_ok "11a: ids flow again once the storage is fast"; fi
    pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c11a-after' FROM generate_series(1, 100)" >/dev/null
    after=$(pg_val "$D" "SELECT min(id) FROM ids WHERE phase = 'c11a-after'")
    cmp_num "11a: ... above every id before the cancelled calls" "${after:-0}" -gt "$before"

    wait_for "window back to 1 s" 10 window_is "$D" 1000 || not_ok "11: the window shrinks back with fast writes"

    # 11b, 11c: the mark cannot be written. After a clean restart the first
    # id needs a reservation: it gets the error at once; nothing is issued
    # beyond the mark on disk; ids resume when the fault is gone.
    local entry fault code text label off
    for entry in "11b|fsync_eio|58030|(fsync): Input/output error" \
                 "11c|write_enospc|53100|(write): No space left on device"; do
        IFS='|' read -r label fault code text <<<"$entry"
        pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), '$label-before' FROM generate_series(1, 100)" >/dev/null
        pg_stop "$D"
        storage_fault "$D" "$fault"
        off=$(log_size "$D")
        pg_start "$D" "${denv[@]}" || { bail "$label: restarted" "$(tail -5 "$D/server.log")"; return; }
        t0=$(real_now)
        v=$(PG_TIMEOUT=30 pg_psql "$D" -A -t -F $'\x1f' -c "SELECT state, msg FROM try_nextval()")
        el=$(elapsed_since "$t0")
        IFS=$'\x1f' read -r state msg <<<"$v"
        is "$label: $fault: snowflake_nextval() fails with SQLSTATE $code" "$state" "$code"
        is "$label: ... message" "$msg" "could not write snowflake high-water mark file \"snowflake.mark\" $text"
        if fcmp "$el" '<' 1; then ok "$label: ... at once ($el s)"; else not_ok "$label: ... at once" "took $el s"; fi
        markms=$(mark_ms "$D")
        lastms=$(pg_val "$D" "SELECT id_ms(snowflake_from_timestamp(last_timestamp)) FROM snowflake_stats")
        cmp_num "$label: nothing issued beyond the mark on disk ($lastms <= $markms)" "$lastms" -le "$markms"
        check "$label: the worker logs the failure" log_has "$D" "$off" "could not write snowflake high-water mark file \"snowflake.mark\" ${text%%:*}"
        storage_fault "$D" none
        if wait_for "ids" 5 ids_flow "$D"; then ok "$label: ids resume once the fault is gone"; else not_ok "$label: ids resume once the fault is gone"; fi
    done
    # 11d: a renewal fails while nobody asks for ids, and the clock runs past
    # the reservation: once the fault is gone the worker writes again by
    # itself (the error must not linger until an id request comes: /healthz
    # and snowflake_ready report it).
    pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c11d' FROM generate_series(1, 100)" >/dev/null
    storage_fault "$D" fsync_eio
    off=$(log_size "$D")
    wait_for "failed renewal" 10 log_has "$D" "$off" "could not write snowflake high-water mark file" ||
        not_ok "11d: an idle renewal fails" "no failure logged"
    sleep 2  # the clock passes the reservation, nobody asks for ids
    markms=$(mark_ms "$D")
    storage_fault "$D" none
    mark_moved() { [ "$(mark_ms "$D")" -gt "$markms" ]; }
    if wait_for "rewritten" 10 mark_moved; then
        ok "11d: the idle worker writes the mark again once the fault is gone"
    else
        not_ok "11d: the idle worker writes the mark again once the fault is gone" "mark still $markms"
    fi
    check "11d: ... and logs it" log_has "$D" "$off" 'snowflake high-water mark file "snowflake.mark" written again'
    no_duplicates "$D" ids "11: no duplicate id"
    ordered "$D" ids "11: every id above the ones before"
    pg_stop "$D"
}

# -------------------------------------------------------------------------
# 12: a call waiting for the clock re-reads it: a further step back while it
# waits is an error at once, not a wait of the new distance.
call_waiting() {
    [ "$(pg_val "$1" "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%$2%' AND state = 'active' AND pid <> pg_backend_pid()")" -gt 0 ]
}
case_12() {
    echo "# case 12: the clock steps back while a call waits for it"
    start_a || return
    local out pid t1 el state msg errs0
    fault_conf "$A" "snowflake.clock_tolerance_ms = 10000"
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    wait_for "reload" 10 test_show "$A" snowflake.clock_tolerance_ms 10s || { bail "12: tolerance 10 s"; return; }
    pg_val "$A" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c12' FROM generate_series(1, 10)" >/dev/null
    errs0=$(stat_val "$A" clock_backwards_errors)
    ft_shift "$A" -5                            # the next call waits about 5 s
    out="$A/c12.out"
    PG_TIMEOUT=30 pg_psql "$A" -A -t -F $'\x1f' -c "SELECT state, msg, 'c12-wait' FROM try_nextval()" >"$out" 2>&1 &
    pid=$!
    wait_for "waiting" 5 call_waiting "$A" c12-wait || not_ok "12: a call waits for the clock"
    sleep 0.5
    ft_shift "$A" -3600
    t1=$(real_now)
    wait "$pid"
    el=$(elapsed_since "$t1")
    IFS=$'\x1f' read -r state msg _ <"$out"
    is "12: the waiting call fails with SF001" "$state" SF001
    like "12: ... naming the whole step" "$msg" '^system clock moved backwards by 36[0-9]{5} ms$'
    if fcmp "$el" '<' 1; then ok "12: ... within $el s of the step"; else not_ok "12: ... within a second of the step" "took $el s"; fi
    cmp_num "12: clock_backwards_errors counted" "$(stat_val "$A" clock_backwards_errors)" -gt "$errs0"

    # A cancel ends a wait for the clock at once too.
    ft_shift "$A" +3600                         # 5 s behind again
    PG_TIMEOUT=30 pg_psql "$A" -A -t -c "SELECT 'c12-cancel', snowflake_nextval()" >"$out" 2>&1 &
    pid=$!
    if wait_for "waiting" 5 call_waiting "$A" c12-cancel; then
        t1=$(real_now)
        pg_val "$A" "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%c12-cancel%' AND pid <> pg_backend_pid()" >/dev/null
        wait "$pid"
        el=$(elapsed_since "$t1")
        like "12: pg_cancel_backend() ends a wait for the clock" "$(cat "$out")" 'canceling statement due to user request'
        if fcmp "$el" '<' 1; then ok "12: ... within $el s"; else not_ok "12: ... within a second" "took $el s"; fi
    else
        kill "$pid" 2>/dev/null; wait "$pid"
        not_ok "12: a second call waits for the clock" "$(cat "$out")"
    fi
    ft_shift "$A" +5
    fault_conf "$A"
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    wait_for "reload" 10 test_show "$A" snowflake.clock_tolerance_ms 5ms || not_ok "12: tolerance back to 5 ms"
    no_duplicates "$A" ids "12: no duplicate id"
}

# -------------------------------------------------------------------------
# 13: a clean stop that issued nothing after a crash keeps the crash
# reservation as it is: the start after it still waits it out.
case_13() {
    echo "# case 13: crash, restart, clean stop with no id: the reservation keeps its kind"
    local F M markms markunix
    F=$(pg_tmpdir)
    fault_init "$F" "fsync = on" || { bail "13: instance initialised"; return; }
    ft_start "$F" || { bail "13: started"; return; }
    helpers_sql "$F" || { bail "13: helpers created"; return; }
    pg_val "$F" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c13' FROM generate_series(1, 5000)" >/dev/null
    M=$(pg_val "$F" "SELECT max(id) FROM ids")
    pg_kill9 "$F" && wait_for "gone" 10 pg_gone "$F" || { bail "13: postmaster killed"; return; }
    markms=$(mark_ms "$F")
    is "13: the mark after the crash is a reservation" "$(mark_flags "$F")" 0
    ft_start "$F" || { bail "13: restarted"; return; }
    pg_stop "$F"
    is "13: a clean stop with no id issued keeps it a reservation" "$(mark_flags "$F")" 0
    is "13: ... at the same millisecond" "$(mark_ms "$F")" "$markms"
    ft_start "$F" || { bail "13: started again"; return; }
    markunix=$(awk -v m="$markms" 'BEGIN { printf "%.3f", (1735689600000 + m) / 1000 }')
    ft_set_clock "$F" "$(awk -v m="$markunix" 'BEGIN { printf "%.6f", m - 0.5 }')"
    probe_fields "$(PG_TIMEOUT=30 run_probe "$F" resume 5 c13)"
    is "13: the clock half a second behind it is waited out, not refused" "$P_STATE" ""
    cmp_num "13: ... the first id is above every id before the crash" "${P_AFTER:-0}" -gt "$M"
    cmp_num "13: ... and beyond the reservation" "$(( ${P_AFTER:-0} >> 22 ))" -gt "$markms"
    ft_set "$F" 0
    pg_stop "$F"
}

# -------------------------------------------------------------------------
# 14: snowflake_advance_floor(), for what PostgreSQL does not carry.
case_14() {
    echo "# case 14: snowflake_advance_floor()"
    local G fut v state msg detail hint fut3 after
    G=$(pg_tmpdir)
    fault_init "$G" "fsync = on" || { bail "14: instance initialised"; return; }
    pg_start "$G" || { bail "14: started"; return; }
    helpers_sql "$G" || { bail "14: helpers created"; return; }
    pg_val "$G" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c14' FROM generate_series(1, 100)" >/dev/null
    # A restored table holds ids of a node whose clock ran 20 minutes ahead.
    fut=$(pg_val "$G" "SELECT snowflake_compose(clock_timestamp() + interval '20 minutes', 3, 17)")
    check "14: snowflake_advance_floor(an id 20 minutes ahead) works" \
        pg_psql "$G" -c "SELECT snowflake_advance_floor($fut)"
    cmp_num "14: ... the mark on disk covers it" "$(mark_ms "$G")" -ge "$((fut >> 22))"
    v=$(pg_psql "$G" -A -t -F $'\x1f' -c "SELECT state, msg, detail, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg detail hint <<<"$v"
    is "14: ... ids wait for the clock to pass it: SF001" "$state" SF001
    like "14: ... the detail names the high-water mark" "$detail" 'high-water mark'
    is "14: ... the hint names a time after the id" \
        "$(pg_val "$G" "SELECT resume_at(\$\$$hint\$\$) > snowflake_timestamp($fut)")" t
    pg_kill9 "$G" && wait_for "gone" 10 pg_gone "$G" || { bail "14: postmaster killed"; return; }
    pg_start "$G" || { bail "14: restarted after kill -9"; return; }
    is "14: after kill -9 and a restart the floor holds (SF001)" "$(pg_val "$G" "SELECT state FROM try_nextval()")" SF001
    v=$(pg_psql "$G" -A -t -F $'\x1f' -c "SELECT state FROM (SELECT snowflake_advance_floor(1)) s, try_nextval()" 2>&1)
    is "14: a floor below it changes nothing" "$v" SF001
    # Back to a clock that passes the floor: remove the mark (the repair).
    pg_stop "$G"
    rm -f "$(mark_file "$G")"
    pg_start "$G" || { bail "14: restarted without the mark"; return; }
    v=$(pg_psql "$G" -A -t -c "SELECT snowflake_advance_floor(snowflake_compose(clock_timestamp() + interval '2 hours', 3, 0))" 2>&1)
    like "14: an id two hours ahead is refused" "$v" 'snowflake id [0-9]+ is more than an hour ahead of the clock'
    like "14: a negative id is refused" "$(pg_psql "$G" -A -t -c "SELECT snowflake_advance_floor(-1)" 2>&1)" 'snowflake id -1 is negative'
    fut3=$(pg_val "$G" "SELECT snowflake_compose(clock_timestamp() + interval '1.5 s', 1023, 4095)")
    pg_val "$G" "SELECT snowflake_advance_floor($fut3)" >/dev/null
    probe_fields "$(PG_TIMEOUT=30 run_probe "$G" resume 5 c14)"
    cmp_num "14: ids resume once the clock passes an id 1.5 s ahead, above it" "${P_AFTER:-0}" -gt "$fut3"
    pg_stop "$G"
}

# -------------------------------------------------------------------------
# 15: snowflake.max_clock_error_ms against what the kernel says of the clock
# (timex_shim.c answers ntp_adjtime() from a file: this machine's own clock
# state is whatever it is).
case_15() {
    echo "# case 15: clock health: snowflake.max_clock_error_ms"
    local H v state msg detail hint
    [ -n "$TIMEX_SHIM" ] || { bail "15: test/fault/timex_shim.c compiled"; return; }
    H=$(pg_tmpdir)
    fault_init "$H" || { bail "15: instance initialised"; return; }
    timex_set "$H" "0 0 3000 1000"              # synchronised, 3 ms maximum error
    pg_start "$H" "LD_PRELOAD=$TIMEX_SHIM" "SF_TIMEX_FILE=$H/timex" || { bail "15: started"; return; }
    helpers_sql "$H" || { bail "15: helpers created"; return; }
    is "15: the stats show the kernel's view" \
        "$(pg_val "$H" "SELECT clock_synchronized || ' ' || clock_max_error_ms || ' ' || clock_est_error_ms FROM snowflake_stats")" "true 3 1"
    is "15: with the check off (0), ids whatever the kernel says" "$(pg_val "$H" "SELECT state FROM try_nextval()")" 00000
    fault_conf "$H" "snowflake.max_clock_error_ms = 10"
    pg_val "$H" "SELECT pg_reload_conf()" >/dev/null
    wait_for "reload" 10 test_show "$H" snowflake.max_clock_error_ms 10ms || not_ok "15: max_clock_error_ms reloaded"
    is "15: synchronised, 3 ms maximum error, limit 10 ms: ids" "$(pg_val "$H" "SELECT state FROM try_nextval()")" 00000
    timex_set "$H" "0 0 25000 2000"
    sleep 0.2                                   # each backend asks the kernel at most every 100 ms
    v=$(pg_psql "$H" -A -t -F $'\x1f' -c "SELECT state, msg, detail, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg detail hint <<<"$v"
    is "15: maximum error 25 ms above the limit: SF004" "$state" SF004
    is "15: ... message" "$msg" "system clock error is too large"
    like "15: ... detail names the error and the limit" "$detail" '25.*10'
    like "15: ... hint names chrony or ntpd" "$hint" 'chrony'
    timex_set "$H" "5 64 16000000 16000000"
    v=$(pg_psql "$H" -A -t -F $'\x1f' -c "SELECT state, msg, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg hint <<<"$v"
    is "15: kernel says unsynchronised: SF004" "$state" SF004
    is "15: ... message" "$msg" "system clock is not synchronised"
    like "15: ... hint names chrony" "$hint" 'chrony'
    cmp_num "15: refusals counted" "$(stat_val "$H" clock_health_refusals)" -ge 2
    is "15: the stats show it" "$(stat_val "$H" clock_synchronized)" f
    timex_set "$H" "0 0 2000 500"
    sleep 0.2
    is "15: synchronised again: ids" "$(pg_val "$H" "SELECT state FROM try_nextval()")" 00000
    pg_stop "$H"
}

# -------------------------------------------------------------------------
# 16: a crash with a correct clock, wherever the mark stands in its renewal
# cycle. The mark worker renews with less than half a window left, from the
# old end: the mark is 0.5 to 1.5 windows ahead of the clock.

# crash_at_leads DIR LABEL LEAD_MS...: for each LEAD_MS, waits until DIR's
# mark file reaches that far (+-50 ms) past the clock, kills the postmaster
# with SIGKILL, starts it again and checks that the first id waits instead
# of failing with SF001.
crash_at_leads() {
    local C=$1 label=$2 epoch_ms lead_ms want lo hi before after t i
    shift 2
    epoch_ms=$(pg_val "$C" "SELECT (extract(epoch FROM current_setting('snowflake.epoch')::timestamptz) * 1000)::bigint")
    mark_lead() { now_us; lead_ms=$(( $(mark_ms "$C") - (REPLY / 1000 - epoch_ms) )); }
    lead_at() { mark_lead; [ "$lead_ms" -ge "$lo" ] && [ "$lead_ms" -lt "$hi" ]; }
    for want in "$@"; do
        lo=$((want - 50)); hi=$((want + 50))
        before=$(pg_val "$C" "SELECT max(x) FROM (SELECT snowflake_nextval() AS x FROM generate_series(1, 1000)) s")
        if ! wait_for "lead $want" 20 lead_at; then
            not_ok "16 ($label): the mark reaches ${want} ms past the clock at some point" "last seen: $lead_ms ms"
            continue
        fi
        kill -9 "$(pg_postmaster_pid "$C")"
        t=$lead_ms
        pg_reap "$C"
        pg_start "$C" || { bail "16 ($label): restarted after the crash"; return 1; }
        after=""
        for i in $(seq 1 300); do
            after=$(pg_val "$C" "SELECT snowflake_nextval()" 2>&1) && break
            case "$after" in *SF001*|*"moved backwards"*) break ;; esac
            sleep 0.05
        done
        case "$after" in
            ''|*[!0-9]*) not_ok "16 ($label): mark ${t} ms ahead at the crash: the first id waits, no clock error" "$after" ;;
            *) ok "16 ($label): mark ${t} ms ahead at the crash: the first id waits, no clock error" ;;
        esac
        cmp_num "16 ($label): ... above every id before the crash" "${after:-0}" -gt "$before"
    done
}

case_16() {
    echo "# case 16: a crash with a correct clock at points of the renewal cycle"
    local C
    C=$(pg_tmpdir)
    fault_init "$C" "fsync = on" || { bail "16: instance initialised"; return; }
    pg_start "$C" || { bail "16: started"; return; }
    helpers_sql "$C" || { bail "16: helpers created"; return; }
    # A 1 s window: the mark is 0.5 to 1.5 s ahead.
    crash_at_leads "$C" "1 s window" 700 1000 1300 1450 || return
    is "16: no clock step counted" "$(pg_val "$C" "SELECT clock_backwards_errors FROM snowflake_stats")" 0
    pg_stop "$C"
}

run_cases fault "$@"
