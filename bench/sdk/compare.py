"""bench/sdk/compare.py: one Python id generator measured, for bench/sdk.sh.

    python3 compare.py IMPL SDK_PYTHON_DIR MARK_FILE WORKER_ID BATCH ROUNDS SECONDS

IMPL: python (ours: the binding's next_id(), a static worker id and its mark
file) or python-baseline (PlainSnowflake below: a pure-Python generator of
the usual kind, written for this benchmark as the baseline; not a package).
One process per generator.

Figures (the same method as bench/sdk_c_bench.c and compare.js):
  ns_below_cap  ROUNDS timed batches of BATCH calls, each started at a new
                millisecond, so that no call waits for the next one: the
                median batch's ns per id (ns_below_cap_mean: the mean);
  ids_per_s     calls as fast as they return for SECONDS, every id stored
                in an array('q'); then the repeats are counted (dups: extra
                copies; dup_values: distinct values repeated) with the most
                ids that share one millisecond field (id >> 22).
Prints IMPL<TAB>KEY<TAB>VALUE lines; asserts nothing. Standard library only.
"""
import sys
import threading
import time
from array import array

EPOCH_MS = 1735689600000  # 2025-01-01 00:00:00+00, the extension's default epoch


class PlainSnowflake:
    """The baseline: a snowflake generator as commonly written in Python.

    41-bit milliseconds since the epoch from time.time(), a 10-bit worker id,
    a 12-bit sequence, one lock; when a millisecond's 4,096 ids are used up
    it spins until the clock moves on; a clock that went back raises."""

    def __init__(self, worker_id, epoch_ms=EPOCH_MS):
        self.worker_id = worker_id & 0x3FF
        self.epoch_ms = epoch_ms
        self.lock = threading.Lock()
        self.last_ms = -1
        self.sequence = 0

    def next_id(self):
        with self.lock:
            ms = int(time.time() * 1000) - self.epoch_ms
            if ms < self.last_ms:
                raise RuntimeError("clock moved backwards by %d ms" % (self.last_ms - ms))
            if ms == self.last_ms:
                self.sequence = (self.sequence + 1) & 0xFFF
                if self.sequence == 0:
                    while ms <= self.last_ms:
                        ms = int(time.time() * 1000) - self.epoch_ms
            else:
                self.sequence = 0
            self.last_ms = ms
            return (ms << 22) | (self.worker_id << 12) | self.sequence


def sched():
    """This thread's (ms on a CPU, ms waiting for one), /proc/self/schedstat, or None."""
    try:
        with open("/proc/self/schedstat") as f:
            cpu, wait = f.read().split()[:2]
        return int(cpu) / 1e6, int(wait) / 1e6
    except (OSError, ValueError):
        return None


def below_cap(f, batch, rounds):
    """ns per id of the median batch (a batch that lost the CPU to another
    process is an outlier, not the call's cost), and the mean."""
    rng = range(batch)
    times = []
    for _ in range(rounds):
        ms = time.time_ns() // 1000000
        while time.time_ns() // 1000000 == ms:  # a new millisecond: the batch stays below the cap
            pass
        t = time.perf_counter_ns()
        for _ in rng:
            f()
        times.append(time.perf_counter_ns() - t)
    return sorted(times)[rounds // 2] / batch, sum(times) / (batch * rounds)


def main():
    impl, sdk_dir, mark, worker, batch, rounds, seconds = sys.argv[1:8]
    worker, batch, rounds, seconds = int(worker), int(batch), int(rounds), float(seconds)

    def out(key, value):
        sys.stdout.write("%s\t%s\t%s\n" % (impl, key, value))

    pyver = "Python %s" % sys.version.split()[0]
    close = None
    stats = None
    if impl == "python":
        sys.path.insert(0, sdk_dir)
        import snowflake_ids
        g = snowflake_ids.Generator(worker_id=worker, mark_file=mark)
        f, close = g.next_id, g.close
        stats = lambda: {"overflow_waits": g.stats()["overflow_waits"]}
        out("version", "snowflake_ids (sdk/python) %s, next_id(); %s"
            % (snowflake_ids.version, pyver))
    elif impl == "python-baseline":
        f = PlainSnowflake(worker).next_id
        out("version", "PlainSnowflake (bench/sdk/compare.py, pure Python, written for this benchmark), next_id(); %s" % pyver)
    else:
        raise SystemExit("unknown implementation " + impl)

    below_cap(f, batch, rounds)  # warm-up
    empty = below_cap(int, batch, rounds)
    ns = below_cap(f, batch, rounds)
    before = stats() if stats else {}
    out("ns_below_cap", "%.2f" % ns[0])
    out("ns_below_cap_mean", "%.2f" % ns[1])
    out("empty_loop_ns", "%.2f" % empty[0])
    out("batch", batch)
    out("rounds", rounds)

    ids = array("q")
    append = ids.append
    chunk = range(1024)
    clock = time.perf_counter_ns
    s0 = sched()
    t0 = clock()
    end = t0 + int(seconds * 1e9)
    while True:
        for _ in chunk:
            append(f())
        t1 = clock()
        if t1 >= end:
            break
    s1 = sched()
    after = stats() if stats else {}
    n = len(ids)
    secs = (t1 - t0) / 1e9
    out("ids", n)
    out("seconds", "%.4f" % secs)
    out("ids_per_s", "%.0f" % (n / secs))
    if s0 and s1:
        out("tight_cpu_ms", "%.1f" % (s1[0] - s0[0]))
        out("tight_wait_ms", "%.1f" % (s1[1] - s0[1]))
    for k in after:
        out(k, after[k] - before.get(k, 0))
    if close:
        close()

    ascending = all(ids[i] > ids[i - 1] for i in range(1, n))
    a = ids if ascending else array("q", sorted(ids))
    dups = dup_values = max_ms = run = 0
    last_ms = -1
    example = None
    prev = None
    prev_dup = False
    for v in a:
        if v == prev:
            dups += 1
            if not prev_dup:
                dup_values += 1
                if example is None:
                    example = v
            prev_dup = True
        else:
            prev_dup = False
        prev = v
        ms = v >> 22
        if ms == last_ms:
            run += 1
        else:
            run, last_ms = 1, ms
        if run > max_ms:
            max_ms = run
    out("ascending", "yes" if ascending else "no")
    out("dups", dups)
    out("dup_values", dup_values)
    out("max_ids_one_ms", max_ms)
    if example is not None:
        out("dup_example", "%d (low 12 bits %d, %d copies)" % (example, example & 4095, a.count(example)))


if __name__ == "__main__":
    main()
