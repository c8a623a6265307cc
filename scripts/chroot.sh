#!/bin/bash
# Debian chroots for testing snowflake against other PostgreSQL versions,
# built with debootstrap from the Debian archive the host's apt uses, and
# cached between runs.
#
#   scripts/chroot.sh setup SUITE          build (or reuse) the chroot of SUITE
#                                          (and the clean chroot beside it)
#   scripts/chroot.sh setup-clean SUITE    build (or reuse) only the clean
#                                          chroot of SUITE (see throwaway)
#   scripts/chroot.sh run SUITE CMD...     run CMD inside it, as root, with
#                                          /proc, /sys, /dev and /dev/shm mounted
#   scripts/chroot.sh throwaway SUITE CMD...
#                                          run CMD in a throwaway copy of the
#                                          clean chroot of SUITE (the bare
#                                          debootstrap, no package added:
#                                          $MATRIX_CACHE/SUITE-clean), removed
#                                          afterwards; to test installing
#                                          packages on a clean system; the
#                                          directory $CHROOT_INPUT, if set, is
#                                          copied to /opt/input in it first;
#                                          with CHROOT_APT_CACHE=1, apt's
#                                          downloaded packages and lists are
#                                          kept between throwaway runs (in
#                                          $MATRIX_CACHE/SUITE-apt)
#   scripts/chroot.sh path SUITE           print its directory
#   scripts/chroot.sh pg-major SUITE       print the PostgreSQL major of SUITE
#
# SUITE is a Debian suite: bookworm (PostgreSQL 15), trixie (17), sid (18).
# The chroot lives in $MATRIX_CACHE/SUITE (default /var/cache/snowflake-matrix).
# A chroot counts as built only when the marker file .snowflake-ready exists;
# it is written last, after every package is installed, and holds a hash of
# the package list: a chroot without it (an interrupted setup) or with
# another list is set up again. The packages come from scripts/deps.sh, the
# same list the host installs, for that suite's PostgreSQL version.
#
# Mounts made by `run` and `throwaway` are always unmounted when it ends, pass or fail.
# Needs root and debootstrap.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

MATRIX_CACHE=${MATRIX_CACHE:-/var/cache/snowflake-matrix}
MIRROR=${MATRIX_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${MATRIX_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
MARKER=.snowflake-ready

die() { echo "chroot: $*" >&2; exit 1; }

pg_major() {
    case $1 in
        bookworm) echo 15 ;;
        trixie)   echo 17 ;;
        sid)      echo 18 ;;
        *) die "unknown suite '$1' (bookworm, trixie or sid)" ;;
    esac
}

# The package list for the suite's PostgreSQL, from scripts/deps.sh.
packages() { PG_MAJOR=$(pg_major "$1") "$SRC/scripts/deps.sh" --list deb; }

# The apt sources of SUITE: a stable release gets its updates and security
# fixes too (the host's PostgreSQL comes from them, and a package built here
# depends on at least the version it was built against).
sources() {
    echo "deb $MIRROR $1 main"
    if [ "$1" != sid ]; then
        echo "deb $MIRROR $1-updates main"
        echo "deb $SECURITY_MIRROR $1-security main"
    fi
}

# apt_config ROOT SUITE: sources and options (sid's Release file can be past
# its Valid-Until; no recommended packages).
apt_config() {
    sources "$2" >"$1/etc/apt/sources.list"
    echo 'Acquire::Check-Valid-Until "false";' >"$1/etc/apt/apt.conf.d/99snowflake"
    echo 'APT::Install-Recommends "false";' >>"$1/etc/apt/apt.conf.d/99snowflake"
}

want_marker() {
    { echo "suite=$1"; sources "$1"; packages "$1"; } | sha256sum | cut -d' ' -f1
}

# lock NAME: one setup or run of a chroot at a time (they mount inside it);
# held until this script exits. Each lock has a descriptor of its own, so
# that taking a second one (SUITE, then SUITE-clean) keeps the first.
lock() {
    local fd
    mkdir -p "$MATRIX_CACHE"
    exec {fd}>"$MATRIX_CACHE/$1.lock"
    if ! flock -n "$fd"; then
        echo "chroot: waiting for another user of the $1 chroot" >&2
        flock "$fd"
    fi
}

# --- mounts ---------------------------------------------------------------
MOUNTED=()
umount_all() {
    local i
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTED[$i]}" 2>/dev/null || umount -l "${MOUNTED[$i]}" 2>/dev/null || true
    done
    MOUNTED=()
}

mount_one() {  # mount_one TARGET MOUNT-ARGS...
    local target=$1; shift
    [ -e "$target" ] || mkdir -p "$target"
    mount "$@" "$target"
    MOUNTED+=("$target")
}

# umount_stale ROOT: what a run killed before its EXIT trap left mounted
# under ROOT (the caller holds ROOT's lock, so no live run uses them). Mounting
# over them fails ("sysfs already mounted"), as in a CI run right after one
# was killed.
umount_stale() {
    local root=$1 m
    # Deepest first: ROOT/dev/shm before ROOT/dev.
    for m in $(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r); do
        echo "chroot: unmounting $m, left by a run that was killed" >&2
        umount "$m" 2>/dev/null || umount -l "$m"
    done
}

mount_all() {
    local root=$1
    umount_stale "$root"
    trap 'umount_all' EXIT
    trap 'exit 130' INT TERM
    mount_one "$root/proc" -t proc proc
    mount_one "$root/sys" -t sysfs sysfs -o ro
    mount_one "$root/dev" -t tmpfs devtmp -o mode=755,nosuid
    local d
    for d in null zero full random urandom tty; do
        touch "$root/dev/$d"
        mount_one "$root/dev/$d" --bind "/dev/$d"
    done
    ln -sfn /proc/self/fd "$root/dev/fd"
    ln -sf /proc/self/fd/0 "$root/dev/stdin"
    ln -sf /proc/self/fd/1 "$root/dev/stdout"
    ln -sf /proc/self/fd/2 "$root/dev/stderr"
    mkdir -p "$root/dev/pts"
    mount_one "$root/dev/shm" -t tmpfs shm -o mode=1777,nosuid,nodev
}

in_chroot() {  # in_chroot ROOT CMD...: CMD in the chroot, a clean environment
    local root=$1; shift
    chroot "$root" /usr/bin/env -i \
        HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

# --- setup ----------------------------------------------------------------
setup() {
    local suite=$1 root want major
    root=$MATRIX_CACHE/$suite
    major=$(pg_major "$suite")
    want=$(want_marker "$suite")
    lock "$suite"
    if [ -f "$root/$MARKER" ] && [ "$(cat "$root/$MARKER")" = "$want" ]; then
        echo "chroot: $suite (PostgreSQL $major) cached in $root"
        return 0
    fi
    [ "$(id -u)" = 0 ] || die "setup needs root"
    command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
    # A package list change reuses the base system; anything else starts over.
    if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$root/.snowflake-base" ]; then
        echo "chroot: debootstrap $suite into $root"
        rm -rf --one-file-system "$root"
        mkdir -p "$root"
        debootstrap --variant=minbase "$suite" "$root" "$MIRROR" >"$MATRIX_CACHE/$suite.debootstrap.log" 2>&1 \
            || { tail -20 "$MATRIX_CACHE/$suite.debootstrap.log" >&2; die "debootstrap $suite failed"; }
        apt_config "$root" "$suite"
        touch "$root/.snowflake-base"
        # Keep the bare system as the clean chroot (throwaway runs).
        lock "$suite-clean"
        if [ ! -f "$root-clean/$MARKER" ]; then
            rm -rf --one-file-system "$root-clean"
            cp -a "$root" "$root-clean"
            echo clean >"$root-clean/$MARKER"
        fi
    fi
    rm -f "$root/$MARKER"
    apt_config "$root" "$suite"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    mkdir -p "$root/opt/snowflake-deps"
    cp "$SRC/scripts/deps.sh" "$SRC/scripts/build-deps.list" "$root/opt/snowflake-deps/"
    (
        mount_all "$root"
        # Server clusters are made by the tests, not by the package.
        in_chroot "$root" sh -c 'mkdir -p /etc/postgresql-common/createcluster.d &&
            echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/snowflake.conf'
        # No service starts inside the chroot.
        printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
        chmod 755 "$root/usr/sbin/policy-rc.d"
        echo "chroot: installing PostgreSQL $major and the test dependencies in $suite"
        in_chroot "$root" apt-get -o Acquire::Check-Valid-Until=false update -qq
        in_chroot "$root" env PG_MAJOR="$major" /opt/snowflake-deps/deps.sh deb
        in_chroot "$root" apt-get clean
    )
    echo "$want" >"$root/$MARKER"
    echo "chroot: $suite (PostgreSQL $major) ready in $root"
}

# setup_clean SUITE: the bare debootstrap of SUITE, with apt configured.
setup_clean() {
    local suite=$1 root
    root=$MATRIX_CACHE/$suite-clean
    [ -f "$root/$MARKER" ] && return 0
    lock "$suite-clean"
    [ -f "$root/$MARKER" ] && return 0
    [ "$(id -u)" = 0 ] || die "setup needs root"
    command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
    echo "chroot: debootstrap $suite into $root"
    rm -rf --one-file-system "$root"
    mkdir -p "$root"
    debootstrap --variant=minbase "$suite" "$root" "$MIRROR" >"$MATRIX_CACHE/$suite-clean.debootstrap.log" 2>&1 \
        || { tail -20 "$MATRIX_CACHE/$suite-clean.debootstrap.log" >&2; die "debootstrap $suite failed"; }
    apt_config "$root" "$suite"
    touch "$root/.snowflake-base"
    echo clean >"$root/$MARKER"
}

throwaway() {
    local suite=$1; shift
    [ "$(id -u)" = 0 ] || die "throwaway needs root"
    setup_clean "$suite"
    local tmp status=0
    tmp=$(mktemp -d "$MATRIX_CACHE/$suite-throwaway.XXXXXX")
    trap 'umount_all; rm -rf --one-file-system "$tmp"' EXIT
    cp -a "$MATRIX_CACHE/$suite-clean/." "$tmp/"
    if [ -n "${CHROOT_INPUT:-}" ]; then
        mkdir -p "$tmp/opt/input"
        cp -a "$CHROOT_INPUT/." "$tmp/opt/input/"
    fi
    cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
    apt_config "$tmp" "$suite"
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod 755 "$tmp/usr/sbin/policy-rc.d"
    mount_all "$tmp"
    trap 'umount_all; rm -rf --one-file-system "$tmp"' EXIT
    if [ "${CHROOT_APT_CACHE:-0}" = 1 ]; then
        local cache=$MATRIX_CACHE/$suite-apt
        mkdir -p "$cache/archives/partial" "$cache/lists/partial"
        mount_one "$tmp/var/cache/apt/archives" --bind "$cache/archives"
        mount_one "$tmp/var/lib/apt/lists" --bind "$cache/lists"
    fi
    in_chroot "$tmp" "$@" || status=$?
    umount_all
    rm -rf --one-file-system "$tmp"
    trap - EXIT
    return $status
}

run() {
    local suite=$1 root; shift
    root=$MATRIX_CACHE/$suite
    [ -f "$root/$MARKER" ] || die "$suite is not set up (scripts/chroot.sh setup $suite)"
    [ "$(id -u)" = 0 ] || die "run needs root"
    lock "$suite"
    mount_all "$root"
    local status=0
    in_chroot "$root" "$@" || status=$?
    umount_all
    return $status
}

[ $# -ge 2 ] || die "usage: $0 setup|run|throwaway|path|pg-major SUITE [CMD...]"
cmd=$1 suite=$2; shift 2
pg_major "$suite" >/dev/null
case $cmd in
    setup)    setup "$suite" ;;
    setup-clean) [ "$(id -u)" = 0 ] || die "setup-clean needs root"; setup_clean "$suite" ;;
    run)      [ $# -gt 0 ] || die "run: no command"; run "$suite" "$@" ;;
    throwaway) [ $# -gt 0 ] || die "throwaway: no command"; throwaway "$suite" "$@" ;;
    path)     echo "$MATRIX_CACHE/$suite" ;;
    pg-major) pg_major "$suite" ;;
    *) die "unknown command '$cmd'" ;;
esac
