# SPDX-License-Identifier: GPL-2.0
"""The interleaved pairs of make bench: one UML boot per pair with two
shares, A (the baseline) and B, measured in short blocks in ABBA order by
bench/interleave.sh. Each row's ratio is B's figure over A's in the same
block; the report gives the median of the blocks' ratios with its 95 %
percentile-bootstrap interval, and calls B faster or slower only where
that interval excludes 1.00 and the A/A pair's interval (two in-tree
shares) holds 1.00 on the same row.

A block whose host lost more than the limit of its CPU time to steal was
run again inside the guest (bench/interleave.sh --steal-max, --reruns):
only its last attempt counts, and the report says how many blocks were run
again and how many stood over the limit after their last rerun.

benchlib/collect.py's interleave() reads RAW/interleave/<pair>/ (bench.py's
interleave step) into the JSON's "interleave"; analyse() works on one
pair of that."""
import re
import statistics

from benchlib import metrics
from benchlib.paired import claim
from benchlib.stats import bootstrap_ci

# (name, B, A, what differs): A is the baseline, ratios are B over A.
PAIRS = (
    ("sync-vs-intree", "ours-sync", "intree", "the driver (and the sync path)"),
    ("async-vs-intree", "ours-async", "intree", "the driver, both interrupt-driven"),
    ("sync-vs-async", "ours-sync", "ours-async-no-async-dio",
     "only whether the device offers sync queues (the FUSE flags alike)"),
    ("async-dio", "ours-async-no-async-dio", "ours-async",
     "only FUSE_ASYNC_DIO, not granted on B (as with sync queues)"),
    ("async1-vs-intree", "ours-async-forget-1", "intree",
     "the driver, both interrupt-driven, each FORGET sent alone on both"),
    ("forget-batch", "ours-async", "ours-async-forget-1",
     "only FORGET batching: up to 64 a message on B, one on A"),
    ("aa", "intree-again", "intree", "nothing: the A/A control"),
)
CONTROL = "aa"
LABEL = re.compile(r"block=([0-9]+) side=([ab]) pos=([12]) attempt=([0-9]+)")


def pair(name):
    return next(p for p in PAIRS if p[0] == name)


def blocks(lines):
    """{block: {"attempt", "order", "steal_pct", "a": run, "b": run}} of the
    last attempt of every block; a run is {"lines": [...]} as metrics'
    getters take it."""
    last = {}
    for ln in lines:
        if ln.get("phase") == "block":
            k = ln["block"]
            if k not in last or ln["attempt"] >= last[k]["attempt"]:
                last[k] = {"attempt": ln["attempt"], "order": ln.get("order"),
                           "steal_pct": ln.get("steal_pct"), "a": {"lines": []},
                           "b": {"lines": []}}
    for ln in lines:
        m = LABEL.match(ln.get("label") or "")
        if not m:
            continue
        k, side, att = int(m.group(1)), m.group(2), int(m.group(4))
        if k in last and last[k]["attempt"] == att:
            last[k][side]["lines"].append(ln)
    return last


def reruns(lines):
    """(blocks run again, blocks whose last attempt still had more steal
    than the limit: they stand, marked)."""
    again = {ln["block"] for ln in lines if ln.get("phase") == "block" and ln["attempt"] > 1}
    last = {}
    for ln in lines:
        if ln.get("phase") == "block" and ln["attempt"] >= last.get(ln["block"], {}).get("attempt", 0):
            last[ln["block"]] = ln
    return len(again), sum(bool(ln.get("over")) for ln in last.values())


def steal(lines):
    """The last attempts' steal percentages (None where not measured)."""
    last = {}
    for ln in lines:
        if ln.get("phase") == "block" and ln["attempt"] >= last.get(ln["block"], {}).get("attempt", 0):
            last[ln["block"]] = ln
    return [ln.get("steal_pct") for ln in last.values()]


def rows():
    """(workload id, label, unit, better, getter) of the rows a block has."""
    for wid, _, rs in metrics.workloads():
        for label, unit, better, get, kind in rs:
            if kind == "main":
                yield wid, label, unit, better, get


def cpu_per_phase(run, ph):
    """The guest's CPU seconds (user + system) of phase PH in one side of a
    block, or None."""
    ln = metrics.phase(run, ph)
    if not ln:
        return None
    return (ln.get("cpu_user_ticks", 0) + ln.get("cpu_sys_ticks", 0)) / float(ln.get("hz", 100))


def dev_cpu_per_phase(run, ph):
    """The device's CPU seconds in phase PH of one side of a block (the
    host's figure, guest-bench.sh --dev-cpu), or None."""
    ln = metrics.phase(run, ph)
    if not ln or ln.get("dev_cpu_ticks") is None or not ln.get("dev_hz"):
        return None
    return ln["dev_cpu_ticks"] / float(ln["dev_hz"])


def analyse(lines):
    """{(wid, label): {"unit", "better", "ratios", "median", "ci95",
    "better_blocks", "cpu_a", "cpu_b", "dev_cpu_a", "dev_cpu_b"}} of one
    pair's lines: ratios are B over A per block (last attempts), cpu_a and
    cpu_b the medians of the sides' guest CPU seconds in that row's phase,
    dev_cpu_a and dev_cpu_b those of their devices (None where not
    measured)."""
    bl = blocks(lines)
    out = {}
    for wid, label, unit, better, get in rows():
        rs, ca, cb, da, db = [], [], [], [], []
        for k in sorted(bl):
            va, vb = get(bl[k]["a"]), get(bl[k]["b"])
            if va and vb is not None:
                rs.append(vb / va)
            for run, acc, dacc in ((bl[k]["a"], ca, da), (bl[k]["b"], cb, db)):
                ph = _phase_of(run, get)
                c, d = cpu_per_phase(run, ph), dev_cpu_per_phase(run, ph)
                if c is not None:
                    acc.append(c)
                if d is not None:
                    dacc.append(d)
        if not rs:
            continue
        good = [x > 1 if better == "higher" else x < 1 for x in rs]
        out[(wid, label)] = {
            "unit": unit, "better": better, "ratios": rs, "median": statistics.median(rs),
            "ci95": bootstrap_ci(rs), "better_blocks": sum(good),
            "cpu_a": statistics.median(ca) if ca else None,
            "cpu_b": statistics.median(cb) if cb else None,
            "dev_cpu_a": statistics.median(da) if da else None,
            "dev_cpu_b": statistics.median(db) if db else None}
    return out


def _phase_of(run, get):
    """The phase whose line a getter reads: the first phase for which it
    gives a figure."""
    for ln in run.get("lines", []):
        if ln.get("rc") == 0 and get({"lines": [ln]}) is not None:
            return ln.get("phase")
    return None


def analyse_all(data):
    """{pair name: analyse()} with "claim" set on every row of every pair
    but the control, from the control's row."""
    out = {n: analyse(d.get("lines") or []) for n, d in (data or {}).items()}
    ctl = out.get(CONTROL, {})
    for n, an in out.items():
        if n == CONTROL:
            continue
        for key, st in an.items():
            st["claim"] = claim(st, ctl.get(key), st["better"])
    return out
