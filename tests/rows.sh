# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/rows.sh: make check's scheduler. tests/check.sh declares its rows
# with t; run_rows then runs them, VFS_CHECK_JOBS at a time, each as soon
# as the rows it needs (prereqs) have passed, and prints one line per row
# in the order they were declared, whatever order they finished in.
#
# t [--alone|--background] NAME CMD...
#   --alone       nothing else runs beside it (it counts events or overlaps
#                 that a neighbour's load would change)
#   --background  takes no job slot: a download that waits on the network,
#                 or a long build that nices itself and soaks up the CPU
#                 time the rows leave idle
# Each row runs in a subshell of its own, in the repository, its output in
# $logs/NAME.log; its devices, sockets and scratch directories are its own
# (tests/vm/run makes them with mktemp), so rows share nothing but the
# cache, whose writers lock it.

row_name=() row_cmd=() row_kind=()

t() {
	local kind=slot
	case $1 in
	--alone | --background) kind=${1#--}; shift ;;
	esac
	local name=$1
	shift
	# shellcheck disable=SC2053 # a glob on purpose
	[[ $name == $only || $name == setup:* || $name == build:* ]] || return 0
	row_name+=("$name")
	row_cmd+=("$(printf '%q ' "$@")")
	row_kind+=("$kind")
}

# prereqs NAME: the rows NAME needs, by the name's prefix. Setup rows run
# one after another (they share apt's lists); every guest needs the device
# (the DKMS rows boot one too) and the suite; a kernel's guests need its
# module or its UML build.
prereqs() {
	local k
	case $1 in
	setup:packages) ;;
	setup:kernel-6.12) echo setup:packages ;;
	setup:kernel-6.1) echo setup:kernel-6.12 ;;
	setup:kernel-7.3) echo setup:kernel-6.1 ;;
	setup:root-trixie) echo setup:kernel-7.3 ;;
	setup:kernel-6.12-rt) echo setup:root-trixie ;;
	setup:kernel-6.1-rt) echo setup:kernel-6.12-rt ;;
	build:device | build:suite | build:qemu | build:libkrunfw | harness:unit | bench:unit)
		echo setup:packages
		;;
	build:uml-debug | build:module-debug-6.12) echo setup:kernel-6.12 ;;
	build:module-7.3) echo setup:kernel-7.3 setup:root-trixie ;;
	build:module-*) echo "setup:kernel-${1#build:module-}" ;;
	build:uml-7.3-debug) echo setup:kernel-7.3 ;;
	static:*) echo setup:kernel-6.1-rt ;;
	device:*) echo build:device ;;
	intree:patch-7.3) echo setup:kernel-7.3 setup:root-trixie ;;
	intree:patch-*) echo "setup:kernel-${1#intree:patch-}" ;;
	dkms:7.3) echo setup:kernel-7.3 setup:root-trixie build:device ;;
	dkms:*) echo "setup:kernel-${1#dkms:}" build:device ;;
	uml-7.3:*) echo build:uml-7.3-debug build:device build:suite ;;
	uml:*) echo build:uml-debug build:device build:suite ;;
	krun-sync:*) echo build:libkrunfw build:qemu build:device build:suite ;;
	krun:stock-kernel:*) echo build:device build:suite ;;
	krun:*) echo build:libkrunfw build:device build:suite ;;
	qemu-sync-*)
		k=${1#qemu-sync-}
		echo build:qemu "build:module-${k%%:*}" build:device build:suite
		;;
	qemu-*)
		k=${1#qemu-}
		echo "build:module-${k%%:*}" build:device build:suite
		;;
	esac
}

# The default: a slot per core, and no more than the memory holds at 3 GiB
# a slot (a guest, its devices and a build beside it).
default_jobs() {
	local cores mem
	cores=$(nproc)
	mem=$(awk '/^MemTotal:/ { print int($2 / 1048576 / 3) }' /proc/meminfo)
	[ "$mem" -lt "$cores" ] && cores=$mem
	echo $((cores < 1 ? 1 : cores))
}

# row_line I: the row's line (with what the row wrote to NAME.note: a
# reason it ran in part), and the tail of its log if it failed.
row_line() {
	local i=$1 name=${row_name[$1]} s=${row_secs[$1]} rc=${row_rc[$1]}
	if [ "$rc" = 0 ] && [ -s "$logs/$name.note" ]; then
		echo "ok $name ($s s; $(cat "$logs/$name.note"))"
	elif [ "$rc" = 0 ]; then
		echo "ok $name ($s s)"
	elif [ -n "${row_why[$i]:-}" ]; then
		echo "not ok $name (not run: ${row_why[$i]})"
	else
		echo "not ok $name (exit $rc, $s s, log build/check/$name.log)"
		tail -n 30 "$logs/$name.log" | sed 's/^/    /'
	fi
}

# ready I: 0 when every row I needs has passed; 1 while one is pending or
# running; 2 when one failed or is not declared (why in $blocker).
ready() {
	local p j
	for p in ${row_needs[$1]}; do
		j=${row_index[$p]:-}
		[ -n "$j" ] || { blocker="$p is no row"; return 2; }
		case ${row_state[$j]} in
		ended) [ "${row_rc[$j]}" = 0 ] || { blocker="$p failed"; return 2; } ;;
		*) return 1 ;;
		esac
	done
	return 0
}

start_row() {
	local i=$1
	row_state[i]=running
	row_start[i]=$SECONDS
	# The row's index and status come back through the FIFO on fd 3 (one
	# short write, atomic): bash's wait -n can miss a job that ended while
	# the shell ran something else.
	(
		(cd "$repo" && eval "${row_cmd[$i]}") >"$logs/${row_name[$i]}.log" 2>&1 </dev/null 3>&-
		echo "$i $?" >&3
	) &
	running=$((running + 1))
	printf '%s\t%s\t%s\n' "$((SECONDS - t0))" start "${row_name[$i]}" >>"$logs/schedule.tsv"
}

finish_row() {
	local i=$1
	row_rc[i]=$2
	row_secs[i]=$((SECONDS - ${row_start[$i]}))
	row_state[i]=ended
	printf '%s\t%s\t%s\t%s\n' "$((SECONDS - t0))" end "${row_name[$i]}" "$2" >>"$logs/schedule.tsv"
}

# run_rows: runs every declared row; sets passed, failed, failures.
run_rows() {
	local n=${#row_name[@]} i rc slots=0 alone=0 started printed=0 blocker running=0 fifo
	declare -gA row_index=()
	row_state=() row_rc=() row_secs=() row_start=() row_why=() row_needs=()
	for ((i = 0; i < n; i++)); do
		row_index[${row_name[$i]}]=$i
		row_state[i]=pending
		row_needs[i]=$(prereqs "${row_name[$i]}")
	done
	: >"$logs/schedule.tsv"
	fifo=$logs/.rows.fifo
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	exec 3<>"$fifo"
	while :; do
		started=1
		while [ $started = 1 ]; do
			started=0
			for ((i = 0; i < n; i++)); do
				[ "${row_state[$i]}" = pending ] || continue
				ready "$i"
				case $? in
				2)
					row_why[i]=$blocker
					row_start[i]=$SECONDS
					finish_row "$i" 125
					started=1
					continue
					;;
				1) continue ;;
				esac
				case ${row_kind[$i]} in
				background) ;;
				alone) [ $slots = 0 ] || continue; alone=1 ;;
				*)
					if [ $alone = 1 ] || [ $slots -ge "$jobs" ]; then
						continue
					fi
					;;
				esac
				[ "${row_kind[$i]}" = background ] || slots=$((slots + 1))
				start_row "$i"
				started=1
				[ $alone = 1 ] && break
			done
		done
		while [ $printed -lt "$n" ] && [ "${row_state[$printed]}" = ended ]; do
			row_line $printed
			if [ "${row_rc[$printed]}" = 0 ]; then
				passed=$((passed + 1))
			else
				failed=$((failed + 1))
				failures+=("${row_name[$printed]}")
			fi
			printed=$((printed + 1))
		done
		[ $printed -lt "$n" ] || break
		if [ $running = 0 ]; then
			echo "# rows that cannot start: ${row_name[*]:$printed}"
			failed=$((failed + n - printed))
			exec 3>&-
			return 1
		fi
		read -r i rc <&3
		running=$((running - 1))
		finish_row "$i" "$rc"
		[ "${row_kind[$i]}" = background ] && continue
		slots=$((slots - 1))
		[ "${row_kind[$i]}" = alone ] && alone=0
	done
	exec 3>&-
	rm -f "$fifo"
}

# summary: the wall time, the rows' sum, the jobs and the ten slowest rows.
summary() {
	local i sum=0
	for ((i = 0; i < ${#row_name[@]}; i++)); do
		sum=$((sum + ${row_secs[$i]:-0}))
	done
	echo "# $((SECONDS - t0)) s wall, the rows $sum s in sum, $jobs jobs (VFS_CHECK_JOBS);" \
		"logs in ${logs#"$repo"/}"
	echo "# the ten slowest rows:"
	for ((i = 0; i < ${#row_name[@]}; i++)); do
		echo "${row_secs[$i]:-0} ${row_name[$i]}"
	done | sort -rn | head -n 10 | awk '{ printf "#   %5d s  %s\n", $1, $2 }'
}
