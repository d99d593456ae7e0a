#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/check.sh: what `make check` runs. Sets up a fresh Debian machine
# (packages, kernels, builds; all cached outside the repo), runs the host-side
# tests, then boots the guest matrix: UML 6.12 (the sync path), SMP UML 7.3
# and QEMU/TCG with Debian's 6.1, 6.12 and 7.3 kernels and the PREEMPT_RT
# flavours of 6.1 and 6.12 (7.3's module builds in a trixie root,
# scripts/build-root.sh). One line per test, in this file's order, then
# the time and "N passed, N failed". Logs: build/check/ (VFS_CHECK_LOGS).
# Each row is a line `t NAME COMMAND...`; the functions the rows call are in
# tests/checks/, a file per subject; tests/rows.sh runs the rows, several
# at once, each when what it needs is built.
#
# VFS_CHECK_ONLY=glob runs only the tests whose names match (setup and
# builds always run). VFS_CHECK_JOBS=N rows at once (default: one per
# core, 3 GiB of memory each). VFS_CHECK_MATRIX=full runs the whole QEMU
# product, not its covering design.
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
jobs=${VFS_CHECK_JOBS:-}
matrix=${VFS_CHECK_MATRIX:-covering}
case $matrix in
covering | full) ;;
*) echo "VFS_CHECK_MATRIX: covering (the default) or full, not '$matrix'" >&2; exit 2 ;;
esac

# shellcheck source=tests/rows.sh
. "$repo/tests/rows.sh"
[ -n "$jobs" ] || jobs=$(default_jobs)

for f in "$repo"/tests/checks/*.sh; do
	# shellcheck source=/dev/null
	. "$f"
done

# --- setup and builds --------------------------------------------------------
# The downloads take no job slot: they wait on the network while the
# builds of what has arrived use the cores. The SMP UML 7.3 kernel, the
# longest build on the way to rows, goes first.
t --background setup:packages "$repo/tests/setup/install-deps.sh"
t --background setup:kernel-6.12 "$repo/scripts/fetch-kernel.sh" 6.12
t --background setup:kernel-6.1 "$repo/scripts/fetch-kernel.sh" 6.1
t --background setup:kernel-7.3 "$repo/scripts/fetch-kernel.sh" 7.3
t --background setup:root-trixie "$repo/scripts/build-root.sh" trixie
t --background setup:kernel-6.12-rt "$repo/scripts/fetch-kernel.sh" 6.12-rt
t --background setup:kernel-6.1-rt "$repo/scripts/fetch-kernel.sh" 6.1-rt
t build:device make -C "$repo/vhost-user-fs" -j2
t build:suite make -C "$repo/tests/suite" -j2
t build:uml-7.3-debug "$repo/tests/setup/build-uml.sh" debug 7.3
t build:uml-debug "$repo/tests/setup/build-uml.sh" debug
t build:module-6.12 make -C "$repo" KVER=6.12
t build:module-6.1 make -C "$repo" KVER=6.1
t build:module-7.3 make -C "$repo" KVER=7.3
t build:module-6.12-rt module_rt 6.12-rt
t build:module-6.1-rt module_rt 6.1-rt
t build:module-debug-6.12 module_debug

# --- static checks ------------------------------------------------------------
t static:style make -s -C "$repo" style
t static:sparse no_warnings make -s -C "$repo" sparse
t static:no-version-code version_code_outside_compat
# Every module parameter is in README's table and the Kconfig help.
t static:params-documented "$repo/tests/static/params-documented.sh" "$repo"
# No tracked generated files, issue numbers or outside paths.
t static:housekeeping "$repo/tests/static/housekeeping.sh" "$repo"
t static:version-guard version_guard
# The driver's objects call each other one way (the 6.12 build's objects).
t static:driver-deps "$repo/tests/static/driver-deps.sh" "$repo/build/6.12"
# Comments say why, at about in-tree virtio drivers' density.
t static:comment-density "$repo/tests/static/comment-density.sh" "$repo"

# --- host-side tests of the reference device ----------------------------------
t device:unit make -C "$repo/vhost-user-fs" check
# every input that once crashed the fuzzer, then a short bounded run
t device:fuzz make -C "$repo/vhost-user-fs" fuzz-regress fuzz FUZZ_TIME=30

# --- host-side tests of the harnesses (tests/harness: tests/vm/run's parts) ----
t harness:unit env PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -v -s "$repo/tests/harness" \
	-t "$repo/tests" -p 'test_*.py'
# ... of make check's scheduler (tests/rows.sh)
t harness:rows "$repo/tests/test-rows.sh"
# ... and of the bench's (bench/benchlib: the report, statistics, run list)
t bench:unit env PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -v -s "$repo/bench/benchlib" \
	-t "$repo/bench" -p 'test_*.py'

# --- DKMS, in a scratch tree, against each Debian header set -------------------
t dkms:6.12 dkms_check 6.12
t dkms:6.1 dkms_check 6.1
t dkms:7.3 dkms_check 7.3
# scripts/intree.sh --patch on a pristine fs/fuse/, which then builds.
for k in 6.12 6.1 7.3; do t "intree:patch-$k" "$repo/tests/intree-check.sh" $k; done

# --- KUnit in UML -------------------------------------------------------------
t uml:kunit kunit

# The test kernels' FP state: the threads of one guest process, which UML
# runs in one host process, keep their vector registers across the switches
# between them (tests/suite/fpstate.c; 6.12's UML needs
# tests/vm/patches/uml-xstate-host-size.patch for it on AMX hosts).
t uml:fp-state "$repo/tests/vm/run" --driver none -- "$repo/tests/suite/bin/fpstate" 4 2000
t uml-7.3:fp-state "$repo/tests/vm/run" --kernel 7.3 --cpus 2 --driver none -- \
	"$repo/tests/suite/bin/fpstate" 4 2000

# --- guests ---------------------------------------------------------------------

t uml:ours-sync vm_suite sync uml:ours-sync --driver ours --sync on
t uml:ours-sync0 vm_suite async uml:ours-sync0 --driver ours --sync off
t uml:ours-nofeature vm_suite async uml:ours-nofeature --driver ours --dev-opts --sync-queues=0
t uml:intree vm_suite none uml:intree --driver intree

t uml:kick-channel kicks uml:kick-channel channel
t uml:kick-inband kicks uml:kick-inband in-band --dev-opts --no-kick-channel

t uml:kick-floor kick_floor uml:kick-floor 1000
t uml:noflush noflush

t uml:forget-batch forget_batch uml:forget-batch 400
# the mount option: at most B FORGETs a message, 1 sends each alone (as
# in-tree virtiofs does); 0 and 65 are refused
t uml:forget-batch-1 forget_batch uml:forget-batch-1 400 --batch 1

# a task's O_DIRECT I/O completes inside the kick (FUSE_ASYNC_DIO not
# offered), with a device that keeps a budget and one that does not; its
# cold page-cache reads are readahead (FUSE_ASYNC_READ), background
# requests, interrupt-driven.
t uml:direct-io-sync "$repo/tests/vm/run" --results "$logs/uml:direct-io-sync.results" \
	--driver ours --sync on -- "$repo/tests/vm/scenarios/direct-io" sync
t uml:direct-io-sync-nobudget "$repo/tests/vm/run" --results "$logs/uml:direct-io-sync-nobudget.results" \
	--driver ours --sync on --dev-opts --sync-budget-us=0 -- "$repo/tests/vm/scenarios/direct-io" sync
t uml:direct-io-sync0 "$repo/tests/vm/run" --results "$logs/uml:direct-io-sync0.results" \
	--driver ours --sync off -- "$repo/tests/vm/scenarios/direct-io" async

t uml:config-40 short_config 40
t uml:config-44 short_config 44
t uml:many-queues many_queues
t uml:status-tool status_tool
t uml:unbind-under-load "$repo/tests/vm/run" --results "$logs/uml:unbind-under-load.results" \
	--driver ours -- "$repo/tests/vm/scenarios/unbind-under-load"
# mounts race unmounts (sget_fc() tests the superblock of an unmount in
# progress) and removals of the device (tests/vm/scenarios/mount-race)
t uml:mount-race "$repo/tests/vm/run" --results "$logs/uml:mount-race.results" \
	--driver ours --no-mount -- "$repo/tests/vm/scenarios/mount-race" 100

# --- several devices in one guest ---------------------------------------------
t uml:two-devices two_devices uml:two-devices sync 1 32 --driver ours --sync on
t qemu-6.12:two-devices two_devices qemu-6.12:two-devices async 0 8 --substrate qemu --kernel 6.12 \
	--cpus 2 --driver ours --qemu stock

t uml:two-drivers two_drivers

# --- the device's exit budget (tests/checks/budget.sh) ---------------------------
# requests whose host work can outlast the budget complete correctly, and
# no exit outlasts it by more than the stated margin; without a budget the
# driver keeps the conservative list
t uml:exit-budget exit_budget uml:exit-budget 2000
t uml:exit-budget-none exit_budget uml:exit-budget-none 0
t uml-7.3:exit-budget-copy exit_budget uml-7.3:exit-budget-copy 2000 copy -- --kernel 7.3 --cpus 2
# an OPEN that breaks a host lease and a READ of data the host has not
# cached: tried without waiting inside the kick, then completed late
t uml:exit-budget-nowait exit_budget_nowait uml:exit-budget-nowait 2000

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

# The completion path's workqueue has a rescuer (WQ_MEM_RECLAIM): built in
# on 6.12's UML, a module on 6.1 (the rescuer's name changed in 6.9).
t uml:wq-rescuer "$repo/tests/vm/run" --driver ours --results "$logs/uml:wq-rescuer.results" -- \
	"$repo/tests/vm/scenarios/wq-rescuer"
t qemu-6.1:wq-rescuer "$repo/tests/vm/run" --substrate qemu --qemu stock --kernel 6.1 --cpus 2 --driver ours \
	--results "$logs/qemu-6.1:wq-rescuer.results" -- "$repo/tests/vm/scenarios/wq-rescuer"

# --- hardening: a hostile device, confinement, stress with faults -------------
# the malformed replies of tests/vm/scenarios/faults
bad_replies="len-over len-under len-zero hdr-len unique error-range error-529 read-529"
# shellcheck disable=SC2086 # word lists on purpose
{
t uml:faults faults uml:faults --driver ours --sync on -- \
	"$repo/tests/vm/scenarios/faults" $bad_replies never close
# a double completion breaks its queue for good (the virtio core's verdict):
# the driver resets the device, what the queue held fails, unmount completes
t uml:faults-double faults uml:faults-double --driver ours --sync on --timeout 180 -- \
	"$repo/tests/vm/scenarios/faults" never=3 double
t uml:sync-quiet sync_quiet
# after a hang, what the device held: the snapshot of its rings
t uml:timeout-snapshot timeout_snapshot
# the one request queue must keep room for the rest: fewer waiters
t uml:faults-sync0 faults uml:faults-sync0 --driver ours --sync off -- \
	"$repo/tests/vm/scenarios/faults" $bad_replies never=200 close
for k in 6.12 6.1 7.3; do
	t "qemu-$k:faults" faults "qemu-$k:faults" --substrate qemu --kernel $k --cpus 2 \
		--driver ours --qemu stock -- "$repo/tests/vm/scenarios/faults" $bad_replies
done
}
t qemu-6.12:tiny-queue tiny_queue
t qemu-6.12:queue-too-small queue_too_small
for m in rw ro; do
	t "uml:confinement-$m" "$repo/tests/vm/scenarios/confinement" $m \
		--results "$logs/uml:confinement-$m.results" --driver ours
done
t uml:stress-faults env STRESS_TIME=20 STRESS_WRITERS=3 \
	STRESS_RESULTS="$logs/uml:stress-faults.results" "$repo/tests/stress.sh"

# The host's QEMU (--qemu stock): it never passes VIRTIO_FS_F_SYNC, so ours
# runs the request queues (the fallback); the sync rows are further down.
# Rows KERNEL:DRIVER:DEVICE:MACHINE, from the kernels (6.12, 6.1, 7.3 and
# the RT flavours), the drivers (ours, in-tree), the devices (the reference
# device, Debian's virtiofsd) and the machines (pc, microvm), but never
# in-tree with virtiofsd (Debian's driver with Debian's device tests
# neither of the project's parts). VFS_CHECK_MATRIX=full runs every such
# combination (30 rows); the default, a covering design, runs every pair
# of values of any two of the four at least once (12 rows): each kernel
# with both drivers, both devices and both machines, each driver and each
# device on both machines, ours with both devices.
stock_rows() {
	local k row
	if [ "$matrix" = full ]; then
		for k in 6.12 6.1 7.3 6.12-rt 6.1-rt; do
			for row in ours:ref:pc ours:ref:microvm ours:virtiofsd:pc ours:virtiofsd:microvm \
				intree:ref:pc intree:ref:microvm; do
				echo "$k:$row"
			done
		done
		return
	fi
	printf '%s\n' 6.12:ours:ref:pc 6.12:ours:virtiofsd:microvm 6.12:intree:ref:pc \
		6.1:ours:virtiofsd:pc 6.1:intree:ref:microvm \
		7.3:ours:ref:microvm 7.3:ours:virtiofsd:microvm 7.3:intree:ref:pc \
		6.12-rt:ours:virtiofsd:pc 6.12-rt:intree:ref:microvm \
		6.1-rt:ours:virtiofsd:microvm 6.1-rt:intree:ref:pc
}
# PREEMPT_RT (Debian's rt-amd64): spinlock_t sleeps, the sync path only
# disables migration; the RT sync path runs in qemu-sync-6.12-rt.
for row in $(stock_rows); do
	IFS=: read -r k d dev m <<<"$row"
	suite="vm_suite none"
	[ "$d" = intree ] && suite=upstream_suite
	[ "$d" = ours ] && [ "$dev" = ref ] && suite="vm_suite async"
	# shellcheck disable=SC2086 # $suite: a function and its first words
	t "qemu-$row" $suite "qemu-$row" \
		--substrate qemu --qemu stock --kernel "$k" --cpus 2 --driver "$d" --device "$dev" --machine "$m"
done

# --- QEMU with the project's series: the sync path on a real VMM --------------
# The patched QEMU (scripts/build-qemu.sh), the longest build of a cold
# cache, starts with the first rows but takes no job slot: at nice 19 with
# two jobs it takes the CPU time the downloads, the other builds and the
# rows leave idle. With the cache warm it finds the binary at once.
t --background build:qemu env VFS_QEMU_JOBS="${VFS_QEMU_JOBS:-2}" nice -n 19 "$repo/scripts/build-qemu.sh"
# Rows KERNEL:MACHINE:cpusN. VFS_CHECK_MATRIX=full: each kernel that takes
# the sync path on both machines with 2 and 4 vCPUs (16 rows); the default
# covers every pair of kernel, machine and vCPU count (8 rows).
sync_rows() {
	local k
	if [ "$matrix" = full ]; then
		for k in 6.12 6.1 7.3 6.12-rt; do
			echo "$k:pc:2 $k:pc:4 $k:microvm:2 $k:microvm:4"
		done
		return
	fi
	echo 6.12:pc:2 6.12:microvm:4 6.1:pc:4 6.1:microvm:2 7.3:pc:2 7.3:microvm:4 \
		6.12-rt:pc:4 6.12-rt:microvm:2
}
for km in $(sync_rows); do
	IFS=: read -r k m n <<<"$km"
	t "qemu-sync-$k:$m:cpus$n" qemu_sync "qemu-sync-$k:$m:cpus$n" --kernel "$k" --machine "$m" --cpus "$n"
done
t qemu-sync-6.12:late qemu_sync_late
t qemu-sync-6.12:faults qemu_sync_faults
t qemu-sync-6.12:old-device qemu_sync_old_device

# --- libkrun's guest kernel (tests/checks/libkrunfw.sh) -------------------------
# make libkrunfw's kernel, built like the patched QEMU: in the background,
# at nice 19, from the first rows on; with the cache warm it is found at
# once. Booted as libkrun boots it, root on the driver (tag /dev/root):
# the suite on the patched QEMU's sync queues with 1 and 4 vCPUs, and on
# the host's QEMU, the interrupt-driven fallback; and on Debian's
# libkrunfw5 kernel, root and share on in-tree virtiofs, the baseline.
# The build needs libkrunfw's recipe (LIBKRUNFW_SRC, or where the
# project's test machines keep it): without one, those rows are left out,
# and the summary says so.
not_declared=()
if [ -d "${LIBKRUNFW_SRC:-$(cd "$repo/.." && pwd)/shared/upstream/libkrunfw-5.4.0}" ]; then
	t --background build:libkrunfw nice -n 19 "$repo/scripts/build-libkrunfw.sh"
	t krun-sync:cpus1 krun_sync krun-sync:cpus1 --cpus 1
	# used length 0 for every buffer, as libkrun's device before 1.19
	t krun-sync:cpus4:used-len-0 krun_used_len_zero krun-sync:cpus4:used-len-0 --cpus 4
	t krun:stock-qemu:cpus2 krun_stock_qemu krun:stock-qemu:cpus2 --cpus 2
else
	not_declared+=("build:libkrunfw, krun-sync:cpus1, krun-sync:cpus4:used-len-0, krun:stock-qemu:cpus2 (no libkrunfw recipe: set LIBKRUNFW_SRC)")
fi
t krun:stock-kernel:cpus2 krun_stock_kernel krun:stock-kernel:cpus2 --cpus 2
# libkrun's layout: num_sync_queues at offset 40 (sync_queues_at=40)
t uml-7.3:config-at-40 config_at_40 uml-7.3:config-at-40 --kernel 7.3 --cpus 2

# --- UML 7.3: SMP, the seccomp userspace ----------------------------------------
# Names uml-7.3:*; tests/vm/run --kernel 7.3 --cpus N boots ncpus=N seccomp=on.
t uml-7.3:kunit kunit uml-7.3:kunit --kernel 7.3 --cpus 2
t uml-7.3:forget-batch forget_batch uml-7.3:forget-batch 400 --kernel 7.3 --cpus 2
# The suite runs on ours here in uml-7.3:sync-late-cpus2 (2 vCPUs, late
# completions besides); on 4 vCPUs with sync queues in the qemu-sync-*:
# microvm:cpus4 rows, on in-tree virtiofs in the QEMU rows.
for n in 2 4; do
	t "uml-7.3:per-cpu-sync-cpus$n" per_cpu_sync $n
done
# --alone: the two CPUs' kicks must meet, which a neighbour's load makes rare
t --alone uml-7.3:shared-sync-cpus2 shared_sync
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
# the same on Debian's 7.3, on the host's QEMU: request queues only (the
# patched QEMU would offer sync queues, and the row would wait for its build)
t qemu-7.3:request-timeout faults qemu-7.3:request-timeout --substrate qemu --qemu stock --kernel 7.3 \
	--cpus 2 --driver ours --no-mount -- "$repo/tests/vm/scenarios/request-timeout" 40
for n in 2 4; do
	t "uml-7.3:stress-pinned-cpus$n" stress_pinned $n
done
t --alone uml-7.3:kick-overlap kick_overlap uml-7.3:kick-overlap --min-pairs=1 2048
t uml-7.3:kick-overlap-inband kick_overlap uml-7.3:kick-overlap-inband --max-pairs=0 256 --no-kick-channel

# ab-in-guest.sh in UML (driver swapped by module load): results for every
# configuration, inline completions in ours-sync only (bench/ab-uml.sh),
# and the A/B verdict of its rounds.
t uml:ab-in-guest ab_verdict

# --- summary ------------------------------------------------------------------
run_rows
summary
[ ${#not_declared[@]} -gt 0 ] && echo "# not run: ${not_declared[*]}"
[ ${#failures[@]} -gt 0 ] && echo "# failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
