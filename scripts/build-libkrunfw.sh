#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-libkrunfw.sh: libkrun's guest kernel, built by libkrunfw's recipe
# with this driver in, and libkrunfw.so from it. `make libkrunfw` runs it.
#
# LIBKRUNFW_SRC=DIR is a libkrunfw checkout (its Makefile, kernel config,
# patches/ and bin2cbundle.py); the default is shared/upstream/
# libkrunfw-5.4.0 in the repository's parent directory, where the
# project's test machines keep libkrunfw 5.4.0's recipe. kernel.org is
# not needed: the kernel is Debian's pristine upstream tarball of the same
# series (linux_6.12.N.orig.tar.xz of source package linux), the one whose
# N is nearest to the KERNEL_VERSION of libkrunfw's Makefile among those
# Debian's source indexes name and its mirror serves, checked against the
# index's SHA-256. Then, in a tree of its own under the cache:
#   1. every libkrunfw patch, each of which must apply (libkrunfw's
#      Makefile goes on past a failed one; this does not);
#   2. the driver, by scripts/intree.sh, linked before in-tree virtiofs so
#      that its initcall binds the devices first (see the README);
#   3. libkrunfw's config and scripts/libkrunfw.config, `make
#      olddefconfig`, and a check that the driver is built in;
#   4. vmlinux with libkrunfw's KBUILD_BUILD_* flags, then kernel.c by
#      bin2cbundle.py and libkrunfw.so.VERSION, as libkrunfw's Makefile
#      makes them.
# The result is cached under $VFS_CACHE/libkrunfw/ keyed by every input
# (libkrunfw's files, the tarball, the driver's sources, this script, the
# fragment); a second call with the same inputs builds nothing. The kernel
# tree, with its objects, is kept under a key of every input but the
# driver's sources, so that a change of the driver rebuilds the driver and
# relinks, as the UML test kernels do. Prints the build directory:
# vmlinux, libkrunfw.so.VERSION (and its soname link), config,
# kernel-version, libkrunfw-version.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
base=$cache/libkrunfw
jobs=${JOBS:-$(nproc)}
log() { echo "build-libkrunfw: $*" >&2; }
die() { log "$*"; exit 1; }

src=${LIBKRUNFW_SRC:-}
if [ -z "$src" ]; then
	src=$(cd "$repo/.." && pwd)/shared/upstream/libkrunfw-5.4.0
	[ -d "$src" ] ||
		die "no libkrunfw sources: set LIBKRUNFW_SRC=DIR to a libkrunfw checkout (its Makefile, config-libkrunfw_x86_64, patches/, bin2cbundle.py)"
fi
src=$(cd "$src" && pwd)
for f in Makefile config-libkrunfw_x86_64 bin2cbundle.py patches; do
	[ -e "$src/$f" ] || die "$src is not a libkrunfw checkout: no $f"
done
mkvar() { sed -n "s/^$1 *= *//p" "$src/Makefile" | head -n 1; }
kver=$(mkvar KERNEL_VERSION)
full=$(mkvar FULL_VERSION)
abi=$(mkvar ABI_VERSION)
stamp=$(mkvar TIMESTAMP)
[[ $kver =~ ^linux-([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] ||
	die "cannot read KERNEL_VERSION (linux-X.Y.Z) from $src/Makefile"
series=${BASH_REMATCH[1]}.${BASH_REMATCH[2]}
want=${BASH_REMATCH[3]}
[ -n "$full" ] && [ -n "$abi" ] || die "cannot read FULL_VERSION and ABI_VERSION from $src/Makefile"
log "libkrunfw $full ($src), made for $kver"

# The tools: a kernel build's, and pyelftools for the system's python3,
# which bin2cbundle.py needs.
need=
for t in flex bison bc; do command -v $t >/dev/null || need="$need $t"; done
[ -e /usr/include/libelf.h ] || need="$need libelf-dev"
[ -e /usr/include/openssl/ssl.h ] || need="$need libssl-dev"
/usr/bin/python3 -c 'import elftools' 2>/dev/null || need="$need python3-pyelftools"
if [ -n "$need" ]; then
	log "installing$need"
	# shellcheck disable=SC2086 # a list of packages
	apt-get install -y -q --no-install-recommends $need >&2 ||
		die "cannot install$need"
fi

# --- the kernel tarball ------------------------------------------------------
mkdir -p "$base/tarballs"
exec 8>"$base/.lock"
flock 8

# Debian's source indexes name the orig tarballs of source package linux;
# the mirror keeps some of them.
# shellcheck source=scripts/apt-private.sh
. "$repo/scripts/apt-private.sh"
mirror=$(debian_mirror)
tarball=
for t in "$base"/tarballs/linux_"$series".*.orig.tar.xz; do
	[ -f "$t" ] || continue
	n=${t##*/linux_"$series".}
	n=${n%.orig.tar.xz}
	if [ -z "$tarball" ] || [ $(((n - want) * (n - want))) -lt $(((best - want) * (best - want))) ]; then
		tarball=$t best=$n
	fi
done
if [ -z "$tarball" ]; then
	APT_PRIVATE_DIR=$base/apt apt_private_init --src trixie trixie-updates trixie-backports sid bookworm-backports
	index=$(apt-cache "${APT_OPTS[@]}" showsrc linux 2>/dev/null |
		awk -v s="$series" '$3 ~ "^linux_" s "\\.[0-9]+\\.orig\\.tar\\.xz$" && length($1) == 64 { print $3, $1 }' | sort -u)
	[ -n "$index" ] || die "Debian's source indexes name no linux_$series.N.orig.tar.xz"
	for name in $(echo "$index" | awk -v w="$want" '{ n = $1; sub("^linux_[0-9]+\\.[0-9]+\\.", "", n); sub("\\.orig.*", "", n); d = n - w; print (d < 0 ? -d : d), $1 }' | sort -n | awk '{ print $2 }'); do
		url=$mirror/pool/main/l/linux/$name
		sum=$(echo "$index" | awk -v n="$name" '$1 == n { print $2; exit }')
		curl -sfI "$url" >/dev/null || { log "$name: not on $mirror"; continue; }
		log "fetching $url"
		curl -sf -o "$base/tarballs/$name.part" "$url" || die "download of $url failed"
		echo "$sum  $base/tarballs/$name.part" | sha256sum -c --quiet ||
			die "$name does not match the SHA-256 of Debian's source index"
		mv "$base/tarballs/$name.part" "$base/tarballs/$name"
		tarball=$base/tarballs/$name
		break
	done
	[ -n "$tarball" ] || die "none of Debian's linux_$series.N.orig.tar.xz could be fetched from $mirror"
fi
kernel=${tarball##*/linux_}
kernel=${kernel%.orig.tar.xz}
[ "$kernel" = "${kver#linux-}" ] || log "kernel $kernel: the nearest Debian serves to libkrunfw's ${kver#linux-}"

# --- the cache keys ----------------------------------------------------------
files=$(make -s --no-print-directory -C "$repo" print-driver-files)
treekey=$( {
	echo "$kernel"
	(cd "$src" && sha256sum Makefile config-libkrunfw_x86_64 bin2cbundle.py patches/0*.patch)
	(cd "$repo" && sha256sum scripts/intree.sh scripts/build-libkrunfw.sh scripts/libkrunfw.config)
} | sha256sum | cut -c1-16)
# shellcheck disable=SC2086 # $files: a list of files
key=$( {
	echo "$treekey"
	(cd "$repo" && sha256sum $files)
} | sha256sum | cut -c1-16)
out=$base/build-$key
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

# --- the tree: tarball, libkrunfw's patches, the config; then the driver -----
# Made once per tree key; a tree left half made (no .ready) is made anew.
treedir=$base/tree-$treekey
tree=$treedir/linux-$kernel
if [ ! -f "$treedir/.ready" ]; then
	rm -rf "$treedir"
	mkdir -p "$treedir"
	log "unpacking linux_$kernel.orig.tar.xz into $treedir"
	tar -C "$treedir" -xf "$tarball"
	[ -d "$tree" ] || die "the tarball has no linux-$kernel/"
	for p in "$src"/patches/0*.patch; do
		if ! res=$(patch -p1 --forward --batch -d "$tree" <"$p" 2>&1); then
			printf '%s\n' "$res" >&2
			die "libkrunfw's ${p##*/} does not apply to $kernel"
		fi
	done
	log "$(find "$src/patches" -name '0*.patch' | wc -l) libkrunfw patches applied"
	"$repo/scripts/intree.sh" --first "$tree"
	cp "$src/config-libkrunfw_x86_64" "$tree/.config"
	cat "$repo/scripts/libkrunfw.config" >>"$tree/.config"
	make -s -C "$tree" olddefconfig >&2
	grep -qx 'CONFIG_VIRTIO_FS_SYNC=y' "$tree/.config" ||
		die "CONFIG_VIRTIO_FS_SYNC=y did not survive olddefconfig (its dependencies: VIRTIO, FUSE_FS)"
	touch "$treedir/.ready"
	# Trees of other keys (an older recipe, fragment or script) go
	find "$base" -maxdepth 1 -name 'tree-*' ! -name "tree-$treekey" -exec rm -rf {} +
else
	log "the driver's sources into $tree"
	"$repo/scripts/intree.sh" --first "$tree"
fi
rm -rf "$out"
mkdir -p "$out"

# --- vmlinux and libkrunfw.so, as libkrunfw's Makefile makes them ------------
log "building vmlinux ($jobs jobs; log in $out/build.log)"
if ! make -C "$tree" -j"$jobs" KBUILD_BUILD_TIMESTAMP="${stamp//\"/}" \
	KBUILD_BUILD_USER=root KBUILD_BUILD_HOST=libkrunfw vmlinux >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	die "the kernel build failed (whole log: $out/build.log)"
fi
cp "$tree/vmlinux" "$out/vmlinux"
cp "$tree/.config" "$out/config"
(cd "$out" && /usr/bin/python3 "$src/bin2cbundle.py" --os Linux -t vmlinux vmlinux kernel.c) ||
	die "bin2cbundle.py failed"
cc -fPIC -DABI_VERSION="$abi" -shared -Wl,-soname,libkrunfw.so."$abi" \
	-o "$out/libkrunfw.so.$full" "$out/kernel.c"
strip "$out/libkrunfw.so.$full"
ln -sf "libkrunfw.so.$full" "$out/libkrunfw.so.$abi"
rm -f "$out/kernel.c"
echo "$kernel" >"$out/kernel-version"
echo "$full" >"$out/libkrunfw-version"
touch "$out/.done"
log "done: $out/vmlinux, $out/libkrunfw.so.$full"
echo "$out"
