# SPDX-License-Identifier: GPL-2.0
"""The benchmark configurations: one place for what each is, where it boots,
which tests/vm/run options make it, which driver the guest's share runs on,
and whether the sync path runs in it (inline completions).

A group is where the configuration boots: "uml" (UML 6.12, one vCPU),
"smp" (SMP UML 7.3, --kernel 7.3 --cpus N) and "qemu" (QEMU/TCG, 6.12 cloud
kernel, 2 vCPUs: the host's QEMU, q-*, and the project's, qs-*; libkrun's
kernels on the project's QEMU, k-*). bench.py
turns a configuration into tests/vm/run options, report.py groups, colours and checks runs by it, abuml.py checks each
configuration ran on its driver.
"""
import collections

Config = collections.namedtuple(
    "Config", "name group meaning run_args guest_driver sync color layout", defaults=("split",))
# run_args: the tests/vm/run options that choose driver and device;
# guest_driver: the file system type of the mounted share in the guest
# (tmpfs, virtiofs, virtio_fs_sync); sync: the sync path completes requests
# inline there; color: its bars in the report's charts; layout: where the
# device's threads run (LAYOUTS).

# The pinning layouts of UML boots (bench.py uml_args makes them).
LAYOUTS = {
    "split": "the whole device (every thread) on BENCH_PIN_DEVICE, the guest on BENCH_PIN_GUEST: "
             "a separate device process on another core, every sync kick a cross-core hand-off "
             "to the device's handler thread and back (today's layout)",
    "colocated": "the whole device and the guest on BENCH_PIN_GUEST: every hand-off between "
                 "them stays on one core (no cross-core wake-up), for every driver alike",
    "floating": "nothing pinned: the host's scheduler places the device's threads and the "
                "guest",
    "faithful": "the guest on BENCH_PIN_GUEST; the device started unpinned, its sync "
                "handler threads (and the control thread) pinned to the guest's first CPU "
                "(--pin-sync) and its request-queue workers to BENCH_PIN_DEVICE (--pin-workers), "
                "its other threads (the other queues' kick handlers) left on every CPU: "
                "the real design, where the vCPU thread itself runs the sync request on its own "
                "core while interrupt-driven work goes to a worker on another core",
}

DEFAULT_COLOR = "#17becf"

_UML = (
    ("tmpfs", "guest tmpfs, no virtio-fs (the ceiling)",
     ("--driver", "none"), "tmpfs", False, "#7f7f7f"),
    ("intree", "in-tree virtiofs on the reference device",
     ("--driver", "intree"), "virtiofs", False, "#1f77b4"),
    ("intree-again", "in-tree virtiofs on the reference device again, booted as a configuration "
     "of its own: the A/A control (intree-again vs intree is what the run's noise alone makes "
     "of a ratio)",
     ("--driver", "intree"), "virtiofs", False, "#aec7e8"),
    ("ours-async", "virtio_fs_sync with sync=0 (the interrupt-driven path)",
     ("--driver", "ours", "--sync", "off"), "virtio_fs_sync", False, "#ff7f0e"),
    ("ours-sync", "virtio_fs_sync with the sync queues the device offers",
     ("--driver", "ours", "--sync", "on"), "virtio_fs_sync", True, "#2ca02c"),
    ("ours-sync-inband", "ours-sync with the stock in-band kicks (device --no-kick-channel)",
     ("--driver", "ours", "--sync", "on", "--dev-opts", "--no-kick-channel"),
     "virtio_fs_sync", True, DEFAULT_COLOR),
    ("ours-sync-faithful", "ours-sync with faithful pinning: the device's sync handler on the "
     "guest's CPU, its workers on the device's (the vCPU runs the sync request itself)",
     ("--driver", "ours", "--sync", "on"), "virtio_fs_sync", True, "#d62728", "faithful"),
)

_QEMU = (
    ("q-tmpfs", "guest tmpfs", ("--driver", "none"), "tmpfs", "#7f7f7f"),
    ("q-intree", "in-tree virtiofs on the reference device",
     ("--driver", "intree"), "virtiofs", "#1f77b4"),
    ("q-ours", "virtio_fs_sync on the host's QEMU (it does not pass VIRTIO_FS_F_SYNC: the "
     "interrupt-driven path)",
     ("--driver", "ours", "--sync", "on", "--qemu", "stock"), "virtio_fs_sync", "#ff7f0e"),
    ("q-intree-virtiofsd", "in-tree virtiofs on virtiofsd",
     ("--driver", "intree", "--device", "virtiofsd"), "virtiofs", "#9467bd"),
    ("q-ours-virtiofsd", "virtio_fs_sync on virtiofsd",
     ("--driver", "ours", "--device", "virtiofsd"), "virtio_fs_sync", "#8c564b"),
)


# libkrun's guest kernels, booted as libkrun boots them (tests/vm/run
# --kernel libkrunfw*: microvm, libkrun's command line, the root on tag
# /dev/root from a reference device of its own) on the project's QEMU:
# Debian's libkrunfw5 with in-tree virtiofs against make libkrunfw's kernel
# with the driver built in and a sync queue per vCPU; the same device, root
# and QEMU on both sides.
_KRUN = (
    ("k-stock", "Debian's libkrunfw5 kernel, in-tree virtiofs, libkrun's boot on microvm, "
     "the project's QEMU", ("--kernel", "libkrunfw-stock", "--machine", "microvm",
                            "--qemu", "patched", "--driver", "intree"),
     "virtiofs", False, "#1f77b4"),
    ("k-sync", "make libkrunfw's kernel, virtio_fs_sync built in with a sync queue per vCPU, "
     "libkrun's boot on microvm, the project's QEMU", ("--kernel", "libkrunfw", "--machine",
                                                       "microvm", "--qemu", "patched",
                                                       "--driver", "ours", "--sync", "on"),
     "virtio_fs_sync", True, "#2ca02c"),
)

# The project's QEMU's machines: (machine, name suffix, transport).
QEMU_MACHINES = (("pc", "", "virtio-pci"), ("microvm", "-microvm", "virtio-mmio"))


def _qemu_sync():
    """The project's QEMU (--qemu patched, scripts/build-qemu.sh) on each
    machine: in-tree, ours-async and ours-sync on the same build, so a ratio
    among them changes the driver or sync= alone (the sync configuration's
    device gets its sync queues: num-sync-queues). "-microvm": virtio-mmio."""
    out = []
    for machine, sfx, where in QEMU_MACHINES:
        on = ("--qemu", "patched", "--machine", machine)
        out += [
            ("qs-intree" + sfx, "in-tree virtiofs on the reference device, the project's QEMU, "
             + where, ("--driver", "intree") + on, "virtiofs", False, "#1f77b4"),
            ("qs-ours-async" + sfx, "virtio_fs_sync with sync=0, the project's QEMU, " + where,
             ("--driver", "ours", "--sync", "off") + on, "virtio_fs_sync", False, "#ff7f0e"),
            ("qs-ours-sync" + sfx, "virtio_fs_sync with a sync queue per vCPU, the project's "
             "QEMU (a sync queue's notify handled in its vCPU's thread), " + where,
             ("--driver", "ours", "--sync", "on") + on, "virtio_fs_sync", True, "#2ca02c"),
        ]
    return tuple(out)


# The drivers that get every placement (the placement matrix): NAME-colocated
# and NAME-floating beside NAME, the split layout.
MATRIX = ("intree", "ours-async", "ours-sync")
MATRIX_LAYOUTS = ("split", "colocated", "floating")


def layout_name(name, layout):
    """The configuration of driver configuration NAME in LAYOUT."""
    return name if layout == "split" else "%s-%s" % (name, layout)


def _matrix():
    """The UML rows of the placement matrix's colocated and floating layouts."""
    out = []
    for name, meaning, args, drv, sync, color, *_ in _UML:
        if name not in MATRIX:
            continue
        for lay in MATRIX_LAYOUTS[1:]:
            out.append((layout_name(name, lay), "%s, %s layout" % (meaning, lay), args, drv,
                        sync, color, lay))
    return tuple(out)


def _all():
    out = []
    for name, meaning, args, drv, sync, color, *layout in _UML + _matrix():
        out.append(Config(name, "uml", meaning, args, drv, sync, color, *layout))
    for name, meaning, args, drv, sync, _, *layout in _UML:
        # SMP boots leave the device unpinned; smp-ours-sync-faithful pins
        # sync queue i's handler to vCPU i's CPU (bench.smp_faithful_pins)
        out.append(Config("smp-" + name, "smp", meaning + ", on SMP UML 7.3 (--kernel 7.3 --cpus N)",
                          args, drv, sync, DEFAULT_COLOR, *layout))
    for name, meaning, args, drv, color in _QEMU:
        out.append(Config(name, "qemu", meaning, args, drv, False, color))
    for name, meaning, args, drv, sync, color in _qemu_sync() + _KRUN:
        out.append(Config(name, "qemu", meaning, args, drv, sync, color))
    return collections.OrderedDict((c.name, c) for c in out)


CONFIGS = _all()

# What bench/ab-in-guest.sh's setup() can swap to inside one boot (the
# driver module loaded or the share mounted again; device options are the
# boot's, so the faithful layout is not among them).
IN_GUEST = ("tmpfs", "intree", "intree-again", "ours-async", "ours-sync")
# What make bench runs by default (and bench/ab-uml.sh, "in-guest"; the
# paired boot, "paired"), and the ratios the report gives (a vs b), per group.
DEFAULTS = {
    "uml": "tmpfs intree ours-async ours-sync ours-sync-faithful intree-colocated "
           "ours-async-colocated ours-sync-colocated intree-floating ours-async-floating "
           "ours-sync-floating",
    "qemu": " ".join(("q-intree", "q-ours", "q-intree-virtiofsd") + tuple(
        n + sfx for _, sfx, _ in QEMU_MACHINES for n in ("qs-intree", "qs-ours-async", "qs-ours-sync"))
        + tuple(k[0] for k in _KRUN)),
    "smp": "smp-intree smp-ours-sync smp-ours-sync-faithful",
    "in-guest": "tmpfs intree ours-async ours-sync",
    "paired": "intree intree-again ours-async ours-sync",
}
RATIOS = {
    "uml": (("ours-sync", "intree"), ("ours-sync", "ours-async"), ("ours-async", "intree"),
            ("ours-sync-faithful", "intree"), ("ours-sync-faithful", "ours-sync"),
            ("intree-again", "intree"),
            # like for like in the other layouts of the placement matrix
            ("ours-sync-colocated", "intree-colocated"),
            ("ours-async-colocated", "intree-colocated"),
            ("ours-sync-floating", "intree-floating"),
            ("ours-async-floating", "intree-floating")),
    "qemu": (("q-ours", "q-intree"), ("q-intree", "q-intree-virtiofsd")) + tuple(
        (a + sfx, b + sfx) for _, sfx, _ in QEMU_MACHINES
        for a, b in (("qs-ours-sync", "qs-intree"), ("qs-ours-sync", "qs-ours-async"),
                     ("qs-ours-async", "qs-intree"))) + (("k-sync", "k-stock"),),
    "smp": (("smp-ours-sync", "smp-intree"), ("smp-ours-sync", "smp-ours-sync-inband"),
            ("smp-ours-sync-faithful", "smp-intree")),
}
# The pinning probes compare these two.
PROBED = ("intree", "ours-sync")


class UnknownConfig(ValueError):
    pass


def get(name, group=None):
    """The configuration NAME (of GROUP, if given)."""
    c = CONFIGS.get(name)
    if c is None or (group and c.group != group):
        raise UnknownConfig("unknown configuration %s%s" % (name, " (%s)" % group if group else ""))
    return c


def names(group):
    return [c.name for c in CONFIGS.values() if c.group == group]


def color(name):
    c = CONFIGS.get(name)
    return c.color if c else DEFAULT_COLOR


def sync_names():
    """The configurations in which the sync path runs, default ones first."""
    default = [n for g in ("uml", "smp") for n in DEFAULTS[g].split() if CONFIGS[n].sync]
    return default


def ratios(group, present):
    """The ratio pairs of GROUP whose both sides are in PRESENT."""
    return [(a, b) for a, b in RATIOS[group] if a in present and b in present]
