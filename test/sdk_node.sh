#!/bin/bash
# Tests of the Node.js binding of libsnowflake_ids (sdk/node, issue 30):
# builds it (make sdk-node), starts Debian's etcd and ZooKeeper on free
# loopback ports in a temporary directory, runs node --test sdk/node/test/
# against them (a static worker id with a mark file, errors, close; leasing
# from etcd and from ZooKeeper: none of the tests may be skipped), then
# installs the package from the checkout into a throwaway project with npm
# (offline) and uses it there; and a copy of the package without build/
# (no addon: the native toolchain never ran) whose ID buffer,
# require('snowflake-ids/buffer'), loads and works. Stops both servers (by
# pid) and removes the directory, pass or fail.
#
#   test/sdk_node.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

. test/lib/coordinators.sh
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk-node
coordinators_start sdk_node
dir=$COORD_DIR
echo "sdk_node: $(node --version)"

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
# The ID buffer without the addon: sdk/node copied without build/ into a
# project's node_modules, as if installed where nothing was built;
# require('snowflake-ids/buffer') (package.json "exports") loads, a buffer
# takes ids from a small HTTP server, and the main entry point says that the
# addon is missing.
mkdir -p "$dir/nobuild/node_modules/snowflake-ids"
(cd sdk/node && tar --exclude=./build --exclude=./node_modules -cf - .) | tar -xf - -C "$dir/nobuild/node_modules/snowflake-ids"
if [ ! -e "$dir/nobuild/node_modules/snowflake-ids/build" ] &&
    out=$(cd "$dir/nobuild" && node -e '
        const http = require("http");
        const { IdBuffer, SnowflakeError } = require("snowflake-ids/buffer");
        let next = 1000n;
        const srv = http.createServer((req, res) => {
            const n = Number(new URL(req.url, "http://x").searchParams.get("count"));
            const ids = Array.from({ length: n }, () => String(next++));
            res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ ids }));
        }).listen(0, "127.0.0.1", async () => {
            const buf = new IdBuffer({ urls: `http://127.0.0.1:${srv.address().port}`, minBatch: 10 });
            const a = await buf.nextId(), b = await buf.nextId();
            await buf.close();
            srv.close();
            if (a !== 1000n || b !== 1001n) throw new Error(`bad ids ${a} ${b}`);
            let main;
            try { require("snowflake-ids"); main = "loaded"; } catch (e) { main = e.code; }
            if (main !== "MODULE_NOT_FOUND") throw new Error(`the main entry point without the addon: ${main}`);
            if (!(new SnowflakeError("x") instanceof Error)) throw new Error("bad error class");
            console.log(require.resolve("snowflake-ids/buffer"), String(a), String(b));
        });' 2>&1); then
    echo "ok - the ID buffer of a copy without the addon (no build/): $out"
else
    echo "not ok - the ID buffer of a copy without the addon (no build/): $out" >&2
    rc=1
fi
if [ "$rc" -ne 0 ]; then
    echo "sdk_node: FAILED; etcd's log:" >&2
    tail -20 "$dir/m0.log" >&2 2>/dev/null || true
fi
exit "$rc"
