#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# host-check.sh - the reference run: the whole suite on host tmpfs
# (/dev/shm) and on the host's disk file system (/tmp), with the
# manifest verified afterwards as the runner does for a guest.
# Every fstest case must pass (or skip for a stated lack of support)
# on these: a case that fails here is a wrong test, not a driver bug.

set -u
here=$(cd "$(dirname "$0")" && pwd)
rc=0
for base in ${HOST_CHECK_DIRS:-/dev/shm /tmp}; do
	d=$(mktemp -d "$base/suite-check.XXXXXX") || exit 2
	fstype=$(stat -f -c %T "$d")
	echo "## $d ($fstype)"
	"$here/run-suite.sh" "$d" || rc=1
	echo "# verify-manifest (host side) $d/suite-stress"
	"$here/bin/verify-manifest" "$d/suite-stress" || rc=1
	rm -rf "$d"
done
exit $rc
