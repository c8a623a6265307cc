#!/usr/bin/python3
"""test/haproxy.sh's ID buffer client for Python: snowflake_ids.buffer's
IdBuffer (standard library only; the native extension is not imported)
refilling from URLS (the load balancer, or the nodes themselves,
comma-separated).

  buffer_client.py URLS TOKEN IDS ERRORS STOP MAX_S TIMEOUT_MS

Takes 20 ids every 10 ms (about 2,000 a second: a rate-bounded caller, far
below the node's snowflake.http_max_ids_per_second) until the file STOP
exists or MAX_S seconds passed. Appends every id to IDS (one per line), keeps
IDS.counts ("worker count" lines, as lb.py client does) and IDS.nodes (the
buffer's view of each URL: "url up failures batches" lines), and writes a
line to ERRORS for every next_id() that failed, so that a caller error is
never lost.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk", "python"))
from snowflake_ids.buffer import IdBuffer  # noqa: E402
import snowflake_ids  # noqa: E402


def main(urls, token, ids_path, errors_path, stop_path, max_s, timeout_ms):
    buf = IdBuffer(urls.split(","), token, min_batch=100, max_batch=1000, timeout=int(timeout_ms) / 1000.0,
                   wait=10, probe_interval=0.25)
    deadline = time.monotonic() + float(max_s)
    counts = {}
    pending = []

    def flush():
        with open(ids_path, "a") as f:
            f.write("".join(p + "\n" for p in pending))
        pending.clear()
        with open(ids_path + ".counts.tmp", "w") as c:
            c.write("".join("%d %d\n" % kv for kv in sorted(counts.items())))
        os.replace(ids_path + ".counts.tmp", ids_path + ".counts")
        with open(ids_path + ".nodes.tmp", "w") as n:
            n.write("".join("%s %s %d %d\n" % (s["url"], "up" if s["up"] else "out", s["failures"], s["batches"])
                            for s in buf.stats()["nodes"]))
        os.replace(ids_path + ".nodes.tmp", ids_path + ".nodes")

    open(errors_path, "a").close()
    last = time.monotonic()
    with open(errors_path, "a") as errors:
        while not os.path.exists(stop_path) and time.monotonic() < deadline:
            for _ in range(20):
                try:
                    i = buf.next_id()
                    pending.append(str(i))
                    w = (i >> 12) & 1023
                    counts[w] = counts.get(w, 0) + 1
                except snowflake_ids.Error as e:
                    errors.write("%.3f %s %s: %s (%s)\n" % (time.time(), e.sqlstate, type(e).__name__, e, e.detail))
                    errors.flush()
            if time.monotonic() - last >= 0.1:
                flush()
                last = time.monotonic()
            time.sleep(0.01)
    flush()
    buf.close()
    assert "snowflake_ids._native" not in sys.modules
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
