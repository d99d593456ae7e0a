// SPDX-License-Identifier: GPL-2.0
/*
 * The passthrough file system: each FUSE operation done on the share's
 * host files, one handler (op_*) per opcode in its opcode table,
 * passthrough_ops[], which it gives the protocol layer, fuse_server.c, in
 * passthrough__new(). It owns the host side: the share's fds, the inode
 * and open-file tables, every check on host objects (confinement,
 * killpriv, xattr names, device nodes). Of the protocol layer it uses
 * struct req and the accessors of fuse_server.h; the protocol layer
 * reaches it only through that table and struct fuse_fs_ops, and knows
 * nothing else of it. It stays one file, though long, because its
 * handlers all lean on the same static confinement and killpriv helpers
 * (proc_open, do_lookup, fsetid_*), which a split would have to export.
 *
 * Confinement: every object is reached from an inode's O_PATH fd and a
 * single, checked name component with an *at() call; symlinks are never
 * followed (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW, or AT_EMPTY_PATH on our own
 * fd). The only paths built here are /proc/self/fd/N re-opens of fds we own,
 * relative to an fd on /proc/self/fd or to the working directory.
 *
 * Flush: with no locks to drop (see Locks at the top of fuse_server.c), a
 * FLUSH is only the host file system's ->flush (close() of a duplicate
 * fd). Where that is known to be absent, opens answer FOPEN_NOFLUSH and
 * the guest does not send FLUSH on close (--flush, flush_mode()).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/fuse.h>
#include <linux/magic.h>

#include "file_table.h"
#include "fuse_server.h"
#include "inode.h"
#include "passthrough.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* The share being served: fuse_server__new()'s fs, a request's r->fs. */
struct passthrough {
	const struct options *opt;
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

/* The share a request is for. */
static struct passthrough *pt(const struct req *r)
{
	return r->fs;
}

/* ---- killpriv ---- */

/*
 * Killpriv: a write, truncate, fallocate or copy_file_range through the
 * device clears setuid (and setgid with group execute) as the host kernel
 * does for a writer without CAP_FSETID, whoever the guest's caller is: the
 * daemon's root must not keep a host setuid file setuid while the guest
 * changes its contents. Capabilities are per thread, so this drops
 * CAP_FSETID from the calling thread's effective set only, as virtiofsd
 * does, and raises it again afterwards (it stays permitted).
 */
static bool fsetid_drop(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) ||
	    !(d[0].effective & (1u << CAP_FSETID)))
		return false;
	d[0].effective &= ~(1u << CAP_FSETID);
	return !syscall(SYS_capset, &h, d);
}

/*
 * Only files with something to kill pay for the two capset calls. A
 * chmod racing the write can keep a bit the guest could set again anyway.
 */
static bool fsetid_drop_for(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !(st.st_mode & (S_ISUID | S_ISGID)))
		return false;
	return fsetid_drop();
}

static void fsetid_restore(bool dropped)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (!dropped || syscall(SYS_capget, &h, d))
		return;
	d[0].effective |= 1u << CAP_FSETID;
	syscall(SYS_capset, &h, d);
}

/* ---- host objects ---- */

/*
 * For the path-based xattr calls. After pivot_root no absolute path
 * reaches /proc: the sandbox then leaves the working directory there.
 */
static void proc_name(const struct passthrough *s, char *buf, size_t len,
		      int fd)
{
	snprintf(buf, len, s->opt->proc_is_cwd ? "%d" : "/proc/self/fd/%d",
		 fd);
}

/*
 * Opens an inode's object for I/O through /proc/self/fd. The fd's object
 * is checked first, whatever the table believes: only the regular file or
 * directory the entry names is ever opened, never a device, FIFO or socket.
 */
static int proc_open(struct passthrough *s, struct inode *ino, int flags)
{
	struct stat st;
	char path[32];
	int fd;

	if (fstat(inode__fd(ino), &st))
		return -errno;
	if (!inode__is(ino, &st))
		return -ESTALE;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return -ENXIO;
	snprintf(path, sizeof(path), "%d", inode__fd(ino));
	fd = openat(s->proc_fd, path, flags);
	return fd < 0 ? -errno : fd;
}

/* ---- attributes and entries ---- */

static void fill_attr(struct fuse_attr *a, const struct stat *st)
{
	a->ino = st->st_ino;
	a->size = st->st_size;
	a->blocks = st->st_blocks;
	a->atime = st->st_atim.tv_sec;
	a->mtime = st->st_mtim.tv_sec;
	a->ctime = st->st_ctim.tv_sec;
	a->atimensec = st->st_atim.tv_nsec;
	a->mtimensec = st->st_mtim.tv_nsec;
	a->ctimensec = st->st_ctim.tv_nsec;
	a->mode = st->st_mode;
	a->nlink = st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->rdev = st->st_rdev;
	a->blksize = st->st_blksize;
}

static int stat_fd(int fd, struct stat *st)
{
	if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -errno;
	return 0;
}

/*
 * Looks name up in dir and fills e, counting one guest reference.
 * "." and ".." are allowed here (NFS export asks for them); ".." at the
 * root stays at the root, as it would for a chroot.
 */
static int do_lookup(struct passthrough *s, struct inode *dir,
		     const char *name, struct fuse_entry_out *e)
{
	struct inode *ino;
	struct stat st;
	int fd, err;

	if (!name[0] || strchr(name, '/'))
		return -EINVAL;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	if (!strcmp(name, "..") && inode__nodeid(dir) == FUSE_ROOT_ID)
		name = ".";
	fd = openat(inode__fd(dir), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = stat_fd(fd, &st);
	if (err) {
		close(fd);
		return err;
	}
	ino = inode__lookup_fd(&s->it, fd, &st, &err);
	if (!ino)
		return -err;
	memset(e, 0, sizeof(*e));
	e->nodeid = inode__nodeid(ino);
	e->generation = 0;
	e->entry_valid = s->timeout;
	e->attr_valid = s->timeout;
	fill_attr(&e->attr, &st);
	inode__put(&s->it, ino);
	return 0;
}

/* ---- handlers ---- */

/*
 * What a request on an open file does with it: fd is the file's, in the
 * request's fixed argument, data what the handler passes along (its
 * reply, its inode).
 */
typedef int open_file_fn(struct req *r, int fd, const void *in, void *data);

/*
 * The requests on an open file, once the handler has taken and checked its
 * fixed argument in: fn on the fd of the file (or directory, is_dir) that
 * handle fh names, held meanwhile so that a concurrent RELEASE cannot close
 * it; the file table's -EBADF if fh names none.
 */
static int with_open_file(struct req *r, uint64_t fh, bool is_dir,
			  open_file_fn *fn, const void *in, void *data)
{
	int fd = file__get(&pt(r)->ft, fh, is_dir);
	int err;

	if (fd < 0)
		return fd;
	err = fn(r, fd, in, data);
	file__put(&pt(r)->ft, fh);
	return err;
}

/* A sync exit's handler found that it would wait: see struct fuse_ctx. */
static int would_block(struct req *r)
{
	r->ctx->would_block = true;
	return 0;
}

static int op_lookup(struct req *r, struct inode *dir)
{
	const char *name = arg_string(r);
	struct fuse_entry_out *e = out_reserve(r, sizeof(*e));

	if (!name)
		return -EINVAL;
	if (!e)
		return -EIO;
	return do_lookup(pt(r), dir, name, e);
}

static int op_forget(struct req *r)
{
	const struct fuse_forget_in *in = arg_take(r, sizeof(*in));

	if (in)
		inode__forget(&pt(r)->it, r->ih->nodeid, in->nlookup);
	return 0;
}

static int op_batch_forget(struct req *r)
{
	const struct fuse_batch_forget_in *in = arg_take(r, sizeof(*in));
	uint32_t i;

	if (!in)
		return 0;
	for (i = 0; i < in->count; i++) {
		const struct fuse_forget_one *one = arg_take(r, sizeof(*one));

		if (!one)
			break;
		inode__forget(&pt(r)->it, one->nodeid, one->nlookup);
	}
	return 0;
}

static int reply_attr(struct req *r, const struct stat *st)
{
	struct fuse_attr_out *a = out_reserve(r, sizeof(*a));

	if (!a)
		return -EIO;
	a->attr_valid = pt(r)->timeout;
	fill_attr(&a->attr, st);
	return 0;
}

static int op_getattr(struct req *r, struct inode *ino)
{
	const struct fuse_getattr_in *in = arg_take(r, sizeof(*in));
	struct stat st;
	int err;

	if (in && (in->getattr_flags & FUSE_GETATTR_FH)) {
		int fd = file__get(&pt(r)->ft, in->fh, false);

		if (fd >= 0) {
			err = fstat(fd, &st) ? -errno : 0;
			file__put(&pt(r)->ft, in->fh);
			return err ? err : reply_attr(r, &st);
		}
	}
	err = stat_fd(inode__fd(ino), &st);
	return err ? err : reply_attr(r, &st);
}

static int setattr_size(struct passthrough *s, struct inode *ino, int fd,
			uint64_t size)
{
	int err = 0;

	bool dropped;

	if (size > (uint64_t)LLONG_MAX)
		return -EFBIG;
	if (fd < 0) {
		if (S_ISDIR(inode__type(ino)))
			return -EISDIR;
		if (!S_ISREG(inode__type(ino)))
			return -EINVAL;
	}
	dropped = fd >= 0 ? fsetid_drop_for(fd) : fsetid_drop();
	if (fd >= 0) {
		err = ftruncate(fd, size) ? -errno : 0;
	} else {
		fd = proc_open(s, ino, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			err = fd;
		} else {
			if (ftruncate(fd, size))
				err = -errno;
			close(fd);
		}
	}
	fsetid_restore(dropped);
	return err;
}

/* SETATTR's changes, through fd if the guest named its open file, else -1. */
static int setattr_fd(struct req *r, int fd, const void *arg, void *data)
{
	const struct fuse_setattr_in *in = arg;
	struct inode *ino = data;
	struct passthrough *s = pt(r);
	int ifd = inode__fd(ino), err = 0;
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "%d", ifd);

	if (in->valid & FATTR_MODE) {
		if (fd >= 0 ? fchmod(fd, in->mode) :
		    fchmodat(s->proc_fd, path, in->mode, 0)) {
			err = -errno;
			goto out;
		}
	}
	if (in->valid & (FATTR_UID | FATTR_GID)) {
		uid_t uid = (in->valid & FATTR_UID) ? in->uid : (uid_t)-1;
		gid_t gid = (in->valid & FATTR_GID) ? in->gid : (gid_t)-1;

		if (fchownat(ifd, "", uid, gid,
			     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			goto out;
		}
	}
	if (in->valid & FATTR_SIZE) {
		err = setattr_size(s, ino, fd, in->size);
		if (err)
			goto out;
	}
	if (in->valid & (FATTR_ATIME | FATTR_MTIME)) {
		struct timespec ts[2] = {
			{ .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT },
		};

		if (in->valid & FATTR_ATIME_NOW)
			ts[0].tv_nsec = UTIME_NOW;
		else if (in->valid & FATTR_ATIME)
			ts[0] = (struct timespec){ in->atime, in->atimensec };
		if (in->valid & FATTR_MTIME_NOW)
			ts[1].tv_nsec = UTIME_NOW;
		else if (in->valid & FATTR_MTIME)
			ts[1] = (struct timespec){ in->mtime, in->mtimensec };
		if (fd >= 0 ? futimens(fd, ts) :
		    utimensat(ifd, "", ts, AT_EMPTY_PATH)) {
			err = -errno;
			goto out;
		}
	}
	err = fd >= 0 ? (fstat(fd, &st) ? -errno : 0) : stat_fd(ifd, &st);
	if (!err)
		err = reply_attr(r, &st);
out:
	return err;
}

static int op_setattr(struct req *r, struct inode *ino)
{
	const struct fuse_setattr_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	if (pt(r)->opt->readonly)
		return -EROFS;
	if (in->valid & FATTR_FH)
		return with_open_file(r, in->fh, false, setattr_fd, in, ino);
	return setattr_fd(r, -1, in, ino);
}

static int op_readlink(struct req *r, struct inode *ino)
{
	size_t max = r->out_max < PATH_MAX ? r->out_max : PATH_MAX;
	ssize_t n = readlinkat(inode__fd(ino), "", (char *)r->out, max);

	if (n < 0)
		return -errno;
	r->out_len = n;
	return 0;
}

/* After a successful create-type call: look the new name up for the reply. */
static int reply_new_entry(struct req *r, struct inode *dir, const char *name)
{
	struct fuse_entry_out *e = out_reserve(r, sizeof(*e));

	if (!e)
		return -EIO;
	return do_lookup(pt(r), dir, name, e);
}

static int op_symlink(struct req *r, struct inode *dir)
{
	const char *name = arg_name(r);
	const char *target = arg_string(r);
	int err = 0;

	if (!name)
		return r->name_err;
	if (!target)
		return -EINVAL;
	if (pt(r)->opt->readonly)
		return -EROFS;
	creds_set(r->ih);
	if (symlinkat(target, inode__fd(dir), name))
		err = -errno;
	creds_restore();
	return err ? err : reply_new_entry(r, dir, name);
}

/* MKNOD and MKDIR after their fixed part: a name, made as the caller. */
static int make_node(struct req *r, struct inode *dir, bool is_dir,
		     mode_t mode, dev_t rdev)
{
	const char *name = arg_name(r);
	int fd = inode__fd(dir), err = 0;

	if (!name)
		return r->name_err;
	if (pt(r)->opt->readonly)
		return -EROFS;
	creds_set(r->ih);
	if (is_dir ? mkdirat(fd, name, mode) : mknodat(fd, name, mode, rdev))
		err = -errno;
	creds_restore();
	return err ? err : reply_new_entry(r, dir, name);
}

static int op_mknod(struct req *r, struct inode *dir)
{
	const struct fuse_mknod_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	/* a device node in the share is a way into the host's devices */
	if ((S_ISBLK(in->mode) || S_ISCHR(in->mode)) &&
	    !pt(r)->opt->allow_devices)
		return pt(r)->opt->readonly ? -EROFS : -EPERM;
	return make_node(r, dir, false, in->mode, in->rdev);
}

static int op_mkdir(struct req *r, struct inode *dir)
{
	const struct fuse_mkdir_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	return make_node(r, dir, true, in->mode, 0);
}

/* name in dir is about to be removed or replaced: 0 or -ENFILE. */
static int pin_victim(struct passthrough *s, int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (S_ISDIR(st.st_mode) || st.st_nlink <= 1)
		return inode__pin_unlinked(&s->it, &st);
	return 0;
}

static int unlink_common(struct req *r, struct inode *dir, int flags)
{
	const char *name = arg_name(r);

	int err;

	if (!name)
		return r->name_err;
	if (pt(r)->opt->readonly)
		return -EROFS;
	err = pin_victim(pt(r), inode__fd(dir), name);
	if (err)
		return err;
	return unlinkat(inode__fd(dir), name, flags) ? -errno : 0;
}

static int op_unlink(struct req *r, struct inode *dir)
{
	return unlink_common(r, dir, 0);
}

static int op_rmdir(struct req *r, struct inode *dir)
{
	return unlink_common(r, dir, AT_REMOVEDIR);
}

static int do_rename(struct req *r, struct inode *dir, uint64_t newdir_id,
		     unsigned int flags)
{
	const char *oldname, *newname;
	struct inode *newdir;
	int err = 0;

	oldname = arg_name(r);
	if (!oldname)
		return r->name_err;
	newname = arg_name(r);
	if (!newname)
		return r->name_err;
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if (pt(r)->opt->readonly)
		return -EROFS;
	newdir = inode__get(&pt(r)->it, newdir_id, &err);
	if (!newdir)
		return -err;
	if (!(flags & RENAME_EXCHANGE))
		err = pin_victim(pt(r), inode__fd(newdir), newname);
	if (err) {
		/* nothing renamed */
	} else if (flags) {
		if (syscall(SYS_renameat2, inode__fd(dir), oldname,
			    inode__fd(newdir), newname, flags))
			err = -errno;
	} else if (renameat(inode__fd(dir), oldname, inode__fd(newdir),
			    newname)) {
		err = -errno;
	}
	inode__put(&pt(r)->it, newdir);
	return err;
}

static int op_rename(struct req *r, struct inode *dir)
{
	const struct fuse_rename_in *in = arg_take(r, sizeof(*in));

	return in ? do_rename(r, dir, in->newdir, 0) : -EINVAL;
}

static int op_rename2(struct req *r, struct inode *dir)
{
	const struct fuse_rename2_in *in = arg_take(r, sizeof(*in));

	return in ? do_rename(r, dir, in->newdir, in->flags) : -EINVAL;
}

static int op_link(struct req *r, struct inode *newdir)
{
	const struct fuse_link_in *in = arg_take(r, sizeof(*in));
	const char *name = arg_name(r);
	struct inode *old;
	int err = 0;

	if (!in)
		return -EINVAL;
	if (!name)
		return r->name_err;
	if (pt(r)->opt->readonly)
		return -EROFS;
	old = inode__get(&pt(r)->it, in->oldnodeid, &err);
	if (!old)
		return -err;
	if (S_ISDIR(inode__type(old))) {
		err = -EPERM;
	} else {
		/*
		 * Through /proc/self/fd, not AT_EMPTY_PATH: that needs
		 * CAP_DAC_READ_SEARCH (or, since Linux 6.10, the opener's
		 * credentials), which the sandbox does not keep.
		 */
		char path[32];

		snprintf(path, sizeof(path), "%d", inode__fd(old));
		if (linkat(pt(r)->proc_fd, path, inode__fd(newdir), name,
			   AT_SYMLINK_FOLLOW))
			err = -errno;
	}
	inode__put(&pt(r)->it, old);
	return err ? err : reply_new_entry(r, newdir, name);
}

/* Host open flags for a guest's, or -errno. */
static int open_flags(struct req *r, uint32_t flags)
{
	/*
	 * O_NOFOLLOW would refuse the /proc/self/fd link we re-open through;
	 * OPEN of a symlink inode is refused before we get here.
	 */
	int f = flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT | O_NOFOLLOW);

	if (pt(r)->opt->readonly &&
	    ((f & O_ACCMODE) != O_RDONLY || (f & O_TRUNC)))
		return -EROFS;
	/*
	 * With the writeback cache the guest reads around partial writes
	 * and handles append itself.
	 */
	if (fuse_server__writeback(r->srv)) {
		if ((f & O_ACCMODE) == O_WRONLY)
			f = (f & ~O_ACCMODE) | O_RDWR;
		f &= ~O_APPEND;
	}
	return f | O_CLOEXEC;
}

static void fill_open_out(struct passthrough *s, struct fuse_open_out *o,
			  uint64_t fh, const struct inode *ino)
{
	bool is_dir = S_ISDIR(inode__type(ino));

	o->fh = fh;
	o->open_flags = 0;
	if (s->opt->cache == CACHE_NEVER && !is_dir)
		o->open_flags |= FOPEN_DIRECT_IO;
	if (s->opt->cache == CACHE_ALWAYS)
		o->open_flags |= is_dir ? FOPEN_CACHE_DIR | FOPEN_KEEP_CACHE :
			FOPEN_KEEP_CACHE;
	/* the FUSE core sends no FLUSH for directories anyway */
	if (!is_dir && (s->noflush_all ||
			(s->noflush && inode__dev(ino) == s->root_dev)))
		o->open_flags |= FOPEN_NOFLUSH;
}

static int op_open(struct req *r, struct inode *ino)
{
	const struct fuse_open_in *in = arg_take(r, sizeof(*in));
	struct fuse_open_out *o = out_reserve(r, sizeof(*o));
	uint64_t fh;
	int flags, fd, err;
	bool nb;

	if (!in)
		return -EINVAL;
	if (!o)
		return -EIO;
	if (S_ISLNK(inode__type(ino)))
		return -ELOOP;
	if (S_ISDIR(inode__type(ino)) && (in->flags & O_ACCMODE) != O_RDONLY)
		return -EISDIR;
	/*
	 * The guest opens device nodes, FIFOs and sockets with its own
	 * drivers; opening them here would reach the host's devices.
	 */
	if (!S_ISREG(inode__type(ino)) && !S_ISDIR(inode__type(ino)))
		return -ENXIO;
	flags = open_flags(r, in->flags);
	if (flags < 0)
		return flags;
	/*
	 * Inside a sync exit an open that must break another's lease would
	 * wait for its holder; with O_NONBLOCK it fails at once (the break
	 * begun), and the flag is cleared again where the guest did not ask.
	 */
	nb = r->ctx->nowait && S_ISREG(inode__type(ino)) &&
	     !(flags & O_NONBLOCK);
	{
		/* O_TRUNC truncates: killpriv as for SETATTR size */
		bool dropped = (flags & O_TRUNC) && fsetid_drop();

		fd = proc_open(pt(r), ino, flags | (nb ? O_NONBLOCK : 0));
		fsetid_restore(dropped);
	}
	if (nb && fd == -EWOULDBLOCK)
		return would_block(r);
	if (nb && fd >= 0 && fcntl(fd, F_SETFL, flags)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (fd < 0)
		return fd;
	err = file__new(&pt(r)->ft, fd, ino, false, &fh);
	if (err) {
		close(fd);
		return err;
	}
	fill_open_out(pt(r), o, fh, ino);
	return 0;
}

/*
 * An existing name for CREATE without O_EXCL: only a regular file is
 * opened. The name is opened O_PATH first (no driver's open runs, a FIFO
 * cannot block), checked, then reopened through /proc/self/fd: the same
 * inode, whatever happens to the name meanwhile.
 */
static int open_existing(struct passthrough *s, int dirfd, const char *name,
			 int flags)
{
	struct stat st;
	char path[32];
	int pfd, fd, err = 0;

	pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st))
		err = -errno;
	else if (S_ISLNK(st.st_mode))
		err = -ELOOP;		/* as O_CREAT | O_NOFOLLOW says */
	else if (S_ISDIR(st.st_mode))
		err = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		err = -ENXIO;		/* as OPEN says for these */
	if (err) {
		close(pfd);
		return err;
	}
	snprintf(path, sizeof(path), "%d", pfd);
	{
		/* an existing file may be truncated: killpriv */
		bool dropped = (flags & O_TRUNC) && fsetid_drop();

		fd = openat(s->proc_fd, path, flags & ~(O_CREAT | O_EXCL));
		err = fd < 0 ? -errno : 0;
		fsetid_restore(dropped);
	}
	close(pfd);
	return fd < 0 ? err : fd;
}

/*
 * CREATE's open: a new file with O_EXCL always, so that an existing name
 * is never opened by openat(O_CREAT), which opens devices and blocks on
 * FIFOs; without the guest's O_EXCL, an existing regular file is opened
 * after a type check. An fd, or -errno.
 */
static int create_or_open(struct passthrough *s, int dirfd, const char *name,
			  int flags, bool excl, mode_t mode)
{
	int tries, fd;

	for (tries = 0; tries < 8; tries++) {
		fd = openat(dirfd, name,
			    (flags & ~O_TRUNC) | O_CREAT | O_EXCL | O_NOFOLLOW,
			    mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST || excl)
			return -errno;
		fd = open_existing(s, dirfd, name, flags);
		/* gone between the two: create it again */
		if (fd != -ENOENT)
			return fd;
	}
	return -EAGAIN;
}

static int op_create(struct req *r, struct inode *dir)
{
	const struct fuse_create_in *in = arg_take(r, sizeof(*in));
	const char *name = arg_name(r);
	struct fuse_entry_out *e = out_reserve(r, sizeof(*e));
	struct fuse_open_out *o = out_reserve(r, sizeof(*o));
	struct passthrough *s = pt(r);
	struct inode *ino;
	int flags, fd, err;
	uint64_t fh;

	if (!in)
		return -EINVAL;
	if (!name)
		return r->name_err;
	if (!e || !o)
		return -EIO;
	if (s->opt->readonly)
		return -EROFS;
	flags = open_flags(r, in->flags);
	if (flags < 0)
		return flags;
	/* do not make a file we could not open */
	if (!inode__open_room(&s->it))
		return -ENFILE;
	creds_set(r->ih);
	fd = create_or_open(s, inode__fd(dir), name, flags,
			    in->flags & O_EXCL, in->mode);
	creds_restore();
	if (fd < 0)
		return fd;
	err = do_lookup(s, dir, name, e);
	if (err)
		goto fail;
	ino = inode__get(&s->it, e->nodeid, &err);
	if (!ino) {
		inode__forget(&s->it, e->nodeid, 1);
		err = -err;
		goto fail;
	}
	err = file__new(&s->ft, fd, ino, false, &fh);
	if (!err)
		fill_open_out(s, o, fh, ino);
	inode__put(&s->it, ino);
	if (err) {
		inode__forget(&s->it, e->nodeid, 1);
		goto fail;
	}
	return 0;
fail:
	close(fd);
	return err;
}

/* O_TMPFILE in dir: like CREATE, but the new inode has no name. */
static int op_tmpfile(struct req *r, struct inode *dir)
{
	const struct fuse_create_in *in = arg_take(r, sizeof(*in));
	struct fuse_entry_out *e = out_reserve(r, sizeof(*e));
	struct fuse_open_out *o = out_reserve(r, sizeof(*o));
	struct passthrough *s = pt(r);
	struct inode *ino;
	int flags, fd, pfd, err = 0;
	char path[32];
	struct stat st;
	uint64_t fh;

	if (!in)
		return -EINVAL;
	if (!e || !o)
		return -EIO;
	if (s->opt->readonly)
		return -EROFS;
	flags = open_flags(r, in->flags);
	if (flags < 0)
		return flags;
	if (!inode__open_room(&s->it))
		return -ENFILE;
	creds_set(r->ih);
	fd = openat(inode__fd(dir), ".", (flags & ~O_TRUNC) | O_TMPFILE,
		    in->mode & 07777);
	if (fd < 0)
		err = -errno;
	creds_restore();
	if (err)
		return err;
	snprintf(path, sizeof(path), "%d", fd);
	pfd = openat(s->proc_fd, path, O_PATH | O_CLOEXEC);
	if (pfd < 0 || fstat(fd, &st)) {
		err = -errno;
		if (pfd >= 0)
			close(pfd);
		close(fd);
		return err;
	}
	ino = inode__lookup_fd(&s->it, pfd, &st, &err);
	if (!ino) {
		close(fd);
		return -err;
	}
	e->nodeid = inode__nodeid(ino);
	e->entry_valid = s->timeout;
	e->attr_valid = s->timeout;
	fill_attr(&e->attr, &st);
	err = file__new(&s->ft, fd, ino, false, &fh);
	if (!err)
		fill_open_out(s, o, fh, ino);
	inode__put(&s->it, ino);
	if (err) {
		inode__forget(&s->it, e->nodeid, 1);
		close(fd);
		return err;
	}
	return 0;
}

/*
 * Inside a sync exit a read is tried with RWF_NOWAIT: data not in the
 * host's page cache would wait for its disk. A short result may be just
 * what was cached, so it stands only where it ends at the end of the
 * file. A file system without RWF_NOWAIT is read as usual, and the
 * handle remembers it.
 */
static int read_fd(struct req *r, int fd, const void *arg, void *data)
{
	const struct fuse_read_in *in = arg;
	size_t size = in->size < r->out_max ? in->size : r->out_max;
	struct iovec iov = { r->out, size };
	struct stat st;
	ssize_t n = -1;

	(void)data;
	/* preadv2() takes offset -1 as "the file position" */
	if (r->ctx->nowait && (off_t)in->offset >= 0 &&
	    !file__nowait_refused(&pt(r)->ft, in->fh, FILE_NOWAIT_READ)) {
		n = preadv2(fd, &iov, 1, in->offset, RWF_NOWAIT);
		if (n < 0 && errno == EAGAIN)
			return would_block(r);
		if (n < 0 && errno == EOPNOTSUPP)
			file__nowait_refuse(&pt(r)->ft, in->fh,
					    FILE_NOWAIT_READ);
		else if (n < 0)
			return -errno;
		if (n >= 0 && (size_t)n < size &&
		    (fstat(fd, &st) || (off_t)in->offset + n < st.st_size))
			return would_block(r);
	}
	if (n < 0)
		n = pread(fd, r->out, size, in->offset);
	if (n < 0)
		return -errno;
	r->out_len = n;
	return 0;
}

static int op_read(struct req *r)
{
	const struct fuse_read_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	return with_open_file(r, in->fh, false, read_fd, in, NULL);
}

/*
 * Inside a sync exit, RWF_NOWAIT first, as for a read. A write it began
 * is finished here: on a file opened O_APPEND a second run would append
 * twice.
 */
static int write_fd(struct req *r, int fd, const void *arg, void *data)
{
	const struct fuse_write_in *in = arg;
	struct fuse_write_out *o = data;
	struct iovec iov = { (void *)r->arg, in->size };
	bool dropped = fsetid_drop_for(fd);
	ssize_t n, m;

	if (r->ctx->nowait && (off_t)in->offset >= 0 &&
	    !file__nowait_refused(&pt(r)->ft, in->fh, FILE_NOWAIT_WRITE)) {
		n = pwritev2(fd, &iov, 1, in->offset, RWF_NOWAIT);
		if (n < 0 && errno == EAGAIN) {
			fsetid_restore(dropped);
			return would_block(r);
		}
		if (n < 0 && errno == EOPNOTSUPP) {
			file__nowait_refuse(&pt(r)->ft, in->fh,
					    FILE_NOWAIT_WRITE);
			n = pwrite(fd, r->arg, in->size, in->offset);
		} else if (n >= 0 && n < in->size &&
			 (m = pwrite(fd, r->arg + n, in->size - n,
				     in->offset + n)) > 0)
			n += m;
	} else {
		n = pwrite(fd, r->arg, in->size, in->offset);
	}
	if (n < 0)
		n = -errno;
	fsetid_restore(dropped);
	if (n < 0)
		return n;
	o->size = n;
	return 0;
}

static int op_write(struct req *r)
{
	const struct fuse_write_in *in = arg_take(r, sizeof(*in));
	struct fuse_write_out *o = out_reserve(r, sizeof(*o));

	if (!in || in->size > r->arglen)
		return -EINVAL;
	if (!o)
		return -EIO;
	return with_open_file(r, in->fh, false, write_fd, in, o);
}

static int op_statfs(struct req *r, struct inode *ino)
{
	struct fuse_statfs_out *o = out_reserve(r, sizeof(*o));
	struct statvfs sv;

	if (!o)
		return -EIO;
	if (fstatvfs(inode__fd(ino), &sv))
		return -errno;
	o->st.blocks = sv.f_blocks;
	o->st.bfree = sv.f_bfree;
	o->st.bavail = sv.f_bavail;
	o->st.files = sv.f_files;
	o->st.ffree = sv.f_ffree;
	o->st.bsize = sv.f_bsize;
	o->st.namelen = sv.f_namemax;
	o->st.frsize = sv.f_frsize;
	return 0;
}

static int release_common(struct req *r, bool is_dir)
{
	const struct fuse_release_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	return file__release(&pt(r)->ft, in->fh, is_dir);
}

static int op_release(struct req *r)
{
	return release_common(r, false);
}

static int op_releasedir(struct req *r)
{
	return release_common(r, true);
}

static int fsync_fd(struct req *r, int fd, const void *arg, void *data)
{
	const struct fuse_fsync_in *in = arg;

	(void)r;
	(void)data;
	if (in->fsync_flags & FUSE_FSYNC_FDATASYNC)
		return fdatasync(fd) ? -errno : 0;
	return fsync(fd) ? -errno : 0;
}

static int fsync_common(struct req *r, bool is_dir)
{
	const struct fuse_fsync_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	return with_open_file(r, in->fh, is_dir, fsync_fd, in, NULL);
}

static int op_fsync(struct req *r)
{
	return fsync_common(r, false);
}

static int op_fsyncdir(struct req *r)
{
	return fsync_common(r, true);
}

static int flush_fd(struct req *r, int fd, const void *in, void *data)
{
	int dupfd, err = 0;

	(void)r;
	(void)in;
	(void)data;
	/*
	 * Closing a duplicate gives the host file system its close-time hook.
	 * Still sent by guests with FOPEN_NOFLUSH ignored (writeback cache,
	 * kernels before it) and with --flush=always.
	 */
	dupfd = dup(fd);
	if (dupfd < 0 || close(dupfd))
		err = -errno;
	return err;
}

static int op_flush(struct req *r)
{
	const struct fuse_flush_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	return with_open_file(r, in->fh, false, flush_fd, in, NULL);
}

/*
 * Extended attributes. By default only user.* and the POSIX ACLs pass:
 * trusted.*, security.* (file capabilities, LSM labels) and the rest are
 * names the host kernel would act on. A refused name cannot be set or
 * removed (EPERM), reads as absent (ENODATA) and is left out of lists, as
 * virtiofsd's "bad" xattrmap rules do. With --xattr-prefix=P every guest
 * name N is stored as P N on the host (P starts with "user.", so the host
 * honours none of them) and host names outside P are invisible.
 */
static bool xattr_allowed(const char *name)
{
	return !strncmp(name, "user.", 5) ||
		!strcmp(name, "system.posix_acl_access") ||
		!strcmp(name, "system.posix_acl_default");
}

/* The host's name for a guest's, in buf; -EPERM for a refused name. */
static int xattr_host_name(const struct passthrough *s, const char *name,
			   char *buf, size_t len, const char **host)
{
	const char *p = s->opt->xattr_prefix;
	size_t plen, nlen;

	if (!p) {
		if (!xattr_allowed(name))
			return -EPERM;
		*host = name;
		return 0;
	}
	plen = strlen(p);
	nlen = strlen(name);
	if (plen + nlen > XATTR_NAME_MAX || plen + nlen >= len)
		return -ERANGE;
	memcpy(buf, p, plen);
	memcpy(buf + plen, name, nlen + 1);
	*host = buf;
	return 0;
}

/* The guest's name for a host's, or NULL if the guest does not see it. */
static const char *xattr_guest_name(const struct passthrough *s,
				    const char *name)
{
	const char *p = s->opt->xattr_prefix;
	size_t plen;

	if (!p)
		return xattr_allowed(name) ? name : NULL;
	plen = strlen(p);
	if (strncmp(name, p, plen) || !name[plen])
		return NULL;
	return name + plen;
}

static int op_setxattr(struct req *r, struct inode *ino)
{
	const struct fuse_setxattr_in *in = arg_take(r, FUSE_COMPAT_SETXATTR_IN_SIZE);
	char path[64], hbuf[XATTR_NAME_MAX + 1];
	const char *name, *host;
	int err;

	if (!pt(r)->opt->xattr)
		return -ENOSYS;
	if (!in)
		return -EINVAL;
	name = arg_string(r);
	if (!name || in->size > r->arglen)
		return -EINVAL;
	if (pt(r)->opt->readonly)
		return -EROFS;
	err = xattr_host_name(pt(r), name, hbuf, sizeof(hbuf), &host);
	if (err)
		return err;
	proc_name(pt(r), path, sizeof(path), inode__fd(ino));
	return setxattr(path, host, r->arg, in->size, in->flags) ? -errno : 0;
}

/*
 * A value or list of n bytes for a guest that asked for size bytes: the
 * size alone if it asked for 0, ERANGE if it does not fit the size it
 * gave or the reply buffer it really has.
 */
static int xattr_reply(struct req *r, uint32_t size, size_t n)
{
	struct fuse_getxattr_out *o;

	if (!size) {
		o = out_reserve(r, sizeof(*o));
		if (!o)
			return -EIO;
		o->size = n;
		return 0;
	}
	if (n > size || n > r->out_max)
		return -ERANGE;
	r->out_len = n;
	return 0;
}

static int op_getxattr(struct req *r, struct inode *ino)
{
	const struct fuse_getxattr_in *in = arg_take(r, sizeof(*in));
	char path[64], hbuf[XATTR_NAME_MAX + 1];
	const char *name, *host;
	size_t room;
	ssize_t n;
	int err;

	if (!pt(r)->opt->xattr)
		return -ENOSYS;
	if (!in)
		return -EINVAL;
	name = arg_string(r);
	if (!name)
		return -EINVAL;
	err = xattr_host_name(pt(r), name, hbuf, sizeof(hbuf), &host);
	if (err)
		return err == -EPERM ? -ENODATA : err;
	room = in->size < r->out_max ? in->size : r->out_max;
	proc_name(pt(r), path, sizeof(path), inode__fd(ino));
	/* a room of 0 would ask for the size: ask, then see if it fits */
	n = getxattr(path, host, room ? r->out : NULL, room);
	if (n < 0)
		return -errno;
	return xattr_reply(r, in->size, n);
}

static int op_listxattr(struct req *r, struct inode *ino)
{
	const struct fuse_getxattr_in *in = arg_take(r, sizeof(*in));
	char *list = r->ctx->dirbuf, *out = (char *)r->out;
	size_t room, len = 0, off;
	char path[64];
	ssize_t n;

	if (!pt(r)->opt->xattr)
		return -ENOSYS;
	if (!in)
		return -EINVAL;
	proc_name(pt(r), path, sizeof(path), inode__fd(ino));
	/* the host's whole list (at most XATTR_LIST_MAX), then the guest's */
	n = listxattr(path, list, r->ctx->dirbuf_cap);
	if (n < 0)
		return errno == ERANGE ? -E2BIG : -errno;
	room = in->size < r->out_max ? in->size : r->out_max;
	for (off = 0; off < (size_t)n;) {
		const char *host = list + off;
		size_t hlen = strnlen(host, n - off);
		const char *guest = xattr_guest_name(pt(r), host);

		off += hlen + 1;
		if (!guest || off > (size_t)n)
			continue;
		hlen = strlen(guest) + 1;
		if (in->size && len + hlen <= room)
			memcpy(out + len, guest, hlen);
		len += hlen;
	}
	return xattr_reply(r, in->size, len);
}

static int op_removexattr(struct req *r, struct inode *ino)
{
	const char *name = arg_string(r);
	char path[64], hbuf[XATTR_NAME_MAX + 1];
	const char *host;
	int err;

	if (!pt(r)->opt->xattr)
		return -ENOSYS;
	if (!name)
		return -EINVAL;
	if (pt(r)->opt->readonly)
		return -EROFS;
	err = xattr_host_name(pt(r), name, hbuf, sizeof(hbuf), &host);
	if (err)
		return err;
	proc_name(pt(r), path, sizeof(path), inode__fd(ino));
	return removexattr(path, host) ? -errno : 0;
}

static int op_opendir(struct req *r, struct inode *ino)
{
	struct fuse_open_out *o = out_reserve(r, sizeof(*o));
	uint64_t fh;
	int fd, err;

	if (!o)
		return -EIO;
	if (!S_ISDIR(inode__type(ino)))
		return -ENOTDIR;
	fd = openat(inode__fd(ino), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = file__new(&pt(r)->ft, fd, ino, true, &fh);
	if (err) {
		close(fd);
		return err;
	}
	fill_open_out(pt(r), o, fh, ino);
	return 0;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static bool is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/* READDIR's and READDIRPLUS's directory, and whether entries carry attrs. */
struct readdir_data {
	struct inode *dir;
	bool plus;
};

static int readdir_fd(struct req *r, int fd, const void *arg, void *data)
{
	const struct fuse_read_in *in = arg;
	const struct readdir_data *rd = data;
	struct inode *dir = rd->dir;
	bool plus = rd->plus;
	struct fuse_ctx *c = r->ctx;
	size_t limit;
	int err = 0;

	limit = in->size < r->out_max ? in->size : r->out_max;
	if (lseek(fd, in->offset, SEEK_SET) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, fd, c->dirbuf, c->dirbuf_cap);
		long pos = 0;

		if (n < 0) {
			err = r->out_len ? 0 : -errno;
			break;
		}
		if (n == 0)
			break;
		while (pos < n) {
			struct linux_dirent64 *d = (void *)((char *)c->dirbuf + pos);
			size_t namelen = strlen(d->d_name);
			size_t base = plus ? FUSE_NAME_OFFSET_DIRENTPLUS :
				FUSE_NAME_OFFSET;
			size_t sz = FUSE_DIRENT_ALIGN(base + namelen);
			struct fuse_dirent *de;

			if (r->out_len + sz > limit)
				goto out;
			if (plus) {
				struct fuse_direntplus *dp =
					(void *)(r->out + r->out_len);

				memset(dp, 0, sz);
				/* a failed lookup leaves nodeid 0: no attrs */
				if (!is_dot(d->d_name))
					do_lookup(pt(r), dir, d->d_name,
						  &dp->entry_out);
				de = &dp->dirent;
			} else {
				de = (void *)(r->out + r->out_len);
				memset(de, 0, sz);
			}
			de->ino = d->d_ino;
			de->off = d->d_off;
			de->namelen = namelen;
			de->type = d->d_type;
			memcpy(de->name, d->d_name, namelen);
			r->out_len += sz;
			pos += d->d_reclen;
		}
	}
out:
	return err;
}

static int readdir_common(struct req *r, struct inode *dir, bool plus)
{
	const struct fuse_read_in *in = arg_take(r, sizeof(*in));
	struct readdir_data rd = { .dir = dir, .plus = plus };

	if (!in)
		return -EINVAL;
	return with_open_file(r, in->fh, true, readdir_fd, in, &rd);
}

static int op_readdir(struct req *r, struct inode *dir)
{
	return readdir_common(r, dir, false);
}

static int op_readdirplus(struct req *r, struct inode *dir)
{
	return readdir_common(r, dir, true);
}

static int op_access(struct req *r, struct inode *ino)
{
	const struct fuse_access_in *in = arg_take(r, sizeof(*in));
	char path[32];
	int err = 0;

	if (!in)
		return -EINVAL;
	snprintf(path, sizeof(path), "%d", inode__fd(ino));
	creds_set(r->ih);
	if (faccessat(pt(r)->proc_fd, path, in->mask, AT_EACCESS))
		err = -errno;
	creds_restore();
	if (!err && (in->mask & W_OK) && pt(r)->opt->readonly)
		err = -EROFS;
	return err;
}

static int fallocate_fd(struct req *r, int fd, const void *arg, void *data)
{
	const struct fuse_fallocate_in *in = arg;
	bool dropped = fsetid_drop_for(fd);
	int err;

	(void)r;
	(void)data;
	err = fallocate(fd, in->mode, in->offset, in->length) ? -errno : 0;
	fsetid_restore(dropped);
	return err;
}

static int op_fallocate(struct req *r)
{
	const struct fuse_fallocate_in *in = arg_take(r, sizeof(*in));

	if (!in)
		return -EINVAL;
	if (pt(r)->opt->readonly)
		return -EROFS;
	return with_open_file(r, in->fh, false, fallocate_fd, in, NULL);
}

static int lseek_fd(struct req *r, int fd, const void *arg, void *data)
{
	const struct fuse_lseek_in *in = arg;
	struct fuse_lseek_out *o = data;
	off_t off;

	(void)r;
	off = lseek(fd, in->offset, in->whence);
	if (off < 0)
		return -errno;
	o->offset = off;
	return 0;
}

static int op_lseek(struct req *r)
{
	const struct fuse_lseek_in *in = arg_take(r, sizeof(*in));
	struct fuse_lseek_out *o = out_reserve(r, sizeof(*o));

	if (!in)
		return -EINVAL;
	if (!o)
		return -EIO;
	if (in->whence != SEEK_DATA && in->whence != SEEK_HOLE &&
	    in->whence != SEEK_SET && in->whence != SEEK_END &&
	    in->whence != SEEK_CUR)
		return -EINVAL;
	return with_open_file(r, in->fh, false, lseek_fd, in, o);
}

/* COPY_FILE_RANGE's reply, and the source's fd, held while it runs. */
struct copy_data {
	struct fuse_write_out *o;
	int fd_in;
};

static int copy_to_fd(struct req *r, int fd_out, const void *arg, void *data)
{
	const struct fuse_copy_file_range_in *in = arg;
	struct copy_data *c = data;
	loff_t off_in = in->off_in, off_out = in->off_out;
	bool dropped = fsetid_drop_for(fd_out);
	ssize_t n;

	(void)r;
	n = copy_file_range(c->fd_in, &off_in, fd_out, &off_out, in->len,
			    in->flags);
	if (n < 0)
		n = -errno;
	fsetid_restore(dropped);
	if (n < 0)
		return n;
	c->o->size = n;
	return 0;
}

static int copy_from_fd(struct req *r, int fd_in, const void *arg, void *data)
{
	const struct fuse_copy_file_range_in *in = arg;
	struct copy_data c = { .o = data, .fd_in = fd_in };

	return with_open_file(r, in->fh_out, false, copy_to_fd, in, &c);
}

static int op_copy_file_range(struct req *r)
{
	const struct fuse_copy_file_range_in *in = arg_take(r, sizeof(*in));
	struct fuse_write_out *o = out_reserve(r, sizeof(*o));

	if (!in)
		return -EINVAL;
	if (!o)
		return -EIO;
	if (pt(r)->opt->readonly)
		return -EROFS;
	return with_open_file(r, in->fh_in, false, copy_from_fd, in, o);
}

static int op_syncfs(struct req *r)
{
	return syncfs(pt(r)->root_rd_fd) ? -errno : 0;
}

/* ---- the share ---- */

/*
 * Open files and pinned inodes, each up to two fds, on top of the fd cache
 * and what the daemon needs for itself, must stay below the open-file
 * limit: one guest must never push the daemon into EMFILE for everything.
 */
#define FD_RESERVE	256

static unsigned long max_held(const struct options *opt)
{
	unsigned long lim = 1UL << 20, cap;
	/* with every inode pinned the cache never holds an fd of its own */
	unsigned long cache = opt->pin_inodes ? 0 : opt->fd_cache;
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		lim = rl.rlim_cur;
	cap = lim > cache + FD_RESERVE + 32 ?
		(lim - cache - FD_RESERVE) / 2 : 16;
	if (opt->max_files && opt->max_files <= cap)
		return opt->max_files;
	if (opt->max_files)
		fprintf(stderr, "vhost-user-fs: open-file limit %lu: --max-files %lu\n",
			lim, cap);
	return cap;
}

/*
 * The guest's root can make setuid files and (with --allow-devices)
 * device nodes in the share; only the share's mount flags keep the host
 * from honouring them.
 */
static void mount_warnings(int fd, const char *dir)
{
	struct statvfs sv;

	if (fstatvfs(fd, &sv))
		return;
	if (!(sv.f_flag & ST_NOSUID))
		fprintf(stderr, "vhost-user-fs: warning: %s is on a mount without nosuid: setuid files the guest makes there work on the host\n",
			dir);
	if (!(sv.f_flag & ST_NODEV))
		fprintf(stderr, "vhost-user-fs: warning: %s is on a mount without nodev: device nodes there open host devices\n",
			dir);
}

/*
 * Local host file systems whose files have no ->flush in Linux (6.12 and
 * 7.3 sources): closing a duplicate fd there does nothing the guest could
 * see (no locks are taken, see Locks in fuse_server.c). ext2, ext3 and
 * ext4 share the magic. Left out on purpose: NFS, SMB, FUSE, overlayfs,
 * ecryptfs, f2fs, orangefs (they have a ->flush), 9p, ceph and the rest
 * (remote or unknown).
 */
static const struct {
	unsigned long magic;
	const char *name;
} noflush_fs[] = {
	{ EXT4_SUPER_MAGIC, "ext2/ext3/ext4" },
	{ XFS_SUPER_MAGIC, "xfs" },
	{ BTRFS_SUPER_MAGIC, "btrfs" },
	{ TMPFS_MAGIC, "tmpfs" },
};

/* Whether opens answer FOPEN_NOFLUSH, logged once. */
static bool flush_mode(int fd, const struct options *opt)
{
	const char *ignored = opt->writeback ?
		" (the guest ignores it with --writeback)" : "";
	struct statfs sf;
	unsigned int i;

	if (opt->flush == FLUSH_ALWAYS) {
		fprintf(stderr, "vhost-user-fs: --flush=always: guests send FLUSH\n");
		return false;
	}
	if (opt->flush == FLUSH_NEVER) {
		fprintf(stderr, "vhost-user-fs: --flush=never: FOPEN_NOFLUSH on every file open%s\n",
			ignored);
		return true;
	}
	if (fstatfs(fd, &sf)) {
		fprintf(stderr, "vhost-user-fs: --flush=auto: fstatfs %s: %m: guests send FLUSH\n",
			opt->shared_dir);
		return false;
	}
	for (i = 0; i < sizeof(noflush_fs) / sizeof(noflush_fs[0]); i++) {
		if ((unsigned long)sf.f_type == noflush_fs[i].magic) {
			fprintf(stderr, "vhost-user-fs: --flush=auto: %s is on %s, no flush-time work: FOPEN_NOFLUSH on its files (not on submounts)%s\n",
				opt->shared_dir, noflush_fs[i].name, ignored);
			return true;
		}
	}
	fprintf(stderr, "vhost-user-fs: --flush=auto: %s is on file system type 0x%lx, not known to flush as a no-op: guests send FLUSH\n",
		opt->shared_dir, (unsigned long)sf.f_type);
	return false;
}

/* passthrough__new(): the share's fds and tables; 0, or -1 (logged). */
static int share_init(struct passthrough *s)
{
	const struct options *opt = s->opt;
	int root, err;

	switch (opt->cache) {
	case CACHE_NEVER:
		s->timeout = 0;
		break;
	case CACHE_AUTO:
		s->timeout = 1;
		break;
	case CACHE_ALWAYS:
		s->timeout = 86400;
		break;
	}
	root = open(opt->shared_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	s->root_rd_fd = open(opt->shared_dir, O_RDONLY | O_DIRECTORY |
			     O_CLOEXEC);
	s->proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || s->root_rd_fd < 0 || s->proc_fd < 0) {
		fprintf(stderr, "vhost-user-fs: cannot open %s: %m\n",
			opt->shared_dir);
		return -1;
	}
	mount_warnings(s->root_rd_fd, opt->shared_dir);
	s->noflush = flush_mode(s->root_rd_fd, opt);
	s->noflush_all = opt->flush == FLUSH_NEVER;
	{
		struct stat rst = { 0 };

		/* no root device known: FLUSH stays on (auto) */
		if (fstat(s->root_rd_fd, &rst))
			s->noflush = false;
		s->root_dev = rst.st_dev;
	}
	err = inode__table_init(&s->it, root, opt->fd_cache,
				max_held(opt), opt->pin_inodes);
	if (err) {
		fprintf(stderr, "vhost-user-fs: inode table: %s\n",
			strerror(-err));
		return -1;
	}
	file_table__init(&s->ft, &s->it);
	return 0;
}

/* ---- what the protocol layer calls, with fs a struct passthrough ---- */

/* DESTROY, or the frontend went away: close every file, forget every inode. */
static void share_reset(void *fs)
{
	struct passthrough *s = fs;

	file_table__close_all(&s->ft);
	inode__table_reset(&s->it);
}

/* fuse_server__free(), after share_reset(): all that share_init() made. */
static void share_destroy(void *fs)
{
	struct passthrough *s = fs;

	inode__table_destroy(&s->it);
	close(s->root_rd_fd);
	close(s->proc_fd);
	file_table__destroy(&s->ft);
	free(s);
}

static struct inode *share_inode_get(void *fs, uint64_t nodeid, int *err)
{
	struct passthrough *s = fs;

	return inode__get(&s->it, nodeid, err);
}

static void share_inode_put(void *fs, struct inode *ino)
{
	struct passthrough *s = fs;

	inode__put(&s->it, ino);
}

/*
 * The handlers, by opcode. INIT, DESTROY, INTERRUPT and the lock requests
 * are the protocol layer's own; any opcode missing here gets ENOSYS.
 */
static const struct fuse_op passthrough_ops[] = {
	[FUSE_FORGET] = FUSE_NODELESS_OP(op_forget, FUSE_OP_NO_REPLY),
	[FUSE_BATCH_FORGET] = FUSE_NODELESS_OP(op_batch_forget, FUSE_OP_NO_REPLY),
	[FUSE_READ] = FUSE_NODELESS_OP(op_read, 0),
	[FUSE_WRITE] = FUSE_NODELESS_OP(op_write, 0),
	[FUSE_RELEASE] = FUSE_NODELESS_OP(op_release, 0),
	[FUSE_RELEASEDIR] = FUSE_NODELESS_OP(op_releasedir, 0),
	[FUSE_FSYNC] = FUSE_NODELESS_OP(op_fsync, 0),
	[FUSE_FSYNCDIR] = FUSE_NODELESS_OP(op_fsyncdir, 0),
	[FUSE_FLUSH] = FUSE_NODELESS_OP(op_flush, 0),
	[FUSE_FALLOCATE] = FUSE_NODELESS_OP(op_fallocate, 0),
	[FUSE_LSEEK] = FUSE_NODELESS_OP(op_lseek, 0),
	[FUSE_COPY_FILE_RANGE] = FUSE_NODELESS_OP(op_copy_file_range, 0),
	[FUSE_SYNCFS] = FUSE_NODELESS_OP(op_syncfs, 0),
	[FUSE_LOOKUP] = FUSE_INODE_OP(op_lookup),
	[FUSE_GETATTR] = FUSE_INODE_OP(op_getattr),
	[FUSE_SETATTR] = FUSE_INODE_OP(op_setattr),
	[FUSE_READLINK] = FUSE_INODE_OP(op_readlink),
	[FUSE_SYMLINK] = FUSE_INODE_OP(op_symlink),
	[FUSE_MKNOD] = FUSE_INODE_OP(op_mknod),
	[FUSE_MKDIR] = FUSE_INODE_OP(op_mkdir),
	[FUSE_UNLINK] = FUSE_INODE_OP(op_unlink),
	[FUSE_RMDIR] = FUSE_INODE_OP(op_rmdir),
	[FUSE_RENAME] = FUSE_INODE_OP(op_rename),
	[FUSE_RENAME2] = FUSE_INODE_OP(op_rename2),
	[FUSE_LINK] = FUSE_INODE_OP(op_link),
	[FUSE_OPEN] = FUSE_INODE_OP(op_open),
	[FUSE_CREATE] = FUSE_INODE_OP(op_create),
	[FUSE_TMPFILE] = FUSE_INODE_OP(op_tmpfile),
	[FUSE_STATFS] = FUSE_INODE_OP(op_statfs),
	[FUSE_SETXATTR] = FUSE_INODE_OP(op_setxattr),
	[FUSE_GETXATTR] = FUSE_INODE_OP(op_getxattr),
	[FUSE_LISTXATTR] = FUSE_INODE_OP(op_listxattr),
	[FUSE_REMOVEXATTR] = FUSE_INODE_OP(op_removexattr),
	[FUSE_OPENDIR] = FUSE_INODE_OP(op_opendir),
	[FUSE_READDIR] = FUSE_INODE_OP(op_readdir),
	[FUSE_READDIRPLUS] = FUSE_INODE_OP(op_readdirplus),
	[FUSE_ACCESS] = FUSE_INODE_OP(op_access),
};

static const struct fuse_fs_ops passthrough_fs_ops = {
	.ops = passthrough_ops,
	.nops = sizeof(passthrough_ops) / sizeof(passthrough_ops[0]),
	.inode_get = share_inode_get,
	.inode_put = share_inode_put,
	.reset = share_reset,
	.destroy = share_destroy,
};

struct fuse_server *passthrough__new(const struct options *opt)
{
	struct passthrough *s = calloc(1, sizeof(*s));
	struct fuse_server *srv;

	if (!s)
		return NULL;
	s->opt = opt;
	if (share_init(s)) {
		free(s);
		return NULL;
	}
	srv = fuse_server__new(opt, &passthrough_fs_ops, s);
	if (!srv) {
		share_destroy(s);
		return NULL;
	}
	return srv;
}

void passthrough__counts(struct fuse_server *srv, unsigned long *inodes,
			 unsigned long *fds)
{
	struct passthrough *s = fuse_server__fs(srv);

	inode__counts(&s->it, inodes, fds);
}
