# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of the build workload (no guest is booted): the
generator bench/gen-build.py, bench/sizes' build columns, the report's
build rows and title. python3 -m unittest discover -s bench/benchlib -t bench"""
import importlib.util
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

from benchlib import metrics, report_common, sizes

GEN = os.path.join(sizes.REPO, "bench", "gen-build.py")


def generator():
    spec = importlib.util.spec_from_file_location("gen_build", GEN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Generator(unittest.TestCase):
    def test_same_arguments_same_bytes(self):
        g = generator()
        self.assertEqual(g.tarball(7, 3), g.tarball(7, 3))
        self.assertNotEqual(g.tarball(7, 3), g.tarball(7, 4))

    def test_layout(self):
        g = generator()
        with tarfile.open(fileobj=io.BytesIO(g.tarball(5, 1))) as t:
            names = [m.name for m in t.getmembers() if m.isfile()]
            mk = t.extractfile("gen/Makefile").read().decode()
        self.assertEqual(sum(n.endswith(".h") for n in names), g.HEADERS)
        self.assertEqual(sorted(n for n in names if n.endswith(".c")),
                         ["gen/main.c"] + ["gen/src/d00/m%04d.c" % i for i in range(5)])
        self.assertIn("-MMD -MP", mk)
        self.assertEqual(mk.count("include/i"), g.INCDIRS)

    @unittest.skipUnless(shutil.which("make") and shutil.which("cc"), "needs make and cc")
    def test_builds_then_nothing_to_do(self):
        g = generator()
        with tempfile.TemporaryDirectory() as d:
            with tarfile.open(fileobj=io.BytesIO(g.tarball(3, 1))) as t:
                t.extractall(d)
            top = os.path.join(d, "gen")
            r = subprocess.run(["make", "-C", top], capture_output=True, text=True, check=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(os.path.exists(os.path.join(top, "prog")))
            self.assertTrue(os.path.exists(os.path.join(top, "src", "d00", "m0000.d")))
            r = subprocess.run(["make", "-C", top], capture_output=True, text=True, check=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("is up to date", r.stdout)


class Sizes(unittest.TestCase):
    def test_build_columns(self):
        for name, s in sizes.load().items():
            self.assertGreater(s["build_files"], 0, name)
            self.assertIn("build_seed", s)


class Rows(unittest.TestCase):
    LINES = [{"phase": "build-make", "rc": 0, "elapsed_s": 9.5, "user_s": 1.0, "sys_s": 8.0},
             {"phase": "build-noop", "rc": 0, "elapsed_s": 0.4, "user_s": 0.1, "sys_s": 0.3}]

    def test_make_and_noop_rows(self):
        rows = {r[0]: r[3] for wid, _, rs in metrics.workloads() if wid == "build" for r in rs}
        run = {"lines": self.LINES}
        want = {"make elapsed, s": 9.5, "make user CPU (rusage), s": 1.0,
                "make system CPU (rusage), s": 8.0, "no-op make elapsed, s": 0.4,
                "no-op make user CPU (rusage), s": 0.1, "no-op make system CPU (rusage), s": 0.3}
        for name, v in want.items():
            self.assertAlmostEqual(rows[name](run), v, msg=name)

    def test_title(self):
        _, title, _ = next(w for w in metrics.workloads() if w[0] == "build")
        t = report_common.build_title({"build": "gen", "make_dir": "gen", "tarball": "g.tar.gz"}, title)
        self.assertIn("bench/gen-build.py; g.tar.gz", t)
        self.assertIn("-C gen", t)
        self.assertIn("make again", t)
        t = report_common.build_title({"make_dir": "tools/objtool"}, title, noop=False)
        self.assertIn("objtool and libsubcmd", t)
        self.assertNotIn("make again", t)


if __name__ == "__main__":
    unittest.main()
