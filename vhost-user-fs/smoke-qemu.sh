#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# smoke-qemu.sh [pci|microvm]...
#
# Boots Debian's 6.12 cloud kernel under QEMU/TCG with a busybox initramfs
# against vhost-user-fs, mounts the share with in-tree virtiofs, writes,
# reads back, lists, renames, unlinks and unmounts, then compares what the
# guest saw with the host's view. The host's QEMU acknowledges in-band
# notifications (protocol bit 14, as every bit below its maximum) but kicks
# through eventfds and never passes VIRTIO_FS_F_SYNC to its guest nor back
# to the device, so this is the interrupt-driven path only (the sync path
# on QEMU needs the project's series: scripts/build-qemu.sh, make check's
# qemu-sync-* rows).
#
# microvm: on this project's machines (Nov 2026) Debian's 6.12 kernel never
# gets a timer tick under microvm/TCG (it stops after "tsc: Marking TSC
# unstable", with or without a vhost-user device), so it is not in the
# default list; run "smoke-qemu.sh microvm" where microvm boots.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
kernel=${KERNEL:-$cache/kernels/6.12/vmlinuz}
modules=${MODULES:-$cache/kernels/6.12/modules}
machines=${*:-pci}
# MODULE=path/to/virtio_fs_sync.ko: load the project's driver instead of
# in-tree virtiofs (which initcall_blacklist keeps off the device).
module=${MODULE:-}
# SUITE=1: also run tests/suite (fstest + stress) in the guest on the share.
suite=${SUITE:-}
timeout=${TIMEOUT:-120}

make -s -C "$here" >/dev/null
work=$(mktemp -d /tmp/vufs-qemu.XXXXXX)
trap 'rm -rf "$work"' EXIT

build_initramfs() {
	local root=$work/initramfs
	mkdir -p "$root"/{bin,proc,sys,dev,mnt,lib/modules}
	cp /bin/busybox "$root/bin/busybox"
	for m in virtio_mmio; do
		f=$(find "$modules/" -name "$m.ko*" | head -1)
		[ -n "$f" ] || continue
		case $f in
		*.xz) xz -dc "$f" >"$root/lib/modules/$m.ko" ;;
		*) cp "$f" "$root/lib/modules/$m.ko" ;;
		esac
	done
	[ -n "$module" ] && cp "$module" "$root/lib/modules/project.ko"
	if [ -n "$suite" ]; then
		make -s -C "$here/../tests/suite" >/dev/null
		mkdir -p "$root/suite/bin"
		cp "$here/../tests/suite/run-suite.sh" "$root/suite/"
		cp "$here/../tests/suite/bin/"* "$root/suite/bin/"
	fi
	cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
[ -f /lib/modules/virtio_mmio.ko ] && insmod /lib/modules/virtio_mmio.ko 2>/dev/null
if [ -f /lib/modules/project.ko ]; then
	insmod /lib/modules/project.ko && echo "RESULT module loaded"
fi
sleep 0.2
for d in /sys/bus/virtio/devices/*; do
	[ "$(cat $d/device)" = 0x001a ] && echo "RESULT driver $(basename $(readlink $d/driver))"
done
r() { echo "RESULT $*"; }
if mount -t virtiofs share /mnt; then
	r mount ok
	dd if=/dev/urandom of=/mnt/guest.bin bs=1k count=300 2>/dev/null
	r sum $(md5sum /mnt/guest.bin | cut -d' ' -f1)
	r hostfile $(cat /mnt/host.txt)
	mkdir /mnt/gdir && echo data > /mnt/gdir/a && mv /mnt/gdir/a /mnt/gdir/b
	r list $(ls /mnt/gdir)
	echo tmp > /mnt/gone && rm /mnt/gone && r unlink $([ -e /mnt/gone ] && echo still || echo gone)
	for i in $(seq 1 200); do echo $i > /mnt/gdir/f$i; done
	r many $(ls /mnt/gdir | wc -l)
	if [ -x /suite/run-suite.sh ]; then
		mkdir /mnt/suite-dir
		/suite/run-suite.sh /mnt/suite-dir 2>&1 | sed 's/^/SUITE /'
	fi
	umount /mnt && r umount ok
else
	r mount failed
fi
poweroff -f
INIT
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz"
}

run_one() {
	local machine=$1
	local share=$work/share-$machine sock=$work/sock-$machine
	local log=$work/console-$machine stats=$work/stats-$machine dev mach
	local append=
	[ -n "$module" ] && append="initcall_blacklist=virtio_fs_init"
	mkdir -p "$share"
	echo "hello from the host" >"$share/host.txt"
	"$here/vhost-user-fs" --socket-path="$sock" --shared-dir="$share" \
		--stats-file="$stats" --workers=2 2>"$work/dev-$machine.log" &
	local dpid=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	case $machine in
	pci)
		mach="pc,memory-backend=mem"
		dev="-device vhost-user-fs-pci,chardev=c,tag=share,num-request-queues=${QUEUES:-2}" ;;
	microvm)
		mach="microvm,acpi=on,memory-backend=mem"
		dev="-global virtio-mmio.force-legacy=false -device vhost-user-fs-device,chardev=c,tag=share,num-request-queues=${QUEUES:-2}" ;;
	esac
	# shellcheck disable=SC2086
	timeout "$timeout" qemu-system-x86_64 -accel tcg,thread=multi -cpu max \
		-smp 2 -m 1G -nographic -no-reboot \
		-object memory-backend-memfd,id=mem,size=1G,share=on \
		-machine "$mach" -chardev socket,id=c,path="$sock" $dev \
		-kernel "$kernel" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet $append" >"$log" 2>&1 || true
	wait "$dpid" || echo "device exited with $?"
	local ok=1 want
	want=$(md5sum "$share/guest.bin" 2>/dev/null | cut -d' ' -f1)
	grep -q "RESULT mount ok" "$log" || ok=0
	grep -q "RESULT sum $want" "$log" || ok=0
	grep -q "RESULT hostfile hello from the host" "$log" || ok=0
	grep -q "RESULT list b" "$log" || ok=0
	grep -q "RESULT unlink gone" "$log" || ok=0
	grep -q "RESULT many 201" "$log" || ok=0
	grep -q "RESULT umount ok" "$log" || ok=0
	[ "$(cat "$share/gdir/b" 2>/dev/null)" = data ] || ok=0
	if [ -n "$module" ]; then
		grep -q "RESULT module loaded" "$log" || ok=0
		grep "RESULT driver" "$log" | grep -qv virtiofs || ok=0
	fi
	grep "RESULT driver" "$log" | sed "s/^RESULT /  $machine: /"
	if [ -n "$suite" ]; then
		grep "^SUITE " "$log" | grep -v "^SUITE ok" | sed "s/^SUITE /  suite: /"
		grep -q "^SUITE suite: PASS" "$log" || ok=0
		# what reached the backing directory, past the guest's page cache
		"$here/../tests/suite/bin/verify-manifest" "$share/suite-dir/suite-stress" |
			tail -1 | sed "s/^/  host: /"
		"$here/../tests/suite/bin/verify-manifest" "$share/suite-dir/suite-stress" \
			>/dev/null || ok=0
	fi
	if [ $ok = 1 ]; then
		echo "PASS qemu-$machine"
	else
		echo "FAIL qemu-$machine"
		grep RESULT "$log" || tail -30 "$log"
		cat "$work/dev-$machine.log"
	fi
	cat "$stats" 2>/dev/null | sed "s/^/  $machine: /"
	[ $ok = 1 ]
}

build_initramfs
rc=0
for m in $machines; do
	run_one "$m" || rc=1
done
exit $rc
