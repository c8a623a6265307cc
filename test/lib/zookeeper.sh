# Throwaway ZooKeeper servers for tests and demos: Debian's zookeeper package
# (3.8, Java), run as the plain Java main class with Debian's classpath, on
# free loopback ports, data and logs in a directory the caller owns (no
# systemd, no /etc/zookeeper). Source after test/lib/pg.sh (or on its own).
# zk_stop, which callers put in their EXIT trap, stops every server by pid.
#
#   zk_start 1 "$DIR"    a standalone server
#   zk_start 3 "$DIR"    a 3-server ensemble (quorum of 2)
# Sets ZK_HOSTS ("127.0.0.1:p1,127.0.0.1:p2,..." for snowflake.zookeeper_hosts),
# ZK_PORTS and ZK_PIDS. zk_server_kill I [SIGNAL] signals server I;
# zk_server_start I restarts it with its data.
#
# Servers in network namespaces (the nemesis suite, test/nemesis/): set
# ZK_NETNS (one namespace per server) and ZK_ADDRS (the server's address in
# it) before zk_start; servers then listen on ADDR:2181 (clients) and
# ADDR:2888/3888 (quorum and election), and the helpers talk to them from
# the namespace ZK_CTL_NETNS. ZK_ADDRS[i] is then the address of server i.

ZK_JAVA=${ZK_JAVA:-/usr/bin/java}
ZK_CLASSPATH=${ZK_CLASSPATH:-/usr/share/java/zookeeper.jar}
ZK_MAIN=org.apache.zookeeper.server.quorum.QuorumPeerMain
ZK_PIDS=()
ZK_PORTS=()
ZK_HOSTS=
ZK_DIR=
ZK_NETNS=(${ZK_NETNS[@]+"${ZK_NETNS[@]}"})
ZK_ADDRS=(${ZK_ADDRS[@]+"${ZK_ADDRS[@]}"})
ZK_CTL_NETNS=${ZK_CTL_NETNS:-}
# The server's tick (ms): sessions may last 2 to 20 ticks (4 to 40 s).
ZK_TICK_MS=${ZK_TICK_MS:-2000}

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# zk_addr I: the address server I listens on for clients (127.0.0.1 unless
# the servers are in namespaces).
zk_addr() { echo "${ZK_ADDRS[$1]:-127.0.0.1}"; }

# zk_4lw HOST PORT WORD: a four-letter-word command ("srvr") to the server at
# HOST:PORT, from ZK_CTL_NETNS when set; prints its answer.
zk_4lw() {
    if [ -n "$ZK_CTL_NETNS" ]; then
        ip netns exec "$ZK_CTL_NETNS" bash -c \
            'exec 2>/dev/null 3<>"/dev/tcp/$0/$1" && printf %s "$2" >&3 && timeout 2 cat <&3' "$@"
    else
        (exec 2>/dev/null 3<>"/dev/tcp/$1/$2" && printf %s "$3" >&3 && timeout 2 cat <&3)
    fi
}

# zk_serving PORT [HOST]: true if the server on HOST:PORT (127.0.0.1) serves
# requests (its "srvr" answer names a mode: standalone, leader or follower).
zk_serving() {
    local out
    out=$(zk_4lw "${2:-127.0.0.1}" "$1" srvr) || return 1
    [[ $out == *"Mode: "* ]]
}

zk_server_start() {
    local i=$1 cmd=()
    # A simple command, so that $! is the server's pid (ip netns exec execs it).
    [ -z "${ZK_NETNS[$i]:-}" ] || cmd=(ip netns exec "${ZK_NETNS[$i]}")
    # log4j 1.2 (Debian's slf4j binding) writes to the console: the log file.
    "${cmd[@]}" "$ZK_JAVA" -Xmx128m -XX:+UseSerialGC -Dzookeeper.log.dir="$ZK_DIR/s$i" \
        -Dzookeeper.root.logger=INFO,CONSOLE -Dlog4j.configuration="file:$ZK_DIR/log4j.properties" \
        -Dzookeeper.admin.enableServer=false -cp "$ZK_CLASSPATH" "$ZK_MAIN" "$ZK_DIR/s$i/zoo.cfg" \
        >>"$ZK_DIR/s$i.log" 2>&1 &
    ZK_PIDS[$i]=$!
}

# zk_server_kill I [SIGNAL]: sends SIGNAL (KILL) to server I and, unless it
# is SIGSTOP/SIGCONT, waits for it to exit.
zk_server_kill() {
    local i=$1 sig=${2:-KILL}
    case $sig in
        STOP|CONT) kill -"$sig" "${ZK_PIDS[$i]}" 2>/dev/null || true; return 0 ;;
    esac
    kill -CONT "${ZK_PIDS[$i]}" 2>/dev/null || true
    kill -"$sig" "${ZK_PIDS[$i]}" 2>/dev/null || true
    wait "${ZK_PIDS[$i]}" 2>/dev/null || true
}

# zk_start N DIR: starts N servers (1: standalone; 3: an ensemble) and waits
# until each serves. Returns 1 if it cannot (after three tries with new ports).
zk_start() {
    local n=$1 dir=$2 attempt i j ok peers
    ZK_DIR=$dir
    mkdir -p "$dir"
    printf '%s\n' 'log4j.rootLogger=INFO, CONSOLE' \
        'log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender' \
        'log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout' \
        'log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] %-5p [%t:%C{1}@%L] - %m%n' \
        >"$dir/log4j.properties"
    for attempt in 1 2 3; do
        ZK_PIDS=()
        ZK_PORTS=()
        peers=()
        for ((i = 0; i < n; i++)); do
            if [ -n "${ZK_ADDRS[$i]:-}" ]; then
                ZK_PORTS+=(2181)
                peers+=("server.$((i + 1))=${ZK_ADDRS[$i]}:2888:3888")
            else
                ZK_PORTS+=("$(free_tcp_port)")
                peers+=("server.$((i + 1))=127.0.0.1:$(free_tcp_port):$(free_tcp_port)")
            fi
        done
        for ((i = 0; i < n; i++)); do
            rm -rf "$dir/s$i"
            mkdir -p "$dir/s$i/data"
            echo $((i + 1)) >"$dir/s$i/data/myid"
            {
                echo "tickTime=$ZK_TICK_MS"
                echo "initLimit=10"
                echo "syncLimit=5"
                echo "dataDir=$dir/s$i/data"
                echo "clientPort=${ZK_PORTS[$i]}"
                echo "clientPortAddress=$(zk_addr "$i")"
                echo "4lw.commands.whitelist=srvr,ruok,mntr"
                echo "admin.enableServer=false"
                echo "maxClientCnxns=0"
                if [ "$n" -gt 1 ]; then
                    for ((j = 0; j < n; j++)); do echo "${peers[$j]}"; done
                fi
            } >"$dir/s$i/zoo.cfg"
        done
        for ((i = 0; i < n; i++)); do zk_server_start "$i"; done
        ok=no
        for _ in $(seq 300); do
            ok=yes
            for ((i = 0; i < n; i++)); do
                kill -0 "${ZK_PIDS[$i]}" 2>/dev/null || { ok=dead; break; }
                zk_serving "${ZK_PORTS[$i]}" "$(zk_addr "$i")" || { ok=no; break; }
            done
            [ "$ok" = no ] || break
            sleep 0.2
        done
        if [ "$ok" = yes ]; then
            ZK_HOSTS=$(for i in "${!ZK_PORTS[@]}"; do printf '%s:%s,' "$(zk_addr "$i")" "${ZK_PORTS[$i]}"; done)
            ZK_HOSTS=${ZK_HOSTS%,}
            return 0
        fi
        echo "zookeeper: servers did not start (attempt $attempt):" >&2
        tail -3 "$dir"/s*.log >&2 2>/dev/null
        zk_stop
    done
    return 1
}

# zk_stop: stops every server this shell started (SIGCONT first, in case a
# test froze them), by pid.
zk_stop() {
    local p
    for p in "${ZK_PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -TERM "$p" 2>/dev/null || true; done
    for p in "${ZK_PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    ZK_PIDS=()
}

# zk_mode I: "standalone", "leader" or "follower" (as server I says).
zk_mode() {
    zk_4lw "$(zk_addr "$1")" "${ZK_PORTS[$1]}" srvr | sed -n 's/^Mode: //p'
}

# zk_follower: the index of a server that is a follower (killing it must not
# interrupt clients).
zk_follower() {
    local i
    for i in "${!ZK_PORTS[@]}"; do
        [ "$(zk_mode "$i")" = follower ] && { echo "$i"; return 0; }
    done
    return 1
}

# zk_cli ARGS...: ZooKeeper's own command-line client (Java) against the
# servers, one command; prints what the command prints (the connection
# chatter before it is dropped) and returns its status.
zk_cli() {
    local out rc i live=
    # Only servers that run: the client runs its command as soon as it
    # starts connecting, and one to a killed server would fail it.
    for i in "${!ZK_PORTS[@]}"; do
        kill -0 "${ZK_PIDS[$i]}" 2>/dev/null && live+="${live:+,}$(zk_addr "$i"):${ZK_PORTS[$i]}"
    done
    local cmd=()
    [ -z "$ZK_CTL_NETNS" ] || cmd=(ip netns exec "$ZK_CTL_NETNS")
    out=$("${cmd[@]}" "$ZK_JAVA" -Xmx64m -cp "$ZK_CLASSPATH" -Dzookeeper.log.dir="${ZK_DIR:-/tmp}" \
        -Dlog4j.configuration=file:/dev/null org.apache.zookeeper.ZooKeeperMain -server "${live:-$ZK_HOSTS}" "$@" 2>/dev/null)
    rc=$?
    sed '1,/^WatchedEvent state:SyncConnected/d' <<<"$out"
    return $rc
}
# zk_get PATH: the znode's data. zk_exists PATH: true if it exists.
zk_get() { zk_cli get "$1"; }
zk_exists() { zk_cli stat "$1" >/dev/null; }
