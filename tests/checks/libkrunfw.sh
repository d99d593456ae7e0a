# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/libkrunfw.sh: libkrun's guest kernel with the driver built
# in (make libkrunfw, scripts/build-libkrunfw.sh), booted as libkrun boots
# it: microvm, libkrun's command line, no initrd, the root on virtio-fs tag
# /dev/root (tests/vm/run --kernel libkrunfw, tests/vm/krun-init). Sourced
# by tests/check.sh, whose rows call these functions; they use its
# variables ($repo, $logs and the like) and the other checks' helpers.

# krun_root RESULTS [DRIVER]: the guest's root was virtio-fs tag /dev/root,
# and DRIVER (ours: virtio_fs_sync, the default; intree: virtiofs) held it.
krun_root() {
	local root
	root=$(cat "$1/guest-root" 2>/dev/null)
	echo "guest root: $root"
	[ "$root" = "/dev/root virtiofs" ] || { echo "FAIL: the root is not virtio-fs tag /dev/root"; return 1; }
	if [ "${2:-ours}" = ours ]; then
		grep -q 'virtio_fs_sync virtio[0-9]*: tag </dev/root>' "$1/dmesg" ||
			{ echo "FAIL: virtio_fs_sync did not take the root's device"; return 1; }
	elif grep -q 'virtio_fs_sync' "$1/dmesg"; then
		echo "FAIL: virtio_fs_sync in a guest that should not have it"
		return 1
	fi
}

# krun_stock_qemu NAME RUNNER-ARGS...: the host's QEMU, which offers no
# sync queues: the suite on the interrupt-driven path (the fallback), the
# root held by this driver all the same.
krun_stock_qemu() {
	local name=$1 res=$logs/$1.results rc=0
	shift
	vm_suite async "$name" --substrate qemu --kernel libkrunfw --machine microvm --qemu stock \
		--driver ours --sync on "$@" || rc=1
	krun_root "$res" || rc=1
	return $rc
}

# krun_stock_kernel NAME RUNNER-ARGS...: Debian's libkrunfw5 kernel, as
# libkrun users boot it (scripts/fetch-libkrunfw-stock.sh): the same suite
# with the root and the share on in-tree virtiofs, the baseline the driver
# is compared with.
krun_stock_kernel() {
	local name=$1 res=$logs/$1.results rc=0
	shift
	vm_suite none "$name" --substrate qemu --kernel libkrunfw-stock --machine microvm \
		--driver intree "$@" || rc=1
	krun_root "$res" intree || rc=1
	return $rc
}
