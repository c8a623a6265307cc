#!/usr/bin/python3
"""The nemesis checker's own test (run.sh runs it first; or on its own:
test/nemesis/check_test.py): check.py on synthetic runs, one with no fault
and one per planted violation, each of which it must report (and only
that one), so that a nemesis run that says "no violation" says it with a
checker that can fail.

The synthetic run: two nodes, node0 and node1, and worker id 5 in etcd:
node0's key from revision 10 until revision 20 (its lease expired), node1's
from revision 21 on. Boot time 1000 s is Unix time 1,800,000,000 s; the
reads of the revision clock come every 50 ms. node0 issues ids (single and
batches) from 1001 s to 1009 s, node1 from 1011 s on; revision 20 is
committed at 1010.0 s, 21 at 1010.5 s.

The sdk_ cases make one of the two nodes an SDK process (issue 30): its
client lines name "sdk0.1" (an SDK member's first process), its worker key
says port 0, a runtime and a pid (as an application process's does), and
the nodes file names it by those fields, as run.sh does.

Every case runs twice: in the twitter layout (41/10/12), and in js-safe
(41/6/6: every id below 2^53, its cases named "js-safe <case>"), with the
ids composed in that layout, batches of one millisecond of it (4,096 ids,
64), and check.py told the layout (--layout), as run.sh tells it the
nodes' (NEMESIS_LAYOUT). So each planted violation must be reported in
either layout, and the clean runs must pass in either: a checker that read
js-safe ids with twitter's widths would find the clean run's ids under
worker ids nobody held (wrong_layout: the clean run read in the other
layout must fail). Two more cases are about the layout: other_worker (node0
answers, in its tenure of worker id 5, an id under the worker id whose top
bit is also set, 37 or 517, which node1 holds) and above_layout (an id with
a bit above the layout's set: 2^53 plus a js-safe id; in twitter, a
negative id, the sign bit set), which only the check "ids within the
layout" sees (in twitter, also the order within node1's tenure, the
negative id being below its earlier ids).

Prints "ok - ..." or "not ok - ..." per case; exits 1 if any case fails.
"""
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import layout  # noqa: E402

LAYOUTS = [("", layout.TWITTER), ("js-safe ", layout.PROFILES["js-safe"])]
L = layout.Decoder(layout.TWITTER)  # the layout of the case that runs (main)
EPOCH_MS = 1735689600000  # 2025-01-01
SKEW = 1800000000.0 - 1000.0  # CLOCK_REALTIME - CLOCK_BOOTTIME
W = 5


def snowflake(boot_s, seq, worker=W, clock_offset=0.0):
    """The id a node whose clock is off by clock_offset issues at boot time boot_s."""
    ms = int((boot_s + SKEW + clock_offset) * 1000) - EPOCH_MS
    return L.compose(ms, worker, seq)


def single(node, label, pid, sent, answered, i):
    return "%.6f %.6f %s %s %s %d" % (sent, answered, node, label, pid, i)


def batch(node, label, pid, sent, answered, first, n):
    return "%.6f %.6f %s %s %s b%d+%d" % (sent, answered, node, label, pid, first, n)


def base_run():
    """Client lines of a run with no fault (by file), the polls, the events."""
    clients = {"node0.1": [], "node0.batch": [], "node1.1": [], "node1.batch": []}
    t = 1001.0
    while t < 1009.0:  # node0: an id every 10 ms, a batch every 200 ms
        clients["node0.1"].append(single("node0", "1", 100, t, t + 0.001, snowflake(t, 0)))
        if int(round(t * 100)) % 20 == 0:
            clients["node0.batch"].append(batch("node0", "batch1", 101, t + 0.002, t + 0.004,
                                                snowflake(t + 0.002, 0), L.per_ms))
        t += 0.01
    t = 1011.0
    while t < 1019.0:
        clients["node1.1"].append(single("node1", "1", 200, t, t + 0.001, snowflake(t, 0)))
        if int(round(t * 100)) % 20 == 0:
            clients["node1.batch"].append(batch("node1", "batch1", 201, t + 0.002, t + 0.004,
                                                snowflake(t + 0.002, 0), L.per_ms))
        t += 0.01
    polls = []
    t = 999.0
    while t < 1020.0:
        rev = 10 if t < 1010.0 else 20 if t < 1010.5 else 21
        polls.append("%.6f %.6f %d %.6f" % (t, t + 0.002, rev, SKEW))
        t += 0.05
    ident = "snowflake-node host=h port=5432 system_identifier=1 started_unix_ms=1 data_directory=/d%d"
    events = ["10 put %d 111 %s" % (W, ident % 0), "20 del %d - -" % W, "21 put %d 222 %s" % (W, ident % 1)]
    return clients, polls, events


NODES = ["node0 data_directory=/d0", "node1 data_directory=/d1"]
SDK_IDENT = ("snowflake-node host=h port=0 system_identifier=0 instance=5d4f started_unix_ms=1 data_directory="
             " lease_ttl_ms=5000 runtime=%s pid=%d")


def as_sdk(c, e, node, name="sdk0.1", runtime="node", pid=300, key_pid=None):
    """Makes node ("node0" or "node1") an SDK process: its client lines are
    name's (label sdk-<runtime>, pid), its worker key's value an SDK
    process's identity (pid key_pid, pid by default); returns the nodes
    file's lines."""
    out = {}
    for f, lines in c.items():
        if f.split(".")[0] != node:
            out[f] = lines
            continue
        for x in lines:
            p = x.split()
            p[2], p[3], p[4] = name, "sdk-" + runtime, str(pid)
            out.setdefault(name, []).append(" ".join(p))
    c.clear()
    c.update(out)
    ident = "snowflake-node host=h port=5432 system_identifier=1 started_unix_ms=1 data_directory=/d%s" % node[-1]
    e[:] = [x.replace(ident, SDK_IDENT % (runtime, pid if key_pid is None else key_pid)) for x in e]
    return [x for x in NODES if not x.startswith(node + " ")] + ["%s port=0 runtime=%s pid=%d" % (name, runtime, pid)]


def run_checker(d, clients, polls, events, clocks=(), nodes=NODES, layout_arg=None):
    files = []
    for name, lines in clients.items():
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write("".join(x + "\n" for x in lines))
        files.append(path)
    for name, lines in (("polls", polls), ("events", events), ("clocks", clocks),
                        ("nodes", nodes), ("faults", [])):
        with open(os.path.join(d, name), "w") as f:
            f.write("".join(x + "\n" for x in lines))
    out = subprocess.run([sys.executable, os.path.join(HERE, "check.py"), "--t0", "%.6f" % (1000.0 + SKEW),
                          "--faults", os.path.join(d, "faults"), "--clocks", os.path.join(d, "clocks"),
                          "--polls", os.path.join(d, "polls"), "--events", os.path.join(d, "events"),
                          "--coordinator", "etcd", "--nodes", os.path.join(d, "nodes"),
                          "--epoch-ms", str(EPOCH_MS), "--layout", layout_arg or layout.text_of(L.layout)] + files,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return out.returncode, out.stdout


def case_clean(c, p, e):
    # With refusals (a SQLSTATE of digits too: never read as an id).
    c["node0.1"].append("%.6f %.6f node0 1 100 E25006" % (1009.2, 1009.201))
    c["node1.1"].append("%.6f %.6f node1 1 200 ESF003" % (1010.2, 1010.201))
    c["node1.1"].append("%.6f %.6f node1 1 0 conn" % (1010.3, 1010.301))
    return c, p, e, (), []


def case_duplicate(c, p, e):
    # node1's first call answers node0's largest id: a duplicate that no
    # other check sees (the same value is not above it, and node1 held the
    # id then). From a client of its own: two calls of one connection less
    # than the fencing margin apart say that its node held the id between
    # them, which would make node0's ids below it a violation too.
    top = max(int(x.split()[5]) for x in c["node0.1"])
    top = max([top] + [int(x.split()[5][1:].split("+")[0]) + L.per_ms - 1 for x in c["node0.batch"]])
    c["node1.3"] = [batch("node1", "batch3", 203, 1010.9, 1010.91, top, 1)]
    return c, p, e, (), ["not ok - duplicate ids: 1"]


def case_stale_after_tenure(c, p, e):
    # Issue 28's finding 3: node0's call, sent inside its tenure, is stopped
    # after it checked the lease and resumes after node1 took worker id 5;
    # its id carries the clock at the resume (1012.3 s), when node1 held the
    # id. Unique, and node1 issued no id from 1011.9 s to 1013 s (so the
    # check from id ranges cannot see it): only the coordinator's record can.
    c["node1.1"] = [x for x in c["node1.1"] if not 1011.9 <= float(x.split()[0]) < 1013.0]
    c["node1.batch"] = [x for x in c["node1.batch"] if not 1011.9 <= float(x.split()[0]) < 1013.0]
    c["node0.1"].append(single("node0", "1", 100, 1009.5, 1012.3, snowflake(1012.3, 7)))
    return c, p, e, (), ["not ok - one holder at a time (coordinator): 1 id(s)"]


def case_delayed_answer(c, p, e):
    # node0 issued the id inside its tenure (ms at 1009.8 s) and was stopped
    # before it answered, until 1013 s: no violation.
    c["node0.1"].append(single("node0", "1", 100, 1009.8, 1013.0, snowflake(1009.8, 9)))
    return c, p, e, (), []


def case_clock_ahead_logged(c, p, e):
    # node0's clock is 2 s ahead from 1003 s to 1006 s (a clock_step fault,
    # in the clock log): its ids then carry the clock it had; no violation.
    # (Below node0's ids of 1005 s to 1008 s by value: the ids after the
    # step back are below them, so only one call after the step is kept.)
    c["node0.1"] = [x for x in c["node0.1"] if float(x.split()[0]) < 1003.0]
    c["node0.batch"] = [x for x in c["node0.batch"] if float(x.split()[0]) < 1003.0]
    c["node0.1"].append(single("node0", "1", 100, 1004.0, 1004.001, snowflake(1004.0, 0, clock_offset=2.0)))
    clocks = ["%.6f %.6f node0 2.0" % (1003.0 + SKEW, 1003.001 + SKEW),
              "%.6f %.6f node0 0.0" % (1006.0 + SKEW, 1006.001 + SKEW)]
    return c, p, e, clocks, []


def case_clock_ahead_unlogged(c, p, e):
    # The same id without the clock log: an id 2 s ahead of its node's clock.
    c, p, e, _, _ = case_clock_ahead_logged(c, p, e)
    return c, p, e, (), ["not ok - no id ahead of its node's clock: 1 id(s)"]


def case_inside_other_run(c, p, e):
    # Issue 16's interleaving: an id of node0 between two ids node1 issued
    # over one connection 10 ms apart (and after node0's tenure).
    c["node0.1"].append(single("node0", "1", 100, 1009.0, 1015.005, snowflake(1015.005, 1)))
    return c, p, e, (), ["not ok - one holder at a time (ids): 1 id(s)",
                         "not ok - one holder at a time (coordinator): 1 id(s)"]


def case_tenure_order(c, p, e):
    # node1's first call (a client of its own, as above) answers an id below
    # every id node0 answered before it was sent (below them all, so that it
    # lies inside no run of node0).
    c["node1.3"] = [single("node1", "3", 203, 1010.9, 1010.901, snowflake(1000.5, 5))]
    return c, p, e, (), ["not ok - tenure order (an earlier holder's id above a later holder's id): 1 calls"]


def case_no_record(c, p, e):
    return c, [], e, (), ["not ok - one holder at a time (coordinator): the coordinator's record of tenures is"
                          " missing"]


def case_batch_order(c, p, e):
    c["node1.batch"].append("%.6f %.6f node1 batch1 201 b%d+2,%d+2" % (
        1017.5, 1017.51, snowflake(1017.5, 10), snowflake(1017.5, 2)))
    return c, p, e, (), ["not ok - ids of one batch increase: 1 batch(es)"]


def case_sdk_holder(c, p, e):
    # node1's tenure and ids are an SDK process's (after node0's): its worker
    # key is found by port 0, runtime and pid; no violation.
    nodes = as_sdk(c, e, "node1")
    return c, p, e, (), [], nodes


def case_sdk_other_process(c, p, e):
    # The same ids, but the tenure is another process's of that member (pid
    # 301, an earlier process killed with kill -9, say): the ids were issued
    # while their process held no worker id.
    nodes = as_sdk(c, e, "node1", key_pid=301) + ["sdk0.0 port=0 runtime=node pid=301"]
    return c, p, e, (), ["not ok - one holder at a time (coordinator): "], nodes


def case_sdk_duplicate(c, p, e):
    # case_duplicate with the SDK process answering node0's largest id.
    c, p, e, _, want = case_duplicate(c, p, e)
    c["node1.1"] += c.pop("node1.3")
    nodes = as_sdk(c, e, "node1", runtime="python")
    return c, p, e, (), want, nodes


def case_sdk_inside_node_tenure(c, p, e):
    # The SDK process (worker id 5 after node0) answers an id it issued at
    # 1008 s, during node0's tenure, between two of node0's ids.
    c["node1.1"].append(single("node1", "1", 200, 1008.0, 1008.01, snowflake(1008.0, 3)))
    nodes = as_sdk(c, e, "node1", runtime="python")
    return c, p, e, (), ["not ok - one holder at a time (ids): 1 id(s)",
                         "not ok - one holder at a time (coordinator): 1 id(s)"], nodes


def case_sdk_stopped_past_deadline(c, p, e):
    # case_stale_after_tenure with an SDK process as the first holder
    # (node0): stopped (SIGSTOP) inside nextIds past its lease deadline, it
    # returns an id issued after it, when node1 held worker id 5.
    c, p, e, _, want = case_stale_after_tenure(c, p, e)
    nodes = as_sdk(c, e, "node0")
    return c, p, e, (), want, nodes


def case_other_worker(c, p, e):
    # node1 holds a second worker id from the start: 5 with the layout's top
    # worker bit set too (37 in js-safe, 517 in twitter). node0 answers, in
    # its tenure of 5, an id under that one: issued while node0 did not hold
    # its worker id (a checker that dropped the top worker bit would read it
    # as 5, node0's own).
    other = W | 1 << (L.layout.worker_bits - 1)
    ident = "snowflake-node host=h port=5432 system_identifier=1 started_unix_ms=1 data_directory=/d1"
    e.insert(0, "5 put %d 333 %s" % (other, ident))
    c["node0.1"].append(single("node0", "1", 100, 1005.003, 1005.004, snowflake(1005.003, 3, worker=other)))
    return c, p, e, (), ["not ok - one holder at a time (coordinator): 1 id(s)"]


def case_above_layout(c, p, e):
    # node1's last call answers an id with a bit above the layout's set: in
    # js-safe 2^53 plus an id of node1's (2^53 <= id < 2^54), in twitter the
    # sign bit (a negative bigint). Its fields, read as the layout's, are
    # the id's below it: unique, in node1's tenure, not ahead of its clock;
    # in js-safe above node1's earlier ids, in twitter below them (check 2).
    i = snowflake(1019.5, 0) + (1 << layout.bits(L.layout))
    if i >= 1 << 63:
        i -= 1 << 64
    c["node1.4"] = [single("node1", "4", 204, 1019.5, 1019.501, i)]
    want = ["not ok - ids within the layout (%s: 0 <= id < 2^%d): 1 id(s) outside it"
            % (layout.text_of(L.layout), layout.bits(L.layout))]
    if i < 0:
        want.append("not ok - order within one node's tenure (a node's id above its own later id): 1 calls")
    return c, p, e, (), want


def case_wrong_layout(c, p, e):
    # The clean run read in the other layout (js-safe's ids with twitter's
    # widths, twitter's with js-safe's), as if run.sh gave check.py widths
    # other than the nodes': the worker ids read are ones nobody held then;
    # twitter's ids are also above 2^53, and their milliseconds read far
    # ahead of the clock.
    other = layout.PROFILES["js-safe"] if L.layout == layout.TWITTER else layout.TWITTER
    want = ["not ok - one holder at a time (coordinator): "]
    if layout.bits(other) < layout.bits(L.layout):
        want += ["not ok - ids within the layout (%s: " % layout.text_of(other),
                 "not ok - no id ahead of its node's clock: "]
    return c, p, e, (), want, NODES, layout.text_of(other)


CASES = [case_clean, case_duplicate, case_stale_after_tenure, case_delayed_answer, case_clock_ahead_logged,
         case_clock_ahead_unlogged, case_inside_other_run, case_tenure_order, case_no_record, case_batch_order,
         case_sdk_holder, case_sdk_other_process, case_sdk_duplicate, case_sdk_inside_node_tenure,
         case_sdk_stopped_past_deadline, case_other_worker, case_above_layout, case_wrong_layout]


def main():
    global L
    # Terminated (run.sh's cleanup): the temporary directories go too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    failed = 0
    for prefix, lay in LAYOUTS:
        L = layout.Decoder(lay)
        for case in CASES:
            with tempfile.TemporaryDirectory(prefix="nemesis-check-test.") as d:
                res = case(*base_run())
                clients, polls, events, clocks, want = res[:5]
                rc, out = run_checker(d, clients, polls, events, clocks, *res[5:])
                bad = [line for line in out.split("\n") if line.startswith("not ok") and
                       not line.startswith("not ok - nemesis:")]
                problems = []
                if (rc != 0) != bool(want):
                    problems.append("exit status %d" % rc)
                for w in want:
                    if not any(line.startswith(w) for line in bad):
                        problems.append("no line starting %r" % w)
                for line in bad:
                    if not any(line.startswith(w) for w in want):
                        problems.append("unexpected %r" % line)
                name = prefix + case.__name__[len("case_"):]
                if problems:
                    failed += 1
                    print("not ok - checker self-test %s: %s" % (name, "; ".join(problems)))
                    print("".join("#   " + line + "\n" for line in out.split("\n") if line))
                else:
                    print("ok - checker self-test %s%s" % (name, ": reported" if want else ": no violation"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
