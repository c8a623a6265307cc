#!/bin/bash
# Worker ids leased from etcd, against a real 3-member etcd cluster on
# loopback and real PostgreSQL nodes (snowflake.lease_ttl = 5 s, the
# minimum, to keep the suite short). COORDINATOR=zookeeper runs the same
# cases against a real 3-server ZooKeeper ensemble instead (Debian's
# zookeeper; snowflake.zookeeper_hosts, lease_ttl the session timeout):
# cases 1 to 7, 10, 12 and 15 to 19 run for both; 8, 9 and 11 drive etcd itself
# (etcdctl leases, the NOSPACE alarm) and run with etcd only; 13 and 14
# drive ZooKeeper's client and run with ZooKeeper only.
#
#   1  three nodes with worker_id unset lease three distinct ids, seen in
#      their stats and in the worker bits of their ids
#   2  a node configured with a static id another node holds refuses ids
#      (SF003) naming the holder
#   3  a clean shutdown frees the id at once (exact mark handed over); the
#      node restarted without its mark file logs it and issues ids (the
#      coordinator's mark is the floor)
#   4  one of the three etcd members (a follower) killed: ids never stop
#   5  kill -9 of a node: its id stays held until the TTL runs out; a new
#      node taking it, its clock 2 s behind, issues ids above every id the
#      dead node returned
#   6  every etcd member frozen (SIGSTOP): nodes refuse ids before their
#      lease could expire in etcd and issue none after; ids resume after
#      SIGCONT; no duplicate id across the run
#   7  bad endpoints: nothing listening, an HTTP server that is not etcd: a
#      clear SF003 at once (in SQL and on the HTTP endpoint's /healthz), and
#      a prompt shutdown; an unparsable URL stops
#      the server at start (FATAL naming the setting)
#   8  a backend stopped (gdb) in the middle of an id call, after reading
#      the position, while its node loses its worker id and leases another,
#      and another node takes the id: when it goes on, its id is not one of
#      the old worker id inside the new holder's range (issue 16)
#   9  a backend stopped the same way while its node shuts down cleanly: no
#      id above the exact mark handed over to etcd
#  10  kill -9 of a node's lease worker alone: the postmaster restarts it,
#      the same instance, which revokes its earlier lease at once; then kill
#      -9 of the node (a fixed leased id, a 10 s TTL), restarted on the same
#      data directory (another instance, issue 28): it does not
#      revoke its previous run's lease, which a clone's would look like; it
#      refuses ids (SF003) naming both instances, and holds the id once that
#      lease has expired, its ids above the previous run's
#  11  etcd out of space (NOSPACE alarm, a 1-member etcd with a small quota):
#      the etcd mark's writes fail, are retried with backoff and counted in
#      lease_failures; /healthz says 503 SF003 when ids stop; both recover
#      once the alarm is disarmed
#  12  the worker key deleted by hand (run after 7, on the first cluster):
#      the node's next mark write fails its guard, it drops the id (ids
#      fenced) and leases one again under a new lease; ids keep increasing
#  13  ZooKeeper only: the lease worker stopped (gdb) on its way into a mark
#      write, the server its client is connected to killed, the worker let
#      go: the write fails with a connection loss and is retried; the node
#      keeps its session and refuses no id (a connection loss used to be read
#      as the worker node's guard failing, and the node dropped its id)
#  14  ZooKeeper only: a node whose connect string lists two servers that
#      are both down does not busy-loop (the C client, ZOOKEEPER-2466, went
#      on retrying one of them without a pause: ~15,000 refused connects a
#      second); a node listing two servers, the one it is connected to
#      killed: it moves to the other within its session (same session, no
#      id refused); a node listing the dead server first holds an id
#  16  a backend stopped (gdb) in an id call after reading the position and
#      the lease deadline, and the lease worker stopped (SIGSTOP) so that
#      nothing fences the node; another node takes the worker id once the
#      lease expired: the stopped call returns no id when it goes on, SF003
#      (issue 28: the deadline is read again after the swap)
#  15  the clock stepped back 1 h (libfaketime), issue 21: with
#      snowflake.clock_backwards = refuse (the default) today's SF001; set
#      to failover (ALTER SYSTEM, reload), ids keep coming within the bounded
#      wait under a backup worker id (snowflake_stats: backup_worker_id,
#      backup_until, clock_failovers = 1), none equal to an earlier id; a
#      second node asking for the backup id gets SF003 naming the holder;
#      the clock set 10 s behind the node's last id under its own id: it
#      goes back to its own id once the clock passes that id, with ids above
#      it, and the second node takes the backup id at once; every other
#      worker id held (keys written in one batch): SF001 saying no backup
#      worker id could be taken; failover with a static worker id: FATAL at
#      start, refused by ALTER SYSTEM and by a reload; twice, a node just
#      started (and again just restarted after kill -9, its clock behind its
#      previous run's reservation but not its ids) issues 20,000 ids with no
#      failover, then 50 inserts after a step back of 1 h all succeed under
#      a backup worker id (issue 28)
#  17  the worker key deleted and re-created by another client (issue 28;
#      ZooKeeper: a znode of version 0 like the node's own, which its guard
#      used to take for its own): the node's next mark write fails its guard,
#      it drops the id and leases another; no duplicate id
#  18  the fleet's settings (issue 28): the first node under a prefix records
#      its snowflake.epoch in <prefix>/fleet; a node whose epoch differs
#      leases nothing and refuses ids (SF003) naming both epochs, with a hint,
#      in snowflake_stats and in the log; a node whose snowflake.layout
#      differs (js-safe in a twitter fleet) likewise, naming both layouts
#  19  snowflake.lease_worker_ids = '900-901': two nodes hold 900 and 901, a
#      third holds none (SF003, its last error names the range) until one
#      stops; a range whose first id is above its last: FATAL at start
#

# Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed".
# Needs etcd (etcd-server, etcd-client), curl, jq and python3 (make deps).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh
. test/lib/zookeeper.sh
. test/lib/stall.sh

COORDINATOR=${COORDINATOR:-etcd}
case $COORDINATOR in
    etcd|zookeeper) ;;
    *) echo "lease: COORDINATOR is etcd or zookeeper, not '$COORDINATOR'" >&2; exit 2 ;;
esac
is_zk() { [ "$COORDINATOR" = zookeeper ]; }

suite_begin lease
WORK=$SUITE_DIR
suite_cleanup() {
    zk_stop
    [ -n "${HTTP_PID:-}" ] && { kill "$HTTP_PID" 2>/dev/null; wait "$HTTP_PID" 2>/dev/null; }
    [ -n "${STALL_GDB:-}" ] && { rm -f "$WORK/stall.hold"; kill "$STALL_GDB" 2>/dev/null; wait "$STALL_GDB" 2>/dev/null; }
    return 0
}

TTL=5
ft_build_shim "$WORK" || echo "# select_shim.c did not compile: workers keep the real clock"

if is_zk; then
    zk_start 3 "$WORK/zk" || tap_abort "a 3-server ZooKeeper ensemble starts on loopback"
    echo "# ZooKeeper $(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null) at $ZK_HOSTS"
    COORD_PIDS=("${ZK_PIDS[@]}")
else
    etcd_start 3 "$WORK" || tap_abort "a 3-member etcd cluster starts on loopback"
    echo "# etcd $("$ETCD_BIN" --version | head -1 | awk '{print $3}') at $ETCD_ENDPOINTS"
    COORD_PIDS=("${ETCD_PIDS[@]}")
fi
# The setting that points a node at the coordinator (as it is now: case 11
# starts another etcd).
coord_conf() {
    if is_zk; then echo "snowflake.zookeeper_hosts = '$ZK_HOSTS'"; else echo "snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'"; fi
}
# The coordinator's keys: exist, value (a znode's data with ZooKeeper).
key_exists() { if is_zk; then zk_exists "$1"; else [ -n "$(etcd_ctl get --keys-only "$1" 2>/dev/null)" ]; fi; }
key_value() { if is_zk; then zk_get "$1"; else etcd_ctl get --print-value-only "$1"; fi; }
key_delete() { if is_zk; then zk_cli delete "$1" >/dev/null; else etcd_ctl del "$1" >/dev/null; fi; }
key_create() { if is_zk; then zk_cli create "$1" "$2" >/dev/null; else etcd_ctl put "$1" "$2" >/dev/null; fi; }
# A server/member that is not the leader (killing it must not interrupt clients).
coord_follower() { if is_zk; then zk_follower; else etcd_follower; fi; }

# node NAME [conf lines...]: a new instance leasing from the cluster.
node() {
    local dir
    shift
    dir=$(pg_tmpdir)
    pg_init "$dir" "shared_preload_libraries = 'snowflake'" "$(coord_conf)" \
        "snowflake.lease_ttl = $TTL" "autovacuum = off" "log_min_messages = info" "$@" >/dev/null || return 1
    echo "$dir"
}
start() { pg_start "$1" || { echo "# $1 did not start:"; tail -5 "$1/server.log" | sed 's/^/#   /'; return 1; }; }
stat_of() { pg_val "$1" "SELECT $2 FROM snowflake_stats"; }
held() { [ "$(stat_of "$1" lease_state 2>/dev/null)" = held ]; }
state_is() { [ "$(stat_of "$1" lease_state 2>/dev/null)" = "$2" ]; }
key_gone() { ! key_exists "$1"; }
# held_other_than DIR SESSION: DIR holds a lease, under another session than
# SESSION (one reading of both: read apart, a node dropping its id between
# them looks held, then sessionless).
held_other_than() {
    local v
    v=$(stat_of "$1" "lease_state || ' ' || coalesce(lease_session, '')" 2>/dev/null)
    [[ $v == "held "?* ]] && [ "$v" != "held $2" ]
}
try_id() { pg_psql "$1" -A -t -F $'\x1f' -c "SELECT * FROM try_nextval()"; }
helpers() {
    pg_psql "$1" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION snowflake;
CREATE FUNCTION try_nextval(OUT id bigint, OUT state text, OUT msg text, OUT detail text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    id := snowflake_nextval();
    state := '00000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
END $$;
SQL
}

# uptime: seconds of real time (/proc/uptime: not moved by libfaketime).
uptime() { local u _; read -r u _ </proc/uptime; echo "$u"; }

# load DIR FILE: issues ids in a loop, one line per call appended to FILE:
# "<uptime after the call> <id or SQLSTATE>" (the server reads /proc/uptime
# after try_nextval() returned, so the time is a bound on when the id was
# issued, whatever clock the server runs with). Runs until killed; sets
# LOAD_PID.
load() {
    local dir=$1 file=$2
    (
        while :; do
            pg_psql "$dir" -A -t -F ' ' -c "SELECT split_part(pg_read_file('/proc/uptime'), ' ', 1), coalesce(id::text, state) FROM try_nextval()" \
                >>"$file" 2>/dev/null || sleep 0.05
        done
    ) &
    LOAD_PID=$!
}
stop_load() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# ---------------------------------------------------------------------------
echo "# 1: three nodes lease three distinct ids"
N1=$(node n1) && N2=$(node n2) && N3=$(node n3) || { bail "1: nodes initialised"; exit 1; }
for n in "$N1" "$N2" "$N3"; do start "$n" || { bail "1: node started"; exit 1; }; done
for n in "$N1" "$N2" "$N3"; do
    helpers "$n"
    wait_for "held" 15 held "$n" || not_ok "1: $n holds a lease" "$(stat_of "$n" "lease_state || ' ' || coalesce(lease_last_error, '')")"
done
W1=$(stat_of "$N1" worker_id); W2=$(stat_of "$N2" worker_id); W3=$(stat_of "$N3" worker_id)
is "1: three distinct worker ids ($W1 $W2 $W3)" "$(printf '%s\n' "$W1" "$W2" "$W3" | sort -u | grep -c '^[0-9][0-9]*$')" 3
for n in "$N1" "$N2" "$N3"; do
    w=$(stat_of "$n" worker_id)
    is "1: ids of the node with worker id $w carry it" \
        "$(pg_val "$n" "SELECT count(DISTINCT snowflake_worker_id(x)) || ' ' || min(snowflake_worker_id(x)) FROM snowflake_nextval_batch(5000) x")" "1 $w"
    check "1: its key names the node" key_exists "/snowflake/workers/$w"
done
like "1: the worker key's value names the node" "$(key_value "/snowflake/workers/$W1")" \
    '^snowflake-node host=.* port=[0-9]+ system_identifier=[0-9]+ instance=[0-9a-f]{32} started_unix_ms=[0-9]+ data_directory=/.+ lease_ttl_ms=[0-9]+$'
is "1: snowflake_stats names the coordinator" "$(stat_of "$N1" coordinator)" "$COORDINATOR"
if is_zk; then want_session=$(printf '0x%x' "$(stat_of "$N1" lease_id)"); else want_session=$(stat_of "$N1" lease_id); fi
is "1: ... and the lease (session) id as text" "$(stat_of "$N1" lease_session)" "$want_session"
is "1: ... and the TTL it granted" "$(stat_of "$N1" lease_granted_ttl_ms)" "$((TTL * 1000))"
is "1: lease_deadline lies ahead, within the TTL" \
    "$(stat_of "$N1" "lease_deadline > clock_timestamp() AND lease_deadline <= clock_timestamp() + interval '$TTL s'")" t
# How far ahead: TTL - margin (1 s) from the last confirmed renewal's send
# time with etcd, whose leader renews a lease on receipt. ZooKeeper's leader
# learns of a renewal from the follower that answered it, on its next ping:
# the deadline counts from a renewal sent at least TTL/4 before the last
# confirmed one (the session's creation counts at once, so look 1.5 s on).
if is_zk; then AHEAD_MAX=$(awk -v t="$TTL" 'BEGIN { print t - 1 - t / 4 }'); else AHEAD_MAX=$((TTL - 1)); fi
sleep 1.5
ahead=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
    a=$(stat_of "$N1" "extract(epoch FROM lease_deadline - clock_timestamp())")
    if fcmp "$a" '>' "$ahead"; then ahead=$a; fi
    sleep 0.2
done
if fcmp "$ahead" '<=' "$(awk -v m="$AHEAD_MAX" 'BEGIN { print m + 0.02 }')"; then
    ok "1: ... at most $AHEAD_MAX s ahead (most seen: $ahead s)"
else
    not_ok "1: ... at most $AHEAD_MAX s ahead" "$ahead s ahead"
fi

# ---------------------------------------------------------------------------
echo "# 2: a static id held by another node"
S=$(node s "snowflake.worker_id = $W1")
start "$S" && helpers "$S"
# Acquiring is the state from the start: wait until a claim has been refused
# (ZooKeeper's session takes longer to open than an etcd lease is granted).
refused_once() { state_is "$S" acquiring && [ -n "$(stat_of "$S" lease_last_error 2>/dev/null)" ]; }
wait_for "taken" 10 refused_once
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$S")"
is "2: the second node with worker id $W1 refuses ids: SF003" "$state" SF003
is "2: ... message" "$msg" "no worker id lease is held"
like "2: ... the detail names the node holding it" "$detail" "worker id $W1 is held by another node: host .* port [0-9]+ \\(system identifier $(pg_val "$N1" "SELECT system_identifier FROM pg_control_system()")"
pg_stop "$S"

# ---------------------------------------------------------------------------
echo "# 3: a clean shutdown frees the id at once"
# The stop alone is timed: the checks after it start a client each (a JVM
# for ZooKeeper's), which is no part of the node's shutdown. A stop that
# waited for its lease to run out would take the TTL.
t0=$(real_now)
pg_stop "$N3"
el=$(elapsed_since "$t0")
check "3: the key of worker id $W3 is gone right after the stop" key_gone "/snowflake/workers/$W3"
like "3: the id's mark in $COORDINATOR is the exact last millisecond" "$(key_value "/snowflake/marks/$W3")" '^[0-9]+ exact$'
if fcmp "$el" '<' "$TTL"; then ok "3: ... the stop took $el s, less than the TTL"; else not_ok "3: ... the stop takes less than the TTL" "took $el s"; fi
# A leased node's lost mark file is only logged: each worker id's mark in
# the coordinator is the floor its next tenure starts above (issue 28).
mark3=$(key_value "/snowflake/marks/$W3"); mark3=${mark3%% *}
rm -f "$N3/data/snowflake.mark"
off=$(log_size "$N3")
start "$N3" && wait_for "held" 15 held "$N3" || not_ok "3: restarted without its mark file, holds a lease"
logged() { log_since "$1" "$2" | grep -qF "$3"; }
check "3: ... logs the missing mark file" logged "$N3" "$off" 'snowflake high-water mark file "snowflake.mark" is missing'
check "3: ... and why ids go on: the coordinator's marks" logged "$N3" "$off" 'each worker id'"'"'s mark there is the floor'
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$N3")"
is "3: ... ids are not refused" "$state" 00000
if [ "$(stat_of "$N3" worker_id)" = "$W3" ]; then
    cmp_num "3: ... above worker id $W3's mark in $COORDINATOR" "$(( ${id:-0} >> 22 ))" -gt "${mark3:-0}"
fi
pg_stop "$N3"

# ---------------------------------------------------------------------------
echo "# 4: one $COORDINATOR member killed: no interruption"
: >"$WORK/load4_1"; : >"$WORK/load4_2"
load "$N1" "$WORK/load4_1"; L1=$LOAD_PID
load "$N2" "$WORK/load4_2"; L2=$LOAD_PID
sleep 1
# A follower: the leader's death stops writes and keepalives for as long as
# the election takes, which a lease with a 5 s TTL may not outlast.
F=$(coord_follower) || { not_ok "4: a follower is found" "no member answered its status"; F=0; }
kill -KILL "${COORD_PIDS[$F]}"; wait "${COORD_PIDS[$F]}" 2>/dev/null
sleep $((TTL + 2))
stop_load "$L1"; stop_load "$L2"
is "4: no id refused on either node while a member was down" \
    "$(cat "$WORK/load4_1" "$WORK/load4_2" | awk '$2 !~ /^[0-9]+$/' | wc -l)" 0
cmp_num "4: ... ids kept coming ($(cat "$WORK/load4_1" "$WORK/load4_2" | wc -l) calls)" \
    "$(cat "$WORK/load4_1" "$WORK/load4_2" | wc -l)" -gt 10
is "4: both nodes still hold their leases" "$(stat_of "$N1" lease_state) $(stat_of "$N2" lease_state)" "held held"
# Held for well over a third of the TTL by now: keepalives were confirmed.
cmp_num "4: keepalives confirmed and counted" "$(stat_of "$N1" lease_renewals)" -gt 0

# ---------------------------------------------------------------------------
echo "# 5: kill -9 of a node; a new node with its clock 2 s behind takes the id after the TTL"
: >"$WORK/load5"
W2=$(stat_of "$N2" worker_id)
load "$N2" "$WORK/load5"; L=$LOAD_PID
sleep 1.5
kill -9 "$(pg_postmaster_pid "$N2")"
t_kill=$(real_now)
check "5: the dead node's key is still there right after the kill" key_exists "/snowflake/workers/$W2"
pg_reap "$N2"
stop_load "$L"
MAXDEAD=$(awk '$2 ~ /^[0-9]+$/ { print $2 }' "$WORK/load5" | sort -n | tail -1)
E=$(node e "snowflake.worker_id = $W2")
ft_set "$E" -2
mapfile -t fenv < <(ft_env "$E")
pg_start "$E" "${fenv[@]}" || not_ok "5: the new node starts under libfaketime"
helpers "$E"
if wait_for "held" $((TTL + 10)) held "$E"; then
    el=$(elapsed_since "$t_kill")
    ok "5: the new node holds worker id $W2 ($el s after the kill)"
    # etcd expires the lease TTL after the last keepalive it got, at most a
    # third of the TTL before the kill.
    if fcmp "$el" '>=' "$(awk -v t="$TTL" 'BEGIN { print t * 2 / 3 - 0.5 }')"; then
        ok "5: ... not before the dead node's lease ran out"
    else
        not_ok "5: ... not before the dead node's lease ran out" "after $el s"
    fi
else
    not_ok "5: the new node gets worker id $W2 after the TTL" "$(stat_of "$E" "lease_state || ' ' || coalesce(lease_last_error, '')")"
fi
first=""
for _ in $(seq 1 300); do
    IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$E")"
    [ "$state" = 00000 ] && { first=$id; break; }
    sleep 0.05
done
if [ -n "$first" ] && [ -n "$MAXDEAD" ]; then
    cmp_num "5: its first id is above every id the dead node returned" "$first" -gt "$MAXDEAD"
    is "5: ... and carries worker id $W2" "$(pg_val "$E" "SELECT snowflake_worker_id($first)")" "$W2"
else
    not_ok "5: the new node issues ids" "last: $state $msg; dead node's max '$MAXDEAD'"
fi

# ---------------------------------------------------------------------------
echo "# 6: every $COORDINATOR member frozen"
: >"$WORK/load6_1"; : >"$WORK/load6_e"
load "$N1" "$WORK/load6_1"; L1=$LOAD_PID
load "$E" "$WORK/load6_e"; L2=$LOAD_PID
sleep 1
t_freeze=$(uptime)
LIVE=()
for i in "${!COORD_PIDS[@]}"; do [ "$i" = "$F" ] || LIVE+=("${COORD_PIDS[$i]}"); done
for p in "${LIVE[@]}"; do kill -STOP "$p"; done
sleep $((TTL + 2))
for p in "${LIVE[@]}"; do kill -CONT "$p"; done
t_thaw=$(uptime)
wait_for "held again" 20 held "$N1"
wait_for "held again" 20 held "$E"
# A node whose mark write was applied during the freeze, after its lease
# had lapsed, starts its new tenure above that mark and waits it out (up to
# 1.5 etcd windows, with node e's clock 2 s behind): wait for ids, not a
# fixed second.
ids_after_thaw() { awk -v b="$t_thaw" '$2 ~ /^[0-9]+$/ && $1 > b' "$WORK/$1" | grep -q .; }
wait_for "ids again" 15 ids_after_thaw load6_1
wait_for "ids again" 15 ids_after_thaw load6_e
stop_load "$L1"; stop_load "$L2"
for f in load6_1 load6_e; do
    last_ok=$(awk -v a="$t_freeze" -v b="$t_thaw" '$2 ~ /^[0-9]+$/ && $1 > a && $1 < b { t = $1 } END { print t ? t - a : -1 }' "$WORK/$f")
    if fcmp "$last_ok" '<' "$(awk -v t="$TTL" 'BEGIN { print t - 0.8 }')"; then
        ok "6 ($f): no id issued once the lease could have expired (last one $last_ok s after the freeze)"
    else
        not_ok "6 ($f): no id issued once the lease could have expired" "an id $last_ok s after the freeze (TTL $TTL s)"
    fi
    cmp_num "6 ($f): ids refused with SF003 while frozen" "$(grep -c ' SF003$' "$WORK/$f")" -gt 0
    cmp_num "6 ($f): ids again after SIGCONT" \
        "$(awk -v b="$t_thaw" '$2 ~ /^[0-9]+$/ && $1 > b' "$WORK/$f" | wc -l)" -gt 0
done
is "6: no duplicate id across the run" \
    "$(cat "$WORK"/load* | awk '$2 ~ /^[0-9]+$/ { print $2 }' | sort | uniq -d | wc -l)" 0

# ---------------------------------------------------------------------------
echo "# 7: bad endpoints"
port=$(free_tcp_port)
B=$(pg_tmpdir)
hp=$(free_tcp_port)
while [ "$hp" = "$port" ]; do hp=$(free_tcp_port); done
# ZooKeeper: the first failure is known once the session could not be
# established (the client's 3 s), etcd's at the first refused connection.
if is_zk; then
    bad_conf() { echo "snowflake.zookeeper_hosts = '127.0.0.1:$1'"; }
    FIRST_ERROR_S=3.5
    REFUSED="no ZooKeeper session established with 127.0.0.1:$port"
else
    bad_conf() { echo "snowflake.etcd_endpoints = 'http://127.0.0.1:$1'"; }
    FIRST_ERROR_S=0.5
    REFUSED="connection refused to http://127.0.0.1:$port"
fi
pg_init "$B" "shared_preload_libraries = 'snowflake'" "$(bad_conf "$port")" \
    "snowflake.lease_ttl = $TTL" "snowflake.http_listen = '127.0.0.1:$hp'" \
    "snowflake.http_token = 'lease-7'" >/dev/null
start "$B" && helpers "$B"
sleep "$FIRST_ERROR_S"
t0=$(real_now)
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$B")"
is "7: nothing listening: SF003" "$state" SF003
like "7: ... the detail says why" "$detail" "$REFUSED"
el=$(elapsed_since "$t0")
if fcmp "$el" '<' 2; then ok "7: ... at once ($el s, a psql call)"; else not_ok "7: ... at once" "took $el s"; fi
is "7: snowflake_advance_floor() without a lease: SF003, not a wait" \
    "$(pg_psql "$B" -A -t -c "SET statement_timeout = '10s'" -c '\set VERBOSITY verbose' \
        -c "SELECT snowflake_advance_floor(1)" 2>&1 | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\):.*/\1/p')" SF003
wait_for "http" 5 grep -q "snowflake HTTP endpoint listening on 127.0.0.1:$hp" "$B/server.log"
# The full reason only with the token (without it: no etcd URL, test/http.sh case 13).
health=$(curl -s -m 5 -w ' %{http_code}' -H 'Authorization: Bearer lease-7' "http://127.0.0.1:$hp/healthz")
is "7: the HTTP endpoint's /healthz: 503 with SF003" \
    "$(jq -r .code <<<"${health% *}" 2>/dev/null) ${health##* }" "SF003 503"
like "7: ... the reason says what the lease worker is doing, and why" "$(jq -r .reason <<<"${health% *}" 2>/dev/null)" \
    "^no worker id lease is held: the lease worker is acquiring a worker id; last error: .*(connection refused|no ZooKeeper session)"
t0=$(real_now); pg_stop "$B"; el=$(elapsed_since "$t0")
if fcmp "$el" '<' 5; then ok "7: ... and it stops in $el s"; else not_ok "7: ... and it stops promptly" "took $el s"; fi

# An HTTP server that is not etcd (POST is answered 501), nor ZooKeeper.
hport=$(free_tcp_port)
python3 -m http.server "$hport" --bind 127.0.0.1 --directory "$WORK" >/dev/null 2>&1 &
HTTP_PID=$!
wait_for "http" 5 etcd_listening "$hport"
pg_conf "$B" "$(bad_conf "$hport")"
start "$B"
sleep "$FIRST_ERROR_S"
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$B")"
is "7: a server that is not $COORDINATOR: SF003" "$state" SF003
if is_zk; then
    like "7: ... the detail says no session" "$detail" "no ZooKeeper session established with 127.0.0.1:$hport"
else
    like "7: ... the detail names its answer" "$detail" '(HTTP 50[0-9]|not the JSON)'
fi
t0=$(real_now); pg_stop "$B"; el=$(elapsed_since "$t0")
if fcmp "$el" '<' 5; then ok "7: ... and it stops in $el s"; else not_ok "7: ... and it stops promptly" "took $el s"; fi
kill "$HTTP_PID" 2>/dev/null; wait "$HTTP_PID" 2>/dev/null; HTTP_PID=

if is_zk; then
    pg_conf "$B" "snowflake.zookeeper_hosts = 'zk.example'"
    SETTING=snowflake.zookeeper_hosts
else
    pg_conf "$B" "snowflake.etcd_endpoints = 'etcd.example:2379'"
    SETTING=snowflake.etcd_endpoints
fi
off=$(log_size "$B")
if pg_start "$B"; then
    not_ok "7: an unparsable endpoint stops the server at start" "it started"
    pg_stop "$B"
else
    pg_reap "$B"
    check "7: an unparsable endpoint: no start, FATAL names $SETTING" \
        grep -q "FATAL:  invalid value for parameter \"$SETTING\"" "$B/server.log"
fi
# Both coordinators set: no start, a FATAL naming both.
pg_conf "$B" "snowflake.etcd_endpoints = 'http://127.0.0.1:$port'" "snowflake.zookeeper_hosts = '127.0.0.1:$port'"
if pg_start "$B"; then
    not_ok "7: etcd_endpoints and zookeeper_hosts both set stops the server at start" "it started"
    pg_stop "$B"
else
    pg_reap "$B"
    check "7: both coordinators set: no start, FATAL names both settings" \
        grep -q 'FATAL:  snowflake.etcd_endpoints and snowflake.zookeeper_hosts are both set' "$B/server.log"
fi

# ---------------------------------------------------------------------------
# (Case 12 runs here, while the first cluster and node n1 are up: case 11
# replaces etcd.)
echo "# 12: the worker key deleted by hand: the node drops the id and leases again"
W12=$(stat_of "$N1" worker_id)
S12=$(stat_of "$N1" lease_session)
: >"$WORK/load12"
load "$N1" "$WORK/load12"; L=$LOAD_PID
sleep 1
key_delete "/snowflake/workers/$W12"
new_lease() { held_other_than "$N1" "$S12"; }
if wait_for "a new lease" 20 new_lease; then
    ok "12: the node holds a worker id again, under a new lease ($(stat_of "$N1" lease_session), worker id $(stat_of "$N1" worker_id))"
else
    not_ok "12: the node holds a worker id again, under a new lease" \
        "$(stat_of "$N1" "lease_state || ' ' || coalesce(lease_session, '') || ' ' || coalesce(lease_last_error, '')")"
fi
check "12: ... and its worker key exists again" key_exists "/snowflake/workers/$(stat_of "$N1" worker_id)"
sleep 1
stop_load "$L"
cmp_num "12: ids were issued" "$(awk '$2 ~ /^[0-9]+$/' "$WORK/load12" | wc -l)" -gt 0
is "12: no duplicate id, ids increase" \
    "$(awk '$2 ~ /^[0-9]+$/ { print $2 }' "$WORK/load12" | sort -c -n -u 2>&1 | wc -l)" 0

# ---------------------------------------------------------------------------
echo "# 17: the worker key deleted and re-created by another client: the node drops the id"
W17=$(stat_of "$N1" worker_id)
S17=$(stat_of "$N1" lease_session)
: >"$WORK/load17"
load "$N1" "$WORK/load17"; L=$LOAD_PID
sleep 1
key_delete "/snowflake/workers/$W17"
key_create "/snowflake/workers/$W17" "made by hand"
new_lease17() { held_other_than "$N1" "$S17"; }
if wait_for "a new lease" 20 new_lease17; then
    ok "17: the node drops worker id $W17 and holds another under a new lease ($(stat_of "$N1" lease_session))"
else
    not_ok "17: the node drops worker id $W17 and holds another under a new lease" \
        "$(stat_of "$N1" "lease_state || ' ' || coalesce(lease_session, '') || ' ' || worker_id || ' ' || coalesce(lease_last_error, '')")"
fi
cmp_num "17: ... not the id whose key was made by hand" "$(stat_of "$N1" worker_id)" -ne "$W17"
is "17: ... which the node left alone" "$(key_value "/snowflake/workers/$W17")" "made by hand"
sleep 1
stop_load "$L"
key_delete "/snowflake/workers/$W17"
cmp_num "17: ids were issued" "$(awk '$2 ~ /^[0-9]+$/' "$WORK/load17" | wc -l)" -gt 0
is "17: no duplicate id, ids increase" \
    "$(awk '$2 ~ /^[0-9]+$/ { print $2 }' "$WORK/load17" | sort -c -n -u 2>&1 | wc -l)" 0

# stalled_call DIR APP: a session on DIR that waits 1.5 s, then asks for one
# id (output in $WORK/APP.out, errors in $WORK/APP.err); sets CALL_PID (psql)
# and CALL_BACKEND (its backend's pid).
stalled_call() {
    local dir=$1 app=$2
    pg_psql "$dir" -A -t -c "SET application_name = '$app'; SELECT pg_sleep(1.5); SELECT snowflake_nextval()" \
        >"$WORK/$app.out" 2>"$WORK/$app.err" &
    CALL_PID=$!
    CALL_BACKEND=
    backend_of() { CALL_BACKEND=$(pg_val "$dir" "SELECT pid FROM pg_stat_activity WHERE application_name = '$app'"); [ -n "$CALL_BACKEND" ]; }
    wait_for "backend" 10 backend_of
}
first_id_of() {
    local dir=$1 id state msg detail
    for _ in $(seq 1 400); do
        IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$dir")"
        [ "$state" = 00000 ] && { echo "$id"; return 0; }
        sleep 0.05
    done
    return 1
}

# ---------------------------------------------------------------------------
# (Case 15 runs here too, on the first cluster: 11 replaces etcd, 13 and 14
# kill ZooKeeper servers.)
echo "# 15: the clock stepped back: refuse, then fail over to a backup worker id"
P15=/case15
ALL15=$WORK/ids15   # every id of the case: none may appear twice
# ids_to FILE DIR N: N ids of the node, "<id> <worker id>" a line, into FILE.
ids_to() { pg_psql "$2" -A -t -F ' ' -c "SELECT x, snowflake_worker_id(x) FROM snowflake_nextval_batch($3) x" >"$1"; }
stats15() { stat_of "$1" "coalesce(backup_worker_id::text, 'null') || ' ' || coalesce(backup_until::text, 'null') || ' ' || clock_failovers"; }
V=$(node v "snowflake.lease_prefix = '$P15'")
ft_set "$V" 0
mapfile -t fenv < <(ft_env "$V")
pg_start "$V" "${fenv[@]}" || not_ok "15: the node starts under libfaketime"
helpers "$V"
wait_for "held" 15 held "$V" || not_ok "15: the node holds a lease" "$(stat_of "$V" "lease_state || ' ' || coalesce(lease_last_error, '')")"
WV=$(stat_of "$V" worker_id)
ids_to "$WORK/ids15a" "$V" 2000
cut -d' ' -f1 "$WORK/ids15a" >"$ALL15"
OWN_MAX=$(sort -n "$ALL15" | tail -1)

# refuse, the default: today's SF001.
ft_set "$V" -3600
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$V")"
is "15: refuse (the default), the clock 1 h back: SF001" "$state" SF001
like "15: ... 'system clock moved backwards by N ms'" "$msg" '^system clock moved backwards by 3[56][0-9]{5} ms$'
like "15: ... the detail as before (no backup worker id tried)" "$detail" \
    '^Ids have been issued up to [^;]*; snowflake\.clock_tolerance_ms is [0-9]+\.$'
is "15: ... no backup worker id, no failover counted" "$(stats15 "$V")" "null null 0"

# failover: set with ALTER SYSTEM and a reload; the next call takes a backup id.
if pg_psql "$V" -c "ALTER SYSTEM SET snowflake.clock_backwards = failover" -c "SELECT pg_reload_conf()" >/dev/null 2>"$WORK/alter15"; then
    ok "15: ALTER SYSTEM SET snowflake.clock_backwards = failover, and a reload"
else
    not_ok "15: ALTER SYSTEM SET snowflake.clock_backwards = failover, and a reload" "$(head -2 "$WORK/alter15")"
fi
reloaded() { [ "$(pg_val "$V" "SHOW snowflake.clock_backwards" 2>/dev/null)" = failover ]; }
wait_for "reloaded" 5 reloaded
off=$(log_size "$V")
t0=$(real_now)
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$V")"
el=$(elapsed_since "$t0")
is "15: failover, the clock 1 h back: the next call issues an id" "$state${msg:+ $msg}${detail:+ ($detail)}" 00000
# The backend waits at most 5 s for the backup id (one psql call around it).
if fcmp "$el" '<' 6; then ok "15: ... within the bounded wait ($el s)"; else not_ok "15: ... within the bounded wait (5 s)" "took $el s"; fi
[[ $id =~ ^[0-9]+$ ]] && echo "$id" >>"$ALL15"
ids_to "$WORK/ids15b" "$V" 2000
cut -d' ' -f1 "$WORK/ids15b" >>"$ALL15"
WB=$(stat_of "$V" backup_worker_id)
like "15: snowflake_stats shows the backup worker id" "$WB" '^[0-9]+$'
cmp_num "15: ... another worker id than the node's own ($WV)" "${WB:-$WV}" -ne "$WV"
is "15: ids carry the backup worker id" "$(awk '{ print $2 }' "$WORK/ids15b" | sort -u | tr '\n' ' ')" "$WB "
is "15: ... and lie below the ids issued before the step (ids are not increasing node-wide)" \
    "$(awk -v m="$OWN_MAX" '{ print ($1 < m) ? "below" : "above" }' "$WORK/ids15b" | sort -u)" below
is "15: no id issued twice" "$(sort "$ALL15" | uniq -d | wc -l)" 0
is "15: clock_failovers = 1" "$(stat_of "$V" clock_failovers)" 1
# backup_until: the node's last millisecond under its own id, about 1 h
# ahead of the node's clock now.
is "15: backup_until is the time of the last id under the node's own id" \
    "$(stat_of "$V" "backup_until = snowflake_timestamp($OWN_MAX)")" t
is "15: ... about 1 h ahead of the node's clock" \
    "$(stat_of "$V" "backup_until - clock_timestamp() BETWEEN interval '3500 s' AND interval '3601 s'")" t
like "15: the log says so" "$(log_since "$V" "$off" | grep 'LOG:  snowflake')" "LOG:  snowflake clock stepped back: issuing ids under backup worker id $WB"
check "15: the backup id's worker key is in $COORDINATOR" key_exists "$P15/workers/$WB"

# A second node asking for the backup id cannot take it while it is held.
G=$(node g "snowflake.lease_prefix = '$P15'" "snowflake.worker_id = ${WB:-1}")
start "$G" && helpers "$G"
refused15() { state_is "$G" acquiring && [ -n "$(stat_of "$G" lease_last_error 2>/dev/null)" ]; }
wait_for "refused" 10 refused15
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$G")"
is "15: a second node with worker id $WB refuses ids while the backup id is held: SF003" "$state" SF003
like "15: ... the detail names the node holding it" "$detail" \
    "worker id $WB is held by another node: host .* port [0-9]+ \\(system identifier $(pg_val "$V" "SELECT system_identifier FROM pg_control_system()")"

# The clock set 10 s behind the last id under the node's own id: the node
# keeps the backup id until its clock passes that millisecond, then goes
# back to its own id and releases the backup id at once.
BU=$(stat_of "$V" "extract(epoch FROM snowflake_timestamp($OWN_MAX))")
ft_set_clock "$V" "$(awk -v b="$BU" 'BEGIN { printf "%.6f", b - 10 }')"
: >"$WORK/load15"
load "$V" "$WORK/load15"; L=$LOAD_PID
off=$(log_size "$V")
back_home() { [ "$(stat_of "$V" "backup_worker_id IS NULL" 2>/dev/null)" = t ]; }
t0=$(real_now)
if wait_for "back" 20 back_home; then
    el=$(elapsed_since "$t0")
    ok "15: the node goes back to its own id when its clock passes it ($el s after the clock was set 10 s behind)"
    fcmp "$el" '>' 8 || not_ok "15: ... not before its clock passed the last id under its own id" "after $el s"
    t_back=$(real_now)
    if wait_for "g held" 5 held "$G"; then
        ok "15: the second node takes worker id $WB at once ($(elapsed_since "$t_back") s)"
    else
        not_ok "15: the second node takes worker id $WB at once" "$(stat_of "$G" "lease_state || ' ' || coalesce(lease_last_error, '')")"
    fi
else
    not_ok "15: the node goes back to its own id within 20 s of its clock set 10 s behind" "$(stats15 "$V")"
fi
sleep 0.5
stop_load "$L"
awk '$2 ~ /^[0-9]+$/ { print $2 }' "$WORK/load15" >"$WORK/ids15c"
cat "$WORK/ids15c" >>"$ALL15"
LAST=$(tail -1 "$WORK/ids15c")
is "15: ... its ids carry its own worker id $WV again" "$(pg_val "$V" "SELECT snowflake_worker_id(${LAST:-0})") $(pg_val "$V" "SELECT snowflake_worker_id(snowflake_nextval())")" "$WV $WV"
n_own=0; n_low=0
while read -r x; do
    [ $(((x >> 12) & 1023)) = "$WV" ] || continue
    n_own=$((n_own + 1)); [ "$x" -gt "$OWN_MAX" ] || n_low=$((n_low + 1))
done <"$WORK/ids15c"
is "15: ... all $n_own ids under it lie above the ids issued under it before the step" "$n_low" 0
is "15: no id refused while the node went back to its own id" "$(awk '$2 !~ /^[0-9]+$/' "$WORK/load15" | wc -l)" 0
is "15: ... snowflake_stats: no backup worker id, no backup_until, clock_failovers still 1" "$(stats15 "$V")" "null null 1"
like "15: ... the log says so" "$(log_since "$V" "$off" | grep 'LOG:  snowflake')" "LOG:  snowflake back on worker id $WV: released backup worker id $WB"
GFIRST=$(first_id_of "$G")
like "15: the second node issues ids under worker id $WB" "$GFIRST $(pg_val "$G" "SELECT snowflake_worker_id(${GFIRST:-0})")" "^[0-9]+ $WB\$"
echo "$GFIRST" >>"$ALL15"
is "15: no id issued twice (both nodes, $(wc -l <"$ALL15") ids)" "$(sort "$ALL15" | uniq -d | wc -l)" 0

# No usable backup id: every other worker id held (keys without a lease,
# written in one batch), the clock stepped back 60 s.
if is_zk; then
    { for i in $(seq 0 1023); do [ "$i" = "$WV" ] || [ "$i" = "$WB" ] || echo "create $P15/workers/$i blocker"; done; echo quit; } | zk_cli >/dev/null
    nkeys=$(zk_cli ls "$P15/workers" | tail -1 | tr ',' '\n' | grep -c '[0-9]')
else
    for b in $(seq 0 7); do
        { echo; for i in $(seq $((b * 128)) $((b * 128 + 127))); do
            [ "$i" = "$WV" ] || [ "$i" = "$WB" ] || echo "put $P15/workers/$i blocker"; done; echo; echo; } | etcd_ctl txn >/dev/null
    done
    nkeys=$(etcd_ctl get --prefix --keys-only "$P15/workers/" | grep -c .)
fi
is "15: every worker id held" "$nkeys" 1024
ft_shift "$V" -60
t0=$(real_now)
IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$V")"
el=$(elapsed_since "$t0")
is "15: no free worker id, the clock 60 s back: SF001" "$state" SF001
like "15: ... the detail says no backup worker id could be taken" "$detail" '[Nn]o backup worker id'
if fcmp "$el" '<' 6; then ok "15: ... within the bounded wait ($el s)"; else not_ok "15: ... within the bounded wait (5 s)" "took $el s"; fi
is "15: ... no backup worker id, clock_failovers still 1" "$(stats15 "$V")" "null null 1"
pg_stop "$G"; pg_stop "$V"

# failover with a static worker id: FATAL at start.
pg_conf "$G" "snowflake.etcd_endpoints = ''" "snowflake.zookeeper_hosts = ''" "snowflake.clock_backwards = failover"
if pg_start "$G"; then
    not_ok "15: failover with a static worker id stops the server at start" "it started"
    pg_stop "$G"
else
    pg_reap "$G"
    # In the FATAL's message or its detail, whichever shape it takes.
    check "15: failover with a static worker id: no start, a FATAL saying it needs leased worker ids" \
        awk '/FATAL:/ { f = 1 } f && /snowflake\.clock_backwards = failover needs leased worker ids/ { found = 1 } END { exit !found }' \
        "$G/server.log"
    check "15: ... a hint names snowflake.etcd_endpoints and snowflake.zookeeper_hosts" \
        grep -q 'HINT: .*snowflake\.etcd_endpoints.*snowflake\.zookeeper_hosts' "$G/server.log"
fi
# ... and on a running server with a static worker id, failover is refused
# by ALTER SYSTEM and by a reload (the value stays refuse).
pg_conf "$G" "snowflake.clock_backwards = refuse"
if start "$G"; then
    like "15: a static worker id: ALTER SYSTEM SET snowflake.clock_backwards = failover is an error" \
        "$(pg_psql "$G" -c "ALTER SYSTEM SET snowflake.clock_backwards = failover" 2>&1)" \
        'ERROR: .*snowflake\.clock_backwards(.|\n)*needs leased worker ids'
    off=$(log_size "$G")
    pg_conf "$G" "snowflake.clock_backwards = failover"
    pg_val "$G" "SELECT pg_reload_conf()" >/dev/null
    reload_seen() { log_since "$G" "$off" | grep -q 'needs leased worker ids'; }
    check "15: ... a reload to failover: the log says it needs leased worker ids" wait_for "reload" 5 reload_seen
    is "15: ... and the value stays refuse" "$(pg_val "$G" "SHOW snowflake.clock_backwards")" refuse
    pg_stop "$G"
else
    not_ok "15: a static worker id with refuse starts"
fi

# A node that has just started (issue 28: it failed over and back hundreds
# of times while its clock was ahead of its last id, and after a step of
# one hour every insert could fail with SF001, "on backup worker id N
# already"). Two runs, each on a new node: started fresh, 20,000 ids; then
# killed (kill -9) and restarted at once with its clock just after the
# crash, behind its previous run's reservation (the floor it waits out)
# but ahead of every id it issued: 20,000 ids; neither may fail over. Then
# its clock steps back one hour: 50 inserts, each its own statement, all
# succeed under a backup worker id (one failover).
# f15_insert DIR I: one insert; prints the id's worker id, or the SQLSTATE.
f15_insert() {
    pg_psql "$1" -A -t -c "INSERT INTO t15 (n) VALUES ($2) RETURNING snowflake_worker_id(id)" 2>&1 |
        sed -n 's/^\([0-9][0-9]*\)$/\1/p; s/^ERROR:  \(.*\)$/error: \1/p' | head -1
}
for run in 1 2; do
    F15=$(node f "snowflake.lease_prefix = '${P15}f$run'" "snowflake.clock_backwards = failover")
    ft_set "$F15" 0
    mapfile -t fenv < <(ft_env "$F15")
    if ! pg_start "$F15" "${fenv[@]}"; then not_ok "15: run $run: a new node with failover starts"; continue; fi
    helpers "$F15"
    pg_psql "$F15" -c "CREATE TABLE t15 (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n int)" >/dev/null
    wait_for "held" 15 held "$F15" || not_ok "15: run $run: the node holds a lease" "$(stat_of "$F15" "lease_state")"
    ids_to "$WORK/ids15f$run" "$F15" 20000
    is "15: run $run: a node just started issues 20,000 ids at once" "$(wc -l <"$WORK/ids15f$run")" 20000
    is "15: run $run: ... with no failover (its clock is not behind)" "$(stats15 "$F15")" "null null 0"
    FMAX=$(cut -d' ' -f1 "$WORK/ids15f$run" | sort -n | tail -1)
    kill -9 "$(pg_postmaster_pid "$F15")"
    t_crash=$(real_now)
    pg_reap "$F15"
    off=$(log_size "$F15")
    if ! pg_start "$F15" "${fenv[@]}"; then not_ok "15: run $run: the node restarts after kill -9"; continue; fi
    wait_for "held" 15 held "$F15" || not_ok "15: run $run: the restarted node holds a lease" "$(stat_of "$F15" "lease_state")"
    # Its clock as if the restart had taken 50 ms.
    ft_set_clock "$F15" "$(awk -v t="$t_crash" 'BEGIN { printf "%.6f", t + 0.05 }')"
    ids_to "$WORK/ids15g$run" "$F15" 20000
    is "15: run $run: restarted after kill -9, its clock just after the crash: 20,000 ids" "$(wc -l <"$WORK/ids15g$run")" 20000
    is "15: run $run: ... with no failover (its clock is behind its reservation, not its ids)" "$(stats15 "$F15")" "null null 0"
    is "15: run $run: ... and no failover in the log" "$(log_since "$F15" "$off" | grep -c 'snowflake clock stepped back')" 0
    is "15: run $run: ... all above the ids of its previous run" \
        "$(awk -v m="$FMAX" '$1 <= m' "$WORK/ids15g$run" | wc -l)" 0
    ft_shift "$F15" -3600
    : >"$WORK/ins15f$run"
    for i in $(seq 1 50); do f15_insert "$F15" "$i" >>"$WORK/ins15f$run"; done
    FB=$(stat_of "$F15" backup_worker_id)
    FW=$(stat_of "$F15" worker_id)
    n_ins=$(grep -c '^[0-9][0-9]*$' "$WORK/ins15f$run")
    if [ "$n_ins" = 50 ]; then
        ok "15: run $run: the clock stepped back 1 h: 50 inserts succeed"
    else
        not_ok "15: run $run: the clock stepped back 1 h: 50 inserts succeed" "$n_ins did; the others:" \
            "$(grep -v '^[0-9]' "$WORK/ins15f$run" | sort | uniq -c | head -3)"
    fi
    like "15: run $run: ... on a backup worker id" "$FB" '^[0-9]+$'
    cmp_num "15: run $run: ... not the node's own ($FW)" "${FB:-$FW}" -ne "$FW"
    is "15: run $run: ... every insert under it" "$(sort -u "$WORK/ins15f$run" | head -3 | tr '\n' ' ')" "$FB "
    is "15: run $run: ... one failover" "$(stat_of "$F15" clock_failovers)" 1
    is "15: run $run: no id issued twice" \
        "$({ cut -d' ' -f1 "$WORK/ids15f$run" "$WORK/ids15g$run"; pg_psql "$F15" -A -t -c "SELECT id FROM t15"; } | sort | uniq -d | wc -l)" 0
    pg_stop "$F15"
done

# ---------------------------------------------------------------------------
echo "# 16: a call across its lease's deadline with the lease worker stopped (SIGSTOP)"
# Issue 28's third finding: the deadline was checked once, before the fast
# path, so a call stopped after the check returned, when it went on, an id
# under a worker id another node had taken meanwhile. Now the boot clock is
# read after the swap: such an id is given up and the call refused.
P16=/case16
A16=$(node a16 "snowflake.lease_prefix = '$P16'")
start "$A16" && helpers "$A16"
wait_for "held" 15 held "$A16" || not_ok "16: node a16 holds a lease" "$(stat_of "$A16" "lease_state")"
W16=$(stat_of "$A16" worker_id)
B16=$(node b16 "snowflake.lease_prefix = '$P16'" "snowflake.worker_id = $W16")
start "$B16" && helpers "$B16"
# Ids issued first: the reservation then covers the clock, and the stopped
# call's fast path has an id to swap.
pg_val "$A16" "SELECT count(*) FROM snowflake_nextval_batch(100)" >/dev/null
LW16=$(pgrep -P "$(pg_postmaster_pid "$A16")" -f 'snowflake worker id lease' | head -1)
stalled_call "$A16" x16
if [ -z "$CALL_BACKEND" ] || [ -z "$LW16" ] || ! stall_at "$CALL_BACKEND" snowflake::core::fast_next "$WORK" ||
    ! wait_for "hit" 15 stall_hit "$WORK"; then
    not_ok "16: the backend is stopped in snowflake_nextval()" "$(tail -3 "$WORK/stall.log" 2>/dev/null)"
    stall_release "$WORK"
else
    ok "16: the backend is stopped in snowflake_nextval(), after reading the position and the deadline"
    # The lease worker stopped too: nothing fences node a16 when its lease
    # ends; the coordinator expires it and node b16 takes the worker id.
    kill -STOP "$LW16"
    if wait_for "b16 held" $((TTL * 4)) held "$B16"; then
        ok "16: node b16 takes worker id $W16 once node a16's lease expired"
        B16FIRST=$(first_id_of "$B16")
        cmp_num "16: ... and issues ids under it" "${B16FIRST:-0}" -gt 0
    else
        not_ok "16: node b16 takes worker id $W16 once node a16's lease expired" "$(stat_of "$B16" "lease_state || ' ' || coalesce(lease_last_error, '')")"
    fi
    stall_release "$WORK"
    wait "$CALL_PID"
    X16=$(tr -d ' \n' <"$WORK/x16.out")
    is "16: the stopped call returns no id when it goes on after the deadline" "$X16" ""
    like "16: ... it is refused: no worker id lease is held (SF003)" "$(cat "$WORK/x16.err")" 'no worker id lease is held'
    kill -CONT "$LW16"
fi
kill -CONT "$LW16" 2>/dev/null || true
pg_stop "$B16"; pg_stop "$A16"

# ---------------------------------------------------------------------------
if is_zk; then echo "# 8, 9: etcd only (they move leases with etcdctl)"; else
echo "# 8: a backend stopped in an id call while its node's lease changes hands"
P8=/case8
A=$(node a "snowflake.lease_prefix = '$P8'")
start "$A" && helpers "$A"
wait_for "held" 15 held "$A" || not_ok "8: node a holds a lease" "$(stat_of "$A" "lease_state")"
WA=$(stat_of "$A" worker_id)
B=$(node b "snowflake.lease_prefix = '$P8'" "snowflake.worker_id = $WA")
start "$B" && helpers "$B"
pg_val "$A" "SELECT count(*) FROM snowflake_nextval_batch(100)" >/dev/null
stalled_call "$A" x8
if [ -z "$CALL_BACKEND" ] || ! stall_at "$CALL_BACKEND" snowflake::core::fast_next "$WORK"; then
    not_ok "8: the backend is stopped in snowflake_nextval()" "$(cat "$WORK/stall.log" 2>/dev/null | tail -3)"
elif ! wait_for "hit" 15 stall_hit "$WORK"; then
    not_ok "8: the backend is stopped in snowflake_nextval()" "$(tail -3 "$WORK/stall.log")"
    stall_release "$WORK"
else
    ok "8: the backend is stopped in snowflake_nextval(), after reading the position"
    # Node a loses worker id $WA: its key moves to another lease at once (a
    # single put, so that a cannot take it back), and its own lease is revoked.
    BL=$(etcd_ctl lease grant 60 | awk '{ print $2 }')
    etcd_ctl put --lease="$BL" "$P8/workers/$WA" blocker >/dev/null
    etcd_ctl lease revoke "$(printf '%x' "$(stat_of "$A" lease_id)")" >/dev/null
    other_id() { held "$A" && [ "$(stat_of "$A" worker_id)" != "$WA" ]; }
    wait_for "another id" 20 other_id
    WA2=$(stat_of "$A" worker_id)
    is "8: node a leases another worker id" "$([ "$WA2" != "$WA" ] && held "$A" && echo yes)" yes
    : >"$WORK/load8"
    load "$A" "$WORK/load8"; L=$LOAD_PID
    sleep 1
    # Node b takes worker id $WA, above its mark in etcd.
    etcd_ctl lease revoke "$BL" >/dev/null
    wait_for "b held" 20 held "$B"
    BFIRST=$(first_id_of "$B")
    cmp_num "8: node b holds worker id $WA and issues ids" "${BFIRST:-0}" -gt 0
    stall_release "$WORK"
    wait "$CALL_PID"
    stop_load "$L"
    XID=$(tr -d ' \n' <"$WORK/x8.out")
    like "8: the stopped call returns an id when it goes on" "$XID" '^[0-9]+$'
    if [[ "$XID" =~ ^[0-9]+$ ]] && [ -n "$BFIRST" ]; then
        XW=$(pg_val "$A" "SELECT snowflake_worker_id($XID)")
        if [ "$XW" = "$WA" ] && [ "$XID" -ge "$BFIRST" ]; then
            not_ok "8: ... not an id of worker id $WA inside node b's range" "id $XID (worker $XW) >= node b's first id $BFIRST"
        else
            ok "8: ... not an id of worker id $WA inside node b's range (worker $XW)"
        fi
        is "8: ... composed with the worker id node a holds now" "$XW" "$WA2"
        is "8: no duplicate among the ids of a, b and the stopped call" \
            "$( { cat "$WORK/load8" | awk '$2 ~ /^[0-9]+$/ { print $2 }'; echo "$XID"; echo "$BFIRST"; } | sort | uniq -d | wc -l)" 0
    fi
fi
pg_stop "$B"; pg_stop "$A"

# ---------------------------------------------------------------------------
# 9: a backend stopped in an id call while its node shuts down, from a
# position in the middle of a millisecond and from a full one (issue 28:
# 1.2's fence left a full millisecond's word as it was, and the stopped
# call's swap then issued an id past the exact mark).
case9() {
local P9=$1 fill=$2
echo "# 9 ($fill): a backend stopped in an id call while its node shuts down"
C=$(node c "snowflake.lease_prefix = '$P9'")
start "$C" && helpers "$C"
wait_for "held" 15 held "$C" || not_ok "9: node c holds a lease" "$(stat_of "$C" "lease_state")"
WC=$(stat_of "$C" worker_id)
if [ "$fill" = middle ]; then
    pg_val "$C" "SELECT count(*) FROM snowflake_nextval_batch(100)" >/dev/null
else
    # A batch that starts in a fresh millisecond takes all of it: the
    # position's last sequence is then 4095.
    seq9=""
    for _ in $(seq 1 20); do
        seq9=$(pg_val "$C" "SELECT pg_sleep(0.01); SELECT max(i) & 4095 FROM snowflake_nextval_batch(4096) i" | tail -1)
        [ "$seq9" = 4095 ] && break
    done
    is "9 ($fill): the position's millisecond is full" "$seq9" 4095
fi
stalled_call "$C" x9
if [ -z "$CALL_BACKEND" ] || ! stall_at "$CALL_BACKEND" snowflake::core::fast_next "$WORK" ||
    ! wait_for "hit" 15 stall_hit "$WORK"; then
    not_ok "9 ($fill): the backend is stopped in snowflake_nextval()" "$(tail -3 "$WORK/stall.log" 2>/dev/null)"
    stall_release "$WORK"
else
    ok "9 ($fill): the backend is stopped in snowflake_nextval(), after reading the position"
    # A fast shutdown: the lease worker hands the exact mark over while the
    # backend is stopped (the postmaster waits for the backend).
    as_pg "$PGBIN/pg_ctl" -D "$C/data" -m fast -w -t 60 stop >/dev/null 2>&1 &
    STOPPER=$!
    exact_mark() { etcd_ctl get --print-value-only "$P9/marks/$WC" | grep -q ' exact$'; }
    wait_for "exact" 20 exact_mark
    EXACT=$(etcd_ctl get --print-value-only "$P9/marks/$WC" | awk '{ print $1 }')
    like "9 ($fill): the exact mark is handed over while the backend is stopped" "$(etcd_ctl get --print-value-only "$P9/marks/$WC")" '^[0-9]+ exact$'
    stall_release "$WORK"
    wait "$CALL_PID"
    wait "$STOPPER"
    XID=$(tr -d ' \n' <"$WORK/x9.out")
    if [[ "$XID" =~ ^[0-9]+$ ]]; then
        cmp_num "9 ($fill): the stopped call's id is not above the exact mark ($EXACT)" "$((XID >> 22))" -le "$EXACT"
    fi
    # Whether or not its session got the id, the call must not have taken
    # one above the mark: the node's last position, which its own mark file
    # records exactly at a clean stop, is at most the mark handed over.
    cmp_num "9 ($fill): no id was issued above the exact mark (the node's last millisecond)" \
        "$(mark_ms "$C")" -le "$EXACT"
    is "9 ($fill): ... and the node's mark file is its exact position" "$(mark_flags "$C")" 1
fi
pg_reap "$C"
}
case9 /case9 middle
case9 /case9full full

fi  # etcd only: cases 8 and 9
# ---------------------------------------------------------------------------
echo "# 10: a restart after kill -9 waits out its previous run's lease, never revoking it"
R=$(node r "snowflake.lease_prefix = '/case10'" "snowflake.worker_id = 5" "snowflake.lease_ttl = 10")
start "$R" && helpers "$R"
wait_for "held" 15 held "$R" || not_ok "10: the node holds worker id 5" "$(stat_of "$R" "lease_state || ' ' || coalesce(lease_last_error, '')")"
# First the lease worker alone killed: the postmaster restarts its children,
# and the new lease worker is the same instance (drawn by the postmaster),
# whose earlier lease it revokes at once.
L10=$(stat_of "$R" lease_id)
if is_zk; then L10TEXT=$(printf '0x%x' "$L10"); else L10TEXT=$L10; fi
off=$(log_size "$R")
kill -9 "$(pgrep -P "$(pg_postmaster_pid "$R")" -f "snowflake worker id lease")"
again10() { held "$R" && [ "$(stat_of "$R" lease_id)" != "$L10" ]; }
if wait_for "held again" 8 again10; then
    ok "10: the lease worker killed alone: the node holds worker id 5 again at once, under a new lease"
else
    not_ok "10: the lease worker killed alone: the node holds worker id 5 again within 8 s (TTL 10 s)" \
        "$(stat_of "$R" "lease_state || ' ' || coalesce(lease_last_error, '')")"
fi
like "10: ... having revoked its earlier lease, the same instance's" "$(log_since "$R" "$off")" \
    "snowflake revoking lease $L10TEXT, an earlier lease of this run, which holds worker id 5"
OLDLEASE=$(stat_of "$R" lease_id)
OLDINST=$(key_value /case10/workers/5 | sed -n 's/.* instance=\([0-9a-f]*\) .*/\1/p')
like "10: the worker key names the run's instance" "$OLDINST" '^[0-9a-f]{32}$'
LAST10=$(pg_val "$R" "SELECT max(x) FROM snowflake_nextval_batch(100) x")
kill -9 "$(pg_postmaster_pid "$R")"
t_kill10=$(real_now)
pg_reap "$R"
check "10: the dead run's key still holds worker id 5" key_exists /case10/workers/5
off=$(log_size "$R")
start "$R"
waiting10() { [[ "$(stat_of "$R" "coalesce(lease_last_error, '')" 2>/dev/null)" == *"held by another run of this node"* ]]; }
if wait_for "waiting" 10 waiting10; then
    ok "10: the restarted node waits: worker id 5 is held by another run of this node"
    like "10: ... naming both instances" "$(stat_of "$R" lease_last_error)" \
        "instance ${OLDINST:0:8} \\(started .*\\), this one is instance [0-9a-f]{8} \\(started"
    IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$R")"
    is "10: ... and refuses ids meanwhile: SF003" "$state" SF003
else
    not_ok "10: the restarted node waits for worker id 5, held by another run of this node" \
        "$(stat_of "$R" "lease_state || ' ' || coalesce(lease_last_error, '')")"
fi
if wait_for "held" 30 held "$R"; then
    el=$(elapsed_since "$t_kill10")
    ok "10: ... and holds worker id 5 again once that lease has expired ($el s after the kill)"
    # The coordinator expires it TTL after its last renewal, at most a
    # third (ZooKeeper: an eighth) of the TTL before the kill.
    if fcmp "$el" '>=' 6; then ok "10: ... not before the lease could expire"; else not_ok "10: ... not before the lease could expire" "after $el s"; fi
else
    not_ok "10: the restarted node holds worker id 5 again within 30 s (TTL 10 s)" \
        "$(stat_of "$R" "lease_state || ' ' || coalesce(lease_last_error, '')")"
fi
log10=$(log_since "$R" "$off")
if [[ "$log10" == *revoking* ]]; then not_ok "10: ... never revoking the previous run's lease" "$(grep revoking <<<"$log10")"; else ok "10: ... never revoking the previous run's lease"; fi
like "10: ... the log says why it waited" "$log10" "snowflake waits for its worker id: worker id 5 is held by another run of this node"
cmp_num "10: ... under a new lease" "$(stat_of "$R" lease_id)" -ne "$OLDLEASE"
# Its first id waits out the mark of its previous run (up to 7.5 s ahead of
# the clock, less what the wait took), never SF001.
first10=""; seen10=""
for _ in $(seq 1 400); do
    IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$R")"
    [ "$state" = 00000 ] && { first10=$id; break; }
    seen10+=" $state"
    sleep 0.05
done
like "10: ... its first id comes" "$first10" '^[0-9]+$'
[ -n "$first10" ] && cmp_num "10: ... above the previous run's ids" "$first10" -gt "$LAST10"
if [[ "$seen10" == *SF001* ]]; then not_ok "10: ... without SF001 on the way" "states:$seen10"; else ok "10: ... without SF001 on the way"; fi
pg_stop "$R"

# ---------------------------------------------------------------------------
echo "# 18: the fleet's settings: a node whose snowflake.epoch differs does not lease"
G1=$(node g1 "snowflake.lease_prefix = '/case18'")
start "$G1" && helpers "$G1"
wait_for "held" 15 held "$G1" || not_ok "18: the first node holds an id" "$(stat_of "$G1" "lease_state || ' ' || coalesce(lease_last_error, '')")"
is "18: the first node recorded its epoch (the default) in /case18/fleet" "$(key_value /case18/fleet)" \
    "snowflake-fleet epoch_unix_us=1735689600000000"
like "18: ... and said so in the log" "$(cat "$G1/server.log")" \
    "snowflake recorded the fleet's settings in (etcd|ZooKeeper) at /case18/fleet: epoch 2025-01-01 00:00:00 UTC"
G2=$(node g2 "snowflake.lease_prefix = '/case18'" "snowflake.epoch = '2024-01-01 00:00:00+00'")
start "$G2" && helpers "$G2"
refused18() { [[ "$(stat_of "$G2" "coalesce(lease_last_error, '')" 2>/dev/null)" == *"snowflake.epoch is"* ]]; }
if wait_for "refused" 15 refused18; then
    is "18: a node with another epoch holds no id" "$(stat_of "$G2" "lease_state || ' ' || coalesce(worker_id::text, 'none')")" "acquiring none"
    is "18: ... its last error names both epochs" "$(stat_of "$G2" lease_last_error)" \
        "this node's snowflake.epoch is 2024-01-01 00:00:00 UTC, the fleet's (in /case18/fleet) is 2025-01-01 00:00:00 UTC"
    IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$G2")"
    is "18: ... ids are refused: SF003" "$state" SF003
    is "18: ... message" "$msg" "this node's settings differ from its fleet's"
    like "18: ... the detail names both epochs" "$detail" "snowflake.epoch is 2024-01-01 00:00:00 UTC, the fleet's \\(in /case18/fleet\\) is 2025-01-01 00:00:00 UTC"
    like "18: ... the hint says what to do" "$(pg_psql "$G2" -c "SELECT snowflake_nextval()" 2>&1)" \
        "HINT:  Set snowflake.epoch and snowflake.layout to the fleet's"
    like "18: ... and the log says it, with the hint" "$(cat "$G2/server.log")" \
        "snowflake leases no worker id: this node's snowflake.epoch is 2024-01-01 00:00:00 UTC.*HINT:  Set snowflake.epoch"
    is "18: ... the fleet's record is unchanged" "$(key_value /case18/fleet)" "snowflake-fleet epoch_unix_us=1735689600000000"
else
    not_ok "18: a node with another epoch refuses to lease" "$(stat_of "$G2" "lease_state || ' ' || coalesce(lease_last_error, '')")"
fi
pg_stop "$G2"
# The layout (issue 31) is the fleet's too: a js-safe node in a twitter fleet.
G3=$(node g3 "snowflake.lease_prefix = '/case18'" "snowflake.layout = 'js-safe'")
start "$G3" && helpers "$G3"
refused18l() { [[ "$(stat_of "$G3" "coalesce(lease_last_error, '')" 2>/dev/null)" == *"snowflake.layout is"* ]]; }
if wait_for "refused" 15 refused18l; then
    is "18: a node with another layout holds no id" "$(stat_of "$G3" "lease_state || ' ' || coalesce(worker_id::text, 'none')")" "acquiring none"
    is "18: ... its last error names both layouts" "$(stat_of "$G3" lease_last_error)" \
        "this node's snowflake.layout is js-safe, the fleet's (in /case18/fleet) is twitter"
    IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$G3")"
    is "18: ... ids are refused: SF003" "$state" SF003
    is "18: ... the fleet's record is unchanged" "$(key_value /case18/fleet)" "snowflake-fleet epoch_unix_us=1735689600000000"
else
    not_ok "18: a node with another layout refuses to lease" "$(stat_of "$G3" "lease_state || ' ' || coalesce(lease_last_error, '')")"
fi
pg_stop "$G3"
pg_stop "$G1"

echo "# 19: snowflake.lease_worker_ids confines a node to a range of worker ids"
R1=$(node r1 "snowflake.lease_prefix = '/case19'" "snowflake.lease_worker_ids = '900-901'")
R2=$(node r2 "snowflake.lease_prefix = '/case19'" "snowflake.lease_worker_ids = '900-901'")
start "$R1" && helpers "$R1" && start "$R2" && helpers "$R2"
if wait_for "held" 15 held "$R1" && wait_for "held" 15 held "$R2"; then
    is "19: two nodes confined to 900-901 hold both ids of it" \
        "$( (stat_of "$R1" worker_id; stat_of "$R2" worker_id) | sort | tr '\n' ' ')" "900 901 "
    IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$R1")"
    is "19: ... and their ids carry them" "$(( (id >> 12) & 1023 ))" "$(stat_of "$R1" worker_id)"
else
    not_ok "19: two nodes confined to 900-901 hold an id each" "$(stat_of "$R2" "lease_state || ' ' || coalesce(lease_last_error, '')")"
fi
R3=$(node r3 "snowflake.lease_prefix = '/case19'" "snowflake.lease_worker_ids = '900-901'")
start "$R3" && helpers "$R3"
full19() { [[ "$(stat_of "$R3" "coalesce(lease_last_error, '')" 2>/dev/null)" == *"every worker id from 900 to 901"* ]]; }
if wait_for "range full" 15 full19; then
    is "19: a third node holds none while both are held (the ids outside its range are free)" \
        "$(stat_of "$R3" "lease_state || ' ' || coalesce(worker_id::text, 'none')")" "acquiring none"
    is "19: ... its last error names the range" "$(stat_of "$R3" lease_last_error)" \
        "every worker id from 900 to 901 is held by another node"
    IFS=$'\x1f' read -r id state msg detail <<<"$(try_id "$R3")"
    is "19: ... ids are refused: SF003" "$state" SF003
else
    not_ok "19: a third node confined to a full range leases nothing" "$(stat_of "$R3" "lease_state || ' ' || coalesce(worker_id::text, 'none') || ' ' || coalesce(lease_last_error, '')")"
fi
pg_stop "$R1"
check "19: ... and takes the id a node left at once" wait_for "held" 15 held "$R3"
pg_stop "$R3"
pg_stop "$R2"
R4=$(node r4 "snowflake.lease_prefix = '/case19'" "snowflake.lease_worker_ids = '901-900'")
if start "$R4" 2>/dev/null; then
    not_ok "19: a range whose first id is above its last stops the server at start"
else
    like "19: a range whose first id is above its last stops the server at start, naming the setting" \
        "$(cat "$R4/server.log")" 'FATAL:  invalid value for parameter "snowflake.lease_worker_ids": "901-900"'
fi

# ---------------------------------------------------------------------------
if is_zk; then echo "# 11: etcd only (the NOSPACE alarm of etcd)"; else
echo "# 11: etcd out of space"
etcd_stop
ETCD_FLAGS=(--quota-backend-bytes=2000000)
mkdir -p "$WORK/nospace"
if ! etcd_start 1 "$WORK/nospace"; then
    not_ok "11: a 1-member etcd with a 2 MB quota starts"
else
    Q=$(node q "snowflake.lease_prefix = '/case11'")
    hq=$(free_tcp_port)
    pg_conf "$Q" "snowflake.http_listen = '127.0.0.1:$hq'" "snowflake.http_token = 'lease-11'"
    start "$Q" && helpers "$Q"
    wait_for "held" 15 held "$Q" || not_ok "11: the node holds a lease" "$(stat_of "$Q" lease_state)"
    wait_for "http" 5 grep -q "snowflake HTTP endpoint listening on 127.0.0.1:$hq" "$Q/server.log"
    F0=$(stat_of "$Q" lease_failures)
    # Fill the quota: puts are refused once the alarm is raised.
    head -c 400000 /dev/zero | tr '\0' x >"$WORK/big"
    for i in $(seq 1 12); do etcd_ctl put "/filler/$i" <"$WORK/big" >/dev/null 2>&1 || break; done
    like "11: etcd raised the NOSPACE alarm" "$(etcd_ctl alarm list 2>&1)" 'NOSPACE'
    : >"$WORK/load11"
    load "$Q" "$WORK/load11"; L=$LOAD_PID
    t0=$(real_now)
    refused() { grep -q ' SF003$' "$WORK/load11"; }
    wait_for "refused" 20 refused
    health=$(curl -s -m 5 -w ' %{http_code}' -H 'Authorization: Bearer lease-11' "http://127.0.0.1:$hq/healthz")
    is "11: ids stop: /healthz 503 with SF003" "$(jq -r .code <<<"${health% *}" 2>/dev/null) ${health##* }" "SF003 503"
    like "11: ... the reason names the failing etcd mark write" "$(jq -r .reason <<<"${health% *}" 2>/dev/null)" \
        'reservation in etcd.*(space|NOSPACE)'
    sleep 3
    el=$(elapsed_since "$t0")
    F1=$(stat_of "$Q" lease_failures)
    cmp_num "11: failed mark writes are counted in lease_failures" "$F1" -gt "$F0"
    # With a retry every 20 ms, as before, that would be ~50 a second.
    cmp_num "11: ... and backed off: $((F1 - F0)) in $el s" "$((F1 - F0))" -lt 40
    for i in $(seq 1 12); do etcd_ctl del "/filler/$i" >/dev/null 2>&1; done
    rev=$(etcd_ctl endpoint status -w json | jq -r '.[0].Status.header.revision')
    etcd_ctl compact "$rev" >/dev/null 2>&1
    etcd_ctl defrag >/dev/null 2>&1
    etcd_ctl alarm disarm >/dev/null 2>&1
    ready() { [ "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$hq/healthz")" = 200 ]; }
    if wait_for "ready" 20 ready; then ok "11: the alarm disarmed: /healthz 200 again"; else not_ok "11: the alarm disarmed: /healthz 200 again"; fi
    : >"$WORK/load11b"
    stop_load "$L"
    load "$Q" "$WORK/load11b"; L=$LOAD_PID
    sleep 1
    stop_load "$L"
    cmp_num "11: ... and ids again" "$(awk '$2 ~ /^[0-9]+$/' "$WORK/load11b" | wc -l)" -gt 0
    pg_stop "$Q"
fi

fi  # etcd only: case 11

# ---------------------------------------------------------------------------
if is_zk; then
echo "# 13: the server a node is connected to killed during its mark write"
# The follower killed in case 4 back first, so that a quorum outlives the kill.
zk_server_start "$F"
wait_for "server $F serving" 60 zk_serving "${ZK_PORTS[$F]}" || not_ok "13: server $F serves again"
M=$(node m "snowflake.lease_prefix = '/case13'")
# The server the node's client is connected to (the peer of the lease
# worker's socket) must be a follower: killing the leader would stop the
# ensemble for an election. Its client picks one at random: start again
# until it is a follower.
C=
for attempt in 1 2 3 4 5 6; do
    start "$M"
    [ "$attempt" = 1 ] && helpers "$M"
    wait_for "held" 20 held "$M" || not_ok "13: the node holds a lease" "$(stat_of "$M" "lease_state || ' ' || coalesce(lease_last_error, '')")"
    LW=$(pgrep -P "$(pg_postmaster_pid "$M")" -f "snowflake worker id lease")
    peer=$(ss -tnp | awk -v p="pid=$LW," 'index($0, p) { n = split($5, a, ":"); print a[n] }' | head -1)
    for i in "${!ZK_PORTS[@]}"; do [ "${ZK_PORTS[$i]}" = "$peer" ] && [ "$(zk_mode "$i")" = follower ] && C=$i; done
    [ -n "$C" ] && break
    pg_stop "$M"
done
if [ -z "$C" ]; then
    not_ok "13: the node's client is connected to a follower" "lease worker '$LW', peer port '$peer'"
else
    S13=$(stat_of "$M" lease_session)
    : >"$WORK/load13"
    load "$M" "$WORK/load13"; L=$LOAD_PID
    # Stopped on its way into the mark write (a multi of 2 ops), the server killed, let go.
    stall_at "$LW" 'zoo_amulti if $esi == 2' "$WORK"
    if wait_for "a mark write" 15 stall_hit "$WORK"; then
        zk_server_kill "$C" KILL
        stall_release "$WORK"
        sleep 3
        is "13: the node keeps its session (the failed write is retried, not taken for a lost id)" \
            "$(stat_of "$M" "lease_state || ' ' || lease_session")" "held $S13"
    else
        stall_release "$WORK"
        not_ok "13: the lease worker writes its mark within 15 s"
    fi
    stop_load "$L"
    is "13: no id refused" "$(awk '$2 !~ /^[0-9]+$/' "$WORK/load13" | wc -l)" 0
    cmp_num "13: ids were issued" "$(awk '$2 ~ /^[0-9]+$/' "$WORK/load13" | wc -l)" -gt 0
    pg_stop "$M"
fi
fi  # ZooKeeper only: case 13

# ---------------------------------------------------------------------------
if is_zk; then
echo "# 14: two servers listed, down or killed"
# Refused connects in a node's log (the C client logs each: errno=111).
refused_in() { grep -c 'errno=111' "$1/server.log"; }
P1=$(free_tcp_port); P2=$(free_tcp_port)
while [ "$P2" = "$P1" ]; do P2=$(free_tcp_port); done
K0=$(node k0 "snowflake.zookeeper_hosts = '127.0.0.1:$P1,127.0.0.1:$P2'")
start "$K0"
sleep 4
r=$(refused_in "$K0")
cmp_num "14: both servers down: no busy loop ($r refused connects in 4 s)" "$r" -lt 1000
pg_stop "$K0"
# Every server back first (case 13 killed one): a quorum outlives the kill.
for i in "${!ZK_PORTS[@]}"; do
    kill -0 "${ZK_PIDS[$i]}" 2>/dev/null && continue
    zk_server_start "$i"
    wait_for "server $i serving" 60 zk_serving "${ZK_PORTS[$i]}" || not_ok "14: server $i serves again"
done
# Two followers only: killing either leaves the leader and the other.
FS=()
for i in "${!ZK_PORTS[@]}"; do [ "$(zk_mode "$i")" = follower ] && FS+=("$i"); done
if [ "${#FS[@]}" -lt 2 ]; then
    not_ok "14: two of the servers are followers" "$(for i in "${!ZK_PORTS[@]}"; do printf '%s ' "$(zk_mode "$i")"; done)"
else
    TWO="127.0.0.1:${ZK_PORTS[${FS[0]}]},127.0.0.1:${ZK_PORTS[${FS[1]}]}"
    K=$(node k "snowflake.lease_prefix = '/case14'" "snowflake.zookeeper_hosts = '$TWO'")
    start "$K" && helpers "$K"
    wait_for "held" 20 held "$K" || not_ok "14: the node holds a lease" "$(stat_of "$K" "lease_state || ' ' || coalesce(lease_last_error, '')")"
    LW=$(pgrep -P "$(pg_postmaster_pid "$K")" -f "snowflake worker id lease")
    peer=$(ss -tnp | awk -v p="pid=$LW," 'index($0, p) { n = split($5, a, ":"); print a[n] }' | head -1)
    D=
    for i in "${FS[@]}"; do [ "${ZK_PORTS[$i]}" = "$peer" ] && D=$i; done
    if [ -z "$D" ]; then
        not_ok "14: the node is connected to one of its two servers" "lease worker '$LW', peer port '$peer'"
    else
        S14=$(stat_of "$K" lease_session)
        : >"$WORK/load14"
        load "$K" "$WORK/load14"; L=$LOAD_PID
        sleep 0.5
        r0=$(refused_in "$K")
        zk_server_kill "$D" KILL
        # Past the session timeout: a node stuck on the dead server has lost
        # its session by then (and refused ids for a while).
        sleep $((TTL + 2))
        is "14: the node keeps its session on the other server" \
            "$(stat_of "$K" "lease_state || ' ' || lease_session")" "held $S14"
        r=$(($(refused_in "$K") - r0))
        cmp_num "14: ... without a busy loop on the dead one ($r refused connects in $((TTL + 2)) s)" "$r" -lt 20
        stop_load "$L"
        is "14: no id refused" "$(awk '$2 !~ /^[0-9]+$/' "$WORK/load14" | wc -l)" 0
        cmp_num "14: ids were issued" "$(awk '$2 ~ /^[0-9]+$/' "$WORK/load14" | wc -l)" -gt 0
        pg_stop "$K"
        # The dead server listed first (the node picks where to start at
        # random, so this covers a start on it about every other run; the
        # kill above covers the move off a dead server every run).
        LIVE=${FS[0]}; [ "$LIVE" = "$D" ] && LIVE=${FS[1]}
        K2=$(node k2 "snowflake.lease_prefix = '/case14'" \
            "snowflake.zookeeper_hosts = '127.0.0.1:${ZK_PORTS[$D]},127.0.0.1:${ZK_PORTS[$LIVE]}'")
        start "$K2" && helpers "$K2"
        if wait_for "held" 20 held "$K2"; then
            ok "14: a node listing the dead server first holds an id"
        else
            not_ok "14: a node listing the dead server first holds an id" "$(stat_of "$K2" "lease_state || ' ' || coalesce(lease_last_error, '')")"
        fi
        sleep 2
        r=$(refused_in "$K2")
        cmp_num "14: ... with a few refused connects at most ($r)" "$r" -lt 20
        pg_stop "$K2"
    fi
fi
fi  # ZooKeeper only: case 14
pg_cleanup_all
etcd_stop
tap_summary
