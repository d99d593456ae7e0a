#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ab-in-guest.sh: the A/B run inside one running guest (a libkrun VM, ...),
# for hosts where tests/vm/run cannot boot the guest. Run as root in the
# guest, with this repository visible in it:
#
#   sh bench/ab-in-guest.sh --tag TAG [--ko PATH/virtio_fs_sync.ko]
#        [--size quick|reduced|full] [--repeats N] [--out DIR]
#        [--configs "tmpfs intree ours-async ours-sync"] [--workloads LIST]
#        [--vdev virtioN] [--reprobe] [--order rotate|balanced|fixed]
#        [--tarball FILE] [--make-dir REL]
#
# For each repeat and configuration it mounts the virtio-fs device TAG at a
# private mount point (under $TMPDIR, default /tmp) with the configuration's
# driver, runs guest-bench.sh there, unmounts, keeps the driver's counters,
# and moves on:
#   tmpfs       a tmpfs mount (the ceiling)
#   intree      in-tree virtiofs (module or built in)
#   intree-again  the same as intree under a label of its own: the A/A
#               control (intree-again against intree is what the rounds'
#               noise alone makes of a ratio)
#   ours-async  virtio_fs_sync with sync=0
#   ours-sync   virtio_fs_sync with sync=1
# virtio_fs_sync is loaded from --ko with insmod (the module name is the
# file's: a copy built under another name, as the UML check does, works), or
# with modprobe, and removed again before the next configuration. Only the
# device that carries TAG changes hands, through the drivers' sysfs
# unbind/bind files: found by its tag in /sys/fs/virtiofs/*/tag or
# /sys/fs/virtio_fs_sync/TAG before anything is unbound (--vdev names it where
# neither says, as with 6.1's in-tree virtiofs, which has no tags in sysfs,
# unless the guest's only virtio-fs device is unbound). TAG must not be
# mounted anywhere else, and the root file system must not be on it. At the
# end the device goes back to in-tree virtiofs if that is where it was.
# Each configuration is checked before it runs: the device is bound to the
# configuration's driver, and virtio_fs_sync's sysfs says whether sync
# queues are in use (1 only for ours-sync). (--rebind is accepted and does
# nothing: rebinding is always done, for TAG's device only.)
#
# --reprobe: before each driver configuration, unbind and bind the transport
# device the virtio device sits on (its parent: virtio-uml.N, a PCI
# function, ...) with the virtio bus's drivers_autoprobe off, so that the
# device is probed afresh and only the configuration's driver binds it. UML
# needs it: virtio_uml keeps the features the last driver negotiated as the
# device's features, so once a driver that does not know VIRTIO_FS_F_SYNC
# (in-tree virtiofs, or ours with sync=0) has bound the device, the bit is
# gone until the transport is probed again. A vhost-user device must take a
# new frontend for it (vhost-user-fs --persistent).
#
# --order: each repeat (a round) runs every configuration once. rotate (the
# default) rotates the list by one per round (A B C, B C A, C A B), so that
# none always runs first, but each always runs after the same one;
# balanced takes the rounds from a Williams square (A B D C, B C A D,
# C D B A, D A C B for four), in which every configuration runs in every
# position and after every other equally often over n rounds (2n for an
# odd number n of configurations); fixed keeps the list's order.
# --tarball and --make-dir go to guest-bench.sh (the build workload).
#
# Output: DIR/<config>-r<N>.out (guest-bench.sh lines), .stats (the
# driver's counters, read after the unmount), .setup (driver, device, sync
# queues in use), DIR/order (one "ROUND CONFIG" line per run, in the order
# they ran), and a summary at the end (python3 if present). The exit
# status is 1 if a configuration could not be set up or a phase failed.
set -u
# The whole script is one compound command, parsed before it runs: editing
# the file during a run does not change the run.
{

here=$(cd "$(dirname "$0")" && pwd)
tag='' ko='' size=reduced repeats=3 out=./ab-results configs="tmpfs intree ours-async ours-sync"
workloads='' vdev='' reprobe=0 order=rotate tarball='' make_dir=''
while [ $# -gt 0 ]; do
	case $1 in
	--tag) tag=$2; shift 2 ;;
	--ko) ko=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--repeats) repeats=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--configs) configs=$2; shift 2 ;;
	--rebind) shift ;;
	--workloads) workloads=$2; shift 2 ;;
	--vdev) vdev=$2; shift 2 ;;
	--reprobe) reprobe=1; shift ;;
	--order) order=$2; shift 2 ;;
	--tarball) tarball=$2; shift 2 ;;
	--make-dir) make_dir=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
	*) echo "ab-in-guest: unknown option $1" >&2; exit 2 ;;
	esac
done
log() { echo "ab-in-guest: $*" >&2; }
[ -n "$tag" ] || { log "--tag TAG is required"; exit 2; }
case $order in rotate | balanced | fixed) ;; *) log "--order rotate|balanced|fixed"; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { log "run as root"; exit 2; }
if [ -n "$ko" ]; then
	[ -f "$ko" ] || { log "no module $ko"; exit 2; }
	ko=$(cd "$(dirname "$ko")" && pwd)/$(basename "$ko")
	modname=$(basename "$ko" .ko | tr - _)
else
	modname=virtio_fs_sync
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
if awk -v t="$tag" '$1 == t && ($3 == "virtiofs" || $3 == "virtiofs_sync") { f = 1 } END { exit !f }' /proc/mounts; then
	log "$tag is mounted ($(awk -v t="$tag" '$1 == t { print $2 }' /proc/mounts | tr '\n' ' ')): unmount it first"
	exit 2
fi
mnt=$(mktemp -d "${TMPDIR:-/tmp}/ab-mnt.XXXXXX") || exit 2

drv_dir=/sys/bus/virtio/drivers

# The virtio device that carries TAG (virtioN), from either driver's sysfs.
find_vdev() {
	for d in /sys/fs/virtiofs/*/ /sys/fs/virtio_fs_sync/*/; do
		[ -f "$d/tag" ] || continue
		[ -e "$d/device" ] || continue
		[ "$(cat "$d/tag")" = "$tag" ] || continue
		basename "$(readlink -f "$d/device")"
		return 0
	done
	# No tag in sysfs: one virtio-fs device without a driver is TAG's if
	# anything is (a bound one may be the root file system's).
	n=0 one=''
	for d in /sys/bus/virtio/devices/virtio*; do
		[ "$(cat "$d/device" 2>/dev/null)" = 0x001a ] || continue
		n=$((n + 1))
		[ -e "$d/driver" ] || one=$(basename "$d")
	done
	[ $n = 1 ] && echo "$one"
}

# The driver vdev is bound to (none if unbound).
bound_to() {
	if [ -e "/sys/bus/virtio/devices/$vdev/driver" ]; then
		basename "$(readlink -f "/sys/bus/virtio/devices/$vdev/driver")"
	else
		echo none
	fi
}

unbind() {
	d=$(bound_to)
	[ "$d" = none ] && return 0
	echo "$vdev" >"$drv_dir/$d/unbind" || { log "cannot unbind $vdev from $d"; return 1; }
}

# bind DRIVER: vdev to DRIVER, from whichever driver holds it.
bind() {
	[ "$(bound_to)" = "$1" ] && return 0
	unbind || return 1
	[ -e "$drv_dir/$1/bind" ] || { log "no driver $1"; return 1; }
	echo "$vdev" >"$drv_dir/$1/bind" || { log "cannot bind $vdev to $1"; return 1; }
}

unload_ours() {
	[ -d "/sys/module/$modname" ] || return 0
	# A built-in driver has no refcnt and stays.
	[ -e "/sys/module/$modname/refcnt" ] || return 0
	rmmod "$modname" || { log "cannot remove $modname"; return 1; }
}

# The transport under vdev probed again; vdev gets its new name.
autoprobe=/sys/bus/virtio/drivers_autoprobe
autoprobe0=$(cat $autoprobe)
reprobe_dev() {
	path=$(readlink -f "/sys/bus/virtio/devices/$vdev")
	parent=$(dirname "$path")
	pname=$(basename "$parent")
	pdrv=$(readlink -f "$parent/driver")
	if [ -z "$pdrv" ] || [ ! -e "$pdrv/unbind" ]; then
		log "$vdev: no transport driver above it"
		return 1
	fi
	echo 0 >$autoprobe || return 1
	unbind || return 1
	echo "$pname" >"$pdrv/unbind" || { log "cannot unbind $pname from $(basename "$pdrv")"; return 1; }
	echo "$pname" >"$pdrv/bind" || { log "cannot bind $pname to $(basename "$pdrv") again"; return 1; }
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		for d in "$parent"/virtio*; do
			[ -e "$d/device" ] || continue
			vdev=$(basename "$d")
			return 0
		done
		sleep 0.2
	done
	log "no virtio device under $pname after its probe"
	return 1
}

[ -n "$vdev" ] || vdev=$(find_vdev)
if [ -z "$vdev" ] || [ ! -e "/sys/bus/virtio/devices/$vdev" ]; then
	log "no virtio-fs device with tag $tag (give --vdev virtioN)"
	exit 2
fi
first_driver=$(bound_to)
log "tag $tag is $vdev, bound to $first_driver; module $modname"

setup() {
	c=$1
	case $c in
	tmpfs)
		mount -t tmpfs -o size=4g tmpfs "$mnt" || return 1
		echo "driver=tmpfs" >"$out/$c-r$r.setup"
		return 0 ;;
	intree | intree-again)
		unload_ours || return 1
		[ $reprobe = 0 ] || reprobe_dev || return 1
		modprobe virtiofs 2>/dev/null
		bind virtiofs || return 1
		mount -t virtiofs "$tag" "$mnt" || return 1 ;;
	ours-async | ours-sync)
		s=1
		[ "$c" = ours-async ] && s=0
		unload_ours || return 1
		[ $reprobe = 0 ] || reprobe_dev || return 1
		unbind || return 1
		if [ -n "$ko" ]; then
			insmod "$ko" sync=$s || return 1
		else
			modprobe virtio_fs_sync sync=$s || return 1
		fi
		bind virtio_fs_sync || return 1
		# virtiofs_sync when in-tree virtiofs holds the name virtiofs
		if grep -qw virtiofs_sync /proc/filesystems; then
			mount -t virtiofs_sync "$tag" "$mnt" || return 1
		else
			mount -t virtiofs "$tag" "$mnt" || return 1
		fi
		want=$s have=$(cat "/sys/fs/virtio_fs_sync/$tag/sync" 2>/dev/null)
		if [ "$have" != "$want" ]; then
			log "$c: virtio_fs_sync says sync queues in use: '$have', wanted $want" \
				"(a built-in driver keeps its boot parameters: give --ko;" \
				"UML: --reprobe, see --help)"
			umount "$mnt"
			return 1
		fi ;;
	*) log "unknown configuration $c"; return 1 ;;
	esac
	want=virtiofs
	case $c in ours-*) want=virtio_fs_sync ;; esac
	if [ "$(bound_to)" != $want ]; then
		log "$c: $vdev is bound to $(bound_to), not $want"
		umount "$mnt"
		return 1
	fi
	printf 'driver=%s vdev=%s sync_in_use=%s queues=%s\n' "$want" "$vdev" \
		"$(cat "/sys/fs/virtio_fs_sync/$tag/sync" 2>/dev/null || echo -)" \
		"$(tr ' ' ',' 2>/dev/null <"/sys/fs/virtio_fs_sync/$tag/queues" || echo -)" \
		>"$out/$c-r$r.setup"
}

# rotated N: the configurations rotated left by N (mod their count).
rotated() {
	k=$1
	set -- $configs
	k=$((k % $#))
	while [ "$k" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		k=$((k - 1))
	done
	echo "$@"
}

# williams N: round N's order (from 0) in a Williams square of the
# configurations: row r is b(j) + r mod n with b = 0, 1, n-1, 2, n-2, ...;
# for odd n, rows n..2n-1 are rows 0..n-1 reversed.
williams() {
	echo $configs | awk -v r="$1" '{
		n = NF; row = r % (n % 2 ? 2 * n : n); rev = row >= n; row %= n
		lo = 1; hi = n - 1
		for (j = 0; j < n; j++) {
			if (j == 0) b = 0
			else if (j % 2) b = lo++
			else b = hi--
			o[j] = $((b + row) % n + 1)
		}
		s = ""
		for (j = 0; j < n; j++)
			s = s (j ? " " : "") o[rev ? n - 1 - j : j]
		print s
	}'
}

failed=
rm -f "$out/order"
for r in $(seq "$repeats"); do
	round=$configs
	[ "$order" = rotate ] && round=$(rotated $((r - 1)))
	[ "$order" = balanced ] && round=$(williams $((r - 1)))
	for c in $round; do
		log "repeat $r/$repeats: $c"
		echo "$r $c" >>"$out/order"
		rm -f "$out/$c-r$r.stats" "$out/$c-r$r.setup"
		if ! setup "$c"; then
			log "cannot set up $c: skipped"
			echo "{\"phase\":\"setup\",\"label\":\"$c\",\"rc\":1}" >"$out/$c-r$r.out"
			failed="$failed $c-r$r"
			continue
		fi
		sh "$here/guest-bench.sh" --dir "$mnt" --size "$size" --label "$c" \
			${workloads:+--workloads "$workloads"} ${tarball:+--tarball "$tarball"} \
			${make_dir:+--make-dir "$make_dir"} >"$out/$c-r$r.out"
		rc=$?
		umount "$mnt" || { log "umount failed"; rc=1; }
		# Only ours has counters; a module loaded for an earlier
		# configuration may still be there, so others get none.
		case $c in
		ours-*) sed "s|^|$tag |" "/sys/fs/virtio_fs_sync/$tag/stats" ;;
		esac >"$out/$c-r$r.stats" 2>/dev/null
		if [ $rc != 0 ] || ! grep -q '^{"phase"' "$out/$c-r$r.out" ||
			grep -q '"rc":[1-9]' "$out/$c-r$r.out"; then
			log "$c repeat $r: guest-bench.sh failed (status $rc)"
			failed="$failed $c-r$r"
		fi
	done
done
unload_ours
if [ "$first_driver" = virtiofs ]; then
	[ $reprobe = 0 ] || reprobe_dev
	modprobe virtiofs 2>/dev/null
	bind virtiofs || log "could not hand $vdev back to virtiofs"
fi
echo "$autoprobe0" >$autoprobe
rmdir "$mnt"
if command -v python3 >/dev/null; then
	python3 "$here/report.py" summary "$out"/*.out
else
	log "results in $out (python3 not found for the summary)"
fi
if [ -n "$failed" ]; then
	log "failed:$failed"
	exit 1
fi
exit 0
}
