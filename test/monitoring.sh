#!/bin/bash
# Monitoring suite of snowflake: the Prometheus rules and the Grafana
# dashboard in docs/monitoring/ against promtool and against a real
# /metrics scrape.
#
# Prints one line per check, "ok - ..." or "not ok - ..." (details on "#"
# lines), and ends with "N passed, N failed"; exits non-zero on any failure.
#
#   1  docs/monitoring/snowflake-rules.yml: promtool check rules, and
#      promtool test rules (snowflake-rules.test.yml feeds series and expects
#      alerts and non-alerts); the tests can fail (a threshold changed in a
#      copy of the rules makes them fail: SnowflakeNearCap, and
#      SnowflakeRepeatedClockFailovers)
#      docs/monitoring/README.md's prometheus.yml passes promtool check config
#   2  a real server (snowflake preloaded, snowflake.http_listen set): its
#      /metrics passes promtool check metrics; every metric of the scrape is
#      in docs/reference.md's table of metrics and every one there is in the
#      scrape
#   3  every expression of the rules and of the dashboard parses (promtool,
#      each wrapped in a rules file) and names only metrics /metrics has
#      (or recording rules of the rules file)
#   4  docs/prometheus-queries.yaml (postgres_exporter) and
#      docs/monitoring/snowflake.collector.yml (sql_exporter): each query runs
#      (one row); every column of snowflake_stats is exported; the counters
#      and gauges carry no label (one series per counter whatever the lease
#      does); counters end in _total; the names are those of /metrics
#   5  a node leasing its worker id from a real etcd: the lease id in the
#      label of snowflake_lease_info is exactly snowflake_stats.lease_id (all
#      19 digits, not a rounded float); etcd stopped: the lease expires,
#      snowflake_lease_last_error_info names a bounded reason, never the
#      text; a refused id counts under no_lease/SF003; every counter keeps
#      the one series it had
#
# Usage: test/monitoring.sh [case number ...]   (default: every case_N below)
# Needs promtool (package prometheus), curl, jq, etcd; root or the postgres user.
# KEEP_TMP=1 keeps the instance's directory.
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh

RULES=docs/monitoring/snowflake-rules.yml
RULES_TEST=docs/monitoring/snowflake-rules.test.yml
DASHBOARD=docs/monitoring/snowflake-dashboard.json

suite_begin monitoring
WORK=$SUITE_DIR

require_tools promtool curl jq

# --- helpers ---------------------------------------------------------------

SCRAPE=""   # the body of /metrics, once scraped
SERVER=""   # the instance's directory

# scrape: starts a server with the HTTP endpoint, issues ids over SQL and
# HTTP, and sets SCRAPE to its /metrics. Once per run.
scrape() {
    [ -n "$SCRAPE" ] && return 0
    local dir port attempt
    dir=$(pg_tmpdir)
    for attempt in 1 2 3; do
        port=$(free_tcp_port)
        rm -rf "$dir/data"
        pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" \
            "autovacuum = off" "snowflake.http_listen = '127.0.0.1:$port'" || return 1
        pg_start "$dir" || { cat "$dir/server.log" >&2; return 1; }
        if wait_for "listening" 10 grep -q "snowflake HTTP endpoint listening on 127.0.0.1:$port" "$dir/server.log"; then
            break
        fi
        pg_stop "$dir"
        port=""
    done
    [ -n "$port" ] || return 1
    SERVER=$dir
    pg_val "$dir" "CREATE EXTENSION snowflake" >/dev/null || return 1
    pg_val "$dir" "SELECT count(*) FROM snowflake_nextval_batch(1000)" >/dev/null || return 1
    curl -s -m 10 -o /dev/null "http://127.0.0.1:$port/v1/ids/batch?count=10" || return 1
    curl -s -m 10 -o /dev/null "http://127.0.0.1:$port/no/such/path" || return 1
    SCRAPE=$(curl -s -m 10 "http://127.0.0.1:$port/metrics") || return 1
    printf '%s\n' "$SCRAPE" >"$WORK/metrics.txt"
}

# The metric families of the scrape (# TYPE lines), one a line.
scrape_families() { sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' <<<"$SCRAPE" | sort -u; }

# Names a query may use: every sample name of the scrape's families
# (histograms: _bucket, _sum, _count) and every recording rule.
known_names() {
    {
        awk '$1 == "#" && $2 == "TYPE" {
                 print $3
                 if ($4 == "histogram") { print $3 "_bucket"; print $3 "_sum"; print $3 "_count" }
             }' <<<"$SCRAPE"
        sed -n 's/^ *- record: *\([^ ]*\) *$/\1/p' "$RULES"
    } | sort -u
}

# The metric names an expression mentions: snowflake_*, process_* and
# recording rules (snowflake:...), not label values in quotes.
names_in() { sed 's/"[^"]*"//g' <<<"$1" | grep -oE '\b(snowflake_[a-z0-9_]+|process_[a-z0-9_]+|snowflake:[a-z0-9_:]+)' | sort -u; }

# check_exprs WHAT FILE: FILE has one expression a line (already
# substituted); each parses (promtool check rules on a rules file that
# records it) and names only known metrics.
check_exprs() {
    local what=$1 file=$2 n=0 bad_parse="" bad_names="" expr name known
    known=$(known_names)
    while IFS= read -r expr; do
        n=$((n + 1))
        jq -n --arg e "$expr" '{groups: [{name: "check", rules: [{record: "check:expr", expr: $e}]}]}' >"$WORK/expr.json"
        promtool check rules "$WORK/expr.json" >"$WORK/expr.out" 2>&1 || bad_parse="$bad_parse [$expr: $(grep -v "^ *$" "$WORK/expr.out" | tail -1)]"
        for name in $(names_in "$expr"); do
            grep -qxF "$name" <<<"$known" || bad_names="$bad_names $name"
        done
    done <"$file"
    cmp_num "3: $what has expressions" "$n" -gt 0
    is "3: ... every one parses (promtool)" "${bad_parse# }" ""
    is "3: ... and names only metrics /metrics has (or recording rules)" "$(tr ' ' '\n' <<<"${bad_names# }" | sort -u | tr '\n' ' ' | sed 's/ $//')" ""
}

# --- cases -----------------------------------------------------------------

case_1() {
    echo "# case 1: the rules: promtool check rules and test rules"
    local out
    out=$(promtool check rules "$RULES" 2>&1)
    is "1: promtool check rules $RULES" "$?" 0 || printf '#   %s\n' "$out"
    like "1: ... finds rules" "$out" 'SUCCESS: [1-9][0-9]* rules found'
    out=$(cd "$(dirname "$RULES_TEST")" && promtool test rules "$(basename "$RULES_TEST")" 2>&1)
    is "1: promtool test rules $RULES_TEST" "$?" 0 || printf '#   %s\n' "$out" | head -40
    # Every alert of the rules file has a test that expects it to fire.
    local alert missing=""
    for alert in $(sed -n 's/^ *- alert: *\([A-Za-z]*\) *$/\1/p' "$RULES"); do
        grep -A3 "alertname: $alert\$" "$RULES_TEST" | grep -q "exp_labels" || missing="$missing $alert"
    done
    is "1: every alert has a test where it fires" "${missing# }" ""
    # The tests have teeth: the same tests against rules with a changed
    # threshold fail.
    mkdir -p "$WORK/teeth"
    sed 's/snowflake:cap_usage:ratio1m > 0.8/snowflake:cap_usage:ratio1m > 0.99/' "$RULES" >"$WORK/teeth/$(basename "$RULES")"
    cp "$RULES_TEST" "$WORK/teeth/"
    (cd "$WORK/teeth" && promtool test rules "$(basename "$RULES_TEST")" >/dev/null 2>&1)
    is "1: ... and fail when a threshold changes (SnowflakeNearCap at 99%)" "$?" 1
    sed 's/increase(snowflake_clock_failovers_total\[1h\]) >= 2/increase(snowflake_clock_failovers_total[1h]) >= 3/' "$RULES" >"$WORK/teeth/$(basename "$RULES")"
    (cd "$WORK/teeth" && promtool test rules "$(basename "$RULES_TEST")" >/dev/null 2>&1)
    is "1: ... and fail when a threshold changes (SnowflakeRepeatedClockFailovers at 3)" "$?" 1
    # The copy-paste prometheus.yml of docs/monitoring/README.md, with its
    # files where this run has them.
    sed -n '/^# prometheus.yml$/,/^```$/p' docs/monitoring/README.md | sed '$d' |
        sed -e "s|/etc/prometheus/snowflake-rules.yml|$PWD/$RULES|" \
            -e "s|/etc/prometheus/snowflake-token|$WORK/token|" >"$WORK/prometheus.yml"
    echo "s3cret" >"$WORK/token"
    out=$(promtool check config "$WORK/prometheus.yml" 2>&1)
    is "1: docs/monitoring/README.md's prometheus.yml passes promtool check config" "$?" 0 || printf '#   %s\n' "$out"
    like "1: ... with authorization.credentials_file" "$(cat "$WORK/prometheus.yml")" 'credentials_file: '
    # Each alert says what to do.
    is "1: every alert has summary, description and runbook annotations" \
        "$(awk '/^ *- alert:/ { if (a != "" && n != 3) print a; a = $3; n = 0 }
               /^ *(summary|description|runbook):/ { n++ }
               END { if (a != "" && n != 3) print a }' "$RULES")" ""
}

case_2() {
    echo "# case 2: a real /metrics against promtool and docs/reference.md"
    scrape || { bail "2: a server with the HTTP endpoint starts and answers /metrics"; return; }
    ok "2: a server with the HTTP endpoint starts and answers /metrics"
    local out
    out=$(promtool check metrics <"$WORK/metrics.txt" 2>&1)
    is "2: promtool check metrics (no problems reported)" "$out" ""
    # docs/reference.md: the rows of the table under "| Metric | Type | Column |".
    local documented scraped
    documented=$(sed -n '/^| Metric | Type | Column |$/,/^$/p' docs/reference.md |
                 sed -n 's/^| `\([a-z_:]*\)[{`].*/\1/p' | sort -u)
    scraped=$(scrape_families)
    cmp_num "2: docs/reference.md has a table of metrics" "$(wc -l <<<"$documented")" -gt 10
    is "2: every metric of /metrics is in docs/reference.md" "$(comm -23 <(echo "$scraped") <(echo "$documented") | tr '\n' ' ' | sed 's/ $//')" ""
    is "2: every metric in docs/reference.md is in /metrics" "$(comm -13 <(echo "$scraped") <(echo "$documented") | tr '\n' ' ' | sed 's/ $//')" ""
    # The conventions the rules rely on.
    like "2: the lease id is a label, never a sample value" "$SCRAPE" $'\n''snowflake_lease_info\{state="static",lease_id=""\} 1'$'\n'
    is "2: no free text in labels (no error=)" "$(grep -c 'error="' <<<"$SCRAPE")" 0
    like "2: refusals by cause and SQLSTATE" "$SCRAPE" $'\n''snowflake_ids_refused_total\{cause="no_lease",sqlstate="SF003"\} 0'$'\n'
    like "2: HTTP answers by endpoint and code" "$SCRAPE" $'\n''snowflake_http_requests_total\{endpoint="not_found",code="404"\} 1'$'\n'
    like "2: ids handed out over HTTP" "$SCRAPE" $'\n''snowflake_http_ids_issued_total 10'$'\n'
}

case_3() {
    echo "# case 3: expressions of the rules and the dashboard"
    scrape || { bail "3: a server with the HTTP endpoint starts and answers /metrics"; return; }
    # Rules: every expr (block scalars joined into one line).
    /usr/bin/python3 - "$RULES" >"$WORK/rule_exprs" <<'PY' || { bail "3: the rules file reads as YAML"; return; }
import sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]:
        print(" ".join(r["expr"].split()))
PY
    check_exprs "the rules" "$WORK/rule_exprs"
    # Dashboard: Grafana's variables replaced by values Prometheus accepts.
    jq -e . "$DASHBOARD" >/dev/null 2>&1
    is "3: the dashboard is valid JSON" "$?" 0
    jq -r '.. | objects | select(has("expr")) | .expr' "$DASHBOARD" |
        sed -e 's/\$__rate_interval/5m/g' -e 's/\$__interval/1m/g' -e 's/\$__range/1h/g' \
            -e 's/\$instance/.*/g' -e 's/\${instance}/.*/g' >"$WORK/dash_exprs"
    is "3: the dashboard uses no variable but \$instance and Grafana's own" "$(grep -c '\$' "$WORK/dash_exprs")" 0
    check_exprs "the dashboard" "$WORK/dash_exprs"
    # The panels the dashboard promises.
    local title missing=""
    for title in "Ids issued per second" "Cap usage" "Refusals per second by SQLSTATE" "Lease state" \
        "Lease time left" "Clock error" "Backup worker id" "Mark write time" "HTTP answers per second" "HTTP time to answer (p50, p99)"; do
        jq -e --arg t "$title" '[.panels[] | select(.title == $t)] | length == 1' "$DASHBOARD" >/dev/null || missing="$missing [$title]"
    done
    is "3: the dashboard has its panels" "${missing# }" ""
}

case_4() {
    echo "# case 4: the SQL exporters' queries"
    scrape || { bail "4: a server with the HTTP endpoint starts and answers /metrics"; return; }
    /usr/bin/python3 - docs/prometheus-queries.yaml docs/monitoring/snowflake.collector.yml "$WORK" <<'PY' \
        || { bail "4: the queries files read as YAML"; return; }
import sys, yaml
pe, se, work = sys.argv[1:4]
d = yaml.safe_load(open(pe))
with open(work + "/pe_queries", "w") as f:
    for name, q in d.items():
        f.write(name + "\t" + " ".join(q["query"].split()) + "\n")
with open(work + "/pe_metrics", "w") as f:
    for name, q in d.items():
        labels = [c for m in q["metrics"] for c, v in m.items() if v["usage"] == "LABEL"]
        for m in q["metrics"]:
            for c, v in m.items():
                if v["usage"] != "LABEL":
                    f.write("%s_%s\t%s\t%s\n" % (name, c, v["usage"].lower(), ",".join(labels) or "-"))
c = yaml.safe_load(open(se))
with open(work + "/se_queries", "w") as f:
    for q in c["queries"]:
        f.write(q["query_name"] + "\t" + " ".join(q["query"].split()) + "\n")
with open(work + "/se_metrics", "w") as f:
    for m in c["metrics"]:
        f.write("%s\t%s\t%s\n" % (m["metric_name"], m["type"], ",".join(m.get("key_labels", [])) or "-"))
PY
    local file name query bad=""
    for file in pe_queries se_queries; do
        while IFS=$'\t' read -r name query; do
            [ "$(pg_psql "$SERVER" -A -t -c "SELECT count(*) FROM ($query) q" 2>&1)" = 1 ] || bad="$bad $file:$name"
        done <"$WORK/$file"
    done
    is "4: every query of both files runs and gives one row" "${bad# }" ""
    local cols col missing=""
    cols=$(pg_val "$SERVER" "SELECT string_agg(attname, ' ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'snowflake_stats'::regclass AND attnum > 0")
    for col in $cols; do
        case $col in
            lease_last_error) grep -q "(snowflake_stats\.$col)" docs/prometheus-queries.yaml ;;  # named as not exported
            *) grep -qw "$col" <(sed -n '/query: |/,/FROM snowflake_stats/p' docs/prometheus-queries.yaml) ;;
        esac || missing="$missing $col"
    done
    is "4: every column of snowflake_stats is in docs/prometheus-queries.yaml" "${missing# }" ""
    is "4: both files define the same metrics" "$(diff <(sort "$WORK/pe_metrics") <(sort "$WORK/se_metrics"))" ""
    is "4: only snowflake_info_info has labels" "$(awk -F'\t' '$3 != "-" && $1 != "snowflake_info_info"' "$WORK/pe_metrics")" ""
    is "4: counters end in _total, and only counters" "$(awk -F'\t' '($2 == "counter") != ($1 ~ /_total$/)' "$WORK/pe_metrics")" ""
    local scraped
    scraped=$(scrape_families)
    is "4: every metric but snowflake_info_info has the name /metrics gives it" \
        "$(cut -f1 "$WORK/pe_metrics" | grep -vxF snowflake_info_info | grep -vxFf <(echo "$scraped") | tr '\n' ' ' | sed 's/ $//')" ""
}

# lease_state DIR: the node's lease state, from SQL.
lease_state_is() { [ "$(pg_val "$1" "SELECT lease_state FROM snowflake_stats" 2>/dev/null)" = "$2" ]; }

# counter_series TEXT: the label sets of every snowflake counter sample but
# the HTTP ones (which count the scrapes themselves), one a line.
counter_series() {
    awk '$1 == "#" && $2 == "TYPE" && $4 == "counter" { c[$3] = 1; next }
         $1 !~ /^#/ { n = $1; sub(/\{.*/, "", n); if (n in c && n !~ /^snowflake_http_/) print $1 }' <<<"$1" | sort
}

case_5() {
    echo "# case 5: a leased worker id through a lease loss"
    mkdir -p "$WORK/etcd"
    etcd_start 1 "$WORK/etcd" || { bail "5: etcd starts"; return; }
    local dir port body before after lease_id
    dir=$(pg_tmpdir)
    port=$(free_tcp_port)
    pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'" \
        "snowflake.lease_ttl = 5" "autovacuum = off" "snowflake.http_listen = '127.0.0.1:$port'" || { bail "5: initdb"; return; }
    pg_start "$dir" || { bail "5: the node starts"; return; }
    pg_val "$dir" "CREATE EXTENSION snowflake" >/dev/null
    wait_for "lease held" 30 lease_state_is "$dir" held || { bail "5: the node holds a lease"; return; }
    pg_val "$dir" "SELECT count(*) FROM snowflake_nextval_batch(100)" >/dev/null
    body=$(curl -s -m 10 "http://127.0.0.1:$port/metrics")
    lease_id=$(pg_val "$dir" "SELECT lease_id FROM snowflake_stats")
    cmp_num "5: a lease id of many digits (etcd's are 63-bit)" "${#lease_id}" -ge 15
    like "5: snowflake_lease_info has it exactly, as a label" "$body" \
        $'\n''snowflake_lease_info\{state="held",lease_id="'"$lease_id"'"\} 1'$'\n'
    is "5: ... and no sample carries it as a value" "$(grep -c "^snowflake_lease_id " <<<"$body")" 0
    is "5: no lease error series while the lease is held" "$(grep -c '^snowflake_lease_last_error_info' <<<"$body")" 0
    before=$(counter_series "$body")

    etcd_stop
    wait_for "lease expired" 30 lease_state_is "$dir" expired || { bail "5: the lease expires once etcd is gone"; return; }
    pg_val "$dir" "SELECT snowflake_nextval()" >/dev/null 2>&1
    body=$(curl -s -m 10 "http://127.0.0.1:$port/metrics")
    like "5: expired: snowflake_lease_info says so" "$body" $'\n''snowflake_lease_info\{state="expired",lease_id="[0-9]*"\} 1'$'\n'
    like "5: ... snowflake_lease_last_error_info names a bounded reason" "$body" \
        $'\n''snowflake_lease_last_error_info\{reason="(grant|check_fleet|list_workers|claim|read_mark|keepalive|revoke|held_by_other|previous_run|clone|fleet_settings|lease_gone|deadline_passed)"\} 1'$'\n'
    is "5: ... and no label has the error's text" "$(grep -cE 'error="|etcd said|127\.0\.0\.1' <<<"$body")" 0
    like "5: the refused id counts under no_lease/SF003" "$body" \
        $'\n''snowflake_ids_refused_total\{cause="no_lease",sqlstate="SF003"\} [1-9]'
    after=$(counter_series "$body")
    is "5: every counter keeps the one series it had" "$(diff <(echo "$before") <(echo "$after"))" ""
    cmp_num "5: ... (counters compared)" "$(wc -l <<<"$before")" -gt 10
}

run_cases monitoring "$@"
exit
