#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-kernel.sh SERIES  (SERIES = 6.12, 6.1 or 7.3)
#
# Fetches Debian's cloud-amd64 kernel image, headers and the matching
# linux-source package for SERIES with `apt-get download`, unpacks them with
# `dpkg -x` into a cache outside the repository and prints the directory.
# A second call finds everything in the cache and downloads nothing.
# 6.12 and 6.1 come from the system's (bookworm) sources; 7.3 from trixie
# and trixie-backports through a private apt configuration under the cache
# (scripts/apt-private.sh), on the mirror the system's sources use. Modules
# for 7.3 build in a trixie root (scripts/build-root.sh; see the Makefile).
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

series=${1:?usage: fetch-kernel.sh 6.12|6.1|7.3}
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
dir=$cache/kernels/$series
debs=$cache/debs
# SERIES-rt (6.12-rt, 6.1-rt): Debian's PREEMPT_RT flavour, rt-amd64
# instead of cloud-amd64, from the same source; headers-common is common-rt.
flavour=cloud
case $series in *-rt) flavour=rt series=${series%-rt} ;; esac

# One fetch of a series at a time: a second one would remove the first's
# tree (rm -rf below) while it is being unpacked.
mkdir -p "$cache/kernels"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi

log() { echo "fetch-kernel: $*" >&2; }

# The system's sources, or a private configuration for newer suites.
APT_OPTS=()
case $series in
7.3)
	# shellcheck source=scripts/apt-private.sh
	. "$(dirname "$0")/apt-private.sh"
	apt_private_init trixie trixie-backports
	;;
esac

candidate() {
	apt-cache "${APT_OPTS[@]}" policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }'
}

srcpkg=linux-source-$series
srcver=$(candidate "$srcpkg")
if [ -z "$srcver" ] || [ "$srcver" = "(none)" ]; then
	log "no $srcpkg in apt's lists; running apt-get update"
	apt-get "${APT_OPTS[@]}" update -q >&2
	srcver=$(candidate "$srcpkg")
fi
[ -n "$srcver" ] && [ "$srcver" != "(none)" ] || {
	log "cannot find $srcpkg in Debian's package lists"
	exit 1
}

# The image whose version equals the source's: 6.12 packages are named
# 6.12.N+deb12-cloud-amd64, 6.1 ones 6.1.0-ABI-cloud-amd64, 7.3 ones
# 7.3.N+deb13-cloud-amd64 (signed only: trixie has no -unsigned image).
case $series in
6.12) pattern='^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$' ;;
6.1) pattern='^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' ;;
7.3) pattern='^linux-image-7\.3\.[0-9]+\+deb13-cloud-amd64$' ;;
*) log "unknown series $series"; exit 1 ;;
esac
pattern=${pattern/-cloud-/-$flavour-}
image=
for pkg in $(apt-cache "${APT_OPTS[@]}" search --names-only "$pattern" | awk '{ print $1 }' | sort -rV); do
	if apt-cache "${APT_OPTS[@]}" madison "$pkg" | awk -v v="$srcver" '$3 == v { f = 1 } END { exit !f }'; then
		image=$pkg
		break
	fi
done
[ -n "$image" ] || { log "no cloud-amd64 image with version $srcver"; exit 1; }
release=${image#linux-image-}
release=${release%-unsigned}
abi=${release%-"$flavour"-amd64}
kbuild=linux-kbuild-$series
[ "$series" = 6.1 ] || kbuild=linux-kbuild-$abi

# 7.3's image package is empty: the kernel and modules are in packages it
# depends on (linux-binary-, linux-modules-, linux-base-RELEASE).
parts=$(apt-cache "${APT_OPTS[@]}" show "$image=$srcver" | awk '/^Depends:/ { sub(/^Depends:/, ""); print; exit }' |
	tr ',|' '\n\n' | awk -v r="$release" '{ n = $1; if (substr(n, length(n) - length(r)) == "-" r) print n }')
pkgs="$image=$srcver linux-headers-$release=$srcver linux-headers-$abi-common=$srcver $kbuild=$srcver $srcpkg=$srcver"
for p in $parts; do pkgs="$pkgs $p=$srcver"; done
log "series $series: $release, version $srcver"
[ $flavour = rt ] && pkgs=${pkgs/-common=/-common-rt=}

# Series share packages (6.1 and 6.1-rt the source): each download lands
# in a directory of its own and is moved in whole.
mkdir -p "$debs"
dl=$(mktemp -d "$debs/.download.XXXXXX")
trap 'rm -rf "$dl"' EXIT
for p in $pkgs; do
	name=${p%%=*}
	ls "$debs/${name}_"*.deb >/dev/null 2>&1 && continue
	log "downloading $name"
	(cd "$dl" && apt-get "${APT_OPTS[@]}" download -q "$p" >&2 2>/dev/null) ||
		(cd "$dl" && apt-get "${APT_OPTS[@]}" download "$p" >&2)
	mv "$dl"/*.deb "$debs/"
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
# Trixie's packages install into /usr/lib (merged /usr).
for d in lib; do
	if [ ! -e "$dir/root/$d" ] && [ -d "$dir/root/usr/$d" ]; then ln -s "usr/$d" "$dir/root/$d"; fi
done
# The image package leaves modules.dep to its postinst.
depmod -b "$dir/root" "$release"
ln -sfn "$kdir" "$dir/kdir"
# 7.3 keeps the image beside its modules.
vmlinuz=$dir/root/boot/vmlinuz-$release
[ -f "$vmlinuz" ] || vmlinuz=$dir/root/lib/modules/$release/vmlinuz
ln -sfn "$vmlinuz" "$dir/vmlinuz"
ln -sfn "$dir/root/lib/modules/$release" "$dir/modules"
tarball=$(ls "$dir"/srcpkg/usr/src/linux-source-*.tar.xz)
ln -sfn "$tarball" "$dir/source.tar.xz"

top=$(basename "$tarball" .tar.xz)
# One pass over the tarball (each pass decompresses all of it): the FUSE
# headers, the top Makefile (its version) and, where the headers' Makefile
# calls it for C=2 (since 6.13) but the headers lack it,
# scripts/checker-valid.sh.
common=$dir/root/usr/src/linux-headers-$abi-common
members=("$top/fs/fuse/*.h" "$top/Makefile")
checker=0
if grep -qs checker-valid.sh "$common/Makefile" && [ ! -e "$common/scripts/checker-valid.sh" ]; then
	members+=("$top/scripts/checker-valid.sh")
	checker=1
fi
mkdir -p "$dir/src" "$dir/fuse"
tar -xJf "$tarball" -C "$dir/src" --strip-components=1 --wildcards "${members[@]}"
mv "$dir"/src/fs/fuse/*.h "$dir/fuse/"
mv "$dir/src/Makefile" "$dir/source.Makefile"
[ $checker = 0 ] || install -m 0755 "$dir/src/scripts/checker-valid.sh" "$common/scripts/checker-valid.sh"
rm -rf "$dir/src"
echo "$srcver" >"$dir/version"
echo "$release" >"$dir/release"
touch "$dir/.done"
log "ready in $dir"
echo "$dir"
