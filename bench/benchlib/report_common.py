# SPDX-License-Identifier: GPL-2.0
"""What the report's sections share: its fixed texts, the rows and goals it
gives, and small helpers."""
import os

from benchlib import sizes
from benchlib.stats import fmt


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
            ("qemu_version", "QEMU"),
            ("qemu_patched", "the project's QEMU (`scripts/build-qemu.sh`)"), ("fio_version", "fio"), ("gcc_version", "gcc"),
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
