// snowflake-ids for Node.js: the embedded generator of snowflake ids
// (libsnowflake_ids, sdk/c/include/snowflake_ids.h) through a Node-API addon
// (src/addon.cpp, built by `make sdk` or `npm install` into build/).
// This file checks and normalizes options and decode's handling of epochs;
// the addon does the rest. The error class is errors.js's, and the ID buffer
// (buffer.js, also require('snowflake-ids/buffer') without the addon) is
// exported here too. docs/sdk.md#nodejs.
'use strict';

const path = require('path');

const { SnowflakeError } = require('./errors');

const native = require(path.join(__dirname, 'build', 'snowflake_ids.node'));

native.setErrorClass(SnowflakeError);

function configError(message, hint) {
    const e = new SnowflakeError(message);
    e.code = '22023';
    e.sqlstate = '22023';
    e.reason = 'INVALID';
    if (hint) e.hint = hint;
    return e;
}

const OPTIONS = new Set(['etcdEndpoints', 'zookeeperHosts', 'workerId', 'workerIds', 'leasePrefix', 'leaseTtl',
    'epoch', 'layout', 'clockToleranceMs', 'clockBackwards', 'markFile', 'timeout']);

// The largest worker id any layout has (30 bits); the library refuses one
// beyond the layout's own (22023, naming both).
const MAX_WORKER_ID = 2 ** 30 - 1;

function list(name, v) {
    if (v === undefined || v === null) return undefined;
    if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v.join(',');
    if (typeof v === 'string') return v;
    throw configError(`${name} must be a string or an array of strings`);
}

function optString(name, v) {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw configError(`${name} must be a string`);
    return v;
}

function optInt(name, v, lo, hi) {
    if (v === undefined || v === null) return undefined;
    if (!Number.isInteger(v) || v < lo || v > hi) throw configError(`${name} must be an integer from ${lo} to ${hi}`);
    return v;
}

// A worker id: an integer from 0; its bound is the layout's (checked by the library).
function optWorker(name, v) {
    if (v === undefined || v === null) return undefined;
    if (!Number.isInteger(v) || v < 0 || v > MAX_WORKER_ID) {
        throw configError(`${name} must be an integer from 0 to the layout's largest worker id ` +
            '(1023 for twitter, 63 for js-safe)');
    }
    return v;
}

// An epoch as the library reads it: ISO 8601 text with an explicit offset; a
// Date becomes such a text.
function epochText(v) {
    if (v === undefined || v === null) return undefined;
    if (v instanceof Date) {
        if (Number.isNaN(v.getTime())) throw configError('epoch is an invalid Date');
        return v.toISOString().replace(/\.000Z$/, '+00:00').replace(/Z$/, '+00:00');
    }
    if (typeof v === 'string') return v;
    throw configError('epoch must be a string (ISO 8601 with an offset) or a Date');
}

// workerIds: '512-1023', [512, 1023] or { min: 512, max: 1023 }; by default
// (undefined) the library's, the layout's upper half.
function workerIdRange(v) {
    if (v === undefined || v === null) return [undefined, undefined];
    let lo, hi;
    if (typeof v === 'string') {
        const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(v);
        if (!m) throw configError(`workerIds must be a range such as '512-1023', not '${v}'`);
        lo = Number(m[1]);
        hi = Number(m[2]);
    } else if (Array.isArray(v) && v.length === 2) {
        [lo, hi] = v;
    } else if (typeof v === 'object') {
        ({ min: lo, max: hi } = v);
    }
    optWorker('workerIds (its first id)', lo);
    optWorker('workerIds (its last id)', hi);
    if (lo === undefined || hi === undefined || lo > hi) {
        throw configError("workerIds must be a range of the layout's worker ids (0 to 1023 for twitter), " +
            'its first id not above its last');
    }
    return [lo, hi];
}

function normalize(options) {
    if (options === null || typeof options !== 'object') throw configError('Generator.open takes an options object');
    for (const k of Object.keys(options)) {
        if (!OPTIONS.has(k)) throw configError(`unknown option '${k}'`, `The options are: ${[...OPTIONS].join(', ')}.`);
    }
    const [workerIdMin, workerIdMax] = workerIdRange(options.workerIds);
    let leaseTtlMs;
    if (options.leaseTtl !== undefined && options.leaseTtl !== null) {
        if (typeof options.leaseTtl !== 'number' || !Number.isFinite(options.leaseTtl) || options.leaseTtl <= 0) {
            throw configError('leaseTtl must be a number of seconds (5 to 300)');
        }
        leaseTtlMs = Math.round(options.leaseTtl * 1000);
    }
    let clockBackwards;
    if (options.clockBackwards !== undefined && options.clockBackwards !== null) {
        clockBackwards = { refuse: 0, failover: 1 }[options.clockBackwards];
        if (clockBackwards === undefined) throw configError("clockBackwards must be 'refuse' or 'failover'");
    }
    return {
        etcdEndpoints: list('etcdEndpoints', options.etcdEndpoints),
        zookeeperHosts: list('zookeeperHosts', options.zookeeperHosts),
        workerId: optWorker('workerId', options.workerId),
        workerIdMin,
        workerIdMax,
        leasePrefix: optString('leasePrefix', options.leasePrefix),
        leaseTtlMs,
        epoch: epochText(options.epoch),
        layout: optString('layout', options.layout),
        clockToleranceMs: optInt('clockToleranceMs', options.clockToleranceMs, 0, 2147483647),
        clockBackwards,
        markFile: optString('markFile', options.markFile),
        timeoutMs: optInt('timeout', options.timeout, 0, 2147483647),
    };
}

const DEFAULT_EPOCH = '2025-01-01 00:00:00+00';
let defaultEpochMs;

function epochMs(v) {
    if (v === undefined || v === null) {
        if (defaultEpochMs === undefined) defaultEpochMs = native.parseEpoch(DEFAULT_EPOCH);
        return defaultEpochMs;
    }
    if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
    if (v instanceof Date) return v.getTime();
    return native.parseEpoch(epochText(v));
}

function toBigInt(id) {
    if (typeof id === 'bigint') return id;
    if (typeof id === 'string' && /^\d+$/.test(id)) return BigInt(id);
    if (typeof id === 'number' && Number.isSafeInteger(id)) return BigInt(id);
    throw configError('an id is a bigint, a decimal string or a safe integer');
}

const token = Symbol('snowflake-ids');

class Generator {
    // Not for users: Generator.open() makes generators.
    constructor(handle, key) {
        if (key !== token) throw configError('use Generator.open() to make a generator');
        this._n = handle;
        // nextId(), nextIdString(), nextIds(n): the addon's functions of this
        // generator itself (no lookup of the generator on the id path).
        this.nextId = handle.nextId;
        this.nextIdString = handle.nextIdString;
        this.nextIds = handle.nextIds;
    }

    // Resolves once a worker id is held (leased, or the static one with its
    // mark file locked); rejects with a SnowflakeError (NOT_READY, 57014, when
    // `timeout` ms passed first; 30000 by default).
    static async open(options = {}) {
        const handle = await native.open(normalize(options));
        return new Generator(handle, token);
    }

    stats() { return this._n.stats(); }

    // Waits until ids can be issued again: resolves at once while a worker id
    // is held (or for a static one); after a lost lease (nextId() fails with
    // NO_LEASE, SF003) once a new one is held. Rejects with NOT_READY (57014,
    // the lease's last error in detail) after `timeout` ms (30000 by
    // default), and with CLOSED (55000) within 20 ms of close(). It looks at
    // the lease every 20 ms: the event loop runs meanwhile.
    async waitReady({ timeout = 30000 } = {}) {
        optInt('timeout', timeout, 0, 2147483647);
        const deadline = performance.now() + timeout;
        for (;;) {
            const s = this.stats();  // CLOSED once closed
            if (s.state === 'held' || s.state === 'static') return;
            const left = deadline - performance.now();
            if (left <= 0) {
                const e = new SnowflakeError(`no worker id was held within ${timeout} ms`);
                e.code = e.sqlstate = '57014';
                e.reason = 'NOT_READY';
                if (s.lastError) e.detail = `The lease's last error: ${s.lastError}.`;
                e.hint = 'Check that the coordinator is reachable and that a worker id of the range is free; ' +
                    'call waitReady() again to go on waiting.';
                throw e;
            }
            await new Promise((resolve) => setTimeout(resolve, Math.min(20, left)));
        }
    }
    get closed() { return this._n.closed; }
    // Ends the lease (or writes the mark file) and frees the generator; later
    // calls fail with CLOSED (55000). Closing twice is allowed.
    close() { return this._n.close(); }

    // The fields of an id: { timestamp (Date), msSinceEpoch, workerId, sequence }.
    // epoch: as in open() (text or Date) or Unix milliseconds; the default
    // epoch when omitted. layout: as in open(); twitter when omitted.
    static decode(id, { epoch, layout } = {}) {
        return native.decode(toBigInt(id), epochMs(epoch), optString('layout', layout));
    }
}

module.exports = { Generator, SnowflakeError, IdBuffer: require('./buffer').IdBuffer, version: native.version };
