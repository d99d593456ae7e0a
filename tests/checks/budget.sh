# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/budget.sh: the device's exit budget. Sourced by
# tests/check.sh, whose rows call these functions; they use its variables
# ($repo, $logs and the like) and counter_sum/counter_max
# (tests/vm/counters.sh).

# Slack on the longest exit beyond the budget: the device's threads share
# two cores with the other rows of make check.
budget_margin_us=250000

# opcode_types TRACE OPCODE: the queue types the device's trace saw OPCODE on
opcode_types() {
	awk -v op="opcode=$2" '$4 == op { sub("type=", "", $2); print $2 }' "$1" | sort -u | tr '\n' ' '
}

# exit_budget NAME BUDGET_US [copy] -- RUNNER-ARGS...: tests/vm/scenarios/
# exit-budget on a share holding two 1 GiB files, its device keeping a
# budget of BUDGET_US (0: none) and watching every sync request, as for a
# share whose host times it cannot predict; the delayed LOOKUP comes from
# --faults. With a budget: truncation, unlink and fsync (and the copy)
# took the sync queues, the predictably long ones were completed late,
# the delayed LOOKUP was left to a worker, and no exit outlasted the budget
# by more than budget_margin_us. Without: unlink and fsync took the
# request queues.
exit_budget() {
	local name=$1 budget=$2 copy='' res tmp rc=0 op types longest want=1 need
	shift 2
	[ "${1:-}" = copy ] && { copy=copy; shift; }
	[ "${1:-}" = -- ] && shift
	[ "$budget" = 0 ] && want=0
	res=$logs/$name.results
	tmp=$(mktemp -d)
	mkdir "$tmp/share"
	if ! fallocate -l 1G "$tmp/share/big1" || ! fallocate -l 1G "$tmp/share/big2"; then
		rm -rf "$tmp"
		echo "cannot make two 1 GiB files in $tmp"
		return 1
	fi
	"$repo/tests/vm/run" --results "$res" --share "$tmp/share" --driver ours --sync on \
		--dev-opts "--sync-budget-us=$budget --sync-watch=always --faults --trace-file=$tmp/trace" \
		"$@" -- "$repo/tests/vm/scenarios/exit-budget" $want $copy || rc=1
	cp "$tmp/trace" "$res/trace" 2>/dev/null
	rm -rf "$tmp"
	[ $rc = 0 ] || return 1
	grep '^device ' "$res/dev-stats"
	grep 'type=sync' "$res/dev-stats" | tr ' ' '\n' | grep -E '^(queue=|inline=|late=|exit|defer|overrun)' | tr '\n' ' '
	echo
	longest=$(counter_max "$res/dev-stats" 'type=sync' exit_max_us)
	for op in 4 10 20 ${copy:+47}; do
		types=$(opcode_types "$res/trace" "$op")
		echo "opcode $op on: $types"
	done
	if [ "$budget" = 0 ]; then
		for op in 10 20; do
			case " $(opcode_types "$res/trace" "$op")" in
			*" sync "*) echo "FAIL: opcode $op took a sync queue without a budget"; return 1 ;;
			*" request "*) ;;
			*) echo "FAIL: opcode $op never reached the device"; return 1 ;;
			esac
		done
		echo "longest exit ${longest} us without a budget" >"$logs/$name.note"
		return 0
	fi
	grep -q "^device budget_us=$budget " "$res/dev-stats" ||
		{ echo "FAIL: the device's stats do not say budget_us=$budget"; return 1; }
	for op in 4 10 20 ${copy:+47}; do
		case " $(opcode_types "$res/trace" "$op")" in
		*" sync "*) ;;
		*) echo "FAIL: opcode $op never took a sync queue"; return 1 ;;
		esac
	done
	need=2
	[ -n "$copy" ] && need=3
	[ "$(counter_sum "$res/dev-stats" 'type=sync' defer_predicted)" -ge $need ] ||
		{ echo "FAIL: the truncation and the fsync${copy:+ and the copy} were not completed late"; return 1; }
	[ "$(counter_sum "$res/dev-stats" 'type=sync' defer_watch)" -ge 1 ] ||
		{ echo "FAIL: the delayed LOOKUP was not left to a worker"; return 1; }
	[ "$longest" -le $((budget + budget_margin_us)) ] ||
		{ echo "FAIL: an exit took $longest us, budget $budget us + $budget_margin_us us"; return 1; }
	echo "longest exit ${longest} us, budget ${budget} us" >"$logs/$name.note"
}

# exit_budget_nowait NAME BUDGET_US -- RUNNER-ARGS...: tests/vm/scenarios/
# exit-budget nowait, its device keeping a budget of BUDGET_US and
# watching nothing, so that only a non-blocking form keeps an exit short:
# the OPEN that breaks tests/vm/lease-holder.py's lease was tried inside
# its kick, found to wait, and completed late (defer_nowait); so was the
# READ of data not in the host's page cache, unless the disk's read that
# the try starts had landed when the kernel looked again; the lease was
# broken; no exit outlasted the budget by more than budget_margin_us.
exit_budget_nowait() {
	local name=$1 budget=$2 res tmp rc=0 holder longest nowait
	shift 2
	[ "${1:-}" = -- ] && shift
	res=$logs/$name.results
	tmp=$(mktemp -d)
	mkdir "$tmp/share"
	: >"$tmp/share/leased"
	python3 -c 'import sys; sys.stdout.buffer.write(b"c" * 1048576)' >"$tmp/share/cold"
	sync "$tmp/share/cold"
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$tmp/share/cold"
	python3 "$repo/tests/vm/lease-holder.py" "$tmp/share/leased" "$tmp/ready" >"$tmp/holder" 2>&1 &
	holder=$!
	while [ ! -e "$tmp/ready" ] && kill -0 $holder 2>/dev/null; do
		sleep 0.1
	done
	if [ ! -e "$tmp/ready" ]; then
		cat "$tmp/holder"
		rm -rf "$tmp"
		echo "FAIL: no read lease on $tmp/share/leased"
		return 1
	fi
	"$repo/tests/vm/run" --results "$res" --share "$tmp/share" --driver ours --sync on \
		--dev-opts "--sync-budget-us=$budget --sync-watch=never --trace-file=$tmp/trace" \
		"$@" -- "$repo/tests/vm/scenarios/exit-budget" 1 nowait || rc=1
	kill $holder 2>/dev/null
	wait $holder 2>/dev/null
	cp "$tmp/trace" "$res/trace" 2>/dev/null
	grep -q '^broken$' "$tmp/holder" || { echo "FAIL: the lease was never broken"; rc=1; }
	rm -rf "$tmp"
	[ $rc = 0 ] || return 1
	grep 'type=sync' "$res/dev-stats" | tr ' ' '\n' | grep -E '^(queue=|inline=|late=|exit|defer|overrun)' | tr '\n' ' '
	echo
	for op in 14 15; do
		echo "opcode $op on: $(opcode_types "$res/trace" "$op")"
	done
	longest=$(counter_max "$res/dev-stats" 'type=sync' exit_max_us)
	nowait=$(counter_sum "$res/dev-stats" 'type=sync' defer_nowait)
	[ "$nowait" -ge 1 ] ||
		{ echo "FAIL: defer_nowait=$nowait: the OPEN was not completed late"; return 1; }
	[ "$longest" -le $((budget + budget_margin_us)) ] ||
		{ echo "FAIL: an exit took $longest us, budget $budget us + $budget_margin_us us"; return 1; }
	echo "longest exit ${longest} us, budget ${budget} us, ${nowait} would have waited" >"$logs/$name.note"
}
