# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # tests/check.sh's variables
#
# tests/checks/smp.sh: SMP UML 7.3: sync queues per CPU, shared, late, under
# stress and overlapping. Sourced by tests/check.sh, whose rows call these
# functions; they use its variables ($repo, $logs, $VFS_CACHE and the like)
# and counter_sum (tests/vm/counters.sh).

# sync_queues_inline RESULTS: how many of the device's sync queues completed
# requests inside the kick (dev-stats' inline > 0).
sync_queues_inline() {
	awk '/type=sync/ { for (i = 1; i <= NF; i++) if ($i ~ /^inline=/ && substr($i, 8) + 0 > 0) u++ }
		END { print u + 0 }' "$1/dev-stats"
}

# per_cpu_sync N: one pinned task per vCPU, S = N sync queues: every CPU
# completes inline on a queue of its own (tests/vm/scenarios/per-cpu-sync),
# and the device agrees: the totals (check-path) and N sync queues of its
# own that completed requests inside the kick.
per_cpu_sync() {
	local n=$1 name=uml-7.3:per-cpu-sync-cpus$1 used
	"$repo/tests/vm/run" --kernel 7.3 --cpus "$n" --sync-queues "$n" --driver ours --sync on \
		--results "$logs/$name.results" -- "$repo/tests/vm/scenarios/per-cpu-sync" || return 1
	"$repo/tests/vm/check-path" sync "$logs/$name.results" || return 1
	used=$(sync_queues_inline "$logs/$name.results")
	echo "device: $used sync queues completed requests inline"
	[ "$used" = "$n" ]
}

# sync_queues_agree RESULTS N: the share has N sync queues and, queue by
# queue (the driver's sync.<i> against the device's i-th sync queue), the
# device saw the requests the driver sent; each was reaped, inline or
# deferred, and completed, inside the kick or late; what the device
# completed inside the kick was reaped inline (a late completion is reaped
# inline when it lands before the kicker's reap, so without late ones the
# counts are equal); every queue completed some inline.
sync_queues_agree() {
	local res=$1 n=$2 f
	echo "# sync queues: driver against device"
	for f in driver-stats dev-stats; do
		[ -s "$res/$f" ] || { echo "FAIL: no $f"; return 1; }
	done
	awk -v n="$n" '
		function val(k,   i, kv) {
			for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] + 0 }
			return -1
		}
		FNR == 1 { file++ }
		file == 1 && $1 == "share" && $2 ~ /^sync\./ {
			d++; name[d] = $2; sub_[d] = val("submitted"); inl[d] = val("inline"); dfr[d] = val("deferred")
		}
		file == 2 && / type=sync / {
			v++; q[v] = $1; req[v] = val("requests"); vinl[v] = val("inline"); late[v] = val("late")
		}
		END {
			if (d != n || v != n) {
				printf "FAIL: %d sync queues in the driver, %d in the device, not %d\n", d, v, n
				exit 1
			}
			for (i = 1; i <= n; i++) {
				printf "%s submitted=%d inline=%d deferred=%d; device %s requests=%d inline=%d late=%d\n",
					name[i], sub_[i], inl[i], dfr[i], q[i], req[i], vinl[i], late[i]
				if (sub_[i] != req[i]) {
					printf "FAIL: %s: the driver sent %d, the device saw %d\n", name[i], sub_[i], req[i]; bad = 1
				}
				if (inl[i] + dfr[i] != sub_[i] || vinl[i] + late[i] != req[i]) {
					printf "FAIL: %s: not every request was reaped and completed\n", name[i]; bad = 1
				}
				if (inl[i] < vinl[i]) {
					printf "FAIL: %s: completed inside the kick but not reaped inline\n", name[i]; bad = 1
				}
				if (inl[i] == 0) { printf "FAIL: %s completed nothing inline\n", name[i]; bad = 1 }
			}
			exit bad
		}' "$res/driver-stats" "$res/dev-stats"
}

# shared_sync: 2 vCPUs, one sync queue (--sync-queues 1). Each CPU alone
# completes inline on sync.0 (per-cpu-sync); then a writer pinned to each,
# at once (kick-overlap): a request that finds sync.0 held by the other
# CPU's kick falls back to a request queue. The counters agree with the
# device's kind by kind and on sync.0, the contention was counted (busy; a
# third of the writes here) and every fallback went to a request queue.
shared_sync() {
	local res=$logs/uml-7.3:shared-sync-cpus2.results busy fallback req rc=0
	"$repo/tests/vm/run" --kernel 7.3 --cpus 2 --sync-queues 1 --driver ours --sync on \
		--results "$res" -- sh -c "$repo/tests/vm/scenarios/per-cpu-sync &&
			$repo/tests/vm/scenarios/kick-overlap 512" || return 1
	counters_agree "$res" share || rc=1
	sync_queues_agree "$res" 1 || rc=1
	busy=$(counter_sum "$res/driver-stats" ' sync\.' busy)
	fallback=$(counter_sum "$res/driver-stats" ' sync\.' fallback)
	req=$(counter_sum "$res/driver-stats" ' request\.' submitted)
	echo "driver: sync busy=$busy fallback=$fallback, request queues submitted=$req"
	[ "$busy" -gt 0 ] || { echo "FAIL: no contention on the shared sync queue"; rc=1; }
	[ "$fallback" -ge "$busy" ] || { echo "FAIL: fewer fallbacks than contentions"; rc=1; }
	[ "$req" -ge "$fallback" ] || { echo "FAIL: fewer requests on the request queues than fallbacks"; rc=1; }
	return $rc
}

# sync_late: the suite on 2 vCPUs, a sync queue each, while the device
# completes every 50th sync request after acknowledging its kick
# (--sync-late=50): the driver reaps those later (deferred, by the queue's
# callback or the next kick on it) while the other CPU goes on submitting.
# (Each late completion costs its task a wake-up by interrupt: tens of ms
# on a loaded machine, so the suite's 3000-entry directory case would near
# its 120 s timeout with every 5th late.)
sync_late() {
	local name=uml-7.3:sync-late-cpus2 res=$logs/uml-7.3:sync-late-cpus2.results deferred bad
	vm_suite none "$name" --kernel 7.3 --cpus 2 --driver ours --sync on --dev-opts --sync-late=50 ||
		return 1
	sync_queues_agree "$res" 2 || return 1
	deferred=$(counter_sum "$res/driver-stats" ' sync\.' deferred)
	bad=$(counter_sum "$res/driver-stats" . bad_reply)
	echo "driver: deferred=$deferred bad_reply=$bad"
	[ "$deferred" -gt 0 ] || { echo "FAIL: nothing was reaped deferred"; return 1; }
	[ "$bad" = 0 ] || { echo "FAIL: bad replies"; return 1; }
}

# stress_pinned N: tests/stress.sh on N vCPUs with a writer bound to each
# (stress --pin), faults and late completions injected, every byte verified
# on the host; each CPU used its own sync queue: every writer ran where it
# was bound, every sync.<i> completed requests inline, and the device's
# per-queue counts are the driver's.
stress_pinned() {
	local n=$1 res=$logs/uml-7.3:stress-pinned-cpus$1.results c rc=0
	STRESS_TIME=20 STRESS_WRITERS=$n STRESS_OPTS=--pin STRESS_RUNNER_ARGS="--kernel 7.3 --cpus $n" \
		STRESS_RESULTS="$res" "$repo/tests/stress.sh" || return 1
	for ((c = 0; c < n; c++)); do
		grep -q "^ok stress-writer-[0-9]*: .*, on CPU $c\$" "$res/out" ||
			{ echo "FAIL: no writer ran on CPU $c"; rc=1; }
	done
	sync_queues_agree "$res" "$n" || rc=1
	return $rc
}

# kick_overlap NAME PAIRS N [DEVICE-OPTS...]: SMP UML 7.3, 2 vCPUs, a sync
# queue each; one writer pinned per CPU, all at once, N O_DIRECT writes
# each (tests/vm/scenarios/kick-overlap). The device's trace then shows whether
# the requests of the two sync queues were in the device at the same time
# (tests/vm/trace-overlap.py PAIRS: --min-pairs or --max-pairs). Over
# per-queue kick channels they are; with in-band kicks (--no-kick-channel)
# every kick waits for the one before under virtio_uml's device lock and
# is served by the one socket thread, so no two intervals can overlap
# (and the waiting CPU spins: fewer writes keep that row short).
kick_overlap() {
	local name=$1 pairs=$2 n=$3 tmp rc=0 res=$logs/$1.results
	shift 3
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vfs-overlap.XXXXXX")
	"$repo/tests/vm/run" --kernel 7.3 --cpus 2 --sync-queues 2 --driver ours --sync on \
		--results "$res" --dev-opts "--trace-file=$tmp/trace $*" -- \
		"$repo/tests/vm/scenarios/kick-overlap" "$n" || rc=1
	echo "# the device's trace"
	python3 "$repo/tests/vm/trace-overlap.py" "$tmp/trace" "$pairs" || rc=1
	mkdir -p "$res"
	cp "$tmp/trace" "$res/dev-trace" 2>/dev/null
	rm -rf "$tmp"
	return $rc
}
