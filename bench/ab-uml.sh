#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench/ab-uml.sh: ab-in-guest.sh run in a User-Mode Linux guest and checked
# (the `make check` test uml:ab-in-guest). The program is
# bench/benchlib/abuml.py; `bench/ab-uml.sh --help` says what it checks.
PYTHONPATH=$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH} exec python3 -m benchlib.abuml "$@"
