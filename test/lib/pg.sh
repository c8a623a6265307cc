# Throwaway PostgreSQL instances for tests, the demo and benchmarks.
#
# Source this file. Each instance lives in its own temporary directory owned
# by the postgres user (PostgreSQL refuses to run as root), listens on a Unix
# socket inside that directory only (no TCP port to collide with), and is
# stopped by pg_cleanup_all, which callers install as an EXIT trap.

# PG_CONFIG comes from the environment: the Makefile sets and exports it
# (make test, make demo, make bench; scripts/matrix.sh sets it per version).
# Only a caller that names the server binaries itself in PGBIN goes without
# (test/deb_install.sh: a server installed from packages has no pg_config).
if [ -z "${PGBIN:-}" ]; then
    if [ -z "${PG_CONFIG:-}" ]; then
        echo "${0##*/}: PG_CONFIG is not set: run it through make (make test), or" \
            "export PG_CONFIG=/usr/lib/postgresql/N/bin/pg_config" >&2
        exit 2
    fi
    export PG_CONFIG
    PGBIN=$("$PG_CONFIG" --bindir)
fi
PG_PORT=${PG_PORT:-5432}
PG_INSTANCES=()
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# Runs a command as the postgres user (directly when we are not root), from
# a directory that user can enter: the checkout may be private to root. Pass
# absolute paths, and files the postgres user can read.
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# pg_tmpdir: prints a new empty directory the postgres user owns.
pg_tmpdir() {
    local d
    d=$(mktemp -d "${TMPDIR:-/tmp}/snowflake.XXXXXX")
    chmod 755 "$d"
    [ "$(id -u)" = 0 ] && chown postgres: "$d"
    echo "$d"
}

# pg_init DIR [conf lines...]: initdb into DIR/data with the given extra
# postgresql.conf lines.
pg_init() {
    local dir=$1; shift
    as_pg "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; return 1; }
    {
        echo "listen_addresses = ''"
        echo "unix_socket_directories = '$dir'"
        echo "port = $PG_PORT"
        echo "fsync = off"
        echo "logging_collector = off"
        # PostgreSQL 18's pg_catalog.uuidv7() would otherwise shadow the
        # extension's, which the tests are about (README: UUIDv7 on PostgreSQL 18).
        echo "search_path = '\"\$user\", public, pg_catalog'"
        for line in "$@"; do echo "$line"; done
    } | as_pg tee -a "$dir/data/postgresql.conf" >/dev/null
}

# pg_snowflake NAME DIR: an instance in DIR with snowflake preloaded (worker
# id 7) and the extension created, for a demo or a client check; exits with
# the server log, as NAME, if the server does not start.
pg_snowflake() {
    local name=$1 dir=$2
    pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7"
    if ! pg_start "$dir"; then
        echo "$name: the server did not start" >&2
        cat "$dir/server.log" >&2
        exit 1
    fi
    pg_psql "$dir" -c "CREATE EXTENSION snowflake"
}

# pg_conf DIR line...: appends lines to the instance's postgresql.conf.
pg_conf() {
    local dir=$1; shift
    printf '%s\n' "$@" | as_pg tee -a "$dir/data/postgresql.conf" >/dev/null
}

# pg_start DIR [env assignments...]: starts the instance, waiting until it
# accepts connections. Returns non-zero (and shows the log) if it does not.
pg_start() {
    local dir=$1; shift
    PG_INSTANCES+=("$dir")
    if ! as_pg env "$@" "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null 2>&1; then
        return 1
    fi
}

# pg_stop DIR [mode]: stops the instance (fast by default), if it runs.
pg_stop() {
    local dir=$1 mode=${2:-fast}
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >/dev/null 2>&1 || true
    fi
    pg_reap "$dir"
}

# pg_postmaster_pid DIR: the pid recorded in postmaster.pid, if any.
pg_postmaster_pid() {
    [ -f "$1/data/postmaster.pid" ] && head -1 "$1/data/postmaster.pid"
}

# pg_kill9 DIR: kills the postmaster with SIGKILL, waits for its children to
# go, and clears what a zombie postmaster leaves behind.
pg_kill9() {
    local dir=$1 pid
    pid=$(pg_postmaster_pid "$dir") || return 0
    kill -9 "$pid" 2>/dev/null || true
    pg_reap "$dir"
}

# pg_reap DIR: waits until no process uses the instance any more. A postmaster
# killed with SIGKILL may linger as a zombie (nothing reaps orphans in this
# sandbox): a zombie holds no resources, but kill -0 still finds it, so a new
# postmaster would refuse the data directory. Its lock files are removed.
pg_reap() {
    local dir=$1 pid i state
    pid=$(pg_postmaster_pid "$dir") || return 0
    for i in $(seq 1 200); do
        # Children of the postmaster exit when they notice it is gone. They
        # are reparented the moment it dies, so look for any live process
        # working in the data directory (a zombie has no working directory).
        if ! pg_dir_in_use "$dir/data"; then
            state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)
            if [ "$state" = gone ] || [ "$state" = Z ]; then
                rm -f "$dir/data/postmaster.pid" "$dir/.s.PGSQL.$PG_PORT" "$dir/.s.PGSQL.$PG_PORT.lock"
                return 0
            fi
        fi
        sleep 0.05
    done
    echo "pg_reap: postmaster $pid in $dir did not go away" >&2
    return 1
}

# pg_dir_in_use DATADIR: true while a live process has DATADIR as its
# working directory (every PostgreSQL server process does). The test's -ef
# compares device and inode without starting a process per entry of /proc:
# a readlink per process took seconds per scan on a loaded machine.
pg_dir_in_use() {
    local p
    for p in /proc/[0-9]*; do
        [ "$p/cwd" -ef "$1" ] && return 0
    done
    return 1
}

# pg_gone DIR: no live process works in DIR/data any more.
pg_gone() { ! pg_dir_in_use "$1/data"; }

# pg_psql DIR [psql args...]: psql as postgres on the instance, quiet, stop on
# error. With PG_TIMEOUT=SECONDS set, psql is ended after that long (for calls
# that a defect could hang).
pg_psql() {
    local dir=$1; shift
    as_pg ${PG_TIMEOUT:+timeout "$PG_TIMEOUT"} \
        "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$PG_PORT" -U postgres -d postgres "$@"
}

# pg_val DIR SQL: prints the single value SQL returns.
pg_val() {
    local dir=$1; shift
    pg_psql "$dir" -A -t -c "$1"
}

# log_size DIR: current size of the server log (to read what follows).
log_size() { stat -c %s "$1/server.log" 2>/dev/null || echo 0; }

# log_since DIR OFFSET: the server log from byte OFFSET on.
log_since() { tail -c +"$(($2 + 1))" "$1/server.log" 2>/dev/null; }

# pg_cleanup_all: stops every instance this shell started and removes them.
pg_cleanup_all() {
    local dir
    for dir in "${PG_INSTANCES[@]}"; do
        [ -d "$dir" ] || continue
        pg_stop "$dir" immediate
        [ -n "${KEEP_TMP:-}" ] || rm -rf "$dir"
    done
    PG_INSTANCES=()
}
