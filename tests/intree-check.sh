#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/intree-check.sh SERIES  (SERIES = 6.12, 6.1 or 7.3)
#
# What make check runs as intree:patch-SERIES. Takes fs/fuse/ of a pristine
# kernel tree (extracted from the cached linux-source tarball of SERIES),
# and checks scripts/intree.sh on it the way a tree that carries patches
# (libkrunfw) would use it:
#   - --patch prints a patch and leaves the tree alone;
#   - the patch applies to the pristine tree with patch -p1 without fuzz
#     or offsets (and with git apply), and a second application is refused;
#   - the patched tree is the tree that intree.sh without --patch makes,
#     and running intree.sh again changes nothing;
#   - the patched fs/fuse/Kconfig offers CONFIG_VIRTIO_FS_SYNC (the
#     kernel's own conf, from Debian's headers, on a small top-level
#     Kconfig that sources fs/fuse/Kconfig);
#   - fs/fuse/Makefile of the patched tree builds the driver: the patched
#     fs/fuse/ is built against Debian's headers of SERIES with every
#     other fs/fuse option off and CONFIG_VIRTIO_FS_SYNC=m, and the result
#     must be a virtio_fs_sync.ko with that kernel's vermagic.
# The kernel's tools run in SERIES' build root where it has one (7.3).
set -uo pipefail

series=${1:?usage: tests/intree-check.sh 6.12|6.1|7.3}
repo=$(cd "$(dirname "$0")/.." && pwd)
kc=$("$repo/scripts/fetch-kernel.sh" "$series") || exit 1
rel=$(cat "$kc/release")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vfs-intree.XXXXXX")
broot=$(make -s -C "$repo" KVER="$series" print-build-root)
inroot=(env)
[ -n "$broot" ] && inroot=("$repo/scripts/build-root.sh" "$broot" --bind "$tmp" --run env)
trap 'rm -rf "$tmp"' EXIT
rc=0
fail() {
	echo "FAIL: $*"
	rc=1
}
ok() { echo "ok $*"; }
# A tree's content, file by file, for before/after comparisons.
tree_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

echo "# pristine fs/fuse/ of linux-source-$series"
mkdir -p "$tmp/pristine"
tar -xJf "$kc/source.tar.xz" -C "$tmp/pristine" --strip-components=1 \
	--wildcards '*/fs/fuse/*' || { echo "cannot extract fs/fuse/"; exit 1; }
[ -f "$tmp/pristine/fs/fuse/Kconfig" ] || { echo "no fs/fuse/Kconfig in the tarball"; exit 1; }
[ -e "$tmp/pristine/fs/fuse/virtio_fs_sync" ] && { echo "the tarball already has the driver"; exit 1; }
tree_sum "$tmp/pristine" >"$tmp/pristine.sum"

"$repo/scripts/intree.sh" --patch "$tmp/pristine" >"$tmp/virtio_fs_sync.patch" ||
	{ echo "intree.sh --patch failed"; exit 1; }
grep '^+++ ' "$tmp/virtio_fs_sync.patch" | cut -f1
tree_sum "$tmp/pristine" | cmp -s - "$tmp/pristine.sum" || fail "intree.sh --patch changed the tree"
ok "intree.sh --patch left the tree alone"

cp -a "$tmp/pristine" "$tmp/patched"
if patch -d "$tmp/patched" -p1 --forward --batch <"$tmp/virtio_fs_sync.patch" >"$tmp/patch.out" 2>&1; then
	cat "$tmp/patch.out"
	grep -Ei 'fuzz|offset|hunk' "$tmp/patch.out" && fail "the patch did not apply exactly"
	ok "patch -p1 applies"
else
	cat "$tmp/patch.out"
	fail "patch -p1 failed on the pristine tree"
fi
cp -a "$tmp/pristine" "$tmp/git-apply"
(cd "$tmp/git-apply" && git apply -p1 --check "$tmp/virtio_fs_sync.patch") ||
	fail "git apply --check refuses the patch"
if patch -d "$tmp/patched" -p1 --forward --batch --dry-run <"$tmp/virtio_fs_sync.patch" >/dev/null 2>&1; then
	fail "the patch applies a second time"
else
	ok "a second application is refused"
fi

cp -a "$tmp/pristine" "$tmp/direct"
"$repo/scripts/intree.sh" "$tmp/direct" || fail "intree.sh failed"
tree_sum "$tmp/direct" >"$tmp/direct.sum"
"$repo/scripts/intree.sh" "$tmp/direct" || fail "intree.sh failed the second time"
tree_sum "$tmp/direct" | cmp -s - "$tmp/direct.sum" || fail "a second intree.sh changed the tree"
for f in Kconfig Makefile; do
	n=$(grep -c virtio_fs_sync/ "$tmp/direct/fs/fuse/$f")
	[ "$n" = 1 ] || fail "fs/fuse/$f names virtio_fs_sync/ $n times"
done
diff -r "$tmp/direct" "$tmp/patched" || fail "the patch and intree.sh make different trees"
ok "intree.sh is idempotent and makes the patched tree"

echo "# Kconfig"
kconfig_offers() {
	cat >"$tmp/Kconfig.top" <<EOF
config MODULES
	def_bool y
	modules
config FUSE_FS
	def_tristate m
config VIRTIO
	def_tristate y
source "fs/fuse/Kconfig"
EOF
	echo CONFIG_VIRTIO_FS_SYNC=m >"$tmp/config"
	(cd "$1" && "${inroot[@]}" KCONFIG_CONFIG="$tmp/config" srctree=. \
		"$kc/kdir/scripts/kconfig/conf" --olddefconfig "$tmp/Kconfig.top") >"$tmp/conf.log" 2>&1 ||
		{ cat "$tmp/conf.log"; return 1; }
	grep -qx CONFIG_VIRTIO_FS_SYNC=m "$tmp/config"
}
kconfig_offers "$tmp/pristine" && fail "the pristine tree offers CONFIG_VIRTIO_FS_SYNC"
kconfig_offers "$tmp/patched" || fail "the patched tree does not offer CONFIG_VIRTIO_FS_SYNC=m"
ok "CONFIG_VIRTIO_FS_SYNC=m sticks in the patched tree"

echo "# build of the patched fs/fuse/ against Debian's $rel headers"
fuse=$tmp/patched/fs/fuse
"${inroot[@]}" make -C "$kc/kdir" M="$fuse" FUSE_INC="$fuse" CONFIG_VIRTIO_FS_SYNC=m \
	CONFIG_FUSE_FS= CONFIG_CUSE= CONFIG_VIRTIO_FS= -j"$(nproc)" modules ||
	fail "the patched tree does not build"
ko=$fuse/virtio_fs_sync/virtio_fs_sync.ko
if [ -f "$ko" ]; then
	vermagic=$(modinfo -F vermagic "$ko")
	echo "$ko: $vermagic"
	case $vermagic in
	"$rel "*) ok "virtio_fs_sync.ko built for $rel" ;;
	*) fail "vermagic '$vermagic' is not $rel's" ;;
	esac
else
	fail "no $ko"
fi
exit $rc
