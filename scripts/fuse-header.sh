#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fuse-header.sh KDIR OUTDIR [SRCDIR]
#
# The driver needs fs/fuse/fuse_i.h, which kernel headers packages do not
# ship. Extract it from the linux-source-X.Y tarball of the kernel in KDIR
# (Debian's linux-source-X.Y package installs /usr/src/linux-source-X.Y.tar.xz;
# SRCDIR overrides /usr/src) into OUTDIR/fs/fuse, with the tarball's top
# Makefile beside it so the build can check that the versions match.
# This is what a DKMS build on a Debian guest relies on.
set -eu
kdir=$1
out=$2
srcdir=${3:-/usr/src}

# Called from make (DKMS, make check), a parent's MAKEFLAGS would add
# "Entering directory" lines: clear it and keep only the version line.
series=$(MAKEFLAGS= MAKELEVEL= make -s --no-print-directory -C "$kdir" kernelversion 2>/dev/null |
	grep -E '^[0-9]+\.[0-9]+' | head -n 1 | cut -d. -f1,2)
[ -n "$series" ] || { echo "fuse-header.sh: cannot read the kernel version of $kdir" >&2; exit 1; }
tarball=$srcdir/linux-source-$series.tar.xz
if [ ! -f "$tarball" ]; then
	echo "virtio_fs_sync: fuse_i.h is needed from the kernel's own source:" \
		"install linux-source-$series (apt-get install linux-source-$series)" \
		"or pass FUSE_SRC=<linux-source>/fs/fuse" >&2
	exit 1
fi
top=$(basename "$tarball" .tar.xz)
rm -rf "$out"
mkdir -p "$out"
tar -xJf "$tarball" -C "$out" --strip-components=1 --wildcards "$top/fs/fuse/*.h" "$top/Makefile"
echo "virtio_fs_sync: fuse_i.h taken from $tarball" >&2
