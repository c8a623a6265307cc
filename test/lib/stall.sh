# Stopping a backend at the worst moment: gdb attaches to a process, breaks
# at a function of the extension, and holds the process there (ptrace-stopped,
# its locks and reads as they were) until the caller releases it. Source after
# test/lib/tap.sh (wait_for, is).
#
#   stall_at PID FUNCTION DIR   returns once gdb is attached and the
#                               breakpoint set; sets STALL_GDB (gdb's pid)
#   stall_hit DIR               true once the process stopped at the function
#   stall_release DIR           lets it go on (gdb deletes the breakpoint and
#                               detaches) and waits for gdb
#
# Signals the process gets meanwhile (latches, SIGTERM of a shutdown) are
# passed on to it, not reported to the script: they take effect when it goes on.

STALL_GDB=

stall_at() {
    local pid=$1 fn=$2 dir=$3
    rm -f "$dir/stall.hit" "$dir/stall.ready"
    : >"$dir/stall.hold"
    gdb -q -nx -batch -p "$pid" \
        -ex 'set pagination off' -ex 'set confirm off' \
        -ex 'handle all nostop noprint pass' -ex 'handle SIGINT nostop noprint pass' \
        -ex "break $fn" \
        -ex "shell touch '$dir/stall.ready'" \
        -ex 'continue' \
        -ex "shell touch '$dir/stall.hit'; while [ -e '$dir/stall.hold' ]; do sleep 0.05; done" \
        -ex 'delete' -ex 'detach' >"$dir/stall.log" 2>&1 &
    STALL_GDB=$!
    wait_for "gdb attached" 30 test -e "$dir/stall.ready"
}

stall_hit() { [ -e "$1/stall.hit" ]; }

stall_release() {
    rm -f "$1/stall.hold"
    [ -n "$STALL_GDB" ] && wait "$STALL_GDB" 2>/dev/null
    STALL_GDB=
}
