# SPDX-License-Identifier: GPL-2.0
"""tests/vm/run's command line: the usage text, the options, their checks
and defaults. Parsed as the bash version did: options up to `--`, each
value the next argument; share options go to the share being described."""
import re
import sys

from harness import cpus as cpulist

USAGE = """\
usage: tests/vm/run [options] [--share DIR [share options]]... -- CMD [ARGS...]

  --substrate uml|qemu   guest kind (default uml)
  --kernel 6.12|6.1|7.3|6.12-rt|6.1-rt|libkrunfw|libkrunfw-stock
                         QEMU: guest kernel, Debian cloud-amd64 (-rt: Debian's
                         PREEMPT_RT flavour, rt-amd64), or libkrun's: built by
                         `make libkrunfw` with the driver in, or Debian's
                         libkrunfw5 as libkrun users have it (in-tree
                         virtiofs only: --driver intree); booted as libkrun
                         boots it (--machine microvm, its command line, no
                         initrd, the root on virtio-fs tag /dev/root from a
                         reference device, console hvc0); UML: the test
                         kernel's series, 6.12 (uniprocessor) or 7.3 (SMP,
                         booted with seccomp=on) (default 6.12)
  --sync on|off          virtio_fs_sync's sync= parameter, for every device
                         (default on)
  --cpus N               vCPUs (default 2; UML 6.12 is uniprocessor, UML 7.3
                         takes 1 to 8)
  --machine pc|microvm   QEMU machine: virtio-pci or virtio-mmio (default pc)
  --qemu stock|patched   QEMU: the host's qemu-system-x86_64, or the one with
                         the project's series (scripts/build-qemu.sh, built
                         once into the cache), whose vhost-user-fs runs sync
                         queues; default patched when --sync is on and a
                         share is ours on the reference device, else stock
  --accel kvm|tcg        QEMU: the accelerator (default tcg); kvm runs
                         QEMU with -accel kvm -cpu host (the host's
                         /dev/kvm); --tcg-thread is refused with kvm; UML
                         refuses --accel kvm
  --tcg-thread single|multi
                         QEMU under TCG: TCG threads for the vCPUs (default
                         single; multi-threaded TCG breaks Debian's
                         kernels' code patching at random here)
  --mem MB               guest memory (default 512 for UML, 1024 for QEMU)
  --share DIR            host directory to share (default, or DIR empty: a
                         fresh temp dir); repeat it for more devices, see below
  --flavor debug|bench   UML kernel build (default debug)
  --pin-device CPUS      taskset CPU list for the shares' devices (the
                         reference device or virtiofsd)
  --pin-guest CPUS       taskset CPU list for the guest (the UML process tree,
                         or QEMU and its threads)
  --pin CPUS             both of the above (each of them wins where given)
  --pin-vcpus CPUS       UML 7.3: vCPU i's host thread on the i-th CPU of the
                         list (round robin), one CPU each, set once the boot
                         has started them; the rest of the guest keeps
                         --pin-guest's CPUs
  --timeout S            seconds before the guest counts as hung (default 600)
  --results DIR          keep the run's files there (out, status, dmesg,
                         driver-stats, dev-stats, console, pinning, cpu-times)
  --append '...'         extra kernel command line
  --module-param k=v     extra virtio_fs_sync parameter (repeatable)
  --quiet                do not print CMD's output (it stays in --results)

Share options, one device each:
  --driver ours|intree|none
                         who mounts the share: virtio_fs_sync, in-tree
                         virtiofs, or nobody (no device: guest tmpfs at the
                         mount point; the ceiling in benchmarks) (default ours)
  --device ref|virtiofsd the share's device: the reference device
                         (vhost-user-fs) or QEMU's virtiofsd (QEMU only)
  --dev-opts '...'       extra options for the device
  --mount-opts a,b       extra mount options for the share
  --queues R             request queues (default: vCPUs)
  --sync-queues S        sync queues the reference device offers (default: vCPUs)
  --qemu-props a=b,c=d   patched QEMU: extra properties of the share's
                         vhost-user-fs device (e.g. sync-timeout-ms=200)
  --queue-size N         QEMU: the share's virtqueue size, a power of 2
                         (default QEMU's, 128); UML's is fixed at 256
  --tag TAG              the mount tag of a share after the first (default
                         shareN); it is mounted at /mnt/TAG
  --no-mount             attach the device (driver bound) but leave
                         /mnt/TAG an empty directory: CMD mounts it itself
                         (mount -t virtiofs TAG /mnt/TAG; virtiofs_sync for
                         virtio_fs_sync when in-tree virtiofs holds the name)

The first share has the tag "share" and is mounted at /mnt/share, where CMD
starts; share options anywhere before the second --share are its own.
Every further --share DIR adds a device: the share options after it, up to
the next --share, are that device's. The Nth further share has the tag
shareN (share1, share2, ...) unless --tag says otherwise and is mounted at
/mnt/TAG; its --driver and --device default to the first share's, its other
options to their defaults. --sync and --module-param are the module's: they
apply to every device virtio_fs_sync drives. With both ours and intree
among the shares, every device is first bound to in-tree virtiofs and the
guest hands those of ours over through sysfs (found by tag; QEMU 6.1 has no
tags in sysfs and needs --machine pc: the first share sits in PCI slot 0x10,
shareN in 0x10+N). In UML the transport (virtio-uml.N) of each of ours is
probed again first, as virtio_uml offers a device only the features its
last driver negotiated; those reference devices run with --persistent.

Exit status: CMD's, or 124 on a hang, 125 on a kernel splat in dmesg,
126 when the guest could not be set up (a share did not mount, a pinning
did not take, ...).

The run directory also gets:
  qemu-cmdline  QEMU's command line as it was started, its words quoted
             for the shell (Python's shlex.join) so that it can be pasted;
             its paths name the run's own directory, which is removed at
             the end (--results gets a copy)
  device-cmdline  the same for the share's device (the reference device
             or virtiofsd); hostroot-cmdline for the host tree's virtiofsd
             (QEMU), device-cmdline.root for the root's reference device of
             --kernel libkrunfw and libkrunfw-stock
  dev-stats.at-timeout  after a hang (124), each reference device's
             counters taken while the guest was still up, with its rings'
             indices per queue (avail, popped, used: avail > popped, chains
             it never saw; popped > used, chains it holds; all equal, it
             answered everything it was given)
  dev-stats.at-hang  the same, taken when the console first reported a
             hung writer of tests/suite/stress.c (the guest still up)
  pinning    key=value lines: the CPU lists asked for (device_pin, guest_pin;
             empty: not pinned) and the ones read back from
             /proc/PID/status Cpus_allowed_list of the device process
             (device_cpus_allowed) and of every process of the guest's tree a
             few seconds into the boot (guest_cpus_allowed, distinct lists;
             guest_processes); pin_check=ok|mismatch|unpinned|unverified
             (the guest ended before it was read). A list that does not
             match the one asked for fails the run (126).
  cpu-times  one line per host process tree: device, guest and, for QEMU,
             hostroot (the host tree's virtiofsd): pid, user_s, sys_s,
             maxrss_kb, status, from wait4() of the process (its own CPU time
             and that of the children it reaped). The guest's is the host's
             view: UML's process tree or QEMU with all its threads.
  shares     one line per share: TAG DRIVER MOUNT(1|0) PCI-SLOT MOUNT-OPTS
             (what guest-init reads; - for none)
With several shares the first keeps the names above (driver-stats,
dev-stats, device.log, device-cmdline, share.sock, the device lines of
pinning and cpu-times); a later share's are the same names with .TAG
appended (driver-stats.share1, dev-stats.share1, device.log.share1,
device-cmdline.share1, share.sock.share1, device_pid.share1=..., a
"device.share1 pid=..." line). driver-stats holds
the counters of every virtio_fs_sync device but the later shares (so in
QEMU with ours also those of the host tree's device, tag hostroot), read
after the shares' unmount; a share whose device was unbound has none.
"""


class UsageError(Exception):
    """A bad command line: tests/vm/run says why and exits 2."""

    def __init__(self, message, show_usage=False):
        super().__init__(message)
        self.show_usage = show_usage


def bad(message):
    raise UsageError(message)


class Share:
    """One device and its mount: the share options of one --share."""

    def __init__(self, index, driver="", device="", tag=None):
        self.index = index
        self.dir = ""
        self.driver = driver  # "" until validate(): the first share's
        self.device = device
        self.dev_opts = ""
        self.mount_opts = ""
        self.queues = ""
        self.sync_queues = ""
        self.queue_size = ""
        self.qemu_props = ""
        self.tag = tag if tag is not None else "share%d" % index
        self.mount = True

    @property
    def suffix(self):
        """What this share's file names get appended: nothing for the first
        share (the names of single-device runs), .TAG for the others."""
        return "" if self.index == 0 else "." + self.tag


class Options:
    """The whole command line, with the defaults filled in by validate()."""

    def __init__(self):
        self.substrate = "uml"
        self.kernel = "6.12"
        self.sync = "on"
        self.cpus = ""
        self.machine = "pc"
        self.accel = ""  # "" until validate(): tcg for QEMU
        self.tcg_thread = ""
        self.qemu = ""
        self.mem = ""
        self.flavor = "debug"
        self.pin = ""
        self.pin_device = None  # None: not given, --pin stands for it
        self.pin_guest = None
        self.pin_vcpus = ""
        self.timeout = "600"
        self.results = ""
        self.append = ""
        self.module_params = []
        self.quiet = False
        self.shares = [Share(0, driver="ours", device="ref", tag="share")]
        self.command = []
        # set by validate()
        self.use_ours = False
        self.use_intree = False
        self.timeout_s = None  # None: no time limit (--timeout 0)


# option -> attribute of Options taking the next argument
GLOBAL_VALUE_OPTIONS = {
    "--substrate": "substrate", "--kernel": "kernel", "--sync": "sync", "--cpus": "cpus",
    "--machine": "machine", "--qemu": "qemu", "--tcg-thread": "tcg_thread", "--mem": "mem", "--flavor": "flavor",
    "--accel": "accel",
    "--pin": "pin", "--pin-device": "pin_device", "--pin-guest": "pin_guest",
    "--pin-vcpus": "pin_vcpus",
    "--timeout": "timeout", "--results": "results", "--append": "append",
}
# share option -> attribute of Share taking the next argument
SHARE_VALUE_OPTIONS = {
    "--driver": "driver", "--device": "device", "--dev-opts": "dev_opts",
    "--mount-opts": "mount_opts", "--queues": "queues", "--sync-queues": "sync_queues",
    "--queue-size": "queue_size", "--qemu-props": "qemu_props", "--tag": "tag",
}


def parse_args(argv):
    """Options from argv (without the program name). Exits 0 for --help."""
    opts = Options()
    current = opts.shares[0]
    shares_given = 0
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            opts.command = argv[i + 1:]
            break
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            sys.exit(0)
        if arg in ("--no-mount", "--quiet"):
            if arg == "--quiet":
                opts.quiet = True
            else:
                current.mount = False
            i += 1
            continue
        if arg not in GLOBAL_VALUE_OPTIONS and arg not in SHARE_VALUE_OPTIONS and \
                arg not in ("--share", "--module-param"):
            raise UsageError("unknown option '%s'" % arg, show_usage=True)
        if i + 1 >= len(argv):
            raise UsageError("option '%s' needs a value" % arg, show_usage=True)
        value = argv[i + 1]
        i += 2
        if arg == "--share":
            # The first --share names the first device's directory; every
            # later one adds a device (its driver and device filled in by
            # validate()).
            if shares_given > 0:
                current = Share(len(opts.shares))
                opts.shares.append(current)
            current.dir = value
            shares_given += 1
        elif arg == "--module-param":
            opts.module_params.append(value)
        elif arg in SHARE_VALUE_OPTIONS:
            setattr(current, SHARE_VALUE_OPTIONS[arg], value)
        else:
            setattr(opts, GLOBAL_VALUE_OPTIONS[arg], value)
    if not opts.command:
        raise UsageError("no command given", show_usage=True)
    return opts


def one_of(value, choices, message):
    if value not in choices:
        bad(message)


def parse_timeout(text):
    """--timeout as timeout(1) reads it: a number with an optional unit
    s, m, h or d; None for 0 (no limit)."""
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)([smhd]?)", text)
    if not m:
        bad("--timeout S: a number of seconds (with an optional s, m, h or d)")
    seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    return seconds if seconds > 0 else None


def validate(opts):
    """Check the options as the bash version did, in its order and with its
    messages, and fill in the defaults that depend on others."""
    one_of(opts.substrate, ("uml", "qemu"), "--substrate uml|qemu")
    one_of(opts.kernel, ("6.12", "6.1", "7.3", "6.12-rt", "6.1-rt", "libkrunfw", "libkrunfw-stock"),
           "--kernel 6.12|6.1|7.3|6.12-rt|6.1-rt|libkrunfw|libkrunfw-stock")
    one_of(opts.sync, ("on", "off"), "--sync on|off")
    one_of(opts.machine, ("pc", "microvm"), "--machine pc|microvm")
    one_of(opts.accel or "tcg", ("kvm", "tcg"), "--accel kvm|tcg")
    one_of(opts.tcg_thread or "single", ("single", "multi"), "--tcg-thread single|multi")
    one_of(opts.flavor, ("debug", "bench"), "--flavor debug|bench")
    validate_guest_size(opts)
    if opts.shares[0].tag != "share":
        bad("the first share's tag is 'share' (--tag is for later shares)")
    for share in opts.shares:
        validate_share(opts, share)
        opts.use_ours = opts.use_ours or share.driver == "ours"
        opts.use_intree = opts.use_intree or share.driver == "intree"
    validate_qemu(opts)
    if opts.kernel.startswith("libkrunfw"):
        if opts.substrate != "qemu" or opts.machine != "microvm":
            bad("--kernel %s needs --substrate qemu --machine microvm (virtio-mmio, as libkrun)"
                % opts.kernel)
        if opts.kernel == "libkrunfw-stock" and opts.use_ours:
            bad("--kernel libkrunfw-stock has no virtio_fs_sync: --driver intree")
        # CONFIG_NR_CPUS of libkrunfw's config
        if not re.fullmatch(r"[1-9]|1[0-6]", opts.cpus):
            bad("libkrunfw's kernel takes --cpus 1 to 16")
    if opts.substrate == "qemu" and opts.use_ours and opts.use_intree and opts.kernel == "6.1" and \
            opts.machine != "pc":
        bad("ours and intree side by side on 6.1 need --machine pc (the devices are told apart by PCI slot)")
    # --pin is the default of both; --pin-device and --pin-guest win.
    if opts.pin_device is None:
        opts.pin_device = opts.pin
    if opts.pin_guest is None:
        opts.pin_guest = opts.pin
    for p in (opts.pin_device, opts.pin_guest):
        if p and not cpulist.can_pin(p):
            bad("cannot pin to CPU list '%s' (taskset -c)" % p)
    if opts.pin_vcpus and not (opts.substrate == "uml" and opts.kernel == "7.3"):
        bad("--pin-vcpus is for UML 7.3 (the SMP UML)")
    if opts.pin_vcpus and not cpulist.can_pin(opts.pin_vcpus):
        bad("cannot pin to CPU list '%s' (taskset -c)" % opts.pin_vcpus)
    opts.timeout_s = parse_timeout(opts.timeout)


def sync_share(opts, share):
    """A share whose device can run sync queues for the module."""
    return opts.sync == "on" and share.driver == "ours" and share.device == "ref" and \
        share.sync_queues != "0"


def validate_qemu(opts):
    """--qemu, --qemu-props and --accel; the default QEMU: the patched one
    where a share can take the sync path, the host's otherwise."""
    if opts.substrate != "qemu":
        if opts.accel == "kvm":
            bad("--accel kvm is for --substrate qemu (UML runs on no accelerator)")
        if opts.qemu:
            bad("--qemu is for --substrate qemu")
        if any(s.qemu_props for s in opts.shares):
            bad("--qemu-props is for --substrate qemu")
        return
    if not opts.qemu:
        opts.qemu = "patched" if any(sync_share(opts, s) for s in opts.shares) else "stock"
    one_of(opts.qemu, ("stock", "patched"), "--qemu stock|patched")
    opts.accel = opts.accel or "tcg"
    if opts.accel == "kvm" and opts.tcg_thread:
        bad("--tcg-thread is for TCG, not --accel kvm")
    for share in opts.shares:
        if share.qemu_props and opts.qemu != "patched":
            bad("share %s: --qemu-props needs --qemu patched" % share.tag)
        if share.qemu_props and not re.fullmatch(r"[a-z0-9-]+=[A-Za-z0-9_.-]+(,[a-z0-9-]+=[A-Za-z0-9_.-]+)*",
                                                 share.qemu_props):
            bad("share %s: --qemu-props a=b,c=d" % share.tag)


def validate_guest_size(opts):
    """--cpus and --mem: the defaults and limits of each substrate."""
    if opts.substrate == "uml":
        if opts.kernel == "6.12":
            if opts.cpus not in ("", "1"):
                bad("UML 6.12 is uniprocessor")
            opts.cpus = "1"
        elif opts.kernel == "7.3":
            # CONFIG_NR_CPUS in tests/vm/uml-7.3.config
            opts.cpus = opts.cpus or "2"
            if not re.fullmatch(r"[1-8]", opts.cpus):
                bad("UML 7.3 takes --cpus 1 to 8")
        else:
            bad("UML test kernels: --kernel 6.12|7.3")
        opts.mem = opts.mem or "512"
    else:
        opts.cpus = opts.cpus or "2"
        opts.mem = opts.mem or "1024"


TAG_RE = re.compile(r"[A-Za-z0-9_.-]+")


def validate_share(opts, share):
    """One share's options; a later share's driver and device default to
    the first share's, its queues to the vCPUs."""
    first = opts.shares[0]
    name = "share " + share.tag
    share.driver = share.driver or first.driver
    share.device = share.device or first.device
    one_of(share.driver, ("ours", "intree", "none"), name + ": --driver ours|intree|none")
    one_of(share.device, ("ref", "virtiofsd"), name + ": --device ref|virtiofsd")
    if not TAG_RE.fullmatch(share.tag) or share.tag[0] in "._-" or share.tag == "hostroot":
        bad(name + ": a tag is letters, digits, '_', '.', '-' (not first), not hostroot")
    if len(share.tag) > 36:
        bad(name + ": a tag has at most 36 bytes")
    for other in opts.shares[:share.index]:
        if other.tag == share.tag:
            bad("two shares with the tag " + share.tag)
    if opts.substrate == "uml":
        if share.device != "ref":
            bad("UML needs the reference device (QEMU's virtiofsd does not answer GET_CONFIG)")
        if share.queue_size:
            bad("UML's queue size is fixed")
    if share.device == "virtiofsd":
        # QEMU's C virtiofsd serves a single request queue.
        if share.queues not in ("", "1"):
            bad("QEMU's virtiofsd serves one request queue")
        share.queues = "1"
    share.queues = share.queues or opts.cpus
    share.sync_queues = share.sync_queues or opts.cpus
