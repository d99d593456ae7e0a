#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-qemu.sh         build (once) and print the path of a
#                       qemu-system-x86_64 with the project's QEMU series
#
# The sync host: Debian trixie's QEMU 10.0 source (apt-get source, through
# a private apt configuration under the cache, scripts/apt-private.sh; the
# system's sources stay as they are), with Debian's own patches, then the
# series in qemu/patches/ (git format-patch files, applied in name order).
# Only qemu-system-x86_64 is built: TCG, vhost-user, fdt, the pc and
# microvm machines with virtio-fs; no other devices, debug info, docs, tools or
# firmware (Debian's +ds source has no firmware blobs: the binary takes
# the host's through links next to its bin/, as a relocatable QEMU looks
# for them: share/qemu -> /usr/share/qemu (qemu-system-data: option ROMs,
# bios-microvm.bin) and share/qemu-firmware -> /usr/share/seabios). It builds on bookworm with bookworm's
# compiler and libraries, so it runs on the host; only meson is too old
# there (1.0.1, QEMU 10 needs 1.5): trixie's meson .deb, pure Python, is
# unpacked and put on PYTHONPATH.
#
# Result: $VFS_CACHE/qemu/<QEMU version>-<series hash>/bin/qemu-system-x86_64
# (the hash is of the series' files: another series builds anew).
# Work files: $VFS_CACHE/qemu/work (removed after a build); lists and
# downloads: $VFS_CACHE/qemu/apt. Build jobs: VFS_QEMU_JOBS (default 1),
# under nice.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
base=$cache/qemu
jobs=${VFS_QEMU_JOBS:-1}
# the series is made for this upstream release
want_upstream=10.0

log() { echo "build-qemu: $*" >&2; }

shopt -s nullglob
patches=("$repo"/qemu/patches/*.patch)
shopt -u nullglob
[ ${#patches[@]} -gt 0 ] || { log "no patches in qemu/patches"; exit 1; }
# The devices built: the two machines the guests boot, virtio-fs over
# PCI and MMIO, and virtio-serial for the console of libkrunfw's kernel,
# which has no other (what they select comes too); no NICs, disks, USB or
# sound.
devices='CONFIG_I440FX=y
CONFIG_MICROVM=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_MMIO=y
CONFIG_VHOST_USER_FS=y
CONFIG_VIRTIO_SERIAL=y'
hash=$( (cat "${patches[@]}" && echo "$devices") | sha256sum | cut -c1-12)

mkdir -p "$base"
# one build at a time; a second caller waits and finds it done
exec 9>"$base/.lock"
flock 9

# shellcheck source=scripts/apt-private.sh
. "$repo/scripts/apt-private.sh"
APT_PRIVATE_DIR=$base/apt apt_private_init --src trixie
version=$(apt-cache "${APT_OPTS[@]}" showsrc qemu 2>/dev/null |
	awk '/^Version:/ { print $2 }' | sort -V | tail -n 1)
upstream=${version#*:}
upstream=${upstream%%+*}
case $upstream in
"$want_upstream".*) ;;
*) log "trixie's QEMU is '$version', the series is for $want_upstream.x"; exit 1 ;;
esac
out=$base/${version#*:}-$hash
if [ -x "$out/bin/qemu-system-x86_64" ]; then
	echo "$out/bin/qemu-system-x86_64"
	exit 0
fi

for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/bios-microvm.bin \
	/usr/share/qemu/linuxboot_dma.bin; do
	[ -e "$f" ] || { log "no $f (packages qemu-system-data, seabios)"; exit 1; }
done
for p in gcc ninja pkg-config; do
	command -v $p >/dev/null || { log "needs $p (tests/setup/install-deps.sh)"; exit 1; }
done
for p in glib-2.0 pixman-1; do
	pkg-config --exists $p || { log "needs the $p headers (tests/setup/install-deps.sh)"; exit 1; }
done
[ -f /usr/include/libfdt.h ] || { log "needs the libfdt headers (tests/setup/install-deps.sh)"; exit 1; }

work=$base/work
rm -rf "$work" "$out.tmp"
mkdir -p "$work/dl"
start=$SECONDS
log "QEMU $version with ${#patches[@]} patches (series $hash)"
(cd "$work/dl" && apt-get "${APT_OPTS[@]}" source --download-only -q "qemu=$version" >&2 &&
	apt-get "${APT_OPTS[@]}" download -q meson >&2)
dpkg-source -x "$work"/dl/qemu_*.dsc "$work/src" >&2
dpkg-deb -x "$work"/dl/meson_*.deb "$work/meson"
export PYTHONPATH=$work/meson/usr/lib/python3/dist-packages
for p in "${patches[@]}"; do
	log "applying ${p##*/}"
	patch -d "$work/src" -p1 -s --no-backup-if-mismatch <"$p" || { log "${p##*/} does not apply"; exit 1; }
done

echo "$devices" >"$work/src/configs/devices/x86_64-softmmu/vfsync.mak"

mkdir -p "$work/build"
cd "$work/build"
log "configure"
nice -n 10 ../src/configure --prefix="$out.tmp" --target-list=x86_64-softmmu \
	--without-default-features --enable-tcg --enable-kvm --enable-vhost-user \
	--without-default-devices --with-devices-x86_64=vfsync --disable-debug-info \
	--enable-fdt=system --disable-docs --disable-tools --disable-install-blobs \
	>"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; exit 1; }
log "ninja -j$jobs qemu-system-x86_64"
nice -n 10 ninja -j"$jobs" qemu-system-x86_64 >"$work/build.log" 2>&1 ||
	{ tail -n 30 "$work/build.log" >&2; exit 1; }
mkdir -p "$out.tmp/bin" "$out.tmp/share"
cp qemu-system-x86_64 "$out.tmp/bin/"
ln -s /usr/share/qemu "$out.tmp/share/qemu"
ln -s /usr/share/seabios "$out.tmp/share/qemu-firmware"
cp "${patches[@]}" "$out.tmp/"
echo "$version" >"$out.tmp/version"
mv "$out.tmp" "$out"
cd "$base"
rm -rf "$work"
log "built in $((SECONDS - start)) s: $out"
echo "$out/bin/qemu-system-x86_64"
