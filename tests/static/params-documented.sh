#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# params-documented.sh [REPO]: every module parameter the driver's sources
# declare is in README's parameter table and in the Kconfig help, and the
# README's table names no parameter the sources lack. Prints what differs.
set -u

repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo" || exit 2
rc=0

# module_param(name, ...) and module_param_named(name, ...) in the driver.
src=$(make -s --no-print-directory print-sources 2>/dev/null | tr ' ' '\n' | grep -E '\.c$' | grep -v '^tests/')
[ -n "$src" ] || { echo "no driver sources from make print-sources"; exit 1; }
params=$(sed -n -E 's/^[[:space:]]*module_param(_named)?\([[:space:]]*([a-z0-9_]+).*/\2/p' $src | sort -u)
[ -n "$params" ] || { echo "no module_param in $src"; exit 1; }

# README: the rows of the table under "Module parameters:".
readme=$(awk '/^Module parameters:/ { t = 1; next } t && /^\| `/ { print } t && /^$/ && n++ > 0 { exit }' README.md |
	sed -n -E 's/^\| `([a-z0-9_]+)` \|.*/\1/p' | sort -u)

for p in $params; do
	grep -qx "$p" <<<"$readme" || { echo "README.md: parameter $p is not in the table"; rc=1; }
	grep -qE "(^|[^a-z0-9_])$p \(default" Kconfig || { echo "Kconfig: parameter $p is not in the help text"; rc=1; }
done
for p in $readme; do
	grep -qx "$p" <<<"$params" || { echo "README.md: $p is not a parameter of the driver"; rc=1; }
done
[ $rc = 0 ] && echo "parameters documented: $(echo $params)"
exit $rc
