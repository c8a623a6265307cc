#!/usr/bin/python3
"""The checker of the mixed fleet (test/sdk_fleet.sh): reads every id every
member wrote and prints one line of facts, "key=value" separated by spaces:

  ids          ids read
  duplicates   ids read more than once (must be 0)
  outside      ids whose worker id is not in LO..HI (must be 0)
  disorder     pairs of ids of one worker id in the wrong order in time: an id
               issued after another (its call began after the other's ended,
               by /proc/uptime) yet smaller (must be 0): tenures of a worker
               id follow each other, each above the last
  workers      worker ids seen, comma-separated
  members      members that issued ids
  id_bits      the bits of the largest id (53 at most under js-safe)

  check.py [--widths=W/S] LO HI NAME=FILE...
--widths: the worker id's and the sequence's bits (default 10/12, twitter's;
6/6 for js-safe).
Each FILE has lines "t0 t1 id id ..." (t0, t1: /proc/uptime before and after
the call that issued them).
"""
import sys


def main():
    args = sys.argv[1:]
    worker_bits, sequence_bits = 10, 12
    if args and args[0].startswith("--widths="):
        worker_bits, sequence_bits = map(int, args.pop(0).split("=", 1)[1].split("/"))
    lo, hi = int(args[0]), int(args[1])
    by_worker = {}
    seen = set()
    ids = dups = outside = 0
    members = set()
    for arg in args[2:]:
        name, path = arg.split("=", 1)
        try:
            f = open(path)
        except FileNotFoundError:
            continue
        with f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                t0, t1 = float(parts[0]), float(parts[1])
                for text in parts[2:]:
                    i = int(text)
                    ids += 1
                    members.add(name)
                    if i in seen:
                        dups += 1
                        print("# duplicate %d (%s)" % (i, name), file=sys.stderr)
                    seen.add(i)
                    w = (i >> sequence_bits) & ((1 << worker_bits) - 1)
                    if not lo <= w <= hi:
                        outside += 1
                    by_worker.setdefault(w, []).append((i, t0, t1, name))
    disorder = 0
    for w, rows in by_worker.items():
        rows.sort()
        latest_start = None  # the latest call start among smaller ids
        for i, t0, t1, name in rows:
            if latest_start is not None and latest_start[0] > t1:
                disorder += 1
                if disorder <= 5:
                    print("# worker %d: %d (%s, issued by %.2f) is above %d (%s, issued from %.2f on)"
                          % (w, i, name, t1, latest_start[1], latest_start[2], latest_start[0]), file=sys.stderr)
            if latest_start is None or t0 > latest_start[0]:
                latest_start = (t0, i, name)
    print("ids=%d duplicates=%d outside=%d disorder=%d id_bits=%d workers=%s members=%s" % (
        ids, dups, outside, disorder, max(seen, default=0).bit_length(), ",".join(map(str, sorted(by_worker))),
        ",".join(sorted(members))))


main()
