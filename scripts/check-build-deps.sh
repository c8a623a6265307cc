#!/bin/sh
# Checks, before anything is compiled, that what the build needs is there,
# and names the packages that provide what is missing (Debian and Ubuntu;
# RHEL and Fedora). The list is scripts/build-deps.list. Called by the
# Makefile; installs nothing (`make deps` installs the whole list of
# scripts/deps.sh on Debian).
#
# Usage: scripts/check-build-deps.sh    (CXX and PG_CONFIG from the environment)
CXX=${CXX:-g++}
PG_CONFIG=${PG_CONFIG:-pg_config}
LIST=$(dirname "$0")/build-deps.list
[ -r "$LIST" ] || { echo "snowflake: $LIST is missing" >&2; exit 1; }
major=$("$PG_CONFIG" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
major=${major:-N}
missing="" deb="" rpm="" notes="" cxx_ok=yes
command -v "$CXX" >/dev/null 2>&1 || cxx_ok=no

# has_header HEADER: the C++ compiler finds it.
has_header() { [ $cxx_ok = yes ] && printf '#include <%s>\n' "$1" | "$CXX" -E -x c++ - >/dev/null 2>&1; }

# Without a compiler no header can be looked for: only the compiler is named then.
# shellcheck disable=SC2034
while IFS='|' read -r kind checked debpkg rpmpkg what note; do
    kind=$(echo "$kind" | tr -d ' ')
    checked=$(echo "$checked" | tr -d ' ')
    case $kind in ''|'#'*) continue ;; esac
    ok=yes
    case $kind in
        command) [ "$checked" = CXX ] && checked=$CXX
                 command -v "$checked" >/dev/null 2>&1 || ok=no ;;
        header)  [ $cxx_ok = no ] || has_header "$checked" || ok=no ;;
        server)  dir=$("$PG_CONFIG" --includedir-server 2>/dev/null)
                 { [ -n "$dir" ] && [ -f "$dir/$checked" ]; } || { ok=no; checked="$checked of $PG_CONFIG"; } ;;
    esac
    [ $ok = yes ] && continue
    what=$(echo "$what" | sed "s/^ *//; s/ *$//; s/MAJOR/$major/g")
    missing="$missing
  $what ($checked)"
    note=$(echo "$note" | sed "s/^ *//; s/ *$//; s/MAJOR/$major/g")
    [ -z "$note" ] || notes="${notes:+$notes; }$note"
    deb="$deb $(echo "$debpkg" | tr -d ' ' | sed "s/MAJOR/$major/g")"
    rpm="$rpm $(echo "$rpmpkg" | tr -d ' ' | sed "s/MAJOR/$major/g")"
done <"$LIST"

[ -z "$missing" ] && exit 0
cat >&2 <<MSG
snowflake: cannot build, missing:$missing
Install the packages that provide them:
  Debian, Ubuntu:  apt-get install$deb
  RHEL, Fedora:    dnf install$rpm${notes:+ ($notes)}
MSG
exit 1
