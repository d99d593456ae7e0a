# SPDX-License-Identifier: GPL-2.0
"""Medians over boots, their spread, ratios of medians (marked beyond or
within the spread), bootstrap intervals, and how the report prints them."""
import random
import statistics


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return "{:,.0f}".format(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3f" % v


def stats3(vals):
    """(median, min, max, n) of the values that are not None, or None."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return (statistics.median(vals), min(vals), max(vals), len(vals))


def rel_range(s):
    """The spread of stats3 S: (max - min) / |median|, or None (one value,
    or a median of 0)."""
    if s is None or s[3] < 2 or s[0] == 0:
        return None
    return (s[2] - s[1]) / abs(s[0])


def cell(s, spread=False):
    """median (min–max), and with SPREAD the relative range in per cent."""
    if s is None:
        return "-"
    med, lo, hi, n = s
    if n == 1:
        return fmt(med)
    rr = rel_range(s) if spread else None
    if rr is not None:
        return "%s (%s–%s; %.0f %%)" % (fmt(med), fmt(lo), fmt(hi), rr * 100)
    return "%s (%s–%s)" % (fmt(med), fmt(lo), fmt(hi))


def beyond_spread(a, b):
    """True when the min–max ranges of A and B (stats3, two values or more
    each) do not overlap: every value of one lies on the same side of every
    value of the other; False when they overlap; None with fewer values."""
    if a is None or b is None or a[3] < 2 or b[3] < 2:
        return None
    return a[1] > b[2] or b[1] > a[2]


def ratio_cell(a, b, better):
    """a vs b: ratio of medians and what it means."""
    if a is None or b is None or b[0] == 0:
        return "-"
    r = a[0] / b[0]
    good = r > 1 if better == "higher" else r < 1
    change = (r - 1) * 100
    word = "better" if good else ("same" if abs(change) < 0.5 else "worse")
    sp = beyond_spread(a, b)
    mark = "" if sp is None else (", **beyond spread**" if sp else ", within spread")
    return "%.2f× (%+.1f %%, %s%s)" % (r, change, word, mark)


def bootstrap_ci(vals, stat=statistics.median, level=0.95, n=2000, seed=1):
    """The percentile bootstrap interval (lo, hi) of STAT over VALS at
    LEVEL: STAT of N resamples drawn with replacement, cut at the
    (1 - LEVEL) / 2 quantiles. Seeded, so one JSON always gives one
    report. None with fewer than two values."""
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return None
    rng = random.Random(seed)
    k = len(vals)
    est = sorted(stat([vals[rng.randrange(k)] for _ in range(k)]) for _ in range(n))
    cut = (1 - level) / 2
    return (est[int(cut * (n - 1))], est[int(round((1 - cut) * (n - 1)))])
