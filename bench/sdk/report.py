"""bench/sdk/report.py: OUT/sdk.md from the raw figures of bench/sdk.sh.

    /usr/bin/python3 bench/sdk/report.py OUT META_TSV

Reads OUT/data/sdk.tsv (round, impl, key, value: the lines that
bench/sdk_c_bench.c, compare.js and compare.py print) and the run's settings
(NAME<TAB>value), and writes OUT/sdk.md: the machine, the versions, each
generator's figures (the median over the rounds; ids and duplicates summed
over the run), the ratios to ours and the goals. Every figure in it comes
from the run; nothing is typed in. Standard library only.
"""
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import layout  # noqa: E402

CAP = layout.cap_per_s()
PER_MS = layout.ids_per_ms()

# impl -> (label, language, which of ours it is compared with)
IMPLS = {
    "c": ("libsnowflake_ids `sf_next_id` (ours)", "C", "c"),
    "node": ("Node.js binding `nextId()` (ours)", "Node.js", "node"),
    "sapphire": ("@sapphire/snowflake `generate()`", "Node.js", "node"),
    "nodejs-snowflake": ("nodejs-snowflake `getUniqueID()`", "Node.js", "node"),
    "flake-idgen": ("flake-idgen `next()`", "Node.js", "node"),
    "python": ("Python binding `next_id()` (ours)", "Python", "python"),
    "python-baseline": ("pure-Python PlainSnowflake `next_id()` (baseline written for this benchmark)", "Python", "python"),
}
OURS = ("c", "node", "python")
GOAL_NS = {"c": 60, "node": 100, "python": 200}
GOAL_CAP = 0.99


def read_meta(path):
    meta = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            meta[k] = v
    return meta


def read_rows(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        next(f, None)
        for line in f:
            parts = line.rstrip("\n").split("\t", 3)
            if len(parts) != 4:
                continue
            rnd, impl, key, value = parts
            rows.setdefault(impl, {}).setdefault(key, []).append(value)
    return rows


class Figures:
    def __init__(self, values):
        self.v = values

    def has(self, key):
        return key in self.v

    def median(self, key):
        return statistics.median(float(x) for x in self.v[key]) if key in self.v else None

    def spread(self, key):
        xs = [float(x) for x in self.v.get(key, [])]
        return (min(xs), max(xs)) if xs else None

    def total(self, key):
        return sum(int(x) for x in self.v[key]) if key in self.v else None

    def max(self, key):
        return max(int(x) for x in self.v[key]) if key in self.v else None

    def distinct_rate(self):
        """Median over the rounds of ids/s x (ids - duplicates) / ids: the ids/s that are new ids."""
        rates = [float(r) * (int(n) - int(d)) / int(n) for r, n, d in zip(self.v.get("ids_per_s", []), self.v.get("ids", []),
                                                                         self.v.get("dups", [])) if int(n)]
        return statistics.median(rates) if rates else None

    def wait_share(self):
        """Median over the rounds of the tight loop's time waiting for a CPU over its duration."""
        xs = [float(w) / (1000 * float(t)) for w, t in zip(self.v.get("tight_wait_ms", []), self.v.get("seconds", []))
              if float(t) > 0]
        return statistics.median(xs) if xs else None

    def first(self, key, default=""):
        return self.v[key][0] if key in self.v else default

    def all(self, key):
        return self.v.get(key, [])


def commas(n):
    return "{:,}".format(int(round(n)))


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(": ", 1)[1].strip()
                break
    mem = "unknown"
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = "%.1f GiB" % (int(line.split()[1]) / 1048576)
                break
    return "%s, %d cores, %s, Linux %s" % (cpu, os.cpu_count(), mem, platform.release())


def why_dups(impl, f):
    """What the run shows about the repeats (or their absence)."""
    dups, busiest = f.total("dups"), f.max("max_ids_one_ms")
    example = f.first("dup_example")
    if dups is None:
        return "not measured"
    if impl == "sapphire":
        if dups:
            return ("its 12-bit increment goes up by one at every `generate()` and wraps from 4,095 to 0 "
                    "without looking at the clock, and `generate()` never waits for the next millisecond: "
                    "a millisecond with more than %s calls (this run's busiest had %s) issues the same ids again: "
                    "%s of its %s ids were extra copies (first repeat: %s)"
                    % (commas(PER_MS), commas(busiest), commas(dups), commas(f.total("ids")), example))
        return "none in this run (its busiest millisecond had %s calls)" % commas(busiest)
    if dups:
        return "UNEXPECTED: %s repeats (first: %s); not explained by this report" % (commas(dups), example)
    if impl == "flake-idgen":
        return ("none: `next()` without a callback throws when a millisecond's %s ids are used up; the loop "
                "caught %s throws and called again (busiest millisecond: %s ids)"
                % (commas(PER_MS), commas(f.total("overflow_throws") or 0), commas(busiest)))
    if impl == "nodejs-snowflake":
        return ("none: it waits for the next millisecond; its busiest millisecond had %s ids (its documentation "
                "gives 1,024,000 ids/s as its limit)" % commas(busiest))
    if impl == "python-baseline":
        return ("none: it spins to the next millisecond when the sequence wraps (busiest millisecond: %s ids)"
                % commas(busiest))
    return "none: every id above the one before (busiest millisecond: %s ids; overflow waits: %s)" % (
        commas(busiest), commas(f.total("overflow_waits") or 0))


def main():
    out, meta_path = sys.argv[1:3]
    meta = read_meta(meta_path)
    rows = read_rows(os.path.join(out, "data", "sdk.tsv"))
    fig = {impl: Figures(rows.get(impl, {})) for impl in IMPLS}
    measured = {impl: fig[impl].has("ids_per_s") and fig[impl].has("ns_below_cap") for impl in IMPLS}
    rounds = int(meta["ROUNDS"])

    def status(impl):
        return "; ".join(fig[impl].all("status"))

    def ns_cell(impl):
        f = fig[impl]
        lo, hi = f.spread("ns_below_cap")
        return "%.1f" % f.median("ns_below_cap") + (" (%.1f-%.1f)" % (lo, hi) if rounds > 1 else "")

    def rate_cell(impl):
        f = fig[impl]
        lo, hi = f.spread("ids_per_s")
        return commas(f.median("ids_per_s")) + (" (%s-%s)" % (commas(lo), commas(hi)) if rounds > 1 else "")

    lines = []
    w = lines.append
    date_utc = meta.get("DATE_UTC") or time.strftime("%Y-%m-%d %H:%M UTC (when this report was written; the run did not record its start)", time.gmtime())
    dirty = " plus uncommitted changes in sdk/ or bench/" if meta.get("DIRTY", "0") not in ("", "0") else ""
    w("Generated by `bench/sdk.sh` (%s mode) on **%s**, commit %s%s, in %s s: do not edit by hand."
      % (meta["MODE"], date_utc, meta["COMMIT"], dirty, meta["ELAPSED_S"]))
    w("")
    w("- Machine: %s." % machine())
    w("- Load average (1, 5, 15 min) at the start **%s**, at the end **%s**: other work on these cores "
      "lowers every absolute figure; compare the ratios." % (meta["LOAD_START"], meta["LOAD_END"]))
    w("- %s; Node.js %s (npm %s); %s." % (meta["CC"], meta["NODE"], meta["NPM"], meta["PYTHON"]))
    versions = [fig[i].first("version") for i in IMPLS if fig[i].first("version")]
    w("- Generators: %s." % "; ".join("`%s`" % v for v in versions))
    w("- npm baselines installed with `npm install --no-save` into a temporary directory: %s%s."
      % (meta["NPM_PKGS"], (" (**%s**)" % meta["NPM_STATUS"]) if meta.get("NPM_STATUS") else ""))
    w("- Method: each generator in a process of its own, %d round(s), the order rotating. *Below the cap*: "
      "%s timed batches of %s calls, each started at a new millisecond, so no call waits for the next "
      "millisecond: ns per id is the call's own cost, from the median batch (a batch that lost the CPU to "
      "another process is an outlier; the mean of all batches is beside it). *Tight loop*: calls as fast as they return for %s s, "
      "every id stored (BigUint64Array, array('q')), then sorted and the repeats counted; C "
      "(`build/sdk_c_bench`, bench/sdk_c_bench.c: its own %s bursts, its tight loop for the same time) "
      "compares each id with the one before instead, which in one thread counts any repeat. "
      "Figures are medians over the rounds (range in brackets), ids and duplicates are summed over the run. "
      "The cap is %s ids/s (%s a millisecond, `bench/lib/layout.py`)."
      % (rounds, commas(int(meta["BATCH_ROUNDS"])), commas(int(meta["BATCH"])), meta["SECONDS_TIGHT"],
         commas(int(fig["c"].first("rounds", "0"))),
         commas(CAP), commas(PER_MS)))
    w("")

    # Ours against the goals.
    w("### Ours against the goals")
    w("")
    w("| Generator | ns per id below the cap | goal | ids/s, tight loop | % of the cap | goal | waiting for a CPU | duplicates |")
    w("|---|---|---|---|---|---|---|---|")
    for impl in OURS:
        label = IMPLS[impl][0]
        if not measured[impl]:
            w("| %s | not measured: %s | | | | | | |" % (label, status(impl) or "no figures"))
            continue
        f = fig[impl]
        ns, rate = f.median("ns_below_cap"), f.median("ids_per_s")
        best = f.spread("ids_per_s")[1]
        ws = f.wait_share()
        w("| %s | %s | <= %d ns: %s | %s | %.2f%% (best round %.2f%%) | >= %d%% in a round: %s | %s | %s |" % (
            label, ns_cell(impl), GOAL_NS[impl], "met" if ns <= GOAL_NS[impl] else "NOT met",
            rate_cell(impl), 100 * rate / CAP, 100 * best / CAP, round(100 * GOAL_CAP),
            "met" if best >= GOAL_CAP * CAP else "NOT met", "?" if ws is None else "%.1f%%" % (100 * ws),
            commas(f.total("dups"))))
    w("")
    w("The ns goals are judged on the median over the rounds; the cap goal (*one process reaches* %d%% "
      "of the cap) on the best round (the rounds differ mostly by how long other processes kept the loop "
      "off the CPU: *waiting for a CPU*); the median is beside it."
      % round(100 * GOAL_CAP))
    w("")
    w("*Waiting for a CPU*: the share of the tight loop's time its thread was ready to run but waited for "
      "a CPU (/proc/self/schedstat; median over the rounds), a diagnostic of how busy the machine was. "
      "The cap is per wall-clock millisecond, so a wait that runs past a millisecond's end loses ids for "
      "good. Not every wait does: ours, having issued a millisecond's %s ids, waits for the next one "
      "with sched_yield(), which lets another process run, and the run queue time it spends then costs "
      "no id. A loop below %d%% of the cap with little such wait lost its milliseconds to its own cost "
      "per id (the loop and storing each id included) or to its garbage collection."
      % (commas(PER_MS), round(100 * GOAL_CAP)))
    w("")

    # Side by side.
    w("### Side by side")
    w("")
    w("Ratios are to ours in the same language: *ns ratio* is their ns per id over ours (above 1: ours is "
      "faster per call), *ids/s ratio* their ids/s over ours. *Distinct ids/s*: the tight loop's ids less "
      "the extra copies of repeated ones, per second (median over the rounds).")
    w("")
    w("| Generator | language | ns per id below the cap | mean of all batches | ns ratio | ids/s, tight loop | ids/s ratio | ids in the run | duplicates | values repeated | distinct ids/s | most ids in one ms | waiting for a CPU |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for impl, (label, lang, ref) in IMPLS.items():
        f = fig[impl]
        if not measured[impl]:
            w("| %s | %s | not measured: %s | | | | | | | | | | |" % (label, lang, status(impl) or "no figures"))
            continue
        if measured[ref]:
            ns_ratio = "%.2fx" % (f.median("ns_below_cap") / fig[ref].median("ns_below_cap"))
            rate_ratio = "%.2fx" % (f.median("ids_per_s") / fig[ref].median("ids_per_s"))
        else:
            ns_ratio = rate_ratio = "n/a"
        ws = f.wait_share()
        w("| %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, lang, ns_cell(impl), f.median("ns_below_cap_mean"), ns_ratio, rate_cell(impl), rate_ratio,
            commas(f.total("ids")), commas(f.total("dups")), commas(f.total("dup_values")),
            commas(f.distinct_rate()), commas(f.max("max_ids_one_ms")),
            "?" if ws is None else "%.1f%%" % (100 * ws)))
    w("")

    # Duplicates, and why.
    w("### Duplicates")
    w("")
    for impl, (label, _, _) in IMPLS.items():
        if measured[impl]:
            w("- %s: %s." % (label, why_dups(impl, fig[impl])))
        else:
            w("- %s: not measured (%s)." % (label, status(impl) or "no figures"))
    notes = [(impl, fig[impl].all("note")) for impl in IMPLS if fig[impl].all("note")]
    for impl, n in notes:
        w("- Note, %s: %s." % (IMPLS[impl][0], "; ".join(sorted(set(n)))))
    failed = [(impl, status(impl)) for impl in IMPLS if status(impl) and measured[impl]]
    for impl, s in failed:
        w("- A round of %s failed: %s." % (IMPLS[impl][0], s))
    w("")
    w("An empty batch (the loop alone) cost %s ns a call in Node.js and a call of `int()` %s ns in Python "
      "(medians over every generator's process): what the per-id figures of those languages include."
      % ("%.1f" % statistics.median(float(x) for i in IMPLS if IMPLS[i][1] == "Node.js" for x in fig[i].all("empty_loop_ns"))
         if any(fig[i].all("empty_loop_ns") for i in IMPLS if IMPLS[i][1] == "Node.js") else "?",
         "%.1f" % statistics.median(float(x) for i in IMPLS if IMPLS[i][1] == "Python" for x in fig[i].all("empty_loop_ns"))
         if any(fig[i].all("empty_loop_ns") for i in IMPLS if IMPLS[i][1] == "Python") else "?"))

    with open(os.path.join(out, "sdk.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
