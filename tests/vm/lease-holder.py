#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lease-holder.py FILE READY: holds a read lease on FILE, as another host
program sharing the directory might; creates READY once it holds it. When
someone opens FILE for writing the kernel begins to break the lease
(SIGIO); 50 ms later this gives the lease up, prints "broken", and exits.
Until then, the opener waits, unless it opened with O_NONBLOCK."""
import fcntl
import os
import signal
import sys
import time


def main():
    path, ready = sys.argv[1:3]
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGIO})
    fd = os.open(path, os.O_RDONLY)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    open(ready, "w").close()
    signal.sigwait({signal.SIGIO})
    time.sleep(0.05)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    print("broken", flush=True)


if __name__ == "__main__":
    main()
