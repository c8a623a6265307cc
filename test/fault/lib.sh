# Helpers of the fault-injection suite (test/fault/run.sh). Source after
# test/lib/pg.sh.
#
# The clock of a server is moved with libfaketime: the server runs with
# LD_PRELOAD=libfaketime and FAKETIME_TIMESTAMP_FILE=DIR/faketime, which holds
# an offset from the real clock in seconds ("+0", "-0.004", "+3600").
# FAKETIME_NO_CACHE=1 makes every clock read of every server process read the
# file again, so rewriting the file moves the clock of the running server.
#
# The file is always replaced with rename(2): a reader must never see it
# empty (libfaketime then reads offset 0, a jump of the whole offset) or
# half-written (libfaketime exits the process on a value it cannot parse).
# CLOCK_MONOTONIC is left alone (FAKETIME_DONT_FAKE_MONOTONIC=1): PostgreSQL
# measures its timeouts with it. select_shim.c is preloaded first so that
# processes the postmaster starts from its signal handlers (the mark worker)
# see the moved clock too; case 0 of run.sh checks both.
#
# Beware pg_sleep() in a server under test: it measures its delay with the
# wall clock, so it sleeps for the size of any backward step made meanwhile.

FT_LIB=${FT_LIB:-/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1}

# --- results ---------------------------------------------------------------

T_PASSED=0
T_FAILED=0
T_FAILED_NAMES=()

ok() {
    T_PASSED=$((T_PASSED + 1))
    echo "ok - $*"
}

not_ok() {
    T_FAILED=$((T_FAILED + 1))
    T_FAILED_NAMES+=("$1")
    echo "not ok - $1"
    shift
    local line
    for line in "$@"; do echo "#   $line"; done
}

# run_cases SUITE [case number ...]: runs the case_N functions the script
# defined, in order (all of them, or those named), timing each, stops the
# instances, prints the summary ("N passed, N failed") and returns non-zero
# on any failure. Call it last: `run_cases fault "$@"; exit`.
run_cases() {
    # Names of its own (the cases run in this function's scope).
    local rc_suite=$1 rc_c rc_t rc_start rc_cases rc_want
    shift
    mapfile -t rc_cases < <(declare -F | sed -n 's/^declare -f case_\([0-9][0-9]*\)$/\1/p' | sort -n)
    rc_want=" ${*:-${rc_cases[*]}} "
    for rc_c in $rc_want; do
        declare -F "case_$rc_c" >/dev/null || { echo "unknown case: $rc_c (defined: ${rc_cases[*]})" >&2; return 2; }
    done
    rc_start=$(real_now)
    for rc_c in "${rc_cases[@]}"; do
        if [[ $rc_want == *" $rc_c "* ]]; then
            rc_t=$(real_now)
            "case_$rc_c"
            echo "# case $rc_c took $(elapsed_since "$rc_t") s"
        fi
    done
    pg_cleanup_all
    echo "# $rc_suite suite took $(elapsed_since "$rc_start") s"
    if [ "$T_FAILED" -gt 0 ]; then
        printf '# failed: %s\n' "${T_FAILED_NAMES[@]}"
    fi
    echo "$T_PASSED passed, $T_FAILED failed"
    [ "$T_FAILED" -eq 0 ]
}

# timex_build_shim DIR: compiles timex_shim.c (the kernel's view of time
# synchronisation, from a file) into DIR; TIMEX_SHIM is its path, or empty
# if it did not compile. Start a server with "LD_PRELOAD=$TIMEX_SHIM"
# "SF_TIMEX_FILE=DIR2/timex", and set what it answers with timex_set.
timex_build_shim() {
    TIMEX_SHIM=
    if cc -shared -fPIC -O2 -o "$1/timex_shim.so" "$FAULT_DIR/timex_shim.c" -ldl 2>"$1/timex_shim.log"; then
        chmod 755 "$1" "$1/timex_shim.so"
        TIMEX_SHIM=$1/timex_shim.so
    fi
}

# timex_set DIR "STATE STATUS MAXERROR_US ESTERROR_US": what ntp_adjtime()
# answers in the server of DIR from now on (atomically: rename).
timex_set() { printf '%s\n' "$2" >"$1/timex.tmp"; mv -f "$1/timex.tmp" "$1/timex"; }

# check DESC COMMAND...: ok if the command succeeds.
check() {
    local desc=$1; shift
    if "$@"; then ok "$desc"; else not_ok "$desc" "failed: $*"; fi
}

# is DESC GOT WANT
is() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  '$2'" "want: '$3'"; fi
}

# cmp_num DESC GOT OP WANT (OP: -lt -le -gt -ge -eq -ne; integers)
cmp_num() {
    if [[ $2 =~ ^-?[0-9]+$ ]] && [ "$2" "$3" "$4" ]; then
        ok "$1"
    else
        not_ok "$1" "got:  '$2'" "want: $3 $4"
    fi
}

# like DESC TEXT REGEX (extended regex)
like() {
    if [[ $2 =~ $3 ]]; then ok "$1"; else not_ok "$1" "got:  '$2'" "want: /$3/"; fi
}

# bail DESC DETAIL...: reports a failed prerequisite and returns 1, for
# `... || { bail ...; return; }` in a case.
bail() { not_ok "$@"; return 1; }

# --- time ------------------------------------------------------------------
# Process creation is slow on some machines (tens of ms): the helpers that run
# while the clock is being moved use bash arithmetic on integer microseconds
# and $EPOCHREALTIME instead of date/awk.

# to_us SECONDS: sets REPLY to SECONDS ("-0.004", "+3600", "1.5") in integer
# microseconds.
to_us() {
    local v=$1 sign=1 int frac=
    case $v in -*) sign=-1; v=${v#-} ;; +*) v=${v#+} ;; esac
    int=${v%%.*}
    [[ $v == *.* ]] && frac=${v#*.}
    frac=${frac}000000
    REPLY=$(( sign * (10#${int:-0} * 1000000 + 10#${frac:0:6}) ))
}

# us_to_s US: sets REPLY to US microseconds as signed seconds "+S.UUUUUU".
us_to_s() {
    local u=$1 sign=+
    if [ "$u" -lt 0 ]; then sign=-; u=$((-u)); fi
    printf -v REPLY '%s%d.%06d' "$sign" $((u / 1000000)) $((u % 1000000))
}

# now_us: sets REPLY to the real clock in Unix microseconds.
now_us() { REPLY=${EPOCHREALTIME/./}; }

# real_now: Unix seconds of the real clock, with microseconds.
real_now() { echo "$EPOCHREALTIME"; }

# elapsed_since START: seconds since START (real_now), 3 decimals.
elapsed_since() {
    local a b
    to_us "$1"; a=$REPLY
    now_us; b=$REPLY
    printf '%d.%03d' $(((b - a) / 1000000)) $(((b - a) % 1000000 / 1000))
}

# fcmp A OP B: floating-point comparison (OP: < <= > >=).
fcmp() { awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }" 2>/dev/null; }

# wait_for DESC TIMEOUT_S COMMAND...: polls COMMAND every 50 ms until it
# succeeds; returns 1 (quietly) after TIMEOUT_S seconds.
wait_for() {
    local deadline
    to_us "$2"; deadline=$REPLY
    now_us; deadline=$((deadline + REPLY))
    shift 2
    until "$@"; do
        now_us
        [ "$REPLY" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

# --- libfaketime -----------------------------------------------------------

# ft_build_shim DIR: compiles select_shim.c (see there) into DIR and sets
# FT_PRELOAD to it and libfaketime. Without a C compiler FT_PRELOAD is
# libfaketime alone and auxiliary processes (the mark worker) keep the real
# clock; returns 1 then.
FT_PRELOAD=$FT_LIB
ft_build_shim() {
    if cc -shared -fPIC -O2 -o "$1/select_shim.so" "$FAULT_DIR/select_shim.c" -ldl 2>"$1/shim.log"; then
        chmod 755 "$1" "$1/select_shim.so"
        FT_PRELOAD="$1/select_shim.so:$FT_LIB"
    else
        return 1
    fi
}

# ft_env DIR: the environment a server of DIR starts with.
ft_env() {
    echo "LD_PRELOAD=$FT_PRELOAD"
    echo "FAKETIME_TIMESTAMP_FILE=$1/faketime"
    echo "FAKETIME_NO_CACHE=1"
    echo "FAKETIME_DONT_RESET=1"
    echo "FAKETIME_DONT_FAKE_MONOTONIC=1"
}

# ft_set_us DIR US: sets the clock offset to US microseconds, atomically
# (rename). The only process it starts is mv, before the rename takes effect.
ft_set_us() {
    us_to_s "$2"
    printf '%s\n' "$REPLY" >"$1/faketime.tmp"   # mode 644 under umask 022
    mv -f "$1/faketime.tmp" "$1/faketime"
}

# ft_set DIR SECONDS: sets the clock offset (may be fractional).
ft_set() { to_us "$2"; ft_set_us "$1" "$REPLY"; }

# ft_get_us DIR: sets REPLY to the current offset in microseconds.
ft_get_us() {
    local line
    read -r line <"$1/faketime"
    to_us "$line"
}

# ft_shift DIR DELTA: moves the clock by DELTA seconds.
ft_shift() {
    local cur
    ft_get_us "$1"; cur=$REPLY
    to_us "$2"
    ft_set_us "$1" $((cur + REPLY))
}

# ft_set_clock DIR UNIX_SECONDS: sets the offset so that the server's clock
# reads UNIX_SECONDS now.
ft_set_clock() {
    local target
    to_us "$2"; target=$REPLY
    now_us
    ft_set_us "$1" $((target - REPLY))
}

# --- servers ---------------------------------------------------------------

# fault_init DIR [conf lines...]: an instance with snowflake preloaded
# (worker 7) whose configuration includes DIR/data/fault.conf (see
# fault_conf).
fault_init() {
    local dir=$1; shift
    pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" \
        "autovacuum = off" "log_min_messages = info" "include_if_exists = 'fault.conf'" "$@"
}

# fault_conf DIR [lines...]: replaces DIR/data/fault.conf.
fault_conf() {
    local dir=$1; shift
    printf '%s\n' "$@" | as_pg tee "$dir/data/fault.conf" >/dev/null
}

# ft_start DIR: starts the instance under libfaketime (offset kept, "+0" if
# the file does not exist yet). Shows the log tail on failure.
ft_start() {
    local dir=$1
    [ -f "$dir/faketime" ] || ft_set "$dir" 0
    local env
    mapfile -t env < <(ft_env "$dir")
    if ! pg_start "$dir" "${env[@]}"; then
        echo "# server in $dir did not start; log tail:" >&2
        tail -n 20 "$dir/server.log" | sed 's/^/#   /' >&2
        return 1
    fi
}

# log_size DIR: current size of the server log (to read what follows).
log_size() { stat -c %s "$1/server.log" 2>/dev/null || echo 0; }

# log_since DIR OFFSET: the server log from byte OFFSET on.
log_since() { tail -c +"$(($2 + 1))" "$1/server.log" 2>/dev/null; }

# helpers_sql DIR: creates the extension and the SQL helpers of the suite.
helpers_sql() {
    # Fed on standard input: the postgres user may not be able to read the
    # checkout (a clone under /root, say).
    pg_psql "$1" <"$FAULT_DIR/helpers.sql" >/dev/null
}

# stat_val DIR COLUMN: one column of snowflake_stats.
stat_val() { pg_val "$1" "SELECT $2 FROM snowflake_stats"; }

# mark_file DIR
mark_file() { echo "$1/data/snowflake.mark"; }

# mark_ms DIR: the millisecond stored in the mark file (bytes 8-15).
mark_ms() { od -An -t d8 -j 8 -N 8 "$(mark_file "$1")" | tr -d ' '; }

# mark_flags DIR: the flags word of the mark file (bytes 16-19; 1 = clean).
mark_flags() { od -An -t u4 -j 16 -N 4 "$(mark_file "$1")" | tr -d ' '; }

# flip_byte FILE OFFSET: inverts one byte of FILE in place.
flip_byte() {
    local b
    b=$(od -An -t u1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "\\$(printf '%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# no_procs_in DIR: no live process runs in DIR/data (a zombie has no cwd).
no_procs_in() {
    local p
    for p in /proc/[0-9]*; do
        [ "$p/cwd" -ef "$1/data" ] && return 1
    done
    return 0
}

# app_running DIR NAME: some session has application_name NAME.
app_running() {
    [ "$(pg_val "$1" "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$2'")" -gt 0 ]
}
