# shellcheck shell=bash
# A server's clock moved with libfaketime, for the suites and the demo.
# Source after test/lib/pg.sh and test/lib/tap.sh (time.sh).
#
# The server runs with LD_PRELOAD=libfaketime and
# FAKETIME_TIMESTAMP_FILE=DIR/faketime, which holds an offset from the real
# clock in seconds ("+0", "-0.004", "+3600"). FAKETIME_NO_CACHE=1 makes every
# clock read of every server process read the file again, so rewriting the
# file moves the clock of the running server.
#
# The file is always replaced with rename(2): a reader must never see it
# empty (libfaketime then reads offset 0, a jump of the whole offset) or
# half-written (libfaketime exits the process on a value it cannot parse).
# CLOCK_MONOTONIC is left alone (FAKETIME_DONT_FAKE_MONOTONIC=1): PostgreSQL
# measures its timeouts with it. test/fault/select_shim.c is preloaded first
# so that processes the postmaster starts from its signal handlers (the mark
# worker) see the moved clock too; case 0 of the fault suite checks both.
#
# Beware pg_sleep() in a server under test: it measures its delay with the
# wall clock, so it sleeps for the size of any backward step made meanwhile.

FT_LIB=${FT_LIB:-/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1}
FT_SHIM_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fault" && pwd)/select_shim.c

# ft_build_shim DIR: compiles select_shim.c (see there) into DIR and sets
# FT_PRELOAD to it and libfaketime. Without a C compiler FT_PRELOAD is
# libfaketime alone and auxiliary processes (the mark worker) keep the real
# clock; returns 1 then.
FT_PRELOAD=$FT_LIB
ft_build_shim() {
    if cc -shared -fPIC -O2 -o "$1/select_shim.so" "$FT_SHIM_SRC" -ldl 2>"$1/shim.log"; then
        chmod 755 "$1" "$1/select_shim.so"
        FT_PRELOAD="$1/select_shim.so:$FT_LIB"
    else
        return 1
    fi
}

# ft_require DIR: ends the suite with a failed check unless libfaketime is
# installed, then builds the shim into DIR (a note if it does not compile).
ft_require() {
    [ -r "$FT_LIB" ] || tap_abort "libfaketime is installed ($FT_LIB missing: apt-get install libfaketime)"
    if ! ft_build_shim "$1"; then
        echo "# could not compile test/fault/select_shim.c ($(head -1 "$1/shim.log")):"
        echo "# the mark worker will read the real clock, not the moved one"
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
