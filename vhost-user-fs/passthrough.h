/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam inside the FUSE server, which keeps its protocol apart from its
 * passthrough file system as virtiofsd does. Internal to those two files;
 * the rest of the daemon sees fuse_server.h only.
 *
 * fuse_server.c, the protocol layer, owns the request (struct req): the
 * header checks, the argument and reply accessors below, per-request
 * credentials, INIT and DESTROY, the opcode table fuse_ops[], and the
 * lookup of the inode a request's nodeid names before its handler runs.
 *
 * passthrough.c, the passthrough file system, owns the host side: the
 * share's fds, the inode and open-file tables, every check on host objects
 * (confinement, killpriv, xattr names, device nodes) and the handlers.
 *
 * Dependencies point one way: of fuse_server.c, passthrough.c uses only
 * struct req and the accessors below; fuse_server.c reaches passthrough.c
 * only through the handlers in its table and passthrough__init/reset/destroy.
 */
#ifndef VHOST_USER_FS_PASSTHROUGH_H
#define VHOST_USER_FS_PASSTHROUGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "file_table.h"
#include "fuse_server.h"
#include "inode.h"
#include "options.h"

struct fuse_in_header;

struct fuse_server {
	const struct options *opt;

	/* fuse_server.c's: what INIT negotiated */
	bool initialized;		/* atomic: INIT done, set by op_init */
	unsigned int minor;
	bool writeback;
	/* atomic: the frontend runs sync queues (fuse_server__set_sync()) */
	bool sync_frontend;

	/* passthrough.c's, set up by passthrough__init() */
	struct inode_table it;
	int root_rd_fd;			/* O_RDONLY on the share, for syncfs */
	int proc_fd;
	uint64_t timeout;		/* entry and attr, seconds */
	/*
	 * FOPEN_NOFLUSH on files of the share root's file system (root_dev:
	 * a submount may be one with a ->flush), or on every file with
	 * --flush=never. Set at creation.
	 */
	bool noflush, noflush_all;
	dev_t root_dev;
	struct file_table ft;
};

/*
 * One request, set up by fuse_server__handle(). Handlers read the fields
 * and write out_len, or reserve their reply with out_reserve().
 */
struct req {
	struct fuse_server *srv;
	struct fuse_ctx *ctx;
	const struct fuse_in_header *ih;
	const uint8_t *arg;
	size_t arglen;
	uint8_t *out;			/* payload, after the out header */
	size_t out_max;			/* payload room */
	size_t out_len;
	int name_err;			/* why arg_name() failed */
};

/* ---- fuse_server.c: the request's accessors ---- */

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

/* ---- passthrough.c: the share, and a handler per opcode ---- */

int passthrough__init(struct fuse_server *s);
void passthrough__reset(struct fuse_server *s);
void passthrough__destroy(struct fuse_server *s);

/* For requests that name no inode, or their own nodeids. */
int op_forget(struct req *r);
int op_batch_forget(struct req *r);
int op_read(struct req *r);
int op_write(struct req *r);
int op_release(struct req *r);
int op_releasedir(struct req *r);
int op_fsync(struct req *r);
int op_fsyncdir(struct req *r);
int op_flush(struct req *r);
int op_fallocate(struct req *r);
int op_lseek(struct req *r);
int op_copy_file_range(struct req *r);
int op_syncfs(struct req *r);

/* Given the inode of the request's nodeid, held while they run. */
int op_lookup(struct req *r, struct inode *dir);
int op_getattr(struct req *r, struct inode *ino);
int op_setattr(struct req *r, struct inode *ino);
int op_readlink(struct req *r, struct inode *ino);
int op_symlink(struct req *r, struct inode *dir);
int op_mknod(struct req *r, struct inode *dir);
int op_mkdir(struct req *r, struct inode *dir);
int op_unlink(struct req *r, struct inode *dir);
int op_rmdir(struct req *r, struct inode *dir);
int op_rename(struct req *r, struct inode *dir);
int op_rename2(struct req *r, struct inode *dir);
int op_link(struct req *r, struct inode *newdir);
int op_open(struct req *r, struct inode *ino);
int op_create(struct req *r, struct inode *dir);
int op_tmpfile(struct req *r, struct inode *dir);
int op_statfs(struct req *r, struct inode *ino);
int op_setxattr(struct req *r, struct inode *ino);
int op_getxattr(struct req *r, struct inode *ino);
int op_listxattr(struct req *r, struct inode *ino);
int op_removexattr(struct req *r, struct inode *ino);
int op_opendir(struct req *r, struct inode *ino);
int op_readdir(struct req *r, struct inode *dir);
int op_readdirplus(struct req *r, struct inode *dir);
int op_access(struct req *r, struct inode *ino);

#endif
