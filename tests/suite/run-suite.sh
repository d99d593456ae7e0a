#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-suite.sh DIR - the in-guest file-system suite on the mounted share DIR.
#
# Runs fstest on DIR, then a short stress in DIR/suite-stress, and prints
# their result lines.  POSIX sh (busybox ash works): it runs in minimal
# guests.  Exit status 0 only if nothing failed; the last line is
# "suite: PASS" or "suite: FAIL".
#
# DIR/suite-stress is left in place with its MANIFEST, so the runner can
# check on the host what reached the backing directory:
#     tests/suite/bin/verify-manifest HOST_SHARE_DIR/suite-stress
# (the in-guest verify-manifest run below reads back through the guest
# and cannot see a bug that the guest's own page cache hides).
#
# Environment: STRESS_WRITERS (default 2; 0: no stress), STRESS_SECONDS (default 5),
# FSTEST_ARGS (extra fstest arguments, e.g. "-k rename*"), SUITE_BIN
# (where the binaries are; default: bin/ beside this script).

set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: run-suite.sh DIR  (DIR: an existing directory on the share)" >&2
	exit 2
fi
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
bin=${SUITE_BIN:-$here/bin}
writers=${STRESS_WRITERS:-2}
seconds=${STRESS_SECONDS:-5}
fstest_args=${FSTEST_ARGS:-}

for p in fstest stress verify-manifest; do
	if [ ! -x "$bin/$p" ]; then
		echo "run-suite: $bin/$p missing: build it with make -C $here" >&2
		echo "suite: FAIL"
		exit 2
	fi
done

rc=0
start=$(date +%s)
echo "# fstest $dir"
# shellcheck disable=SC2086 # FSTEST_ARGS is a word list on purpose
"$bin/fstest" "$dir" $fstest_args || rc=1
t=$(date +%s)
echo "# fstest took $((t - start)) s"

sdir=$dir/suite-stress
rm -rf "$sdir"
if [ "$writers" = 0 ]; then
	echo "# no stress (STRESS_WRITERS=0)"
else
	echo "# stress $sdir --writers $writers --seconds $seconds"
	"$bin/stress" "$sdir" --writers "$writers" --seconds "$seconds" || rc=1
	echo "# stress took $(($(date +%s) - t)) s"
fi
if [ -f "$sdir/MANIFEST" ]; then
	echo "# verify-manifest (guest side) $sdir"
	"$bin/verify-manifest" "$sdir" || rc=1
fi

echo "# took $(($(date +%s) - start)) s"
if [ $rc -eq 0 ]; then
	echo "suite: PASS"
else
	echo "suite: FAIL"
fi
exit $rc
