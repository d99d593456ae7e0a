#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""exit-times.py LOGS...: the reference device's exit times in the guest
runs of `make check` (or any tests/vm/run --results directories under
LOGS): one Markdown row per run whose device kept sync queues, from the
device's stats (vhost-user-fs/README.md, Exit budget): its budget, the
kicks, the busiest sync queue's p50/p99/p99.9, the longest exit over every
sync queue, the late completions by reason and the overruns. Standard
library only."""
import glob
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import counters  # noqa: E402


def rows(logs):
    for path in sorted(glob.glob(os.path.join(logs, "**", "dev-stats*"), recursive=True)):
        if ".at-" in os.path.basename(path):
            continue
        with open(path) as f:
            st = counters.kv_rows(f.read())
        qs = [q for q in st if q.get("type") == "sync" and "exits" in q]
        if not qs or not sum(q["exits"] for q in qs):
            continue
        budget = [q["budget_us"] for q in st if "budget_us" in q]
        busiest = max(qs, key=lambda q: q["exits"])
        name = os.path.relpath(os.path.dirname(path), logs).replace(".results", "")
        if os.path.basename(path) != "dev-stats":
            name += " " + os.path.basename(path)[len("dev-stats."):]
        yield (name, budget[0] if budget else "-", counters.total(qs, "exits"),
               busiest["exit_p50_us"], busiest["exit_p99_us"], busiest["exit_p999_us"],
               max(q["exit_max_us"] for q in qs),
               "%d / %d / %d / %d" % tuple(counters.total(qs, k) for k in
                                           ("defer_predicted", "defer_watch", "defer_budget",
                                            "defer_nowait")),
               counters.total(qs, "overrun"))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    print("| run | budget, us | exits | p50, us | p99, us | p99.9, us | max, us "
          "| late: predicted / watched / budget / would wait | overrun |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for logs in argv[1:]:
        for r in rows(logs):
            print("| " + " | ".join(str(x) for x in r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
