#!/bin/bash
# Tests of ZooKeeper's coordinator (src/zk/coordinator.hpp), and the lease
# driver's LeaseLoop tests (test/coord/lease_loop_test.cpp), against a real
# ZooKeeper: starts a standalone server of Debian's zookeeper on a free
# loopback port in a temporary directory (test/lib/zookeeper.sh), runs
# build/zk_client_tests against it, and stops it (by its pid) and removes the
# directory, pass or fail.
#
#   test/zk_client.sh [gtest options, e.g. --gtest_filter=Zk.Claim*]
#   ZK_CLIENT_TESTS=path/to/other/build test/zk_client.sh
#
# Needs the packages zookeeper and libzookeeper-st-dev (scripts/deps.sh); does
# not need PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

# A short tick: sessions may last 2 to 20 ticks (1 to 10 s), so that a
# session lost while the server is stopped expires within a test.
ZK_TICK_MS=${ZK_TICK_MS:-500}
. test/lib/zookeeper.sh
if [ ! -x "$ZK_JAVA" ] || [ ! -r "$ZK_CLASSPATH" ]; then
    echo "zk_client: $ZK_JAVA or $ZK_CLASSPATH not found; install zookeeper (make deps)" >&2
    exit 1
fi
tests=${ZK_CLIENT_TESTS:-}
if [ -z "$tests" ]; then
    make -s build/zk_client_tests
    tests=build/zk_client_tests
fi

dir=$(mktemp -d /tmp/snowflake-zk.XXXXXX)
cleanup() {
    zk_stop
    rm -rf "$dir"
}
trap cleanup EXIT

if ! zk_start 1 "$dir/zk"; then
    echo "zk_client: could not start ZooKeeper" >&2
    exit 1
fi
echo "zk_client: ZooKeeper (tick ${ZK_TICK_MS} ms) at $ZK_HOSTS (pid ${ZK_PIDS[0]})"

# Every test defined must run and pass: compare the count run with the list
# (the lease driver's tests are there for the coordinators these name).
export SNOWFLAKE_TEST_ZK=$ZK_HOSTS SNOWFLAKE_TEST_ZK_PID=${ZK_PIDS[0]} SNOWFLAKE_TEST_ZK_TICK_MS=$ZK_TICK_MS \
    SNOWFLAKE_TEST_ZK_CLIENT_LOG=$dir/client.log
unset SNOWFLAKE_TEST_ETCD SNOWFLAKE_TEST_ETCD_PID
. test/lib/gtest.sh
rc=0
gtest_run zk_client "$dir" "$tests" "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "zk_client: FAILED; the C client's log:" >&2
    tail -20 "$dir/client.log" >&2 2>/dev/null || true
    echo "zk_client: ZooKeeper's log:" >&2
    tail -20 "$dir/zk/s0.log" >&2 2>/dev/null || true
fi
exit "$rc"
