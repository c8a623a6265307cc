// snowflake-ids leasing a worker id from a real ZooKeeper: test/sdk_node.sh
// starts one and names it in SNOWFLAKE_TEST_ZK (skipped without it).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');

const { Generator } = require('..');

const zk = process.env.SNOWFLAKE_TEST_ZK;
const skip = zk ? false : 'SNOWFLAKE_TEST_ZK is not set (test/sdk_node.sh starts a ZooKeeper)';

test('open with zookeeperHosts resolves holding a worker id of the default range', { skip }, async () => {
    const gen = await Generator.open({ zookeeperHosts: zk.split(','), leasePrefix: '/sdk-node-zk', timeout: 30000 });
    try {
        const s = gen.stats();
        assert.equal(s.state, 'held');
        assert.equal(s.coordinator, 'zookeeper');
        assert.ok(s.workerId >= 512 && s.workerId <= 1023, `worker id ${s.workerId} in 512..1023`);
        const a = gen.nextId();
        assert.ok(gen.nextId() > a);
        assert.equal(Generator.decode(a).workerId, s.workerId);
    } finally {
        await gen.close();
    }
});
