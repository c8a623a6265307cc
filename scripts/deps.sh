#!/bin/bash
# Installs the Debian packages snowflake needs to build, test, demo and
# benchmark, if any are missing. Run as root on Debian 12 (bookworm).
set -euo pipefail

PACKAGES=(
    make g++ gcc                                    # build
    postgresql-15 postgresql-server-dev-15          # server, pg_config, PGXS, pgbench
    postgresql-contrib                              # contrib modules used by tests
    postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl  # pgTAP and pg_prove
    googletest libgtest-dev libbenchmark-dev        # core unit tests and micro-benchmarks
    faketime libfaketime                            # fault injection: moving a server's clock
    libmicrohttpd-dev                               # the HTTP endpoint (snowflake.http_listen)
    curl wrk jq iproute2                            # HTTP tests and benchmark (ss: free ports)
    valgrind                                        # instruction counts in benchmarks
    gnuplot-nox                                     # benchmark plots
    procps util-linux                               # pgrep, runuser
    libcurl4-openssl-dev nlohmann-json3-dev         # etcd gateway client (src/etcd)
    etcd-server etcd-client curl libmicrohttpd-dev  # etcd client tests: real etcd, fake gateway
)

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
