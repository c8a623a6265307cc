#!/usr/bin/python3
"""The nemesis suite's checker (test/nemesis/run.sh): reads every attempt the
clients recorded, the faults run.sh applied and the coordinator's record of
tenures (tenures.py), prints the report and exits 1 on any violation.

Usage: check.py [options] CLIENT_FILE...
  --t0 S          Unix seconds (CLOCK_REALTIME) at which the clients started
  --faults FILE   lines "<unix s> start|mid|end|skip <fault#> <kind> <target> <dur> <param> [note...]"
  --clocks FILE   lines "<unix s before> <unix s after> <node> <offset s>": a node's clock offset
                  (libfaketime) changed between the two times; every node starts at 0
  --polls FILE, --events FILE, --coordinator etcd|zookeeper: the coordinator's record (tenures.py)
  --nodes FILE    lines "<node> <field>=<value>...": the node whose worker keys' values (the node
                  identity, src/core/coord_schema.hpp) hold each of those fields with its value
                  (a node: data_directory=...; an SDK process: port=0 runtime=... pid=...)
  --epoch-ms MS   snowflake.epoch of the nodes, Unix milliseconds
  --layout T/W/S  the widths of the ids' time, worker id and sequence fields, from the top bit
                  down, 1 ms units (snowflake.layout; layout.py reads a profile's name too):
                  41/10/12 (twitter) unless given; js-safe is 41/6/6
Times in the client files are CLOCK_BOOTTIME seconds (client.py; the SDK
members' from /proc/uptime, sdk_member.js and .py); the fault
and clock logs are in Unix seconds, turned into boot time with the
difference of the two clocks the polls recorded.

Assertions (docs/nemesis.md, "The checks"):
  1. No id acknowledged twice, across every node and every client (an id of
     a batch counts as any other).
  2. Ids of one worker id are ordered by tenure: if an id x was acknowledged
     before the call that returned id y was sent, and both carry the same
     worker id, then x < y; and the ids of one batch increase (under each
     worker id: a batch that a clock failover cut in two goes on under the
     backup worker id, below its first ids).
  3. One holder at a time, from the ids: no id of node A lies, by value,
     between two ids that node B issued under the same worker id over one
     connection, from the first one's send to the second one's answer in
     less than the fencing margin (1 s).
  4. One holder at a time, from the coordinator: every id was issued while
     its node held its worker id in etcd (ZooKeeper). An id's call was
     sent at s and answered at a; its millisecond m says the node's clock
     read at least m before the swap that issued it, so the swap came after
     epoch + m - (the node's largest clock offset during the call). The
     swap lies in [max(s, that), a]; the node held the worker id at some
     time there, or the id is a violation. (Not "at a": an answer delayed
     by a fault after the swap, a node stopped while it answers, is no
     fault of the id.)
  5. No id ahead of its node's clock: that lower bound of the swap is not
     after the answer (a node issues ids only at or below its clock).
  6. Every id within the layout: 0 <= id < 2^(T + W + S) (js-safe: below
     2^53). The fields are read as the layout's (worker id, millisecond:
     layout.py), so an id with bits above them would pass checks 2 to 5 as
     the id below it with those bits cleared; only this check sees them.
A "node" here is whatever the client lines name: a PostgreSQL node
("node<i>", one holder across its restarts: its data directory), or one
process of an SDK member ("sdk<j>.<life>": a holder of its own, its worker
keys told apart by port 0, runtime and pid). The clock log and the fault
schedule name an SDK member ("sdk<j>"), for all its processes.
Worker id tenures are printed twice: derived from the ids (runs of one node's
ids, in order of acknowledgement) and as the coordinator recorded them.

Nothing is asserted about the order of one node's ids across worker ids: a
node with snowflake.clock_backwards = failover (issue 21) whose clock steps
back issues ids under a backup worker id at its clock, below the ids it
issued before the step (the documented trade-off), and a node that loses
its worker id and leases another may too. Under each worker id a node's ids
still increase (2), and one holder at a time (3, 4) covers a backup worker
id like any other: the node holds it by a key on its lease (znode).
"""
import argparse
import bisect
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layout  # noqa: E402
import tenures as coord  # noqa: E402

MAX_SHOWN = 10
MARGIN_S = 1.0  # the fencing margin: the larger of 1 s and a tenth of the lease TTL
CLOCK_SLACK_S = 0.005  # the clock offset file and the realtime/boottime difference, read apart

# The run's layout (--layout; twitter unless given): every decoding of an
# id goes through it.
ids = layout.Decoder(layout.TWITTER)


def worker_of(i):
    return ids.worker(i)


def ms_of(i):
    return ids.ms(i)


def parse_result(r):
    """The runs (first, last) of ids of a result, or None for an error."""
    if r.lstrip("-").isdigit():
        i = int(r)
        return [(i, i)]
    if r.startswith("b") and (len(r) == 1 or r[1].isdigit()):
        runs = []
        for part in filter(None, r[1:].split(",")):
            first, n = part.split("+")
            lo = int(first)
            hi = lo + int(n) - 1
            # A run is one millisecond's sequence numbers of one worker id;
            # split one that is not (a buggy batch) where the worker id or
            # the millisecond changes.
            while lo >> ids.worker_shift != hi >> ids.worker_shift:
                end = lo | ids.sequence_mask
                runs.append((lo, end))
                lo = end + 1
            runs.append((lo, hi))
        return runs
    return None


def member_of(node):
    """The name the fault schedule and the clock log give a node or SDK
    member: "sdk0" for its process "sdk0.2"."""
    return node.split(".", 1)[0]


def count(runs):
    return sum(hi - lo + 1 for lo, hi in runs)


class Offsets:
    """Each node's clock offset over time, from the clock log."""

    def __init__(self, path, to_boot):
        self.changes = collections.defaultdict(list)  # node -> [(before, after, offset)]
        if path:
            with open(path) as f:
                for line in f:
                    p = line.split()
                    if len(p) == 4:
                        self.changes[p[2]].append((to_boot(float(p[0])), to_boot(float(p[1])), float(p[3])))
        for v in self.changes.values():
            v.sort()

    def largest(self, node, a, b):
        """The largest offset the node's clock can have had during [a, b]."""
        prev = 0.0  # in effect when the window began
        during = []
        for before, after, off in self.changes.get(node, ()):
            if after < a:
                prev = off
            elif before <= b:
                during.append(off)
        return max([prev] + during)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t0", type=float, required=True)
    ap.add_argument("--faults", required=True)
    ap.add_argument("--clocks")
    ap.add_argument("--polls")
    ap.add_argument("--events")
    ap.add_argument("--coordinator", default="etcd")
    ap.add_argument("--nodes")
    ap.add_argument("--epoch-ms", type=int)
    ap.add_argument("--layout", default=layout.text_of(layout.TWITTER))
    ap.add_argument("clients", nargs="*")
    args = ap.parse_args()
    global ids
    try:
        ids = layout.Decoder(layout.parse(args.layout))
    except ValueError as e:
        ap.error("--layout: %s" % e)

    # --- the coordinator's record, and the clocks --------------------------
    record = None
    record_problem = None
    if args.polls and args.events:
        try:
            record = coord.load(args.polls, args.events, args.coordinator)
            if not record.polls:
                record_problem = "no read of the coordinator succeeded during the run"
        except OSError as e:
            record_problem = str(e)
    else:
        record_problem = "not given (--polls, --events)"
    if record is not None and record.polls:
        skew_of = lambda t_real: record.skew(t_real - record.polls[0][3])[0]  # noqa: E731
        skew_drift = record.skew(0)[1]
    else:
        here = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
        skew_of = lambda t_real: here  # noqa: E731
        skew_drift = 0.0

    def to_boot(t_real):
        return t_real - skew_of(t_real)

    t0 = to_boot(args.t0)
    rel = lambda t: t - t0  # noqa: E731
    offsets = Offsets(args.clocks, to_boot)

    # --- the attempts --------------------------------------------------------
    attempts = []  # (sent, answered, node, label, pid, result)
    calls = []  # acknowledged: (sent, answered, node, label, pid, runs)
    for path in args.clients:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) != 6:
                    continue  # a line cut by the end of the run
                a = (float(p[0]), float(p[1]), p[2], p[3], p[4], p[5])
                attempts.append(a)
                runs = parse_result(p[5])
                if runs is not None:
                    calls.append(a[:5] + (runs,))
    nodes = sorted({a[2] for a in attempts}, key=lambda n: (len(n), n))
    n_ids = sum(count(c[5]) for c in calls)

    faults = []  # (start, end, fault#, kind, target, note)
    opened = {}
    with open(args.faults) as f:
        for line in f:
            p = line.split()
            if len(p) < 7:
                continue
            t, what, num, kind, target = to_boot(float(p[0])), p[1], p[2], p[3], p[4]
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
            if s <= b + 1 and e >= a - 1 and (node is None or target == member_of(node) or
                                               not target.startswith(("node", "sdk"))):
                out.append("#%s %s %s [%.1f, %.1f]" % (num, kind, target, rel(s), rel(e)))
        return ", ".join(out) or "none"

    def call_text(c):
        return "%s/%s (sent at %.3f s, answered at %.3f s)" % (c[2], c[3], rel(c[0]), rel(c[1]))

    violations = 0
    kinds = collections.Counter()
    for c in calls:
        kinds["single" if c[3].isdigit() else c[3].rstrip("0123456789")] += count(c[5])
    print("# nemesis report: %d attempts, %d calls answered with %d ids (%s), %d nodes, %d faults"
          % (len(attempts), len(calls), n_ids,
             ", ".join("%s %d" % kv for kv in sorted(kinds.items())) or "none", len(nodes), len(faults)))
    print("# layout %s: time %d, worker %d, sequence %d bits (worker ids 0 to %d, %d ids a millisecond each,"
          " every id below 2^%d)" % (layout.text_of(ids.layout), ids.layout.time_bits, ids.layout.worker_bits,
                                     ids.layout.sequence_bits, ids.worker_mask, ids.per_ms, layout.bits(ids.layout)))

    # --- 1. duplicates ------------------------------------------------------
    all_runs = sorted((lo, hi, k) for k, c in enumerate(calls) for lo, hi in c[5])
    overlaps = []  # (first dup, last dup, call a, call b)
    top, top_call = None, None
    for lo, hi, k in all_runs:
        if top is not None and lo <= top:
            overlaps.append((lo, min(hi, top), top_call, k))
        if top is None or hi > top:
            top, top_call = hi, k
    dup_ids, end = 0, None
    for lo, hi, _, _ in sorted(overlaps):
        if end is not None and lo <= end:
            lo = end + 1
        if hi >= lo:
            dup_ids += hi - lo + 1
            end = hi
    if overlaps:
        violations += dup_ids
        print("not ok - duplicate ids: %d" % dup_ids)
        for lo, hi, ka, kb in overlaps[:MAX_SHOWN]:
            what = "id %d" % lo if lo == hi else "ids %d to %d (%d)" % (lo, hi, hi - lo + 1)
            print("#   %s (worker %d, ms %d): %s; %s" % (what, worker_of(lo), ms_of(lo),
                                                       call_text(calls[ka]), call_text(calls[kb])))
            t = min(calls[ka][1], calls[kb][1])
            print("#     faults around: %s" % faults_near(t - 15, t))
    else:
        print("ok - no duplicate id among %d acknowledged ids" % n_ids)

    # --- 6. every id within the layout ----------------------------------------
    # (A run is consecutive values: those below 0 and those at or above
    # 2^bits are counted.)
    beyond = []  # (ids, first such id, call)
    for c in calls:
        n = sum(max(0, min(hi, -1) - lo + 1) + max(0, hi - max(lo, ids.limit) + 1) for lo, hi in c[5])
        if n:
            beyond.append((n, next(x for lo, hi in c[5] for x in (lo, hi) if not ids.fits(x)), c))
    if beyond:
        n = sum(b[0] for b in beyond)
        violations += n
        print("not ok - ids within the layout (%s: 0 <= id < 2^%d): %d id(s) outside it"
              % (layout.text_of(ids.layout), layout.bits(ids.layout), n))
        for cnt, y, c in beyond[:MAX_SHOWN]:
            print("#   %d id(s) of %s, e.g. id %d (2^%d = %d; read as worker %d, ms %d, sequence %d)"
                  % (cnt, call_text(c), y, layout.bits(ids.layout), ids.limit, worker_of(y), ms_of(y),
                     ids.sequence(y)))
            print("#     faults around: %s" % faults_near(c[0] - 5, c[1]))
    else:
        print("ok - ids within the layout (%s): each of %d ids is below 2^%d"
              % (layout.text_of(ids.layout), n_ids, layout.bits(ids.layout)))

    # --- 2. order by tenure, and within a batch --------------------------------
    by_worker = collections.defaultdict(list)  # w -> [(sent, answered, node, min, max)]
    unordered = []
    for c in calls:
        per = {}
        for lo, hi in c[5]:
            w = worker_of(lo)
            m = per.get(w)
            per[w] = (lo, hi) if m is None else (min(m[0], lo), max(m[1], hi))
        for w, (lo, hi) in per.items():
            by_worker[w].append((c[0], c[1], c[2], lo, hi))
        # In order under each worker id: a batch during which its node
        # failed over to a backup worker id (clock_backwards = failover, a
        # clock step back) goes on under the backup at the earlier clock,
        # below its first ids, as docs/reference.md says.
        last = {}
        for lo, hi in c[5]:
            w = worker_of(lo)
            if w in last and lo <= last[w]:
                unordered.append(c)
                break
            last[w] = hi
    cross = collections.OrderedDict()  # offending earlier call -> [count, first later call]
    same = collections.OrderedDict()
    tenures = {}
    for w, ws in sorted(by_worker.items()):
        acked = sorted(ws, key=lambda c: c[1])
        runs = []  # tenures from the ids: [node, first answer, last answer, calls]
        for sent, answered, node, lo, hi in acked:
            if runs and runs[-1][0] == node:
                runs[-1][2] = answered
                runs[-1][3] += 1
            else:
                runs.append([node, answered, answered, 1])
        tenures[w] = runs
        # Sweep: calls in order of sending; the largest id acknowledged
        # before each was sent must lie below its smallest id.
        k, best = 0, None
        for c in sorted(ws):
            while k < len(acked) and acked[k][1] < c[0]:
                if best is None or acked[k][4] > best[4]:
                    best = acked[k]
                k += 1
            if best is not None and best[4] > c[3]:
                table = cross if best[2] != c[2] else same
                if best not in table:
                    table[best] = [0, c]
                table[best][0] += 1

    # --- 3. one holder at a time, from the ids ---------------------------------
    # Within one connection of node B (one life of its postmaster) under
    # worker id w: two runs of ids next to each other by value, from calls
    # that together took less than MARGIN_S from the first send to the last
    # answer. B cannot have lost w and got it back in between: a node stops
    # issuing at least the fencing margin before the coordinator can expire
    # its lease, and then another node must hold w and lose it before B can
    # have it again. So an id of another node between those two runs was
    # issued under w while B held it.
    conns = collections.defaultdict(list)  # (node, label, pid, w) -> [(lo, hi, sent, answered)]
    for c in calls:
        for lo, hi in c[5]:
            conns[(c[2], c[3], c[4], worker_of(lo))].append((lo, hi, c[0], c[1]))
    gaps = collections.defaultdict(list)  # (w, node B) -> [(gap lo, gap hi, run below, run above, label)]
    for key, lst in conns.items():
        lst.sort()
        for a, b in zip(lst, lst[1:]):
            if a[1] + 1 < b[0] and max(a[3], b[3]) - min(a[2], b[2]) < MARGIN_S:
                gaps[(key[3], key[0])].append((a[1] + 1, b[0] - 1, a, b, key[1]))
    merged = collections.defaultdict(list)  # w -> [(node B, [lo...], [hi...], [example...])]
    for (w, node_b), lst in gaps.items():
        lst.sort()
        los, his, exs = [], [], []
        for g in lst:
            if his and g[0] <= his[-1] + 1:
                his[-1] = max(his[-1], g[1])
            else:
                los.append(g[0])
                his.append(g[1])
                exs.append(g)
        merged[w].append((node_b, los, his, exs))
    inside = collections.OrderedDict()  # (node A, node B, w) -> [count, example]
    for c in calls:
        for lo, hi in c[5]:
            w = worker_of(lo)
            for node_b, los, his, exs in merged.get(w, ()):
                if node_b == c[2]:
                    continue
                k = bisect.bisect_left(his, lo)
                while k < len(los) and los[k] <= hi:
                    n = min(hi, his[k]) - max(lo, los[k]) + 1
                    if n > 0:
                        ex = inside.setdefault((c[2], node_b, w), [0, None])
                        ex[0] += n
                        if ex[1] is None:
                            ex[1] = (max(lo, los[k]), c, exs[k])
                    k += 1
    if inside:
        n = sum(v[0] for v in inside.values())
        violations += n
        print("not ok - one holder at a time (ids): %d id(s) issued under a worker id while another node held it" % n)
        for (na, nb, w), (cnt, (y, c, g)) in list(inside.items())[:MAX_SHOWN]:
            z1, z2 = g[2], g[3]
            print("#   worker %d: %d id(s) of %s inside %s's tenure, e.g. id %d (%s, ms %d) between %s's ids %d and"
                  " %d (from %.3f s to %.3f s, client %s)"
                  % (w, cnt, na, nb, y, call_text(c), ms_of(y), nb, z1[1], z2[0],
                     rel(min(z1[2], z2[2])), rel(max(z1[3], z2[3])), g[4]))
            print("#     faults around: %s" % faults_near(c[0] - 5, c[1]))
    else:
        print("ok - one holder at a time (ids): no id inside another node's unbroken run of the same worker id")

    # --- 4. and 5. one holder at a time, from the coordinator --------------------
    holders = []  # (node, [(field, value)]): a worker key whose value has every field=value is that node's
    if args.nodes:
        with open(args.nodes) as f:
            for line in f:
                p = line.split()
                if len(p) >= 2 and all("=" in x for x in p[1:]):
                    holders.append((p[0], [tuple(x.split("=", 1)) for x in p[1:]]))

    def holder_of(identity):
        for node, fields in holders:
            if all(coord.identity_field(identity, field) == value for field, value in fields):
                return node
        return None

    coord_tenures = collections.defaultdict(list)  # (node, w) -> [Tenure]
    by_w_tenures = collections.defaultdict(list)
    unknown = collections.Counter()
    if record is not None:
        for t in record.tenures():
            node = holder_of(t.identity)
            if node is None:
                unknown[t.identity[:120]] += 1
                node = "?"
            coord_tenures[(node, t.worker)].append(t)
            by_w_tenures[t.worker].append((node, t))
    outside = collections.OrderedDict()  # (node, w) -> [ids, example]
    future = collections.OrderedDict()  # node -> [ids, example]
    checked = 0
    if record_problem is None and args.epoch_ms is not None:
        for c in calls:
            sent, answered, node = c[0], c[1], c[2]
            off = offsets.largest(member_of(node), sent - 1, answered + 1)
            for lo, hi in c[5]:
                w = worker_of(lo)
                unix = (args.epoch_ms + ms_of(lo)) / 1000.0
                swap_after = to_boot(unix - off) - CLOCK_SLACK_S - skew_drift
                earliest = max(sent, swap_after)
                checked += hi - lo + 1
                if swap_after > answered:
                    ex = future.setdefault(node, [0, None])
                    ex[0] += hi - lo + 1
                    if ex[1] is None:
                        ex[1] = (lo, c, swap_after, off)
                if not any(t.start <= answered and t.end >= earliest for t in coord_tenures.get((node, w), ())):
                    ex = outside.setdefault((node, w), [0, None])
                    ex[0] += hi - lo + 1
                    if ex[1] is None:
                        ex[1] = (lo, c, earliest)

    def tenure_text(node, t):
        end = "now" if t.end == float("inf") else "%.3f" % rel(t.end)
        return "%s [%.3f, %s]" % (node, rel(t.start), end)

    if record_problem is not None:
        violations += 1
        print("not ok - one holder at a time (coordinator): the coordinator's record of tenures is missing: %s"
              % record_problem)
    elif args.epoch_ms is None:
        violations += 1
        print("not ok - one holder at a time (coordinator): no --epoch-ms: the ids' times are unknown")
    elif outside:
        n = sum(v[0] for v in outside.values())
        violations += n
        print("not ok - one holder at a time (coordinator): %d id(s) issued while their node did not hold"
              " their worker id in %s" % (n, args.coordinator))
        for (node, w), (cnt, (y, c, earliest)) in list(outside.items())[:MAX_SHOWN]:
            mine = coord_tenures.get((node, w), [])
            held = [tenure_text(nn, t) for nn, t in by_w_tenures.get(w, ())
                    if t.start <= c[1] and t.end >= earliest]
            print("#   worker %d: %d id(s) of %s, e.g. id %d (ms %d) from %s, issued in [%.3f, %.3f] s;"
                  " %s's tenures of worker %d: %s; held then by: %s"
                  % (w, cnt, node, y, ms_of(y), call_text(c), rel(earliest), rel(c[1]), node, w,
                     ", ".join(tenure_text(node, t) for t in mine) or "none", ", ".join(held) or "nobody"))
            print("#     faults around: %s" % faults_near(earliest - 5, c[1]))
    else:
        print("ok - one holder at a time (coordinator): each of %d ids was issued while its node held its worker"
              " id in %s" % (checked, args.coordinator))
    if record_problem is None and args.epoch_ms is not None:
        if future:
            n = sum(v[0] for v in future.values())
            violations += n
            print("not ok - no id ahead of its node's clock: %d id(s) whose millisecond its node's clock had not"
                  " reached when the id was answered" % n)
            for node, (cnt, (y, c, swap_after, off)) in list(future.items())[:MAX_SHOWN]:
                print("#   %s: %d id(s), e.g. id %d (ms %d) from %s: the clock (offset %+.3f s) reached it at"
                      " %.3f s" % (node, cnt, y, ms_of(y), call_text(c), off, rel(swap_after)))
        else:
            print("ok - no id ahead of its node's clock")

    for table, what in ((cross, "tenure order (an earlier holder's id above a later holder's id)"),
                        (same, "order within one node's tenure (a node's id above its own later id)")):
        if table:
            n = sum(v[0] for v in table.values())
            violations += n
            print("not ok - %s: %d calls below an id acknowledged before they were sent" % (what, n))
            for (s_x, a_x, node_x, lo_x, x), (cnt, (s_y, a_y, node_y, y, hi_y)) in list(table.items())[:MAX_SHOWN]:
                print("#   worker %d: id %d from %s (acknowledged at %.3f s, ms %d) is above %d later call(s),"
                      " the first with id %d from %s (sent at %.3f s, ms %d, %d ms lower)"
                      % (worker_of(x), x, node_x, rel(a_x), ms_of(x), cnt, y, node_y, rel(s_y), ms_of(y),
                         ms_of(x) - ms_of(y)))
                print("#     faults around: %s" % faults_near(a_x - 15, s_y))
        else:
            print("ok - %s: none" % what)
    if unordered:
        violations += len(unordered)
        print("not ok - ids of one batch increase: %d batch(es) not in increasing order" % len(unordered))
        for c in unordered[:MAX_SHOWN]:
            print("#   %s" % call_text(c))
    else:
        print("ok - ids of one batch increase")

    # --- tenures ------------------------------------------------------------
    handovers = sum(max(0, len(r) - 1) for r in tenures.values())
    print("# worker id tenures (from the ids): %d hand-overs between nodes" % handovers)
    for w, runs in sorted(tenures.items()):
        seq = " -> ".join("%s(%d)" % (r[0], r[3]) for r in runs)
        if len(seq) > 300:
            seq = seq[:300] + " ..."
        print("#   worker %d: %d tenure(s): %s" % (w, len(runs), seq))
    if record is not None:
        print("# worker id tenures (%s: the worker keys' lives, s after the clients started): %d reads"
              " of the %s during the run" % (args.coordinator, len(record.polls),
                                             "revision" if args.coordinator == "etcd" else "zxid"))
        for w, lst in sorted(by_w_tenures.items()):
            seq = " -> ".join(tenure_text(n, t) for n, t in lst)
            if len(seq) > 400:
                seq = seq[:400] + " ..."
            print("#   worker %d: %d tenure(s): %s" % (w, len(lst), seq))
        for value, n in unknown.items():
            print("#   (%d tenure(s) of a holder no line of the nodes file names: %s)" % (n, value))

    # --- worker ids per node ---------------------------------------------------
    # A node with more than its own worker id: a lease lost and another
    # taken, or a backup worker id after its clock stepped back (failover).
    print("# worker ids each node issued ids under (ids):")
    per_node = collections.defaultdict(collections.Counter)
    for c in calls:
        for lo, hi in c[5]:
            per_node[c[2]][worker_of(lo)] += hi - lo + 1
    for node in nodes:
        print("#   %-6s %s" % (node, " ".join("%d(%d)" % kv for kv in sorted(per_node[node].items())) or "-"))

    # --- availability -------------------------------------------------------
    print("# availability: node, attempts, answered with ids, share, refusals by SQLSTATE,"
          " longest time without an id (an SDK process: within its life, from its first attempt to its last)")
    t_end = max((a[1] for a in attempts), default=t0)
    by_node = collections.defaultdict(list)
    for a in attempts:
        by_node[a[2]].append(a)
    for node in nodes:
        mine = by_node[node]
        ok_times = sorted(a[1] for a in mine if parse_result(a[5]) is not None)
        codes = collections.Counter(a[5][1:] if a[5].startswith("E") else a[5]
                                    for a in mine if parse_result(a[5]) is None)
        gaps_ = []
        prev, last = t0, t_end
        if "." in node and mine:  # an SDK process: its life only
            prev, last = min(a[0] for a in mine), max(a[1] for a in mine)
        for t in ok_times + [last]:
            gaps_.append((t - prev, prev))
            prev = t
        gap, at = max(gaps_) if gaps_ else (0.0, t0)
        share = 100.0 * len(ok_times) / len(mine) if mine else 0.0
        print("#   %-6s %7d attempts %7d ok %5.1f%%  %-28s longest %5.1f s from %.1f s (faults: %s)"
              % (node, len(mine), len(ok_times), share,
                 ",".join("%s:%d" % kv for kv in sorted(codes.items())) or "-",
                 gap, rel(at), faults_near(at, at + gap, node)))
        if not ok_times and "." in node:
            print("#   (%s acknowledged no id at all: an SDK process that held no worker id in its life)" % node)
        elif not ok_times:
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
