#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The analysis half of bench/breakdown.sh (standard library only).

  breakdown.py classify UML_BUILD DEVICE_DIR CASE_DIR   one case -> CASE_DIR/breakdown.json
  breakdown.py render OUT_DIR                           every case -> OUT_DIR/breakdown.md
  breakdown.py opmix OUT_DIR                            opmix boots -> OUT_DIR/opmix.md
  breakdown.py buildmix CASE_DIR                        a build case -> CASE_DIR/buildmix.json
  breakdown.py buildrender OUT_DIR                      build cases -> OUT_DIR/build.md

A case is one configuration and one operation: CASE_DIR holds the window
files of bench/breakdown-loop.c (done.W: n= and ns=), perf-uml.txt and
perf-dev.txt (`perf script` of the UML process tree and of the device during
the perf window) and trace-*.txt (`perf trace -s` of the trace window).

Every sample is put in one part of the request by its call chain (any
frame, checked in this order; guest frames come from the UML `linux`
binary, whose functions are mapped to their object files with nm):
  reap+end     the driver's completion side, virtqueue_get_buf, the used-ring
               interrupt (virtio_uml's VRING_CALL), fuse_request_end
  kick         virtqueue_notify and virtio_uml's kick message (the host
               write and the wait for REPLY_ACK are in the host part)
  submit       the driver's submission (buffers, sg lists, add to the ring)
  sched        the guest's scheduler (a task sleeping for its reply, the
               worker, the switch back)
  fuse         the FUSE core (fs/fuse/*.o other than the drivers)
  hostfs       hostfs: the harness's root file system (not virtio-fs)
  vfs          the rest of the guest syscall body (fs/, mm/, ...)
  entry        UML's syscall interception (ptrace: userspace(),
               handle_syscall, the wait4/ptrace host calls) and the guest
               process itself (its ptrace stops, its user code)
  idle/irq     the guest idle loop, signals, timers, everything else
and on the device, by the innermost frame of its own code (its object
files): vhost-user (messages: kick, REPLY_ACK, call), vring, dispatch,
fuse (FUSE handling, passthrough); samples there with the leaf in the host
kernel are counted again as "host syscalls", by the syscall.
A sample whose call chain ends in libc (the bench flavour has no frame
pointers and the unwinder stops there) is placed by its host syscall where
the chain gave no part (SYSCALL_PART): in the UML kernel process ptrace,
wait4 and kill count as entry, mmap and friends as vfs (the guest's memory),
the socket calls as kick (the kick message, the wait for its REPLY_ACK and
for call messages), the file calls as hostfs; on the device the socket and
eventfd calls count as vhost-user, futex as dispatch, the file calls as fuse.
Two shares cut across the parts: "host" (the leaf is in the host kernel:
a host syscall, a context switch, a ptrace stop) and "debug" (lockdep,
kmemleak, debug objects: only in the debug flavour).
"""
import glob
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

GUEST_PARTS = ["entry", "vfs", "hostfs", "fuse", "submit", "kick", "reap+end", "sched", "idle/irq"]
DEV_PARTS = ["dev:vhost-user", "dev:vring", "dev:dispatch", "dev:fuse", "dev:other"]
PARTS = GUEST_PARTS + DEV_PARTS
# The cost breakdown's split, from the parts above.
SPLIT = [
    ("guest syscall entry (UML ptrace, VFS)", ["entry", "vfs", "hostfs"]),
    ("FUSE core", ["fuse"]),
    ("driver submit", ["submit"]),
    ("transport round trip (kick, vhost-user, vring)", ["kick", "dev:vhost-user", "dev:vring"]),
    ("device FUSE handling + host syscalls (with dispatch)", ["dev:fuse", "dev:dispatch"]),
    ("reap and end (with guest sched)", ["reap+end", "sched"]),
    ("other", ["idle/irq", "dev:other"]),
]
OP_ORDER = ["stat", "unlink", "create", "readdirect", "readcache"]

# Functions of the drivers on the completion side; the rest of the driver's
# object files count as submission.
REAP_FUNCS = re.compile(
    r"^(vfsync_(sync_reap_locked|reap_one_locked|requests_done_work|sync_done_work|"
    r"hiprio_done_work|vq_done|end_bufs|complete|complete_work|fuse_complete|"
    r"fuse_copy_out|check_reply|fuse_reaped_locked|dec_in_flight|fuse_free_ctx|"
    r"fuse_end_entry|fuse_end|unlock)|"
    r"virtio_fs_(requests_done_work|request_complete|vq_done|complete_req_work|"
    r"hiprio_done_work|requests_done)|copy_args_from_argbuf|virtio_fs_argbuf_copy_to_out_arg|"
    r"virtio_fs_argbuf_free|virtqueue_get_buf|virtqueue_get_buf_ctx|virtqueue_enable_cb|"
    r"virtqueue_enable_cb_prepare|virtqueue_poll|detach_buf_split|detach_buf_packed|"
    r"vring_interrupt|vu_req_interrupt|vu_req_read_message|vhost_user_recv_req|"
    r"fuse_request_end|fuse_readpages_end|fuse_aio_complete_req|fuse_aio_complete)$")
KICK_FUNCS = re.compile(r"^(virtqueue_notify|virtqueue_kick|vu_notify|vhost_user_send|"
                        r"vhost_user_send_no_payload|vhost_user_recv_resp|vhost_user_recv|"
                        r"vhost_user_recv_header|full_sendmsg_fds|full_read|vhost_user_send_req)$")
SUBMIT_FUNCS = re.compile(r"^(virtqueue_add_sgs|virtqueue_add|virtqueue_add_split|"
                          r"virtqueue_add_packed|virtqueue_kick_prepare|virtqueue_disable_cb)$")
IDLE_FUNCS = re.compile(r"^(do_idle|cpu_idle|arch_cpu_idle|um_idle_sleep|os_idle_sleep|"
                        r"cpu_startup_entry|default_idle_call)$")
ENTRY_FUNCS = re.compile(r"^(userspace|handle_syscall|handle_trap|wait_stub_done|"
                         r"get_skas_faultinfo|syscall_trace_enter|syscall_trace_leave|"
                         r"do_syscall_trace|fork_handler|new_thread_handler)$")
DEBUG_FUNCS = re.compile(r"^(lock_acquire|lock_release|__lock_acquire|lock_is_held_type|"
                         r"lock_acquired|lock_contended|mark_lock|validate_chain|check_flags|"
                         r"lookup_chain_cache|check_chain_key|hlock_class|iterate_chain_key|"
                         r"lockdep_.*|__lockdep_.*|debug_check_no_locks_freed|"
                         r"check_preemption_disabled.*|__this_cpu_preempt_check|"
                         r"debug_object.*|__debug_object.*|kmemleak_.*|__kmemleak.*|"
                         r"__create_object|__alloc_object|set_track_prepare|__link_object|"
                         r"__lookup_object|find_and_remove_object|delete_object_full|"
                         r"__delete_object|paint_ptr|save_stack_trace|stack_trace_save|"
                         r"dump_trace|trace_hardirqs_on|trace_hardirqs_off|"
                         r"trace_hardirqs_on_prepare|__list_add_valid.*|__list_del_entry_valid.*|"
                         r"debug_lockdep_rcu_enabled|rcu_read_lock_held.*|"
                         r"preempt_latency_start|preempt_latency_stop|"
                         r"print_lock.*|check_noncircular|check_prev_add)$")


def nm_funcs(paths):
    """Function names defined in the object files PATHS."""
    names = set()
    paths = [p for p in paths if os.path.exists(p)]
    if not paths:
        return names
    out = subprocess.run(["nm", "--defined-only"] + paths, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            names.add(f[2])
    return names


def guest_layers(build):
    """{layer: set of function names} from the UML build's object files."""
    g = lambda pat: glob.glob(os.path.join(build, pat))
    ours = nm_funcs(g("fs/fuse/virtio_fs_sync/*.o"))
    intree = nm_funcs(g("fs/fuse/virtio_fs.o"))
    fuse = nm_funcs([p for p in g("fs/fuse/*.o") if not p.endswith("virtio_fs.o")]) - ours - intree
    return {
        "driver": ours | intree,
        "ring": nm_funcs(g("drivers/virtio/virtio_ring.o")),
        "transport": nm_funcs(g("arch/um/drivers/virtio_uml.o")),
        "fuse": fuse,
        "hostfs": nm_funcs(g("fs/hostfs/*.o")),
        "sched": nm_funcs(g("kernel/sched/*.o")) - {"do_idle", "cpu_startup_entry"},
        "vfs": nm_funcs(g("fs/*.o")) | nm_funcs(g("mm/*.o")) | nm_funcs(g("security/*.o")),
        "entry": nm_funcs(g("arch/um/kernel/skas/*.o") + g("arch/um/os-Linux/skas/*.o")),
    }


def parse_perf_script(path):
    """Samples of `perf script -F comm,pid,tid,ip,sym,dso`: (comm, pid, [(sym, dso)])."""
    samples = []
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if cur:
                    samples.append(cur)
                cur = None
                continue
            if not line[0].isspace():
                head = line.split()
                pid = head[1].split("/")[0] if len(head) > 1 else "?"
                cur = (head[0], pid, [])
                continue
            if cur is None:
                continue
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
            if m:
                sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
                cur[2].append((sym, m.group(2)))
    if cur:
        samples.append(cur)
    return samples


_FILE_SYSCALLS = {"pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2", "statx",
                  "newfstatat", "fstat", "openat", "openat2", "open", "close", "access",
                  "faccessat", "faccessat2", "lseek", "getdents64", "fsync", "fdatasync",
                  "unlinkat", "mkdirat", "renameat2", "linkat", "symlinkat", "readlinkat",
                  "fchmodat", "fchownat", "utimensat", "ftruncate", "fallocate", "statfs",
                  "fstatfs", "getxattr", "fgetxattr", "lgetxattr", "listxattr", "flistxattr",
                  "setxattr", "fsetxattr", "fchdir", "fchmod", "fchown", "mknodat", "copy_file_range"}
_SOCK_SYSCALLS = {"read", "write", "readv", "writev", "sendmsg", "recvmsg", "sendto", "recvfrom",
                  "poll", "ppoll", "epoll_wait", "epoll_pwait", "select", "pselect6"}
SYSCALL_PART = {
    "uml": dict([(k, "entry") for k in ("ptrace", "wait4", "waitid", "kill", "tgkill", "tkill")] +
                [(k, "vfs") for k in ("mmap", "munmap", "mprotect", "madvise", "mremap")] +
                [(k, "kick") for k in _SOCK_SYSCALLS] + [(k, "hostfs") for k in _FILE_SYSCALLS]),
    "dev": dict([(k, "dev:vhost-user") for k in _SOCK_SYSCALLS | {"eventfd2"}] +
                [("futex", "dev:dispatch")] + [(k, "dev:fuse") for k in _FILE_SYSCALLS]),
}


def is_host(dso):
    return dso.startswith("[kernel")


def host_syscall(frames):
    """The host syscall a sample is in, from its host kernel frames."""
    for sym, dso in frames:
        if not is_host(dso):
            break
        m = re.match(r"^(?:__x64_sys_|__do_sys_|__se_sys_|ksys_|__sys_)(\w+)$", sym)
        if m:
            return m.group(1)
    if frames and is_host(frames[0][1]):
        return "(no syscall: switch/fault/irq)"
    return None


def classify_guest(frames, layers, guest_dso):
    names = [s for s, d in frames if d.endswith(guest_dso)]
    nset = set(names)
    debug = False
    for sym, dso in frames:
        if is_host(dso) or "libc" in dso:
            continue
        if DEBUG_FUNCS.match(sym):
            debug = True
        break
    if not debug:
        # the leaf-most guest frames up to the first non-debug one
        for s in names:
            if DEBUG_FUNCS.match(s):
                debug = True
                break
            if s not in layers["vfs"] and s not in layers["sched"]:
                break
    drv = [s for s in names if s in layers["driver"]]
    if any(REAP_FUNCS.match(s) for s in names):
        part = "reap+end"
    elif any(KICK_FUNCS.match(s) for s in names):
        part = "kick"
    elif drv or any(SUBMIT_FUNCS.match(s) for s in names):
        part = "submit"
    elif nset & layers["sched"] and not any(IDLE_FUNCS.match(s) for s in names):
        part = "sched"
    elif nset & layers["fuse"]:
        part = "fuse"
    elif nset & layers["hostfs"]:
        part = "hostfs"
    elif "handle_syscall" in nset and (nset & layers["vfs"] or any(s.startswith("sys_") for s in names)):
        part = "vfs"
    elif any(ENTRY_FUNCS.match(s) for s in names) or nset & layers["entry"]:
        part = "entry"
    else:
        part = "idle/irq"
    return part, debug


def classify_dev(frames, dev_layers):
    for sym, dso in frames:
        for layer, funcs in dev_layers.items():
            if sym in funcs and not is_host(dso):
                return "dev:" + layer
    return "dev:other"


def parse_trace(path):
    """`perf trace -s` summary: {syscall: calls}, summed over its threads."""
    calls = Counter()
    if not os.path.exists(path):
        return calls
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^\s+([a-z_0-9]+)\s+(\d+)\s+\d+\s+[\d.]+", line)
            if m and m.group(1) not in ("syscall",):
                calls[m.group(1)] += int(m.group(2))
    return calls


def read_text(path):
    with open(path, errors="replace") as f:
        return f.read()


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        for tok in read_text(path).split():
            if "=" in tok:
                k, v = tok.split("=", 1)
                kv[k] = v
    return kv


def classify(build, devdir, case):
    layers = guest_layers(build)
    dev_layers = {
        "vhost-user": nm_funcs([os.path.join(devdir, "vhost_user.o")]),
        "vring": nm_funcs([os.path.join(devdir, "vring.o")]),
        "dispatch": nm_funcs([os.path.join(devdir, "dispatch.o")]),
        "fuse": nm_funcs([os.path.join(devdir, f) for f in ("fuse_server.o", "passthrough.o", "inode.o")]),
    }
    meta = read_kv(os.path.join(case, "meta"))
    period_ns = int(meta.get("period_ns", "50000"))
    uml_period_ns = int(meta.get("uml_period_ns", period_ns))
    uml_pid = meta.get("uml_pid", "")
    parts = Counter()
    host = Counter()
    debug = Counter()
    dev_sys = Counter()
    uml_sys = Counter()
    groups = Counter()
    nsamples = 0
    top = defaultdict(Counter)
    host_leaf = defaultdict(Counter)
    for name in ("perf-uml.txt", "perf-dev.txt"):
        path = os.path.join(case, name)
        if not os.path.exists(path):
            continue
        wgt = period_ns if name == "perf-dev.txt" else uml_period_ns
        for comm, pid, frames in parse_perf_script(path):
            nsamples += 1
            leaf_host = bool(frames) and is_host(frames[0][1])
            if name == "perf-dev.txt":
                part = classify_dev(frames, dev_layers)
                groups["device"] += wgt
                if leaf_host:
                    dev_sys[host_syscall(frames)] += 1
                    if part == "dev:other":
                        part = SYSCALL_PART["dev"].get(host_syscall(frames), part)
                dbg = False
            elif pid != uml_pid:
                part, dbg = "entry", False      # a guest process: ptrace stops, user code
                groups["guest-proc"] += wgt
            else:
                part, dbg = classify_guest(frames, layers, "/linux")
                groups["uml-kernel"] += wgt
                if leaf_host:
                    uml_sys[host_syscall(frames)] += 1
                    if part == "idle/irq":
                        part = SYSCALL_PART["uml"].get(host_syscall(frames), part)
            parts[part] += wgt
            host[part] += wgt * leaf_host
            if leaf_host:
                host_leaf["device" if name == "perf-dev.txt" else "uml"][frames[0][0]] += 1
            debug[part] += wgt * dbg
            guest = [s for s, d in frames if not is_host(d)]
            top[part][(guest[0] if guest else frames[0][0] if frames else "?")] += 1
    windows = {}
    for p in sorted(glob.glob(os.path.join(case, "done.*"))):
        windows[p.rsplit(".", 1)[1]] = read_kv(p)
    res = {
        "case": os.path.basename(case),
        "config": meta.get("config"), "op": meta.get("op"),
        # every count below is sampled CPU time in ns (samples x period)
        "period_ns": 1, "sample_period_ns": period_ns, "uml_sample_period_ns": uml_period_ns,
        "nsamples": nsamples,
        "windows": windows,
        "window_role": {k: v for k, v in meta.items() if k.startswith("w")},
        "samples": sum(parts.values()),     # ns
        "groups": dict(groups),
        "parts": dict(parts), "host": dict(host), "debug": dict(debug),
        "uml_host_syscalls_sampled": dict(uml_sys.most_common(12)),
        "dev_host_syscalls_sampled": dict(dev_sys.most_common(12)),
        "top": {k: v.most_common(8) for k, v in top.items()},
        "host_leaf": {k: v.most_common(8) for k, v in host_leaf.items()},
        "trace_uml": dict(parse_trace(os.path.join(case, "trace-uml.txt"))),
        "trace_guest": dict(parse_trace(os.path.join(case, "trace-guestproc.txt"))),
        "trace_dev": dict(parse_trace(os.path.join(case, "trace-dev.txt"))),
        "driver_stats": open(os.path.join(case, "run", "driver-stats")).read()
        if os.path.exists(os.path.join(case, "run", "driver-stats")) else "",
    }
    with open(os.path.join(case, "breakdown.json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


def us_per_op(win):
    try:
        return int(win["ns"]) / int(win["n"]) / 1000.0
    except (KeyError, ValueError, ZeroDivisionError):
        return None


def render(out):
    cases = []
    for p in sorted(glob.glob(os.path.join(out, "*", "breakdown.json"))):
        cases.append(json.load(open(p)))
    ops = [o for o in OP_ORDER if any(c["op"] == o for c in cases)]
    ops += sorted({c["op"] for c in cases} - set(ops))
    corder = ["ours-sync", "ours-async", "intree"]
    cases.sort(key=lambda c: (corder.index(c["config"]) if c["config"] in corder else 9, c["case"]))
    lines = []
    w = lines.append
    w("# Cost breakdown of one request (bench/breakdown.sh)\n")
    env = os.path.join(out, "env")
    if os.path.exists(env):
        w("```")
        w(open(env).read().rstrip())
        w("```\n")
    w("Shares are of all CPU samples (cpu-clock, fixed period) of the UML process tree and the "
      "device during the perf window; us/op are samples x period / operations. "
      "`host` is the part of a share whose leaf is in the host kernel, `debug` the part in "
      "lockdep/kmemleak/debug-object code.\n")
    for op in ops:
        cs = [c for c in cases if c["op"] == op]
        w("## %s\n" % op)
        row = lambda name, vals: w("| %s | %s |" % (name, " | ".join(vals)))

        def head(first):
            w(("| %s | " % first).replace("|  |", "| |") + " | ".join(c["config"] for c in cs) + " |")
            w("| --- |" + " --- |" * len(cs))
        head("")

        def win(c, role):
            for k, v in c["window_role"].items():
                if v == role:
                    return c["windows"].get(k[1:], {})
            return {}
        row("wall us/op, no tool", ["%.1f" % us_per_op(win(c, "plain")) if us_per_op(win(c, "plain")) else "-" for c in cs])
        row("wall us/op, under perf", ["%.1f" % us_per_op(win(c, "perf")) if us_per_op(win(c, "perf")) else "-" for c in cs])
        n = lambda c: int(win(c, "perf").get("n", "0")) or 1
        cpu = lambda c, g: c["groups"].get(g, 0) * c["period_ns"] / n(c) / 1000.0
        row("CPU us/op: UML kernel process", ["%.1f" % cpu(c, "uml-kernel") for c in cs])
        row("CPU us/op: guest process", ["%.1f" % cpu(c, "guest-proc") for c in cs])
        row("CPU us/op: device", ["%.1f" % cpu(c, "device") for c in cs])
        row("samples (CPU ms sampled)", ["%d (%.0f)" % (c["nsamples"], c["samples"] / 1e6) for c in cs])
        for label, members in SPLIT:
            vals = []
            for c in cs:
                k = sum(c["parts"].get(p, 0) for p in members)
                vals.append("**%.1f%%** (%.0f us)" % (100.0 * k / (c["samples"] or 1),
                                                   k * c["period_ns"] / n(c) / 1000.0))
            row(label, vals)
        w("")
        w("Finer parts, share of samples (host: leaf in the host kernel; debug: lockdep/kmemleak):\n")
        head("part")
        for part in PARTS:
            vals = []
            for c in cs:
                tot = c["samples"] or 1
                k = c["parts"].get(part, 0)
                s = "%.1f%%" % (100.0 * k / tot)
                if k:
                    s += " (host %d%%" % round(100.0 * c["host"].get(part, 0) / k)
                    if c["debug"].get(part, 0):
                        s += ", debug %d%%" % round(100.0 * c["debug"][part] / k)
                    s += ")"
                vals.append(s)
            row(part, vals)
        w("")
        w("The same parts in CPU us per operation (samples x period / operations):\n")
        head("part")
        for part in PARTS:
            row(part, ["%.1f" % (c["parts"].get(part, 0) * c["period_ns"] / n(c) / 1000.0) for c in cs])
        row("of which debug", ["%.1f" % (sum(c["debug"].values()) * c["period_ns"] / n(c) / 1000.0) for c in cs])
        row("of which host kernel", ["%.1f" % (sum(c["host"].values()) * c["period_ns"] / n(c) / 1000.0) for c in cs])
        w("")
        w("Host syscalls per operation (perf trace -s over the trace window):\n")
        names = Counter()
        for c in cs:
            for src in ("trace_uml", "trace_guest", "trace_dev"):
                for k, v in c[src].items():
                    names[(src, k)] += v
        w("| process: syscall | " + " | ".join(c["config"] for c in cs) + " |")
        w("| --- |" + " --- |" * len(cs))
        for src, label in (("trace_uml", "UML kernel"), ("trace_guest", "guest process"), ("trace_dev", "device")):
            tot = []
            for c in cs:
                nn = int(win(c, "trace").get("n", "0")) or 1
                tot.append("%.2f" % (sum(c[src].values()) / nn))
            row("**%s: all**" % label, tot)
            keys = [k for (s, k), v in names.most_common() if s == src][:8]
            for k in keys:
                vals = []
                for c in cs:
                    nn = int(win(c, "trace").get("n", "0")) or 1
                    vals.append("%.2f" % (c[src].get(k, 0) / nn))
                row("%s: %s" % (label, k), vals)
        w("")
        w("Top guest/device functions (leaf-most non-host frame) per part, samples:\n")
        for c in cs:
            w("- %s: " % c["config"] + "; ".join(
                "%s: %s" % (p, ", ".join("%s %d" % (s, k) for s, k in c["top"].get(p, [])[:4]))
                for p in PARTS if c["top"].get(p)))
        w("")
        w("Sampled host syscalls (leaf in the host kernel), UML kernel process / device:\n")
        for c in cs:
            w("- %s: UML %s; device %s" % (c["config"],
              ", ".join("%s %d" % kv for kv in c["uml_host_syscalls_sampled"].items()),
              ", ".join("%s %d" % kv for kv in c["dev_host_syscalls_sampled"].items())))
        w("")
        w("Host kernel leaf functions (samples), UML / device:\n")
        for c in cs:
            hl = c.get("host_leaf", {})
            w("- %s: UML %s; device %s" % (c["config"],
              ", ".join("%s %d" % tuple(kv) for kv in hl.get("uml", [])[:5]),
              ", ".join("%s %d" % tuple(kv) for kv in hl.get("device", [])[:5])))
        w("")
        w("Driver counters (virtio_fs_sync) at the end of the boot:\n")
        for c in cs:
            if c["driver_stats"]:
                w("- %s: `%s`" % (c["config"], " | ".join(c["driver_stats"].split("\n")).strip(" |")))
        w("")
    with open(os.path.join(out, "breakdown.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


FUSE_OPS = {1: "LOOKUP", 2: "FORGET", 3: "GETATTR", 4: "SETATTR", 5: "READLINK", 6: "SYMLINK",
            8: "MKNOD", 9: "MKDIR", 10: "UNLINK", 11: "RMDIR", 12: "RENAME", 13: "LINK",
            14: "OPEN", 15: "READ", 16: "WRITE", 17: "STATFS", 18: "RELEASE", 20: "FSYNC",
            21: "SETXATTR", 22: "GETXATTR", 23: "LISTXATTR", 24: "REMOVEXATTR", 25: "FLUSH",
            26: "INIT", 27: "OPENDIR", 28: "READDIR", 29: "RELEASEDIR", 30: "FSYNCDIR",
            34: "ACCESS", 35: "CREATE", 36: "INTERRUPT", 38: "DESTROY", 42: "BATCH_FORGET",
            43: "FALLOCATE", 44: "READDIRPLUS", 45: "RENAME2", 46: "LSEEK"}


def opmix(out):
    """Requests per operation, by queue type and opcode, from the device's
    --trace-file of the opmix boots (bench/breakdown.sh --opmix): only the
    requests that started inside the window (ready.1 .. done.1 mtimes, moved
    to CLOCK_MONOTONIC), with the device's mean handler time."""
    import time
    off = time.time() - time.monotonic()
    lines = ["| boot | requests per operation: queue/opcode (mean device handler us) |", "| --- | --- |"]
    for d in sorted(glob.glob(os.path.join(out, "opmix-*"))):
        t0 = os.stat(os.path.join(d, "ready.1")).st_mtime - off
        t1 = os.stat(os.path.join(d, "done.1")).st_mtime - off
        n = int(read_kv(os.path.join(d, "done.1"))["n"])
        cnt, busy = Counter(), Counter()
        for line in open(os.path.join(d, "devtrace")):
            kv = dict(x.split("=", 1) for x in line.split())
            if t0 <= int(kv["start"]) / 1e9 <= t1:
                k = (kv["type"], FUSE_OPS.get(int(kv["opcode"]), kv["opcode"]))
                cnt[k] += 1
                busy[k] += int(kv["end"]) - int(kv["start"])
        lines.append("| %s | %s |" % (os.path.basename(d)[6:], ", ".join(
            "%s/%s %.2f (%.0f)" % (t, o, v / n, busy[(t, o)] / v / 1000.0)
            for (t, o), v in sorted(cnt.items(), key=lambda x: -x[1]) if v / n >= 0.005)))
    with open(os.path.join(out, "opmix.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


# The layers of the build (bench/breakdown.sh --build), from the parts and
# groups of classify(): (label, parts, groups added, groups taken away).
BUILD_LAYERS = [
    ("guest user (the build's processes: user code, ptrace stops, faults)", [], ["guest-proc"], []),
    ("UML trap/syscall interception (UML kernel process)", ["entry"], [], ["guest-proc"]),
    ("guest kernel outside FUSE (VFS, mm, exec, page cache, hostfs)", ["vfs", "hostfs"], [], []),
    ("FUSE core", ["fuse"], [], []),
    ("driver (submit, reap+end)", ["submit", "reap+end"], [], []),
    ("kick/transport (guest kick, device vhost-user, vring)", ["kick", "dev:vhost-user", "dev:vring"], [], []),
    ("guest scheduler (waits for replies, switches)", ["sched"], [], []),
    ("device FUSE handling (dispatch, passthrough)", ["dev:fuse", "dev:dispatch", "dev:other"], [], []),
    ("guest irq, timers, signals, idle", ["idle/irq"], [], []),
]
BUILD_CONFIGS = ["tmpfs", "intree", "ours-sync", "ours-async"]
QUEUE_TYPES = ["sync", "request", "hiprio"]


def build_layers(c):
    """{label: sampled CPU ns} of one classified build case."""
    out = {}
    for label, parts, add, sub in BUILD_LAYERS:
        k = sum(c["parts"].get(p, 0) for p in parts)
        k += sum(c["groups"].get(g, 0) for g in add) - sum(c["groups"].get(g, 0) for g in sub)
        out[label] = k
    return out


def parse_driver_stats(text):
    """virtio_fs_sync's stats file ("QUEUE k=v ...", or "TAG QUEUE k=v ..."
    as tests/vm/run's driver-stats): {queue: {counter: value}}."""
    qs = {}
    for line in text.splitlines():
        names = [x for x in line.split() if "=" not in x]
        if names:
            qs[names[-1]] = {k: int(v) for k, v in (x.split("=", 1) for x in line.split() if "=" in x)
                             if v.isdigit()}
    return qs


def mono_mtime(path):
    """A host file's mtime on CLOCK_MONOTONIC (the device trace's clock)."""
    import time
    return os.stat(path).st_mtime - (time.time() - time.monotonic())


def buildmix(case):
    """The FUSE requests of the plain make window (go.1 .. done.1 mtimes)
    from the device's --trace-file: per queue type and opcode, the count and
    the device's busy time; the driver's counters around that make
    (drvstats.*.1); the wall times of both windows (done.1 plain, done.2
    under perf)."""
    res = {"window": read_kv(os.path.join(case, "done.1")),
           "perf_window": read_kv(os.path.join(case, "done.2")), "requests": [], "driver": {}}
    trace = os.path.join(case, "devtrace")
    if os.path.exists(trace) and os.path.exists(os.path.join(case, "done.1")):
        t0 = mono_mtime(os.path.join(case, "go.1"))
        t1 = mono_mtime(os.path.join(case, "done.1"))
        cnt, busy = Counter(), Counter()
        with open(trace, errors="replace") as f:
            lines = f.readlines()
        for line in lines:
            try:
                kv = dict(x.split("=", 1) for x in line.split())
                start, end, op = int(kv["start"]), int(kv["end"]), int(kv["opcode"])
            except (KeyError, ValueError):
                continue
            if t0 <= start / 1e9 <= t1:
                k = (kv.get("type", "?"), FUSE_OPS.get(op, str(op)))
                cnt[k] += 1
                busy[k] += end - start
        res["requests"] = [[t, o, v, busy[(t, o)]] for (t, o), v in sorted(cnt.items())]
    paths = [os.path.join(case, "drvstats.%s.1" % w) for w in ("before", "after")]
    if all(os.path.exists(p) for p in paths):
        b, a = (parse_driver_stats(read_text(p)) for p in paths)
        res["driver"] = {q: {k: v - b.get(q, {}).get(k, 0) for k, v in a[q].items()} for q in a}
    with open(os.path.join(case, "buildmix.json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2.0


def build_summary(cases):
    """Per configuration, over its rounds: make seconds (each round), and the
    means of sampled CPU seconds per group and layer and of the requests.
    CASES: [(breakdown.json, buildmix.json)] as dicts."""
    per = defaultdict(list)
    for c, m in cases:
        per[c["config"]].append((c, m))
    out = {}
    for cfg, cs in per.items():
        r = len(cs)
        make = [int(m["window"]["ns"]) / 1e9 for c, m in cs if m["window"].get("ns")]
        pmake = [int(m["perf_window"]["ns"]) / 1e9 for c, m in cs if m.get("perf_window", {}).get("ns")]
        groups, layers, reqs, busy, host, drv = Counter(), Counter(), Counter(), Counter(), 0, Counter()
        for c, m in cs:
            for g, v in c["groups"].items():
                groups[g] += v / 1e9 / r
            for label, v in build_layers(c).items():
                layers[label] += v / 1e9 / r
            host += sum(c["host"].values()) / 1e9 / r
            for t, o, n, b in m["requests"]:
                reqs[(t, o)] += n / r
                busy[(t, o)] += b / 1e9 / r
            for q, kv in m.get("driver", {}).items():
                drv[q] += kv.get("submitted", 0) / r
        out[cfg] = {"rounds": r, "make_s": make, "make_median_s": median(make),
                    "perf_make_s": pmake, "perf_make_median_s": median(pmake),
                    "groups": dict(groups), "layers": dict(layers), "host_s": host,
                    "requests": {"%s/%s" % k: v for k, v in reqs.items()},
                    "device_s": {"%s/%s" % k: v for k, v in busy.items()},
                    "driver_submitted": dict(drv)}
    return out


def render_build(summary, env=""):
    """The build breakdown's Markdown (a list of lines)."""
    cfgs = [c for c in BUILD_CONFIGS if c in summary] + sorted(set(summary) - set(BUILD_CONFIGS))
    lines = []
    w = lines.append
    row = lambda name, vals: w("| %s | %s |" % (name, " | ".join(vals)))

    def head(first):
        w("| %s | %s |" % (first, " | ".join(cfgs)))
        w("| --- |" + " --- |" * len(cfgs))
    f1 = lambda x: "-" if x is None else "%.1f" % x
    w("Where the make's time goes: sampled CPU seconds of the make under perf (cpu-clock on every "
      "process of the boot, mean over the rounds), by layer; its elapsed time minus the UML "
      "tree's CPU is time the guest was not on a CPU (waiting for the device, for the wake-up "
      "of its reply, or for the host CPU).\n")
    head("")
    row("rounds", [str(summary[c]["rounds"]) for c in cfgs])
    row("make elapsed s, no tool (median; each round)", ["%s (%s)" % (f1(summary[c]["make_median_s"]),
        ", ".join("%.1f" % x for x in summary[c]["make_s"])) for c in cfgs])
    row("make elapsed s, under perf (median)", [f1(summary[c].get("perf_make_median_s")) for c in cfgs])
    uml = lambda c: summary[c]["groups"].get("uml-kernel", 0) + summary[c]["groups"].get("guest-proc", 0)
    row("CPU s: UML tree (kernel process + guest processes)", [f1(uml(c)) for c in cfgs])
    row("CPU s: device", [f1(summary[c]["groups"].get("device", 0)) for c in cfgs])
    row("elapsed under perf - UML tree CPU s (guest off CPU)", [f1(summary[c]["perf_make_median_s"] - uml(c))
        if summary[c].get("perf_make_median_s") is not None else "-" for c in cfgs])
    for label, _, _, _ in BUILD_LAYERS:
        row(label, [f1(summary[c]["layers"].get(label, 0)) for c in cfgs])
    row("of all the above: leaf in the host kernel", [f1(summary[c]["host_s"]) for c in cfgs])
    w("")
    w("FUSE requests of one make, from the device's trace (mean over the rounds): count on "
      "sync / interrupt-driven (request) / hiprio queues, and the device's busy time in ms.\n")
    ops = Counter()
    for c in cfgs:
        for k, v in summary[c]["requests"].items():
            ops[k.split("/", 1)[1]] += v
    fuse_cfgs = [c for c in cfgs if summary[c]["requests"]]
    w("| opcode | %s |" % " | ".join(fuse_cfgs))
    w("| --- |" + " --- |" * len(fuse_cfgs))

    def cell(c, keep):
        rq, ds = summary[c]["requests"], summary[c]["device_s"]
        n = [sum(v for k, v in rq.items() if k.split("/", 1)[0] == t and keep(k.split("/", 1)[1]))
             for t in QUEUE_TYPES]
        d = sum(v for k, v in ds.items() if keep(k.split("/", 1)[1]))
        return "%.0f (%s) %.0f ms" % (sum(n), " / ".join("%.0f" % x for x in n), d * 1000)
    for op, _ in ops.most_common():
        row(op, [cell(c, lambda o, op=op: o == op) for c in fuse_cfgs])
    row("**all**", [cell(c, lambda o: True) for c in fuse_cfgs])
    w("")
    for c in fuse_cfgs:
        rq, ds = summary[c]["requests"], summary[c]["device_s"]
        tot = sum(rq.values()) or 1
        dtot = sum(ds.values()) or 1
        off = {k: v for k, v in rq.items() if not k.startswith("sync/")}
        w("- %s: %.1f %% of the requests (%.1f %% of the device time) on sync queues; not on them: %s." % (
            c, 100.0 * sum(v for k, v in rq.items() if k.startswith("sync/")) / tot,
            100.0 * sum(v for k, v in ds.items() if k.startswith("sync/")) / dtot,
            ", ".join("%s %.0f" % (k, v) for k, v in sorted(off.items(), key=lambda x: -x[1])) or "none"))
        if summary[c]["driver_submitted"]:
            w("  Driver counters (submitted, around make): %s." % ", ".join(
                "%s %.0f" % kv for kv in sorted(summary[c]["driver_submitted"].items())))
    return lines


def load_build(out):
    cases = []
    for p in sorted(glob.glob(os.path.join(out, "build-*", "breakdown.json"))):
        m = os.path.join(os.path.dirname(p), "buildmix.json")
        if os.path.exists(m):
            cases.append((json.loads(read_text(p)), json.loads(read_text(m))))
    return cases


def buildrender(out):
    summary = build_summary(load_build(out))
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    lines = ["# Breakdown of the build workload (bench/breakdown.sh --build)\n"]
    env = os.path.join(out, "env")
    if os.path.exists(env):
        lines += ["```", read_text(env).rstrip(), "```\n"]
    lines += render_build(summary)
    with open(os.path.join(out, "build.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    if len(argv) >= 5 and argv[1] == "classify":
        classify(argv[2], argv[3], argv[4])
    elif len(argv) >= 3 and argv[1] == "render":
        render(argv[2])
    elif len(argv) >= 3 and argv[1] == "opmix":
        opmix(argv[2])
    elif len(argv) >= 3 and argv[1] == "buildmix":
        buildmix(argv[2])
    elif len(argv) >= 3 and argv[1] == "buildrender":
        buildrender(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
