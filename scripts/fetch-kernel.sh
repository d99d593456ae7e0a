#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-kernel.sh SERIES  (SERIES = 6.12 or 6.1)
#
# Fetches Debian's cloud-amd64 kernel image, headers and the matching
# linux-source package for SERIES with `apt-get download`, unpacks them with
# `dpkg -x` into a cache outside the repository and prints the directory.
# A second call finds everything in the cache and downloads nothing.
#
# Layout of $VFS_CACHE/kernels/SERIES/:
#   version      Debian version of image, headers and source (all equal)
#   release      kernel release (uname -r of the image)
#   root/        image + headers + kbuild unpacked
#   kdir         -> the headers' build directory (KDIR for out-of-tree builds)
#   vmlinuz      -> the kernel image
#   modules      -> /lib/modules/RELEASE of the image
#   fuse/        fs/fuse/*.h from the matching linux-source package
#   source.tar.xz -> the linux-source tarball (UML builds unpack it)
set -euo pipefail

series=${1:?usage: fetch-kernel.sh 6.12|6.1}
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
dir=$cache/kernels/$series
debs=$cache/debs
# SERIES-rt (6.12-rt, 6.1-rt): Debian's PREEMPT_RT flavour, rt-amd64
# instead of cloud-amd64, from the same source; headers-common is common-rt.
flavour=cloud
case $series in *-rt) flavour=rt series=${series%-rt} ;; esac

if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi

log() { echo "fetch-kernel: $*" >&2; }

candidate() {
	apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }'
}

srcpkg=linux-source-$series
srcver=$(candidate "$srcpkg")
if [ -z "$srcver" ] || [ "$srcver" = "(none)" ]; then
	log "no $srcpkg in apt's lists; running apt-get update"
	apt-get update -q >&2
	srcver=$(candidate "$srcpkg")
fi
[ -n "$srcver" ] && [ "$srcver" != "(none)" ] || {
	log "cannot find $srcpkg in Debian's package lists"
	exit 1
}

# The image whose version equals the source's: 6.12 packages are named
# 6.12.N+deb12-cloud-amd64, 6.1 ones 6.1.0-ABI-cloud-amd64.
case $series in
6.12) pattern='^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$' ;;
6.1) pattern='^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' ;;
*) log "unknown series $series"; exit 1 ;;
esac
pattern=${pattern/-cloud-/-$flavour-}
image=
for pkg in $(apt-cache search --names-only "$pattern" | awk '{ print $1 }' | sort -rV); do
	if apt-cache madison "$pkg" | awk -v v="$srcver" '$3 == v { f = 1 } END { exit !f }'; then
		image=$pkg
		break
	fi
done
[ -n "$image" ] || { log "no cloud-amd64 image with version $srcver"; exit 1; }
release=${image#linux-image-}
release=${release%-unsigned}
abi=${release%-"$flavour"-amd64}
kbuild=linux-kbuild-$series
[ "$series" = 6.12 ] && kbuild=linux-kbuild-$abi

pkgs="$image=$srcver linux-headers-$release=$srcver linux-headers-$abi-common=$srcver $kbuild=$srcver $srcpkg=$srcver"
log "series $series: $release, version $srcver"
[ $flavour = rt ] && pkgs=${pkgs/-common=/-common-rt=}

mkdir -p "$debs"
for p in $pkgs; do
	name=${p%%=*}
	ls "$debs/${name}_"*.deb >/dev/null 2>&1 && continue
	log "downloading $name"
	(cd "$debs" && apt-get download -q "$p" >&2 2>/dev/null) ||
		(cd "$debs" && apt-get download "$p" >&2)
done

rm -rf "$dir"
mkdir -p "$dir/root"
for p in $pkgs; do
	name=${p%%=*}
	[ "$name" = "$srcpkg" ] && continue
	dpkg -x "$(ls "$debs/${name}_"*.deb | head -n1)" "$dir/root"
done
dpkg -x "$(ls "$debs/${srcpkg}_"*.deb | head -n1)" "$dir/srcpkg"

kdir=$dir/root/usr/src/linux-headers-$release
# The arch headers include the common tree and kbuild by absolute path.
sed -i "s|/usr/src/|$dir/root/usr/src/|g" "$kdir/Makefile"
for f in "$kdir/scripts" "$kdir/tools"; do
	if [ -L "$f" ]; then
		t=$(readlink "$f")
		case $t in /*) ln -sfn "$dir/root$t" "$f" ;; esac
	fi
done
# The image package leaves modules.dep to its postinst.
depmod -b "$dir/root" "$release"
ln -sfn "$kdir" "$dir/kdir"
ln -sfn "$dir/root/boot/vmlinuz-$release" "$dir/vmlinuz"
ln -sfn "$dir/root/lib/modules/$release" "$dir/modules"
tarball=$(ls "$dir"/srcpkg/usr/src/linux-source-*.tar.xz)
ln -sfn "$tarball" "$dir/source.tar.xz"

top=$(basename "$tarball" .tar.xz)
mkdir -p "$dir/fuse"
tar -xJf "$tarball" -C "$dir/fuse" --strip-components=3 --wildcards "$top/fs/fuse/*.h"
tar -xJf "$tarball" -C "$dir" --strip-components=1 "$top/Makefile"
mv "$dir/Makefile" "$dir/source.Makefile"
echo "$srcver" >"$dir/version"
echo "$release" >"$dir/release"
touch "$dir/.done"
log "ready in $dir"
echo "$dir"
