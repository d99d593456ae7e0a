# SPDX-License-Identifier: GPL-2.0
"""The benchmark report of make bench (python3 standard library only).

  report.py collect RAWDIR > results.json
      read RAWDIR/manifest.jsonl, RAWDIR/env and every run directory that
      tests/vm/run --results left (out, status, driver-stats, dev-stats,
      cmd-time, dmesg, pinning, cpu-times) into one JSON document
  report.py render results.json report.md SVGDIR [NOTES.md]
      the Markdown report with one table per workload, SVG bar charts in
      SVGDIR (linked relative to report.md), the counters that show where
      the sync path ran, and a summary of ratios; NOTES.md, if given, is
      inserted before the summary
  report.py summary FILE...
      a plain-text table of guest-bench.sh lines (for ab-in-guest.sh)
  report.py headline results.json   (or --headline)
      the benchmark plan's goal figures from that run, as Markdown lines for
      the README

Every figure in the report is computed here from the JSON: medians, minima
and maxima over the repeats, and ratios of medians. The entry point is
bench/report.py.
"""
import collections
import html
import json
import os
import sys

from benchlib import configs, counters, interleave, metrics, paired, sizes
from benchlib.charts import slug, svg_bars
from benchlib.collect import collect, read, slim_fio
from benchlib.stats import beyond_spread, cell, fmt, ratio_cell, stats3

SIZES_TEXT = """Sizes (`bench/guest-bench.sh`): `full` is the benchmark plan's size (fio {full_fio} file,
{full_fio_s} s; {full_unlink} files for unlink; {full_sf} small files; {full_seq} sequential; stat loop
{full_stat}); `reduced` is fio {reduced_fio}, {reduced_fio_s} s; {reduced_unlink} files for unlink (the size of
the benchmark plan's baseline); {reduced_sf} small files; {reduced_seq} sequential; stat
loop {reduced_stat}; `quick` is fio {quick_fio}, {quick_fio_s} s; {quick_unlink} files for unlink; {quick_sf} small
files; {quick_seq} sequential; stat loop {quick_stat} (getppid loop {full_null} / {reduced_null} /
{quick_null}; clock pairs {full_pair} / {reduced_pair} / {quick_pair}). The objtool build is the same
at every size; the generated build has {full_bf} / {reduced_bf} / {quick_bf} C files. fio files are laid out before fio starts, with 1 MiB writes.
Caches are dropped (`echo 3 > /proc/sys/vm/drop_caches`) before every phase,
and inside the unlink and small-file programs between their own phases.
Times come from `CLOCK_MONOTONIC` around whole loops except the unlink latencies,
which time each call and so include one `clock_gettime` pair each: the same
run measures that pair (a trapped syscall in UML) and the table shows both the
raw figures and the figures minus the pair. UML is uniprocessor, so in UML
"one per vCPU" is one job: the fio and small-file runs are the 1-job ones only.
UML charges all of its guest's CPU time as system time (user time reads 0 in
both /proc/stat and getrusage), so in UML only user + system means anything."""

CONFIG_TEXT = """Configurations (same device binary, same share, one boot each per repeat,
repeats interleaved): `tmpfs` = guest tmpfs, no virtio-fs (the ceiling);
`intree` = in-tree virtiofs on the reference device (UML has one vCPU, so one
request queue: intree-1q and intree-mq are the same here); `intree-again` =
`intree` booted again as a configuration of its own (the A/A control); `ours-async` =
virtio_fs_sync with `sync=0`; `ours-sync` = virtio_fs_sync with the sync queue
the device offers. The reference device offers `VIRTIO_FS_F_SYNC` in every
run; only `ours-sync` accepts it. Floor boots start the device with
`--cache=never` (no attribute caching: every stat() is a FUSE GETATTR) and run
only the floor phases. The floor table's stat() of one file with attribute
caching off is the cheapest FUSE request; the syscall floor (getppid) and the
tmpfs stat are given beside it. The transport's own round trip, an empty kick
of the sync queue (the driver's debugfs kick floor), is in the section "Kick
floor" of runs that recorded it."""

SPREAD_TEXT = ("Median of the boots (min–max; the spread: the relative range, (max − min) / "
               "median, in per cent); ratios are of medians, \"better\" in the metric's "
               "direction. **beyond spread**: the two configurations' min–max ranges do not "
               "overlap (every boot of one is better than every boot of the other), a "
               "difference larger than the boot-to-boot spread; within spread: they overlap, "
               "so the run does not tell the two apart; no mark: one of them has a single boot.")

ENV_ROWS = (("date", "date (UTC)"), ("host", "host"), ("host_kernel", "host kernel"),
            ("host_cpus", "host CPUs"), ("host_cpu_model", "CPU"),
            ("driver_version", "driver (`git describe`)"),
            ("uml_flavor", "UML kernel flavor"), ("uml_fragments", "UML config fragments"),
            ("qemu_version", "QEMU"), ("fio_version", "fio"), ("gcc_version", "gcc"),
            ("device", "device"), ("device_memory", "guest memory on the reference device"),
            ("pin", "pinning (taskset -c, device and UML on one list)"),
            ("share_dir", "shares' host directory (file system, `stat -f`; BENCH_SHARE_DIR)"),
            ("mem_mb", "UML guest memory, MB"), ("size", "UML workload sizes (BENCH_SIZE)"),
            ("qemu_size", "QEMU workload sizes"), ("repeats", "boots per configuration"),
            ("order", "boot order within a repeat (BENCH_ORDER)"), ("seed", "the seed (used by BENCH_ORDER=shuffle)"),
            ("tarball", "build workload"), ("wall_s", "wall time of the whole run, s"))

# The ENV_ROWS that describe the per-configuration boots: left out of a run
# that had none (a paired boot alone, which has its own settings).
BOOT_ENV = ("mem_mb", "size", "qemu_size", "repeats", "order", "seed", "tarball")

# The summary's ratios: (workload, row) for each pair of configurations.
SUMMARY_UML = (("floor", "stat() of one file, device cache=never (floor boots), us/call"),
               ("floor", "stat(), cache=never, in getppid() costs of the same boot"),
               ("unlink", "mean, us"), ("unlink", "median, us"),
               ("unlink", "median minus the pair, us"),
               ("unlink", "median, in getppid() costs of the same boot"),
               ("fio-1", "read MiB/s"), ("fio-1", "write MiB/s"),
               ("smallfile-1", "create+write/s"), ("smallfile-1", "stat/s"),
               ("smallfile-1", "open+read/s"), ("smallfile-1", "unlink/s"),
               ("seq", "write, no fsync, MiB/s"), ("seq", "write + final fsync, MiB/s"),
               ("seq", "read (caches dropped), MiB/s"),
               ("build", "make elapsed, s"), ("build", "make system CPU (rusage), s"))
SUMMARY_QEMU = (("floor", "stat() of one file, device cache=auto (attributes cached), us/call"),
                ("unlink", "mean, us"), ("fio-1", "read MiB/s"), ("smallfile-1", "stat/s"),
                ("smallfile-n", "stat/s"), ("fio-n", "read MiB/s"))
PROBE_ROWS = ("stat() of one file, device cache=auto (attributes cached), us/call",
              "getppid() syscall, us/call", "mean, us", "median, us", "mean minus the pair, us",
              "median minus the pair, us", "median, in getppid() costs of the same boot")
FLOOR_STAT = "stat() of one file, device cache=never (floor boots), us/call"

# Run kinds: main and floor boots are UML 6.12 ("uml" configurations).
KIND_GROUP = {"qemu": "qemu", "probe": "probe", "smp": "smp"}
KIND_ORDER = {"main": 0, "floor": 1, "probe": 2, "qemu": 3}

# The configuration of the faithful layout: goal_figures() repeats the UML
# goals for it when a run has it.
FAITHFUL = "ours-sync-faithful"

# The A/A control (configs.py): in-tree booted again as a configuration of
# its own. goal_figures() gives its every-row figure beside the goals, so a
# reader sees how far from 1.00x the run's noise alone puts a ratio.
CONTROL = "intree-again"

# Rows the "every row" goals leave out: they do not measure the file system
# (the syscall and clock costs, the dispersion of the unlink latencies).
GOAL_SKIP_ROWS = ("getppid() syscall, us/call", "clock_gettime pair, us",
                  "clock_gettime pair (same run), us", "stddev, us")


# The benchmark plan's UML goals against intree: (figure, workload, row, op, limit).
UML_GOALS = (("unlink mean", "unlink", "mean, us", "≤", 0.64),
             ("unlink median", "unlink", "median, us", "≤", 0.64),
             ("fio 1 job, read MiB/s", "fio-1", "read MiB/s", "≥", 1.32),
             ("fio 1 job, write MiB/s", "fio-1", "write MiB/s", "≥", 1.32))
BUILD_GOAL = ("build, make elapsed", "build", "make elapsed, s", "≤", 0.80)


def meets(ratio, op, limit):
    return ratio <= limit if op == "≤" else ratio >= limit


def floor_sentence(kf):
    """The kick floor and the stat's overhead over it, in one sentence."""
    if not kf["floor_us"]:
        return "not recorded (no kickfloor phase in this run)."
    parts = []
    for c in sorted(kf["floor_us"]):
        t = "%s: floor %s us" % (c, fmt(kf["floor_us"][c][0]))
        st = kf["stat"].get(c)
        if st:
            t += ("; cache=never stat() %s us per sync request (%s per call), %s us over the floor"
                  % (fmt(st["per_request_us"][0]), fmt(st["per_op"][0]), fmt(st["overhead_us"][0])))
        parts.append(t)
    return "; ".join(parts) + "."


def spread_word(sp):
    return "" if sp is None else ("beyond spread" if sp else "within spread")


def verdict(met):
    return "not measured" if met is None else ("**met**" if met else "not met")


def breakdown_module():
    """bench/breakdown.py, loaded as a module."""
    import importlib.util
    path = os.path.join(sizes.REPO, "bench", "breakdown.py")
    spec = importlib.util.spec_from_file_location("breakdown", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def breakdown_split():
    """bench/breakdown.py's SPLIT: the parts of the cost breakdown."""
    return breakdown_module().SPLIT


def sizes_text(runs):
    """SIZES_TEXT with the figures the runs recorded (guest-bench.sh's env
    line), those of bench/sizes for sizes they do not record."""
    table = sizes.load()
    for r in runs:
        for ln in r.get("lines", []):
            if ln.get("phase") == "env" and isinstance(ln.get("sizes"), dict):
                table[ln.get("size")] = ln["sizes"]
    f = {}
    for name in ("full", "reduced", "quick"):
        s = table[name]
        f.update({name + "_fio": sizes.mib(s["fio_mib"]), name + "_fio_s": s["fio_runtime_s"],
                  name + "_unlink": sizes.count(s["unlink_n"]),
                  name + "_sf": sizes.count(s["smallfile_n"]), name + "_seq": sizes.mib(s["seq_mib"]),
                  name + "_stat": sizes.count(s["stat_n"]), name + "_null": sizes.count(s["nullsys_n"]),
                  name + "_pair": sizes.count(s["clockpair_n"]),
                  name + "_bf": s.get("build_files", "?")})
    return SIZES_TEXT.format(**f)


def build_title(env, title, noop=True):
    """The build table's title: which build (env build: gen, or objtool in
    runs from before BENCH_BUILD), its make directory, and the second make
    where NOOP (runs from before it have none)."""
    what = ("the generated C project (bench/gen-build.py; %s)" % env.get("tarball", "?")
            if env.get("build") == "gen" else
            "the objtool and libsubcmd sources (linux-source-6.12)")
    title = title.replace("the sources", what)
    if not noop:
        title = title.replace(", make again (nothing to do)", "")
    if env.get("make_dir"):
        title = title.replace("make -j<vCPUs>", "make -j<vCPUs> -C %s" % env["make_dir"])
    return title


def boot_workloads(kind, runs):
    """The guest-bench.sh workloads (and size) of RUNS, from their run_args."""
    seen = []
    for r in runs:
        a = r.get("run_args") or []
        g = a[a.index("--") + 1:] if "--" in a else a
        w = g[g.index("--workloads") + 1] if "--workloads" in g[:-1] else "?"
        sz = g[g.index("--size") + 1] if "--size" in g[:-1] else "?"
        t = "%s (%s%s)" % (w, sz, ", cache=never" if kind == "floor" else "")
        if t not in seen:
            seen.append(t)
    return "; ".join(seen)


def pin_word(env, key):
    return "`%s`" % env[key] if env.get(key) else "unpinned"


class Report:
    """One rendering: the JSON's runs and env, the Markdown lines so far."""

    def __init__(self, data, jpath, mdpath, svgdir):
        self.data = data
        self.env = data["env"]
        self.runs = data["runs"]
        self.jpath, self.mdpath, self.svgdir = jpath, mdpath, svgdir
        self.svgrel = os.path.relpath(svgdir, os.path.dirname(os.path.abspath(mdpath)))
        self.md = []
        self.summary = []
        self.groups = {"uml": [], "qemu": [], "probe": [], "smp": []}
        for r in self.runs:
            lst = self.groups[KIND_GROUP.get(r["kind"], "uml")]
            if r["config"] not in lst:
                lst.append(r["config"])
        self.sizes = {}
        for r in self.runs:
            for ln in r.get("lines", []):
                if ln.get("phase") == "env":
                    self.sizes.setdefault(r["kind"] if r["kind"] in ("qemu", "smp") else "uml",
                                          ln.get("size"))

    def p(self, line):
        self.md.append(line)

    def runs_of(self, kind, config):
        return [r for r in self.runs if r["kind"] == kind and r["config"] == config
                and r["rc"] == 0 and r.get("lines")]

    # ---------------------------------------------------------- header

    def header(self):
        p, env = self.p, self.env
        p("# virtio-fs-sync A/B benchmark: %s" % os.path.splitext(os.path.basename(self.mdpath))[0])
        p("")
        p("Generated by `bench/report.py` from `%s` (every figure below is computed "
          "from that file). Command: `%s`." % (os.path.basename(self.jpath),
                                                env.get("command", "make bench")))
        p("")

    def environment(self):
        p, env, runs = self.p, self.env, self.runs
        p("## Environment")
        p("")
        p("| | |")
        p("| --- | --- |")
        for k, label in ENV_ROWS:
            if env.get(k) and (runs or k not in BOOT_ENV):
                p("| %s | %s |" % (label, env[k].replace("|", "\\|")))
        if "pin_device" in env:
            p("| pinning (taskset -c) | UML boots: device `%s`, guest `%s`; QEMU boots: device %s, "
              "guest %s |" % (env.get("pin_device") or "-", env.get("pin_guest") or "-",
                              pin_word(env, "qemu_pin_device"), pin_word(env, "qemu_pin_guest")))
        kernels = sorted({r.get("guest_kernel") for r in runs if r.get("guest_kernel")})
        if kernels:
            p("| guest kernels (from dmesg) | %s |" % ", ".join(kernels))
        loads = [r["load_before"] for r in runs] + [r["load_after"] for r in runs]
        if loads:
            l1 = [float(x.split()[0]) for x in loads]
            p("| host load average (1 min) around the boots | %.2f–%.2f |" % (min(l1), max(l1)))
        dirty = [r["host_dirty_kb"][0] for r in runs if (r.get("host_dirty_kb") or [None])[0] is not None]
        if dirty:
            p("| host Dirty (/proc/meminfo) before the boots, kB | %d–%d |" % (min(dirty), max(dirty)))
        steal = [r["host_cpu"]["steal_pct"] for r in runs if (r.get("host_cpu") or {}).get("steal_pct") is not None]
        if steal:
            p("| host CPU steal during the boots (/proc/stat), %% | %.1f–%.1f |" % (min(steal), max(steal)))
        p("")

    def warnings(self):
        """The kernel or tree changed during the run; a debug kernel."""
        p, runs = self.p, self.runs
        # UML 6.12 (main, floor, probe boots) and SMP UML 7.3 are two
        # kernels, each with its own build key
        for series, kinds in (("UML", ("main", "floor", "probe")), ("SMP UML 7.3", ("smp",))):
            bykey = {}
            for r in runs:
                if r["kind"] in kinds and r.get("uml_build_key"):
                    bykey.setdefault(r["uml_build_key"], []).append(r["id"])
            if len(bykey) > 1:
                main_key = max(bykey, key=lambda k: len(bykey[k]))
                others = ["%s (%s)" % (k, ", ".join("`%s`" % i for i in ids))
                          for k, ids in bykey.items() if k != main_key]
                p("**The %s kernel (driver sources) changed during the run:** %d of its boots ran "
                  "on build key %s, these on others: %s. Compare the figures with that in mind."
                  % (series, len(bykey[main_key]), main_key, "; ".join(others)))
                p("")
        vers = sorted({r.get("driver_version") for r in runs if r.get("driver_version")})
        if len(vers) > 1:
            p("The work tree moved during the run (`git describe` after the boots: %s; other "
              "developers commit to the same tree). UML boots are tied to the build key above; QEMU "
              "boots build the module from the work tree at each boot." % ", ".join(vers))
            p("")
        lost = [(r["id"], r["timer_lost"]) for r in runs if r.get("timer_lost")]
        if (self.data.get("paired") or {}).get("timer_lost"):
            lost.append(("the paired boot", self.data["paired"]["timer_lost"]))
        if lost:
            p("**Boots whose UML kernel lost a timer expiry** (and recovered at its next idle, "
              "tests/vm/patches/uml-timer-expiry-lost.patch; until then the guest's tick stood "
              "still): %s." % ", ".join("`%s` (%d)" % x for x in lost))
            p("")
        if self.env.get("uml_flavor") == "debug":
            p("**This run used the debug UML kernel (lockdep, kmemleak): only valid to validate "
              "the scripts, not as a benchmark.**")
            p("")

    def pinning_applied(self):
        """What tests/vm/run read back from /proc/PID/status (Cpus_allowed_list)."""
        p = self.p
        have = [r for r in self.runs if r.get("pinning")]
        if not have:
            return
        p("### Pinning applied (read back from `/proc/PID/status` Cpus_allowed_list)")
        p("")
        p("| boots | kind | device asked | device got | guest asked | guest got (every process) | check |")
        p("| --- | --- | --- | --- | --- | --- | --- |")
        groups = {}
        for r in have:
            pin = r["pinning"]
            dev_got = pin.get("device_cpus_allowed") or ("-" if pin.get("device_pid") else "(no device)")
            key = (r["kind"], pin.get("device_pin") or "-", dev_got,
                   pin.get("guest_pin") or "-", pin.get("guest_cpus_allowed") or "-",
                   pin.get("pin_check") or "-")
            groups[key] = groups.get(key, 0) + 1
        for key, n in sorted(groups.items(), key=lambda kv: (KIND_ORDER.get(kv[0][0], 9), kv[0])):
            p("| %d | %s | %s | %s | %s | %s | %s |" % ((n,) + key))
        p("")
        bad = [r["id"] for r in have if (r["pinning"].get("pin_check") or "").startswith("mismatch")]
        if bad:
            p("**Pinning did not take in:** %s." % ", ".join("`%s`" % b for b in bad))
            p("")

    def method(self):
        self.p(sizes_text(self.runs))
        self.p("")
        self.p(CONFIG_TEXT)
        self.p("")
        order = {"rotate": "rotated by one configuration per repeat (repeat 1: A B C, "
                           "repeat 2: B C A, ...)",
                 "shuffle": "shuffled, with the seed `%s`" % self.env.get("seed"),
                 "fixed": "the same in every repeat"}.get(self.env.get("order"))
        if order:
            self.p("Boot order: repeats outermost, every configuration boots once per repeat "
                   "(configurations interleaved, so that drift of the host spreads over all of "
                   "them); within a repeat the order is %s (BENCH_ORDER). The boots' order is "
                   "their number in the JSON's run ids." % order)
            self.p("")
        self.device_memory()
        self.layouts()

    def device_memory(self):
        """What each boot's reference device logged of --populate-memory."""
        boots = []
        for r in self.runs:
            c = configs.CONFIGS.get(r["config"].split("/pin", 1)[0])
            if ("device_memory" not in r or r["rc"] != 0 or not c or c.guest_driver == "tmpfs"
                    or "virtiofsd" in c.run_args):
                continue
            boots.append(r)
        if not boots:
            return
        logged, missing = collections.Counter(), collections.Counter()
        for r in boots:
            if r["device_memory"]:
                logged["; ".join(r["device_memory"])] += 1
            else:
                missing[r["config"]] += 1
        text = ("Guest memory prefaulted (device `--populate-memory`, its log): %d of %d boots "
                "on the reference device logged it" % (sum(logged.values()), len(boots)))
        if logged:
            text += ": " + "; ".join("`%s` (%d)" % kv for kv in sorted(logged.items()))
        if missing:
            text += "; not logged: " + ", ".join("`%s` (%d)" % kv for kv in sorted(missing.items()))
        self.p(text + ".")
        self.p("")

    def layouts(self):
        """The pinning layouts of the UML configurations in this run."""
        p = self.p
        used = {}
        for c in self.groups["uml"]:
            if c in configs.CONFIGS and configs.CONFIGS[c].guest_driver == "tmpfs":
                continue  # no device
            lay = configs.CONFIGS[c].layout if c in configs.CONFIGS else "split"
            used.setdefault(lay, []).append(c)
        if "pin_device" not in self.env or not used:
            return
        p("Pinning layouts of the UML boots (device `%s`, guest `%s`):"
          % (self.env.get("pin_device"), self.env.get("pin_guest")))
        p("")
        for lay in configs.LAYOUTS:
            names = ", ".join("`%s`" % c for c in used.get(lay, [])) or "none in this run"
            p("- *%s* (%s): %s." % (lay, names, configs.LAYOUTS[lay]))
        if "faithful" not in used:
            p("- (`ours-sync-faithful` is not among this run's configurations; "
              "`BENCH_CONFIGS` adds it.)")
        p("")
        aff = {}
        for r in self.runs:
            if r["kind"] in ("main", "floor", "smp") and r.get("device_affinity") and r["rc"] == 0:
                key = (r["config"], "; ".join(sorted(r["device_affinity"])))
                aff[key] = aff.get(key, 0) + 1
        if aff:
            p("The device's threads' affinity, as it logged it (read back with "
              "`sched_getaffinity`): " + "; ".join(
                  "`%s` (%d boots): %s" % (c, n, a) for (c, a), n in sorted(aff.items())) + ".")
            p("")

    def failed_boots(self):
        failed = [r for r in self.runs if r["rc"] != 0]
        phases = [(r["id"], ln.get("phase"), ln.get("rc")) for r in self.runs if r["rc"] == 0
                  for ln in r.get("lines", []) if ln.get("rc") not in (0, None)]
        if phases:
            self.p("**Phases that failed in boots that ended well (their figures are left out):** "
                   + "; ".join("`%s` %s (status %s)" % x for x in phases) + ".")
            self.p("")
        if not failed:
            return
        self.p("**Boots that failed (their figures are left out):**")
        self.p("")
        for r in failed:
            tail = "; ".join(r.get("runner_stderr_tail", [])[-3:])
            self.p("- `%s`: exit status %d. %s" % (r["id"], r["rc"], tail.replace("|", "\\|")[:400]))
        self.p("")

    # ---------------------------------------------------------- tables

    def row_stats(self, kind, cfgs, get, rkind):
        k = kind if kind in ("qemu", "probe", "smp") else rkind
        st = {}
        for c in cfgs:
            if k == "floor" and c == "tmpfs":
                rs = self.runs_of("main", c)  # no device: the stat loop of the main boots
            else:
                rs = self.runs_of(k, c)
            st[c] = stats3([get(r) for r in rs])
        return st

    def table(self, kind, cfgs, wid, title, rows, ratios):
        """One workload table and its charts; returns {label: (stats, unit, better)}."""
        body = []
        allstats = {}
        for label, unit, better, get, rkind in rows:
            if kind in ("qemu", "probe", "smp") and rkind == "floor":
                continue  # no cache=never boots there
            if kind == "qemu" and unit == "getppid() costs":
                continue  # syscalls are not trapped there: no drift to cancel
            st = self.row_stats(kind, cfgs, get, rkind)
            if all(v is None for v in st.values()):
                continue
            allstats[label] = (st, unit, better)
            cells = [cell(st[c], spread=True) for c in cfgs]
            rcells = [ratio_cell(st.get(a), st.get(b), better) for a, b in ratios]
            body.append("| %s | %s | %s |" % (label, " | ".join(cells), " | ".join(rcells))
                        if ratios else "| %s | %s |" % (label, " | ".join(cells)))
        if not allstats:
            return allstats
        self.p("### %s" % title)
        self.p("")
        hdr = ["metric"] + cfgs + ["%s vs %s" % (a, b) for a, b in ratios]
        self.p("| " + " | ".join(hdr) + " |")
        self.p("| " + " | ".join(["---"] * len(hdr)) + " |")
        self.md.extend(body)
        self.p("")
        self.p(SPREAD_TEXT)
        self.p("")
        self.charts(kind, cfgs, wid, title, allstats)
        return allstats

    def charts(self, kind, cfgs, wid, title, allstats):
        """The table's charts: its marked metrics, or its first two."""
        for label in [lb for lb in metrics.CHARTS.get(wid, []) if lb in allstats] or list(allstats)[:2]:
            st, unit, better = allstats[label]
            svg = svg_bars("%s: %s" % (title.split(" (")[0][:60], label), unit, better,
                           [(c, st[c]) for c in cfgs])
            if svg:
                fn = "%s-%s-%s.svg" % (kind, wid, slug(label))
                with open(os.path.join(self.svgdir, fn), "w") as f:
                    f.write(svg)
                self.p("![%s](%s/%s)" % (html.escape(label), self.svgrel, fn))
                self.p("")

    def guest_cpu_table(self, cfgs):
        p = self.p
        p("### Guest CPU time per phase (user + system, s, from /proc/stat; median)")
        p("")
        p("| phase | " + " | ".join(cfgs) + " |")
        p("| --- |" + " --- |" * len(cfgs))
        for ph in metrics.CPU_PHASES:
            cells = []
            for c in cfgs:
                u = stats3([metrics.cpu_s(ph, "user")(r) for r in self.runs_of("main", c)])
                s = stats3([metrics.cpu_s(ph, "sys")(r) for r in self.runs_of("main", c)])
                cells.append("-" if u is None else "%s + %s" % (fmt(u[0]), fmt(s[0])))
            if any(x != "-" for x in cells):
                p("| %s | %s |" % (ph, " | ".join(cells)))
        p("")

    def cpu_time_table(self, kind, cfgs, title):
        """Host CPU time of the device and of the guest per boot (tests/vm/run's cpu-times)."""
        p = self.p
        rows = (("device user CPU, s", "device", "user"),
                ("device system CPU, s", "device", "sys"),
                ("device user + system CPU, s", "device", "total"),
                ("guest user + system CPU, host view (UML: its processes; QEMU: its threads), s",
                 "guest", "total"),
                ("boot, host wall time, s", None, "host_s"))
        stats = {}
        for label, proc, which in rows:
            for c in cfgs:
                rs = self.runs_of(kind, c)
                if proc:
                    vals = [counters.cpu_seconds(r.get("cpu_times"), proc, which) for r in rs]
                else:
                    vals = [r.get("host_s") for r in rs]
                stats[(label, c)] = stats3(vals)
        if all(stats[(rows[0][0], c)] is None for c in cfgs):
            return
        p("### Device and guest CPU time per boot, %s (host `wait4()` rusage; median, min–max)" % title)
        p("")
        p("| metric | " + " | ".join(cfgs) + " |")
        p("| --- |" + " --- |" * len(cfgs))
        for label, proc, which in rows:
            p("| %s | %s |" % (label, " | ".join(cell(stats[(label, c)]) for c in cfgs)))
        p("")
        p("Whole boots (the guest's boot and every phase of guest-bench.sh); the device's CPU "
          "time is the work of serving that configuration's requests, and in `ours-sync` includes "
          "the requests run inside the kick.")
        p("")

    # ---------------------------------------------------------- sections

    def uml_section(self):
        cfgs = self.groups["uml"]
        out = {}
        if not cfgs:
            return out
        self.p("## User-Mode Linux (the sync path), %s sizes" % self.sizes.get("uml", "?"))
        self.p("")
        ratios = configs.ratios("uml", cfgs)
        for wid, title, rows in metrics.workloads():
            if wid == "build":
                title = build_title(self.env, title, any(metrics.phase(r, "build-noop")
                                                         for r in self.runs))
            out[wid] = self.table("uml", cfgs, wid, title, rows, ratios)
        self.guest_cpu_table(cfgs)
        self.cpu_time_table("main", cfgs, "UML boots")
        self.cpu_time_table("floor", [c for c in cfgs if c != "tmpfs"],
                            "UML floor boots (cache=never)")
        return out

    def placement_section(self):
        """Each driver at its own best placement: per UML row, the layout of
        the placement matrix (configs.MATRIX_LAYOUTS, and ours-sync's
        faithful one) with the best median for each driver, and the ratios
        of those bests. The like-for-like ratios per layout are the
        workload tables' own columns."""
        cfgs = self.groups["uml"]
        cands = {d: [c for c in [configs.layout_name(d, lay) for lay in configs.MATRIX_LAYOUTS]
                     + (["ours-sync-faithful"] if d == "ours-sync" else []) if c in cfgs]
                 for d in configs.MATRIX}
        if sum(len(v) > 1 for v in cands.values()) < 2 or not cands["intree"]:
            return
        p = self.p
        p("### Each driver at its best placement")
        p("")
        p("Per row, each driver's best layout among those this run booted (median of its "
          "boots), and the ratio of those bests: what each design gives where it is placed "
          "best, apart from the like-for-like columns of the tables above. Layouts: " +
          "; ".join("`%s`" % lay for lay in configs.MATRIX_LAYOUTS) + (", and `faithful` for "
                                                                      "ours-sync" if
                                                                      "ours-sync-faithful" in cfgs
                                                                      else "") + ".")
        p("")
        drivers = [d for d in configs.MATRIX if cands[d]]
        ratios = [(d, "intree") for d in drivers if d != "intree"]
        p("| workload | metric | " + " | ".join("%s: best" % d for d in drivers) + " | " +
          " | ".join("%s vs %s, bests" % r for r in ratios) + " |")
        p("|" + " --- |" * (2 + len(drivers) + len(ratios)))
        for wid, _, rows in metrics.workloads():
            for label, unit, better, get, rkind in rows:
                if label in GOAL_SKIP_ROWS:
                    continue
                st = self.row_stats("uml", cfgs, get, rkind)
                best = {}
                for d in drivers:
                    have = [c for c in cands[d] if st.get(c)]
                    if have:
                        pick = (max if better == "higher" else min)(have, key=lambda c: st[c][0])
                        best[d] = (pick, st[pick])
                if "intree" not in best or len(best) < 2:
                    continue
                lay = {d: configs.CONFIGS[best[d][0]].layout for d in best}
                p("| %s | %s | %s | %s |" % (
                    wid, label,
                    " | ".join("%s (%s)" % (cell(best[d][1]), lay[d]) if d in best else "-"
                               for d in drivers),
                    " | ".join(ratio_cell(best[a][1], best[b][1], better)
                               if a in best and b in best else "-" for a, b in ratios)))
        p("")

    def probe_section(self):
        p, env = self.p, self.env
        if not [r for r in self.runs if r["kind"] == "probe" and r["rc"] == 0]:
            return
        p("## Pinning (short extra boots, quick sizes)")
        p("")
        if "pin_device" in env:
            p("Each probe boot pins the device and UML with `tests/vm/run --pin-device/--pin-guest`: "
              "`pinN` runs both on CPU list N (`pin1`: both on CPU 1, sharing it; `pin0-1`: both "
              "float over CPUs 0 and 1), `pinD:G` runs the device on D and UML on G. The main "
              "runs use device `%s`, guest `%s`." % (env.get("pin_device"), env.get("pin_guest")))
        else:
            p("`tests/vm/run --pin CPUS` gives the device and UML the same CPU list: `pin1` runs "
              "both on CPU 1, `pin0-1` lets both float over the two CPUs. The main runs use `%s`."
              % env.get("pin", "?"))
        p("")
        rows = [row for w in metrics.workloads() if w[0] in ("floor", "unlink") for row in w[2]
                if row[0] in PROBE_ROWS]
        self.table("probe", self.groups["probe"], "pin", "Pinning probe", rows, [])

    def qemu_section(self):
        cfgs = self.groups["qemu"]
        out = {}
        if not cfgs:
            return out
        self.p("## QEMU/TCG, SMP 2, Debian 6.12 cloud kernel (fallback parity; device vs virtiofsd), "
               "%s sizes" % self.sizes.get("qemu", "?"))
        self.p("")
        self.p("QEMU passes only generic feature bits, so `VIRTIO_FS_F_SYNC` never reaches a "
               "QEMU guest: `q-ours` is virtio_fs_sync on its interrupt-driven path.")
        self.p("")
        ratios = configs.ratios("qemu", cfgs)
        for wid, title, rows in metrics.workloads():
            out[wid] = self.table("qemu", cfgs, wid, title, rows, ratios)
        self.cpu_time_table("qemu", cfgs, "QEMU boots")
        return out

    def smp_section(self):
        cfgs, env = self.groups["smp"], self.env
        out = {}
        if not cfgs:
            return out
        self.p("## SMP User-Mode Linux 7.3, %s vCPUs, per-queue kick channels, %s sizes"
               % (env.get("smp_cpus", "?"), self.sizes.get("smp", "?")))
        self.p("")
        self.p("UML 7.3 with `ncpus=%s seccomp=on`, the test kernel's per-queue kick channels "
               "(`tests/vm/patches/7.3/uml-virtio-kick-channel.patch`, negotiated with the "
               "reference device). `smp-intree` = in-tree virtiofs with one request queue per "
               "vCPU; `smp-ours-sync` = virtio_fs_sync with one sync queue (and one request "
               "queue) per vCPU; `smp-ours-sync-inband` = the same with the stock in-band kicks "
               "(device `--no-kick-channel`: every kick of the device under one lock, on one "
               "socket); `smp-ours-sync-faithful` = smp-ours-sync in the faithful layout: the "
               "device started unpinned, sync queue i's handler thread pinned to vCPU i's CPU "
               "(`--pin-sync` with the vCPU threads' CPU list), its workers to the host's other "
               "CPUs if any. Pinning (taskset -c): device %s, guest %s, vCPU threads %s."
               % (env.get("smp_cpus", "?"), pin_word(env, "smp_pin_device"),
                  pin_word(env, "smp_pin_guest"),
                  "one CPU each of " + pin_word(env, "smp_pin_vcpus")
                  if env.get("smp_pin_vcpus") else "floating"))
        self.p("")
        ratios = configs.ratios("smp", cfgs)
        for wid, title, rows in metrics.workloads():
            if wid in ("fio-1", "fio-n"):
                out[wid] = self.table("smp", cfgs, wid, title, rows, ratios)
        self.smp_device_table(cfgs)
        return out

    def smp_device_table(self, cfgs):
        p = self.p
        p("| config | boots | device: channel kicks | device: sync requests | device: sync inline "
          "| device busy time, sync queues, s (median of boots, per queue) |")
        p("| --- | --- | --- | --- | --- | --- |")

        def is_sync(q):
            return q.get("type") == "sync"
        for c in cfgs:
            rs = self.runs_of("smp", c)
            dev = [q for r in rs for q in r.get("dev_stats", [])]
            busy = {}
            for q in dev:
                if is_sync(q):
                    busy.setdefault(q.get("queue"), []).append(q.get("busy_ns", 0) / 1e9)
            bcol = ", ".join("%s: %s" % (k, fmt(stats3(v)[0])) for k, v in sorted(busy.items())) or "-"
            p("| %s | %d | %d | %d | %d | %s |" % (
                c, len(rs), counters.total(dev, "channel_kicks"),
                counters.total(dev, "requests", is_sync), counters.total(dev, "inline", is_sync), bcol))
        p("")

    def counters_section(self):
        p = self.p
        p("## Counters: where the sync path ran")
        p("")
        p("Driver counters (`/sys/fs/virtio_fs_sync/<tag>/stats`, read after unmount) and "
          "device counters (`--stats-file`), summed over every boot of the configuration.")
        p("")
        p("| boots | config | driver: submitted hiprio / request / sync | driver: inline | driver: deferred "
          "| driver: fallback | device: requests hiprio / request / sync | device: inline | device: late |")
        p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        check = []
        for kind in ("main", "floor", "qemu", "smp"):
            for c in self.groups[KIND_GROUP.get(kind, "uml")]:
                rs = [r for r in self.runs if r["kind"] == kind and r["config"] == c]
                if rs:
                    check.extend(self.counters_row(kind, c, rs))
        p("")
        if check:
            p("**Check failed: the sync path ran where it should not, or not where it should:** "
              + "; ".join(check) + ".")
        else:
            first, *rest = configs.sync_names() + [
                c for c in self.groups["uml"] + self.groups["smp"]
                if c in configs.CONFIGS and configs.CONFIGS[c].sync and c not in configs.sync_names()]
            p("Check passed: inline completions and sync-queue requests appear only in `%s`"
              " (and %s)." % (first, ", ".join("`%s`" % n for n in rest)))
        p("")

    def counters_row(self, kind, c, rs):
        """One row of the counters table; returns what failed its check."""
        # QEMU: the host tree is mounted by the driver too; only the share counts
        drv = [q for r in rs for q in r.get("driver_stats", []) if q.get("tag") == "share"]
        dev = [q for r in rs for q in r.get("dev_stats", [])]
        sub = {"hiprio": 0, "request": 0, "sync": 0}
        for q in drv:
            t = str(q.get("queue", "")).split(".")[0]
            sub[t] = sub.get(t, 0) + q.get("submitted", 0)
        req = {"hiprio": 0, "request": 0, "sync": 0}
        req.update(counters.by(dev, "type", "requests"))
        d = counters.totals(drv, ("inline", "deferred", "fallback"))
        v = counters.totals(dev, ("inline", "late"))

        def col(have, val):
            return val if have else "-"
        dcol = ("%d / %d / %d" % (sub["hiprio"], sub["request"], sub["sync"])) if drv else "-"
        vcol = ("%d / %d / %d" % (req["hiprio"], req["request"], req["sync"])) if dev else "-"
        self.p("| %s (%d) | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            kind, len(rs), c, dcol, col(drv, d["inline"]), col(drv, d["deferred"]),
            col(drv, d["fallback"]), vcol, col(dev, v["inline"]), col(dev, v["late"])))
        should = c in configs.CONFIGS and configs.CONFIGS[c].sync
        bad = []
        if (d["inline"] > 0 or v["inline"] > 0 or req["sync"] > 0) != should and (drv or dev):
            bad.append("%s %s: inline %d (driver) / %d (device), sync requests %d"
                       % (kind, c, d["inline"], v["inline"], req["sync"]))
        if should and d["inline"] == 0:
            bad.append("%s %s: the sync path did not run (driver inline = 0)" % (kind, c))
        return bad

    def device_timing_section(self):
        """Per-queue device time per request (the device's busy_ns, handler_ns,
        queued_ns/queued), per configuration and boot kind."""
        p = self.p
        have = [r for r in self.runs if r["rc"] == 0
                and any("handler_ns" in q for q in r.get("dev_stats") or [])]
        if not have:
            return
        p("## Device time per request (the device's per-queue stats)")
        p("")
        p("From the device's `--stats-file` of each boot (vhost-user-fs/README.md, Counters), "
          "per queue type: *queued* = `queued_ns / queued`, the time from the kick to the "
          "start of the chain's processing (sync queues: every chain, from the kick's arrival "
          "to its start on the handler thread; request queues: the first chain a worker takes "
          "after a kick, the hand-off and wake-up); *FUSE server* = `handler_ns / requests`, "
          "the operation and its host system calls; *rest* = `(busy_ns - handler_ns) / "
          "requests`, the device's transport work (request in, reply out, used ring); "
          "*busy* = `busy_ns / requests`. Each figure is computed per boot and the table gives "
          "the median over the boots (min–max), in us. The stats cover a whole boot, so the "
          "workloads are those the boot ran (guest-bench.sh `--workloads`; floor boots run the "
          "stat loop with the device's `--cache=never`); a per-workload split of one boot would "
          "need the stats read between phases. Boots whose device did not record these fields "
          "(older devices) show \"not recorded\".")
        p("")
        p("| config | boots | workloads | queue | requests per boot | queued, us | FUSE server, us "
          "| rest of busy, us | busy, us |")
        p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for kind in ("main", "floor", "probe", "smp", "qemu"):
            for c in self.groups[KIND_GROUP.get(kind, "uml")]:
                rs = [r for r in self.runs if r["kind"] == kind and r["config"] == c and r["rc"] == 0]
                if not rs:
                    continue
                rec = [r for r in rs if any("handler_ns" in q for q in r.get("dev_stats") or [])]
                wl = boot_workloads(kind, rs)
                if not rec:
                    if any(r.get("dev_stats") for r in rs):
                        p("| %s | %d | %s | - | not recorded | | | | |" % (c, len(rs), wl))
                    continue
                for qtype in ("sync", "request", "hiprio"):
                    per = [counters.queue_times(r["dev_stats"], qtype) for r in rec]
                    per = [x for x in per if x]
                    if not per:
                        continue
                    cols = [cell(stats3([x[k] for x in per]))
                            for k in ("requests", "queued_us", "handler_us", "rest_us", "busy_us")]
                    n = "%d" % len(rec) if len(rec) == len(rs) else "%d of %d" % (len(rec), len(rs))
                    p("| %s | %s | %s | %s | %s |" % (c, n, wl, qtype, " | ".join(cols)))
        p("")

    # ---------------------------------------------------------- kick floor

    def kick_floor(self):
        """The kick floor (the driver's debugfs floor, guest-bench.sh's
        kickfloor phase) per configuration, and the cache=never stat's time
        per sync request over it: {"floor_us": {config: stats3 of the boots'
        medians}, "floor_min_us", "floor_max_us": {config: (min, max) over
        the boots}, "stat": {config: {"per_op", "per_request_us",
        "overhead_us", "source"}}}."""
        out = {"floor_us": {}, "floor_min_us": {}, "floor_max_us": {}, "stat": {}}
        per_boot = {}
        for r in self.runs:
            if r["kind"] not in ("main", "floor") or r["rc"] != 0:
                continue
            kf = metrics.phase(r, "kickfloor")
            if kf and kf.get("median_ns") is not None and kf.get("kicks"):
                per_boot.setdefault(r["config"], []).append((r, kf))
        for c, lst in per_boot.items():
            out["floor_us"][c] = stats3([kf["median_ns"] / 1000.0 for _, kf in lst])
            out["floor_min_us"][c] = min(kf["min_ns"] / 1000.0 for _, kf in lst)
            out["floor_max_us"][c] = max(kf["max_ns"] / 1000.0 for _, kf in lst)
        for c, lst in per_boot.items():
            per_op, per_req, over, src = [], [], [], set()
            for r, kf in lst:
                if r["kind"] != "floor":
                    continue
                st = metrics.phase(r, "statloop")
                if not st or not st.get("n"):
                    continue
                if st.get("sync_submitted") is not None:
                    k = st["sync_submitted"] / float(st["n"])
                    src.add("driver")
                else:  # the whole boot's sync requests (older guest-bench.sh)
                    k = counters.total(r.get("dev_stats") or [], "requests",
                                       lambda q: q.get("type") == "sync") / float(st["n"])
                    src.add("device")
                if k <= 0:
                    continue
                pr = st["mean_ns"] / 1000.0 / k
                per_op.append(k)
                per_req.append(pr)
                over.append(pr - kf["median_ns"] / 1000.0)
            if per_op:
                out["stat"][c] = {"per_op": stats3(per_op), "per_request_us": stats3(per_req),
                                  "overhead_us": stats3(over), "source": sorted(src)}
        return out

    def hostcost_section(self):
        """The host's hand-off costs (bench/hostcost.c) before and after the
        boots: what a request pays for each wake-up of another thread, on
        another CPU or on the same one."""
        hc = self.data.get("hostcost")
        if not hc:
            return
        p = self.p
        p("## Host costs: a hand-off between two host threads")
        p("")
        p("Round trips of a token between two threads (`bench/hostcost.c`): through two pipes "
          "(a blocking read each way, as an eventfd kick and its completion) and through a "
          "futex word, with the threads on two CPUs (cross: the device's and the guest's first "
          "CPU) or both on one (same). Each cell is the median of the rounds' mean round trip, "
          "with their min–max. An interrupt-driven request hands off at least twice (kick to "
          "the device's worker, completion back to the waiting task); a sync request whose "
          "handler runs on another CPU than its vCPU pays one cross round trip, one on the "
          "vCPU's CPU none. Ratios measured on a host whose cross cost differs move with it.")
        p("")
        whens = [w for w in ("start", "end") if hc.get(w)]
        p("| kind | layout | CPUs | " + " | ".join("%s, us" % w for w in whens) + " |")
        p("| --- | --- | --- | " + " | ".join("---:" for _ in whens) + " |")
        keys = []
        for w in whens:
            for d in hc[w]:
                k = (d["kind"], d["layout"], d["cpus"])
                if k not in keys:
                    keys.append(k)
        for k in keys:
            cells = []
            for w in whens:
                d = next((d for d in hc[w] if (d["kind"], d["layout"], d["cpus"]) == k), None)
                cells.append("%.1f (%.1f–%.1f)" % (d["rtt_us_median"], d["rtt_us_min"],
                                                   d["rtt_us_max"]) if d else "")
            p("| %s | %s | %s | %s |" % (k[0], k[1], k[2], " | ".join(cells)))
        p("")

    def kick_floor_section(self, uml):
        p = self.p
        p("## Kick floor: the transport's round trip, and the sync path above it")
        p("")
        kf = self.kick_floor()
        if not kf["floor_us"]:
            p("Kick floor: not recorded: no boot of this run has a kickfloor phase "
              "(guest-bench.sh runs it on virtio_fs_sync with sync queues since the debugfs "
              "floor; older runs did not).")
            p("")
            return
        p("guest-bench.sh's floor phase writes N to `/sys/kernel/debug/virtio_fs_sync/<tag>/floor` "
          "(N kicks of the sync queue with nothing on it, each timed by the driver from just "
          "before `virtqueue_notify()` to its return; Documentation/virtio-fs-sync.rst, The kick "
          "floor) in every main and floor boot whose share has sync queues. *Floor* = the median "
          "of the boots' median kick (min–max of those medians); the fastest and slowest single "
          "kicks of all boots beside it.")
        p("")
        p("| config | boots | kick round trip, median, us | fastest kick, us | slowest kick, us |")
        p("| --- | --- | --- | --- | --- |")
        for c in sorted(kf["floor_us"]):
            p("| %s | %d | %s | %s | %s |" % (c, kf["floor_us"][c][3], cell(kf["floor_us"][c]),
                                             fmt(kf["floor_min_us"][c]), fmt(kf["floor_max_us"][c])))
        p("")
        if kf["stat"]:
            p("The sync path's overhead above the floor, per request: the cache=never stat() of "
              "the floor boots (every call FUSE requests on the sync queue) divided by its sync "
              "requests per call, minus the same boot's floor; per boot, then the median "
              "(min–max). Requests per call: the driver's sync-queue submissions during the stat "
              "loop (`sync_submitted` of its line), or, for runs without them, the device's "
              "sync requests of the whole boot over the loop's calls. The per-request time "
              "includes the guest's syscall and VFS work shared among the requests, so the "
              "overhead is an upper bound of what the driver and the device add to the "
              "transport.")
            p("")
            p("| config | row | sync requests per call | per request, us | floor, us | over the floor, us |")
            p("| --- | --- | --- | --- | --- | --- |")
            for c in sorted(kf["stat"]):
                st = kf["stat"][c]
                p("| %s | stat(), cache=never (floor boots) | %s | %s | %s | %s |" % (
                    c, cell(st["per_op"]), cell(st["per_request_us"]), cell(kf["floor_us"][c]),
                    cell(st["overhead_us"])))
            p("")
        un = uml.get("unlink", {}).get("median minus the pair, us")
        lines = []
        for c in sorted(kf["floor_us"]):
            if un and un[0].get(c):
                u = un[0][c][0]
                f = kf["floor_us"][c][0]
                lines.append("- %s: unlink median minus the pair %s us = %.1f floors (the unlink "
                             "phase's sync requests per call are not recorded apart: its creates "
                             "use the same queues)." % (c, fmt(u), u / f if f else 0))
        self.md.extend(lines + ([""] if lines else []))

    # ---------------------------------------------------------- breakdown

    def breakdown_section(self):
        p = self.p
        p("## Cost breakdown of one request (bench/breakdown.sh)")
        p("")
        bd = self.data.get("breakdown")
        if bd is None:
            p("Breakdown: not recorded: this run had no breakdown step (`BENCH_BREAKDOWN`; "
              "the committed breakdown of 2026-12-01 is bench/results/2026-12-01-breakdown.md).")
            p("")
            return
        self.ops_breakdown(bd)
        self.build_breakdown(bd.get("build"))

    def build_breakdown(self, b):
        """The build workload's opcode mix and layers (breakdown.sh --build)."""
        if b is None:
            return
        p = self.p
        p("### The build workload")
        p("")
        if b.get("status") != "run" or not b.get("summary"):
            p("Build breakdown: %s." % (b.get("status") if b.get("status") != "run"
                                        else "run, but no case completed"))
            p("")
            return
        p("`%s`, %s s of wall time: one boot per configuration and round, each a make without "
          "tools and one under perf (bench/breakdown.sh, --build)." % (
              b.get("command", "?"), b.get("wall_s", "?")))
        p("")
        for ln in breakdown_module().render_build(b["summary"]):
            p(ln)
        p("")

    def ops_breakdown(self, bd):
        p = self.p
        if bd.get("status") != "run" or not bd.get("cases"):
            p("Breakdown: %s." % (bd.get("status") if bd.get("status") != "run"
                                  else "run, but no case completed"))
            p("")
            if not bd.get("cases"):
                return
        p("Run after the A/B boots on driver `%s` (commit %s), the `%s` UML flavour: `%s`, "
          "one boot per configuration and operation, %s s of wall time. Host-side sampling "
          "(perf cpu-clock) of the UML process tree and the device during a window of the "
          "operation; each sample is put in one part by its call chain (bench/breakdown.py). "
          "Cells: share of the sampled CPU time (CPU us per operation)."
          % (bd.get("driver_version", "?"), (bd.get("driver_commit") or "?")[:12],
             bd.get("flavor", "?"), bd.get("command", "?"), bd.get("wall_s", "?")))
        p("")
        split = breakdown_split()
        cases = bd.get("cases") or []
        corder = ["ours-sync", "ours-async", "intree"]
        ops = []
        for c in cases:
            if c.get("op") not in ops:
                ops.append(c.get("op"))
        for op in ops:
            cs = sorted([c for c in cases if c.get("op") == op],
                        key=lambda c: corder.index(c["config"]) if c["config"] in corder else 9)
            p("### %s" % op)
            p("")
            p("| part | " + " | ".join(c["config"] for c in cs) + " |")
            p("| --- |" + " --- |" * len(cs))

            def win(c, role):
                for k, v in (c.get("window_role") or {}).items():
                    if v == role:
                        return (c.get("windows") or {}).get(k[1:], {})
                return {}

            def us_op(c, role):
                w = win(c, role)
                try:
                    return int(w["ns"]) / int(w["n"]) / 1000.0
                except (KeyError, ValueError, ZeroDivisionError):
                    return None

            def share(c, ns):
                n = int(win(c, "perf").get("n", "0") or 0) or 1
                tot = c.get("samples") or 0
                if not tot:
                    return "-"
                return "%.1f %% (%.1f us)" % (100.0 * ns / tot,
                                              ns * (c.get("period_ns") or 1) / n / 1000.0)
            p("| wall us/op, no tool | %s |" % " | ".join(fmt(us_op(c, "plain")) for c in cs))
            for label, members in split:
                p("| %s | %s |" % (label, " | ".join(
                    share(c, sum((c.get("parts") or {}).get(m, 0) for m in members)) for c in cs)))
            p("| of which in the host kernel (host syscalls) | %s |" % " | ".join(
                share(c, sum((c.get("host") or {}).values())) for c in cs))
            p("")

    # ---------------------------------------------------------- goal figures

    def stats_of(self, kind, cfgs):
        """{workload: {label: (stats, unit, better)}} of KIND's tables, as the
        tables compute them, without writing them."""
        out = {}
        for wid, _, rows in metrics.workloads():
            for label, unit, better, get, rkind in rows:
                if kind in ("qemu", "probe", "smp") and rkind == "floor":
                    continue
                st = self.row_stats(kind, cfgs, get, rkind)
                if any(v is not None for v in st.values()):
                    out.setdefault(wid, {})[label] = (st, unit, better)
        return out

    # ---------------------------------------------------------- paired

    def paired_section(self):
        """The paired boot's rounds (benchlib/paired.py): per row, each pair's
        median per-round ratio, its min–max, the rounds a was better in, and
        whether it lies beyond the A/A control's range."""
        pd = self.data.get("paired")
        if not pd:
            return
        p = self.p
        p("## Paired rounds in one boot (bench/ab-uml.sh)")
        p("")
        p("Status: %s. %s" % (pd.get("status", "?"), "Command: `%s`." % pd["command"]
                               if pd.get("command") else ""))
        p("")
        an = paired.analyse(pd)
        if not an:
            p("(no rounds with result lines)")
            p("")
            return
        p("One UML boot (the split layout: device on CPU %s, guest on CPU %s) ran every "
          "configuration once per round, %s rounds at `%s` sizes, the rounds' orders from a "
          "Williams square (every configuration in every position and after every other equally "
          "often; bench/ab-in-guest.sh --order balanced); the driver is swapped in the guest between runs (bench/ab-in-guest.sh "
          "--reprobe). Per row and pair: the median of the per-round ratios a/b (a's figure over "
          "b's in the same round; below 1 is better for times, above 1 for rates), their "
          "min–max, and in how many rounds a was better. `%s vs %s` is the A/A control, its "
          "cells with their *band*, 1/m to m, m the control's per-round ratio farthest from 1.00 "
          "on that row (what the rounds' noise alone did to a ratio). A pair's median ratio "
          "outside the band is **beyond the control**, inside it \"within the control\" (the "
          "rounds do not tell it from 1.00). *95 %% CI*: the percentile-bootstrap interval of the "
          "median per-round ratio (2,000 resamples); a pair is called *faster* or *slower* only "
          "where its interval excludes 1.00 and the control's interval on that row holds 1.00." % (pd.get("pin_device", "?"), pd.get("pin_guest", "?"),
                            pd.get("rounds", "?"), pd.get("size", "?"), paired.CONTROL[0],
                            paired.CONTROL[1]))
        p("")
        pairs = [pr for pr in paired.PAIRS if any(pr in row for row in an.values())]
        p("| workload | row | %s |" % " | ".join("%s vs %s" % pr for pr in pairs))
        p("|" + " --- |" * (2 + len(pairs)))
        for (wid, label), row in an.items():
            p("| %s | %s | %s |" % (wid, label, " | ".join(
                paired.cell(row[pr]) if pr in row else "-" for pr in pairs)))
        p("")
        for a, b in pairs:
            w = paired.every_row(an, a, b, GOAL_SKIP_ROWS)
            if w:
                p("- %s vs %s: worst of %d rows %.2f× (%s, %s%s); below 0.97×: %d rows, %d of "
                  "them beyond the control." % (a, b, w[6], w[0], w[1], w[2],
                                                ", " + w[3] if w[3] else "", w[4], w[5]))
        p("")

    # ---------------------------------------------------------- interleave

    def interleave_section(self):
        """The interleaved pairs (benchlib/interleave.py): per row and pair,
        the median of the blocks' ratios B/A, its 95 % interval, the blocks
        B was better in, the claim, and the sides' guest CPU seconds."""
        il = self.data.get("interleave")
        if not il:
            return
        p = self.p
        p("## Interleaved pairs: two shares in one boot, ABBA blocks (bench/interleave.sh)")
        p("")
        p("Status: %s." % il.get("status", "?"))
        p("")
        prs = il.get("pairs") or {}
        if not prs:
            return
        an = interleave.analyse_all(prs)
        p("One UML boot per pair, two shares mounted side by side (A the baseline, B the "
          "other), each on a reference device of its own, placed `%s` (device `%s`, guest "
          "`%s`: colocated puts both devices on the guest's CPU). Block k runs the `%s` "
          "workloads at the `block` size on A then B (k odd) or B then A (k even), %s blocks. "
          "Per row: the median over the blocks of B's figure over A's in the same block (below "
          "1 is better for times, above 1 for rates), its 95 %% percentile-bootstrap interval "
          "(2,000 resamples), the blocks B was better in, and the claim: *faster* or *slower* "
          "only where the interval excludes 1.00 and the A/A pair's interval on that row holds "
          "1.00. CPU: the guest's user + system seconds of that phase, median of the blocks, "
          "A / B. A block during which the host lost more than %s %% of its CPU time to steal "
          "was run again (twice at most); only its last attempt counts."
          % (il.get("layout", "?"), il.get("pin_device", "?"), il.get("pin_guest", "?"),
             il.get("workloads", "?"), il.get("blocks", "?"), il.get("steal_max", "?")))
        p("")
        p("| pair | B vs A | what differs | blocks | run again | over the steal limit, kept "
          "| steal, median % | guest status |")
        p("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, d in prs.items():
            known = [x for x in interleave.PAIRS if x[0] == name]
            _, b, a, what = known[0] if known else (name, "?", "?", "?")
            lines = d.get("lines") or []
            again, over = interleave.reruns(lines)
            steal = [x for x in interleave.steal(lines) if x is not None]
            p("| %s | %s vs %s | %s | %d | %d | %d | %s | %s |" % (
                name, b, a, what, len(interleave.blocks(lines)), again, over,
                "%.2f" % sorted(steal)[len(steal) // 2] if steal else "not measured",
                d.get("guest_status")))
        p("")
        names = list(prs)
        keys = []
        for n in names:
            for k in an.get(n, {}):
                if k not in keys and k[1] not in GOAL_SKIP_ROWS:
                    keys.append(k)
        p("| workload | row | " + " | ".join(names) + " |")
        p("|" + " --- |" * (2 + len(names)))
        for k in keys:
            cells = []
            for n in names:
                st = an.get(n, {}).get(k)
                if not st:
                    cells.append("-")
                    continue
                ci = st["ci95"]
                cpu = ("; CPU %s / %s s" % (fmt(st["cpu_a"]), fmt(st["cpu_b"]))
                       if st["cpu_a"] is not None and st["cpu_b"] is not None else "")
                cl = st.get("claim")
                cells.append("%.2f×%s, %d/%d%s%s" % (
                    st["median"], " [%.2f–%.2f]" % ci if ci else "", st["better_blocks"],
                    len(st["ratios"]), ", **%s**" % cl if cl in ("faster", "slower") else
                    (", no claim" if cl else ""), cpu))
            p("| %s | %s | %s |" % (k[0], k[1], " | ".join(cells)))
        p("")

    def goal_figures(self):
        """The benchmark plan's goal figures: a list of {"figure", "goal", "ratio",
        "mark", "met", "detail"}; ratio and met are None where the run has
        no such rows."""
        uml = self.stats_of("uml", self.groups["uml"])
        smp = self.stats_of("smp", self.groups["smp"])
        goals = []

        def one(figure, st, wid, label, a, b, op, limit):
            row = st.get(wid, {}).get(label)
            g = {"figure": figure, "goal": "%s %.2f×" % (op, limit), "ratio": None,
                 "mark": "", "met": None, "detail": "%s vs %s, %s: %s" % (a, b, wid, label)}
            if row and row[0].get(a) and row[0].get(b) and row[0][b][0]:
                sa, sb = row[0][a], row[0][b]
                g["ratio"] = sa[0] / sb[0]
                g["mark"] = spread_word(beyond_spread(sa, sb))
                g["met"] = meets(g["ratio"], op, limit)
            goals.append(g)
        def uml_goals(a, tail):
            for figure, wid, label, op, limit in UML_GOALS:
                one(figure + tail, uml, wid, label, a, "intree", op, limit)

        def build_goal(a, tail):
            figure, wid, label, op, limit = BUILD_GOAL
            one(figure + tail, uml, wid, label, a, "intree", op, limit)

        uml_goals("ours-sync", "")
        one("fio one job per vCPU, read MiB/s (SMP UML 7.3)", smp, "fio-n", "read MiB/s",
            "smp-ours-sync", "smp-intree", "≥", 1.24)
        one("fio one job per vCPU, write MiB/s (SMP UML 7.3)", smp, "fio-n", "write MiB/s",
            "smp-ours-sync", "smp-intree", "≥", 1.24)
        build_goal("ours-sync", "")
        for a, name in (("ours-sync", "ours-sync vs in-tree, every row"),
                        ("ours-async", "ours-async vs in-tree, every row")):
            goals.append(self.every_row(uml, a, "intree", name))
        # The same UML goals for the faithful layout (configs.LAYOUTS), in a
        # run that has it: the real design's layout beside today's.
        if any(c == FAITHFUL for c in self.groups["uml"]):
            tail = " (%s)" % FAITHFUL
            uml_goals(FAITHFUL, tail)
            build_goal(FAITHFUL, tail)
            goals.append(self.every_row(uml, FAITHFUL, "intree", FAITHFUL + " vs in-tree, every row"))
        if "smp-" + FAITHFUL in self.groups["smp"]:
            tail = " (SMP UML 7.3, smp-%s)" % FAITHFUL
            for label in ("read MiB/s", "write MiB/s"):
                one("fio one job per vCPU, %s%s" % (label, tail), smp, "fio-n", label,
                    "smp-" + FAITHFUL, "smp-intree", "≥", 1.24)
        if CONTROL in self.groups["uml"]:
            g = self.every_row(uml, CONTROL, "intree", CONTROL + " vs in-tree, every row")
            g.update(goal="none: the A/A control (the same driver and device)", met=None,
                     control=True)
            goals.append(g)
        return goals + self.paired_goals()

    def paired_goals(self):
        """The UML goals again from the paired boot's per-round ratios."""
        an = paired.analyse(self.data.get("paired"))
        out = []
        tail = " (paired rounds)"

        def one(figure, wid, label, a, op, limit):
            st = an.get((wid, label), {}).get((a, "intree"))
            g = {"figure": figure + tail, "goal": "%s %.2f×" % (op, limit), "ratio": None,
                 "mark": "", "met": None, "detail": "%s vs intree, %s: %s" % (a, wid, label)}
            if st:
                g.update(ratio=st["median"], mark=paired.mark(st), met=meets(st["median"], op, limit))
                g["detail"] += "; %d/%d rounds better" % (st["better_rounds"], len(st["ratios"]))
            out.append(g)
        if not an:
            return out
        for figure, wid, label, op, limit in UML_GOALS + (BUILD_GOAL,):
            one(figure, wid, label, "ours-sync", op, limit)
        for a, name in (("ours-sync", "ours-sync vs in-tree, every row"),
                        ("ours-async", "ours-async vs in-tree, every row"),
                        (CONTROL, CONTROL + " vs in-tree, every row")):
            w = paired.every_row(an, a, "intree", GOAL_SKIP_ROWS)
            g = {"figure": name + tail, "goal": "≥ 0.97× on every row", "ratio": None,
                 "mark": "", "met": None, "detail": "no rows"}
            if w:
                g.update(ratio=w[0], mark=w[3], met=w[4] == 0,
                         detail="worst of %d rows: %s, %s; %d rows below 0.97× (%d of them "
                         "beyond the control)" % (w[6], w[1], w[2], w[4], w[5]))
            if a == CONTROL:
                g.update(goal="none: the A/A control", met=None, control=True)
            out.append(g)
        return out

    def every_row(self, uml, a, b, name):
        """The worst UML table row of A vs B as a performance ratio (a/b where
        higher is better, b/a where lower is), rows that do not measure the
        file system left out (GOAL_SKIP_ROWS)."""
        g = {"figure": name, "goal": "≥ 0.97× on every row", "ratio": None, "mark": "",
             "met": None, "detail": "no rows"}
        worst, below, n = None, [], 0
        for wid, rows in uml.items():
            for label, (st, unit, better) in rows.items():
                if label in GOAL_SKIP_ROWS or not st.get(a) or not st.get(b):
                    continue
                if not st[a][0] or not st[b][0]:
                    continue
                perf = st[a][0] / st[b][0] if better == "higher" else st[b][0] / st[a][0]
                n += 1
                if perf < 0.97:
                    below.append((perf, wid, label, beyond_spread(st[a], st[b])))
                if worst is None or perf < worst[0]:
                    worst = (perf, wid, label, beyond_spread(st[a], st[b]))
        if worst is None:
            return g
        g["ratio"], g["mark"], g["met"] = worst[0], spread_word(worst[3]), not below
        marked = [x for x in below if x[3] is not None]
        g["detail"] = "worst of %d rows: %s, %s; %d rows below 0.97×%s" % (
            n, worst[1], worst[2], len(below),
            " (%d of them beyond spread)" % sum(1 for x in marked if x[3]) if marked else "")
        return g

    def goal_section(self):
        p = self.p
        p("## Goal figures")
        p("")
        p("Each goal's ratio of medians from this run's tables, its spread mark (beyond / within "
          "spread as in the tables; none with one boot on a side) and whether the median ratio "
          "meets the goal. The \"every row\" goals take every UML table row but those that do "
          "not measure the file system (%s) as a performance ratio (higher is better: a/b for "
          "rates, b/a for times) and give the worst. Goals marked \"(paired rounds)\" are the "
          "paired boot's median per-round ratios instead, marked against its A/A control "
          "(section \"Paired rounds in one boot\")." % ", ".join("`%s`" % r for r in GOAL_SKIP_ROWS))
        p("")
        p("| goal figure | goal | measured | spread or control | verdict | rows |")
        p("| --- | --- | --- | --- | --- | --- |")
        goals = self.goal_figures()
        for g in goals:
            p("| %s | %s | %s | %s | %s | %s |" % (
                g["figure"], g["goal"], "%.2f×" % g["ratio"] if g["ratio"] is not None else "-",
                g["mark"] or "-", "control" if g.get("control") else verdict(g["met"]),
                g["detail"]))
        p("")
        control = [g for g in goals if g.get("control") and g["ratio"] is not None]
        if control:
            p("The A/A control: `%s` is `intree` booted again as a configuration of its own, "
              "interleaved with the others, so its ratios to `intree` are what this run's noise "
              "alone makes of a ratio. Its worst row is %.2f× (%s). An every-row figure of "
              "another pair that is no worse than this and has no row beyond the spread is not "
              "told apart from 1.00× by this run." % (CONTROL, control[0]["ratio"],
                                                       control[0]["detail"]))
            p("")
        p("The sync path's overhead over the kick floor (section \"Kick floor\"): %s"
          % floor_sentence(self.kick_floor()))
        p("")

    # ---------------------------------------------------------- summary

    def sline(self, stats, wid, label, a, b):
        st = stats.get(wid, {}).get(label)
        if not st:
            return
        s, unit, better = st
        if s.get(a) is None or s.get(b) is None:
            return
        self.summary.append("- %s, %s: %s %s vs %s %s %s: %s" % (
            wid, label, a, fmt(s[a][0]), b, fmt(s[b][0]), unit, ratio_cell(s[a], s[b], better)))

    def floor_line(self, uml):
        """The sync path's stat() against guest tmpfs."""
        st = uml.get("floor", {}).get(FLOOR_STAT)
        if not (st and st[0].get("ours-sync") and st[0].get("tmpfs")):
            return
        s = st[0]
        self.summary.append(
            "- floor: a FUSE stat() through the sync path costs %s us against %s us for "
            "stat() on guest tmpfs: %s us over the floor (intree: %s us, ours-async: %s us)."
            % (fmt(s["ours-sync"][0]), fmt(s["tmpfs"][0]), fmt(s["ours-sync"][0] - s["tmpfs"][0]),
               fmt(s["intree"][0]) if s.get("intree") else "-",
               fmt(s["ours-async"][0]) if s.get("ours-async") else "-"))

    def spread_counts(self, uml):
        """How many of the UML tables' ratios are beyond the spread."""
        out = []
        for a, b in configs.ratios("uml", self.groups["uml"]):
            n = beyond = 0
            for wid, rows in uml.items():
                for label, (st, unit, better) in rows.items():
                    sp = beyond_spread(st.get(a), st.get(b))
                    if sp is not None:
                        n += 1
                        beyond += sp
            if n:
                out.append("- %s vs %s: %d of the %d UML table rows with two boots or more on "
                           "both sides differ beyond the spread." % (a, b, beyond, n))
        return out + ([""] if out else [])

    def summary_section(self, uml, qemu, smp):
        self.p("## Summary of ratios")
        self.p("")
        self.p("Ratios of medians; **beyond spread** / within spread as in the tables (the "
               "min–max ranges of the two configurations' boots do not / do overlap).")
        self.p("")
        self.md.extend(self.spread_counts(uml))
        for wid, label in SUMMARY_UML:
            for a, b in (("ours-sync", "intree"), ("ours-sync", "ours-async"),
                         ("ours-sync-faithful", "intree"), ("ours-sync-faithful", "ours-sync")):
                self.sline(uml, wid, label, a, b)
        self.floor_line(uml)
        for wid, label in SUMMARY_QEMU:
            for a, b in configs.RATIOS["qemu"]:
                self.sline(qemu, wid, label, a, b)
        for label in ("read MiB/s", "write MiB/s", "read kIOPS", "write kIOPS"):
            self.sline(smp, "fio-n", label, "smp-ours-sync", "smp-intree")
            self.sline(smp, "fio-1", label, "smp-ours-sync", "smp-intree")
            self.sline(smp, "fio-n", label, "smp-ours-sync", "smp-ours-sync-inband")
        self.md.extend(self.summary or ["(no ratios: a configuration is missing)"])
        self.p("")

    def notes(self, path):
        if path and os.path.exists(path):
            with open(path) as f:
                self.p(f.read().rstrip())
            self.p("")


def render(jpath, mdpath, svgdir, notes=None):
    with open(jpath) as f:
        rep = Report(json.load(f), jpath, mdpath, svgdir)
    os.makedirs(svgdir, exist_ok=True)
    for fn in os.listdir(svgdir):
        if fn.endswith(".svg"):
            os.unlink(os.path.join(svgdir, fn))
    rep.header()
    rep.environment()
    rep.warnings()
    rep.pinning_applied()
    rep.method()
    rep.failed_boots()
    uml = rep.uml_section()
    rep.placement_section()
    rep.probe_section()
    qemu = rep.qemu_section()
    smp = rep.smp_section()
    rep.counters_section()
    rep.device_timing_section()
    rep.hostcost_section()
    rep.kick_floor_section(uml)
    rep.breakdown_section()
    rep.paired_section()
    rep.interleave_section()
    rep.goal_section()
    rep.summary_section(uml, qemu, smp)
    rep.notes(notes)
    with open(mdpath, "w") as f:
        f.write("\n".join(rep.md) + "\n")


# ---------------------------------------------------------------- summary

def summary_line(d):
    """One guest-bench.sh line as plain text."""
    ph = d["phase"]
    if ph == "env":
        return "  %s size=%s jobs=%s fs=%s" % (d.get("kernel"), d.get("size"), d.get("jobs"), d.get("fs"))
    if d.get("rc") != 0:
        return "  %-18s FAILED rc=%s %s" % (ph, d.get("rc"), d.get("error", ""))
    if "fio" in d:
        f = slim_fio(d["fio"]) if "job" not in d["fio"] else d["fio"]
        return "  %-18s read %.1f MiB/s %.2f kIOPS, write %.1f MiB/s %.2f kIOPS" % (
            ph, f["read"]["bw"] / 1024, f["read"]["iops"] / 1000,
            f["write"]["bw"] / 1024, f["write"]["iops"] / 1000)
    keys = [k for k in d if k.endswith(("_per_s", "mean_ns", "median_ns", "p99_ns",
                                        "elapsed_s", "user_s", "sys_s", "clock_pair_ns"))]
    return "  %-18s %s" % (ph, " ".join("%s=%s" % (k, d[k]) for k in keys))


def summary_cmd(files):
    for fn in files:
        print("== %s" % fn)
        with open(fn) as f:
            for ln in f:
                if ln.startswith('{"phase"'):
                    print(summary_line(json.loads(ln)))
        # ab-in-guest.sh's files beside it: the setup and the driver's counters
        base = fn[:-4] if fn.endswith(".out") else None
        setup = read(base + ".setup") if base else None
        if setup:
            print("  %-18s %s" % ("setup", setup.strip()))
        stats = read(base + ".stats") if base else None
        if stats and stats.strip():
            tot = counters.totals(counters.driver_rows(stats),
                                  ("submitted", "inline", "deferred", "fallback", "bad_reply"))
            print("  %-18s %s" % ("driver counters", " ".join("%s=%d" % kv for kv in tot.items())))


def headline(jpath):
    """Markdown lines of a report's goal figures, for the README."""
    with open(jpath) as f:
        data = json.load(f)
    rep = Report(data, jpath, os.path.splitext(jpath)[0] + ".md", os.path.splitext(jpath)[0])
    name = os.path.splitext(os.path.basename(jpath))[0]
    env = data.get("env", {})
    md = os.path.abspath(os.path.splitext(jpath)[0] + ".md")
    where = os.path.relpath(md, sizes.REPO) if md.startswith(sizes.REPO + os.sep) else name + ".md"
    out = ["From %s (%s, driver %s, %s sizes, boots per configuration: %s):"
           % (where, env.get("date", "?"), env.get("driver_version", "?"), env.get("size", "?"),
              env.get("repeats", "?")), ""]
    for g in rep.goal_figures():
        if g["ratio"] is None:
            out.append("- %s: not measured (goal %s)" % (g["figure"], g["goal"]))
            continue
        if g.get("control"):
            out.append("- %s: %.2f× (the A/A control, no goal; %s)" % (
                g["figure"], g["ratio"], g["detail"]))
            continue
        out.append("- %s: %.2f× (goal %s, %s%s)" % (
            g["figure"], g["ratio"], g["goal"], verdict(g["met"]).strip("*"),
            ", " + g["mark"] if g["mark"] else ""))
    out.append("- kick floor: %s" % floor_sentence(rep.kick_floor()))
    return out


def main(argv):
    if len(argv) >= 3 and argv[1] in ("headline", "--headline"):
        print("\n".join(headline(argv[2])))
        return 0
    if len(argv) >= 3 and argv[1] == "collect":
        json.dump(collect(argv[2]), sys.stdout, indent=1, sort_keys=False)
        sys.stdout.write("\n")
        return 0
    if len(argv) >= 5 and argv[1] == "render":
        render(argv[2], argv[3], argv[4], argv[5] if len(argv) > 5 else None)
        return 0
    if len(argv) >= 3 and argv[1] == "summary":
        summary_cmd(argv[2:])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
