# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of make bench's share directory and per-boot host state
(no guest is booted): python3 -m unittest discover -s bench/benchlib -t bench"""
import os
import tempfile
import unittest

from benchlib import bench

MEMINFO = "MemTotal:       24683652 kB\nDirty:              8272 kB\nWriteback:           128 kB\n"
# cpu user nice system idle iowait irq softirq steal guest guest_nice
STAT0 = "cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n"
STAT1 = "cpu  200 0 100 1530 30 0 0 140 0 0\ncpu0 1 2 3\n"


class ShareDir(unittest.TestCase):
    def test_default_leaves_tests_vm_run_its_own(self):
        s = bench.Settings({})
        self.assertEqual(s.share_dir, "")
        self.assertEqual(bench.share_args(s), ([], None))

    def test_fresh_dir_per_boot_under_it(self):
        with tempfile.TemporaryDirectory() as base:
            s = bench.Settings({"BENCH_SHARE_DIR": base})
            args1, d1 = bench.share_args(s)
            args2, d2 = bench.share_args(s)
            self.assertEqual(args1, ["--share", d1])
            self.assertNotEqual(d1, d2)
            for d in (d1, d2):
                self.assertEqual(os.path.dirname(d), os.path.realpath(base))
                self.assertEqual(os.listdir(d), [])

    def test_missing_dir_is_refused_before_any_boot(self):
        with self.assertRaises(ValueError):
            bench.Settings({"BENCH_SHARE_DIR": "/nonexistent/share/base"})

    def test_environment_names_path_and_fs_type(self):
        with tempfile.TemporaryDirectory() as base:
            line = bench.share_fs(base)
            self.assertTrue(line.startswith(os.path.realpath(base) + " ("), line)
            self.assertTrue(line.endswith(")") and len(line) > len(base) + 3, line)
        self.assertTrue(bench.share_fs("").startswith(
            "tests/vm/run's default, a fresh temp dir in %s (" % (os.environ.get("TMPDIR") or "/tmp")))


    def test_mount_type_of_the_longest_mount_point(self):
        mounts = ("/dev/vda / ext4 rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n"
                  "tmpfs /dev/shmx tmpfs rw 0 0\n")
        self.assertEqual(bench.mount_of("/dev/shm", mounts), ", tmpfs on tmpfs")
        self.assertEqual(bench.mount_of("/tmp", mounts), ", ext4 on /dev/vda")
        self.assertEqual(bench.mount_of("/tmp", ""), "")


class LibkrunRows(unittest.TestCase):
    def test_default_has_them_only_with_a_recipe(self):
        with tempfile.TemporaryDirectory() as src:
            s = bench.Settings({"LIBKRUNFW_SRC": src})
            self.assertIn("k-sync", s.qemu_configs.split())
            self.assertIn("k-stock", s.qemu_configs.split())
            s = bench.Settings({"LIBKRUNFW_SRC": os.path.join(src, "none")})
            self.assertFalse([c for c in s.qemu_configs.split() if c.startswith("k-")])
            self.assertIn("qs-ours-sync", s.qemu_configs.split())

    def test_asked_for_they_stay(self):
        s = bench.Settings({"LIBKRUNFW_SRC": "/nonexistent", "BENCH_QEMU_CONFIGS": "k-stock k-sync"})
        self.assertEqual(s.qemu_configs, "k-stock k-sync")

    def test_boot_args_are_libkruns(self):
        args = bench.qemu_args(bench.Settings({}), "k-sync")
        # after qemu_args' default kernel: the runner takes the last one given
        kernels = [args[i + 1] for i, a in enumerate(args) if a == "--kernel"]
        self.assertEqual(kernels[-1], "libkrunfw")
        self.assertIn("microvm", args)


class SmpSize(unittest.TestCase):
    def sizes(self, env):
        s = bench.Settings(env)
        return [g[g.index("--size") + 1] for g in
                (bench.boot_args(s, k, c)[1] for k, c in
                 (("main", "intree"), ("smp", "smp-intree")))]

    def test_defaults_to_bench_size(self):
        self.assertEqual(self.sizes({"BENCH_SIZE": "full"}), ["full", "full"])

    def test_smp_boots_take_their_own(self):
        self.assertEqual(self.sizes({"BENCH_SIZE": "full", "BENCH_SMP_SIZE": "reduced"}),
                         ["full", "reduced"])

    def test_bad_size_is_refused(self):
        with self.assertRaises(ValueError):
            bench.Settings({"BENCH_SMP_SIZE": "huge"})


class HostState(unittest.TestCase):
    def test_meminfo_and_stat_read(self):
        st = bench.host_state(MEMINFO, STAT0)
        self.assertEqual((st["dirty_kb"], st["writeback_kb"]), (8272, 128))
        self.assertEqual(st["cpu"], [100, 0, 50, 800, 10, 0, 0, 40, 0, 0])

    def test_steal_and_iowait_over_the_boot(self):
        d = bench.host_delta(bench.host_state(MEMINFO, STAT0), bench.host_state(MEMINFO, STAT1))
        # 1000 jiffies in all (guest time is inside user): steal 100, iowait 20
        self.assertEqual(d, {"steal_pct": 10.0, "iowait_pct": 2.0})

    def test_unreadable_state_gives_no_figures(self):
        self.assertEqual(bench.host_delta(bench.host_state("", ""), bench.host_state("", "")), {})


if __name__ == "__main__":
    unittest.main()


class SmpPinning(unittest.TestCase):
    def test_vcpus_pinned_one_cpu_each_by_default(self):
        # unpinned vCPU threads share one host CPU and spin on each other's
        # locks (bench/README.md, SMP UML 7.3)
        args = bench.uml_args(bench.Settings({}), "smp-intree")
        i = args.index("--pin-vcpus")
        self.assertEqual(args[i + 1], "0-%d" % ((os.cpu_count() or 1) - 1))
        args = bench.uml_args(bench.Settings({"BENCH_SMP_PIN_VCPUS": ""}), "smp-intree")
        self.assertNotIn("--pin-vcpus", args)
        self.assertNotIn("--pin-vcpus", bench.uml_args(bench.Settings({}), "intree"))


    def test_faithful_smp_pins_each_sync_handler_to_its_vcpu(self):
        args = bench.uml_args(bench.Settings({"BENCH_SMP_PIN_VCPUS": "0-1"}),
                              "smp-ours-sync-faithful")
        self.assertNotIn("--pin-device", args)  # started unpinned
        self.assertEqual(args[args.index("--pin-vcpus") + 1], "0-1")
        opts = args[args.index("--dev-opts") + 1].split()
        self.assertEqual(opts[:2], ["--workers=2", "--pin-sync=0,1"])
        others = sorted(set(range(os.cpu_count() or 1)) - {0, 1})
        self.assertEqual(opts[2:], ["--pin-workers=" + ",".join(map(str, others))]
                         if others else [])
        args = bench.uml_args(bench.Settings({}), "smp-ours-sync-faithful")
        self.assertEqual(args[args.index("--sync") + 1], "on")
        with self.assertRaises(bench.Fail):
            bench.uml_args(bench.Settings({"BENCH_SMP_PIN_VCPUS": ""}), "smp-ours-sync-faithful")
        # and the split one keeps its device option
        self.assertIn("--pin-device", bench.uml_args(bench.Settings({}), "smp-ours-sync"))


    def test_every_smp_configuration_has_a_worker_per_vcpu(self):
        # one device worker per vCPU for all of them: the worker model is
        # not what an SMP ratio measures
        for name in ("smp-intree", "smp-ours-sync", "smp-ours-sync-faithful"):
            args = bench.uml_args(bench.Settings({"BENCH_SMP_CPUS": "4"}), name)
            self.assertEqual(args.count("--dev-opts"), 1, name)
            self.assertIn("--workers=4", args[args.index("--dev-opts") + 1].split(), name)
        args = bench.uml_args(bench.Settings({}), "intree")
        self.assertNotIn("--workers", " ".join(args))


class PopulateMemory(unittest.TestCase):
    """Every boot on the reference device prefaults guest memory (device
    --populate-memory), and the env says so."""
    REFERENCE = (("main", "intree"), ("main", "ours-sync"), ("main", "ours-sync-inband"),
                 ("main", "ours-sync-faithful"), ("floor", "intree"), ("probe", "intree/pin0:1"),
                 ("smp", "smp-intree"), ("smp", "smp-ours-sync-inband"),
                 ("smp", "smp-ours-sync-faithful"),
                 ("qemu", "q-intree"), ("qemu", "q-ours"))

    def dev_opts(self, kind, c):
        args = bench.boot_args(bench.Settings({}), kind, c)[0]
        # tests/vm/run keeps only the last --dev-opts of a share
        opts = [args[i + 1] for i, a in enumerate(args) if a == "--dev-opts"]
        self.assertLessEqual(len(opts), 1, args)
        return opts[0].split() if opts else []

    def test_every_reference_device_boot_passes_it(self):
        for kind, c in self.REFERENCE:
            self.assertIn("--populate-memory", self.dev_opts(kind, c), (kind, c))
        # and keeps the options of its configuration
        self.assertIn("--no-kick-channel", self.dev_opts("main", "ours-sync-inband"))
        self.assertIn("--cache=never", self.dev_opts("floor", "intree"))
        self.assertTrue([o for o in self.dev_opts("main", "ours-sync-faithful")
                         if o.startswith("--pin-sync=")])

    def test_not_to_virtiofsd(self):
        for c in ("q-intree-virtiofsd", "q-ours-virtiofsd"):
            self.assertNotIn("--populate-memory", self.dev_opts("qemu", c))

    def test_env_records_it(self):
        env = dict(bench.device_env())
        self.assertIn("--populate-memory", env["device_memory"])
        self.assertIn("--populate-memory", env["device"])


class FreshMachine(unittest.TestCase):
    def test_dependencies_come_before_any_build(self):
        """make bench on a machine make check never ran on: the packages
        (kmod's depmod for the kernel build among them) first."""
        calls = []
        saved = {n: getattr(bench, n) for n in ("install_deps", "vfsbench", "gen_tarball")}

        def stop(*_):
            calls.append("vfsbench")
            raise bench.Fail("stop here")
        bench.install_deps = lambda: calls.append("install_deps")
        bench.vfsbench = stop
        try:
            self.assertEqual(bench.main(["bench"]), 1)
        finally:
            for n, f in saved.items():
                setattr(bench, n, f)
        self.assertEqual(calls, ["install_deps", "vfsbench"])

