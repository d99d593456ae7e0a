# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of tests/vm/run's pure parts (no guest is booted):
python3 -m unittest discover -s tests/harness -t tests"""
import os
import re
import shlex
import subprocess
import tempfile
import unittest
from unittest import mock

from harness import cpus, initramfs, vm, vm_options


class CpuLists(unittest.TestCase):
    def test_lists_as_taskset_reads_them(self):
        self.assertEqual(cpus.parse_cpu_list("0-2,5"), {0, 1, 2, 5})
        self.assertEqual(cpus.parse_cpu_list("0-7:2"), {0, 2, 4, 6})
        self.assertEqual(cpus.parse_cpu_list("3"), {3})
        for bad in ("", "2-1", "a", "1,,2", "0-3:0", "-1"):
            with self.assertRaises(ValueError, msg=bad):
                cpus.parse_cpu_list(bad)

    def test_same_cpus(self):
        self.assertTrue(cpus.same_cpus("0-1", "0,1"))
        self.assertTrue(cpus.same_cpus("0-3:2", "0,2"))
        self.assertFalse(cpus.same_cpus("0-1", "1"))
        self.assertFalse(cpus.same_cpus("", "0"))

    def test_own_cpus_read_back(self):
        mine = cpus.cpus_allowed(os.getpid())
        self.assertEqual(cpus.parse_cpu_list(mine), os.sched_getaffinity(0))
        self.assertTrue(cpus.can_pin(mine))
        self.assertFalse(cpus.can_pin("100000"))


class ConsoleWatchTest(unittest.TestCase):
    def test_sees_the_report_once_it_is_written_even_split(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "console")
            watch = vm.ConsoleWatch(path)
            self.assertFalse(watch.hang_reported())
            with open(path, "ab") as f:
                f.write(b"[ 1.0] booting\n[ 9.0] stress: wri")
            self.assertFalse(watch.hang_reported())
            with open(path, "ab") as f:
                f.write(b"ter 2 hung in [<0>] request_wait_answer\n")
            self.assertTrue(watch.hang_reported())

    def test_other_lines_are_no_report(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "console")
            with open(path, "wb") as f:
                f.write(b"ok stress-writer-1: 20 ops\n# writer 1 hung: killed\n")
            self.assertFalse(vm.ConsoleWatch(path).hang_reported())


class CommandLine(unittest.TestCase):
    def parse(self, *argv):
        opts = vm_options.parse_args(list(argv))
        vm_options.validate(opts)
        return opts

    def test_share_options_go_to_the_share_described(self):
        opts = self.parse("--driver", "intree", "--share", "/a", "--queues", "3", "--share", "/b",
                          "--tag", "x", "--share", "/c", "--driver", "none", "--", "true")
        a, b, c = opts.shares
        self.assertEqual((a.dir, a.driver, a.tag, a.queues), ("/a", "intree", "share", "3"))
        # a later share: the first's driver and device, defaults otherwise
        self.assertEqual((b.dir, b.driver, b.device, b.tag, b.queues), ("/b", "intree", "ref", "x", "1"))
        self.assertEqual((c.driver, c.tag, c.suffix), ("none", "share2", ".share2"))
        self.assertEqual(a.suffix, "")

    def test_pin_defaults(self):
        opts = self.parse("--pin", "0", "--pin-guest", "", "--", "true")
        self.assertEqual((opts.pin_device, opts.pin_guest), ("0", ""))

    def test_bad_values(self):
        cases = {
            ("--cpus", "2"): "UML 6.12 is uniprocessor",
            ("--kernel", "7.3", "--cpus", "9"): "UML 7.3 takes --cpus 1 to 8",
            ("--share", "/a", "--share", "/b", "--tag", "hostroot"): "share hostroot: a tag is",
            ("--share", "/a", "--share", "/b", "--tag", "share"): "two shares with the tag share",
            ("--substrate", "qemu", "--device", "virtiofsd", "--queues", "2"): "one request queue",
            ("--timeout", "soon"): "--timeout S",
            ("--pin-vcpus", "0-1"): "--pin-vcpus is for UML 7.3",
            ("--substrate", "qemu", "--kernel", "libkrunfw"): "needs --substrate qemu --machine microvm",
            ("--substrate", "qemu", "--machine", "microvm", "--kernel", "libkrunfw", "--cpus", "17"):
                "takes --cpus 1 to 16",
            ("--substrate", "qemu", "--machine", "microvm", "--kernel", "libkrunfw-stock"):
                "libkrunfw-stock has no virtio_fs_sync",
        }
        for argv, message in cases.items():
            with self.assertRaises(vm_options.UsageError, msg=argv) as e:
                self.parse(*argv, "--", "true")
            self.assertIn(message, str(e.exception))

    def test_libkrun_command_line(self):
        # libkrun's line first, then the runner's; the built-in driver's
        # parameters by its name
        opts = self.parse("--substrate", "qemu", "--machine", "microvm", "--kernel", "libkrunfw",
                          "--sync", "off", "--module-param", "forget_delay_ms=0", "--", "true")
        run = vm.Run(opts, "/repo")
        run.dir = "/run"
        line = vm.krun_command_line(run, "x=1")
        self.assertTrue(line.startswith(vm.LIBKRUN_CMDLINE + " reboot=t init_on_alloc=1 "))
        self.assertIn(" virtio_fs_sync.sync=0 virtio_fs_sync.forget_delay_ms=0 ", line)
        self.assertTrue(line.endswith(" x=1"))
        self.assertNotIn("initcall_blacklist", line)

    def test_vcpu_pins(self):
        # the main thread and the next ones by tid, round robin over the list
        self.assertEqual(vm.vcpu_pins([12, 10, 15, 11], 2, "0-1"), [(10, 0), (11, 1)])
        self.assertEqual(vm.vcpu_pins([10, 11, 12], 3, "1"), [(10, 1), (11, 1), (12, 1)])
        self.assertEqual(vm.vcpu_pins([10, 11, 12, 13], 4, "0,1"), [(10, 0), (11, 1), (12, 0), (13, 1)])
        # not all vCPU threads started yet: nothing pinned
        self.assertEqual(vm.vcpu_pins([10], 2, "0-1"), [])
        opts = self.parse("--kernel", "7.3", "--cpus", "2", "--pin-vcpus", "0-1", "--", "true")
        self.assertEqual(opts.pin_vcpus, "0-1")

    def test_qemu_choice(self):
        q = ("--substrate", "qemu")
        # sync on (the default) with ours on the reference device: patched
        self.assertEqual(self.parse(*q, "--", "true").qemu, "patched")
        for argv in (("--sync", "off"), ("--driver", "intree"), ("--sync-queues", "0"),
                     ("--device", "virtiofsd"), ("--qemu", "stock")):
            self.assertEqual(self.parse(*q, *argv, "--", "true").qemu, "stock", msg=argv)
        # a later share that can run sync queues is enough
        opts = self.parse(*q, "--driver", "intree", "--share", "/a", "--share", "/b", "--driver", "ours",
                          "--", "true")
        self.assertEqual(opts.qemu, "patched")
        self.assertEqual(self.parse("--", "true").qemu, "")
        share = opts.shares[1]
        share.dev_opts, share.qemu_props = "--sync-bit=5 --workers=2", "sync-timeout-ms=200"
        self.assertEqual(vm.patched_props(opts, share),
                         ",num-sync-queues=2,sync-feature-bit=5,sync-timeout-ms=200")
        self.assertEqual(vm.patched_props(opts, opts.shares[0]), "")
        cases = {
            ("--qemu", "patched"): "--qemu is for --substrate qemu",
            q + ("--qemu", "new"): "--qemu stock|patched",
            q + ("--qemu", "stock", "--qemu-props", "a=b"): "--qemu-props needs --qemu patched",
            q + ("--qemu-props", "a=b;c"): "--qemu-props a=b,c=d",
        }
        for argv, message in cases.items():
            with self.assertRaises(vm_options.UsageError, msg=argv) as e:
                self.parse(*argv, "--", "true")
            self.assertIn(message, str(e.exception))

    def test_accel(self):
        q = ("--substrate", "qemu")
        self.assertEqual(self.parse(*q, "--", "true").accel, "tcg")
        self.assertEqual(self.parse(*q, "--accel", "kvm", "--", "true").accel, "kvm")
        self.assertEqual(self.parse(*q, "--accel", "tcg", "--tcg-thread", "multi", "--", "true").tcg_thread,
                         "multi")
        cases = {
            q + ("--accel", "hvf"): "--accel kvm|tcg",
            q + ("--accel", "kvm", "--tcg-thread", "single"): "--tcg-thread is for TCG, not --accel kvm",
            ("--accel", "kvm"): "--accel kvm is for --substrate qemu",
        }
        for argv, message in cases.items():
            with self.assertRaises(vm_options.UsageError, msg=argv) as e:
                self.parse(*argv, "--", "true")
            self.assertIn(message, str(e.exception))
        self.assertIn("--accel kvm|tcg", vm_options.USAGE)

    def test_no_command(self):
        with self.assertRaises(vm_options.UsageError):
            vm_options.parse_args(["--sync", "off"])
        with self.assertRaises(vm_options.UsageError):
            vm_options.parse_args(["--sync"])

    def test_timeout(self):
        self.assertEqual(vm_options.parse_timeout("1.5m"), 90)
        self.assertIsNone(vm_options.parse_timeout("0"))


class GuestFiles(unittest.TestCase):
    def test_command_survives_sh(self):
        args = ["printf", "%s|", "it's", "a b", "$HOME", "\\n", "new\nline", ""]
        script = b"".join(b" " + vm.shell_quote(a) for a in args)
        out = subprocess.run(["sh", "-c", "exec" + script.decode()], stdout=subprocess.PIPE, check=True)
        self.assertEqual(out.stdout.decode(), "".join(a + "|" for a in args[2:]))

    def test_splat_context_is_greps(self):
        lines = ["line %d%s\n" % (i, " WARNING: x" if i in (3, 10, 40, 41, 90) else "") for i in range(120)]
        data = "".join(lines).encode()
        with tempfile.NamedTemporaryFile() as f:
            f.write(data)
            f.flush()
            want = subprocess.run("grep -E -A 15 '%s' %s | head -n 80" % (vm.SPLAT_RE.pattern, f.name),
                                  shell=True, stdout=subprocess.PIPE).stdout
        got = vm.grep_with_context(data.splitlines(keepends=True), vm.SPLAT_RE, 15, 80)
        self.assertEqual(got, want)
        self.assertTrue(re.search(rb"^--$", got, re.M))


class QemuCommand(unittest.TestCase):
    def argv(self, *options):
        opts = vm_options.parse_args(["--substrate", "qemu", *options, "--", "true"])
        vm_options.validate(opts)
        run = vm.Run(opts, "/repo")
        run.dir = "/run"
        return vm.qemu_argv(run, "qemu-system-x86_64", ["-machine", "pc"], ["-kernel", "k"], "console=ttyS0",
                            "vhost-user-fs-pci", ["-serial", "file:/run/console"])

    def after(self, argv, option):
        return argv[argv.index(option) + 1]

    def test_tcg_by_default(self):
        argv = self.argv()
        self.assertEqual((self.after(argv, "-accel"), self.after(argv, "-cpu")), ("tcg,thread=single", "max"))
        argv = self.argv("--tcg-thread", "multi", "--accel", "tcg")
        self.assertEqual(self.after(argv, "-accel"), "tcg,thread=multi")

    def test_kvm(self):
        argv = self.argv("--accel", "kvm")
        self.assertEqual((self.after(argv, "-accel"), self.after(argv, "-cpu")), ("kvm", "host"))
        self.assertEqual((argv.count("-accel"), argv.count("-cpu")), (1, 1))
        self.assertFalse([a for a in argv if "tcg" in a])


class CommandLineFiles(unittest.TestCase):
    """The run directory keeps each started process's command line."""

    def run_in(self, d, *options):
        opts = vm_options.parse_args([*options, "--", "true"])
        vm_options.validate(opts)
        run = vm.Run(opts, "/repo")
        run.dir = d
        return run

    def read_argv(self, run, name):
        with open(run.path(name)) as f:
            text = f.read()
        self.assertTrue(text.endswith("\n") and text.count("\n") == 1, text)
        return shlex.split(text)

    def test_quoted_as_the_shell_reads_it(self):
        argv = ["qemu", "-append", "console=ttyS0 a='b c'", "it's", "$HOME", ""]
        with tempfile.TemporaryDirectory() as d:
            run = self.run_in(d)
            vm.write_cmdline(run, "qemu-cmdline", argv)
            self.assertEqual(self.read_argv(run, "qemu-cmdline"), argv)
            with open(run.path("qemu-cmdline")) as f:
                out = subprocess.run("printf '%s|' " + f.read(), shell=True, stdout=subprocess.PIPE,
                                     check=True)
            self.assertEqual(out.stdout.decode(), "".join(a + "|" for a in argv))

    def test_qemu_cmdline(self):
        with tempfile.TemporaryDirectory() as d:
            run = self.run_in(d, "--substrate", "qemu", "--accel", "kvm")
            with mock.patch.object(vm, "run_guest") as run_guest:
                vm.run_qemu_guest(run, "qemu-system-x86_64", ["-machine", "pc"], ["-kernel", "k"],
                                  "console=ttyS0 x='1 2'", "vhost-user-fs-pci", [])
            started = run_guest.call_args[0][1]
            self.assertEqual(self.read_argv(run, "qemu-cmdline"), started)
            self.assertIn("console=ttyS0 x='1 2'", started)

    def test_device_cmdline_per_share(self):
        class Child:
            pid = os.getpid()

        with tempfile.TemporaryDirectory() as d:
            # a share's path with a blank and a quote: the file must quote it
            share_dir = os.path.join(d, "it's a share")
            os.mkdir(share_dir)
            run = self.run_in(d, "--substrate", "qemu", "--share", share_dir,
                              "--dev-opts", "--faults --workers=2",
                              "--share", share_dir, "--device", "virtiofsd", "--tag", "b")
            started = []

            def start_child(children, name, argv, output, cpus=None):
                started.append((name, argv))
                return Child()

            binary = "/repo/vhost-user-fs/vhost-user-fs"
            with mock.patch.object(vm.proc, "start_child", start_child), \
                    mock.patch.object(vm, "wait_socket", return_value=True), \
                    mock.patch.object(vm, "build_reference_device", return_value=binary):
                for share in run.opts.shares:
                    vm.start_share_device(run, share)
                vm.start_host_tree(run)
            self.assertEqual([n for n, _ in started], ["device", "device.b", "hostroot"])
            ref, virtiofsd, hostroot = (a for _, a in started)
            self.assertEqual(self.read_argv(run, "device-cmdline"), ref)
            self.assertEqual(ref[0], binary)
            self.assertIn("--shared-dir=" + share_dir, ref)
            self.assertEqual(ref[-2:], ["--faults", "--workers=2"])
            self.assertEqual(self.read_argv(run, "device-cmdline.b"), virtiofsd)
            self.assertEqual(virtiofsd[0], vm.VIRTIOFSD)
            self.assertEqual(self.read_argv(run, "hostroot-cmdline"), hostroot)

    def test_documented(self):
        for name in ("qemu-cmdline", "device-cmdline", "device-cmdline.share1", "hostroot-cmdline",
                     "device-cmdline.root"):
            self.assertIn(name, vm_options.USAGE)


class Initramfs(unittest.TestCase):
    def test_dependencies_first(self):
        entries = [("kernel/fs/fuse/virtiofs.ko.xz", ["kernel/fs/fuse/fuse.ko.xz", "kernel/a/virtio.ko"]),
                   ("kernel/fs/fuse/fuse.ko.xz", []),
                   ("kernel/a/virtio.ko", []),
                   ("kernel/a/virtio_pci.ko.zst", ["kernel/a/virtio.ko"])]
        paths = initramfs.module_closure(entries, ["virtio_pci", "nosuch", "virtiofs"])
        self.assertEqual(list(dict.fromkeys(paths)), ["kernel/a/virtio.ko", "kernel/a/virtio_pci.ko.zst",
                                                      "kernel/fs/fuse/fuse.ko.xz",
                                                      "kernel/fs/fuse/virtiofs.ko.xz"])


if __name__ == "__main__":
    unittest.main()


class ReferenceDevice(unittest.TestCase):
    def test_stale_binary_is_rebuilt(self):
        # A binary older than its source, as after a pull: a boot must not
        # run it (make bench once ran every boot on a device that predated
        # an option the harness passed).
        with tempfile.TemporaryDirectory() as repo:
            src = os.path.join(repo, "vhost-user-fs")
            os.mkdir(src)
            with open(os.path.join(src, "Makefile"), "w") as f:
                f.write("vhost-user-fs: main.c\n\tcp main.c vhost-user-fs\n")
            binary = os.path.join(src, "vhost-user-fs")
            with open(binary, "w") as f:
                f.write("old\n")
            os.chmod(binary, 0o755)
            os.utime(binary, (1, 1))
            with open(os.path.join(src, "main.c"), "w") as f:
                f.write("new\n")
            self.assertEqual(vm.build_reference_device(repo), binary)
            with open(binary) as f:
                self.assertEqual(f.read(), "new\n")
