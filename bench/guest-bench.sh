#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-bench.sh: run the virtio-fs benchmark workloads on one directory
# inside any running Linux guest, and print one JSON object per line on
# stdout (progress goes to stderr). `make bench` runs it through tests/vm/run;
# on another host (a libkrun guest, ...) run it by hand on the mounted share:
#
#   sh bench/guest-bench.sh --dir /mnt/share --size reduced
#
# Needs: a POSIX sh, fio (for the fio workload), tar and make and cc (build),
# and the vfsbench helper (bench/vfsbench.c; built from source with cc
# into a temporary directory when --vfsbench is not given and
# build/bench/vfsbench does not exist). Run as root so that caches can be
# dropped between phases (echo 3 > /proc/sys/vm/drop_caches); every line
# says whether that worked.
#
# Options:
#   --dir DIR           directory to work in (default: the current one)
#   --size quick|reduced|full   workload sizes (default full; bench/sizes)
#   --workloads LIST    comma-separated subset of
#                       floor,fio,unlink,smallfile,seq,build (default all)
#   --jobs N            "one per vCPU" count (default: online CPUs)
#   --vfsbench PATH     the helper binary
#   --tarball FILE      source tarball for the build workload
#                       (default build/bench/objtool-src.tar.gz; make bench
#                       passes the generated project of bench/gen-build.py)
#   --make-dir REL      directory in the tarball to run make -jN in
#                       (default tools/objtool; gen for the generated one)
#   --label TEXT        copied into every line as "label"
#   --no-drop           do not drop caches (lines say caches_dropped 0)
#   --dev-cpu FILE:SIDE a file the host keeps current whose line
#                       "devcpu hz=H a=T b=T" gives its devices' CPU ticks
#                       (bench/interleave.sh's --host-stat); every line then
#                       has "dev_cpu_ticks" (device SIDE's, a or b, during
#                       the phase) and "dev_hz"
#
# Every line has "phase", "rc", the guest CPU time of the phase from
# /proc/stat ("cpu_*_ticks", all CPUs, in "hz" ticks per second) and the
# fields of the measurement (see vfsbench.c; fio lines carry fio's JSON).
set -u
# The whole script is one compound command, parsed before it runs: editing
# the file during a run does not change the run.
{

here=$(cd "$(dirname "$0")" && pwd)
dir=. size=full workloads=floor,fio,unlink,smallfile,seq,build jobs= vfsbench=
tarball=$here/../build/bench/objtool-src.tar.gz make_dir=tools/objtool label=
no_drop=0 dev_cpu=

while [ $# -gt 0 ]; do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--vfsbench) vfsbench=$2; shift 2 ;;
	--tarball) tarball=$2; shift 2 ;;
	--make-dir) make_dir=$2; shift 2 ;;
	--label) label=$2; shift 2 ;;
	--no-drop) no_drop=1; shift ;;
	--dev-cpu) dev_cpu=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
	*) echo "guest-bench: unknown option $1" >&2; exit 2 ;;
	esac
done

# Sizes: the line of bench/sizes named by --size (full is the benchmark plan's size;
# the env line below prints the figures, every line the size's name).
sizes=$(awk -v s="$size" '$1 == s' "$here/sizes" 2>/dev/null)
[ -n "$sizes" ] || { echo "guest-bench: --size quick|reduced|full (see $here/sizes)" >&2; exit 2; }
read -r _ fio_mib fio_runtime unlink_n sf_n seq_mib stat_n null_n pair_n build_files build_seed _rest <<EOF
$sizes
EOF

if [ -z "$jobs" ]; then
	jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || grep -c '^processor' /proc/cpuinfo)
fi
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
cd "$dir" || exit 2
dir=$(pwd)
work=$dir/.guest-bench.$$
mkdir -p "$work" || exit 2
# Scratch files off the share where possible (a QEMU guest's /tmp is the
# host's, read-only). A UML guest's /tmp is the host's too, and every boot's
# guest-bench has the same pid: mktemp, so that boots at the same time (and
# the EXIT trap of the first to end) do not share one directory.
tmp=
for t in ${TMPDIR:-} /tmp /dev/shm /run "$work"; do
	tmp=$(mktemp -d "$t/guest-bench-tmp.XXXXXX" 2>/dev/null) && break
	tmp=
done
[ -n "$tmp" ] || exit 2
trap 'rm -rf "$work" "$tmp"' EXIT

if [ -z "$vfsbench" ]; then
	vfsbench=$here/../build/bench/vfsbench
	if [ ! -x "$vfsbench" ]; then
		vfsbench=$tmp/vfsbench
		cc -O2 -o "$vfsbench" "$here/vfsbench.c" -lm ||
			{ echo "guest-bench: cannot build vfsbench" >&2; exit 2; }
	fi
fi

progress() { echo "guest-bench: $(cut -d' ' -f1 /proc/uptime)s $*" >&2; }

drop_caches() {
	dropped=0
	[ $no_drop = 1 ] && return
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null && dropped=1 || dropped=0
}

cpu_now() {
	# user nice system idle iowait irq softirq steal, summed over CPUs
	read -r _cpu c_user c_nice c_sys c_idle c_iowait c_irq c_softirq c_steal _rest </proc/stat
}

# run_phase NAME EXTRA_JSON CMD...: drop caches, run CMD (a vfsbench call or
# a shell function printing one JSON object), print the merged line.
# dev_ticks: "HZ TICKS" of the --dev-cpu side's device, or nothing.
dev_ticks() {
	[ -n "$dev_cpu" ] || return 0
	# O_DIRECT: the host rewrites the file in place (bench.py's HostStat)
	{ dd if="${dev_cpu%:*}" iflag=direct bs=4096 count=1 2>/dev/null || cat "${dev_cpu%:*}"; } |
		awk -v side="${dev_cpu##*:}" '$1 == "devcpu" { h = ""; t = ""
			for (i = 2; i <= NF; i++) { split($i, kv, "=")
				if (kv[1] == "hz") h = kv[2]; else if (kv[1] == side) t = kv[2] }
			if (h != "" && t != "") print h, t; exit }'
}

run_phase() {
	name=$1 extra=$2
	shift 2
	progress "$name"
	drop_caches
	d0=$(dev_ticks)
	cpu_now
	u0=$c_user n0=$c_nice s0=$c_sys i0=$c_idle w0=$c_iowait q0=$c_irq sq0=$c_softirq
	"$@" >"$tmp/line" 2>"$tmp/err"
	rc=$?
	cpu_now
	d1=$(dev_ticks)
	line=$(grep '^{' "$tmp/line" | tail -n 1)
	[ -n "$line" ] || line="{\"error\":\"$(tail -n 3 "$tmp/err" "$tmp/line" 2>/dev/null | tr '\n"\\' "  /" | cut -c1-300)\"}"
	[ $rc = 0 ] || sed 's/^/guest-bench: /' "$tmp/err" | tail -n 5 >&2
	printf '{"phase":"%s","label":"%s","size":"%s","jobs":%s,"rc":%s,"caches_dropped":%s,"hz":%s,' \
		"$name" "$label" "$size" "$jobs" "$rc" "$dropped" "$hz"
	printf '"cpu_user_ticks":%s,"cpu_sys_ticks":%s,"cpu_idle_ticks":%s,"cpu_iowait_ticks":%s,"cpu_irq_ticks":%s,' \
		$((c_user + c_nice - u0 - n0)) $((c_sys - s0)) $((c_idle - i0)) $((c_iowait - w0)) \
		$((c_irq + c_softirq - q0 - sq0))
	if [ -n "$d0" ] && [ -n "$d1" ]; then
		printf '"dev_hz":%s,"dev_cpu_ticks":%s,' "${d1% *}" $((${d1#* } - ${d0#* }))
	fi
	[ -n "$extra" ] && printf '%s,' "$extra"
	printf '%s\n' "${line#\{}"
}

fio_json() {
	# fio's JSON report, on one line, wrapped with what was asked. The
	# files are laid out beforehand with 1 MiB writes (fio would lay them
	# out with 4 KiB direct writes, which takes minutes on a slow guest).
	njobs=$1
	mkdir -p "$work/fio"
	j=0
	while [ $j -lt "$njobs" ]; do
		"$vfsbench" seqwrite "$work/fio/t.$j.0" "$fio_mib" fsync >/dev/null || return 1
		j=$((j + 1))
	done
	drop_caches
	fio --name=t --directory="$work/fio" --rw=randrw --bs=4k --size="${fio_mib}M" \
		--numjobs="$njobs" --time_based --runtime="$fio_runtime" --group_reporting \
		--ioengine=pvsync --iodepth=1 --direct=1 --output-format=json \
		--output="$tmp/fio.json" >&2
	r=$?
	rm -rf "$work/fio"
	[ $r = 0 ] || return $r
	printf '{"test":"fio","numjobs":%s,"file_mib":%s,"runtime_s":%s,"fio":' \
		"$njobs" "$fio_mib" "$fio_runtime"
	sed -n '/^{/,$p' "$tmp/fio.json" | tr -d '\n\t'
	printf '}\n'
}

build_untar() {
	rm -rf "$work/build"
	mkdir -p "$work/build"
	"$vfsbench" run untar -- tar -xzf "$tarball" -C "$work/build"
}

build_make() {
	"$vfsbench" run "$1" -- make -C "$work/build/$make_dir" -j"$jobs" >>"$tmp/make.log" 2>&1 ||
		{ tail -n 20 "$tmp/make.log" >&2; return 1; }
	grep '^{' "$tmp/make.log" | tail -n 1
}

build_rm() {
	"$vfsbench" run rm -- rm -rf "$work/build"
}

# The share's tag (the mount's source) and the driver's sync-queue
# submissions of it so far (virtio_fs_sync only; empty elsewhere).
share_tag=$(awk -v d="$dir" '$2 == d { t = $1 } END { print t }' /proc/mounts)
kickfloor_n=2000
sync_submitted() {
	awk '$1 ~ /^sync\./ { for (i = 2; i <= NF; i++) if ($i ~ /^submitted=/) {
		sub(/^submitted=/, "", $i); s += $i } } END { print s + 0 }' \
		"/sys/fs/virtio_fs_sync/$share_tag/stats" 2>/dev/null
}

# with_sync_submitted CMD...: CMD's JSON line with "sync_submitted", the
# requests the driver put on sync queues meanwhile (where it has them).
with_sync_submitted() {
	if [ -z "$share_tag" ] || [ ! -r "/sys/fs/virtio_fs_sync/$share_tag/stats" ]; then
		"$@"
		return
	fi
	b=$(sync_submitted)
	"$@" >"$tmp/sub" || { r=$?; cat "$tmp/sub"; return $r; }
	a=$(sync_submitted)
	grep '^{' "$tmp/sub" | tail -n 1 | sed "s/^{/{\"sync_submitted\":$((a - b)),/"
}

# kick_floor N: N empty kicks of the sync queue, timed by the driver.
kick_floor() {
	f=/sys/kernel/debug/virtio_fs_sync/$share_tag/floor
	echo "$1" >"$f" || return 1
	printf '{"test":"kickfloor","tag":"%s",' "$share_tag"
	sed 's/ *$//; s/\([a-z_]*\)=\([0-9]*\)/"\1":\2/g; s/ /,/g; s/$/}/' "$f"
}

has() {
	case ",$workloads," in *",$1,"*) return 0 ;; esac
	return 1
}

progress "start: dir=$dir size=$size jobs=$jobs workloads=$workloads"
printf '{"phase":"env","label":"%s","size":"%s","jobs":%s,"kernel":"%s","hz":%s,"fs":"%s",' \
	"$label" "$size" "$jobs" "$(uname -r)" "$hz" "$(stat -f -c %T "$dir" 2>/dev/null)"
printf '"sizes":{"fio_mib":%s,"fio_runtime_s":%s,"unlink_n":%s,"smallfile_n":%s,"seq_mib":%s,' \
	"$fio_mib" "$fio_runtime" "$unlink_n" "$sf_n" "$seq_mib"
printf '"stat_n":%s,"nullsys_n":%s,"clockpair_n":%s,"build_files":%s,"build_seed":%s},"mount":"%s"}\n' \
	"$stat_n" "$null_n" "$pair_n" "$build_files" "$build_seed" \
	"$(awk -v d="$dir" '$2 == d { m = $1 " " $3 " " $4 } END { print m }' /proc/mounts | tr '"' "'")"

if has floor; then
	run_phase clockpair "" "$vfsbench" clockpair "$pair_n"
	run_phase nullsys "" "$vfsbench" nullsys "$null_n"
	run_phase statloop "" with_sync_submitted "$vfsbench" statloop "$work/statfile" "$stat_n"
	# The kick floor: only where the share's driver has it (virtio_fs_sync
	# on sync queues; Documentation/virtio-fs-sync.rst, The kick floor).
	if [ -n "$share_tag" ] && [ -e "/sys/kernel/debug/virtio_fs_sync/$share_tag/floor" ] &&
		grep -q '^sync\.' "/sys/fs/virtio_fs_sync/$share_tag/stats" 2>/dev/null; then
		run_phase kickfloor "" kick_floor "$kickfloor_n"
	fi
fi
if has fio; then
	if command -v fio >/dev/null; then
		run_phase fio-1 "" fio_json 1
		if [ "$jobs" -gt 1 ]; then
			run_phase fio-n "" fio_json "$jobs"
		fi
	else
		echo '{"phase":"fio-1","rc":127,"error":"fio not installed"}'
	fi
fi
if has unlink; then
	run_phase unlink "" "$vfsbench" unlink "$work/unlink" "$unlink_n"
fi
if has smallfile; then
	run_phase smallfile-1 "" "$vfsbench" smallfile "$work/sf" "$sf_n" 1 4096
	if [ "$jobs" -gt 1 ]; then
		run_phase smallfile-n "" "$vfsbench" smallfile "$work/sf" "$sf_n" "$jobs" 4096
	fi
fi
if has seq; then
	run_phase seqwrite-nofsync "" "$vfsbench" seqwrite "$work/seq" "$seq_mib" nofsync
	run_phase seqread "" "$vfsbench" seqread "$work/seq"
	run_phase seqwrite-fsync "" "$vfsbench" seqwrite "$work/seq" "$seq_mib" fsync
	rm -f "$work/seq"
fi
if has build; then
	if [ -f "$tarball" ]; then
		run_phase build-untar "\"tarball\":\"$(basename "$tarball")\"" build_untar
		run_phase build-make "\"make_dir\":\"$make_dir\"" build_make make
		# the same make again: nothing to do, make stats every target
		# and every prerequisite (with the generated project, every
		# header named in the .d files)
		run_phase build-noop "\"make_dir\":\"$make_dir\"" build_make noop
		run_phase build-rm "" build_rm
	else
		echo "{\"phase\":\"build-make\",\"rc\":2,\"error\":\"no tarball $tarball\"}"
	fi
fi
progress "done"
exit
}
