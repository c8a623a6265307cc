#!/usr/bin/python3
"""A Python member of the mixed fleet (test/sdk_fleet.sh): an embedded
generator leasing from the fleet's coordinator, issuing batches of ids.

  member.py OUT [--fork-after N]

Settings from the environment: SF_ETCD or SF_ZK (the coordinator), SF_PREFIX,
SF_WORKER_IDS ("20-23"), SF_TTL (seconds), SF_LAYOUT (the ids' layout; unset:
twitter). A generator that cannot open writes OUT.open-error ("SQLSTATE
detail") and exits 3. Writes to OUT, one line a batch:
"t0 t1 id id ..." (t0, t1: /proc/uptime before and after the call, a bound
on when the ids were issued); OUT.err: "t code" for each refused call;
OUT.held: the worker id once one is held. SIGTERM: close() (the exact mark
handed over, the lease ended at once), then exit 0. --fork-after N: after N
batches, fork; the child writes OUT.child (and .child.err, .child.first: the
SQLSTATE of its first call) and ends after its first lease or 10 s.
"""
import os
import signal
import sys
import time

import snowflake_ids


def uptime():
    with open("/proc/uptime") as f:
        return f.read().split()[0]


def open_generator():
    kw = dict(lease_prefix=os.environ["SF_PREFIX"], worker_ids=os.environ["SF_WORKER_IDS"],
              lease_ttl=int(os.environ["SF_TTL"]), timeout=300)
    if os.environ.get("SF_LAYOUT"):
        kw["layout"] = os.environ["SF_LAYOUT"]
    if os.environ.get("SF_ETCD"):
        kw["etcd_endpoints"] = os.environ["SF_ETCD"]
    else:
        kw["zookeeper_hosts"] = os.environ["SF_ZK"]
    return snowflake_ids.Generator(**kw)


def run(gen, out_path, batches_before_fork=None, deadline=None):
    """Issues batches until SIGTERM (or the deadline); returns the number of batches."""
    n = 0
    with open(out_path, "a", buffering=1) as out, open(out_path + ".err", "a", buffering=1) as err:
        while not stopping[0]:
            if deadline is not None and time.monotonic() > deadline:
                break
            t0 = uptime()
            try:
                ids = gen.next_ids(50)
            except snowflake_ids.NoLeaseError:
                err.write("%s SF003\n" % t0)
                try:
                    gen.wait_ready(timeout=1)
                except snowflake_ids.NotReadyError:
                    pass
                continue
            except snowflake_ids.Error as e:
                err.write("%s %s\n" % (t0, e.sqlstate))
                time.sleep(0.05)
                continue
            t1 = uptime()
            out.write("%s %s %s\n" % (t0, t1, " ".join(map(str, ids))))
            n += 1
            if batches_before_fork is not None and n == batches_before_fork:
                return n
            time.sleep(0.02)
    return n


stopping = [False]


def main():
    out = sys.argv[1]
    fork_after = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--fork-after" else None
    signal.signal(signal.SIGTERM, lambda *_: stopping.__setitem__(0, True))
    try:
        gen = open_generator()
    except snowflake_ids.Error as e:
        with open(out + ".open-error", "w") as f:
            f.write("%s %s\n" % (e.sqlstate, e.detail))
        sys.exit(3)
    with open(out + ".held", "w") as f:
        f.write("%d\n" % gen.stats()["worker_id"])
    if fork_after is not None:
        run(gen, out, batches_before_fork=fork_after)
        pid = os.fork()
        if pid == 0:
            # The child: its first call must not issue under the parent's id.
            try:
                gen.next_id()
                first = "issued"
            except snowflake_ids.Error as e:
                first = e.sqlstate
            with open(out + ".child.first", "w") as f:
                f.write(first + "\n")
            try:
                gen.wait_ready(timeout=10)
                run(gen, out + ".child", deadline=time.monotonic() + 3)
            except snowflake_ids.Error:
                pass
            gen.close()
            os._exit(0)
        run(gen, out)
        os.waitpid(pid, 0)
    else:
        run(gen, out)
    gen.close()


main()
