// The ID buffer (buffer.js) against small fake nodes in this process: ids
// only from 200 answers, refills in the background, the batch size adapting,
// bad answers, 401, 429 and 503 with Retry-After, a slowloris node, a refused
// port, balancing, close during a wait. node --test sdk/node/test/
// (test/sdk_node.sh).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const http = require('http');
const net = require('net');

const { IdBuffer, SnowflakeError, nextBatchSize, parseBatch } = require('../buffer');

let nextId = 1n << 50n;

// A fake node: handler(req, res, url) answers each request (the default
// answers batches with fresh increasing ids). Records every request and the
// ids it handed out in 200 answers.
async function fakeNode(handler) {
    const node = { requests: [], issued: new Set(), sockets: new Set() };
    node.batch = (res, count) => {
        const ids = [];
        for (let i = 0; i < count; i++) ids.push(String(nextId++));
        for (const i of ids) node.issued.add(BigInt(i));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ ids }));
    };
    const dflt = (req, res, url) => {
        if (url.pathname === '/readyz') return res.writeHead(200).end('{"status":"ok"}');
        return node.batch(res, Number(url.searchParams.get('count')));
    };
    node.server = http.createServer((req, res) => {
        const url = new URL(req.url, 'http://x');
        node.requests.push({ path: url.pathname, count: Number(url.searchParams.get('count')), at: Date.now(),
            auth: req.headers.authorization });
        (handler || dflt)(req, res, url, dflt);
    });
    node.server.on('connection', (s) => { node.sockets.add(s); s.on('close', () => node.sockets.delete(s)); });
    await new Promise((r) => node.server.listen(0, '127.0.0.1', r));
    node.url = `http://127.0.0.1:${node.server.address().port}`;
    node.batches = () => node.requests.filter((r) => r.path === '/v1/ids/batch');
    node.close = () => new Promise((r) => {
        for (const s of node.sockets) s.destroy();
        node.server.close(() => r());
    });
    return node;
}

// A port nothing listens on.
async function deadPort() {
    const s = net.createServer();
    await new Promise((r) => s.listen(0, '127.0.0.1', r));
    const port = s.address().port;
    await new Promise((r) => s.close(r));
    return `http://127.0.0.1:${port}`;
}

// Waits (bounded) until cond() holds.
async function until(what, cond, ms = 10000) {
    const end = Date.now() + ms;
    while (!cond()) {
        if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
    }
}

async function rejectsWith(promise, code, reason) {
    let caught;
    try {
        const v = await promise;
        assert.fail(`expected a SnowflakeError ${code}, got ${v}`);
    } catch (e) {
        caught = e;
    }
    assert.ok(caught instanceof SnowflakeError, `${caught} is a SnowflakeError`);
    assert.equal(caught.code, code, caught.message);
    assert.equal(caught.sqlstate, code);
    if (reason) assert.equal(caught.reason, reason, caught.message);
    assert.ok(caught.hint, 'the error has a hint');
    return caught;
}

test('ids come from 200 answers, increasing bigints, with the token sent', async () => {
    const node = await fakeNode();
    const buf = new IdBuffer({ urls: node.url, token: 'secret', minBatch: 50, maxBatch: 50 });
    try {
        let prev = -1n;
        for (let i = 0; i < 500; i++) {
            const id = await buf.nextId();
            assert.equal(typeof id, 'bigint');
            assert.ok(id > prev);
            assert.ok(node.issued.has(id), `${id} came from a 200`);
            prev = id;
        }
        assert.ok(node.batches().every((r) => r.auth === 'Bearer secret'));
        const t = buf.tryNextId();
        assert.ok(t === undefined || node.issued.has(t));
    } finally {
        await buf.close();
        await node.close();
    }
});

test('the refill runs in the background before the batch is used up (double buffering)', async () => {
    const node = await fakeNode();
    const buf = new IdBuffer({ urls: node.url, minBatch: 100, maxBatch: 100, refillAt: 40 });
    try {
        await buf.nextId();
        // 61 taken: 39 left, below refillAt: a second batch comes in while
        // ids of the first are left.
        for (let i = 0; i < 60; i++) assert.notEqual(buf.tryNextId(), undefined);
        await until('the spare batch', () => buf.available > 39);
        assert.equal(buf.available, 139);
        assert.equal(node.batches().length, 2);
    } finally {
        await buf.close();
        await node.close();
    }
});

test('the batch size adapts within [minBatch, maxBatch]', async () => {
    assert.equal(nextBatchSize(100, 10, 100, 1000), 200);
    assert.equal(nextBatchSize(800, 10, 100, 1000), 1000);
    assert.equal(nextBatchSize(400, 30000, 100, 1000), 400);
    assert.equal(nextBatchSize(400, 5 * 60000, 100, 1000), 200);
    assert.equal(nextBatchSize(150, 5 * 60000, 100, 1000), 100);
    const node = await fakeNode();
    const buf = new IdBuffer({ urls: node.url, minBatch: 10, maxBatch: 1280 });
    try {
        // Used up in well under a second each: 10, 20, 40, ... 1280.
        for (let i = 0; i < 4000; i++) await buf.nextId();
        const counts = node.batches().map((r) => r.count);
        assert.equal(counts[0], 10);
        assert.ok(counts.includes(1280), `${counts}`);
        assert.ok(counts.every((c) => c >= 10 && c <= 1280), `${counts}`);
        for (let i = 1; i < counts.length; i++) assert.ok(counts[i] >= counts[i - 1], `${counts}`);
    } finally {
        await buf.close();
        await node.close();
    }
});

const BAD = {
    'not JSON': '{"ids":["1",',
    'no ids array': '{"id":"1"}',
    'ids as numbers': '{"ids":[1125899906842624,1125899906842625]}',
    'a non-decimal id': '{"ids":["1125899906842624","12a"]}',
    'a signed id': '{"ids":["-5"]}',
    'an id beyond int64': '{"ids":["9223372036854775807","9223372036854775808"]}',
    'ids not increasing': '{"ids":["1125899906842625","1125899906842624"]}',
    'an id twice': '{"ids":["1125899906842624","1125899906842624"]}',
    'more ids than asked': `{"ids":[${Array.from({ length: 3 }, (_, i) => `"${i + 1}"`).join(',')}]}`,
    'no ids': '{"ids":[]}',
};

test('parseBatch refuses every bad answer', () => {
    for (const [what, body] of Object.entries(BAD)) {
        assert.throws(() => parseBatch(body, 2), (e) => e instanceof SnowflakeError && e.code === '08P01', what);
    }
    assert.deepEqual(parseBatch('{"ids":["0","9223372036854775807"]}', 2), [0n, (1n << 63n) - 1n]);
});

for (const [what, body] of Object.entries(BAD)) {
    test(`a node answering ${what} is left out; no id of it is handed out`, async () => {
        const bad = await fakeNode((req, res, url, dflt) => {
            if (url.pathname === '/readyz') return dflt(req, res, url);
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(body);
        });
        const alone = new IdBuffer({ urls: bad.url, minBatch: 2, maxBatch: 2, probeIntervalMs: 50 });
        const good = await fakeNode();
        const two = new IdBuffer({ urls: [bad.url, good.url], minBatch: 2, maxBatch: 2, probeIntervalMs: 50 });
        try {
            const e = await rejectsWith(alone.nextId({ timeout: 300 }), '08006', 'UNAVAILABLE');
            assert.match(e.detail, /bad batch/);
            assert.equal(alone.tryNextId(), undefined);
            // Beside a good node: every id is the good node's.
            for (let i = 0; i < 40; i++) assert.ok(good.issued.has(await two.nextId()));
        } finally {
            await alone.close();
            await two.close();
            await bad.close();
            await good.close();
        }
    });
}

test('a 401 is an error with SQLSTATE 28000 and a hint about the token, never an id', async () => {
    const node = await fakeNode((req, res) => {
        res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' });
        res.end('{"code":"28000","message":"a valid bearer token is required"}');
    });
    const buf = new IdBuffer({ urls: node.url, token: 'wrong' });
    try {
        const e = await rejectsWith(buf.nextId({ timeout: 5000 }), '28000', 'AUTH');
        assert.match(e.hint, /token/);
        assert.match(e.message, /401/);
        // Within a second of it: the same error at once, without a request.
        await rejectsWith(buf.nextId({ timeout: 5000 }), '28000', 'AUTH');
        assert.equal(buf.tryNextId(), undefined);
        assert.equal(node.requests.length, 1);
    } finally {
        await buf.close();
        await node.close();
    }
});

test('a 429 is honoured: no request before its Retry-After has passed', async () => {
    let refusedAt = 0;
    const node = await fakeNode((req, res, url, dflt) => {
        if (refusedAt === 0) {
            refusedAt = Date.now();
            res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' });
            return res.end('{"code":"53400","message":"too many ids requested over HTTP"}');
        }
        return dflt(req, res, url);
    });
    const buf = new IdBuffer({ urls: node.url, minBatch: 5 });
    try {
        const id = await buf.nextId({ timeout: 5000 });
        assert.ok(node.issued.has(id));
        const [first, second] = node.requests;
        assert.equal(node.requests.length, 2);
        assert.ok(second.at - first.at >= 1000 - 5, `asked again after ${second.at - first.at} ms`);
    } finally {
        await buf.close();
        await node.close();
    }
});

test("a 429's Retry-After-Ms is the wait: the node's exact one, not Retry-After's whole seconds", async () => {
    let refusedAt = 0;
    const node = await fakeNode((req, res, url, dflt) => {
        if (refusedAt === 0) {
            refusedAt = Date.now();
            // As the nodes answer a batch over their ceiling: the seconds
            // rounded up, and the milliseconds.
            res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '30', 'Retry-After-Ms': '150' });
            return res.end('{"code":"53400","message":"too many ids requested over HTTP"}');
        }
        return dflt(req, res, url);
    });
    const buf = new IdBuffer({ urls: node.url, minBatch: 5 });
    try {
        // Retry-After alone would keep the only node out for 30 s, past
        // this wait.
        const id = await buf.nextId({ timeout: 10000 });
        assert.ok(node.issued.has(id));
        const [first, second] = node.requests;
        assert.equal(node.requests.length, 2);
        assert.ok(second.at - first.at >= 150 - 5, `asked again after ${second.at - first.at} ms`);
    } finally {
        await buf.close();
        await node.close();
    }
});

test('a 503 leaves the node out until its /readyz answers 200; another node is asked at once', async () => {
    let readyAfter = 3; // /readyz answers 503 twice, then 200
    let refused = 0;
    const log = [];
    const node = await fakeNode((req, res, url, dflt) => {
        if (url.pathname === '/readyz') {
            const ok = --readyAfter <= 0;
            log.push(ok ? 'ready' : 'unready');
            res.writeHead(ok ? 200 : 503, { 'Retry-After': '1' });
            return res.end();
        }
        if (refused++ === 0) {
            log.push('503');
            res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
            return res.end('{"code":"SF003","message":"no worker id lease is held"}');
        }
        log.push('batch');
        return dflt(req, res, url);
    });
    const buf = new IdBuffer({ urls: node.url, minBatch: 5, probeIntervalMs: 20 });
    const other = await fakeNode();
    let two;
    try {
        assert.ok(node.issued.has(await buf.nextId({ timeout: 8000 })));
        assert.deepEqual(log.slice(0, 4), ['503', 'unready', 'unready', 'ready']);
        assert.equal(log[4], 'batch');
        // Two nodes, the first refusing: the id comes from the other at once.
        refused = 0;
        readyAfter = 1000;
        two = new IdBuffer({ urls: [node.url, other.url], minBatch: 5, probeIntervalMs: 20 });
        for (let i = 0; i < 20; i++) {
            const id = await two.nextId({ timeout: 8000 });
            assert.ok(other.issued.has(id) || node.issued.has(id));
        }
        assert.ok(other.issued.size > 0);
    } finally {
        await buf.close();
        if (two) await two.close();
        await node.close();
        await other.close();
    }
});

test('a slowloris node (an answer that never completes) is cut at timeoutMs and left out', async () => {
    const timers = new Set();
    const slow = await fakeNode((req, res, url, dflt) => {
        if (url.pathname === '/readyz') return dflt(req, res, url);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100000' });
        res.write('{"ids":["1');
        const t = setInterval(() => res.write('1'), 50);
        timers.add(t);
        res.on('close', () => { clearInterval(t); timers.delete(t); });
    });
    const good = await fakeNode();
    const alone = new IdBuffer({ urls: slow.url, timeoutMs: 300, minBatch: 2 });
    const two = new IdBuffer({ urls: [slow.url, good.url], timeoutMs: 300, minBatch: 2, probeIntervalMs: 60000 });
    try {
        await rejectsWith(alone.nextId({ timeout: 1500 }), '08006', 'UNAVAILABLE');
        for (let i = 0; i < 30; i++) assert.ok(good.issued.has(await two.nextId({ timeout: 5000 })));
    } finally {
        await alone.close();
        await two.close();
        for (const t of timers) clearInterval(t);
        await slow.close();
        await good.close();
    }
});

test('a refused port is left out; the ids come from the other node', async () => {
    const good = await fakeNode();
    const buf = new IdBuffer({ urls: [await deadPort(), good.url], minBatch: 10, maxBatch: 10 });
    try {
        // Until the buffer has tried the dead port (each refill draws which
        // node it asks): every id is the good node's meanwhile.
        let n = 0;
        while (buf.stats().nodes[0].failures === 0) {
            assert.ok(++n < 100000, 'the dead port was never tried');
            assert.ok(good.issued.has(await buf.nextId({ timeout: 5000 })));
        }
        for (let i = 0; i < 100; i++) assert.ok(good.issued.has(await buf.nextId({ timeout: 5000 })));
        const dead = buf.stats().nodes[0];
        assert.equal(dead.up, false);
        assert.ok(dead.failures >= 1);
    } finally {
        await buf.close();
        await good.close();
    }
});

test('several nodes share the refills (power of two choices); a slow node is not starved', async () => {
    const slow = await fakeNode((req, res, url, dflt) => setTimeout(() => dflt(req, res, url), 20));
    const nodes = [slow, await fakeNode(), await fakeNode()];
    const buf = new IdBuffer({ urls: nodes.map((n) => n.url), minBatch: 10, maxBatch: 10 });
    try {
        for (let i = 0; i < 2000; i++) await buf.nextId();
        for (const n of nodes) assert.ok(n.batches().length > 0, `${n.url} was asked`);
        assert.ok(slow.batches().length >= 2, `the slow node was asked ${slow.batches().length} time(s)`);
    } finally {
        await buf.close();
        for (const n of nodes) await n.close();
    }
});

test('close() ends a wait at once (55000) and later calls fail', { timeout: 20000 }, async () => {
    const hung = await fakeNode(() => {}); // never answers
    const buf = new IdBuffer({ urls: hung.url, timeoutMs: 60000 });
    try {
        const waiting = buf.nextId({ timeout: 60000 });
        await until('the request', () => hung.requests.length > 0);
        await buf.close();
        await rejectsWith(waiting, '55000', 'CLOSED');
        await rejectsWith(buf.nextId(), '55000', 'CLOSED');
        assert.throws(() => buf.tryNextId(), (e) => e.code === '55000');
        await buf.close();
    } finally {
        await hung.close();
    }
});

test('every wait is bounded: a node that never answers ends in 57014 within the timeout', async () => {
    const hung = await fakeNode((req, res, url, dflt) => (url.pathname === '/readyz' ? dflt(req, res, url) : null));
    const buf = new IdBuffer({ urls: hung.url, timeoutMs: 60000 });
    try {
        const e = await rejectsWith(buf.nextId({ timeout: 200 }), '57014', 'NOT_READY');
        assert.match(e.message, /200 ms/);
        assert.match(e.detail, /1 request\(s\) in flight/);
    } finally {
        await buf.close();
        await hung.close();
    }
});

test('bad options are refused (22023)', () => {
    for (const o of [{}, { urls: [] }, { urls: 'ftp://x' }, { urls: 'http://x', maxBatch: 10001 },
        { urls: 'http://x', minBatch: 0 }, { urls: 'http://x', minBatch: 50, maxBatch: 10 },
        { urls: 'http://x', bogus: 1 }]) {
        assert.throws(() => new IdBuffer(o), (e) => e instanceof SnowflakeError && e.code === '22023', JSON.stringify(o));
    }
});
