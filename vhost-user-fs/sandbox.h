/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's sandbox, in two steps around opening the share:
 *
 * sandbox__enter() (namespace mode) moves into new pid, mount and network
 * namespaces (forking: the parent only waits and forwards signals), mounts
 * a fresh /proc and bind-mounts the share over itself, so that the share's
 * fds, opened next, live on a mount whose root is the share.
 *
 * sandbox__lock() then makes the share the root (pivot_root, or chroot in
 * chroot mode), leaves the working directory at /proc/self/fd (for the
 * server's path-based xattr calls, options.proc_is_cwd), limits the
 * capabilities and installs the seccomp
 * allow-list. It must run before any thread is created: capabilities and
 * the filter are inherited by the threads created afterwards.
 */
#ifndef VHOST_USER_FS_SANDBOX_H
#define VHOST_USER_FS_SANDBOX_H

#include "options.h"

/* Returns 0 in the process that goes on serving; the parent exits inside. */
int sandbox__enter(const struct options *opt);
int sandbox__lock(const struct options *opt);

#endif
