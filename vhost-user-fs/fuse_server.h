/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FUSE protocol layer: requests are untrusted bytes, checked and
 * decoded here; replies are written to a per-thread buffer. It serves a
 * file system it knows only through struct fuse_fs_ops (the passthrough,
 * passthrough.c, gives one): an opcode-indexed table of handlers, which
 * use struct req and its accessors below, and what the protocol asks of
 * the file system as a whole. Dependencies point one way: the file system
 * includes this header, never the other way round.
 *
 * The rest of the daemon holds a struct fuse_server and uses the
 * fuse_server__* and fuse_ctx__* calls only.
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
struct fuse_in_header;
/* The file system's object a request's nodeid names; opaque here. */
struct inode;

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

/* ---- the file system's side ---- */

/*
 * One request, set up by fuse_server__handle(). Handlers read the fields
 * and write out_len, or reserve their reply with out_reserve().
 */
struct req {
	struct fuse_server *srv;
	void *fs;			/* the file system's, from fuse_server__new() */
	struct fuse_ctx *ctx;
	const struct fuse_in_header *ih;
	const uint8_t *arg;
	size_t arglen;
	uint8_t *out;			/* payload, after the out header */
	size_t out_max;			/* payload room */
	size_t out_len;
	int name_err;			/* why arg_name() failed */
};

/* The next size argument bytes, or NULL if fewer are left. */
const void *arg_take(struct req *r, size_t size);
/* A NUL-terminated string, or NULL. */
const char *arg_string(struct req *r);
/* A checked name for a new or existing entry, or NULL with r->name_err. */
const char *arg_name(struct req *r);
/* size zeroed reply bytes after those reserved so far, or NULL. */
void *out_reserve(struct req *r, size_t size);
/* The caller's fsuid/fsgid on this thread, until creds_restore(). */
void creds_set(const struct fuse_in_header *ih);
void creds_restore(void);
/* What INIT negotiated: the guest's writeback cache. */
bool fuse_server__writeback(const struct fuse_server *srv);

enum {
	FUSE_OP_INODE = 1 << 0,		/* inode_op, given the inode of ih->nodeid */
	FUSE_OP_NO_REPLY = 1 << 1,	/* never answered, not even with an error */
};

/* A file system's handler of one opcode: 0 or -errno. */
struct fuse_op {
	union {
		int (*inode_op)(struct req *r, struct inode *ino);
		int (*op)(struct req *r);	/* no inode, or its own nodeids */
	};
	unsigned int flags;
};

#define FUSE_INODE_OP(fn)	{ .inode_op = (fn), .flags = FUSE_OP_INODE }
#define FUSE_NODELESS_OP(fn, f)	{ .op = (fn), .flags = (f) }

/*
 * What the protocol layer calls of the file system, with the fs pointer
 * given to fuse_server__new(). The protocol answers INIT, DESTROY,
 * INTERRUPT and the lock requests itself; every other opcode without a
 * handler in ops[] gets ENOSYS.
 */
struct fuse_fs_ops {
	const struct fuse_op *ops;	/* indexed by opcode */
	size_t nops;
	/* The inode ih->nodeid names, held until inode_put(); NULL, *err. */
	struct inode *(*inode_get)(void *fs, uint64_t nodeid, int *err);
	void (*inode_put)(void *fs, struct inode *ino);
	/* DESTROY, or the frontend went away: forget every inode and file. */
	void (*reset)(void *fs);
	/* fuse_server__free(), after reset(): the file system goes too. */
	void (*destroy)(void *fs);
};

/* A server of fs, which fuse_server__free() destroys; NULL if no memory. */
struct fuse_server *fuse_server__new(const struct options *opt,
				     const struct fuse_fs_ops *ops, void *fs);
/* The fs given to fuse_server__new(). */
void *fuse_server__fs(struct fuse_server *srv);

/* ---- the daemon's side ---- */

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

#endif
