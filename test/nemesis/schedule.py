#!/usr/bin/python3
"""The nemesis suite's fault schedule (test/nemesis/run.sh), drawn from a seed.

Usage: schedule.py SEED DURATION_S TTL_S NODE_KINDS ETCD_MEMBERS [COORDINATOR [FAILOVER_NODE [SDK_MEMBERS]]]
  NODE_KINDS: one word per node, "fixed" (asks for a fixed worker id) or
  "any" (takes any free id), comma-separated.
  COORDINATOR: "etcd" (the default) or "zookeeper". With ZooKeeper the
  schedule is drawn the same way and the faults on the coordinator are
  named for it: zk_minority (target zk<i>: server i cut off from the other
  two) and zk_leader_kill (target zk), ETCD_MEMBERS being the servers.
  FAILOVER_NODE: the index of the node that runs with
  snowflake.clock_backwards = failover, or "-" (the default) for none. Its
  clock is stepped back beyond the tolerance (clock_back) about once a
  minute, at least once a run, on top of the schedule drawn as before.
  SDK_MEMBERS: the SDK members' names, comma-separated ("sdk0,sdk1"), or
  "-" (the default) for none: application processes with an embedded
  generator (sdk/node, sdk/python), each in a network namespace of its own.
  Their faults (SDK_KINDS) are drawn after the others, from a stream of
  their own: one at a time, one after another through the run, every kind
  once before any kind twice.

Prints the timeline run.sh executes, one action a line, sorted by time:
  <t_s> start <fault#> <kind> <target> <duration_s> <param>
  <t_s> mid   <fault#> <kind> <target> <duration_s> <param>   (stall_handover:
                                              its partition heals)
  <t_s> end   <fault#> <kind> <target> <duration_s> <param>
Times are seconds after the clients started. The same arguments always give
the same schedule (Python's random.Random is stable across versions for
random(), randrange(), choice() on the same input).

Target "holder": the node that holds a worker id some other node asks for,
when the fault starts (run.sh picks it, among the nodes no other fault is on).

Rules: faults start after a warm-up and end a cool-down (lease TTL + 8 s)
before the run does, so every node holds a lease again at the end; at most
two faults at a time; never two on the same node, never two on etcd.

The clock_back faults are drawn after the others, from a random stream of
their own (seeded from SEED too), and placed where they keep at most two
faults at a time; they are the one exception to "never two on the same
node": another fault on their node (or a "holder" fault landing on it) may
overlap them, so that the node loses its lease, is killed or stopped while
it issues ids under a backup worker id. The faults drawn as before keep
their times, targets and numbers (a seed replays the same schedule, with or
without a failover node). SEPARATE_STREAMS lists the kinds drawn this way,
and is where the next ones go.
"""
import random
import sys

# kind: (target: "node", "any-node" (weighs nodes that take any free id 3:1),
#        "etcd-member", "etcd"), weight
KINDS = {
    "part_both": ("node", 3),        # node <-> etcd, both directions dropped
    "part_out": ("node", 2),         # node -> etcd dropped (one direction)
    "part_in": ("node", 2),          # etcd -> node dropped (one direction)
    "etcd_minority": ("etcd-member", 2),  # one member cut off from the other two
    "etcd_leader_kill": ("etcd", 2),  # kill -9 of the leader, restarted after duration
    "stall": ("node", 2),            # LD_PRELOAD stall of a backend inside an id call
    "stall_handover": ("any-node", 4),  # the same, while its node loses its lease (partition)
    "sigstop_backend": ("node", 2),  # SIGSTOP of a client's backend
    "sigstop_lease_worker": ("node", 2),  # SIGSTOP of the lease worker
    "pause_node": ("node", 2),       # SIGSTOP of the postmaster and all its children
    "clock_step": ("node", 2),       # libfaketime: clock moved by param s, back at the end
    # "clock_back": the failover node's clock moved back by param s (< 0),
    # forward again at the end: drawn apart (clock_back_faults), not here.
    "kill9": ("node", 2),            # kill -9 of the node, restarted after duration
    "restart": ("node", 1),          # clean stop (hands the id over), start after duration
}


HOLDER_KINDS = {"part_both", "part_out", "part_in", "sigstop_lease_worker", "pause_node", "kill9", "restart"}


def duration(rng, kind, ttl):
    if kind in ("part_both", "part_out", "part_in"):
        return round(rng.uniform(1.0, 2 * ttl + 2), 1)
    if kind == "etcd_minority":
        return round(rng.uniform(2.0, 2 * ttl), 1)
    if kind == "etcd_leader_kill":
        return round(rng.uniform(1.0, ttl + 3), 1)
    if kind == "stall_handover":
        # The partition lasts long enough for etcd to expire the node's lease
        # and give its id away (TTL + 1 to TTL + 3 s); the stall outlasts it
        # by a few seconds so the node meanwhile leases another id and issues
        # under it.
        return round(rng.uniform(ttl + 4, ttl + 9), 1)
    if kind == "clock_step":
        return round(rng.uniform(2.0, 10.0), 1)
    if kind in ("kill9", "restart"):
        return round(rng.uniform(0.5, ttl + 2), 1)
    return round(rng.uniform(1.0, ttl + 5), 1)


def param(rng, kind, ttl):
    if kind == "clock_step":
        step = round(rng.uniform(0.2, 4.0), 3)
        return str(step if rng.random() < 0.5 else -step)
    if kind == "stall_handover":
        return str(round(rng.uniform(ttl + 1, ttl + 3), 1))  # the partition's length
    if kind in ("stall", "sigstop_backend"):
        return str(rng.randrange(64))  # which client backend of the node
    return "-"


def room_for_one(faults, start, end):
    """The faults active during [start, end), or None if one more there would
    make three at once: counted at its start and at every start of an active
    fault inside it (at most two at once over the whole of the new fault)."""
    active = [f for f in faults if f[0] < end and start < f[1]]
    points = [start] + [f[0] for f in active if start <= f[0] < end]
    if any(sum(1 for f in active if f[0] <= p < f[1]) >= 2 for p in points):
        return None
    return active


def clock_back_faults(rng, total, warmup, cooldown, faults, ctx):
    """clock_back faults on node FAILOVER_NODE (an index), added to faults:
    one a minute, at least one, where the rules allow (see the docstring)."""
    if ctx["failover"] == "-":
        return
    target = "node%d" % int(ctx["failover"])
    want, placed = max(1, int(total // 60)), 0
    for _ in range(500):
        if placed >= want:
            break
        start = round(rng.uniform(warmup, total - cooldown), 1)
        dur = round(rng.uniform(2.0, 10.0), 1)
        # Half of them shorter than the fault: the node's clock catches up
        # with its last id and it goes back to its own worker id during the
        # fault; the others longer: it goes back when the clock is moved
        # forward at the end.
        step = round(rng.uniform(0.5, dur - 0.5) if rng.random() < 0.5 else rng.uniform(dur, 15.0), 3)
        end = round(start + dur, 1)
        if end > total - cooldown:
            continue
        if room_for_one(faults, start, end) is None:
            continue
        faults.append((start, end, "clock_back", target, dur, str(-step)))
        placed += 1


# Faults drawn apart from the main draw, after it, each kind from a random
# stream of its own (random.Random(SEED ^ salt)): adding a stream leaves
# every fault drawn before it where it was, so a seed replays the same
# schedule with or without it. Each function appends
# (start, end, kind, target, duration, param) to faults, where
# room_for_one() allows, and returns nothing; ctx holds the command line's
# node kinds ("any", "fixed"), failover node, coordinator, SDK members and
# the lease TTL.
#
# The next kinds go here, each with its salt and its arm in run.sh's
# fault(): clones with the same name (issue 28: a copy of a node's data
# directory started as another instance of that node; NODE_KINDS would
# name it, e.g. "clone0", and the clone's fault starts or stops it) and a
# standby whose snowflake.epoch differs from its primary's (promoted by its
# fault). check.py needs nothing new for them beyond the nodes file
# (run.sh): each instance's line names what its worker keys say of it.
# The SDK members' faults (issue 30): target "sdk<j>", the j-th SDK member
# (a Node.js or Python process, run.sh's NEMESIS_SDK). Each kind's duration
# and parameter:
SDK_KINDS = [
    "sdk_part",        # its namespace cut from the coordinator, both directions, 1 to 2 TTL + 2 s
                       # (often past its lease: it must stop issuing before the lease can expire)
    "sdk_sigstop",     # SIGSTOP of the process, SIGCONT after 1 to 2 TTL + 2 s (often past its
                       # lease deadline: no id issued after the deadline may be returned)
    "sdk_kill9",       # kill -9, a new process started after 0.5 to TTL + 2 s
    "sdk_clock_step",  # libfaketime: its clock moved by param s (0.2 to 4, either way) for 2 to 10 s
    "sdk_restart",     # clean close (SIGTERM: close(), the id handed over), a new process after 0.5 to 3 s
]


def sdk_faults(rng, total, warmup, cooldown, faults, ctx):
    """The SDK members' faults, added to faults: one at a time, on top of the
    fleet's (not counted in its two at a time: the members are extra), each
    1 to 3 s after the last ended, until the cool-down; kinds in rounds, each
    round every kind once in a random order, on a random member."""
    members = ctx["sdk"]
    if not members:
        return
    ttl = ctx["ttl"]
    t, kinds = warmup, []
    while True:
        if not kinds:
            kinds = list(SDK_KINDS)
            rng.shuffle(kinds)
        kind = kinds.pop()
        start = round(t + rng.uniform(1.0, 3.0), 1)
        if kind in ("sdk_part", "sdk_sigstop"):
            dur = round(rng.uniform(1.0, 2 * ttl + 2), 1)
        elif kind == "sdk_kill9":
            dur = round(rng.uniform(0.5, ttl + 2), 1)
        elif kind == "sdk_clock_step":
            dur = round(rng.uniform(2.0, 10.0), 1)
        else:
            dur = round(rng.uniform(0.5, 3.0), 1)
        par = "-"
        if kind == "sdk_clock_step":
            step = round(rng.uniform(0.2, 4.0), 3)
            par = str(step if rng.random() < 0.5 else -step)
        target = rng.choice(members)
        end = round(start + dur, 1)
        if end > total - cooldown:
            return
        faults.append((start, end, kind, target, dur, par))
        t = end


SEPARATE_STREAMS = [
    ("clock_back", 0x21C10C, clock_back_faults),  # issue 21
    ("sdk", 0x5D430, sdk_faults),  # issue 30
]


def main():
    seed, total, ttl = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    node_kinds = sys.argv[4].split(",")
    members = int(sys.argv[5])
    coordinator = sys.argv[6] if len(sys.argv) > 6 else "etcd"
    if coordinator not in ("etcd", "zookeeper"):
        sys.exit("schedule.py: COORDINATOR is etcd or zookeeper, not %r" % coordinator)
    failover = sys.argv[7] if len(sys.argv) > 7 else "-"
    if failover != "-" and not (failover.isdigit() and int(failover) < len(node_kinds)):
        sys.exit("schedule.py: FAILOVER_NODE is a node's index or -, not %r" % failover)
    sdk = sys.argv[8].split(",") if len(sys.argv) > 8 and sys.argv[8] != "-" else []
    rng = random.Random(seed)
    warmup, cooldown = 5.0, ttl + 8.0
    kinds = sorted(KINDS)
    weights = [KINDS[k][1] for k in kinds]
    faults = []  # (start, end, kind, target, dur, param)
    t = warmup
    while True:
        t += round(rng.uniform(0.5, 4.0), 1)
        if t >= total - cooldown:
            break
        kind = rng.choices(kinds, weights)[0]
        dur = duration(rng, kind, ttl)
        end = t + dur
        if end > total - cooldown:
            continue
        active = room_for_one(faults, t, end)
        if active is None:
            continue
        busy = {f[3] for f in active}
        how = KINDS[kind][0]
        if how in ("etcd", "etcd-member"):
            if any(f[3].startswith("etcd") for f in active):
                continue
            target = "etcd" if how == "etcd" else "etcd%d" % rng.randrange(members)
        else:
            # "any-node": a node taking any free id three times as likely as
            # one asking for a fixed id (a stalled backend on a node that
            # lost its id and took another is issue 16's case; on a node
            # asking for a fixed id, the backend resumes while the node waits).
            free = []
            for i in range(len(node_kinds)):
                if "node%d" % i not in busy:
                    free += ["node%d" % i] * (3 if how == "any-node" and node_kinds[i] == "any" else 1)
            if not free:
                continue
            target = rng.choice(free)
            # Half of the faults that can make a node lose its lease go to
            # whichever node holds a worker id other nodes wait for, chosen
            # when the fault starts ("holder"): these make ids change hands.
            if kind in HOLDER_KINDS and "holder" not in busy and rng.random() < 0.5:
                target = "holder"
        faults.append((round(t, 1), round(end, 1), kind, target, dur, param(rng, kind, ttl)))
    ctx = {"node_kinds": node_kinds, "failover": failover, "coordinator": coordinator, "sdk": sdk, "ttl": ttl}
    for _, salt, draw in SEPARATE_STREAMS:
        draw(random.Random(seed ^ salt), total, warmup, cooldown, faults, ctx)
    if coordinator == "zookeeper":
        # Drawn under etcd's names (the same seed, the same schedule), then
        # named for ZooKeeper.
        faults = [(s, e, k.replace("etcd_", "zk_", 1), tg.replace("etcd", "zk", 1), d, p)
                  for s, e, k, tg, d, p in faults]
    lines = []
    for i, (start, end, kind, target, dur, par) in enumerate(faults, 1):
        lines.append((start, 1, "%.1f start %d %s %s %.1f %s" % (start, i, kind, target, dur, par)))
        if kind == "stall_handover":  # the partition heals before the stall ends
            mid = round(start + float(par), 1)
            lines.append((mid, 0, "%.1f mid %d %s %s %.1f %s" % (mid, i, kind, target, dur, par)))
        lines.append((end, 0, "%.1f end %d %s %s %.1f %s" % (end, i, kind, target, dur, par)))
    for _, _, line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
