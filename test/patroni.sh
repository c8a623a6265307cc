#!/bin/bash
# snowflake under Patroni, as users run it: a real etcd and a 2-member
# Patroni cluster on loopback (Debian's patroni, run as the postgres user,
# with /usr/bin/python3), the extension in Patroni's shared (DCS)
# configuration. Every scenario bootstraps a cluster of its own (m0 the
# first leader, m1 its streaming replica), starts continuous inserts through
# the leader (test/patroni/client.py: a client with a one-second timeout and
# a patient one, both finding the leader again after an error, every answer
# recorded with its time and member), makes m1 the leader, and checks every
# acknowledged id (test/patroni/check.py):
#   - no id acknowledged twice;
#   - no id of the new leader below the old leader's highest id;
#   - at a switchover, every insert the old leader acknowledged is in the
#     new leader's table (none lost);
# and reports the longest time without an acknowledged insert, and the
# inserts lost at a failover.
#
# Every scenario starts once m1 has replayed m0's WAL up to a point after
# the inserts began: m1 streams. A switchover to a replica that does not
# stream loses the old leader's last commits, and with them the
# reservations their ids were issued under (Patroni 3.0 promotes the named
# candidate without comparing its WAL with the old leader's); the WAL can
# carry the mark only as far as it carries the rows (docs/patroni.md).
#
# Scenarios (the functions scenario_* below), each for every kind of ids:
#   switchover        patronictl switchover --leader m0 --candidate m1 --force
#   switchover-ahead  the same, with m0's postgres 2 s ahead (libfaketime,
#                     through wrapper scripts in m0's postgresql.bin_dir)
#   kill              kill -9 of m0's Patroni, its postmaster and every server
#                     process (the machine dies): failover after the TTL
#   freeze            SIGSTOP of the same processes; SIGCONT once m1 leads and
#                     has acknowledged inserts (a paused machine resumes)
# Kinds of ids:
#   static  shared_preload_libraries and snowflake.worker_id: 7 in the
#           bootstrap DCS parameters: both members have worker id 7
#   local   shared_preload_libraries in the DCS parameters, a worker id per
#           member in its own patroni.yml (m0 7, m1 8)
#   leased  snowflake.etcd_endpoints (Patroni's own etcd), no worker id,
#           snowflake.lease_ttl below Patroni's ttl, a lease_prefix per cluster
#
# Usage: test/patroni.sh [SELECTION...]
#   SELECTION: a kind (static, local, leased), a scenario (switchover, ...:
#   every kind), KIND:SCENARIO (static:switchover-ahead) or all. Without
#   one: DEFAULT_SELECTION below (8 scenarios, about 4 minutes); the run
#   says what it left out.
# KEEP_TMP=1 keeps the directories (Patroni and server logs, the answers).
#
# With a worker id in the shared configuration, the mark must travel with the
# WAL for switchover-ahead to pass; freeze gives a split brain (the resumed
# old leader answers until Patroni demotes it), which leases and an id per
# member survive and a shared static id does not (docs/patroni.md).
# Prints "ok - ..." / "not ok - ..." lines, a table of results, and
# "N passed, N failed". Needs patroni, python3-etcd, python3-psycopg2,
# etcd-server, libfaketime, curl (make deps); runs as root (the servers as
# the postgres user).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh

PATRONI=${PATRONI:-/usr/bin/patroni}
PATRONICTL=${PATRONICTL:-/usr/bin/patronictl}
PY=/usr/bin/python3      # Debian's, with python3-psycopg2 (not a pyenv shim)
HERE=$PWD/test/patroni

# Patroni's timing, small so that a failover takes seconds: the leader key
# lives TTL seconds; loop_wait + 2 * retry_timeout must stay below the TTL.
TTL=10
LOOP_WAIT=1
RETRY_TIMEOUT=4
LEASE_TTL=5              # snowflake.lease_ttl, at or below TTL
AHEAD=+2s                # the old leader's clock in switchover-ahead

KINDS=(static local leased)
# Without arguments (make test): every scenario the extension must get right
# as users configure it, within about five minutes. Left out: static:freeze,
# a split brain with one worker id on both members and asynchronous
# replication, which nothing in a node can make safe (the resumed old leader
# issues under a reservation the new one never received; docs/patroni.md):
# run it on request to see it. The freeze runs with an id per member
# (local:freeze), the set-up the docs recommend for static ids, and leased.
DEFAULT_SELECTION=(static:switchover static:switchover-ahead static:kill leased local:freeze)

CLIENT_PIDS=()
CLUSTERS=()
declare -A PATRONI_PID=()
RESULTS=()

# --- processes ---------------------------------------------------------------

# as_postgres COMMAND...: runs COMMAND as the postgres user in the same
# process (setpriv execs; runuser would fork and wait), from /.
as_postgres() {
    cd / && exec setpriv --reuid=postgres --regid=postgres --init-groups "$@"
}

# pm_pid C M: the postmaster pid of member M of cluster directory C.
pm_pid() { [ -f "$1/$2/data/postmaster.pid" ] && head -1 "$1/$2/data/postmaster.pid"; }

# member_procs C M: the postmaster of M and its children (every server
# process: each is a session leader of its own, so the postmaster's process
# group holds the postmaster alone). Stop the postmaster first, so that it
# starts no new child meanwhile.
member_procs() {
    local pm
    pm=$(pm_pid "$1" "$2") || return 1
    [ -d "/proc/$pm" ] || return 1
    echo "$pm"
    ps -o pid= --ppid "$pm" | tr -d ' '
}

# member_signal C M SIGNAL: sends SIGNAL to M's Patroni, its postmaster and
# every server process, as one machine would get it: for STOP and KILL the
# postmaster is stopped first (it forks no child after that), then the rest
# are listed and signalled.
member_signal() {
    local c=$1 m=$2 sig=$3 pm procs=()
    pm=$(pm_pid "$c" "$m") || pm=
    [ -n "$pm" ] && [ "$sig" != CONT ] && kill -STOP "$pm" 2>/dev/null
    [ -n "$pm" ] && mapfile -t procs < <(member_procs "$c" "$m")
    kill "-$sig" -- ${PATRONI_PID[$c/$m]:+"${PATRONI_PID[$c/$m]}"} "${procs[@]}" 2>/dev/null
}

# member_gone C M: waits until no live process works in M's data directory,
# then clears what a SIGKILLed (zombie) postmaster leaves behind.
member_gone() {
    local port
    port=$(cat "$1/$2/pgport")
    PG_PORT=$port pg_reap "$1/$2"
}

# --- a cluster ---------------------------------------------------------------

# api C M / pgport C M: M's REST API and PostgreSQL ports.
api() { cat "$1/$2/apiport"; }
pgport() { cat "$1/$2/pgport"; }

# rest C M PATH: the HTTP status of Patroni's REST API of M at PATH.
rest() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 --noproxy '*' "http://127.0.0.1:$(api "$1" "$2")$3" 2>/dev/null; }
is_primary() { [ "$(rest "$1" "$2" /primary)" = 200 ]; }
is_replica() { [ "$(rest "$1" "$2" /replica)" = 200 ]; }
# settled C: one member leads, the other replicates.
settled() { { is_primary "$1" m1 && is_replica "$1" m0; } || { is_primary "$1" m0 && is_replica "$1" m1; }; }

# sql C M SQL: one query as postgres on M (over TCP), 10 s at most.
sql() {
    timeout 10 "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(pgport "$1" "$2")" \
        -U postgres -d postgres -c "$3" 2>&1
}

# wrappers DIR [postgres environment...]: a postgresql.bin_dir for Patroni
# in DIR: a script per program of PGBIN that execs it, the one for postgres
# with the environment given (libfaketime).
wrappers() {
    local dir=$1 f name; shift
    mkdir -p "$dir"
    for f in "$PGBIN"/*; do
        name=${f##*/}
        {
            echo '#!/bin/sh'
            if [ "$name" = postgres ] && [ $# -gt 0 ]; then
                printf 'export %s\n' "$@"
            fi
            echo "exec $f \"\$@\""
        } >"$dir/$name"
        chmod 755 "$dir/$name"
    done
}

# id_parameters KIND SCOPE: the extension's lines of the bootstrap DCS
# parameters (indented for patroni.yml).
id_parameters() {
    echo "        shared_preload_libraries: snowflake"
    case $1 in
        static) echo "        snowflake.worker_id: 7" ;;
        local) ;;
        leased)
            echo "        snowflake.etcd_endpoints: '$ETCD_ENDPOINTS'"
            echo "        snowflake.lease_ttl: $LEASE_TTL"
            echo "        snowflake.lease_prefix: '/snowflake/$2'" ;;
    esac
}

# local_parameters KIND MEMBER: the lines of the member's own
# postgresql.parameters (which Patroni applies over the DCS ones).
local_parameters() {
    [ "$1" = local ] || return 0
    case $2 in
        m0) echo "    snowflake.worker_id: 7" ;;
        m1) echo "    snowflake.worker_id: 8" ;;
    esac
}

# member_setup C M KIND SCOPE [postgres environment...]: M's directory,
# ports, bin_dir and patroni.yml.
member_setup() {
    local c=$1 m=$2 kind=$3 scope=$4 d
    shift 4
    d=$c/$m
    mkdir -p "$d"
    free_tcp_port >"$d/pgport"
    free_tcp_port >"$d/apiport"
    wrappers "$d/bin" "$@"
    cat >"$d/patroni.yml" <<EOF
scope: $scope
namespace: /service/
name: $m

restapi:
  listen: 127.0.0.1:$(api "$c" "$m")
  connect_address: 127.0.0.1:$(api "$c" "$m")

etcd3:
  hosts: ${ETCD_ENDPOINTS#http://}

bootstrap:
  dcs:
    ttl: $TTL
    loop_wait: $LOOP_WAIT
    retry_timeout: $RETRY_TIMEOUT
    maximum_lag_on_failover: 1048576
    postgresql:
      use_pg_rewind: true
      parameters:
$(id_parameters "$kind" "$scope")
  initdb:
    - encoding: UTF8
    - locale: C

postgresql:
  listen: 127.0.0.1:$(pgport "$c" "$m")
  connect_address: 127.0.0.1:$(pgport "$c" "$m")
  data_dir: $d/data
  bin_dir: $d/bin
  pgpass: $d/pgpass
  basebackup:
    - checkpoint: fast
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
  parameters:
    unix_socket_directories: '$d'
$(local_parameters "$kind" "$m")
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication replicator 127.0.0.1/32 trust

watchdog:
  mode: off
EOF
    chown -R postgres: "$d"
}

# patroni_start C M KIND SCOPE [postgres environment...]: sets M up
# (member_setup) and starts its Patroni as postgres; PATRONI_PID[C/M].
# Another process may take a port between free_tcp_port and the bind: if
# Patroni exits within its first seconds with a port in use (its REST API
# or, at the bootstrap, PostgreSQL's), M is set up again on other ports,
# three times at most.
patroni_start() {
    local c=$1 m=$2 d=$1/$2 attempt pid
    for attempt in 1 2 3; do
        member_setup "$@"
        (as_postgres env HOME="$d" "$PATRONI" "$d/patroni.yml") >>"$d/patroni.log" 2>&1 &
        pid=$!
        PATRONI_PID[$d]=$pid
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            [ "$(rest "$c" "$m" /liveness)" = 200 ] && return 0
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && return 0
        wait "$pid" 2>/dev/null
        unset "PATRONI_PID[$d]"
        grep -q 'Address already in use' "$d/patroni.log" || return 1
        echo "# $m: a port was taken (attempt $attempt), trying others"
        mv "$d/patroni.log" "$d/patroni.log.$attempt"
        rm -rf "$d/data"
    done
    return 1
}

# cluster_stop C: stops the Patroni of each member (which stops its
# postgres), by pid, both at once; SIGKILL for Patroni and the server
# processes after 30 s. Resumes them first, if a test froze them.
cluster_stop() {
    local c=$1 m pid
    for m in m0 m1; do
        [ -d "$c/$m" ] || continue
        member_signal "$c" "$m" CONT
        pid=${PATRONI_PID[$c/$m]:-}
        [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    done
    for m in m0 m1; do
        [ -d "$c/$m" ] || continue
        pid=${PATRONI_PID[$c/$m]:-}
        if [ -n "$pid" ]; then
            for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            unset "PATRONI_PID[$c/$m]"
        fi
        if [ -f "$c/$m/data/postmaster.pid" ]; then
            member_signal "$c" "$m" KILL
            member_gone "$c" "$m"
        fi
    done
}

# --- clients -----------------------------------------------------------------

clients_start() {
    local c=$1 mode targets=()
    for m in m0 m1; do targets+=("$m=127.0.0.1:$(pgport "$c" "$m")"); done
    CLIENT_PIDS=()
    for mode in follow patient; do
        "$PY" "$HERE/client.py" "$mode" "$c/answers.$mode" "${targets[@]}" 2>>"$c/client.log" &
        CLIENT_PIDS+=($!)
    done
}

clients_stop() {
    local p
    for p in "${CLIENT_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${CLIENT_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    CLIENT_PIDS=()
}

# replayed_to C M LSN: M has replayed the WAL up to LSN.
replayed_to() { [ "$(sql "$1" "$2" "SELECT pg_last_wal_replay_lsn() >= '$3'::pg_lsn")" = t ]; }

# acks_by C M: inserts M acknowledged so far, over both clients.
acks_by() { cat "$1"/answers.* 2>/dev/null | awk -v m="$2" '$2 == m && $3 ~ /^[0-9]+$/' | wc -l; }
has_acks() { [ "$(acks_by "$1" "$2")" -ge "$3" ]; }

# stats C M WHEN: the columns of M's snowflake_stats that a switchover or a
# failover moves, on one comment line.
stats() {
    local out
    out=$(sql "$1" "$2" "SELECT format('worker_id=%s lease_state=%s ids_issued=%s high_water_mark=%s startup_waits=%s reservation_waits=%s clock_backwards_events=%s clock_backwards_errors=%s', worker_id, lease_state, ids_issued, to_char(high_water_mark AT TIME ZONE 'UTC', 'HH24:MI:SS.MS'), startup_waits, reservation_waits, clock_backwards_events, clock_backwards_errors) FROM snowflake_stats" | head -1)
    echo "# $3: $2 $out"
}

# --- scenarios ---------------------------------------------------------------
# Each makes m1 the leader, m0 being the leader when it is called; sets
# EVENT_AT (real time) when it starts the switchover or failover.

scenario_switchover() {
    EVENT_AT=$EPOCHREALTIME
    "$PATRONICTL" -c "$1/m0/patroni.yml" switchover --leader m0 --candidate m1 --force >"$1/switchover.log" 2>&1 \
        || { cat "$1/switchover.log"; return 1; }
    wait_for "m1 leads" 60 is_primary "$1" m1 && LEADS_AT=$EPOCHREALTIME
}

scenario_switchover_ahead() { scenario_switchover "$@"; }

scenario_kill() {
    EVENT_AT=$EPOCHREALTIME
    member_signal "$1" m0 KILL
    wait "${PATRONI_PID[$1/m0]}" 2>/dev/null
    unset "PATRONI_PID[$1/m0]"
    member_gone "$1" m0
    wait_for "m1 leads" 60 is_primary "$1" m1 && LEADS_AT=$EPOCHREALTIME
}

scenario_freeze() {
    EVENT_AT=$EPOCHREALTIME
    member_signal "$1" m0 STOP
    wait_for "m1 leads" 60 is_primary "$1" m1 || { member_signal "$1" m0 CONT; return 1; }
    LEADS_AT=$EPOCHREALTIME
    # Resumed once the new leader has acknowledged inserts (as many as the
    # other scenarios wait for: m1 may not lead for long after the resume,
    # see run_scenario): whatever the old one still answers now is a split
    # brain.
    wait_for "m1 acknowledges" 30 has_acks "$1" m1 50
    member_signal "$1" m0 CONT
    RESUMED_AT=$EPOCHREALTIME
}

# step TEXT: a progress line, with the time since the scenario began.
step() { echo "# [$(elapsed_since "$SCEN_T0") s] $SCEN: $*"; }

# since T: seconds from EVENT_AT to T, one decimal.
since() { awk -v a="$1" -v b="$EVENT_AT" 'BEGIN { printf "%+.1f", a - b }'; }

# run_scenario KIND SCENARIO
run_scenario() {
    local kind=$1 scen=$2 c scope fenv=() out key val lsn kept
    local -A r=()
    SCEN="$1:$2"
    SCEN_T0=$EPOCHREALTIME
    c=$WORK/$kind-$scen
    scope=sf-$kind-$scen
    mkdir -p "$c"
    CLUSTERS+=("$c")
    if [ "$scen" = switchover-ahead ]; then
        # select_shim.c: auxiliary processes (the mark worker) see the clock too.
        fenv=("LD_PRELOAD=$FT_PRELOAD" "FAKETIME=$AHEAD" FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_DONT_RESET=1)
    fi
    chown postgres: "$c"

    patroni_start "$c" m0 "$kind" "$scope" "${fenv[@]}"
    if ! wait_for "m0 leads" 90 is_primary "$c" m0; then
        bail "$SCEN: m0 bootstraps and leads" "$(tail -5 "$c/m0/patroni.log")"
        cluster_stop "$c"; return
    fi
    out=$(sql "$c" m0 "CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint NOT NULL, member text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())") \
        || { bail "$SCEN: the extension is created on m0" "$out"; cluster_stop "$c"; return; }
    step "m0 bootstrapped $scope and leads"
    patroni_start "$c" m1 "$kind" "$scope"
    if ! wait_for "m1 replicates" 90 is_replica "$c" m1; then
        bail "$SCEN: m1 joins as a replica" "$(tail -5 "$c/m1/patroni.log")"
        cluster_stop "$c"; return
    fi
    step "m1 replicates"
    [ "$scen" != switchover-ahead ] || like "$SCEN: m0's postgres runs $AHEAD ahead" \
        "$(sql "$c" m0 "SELECT round(extract(epoch FROM clock_timestamp()) - $EPOCHREALTIME)")" '^2$'

    clients_start "$c"
    if ! wait_for "inserts through m0" 60 has_acks "$c" m0 50; then
        bail "$SCEN: inserts through m0 are acknowledged" "$(tail -3 "$c"/answers.* "$c/client.log" 2>&1)" \
            "$(stats "$c" m0 before)"
        clients_stop; cluster_stop "$c"; return
    fi
    # m1 streams: it has replayed m0's WAL from after the first inserts.
    lsn=$(sql "$c" m0 "SELECT pg_current_wal_flush_lsn()")
    if ! wait_for "m1 replays m0's WAL" 30 replayed_to "$c" m1 "$lsn"; then
        bail "$SCEN: m1 streams m0's WAL (replayed up to $lsn)" \
            "$(sql "$c" m1 "SELECT pg_last_wal_replay_lsn(), status FROM pg_stat_wal_receiver" 2>&1)"
        clients_stop; cluster_stop "$c"; return
    fi
    sleep 0.5
    stats "$c" m0 before
    stats "$c" m1 before
    RESUMED_AT=
    LEADS_AT=
    step "inserting through m0; $scen"
    if ! "scenario_${scen//-/_}" "$c"; then
        not_ok "$SCEN: m1 becomes the leader" "$(tail -5 "$c/m1/patroni.log")"
    fi
    wait_for "m1 acknowledges" 60 has_acks "$c" m1 50 || not_ok "$SCEN: inserts through m1 are acknowledged" \
        "$(grep ' m1 ' "$c"/answers.* | tail -3)" "$(stats "$c" m1 after)"
    # The old leader back as a replica (not after kill -9: it stays down).
    if [ "$scen" != kill ] && ! wait_for "the cluster settles" 60 settled "$c"; then
        echo "# the cluster did not settle (one leader, one replica) within 60 s"
    fi
    step "m1 leads${LEADS_AT:+ (from $(since "$LEADS_AT") s)}${RESUMED_AT:+; m0 resumed at $(since "$RESUMED_AT") s}"
    if is_primary "$c" m0; then
        # Patroni 3.0.2 (Debian 12) with etcd3: a leader that was frozen
        # past its TTL can put its leader key back over the new leader's
        # (patroni/patroni#2689, fixed in 3.0.3); m1 is then demoted.
        step "m0 leads again: Patroni gave the old leader the leader key back"
    fi
    sleep 0.5
    clients_stop
    # The rows the leader has now: which acknowledged inserts it lost.
    kept=
    if is_primary "$c" m1 && sql "$c" m1 "COPY (SELECT id FROM ids) TO STDOUT" >"$c/kept.m1"; then
        kept=$c/kept.m1
    fi
    stats "$c" m0 after
    stats "$c" m1 after
    cluster_stop "$c"
    step "stopped"

    out=$("$PY" "$HERE/check.py" ${kept:+--kept "$kept"} m0 m1 "$EVENT_AT" "$c"/answers.*) \
        || { bail "$SCEN: answers checked" "$out"; return; }
    while read -r key val; do
        [ "$key" = "#" ] && { echo "#   $val"; continue; }
        r[$key]=$val
    done <<<"$out"
    echo "# $SCEN: ${r[acks]} acknowledged (${r[acks_old]} by m0, ${r[acks_new]} by m1)"
    is "$SCEN: no id acknowledged twice" "${r[duplicates]}" 0
    is "$SCEN: no id of the new leader below the old leader's highest" "${r[below_old_max]}" 0
    if [ -z "$kept" ]; then
        echo "# $SCEN: lost inserts not checked (m1 does not lead at the end)"
    elif [ "$scen" = switchover ] || [ "$scen" = switchover-ahead ]; then
        is "$SCEN: every insert m0 acknowledged is on the new leader" "${r[lost]}" 0
    else
        echo "# $SCEN: ${r[lost]} inserts m0 acknowledged are not on the new leader (asynchronous replication)"
    fi
    echo "# $SCEN: longest refusal ${r[longest_refusal]} s (from ${r[refusal_at]} s)"
    if [ "${r[old_again]}" -gt 0 ]; then
        echo "# $SCEN: m0 led again after m1 (${r[old_again]} ids); ${r[below_new_max]} of them below m1's highest (not asserted: m0 and m1 answered at once before)"
    fi
    RESULTS+=("$(printf '%-26s %6s %5s %6s %6s %6s %5s %9s' "$SCEN" "${r[acks]}" "${r[duplicates]}" \
        "${r[below_old_max]}" "${r[old_after_new]}" "${r[old_again]}" "${r[lost]:--}" "${r[longest_refusal]}")")
}

# --- main --------------------------------------------------------------------

# The scenarios are the functions defined above, in the order they are
# defined in.
mapfile -t SCENARIOS < <(shopt -s extdebug; for f in $(declare -F | sed -n 's/^declare -f \(scenario_.*\)/\1/p'); do
    declare -F "$f"; done | sort -k2n | sed 's/^scenario_\([^ ]*\) .*/\1/' | tr _ -)

# The selection, checked: every argument names something.
chosen=()
for arg in "${@:-${DEFAULT_SELECTION[@]}}"; do
    n=0
    for k in "${KINDS[@]}"; do
        for s in "${SCENARIOS[@]}"; do
            if [ "$arg" = all ] || [ "$arg" = "$k" ] || [ "$arg" = "$s" ] || [ "$arg" = "$k:$s" ]; then
                [[ " ${chosen[*]} " == *" $k:$s "* ]] || chosen+=("$k:$s")
                n=$((n + 1))
            fi
        done
    done
    if [ $n = 0 ]; then
        echo "patroni.sh: no scenario '$arg' (all, kinds: ${KINDS[*]}; scenarios: ${SCENARIOS[*]})" >&2
        exit 2
    fi
done

suite_begin patroni
WORK=$SUITE_DIR
suite_cleanup() {
    local c
    clients_stop
    for c in "${CLUSTERS[@]}"; do cluster_stop "$c"; done
}

missing=()
[ -x "$PATRONI" ] && [ -x "$PATRONICTL" ] || missing+=(patroni)
"$PY" -c 'import psycopg2' 2>/dev/null || missing+=(python3-psycopg2)
"$PY" -c 'import etcd' 2>/dev/null || missing+=(python3-etcd)
[ -x "$ETCD_BIN" ] || missing+=(etcd-server)
[ -r "$FT_LIB" ] || missing+=(libfaketime)
[ ${#missing[@]} = 0 ] || tap_abort "prerequisites installed (missing: ${missing[*]}; make deps)"

ft_build_shim "$WORK" || echo "# select_shim.c did not compile: the mark worker keeps the real clock"
etcd_start 1 "$WORK" || tap_abort "etcd starts on loopback"
echo "# $("$PATRONI" --version), etcd $("$ETCD_BIN" --version | head -1 | awk '{print $3}') at $ETCD_ENDPOINTS"
echo "# Patroni ttl $TTL s, loop_wait $LOOP_WAIT s, retry_timeout $RETRY_TIMEOUT s; snowflake.lease_ttl $LEASE_TTL s"

if [ $# = 0 ]; then
    for k in "${KINDS[@]}"; do
        for sc in "${SCENARIOS[@]}"; do
            [[ " ${chosen[*]} " == *" $k:$sc "* ]] || echo "# not run by default: $k:$sc (test/patroni.sh $k:$sc, or all)"
        done
    done
fi
start_all=$EPOCHREALTIME
for sel in "${chosen[@]}"; do
    t=$EPOCHREALTIME
    run_scenario "${sel%%:*}" "${sel#*:}"
    echo "# $sel took $(elapsed_since "$t") s"
done

echo "#"
echo "# scenario                    acks  dups  below  split  again  lost  refusal_s"
printf '# %s\n' "${RESULTS[@]}"
echo "# (below: ids of the new leader below the old leader's highest; split: ids the old"
echo "#  leader acknowledged while the new one did; again: ids the old leader acknowledged"
echo "#  after the new one's last (it led again); lost: inserts the old leader acknowledged"
echo "#  that are not on the new one; refusal: longest time without an acknowledged"
echo "#  insert, in seconds)"
echo "# patroni suite took $(elapsed_since "$start_all") s"
tap_summary
