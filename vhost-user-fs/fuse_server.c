// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE protocol layer: checks each request's header, decodes its
 * arguments for the handlers (arg_*, out_reserve), answers INIT, DESTROY,
 * INTERRUPT and the lock requests itself from its own table, proto_ops[],
 * and calls the file system's handler for everything else through the
 * opcode-indexed table the file system gave fuse_server__new() (the
 * passthrough's, in passthrough.c). It knows the file system only through
 * that struct fuse_fs_ops. Requests are untrusted bytes; replies are
 * written to a per-thread buffer.
 *
 * Credentials: objects are created with the caller's fsuid/fsgid, set per
 * thread with the raw setfsuid/setfsgid system calls (which, unlike
 * setuid, only affect the calling thread), so set-group-ID directories and
 * the caller's ownership work as on a local file system. Supplementary
 * groups are not forwarded (FUSE does not send them); the guest kernel has
 * already checked permissions (virtiofs mounts with default_permissions).
 *
 * Locks: FUSE_POSIX_LOCKS and FUSE_FLOCK_LOCKS are not negotiated, so the
 * guest kernel keeps POSIX and BSD locks locally; GETLK/SETLK/SETLKW get
 * ENOSYS if a driver sends them anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "fuse_server.h"

#define OUR_MINOR	38

struct fuse_server {
	const struct options *opt;
	const struct fuse_fs_ops *fs_ops;
	void *fs;

	/* what INIT negotiated */
	bool initialized;		/* atomic: INIT done, set by op_init */
	unsigned int minor;
	bool writeback;
	/* atomic: the frontend runs sync queues (fuse_server__set_sync()) */
	bool sync_frontend;
};

/* ---- scratch space ---- */

struct fuse_ctx *fuse_ctx__new(void)
{
	struct fuse_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->in_cap = FUSE_SERVER_MAX_WRITE + FUSE_SERVER_SLACK;
	c->out_cap = FUSE_SERVER_MAX_WRITE + FUSE_SERVER_SLACK;
	c->dirbuf_cap = 64 * 1024;
	c->in = malloc(c->in_cap);
	c->out = malloc(c->out_cap);
	c->dirbuf = malloc(c->dirbuf_cap);
	if (!c->in || !c->out || !c->dirbuf) {
		fuse_ctx__free(c);
		return NULL;
	}
	return c;
}

void fuse_ctx__free(struct fuse_ctx *c)
{
	if (!c)
		return;
	free(c->in);
	free(c->out);
	free(c->dirbuf);
	free(c);
}

/* ---- credentials ---- */

void creds_set(const struct fuse_in_header *ih)
{
	syscall(SYS_setfsgid, ih->gid);
	syscall(SYS_setfsuid, ih->uid);
}

void creds_restore(void)
{
	syscall(SYS_setfsuid, 0);
	syscall(SYS_setfsgid, 0);
}

/* ---- request decoding ---- */

const void *arg_take(struct req *r, size_t size)
{
	const void *p;

	if (r->arglen < size)
		return NULL;
	p = r->arg;
	r->arg += size;
	r->arglen -= size;
	return p;
}

/* A NUL-terminated string inside the remaining argument bytes. */
const char *arg_string(struct req *r)
{
	const char *s = (const char *)r->arg;
	const void *nul = memchr(r->arg, 0, r->arglen);

	if (!nul)
		return NULL;
	arg_take(r, (const uint8_t *)nul - r->arg + 1);
	return s;
}

static int name_check(const char *name)
{
	if (!name[0] || strchr(name, '/'))
		return -EINVAL;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	return strlen(name) > NAME_MAX ? -ENAMETOOLONG : 0;
}

/*
 * A name for a new or existing directory entry (not a lookup); NULL with
 * r->name_err set if it is missing or unsafe.
 */
const char *arg_name(struct req *r)
{
	const char *name = arg_string(r);

	r->name_err = name ? name_check(name) : -EINVAL;
	return r->name_err ? NULL : name;
}

void *out_reserve(struct req *r, size_t size)
{
	void *p;

	if (r->out_len + size > r->out_max)
		return NULL;
	p = r->out + r->out_len;
	memset(p, 0, size);
	r->out_len += size;
	return p;
}

/* ---- the protocol's own operations ---- */

static int op_init(struct req *r)
{
	const struct fuse_init_in *in = arg_take(r, 16);
	struct fuse_server *s = r->srv;
	struct fuse_init_out *o;
	uint32_t want;
	size_t size;

	if (!in)
		return -EINVAL;
	if (in->major < 7)
		return -EPROTO;
	o = out_reserve(r, sizeof(*o));
	if (!o)
		return -EIO;
	o->major = FUSE_KERNEL_VERSION;
	o->minor = OUR_MINOR;
	if (in->major > 7) {
		/* the kernel retries with our major */
		r->out_len = FUSE_COMPAT_INIT_OUT_SIZE;
		return 0;
	}
	if (in->minor < 13)
		return -EPROTO;
	s->minor = in->minor < OUR_MINOR ? in->minor : OUR_MINOR;
	o->minor = s->minor;

	want = FUSE_ASYNC_READ | FUSE_ATOMIC_O_TRUNC | FUSE_EXPORT_SUPPORT |
		FUSE_BIG_WRITES | FUSE_AUTO_INVAL_DATA | FUSE_DO_READDIRPLUS |
		FUSE_READDIRPLUS_AUTO | FUSE_ASYNC_DIO | FUSE_PARALLEL_DIROPS |
		FUSE_MAX_PAGES | FUSE_CACHE_SYMLINKS;
	if (s->opt->writeback)
		want |= FUSE_WRITEBACK_CACHE;
	/*
	 * With FUSE_ASYNC_DIO the guest sends even a waiting task's O_DIRECT
	 * I/O as background requests, which a driver keeps off sync queues:
	 * a sync frontend gets them as requests it waits for instead.
	 */
	if (s->opt->no_async_dio ||
	    __atomic_load_n(&s->sync_frontend, __ATOMIC_ACQUIRE))
		want &= ~FUSE_ASYNC_DIO;
	o->flags = in->flags & want;
	s->writeback = o->flags & FUSE_WRITEBACK_CACHE;
	o->max_readahead = in->max_readahead;
	o->max_background = 64;
	o->congestion_threshold = 48;
	o->max_write = FUSE_SERVER_MAX_WRITE;
	o->time_gran = 1;
	o->max_pages = FUSE_SERVER_MAX_PAGES;
	size = s->minor < 23 ? FUSE_COMPAT_22_INIT_OUT_SIZE : sizeof(*o);
	r->out_len = size;
	/* release: what INIT negotiated is visible to every queue's thread */
	__atomic_store_n(&s->initialized, true, __ATOMIC_RELEASE);
	return 0;
}

static int op_destroy(struct req *r)
{
	fuse_server__reset(r->srv);
	return 0;
}

/* INTERRUPT: requests are not interrupted, and it gets no reply. */
static int op_ignore(struct req *r)
{
	(void)r;
	return 0;
}

/* POSIX locks are not negotiated (see the top of this file). */
static int op_nosys(struct req *r)
{
	(void)r;
	return -ENOSYS;
}

/* ---- the opcode tables ---- */

/* Only the protocol's own INIT: served before INIT is done. */
#define OP_BEFORE_INIT	(1 << 2)

/* The opcodes the protocol answers itself, whatever the file system has. */
static const struct fuse_op proto_ops[] = {
	[FUSE_INIT] = FUSE_NODELESS_OP(op_init, OP_BEFORE_INIT),
	[FUSE_DESTROY] = FUSE_NODELESS_OP(op_destroy, 0),
	[FUSE_INTERRUPT] = FUSE_NODELESS_OP(op_ignore, FUSE_OP_NO_REPLY),
	[FUSE_GETLK] = FUSE_NODELESS_OP(op_nosys, 0),
	[FUSE_SETLK] = FUSE_NODELESS_OP(op_nosys, 0),
	[FUSE_SETLKW] = FUSE_NODELESS_OP(op_nosys, 0),
};

/* The opcode's entry, or NULL for one neither table has. */
static const struct fuse_op *fuse_op_of(const struct fuse_server *s,
					uint32_t opcode)
{
	const struct fuse_op *op;

	if (opcode < sizeof(proto_ops) / sizeof(proto_ops[0]) &&
	    proto_ops[opcode].op)
		return &proto_ops[opcode];
	if (opcode >= s->fs_ops->nops)
		return NULL;
	op = &s->fs_ops->ops[opcode];
	return op->op ? op : NULL;
}

static int handle(struct req *r, const struct fuse_op *op)
{
	struct fuse_server *s = r->srv;
	struct inode *ino;
	int err;

	if (op && op->flags & OP_BEFORE_INIT)
		return op->op(r);
	if (!__atomic_load_n(&s->initialized, __ATOMIC_ACQUIRE))
		return -EIO;
	if (!op)
		return -ENOSYS;
	if (!(op->flags & FUSE_OP_INODE))
		return op->op(r);
	ino = s->fs_ops->inode_get(s->fs, r->ih->nodeid, &err);
	if (!ino)
		return -err;
	err = op->inode_op(r, ino);
	s->fs_ops->inode_put(s->fs, ino);
	return err;
}

size_t fuse_server__handle(struct fuse_server *srv, struct fuse_ctx *ctx,
			   size_t in_len, size_t out_max, int *error)
{
	const struct fuse_in_header *ih = (const void *)ctx->in;
	struct fuse_out_header *oh = (void *)ctx->out;
	struct req r = { .srv = srv, .fs = srv->fs, .ctx = ctx, .ih = ih };
	const struct fuse_op *op;
	size_t extlen;
	int err;

	if (out_max > ctx->out_cap)
		out_max = ctx->out_cap;
	*error = 0;
	ctx->would_block = false;
	if (in_len < sizeof(*ih)) {
		/* not even a unique to answer to */
		*error = EINVAL;
		if (out_max < sizeof(*oh))
			return 0;
		memset(oh, 0, sizeof(*oh));
		oh->len = sizeof(*oh);
		oh->error = -EINVAL;
		return sizeof(*oh);
	}
	op = fuse_op_of(srv, ih->opcode);
	extlen = (size_t)ih->total_extlen * 8;
	if (ih->len != in_len || in_len > ctx->in_cap ||
	    in_len - sizeof(*ih) < extlen) {
		err = -EINVAL;
		goto reply;
	}
	r.arg = ctx->in + sizeof(*ih);
	r.arglen = in_len - sizeof(*ih) - extlen;
	r.out = ctx->out + sizeof(*oh);
	r.out_max = out_max > sizeof(*oh) ? out_max - sizeof(*oh) : 0;
	err = handle(&r, op);
	if (ctx->would_block)
		return 0;
reply:
	if (op && op->flags & FUSE_OP_NO_REPLY)
		return 0;
	if (err)
		r.out_len = 0;
	*error = err ? -err : 0;
	if (err && srv->opt->debug)
		fprintf(stderr, "vhost-user-fs: opcode %u nodeid %llu: %s\n",
			ih->opcode, (unsigned long long)ih->nodeid,
			strerror(-err));
	if (out_max < sizeof(*oh)) {
		*error = *error ? *error : EIO;
		return 0;
	}
	oh->len = sizeof(*oh) + r.out_len;
	oh->error = err;
	oh->unique = ih->unique;
	return oh->len;
}

void fuse_server__reset(struct fuse_server *s)
{
	s->fs_ops->reset(s->fs);
	__atomic_store_n(&s->initialized, false, __ATOMIC_RELEASE);
}

void fuse_server__set_sync(struct fuse_server *s, bool sync)
{
	__atomic_store_n(&s->sync_frontend, sync, __ATOMIC_RELEASE);
}

bool fuse_server__writeback(const struct fuse_server *s)
{
	return s->writeback;
}

struct fuse_server *fuse_server__new(const struct options *opt,
				     const struct fuse_fs_ops *ops, void *fs)
{
	struct fuse_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opt = opt;
	s->fs_ops = ops;
	s->fs = fs;
	return s;
}

void *fuse_server__fs(struct fuse_server *s)
{
	return s->fs;
}

void fuse_server__free(struct fuse_server *s)
{
	if (!s)
		return;
	fuse_server__reset(s);
	s->fs_ops->destroy(s->fs);
	free(s);
}
