#!/usr/bin/env node
// bench/buffer.sh's Node.js client: sdk/node/buffer.js's IdBuffer (no addon)
// refilling from URL (the load balancer or one node). Prints KEY<TAB>VALUE
// lines; asserts nothing.
//
//   client.js latency URL CALLS RATE
//       per-call time of `await buf.nextId()` (process.hrtime.bigint() before
//       and after), CALLS calls paced at RATE a second: every millisecond or
//       so (a 1 ms timer, so that the refill's I/O runs between) it makes the
//       calls that are due, one at a time. A warm-up of RATE calls first (not
//       timed: the batch size grows to its largest). Percentiles in ns.
//   client.js pull URL START_MS END_MS STOP
//       ids as fast as nextId() returns them, yielding to the event loop
//       (setImmediate) every 1,000 ids so that refills run beside it; counts
//       the ids taken from START_MS to END_MS (Date.now()) or until the file
//       STOP exists.
'use strict';

const fs = require('fs');
const path = require('path');
const { IdBuffer } = require(path.join(__dirname, '..', '..', 'sdk', 'node', 'buffer.js'));

const YIELD_EVERY = 1000;
const out = (k, v) => process.stdout.write(`${k}\t${v}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const immediate = () => new Promise((r) => setImmediate(r));

// Nearest-rank percentile of a sorted Float64Array.
function pct(sorted, p) {
    const k = Math.ceil((p / 100) * sorted.length);
    return sorted[Math.min(Math.max(k, 1), sorted.length) - 1];
}

// The median cost of the timing itself: two hrtime.bigint() calls back to back.
function clockNs() {
    const n = 100000;
    const d = new Float64Array(n);
    for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        const t1 = process.hrtime.bigint();
        d[i] = Number(t1 - t0);
    }
    d.sort();
    return pct(d, 50);
}

// Calls at `rate` a second, `calls` of them; times each if `times` is given.
async function paced(buf, calls, rate, times) {
    const start = process.hrtime.bigint();
    let done = 0;
    let empty = 0;
    while (done < calls) {
        const due = Math.min(calls, Math.floor((Number(process.hrtime.bigint() - start) / 1e9) * rate));
        for (; done < due; done++) {
            if (buf.available === 0) empty++;
            const t0 = process.hrtime.bigint();
            await buf.nextId();
            const t1 = process.hrtime.bigint();
            if (times) times[done] = Number(t1 - t0);
        }
        await sleep(1);
    }
    return { seconds: Number(process.hrtime.bigint() - start) / 1e9, empty };
}

async function latency(url, calls, rate) {
    const buf = new IdBuffer({ urls: url });
    await buf.nextId();
    await paced(buf, rate, rate, null);
    const r0 = buf.stats().refills;
    const times = new Float64Array(calls);
    const { seconds, empty } = await paced(buf, calls, rate, times);
    const st = buf.stats();
    await buf.close();
    times.sort();
    out('version', `snowflake-ids/buffer (sdk/node/buffer.js), Node.js ${process.version}`);
    out('calls', calls);
    out('rate', rate);
    out('seconds', seconds.toFixed(3));
    for (const p of [50, 90, 99, 99.9, 99.99]) out(`p${p}_ns`, pct(times, p));
    out('max_ns', times[times.length - 1]);
    out('over_2us', times.reduce((n, t) => n + (t > 2000), 0));
    out('over_1ms', times.reduce((n, t) => n + (t > 1e6), 0));
    out('found_empty', empty);
    out('refills', st.refills - r0);
    out('batch_size', st.batchSize);
    out('clock_ns', clockNs());
}

async function pull(url, startMs, endMs, stop) {
    const buf = new IdBuffer({ urls: url });
    await buf.nextId();
    while (Date.now() < startMs) await immediate();
    const t0 = process.hrtime.bigint();
    const r0 = buf.stats().refills;
    let ids = 0;
    for (;;) {
        for (let i = 0; i < YIELD_EVERY; i++) await buf.nextId();
        ids += YIELD_EVERY;
        await immediate();
        if (Date.now() >= endMs || (ids % 100000 === 0 && fs.existsSync(stop))) break;
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const st = buf.stats();
    await buf.close();
    out('ids', ids);
    out('seconds', seconds.toFixed(3));
    out('ids_per_s', Math.round(ids / seconds));
    out('refills', st.refills - r0);
    out('batch_size', st.batchSize);
    out('last_error', st.lastError || '');
}

const [mode, ...args] = process.argv.slice(2);
(mode === 'latency' ? latency(args[0], Number(args[1]), Number(args[2]))
    : mode === 'pull' ? pull(args[0], Number(args[1]), Number(args[2]), args[3])
        : Promise.reject(new Error('usage: client.js latency URL CALLS RATE | pull URL START_MS END_MS STOP')))
    .catch((e) => {
        process.stderr.write(`${e.stack || e}\n`);
        process.exit(1);
    });
