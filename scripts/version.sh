#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/version.sh: the driver's version, RELEASE.N-gHASH: the release
# below, the number of commits on the way to HEAD (so that a later commit
# of main sorts after an earlier one, as DKMS and sort -V order versions)
# and HEAD's short hash, "-dirty" with uncommitted changes; "unknown"
# outside a git checkout.
release=0.1
cd "$(dirname "$0")/.." || exit 1
if n=$(git rev-list --count HEAD 2>/dev/null) &&
	hash=$(git describe --always --dirty --abbrev=7 --exclude='*' 2>/dev/null); then
	echo "$release.$n-g$hash"
else
	echo unknown
fi
