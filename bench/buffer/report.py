"""bench/buffer/report.py: OUT/buffer.md from the raw figures of bench/buffer.sh.

    /usr/bin/python3 bench/buffer/report.py OUT

Reads OUT/data/buffer_latency.tsv and buffer_pull.tsv (round, client, key,
value: the lines bench/buffer/client.js and client.py print, and pgbench's
rate), buffer_sql.tsv (a row per round and phase) and buffer_meta.tsv (the
run's settings, NAME<TAB>value), and writes OUT/buffer.md. Every figure in it
comes from the run; nothing is typed in. Standard library only.
"""
import os
import platform
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import layout  # noqa: E402
from report import commas, machine_cpu, machine_mem  # noqa: E402  (bench/lib/report.py)

CAP = layout.cap_per_s()
GOAL_P99_NS = 2000            # issue 32: a buffered call's p99
GOAL_SQL_P99_RATIO = 1.5      # issue 32: SQL p99 beside a client at the ceiling over idle
LANGS = {"node": "Node.js `await buf.nextId()`", "python": "Python `buf.next_id()`"}
PULL_CLIENTS = ("node1", "node2", "python1", "python2")
# Part 3's phases on each SQL node: node 1 shares its worker id between HTTP and
# SQL, node 4's endpoint has one of its own (snowflake.http_worker_id).
NODES = (("", "1", "node 1, the shared worker id"),
         ("own_", "4", "node 4, the endpoint on its own worker id"))
PHASES = (("alone", "alone (no load)"),
          ("pull", "pull: a Node.js buffer client pulling from the SQL node"),
          ("other_node", "control: the same client pulling from node 2"),
          ("burn", "control: CPU burners, the pull phase's CPU, no HTTP"))


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    return [dict(zip(lines[0], r)) for r in lines[1:]]


def machine():
    return "%s, %d cores, %s, Linux %s" % (machine_cpu(), os.cpu_count(), machine_mem(), platform.release())


def kv(rows):
    """{(round, client): {key: value}}"""
    d = {}
    for r in rows:
        d.setdefault((r["round"], r["client"]), {})[r["key"]] = r["value"]
    return d


def us(ns):
    return "%.2f" % (float(ns) / 1000)


def latency_section(out, meta):
    lat = kv(read_tsv(os.path.join(out, "data", "buffer_latency.tsv")))
    s = ["### 1. A buffered call's latency", "",
         "Each client alone, in a process of its own, through HAProxy: %s calls paced at %s a second (every millisecond or so "
         "the calls that are due, one at a time; between them a 1 ms timer in Node.js, `time.sleep(0.001)` in Python, so "
         "that refills run beside the calls), after a warm-up of %s calls in which the batch size grows to its largest. "
         "Each call is timed alone: `process.hrtime.bigint()` and `time.perf_counter_ns()` before and after (their own cost, "
         "*clock*, is included in every figure). Percentiles by nearest rank, in µs. *Found empty*: calls that found no id held "
         "(they wait for a refill)." % (commas(meta["LAT_CALLS"]), commas(meta["LAT_RATE"]), commas(meta["LAT_RATE"])), "",
         "| client | calls | p50 | p90 | p99 | p99.9 | p99.99 | max | over 2 µs | over 1 ms | found empty | refills | batch size | clock | p99 goal <= 2 µs |",
         "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    verdicts = []
    for lang, label in LANGS.items():
        f = lat.get(("1", lang))
        if not f or "p99_ns" not in f:
            s.append("| %s | not measured | | | | | | | | | | | | | |" % label)
            continue
        ok = float(f["p99_ns"]) <= GOAL_P99_NS
        verdicts.append("%s p99 **%s µs** (%s)" % (label.split(" ")[0], us(f["p99_ns"]), "met" if ok else "NOT met"))
        s.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s ns | %s |" % (
            label, commas(f["calls"]), us(f["p50_ns"]), us(f["p90_ns"]), us(f["p99_ns"]), us(f["p99.9_ns"]),
            us(f["p99.99_ns"]), us(f["max_ns"]), commas(f["over_2us"]), commas(f["over_1ms"]), commas(f["found_empty"]),
            f["refills"], commas(f["batch_size"]), f["clock_ns"], "**met**" if ok else "**NOT met**"))
    s += ["", "Goal (issue 32, a buffered call's p99 <= 2 µs): " + "; ".join(verdicts) + "."]
    return s


def pull_section(out, meta):
    rows = kv(read_tsv(os.path.join(out, "data", "buffer_pull.tsv")))
    rounds = sorted({r for r, _ in rows}, key=int)
    ceiling = int(meta["CEILING"])
    s = ["### 2. Four buffer clients through HAProxy, and SQL batches", "",
         "Two Node.js and two Python buffer clients, each in a process of its own, take ids as fast as `nextId()` / "
         "`next_id()` return them (Node.js yields to its event loop every 1,000 ids, so that refills run) through HAProxy "
         "in front of the three nodes, counted over the same %s s window; then, for as long, %s pgbench clients run "
         "`SELECT count(*) FROM snowflake_nextval_batch(%s)` on node 1 (the SQL batch rate as `bench/http.sh` measures it: "
         "SQL makes the ids but sends only their count). The two alternate over %s round(s). Every node has "
         "`snowflake.http_max_ids_per_second` at its default, %s ids/s (three nodes: %s); a buffer that gets a 429 waits "
         "out its Retry-After-Ms (the exact wait of the node's ceiling, usually milliseconds) before it asks that URL again, and behind HAProxy the buffer "
         "sees one URL. All of it shares %d cores: the clients, HAProxy, three HTTP workers, pgbench and its backends." % (
             meta["PULL_S"], meta["SQL_CLIENTS"], meta["SQL_BATCH"], meta["PULL_ROUNDS"], commas(ceiling),
             commas(3 * ceiling), os.cpu_count()), "",
         "| round | " + " | ".join(PULL_CLIENTS) + " | four buffers, ids/s | % of three nodes' ceilings | SQL batches, ids/s (% of one node's cap) | buffers / SQL | 429 seen by |",
         "|--:|" + "--:|" * len(PULL_CLIENTS) + "--:|--:|--:|--:|---|"]
    totals, sqls, ratios = [], [], []
    for r in rounds:
        per = [int(rows.get((r, c), {}).get("ids_per_s", 0)) for c in PULL_CLIENTS]
        total = sum(per)
        sql = int(rows.get((r, "sql"), {}).get("ids_per_s", 0))
        saw = [c for c in PULL_CLIENTS if "429" in rows.get((r, c), {}).get("last_error", "")]
        totals.append(total)
        sqls.append(sql)
        ratios.append(total / sql if sql else float("nan"))
        s.append("| %s | %s | %s | %.1f%% | %s (%.1f%%) | %.2f | %s |" % (
            r, " | ".join(commas(x) for x in per), commas(total), 100 * total / (3 * ceiling), commas(sql),
            100 * sql / CAP, ratios[-1], ", ".join(saw) if saw else "none"))
    med_total, med_sql, med_ratio = statistics.median(totals), statistics.median(sqls), statistics.median(ratios)
    s += ["", "Median over the rounds: the four buffers **%s ids/s**, SQL batches **%s ids/s**, buffers / SQL **%.2fx**. "
          "Per client (median): %s." % (
              commas(med_total), commas(med_sql), med_ratio,
              ", ".join("%s %s" % (c, commas(statistics.median(int(rows.get((r, c), {}).get("ids_per_s", 0))
                                                              for r in rounds))) for c in PULL_CLIENTS))]
    return s


def sql_section(out, meta):
    rows = read_tsv(os.path.join(out, "data", "buffer_sql.tsv"))
    ceiling = int(meta["CEILING"])
    last_seq = layout.ids_per_ms() - 1

    def of(phase):
        return [r for r in rows if r["phase"] == phase]

    def ratio(phase, base, field="p99_ms"):
        b = {r["round"]: float(r[field]) for r in of(base)}
        x = [float(r[field]) / b[r["round"]] for r in of(phase) if b.get(r["round"])]
        return statistics.median(x) if x else float("nan")

    def per_s(rs, field):
        secs = sum(float(r["seconds"]) for r in rs)
        return sum(int(r[field]) for r in rs) / secs if secs else float("nan")

    labels = ["*%s*" % label for _, label in PHASES]
    s = ["### 3. SQL latency beside a buffer client", "",
         "One psql session runs `SELECT snowflake_nextval()` %s times, one statement at a time (psql's `\\timing`, "
         "the round trip included; `bench/lib/sql_latency.sh`, as suite 9), on two nodes: node 1, where HTTP and SQL "
         "share worker id 1 (and its 4,096 ids a millisecond), and node 4, whose endpoint issues under a worker id of its "
         "own (`snowflake.worker_id = 4`, `snowflake.http_worker_id = %s`; not behind HAProxy). Eight phases, four on each "
         "node, alternate within each of %s round(s), on each node %s. The pull client is the Node.js buffer, taking ids as fast as "
         "they come from the SQL node's own URL (no HAProxy) from 1 s before the SQL run to its end; where it outruns the "
         "ceiling (%s ids/s, a token bucket of 100 ms) it gets a 429 and waits out its Retry-After-Ms (the exact wait): *429* says "
         "in how many rounds it did; its rate over the phase is *client ids/s*. *Load* is the CPU the load processes used "
         "during the SQL run (the client and the pulled node's HTTP worker; the burners, as many as the same node's pull "
         "phase of the round used), in cores. Ratios are medians over rounds of a phase's figure over another phase's of "
         "the same node in the same round." % (
             commas(meta["SQL_CALLS"]), meta.get("OWN_HTTP_ID", "?"), meta["SQL_ROUNDS"], "; ".join(labels),
             commas(ceiling)),
         "",
         "*Overflow waits* is `snowflake_stats.overflow_waits` over the SQL run: the node's, which counts the HTTP "
         "generator's waits too (a 10,000-id batch spans at least three milliseconds of 4,096 ids, so the endpoint waits "
         "for the next one itself). Which of them were SQL callers' the counter does not say; the SQL session's ids do, "
         "where SQL has a generator to itself: *SQL's highest sequence* is the largest place within its millisecond (0 to "
         "%d) of any id the session got over the phase's rounds. On node 4 SQL's generator has no caller but this one "
         "session, so an SQL call waits for the next millisecond only after %s SQL ids in one millisecond: a highest "
         "sequence below %d shows that no overflow wait was SQL's. On node 1 the endpoint's batches share SQL's "
         "milliseconds, and the node's count is only an upper bound on SQL's." % (
             last_seq, commas(last_seq + 1), last_seq),
         "",
         "| node | phase | statements | p50 ms | p99 ms | mean ms | p99 / alone | p99 / burn | p99 / other node | "
         "overflow waits per s (node) | SQL's highest sequence | SQL overflow waits | HTTP ids/s at the SQL node | "
         "load, cores | client ids/s | 429 |",
         "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|"]
    for prefix, node, _ in NODES:
        for phase, label in PHASES:
            rs = of(prefix + phase)
            if not rs:
                continue
            secs = sum(float(r["seconds"]) for r in rs)
            stmts = sum(int(r["statements"]) for r in rs)
            http = (sum(int(r["ids_sql_node"]) for r in rs) - stmts) / secs
            med = {f: statistics.median(float(r[f]) for r in rs) for f in ("p50_ms", "p99_ms", "mean_ms", "load_cores")}
            rates = [float(r["client_ids_per_s"]) for r in rs if r["client_ids_per_s"] not in ("-", "")]
            saw = [r.get("client_429", "-") for r in rs]
            top = max(int(r["sql_max_sequence"]) for r in rs)
            waits = sum(int(r["overflow_waits"]) for r in rs)
            if prefix == "own_":
                sql_waits = "0 (shown)" if top < last_seq else "not shown"
            else:
                sql_waits = "at most %s" % commas(waits) if waits else "0"
            s.append("| %s | %s | %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.0f | %d | %s | %s | %.2f | %s | %s |" % (
                node, label, commas(stmts), med["p50_ms"], med["p99_ms"],
                med["mean_ms"], ratio(prefix + phase, prefix + "alone"), ratio(prefix + phase, prefix + "burn"),
                ratio(prefix + phase, prefix + "other_node"), per_s(rs, "overflow_waits"), top, sql_waits,
                commas(max(http, 0)), med["load_cores"], commas(statistics.median(rates)) if rates else "-",
                "%d of %d rounds" % (saw.count("yes"), len(rs)) if "-" not in saw else "-"))
    def http_rate(phase):
        """HTTP ids a second at the SQL node over PHASE's SQL runs, and that as a share of the ceiling."""
        rs = of(phase)
        secs = sum(float(r["seconds"]) for r in rs)
        x = (sum(int(r["ids_sql_node"]) for r in rs) - sum(int(r["statements"]) for r in rs)) / secs if secs else 0
        return "%s ids/s, %.0f%% of the ceiling" % (commas(max(x, 0)), 100 * x / ceiling)

    sh_alone, sh_burn, sh_other = (ratio("pull", b) for b in ("alone", "burn", "other_node"))
    s += ["", "Shared worker id (node 1): SQL p99 beside a buffer client pulling from the same node (%s over the SQL "
          "runs, 429 pauses included) **%.2fx** the control with the same CPU load and no HTTP (burn), **%.2fx** the "
          "same client pulling from another node, **%.2fx** idle; %.0f overflow waits a second on the node (SQL's and "
          "the endpoint's together)." % (
              http_rate("pull"), sh_burn, sh_other, sh_alone, per_s(of("pull"), "overflow_waits"))]
    own = of("own_pull")
    if own:
        o_alone, o_burn, o_other = (ratio("own_pull", "own_" + b) for b in ("alone", "burn", "other_node"))
        top = max(int(r["sql_max_sequence"]) for r in own)
        waits = sum(int(r["overflow_waits"]) for r in own)
        g = GOAL_SQL_P99_RATIO

        def verdict(x):
            return "met" if x <= g else "NOT met"
        s += ["", "Own worker id (node 4, `snowflake.http_worker_id` set): SQL p99 beside the same client pulling from "
              "the same node (%s) **%.2fx** its control with the same CPU load (burn; goal <= %.1fx: **%s**), **%.2fx** idle "
              "(goal <= %.1fx: **%s**), **%.2fx** the client pulling from another node. Overflow waits on the node: %s "
              "over the phase's rounds (%.0f a second); SQL's highest sequence was %d of %d, so %s. "
              "The shared-id pull over this one, p99 (median of rounds): **%.2fx**." % (
                  http_rate("own_pull"), o_burn, g, verdict(o_burn), o_alone, g, verdict(o_alone), o_other, commas(waits),
                  per_s(own, "overflow_waits"), top, last_seq,
                  "no overflow wait was charged to SQL callers (every one counted was the endpoint's)" if top < last_seq
                  else "this run cannot rule out an overflow wait charged to SQL callers",
                  statistics.median(float(a["p99_ms"]) / float(b["p99_ms"])
                                    for a in of("pull") for b in own if a["round"] == b["round"]))]
    return s


def main(out):
    meta = dict(line.rstrip("\n").split("\t", 1) for line in open(os.path.join(out, "data", "buffer_meta.tsv"),
                                                                  encoding="utf-8") if "\t" in line)
    dirty = " plus uncommitted changes" if meta.get("DIRTY", "0") != "0" else ""
    s = ["Generated by `bench/buffer.sh` (%s mode) on **%s**, commit %s%s, in %s s: do not edit by hand." % (
            meta["MODE"], meta["DATE_UTC"], meta["COMMIT"], dirty, meta["ELAPSED_S"]), "",
         "- Machine: %s." % machine(),
         "- Load average (1, 5, 15 min) at the start **%s**, at the end **%s**." % (meta["LOAD_START"], meta["LOAD_END"]),
         "- Node.js %s; %s; %s; PostgreSQL %s." % (meta["NODE"], meta["PYTHON"], meta["HAPROXY"], meta["PG_VERSION"]),
         "- Three throwaway nodes on this machine (static worker ids 1, 2, 3; `snowflake.http_listen` on loopback; "
         "`snowflake.http_max_ids_per_second` at its default, %s ids/s), HAProxy with `docs/haproxy/haproxy.cfg` in front. "
         "The clients are the SDK's ID buffers, `sdk/node/buffer.js` and `snowflake_ids.buffer`, at their default "
         "options (batches of 100 growing to 10,000)." % commas(meta["CEILING"]), ""]
    s += latency_section(out, meta) + [""] + pull_section(out, meta) + [""] + sql_section(out, meta)
    text = "\n".join(s) + "\n"
    with open(os.path.join(out, "buffer.md"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
