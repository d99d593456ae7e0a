#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# driver-deps.sh [-v] BUILD_DIR: the driver's objects call each other one
# way. Object A depends on object B when A leaves undefined a symbol B
# defines; fails, naming the objects, if that graph has a cycle. BUILD_DIR
# is a module build (make KVER=X builds into build/X): its
# virtio_fs_sync.mod lists the objects. -v prints every edge with the
# symbols behind it.
set -eu

verbose=0
if [ "${1:-}" = -v ]; then
	verbose=1
	shift
fi
[ $# = 1 ] || { echo "usage: driver-deps.sh [-v] BUILD_DIR" >&2; exit 2; }
mod=$1/virtio_fs_sync.mod
[ -s "$mod" ] || { echo "driver-deps: no $mod: build the module first"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "object symbol" for every global symbol an object defines
while read -r o; do
	nm --defined-only -g "$o" | awk -v o="$(basename "$o")" 'NF == 3 { print o, $3 }'
done <"$mod" | sort -k2 >"$tmp/defs"
while read -r o; do
	nm -u "$o" | awk -v o="$(basename "$o")" '{ print o, $2 }'
done <"$mod" | sort -k2 >"$tmp/uses"

# "user definer symbol", one per symbol an object takes from another
join -1 2 -2 2 -o 1.1,2.1,0 "$tmp/uses" "$tmp/defs" |
	awk '$1 != $2' | sort -u >"$tmp/edges"
[ -s "$tmp/edges" ] || { echo "driver-deps: no edges among $(wc -l <"$mod") objects"; exit 1; }
if [ $verbose = 1 ]; then
	awk '{ s[$1 " -> " $2] = s[$1 " -> " $2] " " $3 } END { for (e in s) print e ":" s[e] }' \
		"$tmp/edges" | sort
fi

# tsort names the objects of a loop on stderr
awk '{ print $1, $2 }' "$tmp/edges" | sort -u >"$tmp/pairs"
if ! tsort "$tmp/pairs" >/dev/null 2>"$tmp/loop"; then
	echo "driver-deps: the objects depend on each other in a circle:"
	sed -n 's/^tsort: \([a-z_0-9]*\.o\)$/\1/p' "$tmp/loop" | while read -r o; do
		grep "^$o " "$tmp/edges" | awk '{ print "  " $1 " -> " $2 " (" $3 ")" }'
	done
	exit 1
fi
echo "driver-deps: $(wc -l <"$tmp/pairs") edges among $(wc -l <"$mod") objects, no circle"
