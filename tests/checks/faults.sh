# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/faults.sh: a hostile device: malformed replies, full and too-
# small queues. Sourced by tests/check.sh, whose rows call these functions;
# they use its variables ($repo, $logs, $VFS_CACHE and the like) and
# counter_sum (tests/vm/counters.sh).

# faults NAME RUNNER-ARGS -- KINDS: tests/vm/scenarios/faults in a guest
faults() {
	local name=$1
	shift
	"$repo/tests/vm/run" --results "$logs/$name.results" --dev-opts --faults "$@"
}

# inline completions while a buffer is outstanding raise no interrupt:
# the device sent (almost) no used-buffer notification on the sync queue
# (a device without a budget: one with a budget signals what it completes
# late, as it should)
sync_quiet() {
	local res=$logs/uml:sync-quiet.results calls inl
	"$repo/tests/vm/run" --results "$res" --driver ours --sync on \
		--dev-opts '--faults --sync-budget-us=0' -- \
		"$repo/tests/vm/scenarios/faults" never=1 quiet close || return 1
	calls=$(counter_sum "$res/dev-stats" 'type=sync' calls)
	inl=$(counter_sum "$res/dev-stats" 'type=sync' inline)
	echo "device: sync queue inline=$inl calls=$calls"
	[ "$inl" -ge 200 ] || { echo "expected at least 200 inline completions"; return 1; }
	[ "$calls" -le 2 ] || { echo "FAIL: $calls interrupts for inline completions"; return 1; }
}

# A queue of 8 entries on each of 2 request queues: the suite passes on
# them, and requests that outnumber the entries (tests/vm/scenarios/
# queue-full, 16 readers on one CPU against a device that waits 2 ms before
# each request) meet -ENOSPC, wait for room and complete: the driver's full
# counter proves it. (The suite alone fills the queues only now and then.)
tiny_queue() {
	vm_suite async qemu-6.12:tiny-queue --substrate qemu --kernel 6.12 --cpus 2 \
		--driver ours --qemu stock --queue-size 8 || return 1
	"$repo/tests/vm/run" --substrate qemu --kernel 6.12 --cpus 2 --driver ours --qemu stock --queue-size 8 \
		--dev-opts --delay-us=2000 --results "$logs/qemu-6.12:tiny-queue-full.results" -- \
		"$repo/tests/vm/scenarios/queue-full"
}

# Queues too small for a request: the mount is refused with a message, no WARN.
queue_too_small() {
	local res=$logs/qemu-6.12:queue-too-small.results rc
	"$repo/tests/vm/run" --substrate qemu --kernel 6.12 --cpus 2 --driver ours --qemu stock \
		--queue-size 2 --results "$res" -- true
	rc=$?
	[ $rc = 126 ] || { echo "expected the mount to be refused (126), got $rc"; return 1; }
	grep "queues of 2 entries are too small" "$res/console" || { echo "no message"; return 1; }
	! grep -E -A 5 "WARNING:|BUG:" "$res/console"
}

# A guest that runs out of time: tests/vm/run has the reference device
# write its counters while the guest is still up, with its rings' indices
# (dev-stats.at-timeout). A LOOKUP the device never answers is one chain
# popped and not used; every other queue answered all it was given.
timeout_snapshot() {
	local res=$logs/uml:timeout-snapshot.results rc=0 unseen held busy
	"$repo/tests/vm/run" --driver ours --sync off --timeout 20 --results "$res" \
		--dev-opts --faults -- stat /mnt/share/vfs-fault-never
	rc=$?
	[ $rc = 124 ] || { echo "FAIL: exit $rc, not 124 (a hang)"; return 1; }
	[ -s "$res/dev-stats.at-timeout" ] || { echo "FAIL: no dev-stats.at-timeout"; return 1; }
	cat "$res/dev-stats.at-timeout"
	read -r unseen held busy < <(ring_totals "$res/dev-stats.at-timeout")
	[ "$unseen $held $busy" = "0 1 0" ] ||
		{ echo "FAIL: expected one chain held, none unseen, no busy queue; got $unseen $held $busy"; return 1; }
}
