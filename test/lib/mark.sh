# shellcheck shell=bash
# The mark file of an instance (DIR/data/snowflake.mark), read and damaged
# by the suites.

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
