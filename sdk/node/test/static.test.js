// snowflake-ids with a static worker id and a mark file in a temporary
// directory: ids, their forms, decode, errors and their classes, the mark
// file's lock, close. node --test sdk/node/test/ (test/sdk_node.sh).
'use strict';

const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { Generator, SnowflakeError } = require('..');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snowflake-sdk-node-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const markFile = () => path.join(dir, `mark-${++n}`);

// Rejects (or throws) a SnowflakeError with this SQLSTATE and reason.
async function rejectsWith(fn, code, reason) {
    let caught;
    try {
        await fn();
    } catch (e) {
        caught = e;
    }
    assert.ok(caught, `expected a SnowflakeError ${code}`);
    assert.ok(caught instanceof SnowflakeError, `${caught} is a SnowflakeError`);
    assert.ok(caught instanceof Error);
    assert.equal(caught.code, code, caught.message);
    assert.equal(caught.sqlstate, code);
    if (reason) assert.equal(caught.reason, reason);
    assert.equal(typeof caught.message, 'string');
    assert.ok(caught.message.length > 0);
    return caught;
}

test('ids increase, are bigints, and carry the worker id', async () => {
    const gen = await Generator.open({ workerId: 5, markFile: markFile() });
    try {
        let prev = gen.nextId();
        assert.equal(typeof prev, 'bigint');
        for (let i = 0; i < 10000; i++) {
            const id = gen.nextId();
            assert.equal(typeof id, 'bigint');
            assert.ok(id > prev, `${id} > ${prev}`);
            prev = id;
        }
        assert.equal(Generator.decode(prev).workerId, 5);
        const s = gen.stats();
        assert.equal(s.state, 'static');
        assert.equal(s.workerId, 5);
        assert.equal(s.coordinator, 'static');
        assert.ok(s.idsIssued >= 10001);
        assert.equal(s.pid, process.pid);
    } finally {
        await gen.close();
    }
});

test('nextIdString is the decimal form, never a number', async () => {
    const gen = await Generator.open({ workerId: 6, markFile: markFile() });
    try {
        const a = gen.nextId();
        const s = gen.nextIdString();
        const b = gen.nextId();
        assert.equal(typeof s, 'string');
        assert.match(s, /^[1-9][0-9]*$/);
        assert.ok(BigInt(s) > a && BigInt(s) < b);
        assert.ok(BigInt(s) > BigInt(Number.MAX_SAFE_INTEGER), 'ids are beyond what a number holds exactly');
    } finally {
        await gen.close();
    }
});

test('nextIds(n) is a BigInt64Array of n ascending ids', async () => {
    const gen = await Generator.open({ workerId: 7, markFile: markFile() });
    try {
        const before = gen.nextId();
        const ids = gen.nextIds(10000);
        assert.ok(ids instanceof BigInt64Array);
        assert.equal(ids.length, 10000);
        assert.ok(ids[0] > before);
        for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
        assert.ok(gen.nextId() > ids[ids.length - 1]);
        for (const bad of [0, -1, 1000001, 1.5, 'x']) {
            await rejectsWith(() => gen.nextIds(bad), '22023', 'INVALID');
        }
    } finally {
        await gen.close();
    }
});

test('decode round trip: the id\'s instant, worker id and sequence', async () => {
    const gen = await Generator.open({ workerId: 9, markFile: markFile() });
    try {
        const t0 = Date.now();
        const id = gen.nextId();
        const t1 = Date.now();
        const d = Generator.decode(id);
        assert.ok(d.timestamp instanceof Date);
        assert.ok(d.timestamp.getTime() >= t0 - 5 && d.timestamp.getTime() <= t1 + 5,
            `${d.timestamp.toISOString()} within [${t0}, ${t1}]`);
        assert.equal(d.workerId, 9);
        assert.equal(d.msSinceEpoch, d.timestamp.getTime() - Date.parse('2025-01-01T00:00:00Z'));
        const rebuilt = (BigInt(d.msSinceEpoch) << 22n) | (BigInt(d.workerId) << 12n) | BigInt(d.sequence);
        assert.equal(rebuilt, id);
        assert.deepEqual(Generator.decode(id.toString()), d);
        assert.deepEqual(Generator.decode(id, { epoch: '2025-01-01 00:00:00+00' }), d);
        assert.deepEqual(Generator.decode(id, { epoch: new Date('2025-01-01T00:00:00Z') }), d);
        // Under another epoch the instant moves by the epochs' difference.
        const other = Generator.decode(id, { epoch: '2020-01-01 00:00:00+00' });
        assert.equal(other.msSinceEpoch, d.msSinceEpoch);
        assert.equal(d.timestamp - other.timestamp, Date.parse('2025-01-01T00:00:00Z') - Date.parse('2020-01-01T00:00:00Z'));
    } finally {
        await gen.close();
    }
    // The layout, by a fixed id: 1 ms after the epoch, worker 1023, sequence 4095.
    const fixed = Generator.decode((1n << 22n) | (1023n << 12n) | 4095n);
    assert.deepEqual(fixed, { timestamp: new Date('2025-01-01T00:00:00.001Z'), msSinceEpoch: 1, workerId: 1023, sequence: 4095 });
    await rejectsWith(() => Generator.decode(-1n), '22023');
    await rejectsWith(() => Generator.decode(1.5), '22023');
    await rejectsWith(() => Generator.decode(1n, { epoch: 'not an epoch' }), '22023');
});

test("clockBackwards: 'failover' needs a leased worker id", async () => {
    await assert.rejects(Generator.open({ workerId: 5, markFile: markFile(), clockBackwards: 'failover' }), (e) => {
        assert.ok(e instanceof SnowflakeError);
        assert.equal(e.code, '22023');
        assert.match(e.message, /clock failover needs leased worker ids/);
        return true;
    });
});

test('bad configurations fail with 22023 and a SnowflakeError', async () => {
    const mf = markFile();
    const cases = [
        {},                                              // neither a coordinator nor a worker id
        { workerId: 5 },                                 // static without a mark file
        { workerId: 1024, markFile: mf },
        { workerId: -1, markFile: mf },
        { workerId: 'five', markFile: mf },
        { workerId: 5, markFile: mf, epoch: 'yesterday' },
        { workerId: 5, markFile: mf, clockBackwards: 'sideways' },
        { workerId: 5, markFile: mf, workerIds: '9-3' },
        { workerId: 5, markFile: mf, leaseTtl: 'long' },
        { workerId: 5, markFile: mf, colour: 'blue' },  // a typo is not ignored
    ];
    for (const options of cases) {
        await assert.rejects(Generator.open(options), (e) => {
            assert.ok(e instanceof SnowflakeError, `${JSON.stringify(options)}: ${e}`);
            assert.equal(e.code, '22023', `${JSON.stringify(options)}: ${e.code} ${e.message}`);
            assert.equal(e.reason, 'INVALID');
            return true;
        });
    }
    await rejectsWith(() => Generator.open(null), '22023');
});

test('a mark file held by a generator is refused to a second one (55006)', async () => {
    const mf = markFile();
    const first = await Generator.open({ workerId: 11, markFile: mf });
    try {
        const e = await rejectsWith(() => Generator.open({ workerId: 11, markFile: mf }), '55006', 'MARK_LOCKED');
        assert.equal(typeof e.hint, 'string');
        first.nextId();  // the first one goes on
    } finally {
        await first.close();
    }
    // Released by close: a new generator takes it, and goes on above the first's ids.
    const second = await Generator.open({ workerId: 11, markFile: mf });
    try {
        assert.equal(typeof second.nextId(), 'bigint');
    } finally {
        await second.close();
    }
});

test('a mark file that cannot be written fails with 58030', async () => {
    await rejectsWith(() => Generator.open({ workerId: 12, markFile: path.join(dir, 'no-such-dir', 'mark') }),
        '58030', 'MARK_FILE');
});

test('ids after close fail with 55000 (CLOSED); close twice is allowed', async () => {
    const mf = markFile();
    const gen = await Generator.open({ workerId: 13, markFile: mf });
    const last = gen.nextId();
    assert.equal(gen.closed, false);
    await gen.close();
    assert.equal(gen.closed, true);
    await gen.close();
    for (const call of [() => gen.nextId(), () => gen.nextIdString(), () => gen.nextIds(2), () => gen.stats()]) {
        const e = await rejectsWith(call, '55000', 'CLOSED');
        assert.ok(e.hint);
    }
    // The mark written at close: the next generator on the file issues above it.
    const again = await Generator.open({ workerId: 13, markFile: mf });
    try {
        assert.ok(again.nextId() > last);
    } finally {
        await again.close();
    }
});

test('several generators open at once, each with its worker id', async () => {
    const opens = [];
    for (let i = 0; i < 4; i++) opens.push(Generator.open({ workerId: 20 + i, markFile: markFile() }));
    const gens = await Promise.all(opens);
    const ids = new Set(gens.map((g) => Generator.decode(g.nextId()).workerId));
    assert.deepEqual([...ids].sort(), [20, 21, 22, 23]);
    await Promise.all(gens.map((g) => g.close()));
    assert.throws(() => new Generator({}), SnowflakeError);
});

test('open waits for a lease without blocking the event loop, and times out with 57014', async () => {
    // Nothing listens on port 1: no lease can be had, so open waits its timeout.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
        await rejectsWith(() => Generator.open({ etcdEndpoints: 'http://127.0.0.1:1', timeout: 300 }), '57014',
            'NOT_READY');
    } finally {
        clearInterval(timer);
    }
    // Had open() blocked, the timer could not have run before the rejection.
    assert.ok(ticks > 0, `the event loop ran ${ticks} timer callbacks while open() waited`);
});
