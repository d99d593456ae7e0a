#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# uml-exec.sh [-s SHARE] -- COMMAND [ARGS...]
#
# Boots User-Mode Linux against a fresh vhost-user-fs, mounts the share at
# $MNT inside the guest and runs COMMAND there (with the host's / as the
# guest's root, so host binaries work), then prints its output and status,
# the device's log and counters. The guest's output comes back through a
# file, because UML exits 0 whatever happens inside.
#
# Environment: UML, DRIVER (intree|project, see smoke-uml.sh), DEVICE_ARGS,
# UML_ARGS, TIMEOUT (seconds, default 600), KEEP (keep the work directory).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
uml=${UML:-$cache/uml/debug/linux}
timeout=${TIMEOUT:-600}
share=
if [ "${1:-}" = -s ]; then
	share=$2
	shift 2
fi
[ "${1:-}" = -- ] && shift
[ $# -ge 1 ] || { echo "usage: uml-exec.sh [-s SHARE] -- COMMAND..." >&2; exit 2; }
uml_args=${UML_ARGS:-}
[ "${DRIVER:-intree}" = project ] && uml_args="initcall_blacklist=virtio_fs_init $uml_args"

make -s -C "$here" >/dev/null
work=$(mktemp -d /tmp/vufs-exec.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/mnt" "$work/uml"
[ -n "$share" ] || { share=$work/share; mkdir -p "$share"; }
printf '%q ' "$@" >"$work/cmd"

cat >"$work/init" <<INIT
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin MNT=$work/mnt
mount -t proc proc /proc
mount -t sysfs sys /sys
if mount -t virtiofs share \$MNT; then
	cd \$MNT
	sh -c "\$(cat $work/cmd)" >$work/out 2>&1
	echo "status \$?" >>$work/status
	cd /
	umount \$MNT || echo "umount failed" >>$work/status
else
	echo "mount failed" >>$work/status
fi
exec busybox poweroff -f
INIT
chmod +x "$work/init"

# shellcheck disable=SC2086
"$here/vhost-user-fs" --socket-path="$work/sock" --shared-dir="$share" \
	--stats-file="$work/stats" ${DEVICE_ARGS:-} 2>"$work/device.log" &
dpid=$!
for _ in $(seq 50); do [ -S "$work/sock" ] && break; sleep 0.1; done
# shellcheck disable=SC2086
timeout "$timeout" "$uml" mem=1G uml_dir="$work/uml" rootfstype=hostfs \
	rootflags=/ rw init="$work/init" virtio_uml.device="$work/sock:26" \
	$uml_args >"$work/console" 2>&1 </dev/null || echo "UML timed out or failed"
if ! wait "$dpid"; then
	echo "device exited with status $?"
fi
cat "$work/out" 2>/dev/null || true
echo "--- guest: $(cat "$work/status" 2>/dev/null || echo 'no status (guest died?)')"
echo "--- device log"; cat "$work/device.log"
echo "--- device stats"; cat "$work/stats" 2>/dev/null || true
grep -q "^status 0$" "$work/status" 2>/dev/null
