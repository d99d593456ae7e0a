# SPDX-License-Identifier: GPL-2.0
"""The initramfs of a QEMU guest: busybox, tests/vm/qemu-init as /init,
and the modules a Debian kernel needs before it can mount virtio-fs
(listed in load order in /modules/order, with their parameters)."""
import gzip
import lzma
import os
import shutil
import subprocess


def read_modules_dep(moddir):
    """modules.dep as a list of (path, [dependency paths]), in file order."""
    entries = []
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            path, _, deps = line.rstrip("\n").partition(":")
            entries.append((path, deps.split()))
    return entries


def module_name(path):
    """kernel/fs/fuse/fuse.ko.xz -> fuse"""
    base = os.path.basename(path)
    return base.split(".ko", 1)[0]


def module_closure(entries, names):
    """The paths of the modules names, each after its dependencies (a module
    the kernel does not have as a module is left out; repeats possible)."""
    paths = []
    for name in names:
        found = next(((p, d) for p, d in entries if module_name(p) == name), None)
        if found is None:
            continue
        path, deps = found
        paths.extend(module_closure(entries, [module_name(d) for d in deps]))
        paths.append(path)
    return paths


def copy_module(src, dest_dir):
    """Copy a module into dest_dir, uncompressed; returns its file name."""
    base = os.path.basename(src)
    if base.endswith(".xz"):
        base = base[:-3]
        with lzma.open(src) as f, open(os.path.join(dest_dir, base), "wb") as out:
            shutil.copyfileobj(f, out)
    elif base.endswith(".zst"):
        base = base[:-4]
        with open(os.path.join(dest_dir, base), "wb") as out:
            subprocess.run(["zstd", "-qdc", src], stdout=out, check=True)
    else:
        shutil.copy(src, os.path.join(dest_dir, base))
    return base


def write_cpio_gz(root, dest):
    """root as a newc cpio archive (cpio -o -H newc), gzip -1'd to dest."""
    names = ["."]
    for top, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(top, root)
        prefix = "." if rel == "." else "./" + rel
        names.extend(prefix + "/" + n for n in sorted(dirs + files))
    listing = "".join(n + "\n" for n in names).encode()  # a few KB: fits the pipe
    cpio = subprocess.Popen(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    cpio.stdin.write(listing)
    cpio.stdin.close()
    with gzip.open(dest, "wb", compresslevel=1) as out:
        shutil.copyfileobj(cpio.stdout, out)
    if cpio.wait() != 0:
        raise subprocess.CalledProcessError(cpio.returncode, "cpio")


def make_initramfs(repo, run, kdir, wanted, ours_ko, ours_params):
    """RUN/initramfs.gz for the kernel in kdir: the modules wanted (names,
    with their dependencies) and, if ours_ko, virtio_fs_sync.ko loaded last
    with ours_params (a list of k=v)."""
    root = os.path.join(run, "initramfs")
    moddir = os.path.realpath(os.path.join(kdir, "modules"))
    for d in ("bin", "modules", "proc", "sys", "dev", "newroot"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
    shutil.copy(os.path.join(repo, "tests/vm/qemu-init"), os.path.join(root, "init"))
    mods = os.path.join(root, "modules")
    order = []
    paths = module_closure(read_modules_dep(moddir), wanted)
    for path in dict.fromkeys(paths):  # first of each, in order
        order.append(copy_module(os.path.join(moddir, path), mods))
    if ours_ko:
        shutil.copy(ours_ko, os.path.join(mods, "virtio_fs_sync.ko"))
        order.append("virtio_fs_sync.ko " + " ".join(ours_params))
    with open(os.path.join(mods, "order"), "w") as f:
        f.write("".join(line + "\n" for line in order))
    write_cpio_gz(root, os.path.join(run, "initramfs.gz"))
