#!/bin/bash
# The C++ layout of .clang-format, checked on the lines a change touches
# (suite "clang-format" of test/run_all.sh, so make test), or applied to them.
#
#   scripts/clang-format.sh          check: the lines changed since the base
#                                    (below), in src/, test/, bench/ and sdk/, as
#                                    clang-format would lay them out; exits 1
#                                    with the diff if they differ
#   scripts/clang-format.sh --fix    the same lines, reformatted in place
#                                    (git add them first: git-clang-format
#                                    leaves files with unstaged changes alone)
#   scripts/clang-format.sh --all    every file of src/, test/, bench/ and sdk/ (a
#                                    report: the code predates .clang-format,
#                                    and some of it is aligned by hand)
#
# The base: CLANG_FORMAT_BASE if set (a commit, branch or tag), else the merge
# base with the current branch's upstream, else with origin (origin/HEAD,
# origin/main, origin/master), else with a local main or master branch when
# HEAD is elsewhere; with none of them, only the changes not yet committed are
# checked. The working tree counts (committed or not); files git does not
# track yet do not.
#
# Lines, not whole files: the code was laid out by hand before .clang-format
# existed (comments aligned across blocks, arguments wrapped by meaning), and
# the format is kept, not imposed on what nobody touched. clang-format 14 (the
# version of Debian 12) only: another version lays some lines out
# differently, so the check is skipped with a message where 14 is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
case ${1:-} in
    '') ;;
    --fix) mode=fix ;;
    --all) mode=all ;;
    *) echo "usage: $0 [--fix|--all]" >&2; exit 2 ;;
esac
PATHS=(src test bench sdk)
WANT=14

# clang-format of version WANT: clang-format-14, or clang-format if it is 14.
CF=
for c in "clang-format-$WANT" clang-format; do
    command -v "$c" >/dev/null 2>&1 || continue
    v=$("$c" --version | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
    [ "$v" = "$WANT" ] && { CF=$(command -v "$c"); break; }
done
if [ -z "$CF" ]; then
    echo "clang-format: skipped: clang-format $WANT is not installed (Debian: apt-get install clang-format-$WANT)"
    exit 0
fi

if [ $mode = all ]; then
    mapfile -t files < <(find "${PATHS[@]}" -name '*.cpp' -o -name '*.hpp' -o -name '*.h' | sort)
    differ=0 lines=0
    for f in "${files[@]}"; do
        n=$("$CF" --style=file "$f" | diff "$f" - | grep -c '^[<>]' || true)
        if [ "$n" -gt 0 ]; then
            differ=$((differ + 1)) lines=$((lines + n))
            printf '%5d %s\n' "$n" "$f"
        fi
    done
    echo "clang-format: $differ of ${#files[@]} files would change ($lines diff lines)"
    [ $differ = 0 ]
    exit
fi

GCF=
for c in "git-clang-format-$WANT" git-clang-format; do
    command -v "$c" >/dev/null 2>&1 && { GCF=$(command -v "$c"); break; }
done
[ -n "$GCF" ] || { echo "clang-format: skipped: git-clang-format is not installed"; exit 0; }
if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
    echo "clang-format: skipped: not a git checkout, nothing to compare with (--all checks every file)"
    exit 0
fi

# The base commit, and what it is (for the message).
base= what=
resolve() { git rev-parse --verify -q "$1^{commit}" 2>/dev/null; }
if [ -n "${CLANG_FORMAT_BASE:-}" ]; then
    c=$(resolve "$CLANG_FORMAT_BASE") || { echo "clang-format: CLANG_FORMAT_BASE=$CLANG_FORMAT_BASE is not a commit" >&2; exit 2; }
    base=$(git merge-base HEAD "$c") what="the merge base with $CLANG_FORMAT_BASE"
else
    head_branch=$(git symbolic-ref -q --short HEAD || true)
    for ref in '@{upstream}' origin/HEAD origin/main origin/master main master; do
        c=$(resolve "$ref") || continue
        case $ref in main|master) [ "$ref" = "$head_branch" ] && continue ;; esac
        base=$(git merge-base HEAD "$c") || continue
        what="the merge base with $ref"
        break
    done
fi
if [ -z "$base" ]; then
    base=HEAD what="HEAD (no upstream, origin or main branch: the changes not yet committed)"
fi

echo "clang-format: $("$CF" --version | sed 's/^ *//'), the lines changed since $what ($(git rev-parse --short "$base"))"
if [ $mode = fix ]; then
    "$GCF" --binary "$CF" --style file "$base" -- "${PATHS[@]}" && status=0 || status=$?
    [ $status = 1 ] && status=0  # 1: it changed files
    exit "$status"
fi
out=$("$GCF" --binary "$CF" --style file --diff "$base" -- "${PATHS[@]}") && status=0 || status=$?
case $out in
    'no modified files to format'|'clang-format did not modify any files'|'')
        echo "clang-format: ok (${out:-nothing to check})"
        exit 0 ;;
esac
echo "$out"
[ $status -le 1 ] || exit "$status"
# A diff (git-clang-format 14 exits 0 after printing one).
echo "clang-format: the changed lines above are not laid out as .clang-format says;" \
    "scripts/clang-format.sh --fix lays them out (where a hand-made layout must stay:" \
    "// clang-format off ... // clang-format on around it)"
exit 1
