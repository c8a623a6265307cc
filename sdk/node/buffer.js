// snowflake-ids/buffer: the ID buffer (issue 32), for callers that hold no
// worker id of their own. It takes ids in batches from the nodes' HTTP
// endpoint (GET /v1/ids/batch?count=N, docs/reference.md "HTTP API") and
// hands them out one at a time; plain JavaScript over Node's http module, no
// native code, so it loads where the addon (index.js) was never built.
// docs/sdk.md "The ID buffer".
'use strict';

const http = require('http');
const https = require('https');

const { SnowflakeError, snowflakeError } = require('./errors');

const MAX_BATCH = 10000; // the endpoint's cap
const INT64_MAX = (1n << 63n) - 1n;
const FAST_BATCH_MS = 1000; // a batch used up faster than this: ask for twice as many
const SLOW_BATCH_MS = 120000; // a batch that lasted longer: ask for half as many
const MAX_BODY = 1 << 20; // 10,000 ids of 19 digits are about 230 kB
const MAX_RETRY_AFTER_S = 60;

// The size of the next batch after one that lasted lifeMs.
function nextBatchSize(size, lifeMs, min, max) {
    if (lifeMs < FAST_BATCH_MS) return Math.min(max, size * 2);
    if (lifeMs > SLOW_BATCH_MS) return Math.max(min, Math.floor(size / 2));
    return size;
}

function protocolError(message, url) {
    return snowflakeError('08P01', 'PROTOCOL', `${url} answered 200 with a bad batch: ${message}`, {
        hint: 'The node left out of use until its /readyz answers 200; no id of that answer was handed out. ' +
            'Check that the URL is a snowflake node (snowflake.http_listen) or a load balancer in front of them.',
    });
}

// The ids of a 200 answer's body, for a request of `count`; throws a
// PROTOCOL error for anything but {"ids": [decimal strings]}, 1 to count of
// them, each within int64 and each above the one before.
function parseBatch(text, count, url = 'the node') {
    let doc;
    try {
        doc = JSON.parse(text);
    } catch (e) {
        throw protocolError('the body is not JSON', url);
    }
    if (doc === null || typeof doc !== 'object' || !Array.isArray(doc.ids)) {
        throw protocolError('the body has no "ids" array', url);
    }
    const ids = doc.ids;
    if (ids.length === 0 || ids.length > count) throw protocolError(`${ids.length} ids for ${count} asked`, url);
    const out = new Array(ids.length);
    let prev = -1n;
    for (let i = 0; i < ids.length; i++) {
        const s = ids[i];
        if (typeof s !== 'string' || !/^[0-9]{1,19}$/.test(s)) {
            throw protocolError(`id ${i} is not a decimal string: ${JSON.stringify(s).slice(0, 40)}`, url);
        }
        const v = BigInt(s);
        if (v > INT64_MAX) throw protocolError(`id ${i} (${s}) is beyond int64`, url);
        if (v <= prev) throw protocolError(`id ${i} (${s}) is not above the one before (${prev})`, url);
        prev = v;
        out[i] = v;
    }
    return out;
}

// How long an answer asks to wait, in milliseconds: its Retry-After-Ms (the
// nodes' 429 names the exact wait of their ceiling) if readable, else its
// Retry-After (seconds or an HTTP date); 1 s when neither is readable, at
// most a minute.
function retryAfterMs(headers, now = Date.now()) {
    const ms = headers['retry-after-ms'];
    if (typeof ms === 'string' && /^\s*\d+\s*$/.test(ms)) return Math.min(Number(ms), MAX_RETRY_AFTER_S * 1000);
    const value = headers['retry-after'];
    let s = 1;
    if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) s = Number(value);
    else if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) s = (Date.parse(value) - now) / 1000;
    return Math.round(Math.min(Math.max(s, 0), MAX_RETRY_AFTER_S) * 1000);
}

function configError(message) {
    return snowflakeError('22023', 'INVALID', message);
}

const OPTIONS = new Set(['urls', 'token', 'minBatch', 'maxBatch', 'refillAt', 'timeoutMs', 'waitMs',
    'probeIntervalMs']);

function intOption(options, name, dflt, lo, hi) {
    const v = options[name];
    if (v === undefined || v === null) return dflt;
    if (!Number.isInteger(v) || v < lo || v > hi) throw configError(`${name} must be an integer from ${lo} to ${hi}`);
    return v;
}

// A failure of one node (connect, timeout, 5xx, a bad answer): the node is
// left out until its /readyz answers 200.
function nodeFailure(message, code = '08006') {
    return snowflakeError(code, 'UNAVAILABLE', message);
}

class IdBuffer {
    constructor(options = {}) {
        if (options === null || typeof options !== 'object') throw configError('IdBuffer takes an options object');
        for (const k of Object.keys(options)) {
            if (!OPTIONS.has(k)) throw configError(`unknown option '${k}' (the options are: ${[...OPTIONS].join(', ')})`);
        }
        let urls = options.urls;
        if (typeof urls === 'string') urls = urls.split(',').map((u) => u.trim()).filter((u) => u);
        if (!Array.isArray(urls) || urls.length === 0 || !urls.every((u) => typeof u === 'string')) {
            throw configError('urls must be a URL or a non-empty array of URLs (http://host:port of each node, or of a load balancer)');
        }
        this._nodes = urls.map((u) => {
            let url;
            try {
                url = new URL(u);
            } catch (e) {
                throw configError(`not a URL: '${u}'`);
            }
            if (url.protocol !== 'http:' && url.protocol !== 'https:') throw configError(`not an http(s) URL: '${u}'`);
            const mod = url.protocol === 'https:' ? https : http;
            return {
                name: url.origin + url.pathname.replace(/\/$/, ''),
                url, mod, prefix: url.pathname.replace(/\/$/, ''),
                agent: new mod.Agent({ keepAlive: true, maxSockets: 4 }),
                up: true, inflight: 0, latencyMs: 0, notBefore: 0, nextProbe: 0, probing: false,
                failures: 0, batches: 0, lastError: undefined,
            };
        });
        if (options.token !== undefined && options.token !== null && typeof options.token !== 'string') {
            throw configError('token must be a string');
        }
        this._token = options.token || undefined;
        this._min = intOption(options, 'minBatch', 100, 1, MAX_BATCH);
        this._max = intOption(options, 'maxBatch', MAX_BATCH, this._min, MAX_BATCH);
        this._refillAt = intOption(options, 'refillAt', undefined, 0, MAX_BATCH);
        this._timeoutMs = intOption(options, 'timeoutMs', 5000, 1, 2147483647);
        this._waitMs = intOption(options, 'waitMs', 10000, 0, 2147483647);
        this._probeMs = intOption(options, 'probeIntervalMs', 500, 1, 2147483647);
        this._size = this._min;
        this._cur = [];
        this._pos = 0;
        this._curStart = 0;
        this._spare = null;
        this._refilling = null;
        this._wakeUp = null;
        this._waiters = [];
        this._requests = new Set();
        this._closed = false;
        this._lastError = undefined;
        this._authError = undefined;
        this._authUntil = 0;
        this._refills = 0;
        this._failed = false; // the last request for a batch failed
        this._timer = setInterval(() => this._probeDown(), this._probeMs);
        this._timer.unref();
        this._maybeRefill();
    }

    // How many ids are held now (the current batch's rest and the spare).
    get available() {
        return this._cur.length - this._pos + (this._spare ? this._spare.length : 0);
    }

    get closed() { return this._closed; }

    // An id held now, or undefined (no wait); starts a refill when the
    // current batch fell below refillAt.
    tryNextId() {
        if (this._closed) throw this._closedError();
        if (this.available === 0) {
            this._maybeRefill();
            return undefined;
        }
        return this._take();
    }

    // The next id (a bigint); waits at most `timeout` ms (waitMs, 10000 by
    // default) for a refill.
    nextId({ timeout } = {}) {
        if (this._closed) return Promise.reject(this._closedError());
        const wait = timeout === undefined ? this._waitMs : timeout;
        if (!Number.isInteger(wait) || wait < 0) return Promise.reject(configError('timeout must be an integer of ms, 0 or more'));
        if (this.available > 0) return Promise.resolve(this._take());
        if (this._authError && Date.now() < this._authUntil) return Promise.reject(this._copy(this._authError));
        return new Promise((resolve, reject) => {
            const w = { resolve, reject, timer: null };
            w.timer = setTimeout(() => {
                this._waiters = this._waiters.filter((x) => x !== w);
                reject(this._timeoutError(wait));
            }, wait);
            this._waiters.push(w);
            this._maybeRefill();
        });
    }

    // Stops refills, ends every wait (CLOSED) and request, drops the ids held.
    // Closing twice is allowed.
    async close() {
        if (!this._closed) {
            this._closed = true;
            clearInterval(this._timer);
            for (const w of this._waiters.splice(0)) {
                clearTimeout(w.timer);
                w.reject(this._closedError());
            }
            for (const req of this._requests) req.destroy(this._closedError());
            this._wake();
            this._cur = [];
            this._pos = 0;
            this._spare = null;
        }
        if (this._refilling) await this._refilling;
        for (const n of this._nodes) n.agent.destroy();
    }

    stats() {
        return {
            available: this.available,
            batchSize: this._size,
            refills: this._refills,
            waiting: this._waiters.length,
            closed: this._closed,
            lastError: this._lastError && this._lastError.message,
            nodes: this._nodes.map((n) => ({
                url: n.name, up: n.up, inflight: n.inflight, latencyMs: Math.round(n.latencyMs * 10) / 10,
                batches: n.batches, failures: n.failures, lastError: n.lastError,
            })),
        };
    }

    _closedError() {
        return snowflakeError('55000', 'CLOSED', 'the ID buffer is closed', { hint: 'Make a new IdBuffer.' });
    }

    _copy(e) {
        return snowflakeError(e.code, e.reason, e.message, { hint: e.hint, detail: e.detail });
    }

    _detail() {
        return this._nodes.map((n) => `${n.name}: ${n.up ? 'up' : 'left out'}` +
            (n.inflight ? `, ${n.inflight} request(s) in flight` : '') +
            (n.lastError ? ` (last error: ${n.lastError})` : '')).join('; ');
    }

    _timeoutError(wait) {
        if (this._failed || this._nodes.every((n) => !n.up)) {
            return snowflakeError('08006', 'UNAVAILABLE', `no ids available: no node gave a good batch within ${wait} ms`, {
                detail: this._detail(),
                hint: 'The last request failed (connect error, timeout, 5xx or a bad answer: the detail says which); ' +
                    'a node that fails is left out until its /readyz answers 200. Check the nodes and the urls; ' +
                    'the buffer asks again on its own.',
            });
        }
        return snowflakeError('57014', 'NOT_READY', `no id within ${wait} ms: the refill has not come in`, {
            detail: this._detail(),
            hint: 'A node was slow or asked to wait (429 or 503 with Retry-After); retry, wait longer, or raise ' +
                'minBatch or refillAt so that refills start earlier.',
        });
    }

    _refillLevel() {
        return this._refillAt !== undefined ? this._refillAt : Math.max(1, Math.floor(this._size / 2));
    }

    _take() {
        if (this._pos >= this._cur.length) {
            // The current batch is used up: adapt the size to its life, and
            // take the spare.
            const now = Date.now();
            if (this._cur.length > 0) this._size = nextBatchSize(this._size, now - this._curStart, this._min, this._max);
            this._cur = this._spare;
            this._pos = 0;
            this._curStart = now;
            this._spare = null;
        }
        const id = this._cur[this._pos++];
        this._maybeRefill();
        return id;
    }

    _maybeRefill() {
        if (this._closed || this._refilling || this._spare) return;
        if (this._authError && Date.now() < this._authUntil) return;
        if (this._cur.length - this._pos >= this._refillLevel() && this._waiters.length === 0) return;
        this._refilling = this._refill().catch((e) => {
            this._lastError = e;
        }).finally(() => {
            this._refilling = null;
            // Waiters still there (their ids went to others): go on. After a
            // 401 or 403, nothing more until a caller asks again.
            if (!this._closed && !this._authError &&
                (this._waiters.length > 0 || this.available < this._refillLevel())) {
                this._maybeRefill();
            }
        });
    }

    _deliver(ids) {
        if (this._pos >= this._cur.length) {
            const now = Date.now();
            if (this._cur.length > 0) this._size = nextBatchSize(this._size, now - this._curStart, this._min, this._max);
            this._cur = ids;
            this._pos = 0;
            this._curStart = now;
        } else {
            this._spare = ids;
        }
        this._refills++;
        this._failed = false;
        while (this._waiters.length > 0 && this.available > 0) {
            const w = this._waiters.shift();
            clearTimeout(w.timer);
            w.resolve(this._take());
        }
    }

    // Power of two choices among the nodes in use: fewer requests in flight,
    // then the lower recent latency.
    _pick() {
        const now = Date.now();
        const ok = this._nodes.filter((n) => n.up && n.notBefore <= now);
        if (ok.length <= 1) return ok[0];
        const i = Math.floor(Math.random() * ok.length);
        let j = Math.floor(Math.random() * (ok.length - 1));
        if (j >= i) j++;
        const a = ok[i];
        const b = ok[j];
        if (a.inflight !== b.inflight) return a.inflight < b.inflight ? a : b;
        // The clearly faster one (under half the other's recent latency),
        // else either; the one not taken has its latency decay, so that a
        // node once slow is tried again rather than never.
        let win = Math.random() < 0.5 ? a : b;
        if (a.latencyMs < b.latencyMs / 2) win = a;
        else if (b.latencyMs < a.latencyMs / 2) win = b;
        const lose = win === a ? b : a;
        lose.latencyMs *= 0.9;
        return win;
    }

    _sleep(ms) {
        return new Promise((resolve) => {
            const t = setTimeout(() => { this._wakeUp = null; resolve(); }, Math.max(ms, 1));
            this._wakeUp = () => { clearTimeout(t); this._wakeUp = null; resolve(); };
        });
    }

    _wake() {
        if (this._wakeUp) this._wakeUp();
    }

    _leaveOut(node, e) {
        node.up = false;
        node.failures++;
        node.lastError = e.message;
        node.nextProbe = 0;
        this._lastError = e;
        this._failed = true;
        this._probeDown();
    }

    // One batch into the buffer, from whichever node gives it; a node that
    // fails is left out and the next one asked at once.
    async _refill() {
        while (!this._closed) {
            const node = this._pick();
            if (!node) {
                // Every node is left out or asked us to wait: until a probe
                // brings one back or the earliest Retry-After passes.
                this._probeDown();
                const now = Date.now();
                let ms = this._probeMs;
                for (const n of this._nodes) if (n.up && n.notBefore > now) ms = Math.min(ms, n.notBefore - now);
                await this._sleep(ms);
                continue;
            }
            const count = this._size;
            let ids;
            try {
                ids = await this._fetchBatch(node, count);
            } catch (e) {
                if (this._closed) return;
                if (e.reason === 'AUTH') {
                    // The token is wrong: waiters get the error at once, and
                    // the next request waits a second.
                    this._lastError = e;
                    this._authError = e;
                    this._authUntil = Date.now() + 1000;
                    for (const w of this._waiters.splice(0)) {
                        clearTimeout(w.timer);
                        w.reject(this._copy(e));
                    }
                    return;
                }
                if (e.reason === 'RETRY_AFTER') continue;
                this._leaveOut(node, e);
                continue;
            }
            if (this._closed) return;
            this._authError = undefined;
            this._deliver(ids);
            return;
        }
    }

    async _fetchBatch(node, count) {
        const start = Date.now();
        node.inflight++;
        let res;
        try {
            try {
                res = await this._get(node, `/v1/ids/batch?count=${count}`, true, this._timeoutMs);
            } catch (e) {
                // A kept-alive connection the other side had closed: once more
                // on a new one.
                if (!e.reusedSocket || this._closed) throw e;
                res = await this._get(node, `/v1/ids/batch?count=${count}`, true, this._timeoutMs);
            }
        } finally {
            node.inflight--;
        }
        const ms = Date.now() - start;
        node.latencyMs = node.latencyMs === 0 ? ms : node.latencyMs * 0.8 + ms * 0.2;
        let body;
        try {
            body = JSON.parse(res.body);
        } catch (e) {
            body = undefined;
        }
        const what = body && typeof body.message === 'string' ? `${body.code || ''} ${body.message}`.trim() : '';
        if (res.status === 200) {
            const ids = parseBatch(res.body, count, node.name);
            node.batches++;
            return ids;
        }
        if (res.status === 401 || res.status === 403) {
            throw snowflakeError('28000', 'AUTH', `${node.name} refused the request (${res.status}${what ? ': ' + what : ''})`, {
                detail: body && body.hint,
                hint: 'Set the buffer\'s token to one of the nodes\' tokens (snowflake.http_token_file or ' +
                    'snowflake.http_token); it is sent as "Authorization: Bearer <token>".',
            });
        }
        if (res.status === 429) {
            node.notBefore = Date.now() + retryAfterMs(res.headers);
            node.lastError = `429${what ? ' ' + what : ''}`;
            const e = snowflakeError('53400', 'RETRY_AFTER', `${node.name} answered 429${what ? ': ' + what : ''}`);
            this._lastError = e;
            throw e;
        }
        if (res.status === 503) node.notBefore = Date.now() + retryAfterMs(res.headers);
        throw nodeFailure(`${node.name} answered ${res.status}${what ? ': ' + what : ''}`,
            res.status === 503 && body && typeof body.code === 'string' ? body.code : '08006');
    }

    // GET path on node: { status, headers, body } once the whole answer came
    // within ms, else a failure; close() ends it at once.
    _get(node, path, withToken, ms) {
        return new Promise((resolve, reject) => {
            const headers = { Accept: 'application/json' };
            if (withToken && this._token) headers.Authorization = `Bearer ${this._token}`;
            let done = false;
            let req;
            const finish = (err, val) => {
                if (done) return;
                done = true;
                clearTimeout(timer);
                this._requests.delete(req);
                if (err) {
                    const e = err instanceof SnowflakeError ? err : nodeFailure(`${node.name}: ${err.message}`);
                    if (req.reusedSocket && !(err instanceof SnowflakeError)) e.reusedSocket = true;
                    reject(e);
                } else {
                    resolve(val);
                }
            };
            const timer = setTimeout(() => {
                const e = nodeFailure(`${node.name} gave no complete answer within ${ms} ms`, '57014');
                finish(e);
                req.destroy(e);
            }, ms);
            req = node.mod.request({
                protocol: node.url.protocol, hostname: node.url.hostname, port: node.url.port,
                path: node.prefix + path, method: 'GET', headers, agent: node.agent,
            });
            this._requests.add(req);
            req.on('error', (e) => finish(e));
            req.on('response', (res) => {
                const chunks = [];
                let size = 0;
                res.on('data', (c) => {
                    size += c.length;
                    if (size > MAX_BODY) {
                        const e = nodeFailure(`${node.name} answered more than ${MAX_BODY} bytes`, '08P01');
                        finish(e);
                        req.destroy(e);
                        return;
                    }
                    chunks.push(c);
                });
                res.on('error', (e) => finish(e));
                res.on('close', () => {
                    if (!res.complete) finish(new Error('the connection closed before the answer was complete'));
                });
                res.on('end', () => finish(null, {
                    status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'),
                }));
            });
            req.end();
        });
    }

    // Asks /readyz of every node left out whose probe is due; a 200 puts it
    // back in use.
    _probeDown() {
        if (this._closed) return;
        const now = Date.now();
        for (const n of this._nodes) {
            if (n.up || n.probing || now < n.nextProbe) continue;
            n.probing = true;
            n.nextProbe = now + this._probeMs;
            this._get(n, '/readyz', false, Math.min(this._timeoutMs, 2000)).then((res) => {
                if (res.status === 200) {
                    n.up = true;
                    this._wake();
                    this._maybeRefill();
                }
            }, () => {}).finally(() => { n.probing = false; });
        }
    }
}

module.exports = { IdBuffer, SnowflakeError, nextBatchSize, parseBatch, MAX_BATCH };
