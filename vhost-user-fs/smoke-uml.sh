#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# smoke-uml.sh [path/to/uml/linux]
#
# Boots User-Mode Linux against vhost-user-fs (virtio_uml, in-band kicks),
# mounts the share, writes, reads back, lists, renames, unlinks and
# unmounts, and checks on the host: checksums, the guest's view of the
# VIRTIO_FS_F_SYNC feature bit, and the device's per-queue counters.
# UML exits 0 whatever happens inside, so the guest reports through a file.
#
# Environment: UML (kernel binary), DRIVER (intree: in-tree virtiofs binds;
# project: boot with initcall_blacklist=virtio_fs_init so the project's
# built-in virtio_fs_sync driver binds and sync queues are used), FSTYPE
# (default virtiofs), SYNC_BIT (default 1), DEVICE_ARGS (extra device
# options), UML_ARGS (extra kernel arguments), TIMEOUT (seconds).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
uml=${1:-${UML:-}}
fstype=${FSTYPE:-virtiofs}
driver=${DRIVER:-intree}
uml_args=${UML_ARGS:-}
case $driver in
intree) ;;
project) uml_args="initcall_blacklist=virtio_fs_init $uml_args" ;;
*) echo "DRIVER must be intree or project" >&2; exit 2 ;;
esac
sync_bit=${SYNC_BIT:-1}
timeout=${TIMEOUT:-120}

if [ -z "$uml" ]; then
	if [ -x "$cache/uml/debug/linux" ]; then
		uml=$cache/uml/debug/linux
	else
		uml=$("$repo/tests/setup/build-uml.sh" debug)
	fi
fi
make -s -C "$here" >/dev/null

work=$(mktemp -d /tmp/vufs-uml.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/share" "$work/mnt" "$work/uml"
head -c 1000000 /dev/urandom >"$work/src.bin"
echo "hello from the host" >"$work/share/host.txt"

cat >"$work/init" <<INIT
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
out=$work/result
r() { echo "\$*" >>"\$out"; }
mount -t proc proc /proc
mount -t sysfs sys /sys
for d in /sys/bus/virtio/devices/*; do
	[ "\$(cat \$d/device)" = 0x001a ] || continue
	drv=\$(basename \$(readlink \$d/driver) 2>/dev/null)
	# if initcall_blacklist did not keep in-tree virtiofs away, move it
	if [ $driver = project ] && [ "\$drv" = virtiofs ] &&
	   [ -d /sys/bus/virtio/drivers/virtio_fs_sync ]; then
		echo \$(basename \$d) > /sys/bus/virtio/drivers/virtiofs/unbind
		echo \$(basename \$d) > /sys/bus/virtio/drivers/virtio_fs_sync/bind
		r rebound
	fi
	r features \$(cat \$d/features)
	r driver \$(basename \$(readlink \$d/driver) 2>/dev/null)
done
fst=$fstype
# the project's driver names its type virtiofs_sync when in-tree has virtiofs
[ $driver = project ] && grep -q virtiofs_sync /proc/filesystems && fst=virtiofs_sync
r fstype \$fst
if mount -t \$fst share $work/mnt; then
	r mount ok
	m=$work/mnt
	cp $work/src.bin \$m/copy.bin
	r sum \$(md5sum < \$m/copy.bin | cut -d' ' -f1)
	r hostfile \$(cat \$m/host.txt)
	mkdir \$m/dir && echo data > \$m/dir/a && mv \$m/dir/a \$m/dir/b
	r list \$(ls \$m/dir)
	echo x > \$m/gone && rm \$m/gone
	r unlink \$([ -e \$m/gone ] && echo still || echo gone)
	i=0; while [ \$i -lt 100 ]; do echo \$i > \$m/dir/f\$i; i=\$((i+1)); done
	r many \$(ls \$m/dir | wc -l)
	umount \$m && r umount ok
else
	r mount failed
fi
r done
exec busybox poweroff -f
INIT
chmod +x "$work/init"

"$here/vhost-user-fs" --socket-path="$work/sock" --shared-dir="$work/share" \
	--stats-file="$work/stats" --sync-bit="$sync_bit" ${DEVICE_ARGS:-} \
	2>"$work/device.log" &
dpid=$!
for _ in $(seq 50); do [ -S "$work/sock" ] && break; sleep 0.1; done

timeout "$timeout" "$uml" mem=512M uml_dir="$work/uml" rootfstype=hostfs \
	rootflags=/ rw init="$work/init" \
	virtio_uml.device="$work/sock:26" $uml_args >"$work/console" 2>&1 </dev/null || true
wait "$dpid" || echo "device exited with status $?"

ok=1
res=$work/result
check() {
	if grep -qx -- "$1" "$res" 2>/dev/null; then
		echo "PASS $2"
	else
		echo "FAIL $2"
		ok=0
	fi
}
want=$(md5sum <"$work/src.bin" | cut -d' ' -f1)
check "mount ok" "mount"
check "sum $want" "copy checksum in the guest"
check "hostfile hello from the host" "read a host file"
check "list b" "rename"
check "unlink gone" "unlink"
check "many 101" "create 100 files"
check "umount ok" "umount"
if cmp -s "$work/src.bin" "$work/share/copy.bin"; then
	echo "PASS checksum on the host"
else
	echo "FAIL checksum on the host"
	ok=0
fi
feat=$(sed -n 's/^features //p' "$res" 2>/dev/null)
# sysfs shows the negotiated bits: in-tree virtiofs does not know the bit
if [ "$driver" = intree ]; then
	if [ "${feat:$sync_bit:1}" = 0 ] && grep -q "sync queues inactive" "$work/device.log"; then
		echo "PASS in-tree virtiofs leaves VIRTIO_FS_F_SYNC unacked (bit $sync_bit)"
	else
		echo "FAIL in-tree virtiofs and VIRTIO_FS_F_SYNC: '$feat'"
		ok=0
	fi
else
	if [ "${feat:$sync_bit:1}" = 1 ] && grep -q "sync queues active" "$work/device.log"; then
		echo "PASS guest negotiated VIRTIO_FS_F_SYNC (bit $sync_bit)"
	else
		echo "FAIL guest negotiated VIRTIO_FS_F_SYNC (bit $sync_bit): '$feat'"
		ok=0
	fi
	if grep -Eq '^queue=[0-9]+ type=sync requests=[0-9]+ inline=[1-9]' "$work/stats"; then
		echo "PASS sync queue completions inline"
	else
		echo "FAIL sync queue completions inline"
		ok=0
	fi
fi
if grep -q '^queue=1 type=request requests=[1-9]' "$work/stats" 2>/dev/null; then
	echo "PASS request queue counters"
else
	echo "FAIL request queue counters"
	ok=0
fi
echo "device stats:"
sed 's/^/  /' "$work/stats" 2>/dev/null || true
if [ $ok = 0 ]; then
	echo "--- guest results"; cat "$res" 2>/dev/null || true
	echo "--- device log"; cat "$work/device.log"
	echo "--- console (tail)"; tail -40 "$work/console"
	exit 1
fi
