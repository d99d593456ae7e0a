# SPDX-License-Identifier: GPL-2.0
"""bench/ab-verdict.sh DIR: the verdict of an A/B run in one guest, from
ab-in-guest.sh's --out directory DIR (bench/ab-uml.sh --verdict prints it
for its own run).

The rounds are compared as make bench's paired boot compares them
(benchlib/paired.py): per row, each pair's ratio round by round (a's
figure over b's), the median with its 95 % bootstrap interval, and a
verdict: "faster" or "slower" where the interval excludes 1.00 and the A/A
control (intree-again vs intree: one driver under two labels) holds 1.00
on that row, "no difference resolved" where the pair's interval holds
1.00, "not resolved: the control moved" where the control's does not (the
run's noise alone made a difference there). Without intree-again, or with
fewer than two rounds, no verdict is given, and a row with fewer than five
rounds is "too few rounds to resolve". Ratios are B/A as the
configurations' names say: "ours-sync vs intree 0.70x" on a latency row
is ours-sync taking 0.70 of in-tree's time.
"""
import sys

from benchlib import paired
from benchlib.collect import ab_rounds

VERDICT = {"faster": "faster", "slower": "slower", "no claim": "no difference resolved"}


# A percentile bootstrap of the median of fewer rounds is little more than
# their range: no verdict from so few.
MIN_ROUNDS = 5


def verdict(st, ctl):
    if len(st["ratios"]) < MIN_ROUNDS:
        return "too few rounds to resolve (%d; %d or more)" % (len(st["ratios"]), MIN_ROUNDS)
    if st.get("claim") in ("faster", "slower"):
        return st["claim"]
    if ctl and ctl.get("ci95") and not ctl["ci95"][0] <= 1.0 <= ctl["ci95"][1]:
        return "not resolved: the control moved"
    if st.get("claim") is None:
        return "no verdict (no control)"
    return VERDICT[st["claim"]]


def lines(runs):
    """The verdict's lines for RUNS (collect.ab_rounds)."""
    rounds = len({r["round"] for r in runs})
    have = {r["config"] for r in runs}
    out = ["A/B verdict: %d round(s) of %s" % (rounds, " ".join(sorted(have)))]
    if rounds < 2 or paired.CONTROL[0] not in have:
        out.append("no verdict: it takes two rounds or more and the A/A control "
                   "(configurations intree-again and intree)")
        return out
    for (_, label), row in paired.analyse({"runs": runs}).items():
        ctl = row.get(paired.CONTROL)
        for pair in paired.PAIRS:
            st = row.get(pair)
            if st is None:
                continue
            ci = st.get("ci95")
            word = "A/A control" if pair == paired.CONTROL else verdict(st, ctl)
            out.append("%-44s %-24s %.2fx [%s] %s (%s is better)" % (
                label, "%s vs %s" % pair, st["median"],
                "%.2f-%.2f" % tuple(ci) if ci else "-", word, row["better"]))
    return out


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stdout.write(__doc__)
        return 2
    runs = ab_rounds(argv[1])
    if not runs:
        print("%s: no rounds (ab-in-guest.sh --out)" % argv[1])
        return 1
    print("\n".join(lines(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
