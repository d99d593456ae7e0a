# SPDX-License-Identifier: GPL-2.0
"""make bench: the A/B benchmark report (entry point bench/bench.sh).

Boots guests with tests/vm/run, one boot per configuration and repeat
(configurations: benchlib/configs.py), runs bench/guest-bench.sh on the
share in each, and writes
  bench/results/<date>-<host>.json   every run's lines, counters, environment
  bench/results/<date>-<host>.md     the report (tables, ratios, summary)
  bench/results/<date>-<host>/*.svg  its bar charts (benchlib/report.py)
Raw run directories (console, dmesg, ...) stay in build/bench/runs/.
Settings are BENCH_* environment variables (`bench/bench.sh --help` lists
them); re-render an existing run with
  bench/report.py render bench/results/N.json bench/results/N.md bench/results/N [NOTES]

Over 900 lines on purpose: the run loop, its boots and the collection of
one run's files are one sequence with one state; what can be tested alone
(configurations, statistics, the report) is in the package's other modules.
"""
import datetime
import glob
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

from benchlib import configs, counters, interleave, report, sizes
from benchlib.collect import collect
from benchlib.tools import (BENCH, BUILD, CACHE, REPO, Fail, build_uml, git_describe,
                           hostcost, install_deps, logger, merge_dev_opts, output, tail,
                           uml_build_key, vfsbench, vm_run)

log = logger("bench")

# UML memory (MB) and per-boot timeout (s) by BENCH_SIZE.
BOOT = {"quick": (1024, 900), "reduced": (1536, 1800), "full": (3072, 3600)}
TWO_CPUS = (os.cpu_count() or 1) >= 2

# (attribute, variable, default, empty means default, what). Where "empty
# means default" is False, BENCH_X="" is a value of its own (an empty list).
SETTINGS = (
    ("size", "BENCH_SIZE", "full", True, "workload sizes quick|reduced|full (bench/sizes)"),
    ("repeats", "BENCH_REPEATS", "2", True, "boots per configuration (the paired boot "
     "took the third's time)"),
    ("configs", "BENCH_CONFIGS", configs.DEFAULTS["uml"], False, "UML configurations"),
    ("floor", "BENCH_FLOOR", "1", True, "the cache=never stat floor boots (0|1)"),
    ("qemu_configs", "BENCH_QEMU_CONFIGS", configs.DEFAULTS["qemu"], False,
     "QEMU/TCG configurations (\"\" skips; the default has libkrun's, k-*, only where "
     "make libkrunfw finds a recipe)"),
    ("qemu_size", "BENCH_QEMU_SIZE", "quick", True, "their sizes"),
    ("qemu_workloads", "BENCH_QEMU_WORKLOADS", "floor,unlink,smallfile,fio", True, "their workloads"),
    ("workloads", "BENCH_WORKLOADS", "floor,fio,unlink,smallfile,seq,build", True, "UML workloads"),
    ("smp_configs", "BENCH_SMP_CONFIGS", configs.DEFAULTS["smp"], False,
     "SMP UML 7.3 configurations (\"\" skips)"),
    ("smp_cpus", "BENCH_SMP_CPUS", "2", True, "their vCPUs"),
    ("smp_workloads", "BENCH_SMP_WORKLOADS", "fio", True, "their workloads (fio-1 and fio-n)"),
    ("smp_size", "BENCH_SMP_SIZE", None, True, "their sizes (default BENCH_SIZE)"),
    ("smp_pin_device", "BENCH_SMP_PIN_DEVICE", "", True, "taskset list for their device (unpinned)"),
    ("smp_pin_guest", "BENCH_SMP_PIN_GUEST", "", True, "and for their guest (unpinned)"),
    ("smp_pin_vcpus", "BENCH_SMP_PIN_VCPUS", "0-%d" % ((os.cpu_count() or 1) - 1), False,
     "tests/vm/run --pin-vcpus for them: vCPU i's thread on the i-th CPU (\"\" leaves them floating)"),
    ("pin_device", "BENCH_PIN_DEVICE", None, True, "taskset list for the device in UML boots "
     "(default BENCH_PIN, else 0)"),
    ("pin_guest", "BENCH_PIN_GUEST", None, True, "taskset list for UML (default BENCH_PIN, else 1; "
     "0 on a 1-CPU host)"),
    ("pin_probe", "BENCH_PIN_PROBE", "1 0-1 0:1" if TWO_CPUS else "", False,
     "pinnings of the probe boots of intree and ours-sync: CPUS or DEV:GUEST (\"\" skips)"),
    ("probe_workloads", "BENCH_PROBE_WORKLOADS", "floor", True, "the probe boots' workloads"),
    ("qemu_pin_device", "BENCH_QEMU_PIN_DEVICE", "", True, "taskset list for the QEMU boots' device"),
    ("qemu_pin_guest", "BENCH_QEMU_PIN_GUEST", "", True, "and for QEMU (default unpinned)"),
    ("order", "BENCH_ORDER", "rotate", True, "boot order within a repeat: rotate (configurations "
     "rotated by one per repeat), shuffle (random, BENCH_SEED) or fixed"),
    ("seed", "BENCH_SEED", None, True, "the shuffle's seed (default from the clock; recorded)"),
    ("share_dir", "BENCH_SHARE_DIR", "", True, "where each boot's share lives: a fresh directory "
     "under it per boot, removed after it (default tests/vm/run's: a fresh temp dir in $TMPDIR "
     "or /tmp; bench/README.md, Noise)"),
    ("build", "BENCH_BUILD", "gen", True, "the build workload: gen (bench/gen-build.py, sized by "
     "bench/sizes) or objtool (linux-source-6.12)"),
    ("make_dir", "BENCH_MAKE_DIR", None, True, "what the build workload makes (default gen, or "
     "tools/objtool with BENCH_BUILD=objtool)"),
    ("probe_repeats", "BENCH_PROBE_REPEATS", None, True, "probes in the first N repeats only "
     "(default BENCH_REPEATS)"),
    ("flavor", "BENCH_FLAVOR", "bench", True, "UML kernel flavor bench|debug (debug only to "
     "validate the scripts)"),
    ("mem", "BENCH_MEM", None, True, "UML memory, MB (default by size)"),
    ("timeout", "BENCH_TIMEOUT", None, True, "per boot, s (default by size)"),
    ("outdir", "BENCH_OUT", os.path.join(REPO, "bench", "results"), True, "where the report goes"),
    ("name", "BENCH_NAME", None, True, "report name (default <date>-<host>)"),
    ("breakdown", "BENCH_BREAKDOWN", None, True, "the cost breakdown step after the boots, "
     "bench/breakdown.sh (0|1; default 1 at full size when perf is installed)"),
    ("breakdown_ops", "BENCH_BREAKDOWN_OPS", "stat unlink", True, "its operations"),
    ("breakdown_n", "BENCH_BREAKDOWN_N", None, True, "its calls per window (default 500 at "
     "full size, 200 below)"),
    ("breakdown_build", "BENCH_BREAKDOWN_BUILD", "4", True, "the breakdown of the build workload "
     "in the same step: C files of its generated project (bench/breakdown.sh --build; 0 skips)"),
    ("paired_rounds", "BENCH_PAIRED_ROUNDS", "4", True, "rounds of the paired boot after the "
     "others: one UML boot running every paired configuration once per round, the driver "
     "swapped in the guest, the rounds' orders from a Williams square (bench/ab-uml.sh "
     "--order balanced: a multiple of the configurations' count, twice it for an odd count, "
     "balances it; 0 skips)"),
    ("paired_configs", "BENCH_PAIRED_CONFIGS", configs.DEFAULTS["paired"], True,
     "its configurations (intree and intree-again give the A/A control)"),
    ("paired_workloads", "BENCH_PAIRED_WORKLOADS", "fio,unlink,smallfile,seq,build", True,
     "its workloads"),
    ("paired_size", "BENCH_PAIRED_SIZE", "reduced", True, "its sizes (and its build's)"),
    ("hostcost", "BENCH_HOSTCOST", "1", True, "the host's hand-off costs (bench/hostcost.c) "
     "between the device's and the guest's first CPUs, before the boots and after them (0|1)"),
    ("interleave_blocks", "BENCH_INTERLEAVE_BLOCKS", "24", True, "blocks of each interleaved "
     "pair (bench/interleave.sh: one UML boot per pair, two shares, short blocks in ABBA "
     "order; 0 skips)"),
    ("interleave_pairs", "BENCH_INTERLEAVE_PAIRS", " ".join(p[0] for p in interleave.PAIRS),
     True, "the interleaved pairs (benchlib/interleave.py; aa is the A/A control)"),
    ("interleave_workloads", "BENCH_INTERLEAVE_WORKLOADS", "floor,fio,unlink,smallfile", True,
     "their blocks' workloads (the block size of bench/sizes)"),
    ("interleave_layout", "BENCH_INTERLEAVE_LAYOUT", "colocated", True, "their placement: "
     "colocated (both devices and the guest on BENCH_PIN_GUEST) or split"),
    ("steal_max", "BENCH_STEAL_MAX", "5", True, "an interleaved block during which the host "
     "lost more than this per cent of its CPU time to steal is run again (twice at most)"),
    ("notes", "BENCH_NOTES", None, True, "Markdown inserted before the summary "
     "(default <BENCH_OUT>/<name>.notes.md)"),
)
# The settings the report's command line names, in its order (quoted: lists).
COMMAND = ("size", "repeats", "pin_device", "pin_guest", "qemu_pin_device", "qemu_pin_guest",
           "flavor", "configs'", "qemu_configs'", "qemu_size", "smp_configs'", "smp_cpus",
           "smp_workloads", "smp_size", "smp_pin_device", "smp_pin_guest", "smp_pin_vcpus", "workloads", "floor", "pin_probe'",
           "probe_repeats", "order", "seed", "build", "make_dir", "breakdown", "breakdown_ops'",
           "breakdown_n", "breakdown_build", "share_dir", "paired_rounds", "paired_configs'",
           "paired_workloads", "paired_size", "hostcost", "interleave_blocks",
           "interleave_pairs'", "interleave_workloads", "interleave_layout", "steal_max")


class Settings:
    """The BENCH_* variables, their defaults filled in."""

    def __init__(self, environ):
        for attr, var, default, empty_default, _ in SETTINGS:
            v = environ.get(var)
            if v is None or (empty_default and v == ""):
                v = default
            setattr(self, attr, v)
        if environ.get("BENCH_QEMU_CONFIGS") is None and not libkrunfw_recipe(environ):
            # the default leaves libkrun's rows out without a recipe to build from
            self.qemu_configs = " ".join(c for c in self.qemu_configs.split()
                                         if not c.startswith("k-"))
        pin = environ.get("BENCH_PIN") or None
        self.pin_device = self.pin_device or pin or "0"
        self.pin_guest = self.pin_guest or pin or ("1" if TWO_CPUS else "0")
        self.probe_repeats = self.probe_repeats or self.repeats
        if self.build not in ("gen", "objtool"):
            raise ValueError("BENCH_BUILD=gen|objtool")
        self.make_dir = self.make_dir or ("gen" if self.build == "gen" else "tools/objtool")
        if self.order not in ("rotate", "shuffle", "fixed"):
            raise ValueError("BENCH_ORDER=rotate|shuffle|fixed")
        self.seed = self.seed or str(int(time.time()))
        if self.share_dir and not os.path.isdir(self.share_dir):
            raise ValueError("BENCH_SHARE_DIR=%s: no such directory" % self.share_dir)
        if self.size not in BOOT:
            raise ValueError("BENCH_SIZE=quick|reduced|full")
        if self.paired_size not in BOOT:
            raise ValueError("BENCH_PAIRED_SIZE=quick|reduced|full")
        if not self.paired_rounds.isdigit():
            raise ValueError("BENCH_PAIRED_ROUNDS=N (0 skips)")
        for c in self.paired_configs.split():
            if c not in configs.IN_GUEST:
                raise ValueError("BENCH_PAIRED_CONFIGS: %s is not one of %s"
                                 % (c, " ".join(configs.IN_GUEST)))
        self.smp_size = self.smp_size or self.size
        if self.smp_size not in BOOT:
            raise ValueError("BENCH_SMP_SIZE=quick|reduced|full")
        if self.breakdown is None:
            self.breakdown = "1" if self.size == "full" and shutil.which("perf") else "0"
        if self.breakdown not in ("0", "1"):
            raise ValueError("BENCH_BREAKDOWN=0|1")
        self.breakdown_n = self.breakdown_n or ("500" if self.size == "full" else "200")
        if not self.breakdown_build.isdigit():
            raise ValueError("BENCH_BREAKDOWN_BUILD=FILES (0 skips)")
        self.mem = self.mem or str(BOOT[self.size][0])
        self.timeout = self.timeout or str(BOOT[self.size][1])
        self.name = self.name or "%s-%s" % (utcnow().strftime("%Y-%m-%d"),
                                            os.uname().nodename.split(".")[0])
        self.notes = self.notes or os.path.join(self.outdir, self.name + ".notes.md")
        self.repeats_n, self.probe_repeats_n = int(self.repeats), int(self.probe_repeats)
        for group, attr in (("uml", "configs"), ("qemu", "qemu_configs"), ("smp", "smp_configs")):
            for c in getattr(self, attr).split():
                configs.get(c, group)  # UnknownConfig before any boot

    def command(self):
        words = []
        for a in COMMAND:
            var = next(v for at, v, *_ in SETTINGS if at == a.rstrip("'"))
            q = "'" if a.endswith("'") else ""
            words.append("%s=%s%s%s" % (var, q, getattr(self, a.rstrip("'")), q))
        return "make bench (%s)" % " ".join(words)


def libkrunfw_recipe(environ):
    """libkrunfw's recipe that make libkrunfw builds from: LIBKRUNFW_SRC,
    else where the project's test machines keep it; None if neither is."""
    src = environ.get("LIBKRUNFW_SRC") or os.path.join(
        os.path.dirname(REPO), "shared", "upstream", "libkrunfw-5.4.0")
    return src if os.path.isdir(src) else None


def usage():
    lines = [__doc__.rstrip(), "", "Environment:"]
    for _, var, default, _, what in SETTINGS:
        lines.append("  %-22s %s%s" % (var, what, "" if default is None else " [%s]" % default))
    lines.append("  %-22s both BENCH_PIN_DEVICE and BENCH_PIN_GUEST (they win where given)"
                 % "BENCH_PIN")
    for group, title in (("uml", "UML 6.12"), ("smp", "SMP UML 7.3"), ("qemu", "QEMU/TCG")):
        lines += ["", "Configurations, %s (benchlib/configs.py):" % title]
        lines += ["  %-22s %s" % (n, configs.get(n).meaning) for n in configs.names(group)]
    return "\n".join(lines) + "\n"


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def hms(s):
    return "%dm%02ds" % (s // 60, s % 60)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def share_fs(path):
    """The share directory of the environment: PATH (or tests/vm/run's
    default) and its file system type (stat -f)."""
    where = path and os.path.realpath(path)
    if not path:
        path = os.environ.get("TMPDIR") or "/tmp"
        where = "tests/vm/run's default, a fresh temp dir in %s" % path
    return "%s (%s%s)" % (where, output(["stat", "-f", "-c", "%T", path]) or "file system unknown",
                          mount_of(path, read_text("/proc/mounts")))


def mount_of(path, mounts):
    """", TYPE on DEVICE" of the mount PATH is on (the longest mount point
    of /proc/mounts' text MOUNTS above it; stat -f calls ext4 ext2/ext3)."""
    real, best = os.path.realpath(path), None
    for ln in mounts.splitlines():
        f = ln.split()
        if len(f) >= 3 and (real == f[1] or real.startswith(f[1].rstrip("/") + "/")):
            if best is None or len(f[1]) > len(best[1]):
                best = f
    return ", %s on %s" % (best[2], best[0]) if best else ""


def share_args(s):
    """(tests/vm/run options, directory) of one boot's share: a fresh
    directory under BENCH_SHARE_DIR, or ([], None) for tests/vm/run's own."""
    if not s.share_dir:
        return [], None
    d = tempfile.mkdtemp(prefix="vfs-share.", dir=os.path.realpath(s.share_dir))
    return ["--share", d], d


def host_state(meminfo, stat):
    """The host's pending writeback (/proc/meminfo Dirty, Writeback, kB)
    and its CPU jiffies (/proc/stat's cpu line) from their texts."""
    st = {}
    for ln in meminfo.splitlines():
        k, _, v = ln.partition(":")
        if k in ("Dirty", "Writeback") and v.split():
            st[k.lower() + "_kb"] = int(v.split()[0])
    cpu = next((ln.split()[1:] for ln in stat.splitlines() if ln.startswith("cpu ")), [])
    if len(cpu) >= 8:
        st["cpu"] = [int(x) for x in cpu]
    return st


def host_now():
    return host_state(read_text("/proc/meminfo"), read_text("/proc/stat"))


def host_delta(before, after):
    """Steal and iowait in per cent of the host's CPU time between two
    host_state()s (guest and guest_nice are inside user and nice)."""
    if "cpu" not in before or "cpu" not in after:
        return {}
    d = [b - a for a, b in zip(before["cpu"][:8], after["cpu"][:8])]
    total = sum(d)
    if total <= 0:
        return {}
    return {"steal_pct": round(100.0 * d[7] / total, 2), "iowait_pct": round(100.0 * d[4] / total, 2)}


# ---------------------------------------------------------------- helpers

TARBALL_PATHS = ("tools/objtool", "tools/lib/subcmd", "tools/include", "tools/arch/x86",
                 "tools/build", "tools/scripts", "tools/lib/string.c", "tools/lib/ctype.c",
                 "tools/lib/rbtree.c", "tools/lib/str_error_r.c", "tools/lib/zalloc.c",
                 "tools/lib/bitmap.c", "tools/lib/list_sort.c", "tools/lib/hweight.c",
                 "tools/lib/find_bit.c")
TARBALL_UNPACK = ("*/tools/objtool/*", "*/tools/lib/*", "*/tools/include/*", "*/tools/arch/x86/*",
                  "*/tools/build/*", "*/tools/scripts/*")


def build_tarball():
    """The build workload: objtool and libsubcmd from Debian's
    linux-source-6.12 (the tree the UML kernel is built from; about 400
    files, 3.4 MB)."""
    tarball = os.path.join(BUILD, "objtool-src.tar.gz")
    if os.path.exists(tarball) and os.path.getsize(tarball) > 0:
        return tarball
    log("making the build workload's tarball (objtool from linux-source-6.12)")
    kdir = output([os.path.join(REPO, "scripts", "fetch-kernel.sh"), "6.12"])
    if not kdir:
        raise Fail("cannot fetch linux-source-6.12")
    with open(os.path.join(kdir, "version")) as f:
        src = os.path.join(CACHE, "uml", "src-" + f.read().strip())
    with tempfile.TemporaryDirectory() as tmpx:
        if not os.path.isdir(os.path.join(src, "tools", "objtool")):
            if subprocess.run(["tar", "-xJf", os.path.join(kdir, "source.tar.xz"), "-C", tmpx,
                               "--strip-components=1", "--wildcards"] + list(TARBALL_UNPACK),
                              check=False).returncode:
                raise Fail("cannot unpack objtool")
            src = tmpx
        if subprocess.run(["tar", "-czf", tarball + ".tmp"] + list(TARBALL_PATHS), cwd=src,
                          check=False).returncode:
            raise Fail("cannot make %s" % tarball)
        os.replace(tarball + ".tmp", tarball)
    return tarball


def gen_tarball(size):
    """The generated build (bench/gen-build.py) of SIZE's build_files and
    build_seed (bench/sizes), made once: its name carries those and a hash
    of the generator, so a changed generator or size makes a new one."""
    gen = os.path.join(BENCH, "gen-build.py")
    sz = sizes.load()[size]
    with open(gen, "rb") as f:
        h = hashlib.sha256(f.read()).hexdigest()[:8]
    tarball = os.path.join(BUILD, "gen-build-%df-s%d-%s.tar.gz" % (sz["build_files"], sz["build_seed"], h))
    if os.path.exists(tarball) and os.path.getsize(tarball) > 0:
        return tarball
    log("making the build workload's tarball (bench/gen-build.py, %d files)" % sz["build_files"])
    os.makedirs(BUILD, exist_ok=True)
    if subprocess.run([sys.executable, gen, "--files", str(sz["build_files"]), "--seed",
                       str(sz["build_seed"]), tarball + ".tmp"], check=False).returncode:
        raise Fail("cannot make %s" % tarball)
    os.replace(tarball + ".tmp", tarball)
    return tarball


def tarball_line(tarball):
    with tarfile.open(tarball) as t:
        files = sum(1 for m in t.getmembers() if not m.isdir())
    return "%s %d bytes, %d files" % (os.path.basename(tarball), os.path.getsize(tarball), files)


# ---------------------------------------------------------------- runs

def ordered(s, names, r, rng):
    """NAMES in repeat R's order: rotated by R-1, shuffled or as given."""
    names = list(names)
    if s.order == "rotate" and names:
        k = (r - 1) % len(names)
        return names[k:] + names[:k]
    if s.order == "shuffle":
        rng.shuffle(names)
    return names


def run_list(s):
    """(kind, config, repeat): repeats outermost (every configuration boots
    once per repeat, A B C A B C ...), so that drift spreads over
    configurations, and within a repeat the configurations in BENCH_ORDER's
    order, so that none always boots first or after the same one."""
    runs = []
    uml = s.configs.split()
    rng = random.Random(s.seed)
    for r in range(1, s.repeats_n + 1):
        runs += [("main", c, r) for c in ordered(s, uml, r, rng)]
        if s.floor == "1":
            runs += [("floor", c, r) for c in ordered(s, [c for c in uml if c != "tmpfs"], r, rng)]
        runs += [("qemu", c, r) for c in ordered(s, s.qemu_configs.split(), r, rng)]
        runs += [("smp", c, r) for c in ordered(s, s.smp_configs.split(), r, rng)]
        for c in configs.PROBED:
            if r <= s.probe_repeats_n and c in uml:
                runs += [("probe", "%s/pin%s" % (c, p), r) for p in s.pin_probe.split()]
    return runs


def faithful_pins(pd, pg):
    """The --pin-sync and --pin-workers options of the faithful layout: the
    sync handler on the guest's first CPU, the workers on the device's CPUs
    (the guest's on a 1-CPU host). The device itself is started unpinned
    (no --pin-device): its threads may only be pinned within the CPUs it
    starts on, and its main thread, the control thread, is pinned to the
    guest's CPU, which tests/vm/run's check of --pin-device would take for
    a pinning that did not take."""
    dcpus = counters.cpu_list(pd)
    gcpus = counters.cpu_list(pg)
    workers = ",".join(str(x) for x in (dcpus if set(dcpus) - set(gcpus) else gcpus))
    return ["--dev-opts", "--pin-sync=%d --pin-workers=%s" % (gcpus[0], workers)]


def smp_faithful_pins(vcpus):
    """The faithful layout on SMP UML: sync queue i's handler thread on the
    CPU of vCPU i (the i-th CPU of BENCH_SMP_PIN_VCPUS, where tests/vm/run
    --pin-vcpus puts vCPU i), so that each vCPU's sync requests run on its
    own core; the workers on the host's other CPUs, unpinned where the
    vCPUs take them all. The device is started unpinned, as in
    faithful_pins()."""
    vc = counters.cpu_list(vcpus)
    if not vc:
        raise Fail("the faithful layout on SMP UML needs BENCH_SMP_PIN_VCPUS")
    opts = "--pin-sync=" + ",".join(str(x) for x in vc)
    others = sorted(set(range(os.cpu_count() or 1)) - set(vc))
    if others:
        opts += " --pin-workers=" + ",".join(str(x) for x in others)
    return ["--dev-opts", opts]


def uml_args(s, name, pin=None):
    """tests/vm/run options of a UML configuration; PIN is CPUS (device and
    guest) or DEV:GUEST."""
    c = configs.get(name)
    pd, pg = s.pin_device, s.pin_guest
    if pin:
        pd, pg = pin.split(":")[0], pin.split(":", 1)[-1]
    head, tail = [], []
    if c.group == "smp":
        # a sync queue and a request queue per vCPU (tests/vm/run's default),
        # and a device worker per vCPU for every configuration: with the
        # device's default of one worker, the request queues of the
        # interrupt-driven configurations would share one thread while each
        # sync queue has its own, a difference that is not the sync path.
        pd, pg = s.smp_pin_device, s.smp_pin_guest
        head = ["--kernel", "7.3", "--cpus", s.smp_cpus]
        if s.smp_pin_vcpus:
            head += ["--pin-vcpus", s.smp_pin_vcpus]
        tail = ["--dev-opts", "--workers=%s" % s.smp_cpus]
    dev = ["--pin-device", pd]
    guest = ["--pin-guest", pg]
    if c.layout == "colocated":
        dev = ["--pin-device", pg]
    elif c.layout == "floating":
        dev, guest = [], []
    elif c.layout == "faithful":
        dev = []
        tail += smp_faithful_pins(s.smp_pin_vcpus) if c.group == "smp" else faithful_pins(pd, pg)
    return merge_dev_opts(head + ["--substrate", "uml", "--flavor", s.flavor] + dev + guest + [
        "--mem", s.mem] + list(c.run_args) + tail)


def qemu_args(s, name):
    args = ["--substrate", "qemu", "--kernel", "6.12", "--cpus", "2"]
    if s.qemu_pin_device:
        args += ["--pin-device", s.qemu_pin_device]
    if s.qemu_pin_guest:
        args += ["--pin-guest", s.qemu_pin_guest]
    return args + list(configs.get(name, "qemu").run_args)


# Device options of every benchmark boot on the reference device (not
# virtiofsd): guest memory prefaulted when the device maps it, so no boot's
# figures carry the host page faults of the device's first writes to guest
# pages (how many pages are fresh differs per boot).
# And --file-handles: the unlink workload keeps up to 50,000 files known
# to the guest at once, more than the sandbox's default of one pinned fd
# per known inode allows (--max-files, about 9,000 here); a benchmark's
# guest is trusted, and the device then reopens evicted inodes by handle
# (vhost-user-fs/README.md, Security model).
BENCH_DEV_OPTS = ["--dev-opts", "--populate-memory --file-handles"]


def bench_dev_opts(args):
    """ARGS with BENCH_DEV_OPTS merged in, unless the device is virtiofsd."""
    if any(a == "--device" and b == "virtiofsd" for a, b in zip(args, args[1:])):
        return args
    return merge_dev_opts(args + BENCH_DEV_OPTS)


def boot_args(s, kind, c):
    """(tests/vm/run options, guest-bench.sh options) of one boot."""
    if kind == "main":
        return bench_dev_opts(uml_args(s, c)), ["--size", s.size, "--workloads", s.workloads]
    if kind == "floor":
        return (bench_dev_opts(uml_args(s, c) + ["--dev-opts", "--cache=never"]),
                ["--size", s.size, "--workloads", "floor"])
    if kind == "probe":
        name, pin = c.split("/pin", 1)
        return bench_dev_opts(uml_args(s, name, pin)), ["--size", "quick", "--workloads", s.probe_workloads]
    if kind == "qemu":
        return bench_dev_opts(qemu_args(s, c)), ["--size", s.qemu_size, "--workloads", s.qemu_workloads]
    return bench_dev_opts(uml_args(s, c)), ["--size", s.smp_size, "--workloads", s.smp_workloads]


def boot(s, ctx, i, kind, c, r):
    """One boot; returns its manifest line."""
    rid = "%03d-%s-%s-r%s" % (i, kind, c.replace("/", "-"), r)
    d = os.path.join(ctx["raw"], rid)
    args, gargs = boot_args(s, kind, c)
    share, share_dir = share_args(s)
    args = share + args
    guest = ["sh", os.path.join(BENCH, "guest-bench.sh"), "--label", c] + gargs + [
        "--vfsbench", ctx["vfsbench"], "--tarball", ctx["tarball"], "--make-dir", s.make_dir]
    load0, host0 = loadavg(), host_now()
    errpath = os.path.join(ctx["raw"], rid + ".stderr")
    t0 = time.time()
    with open(errpath, "w") as err:
        rc = vm_run(args + ["--timeout", s.timeout, "--results", d, "--quiet"], guest, stderr=err)
    t1 = time.time()
    host1 = host_now()
    if share_dir:
        shutil.rmtree(share_dir, ignore_errors=True)
    if rc != 0:
        log("  exit status %d:" % rc)
        for line in tail(errpath, 5):
            print(line, file=sys.stderr)
    key = uml_build_key(s.flavor, "7.3") if kind == "smp" else uml_build_key(s.flavor)
    return {"id": rid, "kind": kind, "config": c, "repeat": r, "rc": rc,
            "host_s": round(t1 - t0, 3), "load_before": load0, "load_after": loadavg(),
            "host_dirty_kb": [host0.get("dirty_kb"), host1.get("dirty_kb")],
            "host_writeback_kb": [host0.get("writeback_kb"), host1.get("writeback_kb")],
            "host_cpu": host_delta(host0, host1),
            "uml_build_key": key, "driver_version": git_describe(), "dir": d,
            "run_args": args + ["--"] + gargs}


def run_boots(s, ctx):
    runs = run_list(s)
    total = len(runs)
    log("%d boots: UML [%s] x %s (%s, workloads %s), floor boots %s, QEMU [%s] (%s), "
        "SMP UML 7.3 [%s] x %s vCPUs (%s); raw runs in %s"
        % (total, s.configs, s.repeats, s.size, s.workloads, s.floor, s.qemu_configs, s.qemu_size,
           s.smp_configs, s.smp_cpus, s.smp_workloads, ctx["raw"]))
    log("pinning (taskset -c): UML device %s, guest %s; QEMU device %s, guest %s; probes [%s]"
        % (s.pin_device, s.pin_guest, s.qemu_pin_device or "unpinned",
           s.qemu_pin_guest or "unpinned", s.pin_probe))
    with open(os.path.join(ctx["raw"], "manifest.jsonl"), "w") as manifest:
        for i, (kind, c, r) in enumerate(runs, 1):
            el = int(time.time() - ctx["t_start"])
            eta = ", ETA %s" % hms(el * (total - i + 1) // (i - 1)) if i > 1 else ""
            log("[%d/%d] %s %s repeat %d/%s (elapsed %s%s, load %s)"
                % (i, total, kind, c, r, s.repeats, hms(el), eta, loadavg()))
            manifest.write(json.dumps(boot(s, ctx, i, kind, c, r)) + "\n")
            manifest.flush()


# ---------------------------------------------------------------- paired

# Per configuration and round, s: the paired boot's timeout is this times
# the runs, on top of the boot's own.
PAIRED_RUN_TIMEOUT = 600
# Its rounds' orders: a Williams square (bench/ab-in-guest.sh --order).
PAIRED_ORDER = "balanced"


def paired_cmd(s, ctx, out):
    """bench/ab-uml.sh's command line of the paired boot."""
    share, share_dir = share_args(s)
    nruns = int(s.paired_rounds) * len(s.paired_configs.split())
    cmd = [os.path.join(BENCH, "ab-uml.sh"), "--results", out, "--size", s.paired_size,
           "--repeats", s.paired_rounds, "--configs", s.paired_configs,
           "--workloads", s.paired_workloads, "--flavor", s.flavor,
           "--pin-device", s.pin_device, "--pin-guest", s.pin_guest, "--order", PAIRED_ORDER,
           "--tarball", ctx["paired_tarball"], "--make-dir", s.make_dir,
           "--"] + share + ["--mem", str(BOOT[s.paired_size][0]),
                            "--timeout", str(BOOT[s.paired_size][1] + PAIRED_RUN_TIMEOUT * nruns)
                            ] + BENCH_DEV_OPTS
    return cmd, share_dir


def run_paired(s, ctx):
    """The paired boot (benchlib/paired.py) after the others: RAW/paired/
    (bench/ab-uml.sh --results) and RAW/paired-status (KEY=VALUE); a
    failure is recorded, never fatal."""
    st = {"rounds": s.paired_rounds, "order": PAIRED_ORDER, "configs": s.paired_configs, "size": s.paired_size,
          "workloads": s.paired_workloads, "pin_device": s.pin_device, "pin_guest": s.pin_guest,
          "driver_version": git_describe()}
    if s.paired_rounds == "0" or not s.paired_configs.split():
        st["status"] = "not run (BENCH_PAIRED_ROUNDS=0 or no BENCH_PAIRED_CONFIGS)"
    else:
        out = os.path.join(ctx["raw"], "paired")
        ctx["paired_tarball"] = (gen_tarball(s.paired_size) if s.build == "gen"
                                 else ctx["tarball"])
        cmd, share_dir = paired_cmd(s, ctx, out)
        st["command"] = " ".join(os.path.relpath(w, REPO) if w.startswith(REPO + "/") else w
                                 for w in cmd)
        log("paired boot: %s rounds of [%s] at %s sizes (load %s)"
            % (s.paired_rounds, s.paired_configs, s.paired_size, loadavg()))
        t0 = time.time()
        with open(os.path.join(ctx["raw"], "paired.stdout"), "w") as f:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False).returncode
        if share_dir:
            shutil.rmtree(share_dir, ignore_errors=True)
        st["wall_s"] = str(int(time.time() - t0))
        st["status"] = "run" if rc == 0 else "failed (exit status %d; build/bench/runs/%s/paired.stdout)" % (
            rc, os.path.basename(ctx["raw"]))
        log("paired boot: %s in %s" % (st["status"], hms(int(st["wall_s"]))))
    with open(os.path.join(ctx["raw"], "paired-status"), "w") as f:
        f.writelines("%s=%s\n" % kv for kv in st.items())


# ---------------------------------------------------------------- interleave

# Per block, s: an interleaved boot's timeout is this times its blocks.
INTERLEAVE_BLOCK_TIMEOUT = 300
HOSTSTAT = ".interleave-hoststat"
HOSTSTAT_WIDTH = 255


def side_opts(config):
    """tests/vm/run share options of one side of an interleaved pair."""
    if config in ("intree", "intree-again"):
        return ["--driver", "intree"]
    if config == "ours-async":
        # beside ours-sync the module's sync= is on: no sync queues here
        return ["--driver", "ours", "--dev-opts", "--sync-queues=0"]
    if config == "ours-async-no-async-dio":
        # the FUSE flags of a share on sync queues: the driver does not ask
        # for FUSE_ASYNC_DIO there (fuse_glue.c, vfsync_init_flags())
        return ["--driver", "ours", "--dev-opts", "--sync-queues=0 --no-async-dio"]
    if config == "ours-async-forget-1":
        # each FORGET in a message of its own, as in-tree virtiofs sends them
        return ["--driver", "ours", "--dev-opts", "--sync-queues=0",
                "--mount-opts", "forget_batch=1"]
    if config == "ours-sync":
        return ["--driver", "ours"]
    raise Fail("no interleaved side for %s" % config)


def interleave_args(s, name, dirs):
    """(tests/vm/run options, the pair's global --sync) of one interleaved
    pair: share A (the baseline) first, B second, one device each, placed
    by BENCH_INTERLEAVE_LAYOUT."""
    _, b, a, _ = interleave.pair(name)
    sync = "off" if a == "intree" and b.startswith("ours-async") else "on"
    pin = (["--pin-device", s.pin_guest] if s.interleave_layout == "colocated"
           else ["--pin-device", s.pin_device])
    args = ["--substrate", "uml", "--flavor", s.flavor, "--sync", sync, "--mem",
            str(BOOT["quick"][0]), "--pin-guest", s.pin_guest] + pin
    args += ["--share", dirs[0]] + side_opts(a) + BENCH_DEV_OPTS
    args += ["--share", dirs[1]] + side_opts(b) + BENCH_DEV_OPTS
    # one --dev-opts per share (tests/vm/run keeps a share's last)
    out, i = [], 0
    while i < len(args):
        if args[i] == "--share":
            j = args.index("--share", i + 1) if "--share" in args[i + 1:] else len(args)
            out += [args[i], args[i + 1]] + merge_dev_opts(args[i + 2:j])
            i = j
        else:
            out.append(args[i])
            i += 1
    return out


def tree_cpu_ticks(pid):
    """User + system clock ticks of process PID and of its descendants now
    running (the reference device's sandbox forks: its child does the work),
    from /proc/PID/stat and /proc/PID/task/*/children; None if PID is gone."""
    total, todo, seen = None, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open("/proc/%d/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # fields[0] is the state (stat's 3rd field): utime, stime are 14, 15
            total = (total or 0) + int(fields[11]) + int(fields[12])
            for t in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


class HostStat:
    """Rewrites DIR/.interleave-hoststat in place ten times a second until
    stopped: the host's /proc/stat cpu line, then "devcpu hz=H a=T b=T",
    the CPU ticks so far of the devices serving SHARES (A's and B's: the
    processes whose command line has --shared-dir=THAT, with their
    children), each line padded to one width (the guest reads the file with
    O_DIRECT)."""

    def __init__(self, d, shares=()):
        self.path = os.path.join(d, HOSTSTAT)
        self.shares = dict(zip("ab", shares))
        self.pids = {}
        self.stop = threading.Event()
        self.write()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def device_pids(self):
        """{"a": pid, "b": pid} of the devices found so far: for each share,
        the process with --shared-dir=SHARE whose parent has not."""
        for side, share in self.shares.items():
            if side in self.pids and os.path.exists("/proc/%d" % self.pids[side]):
                continue
            self.pids.pop(side, None)
            arg = ("--shared-dir=" + share).encode()
            found = {}
            for name in os.listdir("/proc"):
                if not name.isdigit():
                    continue
                try:
                    with open("/proc/%s/cmdline" % name, "rb") as f:
                        if arg not in f.read().split(b"\0"):
                            continue
                    with open("/proc/%s/stat" % name) as f:
                        found[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
            top = [pid for pid, ppid in found.items() if ppid not in found]
            if len(top) == 1:
                self.pids[side] = top[0]
        return self.pids

    def write(self):
        with open("/proc/stat") as f:
            line = next(ln for ln in f if ln.startswith("cpu "))
        dev = "devcpu hz=%d" % os.sysconf("SC_CLK_TCK")
        for side, pid in sorted(self.device_pids().items()):
            t = tree_cpu_ticks(pid)
            if t is not None:
                dev += " %s=%d" % (side, t)
        with open(self.path, "r+" if os.path.exists(self.path) else "w") as f:
            for ln in (line.rstrip("\n"), dev):
                f.write(ln.ljust(HOSTSTAT_WIDTH)[:HOSTSTAT_WIDTH] + "\n")

    def loop(self):
        while not self.stop.wait(0.1):
            self.write()

    def close(self):
        self.stop.set()
        self.thread.join()


def run_interleave(s, ctx):
    """One UML boot per interleaved pair (benchlib/interleave.py):
    RAW/interleave/<pair>/ (tests/vm/run --results) and
    RAW/interleave-status; a failed pair is recorded, never fatal."""
    st = {"blocks": s.interleave_blocks, "pairs": s.interleave_pairs,
          "workloads": s.interleave_workloads, "layout": s.interleave_layout,
          "steal_max": s.steal_max, "pin_device": s.pin_device, "pin_guest": s.pin_guest}
    if s.interleave_blocks == "0" or not s.interleave_pairs.split():
        st["status"] = "not run (BENCH_INTERLEAVE_BLOCKS=0 or no BENCH_INTERLEAVE_PAIRS)"
    else:
        results = []
        for name in s.interleave_pairs.split():
            base = os.path.realpath(s.share_dir) if s.share_dir else None
            dirs = [tempfile.mkdtemp(prefix="vfs-share.", dir=base) for _ in range(2)]
            out = os.path.join(ctx["raw"], "interleave", name)
            args = interleave_args(s, name, dirs)
            guest = ["sh", os.path.join(BENCH, "interleave.sh"), "--a", "/mnt/share",
                     "--b", "/mnt/share1", "--blocks", s.interleave_blocks, "--workloads",
                     s.interleave_workloads, "--vfsbench", ctx["vfsbench"], "--host-stat",
                     "/mnt/share/" + HOSTSTAT, "--steal-max", s.steal_max]
            log("interleaved pair %s: %s blocks of %s (load %s)"
                % (name, s.interleave_blocks, s.interleave_workloads, loadavg()))
            t0 = time.time()
            hs = HostStat(dirs[0], dirs)
            try:
                with open(os.path.join(ctx["raw"], "interleave-%s.stderr" % name), "w") as err:
                    rc = vm_run(args + ["--timeout", str(INTERLEAVE_BLOCK_TIMEOUT *
                                                         int(s.interleave_blocks)),
                                        "--results", out, "--quiet"], guest, stderr=err)
            finally:
                hs.close()
                for d in dirs:
                    shutil.rmtree(d, ignore_errors=True)
            results.append("%s:%s:%d" % (name, "run" if rc == 0 else "failed-%d" % rc,
                                         int(time.time() - t0)))
            log("interleaved pair %s: exit status %d in %s" % (name, rc, hms(int(time.time() - t0))))
        st["status"] = "run"
        st["results"] = " ".join(results)
    with open(os.path.join(ctx["raw"], "interleave-status"), "w") as f:
        f.writelines("%s=%s\n" % kv for kv in st.items())


# ---------------------------------------------------------------- breakdown

BREAKDOWN_CONFIGS = "ours-sync ours-async intree"


def first_cpu(cpus):
    """The first CPU of a taskset list ("2-3,5" -> 2)."""
    return int(cpus.split(",")[0].split("-")[0])


def run_hostcost(s, ctx, when):
    """RAW/hostcost-WHEN: bench/hostcost.c's lines between the first CPU of
    the device's and of the guest's pinning (the split layout's CPUs)."""
    if s.hostcost != "1":
        return
    a, b = first_cpu(s.pin_device), first_cpu(s.pin_guest)
    log("host costs (%s): pipe and futex hand-offs, CPUs %d and %d" % (when, a, b))
    out = subprocess.run([ctx["hostcost"], str(a), str(b)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    with open(os.path.join(ctx["raw"], "hostcost-" + when), "w") as f:
        f.write(out.stdout)
    if out.returncode:
        raise Fail("hostcost failed: %s" % out.stdout[-500:])



def run_breakdown(s, ctx):
    """The cost breakdown (bench/breakdown.sh) after the A/B boots, on the
    same UML flavour and tree: one boot per configuration and operation.
    Writes RAW/breakdown-status (KEY=VALUE) and the cases in RAW/breakdown/;
    a missing perf or a failure is recorded, never fatal."""
    st = {"configs": BREAKDOWN_CONFIGS, "ops": s.breakdown_ops, "n": s.breakdown_n,
          "flavor": s.flavor, "driver_version": git_describe(),
          "driver_commit": output(["git", "-C", REPO, "rev-parse", "HEAD"])}
    out = os.path.join(ctx["raw"], "breakdown")
    if s.breakdown != "1":
        st["status"] = "not run (BENCH_BREAKDOWN=0%s)" % (
            "" if "BENCH_BREAKDOWN" in os.environ else "; the default below full size")
    elif not shutil.which("perf"):
        st["status"] = "not run: perf not found"
    else:
        cmd = [os.path.join(BENCH, "breakdown.sh"), "--configs", BREAKDOWN_CONFIGS,
               "--ops", s.breakdown_ops, "--n", s.breakdown_n, "--flavor", s.flavor, "--out", out]
        st["command"] = "bench/breakdown.sh --configs '%s' --ops '%s' --n %s --flavor %s" % (
            BREAKDOWN_CONFIGS, s.breakdown_ops, s.breakdown_n, s.flavor)
        log("breakdown: %s (load %s)" % (st["command"], loadavg()))
        t0 = time.time()
        with open(os.path.join(ctx["raw"], "breakdown.stderr"), "w") as err:
            rc = subprocess.run(cmd, stdout=err, stderr=err, check=False).returncode
        st["wall_s"] = str(int(time.time() - t0))
        done = [c for c in glob.glob(os.path.join(out, "*", "breakdown.json"))]
        if rc != 0:
            st["status"] = "failed (exit status %d; build/bench/runs/%s/breakdown.stderr)" % (
                rc, os.path.basename(ctx["raw"]))
        elif not done:
            st["status"] = "failed (no case completed; build/bench/runs/%s/breakdown.stderr)" % (
                os.path.basename(ctx["raw"]))
        else:
            st["status"] = "run"
        log("breakdown: %s in %s" % (st["status"], hms(int(st["wall_s"]))))
    if s.breakdown == "1" and shutil.which("perf"):
        st.update(run_build_breakdown(s, ctx))
    with open(os.path.join(ctx["raw"], "breakdown-status"), "w") as f:
        f.writelines("%s=%s\n" % kv for kv in st.items())


def run_build_breakdown(s, ctx):
    """The build workload's breakdown (bench/breakdown.sh --build): its
    build_* keys of RAW/breakdown-status; the cases in RAW/breakdown-build/."""
    if s.breakdown_build == "0":
        return {"build_status": "not run (BENCH_BREAKDOWN_BUILD=0)"}
    out = os.path.join(ctx["raw"], "breakdown-build")
    st = {"build_command": "bench/breakdown.sh --build %s --flavor %s" % (s.breakdown_build, s.flavor)}
    log("breakdown: %s (load %s)" % (st["build_command"], loadavg()))
    t0 = time.time()
    with open(os.path.join(ctx["raw"], "breakdown-build.stderr"), "w") as err:
        rc = subprocess.run([os.path.join(BENCH, "breakdown.sh"), "--build", s.breakdown_build,
                             "--flavor", s.flavor, "--out", out],
                            stdout=err, stderr=err, check=False).returncode
    st["build_wall_s"] = str(int(time.time() - t0))
    if rc != 0 or not os.path.exists(os.path.join(out, "summary.json")):
        st["build_status"] = "failed (exit status %d; build/bench/runs/%s/breakdown-build.stderr)" % (
            rc, os.path.basename(ctx["raw"]))
    else:
        st["build_status"] = "run"
    log("breakdown: build %s in %s" % (st["build_status"], hms(int(st["build_wall_s"]))))
    return st


# ---------------------------------------------------------------- environment

def device_env():
    """The env's lines on the reference device's options."""
    return (
        ("device", "vhost-user-fs/vhost-user-fs, options from tests/vm/run: "
         "--request-queues=<vCPUs> --sync-queues=<vCPUs> (UML: 1 and 1), and from make bench: "
         "%s; device defaults otherwise (cache=auto, no writeback, 1 worker); "
         "floor boots add --cache=never" % BENCH_DEV_OPTS[1]),
        ("device_memory", "prefaulted by the reference device when it maps it at "
         "VHOST_USER_SET_MEM_TABLE (--populate-memory, MADV_POPULATE_WRITE) on every boot "
         "of it; not on virtiofsd"),
    )


def patched_qemu(s):
    """The project's QEMU, where a QEMU configuration of the run boots it:
    its version and its build's directory (QEMU version and series hash)."""
    if not any("patched" in configs.get(c, "qemu").run_args for c in s.qemu_configs.split()):
        return ""
    binary = output([os.path.join(REPO, "scripts", "build-qemu.sh")])
    if not binary:
        return "not built (scripts/build-qemu.sh failed)"
    version = output([binary, "--version"]).split("\n")[0]
    return "%s (%s)" % (version, os.path.basename(os.path.dirname(os.path.dirname(binary))))


def environment(s, ctx):
    """The run's env file: KEY=VALUE lines for the report."""
    with open("/proc/cpuinfo") as f:
        model = next((ln.split(": ", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    frags = ""
    for fn in ("uml-base.config", "uml-%s.config" % s.flavor):
        try:
            with open(os.path.join(REPO, "tests", "vm", fn)) as f:
                frags += "".join(ln.rstrip("\n") + " " for ln in f if ln.startswith("CONFIG"))
        except OSError:
            pass
    qemu = output(["qemu-system-x86_64", "--version"]).split("\n")[0]
    env = (
        ("date", utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("host", os.uname().nodename.split(".")[0]), ("host_kernel", os.uname().release),
        ("host_cpus", str(len(os.sched_getaffinity(0)))), ("host_cpu_model", model),
        ("driver_version", git_describe()),
        ("driver_commit", output(["git", "-C", REPO, "rev-parse", "HEAD"])),
        ("uml_kernel", ctx["linux"]), ("uml73_kernel", ctx["linux73"]),
        ("smp_cpus", s.smp_cpus), ("smp_pin_device", s.smp_pin_device),
        ("smp_pin_guest", s.smp_pin_guest), ("smp_pin_vcpus", s.smp_pin_vcpus),
        ("smp_workloads", s.smp_workloads),
        ("uml_flavor", s.flavor), ("uml_fragments", frags),
        ("fio_version", output(["fio", "--version"])),
        ("gcc_version", output(["gcc", "-dumpfullversion"])), ("qemu_version", qemu),
        ("qemu_patched", patched_qemu(s)),
        ("pin_device", s.pin_device), ("pin_guest", s.pin_guest),
        ("qemu_pin_device", s.qemu_pin_device), ("qemu_pin_guest", s.qemu_pin_guest),
        ("pin_probe", s.pin_probe), ("workloads", s.workloads), ("size", s.size), ("qemu_size", s.qemu_size), ("smp_size", s.smp_size),
        ("share_dir", share_fs(s.share_dir)),
        ("repeats", s.repeats), ("order", s.order), ("seed", s.seed), ("mem_mb", s.mem), ("build", s.build), ("make_dir", s.make_dir),
        ("tarball", tarball_line(ctx["tarball"])),
    ) + device_env() + (
        ("command", s.command()),
        ("wall_s", str(int(time.time() - ctx["t_start"]))),
    )
    with open(os.path.join(ctx["raw"], "env"), "w") as f:
        f.writelines("%s=%s\n" % kv for kv in env)


def main(argv):
    if len(argv) > 1:
        sys.stdout.write(usage())
        return 0 if argv[1] in ("-h", "--help") else 2
    try:
        s = Settings(os.environ)
    except ValueError as e:  # UnknownConfig too
        log(e)
        return 2
    ctx = {"t_start": time.time(), "linux": "", "linux73": ""}
    try:
        # 0. What a fresh machine lacks (kmod for depmod, fio, busybox, ...).
        install_deps()
        # 1. Helpers: vfsbench and the build workload's tarball.
        ctx["vfsbench"] = vfsbench()
        ctx["hostcost"] = hostcost()
        ctx["tarball"] = gen_tarball(s.size) if s.build == "gen" else build_tarball()
        # 2. The UML kernels (built on first use; the runs would each wait for them).
        if s.configs.split():
            log("UML kernel (%s flavor; built on first use, about 10 minutes)" % s.flavor)
            ctx["linux"] = build_uml(s.flavor)
        if s.smp_configs.split():
            log("SMP UML 7.3 kernel (%s flavor; built on first use, about 15 minutes)" % s.flavor)
            ctx["linux73"] = build_uml(s.flavor, "7.3")
        # 3. The boots, 4. the environment, then the JSON and the report.
        ctx["raw"] = os.path.join(BUILD, "runs", "%s-%s" % (
            s.name, utcnow().strftime("%H%M%S")))
        os.makedirs(ctx["raw"], exist_ok=True)
        run_hostcost(s, ctx, "start")
        run_boots(s, ctx)
        run_paired(s, ctx)
        run_interleave(s, ctx)
        run_breakdown(s, ctx)
        run_hostcost(s, ctx, "end")
        environment(s, ctx)
    except Fail as e:
        log(e)
        return 1
    os.makedirs(s.outdir, exist_ok=True)
    jpath = os.path.join(s.outdir, s.name + ".json")
    try:
        data = collect(ctx["raw"])
    except (OSError, ValueError) as e:
        log("collect failed: %s" % e)
        return 1
    with open(jpath, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    report.render(jpath, os.path.join(s.outdir, s.name + ".md"), os.path.join(s.outdir, s.name), s.notes)
    log("done in %s: %s" % (hms(int(time.time() - ctx["t_start"])), os.path.join(s.outdir, s.name + ".md")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
