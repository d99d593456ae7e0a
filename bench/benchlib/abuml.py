# SPDX-License-Identifier: GPL-2.0
"""bench/ab-uml.sh: ab-in-guest.sh run in a User-Mode Linux guest and
checked (the `make check` test uml:ab-in-guest).

  bench/ab-uml.sh [--results DIR] [--size quick|reduced|full]
      [--repeats N] [--configs "tmpfs intree ours-async ours-sync"]
      [--workloads LIST] [--flavor debug|bench] [--pin-device CPUS]
      [--pin-guest CPUS] [--order rotate|balanced|fixed] [--tarball FILE]
      [--make-dir REL] [--verdict] [-- TESTS/VM/RUN OPTIONS...]

UML has virtio_fs_sync built in, its sync= parameter fixed at boot. To swap
drivers the way a libkrun guest would, this builds the driver as a loadable
module for the UML kernel under another module name, virtio_fs_sync_ab
(the built-in driver holds /sys/module/virtio_fs_sync, so a module of that
name is refused), with its init function renamed (the boot's
initcall_blacklist=virtio_fs_sync_init that leaves the built-in driver out
would refuse the module's too) and without its KUnit exports (the kernel
has them), boots UML with the built-in driver left out and the share
mounted by in-tree virtiofs (--driver intree), unmounts it and runs
ab-in-guest.sh --ko --reprobe on the device (virtio_uml keeps the features
the last driver negotiated: without a fresh probe of the transport, in-tree
virtiofs at boot would hide VIRTIO_FS_F_SYNC from ours-sync), which
therefore runs with --persistent (a new frontend per probe; tests/vm/run
stops it 2 s after the guest ends). Then it checks, from ab-in-guest.sh's
files and the run's device counters:
  - ab-in-guest.sh and the guest ended well (no kernel splat either);
  - every configuration and repeat has result lines, every phase rc 0;
  - each one ran on its driver (benchlib/configs.py: tmpfs, virtiofs, or
    virtio_fs_sync with sync queues in use where the sync path runs, its
    sysfs "sync");
  - the driver's counters: requests were submitted in the virtio_fs_sync
    configurations, reaped inline (inline > 0) where the sync path runs only;
  - the device's sync queues completed inline exactly as many requests as
    the driver reaped inline there (the whole boot's counters);
  - tests/vm/run's records: the device and every guest process ran on the
    CPUs asked for (default: both on CPU 1, co-located; on 0 on a 1-CPU
    host), and the device's and the guest's CPU times are there,
    the device's above zero.
Files: DIR/ (tests/vm/run --results) and DIR/ab/ (ab-in-guest.sh --out);
default DIR is build/ab-uml/results.
"""
import argparse
import fcntl
import glob
import os
import re
import shutil
import subprocess
import sys

from benchlib import configs, counters, verdict
from benchlib.collect import ab_rounds, read
from benchlib.tools import (BENCH, CACHE, REPO, Fail, build_uml, git_describe, logger,
                           merge_dev_opts, vfsbench, vm_run)

log = logger("ab-uml", sys.stdout)

KBUILD = """# The driver's Kbuild, but one module named virtio_fs_sync_ab (the objects
# keep KBUILD_MODNAME virtio_fs_sync: the same driver and sysfs names).
include $(src)/Kbuild.driver
obj-m := virtio_fs_sync_ab.o
virtio_fs_sync_ab-y := $(virtio_fs_sync-y)
obj-y :=
ccflags-y += -include $(src)/no-kunit-exports.h
"""
NO_KUNIT_EXPORTS = """/* The built-in driver exports these already (CONFIG_KUNIT=y). */
#include <kunit/visibility.h>
#undef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
"""
# The guest side: unmount the share, run the A/B, mount the share again for
# guest-init (ab-in-guest.sh hands the device back to virtiofs).
GUEST = """cd / && umount /mnt/share || exit 1
TMPDIR=/mnt sh "$1" --tag share --ko "$2" --reprobe --out "$3" --size "$4" --repeats "$5" --configs "$6" --workloads "$7" --order "$8" ${9:+--tarball "$9"} ${10:+--make-dir "${10}"}
rc=$?
mount -t virtiofs share /mnt/share || { echo "cannot mount the share again"; rc=1; }
exit $rc"""


def parse(argv):
    head, rest = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    ap = argparse.ArgumentParser(prog="bench/ab-uml.sh", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(REPO, "build", "ab-uml", "results"))
    ap.add_argument("--size", default="quick")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--configs", default=configs.DEFAULTS["in-guest"])
    ap.add_argument("--workloads", default="floor,unlink,smallfile")
    ap.add_argument("--flavor", default="debug")
    ap.add_argument("--pin-guest", default="1" if (os.cpu_count() or 1) >= 2 else "0")
    ap.add_argument("--pin-device", default=None,
                    help="default: the guest's CPUs (co-located, the like-for-like layout)")
    ap.add_argument("--order", default="rotate", choices=("rotate", "balanced", "fixed"))
    ap.add_argument("--tarball", default="")
    ap.add_argument("--make-dir", default="")
    ap.add_argument("--verdict", action="store_true",
                    help="end with the A/B verdict of the rounds (bench/ab-verdict.sh)")
    a = ap.parse_args(head)
    a.run_opts = rest
    a.pin_device = a.pin_device or a.pin_guest
    for c in a.configs.split():
        configs.get(c, "uml")
    return a


def module_tree(mdir):
    """The driver's sources in MDIR, set up to build virtio_fs_sync_ab.ko."""
    shutil.rmtree(mdir, ignore_errors=True)
    os.makedirs(mdir)
    for f in glob.glob(os.path.join(REPO, "*.c")) + glob.glob(os.path.join(REPO, "*.h")):
        shutil.copy(f, mdir)
    shutil.copy(os.path.join(REPO, "Kbuild"), os.path.join(mdir, "Kbuild.driver"))
    with open(os.path.join(mdir, "VERSION"), "w") as f:
        f.write((git_describe() or "unknown") + "\n")
    with open(os.path.join(mdir, "Kbuild"), "w") as f:
        f.write(KBUILD)
    with open(os.path.join(mdir, "no-kunit-exports.h"), "w") as f:
        f.write(NO_KUNIT_EXPORTS)
    # The boot blacklists virtio_fs_sync_init, which would refuse this module
    # too (-EPERM): in the copy, the init function takes another name.
    renamed = False
    for fn in glob.glob(os.path.join(mdir, "*.c")):
        text = read(fn, "")
        if re.search(r"^module_init\(virtio_fs_sync_init\);", text, re.M):
            with open(fn, "w") as f:
                f.write(re.sub(r"\bvirtio_fs_sync_init\b", "virtio_fs_sync_ab_init", text))
            renamed = True
    if not renamed:
        raise Fail("no module_init(virtio_fs_sync_init) to rename in the driver's .c files")


def build_module(flavor):
    """virtio_fs_sync_ab.ko, built against the cached UML tree."""
    kout = os.path.dirname(build_uml(flavor))
    ksrc = os.path.realpath(os.path.join(kout, "source"))
    mdir = os.path.join(REPO, "build", "ab-uml", "module-" + flavor)
    module_tree(mdir)
    # Under the UML build's lock: modules_prepare writes into the cached tree.
    # No Module.symvers there (the kernel is built with `make linux`), so
    # modpost cannot resolve the kernel's symbols: warnings, not errors.
    blog = os.path.join(mdir, "build.log")
    with open(os.path.join(CACHE, "uml", ".lock"), "a") as lock, open(blog, "w") as out:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ok = True
        if not os.path.exists(os.path.join(kout, "scripts", "module.lds")):
            ok = subprocess.run(["make", "-s", "-C", kout, "ARCH=um", "modules_prepare"],
                                stdout=out, stderr=subprocess.STDOUT, check=False).returncode == 0
        ok = ok and subprocess.run(["make", "-C", kout, "ARCH=um", "M=" + mdir,
                                    "FUSE_INC=%s/fs/fuse" % ksrc, "KBUILD_MODPOST_WARN=1", "modules"],
                                   stdout=out, stderr=subprocess.STDOUT, check=False).returncode == 0
    if not ok:
        print("\n".join((read(blog, "") or "").splitlines()[-30:]))
        raise Fail("cannot build the module")
    ko = os.path.join(mdir, "virtio_fs_sync_ab.ko")
    if not os.path.isfile(ko):
        raise Fail("no %s" % ko)
    log("module: %s" % ko)
    return ko


class Checks:
    def __init__(self):
        self.fail = 0

    def bad(self, msg):
        print("FAIL: %s" % msg)
        self.fail = 1

    def want(self, cond, msg):
        if not cond:
            self.bad(msg)


def check_configs(a, ab, ck):
    """Every configuration and repeat: result lines, its driver, its counters;
    returns the inline count of the sync configurations."""
    sync_inline = 0
    fmt = "%-10s %-3s %-6s %-16s %-5s %-9s %-7s"
    print(fmt % ("config", "rep", "phases", "driver", "sync", "submitted", "inline"))
    for r in range(1, a.repeats + 1):
        for name in a.configs.split():
            c = configs.get(name, "uml")
            f = os.path.join(ab, "%s-r%d" % (name, r))
            out = (read(f + ".out", "") or "").splitlines()
            phases = sum(1 for ln in out if ln.startswith('{"phase"') and '"phase":"env"' not in ln)
            setup = counters.kv_rows(read(f + ".setup", "") or "")
            setup = setup[-1] if setup else {}
            driver, insync = setup.get("driver"), setup.get("sync_in_use")
            stats = counters.driver_rows(read(f + ".stats", "") or "")
            submitted, inline = counters.total(stats, "submitted"), counters.total(stats, "inline")
            print(fmt % (name, r, phases, driver or "-", "-" if insync is None else insync,
                         submitted, inline))
            ck.want(phases > 0, "%s r%d: no result lines" % (name, r))
            failed = [ln[:200] for ln in out if re.search(r'"rc":[1-9]', ln)]
            ck.want(not failed, "%s r%d: a phase failed: %s" % (name, r, "\n".join(failed)))
            ck.want(driver == c.guest_driver, "%s r%d: ran on '%s', not %s"
                    % (name, r, driver or "?", c.guest_driver))
            if c.sync:
                ck.want(insync == 1, "%s r%d: sync queues not in use" % (name, r))
                ck.want(inline > 0, "%s r%d: no request reaped inline" % (name, r))
                sync_inline += inline
                continue
            if c.guest_driver == "virtio_fs_sync":
                ck.want(insync == 0, "%s r%d: sync queues in use" % (name, r))
                ck.want(submitted > 0, "%s r%d: no driver counters" % (name, r))
            ck.want(inline == 0, "%s r%d: %d requests reaped inline" % (name, r, inline))
    return sync_inline


def check_records(a, results, ck):
    """tests/vm/run's pinning and CPU time records."""
    pin_text = read(os.path.join(results, "pinning"), "") or ""
    pin = counters.pairs(pin_text)
    print("pinning: %s" % pin_text.replace("\n", " "))
    ck.want(pin.get("pin_check") == "ok", "pin_check is '%s', not ok" % pin.get("pin_check", ""))
    dev = pin.get("device_cpus_allowed", "")
    ck.want(counters.cpu_list(dev) == counters.cpu_list(a.pin_device),
            "the device ran on CPUs '%s', not '%s'" % (dev, a.pin_device))
    glists = pin.get("guest_cpus_allowed", "").split()
    ck.want(glists, "no guest CPU list recorded")
    for lst in glists:
        ck.want(counters.cpu_list(lst) == counters.cpu_list(a.pin_guest),
                "a guest process ran on CPUs '%s', not '%s'" % (lst, a.pin_guest))
    ct_text = read(os.path.join(results, "cpu-times"), "") or ""
    print("cpu-times: %s" % ct_text.replace("\n", ";"))
    for n in ("device", "guest"):
        ck.want(re.search(r"^%s pid=[0-9]+ user_s=[0-9.]+ sys_s=[0-9.]+ " % n, ct_text, re.M),
                "no CPU time of the %s in cpu-times" % n)
    ck.want((counters.cpu_seconds(counters.cpu_times(ct_text), "device", "total") or 0) > 0,
            "the device's CPU time is 0")


def main(argv):
    sys.stdout.reconfigure(line_buffering=True)
    try:
        a = parse(argv[1:])
    except configs.UnknownConfig as e:
        log(e)
        return 2
    try:
        ko = build_module(a.flavor)
        vfsbench()  # for guest-bench.sh (it would compile it in the guest otherwise)
    except Fail as e:
        log(e)
        return 1
    shutil.rmtree(a.results, ignore_errors=True)
    ab = os.path.join(a.results, "ab")
    os.makedirs(ab)
    rc = vm_run(merge_dev_opts(["--substrate", "uml", "--flavor", a.flavor, "--driver", "intree",
                                "--dev-opts", "--persistent", "--pin-device", a.pin_device,
                                "--pin-guest", a.pin_guest, "--results", a.results] + a.run_opts),
                ["sh", "-c", GUEST, "sh", os.path.join(BENCH, "ab-in-guest.sh"), ko, ab, a.size,
                 str(a.repeats), a.configs, a.workloads, a.order, a.tarball, a.make_dir])
    log("tests/vm/run exit status %d" % rc)
    ck = Checks()
    ck.want(rc == 0, "the guest run ended with status %d" % rc)
    sync_inline = check_configs(a, ab, ck)
    dev = counters.kv_rows(read(os.path.join(a.results, "dev-stats"), "") or "")
    dev_inline = counters.total(dev, "inline", lambda q: q.get("type") == "sync")
    dev_late = counters.total(dev, "late", lambda q: q.get("type") == "sync")
    print("device: sync queues completed %d requests inline and %d late; the driver reaped %d"
          " inline in the sync configurations" % (dev_inline, dev_late, sync_inline))
    # a late completion (the device's budget) may land before the kicker's reap
    ck.want(dev_inline <= sync_inline <= dev_inline + dev_late,
            "the driver's inline count in the sync configurations (%d) is not between the "
            "device's inline count (%d) and that plus its late ones (%d)"
            % (sync_inline, dev_inline, dev_late))
    check_records(a, a.results, ck)
    if a.verdict:
        print("\n".join(verdict.lines(ab_rounds(ab))))
    if not ck.fail:
        print("ab-uml: ok")
    return ck.fail


if __name__ == "__main__":
    sys.exit(main(sys.argv))
