#!/usr/bin/python3
"""The coordinator's record of worker id tenures, for the nemesis suite's
checker (test/nemesis/check.py, docs/nemesis.md "Tenures from the
coordinator"): who held which worker id when, on the boot clock.

A tenure is one life of a worker key: <prefix>/workers/<id> in etcd (created
by a node's claim, on its lease; deleted when the lease is revoked or
expires) or the ephemeral znode of that path in ZooKeeper (created by the
node's session; deleted by the node or with the session). The coordinator
orders these changes (etcd's revisions, ZooKeeper's zxids); this module
puts them on the boot clock with a "revision clock": reads made during the
run, each recorded with the boot clock before it was sent and after it was
answered and the revision it saw.

  etcd: a linearizable read (etcd's default) answered with header revision R
  between send and ack means: every revision <= R was committed before ack,
  and every revision > R was committed after send (else the read index
  would have covered it). So revision r happened in
  (max send of the reads with R < r, min ack of the reads with R >= r).
  ZooKeeper: the largest "Zxid" (last processed zxid) the servers' srvr
  answers name in one round. A processed zxid was committed, so zxids <= Z
  were committed before the round's ack; a zxid > Z may have been committed
  just before the round was sent and not yet applied on any server polled
  (the apply follows the commit by milliseconds), so ZooKeeper's brackets
  are widened by ZK_SLACK_S.

The history itself is exact and read after the run: etcd keeps every
revision (no compaction in the suite), read one revision at a time; the
ZooKeeper servers' transaction logs, read with ZooKeeper's TxnLogToolkit,
a transaction counted when at least two of the three logs hold it (a
committed transaction was logged by a quorum). Both are written as event
lines "<order> put|del <worker> <owner> <value>" (owner: the etcd lease or
the ZooKeeper session; del lines have "-" for both).

A node issues ids under a worker id only inside its tenure as the
coordinator records it: it learns of its claim after the claim was
committed, and it stops at its lease deadline, which comes before the lease
(session) can expire, which comes before the key is deleted. The checker
takes each tenure as the widest interval the record allows, so an id it
finds outside every tenure of its node was issued while its node did not
hold the worker id.

Usage (run.sh):
  tenures.py poll etcd OUT URL[,URL...] PREFIX      during the run, until SIGTERM
  tenures.py poll zookeeper OUT HOST:PORT[,...]
  tenures.py history etcd OUT URL[,URL...] PREFIX   after the run
  tenures.py history zookeeper OUT PREFIX JAVA CLASSPATH DATADIR...
"""
import base64
import bisect
import collections
import glob
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse

POLL_INTERVAL_S = 0.05
POLL_TIMEOUT_S = 0.5
ZK_SLACK_S = 0.1


def boot_now():
    return time.clock_gettime(time.CLOCK_BOOTTIME)


# --- etcd ------------------------------------------------------------------
def b64(s):
    return base64.b64encode(s.encode()).decode()


def prefix_end(p):
    return p[:-1] + chr(ord(p[-1]) + 1)


class Etcd:
    """Requests to etcd's JSON gateway (/v3/kv/range), trying the members in
    turn: a member that is down, cut off from the quorum or slow is left
    for the next one."""

    def __init__(self, urls):
        self.hosts = [urllib.parse.urlsplit(u) for u in urls.split(",")]
        self.conns = [None] * len(self.hosts)
        self.i = 0

    def range(self, key, end, **extra):
        last = None
        for _ in range(len(self.hosts)):
            i = self.i
            try:
                if self.conns[i] is None:
                    u = self.hosts[i]
                    self.conns[i] = http.client.HTTPConnection(u.hostname, u.port, timeout=POLL_TIMEOUT_S)
                body = dict(key=b64(key), range_end=b64(end), **extra)
                self.conns[i].request("POST", "/v3/kv/range", json.dumps(body), {"Content-Type": "application/json"})
                resp = self.conns[i].getresponse()
                doc = json.loads(resp.read() or b"{}")
                if resp.status == 200 and "header" in doc:
                    return doc
                last = doc.get("error") or doc.get("message") or "status %d" % resp.status
                if "compacted" in str(last):
                    raise RuntimeError("etcd: %s" % last)
            except (OSError, http.client.HTTPException, ValueError) as e:
                last = str(e)
                if self.conns[i] is not None:
                    self.conns[i].close()
                self.conns[i] = None
            self.i = (self.i + 1) % len(self.hosts)
        raise OSError("no etcd member answered: %s" % last)


def poll_etcd(out, urls, prefix):
    etcd = Etcd(urls)
    key = prefix + "/workers/"
    with open(out, "a") as f:
        while True:
            sent = boot_now()
            try:
                doc = etcd.range(key, prefix_end(key), count_only=True)
            except OSError:
                time.sleep(POLL_INTERVAL_S)
                continue
            ack = boot_now()
            skew = time.time() - boot_now()
            f.write("%.6f %.6f %d %.6f\n" % (sent, ack, int(doc["header"]["revision"]), skew))
            f.flush()
            time.sleep(POLL_INTERVAL_S)


def history_etcd(out, urls, prefix):
    """Every change of the keys under <prefix>/workers/, from revision 1 to
    now, from the key range at each revision."""
    etcd = Etcd(urls)
    key = prefix + "/workers/"
    end = prefix_end(key)
    last = int(etcd.range(key, end, count_only=True)["header"]["revision"])
    before = {}
    lines = []
    for rev in range(1, last + 1):
        doc = etcd.range(key, end, revision=str(rev))
        now = {}
        for kv in doc.get("kvs", []):
            k = base64.b64decode(kv["key"]).decode(errors="replace")
            now[k] = (int(kv.get("create_revision", 0)), kv.get("lease", "0"),
                      base64.b64decode(kv.get("value", "")).decode(errors="replace"))
        for k in sorted(set(before) | set(now)):
            w = k[len(key):]
            if not w.isdigit():
                continue
            b, n = before.get(k), now.get(k)
            if b is not None and (n is None or n[0] != b[0]):
                lines.append("%d del %s - -" % (rev, w))
            if n is not None and (b is None or n[0] != b[0]):
                lines.append("%d put %s %s %s" % (rev, w, n[1], n[2].replace("\n", " ")))
        before = now
    with open(out, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    return len(lines)


# --- ZooKeeper -------------------------------------------------------------
def zk_4lw(host, port, word):
    with socket.create_connection((host, int(port)), timeout=POLL_TIMEOUT_S) as s:
        s.sendall(word.encode())
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data.decode(errors="replace")
            data += chunk


def poll_zookeeper(out, hosts):
    servers = [h.rsplit(":", 1) for h in hosts.split(",")]
    with open(out, "a") as f:
        while True:
            sent = boot_now()
            best = None
            for host, port in servers:
                try:
                    m = re.search(r"^Zxid: (0x[0-9a-fA-F]+)", zk_4lw(host, port, "srvr"), re.M)
                except OSError:
                    continue
                if m:
                    z = int(m.group(1), 16)
                    best = z if best is None else max(best, z)
            ack = boot_now()
            if best is not None:
                skew = time.time() - boot_now()
                f.write("%.6f %.6f %d %.6f\n" % (sent, ack, best, skew))
                f.flush()
            time.sleep(POLL_INTERVAL_S)


TXN_LINE = re.compile(r"^\S.* session (0x[0-9a-f]+) cxid 0x[0-9a-f]+ zxid (0x[0-9a-f]+) (\w+)(?: (.*))?$")


def zk_txns(text, workers):
    """(zxid, kind, session, path, data) of the transactions on znodes under
    the workers path in one TxnLogToolkit dump; closeSession gives one entry
    per ephemeral znode it deleted."""
    out = []
    cur = None
    entries = []
    for line in text.split("\n"):
        m = TXN_LINE.match(line)
        if m:
            if cur is not None:
                entries.append(cur)
            cur = [m.group(1), int(m.group(2), 16), m.group(3), m.group(4) or ""]
        elif cur is not None:
            cur[3] += "\n" + line
    if cur is not None:
        entries.append(cur)
    for session, zxid, kind, rest in entries:
        if kind == "create" and rest.startswith(workers):
            path, _, tail = rest.partition(",")
            data = tail.split(",[", 1)[0]
            m = re.search(r"\],(true|false),-?\d+\s*$", rest)  # ...,<acl>],<ephemeral>,<parent cversion>
            if m and m.group(1) == "true":
                out.append((zxid, "put", session, path, data))
        elif kind == "delete" and rest.lstrip("'").startswith(workers):
            out.append((zxid, "del", session, rest.lstrip("'").strip(), ""))
        elif kind == "closeSession":
            for path in re.findall(r"'([^',}]+)", rest):
                if path.startswith(workers):
                    out.append((zxid, "del", session, path, ""))
        elif kind == "multi":
            # Its operations, ";"-separated ("check:   /path ;create:   /path data ..."):
            # a check changes nothing; any other operation on a worker
            # znode is one this reader does not know how to read.
            for op in rest.split(";"):
                m = re.match(r"\s*(\w+):\s+(\S+)", op)
                if m and m.group(2).startswith(workers) and m.group(1) != "check":
                    raise RuntimeError("a multi transaction changes %s, which this reader does not read: %s"
                                       % (m.group(2), rest[:200]))
    return out


def history_zookeeper(out, prefix, java, classpath, datadirs):
    workers = prefix + "/workers/"
    seen = collections.Counter()
    for d in datadirs:
        mine = set()
        for log in sorted(glob.glob(os.path.join(d, "version-2", "log.*"))):
            text = subprocess.run([java, "-Xmx64m", "-cp", classpath, "-Dlog4j.configuration=file:/dev/null",
                                   "org.apache.zookeeper.server.persistence.TxnLogToolkit", "-d", log],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                                  universal_newlines=True).stdout
            mine.update(zk_txns(text, workers))
        seen.update(mine)
    need = len(datadirs) // 2 + 1
    lines = []
    for zxid, kind, session, path, data in sorted(t for t, n in seen.items() if n >= need):
        w = path[len(workers):]
        if not w.isdigit():
            continue
        if kind == "put":
            lines.append("%d put %s %s %s" % (zxid, w, session, data.replace("\n", " ")))
        else:
            lines.append("%d del %s - -" % (zxid, w))
    with open(out, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    return len(lines)


# --- reading the record (check.py) -------------------------------------------
Tenure = collections.namedtuple("Tenure", "worker identity owner start end start_order end_order")


class Record:
    """The polls and the events of one run; tenures on the boot clock."""

    def __init__(self, polls, events, slack):
        self.polls = sorted(polls, key=lambda p: p[2])  # (send, ack, order, skew), by order
        self.events = events
        self.slack = slack
        orders = [p[2] for p in self.polls]
        self.orders = orders
        self.lo_max = []  # max send over polls[0..i]
        m = float("-inf")
        for p in self.polls:
            m = max(m, p[0])
            self.lo_max.append(m)
        by_time = sorted((p[0], p[3]) for p in self.polls)
        self.send_times = [x[0] for x in by_time]
        self.skews = [x[1] for x in by_time]
        self.skew_range = max(self.skews) - min(self.skews) if self.skews else 0.0
        self.hi_min = [0.0] * len(self.polls)  # min ack over polls[i..]
        m = float("inf")
        for i in range(len(self.polls) - 1, -1, -1):
            m = min(m, self.polls[i][1])
            self.hi_min[i] = m

    def after(self, order):
        """A time before which the change numbered ORDER had not happened."""
        k = bisect.bisect_left(self.orders, order)  # polls[:k] saw less than order
        return (self.lo_max[k - 1] if k > 0 else float("-inf")) - self.slack

    def before(self, order):
        """A time by which the change numbered ORDER had happened."""
        k = bisect.bisect_left(self.orders, order)  # polls[k:] saw order or more
        return (self.hi_min[k] if k < len(self.polls) else float("inf")) + self.slack

    def tenures(self):
        """Every tenure, the widest interval the record allows."""
        open_ = {}
        out = []
        for order, kind, worker, owner, value in self.events:
            if kind == "put":
                if worker in open_:  # (a put without a del: cannot happen)
                    o = open_.pop(worker)
                    out.append(Tenure(worker, o[2], o[1], self.after(o[0]), self.before(order), o[0], order))
                open_[worker] = (order, owner, value)
            elif worker in open_:
                o = open_.pop(worker)
                out.append(Tenure(worker, o[2], o[1], self.after(o[0]), self.before(order), o[0], order))
        for worker, o in open_.items():
            out.append(Tenure(worker, o[2], o[1], self.after(o[0]), float("inf"), o[0], None))
        return sorted(out, key=lambda t: (t.worker, t.start_order))

    def skew(self, t):
        """CLOCK_REALTIME - CLOCK_BOOTTIME near boot time t (the read nearest in
        time), and how far it moved over the run."""
        if not self.polls:
            return 0.0, 0.0
        k = min(bisect.bisect_left(self.send_times, t), len(self.send_times) - 1)
        return self.skews[k], self.skew_range


def load(polls_file, events_file, coordinator):
    polls, events = [], []
    with open(polls_file) as f:
        for line in f:
            p = line.split()
            if len(p) == 4:
                polls.append((float(p[0]), float(p[1]), int(p[2]), float(p[3])))
    with open(events_file) as f:
        for line in f:
            p = line.rstrip("\n").split(" ", 4)
            if len(p) == 5:
                events.append((int(p[0]), p[1], int(p[2]), p[3], p[4]))
    events.sort(key=lambda e: (e[0], e[1] != "del"))  # a del before a put of the same order
    return Record(polls, events, ZK_SLACK_S if coordinator == "zookeeper" else 0.0)


def identity_field(value, name):
    m = re.search(r"(?:^| )%s=(\S*)" % re.escape(name), value)
    return m.group(1) if m else None


def main():
    what, coordinator = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    if what == "poll" and coordinator == "etcd":
        poll_etcd(args[0], args[1], args[2])
    elif what == "poll" and coordinator == "zookeeper":
        poll_zookeeper(args[0], args[1])
    elif what == "history" and coordinator == "etcd":
        print(history_etcd(args[0], args[1], args[2]))
    elif what == "history" and coordinator == "zookeeper":
        print(history_zookeeper(args[0], args[1], args[2], args[3], args[4:]))
    else:
        sys.exit("tenures.py: poll|history etcd|zookeeper ...")


if __name__ == "__main__":
    main()
