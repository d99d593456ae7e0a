#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# intree.sh [--patch] [--first] KSRC
#
# Drops the driver into a kernel source tree as fs/fuse/virtio_fs_sync/ and
# wires it into fs/fuse/Kconfig and fs/fuse/Makefile, so that the kernel can
# be configured with CONFIG_VIRTIO_FS_SYNC=y or =m (the libkrunfw way).
# Running it again refreshes the sources and leaves the wiring alone.
# With --patch, the tree is left untouched and a patch doing the same is
# printed on standard output, for trees that carry patches. With --first
# the driver is linked before in-tree virtiofs: both built in, its initcall
# runs first, binds the devices and registers "virtiofs", and in-tree's
# init, finding the name taken, unregisters its driver again (libkrunfw's
# kernel). Without it, after: in-tree virtiofs binds them (the test
# kernels, which choose a driver with initcall_blacklist).
set -euo pipefail

patch=0 first=0
while [ $# -gt 1 ]; do
	case $1 in
	--patch) patch=1 ;;
	--first) first=1 ;;
	*) break ;;
	esac
	shift
done
ksrc=${1:?usage: intree.sh [--patch] [--first] KSRC}
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$ksrc/fs/fuse/Kconfig" ] || { echo "intree.sh: $ksrc is not a kernel tree" >&2; exit 1; }
[ -f "$repo/Kconfig" ] || { echo "intree.sh: no driver sources in $repo" >&2; exit 1; }

# What the in-tree build needs: the Makefile's list of the driver's files.
files=$(make -s --no-print-directory -C "$repo" print-driver-files) && [ -n "$files" ] ||
	{ echo "intree.sh: no driver file list from $repo/Makefile" >&2; exit 1; }

install_into() {
	local dst=$1/fs/fuse/virtio_fs_sync f
	mkdir -p "$dst/tests/kunit"
	for f in $files; do
		[ -f "$repo/$f" ] || continue
		cmp -s "$repo/$f" "$dst/$f" || cp "$repo/$f" "$dst/$f"
	done
	# Kbuild reads the version from here when it is not in a git checkout.
	local ver
	ver=$("$repo/scripts/version.sh")
	echo "$ver" >"$dst/VERSION.new"
	if cmp -s "$dst/VERSION.new" "$dst/VERSION"; then
		rm "$dst/VERSION.new"
	else
		mv "$dst/VERSION.new" "$dst/VERSION"
	fi
	grep -q 'fs/fuse/virtio_fs_sync/Kconfig' "$1/fs/fuse/Kconfig" ||
		printf '\nsource "fs/fuse/virtio_fs_sync/Kconfig"\n' >>"$1/fs/fuse/Kconfig"
	# shellcheck disable=SC2016 # $(CONFIG_...) is for make, not the shell
	if grep -q 'virtio_fs_sync/' "$1/fs/fuse/Makefile"; then
		:
	elif [ $first = 1 ]; then
		grep -q '^obj-$(CONFIG_VIRTIO_FS)' "$1/fs/fuse/Makefile" ||
			{ echo "intree.sh: no in-tree virtiofs line in $1/fs/fuse/Makefile" >&2; exit 1; }
		sed -i '/^obj-$(CONFIG_VIRTIO_FS)/i obj-$(CONFIG_VIRTIO_FS_SYNC) += virtio_fs_sync/' \
			"$1/fs/fuse/Makefile"
	else
		printf '\nobj-$(CONFIG_VIRTIO_FS_SYNC) += virtio_fs_sync/\n' >>"$1/fs/fuse/Makefile"
	fi
}

if [ $patch = 0 ]; then
	install_into "$ksrc"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/a/fs/fuse" "$tmp/b/fs/fuse"
cp "$ksrc/fs/fuse/Kconfig" "$ksrc/fs/fuse/Makefile" "$tmp/a/fs/fuse/"
cp "$ksrc/fs/fuse/Kconfig" "$ksrc/fs/fuse/Makefile" "$tmp/b/fs/fuse/"
install_into "$tmp/b"
(cd "$tmp" && diff -Nur a b) || true
