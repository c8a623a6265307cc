#!/usr/bin/python3
"""Helpers of test/haproxy.sh (Python's standard library only).

  lb.py client URL TOKEN IDS ERRORS STOP MAX_S
      Asks URL (/v1/ids/batch?count=N through the load balancer) over one
      keep-alive connection, one request every 20 ms (a buffer's refills,
      not a flood: far below the node's snowflake.http_max_ids_per_second),
      until the file STOP exists or MAX_S seconds passed; appends every id
      of a 200 answer to IDS (one per line), keeps IDS.counts ("worker
      count" lines, rewritten after each batch), and writes a line to
      ERRORS for every request that did not end in a 200 with ids (the
      status, or the exception), so that a caller error is never lost.
  lb.py count IDS_FILE... WORKER
      How many ids the clients' .counts files give WORKER.
  lb.py check FILE...
      "total duplicates foreign" over the ids of every FILE: foreign ids
      carry a worker id other than 1, 2 or 3.
  lb.py status SOCKET SERVER...
      The status HAProxy's stats socket gives each SERVER of the backend
      snowflake_nodes ("UP", "DOWN", "UP 1/2", ...), one per line.
  lb.py counters SOCKET
      The backend's retries and redispatches ("wretr wredis").
"""
import http.client
import json
import os
import socket
import sys
import time
import urllib.parse


def client(url, token, ids_path, errors_path, stop_path, max_s):
    u = urllib.parse.urlsplit(url)
    path = u.path + ("?" + u.query if u.query else "")
    headers = {"Authorization": "Bearer " + token}
    deadline = time.monotonic() + float(max_s)
    conn = None
    counts = {}
    with open(ids_path, "a") as ids, open(errors_path, "a") as errors:
        while not os.path.exists(stop_path) and time.monotonic() < deadline:
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200:
                    errors.write("%.3f status %d %s\n" % (time.time(), resp.status, body[:200]))
                    errors.flush()
                    continue
                got = json.loads(body)["ids"]
                if not got:
                    errors.write("%.3f 200 without ids\n" % time.time())
                    continue
                ids.write("\n".join(got) + "\n")
                for i in got:
                    w = worker_of(int(i))
                    counts[w] = counts.get(w, 0) + 1
                with open(ids_path + ".counts.tmp", "w") as c:
                    c.write("".join("%d %d\n" % kv for kv in sorted(counts.items())))
                os.replace(ids_path + ".counts.tmp", ids_path + ".counts")
                time.sleep(0.02)
            except Exception as e:  # every failure a caller would see
                errors.write("%.3f %s: %s\n" % (time.time(), type(e).__name__, e))
                errors.flush()
                if conn is not None:
                    conn.close()
                conn = None
    return 0


def worker_of(i):
    return (i >> 12) & 1023


def count(args):
    *files, worker = args
    n = 0
    for f in files:
        try:
            for line in open(f + ".counts"):
                w, c = line.split()
                if int(w) == int(worker):
                    n += int(c)
        except FileNotFoundError:
            pass
    print(n)
    return 0


def check(files):
    seen = set()
    total = dups = foreign = 0
    for f in files:
        for line in open(f):
            i = int(line)
            total += 1
            if i in seen:
                dups += 1
            seen.add(i)
            if worker_of(i) not in (1, 2, 3):
                foreign += 1
    print(total, dups, foreign)
    return 0


def stat_rows(sock_path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sock_path)
    s.sendall(b"show stat\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    lines = data.decode().splitlines()
    names = lines[0].lstrip("# ").split(",")
    return [dict(zip(names, line.split(","))) for line in lines[1:] if line]


def status(sock_path, servers):
    rows = {r["svname"]: r for r in stat_rows(sock_path) if r["pxname"] == "snowflake_nodes"}
    for name in servers:
        print(rows[name]["status"] if name in rows else "MISSING")
    return 0


def counters(sock_path):
    for r in stat_rows(sock_path):
        if r["pxname"] == "snowflake_nodes" and r["svname"] == "BACKEND":
            print(r["wretr"], r["wredis"])
    return 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "client":
        sys.exit(client(*args))
    if cmd == "status":
        sys.exit(status(args[0], args[1:]))
    if cmd == "count":
        sys.exit(count(args))
    if cmd == "check":
        sys.exit(check(args))
    if cmd == "counters":
        sys.exit(counters(args[0]))
    sys.exit("lb.py: unknown command " + cmd)
