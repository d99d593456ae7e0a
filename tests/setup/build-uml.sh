#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-uml.sh [debug|bench] [6.12|7.3]
#
# Builds a User-Mode Linux kernel from Debian's linux-source-SERIES (default
# 6.12) with the driver dropped in by scripts/intree.sh and built in, and
# prints the path of the `linux` binary. The tree and the build live in the
# cache, outside the repository: $VFS_CACHE/uml for 6.12, $VFS_CACHE/uml/7.3
# for 7.3, one source tree per series shared by both flavours, each flavour
# in its own object directory (debug/, bench/) with its own lock; a build is
# reused while the source version, the config fragments, the patches and the
# driver sources are unchanged, and otherwise rebuilt incrementally.
#   debug: PREEMPT, lockdep, atomic-sleep checks, kmemleak, KUnit (tests)
#   bench: PREEMPT without debugging (benchmarks)
# 6.12 is uniprocessor; 7.3 adds tests/vm/uml-7.3.config (SMP; boot it with
# seccomp=on ncpus=N). Test-kernel patches: tests/vm/patches/*.patch for
# 6.12, tests/vm/patches/7.3/*.patch for 7.3.
set -euo pipefail

flavor=${1:-debug}
series=${2:-6.12}
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
jobs=${JOBS:-$(nproc)}
log() { echo "build-uml: $*" >&2; }

usage() { echo "usage: build-uml.sh [debug|bench] [6.12|7.3]" >&2; exit 2; }
case $flavor in debug | bench) ;; *) usage ;; esac
frags="$repo/tests/vm/uml-base.config $repo/tests/vm/uml-$flavor.config"
case $series in
6.12)
	base=$cache/uml
	frags="$frags $repo/tests/vm/uml-6.12.config"
	patches=$(ls "$repo"/tests/vm/patches/*.patch 2>/dev/null || true)
	;;
7.3)
	base=$cache/uml/7.3
	frags="$frags $repo/tests/vm/uml-7.3.config"
	patches=$(ls "$repo"/tests/vm/patches/7.3/*.patch 2>/dev/null || true)
	;;
*) usage ;;
esac

kdir=$("$repo/scripts/fetch-kernel.sh" "$series")
version=$(cat "$kdir/version")
src=$base/src-$version
out=$base/$flavor

# Locks: one per flavour ($out.lock) held for the whole call, so a boot of
# one flavour never waits for the other's build; and the source tree's
# ($base/.lock), exclusive while it is unpacked, patched and given the
# driver, then shared while a flavour builds from it, so the tree cannot
# change under a build. (Every caller of one cache has the same driver
# sources and patches, see the shared-cache rule, so the exclusive part
# finds nothing to do unless the sources changed.)
mkdir -p "$base"
exec 8>"$out.lock"
flock 8

driver_files=$(make -s --no-print-directory -C "$repo" print-driver-files)
key=$( (echo "$version"; cat $frags $patches; cd "$repo" && cat $driver_files) | sha256sum | cut -c1-16)
if [ -x "$out/linux" ] && [ "$(cat "$out/.key" 2>/dev/null)" = "$key" ]; then
	echo "$out/linux"
	exit 0
fi

# patches_applied: every one of $patches is in $src, in their order. Each
# is taken back, last first, from copies of the files they touch: two
# patches may touch the same lines, so one of them alone cannot be taken
# back (or applied again) on the tree.
patches_applied() {
	local tmp files f p rc=0
	[ -n "$patches" ] || return 0
	tmp=$(mktemp -d)
	files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' $patches | sort -u)
	for f in $files; do
		mkdir -p "$tmp/$(dirname "$f")"
		[ ! -f "$src/$f" ] || cp "$src/$f" "$tmp/$f"
	done
	for p in $(printf '%s\n' $patches | tac); do
		patch -d "$tmp" -p1 -R -s -f <"$p" >/dev/null 2>&1 || { rc=1; break; }
	done
	rm -rf "$tmp"
	return $rc
}

exec 9>"$base/.lock"
flock 9
# The patches changed since the tree was patched: unpack the tree again.
# The objects stay in $out; make rebuilds what is newer.
if [ -f "$src/.unpacked" ] && ! patches_applied; then
	log "the test-kernel patches changed: the source tree is unpacked again"
	rm -f "$src/.unpacked"
fi
if [ ! -f "$src/.unpacked" ]; then
	log "unpacking linux-source $version"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$kdir/source.tar.xz" -C "$src" --strip-components=1
	# Fixes the test kernel needs, in order.
	for p in $patches; do
		log "applying $(basename "$p")"
		patch -d "$src" -p1 -s -f <"$p" >&2
	done
	touch "$src/.unpacked"
fi
# Until the driver has sources, the kernel is built with in-tree virtiofs only.
if [ -f "$repo/Kconfig" ]; then
	"$repo/scripts/intree.sh" "$src"
fi
flock -s 9

mkdir -p "$out"
# Configure again whenever the fragments or the driver's Kconfig change.
confkey=$( (cat $frags; cat "$src/fs/fuse/virtio_fs_sync/Kconfig" 2>/dev/null || true) | sha256sum)
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.confkey" 2>/dev/null)" != "$confkey" ]; then
	log "configuring $flavor"
	make -s -C "$src" ARCH=um O="$out" defconfig >&2
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" $frags >&2
	make -s -C "$src" ARCH=um O="$out" olddefconfig >&2
	for f in $frags; do
		# A fragment line that did not stick means a missing dependency.
		# (The bench fragment has only =n lines: no match is fine.)
		{ grep -E '^CONFIG_[A-Z0-9_]+=[ym]' "$f" || true; } | while read -r line; do
			grep -qx "$line" "$out/.config" || log "warning: $line did not stick"
		done
	done
	echo "$confkey" >"$out/.confkey"
fi
log "building $flavor (-j$jobs), log in $out/build.log"
if ! make -C "$src" ARCH=um O="$out" -j"$jobs" linux >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	log "build failed"
	exit 1
fi
# The driver and its tests build without warnings. Their objects go, so
# that the next call compiles them again and says it again.
if grep -E ' warning: ' "$out/build.log" | grep virtio_fs_sync >&2; then
	find "$out/fs/fuse/virtio_fs_sync" -name '*.o' -delete
	log "the driver's build has warnings"
	exit 1
fi
echo "$key" >"$out/.key"
echo "$out/linux"
