#!/bin/bash
# The version matrix (make test-matrix): snowflake built, packaged and tested
# against the PostgreSQL of other Debian releases, each in its own chroot
# (scripts/chroot.sh, cached in /var/cache/snowflake-matrix):
#
#   trixie  PostgreSQL 17      sid  PostgreSQL 18
#
# In each chroot, from a fresh copy of this source tree: `make` (warnings
# shown; errors only with MATRIX_WERROR=1, see below), `make install`, the
# core unit tests binary, then test/run_all.sh, the same suite runner as on
# the host, with PG_CONFIG pointing at that version, so that a suite added to
# run_all.sh runs here too; then `make deb`, and the packages (postgresql-N-snowflake
# and snowflake-inspect) are installed
# into a throwaway copy of a clean chroot of the same release and used
# (test/deb_install.sh). The host's own package (PostgreSQL 15) is built the
# same way and tested in a clean bookworm chroot. In a clean trixie chroot,
# scripts/build-deps-check.sh installs only the build dependencies of
# scripts/build-deps.list and checks `make`'s message for each missing one,
# `make && make install` and CREATE EXTENSION. Nothing is installed into the
# host's PostgreSQL.
#
# Choosing what runs (the one place for it):
#   MATRIX_RELEASES   Debian releases, default "trixie sid"
#   MATRIX_TESTS      suites of test/run_all.sh, comma-separated, or "all"
#                     (every suite except those in MATRIX_SKIP). Default:
#                     the core unit tests, pg_regress, pgTAP, the fault
#                     suite, the upgrade test, installcheck and the standby
#                     suite (the custom WAL resource manager's redo and
#                     promotion): what differs between PostgreSQL versions. The etcd, lease, cluster
#                     and HTTP suites exercise no version-specific code
#                     beyond what these cover, and would double CI's time.
#   MATRIX_SKIP       default "core unit tests (ASan+UBSan)" (no PostgreSQL
#                     in it: the host runs it)
#   MATRIX_DEB        1 (default) builds and tests the packages, 0 skips them
#   MATRIX_BUILD_DEPS 1 (default) runs scripts/build-deps-check.sh in the first
#                     release of MATRIX_RELEASES (2 to 3 minutes with apt's
#                     downloads cached), 0 skips it
#   MATRIX_WERROR     1 makes compiler warnings errors on the other versions
#                     too (default 0: a newer compiler's new warning is shown,
#                     and fails the host build only, where -Werror applies)
#
# Ends with one line per step and "N passed, N failed"; exits non-zero if any
# step failed. Needs root, debootstrap and network access to the Debian
# archive (for the first run; later runs reuse the cached chroots).
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

MATRIX_RELEASES=${MATRIX_RELEASES:-trixie sid}
MATRIX_TESTS=${MATRIX_TESTS:-core unit tests,pg_regress,pgTAP,fault injection,upgrade,installcheck,standby}
MATRIX_SKIP=${MATRIX_SKIP:-core unit tests (ASan+UBSan)}
MATRIX_DEB=${MATRIX_DEB:-1}
MATRIX_WERROR=${MATRIX_WERROR:-0}
MATRIX_BUILD_DEPS=${MATRIX_BUILD_DEPS:-1}

# --- inside a chroot: build, install, run the suites, package -------------
if [ "${1:-}" = --inside ]; then
    set -e
    major=$2
    export PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config
    werror=""
    [ "$MATRIX_WERROR" = 1 ] && werror=-Werror
    echo "--- PostgreSQL $("$PG_CONFIG" --version | cut -d' ' -f2), $(g++ --version | head -1)"
    make -s clean >/dev/null 2>&1 || true
    make -j2 WERROR="$werror" all 2>&1 | tee build/make.log
    if grep -q 'warning:' build/make.log; then
        echo "--- compiler warnings on PostgreSQL $major (not errors for users' builds):"
        grep 'warning:' build/make.log | sort -u
    fi
    make -s install
    make -s build/unit_tests
    status=0
    if [ "$MATRIX_TESTS" = all ]; then
        RUN_SKIP="$MATRIX_SKIP" test/run_all.sh || status=$?
    else
        RUN_ONLY="$MATRIX_TESTS" test/run_all.sh || status=$?
    fi
    if [ "$MATRIX_DEB" = 1 ]; then
        make -s deb || status=1
    fi
    exit $status
fi

# --- on the host ------------------------------------------------------------
[ "$(id -u)" = 0 ] || { echo "matrix: needs root (debootstrap, chroot)" >&2; exit 1; }
scripts/deps.sh matrix || exit 1

START=$(date +%s)
RESULTS=()
failed=0
step() {  # step NAME CMD...: run, time and record a step
    local name=$1 t0 status=0; shift
    t0=$(date +%s)
    echo
    echo "=== matrix: $name"
    "$@" || status=$?
    local took=$(( $(date +%s) - t0 ))
    if [ $status = 0 ]; then
        RESULTS+=("ok      $name (${took} s)")
    else
        RESULTS+=("FAILED  $name (${took} s)")
        failed=$((failed + 1))
    fi
    echo "=== matrix: $name: $([ $status = 0 ] && echo ok || echo FAILED) (${took} s)"
    return $status
}

# copy_source ROOT: a fresh copy of the source tree at ROOT/opt/snowflake.
copy_source() {
    local dest=$1/opt/snowflake
    rm -rf "$dest"
    mkdir -p "$dest/build"
    tar -C "$SRC" --exclude=./build --exclude=./.git --exclude='*.o' --exclude='*.so' \
        --exclude='*.bc' --exclude='*.d' --exclude=./results --exclude='./tmp_check*' -cf - . | tar -C "$dest" -xf -
}

# deb_test RELEASE DEB [INSPECT_DEB]: install DEB (and the snowflake-inspect
# package beside it) into a throwaway clean chroot and use them.
deb_test() {
    local release=$1 deb=$2 inspect_deb=${3:-} input
    input=$(mktemp -d)
    mkdir -p "$input/test/lib"
    cp "$deb" ${inspect_deb:+"$inspect_deb"} "$input/"
    cp test/deb_install.sh "$input/test/"
    cp test/lib/pg.sh test/lib/ports.sh "$input/test/lib/"
    local status=0
    CHROOT_INPUT=$input scripts/chroot.sh throwaway "$release" \
        /opt/input/test/deb_install.sh "/opt/input/$(basename "$deb")" \
        ${inspect_deb:+"/opt/input/$(basename "$inspect_deb")"} || status=$?
    rm -rf "$input"
    return $status
}

host_release=$(. /etc/os-release && echo "$VERSION_CODENAME")

# Every chroot this run needs, set up at once: debootstrap and apt mostly
# wait on the network and the disk, so on a fresh machine the setups take
# about as long together as the longest alone. Cached chroots are reused at
# once. A setup that fails here is tried again, with its output, by its own
# step below.
prepare_chroots() {
    local pids=() names=() r i
    for r in $MATRIX_RELEASES; do
        scripts/chroot.sh setup "$r" >"$LOGS/setup-$r.log" 2>&1 &
        pids+=($!); names+=("$r")
    done
    if [ "$MATRIX_DEB" = 1 ] && [[ " $MATRIX_RELEASES " != *" $host_release "* ]]; then
        scripts/chroot.sh setup-clean "$host_release" >"$LOGS/setup-$host_release-clean.log" 2>&1 &
        pids+=($!); names+=("$host_release (clean)")
    fi
    for i in "${!pids[@]}"; do
        if wait "${pids[$i]}"; then
            echo "chroot ${names[$i]}: ready"
        else
            echo "chroot ${names[$i]}: setup failed; the steps below try again and show why"
        fi
    done
}
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-matrix.XXXXXX")
trap 'rm -rf "$LOGS"' EXIT
# Not a step of its own: its failures are the failures of the steps below.
echo "=== matrix: setting up the chroots in parallel"
t_prepare=$(date +%s)
prepare_chroots
echo "=== matrix: chroots done ($(( $(date +%s) - t_prepare )) s)"

# The host's package (the host's PostgreSQL, through PG_CONFIG).
if [ "$MATRIX_DEB" = 1 ]; then
    host_major=$("${PG_CONFIG:-pg_config}" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
    if step "PostgreSQL $host_major: make deb (host)" make -s deb; then
        deb=$(ls build/deb/postgresql-"$host_major"-snowflake_*.deb | tail -1)
        inspect_deb=$(ls build/deb/snowflake-inspect_*.deb | tail -1)
        step "PostgreSQL $host_major: install $(basename "$deb") and $(basename "$inspect_deb") into a clean $host_release chroot" \
            deb_test "$host_release" "$deb" "$inspect_deb"
    fi
fi

for release in $MATRIX_RELEASES; do
    major=$(scripts/chroot.sh pg-major "$release") || exit 1
    step "$release: chroot with PostgreSQL $major" scripts/chroot.sh setup "$release" || continue
    root=$(scripts/chroot.sh path "$release")
    copy_source "$root"
    step "PostgreSQL $major ($release): build, install, suites, make deb" \
        scripts/chroot.sh run "$release" env MATRIX_TESTS="$MATRIX_TESTS" MATRIX_SKIP="$MATRIX_SKIP" \
        MATRIX_DEB="$MATRIX_DEB" MATRIX_WERROR="$MATRIX_WERROR" \
        bash -c "cd /opt/snowflake && scripts/matrix.sh --inside $major"
    if [ "$MATRIX_DEB" = 1 ]; then
        deb=$(ls "$root"/opt/snowflake/build/deb/postgresql-"$major"-snowflake_*.deb 2>/dev/null | tail -1)
        # The release's own build of snowflake-inspect (its libraries), kept in the chroot.
        inspect_deb=$(ls "$root"/opt/snowflake/build/deb/snowflake-inspect_*.deb 2>/dev/null | tail -1)
        if [ -n "$deb" ] && [ -n "$inspect_deb" ]; then
            mkdir -p build/deb
            cp "$deb" build/deb/
            step "PostgreSQL $major: install $(basename "$deb") and $(basename "$inspect_deb") into a clean $release chroot" \
                deb_test "$release" "$deb" "$inspect_deb"
        else
            RESULTS+=("FAILED  PostgreSQL $major: no package was built")
            failed=$((failed + 1))
        fi
    fi
done

# The README's install instructions on a clean system of the first release.
if [ "$MATRIX_BUILD_DEPS" = 1 ]; then
    release=${MATRIX_RELEASES%% *}
    step "$release: a clean chroot with only the build dependencies: make names what is missing, builds, installs, CREATE EXTENSION" \
        scripts/build-deps-check.sh "$release"
fi

echo
echo "=== matrix summary ($(( $(date +%s) - START )) s)"
printf '%s\n' "${RESULTS[@]}"
echo "$(( ${#RESULTS[@]} - failed )) passed, $failed failed"
[ $failed -eq 0 ]
