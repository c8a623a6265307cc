// snowflake-ids in another layout than twitter's (the layout option, the
// nodes' snowflake.layout): a js-safe generator's ids stay bigints, lie below
// 2^53 (Number(id) is exact) and carry the worker id in bits 6-11; a bad
// layout, a worker id beyond it and a mark file of another layout are
// refused (22023, INVALID); decode under a layout; and, against the etcd of
// test/sdk_node.sh (skipped without it), the layout's default range and a
// process of another layout in a fleet, which does not lease (55000, FLEET).
'use strict';

const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { Generator, SnowflakeError } = require('..');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snowflake-sdk-node-layout-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const markFile = () => path.join(dir, `mark-${++n}`);
const TWO_TO_53 = 2n ** 53n;

// open(options) rejects with a SnowflakeError 22023 (INVALID) whose message,
// detail or hint has every text of `names`.
async function refused(options, names) {
    await assert.rejects(Generator.open(options), (e) => {
        assert.ok(e instanceof SnowflakeError, `${e}`);
        assert.equal(e.code, '22023', e.message);
        assert.equal(e.reason, 'INVALID');
        const all = [e.message, e.detail, e.hint].join(' / ');
        for (const name of names) assert.ok(all.includes(name), `'${name}' in: ${all}`);
        return true;
    });
}

test('a js-safe generator: bigint ids below 2^53, the worker id in bits 6-11', async () => {
    const gen = await Generator.open({ workerId: 37, markFile: markFile(), layout: 'js-safe' });
    try {
        let prev = -1n;
        for (let i = 0; i < 3000; i++) {
            const id = gen.nextId();
            assert.equal(typeof id, 'bigint');
            assert.ok(id > prev);
            assert.ok(id < TWO_TO_53, `${id} < 2^53`);
            assert.equal((id >> 6n) & 63n, 37n);
            assert.equal(BigInt(Number(id)), id, 'a js-safe id converts to Number exactly');
            prev = id;
        }
        const ids = gen.nextIds(500);
        for (const id of ids) {
            assert.ok(id > prev && id < TWO_TO_53);
            assert.equal((id >> 6n) & 63n, 37n);
            prev = id;
        }
        assert.ok(Number.isSafeInteger(Number(gen.nextIdString())));
        const d = Generator.decode(prev, { layout: 'js-safe' });
        assert.equal(d.workerId, 37);
        assert.equal(d.sequence, Number(prev & 63n));
        assert.ok(Math.abs(d.timestamp.getTime() - Date.now()) < 60000);
        const s = gen.stats();
        assert.equal(s.layout, 'js-safe');
        assert.equal(s.workerId, 37);
    } finally {
        await gen.close();
    }
});

test('a twitter generator says so in stats()', async () => {
    const gen = await Generator.open({ workerId: 38, markFile: markFile() });
    try {
        assert.equal(gen.stats().layout, 'twitter');
    } finally {
        await gen.close();
    }
});

test('a bad layout and a worker id beyond the layout are refused with 22023', async () => {
    await refused({ workerId: 5, markFile: markFile(), layout: 'js-unsafe' }, ['layout', 'js-unsafe']);
    await refused({ workerId: 5, markFile: markFile(), layout: 'sonyflake' }, ['layout', 'sonyflake']);
    await refused({ workerId: 5, markFile: markFile(), layout: 41 }, ['layout']);
    await refused({ workerId: 64, markFile: markFile(), layout: 'js-safe' }, ['worker_id 64', 'js-safe', '63']);
    await refused({ workerId: 5, markFile: markFile(), layout: 'js-safe', workerIds: '0-100' }, ['100', 'js-safe']);
    // More worker bits than twitter's: an id above 1023 fits.
    const gen = await Generator.open({ workerId: 3000, markFile: markFile(), layout: 'time 41, worker 12, sequence 10' });
    try {
        assert.equal((gen.nextId() >> 10n) & 4095n, 3000n);
    } finally {
        await gen.close();
    }
});

test('a mark file of another layout is refused, naming both', async () => {
    const mf = markFile();
    const gen = await Generator.open({ workerId: 40, markFile: mf });
    await gen.close();
    await refused({ workerId: 40, markFile: mf, layout: 'js-safe' }, ['js-safe', 'twitter']);
    // Its own layout still opens it.
    const again = await Generator.open({ workerId: 40, markFile: mf });
    await again.close();
});

test('decode under a layout', async () => {
    const id = (1000n << 12n) | (5n << 6n) | 3n;
    const d = Generator.decode(id, { layout: 'js-safe', epoch: 0 });
    assert.deepEqual(d, { timestamp: new Date(1000), msSinceEpoch: 1000, workerId: 5, sequence: 3 });
    assert.deepEqual(Generator.decode(Number(id), { layout: 'js-safe', epoch: 0 }), d);
    assert.deepEqual(Generator.decode(1n << 22n, { layout: 'twitter' }), Generator.decode(1n << 22n));
    for (const [bad, layout] of [[TWO_TO_53, 'js-safe'], [1n, 'sonyflake'], [1n, 7]]) {
        assert.throws(() => Generator.decode(bad, { layout }), (e) => {
            assert.ok(e instanceof SnowflakeError);
            assert.equal(e.code, '22023');
            return true;
        });
    }
});

const etcd = process.env.SNOWFLAKE_TEST_ETCD;
const skip = etcd ? false : 'SNOWFLAKE_TEST_ETCD is not set (test/sdk_node.sh starts an etcd)';

test('a leased js-safe generator takes an id of the layout\'s upper half (32..63)', { skip }, async () => {
    const gen = await Generator.open({ etcdEndpoints: etcd, leasePrefix: '/sdk-node-js-safe', layout: 'js-safe',
        timeout: 20000 });
    try {
        const s = gen.stats();
        assert.ok(s.workerId >= 32 && s.workerId <= 63, `worker id ${s.workerId} in 32..63`);
        const id = gen.nextId();
        assert.ok(id < TWO_TO_53);
        assert.equal(Number((id >> 6n) & 63n), s.workerId);
    } finally {
        await gen.close();
    }
});

// A second process, of another layout, in the fleet of the first: its open
// rejects with FLEET (55000), the detail naming both layouts.
test('a process of another layout in a fleet does not lease, naming both layouts', { skip }, async () => {
    const prefix = '/sdk-node-layout-fleet';
    const first = await Generator.open({ etcdEndpoints: etcd, leasePrefix: prefix, timeout: 20000 });
    try {
        const script = `
            const { Generator } = require(${JSON.stringify(path.join(__dirname, '..'))});
            Generator.open({ etcdEndpoints: process.argv[1], leasePrefix: process.argv[2], layout: 'js-safe',
                             timeout: 20000 })
                .then(async (g) => { console.log(JSON.stringify({ held: g.stats().workerId })); await g.close(); },
                      (e) => console.log(JSON.stringify({ code: e.code, reason: e.reason, message: e.message,
                                                          detail: e.detail, hint: e.hint })));`;
        const out = await new Promise((resolve, reject) => {
            execFile(process.execPath, ['-e', script, etcd, prefix], { timeout: 60000 }, (err, stdout, stderr) => {
                if (err) reject(new Error(`${err.message}\n${stderr}`));
                else resolve(stdout);
            });
        });
        const r = JSON.parse(out.trim().split('\n').pop());
        assert.equal(r.held, undefined, `the js-safe process leased worker id ${r.held}`);
        assert.equal(r.code, '55000', r.message);
        assert.equal(r.reason, 'FLEET');
        assert.match(r.detail, /js-safe/);
        assert.match(r.detail, /twitter/);
        assert.match(r.hint, /layout/);
        assert.equal(first.stats().state, 'held');  // the fleet's member goes on
    } finally {
        await first.close();
    }
});
