#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/stress.sh: what `make stress` runs. The concurrent stress of the
# suite in a guest for STRESS_TIME seconds (default 600) with STRESS_WRITERS
# writers (default 4), while faults are injected: the reference device
# completes every 7th sync-queue request late (--sync-late) and answers
# lookups of vfs-fault-* with bad replies, which a second loop in the guest
# keeps asking for (tests/vm/scenarios/stress-faults). At the end every
# byte is verified on the host against the guest's manifest, and the
# counters must show that the faults happened.
#
# STRESS_RUNNER_ARGS adds tests/vm/run options (default: UML, our driver
# with sync queues), e.g. "--substrate qemu --kernel 6.1 --cpus 2";
# STRESS_OPTS options of the guest's stress, e.g. "--pin" (a writer bound
# to each CPU).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
seconds=${STRESS_TIME:-600}
writers=${STRESS_WRITERS:-4}
results=${STRESS_RESULTS:-$repo/build/stress}
# shellcheck disable=SC2206 # a word list on purpose
runner_args=(${STRESS_RUNNER_ARGS:-})
# shellcheck disable=SC2206
stress_opts=(${STRESS_OPTS:-})

make -s -C "$repo/vhost-user-fs" || exit 1
make -s -C "$repo/tests/suite" || exit 1
share=$(mktemp -d "${TMPDIR:-/tmp}/vfs-stress.XXXXXX")
trap 'rm -rf "$share"' EXIT
rm -rf "$results"

echo "# stress: $seconds s, $writers writers, faults injected; results in ${results#"$repo"/}"
rc=0
"$repo/tests/vm/run" --share "$share" --results "$results" \
	--timeout $((seconds * 3 + 300)) --dev-opts "--faults --sync-late=7 --workers=2" \
	"${runner_args[@]}" -- "$repo/tests/vm/scenarios/stress-faults" "$seconds" "$writers" "${stress_opts[@]}" || rc=1

echo "# host-side verify-manifest"
if [ -f "$share/stress/MANIFEST" ]; then
	"$repo/tests/suite/bin/verify-manifest" "$share/stress" || rc=1
else
	echo "FAIL: no MANIFEST on the host"
	rc=1
fi

# sum FILE KEY: the sum of KEY=N over the file's lines
sum() {
	[ -f "$1" ] || { echo 0; return; }
	awk -v k="$2" '{ for (i = 1; i <= NF; i++) { split($i, kv, "=")
		if (kv[1] == k) s += kv[2] } } END { print s + 0 }' "$1"
}
bad=$(sum "$results/driver-stats" bad_reply)
echo "# counters: driver bad_reply=$bad deferred=$(sum "$results/driver-stats" deferred)" \
	"device late=$(sum "$results/dev-stats" late)"
[ "$bad" -gt 0 ] || { echo "FAIL: no bad reply reached the driver"; rc=1; }
if grep -q ' sync\.' "$results/driver-stats" 2>/dev/null; then
	[ "$(sum "$results/dev-stats" late)" -gt 0 ] ||
		{ echo "FAIL: the device completed no sync request late"; rc=1; }
fi
[ $rc = 0 ] && echo "stress: PASS" || echo "stress: FAIL"
exit $rc
