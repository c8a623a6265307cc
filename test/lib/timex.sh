# shellcheck shell=bash
# The kernel's view of time synchronisation, as a server sees it, answered
# from a file (test/fault/timex_shim.c, an LD_PRELOAD shim of ntp_adjtime()):
# for snowflake.max_clock_error_ms, in the fault suite (case 15) and the HTTP
# suite (/healthz).

TIMEX_SHIM_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fault" && pwd)/timex_shim.c

# timex_build_shim DIR: compiles timex_shim.c (the kernel's view of time
# synchronisation, from a file) into DIR; TIMEX_SHIM is its path, or empty
# if it did not compile. Start a server with "LD_PRELOAD=$TIMEX_SHIM"
# "SF_TIMEX_FILE=DIR2/timex", and set what it answers with timex_set.
timex_build_shim() {
    TIMEX_SHIM=
    if cc -shared -fPIC -O2 -o "$1/timex_shim.so" "$TIMEX_SHIM_SRC" -ldl 2>"$1/timex_shim.log"; then
        chmod 755 "$1" "$1/timex_shim.so"
        TIMEX_SHIM=$1/timex_shim.so
    fi
}

# timex_set DIR "STATE STATUS MAXERROR_US ESTERROR_US": what ntp_adjtime()
# answers in the server of DIR from now on (atomically: rename).
timex_set() { printf '%s\n' "$2" >"$1/timex.tmp"; mv -f "$1/timex.tmp" "$1/timex"; }
