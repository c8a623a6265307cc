# shellcheck shell=bash
# One etcd member and one standalone ZooKeeper server for a client suite
# (test/sdk_c.sh, test/sdk_node.sh, test/sdk_python.sh): Debian's servers on
# free loopback ports in a temporary directory, stopped (by their pids) and
# the directory removed when the suite's shell exits, pass or fail. Source it
# from the top of the checkout.
#
#   coordinators_start NAME    NAME: the suite's name, for its messages. Sets
#                              COORD_DIR (the directory; the suite may keep its
#                              own files there) and exports SNOWFLAKE_TEST_ETCD
#                              and SNOWFLAKE_TEST_ZK; exits 1 with a message if
#                              a server is missing or does not start.
#   coordinators_logs          the tail of both servers' logs (after a failure)

. test/lib/etcd.sh
. test/lib/zookeeper.sh

coordinators_stop() {
    zk_stop
    etcd_stop
    [ -n "${COORD_DIR:-}" ] && rm -rf "$COORD_DIR"
}

coordinators_start() {
    local name=$1
    if [ ! -x "$ETCD_BIN" ]; then
        echo "$name: $ETCD_BIN not found; install etcd-server (make deps)" >&2
        exit 1
    fi
    if [ ! -x "$ZK_JAVA" ] || [ ! -r "$ZK_CLASSPATH" ]; then
        echo "$name: $ZK_JAVA or $ZK_CLASSPATH not found; install zookeeper (make deps)" >&2
        exit 1
    fi
    COORD_DIR=$(mktemp -d "/tmp/snowflake-$name.XXXXXX")
    trap coordinators_stop EXIT
    mkdir -p "$COORD_DIR/etcd"
    if ! etcd_start 1 "$COORD_DIR/etcd"; then
        echo "$name: could not start etcd" >&2
        exit 1
    fi
    if ! zk_start 1 "$COORD_DIR/zk"; then
        echo "$name: could not start ZooKeeper" >&2
        exit 1
    fi
    export SNOWFLAKE_TEST_ETCD=${ETCD_URLS[0]} SNOWFLAKE_TEST_ZK=$ZK_HOSTS
    echo "$name: etcd at $SNOWFLAKE_TEST_ETCD (pid ${ETCD_PIDS[0]}), ZooKeeper at $ZK_HOSTS (pid ${ZK_PIDS[0]})"
}

coordinators_logs() {
    echo "etcd's log:" >&2
    tail -20 "$COORD_DIR/etcd/m0.log" >&2 2>/dev/null || true
    echo "ZooKeeper's log:" >&2
    tail -20 "$COORD_DIR/zk/s0.log" >&2 2>/dev/null || true
}
