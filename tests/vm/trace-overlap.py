#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""trace-overlap.py TRACE [--type sync] [--min-pairs N] [--max-pairs N]

Reads the reference device's --trace-file (one line per processed request:
queue=Q type=T tid=N opcode=N start=NS end=NS, CLOCK_MONOTONIC) and tells
whether requests of different queues were in the device at the same time:
the pairs of intervals of different queues that overlap, and the time
during which two or more queues were busy at once. Prints one summary line
per queue and one for the whole, then exits 1 if the pairs are fewer than
--min-pairs or more than --max-pairs (2 for a malformed trace).
"""
import argparse
import sys


def parse(path, want_type):
    spans = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
            try:
                q, t = int(kv["queue"]), kv["type"]
                s, e, tid = int(kv["start"]), int(kv["end"]), int(kv["tid"])
            except (KeyError, ValueError):
                sys.exit("trace-overlap: %s:%d: malformed line" % (path, n))
            if e < s:
                sys.exit("trace-overlap: %s:%d: ends before it starts" % (path, n))
            if want_type is None or t == want_type:
                spans.append((s, e, q, tid))
    return spans


def overlap_pairs(spans):
    """Pairs (a, b) of spans of different queues with a.start < b.end and
    b.start < a.end."""
    pairs = 0
    active = []
    for s, e, q, _ in sorted(spans):
        active = [a for a in active if a[1] > s]
        pairs += sum(1 for a in active if a[2] != q)
        active.append((s, e, q))
    return pairs


def concurrent_ns(spans):
    """Time during which requests of two or more queues were in flight."""
    events = []
    for s, e, q, _ in spans:
        events.append((s, 1, q))
        events.append((e, -1, q))
    # ends before starts at the same instant: touching is not overlapping
    events.sort(key=lambda x: (x[0], x[1]))
    busy = {}
    total, last = 0, None
    for t, d, q in events:
        if last is not None and sum(1 for v in busy.values() if v > 0) >= 2:
            total += t - last
        busy[q] = busy.get(q, 0) + d
        last = t
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--type", default="sync", help="queue type to look at ('' for all)")
    ap.add_argument("--min-pairs", type=int, default=None)
    ap.add_argument("--max-pairs", type=int, default=None)
    a = ap.parse_args()
    spans = parse(a.trace, a.type or None)
    queues = sorted({q for _, _, q, _ in spans})
    for q in queues:
        mine = [x for x in spans if x[2] == q]
        tids = sorted({x[3] for x in mine})
        busy = sum(e - s for s, e, _, _ in mine)
        print("queue=%d requests=%d busy_ns=%d threads=%s"
              % (q, len(mine), busy, ",".join(map(str, tids))))
    pairs = overlap_pairs(spans)
    conc = concurrent_ns(spans)
    print("queues=%d requests=%d overlapping_pairs=%d concurrent_ns=%d"
          % (len(queues), len(spans), pairs, conc))
    ok = True
    if a.min_pairs is not None and pairs < a.min_pairs:
        print("FAIL: %d overlapping pairs of different queues, wanted at least %d"
              % (pairs, a.min_pairs))
        ok = False
    if a.max_pairs is not None and pairs > a.max_pairs:
        print("FAIL: %d overlapping pairs of different queues, wanted at most %d"
              % (pairs, a.max_pairs))
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
