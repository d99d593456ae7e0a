#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ab-in-guest.sh: the A/B run inside one running guest (a libkrun VM, ...),
# for hosts where tests/vm/run cannot boot the guest. Run as root in the
# guest, with this repository visible in it:
#
#   sh tests/bench/ab-in-guest.sh --tag TAG [--ko PATH/virtio_fs_sync.ko]
#        [--size quick|reduced|full] [--repeats N] [--out DIR]
#        [--configs "tmpfs intree ours-async ours-sync"]
#
# For each repeat and configuration it mounts the virtio-fs device TAG at a
# private mount point with the configuration's driver, runs guest-bench.sh
# there, unmounts, keeps the driver's counters, and moves on:
#   tmpfs       a tmpfs mount (the ceiling)
#   intree      in-tree virtiofs (module virtiofs; it must own the device:
#               virtio_fs_sync is removed first)
#   ours-async  virtio_fs_sync.ko with sync=0 (in-tree virtiofs removed first)
#   ours-sync   virtio_fs_sync.ko with sync=1
# Swapping drivers needs both as modules (or virtiofs built in and
# virtio_fs_sync loaded with the device unbound from virtiofs: then the
# intree configuration is skipped unless --rebind is given, which writes the
# device to the drivers' unbind/bind files). The root file system must not
# be on the device under test.
#
# Output: DIR/<config>-r<N>.out (guest-bench.sh lines) and .stats (the
# driver's counters), and a summary at the end (python3 if present).
set -u
# The whole script is one compound command, parsed before it runs: editing
# the file during a run does not change the run.
{

here=$(cd "$(dirname "$0")" && pwd)
tag= ko= size=reduced repeats=3 out=./ab-results configs="tmpfs intree ours-async ours-sync"
rebind=0 extra=
while [ $# -gt 0 ]; do
	case $1 in
	--tag) tag=$2; shift 2 ;;
	--ko) ko=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--repeats) repeats=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--configs) configs=$2; shift 2 ;;
	--rebind) rebind=1; shift ;;
	--workloads) extra="--workloads $2"; shift 2 ;;
	-h | --help) sed -n '3,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
	*) echo "ab-in-guest: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$tag" ] || { echo "ab-in-guest: --tag TAG is required" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "ab-in-guest: run as root" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
mnt=$(mktemp -d /tmp/ab-mnt.XXXXXX)
log() { echo "ab-in-guest: $*" >&2; }

# The virtio device that carries TAG, found through either driver's sysfs.
find_vdev() {
	for d in /sys/bus/virtio/devices/virtio*; do
		[ -e "$d" ] || continue
		[ "$(cat "$d/device" 2>/dev/null)" = 0x001a ] || continue
		basename "$d"
	done
}

unload_all() {
	umount "$mnt" 2>/dev/null
	rmmod virtio_fs_sync 2>/dev/null
	rmmod virtiofs 2>/dev/null
	:
}

setup() {
	c=$1
	unload_all
	case $c in
	tmpfs)
		mount -t tmpfs -o size=4g tmpfs "$mnt" ;;
	intree)
		modprobe virtiofs 2>/dev/null
		if [ $rebind = 1 ]; then
			for v in $(find_vdev); do
				echo "$v" >/sys/bus/virtio/drivers/virtio_fs_sync/unbind 2>/dev/null
				echo "$v" >/sys/bus/virtio/drivers/virtiofs/bind 2>/dev/null
			done
		fi
		mount -t virtiofs "$tag" "$mnt" ;;
	ours-async | ours-sync)
		s=1
		[ $c = ours-async ] && s=0
		if [ $rebind = 1 ]; then
			for v in $(find_vdev); do
				echo "$v" >/sys/bus/virtio/drivers/virtiofs/unbind 2>/dev/null
			done
		fi
		if [ -n "$ko" ]; then
			insmod "$ko" sync=$s || return 1
		else
			modprobe virtio_fs_sync sync=$s || return 1
		fi
		if [ $rebind = 1 ]; then
			for v in $(find_vdev); do
				echo "$v" >/sys/bus/virtio/drivers/virtio_fs_sync/bind 2>/dev/null
			done
		fi
		# virtiofs_sync when in-tree virtiofs holds the name virtiofs
		mount -t virtiofs "$tag" "$mnt" 2>/dev/null || mount -t virtiofs_sync "$tag" "$mnt" ;;
	*) log "unknown configuration $c"; return 1 ;;
	esac
}

for r in $(seq "$repeats"); do
	for c in $configs; do
		log "repeat $r/$repeats: $c"
		if ! setup "$c"; then
			log "cannot set up $c: skipped"
			echo "{\"phase\":\"setup\",\"label\":\"$c\",\"rc\":1}" >"$out/$c-r$r.out"
			continue
		fi
		sh "$here/guest-bench.sh" --dir "$mnt" --size "$size" --label "$c" $extra >"$out/$c-r$r.out"
		cd /
		umount "$mnt" || log "umount failed"
		for d in /sys/fs/virtio_fs_sync/*/; do
			[ -f "$d/stats" ] && sed "s|^|$(basename "$d") |" "$d/stats"
		done >"$out/$c-r$r.stats" 2>/dev/null
	done
done
unload_all
rmdir "$mnt"
if command -v python3 >/dev/null; then
	python3 "$here/report.py" summary "$out"/*.out
else
	log "results in $out (python3 not found for the summary)"
fi
exit
}
