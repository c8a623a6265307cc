#!/usr/bin/python3
"""The include graph of src/: prints it, and fails (exit 1) on what the
layering forbids.

  - a cycle among the project's own headers and sources;
  - src/core including anything outside src/core (the core is pure C++17:
    no PostgreSQL header, no glue, no client) or any PostgreSQL header;
  - src/etcd, src/coord, src/zk or src/inspect including src/pg (no import
    runs back up);
  - the C library (sdk/c/src, issue 30) including src/pg: it is built over
    the core, the lease driver and the clients only (its includes name them
    from src/, as "core/lease.hpp", and its public header from
    sdk/c/include).

Usage: scripts/include-graph.py [--quiet]   (from the repository's root)
"""
import os
import re
import sys

SRC = "src"
SDK = "sdk/c/src"
SDK_INCLUDE_DIRS = ("src", "sdk/c/include")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
PG_HEADERS = re.compile(r'^\s*#\s*include\s+[<"](postgres\.h|fmgr\.h|utils/|storage/|access/|catalog/|postmaster/|executor/|nodes/|miscadmin\.h)')


def files():
    for top in (SRC, SDK):
        for root, _, names in os.walk(top):
            for n in sorted(names):
                if n.endswith((".cpp", ".hpp", ".h")):
                    yield os.path.normpath(os.path.join(root, n))


def resolve(f, name):
    """The file an include names: beside the includer, or (the C library)
    under its include directories; None for a system or library header."""
    candidates = [os.path.join(os.path.dirname(f), name)]
    if f.startswith(SDK + "/"):
        candidates += [os.path.join(d, name) for d in SDK_INCLUDE_DIRS]
    for c in candidates:
        if os.path.exists(c):
            return os.path.normpath(c)
    return None


def main():
    quiet = "--quiet" in sys.argv
    graph, problems = {}, []
    for f in files():
        edges = []
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                m = INCLUDE.match(line)
                if m:
                    target = resolve(f, m.group(1))
                    if target is not None:
                        edges.append(target)
                if f.startswith("src/core/") and PG_HEADERS.match(line):
                    problems.append(f"{f}: the core includes a PostgreSQL header: {line.strip()}")
        graph[f] = edges
        for t in edges:
            if f.startswith("src/core/") and not t.startswith("src/core/"):
                problems.append(f"{f}: the core includes {t}")
            if f.startswith(("src/etcd/", "src/coord/", "src/zk/", "src/inspect/", SDK + "/")) and t.startswith("src/pg/"):
                problems.append(f"{f}: includes the glue {t}")
            if f.startswith("src/") and t.startswith("sdk/"):
                problems.append(f"{f}: includes the C library {t}")
    # Cycles: depth-first search with colours.
    colour, stack = {}, []

    def visit(n):
        colour[n] = 1
        stack.append(n)
        for t in graph.get(n, []):
            if colour.get(t) == 1:
                problems.append("cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            elif t not in colour:
                visit(t)
        stack.pop()
        colour[n] = 2

    for n in graph:
        if n not in colour:
            visit(n)
    if not quiet:
        for f, edges in graph.items():
            print(f + ": " + " ".join(sorted(e.replace("src/", "") for e in edges)))
    for p in problems:
        print("not ok - " + p)
    print(f"{len(graph)} files, {sum(len(e) for e in graph.values())} includes, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
