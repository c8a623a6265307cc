#!/usr/bin/python3
"""bench/buffer.sh's Python client: snowflake_ids.buffer's IdBuffer (standard
library only; the native extension is not imported) refilling from URL (the
load balancer or one node). Prints KEY<TAB>VALUE lines; asserts nothing.

  client.py latency URL CALLS RATE
      per-call time of buf.next_id() (time.perf_counter_ns() before and
      after), CALLS calls paced at RATE a second: every millisecond or so
      (time.sleep(0.001), which lets the refill thread run) it makes the calls
      that are due, one at a time. A warm-up of RATE calls first (not timed:
      the batch size grows to its largest). Percentiles in ns.
  client.py pull URL START_MS END_MS STOP
      ids as fast as next_id() returns them (the refill thread runs beside
      it), counting those taken from START_MS to END_MS (Unix time in ms) or
      until the file STOP exists.
"""
import os
import sys
import time
from array import array

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk", "python"))
from snowflake_ids.buffer import IdBuffer  # noqa: E402

CHECK_EVERY = 1000


def out(k, v):
    sys.stdout.write("%s\t%s\n" % (k, v))


def pct(sorted_values, p):
    """Nearest-rank percentile of a sorted sequence."""
    k = int(p / 100 * len(sorted_values) + 0.999999)
    return sorted_values[min(max(k, 1), len(sorted_values)) - 1]


def clock_ns():
    """The median cost of the timing itself: two perf_counter_ns() calls back to back."""
    now = time.perf_counter_ns
    d = array("q", bytes(8 * 100000))
    for i in range(len(d)):
        t0 = now()
        t1 = now()
        d[i] = t1 - t0
    return pct(sorted(d), 50)


def paced(buf, calls, rate, times):
    """calls calls at rate a second; times each into times if given."""
    now = time.perf_counter_ns
    nxt = buf.next_id
    start = now()
    done = empty = 0
    while done < calls:
        due = min(calls, int((now() - start) / 1e9 * rate))
        while done < due:
            if buf._available() == 0:  # unlocked peek, outside the timed call
                empty += 1
            t0 = now()
            nxt()
            t1 = now()
            if times is not None:
                times[done] = t1 - t0
            done += 1
        time.sleep(0.001)
    return (now() - start) / 1e9, empty


def latency(url, calls, rate):
    calls, rate = int(calls), int(rate)
    buf = IdBuffer(url)
    buf.next_id()
    paced(buf, rate, rate, None)
    r0 = buf.stats()["refills"]
    times = array("q", bytes(8 * calls))
    seconds, empty = paced(buf, calls, rate, times)
    st = buf.stats()
    buf.close()
    s = sorted(times)
    out("version", "snowflake_ids.buffer (sdk/python), Python %s" % sys.version.split()[0])
    out("calls", calls)
    out("rate", rate)
    out("seconds", "%.3f" % seconds)
    for p in (50, 90, 99, 99.9, 99.99):
        out("p%s_ns" % p, pct(s, p))
    out("max_ns", s[-1])
    out("over_2us", sum(1 for t in s if t > 2000))
    out("over_1ms", sum(1 for t in s if t > 1000000))
    out("found_empty", empty)
    out("refills", st["refills"] - r0)
    out("batch_size", st["batch_size"])
    out("clock_ns", clock_ns())
    assert "snowflake_ids._native" not in sys.modules


def pull(url, start_ms, end_ms, stop):
    start_ms, end_ms = int(start_ms), int(end_ms)
    buf = IdBuffer(url)
    buf.next_id()
    while time.time() * 1000 < start_ms:
        time.sleep(0.001)
    nxt = buf.next_id
    t0 = time.perf_counter()
    r0 = buf.stats()["refills"]
    ids = 0
    while True:
        for _ in range(CHECK_EVERY):
            nxt()
        ids += CHECK_EVERY
        if time.time() * 1000 >= end_ms or (ids % 100000 == 0 and os.path.exists(stop)):
            break
    seconds = time.perf_counter() - t0
    st = buf.stats()
    buf.close()
    out("ids", ids)
    out("seconds", "%.3f" % seconds)
    out("ids_per_s", round(ids / seconds))
    out("refills", st["refills"] - r0)
    out("batch_size", st["batch_size"])


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "latency":
        latency(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "pull":
        pull(*sys.argv[2:])
    else:
        sys.exit(__doc__)
