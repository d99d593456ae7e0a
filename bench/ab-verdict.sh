#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench/ab-verdict.sh DIR: the A/B verdict of ab-in-guest.sh's --out
# directory DIR (bench/benchlib/verdict.py says how it is reached).
PYTHONPATH=$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH} exec python3 -m benchlib.verdict "$@"
