'use strict';
// A Node.js member of the mixed fleet (test/sdk_fleet.sh): an embedded
// generator leasing from the fleet's coordinator, issuing batches of ids.
//
//   node member.js OUT
//
// Settings from the environment as member.py's (SF_ETCD or SF_ZK, SF_PREFIX,
// SF_WORKER_IDS, SF_TTL, SF_LAYOUT). Writes OUT ("t0 t1 id id ..." a batch, t0 and t1
// from /proc/uptime around the call), OUT.err ("t code" for each refused
// call), OUT.held (the worker id once held). SIGTERM: close(), exit 0.
const fs = require('fs');
const { Generator, SnowflakeError } = require(process.env.SF_NODE_SDK);

const out = process.argv[2];
const uptime = () => fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
    const options = {
        leasePrefix: process.env.SF_PREFIX, workerIds: process.env.SF_WORKER_IDS,
        leaseTtl: Number(process.env.SF_TTL), timeout: 300000,
    };
    if (process.env.SF_LAYOUT) options.layout = process.env.SF_LAYOUT;
    if (process.env.SF_ETCD) options.etcdEndpoints = process.env.SF_ETCD;
    else options.zookeeperHosts = process.env.SF_ZK;
    const gen = await Generator.open(options);
    fs.writeFileSync(out + '.held', `${gen.stats().workerId}\n`);
    let stopping = false;
    process.on('SIGTERM', () => { stopping = true; });
    const fd = fs.openSync(out, 'a');
    const errFd = fs.openSync(out + '.err', 'a');
    while (!stopping) {
        const t0 = uptime();
        let ids;
        try {
            ids = gen.nextIds(50);
        } catch (e) {
            if (!(e instanceof SnowflakeError)) throw e;
            fs.writeSync(errFd, `${t0} ${e.code}\n`);
            await sleep(e.code === 'SF003' ? 50 : 20);
            continue;
        }
        const t1 = uptime();
        fs.writeSync(fd, `${t0} ${t1} ${Array.from(ids, String).join(' ')}\n`);
        await sleep(20);
    }
    await gen.close();
    fs.closeSync(fd);
    fs.closeSync(errFd);
}

main().catch((e) => { console.error(e); process.exit(1); });
