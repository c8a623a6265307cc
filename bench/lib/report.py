#!/usr/bin/python3
"""The report of bench/run.sh: markdown tables, gnuplot plots and the
generated section of docs/benchmarks.md, from the raw data the suites wrote
in OUT/data and the run's settings in a meta file. Every figure printed here
comes from that data. Python 3 standard library only.

    report.py full OUT META      latest.md, the plots, the docs section
                                 (META: "NAME<TAB>value" lines written by run.sh)
    report.py http-ceiling OUT   the section of bench/http_ceiling.sh (stdout)
    report.py percentiles P...   nearest-rank percentiles of the numbers on stdin
    report.py commas N           N with thousands separators
"""
import csv
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layout  # noqa: E402

CAP = layout.cap_per_s()          # ids per second of one node (the layout's cap)
TARGET_PER_S = 3_900_000          # the one-backend and pgbench target, 95% of the cap
HTTP_TARGET_SHARE = 0.9           # HTTP count=1000: at least 90% of the cap
CORE_TARGET_NS = 20               # core micro-benchmark: ns per id


# --- helpers -------------------------------------------------------------------

def commas(x):
    """A number rounded to an integer, with thousands separators."""
    return f"{float(x):,.0f}"


def pct(values, p):
    """Nearest-rank percentile p (0-100)."""
    v = sorted(values)
    k = int(p / 100 * len(v) + 0.999999)
    return v[min(max(k, 1), len(v)) - 1]


def met(ok):
    return "**met**" if ok else "**NOT met**"


def read_tsv(path, header=False):
    """Rows of a tab-separated file (lists of strings); the header dropped if asked."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r]
    return rows[1:] if header else rows


def nonempty(path):
    return os.path.exists(path) and os.path.getsize(path) > 0


def machine_cpu():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(": ", 1)[1].strip()
    return platform.processor() or "unknown"


def machine_mem():
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1048576:.1f} GiB"
    return "unknown"


def loadavg():
    with open("/proc/loadavg", encoding="utf-8") as f:
        return " ".join(f.read().split()[:3])


def git(root, *args):
    try:
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


# --- the run's settings ----------------------------------------------------------

class Meta:
    """run.sh's variables: NAME<TAB>value lines; lists are space-separated,
    labels are LABEL.KEY."""

    def __init__(self, path):
        self.v = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line:
                    name, _, value = line.partition("\t")
                    self.v[name] = value

    def __getitem__(self, name):
        return self.v.get(name, "")

    def int(self, name):
        return int(self.v[name])

    def list(self, name):
        return self.v.get(name, "").split()

    def labels(self, table, keys):
        return {k: self.v.get(f"{table}.{k}", k) for k in keys}


# --- suite 1: calls --------------------------------------------------------------

class Calls:
    """calls.tsv: form key round n ms cpu_ns runqueue_wait_ns overflow_waits."""

    def __init__(self, out, meta):
        self.keys = meta.list("CALL_KEYS")
        self.label = meta.labels("CALL_LABEL", self.keys)
        self.rows = [(r[0], r[1], int(r[2]), int(r[3]), float(r[4]), float(r[5]), float(r[6]), float(r[7]))
                     for r in read_tsv(os.path.join(out, "data", "calls.tsv"))]
        self.lead = read_tsv(os.path.join(out, "data", "calls_lead.tsv"))

    def of(self, form, key):
        return [r for r in self.rows if r[0] == form and r[1] == key]

    def table(self, form):
        out = ["| Expression | ids per statement | median ms | min - max ms | ns per id | ns per id above floor | M ids/s | on CPU | run-queue wait | snowflake: % of cap; ms used up |",
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
        floor_ns = None
        for k in self.keys:
            rs = self.of(form, k)
            if not rs:
                continue
            n = rs[-1][3]
            ms = [r[4] for r in rs]
            med = statistics.median(ms)
            ns = med * 1e6 / n
            if k == "floor":
                floor_ns = ns
            note = ""
            if k in ("sf", "batch"):
                note = "%.1f%%; %.0f%%" % (100 * (n / (med / 1000)) / CAP, 100 * statistics.median(r[7] / r[4] for r in rs))
            above = "-" if k == "floor" or floor_ns is None else "%.1f" % (ns - floor_ns)
            cpu = statistics.median(r[5] / (r[4] * 1e6) for r in rs)
            rq = statistics.median(r[6] / (r[4] * 1e6) for r in rs)
            out.append("| %s | %s | %.1f | %.1f - %.1f | %.1f | %s | %.2f | %.0f%% | %.1f%% | %s |" % (
                self.label[k], commas(n), med, min(ms), max(ms), ns, above, n / med / 1000, 100 * cpu, 100 * rq, note))
        return "\n".join(out)

    def rate(self, key):
        """Ids/s of each ProjectSet statement of KEY."""
        return [r[3] / r[4] * 1000 for r in self.of("ps", key)]

    def ratios(self):
        """Throughput of each row over each column (ProjectSet form, medians of whole statements)."""
        keys = [k for k in self.keys if k != "floor" and self.of("ps", k)]
        rate = {k: statistics.median(self.rate(k)) for k in keys}
        out = ["| is ... as fast as | " + "".join(self.label[k] + " | " for k in keys),
               "|---|" + "--:|" * len(keys)]
        for a in keys:
            out.append("| " + self.label[a] + " | " + "".join(
                ("1" if a == b else "%.2f" % (rate[a] / rate[b])) + " | " for b in keys))
        return "\n".join(out)

    def round_ratio(self, a, b):
        """(median, min, max) over rounds of the throughput ratio A / B within the round."""
        ra = {r[2]: r[3] / r[4] for r in self.of("ps", a)}
        rb = {r[2]: r[3] / r[4] for r in self.of("ps", b)}
        x = [ra[r] / rb[r] for r in ra if r in rb]
        return statistics.median(x), min(x), max(x)

    def sched(self, key):
        rs = self.of("ps", key)
        return " (backend on a CPU %.0f%%, waiting for one %.0f%% of the time)" % (
            100 * statistics.median(r[5] / (r[4] * 1e6) for r in rs),
            100 * statistics.median(r[6] / (r[4] * 1e6) for r in rs))

    def leads(self, key):
        """(largest, smallest, statements) of the ids-ahead-of-clock checks, ms."""
        x = [float(r[1]) for r in self.lead if r[0] == key]
        return (max(x), min(x), len(x)) if x else (0.0, 0.0, 0)


# --- suite 2: concurrency ----------------------------------------------------------

class Concurrency:
    """concurrency.tsv: key clients statements tps p50_ms p99_ms ids_issued_delta
    overflow_waits_delta wall_s on_cpu_per_client runqueue_wait_per_client."""

    def __init__(self, out, meta):
        self.keys = meta.list("CONC_KEYS")
        self.label = meta.labels("CONC_LABEL", self.keys)
        self.clients = [int(c) for c in meta.list("CONC_CLIENTS")]
        self.ids = meta.int("CONC_IDS")
        self.rows = read_tsv(os.path.join(out, "data", "concurrency.tsv"))
        self.cell = {(r[0], int(r[1])): r for r in self.rows}

    def rate(self, key, c):
        r = self.cell.get((key, c))
        return float(r[3]) * self.ids if r else 0.0

    def matrix(self, what):
        out = ["| Generator | " + "".join("%d client%s | " % (c, "s" if c > 1 else "") for c in self.clients),
               "|---|" + "--:|" * len(self.clients)]
        for k in self.keys:
            line = "| " + self.label[k] + " | "
            for c in self.clients:
                r = self.cell.get((k, c))
                if r is None:
                    line += " | "
                    continue
                if what == "ids":
                    v = "%.2f" % (float(r[3]) * self.ids / 1e6)
                elif what == "sched":
                    v = "-" if r[9] == "-" else "%.0f%% / %.0f%%" % (100 * float(r[9]), 100 * float(r[10]))
                else:
                    v = "%.1f" % float(r[5] if what == "p99" else r[4]) + " (%s stmts)" % r[2]
                line += v + " | "
            out.append(line)
        return "\n".join(out)

    def snowflake_table(self):
        out = ["| Clients | statements | M ids/s (pgbench) | % of cap | ids_issued delta | = statements x (ids + 1)? | M ids/s (ids_issued delta / wall time) | overflow waits |",
               "|--:|--:|--:|--:|--:|:-:|--:|--:|"]
        for r in self.rows:
            if r[0] != "sf":
                continue
            rate = float(r[3]) * self.ids
            issued = float(r[6])
            out.append("| %d | %d | %.2f | %.1f%% | %.0f | %s | %.2f | %.0f |" % (
                int(r[1]), int(r[2]), rate / 1e6, 100 * rate / CAP, issued,
                "yes" if issued == int(r[2]) * (self.ids + 1) else "**no**", issued / float(r[8]) / 1e6, float(r[7])))
        return "\n".join(out)

    def sched_note(self, key, c):
        r = self.cell.get((key, c))
        if not r or r[9] == "-":
            return ""
        return " (backends on a CPU %.0f%%, waiting for one %.0f%% of the time)" % (100 * float(r[9]), 100 * float(r[10]))


# --- suite 3: inserts -------------------------------------------------------------

class Inserts:
    """inserts.tsv: key tps wal_bytes pk_bytes heap_bytes idx_read idx_hit checkpoints rows;
    insert_chunks.tsv: key chunk tps seconds wal_bytes checkpoints."""

    FIELDS = ("tps", "wal", "pk", "heap", "rd", "hit", "ck", "rows")

    def __init__(self, out, meta):
        self.keys = meta.list("INS_KEYS")
        self.label = meta.labels("INS_LABEL", self.keys)
        self.batch = meta.int("INS_BATCH")
        self.sb = meta.int("SHARED_BUFFERS_BYTES")
        self.chunks = meta.int("INS_CHUNKS")
        self.chunk_rows = meta.int("INS_CHUNK_ROWS")
        self.d = {r[0]: dict(zip(self.FIELDS, map(float, r[1:]))) for r in read_tsv(os.path.join(out, "data", "inserts.tsv"))}
        self.chunk = {(r[0], int(r[1])): float(r[2]) for r in read_tsv(os.path.join(out, "data", "insert_chunks.tsv"))}

    def per_row(self, key, field):
        return self.d[key][field] / self.d[key]["rows"]

    def table(self):
        base = self.d["bigserial"]["tps"] * self.batch
        out = ["| Key | rows/s | x bigserial | PK index MB | PK bytes per row | PK / shared_buffers | heap bytes per row | WAL bytes per row | PK blocks read | PK blocks hit | PK reads per 1,000 rows | checkpoints |",
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for k in self.keys:
            d = self.d[k]
            rate = d["tps"] * self.batch
            out.append("| %s | %.0f | %.2f | %.1f | %.1f | %.1fx | %.1f | %.1f | %.0f | %.0f | %.1f | %d |" % (
                self.label[k], rate, rate / base, d["pk"] / 1048576, d["pk"] / d["rows"], d["pk"] / self.sb,
                d["heap"] / d["rows"], d["wal"] / d["rows"], d["rd"], d["hit"], 1000 * d["rd"] / d["rows"], d["ck"]))
        return "\n".join(out)

    def chunk_table(self):
        out = ["| Key | " + "".join("rows %.1f-%.1f M | " % ((j - 1) * self.chunk_rows / 1e6, j * self.chunk_rows / 1e6)
                                    for j in range(1, self.chunks + 1)),
               "|---|" + "--:|" * self.chunks]
        for k in self.keys:
            out.append("| " + self.label[k] + " | " + "".join(
                "%.0f | " % (self.chunk.get((k, j), 0.0) * self.batch) for j in range(1, self.chunks + 1)))
        return "\n".join(out)


# --- suite 4: range scan ----------------------------------------------------------

SCAN_ORDER = ("mid_id", "mid_ts", "tail_id", "tail_ts")
SCAN_DESC = {
    "mid_id": "rows 50-51% (in id order): `id >= snowflake_from_timestamp(t1) AND id < snowflake_from_timestamp(t2)`",
    "mid_ts": "rows 50-51%: `created_at >= t1 AND created_at < t2`",
    "tail_id": "last 1% of the rows: `id >= snowflake_from_timestamp(t3)`",
    "tail_ts": "last 1% of the rows: `created_at >= t3`",
}


class Scan:
    """scan_plan.out (psql's output of the plans and row counts) and
    range_scan.tsv: query run ms."""

    def __init__(self, out, work):
        self.node, self.buf, self.rows, self.plans = {}, {}, {}, []
        q, mode = None, ""
        path = os.path.join(work, "scan_plan.out")
        lines = open(path, encoding="utf-8").read().splitlines() if os.path.exists(path) else []
        for line in lines:
            if line.startswith("@plan "):
                q, mode = line[6:], "plan"
                self.plans.append("-- " + q)
                continue
            if line.startswith("@rows "):
                q, mode = line[6:], "rows"
                continue
            if line.startswith("@"):
                mode = ""
                continue
            if mode == "rows":
                self.rows[q] = line
            elif mode == "plan":
                self.plans.append(line)
                if "Scan" in line and q not in self.node:
                    s = line.lstrip()
                    if s.startswith("->"):
                        s = s[2:].lstrip()
                    self.node[q] = s.split(" (actual", 1)[0].rstrip()
                if "Buffers:" in line and q not in self.buf:
                    self.buf[q] = line.split("Buffers:", 1)[1].strip()
        self.ms = {}
        for r in read_tsv(os.path.join(out, "data", "range_scan.tsv")):
            self.ms.setdefault(r[0], []).append(float(r[2]))

    def table(self):
        out = ["| Query | plan (scan node) | buffers | rows | median ms | min - max ms |",
               "|---|---|---|--:|--:|--:|"]
        for k in SCAN_ORDER:
            ms = self.ms.get(k, [0.0])
            out.append("| %s | %s | %s | %s | %.2f | %.2f - %.2f |" % (
                SCAN_DESC[k], self.node.get(k, ""), self.buf.get(k, ""), commas(self.rows.get(k, 0)),
                statistics.median(ms), min(ms), max(ms)))
        return "\n".join(out)


# --- suite 5: core ------------------------------------------------------------------

def core_rows(path):
    """Google Benchmark's CSV: (name, real ns, cpu ns, items/s or None, ns per id, error)."""
    def ns(x, unit):
        return float(x) * {"us": 1e3, "ms": 1e6, "s": 1e9}.get(unit, 1)
    out = []
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            name = row["name"]
            if row.get("error_occurred") == "true":
                out.append((name, None, None, None, None, True))
                continue
            rt, ct = ns(row["real_time"], row["time_unit"]), ns(row["cpu_time"], row["time_unit"])
            items = float(row["items_per_second"]) if row.get("items_per_second") else None
            per = 1e9 / items if items else ct
            out.append((name, rt, ct, items, per, False))
    return out


def core_table(path):
    out = ["| Benchmark | real ns per iteration | CPU ns per iteration | items/s | ns per id | <= %d ns |" % CORE_TARGET_NS,
           "|---|--:|--:|--:|--:|:-:|"]
    for name, rt, ct, items, per, err in core_rows(path):
        if err:
            out.append("| %s | error | | | | |" % name)
        else:
            out.append("| %s | %.1f | %.1f | %s | %.3g | %s |" % (
                name, rt, ct, "%.3g" % items if items else "-", per, "yes" if per <= CORE_TARGET_NS else "no"))
    return "\n".join(out)


# --- plots ---------------------------------------------------------------------------

POINTS = (7, 5, 9, 11)            # gnuplot point types of the curves, in key order

def make_plots(out, work, meta, calls, conc):
    clients = sorted(conc.clients)
    with open(os.path.join(work, "conc_ids.dat"), "w", encoding="utf-8") as f:
        for c in clients:
            f.write("\t".join([str(c)] + ["%.6g" % (conc.rate(k, c) / 1e6) for k in conc.keys]) + "\n")
    with open(os.path.join(work, "conc_p99.dat"), "w", encoding="utf-8") as f:
        for c in clients:
            f.write("\t".join([str(c)] + [conc.cell[(k, c)][5] if (k, c) in conc.cell else "" for k in conc.keys]) + "\n")
    with open(os.path.join(work, "calls_rate.dat"), "w", encoding="utf-8") as f:
        for k in calls.keys:
            if calls.of("ps", k):
                n = calls.of("ps", k)[-1][3]
                f.write('"%s"\t%.3f\n' % (calls.label[k], n / statistics.median(r[4] for r in calls.of("ps", k)) / 1000))
    cap_m, target_m = CAP / 1e6, TARGET_PER_S / 1e6
    cap_line = f'{cap_m:g} with lines dt 2 lc rgb "black" title "snowflake cap {cap_m:g} M/s", \\\n     ' \
               f'{target_m:g} with lines dt 3 lc rgb "red" title "target {target_m:g} M/s"'
    gen = ", \\\n     ".join(
        ('"%s" using 1:%d' % (os.path.join(work, "conc_ids.dat"), i + 2) if i == 0 else '"" using 1:%d' % (i + 2))
        + ' with linespoints lw 2 pt %d title "%s"' % (POINTS[i % len(POINTS)], conc.label[k].replace(", CACHE", " CACHE"))
        for i, k in enumerate(conc.keys))
    p99 = gen.replace(os.path.join(work, "conc_ids.dat"), os.path.join(work, "conc_p99.dat"))
    ins = ", \\\n     ".join(
        '"%s" using 1:2 with linespoints lw 2 pt %d ps 0.6 title "%s"' % (
            os.path.join(out, "data", "insert_progress_%s.tsv" % k), POINTS[i % len(POINTS)], meta.labels("INS_LABEL", [k])[k])
        for i, k in enumerate(meta.list("INS_KEYS")))
    script = f'''set terminal pngcairo size 900,540 font "sans,10" noenhanced
set grid ytics mytics lc rgb "#dddddd"
set key outside right top

set output "{out}/ids_by_clients.png"
set title "Ids per second by pgbench clients ({conc.ids} ids per statement, {os.cpu_count()} cores)"
set xlabel "clients (pgbench -c = -j)"
set ylabel "million ids per second (log scale)"
set logscale y
set logscale x 2
set xtics ({", ".join(str(c) for c in clients)})
set xrange [0.8:10]
plot {gen}, \\
     {cap_line}

set output "{out}/p99_by_clients.png"
set title "p99 latency of one statement ({conc.ids} ids) by clients"
set ylabel "ms (log scale)"
plot {p99}

unset logscale
unset xtics
set xtics
set autoscale x
set output "{out}/insert_rows_per_s.png"
set title "INSERT rows per second over time ({meta["INS_CLIENTS"]} clients, {meta["INS_BATCH"]} rows per statement, shared_buffers {meta["SHARED_BUFFERS"]})"
set xlabel "seconds of this table's own load (its chunks back to back)"
set ylabel "rows per second"
set yrange [0:*]
set format y "%.0s%c"
plot {ins}

set output "{out}/calls_one_backend.png"
set title "One backend: million ids per second (ProjectSet form, median of {meta["CALL_ROUNDS"]} rounds)"
set xlabel ""
set ylabel "million ids per second (log scale)"
set logscale y
set yrange [*:*]
set format y "%g"
set style fill solid 0.6
set boxwidth 0.6
set xtics rotate by -20
set key inside top right
plot "{work}/calls_rate.dat" using 0:2:xtic(1) with boxes lc rgb "#4477aa" notitle, \\
     "" using 0:2:(sprintf("%.2f", $2)) with labels offset 0,0.8 notitle, \\
     {cap_line}
'''
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


# --- bench/http_ceiling.sh ---------------------------------------------------------------

# own_*: the second instance, its endpoint on a worker id of its own
# (snowflake.http_worker_id; issue 32).
CEILING_PHASES = (("alone", "alone (no HTTP client)"),
                  ("ceiling", "HTTP client, ceiling at its default"),
                  ("no_ceiling", "HTTP client, no ceiling (0)"),
                  ("own_alone", "own worker id: alone (no HTTP client)"),
                  ("own_ceiling", "own worker id: HTTP client, ceiling at its default"),
                  ("own_no_ceiling", "own worker id: HTTP client, no ceiling (0)"))
GOAL_OWN_P99_RATIO = 1.5  # issue 32: SQL p99 beside a client at the ceiling, the endpoint on its own worker id, over idle


class Ceiling:
    """http_ceiling.tsv: round phase setting statements p50_ms p99_ms mean_ms
    overflow_waits ids_issued seconds http_requests http_seconds http_non_2xx
    http_socket_errors sql_max_sequence; http_ceiling_meta.tsv: name value."""

    def __init__(self, out):
        self.rows = [dict(zip(("round", "phase", "setting", "tx", "p50", "p99", "mean", "ow", "ids", "s",
                               "req", "hs", "non2xx", "sockerr", "maxseq"), r))
                     for r in read_tsv(os.path.join(out, "data", "http_ceiling.tsv"), header=True)]
        self.meta = dict((r[0], r[1]) for r in read_tsv(os.path.join(out, "data", "http_ceiling_meta.tsv")))
        self.ok = bool(self.rows)

    def of(self, phase):
        return [r for r in self.rows if r["phase"] == phase]

    def ratio(self, phase, field):
        """Median over rounds of PHASE's FIELD over the same round's alone run
        of the same instance."""
        alone = {r["round"]: float(r[field]) for r in self.of("own_alone" if phase.startswith("own_") else "alone")}
        x = [float(r[field]) / alone[r["round"]] for r in self.of(phase) if alone.get(r["round"])]
        return statistics.median(x) if x else float("nan")

    def ow_per_s(self, phase):
        rs = self.of(phase)
        return sum(int(r["ow"]) for r in rs) / sum(float(r["s"]) for r in rs)

    def max_sequence(self, phase):
        """The highest sequence among the SQL session's ids over PHASE's runs (-1: not recorded)."""
        return max((int(r["maxseq"]) for r in self.of(phase) if r.get("maxseq", "-") not in ("-", "")), default=-1)

    def summary(self):
        """One sentence: the ratios and overflow waits (also in docs/benchmarks.md)."""
        return ("SQL `snowflake_nextval()` beside one HTTP client pulling 10,000-id batches, as a ratio to the same "
                "rounds without it: with the ceiling at its default, mean latency **%.2fx** (p50 %.2fx, p99 %.2fx); "
                "without the ceiling, **%.2fx** (p50 %.2fx, p99 %.2fx). Overflow waits per second: %.0f at the ceiling, "
                "%.0f without it, %.0f alone." % (
                    self.ratio("ceiling", "mean"), self.ratio("ceiling", "p50"), self.ratio("ceiling", "p99"),
                    self.ratio("no_ceiling", "mean"), self.ratio("no_ceiling", "p50"), self.ratio("no_ceiling", "p99"),
                    self.ow_per_s("ceiling"), self.ow_per_s("no_ceiling"), self.ow_per_s("alone"))
                + self.own_summary())

    def own_summary(self):
        """The second instance's sentence (issue 32), or nothing if it was not run."""
        if not self.of("own_ceiling"):
            return ""
        last = layout.ids_per_ms() - 1
        top = max(self.max_sequence(p) for p in ("own_ceiling", "own_no_ceiling"))
        p99 = self.ratio("own_ceiling", "p99")
        return (" With the endpoint on a worker id of its own (`snowflake.http_worker_id`), against that instance's "
                "rounds without HTTP: at the ceiling, mean **%.2fx** (p50 %.2fx, p99 **%.2fx**: issue 32's goal, p99 "
                "<= %.1fx idle, **%s** here, where wrk is the client and no CPU-matched control is run); without the "
                "ceiling, mean %.2fx (p50 %.2fx, p99 %.2fx). Its overflow waits per second, %.0f at the ceiling and %.0f "
                "without it, were %s: the SQL session's highest sequence there was %d of %d." % (
                    self.ratio("own_ceiling", "mean"), self.ratio("own_ceiling", "p50"), p99, GOAL_OWN_P99_RATIO,
                    "met" if p99 <= GOAL_OWN_P99_RATIO else "NOT met",
                    self.ratio("own_no_ceiling", "mean"), self.ratio("own_no_ceiling", "p50"),
                    self.ratio("own_no_ceiling", "p99"), self.ow_per_s("own_ceiling"), self.ow_per_s("own_no_ceiling"),
                    "all the endpoint's" if 0 <= top < last else "not shown to be the endpoint's alone", top, last))

    def markdown(self):
        m = self.meta
        batch = int(m.get("batch", 10000))
        ceiling = int(m.get("ceiling", 0))
        out = [
            "One psql session runs `SELECT snowflake_nextval()` %s times, one statement at a time, in each of six phases, alternating within each of %s round(s) on two instances, three phases on each:" % (commas(m.get("calls", 0)), m.get("rounds")),
            "*alone*; *ceiling*: while one HTTP client (wrk, one keep-alive connection) pulls `GET /v1/ids/batch?count=%d` in a loop," % batch,
            "`snowflake.http_max_ids_per_second` at its default (%s ids/s, %.0f%% of the %s ids/s cap); *no ceiling*: the same client, the setting 0." % (commas(ceiling), 100 * ceiling / CAP, commas(CAP)),
            "The first instance's HTTP ids and SQL ids share worker id 1 (and its 4,096 ids a millisecond); the second's endpoint issues under a worker id of its own (*own worker id*: `snowflake.worker_id = 2`, `snowflake.http_worker_id = %s`)." % m.get("own_http_id", "?"),
            "The setting changes by ALTER SYSTEM and a reload between phases. Latency per statement is psql's `\\timing` (round trip included), ms, nearest rank;",
            "overflow waits and ids issued are `snowflake_stats` deltas over the SQL run (SQL and HTTP ids together, both generators); HTTP figures over wrk's run, from 0.5 s before the SQL run to its end.",
            "*SQL's highest sequence*: the largest place within its millisecond (0 to %d) of any id the SQL session got; on the second instance SQL's generator has no other caller, so below %d it shows that no overflow wait was SQL's." % (layout.ids_per_ms() - 1, layout.ids_per_ms() - 1),
            "Ratios are medians over rounds of the phase's figure over the same instance's *alone* run of the same round.",
            "",
            "| phase | statements | p50 | p99 | mean | p50 / alone | p99 / alone | mean / alone | overflow waits (per s) | SQL's highest sequence | ids issued per s (% of cap) | HTTP ids per s | HTTP 429 (non-2xx) per s |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for phase, label in CEILING_PHASES:
            rs = self.of(phase)
            if not rs:
                continue
            secs = sum(float(r["s"]) for r in rs)
            ids_s = sum(int(r["ids"]) for r in rs) / secs
            med = {f: statistics.median(float(r[f]) for r in rs) for f in ("p50", "p99", "mean")}
            if phase in ("alone", "own_alone"):
                ratios, http_ids, http_429 = "1 | 1 | 1", "-", "-"
            else:
                ratios = "%.2f | %.2f | %.2f" % (self.ratio(phase, "p50"), self.ratio(phase, "p99"), self.ratio(phase, "mean"))
                hs = sum(float(r["hs"]) for r in rs if r["hs"] != "-")
                ok = sum(int(r["req"]) - int(r["non2xx"]) for r in rs if r["req"] != "-")
                bad = sum(int(r["non2xx"]) for r in rs if r["req"] != "-")
                http_ids = commas(ok * batch / hs) if hs else "-"
                http_429 = "%.0f" % (bad / hs) if hs else "-"
            top = self.max_sequence(phase)
            out.append("| %s | %d | %.3f | %.3f | %.3f | %s | %d (%.0f) | %s | %s (%.1f%%) | %s | %s |" % (
                label, sum(int(r["tx"]) for r in rs), med["p50"], med["p99"], med["mean"], ratios,
                sum(int(r["ow"]) for r in rs), self.ow_per_s(phase), top if top >= 0 else "-", commas(ids_s),
                100 * ids_s / CAP, http_ids, http_429))
        out += ["", self.summary(),
                "Load average at the start: %s; at the end: %s on %d cores (wrk, the HTTP worker, the backend and psql share them)." % (
                    m.get("load_start", "?"), m.get("load_end", "?"), os.cpu_count())]
        return "\n".join(out)


# --- the report -------------------------------------------------------------------------

def section(out, name, status):
    """A suite's own markdown (OUT/NAME.md), or why it is missing."""
    path = os.path.join(out, name + ".md")
    if nonempty(path) and not status:
        return open(path, encoding="utf-8").read().rstrip("\n")
    return status


def full(out, meta_path):
    meta = Meta(meta_path)
    work, root, mode = meta["W"], meta["ROOT"], meta["MODE"]
    calls, conc, ins = Calls(out, meta), Concurrency(out, meta), Inserts(out, meta)
    scan = Scan(out, work)
    ceiling = Ceiling(out)
    date_utc = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    elapsed = int(time.time()) - meta.int("START_S")
    commit = (git(root, "rev-parse", "--short", "HEAD") or "unknown\n").strip()
    dirty = len((git(root, "status", "--porcelain", "--", "src", "Makefile", "snowflake--*.sql") or "").splitlines())
    nproc = os.cpu_count()
    cap_m = "%g" % (CAP / 1e6)

    make_plots(out, work, meta, calls, conc)

    # Headline figures.
    sf_rates = calls.rate("sf")
    sf_rate = statistics.median(sf_rates)
    v7x, v7x_lo, v7x_hi = ("%.2f" % x for x in calls.round_ratio("v7", "v4"))
    sf_lead, sf_lead_min, sf_lead_n = calls.leads("sf")
    b_lead, b_lead_min, _ = calls.leads("batch")
    v7_lead, v7_lead_min, _ = calls.leads("v7")
    conc_ahead_n, conc_ahead_max = (meta["CONC_AHEAD"].split() + ["0", "0"])[:2]
    ins_sf_bad, ins_sf_max = (meta["INS_AHEAD_SF"].split() + ["0", "0"])[:2]
    ins_v7_bad, ins_v7_max = (meta["INS_AHEAD_V7"].split() + ["0", "0"])[:2]
    v7_bpr = "%.1f" % ins.per_row("v7", "pk")
    big_bpr = "%.1f" % ins.per_row("bigserial", "pk")
    v4_bpr = "%.1f" % ins.per_row("v4", "pk")
    big_tps = ins.d["bigserial"]["tps"]
    v7_ratio = "%.2f" % (ins.d["v7"]["tps"] / big_tps)
    v4_ratio = "%.2f" % (ins.d["v4"]["tps"] / big_tps)
    core_csv = os.path.join(out, "data", "core.csv")
    http_tsv = os.path.join(out, "data", "http.tsv")

    t = ["| Target | Measured in this run | |", "|---|---|---|"]
    t.append("| snowflake_nextval(), one backend: >= %g M ids/s (%.0f%% of the %s M/s cap) | %.3f M/s median of rounds (%.2f - %.2f), %.1f%% of the cap%s | %s |" % (
        TARGET_PER_S / 1e6, 100 * TARGET_PER_S / CAP, cap_m, sf_rate / 1e6, min(sf_rates) / 1e6, max(sf_rates) / 1e6,
        100 * sf_rate / CAP, calls.sched("sf"), met(sf_rate >= TARGET_PER_S)))
    t.append("| uuidv7() >= 5x gen_random_uuid(), same run | %sx (median of per-round ratios; %s - %s) | %s |" % (
        v7x, v7x_lo, v7x_hi, met(float(v7x) >= 5)))
    for c in (1, 2, 4):
        r = conc.rate("sf", c)
        t.append("| snowflake_nextval(), %d pgbench client(s): >= %g M ids/s | %.3f M/s, %.1f%% of the cap%s | %s |" % (
            c, TARGET_PER_S / 1e6, r / 1e6, 100 * r / CAP, conc.sched_note("sf", c), met(round(r) >= TARGET_PER_S)))
    t.append("| Snowflake ids never later than the clock | one backend: largest lead %.3f ms (%d statements), batch %.3f ms; pgbench: %s of all statements ahead; inserts: %s of %.0f rows with id time > created_at | %s |" % (
        sf_lead, sf_lead_n, b_lead, conc_ahead_n, ins_sf_bad, ins.d["sf"]["rows"],
        met(round(sf_lead, 3) <= 0 and round(b_lead, 3) <= 0 and conc_ahead_n == "0" and ins_sf_bad == "0")))
    t.append("| uuidv7 PK index <= 32 bytes per row | %s bytes per row (bigserial %s, gen_random_uuid() %s) | %s |" % (
        v7_bpr, big_bpr, v4_bpr, met(float(v7_bpr) <= 32)))
    t.append("| uuidv7 inserts >= 0.85x bigserial rows/s | %sx (gen_random_uuid() %sx) | %s |" % (v7_ratio, v4_ratio, met(float(v7_ratio) >= 0.85)))
    if nonempty(core_csv):
        good = [r for r in core_rows(core_csv) if not r[5]]
        ok = sum(1 for r in good if r[4] <= CORE_TARGET_NS)
        worst, best = max(good, key=lambda r: r[4]), min(good, key=lambda r: r[4])
        t.append("| core (build/core_bench): <= %d ns per id | %d of %d benchmarks at or under %d ns per id; fastest %s %.3g ns, slowest %s %.3g ns per id | %s |" % (
            CORE_TARGET_NS, ok, len(good), CORE_TARGET_NS, best[0], best[4], worst[0], worst[4], met(ok == len(good))))
    else:
        t.append("| core (build/core_bench): <= %d ns per id | not measured: %s | not measured |" % (CORE_TARGET_NS, meta["CORE_STATUS"]))
    if nonempty(http_tsv) and not meta["HTTP_STATUS"]:
        http = read_tsv(http_tsv, header=True)
        h_best = max([float(r[5]) for r in http if r[0] == "http" and r[1] == "1000"], default=0.0)
        h_sql = max([float(r[5]) for r in http if r[0] == "sql" and r[1] == "1000"], default=0.0)
        h_p99 = next((r[7] for r in http if r[0] == "http" and r[1] == "1" and r[2] == "1"), "")
        s_p99 = next((r[7] for r in http if r[0] == "sql" and r[1] == "1" and r[2] == "1"), "")
        t.append("| HTTP /v1/ids/batch?count=1000 (wrk, keep-alive): >= %.0f%% of the cap | %.3f M/s, %.1f%% of the cap (snowflake_nextval_batch(1000) over SQL: %.3f M/s) | %s |" % (
            100 * HTTP_TARGET_SHARE, h_best / 1e6, 100 * h_best / CAP, h_sql / 1e6, met(h_best >= HTTP_TARGET_SHARE * CAP)))
        t.append("| HTTP count=1, one connection: p99 < 1 ms | %s ms (SQL, one pgbench client: %s ms) | %s |" % (
            h_p99, s_p99, met(h_p99 != "" and float(h_p99) < 1)))
    targets = "\n".join(t)

    machine = "%d cores (%s), %s, %s, Linux %s" % (nproc, machine_cpu(), machine_mem(),
                                                   " ".join(meta["PG_VERSION_STR"].split()[:2]), platform.release())
    dirty_note = ", with uncommitted changes in src/ or the install script" if dirty else ""
    call_n, call_n_slow = commas(meta["CALL_N"]), commas(meta["CALL_N_SLOW"])
    sf_rows = ins.d["sf"]["rows"]
    idx_bytes = float(meta["CREATED_AT_INDEX_BYTES"])
    conc_ahead_line = ("Statements whose newest id was later than the clock: none." if conc_ahead_n == "0" else
                       "Statements whose newest id was later than the clock: **%s** (largest lead %s us)." % (conc_ahead_n, conc_ahead_max))
    if nonempty(core_csv):
        core = ["`build/core_bench --benchmark_min_time=%s` (Google Benchmark, bench/core_bench.cpp), run after the instance stopped." % meta["CORE_MIN_TIME"],
                "ns per id is 1e9 / items_per_second when the benchmark sets items processed, else CPU ns per iteration."]
        if meta["CORE_STATUS"]:
            core.append("Note: " + meta["CORE_STATUS"])
        console = os.path.join(work, "core.out")
        core += ["", core_table(core_csv), "", "<details><summary>Console output</summary>", "", "```",
                 open(console, encoding="utf-8").read().rstrip("\n") if os.path.exists(console) else "", "```", "", "</details>"]
        core_md = "\n".join(core)
    else:
        core_md = meta["CORE_STATUS"]
    ceiling_md = ceiling.markdown() if ceiling.ok and not meta["CEILING_STATUS"] else meta["CEILING_STATUS"]

    latest = f"""# snowflake benchmark results

Generated by `bench/run.sh` ({mode} mode) on {date_utc} in {elapsed // 60} min {elapsed % 60} s;
commit {commit}{dirty_note}.
Do not edit: every figure below comes from this run. The method is in [docs/benchmarks.md](../{"../" if mode == "quick" else ""}../docs/benchmarks.md).

## Machine

| | |
|---|---|
| CPU | {machine_cpu()}, {nproc} cores (nproc) |
| Memory | {machine_mem()} |
| Kernel | Linux {platform.release()} |
| PostgreSQL | {meta["PG_VERSION_STR"]} |
| Instance | {meta["SETTINGS"]}; snowflake preloaded, worker_id 1 |
| Load average (1, 5, 15 min) | at the start {meta["LOAD_START"]}, before the core suite {meta["LOAD_END"]}: other work on the machine shares these cores, which is why every comparison is made within the run |

## Targets

{targets}

## 1. Calls, one backend

One psql session runs {meta["CALL_ROUNDS"]} rounds; each round runs every expression once in each of two statement forms, in the same order
(A B C ... A B C ...), so that drift of the machine hits all of them alike. One warm-up round is not counted.
Times are psql's `\\timing` of the whole statement. *Above floor* subtracts the `now()` statement of the same form.
*On CPU* and *run-queue wait* are the backend's own /proc/PID/schedstat deltas over the statement, as a share of its wall time:
a run-queue wait above a few percent means other processes took the CPU from it. *ms used up* (snowflake) is
`snowflake_stats.overflow_waits` per elapsed millisecond: the share of milliseconds whose {commas(layout.ids_per_ms())} ids were all issued.
`gen_random_uuid()` makes {call_n_slow} values per statement (it takes microseconds each), the others {call_n}.

### ProjectSet form: `SELECT count(x) FROM (SELECT EXPR AS x, generate_series(1, N)) s`

The set-returning function in the target list produces values one call at a time; nothing is stored. This is the form the targets are judged on.
For the batch: `SELECT count(x) FROM (SELECT snowflake_nextval_batch(N) AS x) s` (no generate_series, so its *above floor* is slightly understated).

{calls.table("ps")}

![ids per second, one backend](calls_one_backend.png)

Throughput ratios, ProjectSet form (medians of whole statements, floor included on both sides): row is N times as fast as column.

{calls.ratios()}

### Function Scan form: `SELECT count(EXPR) FROM generate_series(1, N)`

generate_series in FROM materializes the whole series in a tuplestore before the aggregate reads it; that storing dominates the floor.
For the batch: `SELECT count(x) FROM snowflake_nextval_batch(N) AS x`.

{calls.table("from")}

### Ids and the clock

After the timed rounds, {meta["CALL_ROUNDS"]} more statements per generator, each reading `clock_timestamp()` right after making its {call_n} ids (the outer SELECT runs after the aggregate).
Lead = the newest id's time minus that clock reading; a snowflake id's time is the start of its millisecond, so a lead > 0 would be an id from a millisecond the clock had not reached.

| Generator | largest lead, ms | smallest lead, ms |
|---|--:|--:|
| snowflake_nextval() | {sf_lead:.3f} | {sf_lead_min:.3f} |
| snowflake_nextval_batch({meta["CALL_N"]}) | {b_lead:.3f} | {b_lead_min:.3f} |
| uuidv7() (same session as the timed rounds) | {v7_lead:.3f} | {v7_lead_min:.3f} |
| uuidv7() (fresh session, one statement) | {meta["V7_FRESH_LEAD"]} | |

uuidv7() keeps its values strictly increasing within a backend by advancing a 12-bit sub-millisecond fraction
(1/4,096 ms per step) when the clock has not moved. A backend that makes more than 4.096 M UUIDs per second therefore
runs ahead of the clock, and the lead carries over from statement to statement within the session (see the note in docs/benchmarks.md).

## 2. Concurrency, pgbench

`pgbench -c C -j C -T {meta["CONC_SECONDS"]}` per generator and client count, clients in the outer loop and generators in the inner one.
Each statement makes {commas(conc.ids)} ids in the ProjectSet form, so that the client round trip (~0.1 ms) is noise.
The snowflake statement also computes `snowflake_timestamp(max(x)) - clock_timestamp()` and records any positive lead (pgbench `\\gset`/`\\if`).
Ids/s = pgbench tps (without connection time) x ids per statement; latencies are per statement, from `pgbench --log` (nearest rank).

Million ids per second:

{conc.matrix("ids")}

p99 statement latency, ms (statements in the run, so the p99 of a few dozen is close to their maximum):

{conc.matrix("p99")}

Median statement latency, ms:

{conc.matrix("p50")}

Each backend's share of the time on a CPU / waiting for one (run queue), from /proc/PID/schedstat of pgbench's backends
over the run minus its first 0.3 s and last second (QUICK: last 0.3 s). With more clients than the {nproc} cores they wait for each other; at 1 client, a wait means other work took the CPU:

{conc.matrix("sched")}

snowflake_nextval(), cross-checked with `snowflake_stats.ids_issued` (delta over pgbench's wall time, connections included).
The ProjectSet form evaluates the volatile expression once more than it returns rows (the call that finds generate_series
finished), so each statement issues ids + 1 ids; the count check allows for that:

{conc.snowflake_table()}

{conc_ahead_line}

![ids per second by clients](ids_by_clients.png)

![p99 by clients](p99_by_clients.png)

## 3. Inserts

Four tables `(id <key> PRIMARY KEY, created_at timestamptz DEFAULT clock_timestamp(), payload int)`, each loaded with
{commas(meta["INS_ROWS"])} rows by `pgbench -c {meta["INS_CLIENTS"]} -j {meta["INS_CLIENTS"]}`, {meta["INS_BATCH"]} rows per INSERT statement, in {meta["INS_CHUNKS"]} chunks
interleaved across the four tables (bigserial, snowflake, v4, v7, bigserial, ...) so that drift hits all alike. One CHECKPOINT before the
first chunk; later checkpoints come from max_wal_size as they would in production. rows/s = rows / the sum of the chunks' pgbench times; WAL from `pg_current_wal_lsn()` deltas around each chunk;
PK blocks from `pg_statio_user_indexes` (a *read* is a miss in shared_buffers, served by the OS page cache here).

{ins.table()}

Rows per second of each chunk (pgbench tps x {meta["INS_BATCH"]}), by the table's size before and after the chunk:

{ins.chunk_table()}

Every row's id time compared with its `created_at` (evaluated after the id): snowflake {ins_sf_bad} rows with id time later
(largest id time - created_at: {ins_sf_max} ms; negative is behind); uuidv7 {ins_v7_bad} rows later (largest {ins_v7_max} ms).

![insert rows per second over time](insert_rows_per_s.png)

## 4. Range scan by time

On the snowflake table after its load (VACUUM ANALYZE first): rows of a time window found through the primary key with
`snowflake_from_timestamp()`, against the same window through a separate index on `created_at`. Both fetch the heap (`count(payload)`).
The windows' bounds t1, t2, t3 are the created_at of the rows at 50%, 51% and 99% of the table in id order.
{meta["SCAN_RUNS"]} interleaved runs after one warm-up. Row counts differ slightly: created_at is read a little after the id.

{scan.table()}

The created_at index costs {idx_bytes / 1048576:.1f} MB ({idx_bytes / sf_rows:.1f} bytes per row)
and took {float(meta["CREATED_AT_INDEX_S"]):.1f} s to build; the primary key ({float(meta["SF_PK_BYTES"]) / 1048576:.1f} MB) answers the same
queries, so a table keyed by snowflake ids can leave it out (and the 8-byte column with it).

<details><summary>Plans (EXPLAIN ANALYZE, BUFFERS, COSTS OFF)</summary>

```
{chr(10).join(scan.plans)}
```

</details>

## 5. Core micro-benchmark

{core_md}

## 6. Sporadic calls

{section(out, "sporadic", meta["SPORADIC_STATUS"])}

## 7. Worker ids leased from etcd and ZooKeeper

{section(out, "lease", meta["LEASE_STATUS"])}

## 8. Ids over HTTP

{section(out, "http", meta["HTTP_STATUS"])}

## 9. SQL latency beside an HTTP client at the ceiling

{ceiling_md}

## 10. The embedded generator

{section(out, "sdk", meta["SDK_STATUS"])}

## 11. The ID buffer

{section(out, "buffer", meta["BUFFER_STATUS"])}
"""
    with open(os.path.join(out, "latest.md"), "w", encoding="utf-8") as f:
        f.write(latest)

    # The generated section of docs/benchmarks.md.
    docs = os.path.join(root, "docs", "benchmarks.md")
    if meta["UPDATE_DOCS"] != "yes" or not os.path.exists(docs):
        return
    text = open(docs, encoding="utf-8").read().split("\n")
    if not any(line.startswith("<!-- results:begin") for line in text):
        return
    wal = {k: "%.0f" % ins.per_row(k, "wal") for k in ("bigserial", "sf", "v4", "v7")}
    s = ["Latest full run (`make bench`): **%s**, commit %s%s, %d min %d s, on %s; load average at the start %s." % (
            date_utc, commit, " plus uncommitted changes in src/" if dirty else "", elapsed // 60, elapsed % 60, machine, meta["LOAD_START"]),
         "Full tables: [bench/results/latest.md](../bench/results/latest.md).", "", targets, "",
         "Also measured: snowflake inserts %.2fx bigserial rows/s;" % (ins.d["sf"]["tps"] / big_tps),
         "WAL bytes per row bigserial %s," % wal["bigserial"], "snowflake %s," % wal["sf"],
         "gen_random_uuid() %s," % wal["v4"], "uuidv7 %s;" % wal["v7"]]
    sporadic = read_tsv(os.path.join(out, "data", "sporadic.tsv"), header=True)
    if nonempty(os.path.join(out, "sporadic.md")) and sporadic:
        p99 = {r[0]: float(r[4]) for r in sporadic if r[1] == "10" and r[4]}
        ratio = "%.2f" % (p99["sf"] / p99["seq"]) if p99.get("seq") else ""
        waits = next((line.split("**")[1] for line in open(os.path.join(out, "sporadic.md"), encoding="utf-8")
                      if line.startswith("reservation_waits after the first id: **")), "?")
        s.append("Sporadic calls (one client at 2 and 10 calls/s, fsync on): p99 of snowflake_nextval() %sx that of nextval() at 10 calls/s; reservation_waits after the first id: %s." % (ratio, waits))
    if nonempty(os.path.join(out, "http.md")):
        goals = next((line[len("Goals: "):].rstrip("\n") for line in open(os.path.join(out, "http.md"), encoding="utf-8")
                      if line.startswith("Goals: ")), "")
        s.append("Ids over HTTP (bench/http.sh): " + goals)
    if ceiling.ok and not meta["CEILING_STATUS"]:
        s.append("HTTP ceiling (bench/http_ceiling.sh): " + ceiling.summary())
    s += ["uuidv7() timestamps %s ms ahead of the clock after %s UUIDs in one statement of a fresh session (see *How to read the results*)." % (meta["V7_FRESH_LEAD"], call_n),
          "", "![ids per second by clients](../bench/results/ids_by_clients.png)",
          "", "![insert rows per second over time](../bench/results/insert_rows_per_s.png)",
          "", "![ids per second, one backend](../bench/results/calls_one_backend.png)"]
    new, skip = [], False
    for line in text:
        if line.startswith("<!-- results:begin"):
            new += [line, "<!-- generated by bench/run.sh: do not edit between these markers -->"] + s
            skip = True
            continue
        if line.startswith("<!-- results:end"):
            skip = False
        if not skip:
            new.append(line)
    with open(docs, "w", encoding="utf-8") as f:
        f.write("\n".join(new))


def main(argv):
    if len(argv) == 3 and argv[0] == "full":
        full(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "http-ceiling":
        c = Ceiling(argv[1])
        if not c.ok:
            sys.exit("report.py: no data in %s/data/http_ceiling.tsv" % argv[1])
        print(c.markdown())
    elif len(argv) >= 2 and argv[0] == "percentiles":
        values = [float(x) for x in sys.stdin.read().split()]
        print("\t".join("%s" % pct(values, float(p)) if values else "" for p in argv[1:]))
    elif len(argv) == 2 and argv[0] == "commas":
        print(commas(argv[1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
