#!/bin/bash
# The README's install instructions on a clean system: in a throwaway copy of
# the bare Debian chroot of SUITE (scripts/chroot.sh, default trixie with
# PostgreSQL 17), install only the build dependencies of
# scripts/build-deps.list (scripts/deps.sh --list build), and check that
#   - with one of the libraries missing, `make` stops before compiling with
#     the message naming its package (each library in turn, the others
#     missing too: every missing one is named, no present one is);
#   - with all of them, `make && make install` builds and installs;
#   - with the server package added (postgresql-MAJOR: what runs the
#     extension, not what builds it), a fresh instance with the library
#     preloaded runs CREATE EXTENSION snowflake and hands out an id.
# First, on the host, that README.md's install table shows the list's
# packages (its example is PostgreSQL 17) and that debian/control.in's
# Build-Depends has its libraries: `--readme` runs only that.
# Packages come from the Debian archive only; apt's downloads are kept in
# $MATRIX_CACHE/SUITE-apt, so that a second run downloads nothing: 2 to 3
# minutes then on 2 busy cores (104 s and 185 s measured; installing the
# toolchain, with the clang and LLVM that postgresql-server-dev pulls in, 45
# to 70 s, the build 30 to 60 s; the first run, downloading, about 4
# minutes). Run by `make test-matrix` (scripts/matrix.sh).
#
# Usage: scripts/build-deps-check.sh [SUITE]    (root; debootstrap for the first run)
#        scripts/build-deps-check.sh --readme
set -euo pipefail
cd "$(dirname "$0")/.."

# --- inside the throwaway chroot ------------------------------------------
if [ "${1:-}" = --inside ]; then
    major=$2
    cd /opt/input/snowflake
    export PG_MAJOR=$major
    mapfile -t build < <(scripts/deps.sh --list build)
    # The libraries: the list's header entries (the rest, toolchain and
    # server headers, is installed first).
    mapfile -t libs < <(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' scripts/build-deps.list |
        awk -F'|' '{ gsub(/ /, "", $1); gsub(/ /, "", $3) } $1 == "header" { print $3 }')
    base=()
    for p in "${build[@]}"; do
        case " ${libs[*]} " in *" $p "*) ;; *) base+=("$p") ;; esac
    done
    [ ${#libs[@]} -gt 0 ] || { echo "build-deps-check: no libraries in the list" >&2; exit 1; }
    fail() { echo "build-deps-check: FAILED: $*" >&2; exit 1; }
    t0=$(date +%s)
    say() { echo "--- [$(( $(date +%s) - t0 )) s] $*"; }
    # A throwaway system: dpkg need not fsync, nor unpack documentation.
    echo force-unsafe-io >/etc/dpkg/dpkg.cfg.d/snowflake-unsafe-io
    printf 'path-exclude=/usr/share/doc/*\npath-exclude=/usr/share/man/*\npath-exclude=/usr/share/locale/*\n' \
        >/etc/dpkg/dpkg.cfg.d/snowflake-nodoc
    apt_install() { apt-get install -y -qq --no-install-recommends "$@" >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log >&2; fail "apt-get install $*"; }; }
    say "apt-get update"
    apt-get -o Acquire::Check-Valid-Until=false update -qq
    say "installing the toolchain and server headers: ${base[*]}"
    apt_install "${base[@]}"
    export PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config
    installed=()
    for lib in "${libs[@]}" ""; do
        missing=()
        for l in "${libs[@]}"; do
            case " ${installed[*]} " in *" $l "*) ;; *) missing+=("$l") ;; esac
        done
        [ ${#missing[@]} -gt 0 ] || break
        say "make without ${missing[*]}"
        if make -s >/tmp/make.log 2>&1; then cat /tmp/make.log; fail "make succeeded without ${missing[*]}"; fi
        sed 's/^/    /' /tmp/make.log
        grep -q '^snowflake: cannot build, missing:' /tmp/make.log || fail "make did not stop at the build dependency check"
        apt_line=$(grep '^  Debian, Ubuntu:  apt-get install' /tmp/make.log) || fail "no apt-get line in the message"
        for l in "${missing[@]}"; do
            [[ " $apt_line " == *" $l "* ]] || fail "the message does not name $l"
        done
        for l in "${installed[@]}" "${base[@]}"; do
            [[ " $apt_line " != *" $l "* ]] || fail "the message names $l, which is installed"
        done
        [ -z "$(find src -name '*.o' -print -quit)" ] || fail "make compiled something before stopping"
        echo "    ok: stopped before compiling, naming ${missing[*]}"
        say "installing $lib"
        apt_install "$lib"
        installed+=("$lib")
    done
    say "make && make install, with only: ${build[*]}"
    make -s -j2 >/tmp/make.log 2>&1 || { tail -30 /tmp/make.log >&2; fail "make"; }
    make -s install >/tmp/make-install.log 2>&1 || { tail -30 /tmp/make-install.log >&2; fail "make install"; }
    [ -f "$("$PG_CONFIG" --pkglibdir)/snowflake.so" ] || fail "snowflake.so not installed"
    [ -f "$("$PG_CONFIG" --sharedir)/extension/snowflake.control" ] || fail "snowflake.control not installed"
    echo "    ok: built and installed into $("$PG_CONFIG" --pkglibdir)"
    say "installing postgresql-$major (the server, to run it) and CREATE EXTENSION"
    apt_install "postgresql-$major"
    bin=/usr/lib/postgresql/$major/bin
    data=$(mktemp -d /tmp/pgdata.XXXXXX)
    chown postgres: "$data"
    as_pg() { runuser -u postgres -- "$@"; }
    as_pg "$bin/initdb" -D "$data/db" -A trust -U postgres >/tmp/initdb.log 2>&1 || { cat /tmp/initdb.log >&2; fail initdb; }
    cat >>"$data/db/postgresql.conf" <<CONF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 7
listen_addresses = ''
unix_socket_directories = '$data'
CONF
    as_pg "$bin/pg_ctl" -D "$data/db" -l "$data/server.log" -w start >/dev/null || { cat "$data/server.log" >&2; fail "server start"; }
    status=0
    out=$(as_pg "$bin/psql" -X -A -t -v ON_ERROR_STOP=1 -h "$data" -U postgres -d postgres \
        -c "CREATE EXTENSION snowflake" \
        -c "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'" \
        -c "SELECT snowflake_worker_id(snowflake_nextval())" 2>&1) || status=$?
    as_pg "$bin/pg_ctl" -D "$data/db" -m fast -w stop >/dev/null || true
    echo "$out" | sed 's/^/    /'
    [ $status = 0 ] || { cat "$data/server.log" >&2; fail "CREATE EXTENSION"; }
    [ "$(echo "$out" | tail -1)" = 7 ] || fail "the id's worker is not 7"
    echo "    ok: CREATE EXTENSION snowflake, an id from worker 7"
    say "build-deps-check: passed on PostgreSQL $major"
    exit 0
fi

# --- on the host ------------------------------------------------------------
# readme_check: the apt-get and dnf lines of README.md are the list's.
readme_check() {
    local apt dnf status=0
    apt="apt-get install $(PG_MAJOR=17 scripts/deps.sh --list build | tr '\n' ' ' | sed 's/ $//')"
    dnf="dnf install $(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' scripts/build-deps.list | cut -d'|' -f4 |
        tr -d ' ' | tr '\n' ' ' | sed 's/ $//')"
    for line in "$apt" "$dnf"; do
        if grep -qF "\`$line\`" README.md; then
            echo "build-deps-check: README.md shows \`$line\`"
        else
            echo "build-deps-check: FAILED: README.md does not show \`$line\` (scripts/build-deps.list)" >&2
            status=1
        fi
    done
    # debian/control.in keeps its own Build-Depends (Debian's format): every
    # library of the list must be there (make is build-essential's, the
    # server headers are postgresql-server-dev-all there).
    local lib
    for lib in $(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' scripts/build-deps.list |
            awk -F'|' '{ gsub(/ /, "", $1); gsub(/ /, "", $3) } $1 == "header" || $3 == "g++" { print $3 }'); do
        if ! sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control.in | grep -qE "(^|[ ,])$(printf '%s' "$lib" | sed 's/+/\\+/g')([ ,(]|$)"; then
            echo "build-deps-check: FAILED: debian/control.in's Build-Depends lacks $lib (scripts/build-deps.list)" >&2
            status=1
        fi
    done
    [ $status != 0 ] || echo "build-deps-check: debian/control.in's Build-Depends has the list's libraries and g++"
    return $status
}
if [ "${1:-}" = --readme ]; then
    readme_check
    exit
fi
readme_status=0
readme_check || readme_status=$?

SUITE=${1:-trixie}
[ "$(id -u)" = 0 ] || { echo "build-deps-check: needs root (chroot)" >&2; exit 1; }
major=$(scripts/chroot.sh pg-major "$SUITE")
start=$(date +%s)
input=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-build-deps.XXXXXX")
trap 'rm -rf "$input"' EXIT
mkdir -p "$input/snowflake"
# The source tree as a user has it: no build products, no git.
tar --exclude=./build --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
    --exclude=./results --exclude='./tmp_check*' -cf - . | tar -C "$input/snowflake" -xf -
status=0
CHROOT_INPUT=$input CHROOT_APT_CACHE=1 scripts/chroot.sh throwaway "$SUITE" \
    bash /opt/input/snowflake/scripts/build-deps-check.sh --inside "$major" || status=$?
echo "build-deps-check: $SUITE (PostgreSQL $major) $([ $status = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s"
[ $readme_status = 0 ] || status=1
exit $status
