#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vm-suite.sh [tests/vm/run options] - run-suite.sh in a guest on a fresh
# host share, then verify the stress manifest from the host's side of the
# share (what the guest wrote must be what the host has).  Options go to
# tests/vm/run unchanged, e.g. --substrate qemu --cpus 2.
# Exit status: the guest's, or 1 if only the host-side check failed.

set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
make -s -C "$here" || exit 2
share=$(mktemp -d "${TMPDIR:-/tmp}/suite-share.XXXXXX") || exit 2
"$repo/tests/vm/run" --share "$share" "$@" -- "$here/run-suite.sh" /mnt/share
rc=$?
echo "# verify-manifest (host side) $share/suite-stress"
if ! "$here/bin/verify-manifest" "$share/suite-stress"; then
	[ $rc -eq 0 ] && rc=1
fi
rm -rf "$share"
exit $rc
