# shellcheck shell=bash
# Cases of the HTTP endpoint suite (sourced by test/http.sh): every
# endpoint, every error, and the requests the endpoint does not take.
#   1  every endpoint, against snowflake_decode() and snowflake_stats
#   2  every error: a JSON body with a SQLSTATE code and a message
#  15  a GET with a body, a trailing slash, unknown or repeated parameters
#  20  text formats: batches as base32 and base62, a text id decoded only
#      when its format is named, bad formats and bad text

case_1() {
    echo "# case 1: every endpoint"
    start_a || return
    req "$A" /healthz
    is "1: /healthz 200" "$CODE" 200
    json_is "1: /healthz says ok" .status ok
    like "1: JSON content type" "$HDRS" $'\n''Content-Type: application/json'
    req "$A" /v1/ids/batch
    is "1: /v1/ids/batch 200" "$CODE" 200
    json_is "1: ... without count: one id, a JSON string" '.ids | map(type) | join(",")' string
    req "$A" '/v1/ids/batch?count=100'
    json_is "1: count=100: 100 ids" '.ids | length' 100
    jq -r '.ids[]' <<<"$BODY" >"$SHIM_DIR/ids100"
    check "1: ... strictly increasing" increasing "$SHIM_DIR/ids100"
    is "1: ... all of worker 7, decoded in SQL" \
        "$(pg_val "$A" "SELECT count(*) FILTER (WHERE snowflake_worker_id(x::bigint) = 7) FROM unnest(string_to_array('$(paste -sd, "$SHIM_DIR/ids100")', ',')) x")" 100
    req "$A" '/v1/ids/batch?count=10000'
    jq -r '.ids[]' <<<"$BODY" >"$SHIM_DIR/ids10000"
    is "1: count=10000: 10000 ids" "$(wc -l <"$SHIM_DIR/ids10000")" 10000
    check "1: ... strictly increasing" increasing "$SHIM_DIR/ids10000"
    cmp_num "1: ... above the earlier batch" "$(head -1 "$SHIM_DIR/ids10000")" -gt "$(tail -1 "$SHIM_DIR/ids100")"
    local sqlid
    sqlid=$(pg_val "$A" "SELECT snowflake_nextval()")
    cmp_num "1: an id from SQL after them is above them" "$sqlid" -gt "$(tail -1 "$SHIM_DIR/ids10000")"
    req "$A" '/v1/ids/batch?count=1'
    cmp_num "1: an id from HTTP after that is above it" "$(jq -r '.ids[0]' <<<"$BODY")" -gt "$sqlid"

    req "$A" '/v1/uuids/batch?count=5'
    is "1: /v1/uuids/batch 200" "$CODE" 200
    json_is "1: ... 5 UUIDs, version 7, RFC variant" \
        '[.uuids[] | select(test("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"))] | length' 5
    json_is "1: ... strictly increasing" '[.uuids as $u | range(1; $u | length) | select($u[.] <= $u[. - 1])] | length' 0
    local u
    u=$(jq -r '.uuids[0]' <<<"$BODY")
    cmp_num "1: ... their time is now (uuidv7_timestamp within 5 s)" \
        "$(pg_val "$A" "SELECT abs(extract(epoch FROM uuidv7_timestamp('$u') - clock_timestamp()))::int")" -le 5

    req "$A" "/v1/ids/$sqlid"
    is "1: /v1/ids/{id} 200" "$CODE" 200
    is "1: ... the same as snowflake_decode()" \
        "$(jq -r '[.id, .timestamp, .worker_id, .sequence] | join(" ")' <<<"$BODY")" \
        "$(pg_val "$A" "SELECT '$sqlid ' || to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' ' || worker_id || ' ' || sequence FROM snowflake_decode($sqlid)")"
    json_is "1: ... ms_since_epoch, the id's milliseconds since the epoch (id >> 22)" .ms_since_epoch \
        "$(pg_val "$A" "SELECT $sqlid >> 22")"
    req "$A" /v1/ids/0
    json_is "1: /v1/ids/0 is the epoch" .timestamp 2025-01-01T00:00:00.000Z
    json_is "1: ... 0 ms since it" .ms_since_epoch 0
    req "$A" /v1/ids/9223372036854775807
    json_is "1: /v1/ids/INT64_MAX decodes" '.worker_id, .sequence' $'1023\n4095'
    req "$A" /v1/ids/123 -I
    is "1: HEAD /v1/ids/{id} 200" "$CODE" 200

    req "$A" /metrics
    is "1: /metrics 200" "$CODE" 200
    like "1: ... Prometheus text" "$HDRS" $'\n''Content-Type: text/plain; version=0.0.4'
    local cols col missing=""
    cols=$(pg_val "$A" "SELECT string_agg(attname, ' ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'snowflake_stats'::regclass AND attnum > 0")
    for col in $cols; do
        grep -Eq "^# HELP .*[( ]snowflake_stats\.$col[),]" <<<"$BODY" || missing="$missing $col"
    done
    is "1: every column of snowflake_stats has a metric (add a row to src/core/stats_columns.hpp)" "${missing# }" ""
    # docs/prometheus-queries.yaml and the sql_exporter collector: test/monitoring.sh.
    is "1: ... ids_issued_total equals snowflake_stats.ids_issued" \
        "$(awk '$1 == "snowflake_ids_issued_total" { print $2 }' <<<"$BODY")" "$(pg_val "$A" "SELECT ids_issued FROM snowflake_stats")"
    like "1: ... the worker id as a label" "$BODY" 'snowflake_info\{worker_id="7",epoch="2025-01-01T00:00:00.000Z"\} 1'
    like "1: ... ready" "$BODY" $'\n''snowflake_ready 1'$'\n'
    like "1: ... the lease state and lease id as labels (none: static)" "$BODY" $'\n''snowflake_lease_info\{state="static",lease_id=""\} 1'$'\n'
    like "1: ... the library's version" "$BODY" $'\n''snowflake_build_info\{version="'"$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" snowflake.control)"'"\} 1'$'\n'
    like "1: ... the server's start time" "$BODY" $'\n''process_start_time_seconds [0-9]{10}(\.[0-9]+)?'$'\n'
    like "1: ... requests counted by endpoint and code" "$BODY" $'\n''snowflake_http_requests_total\{endpoint="ids_batch",code="200"\} [1-9]'
    # Every sample line is NAME[{labels}] VALUE.
    is "1: ... every line is a comment or a sample" \
        "$(grep -v '^$' <<<"$BODY" | grep -vcE '^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[^}]*\})? -?[0-9.]+(e[-+]?[0-9]+)?)$')" 0
}

case_2() {
    echo "# case 2: errors"
    start_a || return
    local c n=0 bad=""
    for c in 0 10001 99999 100000 -1 +1 10abc abc 1e3 0x10 1.5 '' '%20' '%FF' 99999999999999999999; do
        req "$A" "/v1/ids/batch?count=$c"
        n=$((n + 1))
        [ "$CODE" = 400 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 22023 ] || bad="$bad [$c: $CODE]"
    done
    req "$A" '/v1/ids/batch?count'
    [ "$CODE" = 400 ] || bad="$bad [count without =: $CODE]"
    req "$A" '/v1/ids/batch?count=1&count=2'
    [ "$CODE" = 400 ] || bad="$bad [count twice: $CODE]"
    req "$A" '/v1/uuids/batch?count=0'
    [ "$CODE" = 400 ] || bad="$bad [uuids count=0: $CODE]"
    is "2: $((n + 3)) bad counts: 400, code 22023" "$bad" ""
    req "$A" '/v1/ids/batch?count=0'
    error_shape "2: ... a JSON error with a code and a message" 400 22023
    like "2: ... and a hint" "$(jq -r .hint <<<"$BODY")" '.'
    req "$A" '/v1/ids/batch?count=5&other=x'
    error_shape "2: other query parameters are refused" 400 22023

    bad=""
    for c in abc -1 9223372036854775808 18446744073709551616 1a '%FF' 1.0 '%201'; do
        req "$A" "/v1/ids/$c"
        [ "$CODE" = 400 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 22P02 ] || bad="$bad [$c: $CODE]"
    done
    req "$A" "/v1/ids/"
    [ "$CODE" = 400 ] || bad="$bad [empty: $CODE]"
    is "2: bad ids: 400, code 22P02" "$bad" ""

    bad=""
    for c in / /v1 /v1/ids /v2/ids/batch /healthz/ /metrics/x /V1/ids/batch /v1/uuids/1 '/%FF%FE' \
        /v1/ids/batch/ '/v1/ids/1%2F2'; do
        req "$A" "$c"
        [ "$CODE" = 404 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 42704 ] || bad="$bad [$c: $CODE]"
    done
    is "2: unknown paths: 404, code 42704" "$bad" ""

    bad=""
    for c in POST PUT DELETE PATCH OPTIONS; do
        req "$A" /v1/ids/batch -X "$c"
        [ "$CODE" = 405 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 0A000 ] || bad="$bad [$c: $CODE]"
    done
    req "$A" /v1/ids/batch -X POST -d 'count=5'
    [ "$CODE" = 405 ] || bad="$bad [POST with a body: $CODE]"
    is "2: other methods: 405, code 0A000" "$bad" ""
    like "2: ... with an Allow header" "$HDRS" $'\n''Allow: GET'
    req "$A" /v1/ids/batch -I
    is "2: HEAD on a batch (would use up ids): 405" "$CODE" 405
    req "$A" /healthz -I
    is "2: HEAD /healthz: 200" "$CODE" 200
}

case_15() {
    echo "# case 15: requests the endpoint does not take: a GET with a body, a trailing slash, unknown or repeated parameters"
    start_a || return
    req "$A" '/v1/ids/batch?count=2' -X GET --data-binary 'abc'
    error_shape "15: a GET with a body: 400" 400 08P01
    req "$A" '/v1/ids/batch?count=2' -X GET -H 'Transfer-Encoding: chunked' --data-binary 'abc'
    is "15: ... a chunked one too" "$CODE" 400
    req "$A" '/v1/ids/batch?count=2' -H 'Content-Length: 0'
    is "15: a GET with Content-Length: 0: 200" "$CODE" 200
    req "$A" '/v1/ids/batch/'
    error_shape "15: /v1/ids/batch/: 404, not an invalid id" 404 42704
    req "$A" '/v1/ids/batch/?count=2'
    is "15: ... with a count too" "$CODE" 404
    req "$A" '/v1/ids/123/'
    is "15: /v1/ids/123/: 404" "$CODE" 404
    req "$A" '/v1/ids/batch?count=5&other=x'
    error_shape "15: an unknown parameter: 400" 400 22023
    like "15: ... naming it" "$(jq -r .message <<<"$BODY")" '"other"'
    req "$A" '/v1/ids/batch?count=1&count=2'
    error_shape "15: count given twice: 400" 400 22023
    like "15: ... naming it" "$(jq -r .message <<<"$BODY")" '"count".*more than once'
    req "$A" '/v1/ids/batch?cnt=2'
    like "15: a misspelt count: 400 naming it" "$CODE $(jq -r .message <<<"$BODY")" '^400 .*"cnt"'
    req "$A" '/healthz?verbose=1'
    like "15: /healthz?verbose=1: 400 naming it" "$CODE $(jq -r .message <<<"$BODY")" '^400 .*"verbose"'
    req "$A" '/v1/ids/123?x'
    is "15: /v1/ids/123?x: 400" "$CODE" 400
    req "$A" '/v1/uuids/batch?count=2'
    is "15: the batches still take count" "$CODE" 200
    # libmicrohttpd's own answers: the status is right (their bodies are
    # libmicrohttpd's, fixed when it was built; docs/reference.md).
    local longpath
    longpath=$(head -c 40000 /dev/zero | tr '\0' 'x')
    req "$A" "/v1/ids/$longpath"
    like "15: a 40 KB path: 414 or 431" "$CODE" '^(414|431)$'
}

case_20() {
    echo "# case 20: text formats: format= on /v1/ids/batch and /v1/ids/{id}"
    start_a || return
    req "$A" '/v1/ids/batch?count=50&format=base32'
    is "20: ?count=50&format=base32: 200" "$CODE" 200
    json_is "20: ... 50 ids of 13 characters of Crockford's base32" \
        '[.ids[] | select(test("^[0-7][0-9A-HJKMNP-TV-Z]{12}$"))] | length' 50
    json_is "20: ... strictly increasing as text (fixed width: text order is id order)" \
        '[.ids as $u | range(1; $u | length) | select($u[.] <= $u[. - 1])] | length' 0
    local b32 first
    b32=$(jq -r '.ids | join(",")' <<<"$BODY")
    first=${b32%%,*}
    is "20: ... each is snowflake_encode(id, 'base32') of an id of worker 7 (SQL decodes them)" \
        "$(pg_val "$A" "SELECT count(*) FILTER (WHERE snowflake_encode(snowflake_decode_text(x, 'base32'), 'base32') = x AND snowflake_worker_id(snowflake_decode_text(x, 'base32')) = 7) FROM unnest(string_to_array('$b32', ',')) x")" 50
    req "$A" '/v1/ids/batch?format=base62&count=20'
    json_is "20: ?format=base62&count=20: 20 ids of 11 base62 characters" \
        '[.ids[] | select(test("^[0-9A-Za-z]{11}$"))] | length' 20
    local b62
    b62=$(jq -r '.ids | join(",")' <<<"$BODY")
    is "20: ... strictly increasing, and above the base32 batch before them (SQL decodes them)" \
        "$(pg_val "$A" "SELECT bool_and(v > snowflake_decode_text('${b32##*,}', 'base32')) AND (SELECT count(*) FROM (SELECT v, lag(v) OVER (ORDER BY o) AS p FROM unnest(string_to_array('$b62', ',')) WITH ORDINALITY AS t(x, o), LATERAL snowflake_decode_text(x, 'base62') v) s WHERE p IS NOT NULL AND v <= p) = 0 FROM unnest(string_to_array('$b62', ',')) x, LATERAL snowflake_decode_text(x, 'base62') v")" t
    req "$A" '/v1/ids/batch?format=decimal&count=3'
    json_is "20: ?format=decimal: decimal ids as today" '[.ids[] | select(test("^[0-9]{1,19}$"))] | length' 3

    # Decoding: a text id only in the format named.
    local id dec
    id=$(pg_val "$A" "SELECT snowflake_decode_text('$first', 'base32')")
    req "$A" "/v1/ids/$id"
    dec=$BODY
    json_is "20: /v1/ids/{id} names the id's text forms" '.base32 + " " + .base62' \
        "$(pg_val "$A" "SELECT snowflake_encode($id, 'base32') || ' ' || snowflake_encode($id, 'base62')")"
    req "$A" "/v1/ids/$first?format=base32"
    is "20: /v1/ids/{base32}?format=base32: 200" "$CODE" 200
    is "20: ... the same answer as for the decimal id" "$BODY" "$dec"
    local lower
    lower=$(tr 'A-Z' 'a-z' <<<"$first")
    req "$A" "/v1/ids/${lower:0:4}-${lower:4:4}-${lower:8}?format=base32"
    is "20: ... lower case with hyphens too (Crockford's lenient reading, as in SQL)" "$BODY" "$dec"
    req "$A" "/v1/ids/$(jq -r .base62 <<<"$dec")?format=base62"
    is "20: /v1/ids/{base62}?format=base62: the same answer" "$BODY" "$dec"
    req "$A" "/v1/ids/$id?format=decimal"
    is "20: /v1/ids/{id}?format=decimal: the same answer" "$BODY" "$dec"
    req "$A" "/v1/ids/$first"
    error_shape "20: a base32 id without ?format=base32: 400 22P02 (never guessed)" 400 22P02
    req "$A" "/v1/ids/0000000000001"
    is "20: ... 13 digits are a decimal id unless base32 is named" "$(jq -r .id <<<"$BODY")" 1
    req "$A" "/v1/ids/0000000000001?format=base32"
    is "20: ... and base32 1 when it is" "$(jq -r .id <<<"$BODY")" 1

    # Bad formats and bad text: 400 with the endpoint's JSON error.
    local c bad=""
    for c in base64 Base32 BASE62 hex '' '%20base32' 'base32%00'; do
        req "$A" "/v1/ids/batch?format=$c"
        [ "$CODE" = 400 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 22023 ] || bad="$bad [$c: $CODE]"
    done
    req "$A" '/v1/ids/batch?format'
    [ "$CODE" = 400 ] || bad="$bad [format without =: $CODE]"
    req "$A" "/v1/ids/$id?format=base64"
    [ "$CODE" = 400 ] || bad="$bad [decode base64: $CODE]"
    is "20: unknown format names: 400, code 22023" "$bad" ""
    req "$A" '/v1/ids/batch?format=base64'
    error_shape "20: ... a JSON error" 400 22023
    is "20: ... the formats in the message" "$(jq -r .message <<<"$BODY")" "format must be decimal, base32 or base62"
    like "20: ... and a hint" "$(jq -r .hint <<<"$BODY")" 'base32'
    req "$A" '/v1/ids/batch?format=base32&format=base62'
    like "20: format given twice: 400 naming it" "$CODE $(jq -r .message <<<"$BODY")" '^400 .*"format".*more than once'
    req "$A" '/v1/uuids/batch?format=base32'
    like "20: /v1/uuids/batch takes no format: 400 naming it" "$CODE $(jq -r .message <<<"$BODY")" '^400 .*"format"'
    req "$A" '/v1/ids/batch?count=0&format=base64'
    is "20: a bad count is refused before a bad format" "$(jq -r .message <<<"$BODY")" "count must be a number from 1 to 10000"

    bad=""
    for c in 070FNENJ40W0 070FNENJ40W000 870FNENJ40W00 070FNENJ40W0U 070FNENJ40W0%21 '%FF70FNENJ40W0'; do
        req "$A" "/v1/ids/$c?format=base32"
        [ "$CODE" = 400 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 22P02 ] || bad="$bad [base32 $c: $CODE]"
    done
    for c in 0IfbtDtw5i 0IfbtDtw5i44 AzL8n0Y58m8 0IfbtDtw5i- 252752938651381760; do
        req "$A" "/v1/ids/$c?format=base62"
        [ "$CODE" = 400 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 22P02 ] || bad="$bad [base62 $c: $CODE]"
    done
    is "20: bad base32 and base62 ids: 400, code 22P02" "$bad" ""
    req "$A" '/v1/ids/070FNENJ40W0U?format=base32'
    is "20: ... the message names the format" "$(jq -r .message <<<"$BODY")" "invalid base32 id"
    is "20: ... the detail the offending character" "$(jq -r .detail <<<"$BODY")" \
        "At character 13: not a character of Crockford's base32 (0-9 and A-Z without I, L, O, U)."
    like "20: ... the hint what a base32 id looks like" "$(jq -r .hint <<<"$BODY")" '13 characters'
    req "$A" '/v1/ids/AzL8n0Y58m8?format=base62'
    is "20: a base62 id above 2^63 - 1: the detail says so" "$(jq -r .detail <<<"$BODY")" \
        "The text as a whole: the value is above 2^63 - 1, the largest id."
    req "$A" '/v1/ids/070FNENJ40W00?format=base32' -I
    is "20: HEAD /v1/ids/{base32}?format=base32: 200" "$CODE" 200
}
