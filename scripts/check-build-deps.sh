#!/bin/sh
# Checks, before anything is compiled, that the headers the extension needs
# are there, and names the packages that provide the missing ones (Debian and
# Ubuntu; RHEL and Fedora). Called by the Makefile; installs nothing
# (`make deps` installs the whole list of scripts/deps.sh on Debian).
#
# Usage: scripts/check-build-deps.sh    (CXX and PG_CONFIG from the environment)
CXX=${CXX:-g++}
PG_CONFIG=${PG_CONFIG:-pg_config}
missing="" deb="" rpm=""

need() {  # need WHAT DEBIAN-PACKAGE RPM-PACKAGE
    missing="$missing
  $1"
    deb="$deb $2"
    rpm="$rpm $3"
}

# has_header HEADER: the C++ compiler finds it.
has_header() { printf '#include <%s>\n' "$1" | "$CXX" -E -x c++ - >/dev/null 2>&1; }

if ! command -v "$CXX" >/dev/null 2>&1; then
    need "a C++17 compiler ($CXX)" g++ gcc-c++
else
    has_header curl/curl.h || need "curl/curl.h (libcurl: the etcd client)" libcurl4-openssl-dev libcurl-devel
    has_header nlohmann/json.hpp || need "nlohmann/json.hpp (nlohmann-json: etcd's JSON)" nlohmann-json3-dev json-devel
    has_header zookeeper/zookeeper.h || need "zookeeper/zookeeper.h (ZooKeeper's C client, single-threaded)" libzookeeper-st-dev zookeeper-devel
    has_header microhttpd.h || need "microhttpd.h (libmicrohttpd: the HTTP endpoint)" libmicrohttpd-dev libmicrohttpd-devel
fi
server=$("$PG_CONFIG" --includedir-server 2>/dev/null)
if [ -z "$server" ] || [ ! -f "$server/postgres.h" ]; then
    major=$("$PG_CONFIG" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
    need "PostgreSQL's server headers (postgres.h of $PG_CONFIG)" "postgresql-server-dev-${major:-N}" \
        "postgresql-server-devel (PGDG: postgresql${major:-NN}-devel)"
fi

[ -z "$missing" ] && exit 0
cat >&2 <<MSG
snowflake: cannot build, missing:$missing
Install the packages that provide them:
  Debian, Ubuntu:  apt-get install$deb
  RHEL, Fedora:    dnf install$rpm
MSG
case $rpm in *json-devel*|*libmicrohttpd-devel*) echo "  (on RHEL, json-devel and libmicrohttpd-devel come from EPEL)" >&2 ;; esac
exit 1
