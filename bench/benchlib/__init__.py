# SPDX-License-Identifier: GPL-2.0
"""make bench's host side (Python 3 standard library): the run
(bench.py, configs.py, tools.py, sizes.py), what a boot recorded
(collect.py, counters.py, metrics.py), the statistics (stats.py,
paired.py, interleave.py), the report (report.py, its sections in
report_tables.py, report_costs.py and report_claims.py, what they share
in report_common.py, and charts.py) and make check's uml:ab-in-guest
(abuml.py). Unit tests: test_*.py (make check: bench:unit). See
bench/README.md.
"""
