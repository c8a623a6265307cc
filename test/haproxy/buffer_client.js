#!/usr/bin/env node
// test/haproxy.sh's ID buffer client for Node.js: sdk/node/buffer.js's
// IdBuffer (no addon) refilling from URLS (the load balancer, or the nodes
// themselves, comma-separated).
//
//   buffer_client.js URLS TOKEN IDS ERRORS STOP MAX_S TIMEOUT_MS
//
// Takes 20 ids every 10 ms (about 2,000 a second: a rate-bounded caller, far
// below the node's snowflake.http_max_ids_per_second) until the file STOP
// exists or MAX_S seconds passed. Appends every id to IDS (one per line),
// keeps IDS.counts ("worker count" lines, as lb.py client does) and IDS.nodes
// (the buffer's view of each URL: "url up failures batches" lines), and
// writes a line to ERRORS for every nextId() that failed, so that a caller
// error is never lost.
'use strict';

const fs = require('fs');
const path = require('path');
const { IdBuffer } = require(path.join(__dirname, '..', '..', 'sdk', 'node', 'buffer.js'));

const [urls, token, idsPath, errorsPath, stopPath, maxS, timeoutMs] = process.argv.slice(2);
const buf = new IdBuffer({ urls: urls.split(','), token, minBatch: 100, maxBatch: 1000,
    timeoutMs: Number(timeoutMs), waitMs: 10000, probeIntervalMs: 250 });
const deadline = Date.now() + Number(maxS) * 1000;
const counts = new Map();
let pending = [];

function flush() {
    if (pending.length) fs.appendFileSync(idsPath, pending.join('\n') + '\n');
    pending = [];
    fs.writeFileSync(idsPath + '.counts.tmp', [...counts].sort((a, b) => a[0] - b[0]).map(([w, c]) => `${w} ${c}\n`).join(''));
    fs.renameSync(idsPath + '.counts.tmp', idsPath + '.counts');
    fs.writeFileSync(idsPath + '.nodes.tmp', buf.stats().nodes.map((n) => `${n.url} ${n.up ? 'up' : 'out'} ${n.failures} ${n.batches}\n`).join(''));
    fs.renameSync(idsPath + '.nodes.tmp', idsPath + '.nodes');
}

(async () => {
    fs.writeFileSync(errorsPath, '', { flag: 'a' });
    let lastFlush = Date.now();
    while (!fs.existsSync(stopPath) && Date.now() < deadline) {
        for (let i = 0; i < 20; i++) {
            try {
                const id = await buf.nextId();
                pending.push(String(id));
                const w = Number((id >> 12n) & 1023n);
                counts.set(w, (counts.get(w) || 0) + 1);
            } catch (e) {
                fs.appendFileSync(errorsPath, `${Date.now() / 1000} ${e.code} ${e.reason}: ${e.message} (${e.detail})\n`);
            }
        }
        if (Date.now() - lastFlush >= 100) {
            flush();
            lastFlush = Date.now();
        }
        await new Promise((r) => setTimeout(r, 10));
    }
    flush();
    await buf.close();
})().catch((e) => {
    fs.appendFileSync(errorsPath, `client failed: ${e.stack}\n`);
    process.exit(1);
});
