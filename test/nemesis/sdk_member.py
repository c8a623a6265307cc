#!/usr/bin/python3
"""A Python SDK member of the nemesis suite (test/nemesis/run.sh,
docs/nemesis.md "SDK members"): an embedded generator (sdk/python,
snowflake_ids) leasing a worker id from the suite's coordinator, in a
network namespace of its own, taking batches of ids until SIGTERM, and
recording every attempt as sdk_member.js does (the format of client.py):
  <sent> <answered> <node> <label> <pid> <result>
sent and answered from /proc/uptime (the boot clock, which libfaketime does
not move; truncated to hundredths, so answered is the reading plus 0.01);
result "b<first>+<n>,..." or "E<SQLSTATE>" for a refused call.

Usage: sdk_member.py NODE LABEL OUT BATCH PAUSE_MS
Environment: SF_ETCD or SF_ZK, SF_PREFIX, SF_WORKER_IDS, SF_TTL (s); the
module from PYTHONPATH. SIGTERM: close() (the worker id handed over), exit 0.
"""
import os
import select
import signal
import sys

import snowflake_ids

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client import runs_text  # noqa: E402

stopping = [False]


def pause_for(seconds):
    # Not time.sleep: Python 3.11 sleeps with clock_nanosleep(TIMER_ABSTIME),
    # which libfaketime 0.9.10 fails with EINVAL; select's timeout is relative.
    select.select([], [], [], seconds)


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def main():
    node, label, out, batch, pause_ms = sys.argv[1:6]
    batch, pause = int(batch), float(pause_ms) / 1000.0
    signal.signal(signal.SIGTERM, lambda *_: stopping.__setitem__(0, True))
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(sent, answered, result):
        # One write a line: whole even when the process is killed.
        os.write(fd, ("%.2f %.2f %s %s %d %s\n" % (sent, answered + 0.01, node, label, os.getpid(), result)).encode())

    kw = dict(lease_prefix=os.environ["SF_PREFIX"], worker_ids=os.environ["SF_WORKER_IDS"],
              lease_ttl=int(os.environ["SF_TTL"]), timeout=1, layout=os.environ["SF_LAYOUT"])
    if os.environ.get("SF_ETCD"):
        kw["etcd_endpoints"] = os.environ["SF_ETCD"]
    else:
        kw["zookeeper_hosts"] = os.environ["SF_ZK"]
    gen = None
    while gen is None and not stopping[0]:
        sent = uptime()
        try:
            gen = snowflake_ids.Generator(**kw)
        except snowflake_ids.Error as e:
            record(sent, uptime(), "E" + e.sqlstate)  # no worker id within a second: refused
    while not stopping[0]:
        sent = uptime()
        try:
            ids = gen.next_ids(batch)
        except snowflake_ids.NoLeaseError as e:
            record(sent, uptime(), "E" + e.sqlstate)
            try:
                gen.wait_ready(timeout=1)
            except snowflake_ids.NotReadyError:
                pass
            continue
        except snowflake_ids.Error as e:
            record(sent, uptime(), "E" + e.sqlstate)
            pause_for(0.02)
            continue
        record(sent, uptime(), runs_text(ids))
        pause_for(pause)
    if gen is not None:
        gen.close()


if __name__ == "__main__":
    main()
