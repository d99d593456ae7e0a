/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FUSE passthrough for one host directory. Requests are untrusted bytes;
 * replies are written to a per-thread buffer. Inside: the protocol layer,
 * fuse_server.c, and the passthrough file system, passthrough.c, with
 * passthrough.h between them.
 */
#ifndef VHOST_USER_FS_FUSE_SERVER_H
#define VHOST_USER_FS_FUSE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#define FUSE_SERVER_MAX_WRITE	(1024 * 1024)
#define FUSE_SERVER_MAX_PAGES	256
/* Room for the headers of the largest request around its payload. */
#define FUSE_SERVER_SLACK	4096

struct fuse_server;

/* Per-thread scratch space, so the steady state allocates nothing. */
struct fuse_ctx {
	uint8_t *in;
	size_t in_cap;
	uint8_t *out;
	size_t out_cap;
	void *dirbuf;
	size_t dirbuf_cap;
	/*
	 * Set by the caller: the request runs inside a sync exit. A handler
	 * tries the non-blocking form of what it does (RWF_NOWAIT, an
	 * O_NONBLOCK open); if that would wait, it does nothing and sets
	 * would_block, and fuse_server__handle() makes no reply: the caller
	 * runs the request again where it may wait.
	 */
	bool nowait;
	bool would_block;
};

struct fuse_server *fuse_server__new(const struct options *opt);
void fuse_server__free(struct fuse_server *srv);
/* The frontend went away: forget every inode and close every file. */
void fuse_server__reset(struct fuse_server *srv);
/*
 * The frontend accepted sync queues (or no longer has them); INIT then
 * does not grant FUSE_ASYNC_DIO. Any thread.
 */
void fuse_server__set_sync(struct fuse_server *srv, bool sync);

struct fuse_ctx *fuse_ctx__new(void);
void fuse_ctx__free(struct fuse_ctx *ctx);

/*
 * ctx->in holds the first min(in_len, ctx->in_cap) bytes of a request whose
 * device-readable part was in_len bytes long. The reply goes to ctx->out and
 * never exceeds out_max bytes. Returns the reply length, 0 for no reply.
 * *error receives the reply's errno (0 on success).
 */
size_t fuse_server__handle(struct fuse_server *srv, struct fuse_ctx *ctx,
			   size_t in_len, size_t out_max, int *error);

/* Inodes and fds held, for tests. */
void fuse_server__counts(struct fuse_server *srv, unsigned long *inodes,
			 unsigned long *fds);

#endif
