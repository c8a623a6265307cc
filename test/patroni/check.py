#!/usr/bin/python3
"""Reads the answers test/patroni/client.py recorded in one scenario of
test/patroni.sh and prints what the suite asserts, one "key value" line
each, then details as comment lines ("# ...").

    check.py [--kept ROWS] OLD_LEADER NEW_LEADER T_EVENT FILE...

T_EVENT is the real time (Unix seconds) the switchover or failover was
started. Keys:
  acks N             acknowledged inserts
  acks_old N         of them by the old leader, acks_new N by the new one
  duplicates N       ids acknowledged more than once
  old_max ID         the old leader's highest id acknowledged before the
                     new leader's first
  below_old_max N    acknowledged ids of the new leader below old_max
  old_after_new N    ids the old leader acknowledged between the new
                     leader's first and last (a split brain: duplicates
                     count them, old_max does not)
  old_again N        ids the old leader acknowledged after the new leader's
                     last: it leads again (Patroni gave it the leader key
                     back)
  below_new_max N    of those, the ones below the new leader's highest id
  longest_refusal S  the longest time without an acknowledged insert, from
                     the first acknowledged insert to the last (seconds)
  refusal_at S       when it began, seconds after T_EVENT
  lost N             with --kept ROWS (the ids in the new leader's table at
                     the end, one a line): ids the old leader acknowledged
                     that are not there (commits the promotion lost)
"""
import collections
import re
import sys


def main():
    args = sys.argv[1:]
    kept = None
    if args[:1] == ['--kept']:
        with open(args[1]) as f:
            kept = {int(line) for line in f if line.strip()}
        args = args[2:]
    old, new, t_event = args[0], args[1], float(args[2])
    acks = []        # (time, member, id)
    errors = collections.Counter()
    for path in args[3:]:
        with open(path) as f:
            for line in f:
                parts = line.rstrip('\n').split(' ', 3)
                if len(parts) < 3:
                    raise SystemExit('%s: malformed line %r' % (path, line))
                t, member, what = float(parts[0]), parts[1], parts[2]
                if what == 'ERR':
                    rest = parts[3] if len(parts) > 3 else ''
                    code = rest.split(' ', 1)[0]
                    errors[(member, code, re.sub(r'\d+', 'N', rest[len(code) + 1:])[:90])] += 1
                else:
                    acks.append((t, member, int(what)))
    acks.sort()
    counts = collections.Counter(i for _, _, i in acks)
    dups = sorted(i for i, c in counts.items() if c > 1)
    old_ids = [i for _, m, i in acks if m == old]
    new_acks = [(t, i) for t, m, i in acks if m == new]
    first_new = new_acks[0][0] if new_acks else None
    old_before = [i for t, m, i in acks if m == old and (first_new is None or t <= first_new)]
    last_new = new_acks[-1][0] if new_acks else None
    old_after = [i for t, m, i in acks if m == old and first_new is not None and first_new < t <= last_new]
    old_again = [i for t, m, i in acks if m == old and last_new is not None and t > last_new]
    old_max = max(old_before) if old_before else 0
    below = [i for _, i in new_acks if i < old_max]
    new_max = max(i for _, i in new_acks) if new_acks else 0
    below_new = [i for i in old_again if i < new_max]
    gap, gap_at = 0.0, 0.0
    for a, b in zip(acks, acks[1:]):
        if b[0] - a[0] > gap:
            gap, gap_at = b[0] - a[0], a[0] - t_event
    print('acks', len(acks))
    print('acks_old', len(old_ids))
    print('acks_new', len(new_acks))
    print('duplicates', len(dups))
    print('old_max', old_max)
    print('below_old_max', len(below))
    print('old_after_new', len(old_after))
    print('old_again', len(old_again))
    print('below_new_max', len(below_new))
    print('longest_refusal %.3f' % gap)
    print('refusal_at %.3f' % gap_at)
    if kept is not None:
        lost = sorted({i for i in old_ids if i not in kept})
        print('lost', len(lost))
        if lost:
            twice = [i for i in lost if counts[i] > 1]
            print('# %d inserts acknowledged by %s are not on %s (ids %d to %d); %d of their ids were acknowledged again'
                  % (len(lost), old, new, lost[0], lost[-1], len(twice)))
    if first_new is not None:
        print('# new leader %s: first id %.3f s after the event' % (new, first_new - t_event))
    for i in dups[:5]:
        who = ['%s at %+.3f s' % (m, t - t_event) for t, m, j in acks if j == i]
        print('# duplicate %d: %s' % (i, ', '.join(who)))
    if below:
        print('# new leader ids below %d (old max): %d, the lowest %d, %.1f ms of id time below'
              % (old_max, len(below), min(below), (old_max - min(below)) / (1 << 22)))
    if old_after:
        times = [t for t, m, i in acks if m == old and first_new < t <= last_new]
        print('# old leader %s acknowledged %d ids from %+.3f s to %+.3f s, after the new leader\'s first'
              % (old, len(old_after), times[0] - t_event, times[-1] - t_event))
    if old_again:
        print('# old leader %s leads again: %d ids after the new leader\'s last, %d below its highest'
              % (old, len(old_again), len(below_new)))
    for m in sorted({m for _, m, _ in acks}):
        workers = sorted({(i >> 12) & 1023 for _, n, i in acks if n == m})
        print('# worker ids of %s: %s' % (m, ' '.join(map(str, workers))))
    for (m, code, text), n in sorted(errors.items()):
        print('# %d x %s %s %s' % (n, m, code, text))


if __name__ == '__main__':
    main()
