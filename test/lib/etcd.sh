# Throwaway etcd clusters for tests and demos: Debian's etcd on free loopback
# ports, data in a directory the caller owns. Source after test/lib/pg.sh (or
# on its own). Stopped by etcd_stop, which callers put in their EXIT trap.
#
# Members in network namespaces (the nemesis suite, test/nemesis/): set
# ETCD_NETNS (one namespace per member) and ETCD_HOSTS (the member's address
# in it) before etcd_start; members then listen on HOST:2379 (clients) and
# HOST:2380 (peers), and the helpers talk to the cluster from the namespace
# ETCD_CTL_NETNS.

ETCD_BIN=${ETCD_BIN:-/usr/bin/etcd}
ETCDCTL_BIN=${ETCDCTL_BIN:-/usr/bin/etcdctl}
ETCD_PIDS=()
ETCD_URLS=()
ETCD_PEER_URLS=()
ETCD_NETNS=(${ETCD_NETNS[@]+"${ETCD_NETNS[@]}"})
ETCD_HOSTS=(${ETCD_HOSTS[@]+"${ETCD_HOSTS[@]}"})
ETCD_CTL_NETNS=${ETCD_CTL_NETNS:-}
ETCD_ENDPOINTS=
ETCD_CLUSTER=
ETCD_TOKEN=
ETCD_DIR=

# True if something listens on 127.0.0.1:PORT.
etcd_listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# etcd_in NETNS COMMAND...: runs COMMAND in network namespace NETNS (as it is
# when NETNS is empty).
etcd_in() {
    local ns=$1; shift
    if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

etcd_healthy() { etcd_in "$ETCD_CTL_NETNS" curl -fsS --max-time 1 --noproxy '*' "$1/health" 2>/dev/null | grep -q '"health":"true"'; }

# etcd_member_start I: starts member I (m$I) of the cluster etcd_start set up,
# in the background, appending to its log; sets ETCD_PIDS[I]. With its data
# directory left from an earlier run the member rejoins the cluster (etcd
# ignores the --initial-* flags then): this restarts a killed member.
etcd_member_start() {
    local i=$1 cmd=()
    # A simple command, so that $! is etcd's pid (ip netns exec execs it).
    [ -z "${ETCD_NETNS[$i]:-}" ] || cmd=(ip netns exec "${ETCD_NETNS[$i]}")
    "${cmd[@]}" "$ETCD_BIN" --name "m$i" --data-dir "$ETCD_DIR/m$i" \
        --listen-client-urls "${ETCD_URLS[$i]}" --advertise-client-urls "${ETCD_URLS[$i]}" \
        --listen-peer-urls "${ETCD_PEER_URLS[$i]}" \
        --initial-advertise-peer-urls "${ETCD_PEER_URLS[$i]}" \
        --initial-cluster "$ETCD_CLUSTER" --initial-cluster-state new \
        --initial-cluster-token "$ETCD_TOKEN" \
        --logger zap --log-outputs stderr ${ETCD_FLAGS[@]+"${ETCD_FLAGS[@]}"} >>"$ETCD_DIR/m$i.log" 2>&1 &
    ETCD_PIDS[$i]=$!
}

# etcd_member_kill I [SIGNAL]: sends SIGNAL (KILL) to member I and, unless it
# was SIGSTOP/SIGCONT, waits for it to exit.
etcd_member_kill() {
    local i=$1 sig=${2:-KILL}
    kill -CONT "${ETCD_PIDS[$i]}" 2>/dev/null || true
    kill -"$sig" "${ETCD_PIDS[$i]}" 2>/dev/null || true
    wait "${ETCD_PIDS[$i]}" 2>/dev/null || true
}

# etcd_start N DIR: starts an N-member cluster with its data under DIR and
# waits until every member reports healthy. Sets ETCD_URLS (client URLs),
# ETCD_PIDS and ETCD_ENDPOINTS ("url,url,..."). Returns 1 if it cannot.
# ETCD_FLAGS (an array, if set) adds flags to every member.
etcd_start() {
    local n=$1 dir=$2 attempt i ok
    ETCD_DIR=$dir
    for attempt in 1 2 3; do
        ETCD_CLUSTER=
        ETCD_PIDS=()
        ETCD_URLS=()
        ETCD_PEER_URLS=()
        ETCD_TOKEN="snowflake-test-$$-$attempt"
        for ((i = 0; i < n; i++)); do
            if [ -n "${ETCD_HOSTS[$i]:-}" ]; then
                ETCD_URLS+=("http://${ETCD_HOSTS[$i]}:2379")
                ETCD_PEER_URLS+=("http://${ETCD_HOSTS[$i]}:2380")
            else
                ETCD_URLS+=("http://127.0.0.1:$(free_tcp_port)")
                ETCD_PEER_URLS+=("http://127.0.0.1:$(free_tcp_port)")
            fi
            ETCD_CLUSTER+="${ETCD_CLUSTER:+,}m$i=${ETCD_PEER_URLS[$i]}"
        done
        for ((i = 0; i < n; i++)); do
            rm -rf "$dir/m$i"
            etcd_member_start "$i"
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
etcd_ctl() {
    ETCDCTL_API=3 etcd_in "$ETCD_CTL_NETNS" "$ETCDCTL_BIN" --endpoints "$ETCD_ENDPOINTS" \
        --dial-timeout 2s --command-timeout 3s "$@"
}

# etcd_follower: prints the index (into ETCD_URLS and ETCD_PIDS) of a member
# that is not the leader, by each member's own status; returns 1 if none
# answers so. Killing a follower must not interrupt clients; killing the
# leader may, for as long as the election takes.
etcd_follower() {
    local i status member leader
    for i in "${!ETCD_URLS[@]}"; do
        status=$(ETCDCTL_API=3 etcd_in "$ETCD_CTL_NETNS" "$ETCDCTL_BIN" --endpoints "${ETCD_URLS[$i]}" --dial-timeout 2s \
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
