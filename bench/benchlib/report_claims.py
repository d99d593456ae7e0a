# SPDX-License-Identifier: GPL-2.0
"""The report's claims: the paired rounds, the interleaved pairs, the goal
figures and the summary of ratios. A part of report.Report (report.py),
which holds the rendering's state."""
from benchlib import configs, interleave, paired
from benchlib.report_common import (BUILD_GOAL, CONTROL, FAITHFUL, FLOOR_STAT, GOAL_SKIP_ROWS,
                                    SUMMARY_QEMU, SUMMARY_UML, UML_GOALS, floor_sentence, meets,
                                    spread_word, verdict)
from benchlib.stats import beyond_spread, fmt, ratio_cell

CONTROL_PAIR = interleave.CONTROL


class ClaimSections:
    """Sections of report.Report: see the module's docstring."""

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
          "A / B, and where measured its side's device's (the host's figure of the device's "
          "process and its children, read by the guest around the phase: a device's idle "
          "threads cost nothing, so it is the device's work for that phase). A block during which the host lost more than %s %% of its CPU time to steal "
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
                if st.get("dev_cpu_a") is not None and st.get("dev_cpu_b") is not None:
                    cpu += ", device %s / %s s" % (fmt(st["dev_cpu_a"]), fmt(st["dev_cpu_b"]))
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
        def uml_goals(a, tail, b="intree"):
            for figure, wid, label, op, limit in UML_GOALS:
                one(figure + tail, uml, wid, label, a, b, op, limit)

        def build_goal(a, tail, b="intree"):
            figure, wid, label, op, limit = BUILD_GOAL
            one(figure + tail, uml, wid, label, a, b, op, limit)

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
        # The co-located layout, where every driver's hand-offs stay on one
        # core: the issue of one-sided placement does not arise there.
        col = configs.layout_name("intree", "colocated")
        if col in self.groups["uml"]:
            tail = " (colocated)"
            a = configs.layout_name("ours-sync", "colocated")
            if a in self.groups["uml"]:
                uml_goals(a, tail, col)
                build_goal(a, tail, col)
            for d in ("ours-sync", "ours-async"):
                a = configs.layout_name(d, "colocated")
                if a in self.groups["uml"]:
                    goals.append(self.every_row(uml, a, col, "%s vs in-tree, every row%s"
                                                % (d, tail)))
        if CONTROL in self.groups["uml"]:
            g = self.every_row(uml, CONTROL, "intree", CONTROL + " vs in-tree, every row")
            g.update(goal="none: the A/A control (the same driver and device)", met=None,
                     control=True)
            goals.append(g)
        return goals + self.paired_goals() + self.interleave_goals()

    def interleave_goals(self):
        """The goals again from the interleaved pairs: each ratio the median
        of the blocks' B/A, met only where it meets the goal and the pair is
        called faster (its interval excludes 1.00, the A/A pair's holds it);
        ours-async's parity as every row within ±3 %, and whether the A/A
        pair's intervals are narrow enough to tell 3 %."""
        il = self.data.get("interleave") or {}
        an = interleave.analyse_all(il.get("pairs"))
        if not an:
            return []
        tail = " (interleaved pairs, %s)" % il.get("layout", "?")
        out = []

        def ci_word(st):
            ci = st.get("ci95")
            return "interval %.2f–%.2f" % ci if ci else "no interval"

        sync = an.get("sync-vs-intree", {})
        for figure, wid, label, op, limit in UML_GOALS:
            st = sync.get((wid, label))
            g = {"figure": figure + tail, "goal": "%s %.2f×, interval excluding 1.00" % (op, limit),
                 "ratio": None, "mark": "", "met": None,
                 "detail": "sync-vs-intree, %s: %s" % (wid, label)}
            if st:
                g.update(ratio=st["median"], mark=ci_word(st),
                         met=meets(st["median"], op, limit) and st.get("claim") == "faster")
                g["detail"] += "; %d/%d blocks better, %s" % (
                    st["better_blocks"], len(st["ratios"]), st.get("claim") or "no claim")
            out.append(g)

        def perf(x, better):
            return x if better == "higher" else 1.0 / x

        for pname, what in (("async-vs-intree", ""),
                            ("async1-vs-intree", ", each FORGET sent alone on both")):
            if pname not in an and pname != "async-vs-intree":
                continue
            rows = [(k, st) for k, st in an.get(pname, {}).items()
                    if k[1] not in GOAL_SKIP_ROWS and st["median"]]
            g = {"figure": "ours-async vs in-tree, every row%s%s" % (what, tail),
                 "goal": "within ±3 %", "ratio": None, "mark": "", "met": None,
                 "detail": "no rows"}
            if rows:
                far = max(rows, key=lambda r: abs(perf(r[1]["median"], r[1]["better"]) - 1))
                off = [r for r in rows if abs(perf(r[1]["median"], r[1]["better"]) - 1) > 0.03]
                # The row's own B/A, as its interval is: below 1 is faster
                # for a time, slower for a rate.
                g.update(ratio=far[1]["median"], mark=ci_word(far[1]),
                         met=not off, detail="%s, farthest of %d rows from 1.00: %s, %s; %d rows "
                         "outside ±3 %% (%d of them called faster or slower)" % (
                             pname, len(rows), far[0][0], far[0][1], len(off),
                             sum(1 for r in off if r[1].get("claim") in ("faster", "slower"))))
            out.append(g)
        rows = [(k, st) for k, st in an.get(CONTROL_PAIR, {}).items()
                if k[1] not in GOAL_SKIP_ROWS and st.get("ci95")]
        g = {"figure": "A/A pair resolves 3 %" + tail,
             "goal": "every row's interval within 0.97–1.03", "ratio": None, "mark": "",
             "met": None, "detail": "no rows"}
        if rows:
            wide = [r for r in rows if r[1]["ci95"][0] < 0.97 or r[1]["ci95"][1] > 1.03]
            widest = max(rows, key=lambda r: r[1]["ci95"][1] - r[1]["ci95"][0])
            g.update(ratio=widest[1]["median"], mark=ci_word(widest[1]), met=not wide,
                     detail="%d of %d rows' intervals reach past 0.97–1.03; the widest: %s, %s"
                     % (len(wide), len(rows), widest[0][0], widest[0][1]))
        out.append(g)
        return out

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
          "(section \"Paired rounds in one boot\"). Goals marked \"(colocated)\" compare the "
          "co-located layout's boots (`NAME-colocated`, the device and the guest on one CPU for "
          "every driver). Goals marked \"(interleaved pairs, LAYOUT)\" are the median of the "
          "blocks' ratios B/A with its 95 %% interval (section \"Interleaved pairs\"), met only "
          "where the ratio meets the goal and the pair is called faster; ours-async's parity "
          "there is every row within ±3 %%, and the A/A pair's intervals say whether the run "
          "can tell 3 %% at all." % ", ".join("`%s`" % r for r in GOAL_SKIP_ROWS))
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
        hc = self.hostcost_sentence()
        if hc:
            p("The host's hand-off, which these ratios move with (section \"Host costs\"): %s."
              % hc)
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
