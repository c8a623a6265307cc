# Throwaway etcd clusters for tests and demos: Debian's etcd on free loopback
# ports, data in a directory the caller owns. Source after test/lib/pg.sh (or
# on its own). Stopped by etcd_stop, which callers put in their EXIT trap.

ETCD_BIN=${ETCD_BIN:-/usr/bin/etcd}
ETCDCTL_BIN=${ETCDCTL_BIN:-/usr/bin/etcdctl}
ETCD_PIDS=()
ETCD_URLS=()
ETCD_ENDPOINTS=
ETCD_DIR=

# True if something listens on 127.0.0.1:PORT.
etcd_listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

etcd_healthy() { curl -fsS --max-time 1 --noproxy '*' "$1/health" 2>/dev/null | grep -q '"health":"true"'; }

# etcd_start N DIR: starts an N-member cluster with its data under DIR and
# waits until every member reports healthy. Sets ETCD_URLS (client URLs),
# ETCD_PIDS and ETCD_ENDPOINTS ("url,url,..."). Returns 1 if it cannot.
# ETCD_FLAGS (an array, if set) adds flags to every member.
etcd_start() {
    local n=$1 dir=$2 attempt i cluster ok
    ETCD_DIR=$dir
    for attempt in 1 2 3; do
        local cports=() pports=()
        for ((i = 0; i < n; i++)); do cports+=("$(free_tcp_port)"); pports+=("$(free_tcp_port)"); done
        cluster=
        for ((i = 0; i < n; i++)); do cluster+="${cluster:+,}m$i=http://127.0.0.1:${pports[$i]}"; done
        ETCD_PIDS=()
        ETCD_URLS=()
        for ((i = 0; i < n; i++)); do
            rm -rf "$dir/m$i"
            ETCD_URLS+=("http://127.0.0.1:${cports[$i]}")
            "$ETCD_BIN" --name "m$i" --data-dir "$dir/m$i" \
                --listen-client-urls "${ETCD_URLS[$i]}" --advertise-client-urls "${ETCD_URLS[$i]}" \
                --listen-peer-urls "http://127.0.0.1:${pports[$i]}" \
                --initial-advertise-peer-urls "http://127.0.0.1:${pports[$i]}" \
                --initial-cluster "$cluster" --initial-cluster-state new \
                --initial-cluster-token "snowflake-test-$$-$attempt" \
                --logger zap --log-outputs stderr ${ETCD_FLAGS[@]+"${ETCD_FLAGS[@]}"} >"$dir/m$i.log" 2>&1 &
            ETCD_PIDS+=($!)
        done
        ok=no
        for _ in $(seq 150); do
            ok=yes
            for ((i = 0; i < n; i++)); do
                kill -0 "${ETCD_PIDS[$i]}" 2>/dev/null || { ok=dead; break; }
                etcd_healthy "${ETCD_URLS[$i]}" || { ok=no; break; }
            done
            [ "$ok" = no ] || break
            sleep 0.1
        done
        if [ "$ok" = yes ]; then
            ETCD_ENDPOINTS=$(IFS=,; echo "${ETCD_URLS[*]}")
            return 0
        fi
        echo "etcd: cluster did not start (attempt $attempt):" >&2
        tail -3 "$dir"/m*.log >&2 2>/dev/null
        etcd_stop
    done
    return 1
}

# etcd_stop: stops every member this shell started (SIGCONT first, in case a
# test froze them), by pid.
etcd_stop() {
    local p
    for p in "${ETCD_PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -TERM "$p" 2>/dev/null || true; done
    for p in "${ETCD_PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    ETCD_PIDS=()
}

# etcd_ctl ARGS...: etcdctl (v3 API) against the cluster.
etcd_ctl() { ETCDCTL_API=3 "$ETCDCTL_BIN" --endpoints "$ETCD_ENDPOINTS" --dial-timeout 2s --command-timeout 3s "$@"; }

# etcd_follower: prints the index (into ETCD_URLS and ETCD_PIDS) of a member
# that is not the leader, by each member's own status; returns 1 if none
# answers so. Killing a follower must not interrupt clients; killing the
# leader may, for as long as the election takes.
etcd_follower() {
    local i status member leader
    for i in "${!ETCD_URLS[@]}"; do
        status=$(ETCDCTL_API=3 "$ETCDCTL_BIN" --endpoints "${ETCD_URLS[$i]}" --dial-timeout 2s \
            --command-timeout 3s endpoint status -w json 2>/dev/null) || continue
        member=$(jq -r '.[0].Status.header.member_id' <<<"$status" 2>/dev/null)
        leader=$(jq -r '.[0].Status.leader' <<<"$status" 2>/dev/null)
        if [ -n "$member" ] && [ -n "$leader" ] && [ "$leader" != 0 ] && [ "$member" != "$leader" ]; then
            echo "$i"
            return 0
        fi
    done
    return 1
}
