# SPDX-License-Identifier: GPL-2.0
#
# Sourced (POSIX sh) by tests/vm/check-path and the guest scenarios that
# read queue counters: virtio_fs_sync's /sys/fs/virtio_fs_sync/<tag>/stats,
# tests/vm/run's driver-stats and the device's --stats-file, all lines of
# NAME... KEY=N KEY=N ...

# counter_sum FILE LINE-REGEX KEY: the sum of KEY=N over the lines of FILE
# that match LINE-REGEX (0 if FILE does not exist).
counter_sum() {
	[ -f "$1" ] || { echo 0; return; }
	awk -v f="$2" -v k="$3" '$0 ~ f { for (i = 1; i <= NF; i++) { split($i, kv, "=")
		if (kv[1] == k) s += kv[2] } } END { print s + 0 }' "$1"
}

# counter_max FILE LINE-REGEX KEY: the largest KEY=N over the lines of FILE
# that match LINE-REGEX (0 if none).
counter_max() {
	[ -f "$1" ] || { echo 0; return; }
	awk -v f="$2" -v k="$3" '$0 ~ f { for (i = 1; i <= NF; i++) { split($i, kv, "=")
		if (kv[1] == k && kv[2] + 0 > m) m = kv[2] + 0 } } END { print m + 0 }' "$1"
}
