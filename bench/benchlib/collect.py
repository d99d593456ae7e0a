# SPDX-License-Identifier: GPL-2.0
"""A bench run's raw directory into one JSON document (report.py collect).

RAWDIR holds manifest.jsonl (one line per boot, written by bench.py), env
(KEY=VALUE lines) and, per boot, the directory tests/vm/run --results left
(out, status, driver-stats, dev-stats, cmd-time, dmesg, pinning,
cpu-times, cmdline, device.log: its lines of the threads' affinity and of
--populate-memory) and ID.stderr.
"""
import glob
import json
import os
import re

from benchlib import counters

FORMAT = "virtio-fs-sync-bench/1"
FIO_KEEP = ("io_bytes", "io_kbytes", "bw", "iops", "runtime", "total_ios")
FIO_PERCENTILES = ("1.000000", "10.000000", "50.000000", "90.000000", "99.000000", "99.900000")


def read(path, default=None):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def slim_fio(fio):
    """The parts of fio's JSON the report uses (the rest is bulky)."""
    out = {"fio version": fio.get("fio version")}
    job = (fio.get("jobs") or [{}])[0]
    out["job"] = {k: job.get(k) for k in ("jobname", "job_runtime", "usr_cpu", "sys_cpu",
                                          "ctx", "error")}
    for d in ("read", "write"):
        s = job.get(d, {})
        o = {k: s.get(k) for k in FIO_KEEP}
        for lat in ("clat_ns", "lat_ns"):
            ls = s.get(lat, {})
            o[lat] = {k: ls.get(k) for k in ("min", "max", "mean", "stddev", "N")}
            pct = ls.get("percentile")
            if pct:
                o[lat]["percentile"] = {k: v for k, v in pct.items() if k in FIO_PERCENTILES}
        out[d] = o
    return out


def result_lines(text):
    """guest-bench.sh's JSON lines (fio's slimmed) and the other lines."""
    lines, other = [], []
    for ln in text.splitlines():
        if ln.startswith('{"phase"'):
            try:
                obj = json.loads(ln)
            except ValueError as e:
                other.append("unparsable line: %s: %s" % (e, ln[:200]))
                continue
            if "fio" in obj:
                obj["fio"] = slim_fio(obj["fio"])
            lines.append(obj)
        elif ln.strip():
            other.append(ln)
    return lines, other


TIMER_LOST = re.compile(r"UML: timer expiry lost \(([0-9]+) so far\)")


def timer_lost(console):
    """How many lost timer expiries the UML test kernel recovered at idle
    (tests/vm/patches/uml-timer-expiry-lost.patch), from its console: the
    highest count it printed (it prints the first ten, then every 1000th)."""
    return max((int(x) for x in TIMER_LOST.findall(console)), default=0)


def run_record(raw, m):
    """One manifest line M with what its boot left."""
    d = m.pop("dir")

    def text(name):
        return read(os.path.join(d, name), "") or ""
    m["raw_dir"] = os.path.relpath(d, os.path.dirname(os.path.dirname(raw)))
    status = read(os.path.join(d, "status"))
    m["guest_status"] = int(status) if status and status.strip().isdigit() else None
    m["lines"], other = result_lines(text("out"))
    m["guest_log_tail"] = other[-20:]
    m["driver_stats"] = counters.driver_rows(text("driver-stats"))
    m["dev_stats"] = counters.kv_rows(text("dev-stats"))
    ct = text("cmd-time").split()
    m["cmd_time"] = [float(x) for x in ct] if len(ct) == 2 else None
    pin = read(os.path.join(d, "pinning"))
    m["pinning"] = counters.pairs(pin) if pin is not None else None
    cpu = read(os.path.join(d, "cpu-times"))
    m["cpu_times"] = counters.cpu_times(cpu) if cpu is not None else None
    # the device's own pinning, read back (--pin-sync, --pin-workers)
    m["device_affinity"] = [ln.split(": ", 1)[1] for ln in text("device.log").splitlines()
                            if ln.startswith("vhost-user-fs: ") and ": CPUs " in ln]
    # what the device did with guest memory (--populate-memory)
    m["device_memory"] = [ln.split(": ", 1)[1] for ln in text("device.log").splitlines()
                          if ln.startswith(("vhost-user-fs: populated region ",
                                            "vhost-user-fs: --populate-memory: "))]
    mv = re.search(r"Linux version (\S+)", text("dmesg"))
    m["guest_kernel"] = mv.group(1) if mv else None
    m["cmdline"] = text("cmdline").strip()
    m["timer_lost"] = timer_lost(text("console"))
    stderr = read(os.path.join(raw, m["id"] + ".stderr"), "") or ""
    m["runner_stderr_tail"] = stderr.splitlines()[-10:]
    return m


# The parts of a breakdown case (bench/breakdown.py classify) the report uses.
BREAKDOWN_KEEP = ("case", "config", "op", "period_ns", "nsamples", "windows", "window_role",
                  "samples", "groups", "parts", "host", "debug", "trace_uml", "trace_guest",
                  "trace_dev")


def breakdown(raw):
    """RAW/breakdown-status and the cases of RAW/breakdown/ (bench.py's
    breakdown step), or None when the run had no such step."""
    status = read(os.path.join(raw, "breakdown-status"))
    if status is None:
        return None
    out = counters.pairs(status, strip=False)
    out["cases"] = []
    for p in sorted(glob.glob(os.path.join(raw, "breakdown", "*", "breakdown.json"))):
        try:
            with open(p) as f:
                c = json.load(f)
        except (OSError, ValueError):
            continue
        out["cases"].append({k: c.get(k) for k in BREAKDOWN_KEEP})
    if "build_status" in out:
        b = {"status": out.pop("build_status"), "command": out.pop("build_command", None),
             "wall_s": out.pop("build_wall_s", None)}
        try:
            with open(os.path.join(raw, "breakdown-build", "summary.json")) as f:
                b["summary"] = json.load(f)
        except (OSError, ValueError):
            pass
        out["build"] = b
    return out


def ab_rounds(ab):
    """The runs of an ab-in-guest.sh --out directory AB, one per
    configuration and round: its result lines, its place in the round
    (AB/order) and the driver's counters."""
    order = (read(os.path.join(ab, "order"), "") or "").split("\n")
    pos = {}
    for ln in order:
        f = ln.split()
        if len(f) == 2:
            pos.setdefault(f[0], []).append(f[1])
    runs = []
    for fn in sorted(os.listdir(ab)) if os.path.isdir(ab) else []:
        m = re.match(r"^(.+)-r([0-9]+)\.out$", fn)
        if not m:
            continue
        c, r = m.group(1), m.group(2)
        lines, _ = result_lines(read(os.path.join(ab, fn), "") or "")
        rnd = pos.get(r, [])
        runs.append({
            "config": c, "round": int(r),
            "position": rnd.index(c) + 1 if c in rnd else None,
            "lines": lines,
            "driver_stats": counters.driver_rows(
                read(os.path.join(ab, "%s-r%s.stats" % (c, r)), "") or "")})
    return runs


def paired(raw):
    """RAW/paired-status and the rounds of RAW/paired/ab/ (bench.py's paired
    step, benchlib/paired.py), or None when the run had no such step."""
    status = read(os.path.join(raw, "paired-status"))
    if status is None:
        return None
    out = counters.pairs(status, strip=False)
    out["runs"] = ab_rounds(os.path.join(raw, "paired", "ab"))
    out["check"] = (read(os.path.join(raw, "paired.stdout"), "") or "").splitlines()[-40:]
    out["timer_lost"] = timer_lost(read(os.path.join(raw, "paired", "console"), "") or "")
    return out


HOSTCOST_FIELDS = ("kind", "layout", "cpus", "rtt_us_median", "rtt_us_min", "rtt_us_max",
                   "rounds", "iters")


def hostcost_lines(text):
    """bench/hostcost.c's lines as dicts (the numbers as numbers)."""
    out = []
    for ln in text.splitlines():
        f = ln.split()
        if not f or f[0] != "hostcost":
            continue
        d = dict(kv.split("=", 1) for kv in f[1:] if "=" in kv)
        if not all(k in d for k in HOSTCOST_FIELDS):
            continue
        for k in ("rtt_us_median", "rtt_us_min", "rtt_us_max"):
            d[k] = float(d[k])
        for k in ("rounds", "iters"):
            d[k] = int(d[k])
        out.append({k: d[k] for k in HOSTCOST_FIELDS})
    return out


def hostcost(raw):
    """RAW/hostcost-start and -end (bench.py's host-cost probes), or None
    when the run had neither."""
    out = {}
    for when in ("start", "end"):
        text = read(os.path.join(raw, "hostcost-" + when))
        if text is not None:
            out[when] = hostcost_lines(text)
    return out or None


def interleave(raw):
    """RAW/interleave-status and each pair's boot under RAW/interleave/
    (bench.py's interleave step, benchlib/interleave.py), or None when the
    run had no such step."""
    status = read(os.path.join(raw, "interleave-status"))
    if status is None:
        return None
    out = counters.pairs(status, strip=False)
    out["pairs"] = {}
    base = os.path.join(raw, "interleave")
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        d = os.path.join(base, name)
        lines, other = result_lines(read(os.path.join(d, "out"), "") or "")
        st = read(os.path.join(d, "status"))
        out["pairs"][name] = {
            "lines": lines, "guest_log_tail": other[-20:],
            "guest_status": int(st) if st and st.strip().isdigit() else None,
            "driver_stats": counters.driver_rows(read(os.path.join(d, "driver-stats"), "") or ""),
            # each side's device: A serves the first share, B the second
            "dev_stats": {"a": counters.kv_rows(read(os.path.join(d, "dev-stats"), "") or ""),
                          "b": counters.kv_rows(read(os.path.join(d, "dev-stats.share1"), "")
                                                or "")},
            "timer_lost": timer_lost(read(os.path.join(d, "console"), "") or "")}
    return out


def collect(raw):
    env = counters.pairs(read(os.path.join(raw, "env"), "") or "", strip=False)
    with open(os.path.join(raw, "manifest.jsonl")) as f:
        runs = [run_record(raw, json.loads(line)) for line in f]
    data = {"format": FORMAT, "env": env, "runs": runs}
    # the steps a run may have had: each section only if it did
    for key, step in (("breakdown", breakdown), ("paired", paired),
                      ("interleave", interleave), ("hostcost", hostcost)):
        got = step(raw)
        if got is not None:
            data[key] = got
    return data
