#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/check.sh: what `make check` runs. Sets up a fresh Debian machine
# (packages, kernels, builds; all cached outside the repo), runs the host-side
# tests, then boots the guest matrix: UML 6.12 (the sync path), SMP UML 7.3
# and QEMU/TCG with Debian's 6.1, 6.12 and 7.3 kernels and the PREEMPT_RT
# flavours of 6.1 and 6.12 (7.3's module builds in a trixie root,
# scripts/build-root.sh). One line per test, then
# "N passed, N failed". Logs: build/check/ (VFS_CHECK_LOGS).
#
# VFS_CHECK_ONLY=glob runs only the tests whose names match (setup and
# builds always run).
set -u

repo=$(cd "$(dirname "$0")/.." && pwd)
logs=${VFS_CHECK_LOGS:-$repo/build/check}
only=${VFS_CHECK_ONLY:-*}
rm -rf "$logs"
mkdir -p "$logs"
export VFS_CACHE=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}

# shellcheck source=tests/vm/counters.sh
. "$repo/tests/vm/counters.sh"

passed=0 failed=0
failures=()
t0=$SECONDS

# t NAME CMD...: one test; its output goes to the log, a failure shows the tail.
t() {
	local name=$1 start=$SECONDS rc
	shift
	# shellcheck disable=SC2053
	[[ $name == $only || $name == setup:* || $name == build:* ]] || return 0
	"$@" >"$logs/$name.log" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ -f "$logs/$name.retried" ]; then
		echo "ok $name ($((SECONDS - start)) s; on its second run, the first failed:" \
			"build/check/$name.first.log)"
		passed=$((passed + 1))
	elif [ $rc = 0 ]; then
		echo "ok $name ($((SECONDS - start)) s)"
		passed=$((passed + 1))
	else
		echo "not ok $name (exit $rc, $((SECONDS - start)) s, log build/check/$name.log)"
		tail -n 30 "$logs/$name.log" | sed 's/^/    /'
		failed=$((failed + 1))
		failures+=("$name")
	fi
	return $rc
}

# shellcheck source=vm/counters.sh
. "$repo/tests/vm/counters.sh"

# --- setup and builds --------------------------------------------------------
t setup:packages "$repo/tests/setup/install-deps.sh"
# The patched QEMU (scripts/build-qemu.sh), the longest build of a cold
# cache, starts now in the background at nice 19 with two jobs: it takes
# the CPU time the downloads, the other builds and the guests leave idle.
# build:qemu, before the first row that runs it, waits for it (the
# script's lock) and finds it built, or fails with the script's message.
# With the cache warm it finds the binary at once.
VFS_QEMU_JOBS=${VFS_QEMU_JOBS:-2} nice -n 19 "$repo/scripts/build-qemu.sh" \
	>"$logs/qemu-build.log" 2>&1 &
qemu_build=$!
t setup:kernel-6.12 "$repo/scripts/fetch-kernel.sh" 6.12
t setup:kernel-6.1 "$repo/scripts/fetch-kernel.sh" 6.1
t setup:kernel-7.3 "$repo/scripts/fetch-kernel.sh" 7.3
t setup:root-trixie "$repo/scripts/build-root.sh" trixie
t setup:kernel-6.12-rt "$repo/scripts/fetch-kernel.sh" 6.12-rt
t setup:kernel-6.1-rt "$repo/scripts/fetch-kernel.sh" 6.1-rt
t build:device make -C "$repo/vhost-user-fs" -j2
t build:suite make -C "$repo/tests/suite" -j2
t build:module-6.12 make -C "$repo" KVER=6.12
t build:module-6.1 make -C "$repo" KVER=6.1
t build:module-7.3 make -C "$repo" KVER=7.3
# The PREEMPT_RT branch was the one compiled: the sync path pins with
# migrate_disable() and its queue lock is an rt_mutex-based spinlock_t,
# taken with a trylock.
module_rt() {
	local ko syms s
	make -C "$repo" KVER="$1" || return 1
	ko=$(make -s -C "$repo" KVER="$1" print-ko)
	syms=$(nm -u "$ko") || return 1
	for s in migrate_disable migrate_enable rt_spin_lock rt_spin_trylock rt_spin_unlock; do
		echo "$syms" | grep -qw "$s" || { echo "$ko does not use $s"; return 1; }
	done
}
t build:module-6.12-rt module_rt 6.12-rt
t build:module-6.1-rt module_rt 6.1-rt
t build:uml-debug "$repo/tests/setup/build-uml.sh" debug
t build:uml-7.3-debug "$repo/tests/setup/build-uml.sh" debug 7.3
# make module-debug keeps the Kbuild's flags (fuse_i.h, probes, compat.h)
# and adds -DDEBUG.
module_debug() {
	local cmd
	make -C "$repo" KVER=6.12 BUILD_NAME=debug-6.12 module-debug || return 1
	cmd=$repo/build/debug-6.12/.virtio_fs_sync_virtio.o.cmd
	grep -q -- '-DDEBUG' "$cmd" || { echo "no -DDEBUG in $cmd"; return 1; }
	grep -q -- '-include [^ ]*/compat\.h' "$cmd" || { echo "compat.h not included"; return 1; }
}
t build:module-debug-6.12 module_debug

# --- static checks ------------------------------------------------------------
no_warnings() {
	"$@" 2>&1 | tee /dev/stderr | grep -E 'warning:|error:' && return 1
	return 0
}
t static:style make -s -C "$repo" style
t static:sparse no_warnings make -s -C "$repo" sparse
version_code_outside_compat() {
	! git -C "$repo" grep -l LINUX_VERSION_CODE -- '*.c' '*.h' ':!compat.h' ':!tests/'
}
t static:no-version-code version_code_outside_compat
# Every module parameter is in README's table and the Kconfig help.
t static:params-documented "$repo/tests/static/params-documented.sh" "$repo"
# No tracked generated files, issue numbers or outside paths.
t static:housekeeping "$repo/tests/static/housekeeping.sh" "$repo"
# The Makefile's version check is the only guard where MODVERSIONS is off
# (Debian's 7.3): a fuse header of another kernel must be refused.
version_guard() {
	local out
	out=$(make -C "$repo" KVER=7.3 BUILD_NAME=version-guard \
		FUSE_SRC="$VFS_CACHE/kernels/6.12/fuse" 2>&1) && { echo "$out"; echo "built with 6.12's fuse headers"; return 1; }
	echo "$out"
	echo "$out" | grep -q 'is 7\.3\.[0-9]* but .* is from 6\.12\.'
}
t static:version-guard version_guard

# --- host-side tests of the reference device ----------------------------------
t device:unit make -C "$repo/vhost-user-fs" check
# every input that once crashed the fuzzer, then a short bounded run
t device:fuzz make -C "$repo/vhost-user-fs" fuzz-regress fuzz FUZZ_TIME=30

# --- host-side tests of the harness (tests/harness: tests/vm/run's parts) ------
t harness:unit env PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -v -s "$repo/tests/harness" \
	-t "$repo/tests" -p 'test_*.py'

# --- DKMS, in a scratch tree, against each Debian header set -------------------
# dkms_check SERIES: dkms add, build and install as on a Debian guest (fuse_i.h
# from the linux-source package's tarball, here the cached one), with every
# dkms tree in a scratch directory: --installtree is a copy of the kernel's
# /lib/modules/<release>, so dkms install writes there, and --no-depmod
# keeps it away from the host's /lib/modules (dkms runs a plain `depmod -a
# <release>`); depmod -b then indexes the scratch tree against the kernel's
# Module.symvers. The QEMU guest of that kernel loads the module with
# `modprobe -d <scratch root>`, so it is the installed file that is loaded.
# Nothing under the host's /lib/modules, /boot or /var/lib/dkms may change.
dkms_check() {
	local k=$1 kc=$VFS_CACHE/kernels/$1 tmp ver rel mods inst out rc=0
	local a=()
	rel=$(cat "$kc/release")
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vfs-dkms.XXXXXX")
	touch "$tmp/stamp"
	mods=$tmp/root/lib/modules/$rel
	mkdir -p "$tmp/dkms" "$mods"
	cp -a "$kc/modules/." "$mods/"
	make -s -C "$repo" dkms-install DESTDIR="$tmp" PREFIX=/usr || { rm -rf "$tmp"; return 1; }
	ver=$(basename "$tmp"/usr/src/virtio_fs_sync-*)
	ver=${ver#virtio_fs_sync-}
	a=(--sourcetree "$tmp/usr/src" --dkmstree "$tmp/dkms" --installtree "$tmp/root/lib/modules"
		-m virtio_fs_sync -v "$ver")
	echo "# dkms add, build, install"
	# A kernel newer than the host builds in its build root (the Makefile's
	# BUILD_ROOT_<series>), as make KVER= does; on its own Debian release
	# the compiler would be the system's.
	local broot
	broot=$(make -s -C "$repo" KVER="$k" print-build-root)
	dkms add "${a[@]}" &&
		VFS_BUILD_ROOT=$broot LINUX_SOURCE_DIR=$kc/srcpkg/usr/src dkms build "${a[@]}" -k "$rel" --kernelsourcedir "$kc/kdir" &&
		dkms install "${a[@]}" -k "$rel" --kernelsourcedir "$kc/kdir" --no-depmod || rc=1
	if [ $rc != 0 ]; then
		tail -n 25 "$tmp/dkms/virtio_fs_sync/$ver/build/make.log" 2>/dev/null
		rm -rf "$tmp"
		return 1
	fi
	dkms status "${a[@]}" -k "$rel" | tee "$tmp/status"
	grep -q ': installed' "$tmp/status" || { echo "dkms status does not say installed"; rc=1; }

	echo "# depmod of the scratch tree"
	depmod -b "$tmp/root" -e -E "$kc/kdir/Module.symvers" "$rel" 2>&1 | tee "$tmp/depmod.log"
	[ -s "$tmp/depmod.log" ] && { echo "depmod complained"; rc=1; }
	inst=$(modinfo -b "$tmp/root" -k "$rel" -F filename virtio_fs_sync)
	echo "installed: $inst"
	case $inst in
	"$mods"/updates/*) ;;
	*) echo "the module is not installed under $mods/updates"; rc=1 ;;
	esac
	modinfo -F vermagic "$inst" | tee "$tmp/vermagic"
	grep -q "^$rel " "$tmp/vermagic" || { echo "vermagic is not $rel"; rc=1; }

	echo "# the host's module trees are untouched"
	find /lib/modules /boot /var/lib/dkms -newer "$tmp/stamp" 2>/dev/null | tee "$tmp/touched"
	[ -s "$tmp/touched" ] && { echo "dkms changed the host"; rc=1; }

	if [ $rc = 0 ]; then
		echo "# modprobe -d in a QEMU $k guest"
		out=$("$repo/tests/vm/run" --substrate qemu --kernel "$k" --driver intree -- \
			sh -c "modprobe -v -d $tmp/root virtio_fs_sync && cat /sys/module/virtio_fs_sync/srcversion && grep -w virtiofs_sync /proc/filesystems && rmmod virtio_fs_sync") ||
			rc=1
		echo "$out"
		echo "$out" | awk -v p="$inst" '$1 == "insmod" && $2 == p { f = 1 } END { exit !f }' ||
			{ echo "modprobe did not load $inst"; rc=1; }
		echo "$out" | grep -qxF "$(modinfo -F srcversion "$inst")" ||
			{ echo "the loaded module's srcversion is not the installed one's"; rc=1; }
	fi
	rm -rf "$tmp"
	return $rc
}
t dkms:6.12 dkms_check 6.12
t dkms:6.1 dkms_check 6.1
t dkms:7.3 dkms_check 7.3
# scripts/intree.sh --patch on a pristine fs/fuse/, which then builds.
for k in 6.12 6.1 7.3; do t "intree:patch-$k" "$repo/tests/intree-check.sh" $k; done

# --- KUnit in UML -------------------------------------------------------------
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
t uml:kunit kunit

# The test kernels' FP state: the threads of one guest process, which UML
# runs in one host process, keep their vector registers across the switches
# between them (tests/suite/fpstate.c; 6.12's UML needs
# tests/vm/patches/uml-xstate-host-size.patch for it on AMX hosts).
t uml:fp-state "$repo/tests/vm/run" --driver none -- "$repo/tests/suite/bin/fpstate" 4 2000
t uml-7.3:fp-state "$repo/tests/vm/run" --kernel 7.3 --cpus 2 --driver none -- \
	"$repo/tests/suite/bin/fpstate" 4 2000

# --- guests ---------------------------------------------------------------------
# vm_suite MODE NAME RUNNER-ARGS...: the in-guest suite on a fresh share, the
# stress data verified on the host, the path proven from the counters
# (MODE sync|async|none).
vm_suite() {
	local mode=$1 name=$2 share rc=0
	shift 2
	share=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --share "$share" --results "$logs/$name.results" "$@" -- \
		"$repo/tests/suite/run-suite.sh" /mnt/share || rc=1
	if [ -f "$share/suite-stress/MANIFEST" ]; then
		echo "# host-side verify-manifest"
		"$repo/tests/suite/bin/verify-manifest" "$share/suite-stress" || rc=1
	else
		echo "no MANIFEST on the host"
		rc=1
	fi
	if [ "$mode" != none ]; then
		echo "# proof of path ($mode)"
		"$repo/tests/vm/check-path" "$mode" "$logs/$name.results" || rc=1
	fi
	rm -rf "$share"
	return $rc
}

t uml:ours-sync vm_suite sync uml:ours-sync --driver ours --sync on
t uml:ours-sync0 vm_suite async uml:ours-sync0 --driver ours --sync off
t uml:ours-nofeature vm_suite async uml:ours-nofeature --driver ours --dev-opts --sync-queues=0
t uml:intree vm_suite none uml:intree --driver intree

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
t uml:kick-channel kicks uml:kick-channel channel
t uml:kick-inband kicks uml:kick-inband in-band --dev-opts --no-kick-channel

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
t uml:kick-floor kick_floor uml:kick-floor 1000
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
t uml:noflush noflush

# forget_batch NAME N RUNNER-ARGS...: with --cache=never each stat and
# unlink ends in a FORGET; the driver batches them on the hiprio queue
# (tests/vm/scenarios/forget-batch: at most one hiprio message per 4
# FORGETs, every one sent by the unmount). The longest wait, 1 s, keeps
# the batches large however slow the loaded host makes each stat. The
# device agrees: its hiprio queue received exactly the messages the driver
# submitted there.
forget_batch() {
	local name=$1 n=$2 res=$logs/$1.results h dev
	shift 2
	"$repo/tests/vm/run" --driver ours --sync on --results "$res" --no-mount \
		--dev-opts --cache=never --module-param forget_delay_ms=1000 "$@" -- \
		"$repo/tests/vm/scenarios/forget-batch" "$n" ||
		return 1
	h=$(sed -n 's/^hiprio=\([0-9]*\) .*/\1/p' "$res/out")
	dev=$(counter_sum "$res/dev-stats" 'type=hiprio' requests)
	echo "device, hiprio queue: requests=$dev; driver: hiprio=$h"
	[ -n "$h" ] && [ "$dev" = "$h" ] ||
		{ echo "FAIL: the device saw $dev hiprio requests, the driver sent ${h:-?}"; return 1; }
}
t uml:forget-batch forget_batch uml:forget-batch 400

# a task's O_DIRECT I/O completes inside the kick (FUSE_ASYNC_DIO not
# offered); its cold page-cache reads are readahead (FUSE_ASYNC_READ): with
# sync_background_max_bytes set a 4 KiB one on a sync queue from a work
# item, 256 KiB ones interrupt-driven; by default (0) all interrupt-driven
t uml:direct-io-sync "$repo/tests/vm/run" --results "$logs/uml:direct-io-sync.results" \
	--driver ours --sync on --module-param sync_background_max_bytes=20480 \
	-- "$repo/tests/vm/scenarios/direct-io" sync
t uml:direct-io-sync-nobg "$repo/tests/vm/run" --results "$logs/uml:direct-io-sync-nobg.results" \
	--driver ours --sync on -- "$repo/tests/vm/scenarios/direct-io" sync-nobg
t uml:direct-io-sync0 "$repo/tests/vm/run" --results "$logs/uml:direct-io-sync0.results" \
	--driver ours --sync off -- "$repo/tests/vm/scenarios/direct-io" async

# A device offering VIRTIO_FS_F_SYNC with a config too short for
# num_sync_queues (40 or 44 bytes, all ones past it, no sync queues):
# probe retries without them, says so once, mounts interrupt-driven.
short_config() {
	local res=$logs/uml:config-$1.results out n
	out=$("$repo/tests/vm/run" --results "$res" --driver ours --sync on \
		--dev-opts "--config-size=$1" -- \
		sh -c 'cat /sys/fs/virtio_fs_sync/share/queues && echo data >/mnt/share/f && cat /mnt/share/f') ||
		return 1
	echo "$out"
	echo "$out" | grep -qx 'hiprio=1 request=1 sync=0' || { echo "expected no sync queues"; return 1; }
	echo "$out" | grep -qx data || { echo "the share does not work"; return 1; }
	n=$(grep -c "setting up the sync queues failed" "$res/dmesg")
	[ "$n" = 1 ] || { echo "expected the fallback message once, got $n"; return 1; }
	"$repo/tests/vm/check-path" async "$res"
}
t uml:config-40 short_config 40
t uml:config-44 short_config 44
# 64 queues (1 + 62 + 1): debugfs has every line, sysfs whole lines and a
# last line saying how many did not fit
many_queues() {
	local out
	out=$("$repo/tests/vm/run" --results "$logs/uml:many-queues.results" --driver ours \
		--queues 62 --sync-queues 1 -- sh -c '
		d=/sys/kernel/debug/virtio_fs_sync/share/stats s=/sys/fs/virtio_fs_sync/share/stats
		echo "debugfs $(grep -c "^[a-z]*\.*[0-9]* submitted=.* busy=[0-9]*\$" $d) $(grep -c . $d)"
		echo "sysfs $(grep -c "^[a-z]*\.*[0-9]* submitted=.* busy=[0-9]*\$" $s) $(grep -c . $s)"
		tail -n 1 $s') || return 1
	echo "$out"
	echo "$out" | grep -qx "debugfs 64 64" || { echo "debugfs: expected 64 whole lines"; return 1; }
	echo "$out" | awk '$1 == "sysfs" { whole = $2; all = $3 }
		/^truncated: / { more = $2 }
		END { exit !(all == whole + 1 && whole + more == 64) }' ||
		{ echo "sysfs: expected whole lines and one truncated: line for the rest"; return 1; }
}
t uml:many-queues many_queues
t uml:unbind-under-load "$repo/tests/vm/run" --results "$logs/uml:unbind-under-load.results" \
	--driver ours -- "$repo/tests/vm/scenarios/unbind-under-load"
# mounts race unmounts (sget_fc() tests the superblock of an unmount in
# progress) and removals of the device (tests/vm/scenarios/mount-race)
t uml:mount-race "$repo/tests/vm/run" --results "$logs/uml:mount-race.results" \
	--driver ours --no-mount -- "$repo/tests/vm/scenarios/mount-race" 100

# --- several devices in one guest ---------------------------------------------
# tests/vm/scenarios/two-devices writes TAG.N holding `yes "TAG N" | head -c
# 65536`. shares_files DIR TAG [N]: every file in DIR is TAG.<number> with
# that content (with N: exactly TAG.0 .. TAG.N-1); prints how many.
shares_files() {
	local dir=$1 tag=$2 want=${3:-} f n k=0
	for f in "$dir"/* "$dir"/.[!.]*; do
		[ -e "$f" ] || continue
		n=${f##*/}
		case $n in
		"$tag".[0-9]*) n=${n#"$tag".} ;;
		*) echo "$dir: $n is not a file of $tag"; return 1 ;;
		esac
		case $n in *[!0-9]*) echo "$dir: ${f##*/} is not a file of $tag"; return 1 ;; esac
		if [ -n "$want" ] && [ "$n" -ge "$want" ]; then
			echo "$dir: ${f##*/} should not be there"
			return 1
		fi
		yes "$tag $n" | head -c 65536 | cmp -s - "$f" || { echo "$dir: ${f##*/} has the wrong content"; return 1; }
		k=$((k + 1))
	done
	[ -z "$want" ] || [ $k = "$want" ] || { echo "$dir: $k files, not $want"; return 1; }
	echo "$dir: $k files of $tag, contents verified"
}
# names_of DIR TAG: every file in DIR is one of TAG's (its last may be cut
# short: its device went away).
names_of() {
	local f
	for f in "$1"/*; do
		[ -e "$f" ] || continue
		case ${f##*/} in
		"$2".[0-9]*) ;;
		*) echo "FAIL: $1: ${f##*/} is not a file of $2"; return 1 ;;
		esac
	done
}
# counters_agree RESULTS TAG [SUFFIX]: TAG's driver counters (driver-stats
# SUFFIX, lines of TAG) and its device's (dev-stats SUFFIX) count the same
# requests per kind of queue, and there were some.
counters_agree() {
	local res=$1 tag=$2 sfx=${3:-} q d v rc=0 total=0
	for q in hiprio request sync; do
		d=$(counter_sum "$res/driver-stats$sfx" "^$tag $q( |\\.)" submitted)
		v=$(counter_sum "$res/dev-stats$sfx" "type=$q " requests)
		echo "$tag $q: driver submitted=$d, device requests=$v"
		[ "$d" = "$v" ] || { echo "FAIL: $tag's $q queues: the driver sent $d, the device saw $v"; rc=1; }
		total=$((total + d))
	done
	[ $total -gt 0 ] || { echo "FAIL: no requests on $tag"; rc=1; }
	return $rc
}
# Two shares at once: share as RUNNER-ARGS say, share1 from a device that
# does not offer sync queues, attached with --no-mount (the scenario mounts
# and empties it). Each share's counters tell their own story: share's
# path is MODE (check-path), share1's all interrupt-driven; the driver's
# counters of each agree with its own device's. In QEMU driver-stats also
# holds the host tree's (tag hostroot).
# two_devices NAME MODE SYNC FILES RUNNER-ARGS...
two_devices() {
	local name=$1 mode=$2 sync=$3 n=$4 a b res rc=0
	shift 4
	res=$logs/$name.results
	a=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	b=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	yes stale | head -c 1000 >"$b/stale"
	"$repo/tests/vm/run" --results "$res" "$@" --share "$a" --share "$b" --dev-opts --sync-queues=0 \
		--no-mount -- "$repo/tests/vm/scenarios/two-devices" io "$sync" 0 "$n" self-mount || rc=1
	echo "# host-side files"
	shares_files "$a" share $((n - n / 4)) || rc=1
	shares_files "$b" share1 $((n - n / 4)) || rc=1
	echo "# each share's counters"
	[ -s "$res/driver-stats.share1" ] || { echo "FAIL: no driver-stats.share1"; rc=1; }
	! grep -v '^share1 ' "$res/driver-stats.share1" || { echo "FAIL: other tags in driver-stats.share1"; rc=1; }
	! grep '^share1 ' "$res/driver-stats" || { echo "FAIL: share1's counters in driver-stats"; rc=1; }
	"$repo/tests/vm/check-path" "$mode" "$res" || rc=1
	"$repo/tests/vm/check-path" async "$res" share1 || rc=1
	! grep ' sync\.' "$res/driver-stats.share1" || { echo "FAIL: share1 has sync queues"; rc=1; }
	! grep 'type=sync' "$res/dev-stats.share1" || { echo "FAIL: share1's device runs sync queues"; rc=1; }
	counters_agree "$res" share || rc=1
	counters_agree "$res" share1 .share1 || rc=1
	rm -rf "$a" "$b"
	return $rc
}
t uml:two-devices two_devices uml:two-devices sync 1 32 --driver ours --sync on
t qemu-6.12:two-devices two_devices qemu-6.12:two-devices async 0 8 --substrate qemu --kernel 6.12 \
	--cpus 2 --driver ours --qemu stock

# Each share its own driver: share by ours with sync queues, share1 by
# in-tree virtiofs (both bind to virtiofs at boot; guest-init hands ours its
# share through sysfs, with a fresh probe of UML's transport).
two_drivers() {
	local res=$logs/uml:two-drivers.results a b rc=0
	a=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	b=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --results "$res" --share "$a" --driver ours --share "$b" --driver intree -- \
		"$repo/tests/vm/scenarios/two-devices" io 1 intree 8 || rc=1
	echo "# host-side files"
	shares_files "$a" share 6 || rc=1
	shares_files "$b" share1 6 || rc=1
	echo "# ours drove share only"
	[ -e "$res/driver-stats.share1" ] && { echo "FAIL: driver-stats.share1 (in-tree virtiofs has none)"; rc=1; }
	! grep -v '^share ' "$res/driver-stats" || { echo "FAIL: other tags in driver-stats"; rc=1; }
	"$repo/tests/vm/check-path" sync "$res" || rc=1
	counters_agree "$res" share || rc=1
	[ "$(counter_sum "$res/dev-stats.share1" . requests)" -gt 0 ] || { echo "FAIL: share1's device saw nothing"; rc=1; }
	rm -rf "$a" "$b"
	return $rc
}
t uml:two-drivers two_drivers

# two_devices_unbind NAME VICTIM SURVIVOR RUNNER-ARGS...: share (sync
# queues) and share1 (none); VICTIM's device is unbound under a writer
# while SURVIVOR's writer goes on; SURVIVOR's files verified on the host.
two_devices_unbind() {
	local name=$1 victim=$2 survivor=$3 a b res rc=0
	shift 3
	res=$logs/$name.results
	a=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	b=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --results "$res" "$@" --share "$a" --share "$b" --dev-opts --sync-queues=0 -- \
		"$repo/tests/vm/scenarios/two-devices" unbind "$victim" "$survivor" || rc=1
	echo "# host-side files of $survivor"
	if [ "$survivor" = share ]; then
		shares_files "$a" share || rc=1
		names_of "$b" share1 || rc=1
		[ -s "$res/driver-stats" ] || { echo "FAIL: no counters of the survivor"; rc=1; }
		[ -e "$res/driver-stats.share1" ] && { echo "FAIL: counters of the unbound share1"; rc=1; }
	else
		shares_files "$b" share1 || rc=1
		names_of "$a" share || rc=1
		[ -s "$res/driver-stats.share1" ] || { echo "FAIL: no counters of the survivor"; rc=1; }
		[ -e "$res/driver-stats" ] && { echo "FAIL: counters of the unbound share"; rc=1; }
	fi
	rm -rf "$a" "$b"
	return $rc
}
t uml:two-devices-unbind-share1 two_devices_unbind uml:two-devices-unbind-share1 share1 share --driver ours
t uml:two-devices-unbind-share two_devices_unbind uml:two-devices-unbind-share share share1 --driver ours

# A/B by sysfs rebind, rmmod refused while mounted, unload/reload, removal
# under load, on every Debian kernel.
for k in 6.12 6.1 7.3; do
	t "qemu-$k:rebind-reload" "$repo/tests/vm/run" --substrate qemu --kernel $k --cpus 2 \
		--driver intree --results "$logs/qemu-$k:rebind-reload.results" -- \
		"$repo/tests/vm/scenarios/rebind-reload" "$(make -s -C "$repo" KVER=$k print-ko)"
done
# The documented procedure for 6.12's built-in virtiofs: boot with the blacklist.
t qemu-6.12:initcall-blacklist "$repo/tests/vm/run" --substrate qemu --kernel 6.12 --cpus 2 --driver ours --qemu stock \
	--append initcall_blacklist=virtio_fs_init --results "$logs/qemu-6.12:initcall-blacklist.results" -- \
	"$repo/tests/vm/scenarios/initcall-blacklist" "$(make -s -C "$repo" KVER=6.12 print-ko)"

# --- hardening: a hostile device, confinement, stress with faults -------------
bad_replies="len-over len-under len-zero hdr-len unique error-range error-529 read-529"
# faults NAME RUNNER-ARGS -- KINDS: tests/vm/scenarios/faults in a guest
faults() {
	local name=$1
	shift
	"$repo/tests/vm/run" --results "$logs/$name.results" --dev-opts --faults "$@"
}
# shellcheck disable=SC2086 # word lists on purpose
{
t uml:faults faults uml:faults --driver ours --sync on -- \
	"$repo/tests/vm/scenarios/faults" $bad_replies never close
# a double completion breaks its queue for good (the virtio core's verdict):
# the driver resets the device, what the queue held fails, unmount completes
t uml:faults-double faults uml:faults-double --driver ours --sync on --timeout 180 -- \
	"$repo/tests/vm/scenarios/faults" never=3 double
# inline completions while a buffer is outstanding raise no interrupt:
# the device sent (almost) no used-buffer notification on the sync queue
sync_quiet() {
	local res=$logs/uml:sync-quiet.results calls inl
	faults uml:sync-quiet --driver ours --sync on -- \
		"$repo/tests/vm/scenarios/faults" never=1 quiet close || return 1
	calls=$(counter_sum "$res/dev-stats" 'type=sync' calls)
	inl=$(counter_sum "$res/dev-stats" 'type=sync' inline)
	echo "device: sync queue inline=$inl calls=$calls"
	[ "$inl" -ge 200 ] || { echo "expected at least 200 inline completions"; return 1; }
	[ "$calls" -le 2 ] || { echo "FAIL: $calls interrupts for inline completions"; return 1; }
}
t uml:sync-quiet sync_quiet
# the one request queue must keep room for the rest: fewer waiters
t uml:faults-sync0 faults uml:faults-sync0 --driver ours --sync off -- \
	"$repo/tests/vm/scenarios/faults" $bad_replies never=200 close
for k in 6.12 6.1 7.3; do
	t "qemu-$k:faults" faults "qemu-$k:faults" --substrate qemu --kernel $k --cpus 2 \
		--driver ours --qemu stock -- "$repo/tests/vm/scenarios/faults" $bad_replies
done
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
t qemu-6.12:tiny-queue tiny_queue
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
t qemu-6.12:queue-too-small queue_too_small
for m in rw ro; do
	t "uml:confinement-$m" "$repo/tests/vm/scenarios/confinement" $m \
		--results "$logs/uml:confinement-$m.results" --driver ours
done
t uml:stress-faults env STRESS_TIME=20 STRESS_WRITERS=3 \
	STRESS_RESULTS="$logs/uml:stress-faults.results" "$repo/tests/stress.sh"

# upstream_suite NAME RUNNER-ARGS...: vm_suite for a row whose driver is
# the kernel's own virtiofs: it shows the suite holds on the reference
# implementation; none of the project's driver code runs. Debian's 6.1
# virtiofs now and then leaves a WRITE of the stress test unanswered for
# good (request_wait_answer, hung task; seen with virtiofsd on microvm and
# with the reference device on pc under 6.1-rt, about once in a full run;
# not in 15 runs of the row alone). Such a row is given 240 s (it takes
# 20-40), and one that fails runs once more; its line says so, and a
# second failure fails it.
upstream_suite() {
	local name=$1
	shift
	set -- "$name" --timeout 240 "$@"
	vm_suite none "$@" && return 0
	echo "# failed; once more (this log: build/check/$name.first.log)"
	cp "$logs/$name.log" "$logs/$name.first.log"
	rm -rf "$logs/$name.first.results"
	mv "$logs/$name.results" "$logs/$name.first.results" 2>/dev/null
	touch "$logs/$name.retried"
	vm_suite none "$@"
}

# The host's QEMU (--qemu stock): it never passes VIRTIO_FS_F_SYNC, so ours
# runs the request queues (the fallback); the sync rows are further down.
# Per kernel: ours with the reference device on both transports and with
# Debian's virtiofsd on virtio-mmio; in-tree virtiofs with the reference
# device on both (Debian's driver with Debian's device would test neither
# of the project's parts).
for k in 6.12 6.1 7.3; do
	for row in ours:ref:pc ours:ref:microvm ours:virtiofsd:microvm intree:ref:pc intree:ref:microvm; do
		IFS=: read -r d dev m <<<"$row"
		suite="vm_suite none"
		[ $d = intree ] && suite=upstream_suite
		[ $d = ours ] && [ $dev = ref ] && suite="vm_suite async"
		t "qemu-$k:$row" $suite "qemu-$k:$row" \
			--substrate qemu --qemu stock --kernel $k --cpus 2 --driver $d --device $dev --machine $m
	done
done
# PREEMPT_RT (Debian's rt-amd64): spinlock_t sleeps, the sync path only
# disables migration. The host's QEMU never offers the sync feature, so
# these run the request queues; the RT sync path runs in qemu-sync-6.12-rt.
for k in 6.12-rt 6.1-rt; do
	for d in ours intree; do
		suite=upstream_suite
		[ $d = ours ] && suite="vm_suite async"
		t "qemu-$k:$d:ref:pc" $suite "qemu-$k:$d:ref:pc" \
			--substrate qemu --qemu stock --kernel $k --cpus 2 --driver $d --device ref --machine pc
	done
done

# --- QEMU with the project's series: the sync path on a real VMM --------------
# scripts/build-qemu.sh builds trixie's QEMU 10.0 with qemu/patches once
# (cached); tests/vm/run --substrate qemu runs it by default where a share
# can take the sync path (--qemu patched). A notify write to a sync queue
# is handled in its vCPU's thread, which waits for the device's answer on
# the queue's kick channel. The vCPUs run on one TCG thread (the default,
# --tcg-thread single): Debian's kernels break under multi-threaded TCG
# here. Names qemu-sync-KERNEL:MACHINE:cpusN.
build_qemu() {
	local rc=0
	wait "$qemu_build" || rc=$?
	echo "# the background build (exit $rc):"
	cat "$logs/qemu-build.log"
	"$repo/scripts/build-qemu.sh"
}
t build:qemu build_qemu
# qemu_sync NAME RUNNER-ARGS...: in one boot with as many sync queues as
# vCPUs, the guest suite, then one pinned task per vCPU
# (tests/vm/scenarios/per-cpu-sync: each CPU reaps inline on a sync queue
# of its own); the proof of path (check-path sync), the device's sync
# queues all completed requests inside the kick, and the driver's counters
# agree with the device's.
qemu_sync() {
	local res=$logs/$1.results share used rc=0
	shift
	share=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --substrate qemu --driver ours --sync on --share "$share" --results "$res" "$@" -- \
		sh -c '"$1" /mnt/share && "$2"' sh "$repo/tests/suite/run-suite.sh" \
		"$repo/tests/vm/scenarios/per-cpu-sync" || rc=1
	if [ -f "$share/suite-stress/MANIFEST" ]; then
		echo "# host-side verify-manifest"
		"$repo/tests/suite/bin/verify-manifest" "$share/suite-stress" || rc=1
	else
		echo "no MANIFEST on the host"
		rc=1
	fi
	rm -rf "$share"
	echo "# proof of path (sync)"
	grep -q 'qemu/.*/bin/qemu-system-x86_64' "$res/qemu" || { echo "FAIL: not the patched QEMU"; rc=1; }
	"$repo/tests/vm/check-path" sync "$res" || rc=1
	used=$(awk '/type=sync/ { for (i = 1; i <= NF; i++) if ($i ~ /^inline=/ && substr($i, 8) + 0 > 0) u++ }
		END { print u + 0 }' "$res/dev-stats")
	echo "device: $used sync queues completed requests inline"
	[ "$used" -gt 0 ] && [ "$used" = "$(grep -c 'type=sync' "$res/dev-stats")" ] ||
		{ echo "FAIL: not every sync queue completed requests inline"; rc=1; }
	counters_agree "$res" share || rc=1
	return $rc
}
# 6.12 on both machines with 2 and 4 vCPUs; the other kernels on pc with 2
# and microvm with 4 (each row about 2 minutes under TCG: the full matrix
# would add 16 of them to CI's time).
for km in 6.12:pc:2 6.12:pc:4 6.12:microvm:2 6.12:microvm:4 6.1:pc:2 6.1:microvm:4 \
	7.3:pc:2 7.3:microvm:4 6.12-rt:pc:2 6.12-rt:microvm:4; do
	IFS=: read -r k m n <<<"$km"
	t "qemu-sync-$k:$m:cpus$n" qemu_sync "qemu-sync-$k:$m:cpus$n" --kernel $k --machine $m --cpus $n
done
# A device slower than QEMU's bound (sync-timeout-ms=200 against a device
# that waits 500 ms in every sync kick): the vCPU gives up waiting, the
# queue runs on as an ordinary one, and the requests complete late through
# the interrupt; nothing hangs and nothing is lost.
qemu_sync_late() {
	local res=$logs/qemu-sync-6.12:late.results late inl rc=0
	"$repo/tests/vm/run" --substrate qemu --kernel 6.12 --cpus 2 --driver ours --sync on \
		--dev-opts --sync-delay-ms=500 --qemu-props sync-timeout-ms=200 --timeout 300 \
		--results "$res" -- sh -c 'echo data >f && cat f && ls -l && rm f' || rc=1
	grep -q 'qemu/.*/bin/qemu-system-x86_64' "$res/qemu" || { echo "FAIL: not the patched QEMU"; rc=1; }
	grep 'no answer to a kick in 200 ms' "$res/qemu.log" ||
		{ echo "FAIL: QEMU did not give up waiting"; rc=1; }
	late=$(counter_sum "$res/driver-stats" '^share sync\.' deferred)
	inl=$(counter_sum "$res/driver-stats" '^share sync\.' inline)
	echo "driver: sync queues deferred=$late inline=$inl"
	[ "$late" -gt 0 ] || { echo "FAIL: no late completion on a sync queue"; rc=1; }
	counters_agree "$res" share || rc=1
	return $rc
}
t qemu-sync-6.12:late qemu_sync_late
# Malformed replies on the sync queues of a real VMM: each fails its one
# request with EIO inside the kick and the share goes on working
# (tests/vm/scenarios/faults, as the qemu-KERNEL:faults rows run it on
# stock QEMU's request queues); the bad replies were counted on sync queues.
qemu_sync_faults() {
	local res=$logs/qemu-sync-6.12:faults.results bad rc=0
	# shellcheck disable=SC2086 # a word list on purpose
	faults qemu-sync-6.12:faults --substrate qemu --kernel 6.12 --cpus 2 --driver ours \
		--sync on -- "$repo/tests/vm/scenarios/faults" $bad_replies || rc=1
	grep -q 'qemu/.*/bin/qemu-system-x86_64' "$res/qemu" || { echo "FAIL: not the patched QEMU"; rc=1; }
	bad=$(counter_sum "$res/driver-stats" '^share sync\.' bad_reply)
	echo "driver: bad replies on sync queues: $bad"
	[ "$bad" -gt 0 ] || { echo "FAIL: no bad reply met on a sync queue"; rc=1; }
	return $rc
}
t qemu-sync-6.12:faults qemu_sync_faults
# The patched QEMU with a device that does not offer the feature (Debian's
# virtiofsd): the driver negotiates no sync queue, the suite passes on the
# request queues and nothing was reaped inline.
qemu_sync_old_device() {
	local name=qemu-sync-6.12:old-device res rc=0 inl
	res=$logs/$name.results
	vm_suite none "$name" --substrate qemu --qemu patched --kernel 6.12 --cpus 2 \
		--driver ours --device virtiofsd || rc=1
	grep -q 'qemu/.*/bin/qemu-system-x86_64' "$res/qemu" || { echo "FAIL: not the patched QEMU"; rc=1; }
	grep -q '^share sync\.' "$res/driver-stats" && { echo "FAIL: sync queues without the feature"; rc=1; }
	inl=$(counter_sum "$res/driver-stats" '^share ' inline)
	echo "driver: request queues only, inline=$inl"
	[ "$inl" = 0 ] || { echo "FAIL: $inl requests reaped inline"; rc=1; }
	return $rc
}
t qemu-sync-6.12:old-device qemu_sync_old_device

# --- UML 7.3: SMP, the seccomp userspace ----------------------------------------
# Names uml-7.3:*; tests/vm/run --kernel 7.3 --cpus N boots ncpus=N seccomp=on.
t uml-7.3:kunit kunit uml-7.3:kunit --kernel 7.3 --cpus 2
t uml-7.3:forget-batch forget_batch uml-7.3:forget-batch 400 --kernel 7.3 --cpus 2
# The suite on in-tree virtiofs with 2 vCPUs, on ours with 4 (ours on 2
# runs it in uml-7.3:sync-late-cpus2, with late completions besides).
t uml-7.3:intree-cpus2 vm_suite none uml-7.3:intree-cpus2 --kernel 7.3 --cpus 2 --driver intree
t uml-7.3:ours-sync-cpus4 vm_suite sync uml-7.3:ours-sync-cpus4 --kernel 7.3 --cpus 4 --driver ours --sync on
# per_cpu_sync N: one pinned task per vCPU, S = N sync queues: every CPU
# completes inline on a queue of its own (tests/vm/scenarios/per-cpu-sync),
# and the device agrees: the totals (check-path) and N sync queues of its
# own that completed requests inside the kick.
per_cpu_sync() {
	local n=$1 name=uml-7.3:per-cpu-sync-cpus$1 used
	"$repo/tests/vm/run" --kernel 7.3 --cpus "$n" --sync-queues "$n" --driver ours --sync on \
		--results "$logs/$name.results" -- "$repo/tests/vm/scenarios/per-cpu-sync" || return 1
	"$repo/tests/vm/check-path" sync "$logs/$name.results" || return 1
	used=$(awk '/type=sync/ { for (i = 1; i <= NF; i++) if ($i ~ /^inline=/ && substr($i, 8) + 0 > 0) u++ }
		END { print u + 0 }' "$logs/$name.results/dev-stats")
	echo "device: $used sync queues completed requests inline"
	[ "$used" = "$n" ]
}
for n in 2 4; do
	t "uml-7.3:per-cpu-sync-cpus$n" per_cpu_sync $n
done
# sync_queues_agree RESULTS N: the share has N sync queues and, queue by
# queue (the driver's sync.<i> against the device's i-th sync queue), the
# device saw the requests the driver sent; each was reaped, inline or
# deferred, and completed, inside the kick or late; what the device
# completed inside the kick was reaped inline (a late completion is reaped
# inline when it lands before the kicker's reap, so without late ones the
# counts are equal); every queue completed some inline.
sync_queues_agree() {
	local res=$1 n=$2 f
	echo "# sync queues: driver against device"
	for f in driver-stats dev-stats; do
		[ -s "$res/$f" ] || { echo "FAIL: no $f"; return 1; }
	done
	awk -v n="$n" '
		function val(k,   i, kv) {
			for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] + 0 }
			return -1
		}
		FNR == 1 { file++ }
		file == 1 && $1 == "share" && $2 ~ /^sync\./ {
			d++; name[d] = $2; sub_[d] = val("submitted"); inl[d] = val("inline"); dfr[d] = val("deferred")
		}
		file == 2 && / type=sync / {
			v++; q[v] = $1; req[v] = val("requests"); vinl[v] = val("inline"); late[v] = val("late")
		}
		END {
			if (d != n || v != n) {
				printf "FAIL: %d sync queues in the driver, %d in the device, not %d\n", d, v, n
				exit 1
			}
			for (i = 1; i <= n; i++) {
				printf "%s submitted=%d inline=%d deferred=%d; device %s requests=%d inline=%d late=%d\n",
					name[i], sub_[i], inl[i], dfr[i], q[i], req[i], vinl[i], late[i]
				if (sub_[i] != req[i]) {
					printf "FAIL: %s: the driver sent %d, the device saw %d\n", name[i], sub_[i], req[i]; bad = 1
				}
				if (inl[i] + dfr[i] != sub_[i] || vinl[i] + late[i] != req[i]) {
					printf "FAIL: %s: not every request was reaped and completed\n", name[i]; bad = 1
				}
				if (inl[i] < vinl[i]) {
					printf "FAIL: %s: completed inside the kick but not reaped inline\n", name[i]; bad = 1
				}
				if (inl[i] == 0) { printf "FAIL: %s completed nothing inline\n", name[i]; bad = 1 }
			}
			exit bad
		}' "$res/driver-stats" "$res/dev-stats"
}
# shared_sync: 2 vCPUs, one sync queue (--sync-queues 1). Each CPU alone
# completes inline on sync.0 (per-cpu-sync); then a writer pinned to each,
# at once (kick-overlap): a request that finds sync.0 held by the other
# CPU's kick falls back to a request queue. The counters agree with the
# device's kind by kind and on sync.0, the contention was counted (busy; a
# third of the writes here) and every fallback went to a request queue.
shared_sync() {
	local res=$logs/uml-7.3:shared-sync-cpus2.results busy fallback req rc=0
	"$repo/tests/vm/run" --kernel 7.3 --cpus 2 --sync-queues 1 --driver ours --sync on \
		--results "$res" -- sh -c "$repo/tests/vm/scenarios/per-cpu-sync &&
			$repo/tests/vm/scenarios/kick-overlap 512" || return 1
	counters_agree "$res" share || rc=1
	sync_queues_agree "$res" 1 || rc=1
	busy=$(counter_sum "$res/driver-stats" ' sync\.' busy)
	fallback=$(counter_sum "$res/driver-stats" ' sync\.' fallback)
	req=$(counter_sum "$res/driver-stats" ' request\.' submitted)
	echo "driver: sync busy=$busy fallback=$fallback, request queues submitted=$req"
	[ "$busy" -gt 0 ] || { echo "FAIL: no contention on the shared sync queue"; rc=1; }
	[ "$fallback" -ge "$busy" ] || { echo "FAIL: fewer fallbacks than contentions"; rc=1; }
	[ "$req" -ge "$fallback" ] || { echo "FAIL: fewer requests on the request queues than fallbacks"; rc=1; }
	return $rc
}
t uml-7.3:shared-sync-cpus2 shared_sync
# sync_late: the suite on 2 vCPUs, a sync queue each, while the device
# completes every 50th sync request after acknowledging its kick
# (--sync-late=50): the driver reaps those later (deferred, by the queue's
# callback or the next kick on it) while the other CPU goes on submitting.
# (Each late completion costs its task a wake-up by interrupt: tens of ms
# on a loaded machine, so the suite's 3000-entry directory case would near
# its 120 s timeout with every 5th late.)
sync_late() {
	local name=uml-7.3:sync-late-cpus2 res=$logs/uml-7.3:sync-late-cpus2.results deferred bad
	vm_suite none "$name" --kernel 7.3 --cpus 2 --driver ours --sync on --dev-opts --sync-late=50 ||
		return 1
	sync_queues_agree "$res" 2 || return 1
	deferred=$(counter_sum "$res/driver-stats" ' sync\.' deferred)
	bad=$(counter_sum "$res/driver-stats" . bad_reply)
	echo "driver: deferred=$deferred bad_reply=$bad"
	[ "$deferred" -gt 0 ] || { echo "FAIL: nothing was reaped deferred"; return 1; }
	[ "$bad" = 0 ] || { echo "FAIL: bad replies"; return 1; }
}
t uml-7.3:sync-late-cpus2 sync_late
# the fault scenario on 2 vCPUs: bad replies on either CPU's sync queue,
# 32 never-answered lookups outstanding (each a process: costly in SMP
# UML, hence not uml:faults' 300) while the share works, then the device
# closes its socket under them
# shellcheck disable=SC2086 # a word list on purpose
t uml-7.3:faults faults uml-7.3:faults --kernel 7.3 --cpus 2 --driver ours --sync on -- \
	"$repo/tests/vm/scenarios/faults" $bad_replies never=32 close
# Linux 7.3's FUSE request timeout (15 s, the least) against a lookup the
# device answers 40 s late, on a request queue: the driver keeps the
# request until the device returns it (tests/vm/scenarios/request-timeout)
t uml-7.3:request-timeout faults uml-7.3:request-timeout --kernel 7.3 --cpus 2 --driver ours \
	--sync off --no-mount -- "$repo/tests/vm/scenarios/request-timeout" 40
# the same on Debian's 7.3 (QEMU: request queues only)
t qemu-7.3:request-timeout faults qemu-7.3:request-timeout --substrate qemu --kernel 7.3 --cpus 2 \
	--driver ours --no-mount -- "$repo/tests/vm/scenarios/request-timeout" 40
# stress_pinned N: tests/stress.sh on N vCPUs with a writer bound to each
# (stress --pin), faults and late completions injected, every byte verified
# on the host; each CPU used its own sync queue: every writer ran where it
# was bound, every sync.<i> completed requests inline, and the device's
# per-queue counts are the driver's.
stress_pinned() {
	local n=$1 res=$logs/uml-7.3:stress-pinned-cpus$1.results c rc=0
	STRESS_TIME=20 STRESS_WRITERS=$n STRESS_OPTS=--pin STRESS_RUNNER_ARGS="--kernel 7.3 --cpus $n" \
		STRESS_RESULTS="$res" "$repo/tests/stress.sh" || return 1
	for ((c = 0; c < n; c++)); do
		grep -q "^ok stress-writer-[0-9]*: .*, on CPU $c\$" "$res/out" ||
			{ echo "FAIL: no writer ran on CPU $c"; rc=1; }
	done
	sync_queues_agree "$res" "$n" || rc=1
	return $rc
}
for n in 2 4; do
	t "uml-7.3:stress-pinned-cpus$n" stress_pinned $n
done
# kick_overlap NAME PAIRS N [DEVICE-OPTS...]: SMP UML 7.3, 2 vCPUs, a sync
# queue each; one writer pinned per CPU, all at once, N O_DIRECT writes
# each (tests/vm/scenarios/kick-overlap). The device's trace then shows whether
# the requests of the two sync queues were in the device at the same time
# (tests/vm/trace-overlap.py PAIRS: --min-pairs or --max-pairs). Over
# per-queue kick channels they are; with in-band kicks (--no-kick-channel)
# every kick waits for the one before under virtio_uml's device lock and
# is served by the one socket thread, so no two intervals can overlap
# (and the waiting CPU spins: fewer writes keep that row short).
kick_overlap() {
	local name=$1 pairs=$2 n=$3 tmp rc=0 res=$logs/$1.results
	shift 3
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vfs-overlap.XXXXXX")
	"$repo/tests/vm/run" --kernel 7.3 --cpus 2 --sync-queues 2 --driver ours --sync on \
		--results "$res" --dev-opts "--trace-file=$tmp/trace $*" -- \
		"$repo/tests/vm/scenarios/kick-overlap" "$n" || rc=1
	echo "# the device's trace"
	python3 "$repo/tests/vm/trace-overlap.py" "$tmp/trace" "$pairs" || rc=1
	mkdir -p "$res"
	cp "$tmp/trace" "$res/dev-trace" 2>/dev/null
	rm -rf "$tmp"
	return $rc
}
t uml-7.3:kick-overlap kick_overlap uml-7.3:kick-overlap --min-pairs=1 2048
t uml-7.3:kick-overlap-inband kick_overlap uml-7.3:kick-overlap-inband --max-pairs=0 256 --no-kick-channel

# ab-in-guest.sh in UML (driver swapped by module load): results for every
# configuration, inline completions in ours-sync only (bench/ab-uml.sh).
t uml:ab-in-guest "$repo/bench/ab-uml.sh" --results "$logs/uml:ab-in-guest.results"

# --- summary ------------------------------------------------------------------
echo "# $((SECONDS - t0)) s; logs in ${logs#"$repo"/}"
[ ${#failures[@]} -gt 0 ] && echo "# failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
