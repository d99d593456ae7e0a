#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/ab-uml.sh: ab-in-guest.sh run in a User-Mode Linux guest and
# checked (the `make check` test uml:ab-in-guest).
#
#   bench/ab-uml.sh [--results DIR] [--size quick|reduced|full]
#       [--repeats N] [--configs "tmpfs intree ours-async ours-sync"]
#       [--workloads LIST] [--flavor debug|bench] [--pin-device CPUS]
#       [--pin-guest CPUS] [-- TESTS/VM/RUN OPTIONS...]
#
# UML has virtio_fs_sync built in, its sync= parameter fixed at boot. To swap
# drivers the way a libkrun guest would, this builds the driver as a loadable
# module for the UML kernel under another module name, virtio_fs_sync_ab
# (the built-in driver holds /sys/module/virtio_fs_sync, so a module of that
# name is refused), with its init function renamed (the boot's
# initcall_blacklist=virtio_fs_sync_init that leaves the built-in driver
# out would refuse the module's too) and without its KUnit exports (the
# kernel has them), boots UML with the built-in driver left out and the share mounted by
# in-tree virtiofs (--driver intree), unmounts it and runs ab-in-guest.sh
# --ko --reprobe on the device (virtio_uml keeps the features the last driver
# negotiated: without a fresh probe of the transport, in-tree virtiofs at
# boot would hide VIRTIO_FS_F_SYNC from ours-sync), which therefore runs
# with --persistent (a new frontend per probe; tests/vm/run stops it 2 s
# after the guest ends). Then it checks, from ab-in-guest.sh's files and the
# run's device counters:
#   - ab-in-guest.sh and the guest ended well (no kernel splat either);
#   - every configuration and repeat has result lines, every phase rc 0;
#   - each one ran on its driver: tmpfs, virtiofs, or virtio_fs_sync with
#     sync queues in use for ours-sync only (its sysfs "sync");
#   - the driver's counters: requests were submitted in ours-async and
#     ours-sync, reaped inline (inline > 0) in ours-sync only;
#   - the device's sync queues completed inline exactly as many requests as
#     the driver reaped inline in ours-sync (the whole boot's counters);
#   - tests/vm/run's records: the device and every guest process ran on the
#     CPUs asked for (default: device on CPU 0, guest on CPU 1; both on 0 on
#     a 1-CPU host), and the device's and the guest's CPU times are there,
#     the device's above zero.
# Files: DIR/ (tests/vm/run --results) and DIR/ab/ (ab-in-guest.sh --out);
# default DIR is build/ab-uml/results.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
results=$repo/build/ab-uml/results size=quick repeats=1 flavor=debug
configs="tmpfs intree ours-async ours-sync" workloads=floor,unlink,smallfile
pin_device=0 pin_guest=1
[ "$(nproc)" -ge 2 ] || pin_guest=0
while [ $# -gt 0 ]; do
	case $1 in
	--results) results=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--repeats) repeats=$2; shift 2 ;;
	--configs) configs=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--flavor) flavor=$2; shift 2 ;;
	--pin-device) pin_device=$2; shift 2 ;;
	--pin-guest) pin_guest=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) sed -n '3,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//; /^set -uo/d'; exit 0 ;;
	*) echo "ab-uml: unknown option $1" >&2; exit 2 ;;
	esac
done
log() { echo "ab-uml: $*"; }

# 1. The module, built against the cached UML tree.
linux=$("$repo/tests/setup/build-uml.sh" "$flavor") || { log "cannot build the UML kernel"; exit 1; }
kout=$(dirname "$linux")
ksrc=$(readlink -f "$kout/source")
mdir=$repo/build/ab-uml/module-$flavor
rm -rf "$mdir"
mkdir -p "$mdir"
cp "$repo"/*.c "$repo"/*.h "$mdir"/
cp "$repo/Kbuild" "$mdir/Kbuild.driver"
git -C "$repo" describe --always --dirty >"$mdir/VERSION" 2>/dev/null || echo unknown >"$mdir/VERSION"
cat >"$mdir/Kbuild" <<'EOF'
# The driver's Kbuild, but one module named virtio_fs_sync_ab (the objects
# keep KBUILD_MODNAME virtio_fs_sync: the same driver and sysfs names).
include $(src)/Kbuild.driver
obj-m := virtio_fs_sync_ab.o
virtio_fs_sync_ab-y := $(virtio_fs_sync-y)
obj-y :=
ccflags-y += -include $(src)/no-kunit-exports.h
EOF
# The boot blacklists virtio_fs_sync_init, which would refuse this module
# too (-EPERM): in the copy, the init function takes another name.
init_c=$(grep -l '^module_init(virtio_fs_sync_init);' "$mdir"/*.c | head -n 1)
[ -n "$init_c" ] || { log "no module_init(virtio_fs_sync_init) to rename"; exit 1; }
sed -i 's/\bvirtio_fs_sync_init\b/virtio_fs_sync_ab_init/g' "$init_c"
cat >"$mdir/no-kunit-exports.h" <<'EOF'
/* The built-in driver exports these already (CONFIG_KUNIT=y). */
#include <kunit/visibility.h>
#undef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
EOF
# Under the UML build's lock: modules_prepare writes into the cached tree.
# No Module.symvers there (the kernel is built with `make linux`), so
# modpost cannot resolve the kernel's symbols: warnings, not errors.
# shellcheck disable=SC2016 # expanded by that sh
if ! flock "$cache/uml/.lock" sh -c '
	[ -f "$1/scripts/module.lds" ] || make -s -C "$1" ARCH=um modules_prepare || exit 1
	make -C "$1" ARCH=um M="$2" FUSE_INC="$3/fs/fuse" KBUILD_MODPOST_WARN=1 modules
	' sh "$kout" "$mdir" "$ksrc" >"$mdir/build.log" 2>&1; then
	tail -n 30 "$mdir/build.log"
	log "cannot build the module"
	exit 1
fi
ko=$mdir/virtio_fs_sync_ab.ko
[ -f "$ko" ] || { log "no $ko"; exit 1; }
log "module: $ko"

# vfsbench, for guest-bench.sh (it would compile it in the guest otherwise).
mkdir -p "$repo/build/bench"
if [ ! -x "$repo/build/bench/vfsbench" ] || [ "$repo/bench/vfsbench.c" -nt "$repo/build/bench/vfsbench" ]; then
	gcc -O2 -Wall -o "$repo/build/bench/vfsbench" "$repo/bench/vfsbench.c" -lm || exit 1
fi

# 2. The run. The guest-side part unmounts the share, runs the A/B, and
# mounts the share again for guest-init (ab-in-guest.sh hands the device
# back to virtiofs).
rm -rf "$results"
ab=$results/ab
mkdir -p "$ab"
# shellcheck disable=SC2016 # expanded in the guest
guest='cd / && umount /mnt/share || exit 1
TMPDIR=/mnt sh "$1" --tag share --ko "$2" --reprobe --out "$3" --size "$4" --repeats "$5" --configs "$6" --workloads "$7"
rc=$?
mount -t virtiofs share /mnt/share || { echo "cannot mount the share again"; rc=1; }
exit $rc'
"$repo/tests/vm/run" --substrate uml --flavor "$flavor" --driver intree --dev-opts --persistent \
	--pin-device "$pin_device" --pin-guest "$pin_guest" --results "$results" "$@" -- \
	sh -c "$guest" sh "$repo/bench/ab-in-guest.sh" "$ko" "$ab" "$size" "$repeats" "$configs" "$workloads"
rc=$?
log "tests/vm/run exit status $rc"

# 3. The checks.
fail=0
bad() { echo "FAIL: $*"; fail=1; }
[ $rc = 0 ] || bad "the guest run ended with status $rc"
# sum FILE KEY [FILTER]: the sum of KEY=N over FILE's lines that match FILTER.
sum() {
	[ -f "$1" ] || { echo 0; return; }
	awk -v k="$2" -v f="${3:-.}" '$0 ~ f { for (i = 1; i <= NF; i++) { split($i, kv, "=")
		if (kv[1] == k) s += kv[2] } } END { print s + 0 }' "$1"
}
sync_inline=0
printf '%-10s %-3s %-6s %-16s %-5s %-9s %-7s\n' config rep phases driver sync submitted inline
for r in $(seq "$repeats"); do
	for c in $configs; do
		f=$ab/$c-r$r
		phases=$(grep '^{"phase"' "$f.out" 2>/dev/null | grep -vc '"phase":"env"')
		driver=$(sed -n 's/.*driver=\([^ ]*\).*/\1/p' "$f.setup" 2>/dev/null)
		insync=$(sed -n 's/.*sync_in_use=\([^ ]*\).*/\1/p' "$f.setup" 2>/dev/null)
		submitted=$(sum "$f.stats" submitted)
		inline=$(sum "$f.stats" inline)
		printf '%-10s %-3s %-6s %-16s %-5s %-9s %-7s\n' "$c" "$r" "$phases" "${driver:--}" \
			"${insync:--}" "$submitted" "$inline"
		[ "$phases" -gt 0 ] || bad "$c r$r: no result lines"
		grep -q '"rc":[1-9]' "$f.out" 2>/dev/null && bad "$c r$r: a phase failed: $(grep '"rc":[1-9]' "$f.out" | cut -c1-200)"
		case $c in
		tmpfs) want=tmpfs ;;
		intree) want=virtiofs ;;
		*) want=virtio_fs_sync ;;
		esac
		[ "$driver" = "$want" ] || bad "$c r$r: ran on '${driver:-?}', not $want"
		case $c in
		ours-sync)
			[ "$insync" = 1 ] || bad "$c r$r: sync queues not in use"
			[ "$inline" -gt 0 ] || bad "$c r$r: no request reaped inline"
			sync_inline=$((sync_inline + inline)) ;;
		ours-async)
			[ "$insync" = 0 ] || bad "$c r$r: sync queues in use"
			[ "$submitted" -gt 0 ] || bad "$c r$r: no driver counters"
			[ "$inline" = 0 ] || bad "$c r$r: $inline requests reaped inline" ;;
		*)
			[ "$inline" = 0 ] || bad "$c r$r: $inline requests reaped inline" ;;
		esac
	done
done
dev_inline=$(sum "$results/dev-stats" inline 'type=sync')
echo "device: sync queues completed $dev_inline requests inline; the driver reaped $sync_inline inline in ours-sync"
[ "$dev_inline" = "$sync_inline" ] || bad "the device's inline count ($dev_inline) is not ours-sync's ($sync_inline)"

# tests/vm/run's pinning and CPU time records.
cpus() {
	echo "$1" | awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-")
		for (c = r[1] + 0; c <= (n > 1 ? r[2] : r[1]) + 0; c++) print c } }' | sort -nu | tr '\n' ' '
}
pinval() { sed -n "s/^$1=//p" "$results/pinning" 2>/dev/null; }
echo "pinning: $(tr '\n' ' ' 2>/dev/null <"$results/pinning")"
[ "$(pinval pin_check)" = ok ] || bad "pin_check is '$(pinval pin_check)', not ok"
[ "$(cpus "$(pinval device_cpus_allowed)")" = "$(cpus "$pin_device")" ] ||
	bad "the device ran on CPUs '$(pinval device_cpus_allowed)', not '$pin_device'"
glists=$(pinval guest_cpus_allowed)
[ -n "$glists" ] || bad "no guest CPU list recorded"
for l in $glists; do
	[ "$(cpus "$l")" = "$(cpus "$pin_guest")" ] || bad "a guest process ran on CPUs '$l', not '$pin_guest'"
done
echo "cpu-times: $(tr '\n' ';' 2>/dev/null <"$results/cpu-times")"
for n in device guest; do
	grep -Eq "^$n pid=[0-9]+ user_s=[0-9.]+ sys_s=[0-9.]+ " "$results/cpu-times" 2>/dev/null ||
		bad "no CPU time of the $n in cpu-times"
done
awk '$1 == "device" { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] ~ /_s$/) s += kv[2] } }
	END { exit !(s > 0) }' "$results/cpu-times" 2>/dev/null || bad "the device's CPU time is 0"
[ $fail = 0 ] && echo "ab-uml: ok"
exit $fail
