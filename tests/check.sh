#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/check.sh: what `make check` runs. Sets up a fresh Debian machine
# (packages, kernels, builds; all cached outside the repo), runs the host-side
# tests, then boots the guest matrix: UML 6.12 (the sync path) and QEMU/TCG
# with Debian's 6.1 and 6.12 kernels. One line per test, then
# "N passed, N failed, N skipped". Logs: build/check/ (VFS_CHECK_LOGS).
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

passed=0 failed=0 skipped=0
failures=() skips=()
t0=$SECONDS

# t NAME CMD...: one test; its output goes to the log, a failure shows the tail.
t() {
	local name=$1 start=$SECONDS rc
	shift
	# shellcheck disable=SC2053
	[[ $name == $only || $name == setup:* || $name == build:* ]] || return 0
	"$@" >"$logs/$name.log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
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

skip() {
	# shellcheck disable=SC2053
	[[ $1 == $only ]] || return 0
	echo "skip $1: $2"
	skipped=$((skipped + 1))
	skips+=("$1")
}

# --- setup and builds --------------------------------------------------------
t setup:packages "$repo/scripts/install-deps.sh"
t setup:kernel-6.12 "$repo/scripts/fetch-kernel.sh" 6.12
t setup:kernel-6.1 "$repo/scripts/fetch-kernel.sh" 6.1
t build:device make -C "$repo/tests/vhost-user-fs" -j2
t build:suite make -C "$repo/tests/suite" -j2
t build:module-6.12 make -C "$repo" KVER=6.12
t build:module-6.1 make -C "$repo" KVER=6.1
t build:uml-debug "$repo/scripts/build-uml.sh" debug

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

# --- host-side tests of the reference device ----------------------------------
t device:unit make -C "$repo/tests/vhost-user-fs" check

# --- DKMS, in a scratch tree, against each Debian header set -------------------
# dkms_check SERIES: dkms add + build as a Debian guest would (fuse_i.h from
# the linux-source package's tarball, here the cached one), then load the
# module it built in a QEMU guest of that kernel.
dkms_check() {
	local k=$1 kc=$VFS_CACHE/kernels/$1 tmp ver rel ko rc=0
	rel=$(cat "$kc/release")
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vfs-dkms.XXXXXX")
	mkdir -p "$tmp/dkms"
	make -s -C "$repo" dkms-install DESTDIR="$tmp" PREFIX=/usr || return 1
	ver=$(basename "$tmp"/usr/src/virtio_fs_sync-*)
	ver=${ver#virtio_fs_sync-}
	dkms add --sourcetree "$tmp/usr/src" --dkmstree "$tmp/dkms" -m virtio_fs_sync -v "$ver" &&
		LINUX_SOURCE_DIR=$kc/srcpkg/usr/src dkms build --sourcetree "$tmp/usr/src" --dkmstree "$tmp/dkms" \
			-m virtio_fs_sync -v "$ver" -k "$rel" --kernelsourcedir "$kc/kdir" || rc=1
	ko=$tmp/dkms/virtio_fs_sync/$ver/$rel/x86_64/module/virtio_fs_sync.ko
	if [ $rc = 0 ] && [ -f "$ko" ]; then
		modinfo -F vermagic "$ko"
		"$repo/tests/vm/run" --substrate qemu --kernel "$k" --driver intree -- \
			sh -c "insmod $ko && grep -w virtiofs_sync /proc/filesystems && rmmod virtio_fs_sync" || rc=1
	else
		echo "dkms did not build $ko"
		cat "$tmp/dkms/virtio_fs_sync/$ver/build/make.log" 2>/dev/null | tail -n 25
		rc=1
	fi
	rm -rf "$tmp"
	return $rc
}
t dkms:6.12 dkms_check 6.12
t dkms:6.1 dkms_check 6.1

# --- KUnit in UML -------------------------------------------------------------
kunit() {
	local out
	out=$("$repo/tests/vm/run" --driver none --results "$logs/kunit.results" \
		--append 'kunit.enable=1 kunit.filter_glob=virtio_fs_sync*' -- \
		sh -c 'cat /sys/kernel/debug/kunit/virtio_fs_sync*/results') || return 1
	echo "$out"
	# KTAP: every suite and case of ours must say ok, and there must be some.
	echo "$out" | grep -qE '^ *ok [0-9]+ ' || { echo "no KUnit results"; return 1; }
	! echo "$out" | grep -E '^ *not ok [0-9]+ '
}
t uml:kunit kunit

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

t uml:unbind-under-load "$repo/tests/vm/run" --results "$logs/uml:unbind-under-load.results" \
	--driver ours -- "$repo/tests/vm/scenarios/unbind-under-load"
# A/B by sysfs rebind, rmmod refused while mounted, unload/reload, removal
# under load, on both Debian kernels.
for k in 6.12 6.1; do
	t "qemu-$k:rebind-reload" "$repo/tests/vm/run" --substrate qemu --kernel $k --cpus 2 \
		--driver intree --results "$logs/qemu-$k:rebind-reload.results" -- \
		"$repo/tests/vm/scenarios/rebind-reload" "$(make -s -C "$repo" KVER=$k print-ko)"
done

for k in 6.12 6.1; do
	for d in ours intree; do
		for dev in ref virtiofsd; do
			for m in pc microvm; do
				mode=none
				[ $d = ours ] && [ $dev = ref ] && mode=async
				t "qemu-$k:$d:$dev:$m" vm_suite $mode "qemu-$k:$d:$dev:$m" \
					--substrate qemu --kernel $k --cpus 2 --driver $d --device $dev --machine $m
			done
		done
	done
done

# ab-in-guest.sh in UML (driver swapped by module load): results for every
# configuration, inline completions in ours-sync only (tests/bench/ab-uml.sh).
t uml:ab-in-guest "$repo/tests/bench/ab-uml.sh" --results "$logs/uml:ab-in-guest.results"

# --- summary ------------------------------------------------------------------
echo "# $((SECONDS - t0)) s; logs in ${logs#"$repo"/}"
[ ${#failures[@]} -gt 0 ] && echo "# failed: ${failures[*]}"
[ ${#skips[@]} -gt 0 ] && echo "# skipped: ${skips[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
