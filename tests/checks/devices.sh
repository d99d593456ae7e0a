# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/devices.sh: several devices or drivers in one guest. Sourced
# by tests/check.sh, whose rows call these functions; they use its variables
# ($repo, $logs, $VFS_CACHE and the like) and counter_sum
# (tests/vm/counters.sh).

# tests/vm/scenarios/two-devices writes TAG.N holding `yes "TAG N" | head -c
# 65536`. shares_files DIR TAG [N]: every file in DIR is TAG.<number> with
# that content (with N: exactly TAG.0 .. TAG.N-1); prints how many.
shares_files() {
	local dir=$1 tag=$2 want=${3:-} f n k=0
	for f in "$dir"/* "$dir"/.[!.]*; do
		[ -e "$f" ] || continue
		n=${f##*/}
		case $n in
		"$tag".[0-9]*) n=${n#"$tag".} ;;
		*) echo "$dir: $n is not a file of $tag"; return 1 ;;
		esac
		case $n in *[!0-9]*) echo "$dir: ${f##*/} is not a file of $tag"; return 1 ;; esac
		if [ -n "$want" ] && [ "$n" -ge "$want" ]; then
			echo "$dir: ${f##*/} should not be there"
			return 1
		fi
		yes "$tag $n" | head -c 65536 | cmp -s - "$f" || { echo "$dir: ${f##*/} has the wrong content"; return 1; }
		k=$((k + 1))
	done
	[ -z "$want" ] || [ $k = "$want" ] || { echo "$dir: $k files, not $want"; return 1; }
	echo "$dir: $k files of $tag, contents verified"
}

# names_of DIR TAG: every file in DIR is one of TAG's (its last may be cut
# short: its device went away).
names_of() {
	local f
	for f in "$1"/*; do
		[ -e "$f" ] || continue
		case ${f##*/} in
		"$2".[0-9]*) ;;
		*) echo "FAIL: $1: ${f##*/} is not a file of $2"; return 1 ;;
		esac
	done
}

# counters_agree RESULTS TAG [SUFFIX]: TAG's driver counters (driver-stats
# SUFFIX, lines of TAG) and its device's (dev-stats SUFFIX) count the same
# requests per kind of queue, and there were some.
counters_agree() {
	local res=$1 tag=$2 sfx=${3:-} q d v rc=0 total=0
	for q in hiprio request sync; do
		d=$(counter_sum "$res/driver-stats$sfx" "^$tag $q( |\\.)" submitted)
		v=$(counter_sum "$res/dev-stats$sfx" "type=$q " requests)
		echo "$tag $q: driver submitted=$d, device requests=$v"
		[ "$d" = "$v" ] || { echo "FAIL: $tag's $q queues: the driver sent $d, the device saw $v"; rc=1; }
		total=$((total + d))
	done
	[ $total -gt 0 ] || { echo "FAIL: no requests on $tag"; rc=1; }
	return $rc
}

# Two shares at once: share as RUNNER-ARGS say, share1 from a device that
# does not offer sync queues, attached with --no-mount (the scenario mounts
# and empties it). Each share's counters tell their own story: share's
# path is MODE (check-path), share1's all interrupt-driven; the driver's
# counters of each agree with its own device's. In QEMU driver-stats also
# holds the host tree's (tag hostroot).
# two_devices NAME MODE SYNC FILES RUNNER-ARGS...
two_devices() {
	local name=$1 mode=$2 sync=$3 n=$4 a b res rc=0
	shift 4
	res=$logs/$name.results
	a=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	b=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	yes stale | head -c 1000 >"$b/stale"
	"$repo/tests/vm/run" --results "$res" "$@" --share "$a" --share "$b" --dev-opts --sync-queues=0 \
		--no-mount -- "$repo/tests/vm/scenarios/two-devices" io "$sync" 0 "$n" self-mount || rc=1
	echo "# host-side files"
	shares_files "$a" share $((n - n / 4)) || rc=1
	shares_files "$b" share1 $((n - n / 4)) || rc=1
	echo "# each share's counters"
	[ -s "$res/driver-stats.share1" ] || { echo "FAIL: no driver-stats.share1"; rc=1; }
	! grep -v '^share1 ' "$res/driver-stats.share1" || { echo "FAIL: other tags in driver-stats.share1"; rc=1; }
	! grep '^share1 ' "$res/driver-stats" || { echo "FAIL: share1's counters in driver-stats"; rc=1; }
	"$repo/tests/vm/check-path" "$mode" "$res" || rc=1
	"$repo/tests/vm/check-path" async "$res" share1 || rc=1
	! grep ' sync\.' "$res/driver-stats.share1" || { echo "FAIL: share1 has sync queues"; rc=1; }
	! grep 'type=sync' "$res/dev-stats.share1" || { echo "FAIL: share1's device runs sync queues"; rc=1; }
	counters_agree "$res" share || rc=1
	counters_agree "$res" share1 .share1 || rc=1
	rm -rf "$a" "$b"
	return $rc
}

# Each share its own driver: share by ours with sync queues, share1 by
# in-tree virtiofs (both bind to virtiofs at boot; guest-init hands ours its
# share through sysfs, with a fresh probe of UML's transport).
two_drivers() {
	local res=$logs/uml:two-drivers.results a b rc=0
	a=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	b=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --results "$res" --share "$a" --driver ours --share "$b" --driver intree -- \
		"$repo/tests/vm/scenarios/two-devices" io 1 intree 8 || rc=1
	echo "# host-side files"
	shares_files "$a" share 6 || rc=1
	shares_files "$b" share1 6 || rc=1
	echo "# ours drove share only"
	[ -e "$res/driver-stats.share1" ] && { echo "FAIL: driver-stats.share1 (in-tree virtiofs has none)"; rc=1; }
	! grep -v '^share ' "$res/driver-stats" || { echo "FAIL: other tags in driver-stats"; rc=1; }
	"$repo/tests/vm/check-path" sync "$res" || rc=1
	counters_agree "$res" share || rc=1
	[ "$(counter_sum "$res/dev-stats.share1" . requests)" -gt 0 ] || { echo "FAIL: share1's device saw nothing"; rc=1; }
	rm -rf "$a" "$b"
	return $rc
}

# two_devices_unbind NAME VICTIM SURVIVOR RUNNER-ARGS...: share (sync
# queues) and share1 (none); VICTIM's device is unbound under a writer
# while SURVIVOR's writer goes on; SURVIVOR's files verified on the host.
two_devices_unbind() {
	local name=$1 victim=$2 survivor=$3 a b res rc=0
	shift 3
	res=$logs/$name.results
	a=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	b=$(mktemp -d "${TMPDIR:-/tmp}/vfs-check.XXXXXX")
	"$repo/tests/vm/run" --results "$res" "$@" --share "$a" --share "$b" --dev-opts --sync-queues=0 -- \
		"$repo/tests/vm/scenarios/two-devices" unbind "$victim" "$survivor" || rc=1
	echo "# host-side files of $survivor"
	if [ "$survivor" = share ]; then
		shares_files "$a" share || rc=1
		names_of "$b" share1 || rc=1
		[ -s "$res/driver-stats" ] || { echo "FAIL: no counters of the survivor"; rc=1; }
		[ -e "$res/driver-stats.share1" ] && { echo "FAIL: counters of the unbound share1"; rc=1; }
	else
		shares_files "$b" share1 || rc=1
		names_of "$a" share || rc=1
		[ -s "$res/driver-stats.share1" ] || { echo "FAIL: no counters of the survivor"; rc=1; }
		[ -e "$res/driver-stats" ] && { echo "FAIL: counters of the unbound share"; rc=1; }
	fi
	rm -rf "$a" "$b"
	return $rc
}
