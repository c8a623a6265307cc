#!/bin/bash
# The cost of one id through the bindings: ns per nextId() in Node.js and per
# next_id() in Python (goals, docs/sdk.md: Node <= 100 ns, Python <= 200 ns),
# with a static worker id and a mark file in a temporary directory.
#
# Below the cap: one worker id issues at most 4096 ids a millisecond (244 ns
# an id), so a tight loop would measure the cap, not the binding. Each
# batch of BATCH (1000) calls therefore starts at a new millisecond, and only
# the batches are timed; ROUNDS (2000) batches. The empty loop's cost is
# printed beside each figure. Prints; asserts nothing.
#
#   bench/sdk_bindings.sh          (builds the bindings first: make sdk)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BATCH=${BATCH:-1000}
ROUNDS=${ROUNDS:-2000}
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk-node sdk-python
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-sdk-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

node - "$ROOT/sdk/node" "$W/node.mark" "$BATCH" "$ROUNDS" <<'JS'
const [dir, mark, batch, rounds] = process.argv.slice(2);
const { Generator } = require(dir);
const B = Number(batch), R = Number(rounds);
function timed(f) {
    let total = 0n;
    for (let r = 0; r < R; r++) {
        const ms = Date.now();
        while (Date.now() === ms) {}  // a new millisecond: the batch stays below the cap
        const t = process.hrtime.bigint();
        for (let i = 0; i < B; i++) f();
        total += process.hrtime.bigint() - t;
    }
    return Number(total) / (B * R);
}
(async () => {
    const g = await Generator.open({ workerId: 1, markFile: mark });
    const n = g.nextId.bind(g), s = g.nextIdString.bind(g);
    let sink = 0;
    timed(n); // warm-up
    const empty = timed(() => { sink++; });
    const id = timed(n), str = timed(s);
    const s0 = g.stats();
    await g.close();
    console.log(`Node.js ${process.version}: nextId() ${id.toFixed(1)} ns, nextIdString() ${str.toFixed(1)} ns ` +
        `(empty loop ${empty.toFixed(1)} ns; ${B} calls a batch, ${R} batches; overflow waits ${s0.overflowWaits})`);
})().catch((e) => { console.error(e); process.exit(1); });
JS

PYTHONPATH="$ROOT/sdk/python" /usr/bin/python3 - "$W/python.mark" "$BATCH" "$ROUNDS" <<'PY'
import sys, time
import snowflake_ids
mark, B, R = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = range(B)
def timed(f):
    total = 0
    for _ in range(R):
        ms = time.time_ns() // 1000000
        while time.time_ns() // 1000000 == ms:  # a new millisecond: the batch stays below the cap
            pass
        t = time.perf_counter_ns()
        for _ in rng:
            f()
        total += time.perf_counter_ns() - t
    return total / (B * R)
with snowflake_ids.Generator(worker_id=2, mark_file=mark) as g:
    f = g.next_id
    timed(f)  # warm-up
    empty = timed(int)
    per = timed(f)
    waits = g.stats()["overflow_waits"]
print("Python %s: next_id() %.1f ns (a call of int(): %.1f ns; %d calls a batch, %d batches; overflow waits %d)"
      % (sys.version.split()[0], per, empty, B, R, waits))
PY
