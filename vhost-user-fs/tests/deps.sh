#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The device's modules depend one way: fails if the include graph among
# its own files has a cycle. A module is X.c with X.h (or a header alone,
# such as options.h); module M depends on X when M.c or M.h has
# #include "X.h" (or "X.c") and X is a file of the device. Run by
# `make check`.
#
# Usage: tests/deps.sh [-v] [DIR]
#   DIR: the device's sources (default: the directory above this script)
#   -v:  print every edge, "M -> X"
set -eu

verbose=0
if [ "${1:-}" = -v ]; then
	verbose=1
	shift
fi
dir=${1:-$(dirname "$0")/..}
cd "$dir"

for f in *.c *.h; do
	[ -e "$f" ] || continue
	m=${f%.*}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"/]*\)\.[ch]".*/\1/p' "$f" |
	while read -r x; do
		if [ "$x" != "$m" ] && { [ -e "$x.h" ] || [ -e "$x.c" ]; }; then
			echo "$m $x"
		fi
	done
done | sort -u | awk -v verbose="$verbose" '
	{
		adj[$1, ++deg[$1]] = $2
		if (!($1 in seen)) { seen[$1]; order[++n] = $1 }
		if (!($2 in seen)) { seen[$2]; order[++n] = $2 }
		edges++
		if (verbose)
			print $1 " -> " $2
	}
	# Depth first; a grey node met again closes a cycle on the stack.
	function visit(v,    i, w, k, path) {
		color[v] = 1
		stack[++sp] = v
		for (i = 1; i <= deg[v]; i++) {
			w = adj[v, i]
			if (color[w] == 1) {
				for (k = sp; stack[k] != w; k--)
					;
				path = w
				for (k++; k <= sp; k++)
					path = path " -> " stack[k]
				print "deps.sh: cycle: " path " -> " w
				cycles++
			} else if (!color[w]) {
				visit(w)
			}
		}
		sp--
		color[v] = 2
	}
	END {
		for (i = 1; i <= n; i++)
			if (!color[order[i]])
				visit(order[i])
		if (cycles) {
			print "deps.sh: " cycles " cycle(s) among the modules: each must depend one way"
			exit 1
		}
		print "deps.sh: " n " modules, " edges " dependencies, no cycle"
	}'
