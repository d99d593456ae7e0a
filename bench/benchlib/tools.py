# SPDX-License-Identifier: GPL-2.0
"""What the host-side bench programs share: the repository's paths, a
logger, and the builds and commands they call (tests/vm/run through its
command line, the stable interface)."""
import os
import subprocess
import sys

from benchlib.sizes import REPO

CACHE = os.environ.get("VFS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "virtio-fs-sync")
VM_RUN = os.path.join(REPO, "tests", "vm", "run")
BENCH = os.path.join(REPO, "bench")
BUILD = os.path.join(REPO, "build", "bench")


class Fail(Exception):
    """A step that cannot go on: its message, and exit status 1."""


def logger(name, stream=sys.stderr):
    def log(*words):
        print("%s: %s" % (name, " ".join(str(w) for w in words)), file=stream, flush=True)
    return log


def output(cmd, **kw):
    """CMD's stdout without its trailing newline ('' if it cannot run)."""
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              check=False, **kw).stdout.rstrip("\n")
    except OSError:
        return ""


def git_describe():
    return output(["git", "-C", REPO, "describe", "--always", "--dirty"])


def install_deps():
    """What building and booting need, as make check installs it
    (tests/setup/install-deps.sh: apt-get, only what is missing)."""
    r = subprocess.run([os.path.join(REPO, "tests", "setup", "install-deps.sh")], check=False)
    if r.returncode != 0:
        raise Fail("cannot install the build dependencies (tests/setup/install-deps.sh)")


def build_uml(flavor, version=None):
    """The cached UML kernel's path (tests/setup/build-uml.sh builds it on first use)."""
    cmd = [os.path.join(REPO, "tests", "setup", "build-uml.sh"), flavor] + ([version] if version else [])
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if r.returncode != 0:
        raise Fail("cannot build the UML%s kernel" % (" " + version if version else ""))
    return r.stdout.strip()


def uml_build_key(flavor, version=None):
    parts = [CACHE, "uml"] + ([version] if version else []) + [flavor, ".key"]
    try:
        with open(os.path.join(*parts)) as f:
            return f.read().rstrip("\n")
    except OSError:
        return ""


def bench_tool(name, *libs):
    """build/bench/NAME from bench/NAME.c, compiled when missing or older
    than its source."""
    src = os.path.join(BENCH, name + ".c")
    out = os.path.join(BUILD, name)
    os.makedirs(BUILD, exist_ok=True)
    if not os.access(out, os.X_OK) or os.path.getmtime(src) > os.path.getmtime(out):
        if subprocess.run(["gcc", "-O2", "-Wall", "-o", out, src] + list(libs),
                          check=False).returncode:
            raise Fail("cannot build %s" % name)
    return out


def vfsbench():
    """build/bench/vfsbench (the guest's timing loops)."""
    return bench_tool("vfsbench", "-lm")


def hostcost():
    """build/bench/hostcost (the host's hand-off costs)."""
    return bench_tool("hostcost", "-pthread")


def merge_dev_opts(args):
    """ARGS with every --dev-opts joined into one, last (tests/vm/run keeps
    only the last --dev-opts of a share)."""
    out, dev = [], []
    i = 0
    while i < len(args):
        if args[i] == "--dev-opts" and i + 1 < len(args):
            dev.append(args[i + 1])
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out + (["--dev-opts", " ".join(dev)] if dev else [])


def vm_run(args, guest, stderr=None):
    """tests/vm/run ARGS -- GUEST...; its exit status."""
    return subprocess.run([VM_RUN] + list(args) + ["--"] + list(guest), stderr=stderr,
                          check=False).returncode


def tail(path, n):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []
