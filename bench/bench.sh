#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench/bench.sh: the A/B benchmark report (`make bench`). The program is
# bench/benchlib/bench.py; `bench/bench.sh --help` lists its BENCH_* settings.
PYTHONPATH=$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH} exec python3 -m benchlib.bench "$@"
