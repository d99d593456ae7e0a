# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/dkms.sh: DKMS as on a Debian guest, in a scratch tree.
# Sourced by tests/check.sh, whose rows call these functions; they use its
# variables ($repo, $logs, $VFS_CACHE and the like) and counter_sum
# (tests/vm/counters.sh).

# dkms_check SERIES: dkms add, build and install as on a Debian guest (fuse_i.h
# from the linux-source package's tarball, here the cached one), with every
# dkms tree in a scratch directory: --installtree is a copy of the kernel's
# /lib/modules/<release>, so dkms install writes there, and --no-depmod
# keeps it away from the host's /lib/modules (dkms runs a plain `depmod -a
# <release>`); depmod -b then indexes the scratch tree against the kernel's
# Module.symvers. The QEMU guest of that kernel loads the module with
# `modprobe -d <scratch root>`, so it is the installed file that is loaded.
# Nothing under the host's /lib/modules, /boot or /var/lib/dkms may change.
dkms_check() {
	local k=$1 kc=$VFS_CACHE/kernels/$1 tmp ver rel mods inst out rc=0
	local a=()
	rel=$(cat "$kc/release")
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vfs-dkms.XXXXXX")
	touch "$tmp/stamp"
	mods=$tmp/root/lib/modules/$rel
	mkdir -p "$tmp/dkms" "$mods"
	cp -a "$kc/modules/." "$mods/"
	make -s -C "$repo" dkms-install DESTDIR="$tmp" PREFIX=/usr || { rm -rf "$tmp"; return 1; }
	ver=$(basename "$tmp"/usr/src/virtio_fs_sync-*)
	ver=${ver#virtio_fs_sync-}
	echo "# the package: the module's sources, version $ver"
	(cd "$tmp/usr/src/virtio_fs_sync-$ver" && find . -type f | sort | sed 's|^\./||' | tr '\n' ' ')
	echo
	if find "$tmp/usr/src/virtio_fs_sync-$ver" -type f | grep -Ev '/(Kbuild|Kconfig|Makefile|dkms\.conf|VERSION|[a-z_]+\.[ch]|scripts/fuse-header\.sh)$'; then
		echo "the package holds more than the module's sources"
		rc=1
	fi
	case $ver in
	[0-9]*.[0-9]*.[0-9]*-g[0-9a-f]*) ;;
	*) echo "version $ver is not RELEASE.N-gHASH"; rc=1 ;;
	esac
	a=(--sourcetree "$tmp/usr/src" --dkmstree "$tmp/dkms" --installtree "$tmp/root/lib/modules"
		-m virtio_fs_sync -v "$ver")
	echo "# dkms add, build, install"
	# A kernel newer than the host builds in its build root (the Makefile's
	# BUILD_ROOT_<series>), as make KVER= does; on its own Debian release
	# the compiler would be the system's.
	# The package has no build root of its own: the test adds the
	# project's to its scratch copy.
	local broot src=$tmp/usr/src/virtio_fs_sync-$ver
	broot=$(make -s -C "$repo" KVER="$k" print-build-root)
	if [ -n "$broot" ]; then
		install -D -m 0644 "$repo/scripts/build-root.sh" "$src/scripts/build-root.sh"
		install -D -m 0644 "$repo/scripts/apt-private.sh" "$src/scripts/apt-private.sh"
		sed -i "s|^MAKE\[0\]=\"make |MAKE[0]=\"make BUILD_ROOT=$broot |" "$src/dkms.conf"
	fi
	dkms add "${a[@]}" &&
		LINUX_SOURCE_DIR=$kc/srcpkg/usr/src dkms build "${a[@]}" -k "$rel" --kernelsourcedir "$kc/kdir" &&
		dkms install "${a[@]}" -k "$rel" --kernelsourcedir "$kc/kdir" --no-depmod || rc=1
	if [ $rc != 0 ]; then
		tail -n 25 "$tmp/dkms/virtio_fs_sync/$ver/build/make.log" 2>/dev/null
		rm -rf "$tmp"
		return 1
	fi
	dkms status "${a[@]}" -k "$rel" | tee "$tmp/status"
	grep -q ': installed' "$tmp/status" || { echo "dkms status does not say installed"; rc=1; }

	echo "# depmod of the scratch tree"
	depmod -b "$tmp/root" -e -E "$kc/kdir/Module.symvers" "$rel" 2>&1 | tee "$tmp/depmod.log"
	[ -s "$tmp/depmod.log" ] && { echo "depmod complained"; rc=1; }
	inst=$(modinfo -b "$tmp/root" -k "$rel" -F filename virtio_fs_sync)
	echo "installed: $inst"
	case $inst in
	"$mods"/updates/*) ;;
	*) echo "the module is not installed under $mods/updates"; rc=1 ;;
	esac
	modinfo -F vermagic "$inst" | tee "$tmp/vermagic"
	grep -q "^$rel " "$tmp/vermagic" || { echo "vermagic is not $rel"; rc=1; }

	# Without it, on 6.1 a device's modalias loads in-tree virtiofs and
	# this driver both (the first to load binds), and on 6.12 and 7.3 a
	# mount of type virtiofs finds only the built-in one.
	echo "# with the documented /etc/modprobe.d file, a device and a mount load this driver alone"
	mkdir "$tmp/modprobe.d"
	cp "$repo/scripts/modprobe.d/virtio_fs_sync.conf" "$tmp/modprobe.d/"
	local alias loads
	for alias in virtio:d0000001Av00001AF4 fs-virtiofs; do
		loads=$(modprobe -d "$tmp/root" -S "$rel" -C "$tmp/modprobe.d" --show-depends "$alias" |
			awk '$1 == "builtin" || $2 ~ /\/(virtiofs|virtio_fs_sync)\.ko$/ { print $1, $2 }')
		echo "$alias: $loads"
		[ "$loads" = "insmod $inst" ] || { echo "$alias does not load $inst alone"; rc=1; }
	done

	echo "# the host's module trees are untouched"
	find /lib/modules /boot /var/lib/dkms -newer "$tmp/stamp" 2>/dev/null | tee "$tmp/touched"
	[ -s "$tmp/touched" ] && { echo "dkms changed the host"; rc=1; }

	if [ $rc = 0 ]; then
		echo "# modprobe -d in a QEMU $k guest"
		out=$("$repo/tests/vm/run" --substrate qemu --kernel "$k" --driver intree -- \
			sh -c "modprobe -v -d $tmp/root virtio_fs_sync && cat /sys/module/virtio_fs_sync/srcversion && grep -w virtiofs_sync /proc/filesystems && rmmod virtio_fs_sync") ||
			rc=1
		echo "$out"
		echo "$out" | awk -v p="$inst" '$1 == "insmod" && $2 == p { f = 1 } END { exit !f }' ||
			{ echo "modprobe did not load $inst"; rc=1; }
		echo "$out" | grep -qxF "$(modinfo -F srcversion "$inst")" ||
			{ echo "the loaded module's srcversion is not the installed one's"; rc=1; }
	fi
	rm -rf "$tmp"
	return $rc
}
