#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install-deps.sh: installs with apt-get what building and testing need,
# skipping what is there already (a second run installs nothing). The
# second group builds the patched QEMU (scripts/build-qemu.sh), the third
# libkrunfw (scripts/build-libkrunfw.sh).
set -euo pipefail

pkgs="make gcc flex bison bc libelf-dev libssl-dev dwarves sparse cpio kmod
xz-utils zstd busybox-static qemu-system-x86 qemu-system-common fio dkms
rsync python3 clang debootstrap
ninja-build pkg-config libglib2.0-dev libpixman-1-dev libfdt-dev dpkg-dev patch
seabios
python3-pyelftools curl"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: need root for apt-get (missing:$missing)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
