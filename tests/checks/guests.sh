# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/guests.sh: one guest: KUnit, the suite with its proof of
# path, and the scenarios of one device. Sourced by tests/check.sh, whose
# rows call these functions; they use its variables ($repo, $logs,
# $VFS_CACHE and the like) and counter_sum (tests/vm/counters.sh).

# kunit [NAME RUNNER-ARGS...]
kunit() {
	local out name=${1:-kunit}
	shift
	out=$("$repo/tests/vm/run" --driver none --results "$logs/$name.results" "$@" \
		--append 'kunit.enable=1 kunit.filter_glob=virtio_fs_sync*' -- \
		sh -c 'cat /sys/kernel/debug/kunit/virtio_fs_sync*/results') || return 1
	echo "$out"
	# KTAP: every suite and case of ours must say ok, and there must be some.
	echo "$out" | grep -qE '^ *ok [0-9]+ ' || { echo "no KUnit results"; return 1; }
	! echo "$out" | grep -E '^ *not ok [0-9]+ '
}

# verify_share DIR [WRITERS]: the suite's stress data in the share DIR,
# verified on the host; nothing to verify when the suite ran with WRITERS 0.
verify_share() {
	if [ "${2:-}" = 0 ]; then
		echo "# no stress writers: nothing to verify on the host"
		return 0
	fi
	if [ ! -f "$1/suite-stress/MANIFEST" ]; then
		echo "no MANIFEST on the host"
		return 1
	fi
	echo "# host-side verify-manifest"
	"$repo/tests/suite/bin/verify-manifest" "$1/suite-stress"
}

# suite_writers NAME RUNNER-ARGS...: STRESS_WRITERS for the suite in this
# guest: 0 on Debian's 6.1 kernels (below), where the row's line says so;
# else empty, the suite's default.
suite_writers() {
	local name=$1
	shift
	case " $* " in
	*" --kernel 6.1 "* | *" --kernel 6.1-rt "*)
		echo "without the stress writers on Debian 6.1 (TESTING.md: Debian 6.1's lost request)" \
			>"$logs/$name.note"
		echo 0
		;;
	esac
}

# vm_suite MODE NAME RUNNER-ARGS...: the in-guest suite on a fresh share, the
# stress data verified on the host, the path proven from the counters
# (MODE sync|async|none). A guest that hung gets its diagnosis
# (hang_diagnosis) in the log.
vm_suite() {
	local mode=$1 name=$2 share rc=0 writers
	shift 2
	writers=$(suite_writers "$name" "$@")
	share=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --share "$share" --results "$logs/$name.results" "$@" -- \
		env STRESS_WRITERS="$writers" "$repo/tests/suite/run-suite.sh" /mnt/share || rc=1
	[ $rc = 0 ] || ! grep -q 'the guest hung' "$logs/$name.log" 2>/dev/null || hang_diagnosis "$name"
	verify_share "$share" "$writers" || rc=1
	if [ "$mode" != none ]; then
		echo "# proof of path ($mode)"
		"$repo/tests/vm/check-path" "$mode" "$logs/$name.results" || rc=1
	fi
	rm -rf "$share"
	return $rc
}

# Debian's 6.1 kernels now and then left a request of the suite's stress
# test unanswered for good, with in-tree virtiofs and with ours, with
# Debian's virtiofsd and with the reference device: a writer hung
# (request_wait_answer or fsync) until the row's time ran out. The cause
# is not known (TESTING.md, "Debian 6.1's lost request"); the suite runs there
# without its stress writers.
#
# ring_totals FILE: of a device's stats with ring indices (dev-stats.at-
# timeout), "UNSEEN HELD BUSY": chains made available that it never took,
# chains it took and never gave back, and queues with no indices (a sync
# kick held them, or their rings were not mapped). Only the queue lines:
# the first line is the device's own.
ring_totals() {
	awk '$1 !~ /^queue=/ { next }
		{ a = p = u = -1
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "avail") a = kv[2]
			if (kv[1] == "popped") p = kv[2]
			if (kv[1] == "used") u = kv[2]
		}
		if (a < 0) { busy++; next }
		unseen += (a - p + 65536) % 65536
		held += (p - u + 65536) % 65536
	} END { print unseen + 0, held + 0, busy + 0 }' "$1"
}

# hang_diagnosis NAME: one line on a row's run that hung: what the
# reference device's rings held when the stress test reported a hung
# writer (dev-stats.at-hang) or else when the runner gave up on the guest
# (dev-stats.at-timeout): chains it never saw, chains it held; and the
# FUSE frames where a writer of the stress test waited (its report in the
# console) or else the first hung task.
hang_diagnosis() {
	local res=$logs/$1.results rings frames unseen held busy waiting blocked
	if [ -s "$res/dev-stats.at-hang" ]; then
		read -r unseen held busy < <(ring_totals "$res/dev-stats.at-hang")
		rings="device at the writer's report: $unseen unseen, $held held, $busy busy queues"
	elif [ -s "$res/dev-stats.at-timeout" ]; then
		read -r unseen held busy < <(ring_totals "$res/dev-stats.at-timeout")
		rings="device: $unseen unseen, $held held, $busy busy queues"
	else
		rings="no device snapshot"
	fi
	# the stress test's report of a hung writer (its /proc/PID/stack), or
	# else the kernel's first hung task
	frames=$(grep 'stress: writer [0-9]* hung in' "$res/console" 2>/dev/null)
	[ -n "$frames" ] || frames=$(grep -A40 -m1 'blocked for more than' "$res/console" 2>/dev/null)
	frames=$(echo "$frames" | grep -oE '(fuse|request|virtio)_[a-z_]+' | awk '!seen[$0]++' |
		head -n 4 | paste -sd, -)
	# what the stress test's report put beside it: each FUSE connection's
	# unanswered requests, and the tasks sysrq w found blocked
	waiting=$(grep -oE 'fuse connection [0-9]+ waiting=[0-9]+' "$res/console" 2>/dev/null |
		sed 's/fuse connection \([0-9]*\) waiting=/\1:/' | paste -sd, -)
	blocked=$(grep -oE 'task:[^ ]+ +state:D' "$res/console" 2>/dev/null |
		sed 's/task:\([^ /]*\).*/\1/' | sort | uniq -c | awk '{ print $1 " " $2 }' | paste -sd, -)
	echo "hung ($rings; waiting in ${frames:-?}; unanswered per connection ${waiting:-?}; blocked tasks ${blocked:-?})"
}

# upstream_suite NAME RUNNER-ARGS...: the suite on the kernel's own
# virtiofs (none of the project's driver code runs): it shows the suite
# holds on the reference implementation. Such a row is given 240 s (it
# takes 20-40, a few times that on a loaded host).
upstream_suite() {
	local name=$1
	shift
	vm_suite none "$name" --timeout 240 "$@"
}

# kicks NAME channel|in-band RUNNER-ARGS...: the suite on sync queues, and
# the kicks went the way asked: on each queue's own kick channel (the test
# kernel's uml-virtio-kick-channel.patch with the device's offer, the
# default) or in-band over the vhost-user socket (--no-kick-channel).
kicks() {
	local name=$1 want=$2 res=$logs/$1.results rc=0 line
	shift 2
	vm_suite sync "$name" --driver ours --sync on "$@" || rc=1
	echo "# kicks ($want)"
	grep -h "kicks " "$res/device.log" || { echo "no negotiation line in device.log"; return 1; }
	case $want in
	channel)
		grep -q "kicks on per-queue channels" "$res/device.log" ||
			{ echo "FAIL: kick channels not negotiated"; rc=1; }
		# every sync queue was kicked on its channel, and saw requests
		while read -r line; do
			echo "$line"
			case $line in
			*" channel_kicks=0 "* | *" requests=0 "*) echo "FAIL: a sync queue without channel kicks"; rc=1 ;;
			esac
		done < <(grep 'type=sync' "$res/dev-stats")
		grep -q 'type=sync' "$res/dev-stats" || { echo "FAIL: no sync queue"; rc=1; }
		;;
	in-band)
		grep -q "kicks in-band" "$res/device.log" ||
			{ echo "FAIL: in-band kicks not negotiated"; rc=1; }
		[ "$(counter_sum "$res/dev-stats" . channel_kicks)" = 0 ] ||
			{ echo "FAIL: kicks on a channel"; rc=1; }
		;;
	esac
	return $rc
}

# kick_floor NAME N RUNNER-ARGS...: the driver's test-only kick floor
# (tests/vm/scenarios/kick-floor) makes N kicks of the sync queue with
# nothing on it and reports N. The device agrees: its sync queues saw
# exactly N kicks more than requests, and answered none with a call (a
# call per empty kick would make at least N). Times are never asserted.
kick_floor() {
	local name=$1 n=$2 res=$logs/$1.results kicks reqs calls
	shift 2
	"$repo/tests/vm/run" --driver ours --sync on --results "$res" "$@" -- \
		"$repo/tests/vm/scenarios/kick-floor" "$n" || return 1
	grep 'type=sync' "$res/dev-stats" || { echo "FAIL: no sync queue in dev-stats"; return 1; }
	kicks=$(counter_sum "$res/dev-stats" 'type=sync' channel_kicks)
	reqs=$(counter_sum "$res/dev-stats" 'type=sync' requests)
	calls=$(counter_sum "$res/dev-stats" 'type=sync' calls)
	echo "device, sync queues: channel_kicks=$kicks requests=$reqs calls=$calls"
	[ $((kicks - reqs)) = "$n" ] ||
		{ echo "FAIL: $((kicks - reqs)) kicks without a request, want $n"; return 1; }
	[ "$calls" -lt "$n" ] || { echo "FAIL: $calls calls: the empty kicks were answered"; return 1; }
}

# noflush: two shares on tmpfs in one boot, the device's --flush=auto (the
# default) and --flush=always; each device traces its requests. After the
# same create+write+close loop in both, auto's trace has no FLUSH (opcode
# 25: the opens answered FOPEN_NOFLUSH) and always's has at least one per
# file; the files hold what was written.
noflush() {
	local res=$logs/uml:noflush.results tmp a b n=50 fa fb rc=0
	[ "$(stat -f -c %T /dev/shm)" = tmpfs ] || { echo "FAIL: /dev/shm is not a tmpfs"; return 1; }
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vfs-noflush.XXXXXX")
	a=$(mktemp -d /dev/shm/vfs-noflush-auto.XXXXXX)
	b=$(mktemp -d /dev/shm/vfs-noflush-always.XXXXXX)
	"$repo/tests/vm/run" --driver ours --sync on --results "$res" \
		--share "$a" --dev-opts "--trace-file=$tmp/trace-auto" \
		--share "$b" --dev-opts "--trace-file=$tmp/trace-always --flush=always" -- \
		sh -c 'for d in /mnt/share /mnt/share1; do i=0; while [ $i -lt "$1" ]; do
			echo "x$i" > $d/f$i || exit 1; i=$((i + 1)); done; done' sh "$n" || rc=1
	fa=$(grep -c ' opcode=25 ' "$tmp/trace-auto")
	fb=$(grep -c ' opcode=25 ' "$tmp/trace-always")
	echo "FLUSH requests for $n create+write+close: auto $fa, always $fb"
	grep -h -- '--flush=' "$res"/device.log* || true
	[ "$fa" = 0 ] || { echo "FAIL: FLUSH sent with --flush=auto on tmpfs"; rc=1; }
	[ "$fb" -ge "$n" ] || { echo "FAIL: fewer than $n FLUSH with --flush=always"; rc=1; }
	[ "$(cat "$a/f7" "$b/f7")" = "$(printf 'x7\nx7')" ] || { echo "FAIL: file contents"; rc=1; }
	mkdir -p "$res"
	cp "$tmp"/trace-* "$res/" 2>/dev/null
	rm -rf "$tmp" "$a" "$b"
	return $rc
}

# forget_batch NAME N [--batch B] RUNNER-ARGS...: with --cache=never each
# stat and unlink ends in a FORGET; the driver batches them on the hiprio
# queue (tests/vm/scenarios/forget-batch: at most one hiprio message per 4
# FORGETs, every one sent by the unmount; with --batch, the mount option
# forget_batch=B: at most B per message). The longest wait, 1 s, keeps
# the batches large however slow the loaded host makes each stat. The
# device agrees: its hiprio queue received exactly the messages the driver
# submitted there.
forget_batch() {
	local name=$1 n=$2 res=$logs/$1.results h dev batch=
	shift 2
	if [ "${1:-}" = --batch ]; then
		batch=$2
		shift 2
	fi
	"$repo/tests/vm/run" --driver ours --sync on --results "$res" --no-mount \
		--dev-opts --cache=never --module-param forget_delay_ms=1000 "$@" -- \
		"$repo/tests/vm/scenarios/forget-batch" "$n" ${batch:+"$batch"} ||
		return 1
	h=$(sed -n 's/^hiprio=\([0-9]*\) .*/\1/p' "$res/out")
	dev=$(counter_sum "$res/dev-stats" 'type=hiprio' requests)
	echo "device, hiprio queue: requests=$dev; driver: hiprio=$h"
	[ -n "$h" ] && [ "$dev" = "$h" ] ||
		{ echo "FAIL: the device saw $dev hiprio requests, the driver sent ${h:-?}"; return 1; }
}

# A device offering VIRTIO_FS_F_SYNC with a config too short for
# num_sync_queues (40 or 44 bytes, all ones past it, no sync queues): the
# count reads all ones, which no device has; the driver says so once and
# mounts interrupt-driven, without trying to set sync queues up.
short_config() {
	local res=$logs/uml:config-$1.results out n
	out=$("$repo/tests/vm/run" --results "$res" --driver ours --sync on \
		--dev-opts "--config-size=$1" -- \
		sh -c 'cat /sys/fs/virtio_fs_sync/share/queues && echo data >/mnt/share/f && cat /mnt/share/f') ||
		return 1
	echo "$out"
	echo "$out" | grep -qx 'hiprio=1 request=1 sync=0' || { echo "expected no sync queues"; return 1; }
	echo "$out" | grep -qx data || { echo "the share does not work"; return 1; }
	n=$(grep -c "num_sync_queues at 44 reads 0xffffffff, past the config space" "$res/dmesg")
	[ "$n" = 1 ] || { echo "expected the message on the count once, got $n"; return 1; }
	"$repo/tests/vm/check-path" async "$res"
}

# 64 queues (1 + 62 + 1): debugfs has every line, sysfs whole lines and a
# last line saying how many did not fit
many_queues() {
	local out
	out=$("$repo/tests/vm/run" --results "$logs/uml:many-queues.results" --driver ours \
		--queues 62 --sync-queues 1 -- sh -c '
		d=/sys/kernel/debug/virtio_fs_sync/share/stats s=/sys/fs/virtio_fs_sync/share/stats
		echo "debugfs $(grep -c "^[a-z]*\.*[0-9]* submitted=.* demoted=[0-9]*\$" $d) $(grep -c . $d)"
		echo "sysfs $(grep -c "^[a-z]*\.*[0-9]* submitted=.* demoted=[0-9]*\$" $s) $(grep -c . $s)"
		tail -n 1 $s') || return 1
	echo "$out"
	echo "$out" | grep -qx "debugfs 64 64" || { echo "debugfs: expected 64 whole lines"; return 1; }
	echo "$out" | awk '$1 == "sysfs" { whole = $2; all = $3 }
		/^truncated: / { more = $2 }
		END { exit !(all == whole + 1 && whole + more == 64) }' ||
		{ echo "sysfs: expected whole lines and one truncated: line for the rest"; return 1; }
}

# scripts/virtio-fs-sync-status in a guest: with sync queues, the share's
# line says the sync path is on and how many requests completed inside the
# kick (exit 0); loaded with sync=0, that it is off and why (exit 1).
status_tool() {
	local res=$logs/uml:status-tool.results rc=0 sync line want out
	for sync in on off; do
		if [ $sync = on ]; then
			line='^share: virtio[0-9]*, virtio_fs_sync, hiprio=1 request=1 sync=1; sync path on: [1-9][0-9]* of [1-9][0-9]* requests completed inside the kick ([0-9.]* %).*; mounted at: /mnt/share$'
			want='exit 0'
		else
			line='^share: .*; sync path off: the module was loaded with sync=0; mounted at: /mnt/share$'
			want='exit 1'
		fi
		# shellcheck disable=SC2016 # $1 and $? are the guest shell's
		out=$("$repo/tests/vm/run" --results "$res.sync-$sync" --driver ours --sync $sync -- \
			sh -c 'echo x >/mnt/share/f && cat /mnt/share/f >/dev/null && "$1"; echo "exit $?"' \
			sh "$repo/scripts/virtio-fs-sync-status") || return 1
		echo "$out"
		echo "$out" | grep -q "$line" || { echo "FAIL: sync $sync: no line matching $line"; rc=1; }
		echo "$out" | grep -qx "$want" || { echo "FAIL: sync $sync: expected $want"; rc=1; }
	done
	return $rc
}

# bench/ab-uml.sh --verdict, the A/B with its A/A control in one guest,
# two rounds: the checks of ab-uml.sh pass, and each pair gets a ratio and
# a 95 % interval on every row, and the word that two rounds resolve nothing.
ab_verdict() {
	local out rc=0
	out=$("$repo/bench/ab-uml.sh" --results "$logs/uml:ab-in-guest.results" \
		--configs "intree intree-again ours-async ours-sync" --repeats 2 --verdict) || rc=1
	echo "$out"
	echo "$out" | grep -q '^A/B verdict: 2 round(s) of intree intree-again ours-async ours-sync$' ||
		{ echo "FAIL: no verdict of two rounds"; rc=1; }
	local pair
	for pair in "ours-sync vs intree" "ours-async vs intree" "ours-sync vs ours-async"; do
		echo "$out" | grep -Eq " $pair +[0-9.]+x \[[0-9.]+-[0-9.]+\] (faster|slower|no difference resolved|not resolved: the control moved|too few rounds to resolve \(2; 5 or more\)) " ||
			{ echo "FAIL: no verdict for $pair"; rc=1; }
	done
	return $rc
}
