# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/build.sh: the builds' and static checks' helpers, and the
# wait for the QEMU build. Sourced by tests/check.sh, whose rows call these
# functions; they use its variables ($repo, $logs, $VFS_CACHE and the like)
# and counter_sum (tests/vm/counters.sh).

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

# make module-debug keeps the Kbuild's flags (fuse_i.h, probes, compat.h)
# and adds -DDEBUG.
module_debug() {
	local cmd
	make -C "$repo" KVER=6.12 BUILD_NAME=debug-6.12 module-debug || return 1
	cmd=$repo/build/debug-6.12/.virtio_fs_sync_virtio.o.cmd
	grep -q -- '-DDEBUG' "$cmd" || { echo "no -DDEBUG in $cmd"; return 1; }
	grep -q -- '-include [^ ]*/compat\.h' "$cmd" || { echo "compat.h not included"; return 1; }
}

no_warnings() {
	"$@" 2>&1 | tee /dev/stderr | grep -E 'warning:|error:' && return 1
	return 0
}

version_code_outside_compat() {
	! git -C "$repo" grep -l LINUX_VERSION_CODE -- '*.c' '*.h' ':!compat.h' ':!tests/'
}

# The Makefile's version check is the only guard where MODVERSIONS is off
# (Debian's 7.3): a fuse header of another kernel must be refused.
version_guard() {
	local out
	out=$(make -C "$repo" KVER=7.3 BUILD_NAME=version-guard \
		FUSE_SRC="$VFS_CACHE/kernels/6.12/fuse" 2>&1) && { echo "$out"; echo "built with 6.12's fuse headers"; return 1; }
	echo "$out"
	echo "$out" | grep -q 'is 7\.3\.[0-9]* but .* is from 6\.12\.'
}
