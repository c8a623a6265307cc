# shellcheck shell=bash
# Helpers of the multi-node suite (test/cluster/run.sh) and of
# `make demo-cluster` (scripts/demo_cluster.sh): PostgreSQL nodes issuing ids
# into their own `orders` table, and a merge node that subscribes to each of
# them with logical replication. Source after test/lib/pg.sh,
# or with test/lib/suite.sh (results, time, libfaketime and etcd helpers).
#
# Every node is a throwaway instance of test/lib/pg.sh (a Unix socket in its
# own directory): a subscription reaches its publisher with
# 'host=DIR port=PG_PORT', so no TCP port is needed.
#
# Worker ids. A node gets its worker id from CL_ID_SOURCE:
#   static  snowflake.worker_id = N in its postgresql.conf
#   leased  leased from the etcd cluster of test/lib/etcd.sh (etcd_start sets
#           ETCD_ENDPOINTS; source that file too): snowflake.etcd_endpoints,
#           snowflake.lease_ttl = CL_LEASE_TTL, snowflake.lease_prefix =
#           CL_LEASE_PREFIX, and no worker id (any free id is leased) or one
#           (exactly that id is leased, once no other node holds it).
#           cl_node_worker_id reads the id the node holds, cl_lease_table
#           what etcd says about it; nothing else here depends on where the
#           id comes from. With CL_COORDINATOR=zookeeper, the nodes lease
#           from the ZooKeeper servers of test/lib/zookeeper.sh instead
#           (cl_zk_start sets ZK_HOSTS; source that file too):
#           snowflake.zookeeper_hosts, and cl_zk_workers, cl_zk_mark say what
#           ZooKeeper holds.
# The merge node issues no ids: it keeps a static worker id of its own in
# both cases (cl_merge_init).

CL_ID_SOURCE=${CL_ID_SOURCE:-static}
CL_LEASE_TTL=${CL_LEASE_TTL:-5}
CL_LEASE_PREFIX=${CL_LEASE_PREFIX:-/snowflake}

CL_COORDINATOR=${CL_COORDINATOR:-etcd}   # leased: etcd or zookeeper
CL_ETCD_DIR=      # the directory of the etcd cluster cl_etcd_start started
CL_ZK_DIR=        # the directory of the ZooKeeper servers cl_zk_start started
CL_LOAD_PIDS=()   # background load (pgbench, clients) that cl_cleanup ends

# cl_etcd_start N: starts an N-member etcd cluster on loopback, in a new
# temporary directory, for leased worker ids (sets ETCD_ENDPOINTS).
cl_etcd_start() {
    CL_ETCD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-etcd.XXXXXX") || return 1
    etcd_start "$1" "$CL_ETCD_DIR"
}

# cl_etcd_stop: stops that cluster and removes its directory (kept with
# KEEP_TMP=1).
cl_etcd_stop() {
    etcd_stop
    [ -z "$CL_ETCD_DIR" ] || [ -n "${KEEP_TMP:-}" ] || rm -rf "$CL_ETCD_DIR"
    CL_ETCD_DIR=
}

# cl_zk_start N: starts N ZooKeeper servers (1: standalone) on loopback, in
# a new temporary directory, for leased worker ids (sets ZK_HOSTS).
cl_zk_start() {
    CL_ZK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-zk.XXXXXX") || return 1
    zk_start "$1" "$CL_ZK_DIR"
}

# cl_zk_stop: stops those servers (by pid) and removes their directory
# (kept with KEEP_TMP=1). Does nothing when none was started.
cl_zk_stop() {
    [ -n "$CL_ZK_DIR" ] || return 0
    zk_stop
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$CL_ZK_DIR"
    CL_ZK_DIR=
}

# cl_cleanup: the EXIT trap of a cluster script: stops the nodes, the
# instances, etcd or ZooKeeper and the background load, whatever state it
# finds.
cl_cleanup() {
    local p
    cl_stop_all || true
    pg_cleanup_all || true
    cl_etcd_stop || true
    cl_zk_stop || true
    for p in "${CL_LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}

# cl_id_conf [WORKER]: the postgresql.conf lines that give a node its worker
# id (one argument, one line each). Leased: WORKER empty leases any free id.
cl_id_conf() {
    case $CL_ID_SOURCE in
        static) echo "snowflake.worker_id = $1" ;;
        leased)
            if [ "$CL_COORDINATOR" = zookeeper ]; then
                if [ -z "${ZK_HOSTS:-}" ]; then
                    echo "cl_id_conf: no ZooKeeper server to lease worker ids from (cl_zk_start first)" >&2
                    return 1
                fi
                echo "snowflake.zookeeper_hosts = '$ZK_HOSTS'"
            elif [ -z "${ETCD_ENDPOINTS:-}" ]; then
                echo "cl_id_conf: no etcd cluster to lease worker ids from (etcd_start first)" >&2
                return 1
            else
                echo "snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'"
            fi
            echo "snowflake.lease_ttl = $CL_LEASE_TTL"
            echo "snowflake.lease_prefix = '$CL_LEASE_PREFIX'"
            [ -z "${1:-}" ] || echo "snowflake.worker_id = $1" ;;
        *) echo "cl_id_conf: unknown CL_ID_SOURCE '$CL_ID_SOURCE'" >&2; return 1 ;;
    esac
}

# cl_leasing_available: true if worker ids can be leased here from
# CL_COORDINATOR: etcd and etcdctl are installed (test/lib/etcd.sh's
# ETCD_BIN, ETCDCTL_BIN), or Java and ZooKeeper's jar (test/lib/zookeeper.sh's
# ZK_JAVA, ZK_CLASSPATH), and the installed snowflake library has that
# coordinator's setting. The library is read, not loaded: no server is
# started to ask it (a library without leasing has no
# "snowflake.etcd_endpoints" in it, one without ZooKeeper no
# "snowflake.zookeeper_hosts").
cl_leasing_available() {
    local lib setting
    if [ "$CL_COORDINATOR" = zookeeper ]; then
        [ -x "${ZK_JAVA:-/usr/bin/java}" ] && [ -r "${ZK_CLASSPATH:-/usr/share/java/zookeeper.jar}" ] || return 1
        setting=snowflake.zookeeper_hosts
    else
        [ -x "${ETCD_BIN:-/usr/bin/etcd}" ] && [ -x "${ETCDCTL_BIN:-/usr/bin/etcdctl}" ] || return 1
        setting=snowflake.etcd_endpoints
    fi
    lib="$("$PG_CONFIG" --pkglibdir 2>/dev/null)/snowflake.so" || return 1
    [ -r "$lib" ] && grep -qaF "$setting" "$lib"
}

# cl_node_worker_id DIR: the worker id the node holds, as snowflake_stats
# reports it (a leased id while the lease is held; NULL or -1 before).
cl_node_worker_id() { pg_val "$1" "SELECT worker_id FROM snowflake_stats"; }

# cl_lease_state DIR: the node's lease_state (static, acquiring, held,
# expired).
cl_lease_state() { pg_val "$1" "SELECT lease_state FROM snowflake_stats" 2>/dev/null; }

# cl_held DIR: the node holds its worker id lease.
cl_held() { [ "$(cl_lease_state "$1")" = held ]; }

# cl_lease_table: etcd's table of leased worker ids, one line per key of
# CL_LEASE_PREFIX/workers/, sorted by id: "ID<TAB>LEASE<TAB>VALUE" (the
# lease in decimal, as snowflake_stats' lease_id; the value names the node:
# "snowflake-node host=... port=... system_identifier=... instance=...
# started_unix_ms=... data_directory=... lease_ttl_ms=...").
cl_lease_table() {
    etcd_ctl get --prefix "$CL_LEASE_PREFIX/workers/" -w fields | awk -v p="$CL_LEASE_PREFIX/workers/" '
        /^"Key" : "/   { k = $0; sub(/^"Key" : "/, "", k); sub(/"$/, "", k); v = "" }
        /^"Value" : "/ { v = $0; sub(/^"Value" : "/, "", v); sub(/"$/, "", v) }
        /^"Lease" : /  { if (index(k, p) == 1) printf "%s\t%s\t%s\n", substr(k, length(p) + 1), $3, v }' |
        sort -n
}

# cl_key_lease ID: the lease (decimal) the key CL_LEASE_PREFIX/workers/ID is
# attached to; empty if the key does not exist.
cl_key_lease() {
    etcd_ctl get "$CL_LEASE_PREFIX/workers/$1" -w fields | awk '/^"Lease" : / { print $3 }'
}

# cl_etcd_mark ID: the value of CL_LEASE_PREFIX/marks/ID ("MS reserved" or
# "MS exact", MS in milliseconds since snowflake.epoch); empty if none.
cl_etcd_mark() { etcd_ctl get --print-value-only "$CL_LEASE_PREFIX/marks/$1"; }

# cl_zk_workers: ZooKeeper's view of the leased worker ids, one line per
# ephemeral znode CL_LEASE_PREFIX/workers/ID, sorted by id:
# "ID<TAB>SESSION<TAB>DATA" (SESSION: the znode's ephemeralOwner in hex, as
# snowflake_stats' lease_session prints it; DATA names the node, as with
# etcd). Asks ZooKeeper's own command-line client (zk_cli: one JVM per
# call). Returns 1 if ZooKeeper did not answer the listing.
cl_zk_workers() {
    local list id out data owner
    list=$(zk_cli ls "$CL_LEASE_PREFIX/workers" | grep -E '^\[[0-9, ]*\]$') || return 1
    list=${list:1:-1}
    for id in ${list//,/ }; do
        out=$(zk_cli get -s "$CL_LEASE_PREFIX/workers/$id") || continue   # gone meanwhile
        owner=$(sed -n 's/^ephemeralOwner = //p' <<<"$out")
        data=$(grep -m1 '^snowflake-node ' <<<"$out" || true)
        if [ -n "$owner" ]; then printf '%s\t%s\t%s\n' "$id" "$owner" "$data"; fi
    done | sort -n
}

# cl_zk_worker_gone ID: ZooKeeper answered, and CL_LEASE_PREFIX/workers/ID is
# not among the worker znodes (false if ZooKeeper did not answer).
cl_zk_worker_gone() {
    local list
    list=$(zk_cli ls "$CL_LEASE_PREFIX/workers" | grep -E '^\[[0-9, ]*\]$') || return 1
    [[ ", ${list:1:-1}, " != *", $1, "* ]]
}

# cl_zk_mark ID: the data of CL_LEASE_PREFIX/marks/ID ("MS reserved" or
# "MS exact"); empty if none.
cl_zk_mark() { zk_cli get "$CL_LEASE_PREFIX/marks/$1" | grep -m1 -E '^[0-9]+ (reserved|exact)$' || true; }

# cl_make_template: one initdb that the nodes' data directories are copied
# from (initdb of each node would take most of the run on a small machine).
# The copies share a system identifier, which logical replication does not
# look at.
CL_TEMPLATE=
cl_make_template() {
    CL_TEMPLATE=$(pg_tmpdir)
    PG_INSTANCES+=("$CL_TEMPLATE")     # removed by pg_cleanup_all
    pg_init "$CL_TEMPLATE"
}

# cl_init DIR [conf lines...]: DIR/data as a copy of the template (or a new
# initdb without one) with the given postgresql.conf lines. In a copy, the
# template's unix_socket_directories is overridden (the last line wins).
cl_init() {
    local dir=$1; shift
    if [ -n "$CL_TEMPLATE" ]; then
        cp -a "$CL_TEMPLATE/data" "$dir/data" && pg_conf "$dir" "unix_socket_directories = '$dir'" "$@"
    else
        pg_init "$dir" "$@"
    fi
}

# cl_node_init DIR WORKER [conf lines...]: a source node that publishes its
# orders table, with worker id WORKER (leased: empty for any free id).
# wal_level = logical for the publication; autovacuum off so that it does
# not compete with the load on a small machine.
cl_node_init() {
    local dir=$1 worker=$2; shift 2
    local idconf
    idconf=$(cl_id_conf "$worker") || return 1
    cl_init "$dir" "shared_preload_libraries = 'snowflake'" "$idconf" \
        "wal_level = logical" "max_wal_senders = 10" "max_replication_slots = 10" \
        "autovacuum = off" "log_min_messages = info" "$@"
}

# cl_merge_init DIR WORKER [conf lines...]: the merge node. It has snowflake
# preloaded with a static worker id of its own, whatever CL_ID_SOURCE (it
# issues no ids here, but could issue ids into the same table); it
# subscribes to every node, one apply worker each.
cl_merge_init() {
    local dir=$1 worker=$2; shift 2
    cl_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = $worker" \
        "max_worker_processes = 24" "max_logical_replication_workers = 16" \
        "max_replication_slots = 16" "max_sync_workers_per_subscription = 2" \
        "wal_retrieve_retry_interval = '500ms'" "autovacuum = off" \
        "log_min_messages = info" "$@"
}

# cl_start DIR [OFFSET_SECONDS]: starts a node; with an offset, under
# libfaketime with its clock that far from the real one ("+0.003").
cl_start() {
    local dir=$1 off=${2:-}
    if [ -n "$off" ]; then
        ft_set "$dir" "$off"
        ft_start "$dir"
    else
        pg_start "$dir" || {
            echo "# server in $dir did not start; log tail:" >&2
            tail -n 20 "$dir/server.log" | sed 's/^/#   /' >&2
            return 1
        }
    fi
}

# cl_schema DIR: the extension and the orders table of every node (the merge
# node has the same table and primary key).
cl_schema() {
    pg_psql "$1" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE TABLE orders (
    id         bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    node       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    client     integer,
    amount     numeric(10, 2)
);
SQL
}

# cl_publish DIR: the node's publication of its orders table.
cl_publish() { pg_val "$1" "CREATE PUBLICATION orders_pub FOR TABLE orders" >/dev/null; }

# cl_subscribe MERGE NAME SOURCE_DIR: the merge node subscribes to a node's
# publication (subscription sub_NAME, replication slot of the same name on
# the node). The table is empty on the node when this runs, or its rows are
# copied first (copy_data).
cl_subscribe() {
    pg_psql "$1" -c "SET client_min_messages = warning" \
        -c "CREATE SUBSCRIPTION sub_$2 CONNECTION 'host=$3 port=$PG_PORT user=postgres dbname=postgres' PUBLICATION orders_pub"
}

# cl_count DIR [CONDITION]: rows of orders.
cl_count() { pg_val "$1" "SELECT count(*) FROM orders WHERE ${2:-true}"; }

# cl_caught_up MERGE NODE SOURCE_DIR: the merge node has every row of the
# node.
cl_caught_up() {
    local want got
    want=$(cl_count "$3") || return 1
    got=$(cl_count "$1" "node = '$2'") || return 1
    [ "$want" = "$got" ]
}

# cl_load_script DIR: the pgbench script (:rows orders per transaction),
# where the postgres user can read it. :node and :rows are set with -D.
cl_load_script() {
    cat >"$1/orders.sql" <<'SQL'
INSERT INTO orders (node, client, amount)
SELECT ':node', :client_id, round((random() * 100)::numeric, 2) FROM generate_series(1, :rows);
SQL
    chmod 644 "$1/orders.sql"
    echo "$1/orders.sql"
}

# cl_load DIR NODE SECONDS CLIENTS [RATE [ROWS]]: pgbench inserting orders
# into the node for SECONDS with CLIENTS connections, at most RATE
# transactions per second in all (when given and not empty), ROWS orders per
# transaction (default 10). Runs in the foreground: start it with &.
cl_load() {
    local dir=$1 node=$2 secs=$3 clients=$4 rate=${5:-} rows=${6:-10}
    as_pg "$PGBIN/pgbench" -n -h "$dir" -p "$PG_PORT" -U postgres -c "$clients" -j "$clients" \
        -T "$secs" ${rate:+-R "$rate"} -f "$(cl_load_script "$dir")" -D node="$node" -D rows="$rows" postgres
}

# cl_clock_offset DIR: measures how far the node's clock is from the real
# one, the way NTP does: 25 queries of clock_timestamp() in one session, and
# for the one with the shortest round trip, the server's time minus the
# middle of the round trip (the server read its clock within the round trip,
# so the error is at most half of it). Each reply carries the number of its
# query, so that a stray line never pairs a reply with the wrong query. Sets
# REPLY to "OFFSET_US RTT_US"; returns 1 if no query was answered.
cl_clock_offset() {
    local dir=$1 i t0 t1 line n srv rtt best_rtt=-1 best_off=0
    coproc CL_PSQL { as_pg "$PGBIN/psql" -X -A -t -h "$dir" -p "$PG_PORT" -U postgres -d postgres 2>/dev/null; }
    for i in $(seq 1 25); do
        t0=${EPOCHREALTIME/./}
        echo "SELECT '$i ' || (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;" >&"${CL_PSQL[1]}"
        srv=
        while read -r -t 10 line <&"${CL_PSQL[0]}"; do
            read -r n srv <<<"$line"
            [ "$n" = "$i" ] && [[ $srv =~ ^[0-9]+$ ]] && break
            srv=
        done
        t1=${EPOCHREALTIME/./}
        [ -n "$srv" ] || break
        rtt=$((t1 - t0))
        if [ "$best_rtt" -lt 0 ] || [ "$rtt" -lt "$best_rtt" ]; then
            best_rtt=$rtt
            best_off=$((srv - (t0 + t1) / 2))
        fi
    done
    local fd=${CL_PSQL[1]}
    exec {fd}>&-
    wait "$CL_PSQL_PID" 2>/dev/null
    REPLY="$best_off $best_rtt"
    [ "$best_rtt" -ge 0 ]
}

# cl_stop_all: stops every instance of PG_INSTANCES at once (pg_cleanup_all
# then only removes them; it stops them one by one).
cl_stop_all() {
    local dir pids=()
    for dir in "${PG_INSTANCES[@]}"; do
        pg_stop "$dir" immediate &
        pids+=($!)
    done
    local p
    for p in "${pids[@]}"; do wait "$p"; done
}

# cl_us_ms US: microseconds as milliseconds with one decimal ("-2.9").
cl_us_ms() {
    local u=$1 sign=
    if [ "$u" -lt 0 ]; then sign=-; u=$((-u)); fi
    printf '%s%d.%d' "$sign" $((u / 1000)) $((u % 1000 / 100))
}
