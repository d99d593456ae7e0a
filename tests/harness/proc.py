# SPDX-License-Identifier: GPL-2.0
"""Child processes of the harness: start (pinned, in a process group of
their own if asked), wait with a time limit, stop, and the wait4() rusage
of each; the signals that end a run; /proc walks.

A child is reaped by this process itself (os.wait4), so its CPU time and
peak RSS, with those of the children it reaped, are exact even when it
ends on its own before anyone asks.
"""
import os
import select
import signal
import subprocess
import sys
import time

# The signals that stop a run: the run cleans up, then ends (130 for INT
# and TERM, as `exit 130` did in the bash version; HUP by the signal).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A stop signal arrived; `signum` says which."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


# How each stop signal was disposed of when the harness started: a child
# gets SIG_IGN back where the harness's own caller had ignored it (a
# background job ignores SIGINT), else the default.
_inherited = {}
# While > 0, a stop signal is remembered instead of raised (see deferred()).
_defer_depth = 0
_pending = []


def _on_stop_signal(signum, frame):
    if _defer_depth > 0:
        _pending.append(signum)
        return
    raise Interrupted(signum)


def catch_stop_signals():
    """Turn the stop signals into Interrupted, raised where the run is."""
    for sig in STOP_SIGNALS:
        old = signal.getsignal(sig)
        _inherited[sig] = signal.SIG_IGN if old == signal.SIG_IGN else signal.SIG_DFL
        signal.signal(sig, _on_stop_signal)


class deferred:
    """A block no stop signal interrupts: one that arrives inside it is
    raised when the block ends (by then a tool run in it has finished: a
    shell, too, runs its traps only after the foreground command).
    With raise_at_end=False it is dropped instead (for the cleanup)."""

    def __init__(self, raise_at_end=True):
        self.raise_at_end = raise_at_end

    def __enter__(self):
        global _defer_depth
        _defer_depth += 1
        return self

    def __exit__(self, *exc):
        global _defer_depth
        _defer_depth -= 1
        if _defer_depth == 0 and _pending:
            signum = _pending[0]
            _pending.clear()
            if self.raise_at_end and exc[0] is None:
                raise Interrupted(signum)
        return False


def _child_setup(cpus, new_group):
    """In the forked child, before exec: what the program starts with."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _inherited.get(sig, signal.SIG_DFL))
    # Python ignores these at startup; programs get them as from a shell.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    if new_group:
        os.setpgid(0, 0)
    if cpus is not None:
        os.sched_setaffinity(0, cpus)


def start_child(children, *args, **kwargs):
    """Child(*args, **kwargs), appended to the list children before any
    stop signal can end the run (so that the cleanup stops it)."""
    with deferred():
        child = Child(*args, **kwargs)
        children.append(child)
    return child


class Child:
    """One program the harness runs in the background (start it with
    start_child).

    name     what cpu-times calls it (device, device.share1, guest, ...)
    argv     the program and its arguments (PATH is searched)
    output   file that gets its stdout and stderr (stdin is /dev/null)
    cpus     CPUs to pin it to (a set), or None
    new_group  start it in a process group of its own and signal the group
             (the guest: UML's helper processes go with it)
    """

    def __init__(self, name, argv, output, cpus=None, new_group=False):
        self.name = name
        self.new_group = new_group
        self.status = None  # exit code as os.waitstatus_to_exitcode gives it
        self.rusage = None
        with open(output, "wb") as out, open(os.devnull, "rb") as null:
            self.pid = os.fork()
            if self.pid == 0:
                self._exec(argv, null, out, cpus)
        if new_group:
            # Also here: a signal to the group must not find it missing.
            try:
                os.setpgid(self.pid, self.pid)
            except OSError:
                pass  # the child has made it and exec'd already
        self.pidfd = os.pidfd_open(self.pid)

    def _exec(self, argv, stdin, out, cpus):
        try:
            os.dup2(stdin.fileno(), 0)
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            _child_setup(cpus, self.new_group)
            os.execvp(argv[0], argv)
        except BaseException as e:  # noqa: B036 - the child must not return
            try:
                os.write(2, ("tests/vm/run: %s: %s\n" % (argv[0], e)).encode())
            finally:
                os._exit(127)

    def running(self):
        """Whether it has not ended yet (reaps it if it has)."""
        if self.status is None:
            self._reap(os.WNOHANG)
        return self.status is None

    def wait(self, timeout=None):
        """Wait up to timeout seconds (None: for ever); True if it ended."""
        if self.status is None:
            poller = select.poll()
            poller.register(self.pidfd, select.POLLIN)
            if poller.poll(None if timeout is None else timeout * 1000):
                self._reap(0)
        return self.status is not None

    def _reap(self, flags):
        pid, status, rusage = os.wait4(self.pid, flags)
        if pid == self.pid:
            self.status = os.waitstatus_to_exitcode(status)
            self.rusage = rusage
            os.close(self.pidfd)

    def signal(self, sig):
        """Send sig to it (to its group when it has one), if it still runs."""
        if not self.running():
            return
        try:
            if self.new_group:
                os.killpg(self.pid, sig)
            else:
                os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def rusage_line(self):
        """Its cpu-times line, or None if it was never reaped."""
        if self.rusage is None:
            return None
        ru = self.rusage
        return "%s pid=%d user_s=%.3f sys_s=%.3f maxrss_kb=%d status=%d" % (
            self.name, self.pid, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, self.status)


def wait_all(children, timeout):
    """Wait until every child has ended or timeout seconds have passed;
    True if they all ended."""
    deadline = time.monotonic() + timeout
    for child in children:
        if not child.wait(max(0.0, deadline - time.monotonic())):
            return False
    return True


def stop_all(children, grace=10):
    """SIGTERM every child that still runs, SIGKILL what is left after
    grace seconds, and reap them all."""
    for child in children:
        child.signal(signal.SIGTERM)
    if not wait_all(children, grace):
        for child in children:
            child.signal(signal.SIGKILL)
    for child in children:
        child.wait()


def run_tool(argv, capture=False, stdout=None, stderr=None, cwd=None):
    """Run a tool to its end, as a shell would in the foreground; a stop
    signal that arrives meanwhile is raised once the tool has ended.
    Returns (exit code, its stdout as text when capture, else None)."""
    with deferred():
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE if capture else stdout,
                                stderr=stderr, preexec_fn=lambda: _child_setup(None, False))
        out, _ = proc.communicate()
    if capture:
        out = out.decode(errors="surrogateescape").rstrip("\n")
    return proc.returncode, out


def process_tree(pid):
    """pid and its descendants, each before its children."""
    tree = [pid]
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return tree
    for task in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids = f.read().split()
        except OSError:
            continue
        for kid in kids:
            tree.extend(process_tree(int(kid)))
    return tree


def comm(pid):
    """/proc/PID/comm without its newline; None if it cannot be read."""
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().rstrip("\n")
    except OSError:
        return None


def exit_by_signal(signum):
    """End this process the way the stop signal signum ends a run."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    if signum == signal.SIGHUP:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(130)
