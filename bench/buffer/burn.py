#!/usr/bin/python3
"""bench/buffer.sh's CPU load without HTTP: busy for DUTY (0 to 1) of every
2 ms, asleep for the rest, until the file STOP exists (or 600 s). The
control phase runs as many of these as the CPU time it copies needs, so that
SQL runs beside the same CPU load as beside a buffer client, but no HTTP.

  burn.py DUTY STOP
"""
import os
import sys
import time

PERIOD = 0.002


def main(duty, stop):
    duty = min(max(float(duty), 0.0), 1.0)
    clock = time.perf_counter
    end = clock() + 600
    n = 0
    while clock() < end:
        start = clock()
        busy_until = start + duty * PERIOD
        while clock() < busy_until:
            pass
        rest = start + PERIOD - clock()
        if rest > 0:
            time.sleep(rest)
        n += 1
        if n % 50 == 0 and os.path.exists(stop):
            break
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
