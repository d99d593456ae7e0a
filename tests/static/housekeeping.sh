#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# housekeeping.sh [REPO]: what a project file must not hold. No tracked
# generated files (Python byte code, kbuild objects, modules), no issue
# numbers of the project's tracker and no paths outside the repository
# in project files (reports under bench/results/ quote their history and
# are left out). Prints each offender.
set -u

repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo" || exit 2
rc=0

gen=$(git ls-files | grep -E '(^|/)__pycache__/|\.pyc$|\.o$|\.ko$|\.mod\.c$' || true)
[ -n "$gen" ] && { echo "generated files are tracked:"; echo "$gen"; rc=1; }

refs=$(git grep -n -i -E '\bissues? #?[0-9]+\b' -- ':!bench/results/*' ':!tests/static/housekeeping.sh' || true)
[ -n "$refs" ] && { echo "issue numbers in project files:"; echo "$refs"; rc=1; }

out=$(git grep -n -E '\.\./shared/|/work/|shared/docs/' -- ':!bench/results/*' ':!tests/static/housekeeping.sh' || true)
[ -n "$out" ] && { echo "paths outside the repository:"; echo "$out"; rc=1; }

[ $rc = 0 ] && echo "no generated files, issue numbers or outside paths"
exit $rc
