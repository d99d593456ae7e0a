#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py collect|render|summary: the benchmark report
(bench/benchlib/report.py; `report.py` alone prints its usage)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import report  # noqa: E402

if __name__ == "__main__":
    sys.exit(report.main(sys.argv))
