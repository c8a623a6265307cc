# shellcheck shell=bash
# Cases of the fault suite (sourced by test/fault/run.sh): restarts of one
# instance (B), clean and after kill -9, and its mark file.
#   4  missing mark on first start; clean restarts with the clock behind
#   5  kill -9 under load, restart with the clock 2 s back
#   6  corrupt mark files: XX001, a LOG at start, the documented repair
#  17  a lost mark file: refused (58P01) until snowflake_advance_floor()

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
    # The mark worker writes the marker snowflake.walmark at its start, and
    # a mark file before it (src/pg/wal.cpp): here, the first start's
    # "nothing issued".
    wait_for "marker" 10 test -f "$B/data/snowflake.walmark" || not_ok "4: the mark worker wrote snowflake.walmark"
    is "4: before the first id, the mark file says nothing was issued (-1)" "$(mark_ms "$B")" -1
    is "4: ... exact (flagged clean)" "$(mark_flags "$B")" 1
    check "4: a first start logs nothing about a missing mark" log_lacks "$B" 0 'is missing'
    read -r id state <<<"$(pg_val "$B" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "4: a missing mark file on first start is normal: ids work" "$state" 00000
    pg_val "$B" "INSERT INTO ids(id, phase) VALUES ($id, 'c4-first')" >/dev/null
    check "4: the mark file is a mark (32 bytes)" test "$(stat -c %s "$mf" 2>/dev/null)" = 32
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

    # The repair of docs/operations.md: remove the file, start (ids are
    # refused: the file is lost, case 17), raise the floor past the last id.
    rm -f "$mf"
    ft_start "$B" || { bail "6: start after removing the mark"; return; }
    is "6: after removing the mark, ids are refused (58P01)" "$(pg_val "$B" "SELECT state FROM try_nextval()")" 58P01
    pg_val "$B" "SELECT snowflake_advance_floor(max(id)) FROM ids" >/dev/null
    read -r v state <<<"$(pg_val "$B" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "6: after snowflake_advance_floor(max(id)) (repair) ids work" "$state" 00000
    cmp_num "6: ... above the ids before" "${v:-0}" -gt "$M"
    pg_val "$B" "INSERT INTO ids(id, phase) VALUES ($v, 'c6-after')" >/dev/null
    no_duplicates "$B" ids "6: no duplicate id"
    ordered "$B" ids "6: every id above the ones before"
}

# -------------------------------------------------------------------------
# 17: a mark file lost from a data directory that issued ids (a file-level
# restore, a copy that left it behind) is refused, not taken for a first
# start: snowflake.walmark is written only once a mark file is on disk
# (src/pg/wal.cpp, src/core/mark.hpp judge_missing_mark).
case_17() {
    echo "# case 17: a lost mark file refuses ids until snowflake_advance_floor()"
    local L mf off v state msg detail hint id M
    L=$(pg_tmpdir)
    fault_init "$L" "fsync = on" || { bail "17: instance initialised"; return; }
    off=$(log_size "$L")
    pg_start "$L" || { bail "17: started"; return; }
    helpers_sql "$L" || { bail "17: helpers created"; return; }
    mf=$(mark_file "$L")
    read -r id state <<<"$(pg_val "$L" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "17: a first start (no mark, no marker) issues ids" "$state" 00000
    check "17: ... and logs nothing about a missing mark" log_lacks "$L" "$off" 'is missing'

    pg_val "$L" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c17-before' FROM generate_series(1, 1000)" >/dev/null
    M=$(pg_val "$L" "SELECT max(id) FROM ids")
    wait_for "marker" 10 test -f "$L/data/snowflake.walmark" || not_ok "17: the mark worker wrote snowflake.walmark"

    # A clean stop, then the mark file is lost.
    pg_stop "$L"
    rm -f "$mf"
    off=$(log_size "$L")
    pg_start "$L" || { bail "17: started without the mark file"; return; }
    if grep -A2 -F 'LOG:  snowflake high-water mark file "snowflake.mark" is missing' <(log_since "$L" "$off") |
            grep -qF 'snowflake_advance_floor()'; then
        ok "17: LOG at start: the mark file is missing, the hint names snowflake_advance_floor()"
    else
        not_ok "17: LOG at start says the mark file is missing" "$(log_since "$L" "$off" | grep -i mark | head -3)"
    fi
    v=$(pg_psql "$L" -A -t -F $'\x1f' -c "SELECT state, msg, detail, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg detail hint <<<"$v"
    is "17: snowflake_nextval() refused: SQLSTATE 58P01" "$state" 58P01
    is "17: ... message" "$msg" 'snowflake high-water mark file "snowflake.mark" is missing'
    like "17: ... the detail names the marker and the worker id" "$detail" 'snowflake\.walmark.*snowflake\.worker_id 7'
    like "17: ... the hint names snowflake_advance_floor() and the repair" "$hint" \
        'snowflake_advance_floor\(\).*"Repairing the high-water mark" in docs/operations\.md'
    is "17: snowflake_nextval_batch() refused too" \
        "$(pg_psql "$L" -A -t -c "SELECT count(*) FROM snowflake_nextval_batch(5)" 2>&1 | grep -c 'is missing')" 1
    pg_stop "$L"
    pg_start "$L" || { bail "17: restarted while refused"; return; }
    is "17: still refused after a clean restart" "$(pg_val "$L" "SELECT state FROM try_nextval()")" 58P01
    check "17: ... and no mark file was written meanwhile" test ! -e "$mf"

    # The repair: the floor past the highest id issued.
    off=$(log_size "$L")
    check "17: snowflake_advance_floor(the highest id) works while refused" \
        pg_psql "$L" -c "SELECT snowflake_advance_floor($M)"
    check "17: ... and logs that ids are no longer refused" log_has "$L" "$off" 'snowflake ids are no longer refused'
    read -r id state <<<"$(pg_val "$L" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "17: ids resume at once" "$state" 00000
    cmp_num "17: ... above every id before the loss" "${id:-0}" -gt "$M"
    pg_val "$L" "INSERT INTO ids(id, phase) VALUES ($id, 'c17-floor')" >/dev/null
    pg_stop "$L"
    pg_start "$L" || { bail "17: restarted after the repair"; return; }
    read -r id state <<<"$(pg_val "$L" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "17: ... durably: ids after a restart" "$state" 00000
    pg_val "$L" "INSERT INTO ids(id, phase) VALUES ($id, 'c17-restart')" >/dev/null

    # After a crash the WAL since the last checkpoint holds the reservations:
    # replay writes the mark file again from the last one, which covers every
    # id issued, and nothing is refused.
    pg_val "$L" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c17-crash' FROM generate_series(1, 1000)" >/dev/null
    M=$(pg_val "$L" "SELECT max(id) FROM ids")
    pg_kill9 "$L" && wait_for "gone" 10 pg_gone "$L" || { bail "17: postmaster killed"; return; }
    rm -f "$mf"
    off=$(log_size "$L")
    pg_start "$L" || { bail "17: restarted after kill -9 without the mark file"; return; }
    check "17: crash recovery replays a snowflake record and writes the mark file again" \
        log_has "$L" "$off" 'snowflake high-water mark file "snowflake.mark" recreated from the WAL'
    read -r id state <<<"$(pg_val "$L" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "17: ... ids are not refused" "$state" 00000
    cmp_num "17: ... and are above every id committed before the crash" "${id:-0}" -gt "$M"
    pg_val "$L" "INSERT INTO ids(id, phase) VALUES ($id, 'c17-after')" >/dev/null
    no_duplicates "$L" ids "17: no duplicate id"
    ordered "$L" ids "17: every id above the ones before"
    pg_stop "$L"
}

# log_lacks DIR OFFSET TEXT: the server log does not have TEXT after OFFSET.
log_lacks() { ! log_has "$@"; }
