#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# interleave.sh: two shares mounted in one guest, measured in short blocks
# in ABBA order, for ratios that the boot's own speed cannot bias. Block k
# runs guest-bench.sh on A then B when k is odd, on B then A when it is
# even, so every two blocks form one ABBA round; whatever drifts during
# the boot (a slow host minute, a warming cache) falls on both sides alike.
#
#   sh bench/interleave.sh --a DIR --b DIR [options]
#
# Options:
#   --a DIR, --b DIR    the two shares' directories (mount points)
#   --blocks N          blocks (default 24: 12 ABBA rounds)
#   --workloads LIST    guest-bench.sh workloads of every block (default
#                       floor,fio,unlink,smallfile)
#   --size NAME         guest-bench.sh size (default block: bench/sizes)
#   --vfsbench PATH     guest-bench.sh's helper
#   --host-stat FILE    a file whose "cpu" line is the host's /proc/stat's,
#                       kept current by the host (make bench rewrites one
#                       in share A ten times a second); without it steal is not
#                       measured. Its "devcpu" line, where the host writes
#                       one, gives each phase its side's device CPU
#                       (guest-bench.sh --dev-cpu)
#   --steal-max PCT     a block during which the host stole more than PCT
#                       per cent of its CPU time is run again (default 5)
#   --reruns N          at most N reruns of one block (default 2); a block
#                       still above the limit then stands, marked
#
# Output: guest-bench.sh's JSON lines, each labelled
# "block=K side=a|b pos=1|2 attempt=N", and after each attempt of a block
# one line {"phase":"block","block":K,"attempt":N,"order":"ab"|"ba",
# "steal_pct":P|null,"over":true|false,"rerun":true|false} (over: more
# steal than --steal-max; rerun: this attempt is run again).
set -u
{

here=$(cd "$(dirname "$0")" && pwd)
a= b= blocks=24 workloads=floor,fio,unlink,smallfile size=block vfsbench=
host_stat= steal_max=5 reruns=2

while [ $# -gt 0 ]; do
	case $1 in
	--a) a=$2; shift 2 ;;
	--b) b=$2; shift 2 ;;
	--blocks) blocks=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--vfsbench) vfsbench=$2; shift 2 ;;
	--host-stat) host_stat=$2; shift 2 ;;
	--steal-max) steal_max=$2; shift 2 ;;
	--reruns) reruns=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
	*) echo "interleave: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -d "$a" ] && [ -d "$b" ] || { echo "interleave: --a and --b must be directories" >&2; exit 2; }
case $blocks in '' | *[!0-9]*) echo "interleave: --blocks N" >&2; exit 2 ;; esac

# steal_ticks: "STEAL TOTAL" of the host's CPU line, or nothing.
steal_ticks() {
	[ -n "$host_stat" ] || return 0
	# O_DIRECT: the file changes under the guest (make bench rewrites it
	# in place on the host), and its page cache would not
	{ dd if="$host_stat" iflag=direct bs=4096 count=1 2>/dev/null || cat "$host_stat"; } |
		awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t; exit }'
}

# side NAME DIR POS K N: one guest-bench.sh run, its lines labelled.
side() {
	sh "$here/guest-bench.sh" --dir "$2" --size "$size" --workloads "$workloads" \
		${vfsbench:+--vfsbench "$vfsbench"} ${host_stat:+--dev-cpu "$host_stat:$1"} \
		--label "block=$4 side=$1 pos=$3 attempt=$5"
}

rc=0
k=1
while [ "$k" -le "$blocks" ]; do
	if [ $((k % 2)) = 1 ]; then order=ab; else order=ba; fi
	n=1
	while :; do
		s0=$(steal_ticks)
		if [ $order = ab ]; then
			side a "$a" 1 "$k" "$n" || rc=1
			side b "$b" 2 "$k" "$n" || rc=1
		else
			side b "$b" 1 "$k" "$n" || rc=1
			side a "$a" 2 "$k" "$n" || rc=1
		fi
		s1=$(steal_ticks)
		pct=null
		if [ -n "$s0" ] && [ -n "$s1" ]; then
			pct=$(echo "$s0 $s1" | awk '{ d = $4 - $2; printf "%.2f", (d > 0 ? 100 * ($3 - $1) / d : 0) }')
		fi
		over=false again=false
		if [ "$pct" != null ] && awk -v p="$pct" -v m="$steal_max" 'BEGIN { exit !(p > m) }'; then
			over=true
			[ "$n" -le "$reruns" ] && again=true
		fi
		printf '{"phase":"block","block":%s,"attempt":%s,"order":"%s","steal_pct":%s,"over":%s,"rerun":%s}\n' \
			"$k" "$n" "$order" "$pct" "$over" "$again"
		[ $again = true ] || break
		echo "interleave: block $k: the host stole $pct % (over $steal_max %): again" >&2
		n=$((n + 1))
	done
	k=$((k + 1))
done
exit $rc
}
