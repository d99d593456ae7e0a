/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhost-user backend side: the socket protocol, the memory table and the
 * backend (a.k.a. slave) channel.
 */
#ifndef VHOST_USER_FS_VHOST_USER_H
#define VHOST_USER_FS_VHOST_USER_H

#include <stdbool.h>

#include "options.h"

struct fuse_server;

struct vu_dev;

/* The device, with no frontend yet; NULL if out of memory. */
struct vu_dev *vhost_user__new(const struct options *opt,
			       struct fuse_server *srv);

/*
 * Serves one connected frontend until it goes away (returns 0) or until
 * on_extra(), called whenever extra_fd is readable, asks to stop (returns 1).
 */
int vhost_user__serve(struct vu_dev *vu, int sock, int extra_fd,
		      bool (*on_extra)(void));

#endif
