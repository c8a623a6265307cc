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

ZK_JAVA=${ZK_JAVA:-/usr/bin/java}
ZK_CLASSPATH=${ZK_CLASSPATH:-/usr/share/java/zookeeper.jar}
ZK_MAIN=org.apache.zookeeper.server.quorum.QuorumPeerMain
ZK_PIDS=()
ZK_PORTS=()
ZK_HOSTS=
ZK_DIR=
# The server's tick (ms): sessions may last 2 to 20 ticks (4 to 40 s).
ZK_TICK_MS=${ZK_TICK_MS:-2000}

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# zk_serving PORT: true if the server on PORT serves requests (its "srvr"
# answer names a mode: standalone, leader or follower).
zk_serving() {
    local out
    out=$(exec 2>/dev/null 3<>"/dev/tcp/127.0.0.1/$1" && printf 'srvr' >&3 && timeout 2 cat <&3) || return 1
    [[ $out == *"Mode: "* ]]
}

zk_server_start() {
    local i=$1
    # log4j 1.2 (Debian's slf4j binding) writes to the console: the log file.
    "$ZK_JAVA" -Xmx128m -XX:+UseSerialGC -Dzookeeper.log.dir="$ZK_DIR/s$i" \
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
            ZK_PORTS+=("$(free_tcp_port)")
            peers+=("server.$((i + 1))=127.0.0.1:$(free_tcp_port):$(free_tcp_port)")
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
                echo "clientPortAddress=127.0.0.1"
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
                zk_serving "${ZK_PORTS[$i]}" || { ok=no; break; }
            done
            [ "$ok" = no ] || break
            sleep 0.2
        done
        if [ "$ok" = yes ]; then
            ZK_HOSTS=$(for p in "${ZK_PORTS[@]}"; do printf '127.0.0.1:%s,' "$p"; done)
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
    (exec 2>/dev/null 3<>"/dev/tcp/127.0.0.1/${ZK_PORTS[$1]}" && printf 'srvr' >&3 && timeout 2 cat <&3) |
        sed -n 's/^Mode: //p'
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
        kill -0 "${ZK_PIDS[$i]}" 2>/dev/null && live+="${live:+,}127.0.0.1:${ZK_PORTS[$i]}"
    done
    out=$("$ZK_JAVA" -Xmx64m -cp "$ZK_CLASSPATH" -Dzookeeper.log.dir="${ZK_DIR:-/tmp}" \
        -Dlog4j.configuration=file:/dev/null org.apache.zookeeper.ZooKeeperMain -server "${live:-$ZK_HOSTS}" "$@" 2>/dev/null)
    rc=$?
    sed '1,/^WatchedEvent state:SyncConnected/d' <<<"$out"
    return $rc
}
# zk_get PATH: the znode's data. zk_exists PATH: true if it exists.
zk_get() { zk_cli get "$1"; }
zk_exists() { zk_cli stat "$1" >/dev/null; }
