# SPDX-License-Identifier: GPL-2.0
"""Tests of the bench report's kick floor, breakdown, goal figures and
headline (benchlib/report.py) on made-up JSON: no guest is booted.
python3 -m unittest discover -s bench/benchlib -t bench"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from benchlib import bench, collect, report, report_common

REPORT_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                         "report.py")


def line(phase, **kw):
    d = {"phase": phase, "rc": 0, "hz": 100, "cpu_user_ticks": 0, "cpu_sys_ticks": 0}
    d.update(kw)
    return d


def fio(mib):
    s = {"bw": mib * 1024, "iops": mib * 256}
    return {"read": s, "write": s}


def main_run(cfg, i, unlink_us, fio_mib, make_s, seqread=100.0, kick_ns=None):
    lines = [line("env", size="quick"),
             line("nullsys", mean_ns=1000.0),
             line("unlink", mean_ns=unlink_us * 1000, median_ns=unlink_us * 1000,
                  clock_pair_ns=1000, creates_per_s=1000.0),
             line("fio-1", fio=fio(fio_mib)),
             line("seqread", mib_per_s=seqread),
             line("build-make", elapsed_s=make_s)]
    if kick_ns:
        lines.append(line("kickfloor", kicks=2000, busy=0, min_ns=kick_ns // 2,
                          median_ns=kick_ns, mean_ns=kick_ns, max_ns=kick_ns * 4))
    return {"id": "%03d-main-%s" % (i, cfg), "kind": "main", "config": cfg, "repeat": 1, "rc": 0,
            "lines": lines, "dev_stats": [], "driver_stats": [], "load_before": "1.0 1.0 1.0",
            "load_after": "1.0 1.0 1.0"}


def floor_run(cfg, i, stat_us, per_op, kick_ns=None):
    n = 1000
    lines = [line("env", size="quick"), line("nullsys", mean_ns=1000.0),
             line("statloop", n=n, mean_ns=stat_us * 1000, sync_submitted=per_op * n)]
    if kick_ns:
        lines.append(line("kickfloor", kicks=2000, busy=0, min_ns=kick_ns // 2,
                          median_ns=kick_ns, mean_ns=kick_ns, max_ns=kick_ns * 4))
    return {"id": "%03d-floor-%s" % (i, cfg), "kind": "floor", "config": cfg, "repeat": 1,
            "rc": 0, "lines": lines, "load_before": "1.0 1.0 1.0", "load_after": "1.0 1.0 1.0",
            "dev_stats": [{"queue": 2, "type": "sync", "requests": per_op * n + 10}],
            "driver_stats": []}


def smp_run(cfg, i, mib):
    return {"id": "%03d-smp-%s" % (i, cfg), "kind": "smp", "config": cfg, "repeat": 1, "rc": 0,
            "lines": [line("env", size="quick"), line("fio-n", fio=fio(mib))], "dev_stats": [],
            "driver_stats": [], "load_before": "1.0 1.0 1.0", "load_after": "1.0 1.0 1.0"}


def data(seqread_sync=100.0, with_smp=True, kick=True):
    runs = []
    for i in range(2):
        runs.append(main_run("intree", i, 100 + i, 10.0 + i, 10.0 + i))
        runs.append(main_run("ours-async", i, 101 + i, 10.0 + i, 10.0 + i))
        runs.append(main_run("ours-sync", i, 50 + i, 11.0 + i, 9.0 + i, seqread=seqread_sync,
                             kick_ns=20000 + 1000 * i if kick else None))
        runs.append(floor_run("intree", i, 120.0, 3))
        runs.append(floor_run("ours-sync", i, 90.0 + i, 3, kick_ns=20000 + 1000 * i if kick else None))
        if with_smp:
            runs.append(smp_run("smp-intree", i, 10.0 + i))
            runs.append(smp_run("smp-ours-sync", i, 14.0 + i))
    return {"format": "virtio-fs-sync-bench/1", "env": {"command": "make bench"}, "runs": runs}


def rep(d):
    return report.Report(d, "/tmp/x.json", "/tmp/x.md", "/tmp/x")


def rendered(d):
    """The Markdown report.render() writes for the run data d."""
    with tempfile.TemporaryDirectory() as t:
        j = os.path.join(t, "r.json")
        with open(j, "w") as f:
            json.dump(d, f)
        md = os.path.join(t, "r.md")
        report.render(j, md, os.path.join(t, "svg"))
        with open(md) as f:
            return f.read()


def goal(goals, prefix):
    return next(g for g in goals if g["figure"].startswith(prefix))


class GoalFigures(unittest.TestCase):
    def test_ratios_marks_and_verdicts(self):
        g = rep(data()).goal_figures()
        um = goal(g, "unlink mean")
        self.assertAlmostEqual(um["ratio"], 50.5 / 100.5, places=4)
        self.assertEqual(um["met"], True)
        self.assertEqual(um["mark"], "beyond spread")
        f1 = goal(g, "fio 1 job, read")
        self.assertAlmostEqual(f1["ratio"], 11.5 / 10.5, places=4)
        self.assertEqual(f1["met"], False)  # 1.10 < 1.32
        self.assertEqual(f1["mark"], "within spread")
        fn = goal(g, "fio one job per vCPU, read")
        self.assertAlmostEqual(fn["ratio"], 14.5 / 10.5, places=4)
        self.assertEqual(fn["met"], True)
        b = goal(g, "build")
        self.assertAlmostEqual(b["ratio"], 9.5 / 10.5, places=4)
        self.assertEqual(b["met"], False)  # 0.90 > 0.80

    def test_worst_row(self):
        g = rep(data(seqread_sync=80.0)).goal_figures()
        w = goal(g, "ours-sync vs in-tree, every row")
        self.assertEqual(w["met"], False)
        self.assertAlmostEqual(w["ratio"], 0.8, places=4)
        self.assertIn("read (caches dropped)", w["detail"])
        a = goal(g, "ours-async vs in-tree, every row")
        self.assertAlmostEqual(a["ratio"], 99.5 / 100.5, places=4)  # unlink minus the pair, +1 us
        self.assertEqual(a["met"], True)

    def test_faithful_layout_goals(self):
        d = data()
        for i in range(2):
            d["runs"].append(main_run("ours-sync-faithful", 10 + i, 25 + i, 40.0 + i, 7.0 + i))
        g = rep(d).goal_figures()
        um = goal(g, "unlink mean (ours-sync-faithful)")
        self.assertAlmostEqual(um["ratio"], 25.5 / 100.5, places=4)
        self.assertIn("ours-sync-faithful vs intree", um["detail"])
        b = goal(g, "build, make elapsed (ours-sync-faithful)")
        self.assertAlmostEqual(b["ratio"], 7.5 / 10.5, places=4)
        self.assertEqual(b["met"], True)
        self.assertIsNotNone(goal(g, "ours-sync-faithful vs in-tree, every row")["ratio"])
        # ours-sync's own lines are unchanged, and a run without it has none
        self.assertAlmostEqual(goal(g, "build")["ratio"], 9.5 / 10.5, places=4)
        self.assertFalse([x for x in rep(data()).goal_figures() if "faithful" in x["figure"]])

    def test_faithful_smp_goal(self):
        d = data()
        for i in range(2):
            d["runs"].append(smp_run("smp-ours-sync-faithful", 30 + i, 20.0 + i))
        g = rep(d).goal_figures()
        f = goal(g, "fio one job per vCPU, read MiB/s (SMP UML 7.3, smp-ours-sync-faithful)")
        self.assertAlmostEqual(f["ratio"], 20.5 / 10.5, places=4)
        self.assertEqual(f["met"], True)
        self.assertIn("smp-ours-sync-faithful vs smp-intree", f["detail"])
        self.assertIn("smp-ours-sync-faithful vs smp-intree", rendered(d))
        self.assertFalse([x for x in rep(data()).goal_figures() if "smp-ours-sync-faithful"
                          in x["figure"]])

    def test_aa_control(self):
        d = data()
        for i in range(2):
            d["runs"].append(main_run("intree-again", 20 + i, 100 + i, 10.0 + i, 10.0 + i,
                                      seqread=90.0))
        g = rep(d).goal_figures()
        c = goal(g, "intree-again vs in-tree, every row")
        self.assertTrue(c["control"])
        self.assertIsNone(c["met"])
        self.assertAlmostEqual(c["ratio"], 0.9, places=4)  # its sequential read, 90 vs 100
        self.assertIn("read (caches dropped)", c["detail"])
        text = rendered(d)
        self.assertIn("| control |", text)
        self.assertIn("The A/A control: `intree-again`", text)
        self.assertIn("Its worst row is 0.90×", text)
        with tempfile.TemporaryDirectory() as t:
            j = os.path.join(t, "r.json")
            with open(j, "w") as f:
                json.dump(d, f)
            head = "\n".join(report.headline(j))
        self.assertIn("intree-again vs in-tree, every row: 0.90× (the A/A control, no goal;", head)
        # a run without it has neither the row nor the paragraph
        self.assertFalse([x for x in rep(data()).goal_figures() if x.get("control")])
        self.assertNotIn("The A/A control", rendered(data()))

    def test_missing_rows_are_not_measured(self):
        g = rep(data(with_smp=False)).goal_figures()
        fn = goal(g, "fio one job per vCPU, read")
        self.assertIsNone(fn["ratio"])
        self.assertIsNone(fn["met"])


class KickFloor(unittest.TestCase):
    def test_floor_and_overhead(self):
        kf = rep(data()).kick_floor()
        fl = kf["floor_us"]["ours-sync"]
        self.assertEqual(fl[0], 20.5)         # median of the boots' medians (main and floor)
        self.assertEqual((fl[1], fl[2], fl[3]), (20.0, 21.0, 4))
        st = kf["stat"]["ours-sync"]
        self.assertEqual(st["per_op"][0], 3)
        self.assertAlmostEqual(st["per_request_us"][0], 90.5 / 3, places=4)
        # per boot: 90/3 - 20 and 91/3 - 21
        self.assertAlmostEqual(st["overhead_us"][0], (10.0 + 91 / 3 - 21) / 2, places=4)
        self.assertNotIn("intree", kf["floor_us"])

    def test_old_json_says_not_recorded(self):
        text = rendered(data(kick=False))
        self.assertIn("## Kick floor", text)
        self.assertIn("not recorded: no boot of this run has a kickfloor phase", text)
        self.assertIn("## Cost breakdown", text)
        self.assertIn("not recorded: this run had no breakdown step", text)
        self.assertIn("## Goal figures", text)


class ExitTimes(unittest.TestCase):
    def test_exit_histogram_per_configuration(self):
        d = data()
        for i, r in enumerate(x for x in d["runs"] if x["kind"] == "floor" and x["config"] == "ours-sync"):
            r["dev_stats"] = [
                {"budget_us": 2000, "watch": "auto-off"},
                {"queue": 2, "type": "sync", "requests": 100, "exits": 100, "exit_p50_us": 10 + i,
                 "exit_p99_us": 500, "exit_p999_us": 900, "exit_max_us": 1500 + i,
                 "defer_predicted": 3, "defer_watch": 1, "defer_budget": 0, "defer_nowait": 2,
                 "overrun": i},
                {"queue": 3, "type": "sync", "requests": 5, "exits": 5, "exit_p50_us": 99,
                 "exit_p99_us": 99, "exit_p999_us": 99, "exit_max_us": 3000,
                 "defer_predicted": 0, "defer_watch": 0, "defer_budget": 1, "overrun": 0}]
        text = rendered(d)
        self.assertIn("## Exit times", text)
        row = [ln for ln in text.splitlines() if ln.startswith("| ours-sync | 2 | 2000 |")]
        self.assertEqual(len(row), 1, text)
        cols = [c.strip() for c in row[0].split("|")[1:-1]]
        self.assertTrue(cols[3].startswith("105 "))  # exits per boot, both queues
        self.assertTrue(cols[4].startswith("10.5"))  # the busiest queue's p50, median of 10, 11
        self.assertTrue(cols[7].startswith("3,000 "))  # the longest over every queue
        self.assertEqual(cols[8], "6 / 2 / 2 / 4")
        self.assertEqual(cols[9], "1")
        self.assertNotIn("## Exit times", rendered(data()))

    def test_exit_histogram_of_an_interleaved_pair(self):
        d = data()
        sync = {"queue": 2, "type": "sync", "requests": 10, "exits": 12, "exit_p50_us": 3,
                "exit_p99_us": 40, "exit_p999_us": 70, "exit_max_us": 9000,
                "defer_predicted": 5, "defer_watch": 0, "defer_budget": 1, "defer_nowait": 2,
                "overrun": 1}
        d["interleave"] = {"status": "run", "pairs": {"sync-vs-intree": {
            "lines": [], "guest_status": 0, "driver_stats": [], "timer_lost": 0,
            "dev_stats": {"a": [{"budget_us": 2000}, {"queue": 1, "type": "request"}],
                          "b": [{"budget_us": 2000}, sync]}}}}
        text = rendered(d)
        row = [ln for ln in text.splitlines() if ln.startswith("| sync-vs-intree, B: ours-sync |")]
        self.assertEqual(len(row), 1, text)
        cols = [c.strip() for c in row[0].split("|")[1:-1]]
        self.assertEqual(cols[1:3], ["1", "2000"])
        self.assertTrue(cols[7].startswith("9,000"))
        self.assertEqual(cols[8], "5 / 0 / 1 / 2")
        # the in-tree side has no sync queue: no row
        self.assertNotIn("| sync-vs-intree, A: intree |", text)


class Breakdown(unittest.TestCase):
    def render(self, bd):
        d = data()
        d["breakdown"] = bd
        return rendered(d)

    def test_no_perf(self):
        text = self.render({"status": "not run: perf not found", "cases": []})
        self.assertIn("not run: perf not found", text)

    def test_parts_per_operation(self):
        case = {"case": "ours-sync-stat", "config": "ours-sync", "op": "stat", "period_ns": 1,
                "nsamples": 10, "windows": {"2": {"n": "100", "ns": "5000000"},
                                            "3": {"n": "100", "ns": "6000000"}},
                "window_role": {"w2": "plain", "w3": "perf"}, "samples": 4000000,
                "groups": {}, "parts": {"fuse": 1000000, "submit": 3000000},
                "host": {"submit": 2000000}, "debug": {}}
        text = self.render({"status": "run", "driver_version": "abc123", "flavor": "bench",
                            "wall_s": "42", "command": "bench/breakdown.sh", "cases": [case]})
        self.assertIn("abc123", text)
        self.assertIn("| FUSE core | 25.0 % (10.0 us) |", text)
        self.assertIn("| driver submit | 75.0 % (30.0 us) |", text)
        self.assertIn("| of which in the host kernel (host syscalls) | 50.0 % (20.0 us) |", text)
        self.assertIn("| wall us/op, no tool | 50.0 |", text)


    def test_build_breakdown(self):
        # bench/breakdown.py build_summary()'s shape, as collect.breakdown() keeps it
        summary = {
            "tmpfs": {"rounds": 1, "make_s": [4.0], "make_median_s": 4.0, "perf_make_s": [5.0],
                      "perf_make_median_s": 5.0, "groups": {"uml-kernel": 2.0, "guest-proc": 2.5},
                      "layers": {"FUSE core": 0.0}, "host_s": 3.0, "requests": {},
                      "device_s": {}, "driver_submitted": {}},
            "ours-sync": {"rounds": 1, "make_s": [10.0], "make_median_s": 10.0,
                          "perf_make_s": [12.0], "perf_make_median_s": 12.0,
                          "groups": {"uml-kernel": 4.0, "guest-proc": 2.5, "device": 1.5},
                          "layers": {"FUSE core": 0.25}, "host_s": 5.0,
                          "requests": {"sync/LOOKUP": 300, "request/READ": 100},
                          "device_s": {"sync/LOOKUP": 0.03, "request/READ": 0.01},
                          "driver_submitted": {"sync.0": 300}}}
        text = self.render({"status": "run", "cases": [],
                            "build": {"status": "run", "command": "bench/breakdown.sh --build 5",
                                      "wall_s": "99", "summary": summary}})
        self.assertIn("### The build workload", text)
        self.assertIn("bench/breakdown.sh --build 5", text)
        self.assertIn("| make elapsed s, no tool (median; each round) | 4.0 (4.0) | 10.0 (10.0) |", text)
        self.assertIn("| elapsed under perf - UML tree CPU s (guest off CPU) | 0.5 | 5.5 |", text)
        self.assertIn("| FUSE core | 0.0 | 0.2 |", text)
        self.assertIn("| LOOKUP | 300 (300 / 0 / 0) 30 ms |", text)
        self.assertIn("| READ | 100 (0 / 100 / 0) 10 ms |", text)
        self.assertIn("- ours-sync: 75.0 % of the requests (75.0 % of the device time) on sync "
                      "queues; not on them: request/READ 100.", text)

    def test_build_breakdown_not_run(self):
        text = self.render({"status": "run", "cases": [],
                            "build": {"status": "not run (BENCH_BREAKDOWN_BUILD=0)"}})
        self.assertIn("Build breakdown: not run (BENCH_BREAKDOWN_BUILD=0).", text)


class BuildMix(unittest.TestCase):
    def test_requests_in_the_window_and_summary(self):
        bd = report_common.breakdown_module()
        with tempfile.TemporaryDirectory() as case:
            for name in ("go.1", "done.1"):
                with open(os.path.join(case, name), "w") as f:
                    f.write("n=1 ns=2000000000 rc=0\n" if name == "done.1" else "")
            # done.1 one second after go.1, the requests half-way: the
            # window's ends are read back through two clock offsets that
            # differ by however long the reads were apart
            go = os.stat(os.path.join(case, "go.1")).st_mtime
            os.utime(os.path.join(case, "done.1"), (go + 1, go + 1))
            t0 = bd.mono_mtime(os.path.join(case, "go.1")) + 0.5
            ns = lambda t: int(t * 1e9)
            with open(os.path.join(case, "devtrace"), "w") as f:
                f.write("queue=1 type=request tid=2 opcode=26 start=%d end=%d\n" % (ns(t0 - 5), ns(t0 - 5) + 10))
                for i in range(3):
                    f.write("queue=2 type=sync tid=5 opcode=1 start=%d end=%d\n" % (ns(t0), ns(t0) + 1000))
                f.write("queue=1 type=request tid=2 opcode=15 start=%d end=%d\n" % (ns(t0), ns(t0) + 4000))
            for w, n in (("before", 10), ("after", 13)):
                with open(os.path.join(case, "drvstats.%s.1" % w), "w") as f:
                    f.write("sync.0 submitted=%d inline=%d\n" % (n, n))
            m = bd.buildmix(case)
        self.assertEqual(m["requests"], [["request", "READ", 1, 4000], ["sync", "LOOKUP", 3, 3000]])
        self.assertEqual(m["driver"], {"sync.0": {"submitted": 3, "inline": 3}})
        c = {"config": "ours-sync", "groups": {"guest-proc": 1e9, "uml-kernel": 3e9},
             "parts": {"entry": 2e9, "fuse": 5e8}, "host": {"entry": 1e9}}
        sm = bd.build_summary([(c, m)])["ours-sync"]
        self.assertEqual(sm["make_s"], [2.0])
        self.assertEqual(sm["requests"], {"request/READ": 1, "sync/LOOKUP": 3})
        self.assertEqual(sm["layers"]["UML trap/syscall interception (UML kernel process)"], 1.0)
        self.assertEqual(sm["layers"]["FUSE core"], 0.5)
        self.assertEqual(sm["driver_submitted"], {"sync.0": 3})


class BreakdownStep(unittest.TestCase):
    def test_default_and_no_perf(self):
        which = bench.shutil.which
        try:
            bench.shutil.which = lambda name: "/usr/bin/" + name
            self.assertEqual(bench.Settings({"BENCH_SIZE": "full"}).breakdown, "1")
            self.assertEqual(bench.Settings({"BENCH_SIZE": "quick"}).breakdown, "0")
            bench.shutil.which = lambda name: None
            self.assertEqual(bench.Settings({"BENCH_SIZE": "full"}).breakdown, "0")
            s = bench.Settings({"BENCH_SIZE": "quick", "BENCH_BREAKDOWN": "1"})
            with tempfile.TemporaryDirectory() as raw:
                bench.run_breakdown(s, {"raw": raw})
                bd = collect.breakdown(raw)
        finally:
            bench.shutil.which = which
        self.assertEqual(bd["status"], "not run: perf not found")
        self.assertEqual(bd["cases"], [])
        with self.assertRaises(ValueError):
            bench.Settings({"BENCH_BREAKDOWN": "yes"})
        with self.assertRaises(ValueError):
            bench.Settings({"BENCH_BREAKDOWN_BUILD": "some"})

    def test_collect_build(self):
        with tempfile.TemporaryDirectory() as raw:
            with open(os.path.join(raw, "breakdown-status"), "w") as f:
                f.write("status=run\nbuild_status=run\nbuild_command=bench/breakdown.sh --build 6\n"
                        "build_wall_s=120\n")
            os.mkdir(os.path.join(raw, "breakdown-build"))
            with open(os.path.join(raw, "breakdown-build", "summary.json"), "w") as f:
                json.dump({"tmpfs": {"rounds": 1}}, f)
            bd = collect.breakdown(raw)
        self.assertEqual(bd["build"], {"status": "run", "command": "bench/breakdown.sh --build 6",
                                       "wall_s": "120", "summary": {"tmpfs": {"rounds": 1}}})
        self.assertNotIn("build_status", bd)


class Headline(unittest.TestCase):
    def test_headline_lines(self):
        with tempfile.TemporaryDirectory() as t:
            j = os.path.join(t, "2026-12-31-h.json")
            with open(j, "w") as f:
                json.dump(data(), f)
            out = subprocess.run([sys.executable, REPORT_PY, "--headline", j], check=True,
                                 capture_output=True, text=True).stdout
        lines = out.splitlines()
        self.assertTrue(any(ln.startswith("- unlink mean: 0.50×") for ln in lines), out)
        self.assertTrue("2026-12-31-h" in out, out)
        self.assertTrue(lines[0].startswith("From 2026-12-31-h.md"), out)
        self.assertTrue(all(ln.startswith("- ") for ln in lines[2:]), out)
        self.assertEqual(len(lines[2:]), 10)  # one line per goal figure, the floor
        self.assertTrue(lines[-1].startswith("- kick floor: ours-sync: floor 20.5 us; "
                                             "cache=never stat() 30.2 us per sync request"), out)


if __name__ == "__main__":
    unittest.main()


class DeviceMemory(unittest.TestCase):
    """The env's device_memory line, and what each boot's device logged of
    --populate-memory (collect.run_record from device.log)."""
    def test_env_row_and_per_boot_lines(self):
        d = data(with_smp=False)
        d["env"].update(bench.device_env())
        logged = ["populated region 0 (524288 KiB)"]
        for r in d["runs"]:
            r["device_memory"] = logged if r["config"] != "ours-async" else []
        text = rendered(d)
        self.assertIn("| guest memory on the reference device | prefaulted by the reference "
                      "device", text)
        self.assertIn("Guest memory prefaulted (device `--populate-memory`, its log): 8 of 10 "
                      "boots on the reference device logged it: `populated region 0 (524288 KiB)` "
                      "(8); not logged: `ours-async` (2).", text)
        for r in d["runs"]:
            r["device_memory"] = logged
        self.assertIn("Guest memory prefaulted (device `--populate-memory`, its log): 10 of 10 "
                      "boots on the reference device logged it: `populated region 0 (524288 KiB)` "
                      "(10).", rendered(d))

    def test_collected_from_the_device_log(self):
        with tempfile.TemporaryDirectory() as t:
            d = os.path.join(t, "runs", "x", "001")
            os.makedirs(d)
            with open(os.path.join(d, "device.log"), "w") as f:
                f.write("vhost-user-fs: listening\n"
                        "vhost-user-fs: populated region 0 (4096 KiB)\n"
                        "vhost-user-fs: --populate-memory: region 1: the host kernel has "
                        "no MADV_POPULATE_WRITE (Linux 5.14+); left to fault in\n")
            m = collect.run_record(os.path.join(t, "runs", "x"), {"id": "001", "dir": d})
        self.assertEqual(m["device_memory"], [
            "populated region 0 (4096 KiB)",
            "--populate-memory: region 1: the host kernel has no MADV_POPULATE_WRITE "
            "(Linux 5.14+); left to fault in"])


class BuildKeys(unittest.TestCase):
    def test_each_kernel_against_itself(self):
        d = data()
        for r in d["runs"]:
            r["uml_build_key"] = "k73" if r["kind"] == "smp" else "k612"
        self.assertNotIn("changed during the run", rendered(d))
        d["runs"][0]["uml_build_key"] = "other"
        text = rendered(d)
        self.assertIn("The UML kernel (driver sources) changed during the run", text)
        self.assertNotIn("SMP UML 7.3 kernel (driver sources) changed", text)



class HostCost(unittest.TestCase):
    LINES = (
        "hostcost kind=pipe layout=cross cpus=0,1 rtt_us_median=41.52 rtt_us_min=40.10 "
        "rtt_us_max=44.87 rounds=9 iters=2000\n"
        "hostcost kind=pipe layout=same cpus=0,0 rtt_us_median=4.90 rtt_us_min=4.80 "
        "rtt_us_max=5.00 rounds=9 iters=2000\n"
        "warning: something else\n"
        "hostcost kind=futex layout=cross cpus=0,1 rtt_us_median=oops\n")

    def test_lines_parsed(self):
        hc = collect.hostcost_lines(self.LINES)
        self.assertEqual(len(hc), 2)   # the third is no hostcost line, the fourth is short
        self.assertEqual(hc[0]["kind"], "pipe")
        self.assertEqual(hc[0]["cpus"], "0,1")
        self.assertEqual(hc[0]["rtt_us_median"], 41.52)
        self.assertEqual(hc[1]["rounds"], 9)

    def test_table_before_and_after(self):
        d = data()
        end = collect.hostcost_lines(self.LINES.replace("41.52", "60.00"))
        d["hostcost"] = {"start": collect.hostcost_lines(self.LINES), "end": end}
        text = rendered(d)
        self.assertIn("## Host costs", text)
        self.assertIn("| kind | layout | CPUs | start, us | end, us |", text)
        self.assertIn("| pipe | cross | 0,1 | 41.5 (40.1–44.9) | 60.0 (40.1–44.9) |", text)
        self.assertIn("| pipe | same | 0,0 | 4.9 (4.8–5.0) | 4.9 (4.8–5.0) |", text)

    def test_old_json_has_no_section(self):
        self.assertNotIn("## Host costs", rendered(data()))
        self.assertIsNone(rep(data()).hostcost_sentence())

    def test_beside_the_goals(self):
        d = data()
        end = collect.hostcost_lines(self.LINES.replace("41.52", "60.00"))
        d["hostcost"] = {"start": collect.hostcost_lines(self.LINES), "end": end}
        self.assertEqual(rep(d).hostcost_sentence(),
                         "another CPU 41.5 / 60.0 us; the same CPU 4.9 / 4.9 us (a pipe round "
                         "trip between two host threads, bench/hostcost.c; start / end of the run)")
        goals = rendered(d).split("## Goal figures")[1].split("\n## ")[0]
        self.assertIn("The host's hand-off, which these ratios move with", goals)

    def test_round_trip_per_layout(self):
        d = data()
        d["hostcost"] = {"start": collect.hostcost_lines(self.LINES)}
        for i in range(2):
            d["runs"].append(floor_run("intree-colocated", 20 + i, 60.0 + 2 * i, 2))
            d["runs"].append(floor_run("ours-sync-colocated", 20 + i, 40.0, 2, kick_ns=8000))
        rt = rep(d).round_trips()
        self.assertEqual(rt["split"]["intree"]["stat_us"][:3], (120.0, 120.0, 120.0))
        self.assertEqual(rt["colocated"]["intree"]["stat_us"][:3], (61.0, 60.0, 62.0))
        self.assertAlmostEqual(rt["colocated"]["intree"]["req_per_call"][0], 2.01)
        self.assertIsNone(rt["colocated"]["intree"]["floor_us"])
        self.assertEqual(rt["colocated"]["ours-sync"]["floor_us"][0], 8.0)
        text = rendered(d)
        self.assertIn("## One request's round trip per layout", text)
        row = next(ln for ln in text.splitlines() if ln.startswith("| colocated |"))
        self.assertEqual(row, "| colocated | 4.90 | 61.0 (60.0–62.0); 2.01 requests | "
                              "40.0 (40.0–40.0); 2.01 requests | 8.00 (8.00–8.00) |")


class Placement(unittest.TestCase):
    def data(self):
        d = data(with_smp=False)
        for i in range(2):
            # co-located in-tree is faster than split in-tree, co-located
            # ours-sync slower than its faithful layout
            d["runs"].append(main_run("intree-colocated", 10 + i, 80 + i, 12.0 + i, 10.0 + i))
            d["runs"].append(main_run("ours-sync-colocated", 10 + i, 45 + i, 13.0 + i, 9.0 + i))
            d["runs"].append(main_run("ours-sync-faithful", 10 + i, 40 + i, 14.0 + i, 9.0 + i))
        return d

    def test_like_for_like_columns(self):
        d = self.data()
        d["env"].update(pin_device="0", pin_guest="1")
        text = rendered(d)
        self.assertIn("ours-sync-colocated vs intree-colocated", text)
        self.assertNotIn("ours-sync-floating vs intree-floating", text)  # not booted
        self.assertIn("- *colocated* (`intree-colocated`, `ours-sync-colocated`): ", text)
        self.assertIn("- *floating* (none in this run): ", text)
        self.assertIn("- *faithful* (`ours-sync-faithful`): ", text)

    def test_best_of(self):
        text = rendered(self.data())
        self.assertIn("### Each driver at its best placement", text)
        # unlink mean: in-tree's best is co-located (80.5), ours-sync's faithful (40.5)
        row = next(ln for ln in text.splitlines() if ln.startswith("| unlink | mean, us |"))
        self.assertIn("80.5 (80.0–81.0) (colocated)", row)
        self.assertIn("40.5 (40.0–41.0) (faithful)", row)
        self.assertIn("0.50×", row)     # 40.5 / 80.5
        # ours-async has a single layout: its best is its split one
        self.assertIn("(split)", row)

    def test_no_section_without_a_matrix(self):
        self.assertNotIn("at its best placement", rendered(data(with_smp=False)))


class PlacementArgs(unittest.TestCase):
    def test_layouts_pin_as_named(self):
        s = bench.Settings({"BENCH_PIN_DEVICE": "0", "BENCH_PIN_GUEST": "1"})
        args = bench.uml_args(s, "intree-colocated")
        self.assertEqual(args[args.index("--pin-device") + 1], "1")
        self.assertEqual(args[args.index("--pin-guest") + 1], "1")
        args = bench.uml_args(s, "ours-async-floating")
        self.assertNotIn("--pin-device", args)
        self.assertNotIn("--pin-guest", args)
        args = bench.uml_args(s, "ours-sync")
        self.assertEqual(args[args.index("--pin-device") + 1], "0")
        # the same driver options in every layout: only the placement differs
        for d in ("intree", "ours-async", "ours-sync"):
            base = [a for a in bench.uml_args(s, d) if a not in ("0", "1")]
            for lay in ("colocated", "floating"):
                other = bench.uml_args(s, "%s-%s" % (d, lay))
                self.assertEqual([a for a in base if a not in ("--pin-device", "--pin-guest")],
                                 [a for a in other if a not in ("--pin-device", "--pin-guest",
                                                                "0", "1")])
