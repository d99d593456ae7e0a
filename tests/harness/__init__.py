# SPDX-License-Identifier: GPL-2.0
"""The host-side test harness of virtio-fs-sync (Python 3 standard library).

vm          tests/vm/run: boot one guest against one or more virtio-fs
            devices and run a command in it (tests/vm/run --help)
vm_options  tests/vm/run's command line: usage text, parsing, checks
proc        child processes: start (pinned), stop, wait4() rusage, signals
cpus        CPU lists ("0-2,5") and what /proc says a process may run on
initramfs   the QEMU guests' initramfs (the modules of a Debian kernel)
test_vm     unit tests of the above (make check: harness:unit)

make bench's host side is bench/benchlib/.
"""
