#!/bin/bash
# Tests of the Python binding of libsnowflake_ids (sdk/python, issue 30):
# builds it (make sdk-python), starts Debian's etcd and ZooKeeper on free
# loopback ports in a temporary directory, runs /usr/bin/python3 -m unittest
# discover sdk/python/tests against them (a static worker id with a mark file,
# errors, close, the context manager, os.fork() and multiprocessing; leasing
# from etcd and from ZooKeeper; the ID buffer against fake nodes, and
# imported from a copy of the package without _native: none of the tests
# may be skipped), then
# installs the package from the checkout with pip (offline) into a virtual
# environment and uses it there. Stops both servers (by pid) and removes the
# directory, pass or fail.
#
#   test/sdk_python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PY=/usr/bin/python3

. test/lib/coordinators.sh
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk-python
coordinators_start sdk_python
dir=$COORD_DIR
echo "sdk_python: $($PY --version)"

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
from snowflake_ids.buffer import IdBuffer
assert IdBuffer is snowflake_ids.IdBuffer
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
