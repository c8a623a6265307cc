#!/usr/bin/python3
"""The id layout of a nemesis run (test/nemesis/run.sh, NEMESIS_LAYOUT: the
nodes' snowflake.layout): the widths of an id's fields, time, worker id and
sequence from the top bit down, in 1 ms units, and the decoding of ids in
it, for run.sh and the checker (check.py, check_test.py).

  worker   = (id >> S) & (2^W - 1)
  sequence = id & (2^S - 1)
  ms       = (id >> (S + W)) & (2^T - 1)   (since snowflake.epoch)

and every id of the layout lies in [0, 2^(T + W + S)).

The text is read as src/core/id_layout.cpp reads snowflake.layout, limited
to the layouts a node issues ids in (node_geometry()): a profile whose
fields run time, worker, sequence in 1 ms units (twitter, js-safe, discord,
instagram), or "time T, worker W, sequence S" (in that order; ", unit 1ms"
allowed), each field at least a bit, the worker id at most 16, the sequence
at most 22, time at most 41, 63 in all. run.sh checks this reading against
the layout the nodes report (snowflake_stats.layout), so a disagreement with
the extension stops the run before its clients start.

Usage: layout.py TEXT   (a value of snowflake.layout) prints "T/W/S" (the
                        fleet key's form, check.py's --layout), or the reason
                        it is not a node's layout on stderr, and exits 1.
"""
import collections
import re
import sys

Layout = collections.namedtuple("Layout", "time_bits worker_bits sequence_bits")

TWITTER = Layout(41, 10, 12)
# id_layout.cpp's profiles that a node issues ids in (sonyflake's order and
# 10 ms unit it reads only).
PROFILES = {
    "twitter": TWITTER,
    "js-safe": Layout(41, 6, 6),
    "discord": Layout(41, 10, 12),
    "instagram": Layout(40, 13, 10),
}


# Profiles a node does not issue ids in (id_layout.cpp reads them).
READ_ONLY = {"sonyflake": "sonyflake's order (time, sequence, worker) and 10 ms unit are read and built by"
                          " snowflake_decode_as() and snowflake_compose_as() only"}


def parse(text):
    """The layout TEXT names: "T/W/S" (check.py's --layout) or a value of
    snowflake.layout (parse_setting); raises ValueError with the reason when
    no node issues ids in it."""
    m = re.fullmatch(r"(\d{1,4})/(\d{1,4})/(\d{1,4})", text.strip())
    if m:
        return check(Layout(*(int(x) for x in m.groups())))
    return parse_setting(text)


def parse_setting(text):
    """The layout a value of snowflake.layout names: a profile or "time T,
    worker W, sequence S"; raises ValueError with the reason when no node
    issues ids in it."""
    t = text.strip()
    if t in PROFILES:
        return PROFILES[t]
    if t in READ_ONLY:
        raise ValueError("a node does not issue ids in %s: %s" % (t, READ_ONLY[t]))
    parts = t.split(",")
    if parts and parts[-1].strip() == "":
        parts.pop()  # a trailing comma, as id_layout.cpp allows
    fields = collections.OrderedDict()
    for part in parts:
        words = part.split()
        if len(words) != 2:
            raise ValueError("%r is neither a profile (%s) nor fields \"time T, worker W, sequence S\""
                             % (text, ", ".join(PROFILES)))
        name, value = words
        if name == "unit":
            if value != "1ms" or "unit" in fields:
                raise ValueError("a node issues ids in units of 1 ms, not %r" % value)
            fields["unit"] = 1
            continue
        if name not in ("time", "worker", "sequence") or name in fields or not re.fullmatch(r"\d{1,4}", value):
            raise ValueError("%r: the fields are time, worker and sequence, each once, with a number of bits"
                             % text)
        fields[name] = int(value)
    order = [f for f in fields if f != "unit"]
    if order != ["time", "worker", "sequence"]:
        raise ValueError("%r: a node issues ids whose fields run time, worker, sequence from the top bit down"
                         % text)
    return check(Layout(fields["time"], fields["worker"], fields["sequence"]))


def check(lay):
    if min(lay) < 1:
        raise ValueError("each field needs at least one bit: %s" % text_of(lay))
    if lay.worker_bits > 16:
        raise ValueError("the worker id has at most 16 bits: %s" % text_of(lay))
    if lay.sequence_bits > 22:
        raise ValueError("the sequence has at most 22 bits: %s" % text_of(lay))
    if lay.time_bits > 41:
        raise ValueError("a node's time field has at most 41 bits: %s" % text_of(lay))
    if sum(lay) > 63:
        raise ValueError("the fields add up to %d bits, more than 63: %s" % (sum(lay), text_of(lay)))
    return lay


def text_of(lay):
    return "%d/%d/%d" % lay


def bits(lay):
    """An id of the layout is below 2^bits(lay)."""
    return sum(lay)


class Decoder:
    """The fields of ids of one layout."""

    def __init__(self, lay):
        self.layout = lay
        self.worker_shift = lay.sequence_bits
        self.time_shift = lay.sequence_bits + lay.worker_bits
        self.worker_mask = (1 << lay.worker_bits) - 1
        self.sequence_mask = (1 << lay.sequence_bits) - 1
        self.time_mask = (1 << lay.time_bits) - 1
        self.per_ms = 1 << lay.sequence_bits  # ids a millisecond of one worker id
        self.limit = 1 << bits(lay)  # every id lies below

    def worker(self, i):
        return (i >> self.worker_shift) & self.worker_mask

    def ms(self, i):
        return (i >> self.time_shift) & self.time_mask

    def sequence(self, i):
        return i & self.sequence_mask

    def fits(self, i):
        return 0 <= i < self.limit

    def compose(self, ms, worker, sequence):
        return (ms << self.time_shift) | (worker << self.worker_shift) | sequence


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: layout.py TEXT")
    try:
        print(text_of(parse_setting(sys.argv[1])))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
