# SPDX-License-Identifier: GPL-2.0
"""tests/vm/run: boot one guest against one or more virtio-fs devices, run a
command in it on the mounted share, print the command's output and exit
with its status. Benchmarks and acceptance runs call it; its interface
(options, exit statuses, the files of --results) is stable: see USAGE.

The guest sees the host's tree (UML: hostfs root; QEMU: the host's / over
a second virtio-fs device, read-only but for the run directory), so CMD can
be any host program. Results come back through files in the run directory
(written by tests/vm/guest-init), never from the console.

One run, in order: check the options (vm_options), make the run directory,
start each share's device, start the guest (UML or QEMU) and read back the
pinning of its processes, wait for it within --timeout, let the devices
finish, then judge the run from the files the guest left (status, dmesg,
kmemleak). Whatever happens, the cleanup stops every process the run
started, writes cpu-times and copies the run directory to --results.
"""
import fcntl
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import signal
import tempfile
import time

from harness import cpus as cpulist
from harness import initramfs
from harness import proc
from harness.vm_options import USAGE, UsageError, bad, parse_args, sync_share, validate

PROG = "tests/vm/run"
VIRTIOFSD = "/usr/lib/qemu/virtiofsd"
# What fails a run whatever CMD said (tests/vm/run's contract; GUIDE.md).
SPLAT_RE = re.compile(
    r"WARNING:|BUG:|Oops|INFO: possible|INFO: inconsistent|INFO: trying to register|possible circular locking|"
    r"scheduling while atomic|sleeping function called from invalid context|"
    r"unreferenced object|general protection fault|Kernel panic|UBSAN:|KASAN:")
# How long the guest's process tree is sampled for its pinning (in steps
# of GUEST_SAMPLE_STEP s), so that the UML processes forked early are in it.
GUEST_SAMPLES = 15
GUEST_SAMPLE_STEP = 0.2
# After a timeout, how long the guest has to end after SIGTERM before SIGKILL
# (timeout --kill-after=10 in the bash version).
GUEST_KILL_AFTER = 10
# How often the console is read for the stress test's report of a hung writer
CONSOLE_WATCH_STEP = 2.0


class SetupFailed(Exception):
    """The guest could not be set up as asked: exit 126."""


def emit(stream, data):
    """Write bytes to sys.stdout or sys.stderr; a reader that has gone away
    (tests/vm/run ... | head) loses the rest, as cat would, and the run goes
    on to its exit status."""
    try:
        stream.flush()
        stream.buffer.write(data)
        stream.flush()
    except BrokenPipeError:
        # Nothing more to that reader, nor at exit's flush.
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)


def say(message):
    emit(sys.stderr, ("%s: %s\n" % (PROG, message)).encode(errors="surrogateescape"))


class Run:
    """One run: its options, its directory and the processes it started."""

    def __init__(self, opts, repo):
        self.opts = opts
        self.repo = repo
        self.dir = None
        self.children = []
        self.own_shares = []  # temp share directories to remove at the end
        self.pin_fail = ""  # why the pinning did not take
        self.pin_unread = ""  # why the guest's pinning could not be read
        self.timed_out = False

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text, mode="w"):
        with open(self.path(name), mode) as f:
            f.write(text)

    def pinning(self, line):
        """One key=value line of the run directory's pinning file."""
        self.write("pinning", line + "\n", "a")


def tmp_dir(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TMPDIR") or "/tmp")


def prepare_shares(run):
    """Each share's directory, absolute; a fresh temp dir where none was given."""
    for share in run.opts.shares:
        if not share.dir:
            share.dir = tmp_dir("vfs-share.")
            run.own_shares.append(share.dir)
        if not os.path.isdir(share.dir) or not os.access(share.dir, os.X_OK):
            bad("no such directory: " + share.dir)
        share.dir = os.path.abspath(share.dir)


def shell_quote(arg):
    """arg in POSIX single quotes (the guest runs the command with sh)."""
    return b"'" + os.fsencode(arg).replace(b"'", b"'\\''") + b"'"


def write_command(run):
    """RUN/cmd: CMD as one sh script that starts in /mnt/share."""
    words = b"".join(b" " + shell_quote(a) for a in run.opts.command)
    run.write("cmd", b"cd /mnt/share || exit 126\nexec" + words + b"\n", "wb")


def write_cmdline(run, name, argv):
    """RUN/NAME: the command line of a process the run starts, quoted so
    that it can be pasted into a shell."""
    run.write(name, shlex.join(argv) + "\n")


def pci_slot(opts, share):
    """The PCI slot of a share's device (QEMU pc: 0x10 + its index) or None."""
    if opts.substrate == "qemu" and opts.machine == "pc":
        return "0000:00:%02x.0" % (16 + share.index)
    return None


def write_shares(run):
    """RUN/shares, what guest-init mounts: TAG DRIVER MOUNT PCI-SLOT
    MOUNT-OPTS, one line per share ("-" for an empty field). A file, not
    the kernel command line, so that mount options need no quoting."""
    lines = []
    for share in run.opts.shares:
        lines.append("%s %s %d %s %s\n" % (share.tag, share.driver, 1 if share.mount else 0,
                                           pci_slot(run.opts, share) or "-", share.mount_opts or "-"))
    run.write("shares", "".join(lines))


def module_params(opts):
    """virtio_fs_sync's parameters, k=v each."""
    return (["sync=0"] if opts.sync == "off" else []) + opts.module_params


def blacklisted_initcall(opts):
    """The initcall the guest leaves out: in-tree virtiofs where only ours is
    wanted; ours where it is not wanted. With both, in-tree virtiofs (first
    in link and load order) binds every device and the "virtiofs" name, and
    guest-init hands ours its devices."""
    if opts.use_ours and not opts.use_intree:
        return "virtio_fs_init"
    if not opts.use_ours:
        return "virtio_fs_sync_init"
    return ""


def pin_set(cpu_list):
    return cpulist.parse_cpu_list(cpu_list) if cpu_list else None


def wait_socket(path, child, timeout=5.0):
    """Wait until the device child has made its socket (False if it ended
    first or did not within timeout seconds)."""
    for _ in range(int(timeout / 0.05)):
        if stat.S_ISSOCK(_mode(path)):
            return True
        if child.wait(0.05):
            return stat.S_ISSOCK(_mode(path))
    return stat.S_ISSOCK(_mode(path))


def _mode(path):
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


def run_tool_or_fail(argv, message, **kwargs):
    """A setup tool's stdout (stripped), or exit 2 with message if it fails."""
    rc, out = proc.run_tool(argv, capture=True, **kwargs)
    if rc != 0:
        bad(message)
    return out


def build_reference_device(repo):
    """Bring REPO's vhost-user-fs binary up to date with its sources (make
    is incremental: a no-op when it is), so a boot never runs a device
    older than the tree. Under a lock on its Makefile: boots started side
    by side must not build in one directory at once."""
    src = os.path.join(repo, "vhost-user-fs")
    with open(os.path.join(src, "Makefile")) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rc, _ = proc.run_tool(["make", "-s", "-C", src], stdout=2)
    if rc != 0:
        bad("cannot build the reference device")
    return os.path.join(src, "vhost-user-fs")


def reference_device_argv(run, share):
    """The reference device (vhost-user-fs) of a share."""
    opts, repo = run.opts, run.repo
    binary = build_reference_device(repo)
    argv = [binary, "--socket-path=" + run.path("share.sock" + share.suffix),
            "--shared-dir=" + share.dir, "--tag=" + share.tag,
            "--request-queues=" + share.queues, "--sync-queues=" + share.sync_queues,
            "--stats-file=" + run.path("dev-stats" + share.suffix)]
    # Ours beside in-tree virtiofs in UML: guest-init probes the transport
    # again, which connects anew.
    if opts.substrate == "uml" and opts.use_intree and share.driver == "ours":
        argv.append("--persistent")
    return argv + share.dev_opts.split()


def virtiofsd_argv(run, share):
    """QEMU's virtiofsd for a share."""
    return [VIRTIOFSD, "--socket-path=" + run.path("share.sock" + share.suffix),
            "-o", "source=" + share.dir, "-o", "sandbox=chroot"] + share.dev_opts.split()


def start_share_device(run, share):
    """The device of a share (none for --driver none), its files named with
    the share's suffix; records and checks its pinning."""
    if share.driver == "none":
        return
    s = share.suffix
    if share.device == "ref":
        argv = reference_device_argv(run, share)
    else:
        argv = virtiofsd_argv(run, share)
    write_cmdline(run, "device-cmdline" + s, argv)
    child = proc.start_child(run.children, "device" + s, argv, run.path("device.log" + s),
                             cpus=pin_set(run.opts.pin_device))
    if not wait_socket(run.path("share.sock" + s), child):
        write_stderr(read_bytes(run.path("device.log" + s)) or b"")
        bad("the device of %s did not start" % share.tag)
    allowed = cpulist.cpus_allowed(child.pid)
    run.pinning("device_pid%s=%d" % (s, child.pid))
    run.pinning("device_comm%s=%s" % (s, proc.comm(child.pid) or ""))
    run.pinning("device_cpus_allowed%s=%s" % (s, allowed))
    pin = run.opts.pin_device
    if pin and not cpulist.same_cpus(allowed, pin):
        run.pin_fail = "the device of %s runs on CPUs '%s', not '%s'" % (share.tag, allowed, pin)
        run.pinning("pin_check=mismatch")
        raise SetupFailed("pinning did not take: " + run.pin_fail)


def vcpu_pins(tids, ncpus, cpu_list):
    """(tid, host CPU) for each vCPU thread of the UML kernel process: its
    threads in creation (tid) order, the first ncpus of which are the vCPUs
    (the main thread is vCPU 0, os_start_cpu_thread() starts the others at
    boot, before any helper thread), vCPU i on the i-th CPU of cpu_list,
    round robin. [] until all ncpus threads exist."""
    tids = sorted(tids)
    if len(tids) < ncpus:
        return []
    cpus = sorted(cpulist.parse_cpu_list(cpu_list))
    return [(tid, cpus[i % len(cpus)]) for i, tid in enumerate(tids[:ncpus])]


def pin_vcpus(run, pid):
    """--pin-vcpus: pin the vCPU threads of the UML kernel process pid once
    they all exist; True when done (recorded in pinning as vcpu_pins)."""
    try:
        tids = [int(t) for t in os.listdir("/proc/%d/task" % pid)]
    except OSError:
        return False
    pins = vcpu_pins(tids, int(run.opts.cpus or "2"), run.opts.pin_vcpus)
    if not pins:
        return False
    for tid, cpu in pins:
        try:
            os.sched_setaffinity(tid, {cpu})
        except OSError as e:
            run.pin_fail = "vCPU thread %d could not be pinned to CPU %d: %s" % (tid, cpu, e)
    run.pinning("vcpu_pins=" + " ".join("%d:%d" % p for p in pins))
    return True


def sample_guest_pinning(run, guest):
    """Record the CPUs of the guest's process tree, sampled for up to 3 s
    (the UML processes the guest forks early are in it too), and check
    them against --pin-guest."""
    lists, n, guest_pid, guest_comm = [], 0, "", ""
    vcpus_done = not run.opts.pin_vcpus
    for _ in range(GUEST_SAMPLES):
        if guest.wait(GUEST_SAMPLE_STEP):
            break
        if not vcpus_done:
            vcpus_done = pin_vcpus(run, guest.pid)
        tree = proc.process_tree(guest.pid)
        name = proc.comm(tree[0])
        if name is None:
            continue
        allowed = sorted({a for a in map(cpulist.cpus_allowed, tree) if a})
        if not allowed:
            continue
        lists, n, guest_pid, guest_comm = allowed, len(tree), str(tree[0]), name
    run.pinning("guest_pid=" + guest_pid)
    run.pinning("guest_comm=" + guest_comm)
    run.pinning("guest_processes=%d" % n)
    run.pinning("guest_cpus_allowed=" + " ".join(lists))
    if not vcpus_done and not run.pin_fail:
        run.pin_fail = "the guest's vCPU threads were not all seen, not pinned"
    if not lists:
        run.pin_unread = "the guest ended before its CPUs were read"
    elif run.opts.pin_guest:
        for allowed in lists:
            # a vCPU's thread pinned by --pin-vcpus passes its CPU to what it forks
            inside = run.opts.pin_vcpus and \
                cpulist.parse_cpu_list(allowed) <= cpulist.parse_cpu_list(run.opts.pin_guest)
            if not cpulist.same_cpus(allowed, run.opts.pin_guest) and not inside:
                run.pin_fail = "a guest process runs on CPUs '%s', not '%s'" % (allowed, run.opts.pin_guest)


def snapshot_device_stats(run, name="dev-stats.at-timeout"):
    """Have each reference device of a guest that is still up write its
    stats now (SIGUSR1), with its rings' indices while they are mapped, and
    keep them as NAME[.TAG] (the device writes dev-stats again when it
    ends)."""
    devices = [(c, s.suffix) for s in run.opts.shares if s.device == "ref" and s.driver != "none"
               for c in run.children if c.name == "device" + s.suffix]
    for child, _ in devices:
        child.signal(signal.SIGUSR1)
    if devices:
        time.sleep(1.0)
    for _, s in devices:
        data = read_bytes(run.path("dev-stats" + s))
        if data is not None:
            with open(run.path(name + s), "wb") as f:
                f.write(data)


class ConsoleWatch:
    """Reads what a console file gained since the last look, for a line
    that tests/suite/stress.c writes when a writer hangs."""
    MARK = re.compile(rb"stress: writer [0-9]+ hung in")

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.tail = b""

    def hang_reported(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return False
        self.offset += len(data)
        text = self.tail + data
        self.tail = text[-200:]
        return self.MARK.search(text) is not None


def run_guest(run, argv, output):
    """Start the guest (pinned, in a process group of its own, its output to
    output), record its pinning, and wait for it within --timeout; after
    that, SIGTERM to its process group, SIGKILL 10 s later. When the
    stress test reports a hung writer on the console, the devices' rings
    are kept as they are then (dev-stats.at-hang), while it still waits."""
    guest = proc.start_child(run.children, "guest", argv, output,
                             cpus=pin_set(run.opts.pin_guest), new_group=True)
    started = time.monotonic()
    sample_guest_pinning(run, guest)
    limit = run.opts.timeout_s
    watch = ConsoleWatch(output)
    while True:
        left = None if limit is None else max(0.0, limit - (time.monotonic() - started))
        step = left
        if watch is not None and (left is None or left > CONSOLE_WATCH_STEP):
            step = CONSOLE_WATCH_STEP
        if guest.wait(step):
            return
        if step == left:
            break
        if watch.hang_reported():
            snapshot_device_stats(run, "dev-stats.at-hang")
            watch = None
    run.timed_out = True
    snapshot_device_stats(run)
    guest.signal(signal.SIGTERM)
    if not guest.wait(GUEST_KILL_AFTER):
        guest.signal(signal.SIGKILL)
        guest.wait()


def uml_command(run):
    """The UML kernel's command line, as one string (RUN/cmdline)."""
    opts = run.opts
    cmdline = "mem=%sM uml_dir=%s rootfstype=hostfs rootflags=/ rw" % (opts.mem, run.path("uml"))
    # 7.3's SMP needs the seccomp userspace (ptrace's is uniprocessor).
    if opts.kernel == "7.3":
        cmdline += " ncpus=%s seccomp=on" % opts.cpus
    cmdline += " con0=null,fd:1 con=null ssl=null init=%s/tests/vm/guest-init %s" % (
        run.repo, guest_env(run))
    for share in opts.shares:
        if share.driver != "none":
            cmdline += " virtio_uml.device=%s:26" % run.path("share.sock" + share.suffix)
    if blacklisted_initcall(opts):
        cmdline += " initcall_blacklist=" + blacklisted_initcall(opts)
    for p in module_params(opts):
        cmdline += " virtio_fs_sync." + p
    return cmdline + " " + opts.append


def run_uml(run):
    opts = run.opts
    linux = run_tool_or_fail([os.path.join(run.repo, "tests/setup/build-uml.sh"), opts.flavor, opts.kernel],
                             "cannot build the UML kernel")
    cmdline = uml_command(run)
    run.write("cmdline", cmdline + "\n")
    # Split on blanks as the shell did: the words are the kernel's arguments.
    run_guest(run, [linux] + cmdline.split(), run.path("console"))


def guest_env(run):
    return "VFS_RUN=%s VFS_DRIVER=%s VFS_SUBSTRATE=%s" % (run.dir, run.opts.shares[0].driver,
                                                          run.opts.substrate)


def build_module(run):
    """Our module for the QEMU guest's kernel; returns the .ko's path."""
    repo, kernel = run.repo, run.opts.kernel
    # Runs may share the repository's build directory.
    os.makedirs(os.path.join(repo, "build"), exist_ok=True)
    log = run.path("module-build.log")
    with open(os.path.join(repo, "build", ".lock"), "a") as lock, open(log, "wb") as out:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rc, _ = proc.run_tool(["make", "-C", repo, "KVER=" + kernel], stdout=out, stderr=out)
    if rc != 0:
        write_stderr(tail_lines(read_bytes(log) or b"", 30))
        bad("cannot build the module for " + kernel)
    return proc.run_tool(["make", "-s", "-C", repo, "KVER=" + kernel, "print-ko"], capture=True)[1]


def start_host_tree(run):
    """The host's tree for CMD and the results, through QEMU's virtiofsd;
    mounted by the driver under test. Not pinned: not the device under test."""
    argv = [VIRTIOFSD, "--socket-path=" + run.path("root.sock"), "-o", "source=/",
            "-o", "sandbox=chroot", "-o", "cache=auto"]
    write_cmdline(run, "hostroot-cmdline", argv)
    child = proc.start_child(run.children, "hostroot", argv, run.path("hostroot.log"))
    if not wait_socket(run.path("root.sock"), child):
        bad("virtiofsd for the host tree did not start")
    run.pinning("hostroot_cpus_allowed=" + cpulist.cpus_allowed(child.pid))


def host_tsc_khz():
    """The host's TSC rate from /proc/cpuinfo's first "cpu MHz", in kHz."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return str(int(float(line.split()[3]) * 1000))
    except (OSError, IndexError, ValueError):
        pass
    return ""


def qemu_machine(opts):
    """(device model, machine arguments, what the kernel command line needs)."""
    if opts.machine == "pc":
        return "vhost-user-fs-pci", ["-machine", "pc,memory-backend=mem"], ""
    # Under TCG microvm offers nothing to calibrate the TSC against (no
    # PIT, HPET or PM timer): without a given rate boot hangs. TCG's TSC
    # runs at the host's rate, so the host's rate keeps the guest's clock
    # with the host's (file times are the host's).
    # libkrunfw's kernel has no ACPI: with acpi=off QEMU lists the
    # virtio-mmio devices on the command line (virtio_mmio.device=).
    khz = host_tsc_khz() or "2000000"
    acpi = "off" if opts.kernel.startswith("libkrunfw") else "on"
    return ("vhost-user-fs-device",
            ["-machine", "microvm,acpi=%s,memory-backend=mem" % acpi,
             "-global", "virtio-mmio.force-legacy=false"],
            "tsc_early_khz=%s tsc=reliable " % khz)


# libkrun's kernel command line (libkrun's defaults, its init)
LIBKRUN_CMDLINE = ("reboot=k panic=-1 panic_print=0 nomodule console=hvc0 rootfstype=virtiofs rw "
                   "quiet no-kvmapf init=/init.krun")


def krun_command_line(run, append):
    """libkrun's command line, then what the runner needs: reboot=t (microvm
    has no keyboard controller to reset through), init_on_alloc=1 (below),
    the guest's environment, the built-in driver's parameters
    (virtio_fs_sync.k=v).

    TCG does not see what a vhost-user device writes into guest memory: a
    page that held code it translated, refilled by the device with another
    file's code, would run the old translation. A page the guest's CPU
    writes has its translations dropped, and with init_on_alloc the kernel
    zeroes every page it hands out, as Debian's kernels do by default;
    libkrunfw's config does not, and its guests, which take every binary
    from virtio-fs, crash in their first programs without it."""
    opts = run.opts
    cmdline = "%s reboot=t init_on_alloc=1 %s VFS_GUEST_INIT=%s/tests/vm/guest-init" % (
        LIBKRUN_CMDLINE, guest_env(run), run.repo)
    if opts.kernel == "libkrunfw":
        for p in module_params(opts):
            cmdline += " virtio_fs_sync." + p
        if blacklisted_initcall(opts) == "virtio_fs_sync_init":
            cmdline += " initcall_blacklist=virtio_fs_sync_init"
    return cmdline + " " + append


def qemu_command_line(run, append):
    opts = run.opts
    # reboot=t: a triple fault ends QEMU (-no-reboot) at once; microvm has no
    # keyboard controller, and the default reboot methods could spin.
    # no_timer_check: on a loaded host TCG can miss the few ticks the IO-APIC
    # timer check waits for, and the kernel panics ("IO-APIC + timer doesn't
    # work!"); QEMU's timer is wired as the kernel expects, so skip the check.
    cmdline = "console=ttyS0 panic=-1 reboot=t no_timer_check %s VFS_GUEST_INIT=%s/tests/vm/guest-init" % (
        guest_env(run), run.repo)
    if opts.machine == "pc":
        cmdline += " VFS_SHARE_PCI=0000:00:10.0"
    if blacklisted_initcall(opts) == "virtio_fs_init":
        cmdline += " initcall_blacklist=virtio_fs_init"
    return cmdline + " " + append


def patched_props(opts, share):
    """The patched QEMU's sync-queue properties of a share's device: as
    many sync queues as the reference device offers, on its feature bit."""
    if opts.qemu != "patched":
        return ""
    props = ",num-sync-queues=" + share.sync_queues if sync_share(opts, share) else ""
    for opt in share.dev_opts.split():
        if opt.startswith("--sync-bit="):
            props += ",sync-feature-bit=" + opt.split("=", 1)[1]
    return props + ("," + share.qemu_props if share.qemu_props else "")


def qemu_binary(run):
    """The host's qemu-system-x86_64 or the patched one (built once)."""
    if run.opts.qemu != "patched":
        return "qemu-system-x86_64"
    return run_tool_or_fail([os.path.join(run.repo, "scripts/build-qemu.sh")],
                            "cannot build the patched QEMU (scripts/build-qemu.sh)")


def qemu_share_args(run, dev):
    """A vhost-user-fs device per share that has one."""
    args = []
    for share in run.opts.shares:
        if share.driver == "none":
            continue
        # A fixed PCI slot lets a guest find a share's device where its
        # driver does not tell tags in sysfs (6.1's virtiofs).
        props = ",addr=0x%x" % (16 + share.index) if run.opts.machine == "pc" else ""
        if share.queue_size:
            props += ",queue-size=" + share.queue_size
        props += patched_props(run.opts, share)
        args += ["-chardev", "socket,id=share%d,path=%s" % (share.index, run.path("share.sock" + share.suffix)),
                 "-device", "%s,chardev=share%d,tag=%s,num-request-queues=%s%s" % (
                     dev, share.index, share.tag, share.queues, props)]
    return args


def start_krun_root(run):
    """The root of a libkrunfw guest: RUN/krunroot (static busybox,
    tests/vm/krun-init as /init.krun) on a reference device of its own, tag
    /dev/root, with as many sync queues as vCPUs and the first share's
    used-length behaviour (--used-len-zero: one VMM, one behaviour); its
    stats go to root-dev-stats. Returns QEMU's arguments for it."""
    opts = run.opts
    root = run.path("krunroot")
    for d in ("bin", "proc", "sys", "dev", "host"):
        os.makedirs(os.path.join(root, d))
    shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
    shutil.copy(os.path.join(run.repo, "tests/vm/krun-init"), os.path.join(root, "init.krun"))
    os.chmod(os.path.join(root, "init.krun"), 0o755)
    sock = run.path("krunroot.sock")
    argv = [build_reference_device(run.repo), "--socket-path=" + sock, "--shared-dir=" + root,
            "--tag=/dev/root", "--request-queues=" + opts.cpus, "--sync-queues=" + opts.cpus,
            "--stats-file=" + run.path("root-dev-stats")]
    argv += [o for o in opts.shares[0].dev_opts.split() if o == "--used-len-zero"]
    write_cmdline(run, "device-cmdline.root", argv)
    child = proc.start_child(run.children, "rootdev", argv, run.path("device.log.root"))
    if not wait_socket(sock, child):
        bad("the root's reference device did not start (device.log.root)")
    props = ",num-sync-queues=" + opts.cpus if opts.qemu == "patched" and opts.sync == "on" else ""
    return ["-chardev", "socket,id=krunroot,path=" + sock,
            "-device", "vhost-user-fs-device,chardev=krunroot,tag=/dev/root,num-request-queues=%s%s"
            % (opts.cpus, props)]


def run_qemu(run):
    opts = run.opts
    if opts.kernel.startswith("libkrunfw"):
        # built in: the driver, no modules, no initramfs
        if opts.kernel == "libkrunfw":
            kdir = run_tool_or_fail([os.path.join(run.repo, "scripts/build-libkrunfw.sh")],
                                    "cannot build libkrunfw's kernel (make libkrunfw)")
        else:
            kdir = run_tool_or_fail([os.path.join(run.repo, "scripts/fetch-libkrunfw-stock.sh")],
                                    "cannot fetch Debian's libkrunfw5")
        qemu = qemu_binary(run)
        run.write("qemu", qemu + "\n")
        start_host_tree(run)
        dev, machine, cmdline_extra = qemu_machine(opts)
        cmdline = krun_command_line(run, cmdline_extra + opts.append)
        run.write("cmdline", cmdline + "\n")
        boot_args = ["-kernel", os.path.join(kdir, "vmlinux")] + start_krun_root(run)
        console = ["-device", "virtio-serial-device", "-chardev",
                   "file,id=con0,path=" + run.path("console"), "-device", "virtconsole,chardev=con0"]
        return run_qemu_guest(run, qemu, machine, boot_args, cmdline, dev, console)
    kdir = run_tool_or_fail([os.path.join(run.repo, "scripts/fetch-kernel.sh"), opts.kernel],
                            "cannot fetch kernel " + opts.kernel)
    qemu = qemu_binary(run)
    run.write("qemu", qemu + "\n")
    ko = build_module(run) if opts.use_ours else ""
    wanted = ["virtio_pci", "virtio_mmio", "fuse"] + (["virtiofs"] if opts.use_intree else [])
    # The host tree is mounted through the driver under test, so ours alone
    # also needs in-tree virtiofs out of the way; see qemu-init.
    try:
        initramfs.make_initramfs(run.repo, run.dir, kdir, wanted, ko if opts.use_ours else None,
                                 module_params(opts))
    except (OSError, subprocess.CalledProcessError) as e:
        raise SetupFailed("cannot make the initramfs: %s" % e)
    start_host_tree(run)
    dev, machine, cmdline_extra = qemu_machine(opts)
    cmdline = qemu_command_line(run, cmdline_extra + opts.append)
    run.write("cmdline", cmdline + "\n")
    # Debian's kernels do not always survive their own run-time code
    # patching (static keys: "sched_clock: Marking stable" at boot, sysctls)
    # under multi-threaded TCG here (QEMU 7.2): int3 Oopses in patched code
    # on 6.12, 7.3 and 6.12-rt, 6.1-rt hung flipping a static key by sysctl.
    # One TCG thread runs the vCPUs in turn: still SMP (both CPUs submit,
    # interleaved), but never two at one instant. --tcg-thread multi
    # gives parallel vCPUs back.
    run_qemu_guest(run, qemu, machine,
                   ["-kernel", os.path.join(kdir, "vmlinuz"), "-initrd", run.path("initramfs.gz")],
                   cmdline, dev, ["-serial", "file:" + run.path("console")])


def qemu_accel_args(opts):
    """The accelerator and the CPU model it runs: TCG (single-threaded
    unless --tcg-thread multi) on QEMU's max CPU, or KVM on the host's."""
    if opts.accel == "kvm":
        return ["-accel", "kvm", "-cpu", "host"]
    return ["-accel", "tcg,thread=" + (opts.tcg_thread or "single"), "-cpu", "max"]


def run_qemu_guest(run, qemu, machine, boot_args, cmdline, dev, console):
    """Start QEMU (qemu_argv), its command line in RUN/qemu-cmdline."""
    argv = qemu_argv(run, qemu, machine, boot_args, cmdline, dev, console)
    write_cmdline(run, "qemu-cmdline", argv)
    run_guest(run, argv, run.path("qemu.log"))


def qemu_argv(run, qemu, machine, boot_args, cmdline, dev, console):
    """QEMU with the host tree (tag hostroot), the shares' devices and
    CONSOLE's arguments; BOOT_ARGS: the kernel and what it boots from."""
    opts = run.opts
    argv = [qemu, "-nographic", "-no-reboot"] + qemu_accel_args(opts) + \
        ["-smp", opts.cpus, "-m", opts.mem,
         "-object", "memory-backend-memfd,id=mem,size=%sM,share=on" % opts.mem] + machine + \
        boot_args + ["-append", cmdline,
                     "-chardev", "socket,id=root,path=" + run.path("root.sock"),
                     "-device", dev + ",chardev=root,tag=hostroot"] + qemu_share_args(run, dev) + \
        console + ["-monitor", "none", "-display", "none"]
    if opts.qemu == "patched":
        # no NIC: the patched build has no network option ROMs (the
        # host's come with its own QEMU), and the guest uses none
        argv += ["-nic", "none"]
    return argv


def record_pin_check(run):
    if run.pin_fail:
        run.pinning("pin_check=mismatch")
    elif run.pin_unread:
        run.pinning("pin_check=unverified (%s)" % run.pin_unread)
    elif run.opts.pin_device or run.opts.pin_guest or run.opts.pin_vcpus:
        run.pinning("pin_check=ok")
    else:
        run.pinning("pin_check=unpinned")


def let_devices_finish(run):
    """Let the devices see the disconnect and write their counters: 2 s,
    then SIGTERM, then up to 3 s more."""
    if not proc.wait_all(run.children, 2.0):
        for child in run.children:
            child.signal(signal.SIGTERM)
        proc.wait_all(run.children, 3.0)


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def write_stderr(data):
    emit(sys.stderr, data)


def tail_lines(data, n):
    return b"".join(data.splitlines(keepends=True)[-n:])


def grep_with_context(lines, regex, after, limit):
    """grep -E -A AFTER REGEX | head -n LIMIT, on a list of byte lines."""
    out, last = [], None
    for i, line in enumerate(lines):
        if not regex.search(line.decode(errors="surrogateescape")):
            continue
        start = i if last is None else max(i, last + 1)
        if last is not None and start > last + 1:
            out.append(b"--\n")
        out.extend(lines[start:i + after + 1])
        last = min(i + after, len(lines) - 1)
    return b"".join(out[:limit])


def kernel_splats(run):
    """125 with what the guest's dmesg or kmemleak report, else None.
    Writes RUN/splats (the matching dmesg lines) when there is a dmesg."""
    dmesg = read_bytes(run.path("dmesg"))
    if dmesg is not None:
        lines = dmesg.splitlines(keepends=True)
        hits = [line for line in lines if SPLAT_RE.search(line.decode(errors="surrogateescape"))]
        run.write("splats", b"".join(hits), "wb")
        if hits:
            say("kernel splat in the guest:")
            write_stderr(grep_with_context(lines, SPLAT_RE, 15, 80))
            return 125
    kmemleak = read_bytes(run.path("kmemleak"))
    if kmemleak:
        say("kmemleak reports leaks:")
        write_stderr(b"".join(kmemleak.splitlines(keepends=True)[:40]))
        return 125
    return None


def no_result(run):
    """The guest left no status: 124 if it hung, 126 if it ended anyway."""
    if run.timed_out:
        say("the guest hung (no result after %ss); console tail:" % run.opts.timeout)
        rc = 124
    else:
        say("the guest ended without a result; console tail:")
        rc = 126
    console = read_bytes(run.path("console"))
    if console is None:
        say("cannot read the console")
    else:
        if run.opts.kernel.startswith("libkrunfw") and b"Unable to mount root fs" in console:
            say("the kernel could not mount its root: no virtio-fs device with the tag "
                "/dev/root bound to a driver (libkrun's root)")
        write_stderr(tail_lines(console, 40))
    setup_error = read_bytes(run.path("setup-error"))
    if setup_error is not None:
        write_stderr(setup_error)
    return rc


def outcome(run):
    """The exit status of a run whose guest has ended, saying why on stderr."""
    out = read_bytes(run.path("out"))
    if not run.opts.quiet and out is not None:
        emit(sys.stdout, out)
    if run.pin_fail:
        say("pinning did not take: " + run.pin_fail)
        return 126
    status = read_bytes(run.path("status"))
    if status is None:
        return no_result(run)
    splat = kernel_splats(run)
    if splat is not None:
        return splat
    try:
        return int(status.strip()) & 255
    except ValueError:
        say("bad status file: %r" % status)
        return 2


def boot(run):
    """Everything from the run directory to the exit status."""
    opts = run.opts
    run.dir = tmp_dir("vfs-run.")
    prepare_shares(run)
    os.makedirs(run.path("uml"))
    run.pinning("host_cpus_allowed=" + cpulist.cpus_allowed(os.getpid()))
    run.pinning("device_pin=" + opts.pin_device)
    run.pinning("guest_pin=" + opts.pin_guest)
    write_command(run)
    write_shares(run)
    for share in opts.shares:
        start_share_device(run, share)
    if opts.substrate == "uml":
        run_uml(run)
    else:
        run_qemu(run)
    record_pin_check(run)
    let_devices_finish(run)
    return outcome(run)


def copy_tree(src, dest):
    """cp -a SRC/. DEST/: also sockets (the shares' share.sock*) and fifos;
    what cannot be copied is left out."""
    def copy(s, d):
        mode = os.lstat(s).st_mode
        if stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode):
            if os.path.lexists(d):
                os.unlink(d)
            os.mknod(d, mode)
        else:
            shutil.copy2(s, d)
    try:
        shutil.copytree(src, dest, symlinks=True, copy_function=copy, dirs_exist_ok=True)
    except (shutil.Error, OSError):
        pass


def cleanup(run):
    """Stop what the run started, write cpu-times, keep the files in
    --results, remove the run directory and the temp shares."""
    proc.stop_all(run.children)
    if run.dir:
        names = ["device"] + ["device" + s.suffix for s in run.opts.shares[1:]] + ["hostroot", "guest"]
        by_name = {c.name: c for c in run.children}
        lines = [by_name[n].rusage_line() for n in names if n in by_name]
        run.write("cpu-times", "".join(line + "\n" for line in lines if line))
        if run.opts.results:
            os.makedirs(run.opts.results, exist_ok=True)
            copy_tree(run.dir, run.opts.results)
        shutil.rmtree(run.dir, ignore_errors=True)
    for d in run.own_shares:
        shutil.rmtree(d, ignore_errors=True)


def repo_dir():
    """The repository: two levels above this package (tests/harness)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None):
    """tests/vm/run ARGS: returns the exit status (a stop signal ends the
    process after the cleanup: 130 for INT and TERM, by the signal for HUP)."""
    proc.catch_stop_signals()
    signum = None
    try:
        opts = parse_args(sys.argv[1:] if argv is None else argv)
        validate(opts)
    except UsageError as e:
        say(str(e))
        if e.show_usage:
            sys.stderr.write(USAGE)
        return 2
    except proc.Interrupted as e:
        proc.exit_by_signal(e.signum)
    run = Run(opts, repo_dir())
    try:
        rc = boot(run)
    except UsageError as e:
        say(str(e))
        rc = 2
    except SetupFailed as e:
        say(str(e))
        rc = 126
    except proc.Interrupted as e:
        signum = e.signum
    finally:
        with proc.deferred(raise_at_end=False):
            cleanup(run)
    if signum is not None:
        proc.exit_by_signal(signum)
    return rc
