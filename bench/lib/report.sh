# Report of bench/run.sh: markdown tables, gnuplot plots and the generated
# section of docs/benchmarks.md. Sourced by run.sh after the suites ran; reads
# the raw data in $OUT/data and the variables run.sh set. Every figure
# printed here comes from that data.

# --- helpers -----------------------------------------------------------------

# Labels as "key<TAB>label" lines, in the order given.
labels() {
    local -n _lab=$1; shift
    local k
    for k in "$@"; do printf '%s\t%s\n' "$k" "${_lab[$k]}"; done
}

machine_cpu() { awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo; }
machine_mem() { awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo; }

# --- suite 1: calls ----------------------------------------------------------

# calls_table FORM: one row per expression, from calls.tsv.
calls_table() {
    labels CALL_LABEL "${CALL_KEYS[@]}" >"$W/call_labels.tsv"
    awkf '
    BEGIN { FS = "\t" }
    FNR == NR { label[$1] = $2; order[++nk] = $1; next }
    $1 == form { k = $2; n[k] = $4; c[k]++; v[k, c[k]] = $5
                 cpu[k, c[k]] = $6 / ($5 * 1e6); rq[k, c[k]] = $7 / ($5 * 1e6); ow[k, c[k]] = $8 / $5 }
    END {
        print "| Expression | ids per statement | median ms | min - max ms | ns per id | ns per id above floor | M ids/s | on CPU | run-queue wait | snowflake: % of cap; ms used up |"
        print "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"
        for (i = 1; i <= nk; i++) {
            k = order[i]; m = c[k]
            for (j = 1; j <= m; j++) { a[j] = v[k, j]; b[j] = cpu[k, j]; q[j] = rq[k, j]; o[j] = ow[k, j] }
            med = median(a, m); lo = a[1]; hi = a[m]
            ns[k] = med * 1e6 / n[k]
            if (k == "floor") floor_ns = ns[k]
            note = ""
            if (k == "sf" || k == "batch")
                note = sprintf("%.1f%%; %.0f%%", 100 * (n[k] / (med / 1000)) / cap, 100 * median(o, m))
            above = (k == "floor") ? "-" : sprintf("%.1f", ns[k] - floor_ns)
            printf "| %s | %s | %.1f | %.1f - %.1f | %.1f | %s | %.2f | %.0f%% | %.1f%% | %s |\n", label[k], commas(n[k]), med, lo, hi, ns[k], above, n[k] / med / 1000, 100 * median(b, m), 100 * median(q, m), note
        }
    }' form="$1" cap="$CAP_PER_S" "$W/call_labels.tsv" "$OUT/data/calls.tsv"
}

# calls_ratios: throughput of each row over each column (ProjectSet form,
# medians of whole statements, floor included in both).
calls_ratios() {
    awkf '
    BEGIN { FS = "\t" }
    FNR == NR { if ($1 != "floor") { label[$1] = $2; order[++nk] = $1 }; next }
    $1 == "ps" { k = $2; n[k] = $4; c[k]++; v[k, c[k]] = $5 }
    END {
        for (i = 1; i <= nk; i++) {
            k = order[i]; m = c[k]
            for (j = 1; j <= m; j++) a[j] = v[k, j]
            rate[k] = n[k] / median(a, m)
        }
        line = "| is ... as fast as | "; sep = "|---|"
        for (i = 1; i <= nk; i++) { line = line label[order[i]] " | "; sep = sep "--:|" }
        print line; print sep
        for (i = 1; i <= nk; i++) {
            line = "| " label[order[i]] " | "
            for (j = 1; j <= nk; j++)
                line = line ((i == j) ? "1" : sprintf("%.2f", rate[order[i]] / rate[order[j]])) " | "
            print line
        }
    }' "$W/call_labels.tsv" "$OUT/data/calls.tsv"
}

# calls_round_ratio KEY_A KEY_B: "median min max" over rounds of the
# throughput ratio A / B within the same round (ProjectSet form).
calls_round_ratio() {
    awkf '
    BEGIN { FS = "\t" }
    $1 == "ps" && $2 == a { ra[$3] = $4 / $5 }
    $1 == "ps" && $2 == b { rb[$3] = $4 / $5 }
    END {
        for (r in ra) if (r in rb) x[++n] = ra[r] / rb[r]
        med = median(x, n); printf "%.2f %.2f %.2f", med, x[1], x[n]
    }' a="$1" b="$2" "$OUT/data/calls.tsv"
}

# calls_rate KEY: "median min max" ids/s over rounds (ProjectSet form).
calls_rate() {
    awkf '
    BEGIN { FS = "\t" }
    $1 == "ps" && $2 == k { x[++n] = $4 / $5 * 1000 }
    END { med = median(x, n); printf "%.0f %.0f %.0f", med, x[1], x[n] }' k="$1" "$OUT/data/calls.tsv"
}

# calls_sched KEY: " (backend on a CPU x%, waiting for one y% of the time)",
# medians over the rounds, ProjectSet form.
calls_sched() {
    awkf '
    BEGIN { FS = "\t" }
    $1 == "ps" && $2 == k { n++; c[n] = $6 / ($5 * 1e6); w[n] = $7 / ($5 * 1e6) }
    END { printf " (backend on a CPU %.0f%%, waiting for one %.0f%% of the time)", 100 * median(c, n), 100 * median(w, n) }' k="$1" "$OUT/data/calls.tsv"
}

# calls_lead KEY: "max_ms min_ms statements" of the lead checks.
calls_lead() {
    awk -F'\t' -v k="$1" '$1 == k { n++; if (n == 1 || $2 > mx) mx = $2; if (n == 1 || $2 < mn) mn = $2 }
        END { printf "%.3f %.3f %d", mx, mn, n }' "$OUT/data/calls_lead.tsv"
}

# --- suite 2: concurrency ----------------------------------------------------

# conc_matrix COLUMN: generators x clients; COLUMN is "ids" (M ids/s from
# pgbench tps x ids per statement) or "p99" / "p50" (ms per statement).
conc_matrix() {
    labels CONC_LABEL "${CONC_KEYS[@]}" >"$W/conc_labels.tsv"
    awk -F'\t' -v what="$1" -v ids="$CONC_IDS" -v clients="${CONC_CLIENTS[*]}" '
    FNR == NR { label[$1] = $2; order[++nk] = $1; next }
    { cell[$1, $2] = (what == "ids") ? sprintf("%.2f", $4 * ids / 1e6) : \
                     (what == "p99") ? sprintf("%.1f", $6) : \
                     (what == "sched") ? ($10 == "-" ? "-" : sprintf("%.0f%% / %.0f%%", 100 * $10, 100 * $11)) : sprintf("%.1f", $5)
      tx[$1, $2] = $3 }
    END {
        nc = split(clients, cl, " ")
        line = "| Generator | "; sep = "|---|"
        for (j = 1; j <= nc; j++) { line = line cl[j] " client" (cl[j] > 1 ? "s" : "") " | "; sep = sep "--:|" }
        print line; print sep
        for (i = 1; i <= nk; i++) {
            line = "| " label[order[i]] " | "
            for (j = 1; j <= nc; j++) line = line cell[order[i], cl[j]] ((what == "p99" || what == "p50") ? " (" tx[order[i], cl[j]] " stmts)" : "") " | "
            print line
        }
    }' "$W/conc_labels.tsv" "$OUT/data/concurrency.tsv"
}

conc_snowflake_table() {
    awk -F'\t' -v ids="$CONC_IDS" -v cap="$CAP_PER_S" '
    BEGIN {
        print "| Clients | statements | M ids/s (pgbench) | % of cap | ids_issued delta | = statements x (ids + 1)? | M ids/s (ids_issued delta / wall time) | overflow waits |"
        print "|--:|--:|--:|--:|--:|:-:|--:|--:|"
    }
    $1 == "sf" {
        r = $4 * ids
        printf "| %d | %d | %.2f | %.1f%% | %.0f | %s | %.2f | %.0f |\n", $2, $3, r / 1e6, 100 * r / cap, $7, ($7 == $3 * (ids + 1) ? "yes" : "**no**"), $7 / $9 / 1e6, $8
    }' "$OUT/data/concurrency.tsv"
}

# conc_rate KEY CLIENTS: ids/s from pgbench.
conc_rate() {
    awk -F'\t' -v k="$1" -v c="$2" -v ids="$CONC_IDS" '$1 == k && $2 == c { printf "%.0f", $4 * ids }' "$OUT/data/concurrency.tsv"
}

# --- suite 3: inserts --------------------------------------------------------
# inserts.tsv: key tps wal_bytes pk_bytes heap_bytes idx_read idx_hit checkpoints rows

inserts_table() {
    labels INS_LABEL "${INS_KEYS[@]}" >"$W/ins_labels.tsv"
    awk -F'\t' -v b="$INS_BATCH" -v sb="$SHARED_BUFFERS_BYTES" '
    FNR == NR { label[$1] = $2; order[++nk] = $1; next }
    { for (i = 2; i <= NF; i++) d[$1, i] = $i }
    END {
        base = d["bigserial", 2] * b
        print "| Key | rows/s | x bigserial | PK index MB | PK bytes per row | PK / shared_buffers | heap bytes per row | WAL bytes per row | PK blocks read | PK blocks hit | PK reads per 1,000 rows | checkpoints |"
        print "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        for (i = 1; i <= nk; i++) {
            k = order[i]; rows = d[k, 9]; rate = d[k, 2] * b
            printf "| %s | %.0f | %.2f | %.1f | %.1f | %.1fx | %.1f | %.1f | %.0f | %.0f | %.1f | %d |\n", label[k], rate, rate / base, d[k, 4] / 1048576, d[k, 4] / rows, d[k, 4] / sb, d[k, 5] / rows, d[k, 3] / rows, d[k, 6], d[k, 7], 1000 * d[k, 6] / rows, d[k, 8]
        }
    }' "$W/ins_labels.tsv" "$OUT/data/inserts.tsv"
}


# inserts_chunk_table: rows/s of every chunk, so that the slowdown as the
# index outgrows shared_buffers shows.
inserts_chunk_table() {
    awk -F'\t' -v b="$INS_BATCH" -v chunk_rows="$INS_CHUNK_ROWS" -v nch="$INS_CHUNKS" '
    FNR == NR { label[$1] = $2; order[++nk] = $1; next }
    { r[$1, $2] = $3 * b }
    END {
        line = "| Key | "; sep = "|---|"
        for (j = 1; j <= nch; j++) { line = line sprintf("rows %.1f-%.1f M | ", (j - 1) * chunk_rows / 1e6, j * chunk_rows / 1e6); sep = sep "--:|" }
        print line; print sep
        for (i = 1; i <= nk; i++) {
            line = "| " label[order[i]] " | "
            for (j = 1; j <= nch; j++) line = line sprintf("%.0f", r[order[i], j]) " | "
            print line
        }
    }' "$W/ins_labels.tsv" "$OUT/data/insert_chunks.tsv"
}

# ins_field KEY FIELD: a value of inserts.tsv (field 2 = tps, ...).
ins_field() { awk -F'\t' -v k="$1" -v f="$2" '$1 == k { print $f }' "$OUT/data/inserts.tsv"; }

# --- suite 4: range scan -----------------------------------------------------

scan_table() {
    awkf '
    BEGIN {
        FS = "\t"
        desc["mid_id"] = "rows 50-51% (in id order): `id >= snowflake_from_timestamp(t1) AND id < snowflake_from_timestamp(t2)`"
        desc["mid_ts"] = "rows 50-51%: `created_at >= t1 AND created_at < t2`"
        desc["tail_id"] = "last 1% of the rows: `id >= snowflake_from_timestamp(t3)`"
        desc["tail_ts"] = "last 1% of the rows: `created_at >= t3`"
        split("mid_id mid_ts tail_id tail_ts", order, " ")
    }
    FILENAME == plan && /^@plan / { q = $0; sub(/^@plan /, "", q); mode = "plan"; next }
    FILENAME == plan && /^@rows / { q = $0; sub(/^@rows /, "", q); mode = "rows"; next }
    FILENAME == plan && /^@/ { mode = ""; next }
    FILENAME == plan { if (mode == "rows") rows[q] = $0
                       if (mode == "plan" && $0 ~ /Scan/ && !(q in node)) { s = $0; sub(/^ *(-> *)?/, "", s); sub(/ *\(actual.*$/, "", s); node[q] = s }
                       if (mode == "plan" && $0 ~ /Buffers:/ && !(q in buf)) { s = $0; sub(/^ *Buffers: */, "", s); buf[q] = s }
                       next }
    { c[$1]++; v[$1, c[$1]] = $3 }
    END {
        print "| Query | plan (scan node) | buffers | rows | median ms | min - max ms |"
        print "|---|---|---|--:|--:|--:|"
        for (i = 1; i <= 4; i++) {
            k = order[i]; m = c[k]
            for (j = 1; j <= m; j++) a[j] = v[k, j]
            med = median(a, m)
            printf "| %s | %s | %s | %s | %.2f | %.2f - %.2f |\n", desc[k], node[k], buf[k], commas(rows[k]), med, a[1], a[m]
        }
    }' plan="$W/scan_plan.out" "$W/scan_plan.out" "$OUT/data/range_scan.tsv"
}

scan_median() {
    awkf 'BEGIN { FS = "\t" } $1 == k { x[++n] = $3 } END { printf "%.2f", median(x, n) }' k="$1" "$OUT/data/range_scan.tsv"
}

scan_plans() {
    awk '/^@plan / { q = $0; sub(/^@plan /, "", q); print "-- " q; p = 1; next }
         /^@/ { p = 0; next }
         p { print }' "$W/scan_plan.out"
}

# --- suite 5: core -----------------------------------------------------------

# core_table: one row per benchmark of Google Benchmark's CSV output.
core_table() {
    awk -F',' -v target=20 '
    function ns(x, unit) { return unit == "us" ? x * 1000 : unit == "ms" ? x * 1e6 : unit == "s" ? x * 1e9 : x }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
              print "| Benchmark | real ns per iteration | CPU ns per iteration | items/s | ns per id | <= 20 ns |"
              print "|---|--:|--:|--:|--:|:-:|"; next }
    {
        name = $col["name"]; gsub(/"/, "", name)
        if ($col["error_occurred"] == "true") { printf "| %s | error | | | | |\n", name; next }
        u = $col["time_unit"]; rt = ns($col["real_time"], u); ct = ns($col["cpu_time"], u)
        items = $col["items_per_second"]
        per = (items != "" && items > 0) ? 1e9 / items : ct
        printf "| %s | %.1f | %.1f | %s | %.3g | %s |\n", name, rt, ct, (items != "" ? sprintf("%.3g", items) : "-"), per, (per <= target ? "yes" : "no")
    }' "$OUT/data/core.csv"
}

# core_summary: "met_count total worst_name worst_ns"
core_summary() {
    awk -F',' -v target=20 '
    function ns(x, unit) { return unit == "us" ? x * 1000 : unit == "ms" ? x * 1e6 : unit == "s" ? x * 1e9 : x }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["error_occurred"] != "true" {
        name = $col["name"]; gsub(/"/, "", name)
        items = $col["items_per_second"]
        per = (items != "" && items > 0) ? 1e9 / items : ns($col["cpu_time"], $col["time_unit"])
        n++; if (per <= target) ok++
        if (n == 1 || per > worst) { worst = per; wname = name }
        if (n == 1 || per < best) { best = per; bname = name }
    }
    END { printf "%d %d %s %.3g %s %.3g", ok, n, wname, worst, bname, best }' "$OUT/data/core.csv"
}

# --- plots -------------------------------------------------------------------

make_plots() {
    # ids/s by clients: clients, then one column per generator (M ids/s).
    awk -F'\t' -v ids="$CONC_IDS" -v keys="${CONC_KEYS[*]}" '
        { r[$1, $2] = $4 * ids / 1e6; cl[$2] = 1 }
        END { nk = split(keys, k, " ")
              for (c = 1; c <= 64; c++) if (c in cl) { line = c; for (i = 1; i <= nk; i++) line = line "\t" r[k[i], c]; print line } }' \
        "$OUT/data/concurrency.tsv" >"$W/conc_ids.dat"
    awk -F'\t' -v keys="${CONC_KEYS[*]}" '
        { r[$1, $2] = $6; cl[$2] = 1 }
        END { nk = split(keys, k, " ")
              for (c = 1; c <= 64; c++) if (c in cl) { line = c; for (i = 1; i <= nk; i++) line = line "\t" r[k[i], c]; print line } }' \
        "$OUT/data/concurrency.tsv" >"$W/conc_p99.dat"
    # M ids/s of one backend, ProjectSet form.
    labels CALL_LABEL "${CALL_KEYS[@]}" >"$W/call_labels.tsv"
    awkf '
    BEGIN { FS = "\t" }
    FNR == NR { label[$1] = $2; order[++nk] = $1; next }
    $1 == "ps" { k = $2; n[k] = $4; c[k]++; v[k, c[k]] = $5 }
    END {
        for (i = 1; i <= nk; i++) { k = order[i]; m = c[k]; for (j = 1; j <= m; j++) a[j] = v[k, j]
            printf "\"%s\"\t%.3f\n", label[k], n[k] / median(a, m) / 1000 }
    }' "$W/call_labels.tsv" "$OUT/data/calls.tsv" >"$W/calls_rate.dat"
    gnuplot <<GP
set terminal pngcairo size 900,540 font "sans,10" noenhanced
set grid ytics mytics lc rgb "#dddddd"
set key outside right top

set output "$OUT/ids_by_clients.png"
set title "Ids per second by pgbench clients ($CONC_IDS ids per statement, $(nproc) cores)"
set xlabel "clients (pgbench -c = -j)"
set ylabel "million ids per second (log scale)"
set logscale y
set logscale x 2
set xtics (1, 2, 4, 8)
set xrange [0.8:10]
plot "$W/conc_ids.dat" using 1:2 with linespoints lw 2 pt 7 title "snowflake_nextval()", \
     "" using 1:3 with linespoints lw 2 pt 5 title "nextval() CACHE 1", \
     "" using 1:4 with linespoints lw 2 pt 9 title "gen_random_uuid()", \
     "" using 1:5 with linespoints lw 2 pt 11 title "uuidv7()", \
     4.096 with lines dt 2 lc rgb "black" title "snowflake cap 4.096 M/s", \
     3.9 with lines dt 3 lc rgb "red" title "target 3.9 M/s"

set output "$OUT/p99_by_clients.png"
set title "p99 latency of one statement ($CONC_IDS ids) by clients"
set ylabel "ms (log scale)"
plot "$W/conc_p99.dat" using 1:2 with linespoints lw 2 pt 7 title "snowflake_nextval()", \
     "" using 1:3 with linespoints lw 2 pt 5 title "nextval() CACHE 1", \
     "" using 1:4 with linespoints lw 2 pt 9 title "gen_random_uuid()", \
     "" using 1:5 with linespoints lw 2 pt 11 title "uuidv7()"

unset logscale
unset xtics
set xtics
set autoscale x
set output "$OUT/insert_rows_per_s.png"
set title "INSERT rows per second over time ($INS_CLIENTS clients, $INS_BATCH rows per statement, shared_buffers $SHARED_BUFFERS)"
set xlabel "seconds of this table's own load (its chunks back to back)"
set ylabel "rows per second"
set yrange [0:*]
set format y "%.0s%c"
plot "$OUT/data/insert_progress_bigserial.tsv" using 1:2 with linespoints lw 2 pt 7 ps 0.6 title "bigserial", \
     "$OUT/data/insert_progress_sf.tsv" using 1:2 with linespoints lw 2 pt 5 ps 0.6 title "snowflake_nextval()", \
     "$OUT/data/insert_progress_v4.tsv" using 1:2 with linespoints lw 2 pt 9 ps 0.6 title "gen_random_uuid()", \
     "$OUT/data/insert_progress_v7.tsv" using 1:2 with linespoints lw 2 pt 11 ps 0.6 title "uuidv7()"

set output "$OUT/calls_one_backend.png"
set title "One backend: million ids per second (ProjectSet form, median of $CALL_ROUNDS rounds)"
set xlabel ""
set ylabel "million ids per second (log scale)"
set logscale y
set yrange [*:*]
set format y "%g"
set style fill solid 0.6
set boxwidth 0.6
set xtics rotate by -20
set key inside top right
plot "$W/calls_rate.dat" using 0:2:xtic(1) with boxes lc rgb "#4477aa" notitle, \
     "" using 0:2:(sprintf("%.2f", \$2)) with labels offset 0,0.8 notitle, \
     4.096 with lines dt 2 lc rgb "black" title "snowflake cap 4.096 M/s", \
     3.9 with lines dt 3 lc rgb "red" title "target 3.9 M/s"
GP
}

# --- report ------------------------------------------------------------------

write_report() {
    local date_utc elapsed commit dirty
    date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
    elapsed=$(($(date +%s) - START_S))
    commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    dirty=$({ git -C "$ROOT" status --porcelain -- src Makefile 'snowflake--*.sql' 2>/dev/null || true; } | wc -l)

    make_plots

    # Headline figures.
    local sf_rate sf_lo sf_hi v7x v7x_lo v7x_hi sf_lead b_lead v7_lead
    read -r sf_rate sf_lo sf_hi <<<"$(calls_rate sf)"
    read -r v7x v7x_lo v7x_hi <<<"$(calls_round_ratio v7 v4)"
    read -r sf_lead _ sf_lead_n <<<"$(calls_lead sf)"
    read -r b_lead _ _ <<<"$(calls_lead batch)"
    read -r v7_lead v7_lead_min _ <<<"$(calls_lead v7)"
    local conc_ahead_n conc_ahead_max
    read -r conc_ahead_n conc_ahead_max <<<"$CONC_AHEAD"
    local ins_sf_bad ins_sf_max ins_v7_bad ins_v7_max
    read -r ins_sf_bad ins_sf_max <<<"$INS_AHEAD_SF"
    read -r ins_v7_bad ins_v7_max <<<"$INS_AHEAD_V7"
    local v7_bpr big_rate v7_rate v7_ratio
    v7_bpr=$(awk -v a="$(ins_field v7 4)" -v r="$(ins_field v7 9)" 'BEGIN { printf "%.1f", a / r }')
    big_rate=$(ins_field bigserial 2); v7_rate=$(ins_field v7 2)
    v7_ratio=$(awk -v a="$v7_rate" -v b="$big_rate" 'BEGIN { printf "%.2f", a / b }')
    local v4_ratio v4_bpr big_bpr
    v4_ratio=$(awk -v a="$(ins_field v4 2)" -v b="$big_rate" 'BEGIN { printf "%.2f", a / b }')
    v4_bpr=$(awk -v a="$(ins_field v4 4)" -v r="$(ins_field v4 9)" 'BEGIN { printf "%.1f", a / r }')
    big_bpr=$(awk -v a="$(ins_field bigserial 4)" -v r="$(ins_field bigserial 9)" 'BEGIN { printf "%.1f", a / r }')
    ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
    le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
    met() { if "$@"; then echo "**met**"; else echo "**NOT met**"; fi; }

    {
        echo "| Target | Measured in this run | |"
        echo "|---|---|---|"
        echo "| snowflake_nextval(), one backend: >= 3.9 M ids/s (95% of the 4.096 M/s cap) | $(awk -v x="$sf_rate" -v lo="$sf_lo" -v hi="$sf_hi" -v cap="$CAP_PER_S" 'BEGIN { printf "%.3f M/s median of rounds (%.2f - %.2f), %.1f%% of the cap", x / 1e6, lo / 1e6, hi / 1e6, 100 * x / cap }')$(calls_sched sf) | $(met ge "$sf_rate" 3900000) |"
        echo "| uuidv7() >= 5x gen_random_uuid(), same run | $(printf '%sx (median of per-round ratios; %s - %s)' "$v7x" "$v7x_lo" "$v7x_hi") | $(met ge "$v7x" 5) |"
        local c r
        for c in 1 2 4; do
            r=$(conc_rate sf "$c")
            echo "| snowflake_nextval(), $c pgbench client(s): >= 3.9 M ids/s | $(awk -v x="$r" -v cap="$CAP_PER_S" 'BEGIN { printf "%.3f M/s, %.1f%% of the cap", x / 1e6, 100 * x / cap }')$(awk -F'\t' -v c="$c" '$1 == "sf" && $2 == c && $10 != "-" { printf " (backends on a CPU %.0f%%, waiting for one %.0f%% of the time)", 100 * $10, 100 * $11 }' "$OUT/data/concurrency.tsv") | $(met ge "$r" 3900000) |"
        done
        echo "| Snowflake ids never later than the clock | one backend: largest lead $sf_lead ms ($sf_lead_n statements), batch $b_lead ms; pgbench: $conc_ahead_n of all statements ahead; inserts: $ins_sf_bad of $(ins_field sf 9) rows with id time > created_at | $(met test "$(awk -v a="$sf_lead" -v b="$b_lead" 'BEGIN { print (a <= 0 && b <= 0) ? 0 : 1 }')" = 0 -a "$conc_ahead_n" = 0 -a "$ins_sf_bad" = 0) |"
        echo "| uuidv7 PK index <= 32 bytes per row | $v7_bpr bytes per row (bigserial $big_bpr, gen_random_uuid() $v4_bpr) | $(met le "$v7_bpr" 32) |"
        echo "| uuidv7 inserts >= 0.85x bigserial rows/s | ${v7_ratio}x (gen_random_uuid() ${v4_ratio}x) | $(met ge "$v7_ratio" 0.85) |"
        if [ -s "$OUT/data/core.csv" ]; then
            local ok n wname worst bname best
            read -r ok n wname worst bname best <<<"$(core_summary)"
            echo "| core (build/core_bench): <= 20 ns per id | $ok of $n benchmarks at or under 20 ns per id; fastest $bname $best ns, slowest $wname $worst ns per id | $(met test "$ok" = "$n") |"
        else
            echo "| core (build/core_bench): <= 20 ns per id | not measured: $CORE_STATUS | not measured |"
        fi
        if [ -s "$OUT/data/http.tsv" ] && [ -z "${HTTP_STATUS:-}" ]; then
            local h_best h_sql h_p99 s_p99
            h_best=$(awk -F'\t' 'NR > 1 && $1 == "http" && $2 == 1000 && $6 > b { b = $6 } END { print b + 0 }' "$OUT/data/http.tsv")
            h_sql=$(awk -F'\t' 'NR > 1 && $1 == "sql" && $2 == 1000 && $6 > b { b = $6 } END { print b + 0 }' "$OUT/data/http.tsv")
            h_p99=$(awk -F'\t' 'NR > 1 && $1 == "http" && $2 == 1 && $3 == 1 { print $8 }' "$OUT/data/http.tsv")
            s_p99=$(awk -F'\t' 'NR > 1 && $1 == "sql" && $2 == 1 && $3 == 1 { print $8 }' "$OUT/data/http.tsv")
            echo "| HTTP /v1/ids/batch?count=1000 (wrk, keep-alive): >= 90% of the cap | $(awk -v x="$h_best" -v s="$h_sql" -v cap="$CAP_PER_S" 'BEGIN { printf "%.3f M/s, %.1f%% of the cap (snowflake_nextval_batch(1000) over SQL: %.3f M/s)", x / 1e6, 100 * x / cap, s / 1e6 }') | $(met ge "$h_best" "$(awk -v c="$CAP_PER_S" 'BEGIN { print 0.9 * c }')") |"
            echo "| HTTP count=1, one connection: p99 < 1 ms | $h_p99 ms (SQL, one pgbench client: $s_p99 ms) | $(met awk -v p="$h_p99" 'BEGIN { exit !(p < 1) }') |"
        fi
    } >"$W/targets.md"

    local machine="$(nproc) cores ($(machine_cpu)), $(machine_mem), $(echo "$PG_VERSION_STR" | awk '{ print $1, $2 }'), Linux $(uname -r)"

    # ---- latest.md ----
    {
        echo "# snowflake benchmark results"
        echo
        echo "Generated by \`bench/run.sh\` ($MODE mode) on $date_utc in $((elapsed / 60)) min $((elapsed % 60)) s;"
        echo "commit $commit$( [ "$dirty" -gt 0 ] && echo ", with uncommitted changes in src/ or the install script" )."
        echo "Do not edit: every figure below comes from this run. The method is in [docs/benchmarks.md](../$( [ "$MODE" = quick ] && echo ../ )../docs/benchmarks.md)."
        echo
        echo "## Machine"
        echo
        echo "| | |"
        echo "|---|---|"
        echo "| CPU | $(machine_cpu), $(nproc) cores (nproc) |"
        echo "| Memory | $(machine_mem) |"
        echo "| Kernel | Linux $(uname -r) |"
        echo "| PostgreSQL | $PG_VERSION_STR |"
        echo "| Instance | $SETTINGS; snowflake preloaded, worker_id 1 |"
        echo "| Load average (1, 5, 15 min) | at the start $LOAD_START, before the core suite $LOAD_END: other work on the machine shares these cores, which is why every comparison is made within the run |"
        echo
        echo "## Targets"
        echo
        cat "$W/targets.md"
        echo
        echo "## 1. Calls, one backend"
        echo
        echo "One psql session runs $CALL_ROUNDS rounds; each round runs every expression once in each of two statement forms, in the same order"
        echo "(A B C ... A B C ...), so that drift of the machine hits all of them alike. One warm-up round is not counted."
        echo "Times are psql's \`\\timing\` of the whole statement. *Above floor* subtracts the \`now()\` statement of the same form."
        echo "*On CPU* and *run-queue wait* are the backend's own /proc/PID/schedstat deltas over the statement, as a share of its wall time:"
        echo "a run-queue wait above a few percent means other processes took the CPU from it. *ms used up* (snowflake) is"
        echo "\`snowflake_stats.overflow_waits\` per elapsed millisecond: the share of milliseconds whose 4,096 ids were all issued."
        echo "\`gen_random_uuid()\` makes $(awkf 'BEGIN { print commas(ARGV[1]) }' "$CALL_N_SLOW") values per statement (it takes microseconds each), the others $(awkf 'BEGIN { print commas(ARGV[1]) }' "$CALL_N")."
        echo
        echo "### ProjectSet form: \`SELECT count(x) FROM (SELECT EXPR AS x, generate_series(1, N)) s\`"
        echo
        echo "The set-returning function in the target list produces values one call at a time; nothing is stored. This is the form the targets are judged on."
        echo "For the batch: \`SELECT count(x) FROM (SELECT snowflake_nextval_batch(N) AS x) s\` (no generate_series, so its *above floor* is slightly understated)."
        echo
        calls_table ps
        echo
        echo "![ids per second, one backend](calls_one_backend.png)"
        echo
        echo "Throughput ratios, ProjectSet form (medians of whole statements, floor included on both sides): row is N times as fast as column."
        echo
        calls_ratios
        echo
        echo "### Function Scan form: \`SELECT count(EXPR) FROM generate_series(1, N)\`"
        echo
        echo "generate_series in FROM materializes the whole series in a tuplestore before the aggregate reads it; that storing dominates the floor."
        echo "For the batch: \`SELECT count(x) FROM snowflake_nextval_batch(N) AS x\`."
        echo
        calls_table from
        echo
        echo "### Ids and the clock"
        echo
        echo "After the timed rounds, $CALL_ROUNDS more statements per generator, each reading \`clock_timestamp()\` right after making its $(awkf 'BEGIN { print commas(ARGV[1]) }' "$CALL_N") ids (the outer SELECT runs after the aggregate)."
        echo "Lead = the newest id's time minus that clock reading; a snowflake id's time is the start of its millisecond, so a lead > 0 would be an id from a millisecond the clock had not reached."
        echo
        echo "| Generator | largest lead, ms | smallest lead, ms |"
        echo "|---|--:|--:|"
        echo "| snowflake_nextval() | $sf_lead | $(calls_lead sf | cut -d' ' -f2) |"
        echo "| snowflake_nextval_batch($CALL_N) | $b_lead | $(calls_lead batch | cut -d' ' -f2) |"
        echo "| uuidv7() (same session as the timed rounds) | $v7_lead | $v7_lead_min |"
        echo "| uuidv7() (fresh session, one statement) | $V7_FRESH_LEAD | |"
        echo
        echo "uuidv7() keeps its values strictly increasing within a backend by advancing a 12-bit sub-millisecond fraction"
        echo "(1/4,096 ms per step) when the clock has not moved. A backend that makes more than 4.096 M UUIDs per second therefore"
        echo "runs ahead of the clock, and the lead carries over from statement to statement within the session (see the note in docs/benchmarks.md)."
        echo
        echo "## 2. Concurrency, pgbench"
        echo
        echo "\`pgbench -c C -j C -T $CONC_SECONDS\` per generator and client count, clients in the outer loop and generators in the inner one."
        echo "Each statement makes $(awkf 'BEGIN { print commas(ARGV[1]) }' "$CONC_IDS") ids in the ProjectSet form, so that the client round trip (~0.1 ms) is noise."
        echo "The snowflake statement also computes \`snowflake_timestamp(max(x)) - clock_timestamp()\` and records any positive lead (pgbench \`\\gset\`/\`\\if\`)."
        echo "Ids/s = pgbench tps (without connection time) x ids per statement; latencies are per statement, from \`pgbench --log\` (nearest rank)."
        echo
        echo "Million ids per second:"
        echo
        conc_matrix ids
        echo
        echo "p99 statement latency, ms (statements in the run, so the p99 of a few dozen is close to their maximum):"
        echo
        conc_matrix p99
        echo
        echo "Median statement latency, ms:"
        echo
        conc_matrix p50
        echo
        echo "Each backend's share of the time on a CPU / waiting for one (run queue), from /proc/PID/schedstat of pgbench's backends"
        echo "over the run minus its first 0.3 s and last second (QUICK: last 0.3 s). With more clients than the $(nproc) cores they wait for each other; at 1 client, a wait means other work took the CPU:"
        echo
        conc_matrix sched
        echo
        echo "snowflake_nextval(), cross-checked with \`snowflake_stats.ids_issued\` (delta over pgbench's wall time, connections included)."
        echo "The ProjectSet form evaluates the volatile expression once more than it returns rows (the call that finds generate_series"
        echo "finished), so each statement issues ids + 1 ids; the count check allows for that:"
        echo
        conc_snowflake_table
        echo
        if [ "$conc_ahead_n" = 0 ]; then
            echo "Statements whose newest id was later than the clock: none."
        else
            echo "Statements whose newest id was later than the clock: **$conc_ahead_n** (largest lead ${conc_ahead_max} us)."
        fi
        echo
        echo "![ids per second by clients](ids_by_clients.png)"
        echo
        echo "![p99 by clients](p99_by_clients.png)"
        echo
        echo "## 3. Inserts"
        echo
        echo "Four tables \`(id <key> PRIMARY KEY, created_at timestamptz DEFAULT clock_timestamp(), payload int)\`, each loaded with"
        echo "$(awkf 'BEGIN { print commas(ARGV[1]) }' "$INS_ROWS") rows by \`pgbench -c $INS_CLIENTS -j $INS_CLIENTS\`, $INS_BATCH rows per INSERT statement, in $INS_CHUNKS chunks"
        echo "interleaved across the four tables (bigserial, snowflake, v4, v7, bigserial, ...) so that drift hits all alike. One CHECKPOINT before the"
        echo "first chunk; later checkpoints come from max_wal_size as they would in production. rows/s = rows / the sum of the chunks' pgbench times; WAL from \`pg_current_wal_lsn()\` deltas around each chunk;"
        echo "PK blocks from \`pg_statio_user_indexes\` (a *read* is a miss in shared_buffers, served by the OS page cache here)."
        echo
        inserts_table
        echo
        echo "Rows per second of each chunk (pgbench tps x $INS_BATCH), by the table's size before and after the chunk:"
        echo
        inserts_chunk_table
        echo
        echo "Every row's id time compared with its \`created_at\` (evaluated after the id): snowflake $ins_sf_bad rows with id time later"
        echo "(largest id time - created_at: $ins_sf_max ms; negative is behind); uuidv7 $ins_v7_bad rows later (largest $ins_v7_max ms)."
        echo
        echo "![insert rows per second over time](insert_rows_per_s.png)"
        echo
        echo "## 4. Range scan by time"
        echo
        echo "On the snowflake table after its load (VACUUM ANALYZE first): rows of a time window found through the primary key with"
        echo "\`snowflake_from_timestamp()\`, against the same window through a separate index on \`created_at\`. Both fetch the heap (\`count(payload)\`)."
        echo "The windows' bounds t1, t2, t3 are the created_at of the rows at 50%, 51% and 99% of the table in id order."
        echo "$SCAN_RUNS interleaved runs after one warm-up. Row counts differ slightly: created_at is read a little after the id."
        echo
        scan_table
        echo
        echo "The created_at index costs $(awk -v b="$CREATED_AT_INDEX_BYTES" -v r="$(ins_field sf 9)" 'BEGIN { printf "%.1f MB (%.1f bytes per row)", b / 1048576, b / r }')"
        echo "and took $(awk -v s="$CREATED_AT_INDEX_S" 'BEGIN { printf "%.1f s", s }') to build; the primary key ($(awk -v b="$SF_PK_BYTES" 'BEGIN { printf "%.1f MB", b / 1048576 }')) answers the same"
        echo "queries, so a table keyed by snowflake ids can leave it out (and the 8-byte column with it)."
        echo
        echo "<details><summary>Plans (EXPLAIN ANALYZE, BUFFERS, COSTS OFF)</summary>"
        echo
        echo '```'
        scan_plans
        echo '```'
        echo
        echo "</details>"
        echo
        echo "## 5. Core micro-benchmark"
        echo
        if [ -s "$OUT/data/core.csv" ]; then
            echo "\`build/core_bench --benchmark_min_time=$CORE_MIN_TIME\` (Google Benchmark, bench/core_bench.cpp), run after the instance stopped."
            echo "ns per id is 1e9 / items_per_second when the benchmark sets items processed, else CPU ns per iteration."
            if [ -n "$CORE_STATUS" ]; then echo "Note: $CORE_STATUS"; fi
            echo
            core_table
            echo
            echo "<details><summary>Console output</summary>"
            echo
            echo '```'
            cat "$W/core.out"
            echo '```'
            echo
            echo "</details>"
        else
            echo "$CORE_STATUS"
        fi
        echo
        echo "## 6. Sporadic calls"
        echo
        if [ -s "$OUT/sporadic.md" ] && [ -z "$SPORADIC_STATUS" ]; then
            cat "$OUT/sporadic.md"
        else
            echo "$SPORADIC_STATUS"
        fi
        echo
        echo "## 7. Worker ids leased from etcd"
        echo
        if [ -s "$OUT/lease.md" ] && [ -z "$LEASE_STATUS" ]; then
            cat "$OUT/lease.md"
        else
            echo "$LEASE_STATUS"
        fi
        echo
        echo "## 8. Ids over HTTP"
        echo
        if [ -s "$OUT/http.md" ] && [ -z "$HTTP_STATUS" ]; then
            cat "$OUT/http.md"
        else
            echo "$HTTP_STATUS"
        fi
    } >"$OUT/latest.md"

    # ---- the generated section of docs/benchmarks.md ----
    if [ "$UPDATE_DOCS" = yes ] && [ -f "$ROOT/docs/benchmarks.md" ] && grep -q '^<!-- results:begin' "$ROOT/docs/benchmarks.md"; then
        {
            echo "Latest full run (\`make bench\`): **$date_utc**, commit $commit$( [ "$dirty" -gt 0 ] && echo " plus uncommitted changes in src/" ), $((elapsed / 60)) min $((elapsed % 60)) s, on $machine; load average at the start $LOAD_START."
            echo "Full tables: [bench/results/latest.md](../bench/results/latest.md)."
            echo
            cat "$W/targets.md"
            echo
            echo "Also measured: snowflake inserts $(awk -v a="$(ins_field sf 2)" -v b="$big_rate" 'BEGIN { printf "%.2f", a / b }')x bigserial rows/s;"
            echo "WAL bytes per row bigserial $(awk -v a="$(ins_field bigserial 3)" -v r="$(ins_field bigserial 9)" 'BEGIN { printf "%.0f", a / r }'),"
            echo "snowflake $(awk -v a="$(ins_field sf 3)" -v r="$(ins_field sf 9)" 'BEGIN { printf "%.0f", a / r }'),"
            echo "gen_random_uuid() $(awk -v a="$(ins_field v4 3)" -v r="$(ins_field v4 9)" 'BEGIN { printf "%.0f", a / r }'),"
            echo "uuidv7 $(awk -v a="$(ins_field v7 3)" -v r="$(ins_field v7 9)" 'BEGIN { printf "%.0f", a / r }');"
            if [ -s "$OUT/sporadic.md" ]; then
                echo "Sporadic calls (one client at 2 and 10 calls/s, fsync on): p99 of snowflake_nextval() $(awk -F'\t' '$1 == "sf" && $2 == 10 { sf = $5 } $1 == "seq" && $2 == 10 { s = $5 } END { if (s > 0) printf "%.2f", sf / s }' "$OUT/data/sporadic.tsv")x that of nextval() at 10 calls/s; $(grep -o 'reservation_waits after the first id: \*\*[0-9]*' "$OUT/sporadic.md" | sed 's/\*\*//')."
            fi
            if [ -s "$OUT/http.md" ]; then
                echo "Ids over HTTP (bench/http.sh): $(grep -o '^Goals: .*' "$OUT/http.md" | sed 's/^Goals: //')"
            fi
            echo "uuidv7() timestamps $V7_FRESH_LEAD ms ahead of the clock after $(awkf 'BEGIN { print commas(ARGV[1]) }' "$CALL_N") UUIDs in one statement of a fresh session (see *How to read the results*)."
            echo
            echo "![ids per second by clients](../bench/results/ids_by_clients.png)"
            echo
            echo "![insert rows per second over time](../bench/results/insert_rows_per_s.png)"
            echo
            echo "![ids per second, one backend](../bench/results/calls_one_backend.png)"
        } >"$W/docs_section.md"
        awk -v sect="$W/docs_section.md" '
            /^<!-- results:begin/ { print; print "<!-- generated by bench/run.sh: do not edit between these markers -->"; while ((getline l < sect) > 0) print l; skip = 1; next }
            /^<!-- results:end/ { skip = 0 }
            !skip' "$ROOT/docs/benchmarks.md" >"$W/benchmarks.md.new"
        cat "$W/benchmarks.md.new" >"$ROOT/docs/benchmarks.md"
    fi
}
