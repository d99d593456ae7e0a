# SPDX-License-Identifier: GPL-2.0
"""The paired boot of make bench: every configuration runs once per round in
one UML boot (bench/ab-uml.sh, the driver swapped in the guest), and each
row's figure is compared round by round.

Between boots the noise is per boot: a slow boot is slow on every row, and
three boots per configuration can all land on one side (the A/A control of
2026-12-01-full-3). Inside one boot that term is the same for every
configuration. A pair's ratio is taken in each round (a's figure over b's
of the same round), and the report gives the median of those ratios, their
min–max and in how many rounds a was better. The control pair is
intree-again vs intree (the same driver under two labels): the min–max of
its per-round ratios on a row is what the rounds' noise alone makes of a
ratio there: its band is 1/m to m, m the control's ratio farthest from
1.00 (as a factor, in either direction), and a pair's median ratio outside
it is marked "beyond the control". (The control's own min–max need not
hold 1.00: with four rounds it lies on one side of it one time in eight.)

Each pair also gets the 95 % percentile-bootstrap interval of its median
per-round ratio (stats.bootstrap_ci). A pair is called faster or slower
("claim") only where its interval excludes 1.00 and the control's interval
on that row holds 1.00 (the method resolves that row); otherwise it is "no
claim". With few rounds the interval is wide: four rounds give at most the
range of their ratios.

benchlib/collect.py's paired() reads RAW/paired-status and RAW/paired/
(bench.py's paired step) into the JSON's "paired"; analyse() works on
that."""
import statistics

from benchlib import metrics
from benchlib.stats import bootstrap_ci

CONTROL = ("intree-again", "intree")
PAIRS = (("ours-sync", "intree"), ("ours-async", "intree"), ("ours-sync", "ours-async"), CONTROL)


def rows():
    """(workload id, label, unit, better, getter) of every table row a
    paired round can have (the main boots' rows)."""
    for wid, _, rs in metrics.workloads():
        for label, unit, better, get, kind in rs:
            if kind == "main":
                yield wid, label, unit, better, get


def round_ratios(vals, a, b):
    """a's figure over b's, one per round where both have it, in round
    order; VALS maps (config, round) to the row's figure."""
    return [vals[(a, n)] / vals[(b, n)] for c, n in sorted(vals, key=lambda k: k[1])
            if c == a and vals[(c, n)] is not None and vals.get((b, n))]


def analyse(data, pairs=PAIRS):
    """{(wid, label): {"unit", "better", (a, b): {"ratios", "median", "min",
    "max", "better_rounds", "beyond_control"}}} for the pairs the rounds
    have. beyond_control is None where the control pair is missing or has
    fewer than two rounds on the row."""
    runs = (data or {}).get("runs") or []
    have = {r["config"] for r in runs}
    out = {}
    for wid, label, unit, better, get in rows():
        vals = {(r["config"], r["round"]): get(r) for r in runs}
        row = {}
        for a, b in pairs:
            if a not in have or b not in have:
                continue
            rs = round_ratios(vals, a, b)
            if not rs:
                continue
            good = [x > 1 if better == "higher" else x < 1 for x in rs]
            row[(a, b)] = {"ratios": rs, "median": statistics.median(rs), "min": min(rs),
                           "max": max(rs), "better_rounds": sum(good),
                           "ci95": bootstrap_ci(rs)}
        if not row:
            continue
        ctl = row.get(CONTROL)
        m = band(ctl["ratios"]) if ctl and len(ctl["ratios"]) >= 2 else None
        if ctl:
            ctl["band"] = m
        for pair, st in row.items():
            if pair == CONTROL or m is None:
                st["beyond_control"] = None
            else:
                st["beyond_control"] = not 1 / m <= st["median"] <= m
            st["claim"] = None if pair == CONTROL else claim(st, ctl, better)
        out[(wid, label)] = dict(row, unit=unit, better=better)
    return out


def claim(st, ctl, better):
    """"faster", "slower" or "no claim" for a pair's row: faster or slower
    only where the pair's 95 % interval excludes 1.00 and the control's
    holds it; None without a control interval."""
    if not ctl or not ctl.get("ci95") or not st.get("ci95"):
        return None
    lo, hi = st["ci95"]
    clo, chi = ctl["ci95"]
    if not clo <= 1.0 <= chi or lo <= 1.0 <= hi:
        return "no claim"
    up = lo > 1.0
    return "faster" if up == (better == "higher") else "slower"


def band(ratios):
    """m of the control's band 1/m..m: its ratio farthest from 1.00."""
    return max(max(x, 1 / x) for x in ratios if x > 0)


def mark(st):
    if st.get("beyond_control") is None:
        return ""
    return "**beyond the control**" if st["beyond_control"] else "within the control"


def cell(st):
    """median ratio (min–max), its 95 % interval, a better in K of N
    rounds, the mark and the claim."""
    word = mark(st)
    if st.get("band"):
        word = "band %.2f–%.2f" % (1 / st["band"], st["band"])
    ci = st.get("ci95")
    words = [w for w in (word, st.get("claim") if st.get("claim") != "no claim" else None) if w]
    return "%.2f× (%.2f–%.2f)%s, %d/%d%s" % (
        st["median"], st["min"], st["max"],
        ", 95 %% CI %.2f–%.2f" % ci if ci else "",
        st["better_rounds"], len(st["ratios"]), "".join(", " + w for w in words))


def perf(st, better):
    """A pair's median ratio as a performance ratio (higher is better)."""
    return st["median"] if better == "higher" else 1.0 / st["median"]


def every_row(an, a, b, skip=()):
    """The worst row of A vs B as a performance ratio: (perf, wid, label,
    mark, rows below 0.97, rows of them beyond the control, rows), or None."""
    worst, below, beyond, n = None, 0, 0, 0
    for (wid, label), row in an.items():
        st = row.get((a, b))
        if st is None or label in skip or not st["median"]:
            continue
        p = perf(st, row["better"])
        n += 1
        if p < 0.97:
            below += 1
            beyond += bool(st.get("beyond_control"))
        if worst is None or p < worst[0]:
            worst = (p, wid, label, mark(st))
    if worst is None:
        return None
    return worst + (below, beyond, n)
