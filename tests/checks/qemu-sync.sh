# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/qemu-sync.sh: the patched QEMU: the sync path on a real VMM.
# scripts/build-qemu.sh builds trixie's QEMU 10.0 with qemu/patches once
# (cached); tests/vm/run --substrate qemu runs it where a share can take the
# sync path (--qemu patched). A notify write to a sync queue is handled in
# its vCPU's thread, which waits for the device's answer on the queue's
# kick channel. The vCPUs run on one TCG thread (--tcg-thread single, the
# default): Debian's kernels break under multi-threaded TCG here.
# Sourced by tests/check.sh, whose rows call these functions; they use its
# variables ($repo, $logs, $VFS_CACHE and the like) and counter_sum
# (tests/vm/counters.sh).

# patched_qemu RESULTS: the boot ran the patched QEMU (scripts/build-qemu.sh's,
# under the cache), not the host's.
patched_qemu() {
	grep -q 'qemu/.*/bin/qemu-system-x86_64' "$1/qemu" || { echo "FAIL: not the patched QEMU"; return 1; }
}

# qemu_sync NAME RUNNER-ARGS...: in one boot with as many sync queues as
# vCPUs, the guest suite, then one pinned task per vCPU
# (tests/vm/scenarios/per-cpu-sync: each CPU reaps inline on a sync queue
# of its own); the proof of path (check-path sync), the device's sync
# queues all completed requests inside the kick, and the driver's counters
# agree with the device's.
qemu_sync() {
	local name=$1 res=$logs/$1.results share used rc=0 writers
	shift
	writers=$(suite_writers "$name" "$@")
	share=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --substrate qemu --driver ours --sync on --share "$share" --results "$res" "$@" -- \
		env STRESS_WRITERS="$writers" sh -c '"$1" /mnt/share && "$2"' sh "$repo/tests/suite/run-suite.sh" \
		"$repo/tests/vm/scenarios/per-cpu-sync" || rc=1
	verify_share "$share" "$writers" || rc=1
	rm -rf "$share"
	echo "# proof of path (sync)"
	patched_qemu "$res" || rc=1
	"$repo/tests/vm/check-path" sync "$res" || rc=1
	used=$(sync_queues_inline "$res")
	echo "device: $used sync queues completed requests inline"
	[ "$used" -gt 0 ] && [ "$used" = "$(grep -c 'type=sync' "$res/dev-stats")" ] ||
		{ echo "FAIL: not every sync queue completed requests inline"; rc=1; }
	counters_agree "$res" share || rc=1
	return $rc
}

# A device slower than QEMU's bound (sync-timeout-ms=200 against a device
# that waits 500 ms in every sync kick): the vCPU gives up waiting, the
# queue runs on as an ordinary one, and the requests complete late through
# the interrupt; nothing hangs and nothing is lost.
qemu_sync_late() {
	local res=$logs/qemu-sync-6.12:late.results late inl rc=0
	"$repo/tests/vm/run" --substrate qemu --kernel 6.12 --cpus 2 --driver ours --sync on \
		--dev-opts --sync-delay-ms=500 --qemu-props sync-timeout-ms=200 --timeout 300 \
		--results "$res" -- sh -c 'echo data >f && cat f && ls -l && rm f' || rc=1
	patched_qemu "$res" || rc=1
	grep 'no answer to a kick in 200 ms' "$res/qemu.log" ||
		{ echo "FAIL: QEMU did not give up waiting"; rc=1; }
	late=$(counter_sum "$res/driver-stats" '^share sync\.' deferred)
	inl=$(counter_sum "$res/driver-stats" '^share sync\.' inline)
	echo "driver: sync queues deferred=$late inline=$inl"
	[ "$late" -gt 0 ] || { echo "FAIL: no late completion on a sync queue"; rc=1; }
	counters_agree "$res" share || rc=1
	return $rc
}

# Malformed replies on the sync queues of a real VMM: each fails its one
# request with EIO inside the kick and the share goes on working
# (tests/vm/scenarios/faults, as the qemu-KERNEL:faults rows run it on
# stock QEMU's request queues); the bad replies were counted on sync queues.
# Then the device dies in the middle of a sync kick (close: it shuts its
# socket and that queue's kick channel) with lookups waiting: the vCPU
# goes on, QEMU asks for a reset, every request ends with ENOTCONN and the
# unmount completes (the run ends within its time).
qemu_sync_faults() {
	local res=$logs/qemu-sync-6.12:faults.results bad rc=0
	# shellcheck disable=SC2086 # a word list on purpose
	faults qemu-sync-6.12:faults --substrate qemu --kernel 6.12 --cpus 2 --driver ours \
		--sync on --timeout 300 -- "$repo/tests/vm/scenarios/faults" $bad_replies never=8 close || rc=1
	patched_qemu "$res" || rc=1
	grep -h "the back-end is gone" "$res/qemu.log" ||
		{ echo "FAIL: QEMU did not report the back-end gone"; rc=1; }
	bad=$(counter_sum "$res/driver-stats" '^share sync\.' bad_reply)
	echo "driver: bad replies on sync queues: $bad"
	[ "$bad" -gt 0 ] || { echo "FAIL: no bad reply met on a sync queue"; rc=1; }
	return $rc
}

# The patched QEMU with a device that does not offer the feature (Debian's
# virtiofsd): the driver negotiates no sync queue, the suite passes on the
# request queues and nothing was reaped inline.
qemu_sync_old_device() {
	local name=qemu-sync-6.12:old-device res rc=0 inl
	res=$logs/$name.results
	vm_suite none "$name" --substrate qemu --qemu patched --kernel 6.12 --cpus 2 \
		--driver ours --device virtiofsd || rc=1
	patched_qemu "$res" || rc=1
	grep -q '^share sync\.' "$res/driver-stats" && { echo "FAIL: sync queues without the feature"; rc=1; }
	inl=$(counter_sum "$res/driver-stats" '^share ' inline)
	echo "driver: request queues only, inline=$inl"
	[ "$inl" = 0 ] || { echo "FAIL: $inl requests reaped inline"; rc=1; }
	return $rc
}
