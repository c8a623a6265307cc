#!/bin/bash
# snowflake-inspect, the command-line decoder, as built (build/snowflake-inspect:
# no installation of the command needed).
#
#   1. The command line: arguments and stdin, --json, --epoch, --layout,
#      --format (base32 and base62 ids, only when named), --text-forms, --help and
#      --version, invalid inputs (a message naming the token on stderr, the
#      other inputs still decoded, exit 1) and usage errors (exit 2).
#   2. Agreement with the SQL decoders of the installed extension, on a
#      throwaway instance that preloads it with a worker id: ids from
#      snowflake_nextval() and snowflake_compose() (edge times, workers and
#      sequences), the largest bigint, random bigints, decoded under the
#      default epoch, Twitter's, Discord's, one in Unix milliseconds and one
#      with microseconds and an offset; UUIDs from uuidv7(), uuidv7(shift),
#      uuidv7_from_timestamp() at the edges of the 48-bit range, upper-case
#      and brace forms, and gen_random_uuid() (uuidv7_timestamp() is NULL:
#      the command must refuse it). The command's JSON and text output are
#      loaded into the instance and compared there, row by row, with
#      snowflake_decode() and uuidv7_timestamp(): the same time (as an
#      instant and as the exact RFC 3339 text), worker and sequence; and
#      every id as snowflake_encode() writes it in base32 and base62, read
#      back with --format, its --text-forms equal to snowflake_encode()'s;
#      ids of every layout profile and of a written layout, edges and random,
#      decoded with --layout and compared with snowflake_decode_as(), and
#      --from-timestamp under a layout with snowflake_from_timestamp_as().
#
# One "ok - ..." / "not ok - ..." line per check (test/lib/tap.sh); exits non-zero if any
# check fails, or if fewer values were compared than generated.
#
# Usage: test/inspect.sh   (SNOWFLAKE_INSPECT=path overrides the command)
set -euo pipefail
cd "$(dirname "$0")/.."

. test/lib/tap.sh
. test/lib/pg.sh

BIN=${SNOWFLAKE_INSPECT:-$PWD/build/snowflake-inspect}
if [ ! -x "$BIN" ]; then
    echo "inspect: $BIN is not built: run make (or make build/snowflake-inspect)" >&2
    exit 1
fi

WORKER=37
IDS=300     # snowflake_nextval() ids
RANDOM_IDS=200
UUIDS=300   # uuidv7() values

DIR=""
WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-inspect.XXXXXX")
cleanup() {
    pg_cleanup_all
    if [ -z "${KEEP_TMP:-}" ]; then rm -rf "$WORK"; else echo "kept $DIR $WORK"; fi
}
trap cleanup EXIT


# run [args...] < stdin: runs the command; its output in $out, $err, $rc.
run() {
    rc=0
    "$BIN" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
    out=$(cat "$WORK/out")
    err=$(cat "$WORK/err")
}

# expect DESCRIPTION RC STDOUT STDERR_PATTERN: checks the last run.
expect() {
    local desc=$1 want_rc=$2 want_out=$3 want_err=$4 why=""
    [ "$rc" = "$want_rc" ] || why="exit $rc, expected $want_rc"
    [ "$out" = "$want_out" ] || why="${why:+$why; }stdout [$out], expected [$want_out]"
    if [ -z "$want_err" ]; then
        [ -z "$err" ] || why="${why:+$why; }unexpected stderr [$err]"
    else
        grep -qE -- "$want_err" <<<"$err" || why="${why:+$why; }stderr [$err] lacks /$want_err/"
    fi
    if [ -z "$why" ]; then report 1 "$desc"; else report 0 "$desc" "$why"; fi
}

# ---------------------------------------------------------------------------
# 1. The command line

id_line="252752938651381760 time=2026-11-29T11:09:56.497Z worker=7 sequence=0"
uuid_line="01a22700-f63a-78f3-a26f-1db9e426f23a time=2026-11-29T11:11:44.186Z"

run 252752938651381760 01a22700-f63a-78f3-a26f-1db9e426f23a </dev/null
expect "an id and a UUID as arguments" 0 "$id_line"$'\n'"$uuid_line" ""

run <<<"252752938651381760, 01A22700-F63A-78F3-A26F-1DB9E426F23A"
expect "the same on stdin (comma, upper case)" 0 "$id_line"$'\n'"$uuid_line" ""

run 1 - 3 <<<"2"
expect "- reads stdin in its place" 0 \
    "1 time=2025-01-01T00:00:00.000Z worker=0 sequence=1
2 time=2025-01-01T00:00:00.000Z worker=0 sequence=2
3 time=2025-01-01T00:00:00.000Z worker=0 sequence=3" ""

run </dev/null
expect "empty stdin: no output, exit 0" 0 "" ""

run --json 252752938651381760 </dev/null
expect "--json: one object, the id as a string" 0 \
    '{"input":"252752938651381760","type":"snowflake","id":"252752938651381760","time":"2026-11-29T11:09:56.497Z","ms_since_epoch":60260996497,"worker":7,"sequence":0,"epoch":"2025-01-01T00:00:00.000Z","timestamp":"2026-11-29T11:09:56.497Z","worker_id":7}' ""

run --epoch discord 175928847299117063 </dev/null
expect "--epoch discord: Discord's documented example (internal worker 1, process 0, increment 7)" 0 \
    "175928847299117063 time=2016-04-30T11:18:25.796Z worker=32 sequence=7 internal_worker=1 internal_process=0" ""
run --epoch=twitter 1212161520163201024 </dev/null
expect "--epoch=twitter: datacenter and worker (5 bits each)" 0 \
    "1212161520163201024 time=2020-01-01T00:00:01.935Z worker=922 sequence=0 datacenter=28 datacenter_worker=26" ""
run -e 1420070400000 175928847299117063 </dev/null
expect "-e with Unix milliseconds" 0 "175928847299117063 time=2016-04-30T11:18:25.796Z worker=32 sequence=7" ""
run --epoch "2015-01-01 01:00:00+01:00" 175928847299117063 </dev/null
expect "--epoch with an ISO 8601 offset" 0 "175928847299117063 time=2016-04-30T11:18:25.796Z worker=32 sequence=7" ""
run -e Discord 175928847299117063 </dev/null
expect "-e Discord: preset names in any case" 0 \
    "175928847299117063 time=2016-04-30T11:18:25.796Z worker=32 sequence=7 internal_worker=1 internal_process=0" ""
run -je discord 175928847299117063 </dev/null
expect "-je discord: short options combined" 0 \
    '{"input":"175928847299117063","type":"snowflake","id":"175928847299117063","time":"2016-04-30T11:18:25.796Z","ms_since_epoch":41944705796,"worker":32,"sequence":7,"epoch":"2015-01-01T00:00:00.000Z","timestamp":"2016-04-30T11:18:25.796Z","worker_id":32,"internal_worker":1,"internal_process":0}' ""
run -jx 1 </dev/null
expect "-jx: the unknown one named" 2 "" '"-x"'
run --from-timestamp 2024-12-31T23:59:59.999Z </dev/null
expect "--from-timestamp before the epoch: exit 1, saying so" 1 "" 'before the epoch'
run --from-timestamp=1420070400000 -je discord </dev/null
expect "--from-timestamp=UNIX_MS --json under Discord's epoch: id 0" 0 \
    '{"from_timestamp":"2015-01-01T00:00:00.000Z","id":"0"}' ""
run --from-timestamp 1 2 </dev/null
expect "--from-timestamp with an id beside it: usage error" 2 "" 'takes no ids'

run --layout discord 175928847299117063 </dev/null
expect "--layout discord: Discord's epoch and worker halves" 0 \
    "175928847299117063 time=2016-04-30T11:18:25.796Z worker=32 sequence=7 internal_worker=1 internal_process=0" ""
run -jl sonyflake 50663988 </dev/null
expect "-jl sonyflake: 10 ms units, the machine id lowest, sonyflake's start time" 0 \
    '{"input":"50663988","type":"snowflake","id":"50663988","time":"2014-09-01T00:00:00.030Z","ms_since_epoch":30,"worker":4660,"sequence":5,"epoch":"2014-09-01T00:00:00.000Z","timestamp":"2014-09-01T00:00:00.030Z","worker_id":4660}' ""
run --layout 'time 39, sequence 8, worker 16, unit 10ms' --epoch 1409529600000 50663988 </dev/null
expect "--layout written out, with --epoch" 0 "50663988 time=2014-09-01T00:00:00.030Z worker=4660 sequence=5" ""
run --layout js-safe 9007199254740991 9007199254740992 </dev/null
expect "--layout js-safe: an id at 2^53 is not one of its ids, exit 1" 1 \
    "9007199254740991 time=2094-09-07T15:47:35.551Z worker=63 sequence=63" '"9007199254740992": not an id of the layout: its ids are below 2\^53'
run --layout 'time 41' 1 </dev/null
expect "--layout that cannot be read: usage error naming it" 2 "" 'invalid layout "time 41": a layout names all three fields'
run --layout=sonyflake --from-timestamp 2014-09-01T00:00:00.039Z </dev/null
expect "--from-timestamp under --layout sonyflake: the first id of the 10 ms unit" 0 "50331648" ""
run --layout 'worker 4, time 30, sequence 2' --from-timestamp 2025-01-01T00:00:00Z </dev/null
expect "--from-timestamp under a layout that does not order by time: exit 1" 1 "" 'does not order ids by time'

run 7 abc 8 </dev/null
expect "invalid input: reported by name, the rest decoded, exit 1" 1 \
    "7 time=2025-01-01T00:00:00.000Z worker=0 sequence=7
8 time=2025-01-01T00:00:00.000Z worker=0 sequence=8" '^snowflake-inspect: "abc": not a number or a UUID$'
run -- -1 </dev/null
expect "negative" 1 "" '"-1": negative'
run 9223372036854775808 </dev/null
expect "past the largest bigint" 1 "" '"9223372036854775808": out of range'
run 12x </dev/null
expect "not a number" 1 "" '"12x": not a number$'
run 5c3a1f38-9d4e-4b1a-8f3e-2a1b3c4d5e6f </dev/null
expect "a version-4 UUID" 1 "" '"5c3a1f38-9d4e-4b1a-8f3e-2a1b3c4d5e6f": UUID version 4 is not a version-7 UUID$'
run 01a22700-f63a-78f3-a26f-1db9e426f23 </dev/null
expect "a malformed UUID" 1 "" '": not a UUID'
run "" </dev/null
expect "an empty argument" 1 "" '"": empty input'
printf '1\n\nfoo 2\n' >"$WORK/in"
run <"$WORK/in"
expect "stdin errors name the line" 1 \
    "1 time=2025-01-01T00:00:00.000Z worker=0 sequence=1
2 time=2025-01-01T00:00:00.000Z worker=0 sequence=2" '^snowflake-inspect: stdin line 3: "foo": not a number or a UUID$'
run --json 'a"b' </dev/null
expect "--json: invalid input is an object too, escaped" 1 \
    '{"input":"a\"b","type":"invalid","error":"not a number or a UUID"}' '"a\\"b"'

# Text formats: an id in base32 or base62 only when --format names it.
run --format base32 070FNENJ40W00 01a22700-f63a-78f3-a26f-1db9e426f23a </dev/null
expect "--format base32: a base32 id decoded (and a UUID still a UUID)" 0 "$id_line"$'\n'"$uuid_line" ""
run -f base32 070f-nenj-40w00 </dev/null
expect "-f base32: read leniently (lower case, hyphens), as SQL reads it" 0 "$id_line" ""
run --format=base62 0IfbtDtw5i4 </dev/null
expect "--format=base62" 0 "$id_line" ""
run -f decimal 252752938651381760 </dev/null
expect "-f decimal: the default, named" 0 "$id_line" ""
run 070FNENJ40W00 </dev/null
expect "a base32 id without --format: not guessed, exit 1" 1 "" '"070FNENJ40W00": not a number$'
run -f base32 252752938651381760 </dev/null
expect "--format base32: decimal digits are not a base32 id" 1 "" \
    '"252752938651381760": not a base32 id: a base32 id is 13 characters \(hyphens aside\)$'
run -f base62 0IfbtDtw5i- 0IfbtDtw5i4 </dev/null
expect "--format base62: a bad character named by position, the others decoded" 1 "$id_line" \
    '"0IfbtDtw5i-": not a base62 id: not a base62 character \(0-9, A-Z, a-z\) \(character 11\)$'
run -f base32 870FNENJ40W00 </dev/null
expect "--format base32: above the largest id" 1 "" 'above 2\^63 - 1'
run --format base64 1 </dev/null
expect "--format base64: usage error naming the formats" 2 "" '^snowflake-inspect: invalid format "base64": use decimal, base32 or base62'
run --format Base32 1 </dev/null
expect "--format Base32: format names are exact (lower case), as in SQL" 2 "" 'invalid format "Base32"'
run --format </dev/null
expect "--format without a value" 2 "" 'needs a value'
run --text-forms 252752938651381760 </dev/null
expect "--text-forms: the id's base32 and base62 text" 0 "$id_line base32=070FNENJ40W00 base62=0IfbtDtw5i4" ""
run -tjf base62 0IfbtDtw5i4 </dev/null
expect "-tjf base62: short options combined, the text forms in the JSON (HTTP's names)" 0 \
    '{"input":"0IfbtDtw5i4","type":"snowflake","id":"252752938651381760","time":"2026-11-29T11:09:56.497Z","ms_since_epoch":60260996497,"worker":7,"sequence":0,"epoch":"2025-01-01T00:00:00.000Z","timestamp":"2026-11-29T11:09:56.497Z","worker_id":7,"base32":"070FNENJ40W00","base62":"0IfbtDtw5i4"}' ""
run --from-timestamp 0 --format base32 </dev/null
expect "--from-timestamp with --format: usage error" 2 "" 'for decoding'

run --epoch yesterday 1 </dev/null
expect "bad epoch: usage error, exit 2" 2 "" '^snowflake-inspect: invalid epoch "yesterday"'
run --epoch "2025-01-01 00:00:00" 1 </dev/null
expect "epoch without offset: usage error" 2 "" 'no UTC offset'
run --epoch </dev/null
expect "--epoch without a value" 2 "" 'needs a value'
run --frobnicate </dev/null
expect "unknown option" 2 "" '"--frobnicate"'
run --help </dev/null
if [ "$rc" = 0 ] && grep -q '^Usage: snowflake-inspect' <<<"$out" && grep -q -- '--epoch' <<<"$out" && [ -z "$err" ]; then
    report 1 "--help"
else
    report 0 "--help" "exit $rc"
fi
run --version </dev/null
expect "--version names the extension's version" 0 \
    "snowflake-inspect (snowflake) $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" snowflake.control)" ""

# On a terminal with nothing to read, a usage error rather than a wait
# (script, from util-linux, gives the command a terminal).
rc=0
out=$(script -qec "$BIN" /dev/null </dev/null 2>&1) || rc=$?
if [ "$rc" = 2 ] && grep -q "no ids given" <<<"$out"; then
    report 1 "no arguments on a terminal: usage error, exit 2"
else
    report 0 "no arguments on a terminal: usage error, exit 2" "exit $rc: $out"
fi

# Streaming: each stdin line is answered before the next one is written.
coproc INSPECT { "$BIN" --json; }
echo 42 >&"${INSPECT[1]}"
if read -r -t 5 line <&"${INSPECT[0]}" && [[ $line == '{"input":"42",'* ]]; then
    report 1 "stdin is decoded line by line (a pipe that streams ids)"
else
    report 0 "stdin is decoded line by line (a pipe that streams ids)" "no answer within 5 s"
fi
to_inspect=${INSPECT[1]}
# Saved first: bash unsets INSPECT_PID once the coprocess has exited.
inspect_pid=${INSPECT_PID:-}
exec {to_inspect}>&-
[ -z "$inspect_pid" ] || wait "$inspect_pid" 2>/dev/null || true

# The man page: groff reads it without a warning, and it documents every
# long option the help lists.
MAN=src/inspect/snowflake-inspect.1
warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
report "$([ -z "$warn" ] && echo 1)" "the man page renders without warnings" "$warn"
missing=""
for opt in $("$BIN" --help | grep -oE -- '--[a-z-]+' | sort -u); do
    grep -q -- "$(sed 's/-/\\\\-/g' <<<"$opt")" "$MAN" || missing="$missing $opt"
done
report "$([ -z "$missing" ] && echo 1)" "the man page documents every option of --help" "missing:$missing"

# Bash completion: options, and the epoch presets after -e and --epoch=.
complete_words() {
    bash -c '. src/inspect/snowflake-inspect.bash-completion
        COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
        _snowflake_inspect; echo "${COMPREPLY[*]}"' _ "$@"
}
got="$(complete_words snowflake-inspect --ep)|$(complete_words snowflake-inspect -e tw)|$(complete_words snowflake-inspect --epoch = d)|$(complete_words snowflake-inspect --fr)"
report "$([ "$got" = "--epoch=|twitter|default discord|--from-timestamp=" ] && echo 1)" \
    "bash completion: options and epoch presets" "got $got"
got="$(complete_words snowflake-inspect --fo)|$(complete_words snowflake-inspect -f b)|$(complete_words snowflake-inspect --format = '')|$(complete_words snowflake-inspect --te)"
report "$([ "$got" = "--format=|base32 base62|decimal base32 base62|--text-forms" ] && echo 1)" \
    "bash completion: --format and its formats, --text-forms" "got $got"

got="$(complete_words snowflake-inspect --la)|$(complete_words snowflake-inspect -l s)|$(complete_words snowflake-inspect --layout = d)"
report "$([ "$got" = "--layout=|sonyflake|discord" ] && echo 1)" \
    "bash completion: --layout and its profiles" "got $got"

# make install-inspect-links: the installed command and man page linked where
# a shell and man look (into a scratch DESTDIR here).
if [ -n "${PG_CONFIG:-}" ] && [ -x "$("$PG_CONFIG" --bindir)/snowflake-inspect" ]; then
    links=$WORK/links
    rc=0
    make -s install-inspect-links DESTDIR="$links" LINK_PREFIX=/usr/local >"$WORK/make.out" 2>&1 || rc=$?
    got="$rc|$(readlink "$links/usr/local/bin/snowflake-inspect")|$(readlink "$links/usr/local/share/man/man1/snowflake-inspect.1")"
    want="0|$("$PG_CONFIG" --bindir)/snowflake-inspect|$("$PG_CONFIG" --mandir)/man1/snowflake-inspect.1"
    report "$([ "$got" = "$want" ] && echo 1)" "make install-inspect-links: the command and the man page linked" "got $got; want $want; $(cat "$WORK/make.out")"
    out=$(PATH="$links/usr/local/bin:/usr/bin:/bin" sh -c 'command -v snowflake-inspect && snowflake-inspect 1' 2>&1 || true)
    report "$([ "$out" = "$links/usr/local/bin/snowflake-inspect"$'\n'"1 time=2025-01-01T00:00:00.000Z worker=0 sequence=1" ] && echo 1)" \
        "... the link on the PATH runs the installed command" "$out"
    if command -v man >/dev/null; then
        out=$(MANPATH="$links/usr/local/share/man" man -w snowflake-inspect 2>&1 || true)
        # man-db names the page the link leads to.
        report "$([ "$out" = "$links/usr/local/share/man/man1/snowflake-inspect.1" ] \
                   || [ "$out" = "$("$PG_CONFIG" --mandir)/man1/snowflake-inspect.1" ] && echo 1)" \
            "... man finds the page through the link's man directory" "$out"
    fi
else
    echo "# PG_CONFIG unset or snowflake-inspect not installed: make install-inspect-links not checked"
fi

# ---------------------------------------------------------------------------
# 2. Agreement with the SQL decoders

DIR=$(pg_tmpdir)
pg_init "$DIR" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = $WORKER"
if ! pg_start "$DIR"; then
    echo "inspect: the server did not start" >&2
    cat "$DIR/server.log" >&2
    exit 1
fi

pg_psql "$DIR" <<SQL
CREATE EXTENSION snowflake;
SET timezone = 'UTC';

-- The epochs the command is run with, and the same instants for the SQL
-- decoders (NULL: the one-argument form, under the default snowflake.epoch).
CREATE TABLE epochs (name text PRIMARY KEY, epoch timestamptz);
INSERT INTO epochs VALUES
    ('default', NULL),
    ('twitter', '2010-11-04 01:42:54.657+00'),
    ('discord', '2015-01-01 00:00:00+00'),
    ('1288834974657', '2010-11-04 01:42:54.657+00'),
    ('2020-02-29 12:34:56.789012+05:30', '2020-02-29 12:34:56.789012+05:30');

CREATE TABLE ids (n serial PRIMARY KEY, id bigint NOT NULL, origin text NOT NULL);
INSERT INTO ids (id, origin) SELECT snowflake_nextval(), 'nextval' FROM generate_series(1, $IDS);
INSERT INTO ids (id, origin)
SELECT snowflake_compose(t, w, s), 'compose'
FROM (VALUES ('2025-01-01 00:00:00+00'::timestamptz), ('2025-01-01 00:00:00.001+00'),
             ('2025-01-01 00:00:00.999999+00'), (now()), ('2094-09-07 15:47:35.551+00')) t(t),
     (VALUES (0), (1), (512), (1023)) w(w),
     (VALUES (0), (1), (4095)) s(s);
INSERT INTO ids (id, origin) VALUES (0, 'edge'), (9223372036854775807, 'edge');
INSERT INTO ids (id, origin)
SELECT (random() * 9223372036854775807)::bigint, 'random' FROM generate_series(1, $RANDOM_IDS);

-- What the SQL decoders say, for every id under every epoch.
CREATE TABLE expected_ids AS
SELECT e.name AS epoch_name, i.n, i.id, i.origin, d.ts, d.worker_id, d.sequence
FROM epochs e CROSS JOIN ids i
CROSS JOIN LATERAL (SELECT * FROM snowflake_decode(i.id) WHERE e.epoch IS NULL
                    UNION ALL
                    SELECT * FROM snowflake_decode(i.id, e.epoch) WHERE e.epoch IS NOT NULL) d;

CREATE TABLE uuids (n serial PRIMARY KEY, input text NOT NULL, origin text NOT NULL);
INSERT INTO uuids (input, origin) SELECT uuidv7()::text, 'uuidv7' FROM generate_series(1, $UUIDS);
INSERT INTO uuids (input, origin)
SELECT uuidv7(s)::text, 'shift' FROM unnest(ARRAY['-55 years', '-1 ms', '1 day', '1000 years', '8000 years']::interval[]) s;
INSERT INTO uuids (input, origin)
SELECT uuidv7_from_timestamp(t)::text, 'floor'
FROM unnest(ARRAY['1970-01-01 00:00:00+00', '1970-01-01 00:00:00.001+00', '2025-01-01 00:00:00+00',
                  '10889-08-02 05:31:50.655+00']::timestamptz[]) t;
INSERT INTO uuids (input, origin) SELECT upper(uuidv7()::text), 'upper';
INSERT INTO uuids (input, origin) SELECT '{' || uuidv7() || '}', 'braces';
INSERT INTO uuids (input, origin) SELECT replace(uuidv7()::text, '-', ''), 'plain';
INSERT INTO uuids (input, origin) SELECT gen_random_uuid()::text, 'v4' FROM generate_series(1, 20);
INSERT INTO uuids (input, origin) VALUES ('00000000-0000-0000-0000-000000000000', 'nil');

CREATE TABLE expected_uuids AS
SELECT n, input, origin, input::uuid AS uuid, uuidv7_timestamp(input::uuid) AS ts FROM uuids;

-- The command's output, one line per row, in output order.
CREATE TABLE json_out (epoch_name text, k serial, line text);
CREATE TABLE text_out (epoch_name text, k serial, line text);

-- RFC 3339 in UTC as the command prints it: milliseconds, or microseconds
-- when there are any.
CREATE FUNCTION rfc3339(t timestamptz) RETURNS text LANGUAGE sql STABLE AS \$\$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.')
           || CASE WHEN extract(microseconds FROM t)::bigint % 1000 = 0
                   THEN to_char(t AT TIME ZONE 'UTC', 'MS') ELSE to_char(t AT TIME ZONE 'UTC', 'US') END
           || 'Z'
\$\$;
SQL

# load TABLE EPOCH_NAME < lines: appends the lines to TABLE, verbatim.
load() {
    pg_psql "$DIR" -c "CREATE TEMP TABLE raw (k serial, line text);
                       COPY raw (line) FROM STDIN WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02');
                       INSERT INTO $1 (epoch_name, line) SELECT '$2', line FROM raw ORDER BY k;"
}

mapfile -t epoch_names < <(pg_val "$DIR" "SELECT name FROM epochs ORDER BY name")
for name in "${epoch_names[@]}"; do
    pg_val "$DIR" "SELECT id FROM ids ORDER BY n" >"$WORK/ids"
    # The epoch names are the command's --epoch values, except the default,
    # which is given by saying nothing.
    args=()
    [ "$name" = default ] || args=(--epoch "$name")
    rc=0
    "$BIN" --json "${args[@]}" <"$WORK/ids" >"$WORK/json" 2>"$WORK/err" || rc=$?
    report "$([ $rc = 0 ] && [ ! -s "$WORK/err" ] && echo 1)" "ids under epoch $name: decoded on stdin, exit 0" "exit $rc"
    load json_out "$name" <"$WORK/json"
    rc=0
    # The same ids as arguments, in text.
    mapfile -t id_args <"$WORK/ids"
    "$BIN" "${args[@]}" "${id_args[@]}" </dev/null >"$WORK/text" 2>"$WORK/err" || rc=$?
    report "$([ $rc = 0 ] && [ ! -s "$WORK/err" ] && echo 1)" "ids under epoch $name: decoded as arguments, exit 0" "exit $rc"
    load text_out "$name" <"$WORK/text"
done

# --from-timestamp against snowflake_from_timestamp() (the default epoch).
bad=""
for t in '2025-01-01 00:00:00+00' '2025-01-01 00:00:00.001+00' '2025-01-01 00:00:00.999999+00' \
         '2026-12-01 12:34:56.789+02:00' '2094-09-07 15:47:35.551+00'; do
    got=$("$BIN" --from-timestamp "$t" </dev/null 2>&1)
    want=$(pg_val "$DIR" "SELECT snowflake_from_timestamp('$t')")
    [ "$got" = "$want" ] || bad="$bad [$t: $got, SQL $want]"
done
report "$([ -z "$bad" ] && echo 1)" "--from-timestamp gives what snowflake_from_timestamp() gives" "$bad"

# Every id as SQL writes it in base32 and base62, read back with --format:
# the same id, and --text-forms gives what snowflake_encode() gives.
for f in base32 base62; do
    pg_val "$DIR" "SELECT snowflake_encode(id, '$f') FROM ids ORDER BY n" >"$WORK/text_ids"
    rc=0
    "$BIN" --json --text-forms --format "$f" <"$WORK/text_ids" >"$WORK/json" 2>"$WORK/err" || rc=$?
    report "$([ $rc = 0 ] && [ ! -s "$WORK/err" ] && echo 1)" "ids in $f from snowflake_encode(): decoded with --format $f, exit 0" "exit $rc"
    load json_out "$f" <"$WORK/json"
done

pg_val "$DIR" "SELECT input FROM uuids ORDER BY n" >"$WORK/uuids"
rc=0
"$BIN" --json <"$WORK/uuids" >"$WORK/json" 2>"$WORK/err" || rc=$?
load json_out uuid <"$WORK/json"
invalid=$(pg_val "$DIR" "SELECT count(*) FROM expected_uuids WHERE ts IS NULL")
report "$([ $rc = 1 ] && [ "$(wc -l <"$WORK/err")" = "$invalid" ] && echo 1)" \
    "UUIDs: exit 1 and one message each for the $invalid that uuidv7_timestamp() gives NULL for" \
    "exit $rc, $(wc -l <"$WORK/err") messages"
mapfile -t uuid_args <"$WORK/uuids"
rc=0
"$BIN" "${uuid_args[@]}" </dev/null >"$WORK/text" 2>/dev/null || rc=$?
load text_out uuid <"$WORK/text"

# --layout: ids of every profile and of a written layout (edges and random
# ids below 2^id_bits), decoded by the command and by snowflake_decode_as()
# under the profile's epoch, or the default one for a layout without.
pg_psql "$DIR" <<SQL
CREATE TABLE layout_runs (layout text PRIMARY KEY, epoch timestamptz NOT NULL, bits int NOT NULL, own_epoch boolean);
INSERT INTO layout_runs SELECT name, coalesce(epoch, '2025-01-01 00:00:00+00'), id_bits, epoch IS NOT NULL
FROM snowflake_layouts();
INSERT INTO layout_runs VALUES ('time 38, worker 13, sequence 12, unit 10ms', '2025-01-01 00:00:00+00', 63, false);
CREATE TABLE layout_ids (n serial PRIMARY KEY, layout text NOT NULL, id bigint NOT NULL);
INSERT INTO layout_ids (layout, id)
SELECT layout, v FROM layout_runs,
       LATERAL (VALUES (0::bigint), (1), ((2::numeric ^ bits - 1)::bigint), ((175928847299117063 % (2::numeric ^ bits))::bigint))
               AS e(v);
INSERT INTO layout_ids (layout, id)
SELECT layout, (random() * (2::numeric ^ bits - 1))::bigint FROM layout_runs, generate_series(1, 50);
CREATE TABLE layout_out (epoch_name text, k serial, line text);
SQL
mapfile -t layouts < <(pg_val "$DIR" "SELECT layout FROM layout_runs ORDER BY layout")
for l in "${layouts[@]}"; do
    pg_val "$DIR" "SELECT id FROM layout_ids WHERE layout = '$l' ORDER BY n" >"$WORK/ids"
    rc=0
    "$BIN" --json --layout "$l" <"$WORK/ids" >"$WORK/json" 2>"$WORK/err" || rc=$?
    report "$([ $rc = 0 ] && [ ! -s "$WORK/err" ] && echo 1)" "ids of layout $l: decoded with --layout, exit 0" "exit $rc"
    load layout_out "$l" <"$WORK/json"
done
sql_is "$DIR" "--layout: one object per id, equal to snowflake_decode_as() (time, worker, sequence, ms since the epoch, the epoch)" "0" \
    "SELECT count(*) FROM (SELECT i.*, r.epoch, d.ts, d.worker_id, d.sequence,
                                  row_number() OVER (PARTITION BY i.layout ORDER BY i.n) AS pos
                           FROM layout_ids i JOIN layout_runs r USING (layout),
                                LATERAL snowflake_decode_as(i.id, i.layout, r.epoch) d) e
     FULL JOIN (SELECT epoch_name AS layout, line::jsonb AS j,
                       row_number() OVER (PARTITION BY epoch_name ORDER BY k) AS pos FROM layout_out) o
          USING (layout, pos)
     WHERE e.id IS NULL OR o.j IS NULL OR o.j->>'id' IS DISTINCT FROM e.id::text
        OR o.j->>'timestamp' IS DISTINCT FROM rfc3339(e.ts) OR (o.j->>'worker_id')::int IS DISTINCT FROM e.worker_id
        OR (o.j->>'sequence')::int IS DISTINCT FROM e.sequence
        OR (o.j->>'ms_since_epoch')::numeric IS DISTINCT FROM extract(epoch FROM e.ts - e.epoch) * 1000
        OR (o.j->>'epoch')::timestamptz IS DISTINCT FROM e.epoch"
sql_is "$DIR" "--layout: every layout's ids were compared" "$(( ${#layouts[@]} * 54 ))" \
    "SELECT count(*) FROM layout_out"
bad=""
for l in sonyflake discord instagram; do
    for t in '2016-04-30 11:18:25.796+00' '2030-06-15 12:34:56.789+00'; do
        got=$("$BIN" --layout "$l" --from-timestamp "$t" </dev/null 2>&1)
        want=$(pg_val "$DIR" "SELECT snowflake_from_timestamp_as('$t', '$l')")
        [ "$got" = "$want" ] || bad="$bad [$l $t: $got, SQL $want]"
    done
done
report "$([ -z "$bad" ] && echo 1)" "--from-timestamp under --layout gives what snowflake_from_timestamp_as() gives" "$bad"

n_ids=$(pg_val "$DIR" "SELECT count(*) FROM ids")
n_epochs=${#epoch_names[@]}
n_uuids=$(pg_val "$DIR" "SELECT count(*) FROM uuids")
echo "# $n_ids ids under $n_epochs epochs, $n_uuids UUIDs"
if [ "$n_ids" -lt $((IDS + RANDOM_IDS)) ] || [ "$n_epochs" -lt 5 ] || [ "$n_uuids" -lt "$UUIDS" ]; then
    report 0 "something to compare" "$n_ids ids, $n_epochs epochs, $n_uuids UUIDs"
fi

# Rows of the command's output next to the SQL decoders', matched by
# position within each run (the output keeps the input order).
pg_psql "$DIR" <<'SQL'
SET timezone = 'UTC';
CREATE VIEW id_pairs AS
SELECT e.*, j.line::jsonb AS j, t.line AS t
FROM (SELECT *, row_number() OVER (PARTITION BY epoch_name ORDER BY n) AS pos FROM expected_ids) e
FULL JOIN (SELECT *, row_number() OVER (PARTITION BY epoch_name ORDER BY k) AS pos
           FROM json_out WHERE epoch_name NOT IN ('uuid', 'base32', 'base62')) j USING (epoch_name, pos)
FULL JOIN (SELECT *, row_number() OVER (PARTITION BY epoch_name ORDER BY k) AS pos
           FROM text_out WHERE epoch_name <> 'uuid') t USING (epoch_name, pos);
CREATE VIEW uuid_pairs AS
SELECT e.*, j.line::jsonb AS j
FROM (SELECT *, row_number() OVER (ORDER BY n) AS pos FROM expected_uuids) e
FULL JOIN (SELECT *, row_number() OVER (ORDER BY k) AS pos FROM json_out WHERE epoch_name = 'uuid') j USING (pos);
CREATE VIEW uuid_text_pairs AS
SELECT e.*, t.line AS t
FROM (SELECT *, row_number() OVER (ORDER BY n) AS pos FROM expected_uuids WHERE ts IS NOT NULL) e
FULL JOIN (SELECT *, row_number() OVER (ORDER BY k) AS pos FROM text_out WHERE epoch_name = 'uuid') t USING (pos);
SQL

sql_is "$DIR" "JSON: one object per id and epoch ($((n_ids * n_epochs)))" "$((n_ids * n_epochs))" \
    "SELECT count(*) FROM id_pairs WHERE id IS NOT NULL AND j IS NOT NULL AND j->>'input' = id::text"
sql_is "$DIR" "JSON: id, time (instant and RFC 3339 text), worker and sequence equal snowflake_decode()'s" "0" \
    "SELECT count(*) FROM id_pairs
     WHERE j->>'type' IS DISTINCT FROM 'snowflake' OR j->>'id' IS DISTINCT FROM id::text
        OR (j->>'time')::timestamptz IS DISTINCT FROM ts OR j->>'time' IS DISTINCT FROM rfc3339(ts)
        OR (j->>'worker')::int IS DISTINCT FROM worker_id OR (j->>'sequence')::int IS DISTINCT FROM sequence
        OR (j->>'ms_since_epoch')::bigint IS DISTINCT FROM id >> 22"
sql_is "$DIR" "JSON: the shared names timestamp and worker_id equal snowflake_decode()'s ts and worker_id (and time, worker)" "0" \
    "SELECT count(*) FROM id_pairs
     WHERE j->>'timestamp' IS DISTINCT FROM rfc3339(ts) OR j->>'timestamp' IS DISTINCT FROM j->>'time'
        OR (j->>'worker_id')::int IS DISTINCT FROM worker_id OR j->>'worker_id' IS DISTINCT FROM j->>'worker'"
sql_is "$DIR" "JSON: the epoch of each object is the epoch asked for" "0" \
    "SELECT count(*) FROM id_pairs p JOIN epochs e ON e.name = p.epoch_name
     WHERE (j->>'epoch')::timestamptz IS DISTINCT FROM coalesce(e.epoch, '2025-01-01 00:00:00+00')"
# The presets twitter and discord split the worker id in two halves of 5 bits.
sql_is "$DIR" "text: one line per id and epoch, equal to snowflake_decode()'s (and the preset's halves of the worker id)" "0" \
    "SELECT count(*) FROM id_pairs
     WHERE t IS DISTINCT FROM format('%s time=%s worker=%s sequence=%s', id, rfc3339(ts), worker_id, sequence)
                              || CASE epoch_name
                                 WHEN 'twitter' THEN format(' datacenter=%s datacenter_worker=%s', worker_id >> 5, worker_id & 31)
                                 WHEN 'discord' THEN format(' internal_worker=%s internal_process=%s', worker_id >> 5, worker_id & 31)
                                 ELSE '' END"
sql_is "$DIR" "JSON: the preset's halves of the worker id, only under twitter and discord" "0" \
    "SELECT count(*) FROM id_pairs
     WHERE CASE epoch_name
           WHEN 'twitter' THEN (j->>'datacenter')::int IS DISTINCT FROM worker_id >> 5
                               OR (j->>'datacenter_worker')::int IS DISTINCT FROM worker_id & 31
           WHEN 'discord' THEN (j->>'internal_worker')::int IS DISTINCT FROM worker_id >> 5
                               OR (j->>'internal_process')::int IS DISTINCT FROM worker_id & 31
           ELSE j ?| array['datacenter', 'datacenter_worker', 'internal_worker', 'internal_process'] END"
sql_is "$DIR" "--format base32 and base62: one object per id ($((n_ids * 2))), its input snowflake_encode()'s text" "$((n_ids * 2))" \
    "SELECT count(*) FROM ids i
     JOIN (SELECT epoch_name, line::jsonb AS j, row_number() OVER (PARTITION BY epoch_name ORDER BY k) AS pos
           FROM json_out WHERE epoch_name IN ('base32', 'base62')) o ON o.pos = i.n
     WHERE o.j->>'input' = snowflake_encode(i.id, o.epoch_name)"
sql_is "$DIR" "--format base32 and base62: the id snowflake_decode_text() gives, decoded as snowflake_decode(); --text-forms as snowflake_encode()" "0" \
    "SELECT count(*) FROM expected_ids e
     JOIN (SELECT epoch_name AS f, line::jsonb AS j, row_number() OVER (PARTITION BY epoch_name ORDER BY k) AS pos
           FROM json_out WHERE epoch_name IN ('base32', 'base62')) o ON o.pos = e.n
     WHERE e.epoch_name = 'default' AND (
         o.j->>'id' IS DISTINCT FROM snowflake_decode_text(o.j->>'input', o.f)::text
         OR o.j->>'id' IS DISTINCT FROM e.id::text
         OR o.j->>'timestamp' IS DISTINCT FROM rfc3339(e.ts) OR (o.j->>'worker_id')::int IS DISTINCT FROM e.worker_id
         OR (o.j->>'sequence')::int IS DISTINCT FROM e.sequence
         OR o.j->>'base32' IS DISTINCT FROM snowflake_encode(e.id, 'base32')
         OR o.j->>'base62' IS DISTINCT FROM snowflake_encode(e.id, 'base62'))"
sql_is "$DIR" "ids of this node carry worker $WORKER" "0" \
    "SELECT count(*) FROM id_pairs WHERE origin = 'nextval' AND (j->>'worker')::int <> $WORKER"
sql_is "$DIR" "JSON: one object per UUID ($n_uuids)" "$n_uuids" \
    "SELECT count(*) FROM uuid_pairs WHERE input IS NOT NULL AND j IS NOT NULL AND j->>'input' = input"
sql_is "$DIR" "JSON: UUIDv7 times equal uuidv7_timestamp()'s (instant and text), canonical form" "0" \
    "SELECT count(*) FROM uuid_pairs WHERE ts IS NOT NULL AND (
         j->>'type' IS DISTINCT FROM 'uuidv7' OR (j->>'uuid')::uuid IS DISTINCT FROM uuid
         OR j->>'uuid' IS DISTINCT FROM uuid::text
         OR (j->>'time')::timestamptz IS DISTINCT FROM ts OR j->>'time' IS DISTINCT FROM rfc3339(ts)
         OR (j->>'unix_ms')::bigint IS DISTINCT FROM (extract(epoch FROM ts) * 1000)::bigint)"
sql_is "$DIR" "JSON: a UUIDv7's timestamp equals its time (the shared name)" "0" \
    "SELECT count(*) FROM uuid_pairs WHERE ts IS NOT NULL AND j->>'timestamp' IS DISTINCT FROM j->>'time'"
sql_is "$DIR" "JSON: every UUID uuidv7_timestamp() gives NULL for is invalid, with its version" "0" \
    "SELECT count(*) FROM uuid_pairs WHERE ts IS NULL AND (
         j->>'type' IS DISTINCT FROM 'invalid'
         OR j->>'error' IS DISTINCT FROM format('UUID version %s is not a version-7 UUID',
                                                get_byte(uuid_send(uuid), 6) >> 4))"
sql_is "$DIR" "text: UUIDv7 lines equal uuidv7_timestamp()'s" "0" \
    "SELECT count(*) FROM uuid_text_pairs WHERE t IS DISTINCT FROM format('%s time=%s', uuid, rfc3339(ts))"
sql_is "$DIR" "the edges of the UUIDv7 range were compared" "2" \
    "SELECT count(*) FROM uuid_pairs WHERE j->>'time' IN ('1970-01-01T00:00:00.000Z', '10889-08-02T05:31:50.655Z')"

if ! tap_summary; then
    echo "inspect: some checks failed" >&2
    exit 1
fi
