# shellcheck shell=bash
# Time helpers of the test suites (sourced by test/lib/tap.sh).
# Process creation is slow on some machines (tens of ms): the helpers that run
# while a clock is being moved use bash arithmetic on integer microseconds
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
