#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-uml.sh [debug|bench]
#
# Builds a User-Mode Linux kernel from Debian's linux-source-6.12 with the
# driver dropped in by scripts/intree.sh and built in, and prints the path of
# the `linux` binary. The tree and the build live in the cache
# ($VFS_CACHE/uml, outside the repository); a build is reused while the
# source version, the config fragments and the driver sources are unchanged,
# and otherwise rebuilt incrementally.
#   debug: PREEMPT, lockdep, atomic-sleep checks, kmemleak, KUnit (tests)
#   bench: PREEMPT without debugging (benchmarks)
set -euo pipefail

flavor=${1:-debug}
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
jobs=${JOBS:-$(nproc)}
log() { echo "build-uml: $*" >&2; }

case $flavor in
debug | bench) ;;
*) echo "usage: build-uml.sh [debug|bench]" >&2; exit 2 ;;
esac
frags="$repo/tests/vm/uml-base.config $repo/tests/vm/uml-$flavor.config"

kdir=$("$repo/scripts/fetch-kernel.sh" 6.12)
version=$(cat "$kdir/version")
src=$cache/uml/src-$version
out=$cache/uml/$flavor

mkdir -p "$cache/uml"
exec 9>"$cache/uml/.lock"
flock 9

driver_files=$(cd "$repo" && ls Kbuild Kconfig ./*.c ./*.h tests/kunit/*.c 2>/dev/null || true)
key=$( (echo "$version"; cat $frags; cd "$repo" && cat $driver_files) | sha256sum | cut -c1-16)
if [ -x "$out/linux" ] && [ "$(cat "$out/.key" 2>/dev/null)" = "$key" ]; then
	echo "$out/linux"
	exit 0
fi

if [ ! -f "$src/.unpacked" ]; then
	log "unpacking linux-source $version"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$kdir/source.tar.xz" -C "$src" --strip-components=1
	touch "$src/.unpacked"
fi
# Until the driver has sources, the kernel is built with in-tree virtiofs only.
if [ -f "$repo/Kconfig" ]; then
	"$repo/scripts/intree.sh" "$src"
fi

mkdir -p "$out"
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.frags" 2>/dev/null)" != "$(cat $frags | sha256sum)" ]; then
	log "configuring $flavor"
	make -s -C "$src" ARCH=um O="$out" defconfig >&2
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" $frags >&2
	make -s -C "$src" ARCH=um O="$out" olddefconfig >&2
	for f in $frags; do
		# A fragment line that did not stick means a missing dependency.
		grep -E '^CONFIG_[A-Z0-9_]+=[ym]' "$f" | while read -r line; do
			grep -qx "$line" "$out/.config" || log "warning: $line did not stick"
		done
	done
	cat $frags | sha256sum >"$out/.frags"
fi
log "building $flavor (-j$jobs), log in $out/build.log"
if ! make -C "$src" ARCH=um O="$out" -j"$jobs" linux >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	log "build failed"
	exit 1
fi
grep -E ' warning: ' "$out/build.log" | grep virtio_fs_sync >&2 || true
echo "$key" >"$out/.key"
echo "$out/linux"
