#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/test-rows.sh: tests of make check's scheduler (tests/rows.sh) on
# rows that only sleep and write down when they ran: lines in declared
# order, a failed build fails what needs it without running it, and so
# does a prerequisite that is no row (a slip in prereqs), never more
# rows at once than slots, an --alone row with nothing beside it, a
# --background row beside full slots. The row harness:rows.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/vfs-rows.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
fail() {
	echo "FAIL: $*"
	bad=1
}

# one schedule in a subshell of its own: JOBS ROWS-SCRIPT
schedule() {
	(
		logs=$work/logs only='*' passed=0 failed=0 failures=() t0=$SECONDS jobs=$1
		mkdir -p "$logs"
		# shellcheck source=tests/rows.sh
		. "$repo/tests/rows.sh"
		# span NAME SECONDS: a row that records its start and end
		# shellcheck disable=SC2317 # called by the rows eval declares
		span() {
			echo "$(date +%s.%N) start $1" >>"$work/spans"
			sleep "$2"
			echo "$(date +%s.%N) end $1" >>"$work/spans"
		}
		eval "$2"
		run_rows
		echo "$passed passed, $failed failed"
	)
}

# the most rows that ran at once, of those whose names match ERE
most_at_once() {
	sort -n "$work/spans" | awk -v re="$1" '$3 ~ re { n += ($2 == "start") ? 1 : -1; if (n > m) m = n }
		END { print m + 0 }'
}

out=$(schedule 2 '
t setup:packages span setup:packages 0.2
t build:device span build:device 0.2
t build:suite span build:suite 0.2
t setup:kernel-6.12 span setup:kernel-6.12 0.2
t build:uml-debug false
t uml:a span uml:a 1
t harness:unit span harness:unit 1
t device:one span device:one 1
t device:two span device:two 1
t --alone device:alone span device:alone 0.5
t device:three span device:three 0.5
t --background build:qemu span build:qemu 2
t qemu-sync-6.12:pc:cpus2 span qemu-sync 0.1
')
echo "$out"
names=$(echo "$out" | sed -n 's/^\(not \)*ok \([^ ]*\).*/\2/p' | paste -sd' ')
[ "$names" = "setup:packages build:device build:suite setup:kernel-6.12 build:uml-debug uml:a harness:unit \
device:one device:two device:alone device:three build:qemu qemu-sync-6.12:pc:cpus2" ] ||
	fail "lines not in declared order: $names"
echo "$out" | grep -qx 'not ok uml:a (not run: build:uml-debug failed)' ||
	fail "uml:a ran or passed after its build failed"
grep -q ' uml:a$' "$work/spans" && fail "uml:a started"
echo "$out" | grep -qx 'not ok qemu-sync-6.12:pc:cpus2 (not run: build:module-6.12 is no row)' ||
	fail "a row that needs an undeclared row ran"
echo "$out" | grep -qx '10 passed, 3 failed' || fail "the count"
n=$(most_at_once '^(setup|build:device|build:suite|harness|device):')
[ "$n" = 2 ] || fail "$n slot rows at once, want 2"
n=$(most_at_once '.')
[ "$n" = 3 ] || fail "$n rows at once with the background one, want 3"
sort -n "$work/spans" | awk '$3 == "device:alone" { inside = ($2 == "start") ; next }
	inside && $2 == "start" { bad = 1 } END { exit bad }' || fail "a row started beside device:alone"
awk '$2 == "start" && $3 == "device:alone" { a = $1 } $2 == "end" && $3 ~ /^(device:one|device:two|harness:unit)$/ \
	{ if ($1 > e) e = $1 } END { exit !(a >= e) }' "$work/spans" ||
	fail "device:alone started while another row ran"
[ $bad = 0 ] && echo "rows: all checks passed"
exit $bad
