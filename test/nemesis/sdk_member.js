'use strict';
// A Node.js SDK member of the nemesis suite (test/nemesis/run.sh,
// docs/nemesis.md "SDK members"): an embedded generator (sdk/node) leasing a
// worker id from the suite's coordinator, in a network namespace of its own,
// taking batches of ids until SIGTERM, and recording every attempt in the
// format of the suite's clients (test/nemesis/client.py), which the checker
// reads:
//   <sent> <answered> <node> <label> <pid> <result>
// sent, answered: bounds on the boot clock from /proc/uptime (CLOCK_BOOTTIME,
// which libfaketime does not move; it counts in hundredths and truncates,
// so the moment of the read lies in [value, value + 0.01)): sent is the
// reading before the call, answered the reading after it plus 0.01. result:
// "b<first>+<n>,..." (the ids as runs of consecutive values), "E<code>" for
// a refused call (SF003, SF001, ...; 57014 when no worker id came in time).
//
//   node sdk_member.js NODE LABEL OUT BATCH PAUSE_MS
//
// Environment: SF_NODE_SDK (the binding), SF_ETCD or SF_ZK, SF_PREFIX,
// SF_WORKER_IDS, SF_TTL (s). SIGTERM: close() (the worker id handed over),
// exit 0.
const fs = require('fs');
const { Generator, SnowflakeError } = require(process.env.SF_NODE_SDK);

const [node, label, out, batchText, pauseText] = process.argv.slice(2);
const batch = Number(batchText);
const pause = Number(pauseText);
const uptime = () => Number(fs.readFileSync('/proc/uptime', 'latin1').split(' ')[0]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fd = fs.openSync(out, 'a');
let stopping = false;
process.on('SIGTERM', () => { stopping = true; });

// One write a line (O_APPEND): a line is whole even when the process is killed.
function record(sent, answered, result) {
    fs.writeSync(fd, `${sent.toFixed(2)} ${(answered + 0.01).toFixed(2)} ${node} ${label} ${process.pid} ${result}\n`);
}

function runsText(ids) {
    const out = [];
    let first = null;
    let prev = null;
    for (const i of ids) {
        if (prev !== null && i === prev + 1n) {
            prev = i;
            continue;
        }
        if (first !== null) out.push(`${first}+${prev - first + 1n}`);
        first = prev = i;
    }
    if (first !== null) out.push(`${first}+${prev - first + 1n}`);
    return 'b' + out.join(',');
}

function codeOf(e) {
    if (!(e instanceof SnowflakeError)) throw e;
    return 'E' + e.code;
}

async function main() {
    const options = {
        leasePrefix: process.env.SF_PREFIX, workerIds: process.env.SF_WORKER_IDS,
        leaseTtl: Number(process.env.SF_TTL), timeout: 1000, layout: process.env.SF_LAYOUT,
    };
    if (process.env.SF_ETCD) options.etcdEndpoints = process.env.SF_ETCD;
    else options.zookeeperHosts = process.env.SF_ZK;
    let gen = null;
    while (gen === null && !stopping) {
        const sent = uptime();
        try {
            gen = await Generator.open(options);
        } catch (e) {
            record(sent, uptime(), codeOf(e));   // no worker id within a second: refused
        }
    }
    while (!stopping) {
        const sent = uptime();
        let ids;
        try {
            ids = gen.nextIds(batch);
        } catch (e) {
            record(sent, uptime(), codeOf(e));
            if (e.code === 'SF003') {
                await gen.waitReady({ timeout: 1000 }).catch((w) => { if (w.code !== '57014') throw w; });
            } else {
                await sleep(20);
            }
            continue;
        }
        record(sent, uptime(), runsText(ids));
        await sleep(pause);
    }
    if (gen !== null) await gen.close();
    fs.closeSync(fd);
}

main().catch((e) => { console.error(e); process.exit(1); });
