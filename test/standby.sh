#!/bin/bash
# Standby suite of snowflake: the high-water mark carried by the WAL
# (src/pg/wal.cpp). A primary and streaming standbys (pg_basebackup -R), all
# with the same static snowflake.worker_id, the primary's clock ahead of the
# standbys' (libfaketime, as in test/fault/).
#
#   1  ids on the primary under load, its clock 2 s ahead: the primary's WAL
#      carries the reservations (pg_walinspect names them, 24 bytes with
#      their epoch; pg_waldump shows the custom resource manager); a standby refuses ids (25006) and its
#      mark rises as it replays; a standby promoted while the primary still
#      runs, and one promoted after the primary stopped (a switchover),
#      issue only ids above every id they replayed, none twice; a kill -9
#      of the new primary is crash recovery, not refused
#   2  a promotion that replayed no snowflake record (the primary ran without
#      the library's WAL records, like 1.1): ids are refused with 55000 naming
#      both ways out, also after a restart; a clock past the last reservation
#      the node can know of lets them through; snowflake_advance_floor() does
#      at once, durably
#   3  synchronous replication (synchronous_standby_names): with its standby
#      down, the primary (clock 5 s ahead) issues ids only inside the last
#      reservation the standby flushed, then its callers wait (and end on
#      statement_timeout); a fast shutdown ends the mark worker's wait for
#      the standby; the standby, promoted without the primary's last WAL,
#      issues only ids above every id the primary issued
#   4  a standby whose snowflake.epoch is 6 s later than its primary's
#      (the records say which epoch their milliseconds count from): asked
#      for ids for 3 s once promoted, it refuses them (55000, both epochs
#      named), also after a restart (and with the file that keeps the
#      refusal unreadable), and issues none of the old primary's ids nor
#      any below them; with the primary's epoch set, ids flow, above every
#      id of the old primary
#   5  a rolling upgrade, standbys first: a primary writing the record of
#      1.1 and 1.2 (16 bytes, Unix time: a build of this source with
#      SNOWFLAKE_WAL_RECORD_12, issuing ids over HTTP) and a standby of this
#      version, which replays its records, raises its mark and, promoted,
#      issues only ids above every id the primary issued
#   6  a base backup without the mark file (the marker with it): the standby
#      logs it at start; promoted without replaying a snowflake record, it
#      refuses ids (58P01) until snowflake_advance_floor(); one that replays
#      a record writes the mark file again from it and issues ids above the
#      primary's
#
# Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed"; exits
# non-zero on any failure. Usage: test/standby.sh [case number ...]
# Needs root or the postgres user, pgbench, pg_basebackup, pg_waldump,
# pg_walinspect (contrib), libfaketime, curl, and what building the
# extension needs (case 5). KEEP_TMP=1 keeps the directories.
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh
. test/lib/fault.sh

suite_begin standby
SHIM_DIR=$SUITE_DIR

# The custom WAL resource manager id of src/pg/wal.cpp (kRmgrId).
RMGR_ID=168

ft_require "$SHIM_DIR"
require_tools curl make

pgbench_on() {
    local dir=$1; shift
    as_pg "$PGBIN/pgbench" -n -h "$dir" -p "$PG_PORT" -U postgres "$@" postgres
}

# pgbench_clean LOG STATUS DESC: pgbench exited 0 and reported no failed
# transaction.
pgbench_clean() {
    local failed
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$1")
    if [ "$2" = 0 ] && [ "${failed:-0}" = 0 ] && grep -q '^number of transactions actually processed' "$1"; then
        ok "$3"
    else
        not_ok "$3" "pgbench exit status $2, failed transactions '${failed:-?}'" \
            "$(grep -E 'error|ERROR|abort|failed' "$1" | head -5)"
    fi
}

# no_duplicates DIR TABLE DESC
no_duplicates() { is "$3" "$(pg_val "$1" "SELECT count(*) - count(DISTINCT id) FROM $2")" 0; }

REPL_CONF=("wal_level = replica" "max_wal_senders = 8" "hot_standby = on" "wal_keep_size = '256MB'")

# standby_of PRIMARY: a new directory with a streaming standby of PRIMARY
# (not started); prints the directory.
standby_of() {
    local s
    s=$(pg_tmpdir)
    if ! as_pg "$PGBIN/pg_basebackup" -h "$1" -p "$PG_PORT" -U postgres -D "$s/data" -R -X stream -c fast \
            >"$s/basebackup.log" 2>&1; then
        cat "$s/basebackup.log" >&2
        return 1
    fi
    pg_conf "$s" "unix_socket_directories = '$s'"
    echo "$s"
}

# caught_up PRIMARY STANDBY: the standby replayed everything the primary
# has written so far.
caught_up() {
    local lsn
    lsn=$(pg_val "$1" "SELECT pg_current_wal_lsn()") || return 1
    wait_for "replay" 30 replayed_past "$2" "$lsn"
}
replayed_past() {
    [ "$(pg_val "$1" "SELECT pg_last_wal_replay_lsn() >= '$2'::pg_lsn" 2>/dev/null)" = t ]
}

# is_sync_standby PRIMARY: a standby streams to PRIMARY as a synchronous one.
is_sync_standby() { [ "$(pg_val "$1" "SELECT string_agg(sync_state, ',') FROM pg_stat_replication")" = sync ]; }

# hwm_ms DIR: the high-water mark of snowflake_stats, in Unix milliseconds.
hwm_ms() { pg_val "$1" "SELECT (extract(epoch FROM high_water_mark) * 1000)::bigint FROM snowflake_stats"; }

# promoted_issues DIR PHASE N: issues N ids into ids(phase) on a promoted
# node (its first call may wait for the clock to pass the replayed mark).
promoted_issues() {
    PG_TIMEOUT=120 pg_val "$1" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), '$2' FROM generate_series(1, $3)" >/dev/null
}

# -------------------------------------------------------------------------
case_1() {
    echo "# case 1: replay raises the standby's mark; promotions start above it"
    local P S1 S2 lsn0 lsn1 n v state msg hint h1 h2 maxold max2 log status
    P=$(pg_tmpdir)
    fault_init "$P" "${REPL_CONF[@]}" || { bail "1: primary initialised"; return; }
    ft_set "$P" +2
    ft_start "$P" || { bail "1: primary started (clock +2 s)"; return; }
    helpers_sql "$P" || { bail "1: helpers on the primary"; return; }
    pg_val "$P" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'before' FROM generate_series(1, 10)" >/dev/null
    S1=$(standby_of "$P") || { bail "1: pg_basebackup -R (standby 1)"; return; }
    S2=$(standby_of "$P") || { bail "1: pg_basebackup -R (standby 2)"; return; }
    pg_start "$S1" || { bail "1: standby 1 started" "$(tail -5 "$S1/server.log")"; return; }
    pg_start "$S2" || { bail "1: standby 2 started" "$(tail -5 "$S2/server.log")"; return; }
    pg_psql "$P" -c "CREATE EXTENSION IF NOT EXISTS pg_walinspect" >/dev/null \
        || { bail "1: pg_walinspect on the primary"; return; }
    lsn0=$(pg_val "$P" "SELECT pg_current_wal_lsn()")
    caught_up "$P" "$S1" || not_ok "1: standby 1 catches up"
    h1=$(hwm_ms "$S1")

    # Continuous ids on the primary.
    log=$P/pgbench.log
    cp "$FAULT_DIR/load.sql" "$P/load.sql"; chmod 644 "$P/load.sql"
    pgbench_on "$P" -c 2 -j 2 -T 6 -f "$P/load.sql" -D tbl=ids -D phase=load >"$log" 2>&1 &
    local bench=$!
    sleep 2
    v=$(pg_psql "$S1" -A -t -F $'\x1f' -c "SELECT state, msg, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg hint <<<"$v"
    is "1: a standby refuses ids: SQLSTATE 25006" "$state" 25006
    is "1: ... message" "$msg" "cannot issue snowflake ids during recovery"

    # Standby 2 is promoted while the primary still issues ids.
    is "1: pg_promote() on standby 2 while the primary runs" "$(pg_val "$S2" "SELECT pg_promote(true, 60)")" t
    max2=$(pg_val "$S2" "SELECT max(id) FROM ids")
    promoted_issues "$S2" promoted 200 || not_ok "1: standby 2, promoted, issues 200 ids" "$(tail -3 "$S2/server.log")"
    cmp_num "1: every id of standby 2 is above every id it replayed" \
        "$(pg_val "$S2" "SELECT count(*) FROM ids WHERE phase = 'promoted' AND id <= $max2")" -eq 0
    is "1: ... 200 of them" "$(pg_val "$S2" "SELECT count(*) FROM ids WHERE phase = 'promoted'")" 200

    wait "$bench"; status=$?
    pgbench_clean "$log" "$status" "1: the primary issued ids throughout"
    caught_up "$P" "$S1" || not_ok "1: standby 1 catches up after the load"
    h2=$(hwm_ms "$S1")
    cmp_num "1: the standby's high-water mark rose while it replayed" "$h2" -gt "$h1"
    v=$(pg_val "$S1" "SELECT (extract(epoch FROM snowflake_timestamp(max(id))) * 1000)::bigint FROM ids")
    cmp_num "1: ... and covers every id it replayed" "$h2" -ge "${v:-0}"

    # The records themselves.
    lsn1=$(pg_val "$P" "SELECT pg_current_wal_lsn()")
    n=$(pg_val "$P" "SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1') WHERE resource_manager = 'snowflake'")
    cmp_num "1: pg_walinspect shows snowflake records in the primary's WAL" "${n:-0}" -gt 0
    v=$(pg_val "$P" "SELECT record_type || ': ' || description FROM pg_get_wal_records_info('$lsn0', '$lsn1') WHERE resource_manager = 'snowflake' LIMIT 1")
    like "1: ... described (type, reservation, its epoch, worker id)" "$v" \
        '^RESERVE: until [^,]*, epoch 2025-01-01T00:00:00\.000Z, window [0-9]+ ms, worker 7$'
    is "1: ... each record 24 bytes (the reservation in the id space, with its epoch)" \
        "$(pg_val "$P" "SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1') WHERE resource_manager = 'snowflake' AND main_data_length <> 24")" 0
    n=$(as_pg "$PGBIN/pg_waldump" -p "$P/data/pg_wal" -s "$lsn0" -e "$lsn1" 2>/dev/null | grep -c "rmgr: custom$RMGR_ID ")
    cmp_num "1: pg_waldump shows records of resource manager $RMGR_ID" "${n:-0}" -gt 0

    # A standby restarted while it is one keeps its replayed mark, and is
    # not taken for a node without one (its data directory says the mark
    # comes through the WAL).
    pg_stop "$S1"
    pg_start "$S1" || { bail "1: standby 1 restarted" "$(tail -5 "$S1/server.log")"; return; }
    cmp_num "1: a restarted standby keeps its replayed mark" "$(hwm_ms "$S1")" -ge "$h2"

    # Switchover: the primary stops, standby 1 (clock 2 s behind it) takes over.
    maxold=$(pg_val "$P" "SELECT max(id) FROM ids")
    pg_stop "$P"
    is "1: standby 1 replayed every id of the primary" "$(pg_val "$S1" "SELECT max(id) FROM ids")" "$maxold"
    check "1: pg_ctl promote of standby 1 after the primary stopped" \
        as_pg "$PGBIN/pg_ctl" -D "$S1/data" -w -t 60 promote
    promoted_issues "$S1" switchover 200 || not_ok "1: standby 1, promoted, issues 200 ids" "$(tail -3 "$S1/server.log")"
    is "1: every id of the new primary is above the old primary's highest" \
        "$(pg_val "$S1" "SELECT count(*) FROM ids WHERE phase = 'switchover' AND id <= $maxold")" 0
    is "1: ... 200 of them" "$(pg_val "$S1" "SELECT count(*) FROM ids WHERE phase = 'switchover'")" 200
    no_duplicates "$S1" ids "1: no id twice on the new primary"

    # A crash of the new primary is crash recovery, not a promotion: ids
    # resume (after the reservation on disk), nothing is refused.
    max2=$(pg_val "$S1" "SELECT max(id) FROM ids")
    pg_kill9 "$S1"
    pg_start "$S1" || { bail "1: the new primary restarted after kill -9" "$(tail -5 "$S1/server.log")"; return; }
    promoted_issues "$S1" aftercrash 10 || not_ok "1: ids after the crash restart" "$(tail -3 "$S1/server.log")"
    is "1: ... all 10 above every id before the crash" \
        "$(pg_val "$S1" "SELECT count(*) FROM ids WHERE phase = 'aftercrash' AND id > $max2")" 10
    pg_stop "$S1"
    pg_stop "$S2"
}

# -------------------------------------------------------------------------
case_2() {
    echo "# case 2: a promotion without a replicated mark is refused"
    local Q S3 S4 maxq v state msg detail hint
    Q=$(pg_tmpdir)
    fault_init "$Q" "${REPL_CONF[@]}" || { bail "2: primary initialised"; return; }
    pg_start "$Q" || { bail "2: primary started"; return; }
    helpers_sql "$Q" || { bail "2: helpers on the primary"; return; }
    pg_val "$Q" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'q' FROM generate_series(1, 10)" >/dev/null
    maxq=$(pg_val "$Q" "SELECT max(id) FROM ids")
    # From now on the primary writes no snowflake record, as a primary
    # running 1.1 would not: the library is no longer preloaded.
    pg_stop "$Q"
    pg_conf "$Q" "shared_preload_libraries = ''"
    # Nor did 1.1 write the marker that says a data directory's mark is kept
    # through the WAL (src/pg/wal.cpp).
    check "2: the primary's mark worker wrote snowflake.walmark" test -f "$Q/data/snowflake.walmark"
    rm -f "$Q/data/snowflake.walmark"
    pg_start "$Q" || { bail "2: primary restarted without the library"; return; }
    S3=$(standby_of "$Q") || { bail "2: pg_basebackup -R (standby 3)"; return; }
    S4=$(standby_of "$Q") || { bail "2: pg_basebackup -R (standby 4)"; return; }
    pg_conf "$S3" "shared_preload_libraries = 'snowflake'"
    pg_conf "$S4" "shared_preload_libraries = 'snowflake'"
    ft_set "$S3" 0
    ft_start "$S3" || { bail "2: standby 3 started" "$(tail -5 "$S3/server.log")"; return; }
    pg_start "$S4" || { bail "2: standby 4 started" "$(tail -5 "$S4/server.log")"; return; }
    pg_val "$Q" "INSERT INTO ids(id, phase) VALUES (1, 'commit')" >/dev/null
    caught_up "$Q" "$S3" || not_ok "2: standby 3 catches up"
    caught_up "$Q" "$S4" || not_ok "2: standby 4 catches up"
    pg_stop "$Q"

    is "2: pg_promote() on standby 3" "$(pg_val "$S3" "SELECT pg_promote(true, 60)")" t
    v=$(pg_psql "$S3" -A -t -F $'\x1f' -c "SELECT state, msg, detail, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg detail hint <<<"$v"
    is "2: ids refused after the promotion: SQLSTATE 55000" "$state" 55000
    is "2: ... message" "$msg" "snowflake high-water mark did not come through the WAL"
    like "2: ... detail names the worker id and the last reservation known" "$detail" 'snowflake.worker_id 7.* reaches '
    like "2: ... hint names the clock and snowflake_advance_floor()" "$hint" 'clock passes .*snowflake_advance_floor\(\)'
    pg_stop "$S3"
    ft_start "$S3" || { bail "2: standby 3 restarted" "$(tail -5 "$S3/server.log")"; return; }
    is "2: still refused after a restart" "$(pg_val "$S3" "SELECT state FROM try_nextval()")" 55000
    ft_set "$S3" +90
    read -r v state <<<"$(pg_val "$S3" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "2: ids flow once the clock passes the last reservation known" "$state" 00000
    cmp_num "2: ... above the old primary's ids" "${v:-0}" -gt "$maxq"

    is "2: pg_promote() on standby 4" "$(pg_val "$S4" "SELECT pg_promote(true, 60)")" t
    is "2: standby 4 refused too" "$(pg_val "$S4" "SELECT state FROM try_nextval()")" 55000
    pg_val "$S4" "SELECT snowflake_advance_floor($maxq)" >/dev/null || not_ok "2: snowflake_advance_floor() on standby 4"
    read -r v state <<<"$(pg_val "$S4" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "2: snowflake_advance_floor() lets ids through at once" "$state" 00000
    cmp_num "2: ... above the floor" "${v:-0}" -gt "$maxq"
    pg_stop "$S4"
    pg_start "$S4" || { bail "2: standby 4 restarted"; return; }
    is "2: ... durably (after a restart)" "$(pg_val "$S4" "SELECT state FROM try_nextval()")" 00000
    pg_stop "$S4"
    pg_stop "$S3"
}

# -------------------------------------------------------------------------
case_3() {
    echo "# case 3: synchronous replication: no id beyond what the standby has"
    local P S ok_n=0 fail_n=0 other=0 maxp t_end out
    P=$(pg_tmpdir)
    fault_init "$P" "${REPL_CONF[@]}" "synchronous_standby_names = '*'" || { bail "3: primary initialised"; return; }
    ft_set "$P" +5
    ft_start "$P" || { bail "3: primary started (clock +5 s)"; return; }
    S=$(standby_of "$P") || { bail "3: pg_basebackup -R"; return; }
    # Promoted, it has no standby of its own to wait for.
    pg_conf "$S" "synchronous_standby_names = ''"
    pg_start "$S" || { bail "3: standby started" "$(tail -5 "$S/server.log")"; return; }
    helpers_sql "$P" || { bail "3: helpers on the primary"; return; }
    check "3: the standby streams as the synchronous one" wait_for "sync" 30 is_sync_standby "$P"
    PG_TIMEOUT=60 pg_val "$P" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'sync' FROM generate_series(1, 1000)" >/dev/null \
        || not_ok "3: ids while the synchronous standby is up"
    caught_up "$P" "$S" || not_ok "3: the standby catches up"

    # The standby goes away. One id per call, commits not waiting for it
    # (synchronous_commit = local): only the mark worker waits. Until the
    # first call that times out, or 100 s (a reservation reaches at most
    # 1.5 windows of 60 s ahead; the first is 1 s, longer only after slow
    # writes).
    pg_stop "$S"
    now_us; t_end=$((REPLY + 100000000))
    while [ "$fail_n" = 0 ] && now_us && [ "$REPLY" -lt "$t_end" ]; do
        out=$(PGOPTIONS="-c synchronous_commit=local -c statement_timeout=300" \
            pg_psql "$P" -A -t -c "INSERT INTO ids(id, phase) VALUES (snowflake_nextval(), 'alone')" 2>&1)
        case $out in
            "") ok_n=$((ok_n + 1)) ;;
            *"canceling statement due to statement timeout"*) fail_n=$((fail_n + 1)) ;;
            *) other=$((other + 1)); echo "# 3: $out" ;;
        esac
    done
    echo "# 3: with the standby down: $ok_n ids, then $fail_n call ended by statement_timeout, $other other"
    is "3: ids stop once the reservation the standby has runs out (the caller ends on statement_timeout)" "$fail_n" 1
    is "3: ... and no call failed otherwise" "$other" 0
    maxp=$(pg_val "$P" "SELECT max(id) FROM ids")
    check "3: a fast shutdown of the primary ends the mark worker's wait for the standby" \
        as_pg "$PGBIN/pg_ctl" -D "$P/data" -m fast -w -t 30 -s stop
    like "3: ... and that reservation is not used (server log)" "$(grep 'snowflake reservation' "$P/server.log")" \
        'reservation not used: the worker stopped before the synchronous standbys confirmed it'
    pg_stop "$P"

    # The standby, promoted with only what it had: above every id.
    pg_start "$S" || { bail "3: standby restarted" "$(tail -5 "$S/server.log")"; return; }
    is "3: pg_promote() on the standby" "$(pg_val "$S" "SELECT pg_promote(true, 60)")" t
    promoted_issues "$S" promoted 200 || not_ok "3: the promoted standby issues 200 ids" "$(tail -3 "$S/server.log")"
    is "3: every id of the promoted standby is above every id the old primary issued" \
        "$(pg_val "$S" "SELECT count(*) FROM ids WHERE phase = 'promoted' AND id <= $maxp")" 0
    pg_stop "$S"
}

# -------------------------------------------------------------------------
# The primary's epoch (the default) and the standby's, 6 s later.
PRIMARY_EPOCH='2025-01-01 00:00:00+00'
LATER_EPOCH='2025-01-01 00:00:06+00'

# ask_for_ids DIR SECONDS: calls snowflake_nextval() for SECONDS in one
# session, keeping every id it returns in table again (no unique key, so
# that an id issued twice is kept twice); prints the number of calls refused.
ask_for_ids() {
    PG_TIMEOUT=120 pg_val "$1" "DO \$\$
        DECLARE t0 timestamptz := clock_timestamp(); r record; refused int := 0;
        BEGIN
            WHILE clock_timestamp() < t0 + interval '$2 s' LOOP
                SELECT * INTO r FROM try_nextval();
                IF r.state = '00000' THEN INSERT INTO again VALUES (r.id);
                ELSE refused := refused + 1; PERFORM pg_sleep(0.001); END IF;
            END LOOP;
            RAISE NOTICE 'refused %', refused;
        END \$\$" 2>&1 | sed -n 's/.*NOTICE:  refused \([0-9]*\).*/\1/p'
}

case_4() {
    echo "# case 4: a standby whose snowflake.epoch differs refuses ids once promoted"
    local P S maxp v state msg detail hint log status refused
    P=$(pg_tmpdir)
    fault_init "$P" "${REPL_CONF[@]}" "snowflake.epoch = '$PRIMARY_EPOCH'" || { bail "4: primary initialised"; return; }
    # The primary's clock 2 s ahead: a promoted standby's first ids wait for
    # the replayed mark, so where they would land does not depend on how
    # long the promotion took.
    ft_set "$P" +2
    ft_start "$P" || { bail "4: primary started (clock +2 s)"; return; }
    helpers_sql "$P" || { bail "4: helpers on the primary"; return; }
    pg_val "$P" "CREATE TABLE again (id bigint)" >/dev/null
    S=$(standby_of "$P") || { bail "4: pg_basebackup -R"; return; }
    pg_conf "$S" "snowflake.epoch = '$LATER_EPOCH'"
    pg_start "$S" || { bail "4: standby started" "$(tail -5 "$S/server.log")"; return; }
    is "4: the standby's epoch is 6 s later" "$(pg_val "$S" "SHOW snowflake.epoch")" "$LATER_EPOCH"

    # 8 s of ids on the primary, the standby streaming.
    log=$P/pgbench.log
    cp "$FAULT_DIR/load.sql" "$P/load.sql"; chmod 644 "$P/load.sql"
    pgbench_on "$P" -c 2 -j 2 -T 8 -f "$P/load.sql" -D tbl=ids -D phase=primary >"$log" 2>&1; status=$?
    pgbench_clean "$log" "$status" "4: the primary issued ids for 8 s"
    maxp=$(pg_val "$P" "SELECT max(id) FROM ids")
    pg_stop "$P"
    is "4: the standby replayed every id of the primary" "$(pg_val "$S" "SELECT max(id) FROM ids")" "$maxp"
    check "4: pg_ctl promote of the standby" as_pg "$PGBIN/pg_ctl" -D "$S/data" -w -t 60 promote

    v=$(PG_TIMEOUT=120 pg_psql "$S" -A -t -F $'\x1f' -c "SELECT state, msg, detail, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg detail hint <<<"$v"
    is "4: ids refused after the promotion: SQLSTATE 55000" "$state" 55000
    is "4: ... message" "$msg" "snowflake.epoch differs from the epoch of the replayed snowflake WAL records"
    like "4: ... detail names both epochs" "$detail" \
        'count from 2025-01-01T00:00:00\.000Z, .*its own is 2025-01-01T00:00:06\.000Z\.'
    like "4: ... hint says to set the primary's epoch" "$hint" "Set snowflake.epoch to '2025-01-01T00:00:00\\.000Z'"
    refused=$(ask_for_ids "$S" 3)
    echo "# 4: asked for ids for 3 s: $(pg_val "$S" "SELECT count(*) FROM again") issued, ${refused:-?} calls refused"
    is "4: no id of the promoted standby is one the old primary issued" \
        "$(pg_val "$S" "SELECT count(*) FROM again WHERE id IN (SELECT id FROM ids)")" 0
    is "4: ... nor below the old primary's highest" "$(pg_val "$S" "SELECT count(*) FROM again WHERE id <= $maxp")" 0
    is "4: ... no id at all" "$(pg_val "$S" "SELECT count(*) FROM again")" 0
    pg_stop "$S"
    pg_start "$S" || { bail "4: promoted standby restarted" "$(tail -5 "$S/server.log")"; return; }
    is "4: still refused after a restart" "$(pg_val "$S" "SELECT state FROM try_nextval()")" 55000
    # The file that keeps the refusal, unreadable: refused all the same.
    pg_stop "$S"
    cp -p "$S/data/snowflake.walepoch" "$S/walepoch.saved"
    echo garbage | as_pg tee "$S/data/snowflake.walepoch" >/dev/null
    pg_start "$S" || { bail "4: restarted with snowflake.walepoch unreadable" "$(tail -5 "$S/server.log")"; return; }
    v=$(pg_psql "$S" -A -t -F $'\x1f' -c "SELECT state, detail FROM try_nextval()")
    IFS=$'\x1f' read -r state detail <<<"$v"
    is "4: an unreadable snowflake.walepoch refuses too" "$state" 55000
    like "4: ... saying so" "$detail" 'snowflake.walepoch that names that epoch cannot be read'
    pg_stop "$S"
    cp -p "$S/walepoch.saved" "$S/data/snowflake.walepoch"

    # The way out: the primary's epoch.
    pg_conf "$S" "snowflake.epoch = '$PRIMARY_EPOCH'"
    pg_start "$S" || { bail "4: restarted with the primary's epoch" "$(tail -5 "$S/server.log")"; return; }
    promoted_issues "$S" fixed 200 || not_ok "4: with the primary's epoch, 200 ids" "$(tail -3 "$S/server.log")"
    is "4: ... all above every id of the old primary" \
        "$(pg_val "$S" "SELECT count(*) FROM ids WHERE phase = 'fixed' AND id > $maxp")" 200
    check "4: ... and snowflake.walepoch is gone" wait_for "snowflake.walepoch removed" 10 test ! -e "$S/data/snowflake.walepoch"
    pg_stop "$S"
}

# -------------------------------------------------------------------------
# record12_library: prints a directory with a snowflake.so built from this
# source with SNOWFLAKE_WAL_RECORD_12 (src/pg/wal.cpp: it writes the record
# of 1.1 and 1.2), built once per suite run in a copy of the source (an
# in-tree build's objects would be taken for its own).
record12_library() {
    local dir=$SUITE_DIR/record12
    if [ ! -f "$dir/lib/snowflake.so" ]; then
        mkdir -p "$dir/src" "$dir/lib"
        tar --exclude='*.o' --exclude='*.so' -cf - Makefile snowflake.control META.json ./*.sql scripts src \
            | tar -xf - -C "$dir/src" || return 1
        # CPPFLAGS: PostgreSQL's own (what pg_config says it was built
        # with, as PGXS would have it) and the define.
        if ! make -C "$dir/src" -j2 snowflake.so CPPFLAGS="$("$PG_CONFIG" --cppflags) -DSNOWFLAKE_WAL_RECORD_12" \
                >"$dir/build.log" 2>&1; then
            tail -5 "$dir/build.log" >&2
            return 1
        fi
        cp "$dir/src/snowflake.so" "$dir/lib/"
        chmod -R a+rX "$dir"
    fi
    echo "$dir/lib"
}

case_5() {
    echo "# case 5: the records of a 1.2 primary (16 bytes) replay on a standby of this version"
    local lib P S port try n v maxp
    lib=$(record12_library) || { bail "5: the 1.2 record build of the library"; return; }
    P=$(pg_tmpdir)
    # dynamic_library_path: the postmaster preloads the 1.2 record build. Its
    # SQL functions would load $libdir/snowflake (this version's library) up
    # to PostgreSQL 17, the 1.2 build from 18 on (which strips "$libdir/" and
    # searches the path): the primary issues ids over HTTP only. $libdir stays
    # on the path for pg_walinspect, which PostgreSQL 18 looks up the same way.
    fault_init "$P" "${REPL_CONF[@]}" "dynamic_library_path = '$lib:\$libdir'" || { bail "5: primary initialised"; return; }
    ft_set "$P" +2
    for try in 1 2 3; do
        port=$(free_tcp_port)
        fault_conf "$P" "snowflake.http_listen = '127.0.0.1:$port'"
        ft_start "$P" && break
    done
    [ -f "$P/data/postmaster.pid" ] || { bail "5: primary started (clock +2 s, HTTP)"; return; }
    S=$(standby_of "$P") || { bail "5: pg_basebackup -R"; return; }
    pg_conf "$S" "dynamic_library_path = '\$libdir'"
    fault_conf "$S"
    pg_start "$S" || { bail "5: standby started" "$(tail -5 "$S/server.log")"; return; }

    pg_psql "$P" -c "CREATE EXTENSION pg_walinspect" >/dev/null || { bail "5: pg_walinspect on the primary"; return; }
    v=$(pg_val "$P" "SELECT pg_current_wal_lsn()")
    for n in $(seq 1 20); do
        curl -s --max-time 10 "http://127.0.0.1:$port/v1/ids/batch?count=500" >>"$P/ids.json"; echo >>"$P/ids.json"
        sleep 0.1
    done
    grep -o '"[0-9]\{10,\}"' "$P/ids.json" | tr -d '"' >"$P/ids.txt"
    is "5: the primary issued 10,000 ids over HTTP" "$(sort -u "$P/ids.txt" | wc -l)" 10000
    maxp=$(sort -n "$P/ids.txt" | tail -1)
    n=$(pg_val "$P" "SELECT count(*) FROM pg_get_wal_records_info('$v', pg_current_wal_lsn()) WHERE resource_manager = 'snowflake' AND main_data_length = 16")
    cmp_num "5: the primary's WAL holds 16-byte snowflake records" "${n:-0}" -gt 0
    is "5: ... and no other" "$(pg_val "$P" "SELECT count(*) FROM pg_get_wal_records_info('$v', pg_current_wal_lsn()) WHERE resource_manager = 'snowflake' AND main_data_length <> 16")" 0
    caught_up "$P" "$S" || not_ok "5: the standby catches up"
    pg_stop "$P"
    # The standby's mark file (the id space of its epoch, the primary's).
    cmp_num "5: the standby's mark rose past the primary's ids as it replayed" "$(mark_ms "$S")" -ge $((maxp >> 22))
    is "5: ... without a word on epochs" "$(grep -c 'another epoch' "$S/server.log")" 0

    check "5: pg_ctl promote of the standby" as_pg "$PGBIN/pg_ctl" -D "$S/data" -w -t 60 promote
    helpers_sql "$S" || { bail "5: helpers on the promoted standby"; return; }
    promoted_issues "$S" promoted 200 || not_ok "5: the promoted standby issues 200 ids" "$(tail -3 "$S/server.log")"
    is "5: every id of the promoted standby is above every id of the 1.2 primary" \
        "$(pg_val "$S" "SELECT count(*) FROM ids WHERE phase = 'promoted' AND id <= $maxp")" 0
    check "5: no snowflake.walepoch (a 16-byte record says nothing of its epoch)" test ! -e "$S/data/snowflake.walepoch"
    pg_stop "$S"
}

# -------------------------------------------------------------------------
# A base backup that lost the mark file (issue 28, finding 5).
case_6() {
    echo "# case 6: a standby whose base backup lost the mark file"
    local P S5 S6 maxp v state msg hint off
    P=$(pg_tmpdir)
    fault_init "$P" "${REPL_CONF[@]}" || { bail "6: primary initialised"; return; }
    pg_start "$P" || { bail "6: primary started"; return; }
    helpers_sql "$P" || { bail "6: helpers on the primary"; return; }
    pg_val "$P" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'p' FROM generate_series(1, 10)" >/dev/null
    maxp=$(pg_val "$P" "SELECT max(id) FROM ids")
    # A clean restart: the primary issues no id now, so it logs no record
    # (a reservation is renewed only once an id was issued since the start).
    pg_stop "$P"
    pg_start "$P" || { bail "6: primary restarted"; return; }
    S5=$(standby_of "$P") || { bail "6: pg_basebackup -R (standby 5)"; return; }
    S6=$(standby_of "$P") || { bail "6: pg_basebackup -R (standby 6)"; return; }
    check "6: the base backup has the marker" test -f "$S5/data/snowflake.walmark"
    rm -f "$S5/data/snowflake.mark" "$S6/data/snowflake.mark"

    # Standby 5: no record to replay before its promotion.
    off=$(log_size "$S5")
    pg_start "$S5" || { bail "6: standby 5 started" "$(tail -5 "$S5/server.log")"; return; }
    check "6: standby 5 logs the missing mark file at start" \
        log_has "$S5" "$off" 'snowflake high-water mark file "snowflake.mark" is missing'
    pg_val "$P" "INSERT INTO ids(id, phase) VALUES (1, 'commit')" >/dev/null
    caught_up "$P" "$S5" || not_ok "6: standby 5 catches up"
    is "6: pg_promote() on standby 5" "$(pg_val "$S5" "SELECT pg_promote(true, 60)")" t
    v=$(pg_psql "$S5" -A -t -F $'\x1f' -c "SELECT state, msg, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg hint <<<"$v"
    is "6: ids refused after the promotion: SQLSTATE 58P01" "$state" 58P01
    is "6: ... message" "$msg" 'snowflake high-water mark file "snowflake.mark" is missing'
    like "6: ... hint names snowflake_advance_floor()" "$hint" 'snowflake_advance_floor\(\)'
    pg_val "$S5" "SELECT snowflake_advance_floor($maxp)" >/dev/null || not_ok "6: snowflake_advance_floor() on standby 5"
    read -r v state <<<"$(pg_val "$S5" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "6: snowflake_advance_floor() lets ids through" "$state" 00000
    cmp_num "6: ... above the primary's ids" "${v:-0}" -gt "$maxp"
    pg_stop "$S5"

    # Standby 6: the primary issues an id (and logs its reservation) while
    # the standby replays: the record writes the mark file again.
    off=$(log_size "$S6")
    pg_start "$S6" || { bail "6: standby 6 started" "$(tail -5 "$S6/server.log")"; return; }
    pg_val "$P" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'p2' FROM generate_series(1, 10)" >/dev/null
    maxp=$(pg_val "$P" "SELECT max(id) FROM ids")
    caught_up "$P" "$S6" || not_ok "6: standby 6 catches up"
    check "6: standby 6 recreates the mark file from a replayed record" \
        log_has "$S6" "$off" 'snowflake high-water mark file "snowflake.mark" recreated from the WAL'
    pg_stop "$P"
    is "6: pg_promote() on standby 6" "$(pg_val "$S6" "SELECT pg_promote(true, 60)")" t
    promoted_issues "$S6" promoted 10 || not_ok "6: standby 6, promoted, issues ids" "$(tail -3 "$S6/server.log")"
    is "6: ... all of them above the primary's ids" \
        "$(pg_val "$S6" "SELECT count(*) FROM ids WHERE phase = 'promoted' AND id > $maxp")" 10
    pg_stop "$S6"
}

run_cases standby "$@"
exit
