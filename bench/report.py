#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark report of bench/bench.sh (python3 standard library only).

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

Every figure in the report is computed here from the JSON: medians, minima
and maxima over the repeats, and ratios of medians.
"""
import html
import json
import os
import re
import statistics
import sys

# ---------------------------------------------------------------- collect

FIO_KEEP = ("io_bytes", "io_kbytes", "bw", "iops", "runtime", "total_ios")


def slim_fio(fio):
    """The parts of fio's JSON the report uses (the rest is bulky)."""
    out = {"fio version": fio.get("fio version")}
    jobs = fio.get("jobs") or [{}]
    job = jobs[0]
    out["job"] = {"jobname": job.get("jobname"), "job_runtime": job.get("job_runtime"),
                  "usr_cpu": job.get("usr_cpu"), "sys_cpu": job.get("sys_cpu"),
                  "ctx": job.get("ctx"), "error": job.get("error")}
    for d in ("read", "write"):
        s = job.get(d, {})
        o = {k: s.get(k) for k in FIO_KEEP}
        for lat in ("clat_ns", "lat_ns"):
            ls = s.get(lat, {})
            o[lat] = {k: ls.get(k) for k in ("min", "max", "mean", "stddev", "N")}
            pct = ls.get("percentile")
            if pct:
                o[lat]["percentile"] = {k: v for k, v in pct.items()
                                        if k in ("1.000000", "10.000000", "50.000000",
                                                 "90.000000", "99.000000", "99.900000")}
        out[d] = o
    return out


def parse_kv_lines(text, lead_names):
    rows = []
    for line in text.splitlines():
        toks = line.split()
        if not toks:
            continue
        row = {}
        lead = 0
        for t in toks:
            if "=" in t:
                k, v = t.split("=", 1)
                try:
                    row[k] = int(v)
                except ValueError:
                    row[k] = v
            elif lead < len(lead_names):
                row[lead_names[lead]] = t
                lead += 1
        rows.append(row)
    return rows


def parse_cpu_times(text):
    """tests/vm/run's cpu-times: `NAME pid=N user_s=X sys_s=Y ...` per line."""
    out = {}
    for line in text.splitlines():
        toks = line.split()
        if not toks or "=" in toks[0]:
            continue
        row = {}
        for t in toks[1:]:
            if "=" not in t:
                continue
            k, v = t.split("=", 1)
            try:
                row[k] = float(v) if k.endswith("_s") else int(v)
            except ValueError:
                row[k] = v
        out[toks[0]] = row
    return out


def parse_pinning(text):
    """tests/vm/run's pinning: key=value lines."""
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def read(path, default=None):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def collect(raw):
    env = {}
    for line in (read(os.path.join(raw, "env"), "") or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    runs = []
    for line in open(os.path.join(raw, "manifest.jsonl")):
        m = json.loads(line)
        d = m.pop("dir")
        m["raw_dir"] = os.path.relpath(d, os.path.dirname(os.path.dirname(raw)))
        status = read(os.path.join(d, "status"))
        m["guest_status"] = int(status) if status and status.strip().isdigit() else None
        lines, other = [], []
        for ln in (read(os.path.join(d, "out"), "") or "").splitlines():
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
        m["lines"] = lines
        m["guest_log_tail"] = other[-20:]
        m["driver_stats"] = parse_kv_lines(read(os.path.join(d, "driver-stats"), "") or "",
                                           ("tag", "queue"))
        m["dev_stats"] = parse_kv_lines(read(os.path.join(d, "dev-stats"), "") or "", ())
        ct = (read(os.path.join(d, "cmd-time"), "") or "").split()
        m["cmd_time"] = [float(x) for x in ct] if len(ct) == 2 else None
        pin = read(os.path.join(d, "pinning"))
        m["pinning"] = parse_pinning(pin) if pin is not None else None
        cpu = read(os.path.join(d, "cpu-times"))
        m["cpu_times"] = parse_cpu_times(cpu) if cpu is not None else None
        dmesg = read(os.path.join(d, "dmesg"), "") or ""
        mv = re.search(r"Linux version (\S+)", dmesg)
        m["guest_kernel"] = mv.group(1) if mv else None
        m["cmdline"] = (read(os.path.join(d, "cmdline"), "") or "").strip()
        stderr = read(os.path.join(raw, m["id"] + ".stderr"), "") or ""
        m["runner_stderr_tail"] = stderr.splitlines()[-10:]
        runs.append(m)
    return {"format": "virtio-fs-sync-bench/1", "env": env, "runs": runs}


# ---------------------------------------------------------------- metrics

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
    w.append(("build", "Build: unpack the objtool and libsubcmd sources (linux-source-6.12) onto the share, make -j<vCPUs>", [
        ("make elapsed, s", "s", "lower", getter("build-make", "elapsed_s"), "main"),
        ("make user CPU (rusage), s", "s", "lower", getter("build-make", "user_s"), "main"),
        ("make system CPU (rusage), s", "s", "lower", getter("build-make", "sys_s"), "main"),
        ("guest user CPU during make (/proc/stat), s", "s", "lower", cpu_s("build-make", "user"), "main"),
        ("guest system CPU during make (/proc/stat), s", "s", "lower", cpu_s("build-make", "sys"), "main"),
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
              "build-rm")


# ---------------------------------------------------------------- render helpers

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
    if better == "higher":
        good = r > 1
    else:
        good = r < 1
    change = (r - 1) * 100
    word = "better" if good else ("same" if abs(change) < 0.5 else "worse")
    return "%.2f× (%+.1f %%, %s)" % (r, change, word)


COLORS = {"tmpfs": "#7f7f7f", "intree": "#1f77b4", "ours-async": "#ff7f0e",
          "ours-sync": "#2ca02c", "q-tmpfs": "#7f7f7f", "q-intree": "#1f77b4",
          "q-ours": "#ff7f0e", "q-intree-virtiofsd": "#9467bd", "q-ours-virtiofsd": "#8c564b"}


def svg_bars(title, unit, better, rows):
    """rows: [(config, (median, min, max, n))]. Horizontal bars with min-max whiskers."""
    rows = [(c, s) for c, s in rows if s is not None]
    if not rows:
        return None
    left, right, top, bar_h, gap = 150, 110, 46, 22, 10
    width = 720
    plot_w = width - left - right
    height = top + len(rows) * (bar_h + gap) + 28
    vmax = max(s[2] for _, s in rows) or 1.0
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="14" font-weight="bold">%s</text>' % html.escape(title),
           '<text x="10" y="36" fill="#555">%s, %s is better; bar = median, whisker = min–max</text>'
           % (html.escape(unit), better)]
    y = top
    for c, (med, lo, hi, n) in rows:
        w = plot_w * med / vmax
        color = COLORS.get(c, "#17becf")
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                   % (left - 8, y + bar_h * 0.7, html.escape(c)))
        out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                   % (left, y, max(w, 1), bar_h, color))
        if n > 1:
            x0 = left + plot_w * lo / vmax
            x1 = left + plot_w * hi / vmax
            ym = y + bar_h / 2
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (x0, ym, x1, ym))
            for x in (x0, x1):
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>'
                           % (x, y + 5, x, y + bar_h - 5))
        out.append('<text x="%.1f" y="%d">%s</text>'
                   % (left + max(w, plot_w * hi / vmax) + 6, y + bar_h * 0.7, fmt(med)))
        y += bar_h + gap
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (left, top - 4, left, y - gap + 4))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60]


# ---------------------------------------------------------------- render

def render(jpath, mdpath, svgdir, notes=None):
    data = json.load(open(jpath))
    env = data["env"]
    runs = data["runs"]
    os.makedirs(svgdir, exist_ok=True)
    for fn in os.listdir(svgdir):
        if fn.endswith(".svg"):
            os.unlink(os.path.join(svgdir, fn))
    svgrel = os.path.relpath(svgdir, os.path.dirname(os.path.abspath(mdpath)))
    md = []
    p = md.append

    def runs_of(kind, config):
        return [r for r in runs if r["kind"] == kind and r["config"] == config
                and r["rc"] == 0 and r.get("lines")]

    uml_configs = []
    qemu_configs = []
    probe_configs = []
    smp_configs = []
    for r in runs:
        lst = {"qemu": qemu_configs, "probe": probe_configs,
               "smp": smp_configs}.get(r["kind"], uml_configs)
        if r["config"] not in lst:
            lst.append(r["config"])

    failed = [r for r in runs if r["rc"] != 0]
    sizes = {}
    for r in runs:
        for ln in r.get("lines", []):
            if ln.get("phase") == "env":
                sizes.setdefault(r["kind"] if r["kind"] in ("qemu", "smp") else "uml", ln.get("size"))

    p("# virtio-fs-sync A/B benchmark: %s" % os.path.splitext(os.path.basename(mdpath))[0])
    p("")
    p("Generated by `bench/report.py` from `%s` (every figure below is computed "
      "from that file). Command: `%s`." % (os.path.basename(jpath), env.get("command", "make bench")))
    p("")
    p("## Environment")
    p("")
    p("| | |")
    p("| --- | --- |")
    kernels = sorted({r.get("guest_kernel") for r in runs if r.get("guest_kernel")})
    for k, label in (("date", "date (UTC)"), ("host", "host"), ("host_kernel", "host kernel"),
                     ("host_cpus", "host CPUs"), ("host_cpu_model", "CPU"),
                     ("driver_version", "driver (`git describe`)"),
                     ("uml_flavor", "UML kernel flavor"), ("uml_fragments", "UML config fragments"),
                     ("qemu_version", "QEMU"), ("fio_version", "fio"), ("gcc_version", "gcc"),
                     ("device", "device"), ("pin", "pinning (taskset -c, device and UML on one list)"),
                     ("mem_mb", "UML guest memory, MB"), ("size", "UML workload sizes (BENCH_SIZE)"),
                     ("qemu_size", "QEMU workload sizes"), ("repeats", "boots per configuration"),
                     ("tarball", "build workload"), ("wall_s", "wall time of the whole run, s")):
        if env.get(k):
            p("| %s | %s |" % (label, env[k].replace("|", "\\|")))
    if "pin_device" in env:
        p("| pinning (taskset -c) | UML boots: device `%s`, guest `%s`; QEMU boots: device %s, guest %s |" % (
            env.get("pin_device") or "-", env.get("pin_guest") or "-",
            "`%s`" % env["qemu_pin_device"] if env.get("qemu_pin_device") else "unpinned",
            "`%s`" % env["qemu_pin_guest"] if env.get("qemu_pin_guest") else "unpinned"))
    p("| guest kernels (from dmesg) | %s |" % ", ".join(kernels))
    loads = [r["load_before"] for r in runs] + [r["load_after"] for r in runs]
    if loads:
        l1 = [float(x.split()[0]) for x in loads]
        p("| host load average (1 min) around the boots | %.2f–%.2f |" % (min(l1), max(l1)))
    p("")
    bykey = {}
    for r in runs:
        if r["kind"] != "qemu" and r.get("uml_build_key"):
            bykey.setdefault(r["uml_build_key"], []).append(r["id"])
    if len(bykey) > 1:
        main_key = max(bykey, key=lambda k: len(bykey[k]))
        others = ["%s (%s)" % (k, ", ".join("`%s`" % i for i in ids))
                  for k, ids in bykey.items() if k != main_key]
        p("**The UML kernel (driver sources) changed during the run:** %d UML boots ran on build "
          "key %s, these on others: %s. Compare the figures with that in mind."
          % (len(bykey[main_key]), main_key, "; ".join(others)))
        p("")
    vers = sorted({r.get("driver_version") for r in runs if r.get("driver_version")})
    if len(vers) > 1:
        p("The work tree moved during the run (`git describe` after the boots: %s; other "
          "developers commit to the same tree). UML boots are tied to the build key above; QEMU "
          "boots build the module from the work tree at each boot." % ", ".join(vers))
        p("")
    if env.get("uml_flavor") == "debug":
        p("**This run used the debug UML kernel (lockdep, kmemleak): only valid to validate "
          "the scripts, not as a benchmark.**")
        p("")
    pinning_section(runs, p)
    p(SIZES_TEXT)
    p("")
    p(CONFIG_TEXT)
    p("")
    if failed:
        p("**Boots that failed (their figures are left out):**")
        p("")
        for r in failed:
            tail = "; ".join(r.get("runner_stderr_tail", [])[-3:])
            p("- `%s`: exit status %d. %s" % (r["id"], r["rc"], tail.replace("|", "\\|")[:400]))
        p("")

    summary = []

    def table(kind, configs, wid, title, rows, ratios):
        """One workload table; returns {(label): {config: stats}}."""
        have = False
        body = []
        allstats = {}
        for label, unit, better, get, rkind in rows:
            if kind in ("qemu", "probe", "smp") and rkind == "floor":
                continue  # no cache=never boots there
            if kind == "qemu" and unit == "getppid() costs":
                continue  # syscalls are not trapped there: no drift to cancel
            k = kind if kind in ("qemu", "probe", "smp") else rkind
            st = {}
            for c in configs:
                if k == "floor" and c == "tmpfs":
                    rs = runs_of("main", c)  # no device: the stat loop of the main boots
                else:
                    rs = runs_of(k, c)
                st[c] = stats3([get(r) for r in rs])
            if all(v is None for v in st.values()):
                continue
            have = True
            allstats[label] = (st, unit, better)
            cells = [cell(st[c]) for c in configs]
            rcells = [ratio_cell(st.get(a), st.get(b), better) for a, b in ratios]
            body.append("| %s | %s | %s |" % (label, " | ".join(cells), " | ".join(rcells))
                        if ratios else "| %s | %s |" % (label, " | ".join(cells)))
        if not have:
            return allstats
        p("### %s" % title)
        p("")
        hdr = ["metric"] + configs + ["%s vs %s" % (a, b) for a, b in ratios]
        p("| " + " | ".join(hdr) + " |")
        p("| " + " | ".join(["---"] * len(hdr)) + " |")
        md.extend(body)
        p("")
        p("Median of the boots (min–max); ratios are of medians, \"better\" in the "
          "metric's direction.")
        p("")
        # charts: the first two metrics of the table (or marked ones)
        for label in [l for l in CHARTS.get(wid, []) if l in allstats] or list(allstats)[:2]:
            st, unit, better = allstats[label]
            svg = svg_bars("%s: %s" % (title.split(" (")[0][:60], label), unit, better,
                           [(c, st[c]) for c in configs])
            if svg:
                fn = "%s-%s-%s.svg" % (kind, wid, slug(label))
                with open(os.path.join(svgdir, fn), "w") as f:
                    f.write(svg)
                p("![%s](%s/%s)" % (html.escape(label), svgrel, fn))
                p("")
        return allstats

    # ---- UML
    uml_stats = {}
    if uml_configs:
        p("## User-Mode Linux (the sync path), %s sizes" % sizes.get("uml", "?"))
        p("")
        ratios = [(a, b) for a, b in (("ours-sync", "intree"), ("ours-sync", "ours-async"),
                                      ("ours-async", "intree")) if a in uml_configs and b in uml_configs]
        for wid, title, rows in workloads():
            if wid == "build" and env.get("make_dir"):
                title = title.replace("make -j<vCPUs>", "make -j<vCPUs> -C %s" % env["make_dir"])
            uml_stats[wid] = table("uml", uml_configs, wid, title, rows, ratios)
        # guest CPU per phase
        p("### Guest CPU time per phase (user + system, s, from /proc/stat; median)")
        p("")
        p("| phase | " + " | ".join(uml_configs) + " |")
        p("| --- |" + " --- |" * len(uml_configs))
        for ph in CPU_PHASES:
            cells = []
            for c in uml_configs:
                u = stats3([cpu_s(ph, "user")(r) for r in runs_of("main", c)])
                s = stats3([cpu_s(ph, "sys")(r) for r in runs_of("main", c)])
                cells.append("-" if u is None else "%s + %s" % (fmt(u[0]), fmt(s[0])))
            if any(x != "-" for x in cells):
                p("| %s | %s |" % (ph, " | ".join(cells)))
        p("")
        cpu_time_table(p, "main", uml_configs, runs_of, "UML boots")
        cpu_time_table(p, "floor", [c for c in uml_configs if c != "tmpfs"], runs_of,
                       "UML floor boots (cache=never)")

    # ---- pinning probe
    if [r for r in runs if r["kind"] == "probe" and r["rc"] == 0]:
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
        want = ("stat() of one file, device cache=auto (attributes cached), us/call",
                "getppid() syscall, us/call", "mean, us", "median, us", "mean minus the pair, us",
                "median minus the pair, us", "median, in getppid() costs of the same boot")
        rows = [row for w in workloads() if w[0] in ("floor", "unlink") for row in w[2]
                if row[0] in want]
        table("probe", probe_configs, "pin", "Pinning probe", rows, [])

    # ---- QEMU
    q_stats = {}
    if qemu_configs:
        p("## QEMU/TCG, SMP 2, Debian 6.12 cloud kernel (fallback parity; device vs virtiofsd), %s sizes"
          % sizes.get("qemu", "?"))
        p("")
        p("QEMU passes only generic feature bits, so `VIRTIO_FS_F_SYNC` never reaches a "
          "QEMU guest: `q-ours` is virtio_fs_sync on its interrupt-driven path.")
        p("")
        ratios = [(a, b) for a, b in (("q-ours", "q-intree"), ("q-intree", "q-intree-virtiofsd"))
                  if a in qemu_configs and b in qemu_configs]
        for wid, title, rows in workloads():
            if wid in ("seq", "build"):
                pass
            q_stats[wid] = table("qemu", qemu_configs, wid, title, rows, ratios)
        cpu_time_table(p, "qemu", qemu_configs, runs_of, "QEMU boots")

    # ---- SMP UML 7.3
    smp_stats = {}
    if smp_configs:
        p("## SMP User-Mode Linux 7.3, %s vCPUs, per-queue kick channels, %s sizes"
          % (env.get("smp_cpus", "?"), sizes.get("smp", "?")))
        p("")
        p("UML 7.3 with `ncpus=%s seccomp=on`, the test kernel's per-queue kick channels "
          "(`tests/vm/patches/7.3/uml-virtio-kick-channel.patch`, negotiated with the "
          "reference device). `smp-intree` = in-tree virtiofs with one request queue per "
          "vCPU; `smp-ours-sync` = virtio_fs_sync with one sync queue (and one request "
          "queue) per vCPU; `smp-ours-sync-inband` = the same with the stock in-band kicks "
          "(device `--no-kick-channel`: every kick of the device under one lock, on one "
          "socket). Pinning (taskset -c): device %s, guest %s."
          % (env.get("smp_cpus", "?"), "`%s`" % env["smp_pin_device"] if env.get("smp_pin_device") else "unpinned",
             "`%s`" % env["smp_pin_guest"] if env.get("smp_pin_guest") else "unpinned"))
        p("")
        ratios = [(a, b) for a, b in (("smp-ours-sync", "smp-intree"),
                                      ("smp-ours-sync", "smp-ours-sync-inband"))
                  if a in smp_configs and b in smp_configs]
        for wid, title, rows in workloads():
            if wid in ("fio-1", "fio-n"):
                smp_stats[wid] = table("smp", smp_configs, wid, title, rows, ratios)
        p("| config | boots | device: channel kicks | device: sync requests | device: sync inline "
          "| device busy time, sync queues, s (median of boots, per queue) |")
        p("| --- | --- | --- | --- | --- | --- |")
        for c in smp_configs:
            rs = runs_of("smp", c)
            kicks = sum(q.get("channel_kicks", 0) for r in rs for q in r.get("dev_stats", []))
            sreq = sum(q.get("requests", 0) for r in rs for q in r.get("dev_stats", [])
                       if q.get("type") == "sync")
            sinl = sum(q.get("inline", 0) for r in rs for q in r.get("dev_stats", [])
                       if q.get("type") == "sync")
            busy = {}
            for r in rs:
                for q in r.get("dev_stats", []):
                    if q.get("type") == "sync":
                        busy.setdefault(q.get("queue"), []).append(q.get("busy_ns", 0) / 1e9)
            bcol = ", ".join("%s: %s" % (k, fmt(stats3(v)[0])) for k, v in sorted(busy.items())) or "-"
            p("| %s | %d | %d | %d | %d | %s |" % (c, len(rs), kicks, sreq, sinl, bcol))
        p("")

    # ---- counters
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
        cfgs = {"qemu": qemu_configs, "smp": smp_configs}.get(kind, uml_configs)
        for c in cfgs:
            rs = [r for r in runs if r["kind"] == kind and r["config"] == c]
            if not rs:
                continue
            drv = {"hiprio": 0, "request": 0, "sync": 0}
            inl = dfr = fb = 0
            dev = {"hiprio": 0, "request": 0, "sync": 0}
            dinl = dlate = 0
            has_drv = has_dev = False
            for r in rs:
                for q in r.get("driver_stats", []):
                    if q.get("tag") != "share":
                        continue  # QEMU: the host tree is mounted by the driver too
                    has_drv = True
                    t = str(q.get("queue", "")).split(".")[0]
                    drv[t] = drv.get(t, 0) + q.get("submitted", 0)
                    inl += q.get("inline", 0)
                    dfr += q.get("deferred", 0)
                    fb += q.get("fallback", 0)
                for q in r.get("dev_stats", []):
                    has_dev = True
                    t = q.get("type", "?")
                    dev[t] = dev.get(t, 0) + q.get("requests", 0)
                    dinl += q.get("inline", 0)
                    dlate += q.get("late", 0)
            dcol = ("%d / %d / %d" % (drv["hiprio"], drv["request"], drv["sync"])) if has_drv else "-"
            vcol = ("%d / %d / %d" % (dev["hiprio"], dev["request"], dev["sync"])) if has_dev else "-"
            p("| %s (%d) | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                kind, len(rs), c, dcol, inl if has_drv else "-", dfr if has_drv else "-",
                fb if has_drv else "-", vcol, dinl if has_dev else "-", dlate if has_dev else "-"))
            should = c in ("ours-sync", "smp-ours-sync", "smp-ours-sync-inband")
            if (inl > 0 or dinl > 0 or dev["sync"] > 0) != should and (has_drv or has_dev):
                check.append("%s %s: inline %d (driver) / %d (device), sync requests %d"
                             % (kind, c, inl, dinl, dev["sync"]))
            if should and inl == 0:
                check.append("%s %s: the sync path did not run (driver inline = 0)" % (kind, c))
    p("")
    if check:
        p("**Check failed: the sync path ran where it should not, or not where it should:** "
          + "; ".join(check) + ".")
    else:
        p("Check passed: inline completions and sync-queue requests appear only in `ours-sync`"
          " (and `smp-ours-sync`, `smp-ours-sync-inband`).")
    p("")

    # ---- summary
    p("## Summary of ratios")
    p("")

    def sline(wid, label, a, b, stats=uml_stats):
        st = stats.get(wid, {}).get(label)
        if not st:
            return
        s, unit, better = st
        if s.get(a) is None or s.get(b) is None:
            return
        summary.append("- %s, %s: %s %s vs %s %s %s: %s" % (
            wid, label, a, fmt(s[a][0]), b, fmt(s[b][0]), unit, ratio_cell(s[a], s[b], better)))

    for wid, label in (("floor", "stat() of one file, device cache=never (floor boots), us/call"),
                       ("floor", "stat(), cache=never, in getppid() costs of the same boot"),
                       ("unlink", "mean, us"), ("unlink", "median, us"),
                       ("unlink", "median minus the pair, us"),
                       ("unlink", "median, in getppid() costs of the same boot"),
                       ("fio-1", "read MiB/s"), ("fio-1", "write MiB/s"),
                       ("smallfile-1", "create+write/s"), ("smallfile-1", "stat/s"),
                       ("smallfile-1", "open+read/s"), ("smallfile-1", "unlink/s"),
                       ("seq", "write, no fsync, MiB/s"), ("seq", "write + final fsync, MiB/s"),
                       ("seq", "read (caches dropped), MiB/s"),
                       ("build", "make elapsed, s"), ("build", "make system CPU (rusage), s")):
        for a, b in (("ours-sync", "intree"), ("ours-sync", "ours-async")):
            sline(wid, label, a, b)
    # the floor: sync-path overhead over guest tmpfs
    st = uml_stats.get("floor", {}).get("stat() of one file, device cache=never (floor boots), us/call")
    if st and st[0].get("ours-sync") and st[0].get("tmpfs"):
        s = st[0]
        summary.append("- floor: a FUSE stat() through the sync path costs %s us against %s us for "
                       "stat() on guest tmpfs: %s us over the floor (intree: %s us, ours-async: %s us)."
                       % (fmt(s["ours-sync"][0]), fmt(s["tmpfs"][0]),
                          fmt(s["ours-sync"][0] - s["tmpfs"][0]),
                          fmt(s["intree"][0]) if s.get("intree") else "-",
                          fmt(s["ours-async"][0]) if s.get("ours-async") else "-"))
    for wid, label in (("floor", "stat() of one file, device cache=auto (attributes cached), us/call"),
                       ("unlink", "mean, us"), ("fio-1", "read MiB/s"), ("smallfile-1", "stat/s"),
                       ("smallfile-n", "stat/s"), ("fio-n", "read MiB/s")):
        for a, b in (("q-ours", "q-intree"), ("q-intree", "q-intree-virtiofsd")):
            sline(wid, label, a, b, q_stats)
    for label in ("read MiB/s", "write MiB/s", "read kIOPS", "write kIOPS"):
        sline("fio-n", label, "smp-ours-sync", "smp-intree", smp_stats)
        sline("fio-1", label, "smp-ours-sync", "smp-intree", smp_stats)
        sline("fio-n", label, "smp-ours-sync", "smp-ours-sync-inband", smp_stats)
    md.extend(summary or ["(no ratios: a configuration is missing)"])
    p("")
    if notes and os.path.exists(notes):
        p(open(notes).read().rstrip())
        p("")
    with open(mdpath, "w") as f:
        f.write("\n".join(md) + "\n")


def pinning_section(runs, p):
    """What tests/vm/run read back from /proc/PID/status (Cpus_allowed_list)."""
    have = [r for r in runs if r.get("pinning")]
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
    order = {"main": 0, "floor": 1, "probe": 2, "qemu": 3}
    for key, n in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0])):
        p("| %d | %s | %s | %s | %s | %s | %s |" % ((n,) + key))
    p("")
    bad = [r["id"] for r in have if (r["pinning"].get("pin_check") or "").startswith("mismatch")]
    if bad:
        p("**Pinning did not take in:** %s." % ", ".join("`%s`" % b for b in bad))
        p("")


def cpu_s_of(run, proc, which):
    ct = (run.get("cpu_times") or {}).get(proc)
    if not ct:
        return None
    if which == "total":
        return ct.get("user_s", 0.0) + ct.get("sys_s", 0.0)
    return ct.get(which + "_s")


def cpu_time_table(p, kind, configs, runs_of, title):
    """Host CPU time of the device and of the guest per boot (tests/vm/run's cpu-times)."""
    rows = (("device user CPU, s", "device", "user"),
            ("device system CPU, s", "device", "sys"),
            ("device user + system CPU, s", "device", "total"),
            ("guest user + system CPU, host view (UML: its processes; QEMU: its threads), s",
             "guest", "total"),
            ("boot, host wall time, s", None, "host_s"))
    stats = {}
    for label, proc, which in rows:
        for c in configs:
            rs = runs_of(kind, c)
            if proc:
                vals = [cpu_s_of(r, proc, which) for r in rs]
            else:
                vals = [r.get("host_s") for r in rs]
            stats[(label, c)] = stats3(vals)
    if all(stats[(rows[0][0], c)] is None for c in configs):
        return
    p("### Device and guest CPU time per boot, %s (host `wait4()` rusage; median, min–max)" % title)
    p("")
    p("| metric | " + " | ".join(configs) + " |")
    p("| --- |" + " --- |" * len(configs))
    for label, proc, which in rows:
        p("| %s | %s |" % (label, " | ".join(cell(stats[(label, c)]) for c in configs)))
    p("")
    p("Whole boots (the guest's boot and every phase of guest-bench.sh); the device's CPU "
      "time is the work of serving that configuration's requests, and in `ours-sync` includes "
      "the requests run inside the kick.")
    p("")


SIZES_TEXT = """Sizes (`bench/guest-bench.sh`): `full` is benchmarks.md (fio 1 GiB file,
60 s; 50,000 files for unlink; 5,000 small files; 1 GiB sequential; stat loop
20,000); `reduced` is fio 256 MiB, 20 s; 19,000 files for unlink (the size of
the baseline in benchmarks.md); 5,000 small files; 256 MiB sequential; stat
loop 10,000; `quick` is fio 64 MiB, 5 s; 2,000 files for unlink; 500 small
files; 64 MiB sequential; stat loop 2,000 (getppid loop 100,000 / 50,000 /
20,000; clock pairs 20,000 / 10,000 / 5,000). The build is the same at every
size. fio files are laid out before fio starts, with 1 MiB writes.
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
request queue: intree-1q and intree-mq are the same here); `ours-async` =
virtio_fs_sync with `sync=0`; `ours-sync` = virtio_fs_sync with the sync queue
the device offers. The reference device offers `VIRTIO_FS_F_SYNC` in every
run; only `ours-sync` accepts it. Floor boots start the device with
`--cache=never` (no attribute caching: every stat() is a FUSE GETATTR) and run
only the floor phases. There is no way to kick a queue with nothing to do
(neither the driver nor the device exposes one), so the floor measured is
the cheapest FUSE request: stat() of one file with attribute caching off; the
syscall floor (getppid) and the tmpfs stat are given beside it."""


# ---------------------------------------------------------------- summary

def summary_cmd(files):
    for fn in files:
        print("== %s" % fn)
        for ln in open(fn):
            if not ln.startswith('{"phase"'):
                continue
            d = json.loads(ln)
            ph = d["phase"]
            if ph == "env":
                print("  %s size=%s jobs=%s fs=%s" % (d.get("kernel"), d.get("size"), d.get("jobs"), d.get("fs")))
                continue
            if d.get("rc") != 0:
                print("  %-18s FAILED rc=%s %s" % (ph, d.get("rc"), d.get("error", "")))
                continue
            if "fio" in d:
                f = slim_fio(d["fio"]) if "job" not in d["fio"] else d["fio"]
                print("  %-18s read %.1f MiB/s %.2f kIOPS, write %.1f MiB/s %.2f kIOPS" % (
                    ph, f["read"]["bw"] / 1024, f["read"]["iops"] / 1000,
                    f["write"]["bw"] / 1024, f["write"]["iops"] / 1000))
                continue
            keys = [k for k in d if k.endswith(("_per_s", "mean_ns", "median_ns", "p99_ns",
                                                "elapsed_s", "user_s", "sys_s", "clock_pair_ns"))]
            print("  %-18s %s" % (ph, " ".join("%s=%s" % (k, d[k]) for k in keys)))
        # ab-in-guest.sh's files beside it: the setup and the driver's counters
        base = fn[:-4] if fn.endswith(".out") else None
        setup = read(base + ".setup") if base else None
        if setup:
            print("  %-18s %s" % ("setup", setup.strip()))
        stats = read(base + ".stats") if base else None
        if stats and stats.strip():
            tot = {}
            for q in parse_kv_lines(stats, ("tag", "queue")):
                for k in ("submitted", "inline", "deferred", "fallback", "bad_reply"):
                    tot[k] = tot.get(k, 0) + (q.get(k) if isinstance(q.get(k), int) else 0)
            print("  %-18s %s" % ("driver counters", " ".join("%s=%d" % kv for kv in tot.items())))


def main(argv):
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
