/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhost-user backend side: the socket protocol, the memory table and the
 * backend (a.k.a. slave) channel.
 */
#ifndef VHOST_USER_FS_VHOST_USER_H
#define VHOST_USER_FS_VHOST_USER_H

#include <stdbool.h>

#include "dispatch.h"

/*
 * Serves one connected frontend until it goes away (returns 0) or until
 * on_extra(), called whenever extra_fd is readable, asks to stop (returns 1).
 */
int vhost_user__serve(struct fs_dev *dev, int sock, int extra_fd,
		      bool (*on_extra)(void));

#endif
