#!/bin/bash
# Installs the Debian packages snowflake needs to build, test, demo and
# benchmark, if any are missing. Run as root on Debian 12 (bookworm), 13
# (trixie) or unstable (sid). This is the one list of packages: the host
# (make deps / make test) and the chroots of the version matrix
# (scripts/chroot.sh) both install from it. The build dependencies come from
# scripts/build-deps.list (the Makefile's check reads the same file).
#
# Usage: scripts/deps.sh [--list] [GROUP...]
#   GROUP: deb (tools for `make deb`), matrix (tools for `make test-matrix`),
#          clients (the drivers and ORMs of `make test-clients`, test/clients.sh);
#          the base list is always included. `--list build` prints only the
#          build dependencies (what `make && make install` needs).
#   --list prints the packages instead of installing them.
# The PostgreSQL version is $PG_MAJOR, else the one $PG_CONFIG (or pg_config
# on the PATH) reports, else 15.
set -euo pipefail

if [ -z "${PG_MAJOR:-}" ]; then
    PG_MAJOR=$("${PG_CONFIG:-pg_config}" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p' || true)
    PG_MAJOR=${PG_MAJOR:-15}
fi

# build_packages: the Debian packages of scripts/build-deps.list.
build_packages() {
    local list
    list=$(dirname "${BASH_SOURCE[0]}")/build-deps.list
    [ -r "$list" ] || { echo "deps: $list is missing" >&2; exit 1; }
    sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$list" | cut -d'|' -f3 | tr -d ' ' | sed "s/MAJOR/$PG_MAJOR/g"
}
mapfile -t BUILD_PACKAGES < <(build_packages)
[ ${#BUILD_PACKAGES[@]} -gt 0 ] || { echo "deps: no build dependencies read" >&2; exit 1; }

PACKAGES=(
    "${BUILD_PACKAGES[@]}"                          # build: make, g++, server headers, libraries
    "postgresql-$PG_MAJOR"                          # server, pgbench
    "postgresql-$PG_MAJOR-pgtap" libtap-parser-sourcehandler-pgtap-perl  # pgTAP and pg_prove
    googletest libgtest-dev libbenchmark-dev        # core unit tests and micro-benchmarks
    faketime libfaketime                            # fault injection: moving a server's clock
    etcd-server etcd-client                         # lease tests, demo-cluster: a real etcd
    zookeeper                                       # lease tests on ZooKeeper: real servers (3.8, Java)
    patroni python3-etcd python3-psycopg2           # test/patroni.sh: a Patroni cluster on etcd
    curl wrk jq iproute2 python3                    # HTTP tests and benchmark (ss: free ports; a server that is not etcd)
    valgrind                                        # instruction counts in benchmarks
    gnuplot-nox                                     # benchmark plots
    procps util-linux                               # pgrep, runuser
    gdb                                             # lease tests: a backend stopped at a chosen function
    prometheus python3-yaml                         # monitoring suite: promtool (Debian ships it only with the server)
    groff-base                                      # inspect tests: the man page renders without warnings
    nftables                                        # nemesis suite: partitions (its clients use python3-psycopg2, above)
    haproxy                                         # test/haproxy.sh: the load balancer of docs/haproxy/haproxy.cfg
    gunicorn                                        # test/sdk_python.sh: a preloading server forking workers
)
DEB_PACKAGES=(build-essential dpkg-dev debhelper fakeroot postgresql-server-dev-all)  # make deb (pg_buildext)
MATRIX_PACKAGES=(debootstrap)                                         # make test-matrix
CLIENT_PACKAGES=(                                                     # make test-clients (test/clients.sh)
    ruby-activerecord ruby-pg                                         # test/clients/rails.sh
    golang-go golang-github-jackc-pgx-v4-dev                          # test/clients/pgx.sh (GOPATH mode, offline)
    libpostgresql-jdbc-java openjdk-17-jdk-headless                   # test/clients/jdbc.sh
    python3-sqlalchemy python3-django python3-psycopg2                # test/clients/sqlalchemy.sh, django.sh
)   # (node_bigint.sh: node-pg is not installable beside NodeSource's nodejs; NODE_PG_DIR)

list=0
for arg in "$@"; do
    case $arg in
        --list) list=1 ;;
        build)  PACKAGES=("${BUILD_PACKAGES[@]}") ;;
        deb)    PACKAGES+=("${DEB_PACKAGES[@]}") ;;
        matrix) PACKAGES+=("${MATRIX_PACKAGES[@]}") ;;
        clients) PACKAGES+=("${CLIENT_PACKAGES[@]}") ;;
        *) echo "deps: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

if [ $list = 1 ]; then
    printf '%s\n' "${PACKAGES[@]}"
    exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "deps: missing packages: ${missing[*]}; run 'make deps' as root to install them" >&2
    exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
