"""The id layout's rate cap, read from the one place that defines it.

src/core/layout.hpp defines kSequenceBits: a node issues at most
2^kSequenceBits ids per millisecond. Every benchmark script, report and plot
takes the cap from here instead of writing the number down again.

    /usr/bin/python3 bench/lib/layout.py cap     prints the cap in ids per second
"""
import os
import re
import sys

LAYOUT_HPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "core", "layout.hpp")


def sequence_bits(path=LAYOUT_HPP):
    """kSequenceBits of src/core/layout.hpp."""
    with open(path, encoding="utf-8") as f:
        m = re.search(r"constexpr\s+int\s+kSequenceBits\s*=\s*(\d+)\s*;", f.read())
    if not m:
        raise SystemExit(f"layout.py: no kSequenceBits in {path}")
    return int(m.group(1))


def ids_per_ms():
    """Ids one node can issue in a millisecond."""
    return 1 << sequence_bits()


def cap_per_s():
    """Ids one node can issue in a second: the cap every ratio is read against."""
    return ids_per_ms() * 1000


if __name__ == "__main__":
    if sys.argv[1:] == ["cap"]:
        print(cap_per_s())
    elif sys.argv[1:] == ["ids-per-ms"]:
        print(ids_per_ms())
    else:
        sys.exit("usage: layout.py cap|ids-per-ms")
