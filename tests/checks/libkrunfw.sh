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

# root_inline RESULTS: the sync queues of the root's device that completed
# requests inside the kick.
root_inline() {
	awk '/type=sync/ { for (i = 1; i <= NF; i++) if ($i ~ /^inline=/ && substr($i, 8) + 0 > 0) u++ }
		END { print u + 0 }' "$1/root-dev-stats"
}

# krun_sync NAME RUNNER-ARGS...: the patched QEMU: qemu_sync's suite, proof
# of path and per-CPU sync queues on the share, the root held by this
# driver, and its device's sync queues completing requests inside the
# kick too.
krun_sync() {
	local name=$1 res=$logs/$1.results rc=0 n used
	shift
	qemu_sync "$name" --kernel libkrunfw --machine microvm "$@" || rc=1
	krun_root "$res" || rc=1
	n=$(grep -c 'type=sync' "$res/root-dev-stats" 2>/dev/null)
	used=$(root_inline "$res")
	echo "root device: $used of $n sync queues completed requests inline"
	[ "$used" -gt 0 ] || { echo "FAIL: the root took no sync queue"; rc=1; }
	return $rc
}

# krun_used_len_zero NAME RUNNER-ARGS...: krun_sync with both devices
# putting every buffer on the used ring with length 0, as libkrun's did
# before 1.19: the driver takes the reply's length from its header.
krun_used_len_zero() {
	local name=$1 res=$logs/$1.results rc=0 f
	shift
	krun_sync "$name" --dev-opts --used-len-zero "$@" || rc=1
	for f in dev-stats root-dev-stats; do
		grep -q '^device .* used_len=0$' "$res/$f" ||
			{ echo "FAIL: $f: the device reported used lengths"; rc=1; }
	done
	return $rc
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

# config_at_40 NAME RUNNER-ARGS...: libkrun's layout of the config space,
# num_sync_queues at offset 40 of 44 bytes (the reference device's
# --sync-queues-at=40), read there by the driver (sync_queues_at=40): one
# sync queue for two vCPUs, the share on the sync path. Read at 44, the
# contract's place, the count is all ones (past the end): no sync queues,
# and the driver says where to look.
config_at_40() {
	local name=$1 res=$logs/$1.results out
	shift
	out=$("$repo/tests/vm/run" --results "$res.at-44" --driver ours --sync on --sync-queues 1 \
		--dev-opts --sync-queues-at=40 "$@" -- \
		sh -c 'cat /sys/fs/virtio_fs_sync/share/queues && echo data >/mnt/share/f && cat /mnt/share/f') ||
		return 1
	echo "$out"
	echo "$out" | grep -qx 'hiprio=1 request=2 sync=0' || { echo "FAIL: read at 44, expected no sync queue"; return 1; }
	grep -q 'num_sync_queues at 44 reads 0xffffffff' "$res.at-44/dmesg" ||
		{ echo "FAIL: no word of the count past the config space"; return 1; }
	out=$("$repo/tests/vm/run" --results "$res" --driver ours --sync on --sync-queues 1 \
		--dev-opts --sync-queues-at=40 --module-param sync_queues_at=40 "$@" -- \
		sh -c 'cat /sys/fs/virtio_fs_sync/share/queues && echo data >/mnt/share/f && cat /mnt/share/f') ||
		return 1
	echo "$out"
	echo "$out" | grep -qx 'hiprio=1 request=2 sync=1' || { echo "FAIL: expected one sync queue"; return 1; }
	echo "$out" | grep -qx data || { echo "FAIL: the share does not work"; return 1; }
	"$repo/tests/vm/check-path" sync "$res"
}
