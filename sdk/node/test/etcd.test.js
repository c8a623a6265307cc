// snowflake-ids leasing worker ids from a real etcd: test/sdk_node.sh starts
// one and names it in SNOWFLAKE_TEST_ETCD (these tests are skipped without it).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');

const { Generator, SnowflakeError } = require('..');

const etcd = process.env.SNOWFLAKE_TEST_ETCD;
const skip = etcd ? false : 'SNOWFLAKE_TEST_ETCD is not set (test/sdk_node.sh starts an etcd)';

test('open with etcdEndpoints resolves holding a worker id of the default range', { skip }, async () => {
    const gen = await Generator.open({ etcdEndpoints: etcd, timeout: 20000 });
    try {
        const s = gen.stats();
        assert.equal(s.state, 'held');
        assert.equal(s.coordinator, 'etcd');
        assert.ok(s.workerId >= 512 && s.workerId <= 1023, `worker id ${s.workerId} in 512..1023`);
        assert.equal(s.pid, process.pid);
        const a = gen.nextId();
        const b = gen.nextId();
        assert.ok(b > a);
        assert.equal(Generator.decode(a).workerId, s.workerId);
    } finally {
        await gen.close();
    }
});

test('two generators hold different worker ids', { skip }, async () => {
    const [g1, g2] = await Promise.all([
        Generator.open({ etcdEndpoints: [etcd], leasePrefix: '/sdk-node-two', timeout: 20000 }),
        Generator.open({ etcdEndpoints: [etcd], leasePrefix: '/sdk-node-two', timeout: 20000 }),
    ]);
    try {
        const w1 = Generator.decode(g1.nextId()).workerId;
        const w2 = Generator.decode(g2.nextId()).workerId;
        assert.notEqual(w1, w2);
        assert.equal(g1.stats().workerId, w1);
        assert.equal(g2.stats().workerId, w2);
    } finally {
        await Promise.all([g1.close(), g2.close()]);
    }
});

test('close ends the lease at once: the only id of a range is free again', { skip }, async () => {
    const options = { etcdEndpoints: etcd, leasePrefix: '/sdk-node-close', workerIds: '700-700', leaseTtl: 60 };
    const first = await Generator.open({ ...options, timeout: 20000 });
    const last = first.nextId();
    assert.equal(first.stats().workerId, 700);
    // While it is held, a second generator cannot have it.
    await assert.rejects(Generator.open({ ...options, timeout: 1000 }), (e) => {
        assert.ok(e instanceof SnowflakeError);
        assert.equal(e.code, '57014');
        return true;
    });
    await first.close();
    // Well within the 60 s TTL: only a released lease can be had this soon.
    const second = await Generator.open({ ...options, timeout: 20000 });
    try {
        assert.equal(second.stats().workerId, 700);
        assert.ok(second.nextId() > last);
    } finally {
        await second.close();
    }
});

test('a process that exits with its generator open ends its lease at exit', { skip }, async () => {
    const { execFileSync } = require('child_process');
    const options = { etcdEndpoints: etcd, leasePrefix: '/sdk-node-exit', workerIds: '710-710', leaseTtl: 60 };
    // The child opens, issues an id and exits without close(): the addon's
    // cleanup hook closes the generator.
    const out = execFileSync(process.execPath, ['-e', `
        const { Generator } = require(${JSON.stringify(require.resolve('..'))});
        Generator.open(${JSON.stringify({ ...options, timeout: 20000 })})
            .then((g) => console.log(String(g.nextId())));`], { encoding: 'utf8' });
    const childId = BigInt(out.trim());
    assert.equal(Generator.decode(childId).workerId, 710);
    // Well within the 60 s TTL: only a released lease can be had this soon.
    const gen = await Generator.open({ ...options, timeout: 10000 });
    try {
        assert.equal(gen.stats().workerId, 710);
        assert.ok(gen.nextId() > childId);
    } finally {
        await gen.close();
    }
});
