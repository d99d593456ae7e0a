#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/breakdown.sh: where one request's time goes on UML 6.12, by host-side
# sampling of the UML process tree and the reference device.
#
#   bench/breakdown.sh [--configs 'ours-sync ours-async intree']
#                      [--ops 'stat unlink create readdirect readcache']
#                      [--n N] [--flavor debug|bench] [--period NS] [--out DIR]
#                      [--cache DIR] [--opmix]
#                      [--build FILES [--jobs J] [--repeats R]]
#                      [--pin-device CPUS] [--pin-guest CPUS]
#
# One boot per configuration and operation (tests/vm/run, device pinned to
# CPU 0, guest to CPU 1: --pin-device, --pin-guest, taskset lists). In the
# guest, bench/breakdown-loop.c runs the
# operation in four windows of N calls: warm-up, plain (its wall time is the
# us/op without any tool), perf (perf record -e cpu-clock with a fixed
# period on the UML tree, frame-pointer call chains where the kernel has
# them (debug), DWARF ones otherwise, and on the device, DWARF call chains;
# started disabled and enabled through its control FIFO) and trace (perf trace -s on the UML kernel process, the
# guest process and the device: host syscalls per operation). The host
# starts and stops each tool around its window through files in the case
# directory, so a window holds exactly N operations.
#
# ours-sync: virtio_fs_sync, sync queues; ours-async: virtio_fs_sync
# --sync off; intree: in-tree virtiofs; all on the reference device with
# its defaults, stat with --cache=never (the floor). Paths in the guest are
# relative to the share (no hostfs lookup of / in the loop).
#
# Results: DIR/CONFIG-OP/ (window files, perf data and scripts, trace
# summaries, breakdown.json, the run's files) and DIR/breakdown.md.
# --cache DIR: the VFS_CACHE holding the UML build (default the shared one).
# --opmix: instead, one short boot per operation (ours-sync and ours-async,
# N/2 calls, no tools) with the device's --trace-file: DIR/opmix.md gives
# the FUSE requests of one operation by queue and opcode.
# --build FILES: instead, the build workload: the generated project of
# bench/gen-build.py (FILES C files, seed 1), one boot per configuration
# (default 'tmpfs intree ours-sync ours-async'; tmpfs: --driver none) and
# round (R, default 1, configurations interleaved), two windows in each: a
# fresh untar into the share (not timed), then one `make -jJ` (default 1):
# window 1 without tools (its wall time; the device's --trace-file gives
# its FUSE requests), window 2 under perf. perf record (cpu-clock, --period,
# default 1 ms here, DWARF call chains) runs tests/vm/run itself, so it
# follows every process of the boot (each process the build execs is a new
# host process in UML); it is enabled only around window 2's make.
# DIR/build-CONFIG-R/ holds the case (breakdown.json; buildmix.json: the
# requests by queue and opcode with the device's time, the driver's
# counters around make), DIR/build.md the tables (breakdown.py buildrender).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
configs='ours-sync ours-async intree'
ops='stat unlink create readdirect readcache'
n=2000 flavor=debug period='' out='' cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
pin_device=0 pin_guest=1 do_opmix=0 build_files=0 jobs=1 repeats=1 configs_set=0
while [ $# -gt 0 ]; do
	case $1 in
	--configs) configs=$2; configs_set=1; shift 2 ;;
	--build) build_files=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--repeats) repeats=$2; shift 2 ;;
	--pin-device) pin_device=$2; shift 2 ;;
	--pin-guest) pin_guest=$2; shift 2 ;;
	--ops) ops=$2; shift 2 ;;
	--n) n=$2; shift 2 ;;
	--flavor) flavor=$2; shift 2 ;;
	--period) period=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	--opmix) do_opmix=1; shift ;;
	-h | --help) sed -n '4,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
	*) echo "breakdown.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
# The build samples a whole make with DWARF chains: a longer period.
[ -n "$period" ] || { [ "$build_files" != 0 ] && period=1000000 || period=50000; }
out=${out:-$repo/build/breakdown/$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export VFS_CACHE=$cache
log() { echo "breakdown: $*" >&2; }

command -v perf >/dev/null || { log "perf missing (apt-get install linux-perf)"; exit 1; }
bin=$out/breakdown-loop
gcc -O2 -Wall -o "$bin" "$repo/bench/breakdown-loop.c" || exit 1
make -s -C "$repo/vhost-user-fs" >&2 || exit 1
linux=$("$repo/tests/setup/build-uml.sh" "$flavor" 6.12) || { log "no UML $flavor kernel"; exit 1; }
build=$(dirname "$linux")
# Frame pointers only in the debug flavour: DWARF call chains otherwise,
# sampled less often (each sample copies the stack).
if grep -qx CONFIG_FRAME_POINTER=y "$build/.config"; then
	uml_cg=fp uml_period=$period
else
	uml_cg=dwarf,16384 uml_period=$((period * 4))
fi

{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "command=bench/breakdown.sh --configs '$configs' --ops '$ops' --n $n --flavor $flavor --period $period"
	echo "uml_kernel=$linux (flavor $flavor, key $(cat "$build/.key"))"
	echo "driver_version=$(git -C "$repo" describe --always --dirty)"
	echo "host_kernel=$(uname -r) cpus=$(nproc) load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "perf=$(perf --version)"
	echo "pinning: device taskset -c $pin_device, guest taskset -c $pin_guest"
	echo "sampling: cpu-clock; UML period ${uml_period} ns --call-graph $uml_cg; device period ${period} ns --call-graph dwarf,8192"
} >"$out/env"

# desc PID: PID and its descendants.
desc() {
	local c
	echo "$1"
	# shellcheck disable=SC2013 # pids, one word each
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do desc "$c"; done
}

wait_file() {	# FILE VM_PID
	local i
	for ((i = 0; i < 6000; i++)); do
		[ -f "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || { [ -f "$1" ] && return 0; return 1; }
		sleep 0.1
	done
	return 1
}

# perf_ctl uml|dev enable|disable: a command to a perf record started by
# perf_start, and wait for its ack.
perf_ctl() {
	local a
	if [ "$1" = uml ]; then
		echo "$2" >&5
		read -r -t 60 a <&6
	else
		echo "$2" >&7
		read -r -t 60 a <&8
	fi
	[ "$a" = ack ] || log "perf $1: no ack for $2"
}

# perf_start uml|dev PERIOD CALLGRAPH PIDS (needs $dir; appends to tools)
perf_start() {
	local k=$1
	rm -f "$dir/ctl.$k" "$dir/ack.$k"
	mkfifo "$dir/ctl.$k" "$dir/ack.$k"
	perf record -q -D -1 --control "fifo:$dir/ctl.$k,$dir/ack.$k" -e cpu-clock -c "$2" \
		--call-graph "$3" -p "$4" -o "$dir/perf-$k.data" 2>"$dir/perf-$k.err" &
	tools+=($!)
	if [ "$k" = uml ]; then
		exec 5>"$dir/ctl.$k" 6<"$dir/ack.$k"
	else
		exec 7>"$dir/ctl.$k" 8<"$dir/ack.$k"
	fi
	perf_ctl "$k" enable
}

run_case() {
	local cfg=$1 op=$2 dir=$out/$1-$2 args vpid w role p c pc uml_pid guest_pids dev_pids tools
	mkdir -p "$dir"
	args=(--substrate uml --flavor "$flavor" --pin-device "$pin_device" --pin-guest "$pin_guest"
		--results "$dir/run" --quiet --timeout 1200)
	case $cfg in
	ours-sync) args+=(--driver ours --sync on) ;;
	ours-async) args+=(--driver ours --sync off) ;;
	intree) args+=(--driver intree) ;;
	*) log "unknown configuration $cfg"; return 1 ;;
	esac
	# As make bench boots: guest memory prefaulted (bench/README.md)
	if [ "$op" = stat ]; then
		args+=(--dev-opts "--populate-memory --cache=never")
	else
		args+=(--dev-opts --populate-memory)
	fi
	{
		echo "config=$cfg op=$op n=$n period_ns=$period uml_period_ns=$uml_period"
		echo "w1=warm w2=plain w3=perf w4=trace"
	} >"$dir/meta"
	"$repo/tests/vm/run" "${args[@]}" -- "$bin" "$op" bd "$n" 4 "$dir" >"$dir/vmrun.log" 2>&1 &
	vpid=$!
	for w in 1 2 3 4; do
		wait_file "$dir/ready.$w" "$vpid" || { log "$cfg $op: no window $w"; cat "$dir/vmrun.log" >&2; return 1; }
		uml_pid='' guest_pids='' dev_pids=''
		for p in $(desc "$vpid"); do
			c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
			case $c in
			vhost-user-fs) dev_pids="$dev_pids,$p" ;;
			linux)
				# The UML kernel process is the `linux` whose parent is
				# not one (tests/vm/run, or timeout(1) in its bash days);
				# the guest's processes are its descendants. A process
				# that ends during the scan has no parent to read: skip.
				pc=$(cat "/proc/$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)/comm" 2>/dev/null)
				if [ -n "$pc" ] && [ "$pc" != linux ]; then
					uml_pid=$p
				else
					guest_pids="$guest_pids,$p"
				fi
				;;
			esac
		done
		dev_pids=${dev_pids#,} guest_pids=${guest_pids#,}
		if [ -z "$uml_pid" ] || [ -z "$dev_pids" ]; then
			log "$cfg $op: processes not found"
			return 1
		fi
		[ $w = 1 ] && echo "uml_pid=$uml_pid guest_pids=$guest_pids dev_pids=$dev_pids" >>"$dir/meta"
		role=$(tr ' ' '\n' <"$dir/meta" | sed -n "s/^w$w=//p")
		tools=()
		case $role in
		perf)
			# Started disabled; enabled through the control FIFO, whose
			# ack says the events are on (a loaded host starts perf late).
			perf_start uml "$uml_period" "$uml_cg" "$uml_pid${guest_pids:+,$guest_pids}"
			perf_start dev "$period" dwarf,8192 "$dev_pids"
			;;
		trace)
			perf trace -s -p "$uml_pid" -o "$dir/trace-uml.txt" 2>/dev/null &
			tools+=($!)
			[ -n "$guest_pids" ] && { perf trace -s -p "$guest_pids" -o "$dir/trace-guestproc.txt" 2>/dev/null & tools+=($!); }
			perf trace -s -p "$dev_pids" -o "$dir/trace-dev.txt" 2>/dev/null &
			tools+=($!)
			sleep 3
			;;
		esac
		touch "$dir/go.$w"
		wait_file "$dir/done.$w" "$vpid" || { log "$cfg $op: window $w did not end"; return 1; }
		if [ "$role" = perf ]; then
			perf_ctl uml disable
			perf_ctl dev disable
			exec 5>&- 6<&- 7>&- 8<&-
		fi
		for p in "${tools[@]}"; do kill -INT "$p" 2>/dev/null; done
		for p in "${tools[@]}"; do wait "$p"; done
		touch "$dir/ack.$w"
		log "$cfg $op: window $w ($role): $(cat "$dir/done.$w")"
	done
	wait "$vpid" || log "$cfg $op: tests/vm/run exited $? (see $dir/vmrun.log)"
	perf script -i "$dir/perf-uml.data" -F comm,pid,tid,ip,sym,dso >"$dir/perf-uml.txt" 2>/dev/null
	perf script -i "$dir/perf-dev.data" -F comm,pid,tid,ip,sym,dso >"$dir/perf-dev.txt" 2>/dev/null
	python3 "$repo/bench/breakdown.py" classify "$build" "$repo/vhost-user-fs" "$dir"
}

# run_build CONFIG ROUND TARBALL: one boot of the build workload.
run_build() {
	local cfg=$1 dir=$out/build-$1-$2 args pp p c pc uml_pid guest_pids dev_pids
	mkdir -p "$dir"
	args=(--substrate uml --flavor "$flavor" --pin-device "$pin_device" --pin-guest "$pin_guest"
		--results "$dir/run" --quiet --timeout 1800)
	case $cfg in
	tmpfs) args+=(--driver none) ;;
	ours-sync) args+=(--driver ours --sync on --dev-opts "--populate-memory --trace-file=$dir/devtrace") ;;
	ours-async) args+=(--driver ours --sync off --dev-opts "--populate-memory --trace-file=$dir/devtrace") ;;
	intree) args+=(--driver intree --dev-opts "--populate-memory --trace-file=$dir/devtrace") ;;
	*) log "unknown configuration $cfg"; return 1 ;;
	esac
	{
		echo "config=$cfg op=build round=$2 n=1 period_ns=$period uml_period_ns=$period"
		echo "w1=plain w2=perf files=$build_files jobs=$jobs"
	} >"$dir/meta"
	rm -f "$dir/ctl.all" "$dir/ack.all"
	mkfifo "$dir/ctl.all" "$dir/ack.all"
	perf record -q -D -1 --control "fifo:$dir/ctl.all,$dir/ack.all" -e cpu-clock -c "$period" \
		--call-graph dwarf,8192 -o "$dir/perf-all.data" -- \
		"$repo/tests/vm/run" "${args[@]}" -- sh "$out/guest-build.sh" "$3" gen "$jobs" "$dir" \
		>"$dir/vmrun.log" 2>"$dir/perf-all.err" &
	pp=$!
	exec 5>"$dir/ctl.all" 6<"$dir/ack.all"
	wait_file "$dir/ready.1" "$pp" || { log "build $cfg: no window"; cat "$dir/vmrun.log" >&2; exec 5>&- 6<&-; wait "$pp"; return 1; }
	uml_pid='' dev_pids=''
	for p in $(desc "$pp"); do
		c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
		case $c in
		vhost-user-fs) dev_pids="$dev_pids,$p" ;;
		linux)
			pc=$(cat "/proc/$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)/comm" 2>/dev/null)
			[ -n "$pc" ] && [ "$pc" != linux ] && uml_pid=$p ;;
		esac
	done
	echo "uml_pid=$uml_pid dev_pids=${dev_pids#,}" >>"$dir/meta"
	touch "$dir/go.1"
	wait_file "$dir/done.1" "$pp" || log "build $cfg: make 1 did not end"
	touch "$dir/ack.1"
	wait_file "$dir/ready.2" "$pp" || log "build $cfg: no window 2"
	perf_ctl uml enable
	touch "$dir/go.2"
	wait_file "$dir/done.2" "$pp" || log "build $cfg: make 2 did not end"
	perf_ctl uml disable
	exec 5>&- 6<&-
	touch "$dir/ack.2"
	wait "$pp" || log "build $cfg: tests/vm/run exited $? (see $dir/vmrun.log)"
	log "build $cfg round $2: plain $(cat "$dir/done.1" 2>/dev/null), perf $(cat "$dir/done.2" 2>/dev/null)"
	# The device's samples to perf-dev.txt, the rest of the boot (the UML
	# kernel process, the guest's processes: comm linux) to perf-uml.txt.
	perf script -i "$dir/perf-all.data" -F comm,pid,tid,ip,sym,dso 2>/dev/null |
		awk -v u="$dir/perf-uml.txt" -v d="$dir/perf-dev.txt" '
			/^[^ \t]/ { f = ""; if ($1 == "vhost-user-fs") f = d; else if ($1 == "linux") f = u }
			f != "" { print > f }'
	rm -f "$dir/perf-all.data"
	python3 "$repo/bench/breakdown.py" classify "$build" "$repo/vhost-user-fs" "$dir"
	python3 "$repo/bench/breakdown.py" buildmix "$dir"
}

if [ "$build_files" != 0 ]; then
	[ $configs_set = 1 ] || configs='tmpfs intree ours-sync ours-async'
	python3 "$repo/bench/gen-build.py" --files "$build_files" --seed 1 "$out/gen.tar.gz" || exit 1
	# The guest half: untar into the share, then the make window.
	cat >"$out/guest-build.sh" <<'EOS'
# guest-build.sh TARBALL MAKE_DIR JOBS CTL (bench/breakdown.sh --build):
# window 1 (plain) and window 2 (perf), each a fresh untar into the share
# (not timed) and one make (timed).
tag=$(awk '$2 == "'"$PWD"'" { print $1 }' /proc/mounts)
st=/sys/fs/virtio_fs_sync/$tag/stats
for w in 1 2; do
	mkdir -p "b$w" && tar -xzf "$1" -C "b$w" || exit 1
	sync
	cat "$st" >"$4/drvstats.before.$w" 2>/dev/null
	: >"$4/ready.$w"
	while [ ! -f "$4/go.$w" ]; do sleep 0.2; done
	t0=$(date +%s%N)
	make -C "b$w/$2" -j"$3" >"$4/make.$w.log" 2>&1
	rc=$?
	t1=$(date +%s%N)
	cat "$st" >"$4/drvstats.after.$w" 2>/dev/null
	echo "n=1 ns=$((t1 - t0)) rc=$rc" >"$4/done.$w"
	while [ ! -f "$4/ack.$w" ]; do sleep 0.2; done
	[ $rc = 0 ] || exit $rc
done
EOS
	{
		echo "build: gen-build.py --files $build_files --seed 1, make -j$jobs, rounds $repeats, perf cpu-clock period $period ns --call-graph dwarf,8192 on the whole boot (tests/vm/run under perf record), enabled around make"
	} >>"$out/env"
	for ((r = 1; r <= repeats; r++)); do
		for cfg in $configs; do
			log "build $cfg round $r (load $(cut -d' ' -f1-3 /proc/loadavg))"
			run_build "$cfg" "$r" "$out/gen.tar.gz" || log "build $cfg round $r failed"
		done
	done
	echo "load_at_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/env"
	python3 "$repo/bench/breakdown.py" buildrender "$out"
	log "done: $out/build.md"
	exit 0
fi

if [ $do_opmix = 1 ]; then
	for op in $ops; do
		for cfg in ours-sync ours-async; do
			d=$out/opmix-$cfg-$op
			mkdir -p "$d"
			touch "$d/go.1" "$d/ack.1"
			o="--populate-memory --trace-file=$d/devtrace"
			[ "$op" = stat ] && o="--cache=never $o"
			s=on
			[ $cfg = ours-async ] && s=off
			"$repo/tests/vm/run" --flavor "$flavor" --sync $s --pin-device "$pin_device" --pin-guest "$pin_guest" \
				--dev-opts "$o" --quiet --results "$d/run" -- "$bin" "$op" bd $((n / 2)) 1 "$d" >"$d/vmrun.log" 2>&1 ||
				log "opmix $cfg $op: tests/vm/run exited $?"
		done
	done
	python3 "$repo/bench/breakdown.py" opmix "$out"
	log "done: $out/opmix.md"
	exit 0
fi

for op in $ops; do
	for cfg in $configs; do
		log "case $cfg $op (load $(cut -d' ' -f1-3 /proc/loadavg))"
		run_case "$cfg" "$op" || log "case $cfg $op failed"
	done
done
echo "load_at_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/env"
python3 "$repo/bench/breakdown.py" render "$out"
log "done: $out/breakdown.md"
