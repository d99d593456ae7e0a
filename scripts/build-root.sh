#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-root.sh SUITE              make (once) and print a Debian SUITE root
# build-root.sh SUITE [--bind DIR]... --run CMD...
#                                  run CMD in it, in the current directory
#
# Debian's 7.3 headers were built with gcc-14 and their kbuild tools need
# glibc >= 2.38: bookworm can build neither. This makes a trixie root with
# debootstrap in $VFS_CACHE/roots/SUITE holding what an out-of-tree module
# build needs (gcc-14, make, libelf, pahole), from the mirror the
# system's sources use, with the archive keyring the system has; the .debs
# stay in $VFS_CACHE/apt/debootstrap, so a new root fetches only the
# package index.
#
# --run bind-mounts $VFS_CACHE, the repository, the current directory and
# every --bind DIR at their own paths inside the root (in a private mount namespace: nothing is
# left mounted), so every absolute path means the same inside and out, and
# runs CMD there as the caller.
set -euo pipefail

suite=${1:?usage: build-root.sh SUITE [--run CMD...]}
shift
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
root=$cache/roots/$suite
repo=$(cd "$(dirname "$0")/.." && pwd)
pkgs=gcc-14,libc6-dev,make,libelf1t64,zlib1g,libssl3t64,dwarves

log() { echo "build-root: $*" >&2; }

make_root() {
	local mirror debs=$cache/apt/debootstrap tmp
	command -v debootstrap >/dev/null || { log "needs debootstrap (tests/setup/install-deps.sh)"; exit 1; }
	# shellcheck source=scripts/apt-private.sh
	. "$repo/scripts/apt-private.sh"
	mirror=$(debian_mirror)
	mkdir -p "$debs" "$cache/roots"
	tmp=$root.tmp
	rm -rf "$tmp"
	log "debootstrap $suite into $root from $mirror (once)"
	debootstrap --variant=minbase --include="$pkgs" --cache-dir="$debs" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$suite" "$tmp" "$mirror" >"$cache/roots/$suite.log" 2>&1 || {
		tail -n 20 "$cache/roots/$suite.log" >&2
		log "debootstrap failed; log in $cache/roots/$suite.log"
		exit 1
	}
	rm -rf "$tmp"/var/cache/apt/archives/*.deb
	echo "$pkgs" >"$tmp/.vfs-packages"
	mv "$tmp" "$root"
}

# The package list is part of the root: another list makes a new root.
[ "$(cat "$root/.vfs-packages" 2>/dev/null)" = "$pkgs" ] || {
	rm -rf "$root"
	make_root
}

binds=("$cache" "$repo" "$PWD")
while [ "${1:-}" = --bind ]; do
	binds+=("$(cd "${2:?--bind DIR}" && pwd)")
	shift 2
done
if [ "${1:-}" != --run ]; then
	echo "$root"
	exit 0
fi
shift
[ $# -gt 0 ] || { log "--run needs a command"; exit 2; }
# Several builds may run at once: each gets its own mount namespace.
exec unshare -m --propagation private /bin/sh -c '
	root=$1 cwd=$2
	shift 2
	# Mount points under /tmp (scratch trees) vanish with the namespace.
	mount -t tmpfs tmpfs "$root/tmp" || exit 1
	for d in "$@"; do
		[ "$d" = -- ] && break
		mkdir -p "$root$d" && mount --bind "$d" "$root$d" || exit 1
		shift
	done
	shift
	mount -t proc proc "$root/proc" || exit 1
	mount --bind /dev "$root/dev" || exit 1
	exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		/bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' sh "$root" "$PWD" "${binds[@]}" -- "$@"
