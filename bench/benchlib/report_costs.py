# SPDX-License-Identifier: GPL-2.0
"""The report's sections on where the time goes: the driver and device
counters, the device's timing, the host's costs, the kick floor and the perf
breakdown. A part of report.Report (report.py), which holds the rendering's
state."""

from benchlib import configs, counters, interleave, metrics
from benchlib.report_common import KIND_GROUP, boot_workloads, breakdown_module, breakdown_split
from benchlib.stats import cell, fmt, stats3


class CostSections:
    """Sections of report.Report: see the module's docstring."""

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
                c for c in self.groups["uml"] + self.groups["smp"] + self.groups["qemu"]
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

    def exit_time_groups(self):
        """(label, [a boot's device stats rows, ...]) per configuration with
        a sync queue's exit times: the A/B boots by kind and configuration,
        then each side of each interleaved pair (one boot)."""
        groups = []
        for kind in ("main", "floor", "probe", "smp", "qemu"):
            for c in self.groups[KIND_GROUP.get(kind, "uml")]:
                groups.append((c, [r["dev_stats"] for r in self.runs
                                   if r["rc"] == 0 and r["kind"] == kind and r["config"] == c
                                   and r.get("dev_stats")]))
        for name, pr in sorted(((self.data.get("interleave") or {}).get("pairs") or {}).items()):
            _, b, a, _ = interleave.pair(name)
            for side, c in (("a", a), ("b", b)):
                st = (pr.get("dev_stats") or {}).get(side)
                groups.append(("%s, %s: %s" % (name, side.upper(), c), [st] if st else []))
        return [(c, boots) for c, boots in groups
                if any("exit_max_us" in q for st in boots for q in st)]

    def exit_times_section(self):
        """The device's exit times per configuration: how long each sync
        kick held its vCPU, from the device's per-queue histogram (the
        `exit_*` fields of a sync queue's stats line), and what its budget
        completed late."""
        p = self.p
        groups = self.exit_time_groups()
        if not groups:
            return
        p("## Exit times: how long a sync kick held its vCPU")
        p("")
        p("From the device's `--stats-file` of each boot (vhost-user-fs/README.md, Exit budget): "
          "per sync queue, the time from a kick's arrival to its answer. *p50*, *p99*, *p99.9* "
          "are the busiest sync queue's (the tops of their histogram buckets, about 6 % wide), "
          "*max* the longest over every sync queue; each the median over the boots (min–max), "
          "in us. *late* sums what the budget completed after the kick, by reason "
          "(predicted / watched / budget spent / tried without waiting and would have "
          "waited), and *overrun* the requests that ran past "
          "the budget inside a kick, over the boots. *budget* is the device's `budget_us` "
          "(0: none). An interleaved pair's side is its one boot's device, over all its "
          "blocks.")
        p("")
        p("| config | boots | budget, us | exits per boot | p50 | p99 | p99.9 | max "
          "| late: predicted / watched / budget / would wait | overrun |")
        p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for c, boots in groups:
            per, budgets = [], set()
            late = {"defer_predicted": 0, "defer_watch": 0, "defer_budget": 0, "defer_nowait": 0,
                    "overrun": 0}
            for st in boots:
                qs = [q for q in st if q.get("type") == "sync" and "exits" in q]
                budgets.update(q["budget_us"] for q in st if "budget_us" in q)
                if not qs:
                    continue
                busiest = max(qs, key=lambda q: q.get("exits", 0))
                per.append({"exits": counters.total(qs, "exits"),
                            "p50": busiest.get("exit_p50_us", 0),
                            "p99": busiest.get("exit_p99_us", 0),
                            "p999": busiest.get("exit_p999_us", 0),
                            "max": max(q.get("exit_max_us", 0) for q in qs)})
                for k in late:
                    late[k] += counters.total(qs, k)
            if not per:
                continue
            cols = [cell(stats3([x[k] for x in per])) for k in ("exits", "p50", "p99", "p999", "max")]
            p("| %s | %d | %s | %s | %d / %d / %d / %d | %d |" % (
                c, len(per), ", ".join(str(b) for b in sorted(budgets)) or "-", " | ".join(cols),
                late["defer_predicted"], late["defer_watch"], late["defer_budget"],
                late["defer_nowait"], late["overrun"]))
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

    def pipe_round_trips(self):
        """{layout ("cross", "same"): [median pipe round trip, us, at the
        start and the end of the run, those measured]} of bench/hostcost.c."""
        hc = self.data.get("hostcost") or {}
        pipe = {}
        for w in ("start", "end"):
            for d in hc.get(w) or []:
                if d["kind"] == "pipe":
                    pipe.setdefault(d["layout"], []).append(d["rtt_us_median"])
        return pipe

    def hostcost_sentence(self):
        """The pipe round trips of bench/hostcost.c in one line, for the goal
        figures and the headline; None without them."""
        pipe = self.pipe_round_trips()
        if not pipe:
            return None
        when = "; start / end of the run" if any(len(v) > 1 for v in pipe.values()) else ""
        return "; ".join("%s CPU %s us" % ("another" if k == "cross" else "the same",
                                          " / ".join("%.1f" % x for x in v))
                         for k, v in sorted(pipe.items())) + (
            " (a pipe round trip between two host threads, bench/hostcost.c%s)" % when)

    def round_trips(self):
        """Per layout and driver of the placement matrix, one request's round
        trip from the floor boots (device --cache=never): {layout: {driver:
        {"stat_us": stats3 of the boots' stat() time per call, "req_per_call":
        stats3 of the device's requests (request and sync queues) per call,
        "floor_us": stats3 of the boots' median kick (sync boots only)}}}."""
        out = {}
        for r in self.runs:
            c = configs.CONFIGS.get(r["config"])
            if r["kind"] != "floor" or r["rc"] != 0 or not c or c.group != "uml":
                continue
            base = next((m for m in configs.MATRIX
                         if r["config"] == configs.layout_name(m, c.layout)), None)
            if base is None and r["config"] == "ours-sync-faithful":
                base = "ours-sync"
            st = metrics.phase(r, "statloop")
            if base is None or not st or not st.get("n"):
                continue
            d = out.setdefault(c.layout, {}).setdefault(base, {"stat": [], "req": [], "floor": []})
            d["stat"].append(st["mean_ns"] / 1000.0)
            req = counters.total(r.get("dev_stats") or [], "requests",
                                 lambda q: q.get("type") in ("request", "sync"))
            if req:
                d["req"].append(req / float(st["n"]))
            kf = metrics.phase(r, "kickfloor")
            if kf and kf.get("median_ns") is not None:
                d["floor"].append(kf["median_ns"] / 1000.0)
        return {lay: {drv: {"stat_us": stats3(d["stat"]),
                            "req_per_call": stats3(d["req"]) if d["req"] else None,
                            "floor_us": stats3(d["floor"]) if d["floor"] else None}
                      for drv, d in drvs.items()}
                for lay, drvs in out.items()}

    def round_trip_section(self):
        """One request's round trip per layout and driver, beside the host's
        hand-off cost that layout pays (bench/README.md, Host costs)."""
        rt = self.round_trips()
        if not rt:
            return
        p = self.p
        pipe = self.pipe_round_trips()
        p("## One request's round trip per layout")
        p("")
        p("The floor boots' stat() loop (device `--cache=never`: every call goes to the "
          "device) per driver and layout: the time of one call, median over the boots "
          "(min–max), and the device's requests per call, median (request and sync queues "
          "over the loop's calls; the boot's other phases add a few). For in-tree and ours-async that "
          "is the interrupt-driven path's round trip, kick to the device's worker and "
          "completion interrupt back; for ours-sync the sync path's, with its kick floor (the "
          "same boots' empty kicks) beside it. *Host hand-off*: bench/hostcost.c's pipe round "
          "trip of the layout's CPUs (split: cross, colocated: same; start and end of the run), "
          "which an interrupt-driven request pays at least once and a sync request in the "
          "split layout once; floating has no fixed CPUs.")
        p("")
        drivers = [m for m in configs.MATRIX if any(m in d for d in rt.values())]
        p("| layout | host hand-off, us | " + " | ".join(
            "%s: stat(), us; requests per call" % m for m in drivers) + " | ours-sync kick floor, us |")
        p("|" + " --- |" * (3 + len(drivers)))
        hand = {"split": "cross", "colocated": "same", "faithful": "cross"}
        for lay in ("split", "colocated", "floating", "faithful"):
            if lay not in rt:
                continue
            h = pipe.get(hand.get(lay))
            cells = []
            for m in drivers:
                d = rt[lay].get(m)
                cells.append("%s; %s requests" % (cell(d["stat_us"]), fmt(d["req_per_call"][0]))
                             if d and d["req_per_call"] else cell(d["stat_us"]) if d else "-")
            f = (rt[lay].get("ours-sync") or {}).get("floor_us")
            p("| %s | %s | %s | %s |" % (
                lay, " / ".join(fmt(x) for x in h) if h else "-", " | ".join(cells),
                cell(f) if f else "-"))
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
