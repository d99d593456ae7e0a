#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-libkrunfw-stock.sh: the kernel libkrun users boot today, as the
# baseline of every libkrunfw comparison: Debian's binary package
# libkrunfw5 (sid, through the private apt configuration of
# scripts/apt-private.sh), whose libkrunfw.so.5 returns the kernel from
# krunfw_get_kernel() as a flat image with its load and entry addresses.
# That image keeps the kernel's Xen PVH entry note; wrapped in a minimal
# ELF (one PT_LOAD at the load address, one PT_NOTE on the note) QEMU boots
# it through the note, as it boots the vmlinux of `make libkrunfw`.
# Cached under $VFS_CACHE/libkrunfw/stock-VERSION/ (with a lock and apt
# lists of its own: it need not wait for a build-libkrunfw.sh); prints
# that directory (vmlinux, libkrunfw.so.5, version).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
base=$cache/libkrunfw
log() { echo "fetch-libkrunfw-stock: $*" >&2; }
die() { log "$*"; exit 1; }

mkdir -p "$base"
exec 8>"$base/stock.lock"
flock 8
# shellcheck source=scripts/apt-private.sh
. "$repo/scripts/apt-private.sh"
APT_PRIVATE_DIR=$base/apt-stock apt_private_init --src trixie trixie-updates trixie-backports sid bookworm-backports
ver=$(apt-cache "${APT_OPTS[@]}" policy libkrunfw5 2>/dev/null | awk '/Candidate:/ { print $2 }')
[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "no libkrunfw5 in Debian's package lists"
out=$base/stock-$ver
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi
rm -rf "$out"
mkdir -p "$out/deb"
(cd "$out/deb" && apt-get "${APT_OPTS[@]}" download -q "libkrunfw5=$ver" >&2) ||
	die "cannot download libkrunfw5 $ver"
dpkg-deb -x "$out"/deb/libkrunfw5_*.deb "$out/root"
lib=$(find "$out/root" -name 'libkrunfw.so.5*' -type f | head -n 1)
[ -n "$lib" ] || die "libkrunfw5 $ver has no libkrunfw.so.5"
cp "$lib" "$out/libkrunfw.so.5"
python3 - "$out/libkrunfw.so.5" "$out/vmlinux" <<'PY' || die "cannot make an ELF of libkrunfw5's kernel"
import ctypes
import struct
import sys

lib = ctypes.CDLL(sys.argv[1])
get = lib.krunfw_get_kernel
get.restype = ctypes.c_void_p
get.argtypes = [ctypes.POINTER(ctypes.c_size_t)] * 3
load, entry, size = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_size_t()
image = ctypes.string_at(get(ctypes.byref(load), ctypes.byref(entry), ctypes.byref(size)), size.value)

# XEN_ELFNOTE_PHYS32_ENTRY (18), owner "Xen": the entry point, a 4- or
# 8-byte value (x86-64 kernels write a .quad)
for desc in (8, 4):
    at = image.find(struct.pack("<III4s", 4, desc, 18, b"Xen\0"))
    if at >= 0:
        break
else:
    sys.exit("no PVH entry note in the kernel image")
ehdr, phdr, off = 64, 56, 4096
out = bytearray(struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                            2, 62, 1, entry.value, ehdr, 0, 0, ehdr, phdr, 2, 0, 0, 0))
out += struct.pack("<IIQQQQQQ", 1, 7, off, load.value, load.value, len(image), len(image), 4096)
out += struct.pack("<IIQQQQQQ", 4, 4, off + at, load.value + at, load.value + at,
                   16 + desc, 16 + desc, 4)
out += bytes(off - len(out)) + image
with open(sys.argv[2], "wb") as f:
    f.write(out)
print("fetch-libkrunfw-stock: kernel of %d bytes at 0x%x, entry 0x%x, PVH note at +0x%x"
      % (size.value, load.value, entry.value, at), file=sys.stderr)
PY
echo "$ver" >"$out/version"
rm -rf "$out/deb" "$out/root"
touch "$out/.done"
echo "$out"
