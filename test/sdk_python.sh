#!/bin/bash
# Tests of the Python binding of libsnowflake_ids (sdk/python, issue 30):
# builds it (make sdk-python), starts Debian's etcd and ZooKeeper on free
# loopback ports in a temporary directory, runs /usr/bin/python3 -m unittest
# discover sdk/python/tests against them (a static worker id with a mark file,
# errors, close, the context manager, os.fork() and multiprocessing; leasing
# from etcd and from ZooKeeper: none of the tests may be skipped), then
# installs the package from the checkout with pip (offline) into a virtual
# environment and uses it there. Stops both servers (by pid) and removes the
# directory, pass or fail.
#
#   test/sdk_python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PY=/usr/bin/python3

. test/lib/etcd.sh
. test/lib/zookeeper.sh
if [ ! -x "$ETCD_BIN" ]; then
    echo "sdk_python: $ETCD_BIN not found; install etcd-server (make deps)" >&2
    exit 1
fi
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk-python

dir=$(mktemp -d /tmp/snowflake-sdk-python.XXXXXX)
cleanup() {
    zk_stop
    etcd_stop
    rm -rf "$dir"
}
trap cleanup EXIT

if ! etcd_start 1 "$dir"; then
    echo "sdk_python: could not start etcd" >&2
    exit 1
fi
export SNOWFLAKE_TEST_ETCD=${ETCD_URLS[0]}
if ! zk_start 1 "$dir/zk"; then
    echo "sdk_python: could not start ZooKeeper" >&2
    exit 1
fi
export SNOWFLAKE_TEST_ZK=$ZK_HOSTS
echo "sdk_python: $($PY --version), etcd at $SNOWFLAKE_TEST_ETCD (pid ${ETCD_PIDS[0]}), ZooKeeper at $ZK_HOSTS (pid ${ZK_PIDS[0]})"

rc=0
PYTHONPATH="$root/sdk/python" $PY -m unittest discover -v -s sdk/python/tests 2>&1 | tee "$dir/unittest.out" ||
    rc=$?
if ! tail -1 "$dir/unittest.out" | grep -qx 'OK'; then
    echo "sdk_python: the last line is not 'OK': a test failed or was skipped" >&2
    rc=1
fi

# pip install ./sdk/python, offline, into a virtual environment that sees
# Debian's packages (setuptools): setup.py builds the extension from the
# checkout; the package then works there, outside the checkout.
if $PY -m venv --system-site-packages "$dir/venv" >"$dir/pip.log" 2>&1 &&
    env -u PYTHONPATH "$dir/venv/bin/pip" install --no-index --no-cache-dir "$root/sdk/python" >>"$dir/pip.log" 2>&1 &&
    out=$(cd "$dir" && env -u PYTHONPATH "$dir/venv/bin/python" -c '
import sys, snowflake_ids
assert snowflake_ids.__file__.startswith(sys.argv[1] + "/venv/"), snowflake_ids.__file__
with snowflake_ids.Generator(worker_id=3, mark_file=sys.argv[1] + "/mark") as g:
    i = g.next_id()
assert snowflake_ids.decode(i).worker_id == 3
print(snowflake_ids.__file__, i)' "$dir"); then
    echo "ok - pip install of the checkout's sdk/python: $out"
else
    echo "not ok - pip install of the checkout's sdk/python" >&2
    tail -20 "$dir/pip.log" >&2
    rc=1
fi
if [ "$rc" -ne 0 ]; then
    echo "sdk_python: FAILED; etcd's log:" >&2
    tail -20 "$dir/m0.log" >&2 2>/dev/null || true
fi
exit "$rc"
