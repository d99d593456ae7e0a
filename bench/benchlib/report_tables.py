# SPDX-License-Identifier: GPL-2.0
"""The report's tables and charts per substrate and layout: the UML boots, the
placement matrix, the QEMU, SMP and probe boots, and the guest CPU tables. A
part of report.Report (report.py), which holds the rendering's state."""
import html
import os

from benchlib import configs, counters, metrics
from benchlib.charts import slug, svg_bars
from benchlib.report_common import GOAL_SKIP_ROWS, PROBE_ROWS, SPREAD_TEXT, build_title, pin_word
from benchlib.stats import cell, fmt, ratio_cell, stats3


class TableSections:
    """Sections of report.Report: see the module's docstring."""

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
        krun = [c for c in cfgs if c.startswith("k-")]
        kernels = [k for k, on in (("Debian 6.12 cloud kernel", len(krun) < len(cfgs)),
                                   ("libkrun's kernels", krun)) if on]
        self.p("## QEMU/TCG, SMP 2, %s, %s sizes"
               % (" and ".join(kernels), self.sizes.get("qemu", "?")))
        self.p("")
        self.p("QEMU here emulates the CPU (TCG, one thread for both vCPUs): its figures are "
               "far from a KVM guest's and only the ratios between configurations of this "
               "table mean anything. The host's QEMU (`q-*`) passes only generic feature "
               "bits, so `VIRTIO_FS_F_SYNC` never reaches its guests: `q-ours` is "
               "virtio_fs_sync on its interrupt-driven path. The project's QEMU (`qs-*`, "
               "`scripts/build-qemu.sh`: a sync queue's notify is handled in the vCPU's "
               "thread, which waits for the device's answer) runs in-tree, `sync=0` and the "
               "sync path on one build, on `pc` (virtio-pci) and `microvm` (virtio-mmio).")
        if krun:
            self.p("")
            self.p("`k-*` boot libkrun's guest kernels as libkrun boots them (microvm, "
                   "libkrun's command line, no initrd, the root on virtio-fs tag /dev/root "
                   "from a reference device of its own) on the project's QEMU: `k-stock` "
                   "Debian's libkrunfw5 kernel with in-tree virtiofs, `k-sync` the kernel of "
                   "`make libkrunfw` with virtio_fs_sync built in and a sync queue per vCPU; "
                   "the same QEMU, device and root on both sides.")
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
