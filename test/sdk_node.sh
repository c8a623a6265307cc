#!/bin/bash
# Tests of the Node.js binding of libsnowflake_ids (sdk/node, issue 30):
# builds it (make sdk-node), starts Debian's etcd and ZooKeeper on free
# loopback ports in a temporary directory, runs node --test sdk/node/test/
# against them (a static worker id with a mark file, errors, close; leasing
# from etcd and from ZooKeeper: none of the tests may be skipped), then
# installs the package from the checkout into a throwaway project with npm
# (offline) and uses it there. Stops both servers (by pid) and removes the
# directory, pass or fail.
#
#   test/sdk_node.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

. test/lib/etcd.sh
. test/lib/zookeeper.sh
if [ ! -x "$ETCD_BIN" ]; then
    echo "sdk_node: $ETCD_BIN not found; install etcd-server (make deps)" >&2
    exit 1
fi
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk-node

dir=$(mktemp -d /tmp/snowflake-sdk-node.XXXXXX)
cleanup() {
    zk_stop
    etcd_stop
    rm -rf "$dir"
}
trap cleanup EXIT

if ! etcd_start 1 "$dir"; then
    echo "sdk_node: could not start etcd" >&2
    exit 1
fi
export SNOWFLAKE_TEST_ETCD=${ETCD_URLS[0]}
if ! zk_start 1 "$dir/zk"; then
    echo "sdk_node: could not start ZooKeeper" >&2
    exit 1
fi
export SNOWFLAKE_TEST_ZK=$ZK_HOSTS
echo "sdk_node: $(node --version), etcd at $SNOWFLAKE_TEST_ETCD (pid ${ETCD_PIDS[0]}), ZooKeeper at $ZK_HOSTS (pid ${ZK_PIDS[0]})"

rc=0
node --test --test-reporter=tap sdk/node/test/ | tee "$dir/node-test.out" || rc=$?
skipped=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$dir/node-test.out")
passed=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$dir/node-test.out")
if [ "${skipped:-0}" -ne 0 ] || [ "${passed:-0}" -eq 0 ]; then
    echo "sdk_node: ${passed:-0} tests passed, ${skipped:-0} skipped: every test must run" >&2
    rc=1
fi

# npm install ./sdk/node, offline, into a project of its own: the install
# script builds the addon from the checkout; the package then works there.
mkdir "$dir/app"
echo '{ "name": "sdk-install-check", "version": "1.0.0", "private": true }' >"$dir/app/package.json"
if (cd "$dir/app" && npm install --offline --no-audit --no-fund --cache "$dir/npm-cache" "$root/sdk/node") \
        >"$dir/npm.log" 2>&1 &&
    out=$(cd "$dir/app" && node -e '
        const { Generator, SnowflakeError } = require("snowflake-ids");
        (async () => {
            const g = await Generator.open({ workerId: 3, markFile: process.argv[1] });
            const id = g.nextId();
            await g.close();
            if (typeof id !== "bigint" || Generator.decode(id).workerId !== 3) throw new Error("bad id " + id);
            if (!(new SnowflakeError("x") instanceof Error)) throw new Error("bad error class");
            console.log(require.resolve("snowflake-ids"), String(id));
        })().catch((e) => { console.error(e); process.exit(1); });' "$dir/app/mark"); then
    echo "ok - npm install of the checkout's sdk/node: $out"
else
    echo "not ok - npm install of the checkout's sdk/node" >&2
    tail -20 "$dir/npm.log" >&2
    rc=1
fi
if [ "$rc" -ne 0 ]; then
    echo "sdk_node: FAILED; etcd's log:" >&2
    tail -20 "$dir/m0.log" >&2 2>/dev/null || true
fi
exit "$rc"
