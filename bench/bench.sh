#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/bench.sh: the A/B benchmark report (`make bench`).
#
# Boots guests with tests/vm/run, one boot per configuration and repeat,
# runs bench/guest-bench.sh on the share in each, and writes
#   bench/results/<date>-<host>.json   every run's lines, counters, environment
#   bench/results/<date>-<host>.md     the report (tables, ratios, summary)
#   bench/results/<date>-<host>/*.svg  its bar charts (bench/report.py)
# Raw run directories (console, dmesg, ...) stay in build/bench/runs/.
#
# Environment:
#   BENCH_SIZE=quick|reduced|full  workload sizes (default full; see
#                                  guest-bench.sh); quick is a smoke run
#   BENCH_REPEATS=N                boots per configuration (default 3)
#   BENCH_CONFIGS="..."            UML configurations (default
#                                  "tmpfs intree ours-async ours-sync")
#   BENCH_FLOOR=0|1                the cache=never stat floor boots (default 1)
#   BENCH_QEMU_CONFIGS="..."       QEMU/TCG configurations (default
#                                  "q-intree q-ours q-intree-virtiofsd"; "" skips)
#   BENCH_QEMU_SIZE=...            their sizes (default quick)
#   BENCH_QEMU_WORKLOADS=...       their workloads (default floor,unlink,smallfile,fio)
#   BENCH_WORKLOADS=...            UML workloads (default all)
#   BENCH_SMP_CONFIGS="..."        SMP UML 7.3 configurations (default
#                                  "smp-intree smp-ours-sync
#                                  smp-ours-sync-inband"; "" skips):
#                                  in-tree virtiofs with a request queue per
#                                  vCPU, virtio_fs_sync with a sync queue per
#                                  vCPU, both over per-queue kick channels,
#                                  and the latter with in-band kicks
#                                  (device --no-kick-channel)
#   BENCH_SMP_CPUS=N               their vCPUs (default 2)
#   BENCH_SMP_WORKLOADS=...        their workloads (default fio: fio-1 and
#                                  fio-n, one job per vCPU)
#   BENCH_SMP_PIN_DEVICE=CPUS      taskset lists for their device and guest
#   BENCH_SMP_PIN_GUEST=CPUS       (default unpinned: N vCPUs need N CPUs)
#   BENCH_PIN_DEVICE=CPUS          taskset list for the device in UML boots
#                                  (default 0; 0 on a 1-CPU host)
#   BENCH_PIN_GUEST=CPUS           taskset list for UML (default 1: device and
#                                  guest on different CPUs; 0 on a 1-CPU host)
#   BENCH_PIN=CPUS                 both of the above (the old single list;
#                                  BENCH_PIN_DEVICE/GUEST win where given)
#   BENCH_QEMU_PIN_DEVICE=CPUS     the same for the QEMU boots (default
#   BENCH_QEMU_PIN_GUEST=CPUS      unpinned: 2 vCPUs on 2 host CPUs)
#   BENCH_PIN_PROBE="A B"          pinnings compared in short extra boots of
#                                  intree and ours-sync (floor phases,
#                                  quick sizes): CPUS for device and guest on
#                                  one list, DEV:GUEST for separate lists
#                                  (default "1 0-1 0:1"; "" skips;
#                                  BENCH_PROBE_WORKLOADS adds others)
# The pinning each boot really got (tests/vm/run reads it back from /proc)
# and the device's and the guest's CPU time are in the JSON and the report.
#   BENCH_FLAVOR=bench|debug       UML kernel (default bench; debug only to
#                                  validate the scripts, and the report says so)
#   BENCH_MEM=MB                   UML memory (default by size)
#   BENCH_MAKE_DIR=DIR             what the build workload makes (default
#                                  tools/objtool; tools/lib/subcmd is libsubcmd
#                                  alone, about a third of the compile jobs)
#   BENCH_PROBE_REPEATS=N          pinning probes in the first N repeats only
#   BENCH_TIMEOUT=S                per boot (default by size)
#   BENCH_OUT=DIR                  where the report goes (default bench/results)
#   BENCH_NAME=NAME                report name (default <date>-<host>)
#   BENCH_NOTES=FILE               Markdown inserted before the summary
#                                  (default bench/results/<name>.notes.md if
#                                  it exists); re-render an existing run with
#   bench/report.py render bench/results/N.json bench/results/N.md bench/results/N [NOTES]
set -uo pipefail
# The whole script is one compound command, parsed before it runs: editing
# the file during a run does not change the run.
{

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VFS_CACHE:-$HOME/.cache/virtio-fs-sync}
size=${BENCH_SIZE:-full}
repeats=${BENCH_REPEATS:-3}
configs=${BENCH_CONFIGS-tmpfs intree ours-async ours-sync}
floor=${BENCH_FLOOR:-1}
qemu_configs=${BENCH_QEMU_CONFIGS-q-intree q-ours q-intree-virtiofsd}
qemu_size=${BENCH_QEMU_SIZE:-quick}
smp_configs=${BENCH_SMP_CONFIGS-smp-intree smp-ours-sync smp-ours-sync-inband}
smp_cpus=${BENCH_SMP_CPUS:-2}
smp_workloads=${BENCH_SMP_WORKLOADS:-fio}
smp_pin_device=${BENCH_SMP_PIN_DEVICE:-}
smp_pin_guest=${BENCH_SMP_PIN_GUEST:-}
qemu_workloads=${BENCH_QEMU_WORKLOADS:-floor,unlink,smallfile,fio}
workloads=${BENCH_WORKLOADS:-floor,fio,unlink,smallfile,seq,build}
# The device and the guest on different CPUs where there are two.
guest_cpu=1 probe_default='1 0-1 0:1'
[ "$(nproc)" -ge 2 ] || guest_cpu=0 probe_default=''
pin_device=${BENCH_PIN_DEVICE:-${BENCH_PIN:-0}}
pin_guest=${BENCH_PIN_GUEST:-${BENCH_PIN:-$guest_cpu}}
pin_probe=${BENCH_PIN_PROBE-$probe_default}
qemu_pin_device=${BENCH_QEMU_PIN_DEVICE:-}
qemu_pin_guest=${BENCH_QEMU_PIN_GUEST:-}
make_dir=${BENCH_MAKE_DIR:-tools/objtool}
probe_repeats=${BENCH_PROBE_REPEATS:-$repeats}
flavor=${BENCH_FLAVOR:-bench}
outdir=${BENCH_OUT:-$repo/bench/results}
name=${BENCH_NAME:-$(date -u +%Y-%m-%d)-$(hostname -s)}

case $size in
quick) mem=${BENCH_MEM:-1024} timeout=${BENCH_TIMEOUT:-900} ;;
reduced) mem=${BENCH_MEM:-1536} timeout=${BENCH_TIMEOUT:-1800} ;;
full) mem=${BENCH_MEM:-3072} timeout=${BENCH_TIMEOUT:-3600} ;;
*) echo "bench: BENCH_SIZE=quick|reduced|full" >&2; exit 2 ;;
esac

log() { echo "bench: $*" >&2; }
t_start=$(date +%s)
hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# 1. Helpers: vfsbench and the build workload's tarball.
bdir=$repo/build/bench
mkdir -p "$bdir"
gcc -O2 -Wall -o "$bdir/vfsbench" "$repo/bench/vfsbench.c" -lm || { log "cannot build vfsbench"; exit 1; }

# The build workload: objtool and libsubcmd from Debian's linux-source-6.12
# (the tree the UML kernel is built from; about 400 files, 3.4 MB).
tarball=$bdir/objtool-src.tar.gz
if [ ! -s "$tarball" ]; then
	log "making the build workload's tarball (objtool from linux-source-6.12)"
	kdir=$("$repo/scripts/fetch-kernel.sh" 6.12) || { log "cannot fetch linux-source-6.12"; exit 1; }
	version=$(cat "$kdir/version")
	src=$cache/uml/src-$version
	tmpx=$(mktemp -d)
	if [ ! -d "$src/tools/objtool" ]; then
		tar -xJf "$kdir/source.tar.xz" -C "$tmpx" --strip-components=1 --wildcards \
			'*/tools/objtool/*' '*/tools/lib/*' '*/tools/include/*' '*/tools/arch/x86/*' \
			'*/tools/build/*' '*/tools/scripts/*' || { log "cannot unpack objtool"; exit 1; }
		src=$tmpx
	fi
	(cd "$src" && tar -czf "$tarball.tmp" tools/objtool tools/lib/subcmd tools/include \
		tools/arch/x86 tools/build tools/scripts tools/lib/string.c tools/lib/ctype.c \
		tools/lib/rbtree.c tools/lib/str_error_r.c tools/lib/zalloc.c tools/lib/bitmap.c \
		tools/lib/list_sort.c tools/lib/hweight.c tools/lib/find_bit.c) &&
		mv "$tarball.tmp" "$tarball" || { log "cannot make $tarball"; exit 1; }
	rm -rf "$tmpx"
fi

# 2. The UML kernel (built on first use; the runs would each wait for it).
linux=
if [ -n "${configs// /}" ]; then
	log "UML kernel ($flavor flavor; built on first use, about 10 minutes)"
	linux=$("$repo/tests/setup/build-uml.sh" "$flavor") || { log "cannot build the UML kernel"; exit 1; }
fi
linux73=
if [ -n "${smp_configs// /}" ]; then
	log "SMP UML 7.3 kernel ($flavor flavor; built on first use, about 15 minutes)"
	linux73=$("$repo/tests/setup/build-uml.sh" "$flavor" 7.3) || { log "cannot build the UML 7.3 kernel"; exit 1; }
fi

# 3. The run list: repeats outermost, so that drift spreads over configurations.
raw=$bdir/runs/$name-$(date -u +%H%M%S)
mkdir -p "$raw"
manifest=$raw/manifest.jsonl
: >"$manifest"

# uml_args CONFIG [PIN]: PIN is CPUS (device and guest) or DEV:GUEST.
uml_args() {
	local c=$1 pd=$pin_device pg=$pin_guest
	if [ -n "${2:-}" ]; then
		pd=${2%%:*}
		pg=${2#*:}
	fi
	case $c in
	smp-*)
		pd=$smp_pin_device pg=$smp_pin_guest
		# a sync queue and a request queue per vCPU (tests/vm/run's default)
		printf '%s\n' --kernel 7.3 --cpus "$smp_cpus"
		c=${c#smp-}
		;;
	esac
	printf '%s\n' --substrate uml --flavor "$flavor" --pin-device "$pd" --pin-guest "$pg" --mem "$mem"
	case $c in
	tmpfs) printf '%s\n' --driver none ;;
	intree) printf '%s\n' --driver intree ;;
	ours-async) printf '%s\n' --driver ours --sync off ;;
	ours-sync) printf '%s\n' --driver ours --sync on ;;
	ours-sync-inband) printf '%s\n' --driver ours --sync on --dev-opts --no-kick-channel ;;
	*) log "unknown configuration $c"; exit 2 ;;
	esac
}

qemu_args() {
	local c=$1
	printf '%s\n' --substrate qemu --kernel 6.12 --cpus 2
	[ -z "$qemu_pin_device" ] || printf '%s\n' --pin-device "$qemu_pin_device"
	[ -z "$qemu_pin_guest" ] || printf '%s\n' --pin-guest "$qemu_pin_guest"
	case $c in
	q-tmpfs) printf '%s\n' --driver none ;;
	q-intree) printf '%s\n' --driver intree ;;
	q-ours) printf '%s\n' --driver ours --sync on ;;
	q-intree-virtiofsd) printf '%s\n' --driver intree --device virtiofsd ;;
	q-ours-virtiofsd) printf '%s\n' --driver ours --device virtiofsd ;;
	*) log "unknown configuration $c"; exit 2 ;;
	esac
}

runs=()
for r in $(seq "$repeats"); do
	for c in $configs; do runs+=("main $c $r"); done
	if [ "$floor" = 1 ]; then
		for c in $configs; do [ "$c" = tmpfs ] || runs+=("floor $c $r"); done
	fi
	for c in $qemu_configs; do runs+=("qemu $c $r"); done
	for c in $smp_configs; do runs+=("smp $c $r"); done
	for c in intree ours-sync; do
		[ "$r" -le "$probe_repeats" ] || continue
		case " $configs " in *" $c "*) ;; *) continue ;; esac
		for p in $pin_probe; do runs+=("probe $c/pin$p $r"); done
	done
done
total=${#runs[@]}
log "$total boots: UML [$configs] x $repeats ($size, workloads $workloads)," \
	"floor boots $floor, QEMU [$qemu_configs] ($qemu_size)," \
	"SMP UML 7.3 [$smp_configs] x $smp_cpus vCPUs ($smp_workloads); raw runs in $raw"
log "pinning (taskset -c): UML device $pin_device, guest $pin_guest;" \
	"QEMU device ${qemu_pin_device:-unpinned}, guest ${qemu_pin_guest:-unpinned}; probes [$pin_probe]"

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

i=0
for run in "${runs[@]}"; do
	read -r kind c r <<<"$run"
	i=$((i + 1))
	id=$(printf '%03d-%s-%s-r%s' "$i" "$kind" "${c//\//-}" "$r")
	dir=$raw/$id
	args=()
	case $kind in
	main)
		mapfile -t args < <(uml_args "$c")
		gargs=(--size "$size" --workloads "$workloads")
		;;
	floor)
		mapfile -t args < <(uml_args "$c")
		args+=(--dev-opts --cache=never)
		gargs=(--size "$size" --workloads floor)
		;;
	probe)
		mapfile -t args < <(uml_args "${c%%/*}" "${c#*/pin}")
		gargs=(--size quick --workloads "${BENCH_PROBE_WORKLOADS:-floor}")
		;;
	qemu)
		mapfile -t args < <(qemu_args "$c")
		gargs=(--size "$qemu_size" --workloads "$qemu_workloads")
		;;
	smp)
		mapfile -t args < <(uml_args "$c")
		gargs=(--size "$size" --workloads "$smp_workloads")
		;;
	esac
	now=$(date +%s)
	el=$((now - t_start))
	eta=
	[ $i -gt 1 ] && eta=", ETA $(hms $((el * (total - i + 1) / (i - 1))))"
	log "[$i/$total] $kind $c repeat $r/$repeats (elapsed $(hms $el)$eta, load $(loadavg))"
	load0=$(loadavg)
	t0=$(date +%s.%N)
	"$repo/tests/vm/run" "${args[@]}" --timeout "$timeout" --results "$dir" --quiet -- \
		sh "$repo/bench/guest-bench.sh" --label "$c" "${gargs[@]}" \
		--vfsbench "$bdir/vfsbench" --tarball "$tarball" --make-dir "$make_dir" 2>"$raw/$id.stderr"
	rc=$?
	t1=$(date +%s.%N)
	[ $rc = 0 ] || { log "  exit status $rc:"; tail -n 5 "$raw/$id.stderr" >&2; }
	python3 -c 'import json, sys
a = sys.argv
print(json.dumps({"id": a[1], "kind": a[2], "config": a[3], "repeat": int(a[4]), "rc": int(a[5]),
    "host_s": round(float(a[7]) - float(a[6]), 3), "load_before": a[8], "load_after": a[9],
    "uml_build_key": a[10], "driver_version": a[11], "dir": a[12], "run_args": a[13:]}))' \
		"$id" "$kind" "$c" "$r" "$rc" "$t0" "$t1" "$load0" "$(loadavg)" \
		"$(if [ "$kind" = smp ]; then cat "$cache/uml/7.3/$flavor/.key"; else cat "$cache/uml/$flavor/.key"; fi 2>/dev/null)" \
		"$(git -C "$repo" describe --always --dirty 2>/dev/null)" "$dir" \
		"${args[@]}" -- "${gargs[@]}" >>"$manifest"
done

# 4. The environment, then the JSON and the report.
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host=$(hostname -s)"
	echo "host_kernel=$(uname -r)"
	echo "host_cpus=$(nproc)"
	echo "host_cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "driver_version=$(git -C "$repo" describe --always --dirty 2>/dev/null)"
	echo "driver_commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null)"
	echo "uml_kernel=$linux"
	echo "uml73_kernel=$linux73"
	echo "smp_cpus=$smp_cpus"
	echo "smp_pin_device=$smp_pin_device"
	echo "smp_pin_guest=$smp_pin_guest"
	echo "smp_workloads=$smp_workloads"
	echo "uml_flavor=$flavor"
	echo "uml_fragments=$(cat "$repo/tests/vm/uml-base.config" "$repo/tests/vm/uml-$flavor.config" | grep '^CONFIG' | tr '\n' ' ')"
	echo "fio_version=$(fio --version 2>/dev/null)"
	echo "gcc_version=$(gcc -dumpfullversion 2>/dev/null)"
	echo "qemu_version=$(qemu-system-x86_64 --version 2>/dev/null | head -n 1)"
	echo "pin_device=$pin_device"
	echo "pin_guest=$pin_guest"
	echo "qemu_pin_device=$qemu_pin_device"
	echo "qemu_pin_guest=$qemu_pin_guest"
	echo "pin_probe=$pin_probe"
	echo "size=$size"
	echo "qemu_size=$qemu_size"
	echo "repeats=$repeats"
	echo "mem_mb=$mem"
	echo "make_dir=$make_dir"
	echo "tarball=$(basename "$tarball") $(stat -c %s "$tarball") bytes, $(tar -tzf "$tarball" | grep -vc '/$') files"
	echo "device=vhost-user-fs/vhost-user-fs, options from tests/vm/run: --request-queues=<vCPUs> --sync-queues=<vCPUs> (UML: 1 and 1), device defaults otherwise (cache=auto, no writeback, 1 worker); floor boots add --cache=never"
	echo "command=make bench (BENCH_SIZE=$size BENCH_REPEATS=$repeats BENCH_PIN_DEVICE=$pin_device BENCH_PIN_GUEST=$pin_guest BENCH_QEMU_PIN_DEVICE=$qemu_pin_device BENCH_QEMU_PIN_GUEST=$qemu_pin_guest BENCH_FLAVOR=$flavor BENCH_CONFIGS='$configs' BENCH_QEMU_CONFIGS='$qemu_configs' BENCH_QEMU_SIZE=$qemu_size BENCH_SMP_CONFIGS='$smp_configs' BENCH_SMP_CPUS=$smp_cpus BENCH_SMP_WORKLOADS=$smp_workloads BENCH_SMP_PIN_DEVICE=$smp_pin_device BENCH_SMP_PIN_GUEST=$smp_pin_guest BENCH_WORKLOADS=$workloads BENCH_FLOOR=$floor BENCH_PIN_PROBE='$pin_probe' BENCH_PROBE_REPEATS=$probe_repeats BENCH_MAKE_DIR=$make_dir)"
	echo "wall_s=$(($(date +%s) - t_start))"
} >"$raw/env"

mkdir -p "$outdir"
python3 "$repo/bench/report.py" collect "$raw" >"$outdir/$name.json" ||
	{ log "collect failed"; exit 1; }
notes=${BENCH_NOTES:-$outdir/$name.notes.md}
python3 "$repo/bench/report.py" render "$outdir/$name.json" "$outdir/$name.md" "$outdir/$name" "$notes" ||
	{ log "render failed"; exit 1; }
log "done in $(hms $(($(date +%s) - t_start))): $outdir/$name.md"
exit
}
