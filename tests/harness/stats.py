# SPDX-License-Identifier: GPL-2.0
"""Medians over boots, ratios of medians, and how the report prints them."""
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


def cell(s):
    if s is None:
        return "-"
    med, lo, hi, n = s
    if n == 1:
        return fmt(med)
    return "%s (%s–%s)" % (fmt(med), fmt(lo), fmt(hi))


def ratio_cell(a, b, better):
    """a vs b: ratio of medians and what it means."""
    if a is None or b is None or b[0] == 0:
        return "-"
    r = a[0] / b[0]
    good = r > 1 if better == "higher" else r < 1
    change = (r - 1) * 100
    word = "better" if good else ("same" if abs(change) < 0.5 else "worse")
    return "%.2f× (%+.1f %%, %s)" % (r, change, word)
