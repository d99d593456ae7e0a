/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The passthrough file system: a FUSE server (fuse_server.h) of one host
 * directory. It sits above the protocol layer: passthrough.c gives
 * fuse_server.c its opcode table and the calls of struct fuse_fs_ops, and
 * uses struct req and its accessors; fuse_server.c knows nothing of it.
 */
#ifndef VHOST_USER_FS_PASSTHROUGH_H
#define VHOST_USER_FS_PASSTHROUGH_H

#include "options.h"

struct fuse_server;

/*
 * A server of the share opt->shared_dir, freed by fuse_server__free();
 * NULL if it cannot be set up (logged).
 */
struct fuse_server *passthrough__new(const struct options *opt);

/* Inodes and fds held by a server passthrough__new() made, for tests. */
void passthrough__counts(struct fuse_server *srv, unsigned long *inodes,
			 unsigned long *fds);

#endif
