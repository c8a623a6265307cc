// bench/sdk/compare.js: one Node.js id generator measured, for bench/sdk.sh.
//
//   node compare.js IMPL NPM_PREFIX SDK_NODE_DIR MARK_FILE WORKER_ID BATCH ROUNDS SECONDS
//
// IMPL: node (ours: the binding's nextId(), a bigint, a static worker id and
// its mark file), sapphire (@sapphire/snowflake: new Snowflake(epoch),
// generate()), nodejs-snowflake (new Snowflake({custom_epoch, instance_id}),
// getUniqueID()), flake-idgen (new FlakeId({id, epoch}), next() without a
// callback, which returns an 8-byte Buffer and throws when a millisecond's
// 4,096 ids are used up: the loop counts the throw and calls again). The npm
// packages are loaded from NPM_PREFIX (bench/sdk.sh installs them there,
// never in the checkout). One process per generator.
//
// Figures (the same method as bench/sdk_c_bench.c and compare.py):
//   ns_below_cap  ROUNDS timed batches of BATCH calls, each started at a new
//                 millisecond, so that no call waits for the next one: the
//                 median batch's ns per id (ns_below_cap_mean: the mean);
//   ids_per_s     calls as fast as they return for SECONDS, every id stored
//                 exactly (a Buffer read as a big-endian unsigned 64-bit
//                 integer) in a BigUint64Array; then the ids are sorted and
//                 the repeats counted (dups: ids issued more than once,
//                 counting each extra copy; dup_values: distinct values
//                 repeated), with the most ids that share one millisecond
//                 field (id >> 22, which all four layouts have).
// Prints IMPL<TAB>KEY<TAB>VALUE lines; asserts nothing.
'use strict';
const path = require('path');
const [impl, npmPrefix, sdkNode, mark, workerArg, batchArg, roundsArg, secondsArg] = process.argv.slice(2);
const WORKER = Number(workerArg), B = Number(batchArg), R = Number(roundsArg), SECONDS = Number(secondsArg);
const EPOCH_MS = Date.UTC(2025, 0, 1); // the extension's default epoch, for every generator
const mods = path.join(npmPrefix, 'node_modules');
const out = (k, v) => process.stdout.write(`${impl}\t${k}\t${v}\n`);
const pkgVersion = (name) => require(path.join(mods, name, 'package.json')).version;

async function make() {
    switch (impl) {
    case 'node': {
        const { Generator } = require(sdkNode);
        const g = await Generator.open({ workerId: WORKER, markFile: mark });
        return {
            version: `snowflake_ids (sdk/node) ${require(path.join(sdkNode, 'package.json')).version}, nextId()`,
            next: () => g.nextId(),
            extra: () => ({ overflow_waits: g.stats().overflowWaits }),
            close: () => g.close(),
        };
    }
    case 'sapphire': {
        const { Snowflake } = require(path.join(mods, '@sapphire/snowflake'));
        const s = new Snowflake(new Date(EPOCH_MS));
        return { version: `@sapphire/snowflake ${pkgVersion('@sapphire/snowflake')}, generate()`, next: () => s.generate() };
    }
    case 'nodejs-snowflake': {
        const { Snowflake } = require(path.join(mods, 'nodejs-snowflake'));
        const s = new Snowflake({ custom_epoch: EPOCH_MS, instance_id: WORKER });
        return { version: `nodejs-snowflake ${pkgVersion('nodejs-snowflake')}, getUniqueID()`, next: () => s.getUniqueID() };
    }
    case 'flake-idgen': {
        const FlakeId = require(path.join(mods, 'flake-idgen'));
        const f = new FlakeId({ id: WORKER, epoch: EPOCH_MS });
        let throws = 0;
        return {
            version: `flake-idgen ${pkgVersion('flake-idgen')}, next()`,
            next: () => {
                for (;;) {
                    try {
                        return f.next().readBigUInt64BE(0);
                    } catch (e) {
                        if (!/Sequence exceeded/.test(e.message)) throw e;
                        throws++;
                    }
                }
            },
            extra: () => ({ overflow_throws: throws }),
        };
    }
    default:
        throw new Error(`unknown implementation ${impl}`);
    }
}

// ns per id of the median batch (a batch that lost the CPU to another
// process is an outlier, not the call's cost), and the mean.
// This thread's [ms on a CPU, ms waiting for one] (/proc/self/schedstat), or null.
function sched() {
    try {
        const [cpu, wait] = require('fs').readFileSync('/proc/self/schedstat', 'utf8').split(' ').map(Number);
        return [cpu / 1e6, wait / 1e6];
    } catch (e) {
        return null;
    }
}

function belowCap(f) {
    const times = new Float64Array(R);
    let total = 0;
    for (let r = 0; r < R; r++) {
        const ms = Date.now();
        while (Date.now() === ms) {} // a new millisecond: the batch stays below the cap
        const t = process.hrtime.bigint();
        for (let i = 0; i < B; i++) f();
        times[r] = Number(process.hrtime.bigint() - t);
        total += times[r];
    }
    times.sort();
    return { median: times[R >> 1] / B, mean: total / (B * R) };
}

(async () => {
    const g = await make();
    const next = g.next;
    out('version', `${g.version}; Node.js ${process.version}`);
    let sink = 0;
    belowCap(next); // warm-up
    const empty = belowCap(() => { sink++; });
    const ns = belowCap(next);
    const before = g.extra ? g.extra() : {};
    out('ns_below_cap', ns.median.toFixed(2));
    out('ns_below_cap_mean', ns.mean.toFixed(2));
    out('empty_loop_ns', empty.median.toFixed(2));
    out('batch', B);
    out('rounds', R);

    // Tight loop: room for 4x the cap's ids (a faster generator stops when full).
    const cap = Math.ceil(SECONDS * 4096000 * 4) + 65536;
    const ids = new BigUint64Array(cap);
    let n = 0;
    const t0 = process.hrtime.bigint(), end = t0 + BigInt(Math.round(SECONDS * 1e9));
    let t1;
    const s0 = sched();
    for (;;) {
        const stop = Math.min(n + 1024, cap);
        while (n < stop) ids[n++] = BigInt.asUintN(64, next());
        t1 = process.hrtime.bigint();
        if (t1 >= end || n >= cap) break;
    }
    const s1 = sched();
    const after = g.extra ? g.extra() : {};
    const secs = Number(t1 - t0) / 1e9;
    out('ids', n);
    out('seconds', secs.toFixed(4));
    out('ids_per_s', (n / secs).toFixed(0));
    if (s0 && s1) {
        out('tight_cpu_ms', (s1[0] - s0[0]).toFixed(1));
        out('tight_wait_ms', (s1[1] - s0[1]).toFixed(1));
    }
    if (n >= cap) out('note', 'the id buffer filled before the duration ended');
    for (const k of Object.keys(after)) out(k, after[k] - (before[k] || 0));
    if (g.close) await g.close();

    const a = ids.subarray(0, n);
    let ascending = true;
    for (let i = 1; i < n; i++) if (a[i] <= a[i - 1]) { ascending = false; break; }
    if (!ascending) a.sort();
    let dups = 0, dupValues = 0, example = null, maxMs = 0, run = 0, lastMs = -1n;
    for (let i = 0; i < n; i++) {
        if (i > 0 && a[i] === a[i - 1]) {
            dups++;
            if (i === 1 || a[i - 1] !== a[i - 2]) { dupValues++; if (example === null) example = a[i]; }
        }
        const ms = a[i] >> 22n;
        if (ms === lastMs) run++; else { run = 1; lastMs = ms; }
        if (run > maxMs) maxMs = run;
    }
    out('ascending', ascending ? 'yes' : 'no');
    out('dups', dups);
    out('dup_values', dupValues);
    out('max_ids_one_ms', maxMs);
    if (example !== null) {
        // Its millisecond (Unix) and low 12 bits, and how many copies.
        let copies = 0;
        for (let i = 0; i < n; i++) if (a[i] === example) copies++;
        out('dup_example', `${example} (ms ${new Date(Number(example >> 22n) + EPOCH_MS).toISOString()}, low 12 bits ${example & 4095n}, ${copies} copies)`);
    }
    if (sink === -1) console.log(sink);
})().catch((e) => { console.error(e); process.exit(1); });
