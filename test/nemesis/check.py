#!/usr/bin/python3
"""The nemesis suite's checker (test/nemesis/run.sh): reads every attempt the
clients recorded and the faults run.sh applied, prints the report and exits 1
on any violation.

Usage: check.py T0 FAULT_LOG CLIENT_FILE...
  T0: Unix seconds at which the clients started (times print relative to it).
  FAULT_LOG: lines "<unix s> start|mid|end|skip <fault#> <kind> <target> <dur> <param> [note...]".

Assertions (docs/nemesis.md):
  1. No id acknowledged twice, across every node.
  2. Ids of one worker id are ordered by tenure: if an id x was acknowledged
     before the call that returned id y was sent, and both carry the same
     worker id, then x < y. Whatever node issued them: the earlier holder's
     ids lie below the later holder's first id (x and y on different nodes:
     a tenure violation), and one node's ids under one worker id increase
     (same node). The time of a call is the interval from its send to its
     acknowledgement, so an acknowledgement delayed by a fault (a node
     stopped after issuing, before answering) does not count against it.
  3. One holder at a time: no id of node A lies, by value, between two ids
     that node B issued under the same worker id over one connection
     within less than the fencing margin (1 s, from the first one's send to
     the second one's acknowledgement): B held the worker id throughout, so
     A's id was issued under a worker id A did not hold (issue 16's
     interleaving: an id of the earlier holder inside the later holder's
     range).
Worker id tenures are derived from the ids: per worker id, acknowledged ids
in order of acknowledgement, a tenure being a run of them from one node.

Nothing is asserted about the order of one node's ids across worker ids: a
node with snowflake.clock_backwards = failover (issue 21) whose clock steps
back issues ids under a backup worker id at its clock, below the ids it
issued before the step (the documented trade-off), and a node that loses
its worker id and leases another may too. Under each worker id a node's ids
still increase (assertion 2), and one holder at a time (3) covers a backup
worker id like any other: the node holds it by a claim in the coordinator.
"""
import bisect
import collections
import sys

WORKER_SHIFT, WORKER_MASK, TIME_SHIFT = 12, 1023, 22
MAX_SHOWN = 10
MARGIN_S = 1.0  # the fencing margin: the larger of 1 s and a tenth of the lease TTL


def worker_of(i):
    return (i >> WORKER_SHIFT) & WORKER_MASK


def ms_of(i):
    return i >> TIME_SHIFT


def main():
    t0 = float(sys.argv[1])
    fault_log = sys.argv[2]
    rel = lambda t: t - t0  # noqa: E731

    attempts = []  # (sent, answered, node, client, pid, result)
    for path in sys.argv[3:]:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) != 6:
                    continue  # a line cut by the end of the run
                attempts.append((float(p[0]), float(p[1]), p[2], p[3], p[4], p[5]))
    ids = [(a[0], a[1], a[2], a[3], int(a[5])) for a in attempts if a[5].lstrip("-").isdigit()]
    nodes = sorted({a[2] for a in attempts}, key=lambda n: (len(n), n))

    faults = []  # (start, end, fault#, kind, target, note)
    opened = {}
    with open(fault_log) as f:
        for line in f:
            p = line.split()
            if len(p) < 7:
                continue
            t, what, num, kind, target = float(p[0]), p[1], p[2], p[3], p[4]
            if what == "skip":
                faults.append((t, t, num, kind, target, "SKIPPED: " + " ".join(p[7:])))
            elif what == "start":
                opened[num] = (t, kind, target, " ".join(p[7:]))
            elif what == "end" and num in opened:
                s, kind, target, note = opened.pop(num)
                faults.append((s, t, num, kind, target, note))
    for num, (s, kind, target, note) in opened.items():
        faults.append((s, float("inf"), num, kind, target, note))
    faults.sort()

    def faults_near(a, b, node=None):
        out = []
        for s, e, num, kind, target, note in faults:
            if note.startswith("SKIPPED"):
                continue
            if s <= b + 1 and e >= a - 1 and (node is None or target == node or not target.startswith("node")):
                out.append("#%s %s %s [%.1f, %.1f]" % (num, kind, target, rel(s), rel(e)))
        return ", ".join(out) or "none"

    violations = 0
    print("# nemesis report: %d attempts, %d ids acknowledged, %d nodes, %d faults"
          % (len(attempts), len(ids), len(nodes), len(faults)))

    # --- 1. duplicates ------------------------------------------------------
    by_id = collections.defaultdict(list)
    for sent, answered, node, client, i in ids:
        by_id[i].append((answered, node, client))
    dups = {i: v for i, v in by_id.items() if len(v) > 1}
    if dups:
        violations += len(dups)
        print("not ok - duplicate ids: %d" % len(dups))
        for i in sorted(dups)[:MAX_SHOWN]:
            where = "; ".join("%s/%s at %.3f s" % (n, c, rel(t)) for t, n, c in sorted(dups[i]))
            print("#   id %d (worker %d, ms %d): %s" % (i, worker_of(i), ms_of(i), where))
            t = min(x[0] for x in dups[i])
            print("#     faults around: %s" % faults_near(t - 15, t))
    else:
        print("ok - no duplicate id among %d acknowledged ids" % len(ids))

    # --- 2. order by tenure -------------------------------------------------
    by_worker = collections.defaultdict(list)
    for sent, answered, node, client, i in ids:
        by_worker[worker_of(i)].append((sent, answered, node, i))
    cross = collections.OrderedDict()  # offending earlier id -> [count, first later call]
    same = collections.OrderedDict()
    tenures = {}
    for w, calls in sorted(by_worker.items()):
        acked = sorted(calls, key=lambda c: c[1])
        # Tenures: runs of one node in order of acknowledgement.
        runs = []
        for sent, answered, node, i in acked:
            if runs and runs[-1][0] == node:
                r = runs[-1]
                r[2], r[3], r[4], r[5] = answered, r[3] + 1, min(r[4], i), max(r[5], i)
            else:
                runs.append([node, answered, answered, 1, i, i])
        tenures[w] = runs
        # Sweep: calls in order of sending; the largest id acknowledged
        # before each was sent must lie below its id.
        k, best = 0, None
        for sent, answered, node, i in sorted(calls):
            while k < len(acked) and acked[k][1] < sent:
                if best is None or acked[k][3] > best[3]:
                    best = acked[k]
                k += 1
            if best is not None and best[3] > i:
                table = cross if best[2] != node else same
                key = best
                if key not in table:
                    table[key] = [0, (sent, answered, node, i)]
                table[key][0] += 1
    # --- 3. one holder at a time ---------------------------------------------
    # An id y of node A inside a stretch that node B issued under the same
    # worker id without a break: z1 < y < z2, z1 and z2 from one connection
    # of B (so one life of B's postmaster), z2 acknowledged less than MARGIN_S
    # after z1 was sent. B cannot have lost the worker id and got it back in
    # between: a node stops issuing at least the fencing margin (1 s) before
    # etcd can expire its lease, and then another node must hold the id and
    # lose it before B can have it again. So A issued y while B held the id.
    conns = collections.defaultdict(list)  # (node, client, pid) -> [(id, sent, answered)]
    pids_of = {(a[2], a[3], a[0]): a[4] for a in attempts}
    for sent, answered, node, client, i in ids:
        conns[(node, client, pids_of[(node, client, sent)], worker_of(i))].append((i, sent, answered))
    by_w = collections.defaultdict(list)
    for key, lst in conns.items():
        lst.sort()
        by_w[key[3]].append((key, lst, [x[0] for x in lst]))
    inside = collections.OrderedDict()  # (node A, node B, w) -> [count, example]
    for sent, answered, node, client, y in ids:
        w = worker_of(y)
        if len(by_w[w]) < 2:
            continue
        for key, lst, values in by_w[w]:
            if key[0] == node:
                continue
            k = bisect.bisect_left(values, y)
            if 0 < k < len(values) and values[k] != y:
                z1, z2 = lst[k - 1], lst[k]
                if z2[2] - z1[1] < MARGIN_S:
                    ex = inside.setdefault((node, key[0], w), [0, None])
                    ex[0] += 1
                    if ex[1] is None:
                        ex[1] = (y, sent, answered, z1, z2)
                    break
    if inside:
        n = sum(v[0] for v in inside.values())
        violations += n
        print("not ok - one holder at a time: %d id(s) issued under a worker id while another node held it" % n)
        for (na, nb, w), (count, (y, s_y, a_y, z1, z2)) in list(inside.items())[:MAX_SHOWN]:
            print("#   worker %d: %d id(s) of %s inside %s's tenure, e.g. id %d (sent at %.3f s, acknowledged at"
                  " %.3f s, ms %d) between %s's ids %d and %d (sent at %.3f s, acknowledged at %.3f s)"
                  % (w, count, na, nb, y, rel(s_y), rel(a_y), ms_of(y), nb, z1[0], z2[0], rel(z1[1]), rel(z2[2])))
            print("#     faults around: %s" % faults_near(s_y - 5, a_y))
    else:
        print("ok - one holder at a time: no id inside another node's unbroken run of the same worker id")

    for table, what in ((cross, "tenure order (an earlier holder's id above a later holder's id)"),
                        (same, "order within one node's tenure (a node's id above its own later id)")):
        if table:
            n = sum(v[0] for v in table.values())
            violations += n
            print("not ok - %s: %d ids below an id acknowledged before they were asked for" % (what, n))
            for (s_x, a_x, node_x, x), (count, (s_y, a_y, node_y, y)) in list(table.items())[:MAX_SHOWN]:
                print("#   worker %d: id %d from %s (acknowledged at %.3f s, ms %d) is above %d later id(s),"
                      " the first %d from %s (sent at %.3f s, ms %d, %d ms lower)"
                      % (worker_of(x), x, node_x, rel(a_x), ms_of(x), count, y, node_y, rel(s_y), ms_of(y),
                         ms_of(x) - ms_of(y)))
                print("#     faults around: %s" % faults_near(a_x - 15, s_y))
        else:
            print("ok - %s: none" % what)

    # --- tenures ------------------------------------------------------------
    handovers = sum(max(0, len(r) - 1) for r in tenures.values())
    print("# worker id tenures (from the ids): %d hand-overs between nodes" % handovers)
    for w, runs in sorted(tenures.items()):
        seq = " -> ".join("%s(%d)" % (r[0], r[3]) for r in runs)
        if len(seq) > 300:
            seq = seq[:300] + " ..."
        print("#   worker %d: %d tenure(s): %s" % (w, len(runs), seq))

    # --- worker ids per node ---------------------------------------------------
    # A node with more than its own worker id: a lease lost and another
    # taken, or a backup worker id after its clock stepped back (failover).
    print("# worker ids each node issued ids under (ids):")
    per_node = collections.defaultdict(collections.Counter)
    for sent, answered, node, client, i in ids:
        per_node[node][worker_of(i)] += 1
    for node in nodes:
        print("#   %-6s %s" % (node, " ".join("%d(%d)" % kv for kv in sorted(per_node[node].items())) or "-"))

    # --- availability -------------------------------------------------------
    print("# availability: node, attempts, answered with an id, share, refusals by SQLSTATE,"
          " longest time without an id")
    t_end = max((a[1] for a in attempts), default=t0)
    for node in nodes:
        mine = [a for a in attempts if a[2] == node]
        ok_times = sorted(a[1] for a in mine if a[5].lstrip("-").isdigit())
        codes = collections.Counter(a[5] for a in mine if not a[5].lstrip("-").isdigit())
        gaps = []
        prev = t0
        for t in ok_times + [t_end]:
            gaps.append((t - prev, prev))
            prev = t
        gap, at = max(gaps) if gaps else (0.0, t0)
        share = 100.0 * len(ok_times) / len(mine) if mine else 0.0
        print("#   %-6s %7d attempts %7d ids %5.1f%%  %-28s longest %5.1f s from %.1f s (faults: %s)"
              % (node, len(mine), len(ok_times), share,
                 ",".join("%s:%d" % kv for kv in sorted(codes.items())) or "-",
                 gap, rel(at), faults_near(at, at + gap, node)))
        if not ok_times:
            print("#   (%s acknowledged no id at all: a node asking for a fixed worker id that"
                  " another node held throughout the run)" % node)

    print("# fault schedule as applied (s after the clients started):")
    for s, e, num, kind, target, note in faults:
        print("#   #%-3s %7.1f %7.1f  %-21s %-6s %s" % (num, rel(s), rel(e), kind, target, note))

    if violations:
        print("not ok - nemesis: %d violation(s)" % violations)
        return 1
    print("ok - nemesis: no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
