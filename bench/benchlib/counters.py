# SPDX-License-Identifier: GPL-2.0
"""The counter and record files of a boot, and their sums.

The driver's /sys/fs/virtio_fs_sync/<tag>/stats (tests/vm/run's driver-stats,
ab-in-guest.sh's .stats) and the device's --stats-file (dev-stats) are lines
of `NAME... KEY=N KEY=N ...`; tests/vm/run's cpu-times is `NAME KEY=V ...`
per process; its pinning and bench.py's env are `KEY=VALUE` lines.
(tests/vm/counters.sh is the same sum for the guest-side sh scripts.)
"""


def _value(k, v, floats=False):
    try:
        return float(v) if floats and k.endswith("_s") else int(v)
    except ValueError:
        return v


def kv_rows(text, lead_names=()):
    """One dict per non-empty line: KEY=N tokens (ints where they parse),
    and the leading bare words named by LEAD_NAMES in turn."""
    rows = []
    for line in text.splitlines():
        toks = line.split()
        if not toks:
            continue
        row = {}
        lead = 0
        for t in toks:
            if "=" in t:
                k, v = t.split("=", 1)
                row[k] = _value(k, v)
            elif lead < len(lead_names):
                row[lead_names[lead]] = t
                lead += 1
        rows.append(row)
    return rows


def driver_rows(text):
    """The driver's stats lines: `TAG QUEUE key=N ...`."""
    return kv_rows(text, ("tag", "queue"))


def total(rows, key, where=None):
    """The sum of KEY over ROWS (those WHERE(row) is true, if given);
    values that are not numbers count 0."""
    s = 0
    for r in rows:
        if where is not None and not where(r):
            continue
        v = r.get(key, 0)
        if isinstance(v, (int, float)):
            s += v
    return s


def totals(rows, keys, where=None):
    return {k: total(rows, k, where) for k in keys}


def by(rows, field, key, where=None):
    """{row[field]: sum of KEY}, e.g. requests per queue type."""
    out = {}
    for r in rows:
        if where is not None and not where(r):
            continue
        f = r.get(field, "?")
        out[f] = out.get(f, 0) + (r.get(key, 0) if isinstance(r.get(key, 0), (int, float)) else 0)
    return out


def queue_times(rows, qtype):
    """The device's time per request on the queues of type QTYPE of one
    boot's dev-stats ROWS, in us: {requests, queued_us, handler_us, rest_us,
    busy_us}; None when no such queue served a request or the device did not
    record handler_ns. queued_us is None when no chain's kick was known."""
    qs = [r for r in rows if r.get("type") == qtype and "handler_ns" in r]
    t = totals(qs, ("requests", "busy_ns", "handler_ns", "queued", "queued_ns"))
    n = t["requests"]
    if not qs or not n:
        return None
    return {"requests": n,
            "queued_us": t["queued_ns"] / t["queued"] / 1e3 if t["queued"] else None,
            "handler_us": t["handler_ns"] / n / 1e3,
            "rest_us": (t["busy_ns"] - t["handler_ns"]) / n / 1e3,
            "busy_us": t["busy_ns"] / n / 1e3}


def pairs(text, strip=True):
    """KEY=VALUE lines as a dict (other lines are passed over)."""
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            if strip:
                k, v = k.strip(), v.strip()
            out[k] = v
    return out


def cpu_times(text):
    """tests/vm/run's cpu-times: `NAME pid=N user_s=X sys_s=Y ...` per line."""
    out = {}
    for line in text.splitlines():
        toks = line.split()
        if not toks or "=" in toks[0]:
            continue
        row = {}
        for t in toks[1:]:
            if "=" in t:
                k, v = t.split("=", 1)
                row[k] = _value(k, v, floats=True)
        out[toks[0]] = row
    return out


def cpu_seconds(times, proc, which):
    """PROC's user, sys or total (user + sys) CPU seconds from cpu_times()."""
    ct = (times or {}).get(proc)
    if not ct:
        return None
    if which == "total":
        return ct.get("user_s", 0.0) + ct.get("sys_s", 0.0)
    return ct.get(which + "_s")


def cpu_list(text):
    """A CPU list (`0-2,5`) as a sorted list of CPU numbers."""
    cpus = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)
