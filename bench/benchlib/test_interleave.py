# SPDX-License-Identifier: GPL-2.0
"""benchlib/interleave.py and its report section: the ABBA blocks of
bench/interleave.sh."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

from benchlib import bench, interleave
from benchlib.test_report import data, line, main_run, rendered, rep


def side(k, sd, pos, att, unlink_us, fio_mib):
    lab = "block=%d side=%s pos=%d attempt=%d" % (k, sd, pos, att)
    s = {"bw": fio_mib * 1024, "iops": fio_mib * 256}
    return [line("unlink", label=lab, mean_ns=unlink_us * 1000, median_ns=unlink_us * 1000,
                 clock_pair_ns=1000, creates_per_s=1000.0, cpu_user_ticks=10,
                 cpu_sys_ticks=10 if sd == "a" else 5, dev_hz=100,
                 dev_cpu_ticks=30 if sd == "a" else 12),
            line("fio-1", label=lab, fio={"read": s, "write": s})]


def pair_lines(n, b_unlink, a_unlink=100.0, jitter=0.0, rerun_block=None):
    out = []
    for k in range(1, n + 1):
        attempts = 2 if k == rerun_block else 1
        for att in range(1, attempts + 1):
            j = jitter * (1 if k % 3 == 0 else -1 if k % 3 == 1 else 0)
            first, second = ("a", "b") if k % 2 else ("b", "a")
            bad = att < attempts  # the rerun attempt's figures are wild and must not count
            for pos, sd in ((1, first), (2, second)):
                us = (a_unlink if sd == "a" else b_unlink) + j + (1000 if bad else 0)
                out += side(k, sd, pos, att, us, 10.0)
            out.append({"phase": "block", "block": k, "attempt": att,
                        "order": "ab" if k % 2 else "ba", "steal_pct": 9.0 if bad else 0.5,
                        "over": bad, "rerun": bad})
    return out


class Analyse(unittest.TestCase):
    def test_ratios_per_block_last_attempt(self):
        lines = pair_lines(24, b_unlink=60.0, rerun_block=5)
        an = interleave.analyse(lines)
        st = an[("unlink", "mean, us")]
        self.assertEqual(len(st["ratios"]), 24)
        self.assertAlmostEqual(st["median"], 0.6)      # the rerun's first attempt left out
        self.assertEqual(st["better_blocks"], 24)
        self.assertEqual(st["ci95"], (0.6, 0.6))
        self.assertEqual((st["cpu_a"], st["cpu_b"]), (0.2, 0.15))
        self.assertEqual((st["dev_cpu_a"], st["dev_cpu_b"]), (0.3, 0.12))
        self.assertIsNone(an[("fio-1", "read MiB/s")]["dev_cpu_a"])   # not measured there
        self.assertEqual(interleave.reruns(lines), (1, 0))

    def test_claims_follow_the_intervals(self):
        prs = {"sync-vs-intree": {"lines": pair_lines(24, b_unlink=60.0, jitter=3.0)},
               "async-vs-intree": {"lines": pair_lines(24, b_unlink=100.0, jitter=3.0)},
               "aa": {"lines": pair_lines(24, b_unlink=100.0, jitter=3.0)}}
        an = interleave.analyse_all(prs)
        self.assertEqual(an["sync-vs-intree"][("unlink", "mean, us")]["claim"], "faster")
        self.assertEqual(an["async-vs-intree"][("unlink", "mean, us")]["claim"], "no claim")
        self.assertNotIn("claim", an["aa"][("unlink", "mean, us")])
        # a control that does not hold 1.00 leaves every pair without a claim
        prs["aa"] = {"lines": pair_lines(24, b_unlink=110.0, jitter=3.0)}
        an = interleave.analyse_all(prs)
        self.assertEqual(an["sync-vs-intree"][("unlink", "mean, us")]["claim"], "no claim")

    def test_report_section(self):
        d = data(with_smp=False)
        d["interleave"] = {"status": "run", "blocks": "24", "layout": "colocated",
                           "workloads": "unlink,fio", "steal_max": "5", "pin_device": "0",
                           "pin_guest": "1",
                           "pairs": {"sync-vs-intree": {"lines": pair_lines(24, 60.0, jitter=3.0,
                                                                            rerun_block=2),
                                                        "guest_status": 0},
                                     "aa": {"lines": pair_lines(24, 100.0, jitter=3.0),
                                            "guest_status": 0}}}
        text = rendered(d)
        self.assertIn("## Interleaved pairs", text)
        self.assertIn("| sync-vs-intree | ours-sync vs intree | the driver (and the sync path) "
                      "| 24 | 1 | 0 | 0.50 | 0 |", text)
        row = next(ln for ln in text.splitlines() if ln.startswith("| unlink | mean, us |"))
        self.assertIn("**faster**", row)
        self.assertIn("CPU 0.200 / 0.150 s, device 0.300 / 0.120 s", row)


class Goals(unittest.TestCase):
    def test_goals_from_the_pairs(self):
        d = data(with_smp=False)
        d["interleave"] = {"status": "run", "layout": "colocated", "pairs": {
            "sync-vs-intree": {"lines": pair_lines(24, 60.0, jitter=3.0)},
            "async-vs-intree": {"lines": pair_lines(24, 101.0, jitter=1.0)},
            "aa": {"lines": pair_lines(24, 100.0, jitter=1.0)}}}
        g = {x["figure"]: x for x in rep(d).interleave_goals()}
        um = g["unlink median (interleaved pairs, colocated)"]
        self.assertAlmostEqual(um["ratio"], 0.6, places=2)
        self.assertTrue(um["met"])                      # 0.60 <= 0.64, called faster
        self.assertTrue(um["mark"].startswith("interval 0.5"))
        f1 = g["fio 1 job, read MiB/s (interleaved pairs, colocated)"]
        self.assertFalse(f1["met"])                     # 1.00x, no claim
        par = g["ours-async vs in-tree, every row (interleaved pairs, colocated)"]
        self.assertTrue(par["met"], par)                # 1 % off at most
        # the like-for-like pair's row only where that pair ran
        self.assertNotIn("ours-async vs in-tree, every row, each FORGET sent alone on both "
                         "(interleaved pairs, colocated)", g)
        d["interleave"]["pairs"]["async1-vs-intree"] = {"lines": pair_lines(24, 100.5,
                                                                            jitter=1.0)}
        g = {x["figure"]: x for x in rep(d).interleave_goals()}
        one = g["ours-async vs in-tree, every row, each FORGET sent alone on both "
                "(interleaved pairs, colocated)"]
        self.assertTrue(one["met"], one)
        self.assertIn("async1-vs-intree", one["detail"])
        aa = g["A/A pair resolves 3 % (interleaved pairs, colocated)"]
        self.assertTrue(aa["met"], aa)
        noisy = pair_lines(24, 100.0)
        for ln in noisy:   # B 10 % either side of A, block by block
            if "side=b" in ln.get("label", "") and ln["phase"] == "unlink":
                k = int(ln["label"].split()[0].split("=")[1])
                ln["mean_ns"] *= 1.1 if k % 2 else 0.9
        d["interleave"]["pairs"]["aa"] = {"lines": noisy}
        d["interleave"]["pairs"]["async-vs-intree"] = {"lines": pair_lines(24, 105.0)}
        g = {x["figure"]: x for x in rep(d).interleave_goals()}
        self.assertFalse(g["A/A pair resolves 3 % (interleaved pairs, colocated)"]["met"])
        par = g["ours-async vs in-tree, every row (interleaved pairs, colocated)"]
        self.assertFalse(par["met"])
        self.assertIn("unlink", par["detail"])
        # the ratio is the row's B/A, inside the interval printed beside it
        lo, hi = (float(x) for x in par["mark"].split()[1].split("–"))
        self.assertTrue(lo <= round(par["ratio"], 2) <= hi, par)

    def test_colocated_goals_from_the_boots(self):
        d = data(with_smp=False)
        for i in range(2):
            d["runs"].append(main_run("intree-colocated", 30 + i, 100 + i, 10.0, 10.0))
            d["runs"].append(main_run("ours-sync-colocated", 30 + i, 55 + i, 14.0, 7.0))
            d["runs"].append(main_run("ours-async-colocated", 30 + i, 100 + i, 10.0, 10.0))
        g = {x["figure"]: x for x in rep(d).goal_figures()}
        self.assertAlmostEqual(g["unlink median (colocated)"]["ratio"], 55.5 / 100.5, places=4)
        self.assertTrue(g["fio 1 job, read MiB/s (colocated)"]["met"])
        self.assertAlmostEqual(g["build, make elapsed (colocated)"]["ratio"], 0.7)
        self.assertIn("ours-async vs in-tree, every row (colocated)", g)


class Args(unittest.TestCase):
    def test_sides_and_placement(self):
        s = bench.Settings({"BENCH_PIN_DEVICE": "0", "BENCH_PIN_GUEST": "1"})
        args = bench.interleave_args(s, "sync-vs-async", ["/A", "/B"])
        self.assertEqual(args[args.index("--sync") + 1], "on")
        self.assertEqual(args[args.index("--pin-device") + 1], "1")   # colocated by default
        a = args[args.index("/A") + 1:args.index("--share", args.index("/A"))]
        b = args[args.index("/B") + 1:]
        self.assertEqual(a, ["--driver", "ours", "--dev-opts",
                             "--sync-queues=0 --no-async-dio --populate-memory --file-handles"])
        self.assertEqual(b, ["--driver", "ours", "--dev-opts", "--populate-memory --file-handles"])
        args = bench.interleave_args(s, "async-dio", ["/A", "/B"])
        a = args[args.index("/A") + 1:args.index("--share", args.index("/A"))]
        b = args[args.index("/B") + 1:]
        self.assertEqual(a[-1], "--sync-queues=0 --populate-memory --file-handles")
        self.assertEqual(b[-1], "--sync-queues=0 --no-async-dio --populate-memory --file-handles")
        args = bench.interleave_args(s, "async-vs-intree", ["/A", "/B"])
        self.assertEqual(args[args.index("--sync") + 1], "off")
        # FORGETs one a message on ours too: the mount option, on B only
        args = bench.interleave_args(s, "async1-vs-intree", ["/A", "/B"])
        self.assertEqual(args[args.index("--sync") + 1], "off")
        a = args[args.index("/A") + 1:args.index("--share", args.index("/A"))]
        b = args[args.index("/B") + 1:]
        self.assertNotIn("--mount-opts", a)
        self.assertEqual(b[b.index("--mount-opts") + 1], "forget_batch=1")
        args = bench.interleave_args(s, "forget-batch", ["/A", "/B"])
        a = args[args.index("/A") + 1:args.index("--share", args.index("/A"))]
        b = args[args.index("/B") + 1:]
        self.assertEqual(a[a.index("--mount-opts") + 1], "forget_batch=1")
        self.assertNotIn("--mount-opts", b)
        self.assertEqual(a[-1], b[-1])                  # the devices alike
        s = bench.Settings({"BENCH_PIN_DEVICE": "0", "BENCH_PIN_GUEST": "1",
                            "BENCH_INTERLEAVE_LAYOUT": "split"})
        args = bench.interleave_args(s, "aa", ["/A", "/B"])
        self.assertEqual(args[args.index("--pin-device") + 1], "0")
        self.assertEqual(args.count("--driver"), 2)


class DeviceCpu(unittest.TestCase):
    def test_tree_ticks_count_a_forked_child(self):
        # a parent that only waits, and its child that burns 0.4 s of CPU
        # and then sleeps: the reference device's sandbox is such a pair
        burn = ("import time\nwhile time.process_time() < 0.4: pass\n"
                "time.sleep(60)\n")
        parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; "
                                   "subprocess.run([sys.executable, '-c', %r])" % burn])
        try:
            deadline = time.time() + 30
            while bench.tree_cpu_ticks(parent.pid) < 0.4 * os.sysconf("SC_CLK_TCK") - 2:
                self.assertLess(time.time(), deadline, "the child's CPU never showed")
                time.sleep(0.1)
            with open("/proc/%d/stat" % parent.pid) as f:
                own = f.read().rsplit(")", 1)[1].split()
            self.assertLess(int(own[11]) + int(own[12]), 0.3 * os.sysconf("SC_CLK_TCK"))
        finally:
            with open("/proc/%d/task/%d/children" % (parent.pid, parent.pid)) as f:
                for c in f.read().split():
                    os.kill(int(c), 9)
            parent.wait()
        self.assertIsNone(bench.tree_cpu_ticks(parent.pid))

    def test_host_stat_file_has_both_devices_once_they_run(self):
        with tempfile.TemporaryDirectory() as share, tempfile.TemporaryDirectory() as b:
            hs = bench.HostStat(share, (share, b))
            devs = []
            try:
                hs.write()
                with open(os.path.join(share, bench.HOSTSTAT)) as f:
                    lines = f.read().splitlines()
                self.assertTrue(lines[0].startswith("cpu "))
                self.assertEqual(lines[1].split(), ["devcpu", "hz=%d" % os.sysconf("SC_CLK_TCK")])
                # a stand-in for each share's device, the second forking
                # a child with the same command line (the sandbox does)
                devs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)",
                                              "--shared-dir=" + share]))
                devs.append(subprocess.Popen(
                    [sys.executable, "-c", "import subprocess, sys; subprocess.run(sys.argv[1:])",
                     sys.executable, "-c", "import time; time.sleep(30)", "--shared-dir=" + b]))
                deadline = time.time() + 30
                while len(hs.device_pids()) < 2:
                    self.assertLess(time.time(), deadline, "the devices were not found")
                    time.sleep(0.1)
                self.assertEqual(hs.device_pids(), {"a": devs[0].pid, "b": devs[1].pid})
                hs.write()
                with open(os.path.join(share, bench.HOSTSTAT)) as f:
                    lines = f.read().splitlines()
                self.assertEqual(len(lines), 2)
                self.assertEqual([w.split("=")[0] for w in lines[1].split()[2:]], ["a", "b"])
                self.assertTrue(all(len(ln) == bench.HOSTSTAT_WIDTH for ln in lines))
            finally:
                hs.close()
                for d in devs:
                    with open("/proc/%d/task/%d/children" % (d.pid, d.pid)) as f:
                        for c in f.read().split():
                            os.kill(int(c), 9)
                    d.kill()
                    d.wait()
