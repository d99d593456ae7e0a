# SPDX-License-Identifier: GPL-2.0
"""What the report measures: each workload's table rows, and how a row's
figure is read from one boot's result lines."""


def phase(run, name):
    for ln in run.get("lines", []):
        if ln.get("phase") == name and ln.get("rc") == 0:
            return ln
    return None


def getter(ph, *path, scale=1.0):
    def f(run):
        v = phase(run, ph)
        for p in path:
            if v is None:
                return None
            v = v.get(p) if isinstance(v, dict) else None
        if v is None:
            return None
        return float(v) * scale
    return f


def fio_get(ph, d, what):
    def f(run):
        ln = phase(run, ph)
        if not ln:
            return None
        s = ln["fio"].get(d) or {}
        if what == "mib":
            return s.get("bw", 0) / 1024.0
        if what == "kiops":
            return s.get("iops", 0) / 1000.0
        pct = (s.get("clat_ns") or {}).get("percentile") or {}
        v = pct.get(what)
        return v / 1000.0 if v is not None else None
    return f


def unlink_net_median(run):
    ln = phase(run, "unlink")
    if not ln:
        return None
    return (ln["median_ns"] - ln["clock_pair_ns"]) / 1000.0


def unlink_net_mean(run):
    ln = phase(run, "unlink")
    if not ln:
        return None
    return (ln["mean_ns"] - ln["clock_pair_ns"]) / 1000.0


def per_syscall(get):
    """A figure divided by the same boot's getppid() cost: the machine's load
    changes the cost of every trapped syscall in UML from boot to boot, and
    this ratio cancels much of that."""
    def f(run):
        v = get(run)
        ln = phase(run, "nullsys")
        if v is None or not ln or not ln.get("mean_ns"):
            return None
        return v / (ln["mean_ns"] / 1000.0)
    return f


def cpu_s(ph, which):
    def f(run):
        ln = phase(run, ph)
        if not ln:
            return None
        return ln["cpu_%s_ticks" % which] / float(ln.get("hz", 100))
    return f


# (id, title, kind, rows); row = (label, unit, better, getter)
def workloads():
    w = []
    w.append(("floor", "Floor: the cheapest requests", [
        ("stat() of one file, device cache=never (floor boots), us/call", "us", "lower",
         getter("statloop", "mean_ns", scale=1e-3), "floor"),
        ("stat() of one file, device cache=auto (attributes cached), us/call", "us", "lower",
         getter("statloop", "mean_ns", scale=1e-3), "main"),
        ("stat(), cache=never, in getppid() costs of the same boot", "getppid() costs", "lower",
         per_syscall(getter("statloop", "mean_ns", scale=1e-3)), "floor"),
        ("getppid() syscall, us/call", "us", "lower",
         getter("nullsys", "mean_ns", scale=1e-3), "main"),
        ("clock_gettime pair, us", "us", "lower",
         getter("clockpair", "median_ns", scale=1e-3), "main"),
    ]))
    for ph, title in (("fio-1", "fio 4 KiB randrw, pvsync, iodepth 1, direct=1, 1 job"),
                      ("fio-n", "fio 4 KiB randrw, pvsync, iodepth 1, direct=1, one job per vCPU")):
        w.append((ph, title, [
            ("read MiB/s", "MiB/s", "higher", fio_get(ph, "read", "mib"), "main"),
            ("write MiB/s", "MiB/s", "higher", fio_get(ph, "write", "mib"), "main"),
            ("read kIOPS", "kIOPS", "higher", fio_get(ph, "read", "kiops"), "main"),
            ("write kIOPS", "kIOPS", "higher", fio_get(ph, "write", "kiops"), "main"),
            ("read completion latency p50, us", "us", "lower", fio_get(ph, "read", "50.000000"), "main"),
            ("read completion latency p99, us", "us", "lower", fio_get(ph, "read", "99.000000"), "main"),
            ("write completion latency p50, us", "us", "lower", fio_get(ph, "write", "50.000000"), "main"),
            ("write completion latency p99, us", "us", "lower", fio_get(ph, "write", "99.000000"), "main"),
        ]))
    w.append(("unlink", "Unlink latency (each unlinkat timed; raw figures include one clock_gettime pair)", [
        ("mean, us", "us", "lower", getter("unlink", "mean_ns", scale=1e-3), "main"),
        ("median, us", "us", "lower", getter("unlink", "median_ns", scale=1e-3), "main"),
        ("stddev, us", "us", "lower", getter("unlink", "stddev_ns", scale=1e-3), "main"),
        ("min, us", "us", "lower", getter("unlink", "min_ns", scale=1e-3), "main"),
        ("p99, us", "us", "lower", getter("unlink", "p99_ns", scale=1e-3), "main"),
        ("clock_gettime pair (same run), us", "us", "lower",
         getter("unlink", "clock_pair_ns", scale=1e-3), "main"),
        ("mean minus the pair, us", "us", "lower", unlink_net_mean, "main"),
        ("median minus the pair, us", "us", "lower", unlink_net_median, "main"),
        ("median, in getppid() costs of the same boot", "getppid() costs", "lower",
         per_syscall(getter("unlink", "median_ns", scale=1e-3)), "main"),
        ("mean, in getppid() costs of the same boot", "getppid() costs", "lower",
         per_syscall(getter("unlink", "mean_ns", scale=1e-3)), "main"),
        ("create phase (empty files), files/s", "/s", "higher",
         getter("unlink", "creates_per_s"), "main"),
    ]))
    for ph, title in (("smallfile-1", "Small files (4 KiB), 1 process"),
                      ("smallfile-n", "Small files (4 KiB), one process per vCPU")):
        w.append((ph, title, [
            ("create+write/s", "/s", "higher", getter(ph, "create_write_per_s"), "main"),
            ("stat/s", "/s", "higher", getter(ph, "stat_per_s"), "main"),
            ("open+read/s", "/s", "higher", getter(ph, "open_read_per_s"), "main"),
            ("unlink/s", "/s", "higher", getter(ph, "unlink_per_s"), "main"),
        ]))
    w.append(("seq", "Sequential I/O (1 MiB buffers)", [
        ("write, no fsync, MiB/s", "MiB/s", "higher", getter("seqwrite-nofsync", "mib_per_s"), "main"),
        ("write + final fsync, MiB/s", "MiB/s", "higher", getter("seqwrite-fsync", "mib_per_s"), "main"),
        ("read (caches dropped), MiB/s", "MiB/s", "higher", getter("seqread", "mib_per_s"), "main"),
    ]))
    w.append(("build", "Build: unpack the sources onto the share, make -j<vCPUs>, make again (nothing to do)", [
        ("make elapsed, s", "s", "lower", getter("build-make", "elapsed_s"), "main"),
        ("make user CPU (rusage), s", "s", "lower", getter("build-make", "user_s"), "main"),
        ("make system CPU (rusage), s", "s", "lower", getter("build-make", "sys_s"), "main"),
        ("guest user CPU during make (/proc/stat), s", "s", "lower", cpu_s("build-make", "user"), "main"),
        ("guest system CPU during make (/proc/stat), s", "s", "lower", cpu_s("build-make", "sys"), "main"),
        ("no-op make elapsed, s", "s", "lower", getter("build-noop", "elapsed_s"), "main"),
        ("no-op make user CPU (rusage), s", "s", "lower", getter("build-noop", "user_s"), "main"),
        ("no-op make system CPU (rusage), s", "s", "lower", getter("build-noop", "sys_s"), "main"),
        ("untar elapsed, s", "s", "lower", getter("build-untar", "elapsed_s"), "main"),
        ("rm -rf of the tree, elapsed, s", "s", "lower", getter("build-rm", "elapsed_s"), "main"),
    ]))
    return w


CHARTS = {
    "floor": ["stat() of one file, device cache=never (floor boots), us/call",
              "stat(), cache=never, in getppid() costs of the same boot"],
    "unlink": ["mean, us", "median, us", "median, in getppid() costs of the same boot"],
    "build": ["make elapsed, s", "make system CPU (rusage), s"],
    "smallfile-1": ["create+write/s", "stat/s", "unlink/s"],
    "smallfile-n": ["create+write/s", "stat/s", "unlink/s"],
}

CPU_PHASES = ("statloop", "fio-1", "fio-n", "unlink", "smallfile-1", "smallfile-n",
              "seqwrite-nofsync", "seqread", "seqwrite-fsync", "build-untar", "build-make",
              "build-noop", "build-rm")

