# SPDX-License-Identifier: GPL-2.0
"""The workload sizes: bench/sizes, the file bench/guest-bench.sh reads."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES_FILE = os.path.join(REPO, "bench", "sizes")
FIELDS = ("fio_mib", "fio_runtime_s", "unlink_n", "smallfile_n", "seq_mib", "stat_n",
          "nullsys_n", "clockpair_n", "build_files", "build_seed")


def load(path=SIZES_FILE):
    """{size name: {field: int}} in the file's order."""
    out = {}
    with open(path) as f:
        for line in f:
            toks = line.split()
            if not toks or toks[0].startswith("#"):
                continue
            if len(toks) != len(FIELDS) + 1:
                raise ValueError("%s: %r: want a name and %d numbers" % (path, line, len(FIELDS)))
            out[toks[0]] = dict(zip(FIELDS, (int(t) for t in toks[1:])))
    return out


def mib(n):
    """64 -> '64 MiB', 1024 -> '1 GiB'."""
    return "%d GiB" % (n // 1024) if n >= 1024 and n % 1024 == 0 else "%d MiB" % n


def count(n):
    """50000 -> '50,000'."""
    return "{:,}".format(n)
