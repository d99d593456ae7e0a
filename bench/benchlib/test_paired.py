# SPDX-License-Identifier: GPL-2.0
"""Tests of the paired boot (benchlib/paired.py, collect.paired, the report's
section and goals, bench.py's settings and command) on made-up rounds: no
guest is booted. python3 -m unittest discover -s bench/benchlib -t bench"""
import collections
import json
import os
import subprocess
import tempfile
import unittest

from benchlib import bench, collect, paired, report, report_common
from benchlib.test_report import line, rendered


def rnd(cfg, r, unlink_us, make_s):
    return {"config": cfg, "round": r, "position": None, "driver_stats": [],
            "lines": [line("nullsys", mean_ns=1000.0),
                      line("unlink", mean_ns=unlink_us * 1000, median_ns=unlink_us * 1000,
                           clock_pair_ns=1000, creates_per_s=1000.0),
                      line("build-make", elapsed_s=make_s)]}


def rounds():
    """Four rounds. Boot-to-boot style drift (round 3 slow for everyone)
    cancels in the per-round ratios; the control differs by 2-5 %."""
    slow = {1: 1.0, 2: 1.0, 3: 2.0, 4: 1.0}
    runs = []
    for r, k in slow.items():
        runs.append(rnd("intree", r, 100 * k, 10 * k))
        runs.append(rnd("intree-again", r, (100 + r) * k, 10.2 * k))
        runs.append(rnd("ours-async", r, 99 * k, 10.4 * k))
        runs.append(rnd("ours-sync", r, 60 * k, 9.9 * k))
    return {"status": "run", "rounds": "4", "size": "reduced", "pin_device": "0",
            "pin_guest": "1", "runs": runs}


class Analyse(unittest.TestCase):
    def test_round_ratios_cancel_a_slow_round(self):
        an = paired.analyse(rounds())
        st = an[("unlink", "mean, us")][("ours-sync", "intree")]
        self.assertEqual(len(st["ratios"]), 4)
        for x in st["ratios"]:
            self.assertAlmostEqual(x, 0.6, places=6)  # round 3's 2x is gone
        self.assertEqual(st["better_rounds"], 4)
        self.assertTrue(st["beyond_control"])  # 0.60 outside 1.01-1.04

    def test_within_the_control(self):
        an = paired.analyse(rounds())
        st = an[("unlink", "mean, us")][("ours-async", "intree")]
        self.assertAlmostEqual(st["median"], 0.99, places=6)
        # the control's ratios are 1.01-1.04, its band 1/1.04-1.04: 0.99
        # lies below its min-max but inside the band
        self.assertAlmostEqual(an[("unlink", "mean, us")][paired.CONTROL]["band"], 1.04, places=6)
        self.assertFalse(st["beyond_control"])
        st = an[("build", "make elapsed, s")][("ours-async", "intree")]
        ctl = an[("build", "make elapsed, s")][paired.CONTROL]
        self.assertAlmostEqual(ctl["min"], 1.02, places=6)
        self.assertAlmostEqual(st["median"], 1.04, places=6)
        self.assertTrue(st["beyond_control"])
        ctl_row = an[("unlink", "mean, us")][paired.CONTROL]
        self.assertIsNone(ctl_row["beyond_control"])

    def test_no_control_no_mark(self):
        d = rounds()
        d["runs"] = [r for r in d["runs"] if r["config"] != "intree-again"]
        st = paired.analyse(d)[("unlink", "mean, us")][("ours-sync", "intree")]
        self.assertIsNone(st["beyond_control"])
        self.assertEqual(paired.mark(st), "")

    def test_every_row(self):
        an = paired.analyse(rounds())
        w = paired.every_row(an, "ours-async", "intree", report_common.GOAL_SKIP_ROWS)
        self.assertEqual(w[1:3], ("build", "make elapsed, s"))
        self.assertAlmostEqual(w[0], 1 / 1.04, places=6)
        self.assertEqual(w[4], 1)  # 0.96 < 0.97: one row below


AB_IN_GUEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                           "ab-in-guest.sh")


def williams(configs, r):
    """bench/ab-in-guest.sh's williams(): round R's order of CONFIGS."""
    with open(AB_IN_GUEST) as f:
        text = f.read()
    fn = text[text.index("williams() {"):]
    fn = fn[:fn.index("\n}\n") + 3]
    return subprocess.run(["sh", "-c", fn + "configs=$1; williams $2", "sh", configs, str(r)],
                          capture_output=True, text=True, check=True).stdout.split()


class BalancedOrder(unittest.TestCase):
    def test_every_position_and_predecessor_equally_often(self):
        for cfgs, rounds in (("A B C D", 4), ("A B C", 6), ("A B C D E F", 6)):
            names = cfgs.split()
            orders = [williams(cfgs, r) for r in range(rounds)]
            for o in orders:
                self.assertEqual(sorted(o), sorted(names))
            pos = collections.Counter((c, o.index(c)) for o in orders for c in o)
            self.assertEqual(set(pos.values()), {rounds // len(names)}, orders)
            after = collections.Counter((o[i], o[i + 1]) for o in orders for i in range(len(o) - 1))
            self.assertEqual(len(after), len(names) * (len(names) - 1), orders)
            self.assertEqual(len(set(after.values())), 1, orders)
        # the square repeats
        self.assertEqual(williams("A B C D", 4), williams("A B C D", 0))


class Collect(unittest.TestCase):
    def test_rounds_and_positions(self):
        with tempfile.TemporaryDirectory() as raw:
            ab = os.path.join(raw, "paired", "ab")
            os.makedirs(ab)
            with open(os.path.join(raw, "paired-status"), "w") as f:
                f.write("status=run\nrounds=2\nsize=quick\n")
            with open(os.path.join(ab, "order"), "w") as f:
                f.write("1 intree\n1 ours-sync\n2 ours-sync\n2 intree\n")
            for c, r, us in (("intree", 1, 100), ("ours-sync", 1, 50), ("ours-sync", 2, 55),
                             ("intree", 2, 110)):
                with open(os.path.join(ab, "%s-r%d.out" % (c, r)), "w") as f:
                    f.write(json.dumps(line("unlink", mean_ns=us * 1000.0, median_ns=us * 1000.0, clock_pair_ns=0)) + "\n")
            with open(os.path.join(ab, "ours-sync-r1.stats"), "w") as f:
                f.write("share queue=1 type=sync submitted=5 inline=5\n")
            pd = collect.paired(raw)
        self.assertEqual(pd["status"], "run")
        by = {(r["config"], r["round"]): r for r in pd["runs"]}
        self.assertEqual(by[("ours-sync", 2)]["position"], 1)
        self.assertEqual(by[("intree", 2)]["position"], 2)
        self.assertEqual(by[("ours-sync", 1)]["lines"][0]["mean_ns"], 50000.0)
        st = paired.analyse(pd)[("unlink", "mean, us")][("ours-sync", "intree")]
        self.assertEqual([round(x, 3) for x in st["ratios"]], [0.5, 0.5])

    def test_no_step(self):
        with tempfile.TemporaryDirectory() as raw:
            self.assertIsNone(collect.paired(raw))


class TimerLost(unittest.TestCase):
    def test_count_from_the_console(self):
        con = ("[ 1.0] x\nUML: timer expiry lost (1 so far), handled from idle\n"
               "UML: timer expiry lost (2 so far), handled from idle\n")
        self.assertEqual(collect.timer_lost(con), 2)
        self.assertEqual(collect.timer_lost("nothing"), 0)

    def test_report_names_the_boots(self):
        from benchlib.test_report import data
        d = data()
        d["runs"][0]["timer_lost"] = 3
        d["paired"] = dict(rounds(), timer_lost=1)
        md = rendered(d)
        self.assertIn("Boots whose UML kernel lost a timer expiry", md)
        self.assertIn("`%s` (3), `the paired boot` (1)" % d["runs"][0]["id"], md)


class Report(unittest.TestCase):
    def data(self):
        from benchlib.test_report import data
        d = data()
        d["paired"] = rounds()
        return d

    def test_section_and_goals(self):
        md = rendered(self.data())
        self.assertIn("## Paired rounds in one boot", md)
        self.assertIn("| workload | row | ours-sync vs intree | ours-async vs intree | "
                      "ours-sync vs ours-async | intree-again vs intree |\n| --- | --- | --- | --- "
                      "| --- | --- |\n", md)
        self.assertIn("| unlink | mean, us | 0.60× (0.60–0.60), 95 % CI 0.60–0.60, 4/4, "
                      "**beyond the control** |", md)
        self.assertIn("1.02× (1.01–1.04), 95 % CI 1.01–1.04, 0/4, band 0.96–1.04 |", md)
        g = report.Report(self.data(), "/tmp/x.json", "/tmp/x.md", "/tmp/x").goal_figures()
        um = next(x for x in g if x["figure"] == "unlink mean (paired rounds)")
        self.assertAlmostEqual(um["ratio"], 0.6, places=6)
        self.assertTrue(um["met"])
        self.assertEqual(um["mark"], "**beyond the control**")
        ctl = next(x for x in g if x["figure"].startswith("intree-again vs in-tree, every row ("))
        self.assertTrue(ctl["control"])
        self.assertIsNone(ctl["met"])

    def test_paired_boot_alone(self):
        d = {"format": "virtio-fs-sync-bench/1", "runs": [], "paired": rounds(),
             "env": {"command": "make bench", "size": "full", "repeats": "3", "host": "h"}}
        md = rendered(d)
        self.assertIn("## Paired rounds in one boot", md)
        self.assertIn("| host | h |", md)
        self.assertNotIn("boots per configuration", md)
        self.assertNotIn("UML workload sizes", md)

    def test_no_paired_no_section(self):
        from benchlib.test_report import data
        md = rendered(data())
        self.assertNotIn("## Paired rounds", md)


class Settings(unittest.TestCase):
    def test_defaults_and_command(self):
        s = bench.Settings({})
        self.assertEqual(s.paired_rounds, "4")
        self.assertEqual(s.paired_configs.split(), ["intree", "intree-again", "ours-async",
                                                    "ours-sync"])
        cmd, share = bench.paired_cmd(s, {"paired_tarball": "/t.tar.gz"}, "/out")
        self.assertIsNone(share)
        self.assertEqual(cmd[cmd.index("--repeats") + 1], "4")
        self.assertEqual(cmd[cmd.index("--order") + 1], "balanced")
        self.assertEqual(cmd[cmd.index("--tarball") + 1], "/t.tar.gz")
        tail = cmd[cmd.index("--") + 1:]
        self.assertEqual(tail[tail.index("--dev-opts") + 1], "--populate-memory --file-handles")
        self.assertIn("BENCH_PAIRED_ROUNDS=4", s.command())

    def test_bad_values(self):
        for env in ({"BENCH_PAIRED_ROUNDS": "many"}, {"BENCH_PAIRED_SIZE": "huge"},
                    {"BENCH_PAIRED_CONFIGS": "intree ours-sync-faithful"}):
            with self.assertRaises(ValueError):
                bench.Settings(env)

    def test_not_run(self):
        s = bench.Settings({"BENCH_PAIRED_ROUNDS": "0"})
        with tempfile.TemporaryDirectory() as raw:
            bench.run_paired(s, {"raw": raw})
            pd = collect.paired(raw)
        self.assertTrue(pd["status"].startswith("not run"))
        self.assertEqual(pd["runs"], [])


if __name__ == "__main__":
    unittest.main()


class Interval(unittest.TestCase):
    def test_bootstrap_interval(self):
        from benchlib.stats import bootstrap_ci
        self.assertIsNone(bootstrap_ci([1.0]))
        self.assertEqual(bootstrap_ci([2.0, 2.0, 2.0]), (2.0, 2.0))
        lo, hi = bootstrap_ci([0.5, 0.6, 0.7, 0.8, 0.9] * 6)
        self.assertTrue(0.5 <= lo < 0.7 < hi <= 0.9, (lo, hi))
        # seeded: one set of values, one interval
        self.assertEqual(bootstrap_ci([1, 5, 2, 8, 3]), bootstrap_ci([1, 5, 2, 8, 3]))

    def test_claim_needs_both_intervals(self):
        ctl = {"ci95": (0.97, 1.03)}
        self.assertEqual(paired.claim({"ci95": (0.55, 0.65)}, ctl, "lower"), "faster")
        self.assertEqual(paired.claim({"ci95": (0.55, 0.65)}, ctl, "higher"), "slower")
        self.assertEqual(paired.claim({"ci95": (1.2, 1.4)}, ctl, "higher"), "faster")
        self.assertEqual(paired.claim({"ci95": (0.9, 1.1)}, ctl, "lower"), "no claim")
        # a control whose interval excludes 1.00: the method does not resolve the row
        self.assertEqual(paired.claim({"ci95": (0.55, 0.65)}, {"ci95": (1.01, 1.04)}, "lower"),
                         "no claim")
        self.assertIsNone(paired.claim({"ci95": (0.55, 0.65)}, None, "lower"))


class Verdict(unittest.TestCase):
    """bench/ab-verdict.sh (benchlib/verdict.py) on the same made-up rounds."""

    def setUp(self):
        from benchlib import verdict
        self.verdict = verdict

    def find(self, out, label, pair):
        hits = [ln for ln in out if ln.startswith(label) and " %s vs %s " % pair in ln]
        self.assertEqual(len(hits), 1, out)
        return hits[0]

    def test_every_pair_a_ratio_an_interval_and_a_word(self):
        out = self.verdict.lines(rounds()["runs"])
        self.assertTrue(out[0].startswith("A/B verdict: 4 round(s)"), out)
        ln = self.find(out, "mean, us", ("ours-sync", "intree"))
        # 0.60 in every round: an interval of one point, but four rounds
        self.assertIn("0.60x [0.60-0.60]", ln)
        self.assertIn("too few rounds to resolve (4; 5 or more)", ln)
        self.assertIn("A/A control", self.find(out, "mean, us", paired.CONTROL))

    def test_faster_where_the_control_holds_one(self):
        runs = []
        for r in range(1, 7):
            runs.append(rnd("intree", r, 100, 10))
            runs.append(rnd("intree-again", r, 100 + (-1) ** r, 10))
            runs.append(rnd("ours-sync", r, 60 + r % 2, 10))
        out = self.verdict.lines(runs)
        self.assertIn(" faster ", self.find(out, "mean, us", ("ours-sync", "intree")))

    def test_not_resolved_where_the_control_moved(self):
        runs = []
        for r in range(1, 7):
            runs.append(rnd("intree", r, 100, 10))
            runs.append(rnd("intree-again", r, 102 + r, 10))
            runs.append(rnd("ours-sync", r, 60, 10))
        out = self.verdict.lines(runs)
        self.assertIn("not resolved: the control moved",
                      self.find(out, "mean, us", ("ours-sync", "intree")))

    def test_too_few_rounds(self):
        runs = [r for r in rounds()["runs"] if r["round"] <= 3]
        self.assertIn("too few rounds to resolve (3; 5 or more)",
                      self.find(self.verdict.lines(runs), "mean, us", ("ours-sync", "intree")))

    def test_no_verdict_without_the_control_or_rounds(self):
        runs = [r for r in rounds()["runs"] if r["config"] != "intree-again"]
        self.assertIn("no verdict", self.verdict.lines(runs)[-1])
        runs = [r for r in rounds()["runs"] if r["round"] == 1]
        self.assertIn("no verdict", self.verdict.lines(runs)[-1])
