# SPDX-License-Identifier: GPL-2.0
"""CPU lists as taskset -c and /proc/PID/status write them ("0-2,5", "0-7:2")."""
import os
import re

_ENTRY = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?\Z")


def parse_cpu_list(text):
    """The CPUs of a list such as "0-2,5" or "0-7:2", as a frozenset of ints.

    Raises ValueError for anything taskset -c would not parse.
    """
    cpus = set()
    for entry in text.split(","):
        m = _ENTRY.match(entry.strip())
        if not m:
            raise ValueError("bad CPU list entry %r" % entry)
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        stride = int(m.group(3)) if m.group(3) is not None else 1
        if last < first or stride < 1:
            raise ValueError("bad CPU range %r" % entry)
        cpus.update(range(first, last + 1, stride))
    return frozenset(cpus)


def same_cpus(a, b):
    """Whether two CPU lists name the same CPUs ("0-1" and "0,1" do).

    An empty or unparsable list matches nothing but an identical string.
    """
    try:
        return parse_cpu_list(a) == parse_cpu_list(b)
    except ValueError:
        return a == b


def can_pin(text):
    """Whether a process can be pinned to the CPU list (as taskset -c would).

    Tried in a forked child, so that this process keeps its own CPUs.
    """
    try:
        cpus = parse_cpu_list(text)
    except ValueError:
        return False
    pid = os.fork()
    if pid == 0:
        try:
            os.sched_setaffinity(0, cpus)
        except (OSError, ValueError, OverflowError):
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def cpus_allowed(pid):
    """The Cpus_allowed_list of /proc/PID/status, "" when it cannot be read."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    return line.split()[1]
    except (OSError, IndexError):
        pass
    return ""
