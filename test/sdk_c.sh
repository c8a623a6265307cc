#!/bin/bash
# Tests of the C library libsnowflake_ids (sdk/c, test/sdk): a static worker
# id with its mark file, and leased worker ids against a real etcd and a real
# ZooKeeper. Starts Debian's etcd (test/lib/etcd.sh) and a standalone
# ZooKeeper (test/lib/zookeeper.sh) on free loopback ports in a temporary
# directory, runs build/sdk_tests against both, and stops them (by their
# pids) and removes the directory, pass or fail.
#
#   test/sdk_c.sh [gtest options, e.g. --gtest_filter=SdkStatic.*]
#   SDK_TESTS=path/to/other/build test/sdk_c.sh
#
# Needs the packages etcd-server, zookeeper, libzookeeper-st-dev,
# libcurl4-openssl-dev (scripts/deps.sh); does not need PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

ZK_TICK_MS=${ZK_TICK_MS:-500}
. test/lib/etcd.sh
. test/lib/zookeeper.sh
if [ ! -x "$ETCD_BIN" ]; then
    echo "sdk_c: $ETCD_BIN not found; install etcd-server (make deps)" >&2
    exit 1
fi
if [ ! -x "$ZK_JAVA" ] || [ ! -r "$ZK_CLASSPATH" ]; then
    echo "sdk_c: $ZK_JAVA or $ZK_CLASSPATH not found; install zookeeper (make deps)" >&2
    exit 1
fi
tests=${SDK_TESTS:-}
if [ -z "$tests" ]; then
    make -s build/sdk_tests build/sdk_c_smoke
    tests=build/sdk_tests
fi

dir=$(mktemp -d /tmp/snowflake-sdk.XXXXXX)
cleanup() {
    etcd_stop
    zk_stop
    rm -rf "$dir"
}
trap cleanup EXIT

mkdir -p "$dir/etcd"
if ! etcd_start 1 "$dir/etcd"; then
    echo "sdk_c: could not start etcd" >&2
    exit 1
fi
if ! zk_start 1 "$dir/zk"; then
    echo "sdk_c: could not start ZooKeeper" >&2
    exit 1
fi
echo "sdk_c: etcd at ${ETCD_URLS[0]} (pid ${ETCD_PIDS[0]}), ZooKeeper at $ZK_HOSTS (pid ${ZK_PIDS[0]})"

# The library from C, linked as an application links it (test/sdk/smoke.c).
smoke=${SDK_C_SMOKE:-build/sdk_c_smoke}
[ -x "$smoke" ] || make -s build/sdk_c_smoke
mkdir -p "$dir/smoke"
if ! "$smoke" "$dir/smoke"; then
    echo "sdk_c: the C smoke test failed" >&2
    exit 1
fi

# Every test defined must run and pass (the leased tests run once per
# coordinator named here).
export SNOWFLAKE_TEST_ETCD=${ETCD_URLS[0]} SNOWFLAKE_TEST_ZK=$ZK_HOSTS
. test/lib/gtest.sh
rc=0
gtest_run sdk_c "$dir" "$tests" "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "sdk_c: FAILED; etcd's log:" >&2
    tail -20 "$dir/etcd/m0.log" >&2 2>/dev/null || true
    echo "sdk_c: ZooKeeper's log:" >&2
    tail -20 "$dir/zk/s0.log" >&2 2>/dev/null || true
fi
exit "$rc"
