// SPDX-License-Identifier: GPL-2.0
/*
 * Host-only tests: the vring walker against rings built in anonymous
 * memory, and the FUSE server against a temporary directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "fuse_server.h"
#include "passthrough.h"
#include "vring.h"

#include "harness.h"

static int passed, failed;
const char *test_name;
bool test_failed;

/* VUFS_TEST_ONLY=TEXT: only the tests whose names contain TEXT */
void test_run(const char *name, void (*fn)(void))
{
	const char *only = getenv("VUFS_TEST_ONLY");

	if (only && !strstr(name, only))
		return;
	test_name = name;
	test_failed = false;
	fn();
	if (test_failed) {
		failed++;
	} else {
		passed++;
		printf("PASS %s\n", name);
	}
}

#define run test_run

/* ---- vring ---- */

#define GPA_BASE	0x100000ULL
#define MEM_SIZE	(1 << 20)
#define QN		8

static struct mem_table mt;
static uint8_t *mem;
static struct vring vr;
static struct iovec iovs[64];
static struct vring_elem el = { .iov = iovs, .iov_max = 64 };

static struct vring_desc *desc_tab(void) { return (void *)mem; }
static struct vring_avail *avail_ring(void) { return (void *)(mem + 0x1000); }
static struct vring_used *used_ring(void) { return (void *)(mem + 0x2000); }

static void ring_setup(bool event_idx)
{
	if (!mem) {
		mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		mt.nregions = 1;
		mt.r[0] = (struct mem_region){ .gpa = GPA_BASE, .size = MEM_SIZE,
			.uva = GPA_BASE, .host = mem };
	}
	memset(mem, 0, 0x3000);
	vring__init(&vr, 1, QN, desc_tab(), avail_ring(), used_ring(), &mt,
		    event_idx, 0);
	fflush(stdout);
}

static void set_desc(int i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	desc_tab()[i] = (struct vring_desc){ addr, len, flags, next };
}

static void make_avail(uint16_t head)
{
	struct vring_avail *a = avail_ring();

	a->ring[a->idx % QN] = head;
	a->idx++;
}

static void t_vring_good_chain(void)
{
	ring_setup(false);
	set_desc(0, GPA_BASE + 0x4000, 40, VRING_DESC_F_NEXT, 1);
	set_desc(1, GPA_BASE + 0x5000, 100, VRING_DESC_F_NEXT, 2);
	set_desc(2, GPA_BASE + 0x6000, 200, VRING_DESC_F_WRITE, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == 1);
	CHECK(el.head == 0 && el.rd_num == 2 && el.wr_num == 1);
	CHECK(el.rd_len == 140 && el.wr_len == 200);
	CHECK(iovs[0].iov_base == mem + 0x4000);
	CHECK(vring__pop(&vr, &el) == 0);
	vring__push(&vr, 0, 16);
	CHECK(used_ring()->idx == 1 && used_ring()->ring[0].len == 16);
	CHECK(vring__need_signal(&vr));
	avail_ring()->flags = VRING_AVAIL_F_NO_INTERRUPT;
	CHECK(!vring__need_signal(&vr));
}

static void t_vring_out_of_range(void)
{
	ring_setup(false);
	set_desc(0, GPA_BASE + MEM_SIZE - 8, 16, 0, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1 && vr.broken);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_below_region(void)
{
	ring_setup(false);
	set_desc(0, 0x1000, 16, 0, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_wrap(void)
{
	ring_setup(false);
	set_desc(0, ~0ULL - 4, 16, 0, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_loop(void)
{
	ring_setup(false);
	set_desc(0, GPA_BASE + 0x4000, 16, VRING_DESC_F_NEXT, 1);
	set_desc(1, GPA_BASE + 0x4000, 16, VRING_DESC_F_NEXT, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_next_out_of_range(void)
{
	ring_setup(false);
	set_desc(0, GPA_BASE + 0x4000, 16, VRING_DESC_F_NEXT, QN);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_bad_head(void)
{
	ring_setup(false);
	make_avail(QN + 3);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_avail_jump(void)
{
	ring_setup(false);
	avail_ring()->idx = QN + 1;
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_rd_after_wr(void)
{
	ring_setup(false);
	set_desc(0, GPA_BASE + 0x4000, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(1, GPA_BASE + 0x5000, 16, 0, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_indirect(void)
{
	struct vring_desc *ind = (void *)(mem + 0x8000);

	ring_setup(false);
	ind[0] = (struct vring_desc){ GPA_BASE + 0x4000, 48, VRING_DESC_F_NEXT, 1 };
	ind[1] = (struct vring_desc){ GPA_BASE + 0x5000, 64, VRING_DESC_F_WRITE, 0 };
	set_desc(0, GPA_BASE + 0x8000, 2 * sizeof(*ind), VRING_DESC_F_INDIRECT, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == 1);
	CHECK(el.rd_len == 48 && el.wr_len == 64);
}

static void t_vring_indirect_bad(void)
{
	struct vring_desc *ind = (void *)(mem + 0x8000);

	/* length not a multiple of a descriptor */
	ring_setup(false);
	set_desc(0, GPA_BASE + 0x8000, 20, VRING_DESC_F_INDIRECT, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);

	/* table outside memory */
	ring_setup(false);
	set_desc(0, GPA_BASE + MEM_SIZE - 16, 32, VRING_DESC_F_INDIRECT, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);

	/* loop inside the table */
	ring_setup(false);
	ind[0] = (struct vring_desc){ GPA_BASE + 0x4000, 8, VRING_DESC_F_NEXT, 1 };
	ind[1] = (struct vring_desc){ GPA_BASE + 0x4000, 8, VRING_DESC_F_NEXT, 0 };
	set_desc(0, GPA_BASE + 0x8000, 32, VRING_DESC_F_INDIRECT, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);

	/* nested */
	ring_setup(false);
	ind[0] = (struct vring_desc){ GPA_BASE + 0x8000, 16, VRING_DESC_F_INDIRECT, 0 };
	set_desc(0, GPA_BASE + 0x8000, 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);

	/* longer than the queue */
	ring_setup(false);
	set_desc(0, GPA_BASE + 0x8000, (QN + 1) * 16, VRING_DESC_F_INDIRECT, 0);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);

	/* indirect together with next */
	ring_setup(false);
	ind[0] = (struct vring_desc){ GPA_BASE + 0x4000, 8, 0, 0 };
	set_desc(0, GPA_BASE + 0x8000, 16, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
	make_avail(0);
	CHECK(vring__pop(&vr, &el) == -1);
}

static void t_vring_event_idx(void)
{
	uint16_t *used_event;
	int i;

	ring_setup(true);
	used_event = &avail_ring()->ring[QN];
	for (i = 0; i < 3; i++) {
		set_desc(i, GPA_BASE + 0x4000, 16, 0, 0);
		make_avail(i);
	}
	*used_event = 2;	/* interrupt when entry 2 is used */
	for (i = 0; i < 3; i++)
		CHECK(vring__pop(&vr, &el) == 1);
	vring__push(&vr, 0, 0);
	CHECK(!vring__need_signal(&vr));
	vring__push(&vr, 1, 0);
	CHECK(!vring__need_signal(&vr));
	vring__push(&vr, 2, 0);
	CHECK(vring__need_signal(&vr));
	CHECK(!vring__enable_kick(&vr));
	CHECK(*(uint16_t *)((uint8_t *)used_ring() + 4 + 8 * QN) == 3);
}

/* ---- FUSE server ---- */

static char tmpdir[] = "/tmp/vufs-unit-XXXXXX";
static char share[256], outside[256];
static struct options fopt;
static struct fuse_server *srv;
static struct fuse_ctx *ctx;
static uint64_t next_unique = 1;
/* caller's uid in the next requests, and reply room (0 = the whole buffer) */
static uint32_t req_uid;
static size_t req_out_max;

struct reply {
	int error;
	size_t len;
	void *data;
};

/* Builds a request from (ptr, len) pairs ending with NULL. */
static struct reply req(uint32_t opcode, uint64_t nodeid, ...)
{
	struct fuse_in_header *ih = (void *)ctx->in;
	struct fuse_out_header *oh = (void *)ctx->out;
	size_t len = sizeof(*ih), n;
	struct reply r = { 0 };
	const void *p;
	va_list ap;
	int err;

	memset(ih, 0, sizeof(*ih));
	va_start(ap, nodeid);
	while ((p = va_arg(ap, const void *))) {
		size_t l = va_arg(ap, size_t);

		memcpy(ctx->in + len, p, l);
		len += l;
	}
	va_end(ap);
	ih->len = len;
	ih->opcode = opcode;
	ih->unique = next_unique++;
	ih->nodeid = nodeid;
	ih->uid = req_uid;
	ih->gid = req_uid;
	n = fuse_server__handle(srv, ctx, len,
				req_out_max ? req_out_max : ctx->out_cap, &err);
	if (req_out_max && n > req_out_max)
		r.error = -9998;	/* reply longer than the guest's buffer */
	r.len = n;
	if (n >= sizeof(*oh)) {
		r.error = oh->error;
		r.data = ctx->out + sizeof(*oh);
		r.len = n - sizeof(*oh);
		if (oh->unique != ih->unique || oh->len != n)
			r.error = -9999;
		if (req_out_max && n > req_out_max)
			r.error = -9998;
	}
	return r;
}

#define S(str) (str), sizeof(str)

static void server_start_opts(bool readonly, unsigned int fd_cache,
			      void (*tweak)(struct options *));

static void server_start(bool readonly, unsigned int fd_cache)
{
	server_start_opts(readonly, fd_cache, NULL);
}

static void server_start_opts(bool readonly, unsigned int fd_cache,
			      void (*tweak)(struct options *))
{
	struct fuse_init_in init = { .major = 7, .minor = 41,
		.max_readahead = 65536, .flags = 0xffffffff };

	if (srv)
		fuse_server__free(srv);
	memset(&fopt, 0, sizeof(fopt));
	req_uid = 0;
	req_out_max = 0;
	fopt.shared_dir = share;
	fopt.xattr = true;
	fopt.cache = CACHE_AUTO;
	fopt.readonly = readonly;
	fopt.fd_cache = fd_cache;
	if (tweak)
		tweak(&fopt);
	{
		/* the mount warnings are checked by t_mount_warning */
		int saved = dup(2), null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		srv = passthrough__new(&fopt);
		dup2(saved, 2);
		close(saved);
		close(null);
	}
	if (!ctx)
		ctx = fuse_ctx__new();
	req(FUSE_INIT, 0, &init, sizeof(init), NULL);
}

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd))
		fprintf(stderr, "command failed: %s\n", cmd);
}

static uint64_t lookup(uint64_t parent, const char *name, int *err)
{
	struct reply r = req(FUSE_LOOKUP, parent, name, strlen(name) + 1, NULL);
	struct fuse_entry_out *e = r.data;

	*err = r.error;
	return r.error ? 0 : e->nodeid;
}

static void t_fuse_init(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41, .flags = 0xffffffff };
	struct reply r;
	struct fuse_init_out *o;

	server_start(false, 64);
	r = req(FUSE_INIT, 0, &init, sizeof(init), NULL);
	o = r.data;
	CHECK(r.error == 0 && r.len == sizeof(*o));
	CHECK(o->major == 7 && o->minor == 38);
	CHECK(o->max_write == FUSE_SERVER_MAX_WRITE);
	CHECK(!(o->flags & (FUSE_POSIX_LOCKS | FUSE_FLOCK_LOCKS)));
}

static void no_async_dio(struct options *o)
{
	o->no_async_dio = true;
}

/* The INIT flags granted to a kernel that asks for all of them, 0 on error */
static uint32_t init_granted(void (*set)(struct options *), bool sync)
{
	struct fuse_init_in init = { .major = 7, .minor = 41, .flags = 0xffffffff };
	struct fuse_init_out *o;
	struct reply r;

	server_start_opts(false, 64, set);
	fuse_server__set_sync(srv, sync);
	r = req(FUSE_INIT, 0, &init, sizeof(init), NULL);
	o = r.data;
	return r.error ? 0 : o->flags;
}

/*
 * --no-async-dio, and a frontend that accepted sync queues, take
 * FUSE_ASYNC_DIO, and only it, out of the grant.
 */
static void t_fuse_init_no_async_dio(void)
{
	uint32_t granted = init_granted(NULL, false);

	CHECK(granted & FUSE_ASYNC_DIO);
	CHECK(init_granted(no_async_dio, false) == (granted & ~FUSE_ASYNC_DIO));
	CHECK(init_granted(NULL, true) == (granted & ~FUSE_ASYNC_DIO));
}

static void t_fuse_malformed(void)
{
	struct fuse_in_header *ih = (void *)ctx->in;
	size_t n;
	int err, e2;

	/* short header */
	memset(ctx->in, 0, 64);
	n = fuse_server__handle(srv, ctx, 10, ctx->out_cap, &err);
	CHECK(n == sizeof(struct fuse_out_header) && err == EINVAL);
	/* header length disagrees with the buffer */
	ih->len = 100;
	ih->opcode = FUSE_GETATTR;
	ih->nodeid = 1;
	n = fuse_server__handle(srv, ctx, sizeof(*ih) + 16, ctx->out_cap, &err);
	CHECK(err == EINVAL);
	/* reply room below a header: nothing written */
	ih->len = sizeof(*ih) + 16;
	n = fuse_server__handle(srv, ctx, ih->len, 8, &err);
	CHECK(n == 0);
	/* unknown opcode */
	CHECK(req(9999, 1, NULL).error == -ENOSYS);
	CHECK(req(FUSE_SETUPMAPPING, 1, NULL).error == -ENOSYS);
	/* unknown nodeid */
	CHECK(req(FUSE_GETATTR, 0x12345678, S("0123456789abcdef"), NULL).error == -ENOENT);
	CHECK(req(FUSE_GETATTR, 0, S("0123456789abcdef"), NULL).error == -ENOENT);
	/* name without NUL */
	CHECK(req(FUSE_LOOKUP, 1, "abc", (size_t)3, NULL).error == -EINVAL);
	/* names with '/' */
	lookup(1, "a/b", &err);
	CHECK(err == -EINVAL);
	lookup(1, "", &e2);
	CHECK(e2 == -EINVAL);
	/* short argument struct */
	CHECK(req(FUSE_MKDIR, 1, "x", (size_t)1, NULL).error == -EINVAL);
	/* forgetting nodeids that were never handed out */
	{
		struct { struct fuse_batch_forget_in b; struct fuse_forget_one o[3]; } bf = {
			{ .count = 5 },
			{ { 99, 1 }, { 0xffffffff00000001ULL, 1 }, { 1, 1000 } },
		};
		struct fuse_forget_in fi = { .nlookup = 3 };

		CHECK(req(FUSE_BATCH_FORGET, 0, &bf, sizeof(bf), NULL).len == 0);
		CHECK(req(FUSE_FORGET, 12345, &fi, sizeof(fi), NULL).len == 0);
		CHECK(req(FUSE_GETATTR, 1, S("0123456789abcdef"), NULL).error == 0);
	}
	/* unknown file handle */
	{
		struct fuse_read_in rd = { .fh = 77, .size = 10 };

		CHECK(req(FUSE_READ, 1, &rd, sizeof(rd), NULL).error == -EBADF);
	}
}

static void t_fuse_dotdot_root(void)
{
	int err;

	CHECK(lookup(1, "..", &err) == 1 && err == 0);
	CHECK(lookup(1, ".", &err) == 1 && err == 0);
	/* the share's parent directory holds "outside": it must not show */
	lookup(1, "outside", &err);
	CHECK(err == -ENOENT);
}

static void t_fuse_symlink_escape(void)
{
	struct fuse_open_in oi = { .flags = O_RDONLY };
	struct fuse_mkdir_in mi = { .mode = 0755 };
	struct fuse_getattr_in gi = { 0 };
	struct reply r;
	uint64_t esc, escf;
	int err;

	esc = lookup(1, "esc_dir", &err);
	CHECK(err == 0);
	r = req(FUSE_GETATTR, esc, &gi, sizeof(gi), NULL);
	CHECK(r.error == 0 &&
	      S_ISLNK(((struct fuse_attr_out *)r.data)->attr.mode));
	/* looking through the link must not reach the outside directory */
	lookup(esc, "secret", &err);
	CHECK(err == -ENOTDIR);
	CHECK(req(FUSE_MKDIR, esc, &mi, sizeof(mi), S("newdir"), NULL).error != 0);
	CHECK(access(outside, F_OK) == 0);
	escf = lookup(1, "esc_file", &err);
	CHECK(err == 0);
	CHECK(req(FUSE_OPEN, escf, &oi, sizeof(oi), NULL).error == -ELOOP);
	r = req(FUSE_READLINK, escf, NULL);
	CHECK(r.error == 0 && r.len == strlen(outside) + 7);
	CHECK(req(FUSE_OPENDIR, esc, &oi, sizeof(oi), NULL).error == -ENOTDIR);
	/* a device node in the share must not open the host's device */
	{
		struct fuse_mknod_in mk = { .mode = S_IFCHR | 0666,
			.rdev = makedev(1, 3) };
		uint64_t dev;

		char p[300];
		int err;

		/* made on the host: MKNOD of devices is refused by default */
		snprintf(p, sizeof(p), "%s/hostnull", share);
		CHECK(mknod(p, mk.mode, mk.rdev) == 0);
		dev = lookup(1, "hostnull", &err);
		CHECK(err == 0);
		CHECK(req(FUSE_OPEN, dev, &oi, sizeof(oi), NULL).error == -ENXIO);
		CHECK(req(FUSE_UNLINK, 1, S("hostnull"), NULL).error == 0);
	}
	{
		char p[300];
		struct stat st;

		snprintf(p, sizeof(p), "%s/newdir", outside);
		CHECK(stat(p, &st) != 0);
	}
}

static void t_fuse_create_rw(void)
{
	struct fuse_create_in ci = { .flags = O_RDWR | O_CREAT | O_EXCL,
		.mode = S_IFREG | 0640 };
	struct fuse_entry_out *e;
	struct fuse_open_out *o;
	struct fuse_write_in wi = { 0 };
	struct fuse_read_in ri = { 0 };
	struct fuse_release_in rel = { 0 };
	char path[300], buf[64];
	struct reply r;
	uint64_t fh, node;
	int fd;

	r = req(FUSE_CREATE, 1, &ci, sizeof(ci), S("file1"), NULL);
	CHECK(r.error == 0 && r.len == sizeof(*e) + sizeof(*o));
	e = r.data;
	o = (void *)(e + 1);
	fh = o->fh;
	node = e->nodeid;
	CHECK(S_ISREG(e->attr.mode) && (e->attr.mode & 0777) == 0640);
	wi.fh = fh;
	wi.size = 11;
	r = req(FUSE_WRITE, node, &wi, sizeof(wi), "hello world", (size_t)11, NULL);
	CHECK(r.error == 0 && ((struct fuse_write_out *)r.data)->size == 11);
	ri.fh = fh;
	ri.size = 5;
	ri.offset = 6;
	r = req(FUSE_READ, node, &ri, sizeof(ri), NULL);
	CHECK(r.error == 0 && r.len == 5 && !memcmp(r.data, "world", 5));
	/* O_EXCL on an existing name */
	CHECK(req(FUSE_CREATE, 1, &ci, sizeof(ci), S("file1"), NULL).error == -EEXIST);
	rel.fh = fh;
	CHECK(req(FUSE_RELEASE, node, &rel, sizeof(rel), NULL).error == 0);
	CHECK(req(FUSE_RELEASE, node, &rel, sizeof(rel), NULL).error == -EBADF);
	CHECK(req(FUSE_READ, node, &ri, sizeof(ri), NULL).error == -EBADF);
	snprintf(path, sizeof(path), "%s/file1", share);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, sizeof(buf)) == 11);
	close(fd);
	CHECK(!memcmp(buf, "hello world", 11));
	/* O_NOFOLLOW on a regular file opens it */
	{
		struct fuse_open_in oi = { .flags = O_RDONLY | O_NOFOLLOW };
		struct reply r2 = req(FUSE_OPEN, node, &oi, sizeof(oi), NULL);
		struct fuse_release_in rel2 = { 0 };

		CHECK(r2.error == 0);
		rel2.fh = ((struct fuse_open_out *)r2.data)->fh;
		CHECK(req(FUSE_RELEASE, node, &rel2, sizeof(rel2), NULL).error == 0);
	}
	/* names longer than NAME_MAX */
	{
		char longname[300];

		memset(longname, 'n', 299);
		longname[299] = 0;
		CHECK(req(FUSE_CREATE, 1, &ci, sizeof(ci), longname, (size_t)300, NULL).error == -ENAMETOOLONG);
		CHECK(req(FUSE_LOOKUP, 1, longname, (size_t)300, NULL).error == -ENAMETOOLONG);
	}
	/* create through a name with a slash */
	CHECK(req(FUSE_CREATE, 1, &ci, sizeof(ci), S("a/b"), NULL).error == -EINVAL);
	CHECK(req(FUSE_CREATE, 1, &ci, sizeof(ci), S(".."), NULL).error == -EINVAL);
}

static void t_fuse_setattr(void)
{
	struct fuse_setattr_in si = { 0 };
	struct fuse_attr_out *a;
	struct reply r;
	uint64_t node;
	int err;

	node = lookup(1, "file1", &err);
	CHECK(err == 0);
	si.valid = FATTR_SIZE | FATTR_MODE | FATTR_MTIME | FATTR_ATIME;
	si.size = 3;
	si.mode = 0600;
	si.mtime = 1000000;
	si.atime = 2000000;
	r = req(FUSE_SETATTR, node, &si, sizeof(si), NULL);
	a = r.data;
	CHECK(r.error == 0);
	CHECK(a->attr.size == 3 && (a->attr.mode & 07777) == 0600);
	CHECK(a->attr.mtime == 1000000 && a->attr.atime == 2000000);
	si.valid = FATTR_MTIME | FATTR_MTIME_NOW | FATTR_UID | FATTR_GID;
	si.uid = 1234;
	si.gid = 4321;
	r = req(FUSE_SETATTR, node, &si, sizeof(si), NULL);
	a = r.data;
	CHECK(r.error == 0 && a->attr.mtime > 1000000);
	CHECK(a->attr.uid == 1234 && a->attr.gid == 4321);
}

static void t_fuse_dirs(void)
{
	struct fuse_mkdir_in mi = { .mode = 0755 };
	struct fuse_rename2_in rn = { .newdir = 1 };
	struct fuse_open_in oi = { 0 };
	struct fuse_read_in ri = { .size = 4096 };
	struct reply r;
	uint64_t d, fh;
	int err, seen = 0;
	size_t off;

	r = req(FUSE_MKDIR, 1, &mi, sizeof(mi), S("dir1"), NULL);
	CHECK(r.error == 0);
	d = ((struct fuse_entry_out *)r.data)->nodeid;
	CHECK(req(FUSE_MKDIR, 1, &mi, sizeof(mi), S("dir1"), NULL).error == -EEXIST);
	CHECK(req(FUSE_MKDIR, d, &mi, sizeof(mi), S("sub"), NULL).error == 0);
	CHECK(lookup(d, "..", &err) == 1 && err == 0);
	/* NOREPLACE onto an existing name */
	rn.flags = 1;
	CHECK(req(FUSE_RENAME2, 1, &rn, sizeof(rn), S("file1"), S("dir1"), NULL).error == -EEXIST);
	/* EXCHANGE */
	rn.flags = 2;
	CHECK(req(FUSE_RENAME2, 1, &rn, sizeof(rn), S("file1"), S("dir1"), NULL).error == 0);
	CHECK(req(FUSE_RENAME2, 1, &rn, sizeof(rn), S("file1"), S("dir1"), NULL).error == 0);
	rn.flags = 8;
	CHECK(req(FUSE_RENAME2, 1, &rn, sizeof(rn), S("file1"), S("dir1"), NULL).error == -EINVAL);
	CHECK(req(FUSE_RMDIR, 1, S("dir1"), NULL).error == -ENOTEMPTY);

	r = req(FUSE_OPENDIR, d, &oi, sizeof(oi), NULL);
	CHECK(r.error == 0);
	fh = ((struct fuse_open_out *)r.data)->fh;
	ri.fh = fh;
	r = req(FUSE_READDIRPLUS, d, &ri, sizeof(ri), NULL);
	CHECK(r.error == 0 && r.len > 0);
	for (off = 0; off < r.len;) {
		struct fuse_direntplus *dp = (void *)((char *)r.data + off);

		if (dp->dirent.namelen == 3 && !memcmp(dp->dirent.name, "sub", 3)) {
			CHECK(dp->entry_out.nodeid != 0);
			seen++;
		}
		if (dp->dirent.name[0] == '.')
			CHECK(dp->entry_out.nodeid == 0);
		off += FUSE_DIRENTPLUS_SIZE(dp);
	}
	CHECK(seen == 1);
	r = req(FUSE_READDIR, d, &ri, sizeof(ri), NULL);
	CHECK(r.error == 0 && r.len > 0);
	/* a directory handle is not a file handle */
	CHECK(req(FUSE_READ, d, &ri, sizeof(ri), NULL).error == -EBADF);
	{
		struct fuse_release_in rel = { .fh = fh };

		CHECK(req(FUSE_RELEASEDIR, d, &rel, sizeof(rel), NULL).error == 0);
	}
	CHECK(req(FUSE_RMDIR, d, S("sub"), NULL).error == 0);
	CHECK(req(FUSE_RMDIR, 1, S("dir1"), NULL).error == 0);
	CHECK(req(FUSE_UNLINK, 1, S("nonexistent"), NULL).error == -ENOENT);
	CHECK(req(FUSE_UNLINK, 1, S(".."), NULL).error == -EINVAL);
}

static void t_fuse_symlink_link_xattr(void)
{
	struct fuse_link_in li;
	struct fuse_setxattr_in sx = { .size = 3 };
	struct fuse_getxattr_in gx = { .size = 64 };
	struct reply r;
	uint64_t f;
	int err;

	r = req(FUSE_SYMLINK, 1, S("sl"), S("/etc/passwd"), NULL);
	CHECK(r.error == 0 && S_ISLNK(((struct fuse_entry_out *)r.data)->attr.mode));
	f = lookup(1, "file1", &err);
	CHECK(err == 0);
	li.oldnodeid = f;
	r = req(FUSE_LINK, 1, &li, sizeof(li), S("hard"), NULL);
	CHECK(r.error == 0 && ((struct fuse_entry_out *)r.data)->attr.nlink == 2);
	r = req(FUSE_SETXATTR, f, &sx, (size_t)8, S("user.k"), "abc", (size_t)3, NULL);
	if (r.error == -EOPNOTSUPP)
		return;	/* file system without user xattrs */
	CHECK(r.error == 0);
	r = req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.k"), NULL);
	CHECK(r.error == 0 && r.len == 3 && !memcmp(r.data, "abc", 3));
	gx.size = 0;
	r = req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.k"), NULL);
	CHECK(r.error == 0 && ((struct fuse_getxattr_out *)r.data)->size == 3);
	gx.size = 1;
	CHECK(req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.k"), NULL).error == -ERANGE);
	gx.size = 256;
	r = req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL);
	CHECK(r.error == 0 && r.len == 7);
	CHECK(req(FUSE_REMOVEXATTR, f, S("user.k"), NULL).error == 0);
	gx.size = 64;
	CHECK(req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.k"), NULL).error == -ENODATA);
}

static void t_fuse_fd_cache(void)
{
	struct fuse_getattr_in gi = { 0 };
	struct fuse_forget_in fi = { .nlookup = 1 };
	unsigned long inodes, fds;
	uint64_t nodes[100];
	char name[32];
	int i, err;

	server_start(false, 8);
	sh("mkdir -p %s/many && cd %s/many && for i in $(seq 0 99); do : > f$i; done",
	   share, share);
	{
		uint64_t dir = lookup(1, "many", &err);

		CHECK(err == 0);
		for (i = 0; i < 100; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			nodes[i] = lookup(dir, name, &err);
			CHECK(err == 0);
		}
	}
	passthrough__counts(srv, &inodes, &fds);
	CHECK(inodes == 102 && fds <= 8 + 1);
	for (i = 0; i < 100; i++) {
		struct reply r = req(FUSE_GETATTR, nodes[i], &gi, sizeof(gi), NULL);

		CHECK(r.error == 0);
	}
	passthrough__counts(srv, &inodes, &fds);
	CHECK(fds <= 8 + 1);
	/* an evicted inode whose last name goes stays usable */
	{
		struct fuse_setattr_in si = { .valid = FATTR_MTIME | FATTR_MTIME_NOW };
		uint64_t dir = lookup(1, "many", &err);

		CHECK(req(FUSE_UNLINK, dir, S("f0"), NULL).error == 0);
		CHECK(req(FUSE_SETATTR, nodes[0], &si, sizeof(si), NULL).error == 0);
		CHECK(req(FUSE_GETATTR, nodes[0], &gi, sizeof(gi), NULL).error == 0);
		req(FUSE_FORGET, dir, &fi, sizeof(fi), NULL);
	}
	for (i = 0; i < 100; i++)
		req(FUSE_FORGET, nodes[i], &fi, sizeof(fi), NULL);
	passthrough__counts(srv, &inodes, &fds);
	CHECK(inodes == 2);
	/* a forgotten nodeid is unknown */
	CHECK(req(FUSE_GETATTR, nodes[5], &gi, sizeof(gi), NULL).error == -ENOENT);
}

static void t_fuse_readonly(void)
{
	struct fuse_mkdir_in mi = { .mode = 0755 };
	struct fuse_open_in oi = { .flags = O_RDWR };
	int err;
	uint64_t f;

	server_start(true, 64);
	CHECK(req(FUSE_MKDIR, 1, &mi, sizeof(mi), S("ro"), NULL).error == -EROFS);
	{
		/* a read-only share says so first, also to device nodes */
		struct fuse_mknod_in mk = { .mode = S_IFCHR | 0666,
			.rdev = makedev(1, 3) };

		CHECK(req(FUSE_MKNOD, 1, &mk, sizeof(mk), S("null"), NULL).error == -EROFS);
	}
	f = lookup(1, "file1", &err);
	CHECK(err == 0);
	CHECK(req(FUSE_OPEN, f, &oi, sizeof(oi), NULL).error == -EROFS);
	CHECK(req(FUSE_UNLINK, 1, S("file1"), NULL).error == -EROFS);
	server_start(false, 64);
}

static void t_fuse_uninitialized(void)
{
	struct fuse_getattr_in gi = { 0 };

	req(FUSE_DESTROY, 0, NULL);
	CHECK(req(FUSE_GETATTR, 1, &gi, sizeof(gi), NULL).error == -EIO);
	server_start(false, 64);
	CHECK(req(FUSE_GETATTR, 1, &gi, sizeof(gi), NULL).error == 0);
}

/* ---- request checks ---- */

static void opt_devices(struct options *o)
{
	o->allow_devices = true;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void forget(uint64_t nodeid, uint64_t n)
{
	struct fuse_forget_in fi = { .nlookup = n };

	req(FUSE_FORGET, nodeid, &fi, sizeof(fi), NULL);
}

/*
 * O_TMPFILEs released but not forgotten, their fds evicted by other
 * lookups so the host frees them and reuses their inode numbers for
 * device nodes: no new node may come back with a tmpfile's nodeid, and
 * none may open.
 */
#define NTMP	64
static void t_stale_inode_reuse(void)
{
	struct fuse_create_in ci = { .flags = O_RDWR, .mode = S_IFREG | 0600 };
	struct fuse_mknod_in mk = { .mode = S_IFCHR | 0666,
		.rdev = makedev(1, 5) };
	struct fuse_open_in oi = { .flags = O_RDWR };
	struct fuse_getattr_in gi = { 0 };
	uint64_t tnode[NTMP], dir, fill;
	uint64_t tino[NTMP];
	int i, j, err, reused = 0;
	char name[32], cmd[1024];

	/*
	 * Whether the host reuses a freed inode number at once depends on its
	 * file system: ext4 without a journal (as / may be) skips inodes
	 * deleted before the current second for minutes, so a second
	 * boundary under load meant no reuse.  A small ext4 of our own with
	 * a journal hands out its lowest free inode number every time.
	 */
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/stale && truncate -s 8M %s/stale.img && "
		 "mkfs.ext4 -q -F -N 512 -O has_journal %s/stale.img && "
		 "mount -o loop %s/stale.img %s/stale",
		 share, tmpdir, tmpdir, tmpdir, share);
	if (system(cmd)) {
		fprintf(stderr, "command failed: %s\n", cmd);
		CHECK(!"a loop-mounted ext4 for the stale inode test");
		return;
	}
	server_start_opts(false, 8, opt_devices);
	sh("mkdir -p %s/stale/fill && cd %s/stale/fill && for i in $(seq 0 99); do : > f$i; done",
	   share, share);
	dir = lookup(1, "stale", &err);
	CHECK(err == 0);
	fill = lookup(dir, "fill", &err);
	CHECK(err == 0);
	for (i = 0; i < NTMP; i++) {
		struct reply r = req(FUSE_TMPFILE, dir, &ci, sizeof(ci), NULL);
		struct fuse_entry_out *e = r.data;
		struct fuse_release_in rel = { 0 };

		CHECK(r.error == 0);
		tnode[i] = e->nodeid;
		tino[i] = e->attr.ino;
		rel.fh = ((struct fuse_open_out *)(e + 1))->fh;
		CHECK(req(FUSE_RELEASE, tnode[i], &rel, sizeof(rel), NULL).error == 0);
	}
	/* push the tmpfiles' fds out of the cache: the host frees them */
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		lookup(fill, name, &err);
		CHECK(err == 0);
	}
	for (i = 0; i < NTMP; i++) {
		struct reply r;
		struct fuse_entry_out *e;

		snprintf(name, sizeof(name), "c%d", i);
		r = req(FUSE_MKNOD, dir, &mk, sizeof(mk), name, strlen(name) + 1,
			NULL);
		CHECK(r.error == 0);
		e = r.data;
		CHECK(S_ISCHR(e->attr.mode));
		for (j = 0; j < NTMP; j++) {
			if (e->attr.ino != tino[j])
				continue;
			reused++;
			/* the freed tmpfile's nodeid must not name the device */
			CHECK(e->nodeid != tnode[j]);
			r = req(FUSE_GETATTR, tnode[j], &gi, sizeof(gi), NULL);
			CHECK(r.error != 0 ||
			      !S_ISCHR(((struct fuse_attr_out *)r.data)->attr.mode));
			CHECK(req(FUSE_OPEN, tnode[j], &oi, sizeof(oi), NULL).error != 0);
		}
		CHECK(req(FUSE_OPEN, e->nodeid, &oi, sizeof(oi), NULL).error == -ENXIO);
	}
	printf("     %d of %d device nodes reused a freed tmpfile's inode\n",
	       reused, NTMP);
	/* without reuse this test showed nothing */
	CHECK(reused > 0);
	/* the server's fds keep the mount busy */
	fuse_server__free(srv);
	srv = NULL;
	snprintf(cmd, sizeof(cmd), "umount %s/stale", share);
	CHECK(system(cmd) == 0);
	sh("rm -rf %s/stale %s/stale.img", share, tmpdir);
	server_start(false, 64);
}

static void t_mknod_devices(void)
{
	struct fuse_mknod_in mk = { .mode = S_IFCHR | 0666,
		.rdev = makedev(1, 5) };
	struct fuse_mknod_in bk = { .mode = S_IFBLK | 0666,
		.rdev = makedev(7, 0) };
	struct fuse_mknod_in fifo = { .mode = S_IFIFO | 0666 };
	struct stat st;
	char p[300];

	server_start(false, 64);
	CHECK(req(FUSE_MKNOD, 1, &mk, sizeof(mk), S("chr"), NULL).error == -EPERM);
	CHECK(req(FUSE_MKNOD, 1, &bk, sizeof(bk), S("blk"), NULL).error == -EPERM);
	snprintf(p, sizeof(p), "%s/chr", share);
	CHECK(lstat(p, &st) != 0);
	CHECK(req(FUSE_MKNOD, 1, &fifo, sizeof(fifo), S("fifo"), NULL).error == 0);
	CHECK(req(FUSE_UNLINK, 1, S("fifo"), NULL).error == 0);
	server_start_opts(false, 64, opt_devices);
	CHECK(req(FUSE_MKNOD, 1, &mk, sizeof(mk), S("chr"), NULL).error == 0);
	CHECK(lstat(p, &st) == 0 && S_ISCHR(st.st_mode));
	CHECK(req(FUSE_UNLINK, 1, S("chr"), NULL).error == 0);
	server_start(false, 64);
}

/*
 * CREATE without O_EXCL on a name that exists: nothing but a regular file
 * is opened. A device must not reach the host's driver (here /dev/zero's
 * data), and a FIFO would block the open for good: the request runs in a
 * child with an alarm, so a hang fails the test instead of stopping it.
 */
static int create_in_child(const char *name, uint32_t flags)
{
	struct fuse_create_in ci = { .flags = flags | O_CREAT,
		.mode = S_IFREG | 0644 };
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct reply r;

		alarm(3);
		r = req(FUSE_CREATE, 1, &ci, sizeof(ci), name, strlen(name) + 1,
			NULL);
		_exit(r.error == -ENXIO ? 0 : r.error == 0 ? 1 : 2);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		printf("  CREATE %s: killed by signal %d (hung in open)\n",
		       name, WTERMSIG(status));
	else if (WEXITSTATUS(status))
		printf("  CREATE %s: %s\n", name, WEXITSTATUS(status) == 1 ?
		       "opened" : "unexpected error");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void t_create_special(void)
{
	struct fuse_create_in ci = { .flags = O_RDWR | O_CREAT,
		.mode = S_IFREG | 0644 };
	struct fuse_mknod_in fifo = { .mode = S_IFIFO | 0666 };
	struct fuse_read_in ri = { .size = 16 };
	struct fuse_entry_out *e;
	struct fuse_open_out *o;
	struct reply r;
	char p[300];
	int err;

	server_start(false, 64);
	/* a device made on the host (a root-filesystem share's dev/) */
	snprintf(p, sizeof(p), "%s/hostzero", share);
	CHECK(mknod(p, S_IFCHR | 0666, makedev(1, 5)) == 0);
	r = req(FUSE_CREATE, 1, &ci, sizeof(ci), S("hostzero"), NULL);
	if (r.error == 0) {
		e = r.data;
		o = (void *)(e + 1);
		ri.fh = o->fh;
		r = req(FUSE_READ, e->nodeid, &ri, sizeof(ri), NULL);
		printf("  CREATE hostzero opened it; READ: error %d, %zu bytes\n",
		       r.error, r.len);
		r.error = 0;
	}
	CHECK(r.error == -ENXIO);
	/* with --allow-devices a guest-made one is no different */
	server_start_opts(false, 64, opt_devices);
	CHECK(create_in_child("hostzero", O_RDONLY) == 0);
	CHECK(req(FUSE_UNLINK, 1, S("hostzero"), NULL).error == 0);
	/* a FIFO made by the guest, opened for writing: no reader, ever */
	server_start(false, 64);
	CHECK(req(FUSE_MKNOD, 1, &fifo, sizeof(fifo), S("fifo"), NULL).error == 0);
	CHECK(create_in_child("fifo", O_WRONLY) == 0);
	CHECK(create_in_child("fifo", O_RDONLY) == 0);
	CHECK(req(FUSE_UNLINK, 1, S("fifo"), NULL).error == 0);
	/* a directory and a symlink are refused as open(2) would */
	CHECK(req(FUSE_CREATE, 1, &ci, sizeof(ci), S("esc_dir"), NULL).error == -ELOOP);
	sh("mkdir %s/cdir", share);
	err = req(FUSE_CREATE, 1, &ci, sizeof(ci), S("cdir"), NULL).error;
	CHECK(err == -EISDIR);
	sh("rmdir %s/cdir", share);
	/* an existing regular file still opens, and O_TRUNC truncates it */
	sh("echo data > %s/reg", share);
	ci.flags = O_RDWR | O_CREAT | O_TRUNC;
	r = req(FUSE_CREATE, 1, &ci, sizeof(ci), S("reg"), NULL);
	CHECK(r.error == 0);
	e = r.data;
	CHECK(S_ISREG(e->attr.mode) && e->attr.size == 0);
	o = (void *)(e + 1);
	{
		struct fuse_release_in rel = { .fh = o->fh };

		CHECK(req(FUSE_RELEASE, e->nodeid, &rel, sizeof(rel), NULL).error == 0);
	}
	CHECK(req(FUSE_UNLINK, 1, S("reg"), NULL).error == 0);
	CHECK(kill(getpid(), 0) == 0);
}

/* What passthrough__new() writes to stderr for a share at dir. */
static void start_stderr(const char *dir, char *buf, size_t len)
{
	int saved = dup(2), fd = open(tmpdir, O_TMPFILE | O_RDWR, 0600);
	ssize_t n;

	fflush(stderr);
	dup2(fd, 2);
	fopt.shared_dir = dir;
	fuse_server__free(srv);
	srv = passthrough__new(&fopt);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	fopt.shared_dir = share;
}

static void t_mount_warning(void)
{
	char msg[1024], safe[300];

	start_stderr(share, msg, sizeof(msg));
	CHECK(strstr(msg, "nosuid") && strstr(msg, "nodev"));
	snprintf(safe, sizeof(safe), "%s/safe", tmpdir);
	sh("mkdir -p %s && mount -t tmpfs -o nosuid,nodev none %s", safe, safe);
	start_stderr(safe, msg, sizeof(msg));
	sh("umount %s", safe);
	CHECK(!strstr(msg, "nosuid") && !strstr(msg, "nodev"));
	server_start(false, 64);
}

/* Share and mode of the next server_start_opts(..., opt_flush). */
static const char *flush_share;
static enum flush_mode flush_opt;

static void opt_flush(struct options *o)
{
	o->shared_dir = flush_share;
	o->flush = flush_opt;
}

/* open_flags of a CREATE, an OPEN, a TMPFILE and an OPENDIR reply. */
static void open_replies(uint32_t flags[4])
{
	struct fuse_create_in ci = { .flags = O_RDWR | O_CREAT,
		.mode = S_IFREG | 0600 };
	struct fuse_open_in oi = { .flags = O_RDWR };
	struct fuse_open_in di = { .flags = O_RDONLY | O_DIRECTORY };
	struct fuse_release_in rel = { 0 };
	struct fuse_flush_in fl = { 0 };
	struct fuse_entry_out *e;
	struct fuse_open_out *o;
	struct reply r;
	uint64_t node;

	memset(flags, 0xff, 4 * sizeof(flags[0]));
	r = req(FUSE_CREATE, 1, &ci, sizeof(ci), S("nf"), NULL);
	CHECK(r.error == 0 && r.len == sizeof(*e) + sizeof(*o));
	if (r.error)
		return;
	e = r.data;
	o = (void *)(e + 1);
	node = e->nodeid;
	flags[0] = o->open_flags;
	/* a guest that sends FLUSH anyway gets it done */
	fl.fh = o->fh;
	CHECK(req(FUSE_FLUSH, node, &fl, sizeof(fl), NULL).error == 0);
	rel.fh = o->fh;
	CHECK(req(FUSE_RELEASE, node, &rel, sizeof(rel), NULL).error == 0);
	r = req(FUSE_OPEN, node, &oi, sizeof(oi), NULL);
	CHECK(r.error == 0 && r.len == sizeof(*o));
	if (!r.error) {
		o = r.data;
		flags[1] = o->open_flags;
		rel.fh = o->fh;
		CHECK(req(FUSE_RELEASE, node, &rel, sizeof(rel), NULL).error == 0);
	}
	CHECK(req(FUSE_UNLINK, 1, S("nf"), NULL).error == 0);
	r = req(FUSE_TMPFILE, 1, &ci, sizeof(ci), NULL);
	CHECK(r.error == 0 && r.len == sizeof(*e) + sizeof(*o));
	if (!r.error) {
		e = r.data;
		o = (void *)(e + 1);
		flags[2] = o->open_flags;
		rel.fh = o->fh;
		CHECK(req(FUSE_RELEASE, e->nodeid, &rel, sizeof(rel), NULL).error == 0);
	}
	r = req(FUSE_OPENDIR, 1, &di, sizeof(di), NULL);
	CHECK(r.error == 0 && r.len == sizeof(*o));
	if (!r.error) {
		o = r.data;
		flags[3] = o->open_flags;
		rel.fh = o->fh;
		CHECK(req(FUSE_RELEASEDIR, 1, &rel, sizeof(rel), NULL).error == 0);
	}
}

/*
 * FOPEN_NOFLUSH on file opens per --flush and per host file system: tmpfs
 * is on the auto list, overlayfs (it has a ->flush) is not. Directories
 * never get it.
 */
static void t_flush_mode(void)
{
	static const struct {
		enum flush_mode mode;
		bool on_tmpfs, on_overlay;
	} c[] = {
		{ FLUSH_AUTO, true, false },
		{ FLUSH_ALWAYS, false, false },
		{ FLUSH_NEVER, true, true },
	};
	char tmpfs[300], ovl[300], msg[1024];
	uint32_t f[4];
	unsigned int i;

	snprintf(tmpfs, sizeof(tmpfs), "%s/nf-tmpfs", tmpdir);
	snprintf(ovl, sizeof(ovl), "%s/nf-ovl", tmpdir);
	sh("mkdir -p %s %s/l %s/u %s/w %s/m && mount -t tmpfs none %s",
	   tmpfs, ovl, ovl, ovl, ovl, tmpfs);
	sh("mount -t overlay ovl -o lowerdir=%s/l,upperdir=%s/u,workdir=%s/w %s/m",
	   ovl, ovl, ovl, ovl);
	strcat(ovl, "/m");
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		flush_opt = c[i].mode;
		flush_share = tmpfs;
		server_start_opts(false, 64, opt_flush);
		open_replies(f);
		CHECK(!!(f[0] & FOPEN_NOFLUSH) == c[i].on_tmpfs);
		CHECK(!!(f[1] & FOPEN_NOFLUSH) == c[i].on_tmpfs);
		CHECK(!!(f[2] & FOPEN_NOFLUSH) == c[i].on_tmpfs);
		CHECK(!(f[3] & FOPEN_NOFLUSH));
		flush_share = ovl;
		server_start_opts(false, 64, opt_flush);
		open_replies(f);
		CHECK(!!(f[0] & FOPEN_NOFLUSH) == c[i].on_overlay);
		CHECK(!!(f[1] & FOPEN_NOFLUSH) == c[i].on_overlay);
		CHECK(!(f[3] & FOPEN_NOFLUSH));
	}
	/* auto: a submount of another file system under the share keeps FLUSH */
	sh("mkdir -p %s/sub && mount --bind %s %s/sub", tmpfs, ovl, tmpfs);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fuse_create_in ci = { .flags = O_RDWR | O_CREAT,
			.mode = S_IFREG | 0600 };
		struct fuse_release_in rel = { 0 };
		struct fuse_entry_out *e;
		struct fuse_open_out *o;
		struct reply r;
		uint64_t sub;
		int err;

		flush_opt = c[i].mode;
		flush_share = tmpfs;
		server_start_opts(false, 64, opt_flush);
		sub = lookup(1, "sub", &err);
		CHECK(err == 0);
		r = req(FUSE_CREATE, sub, &ci, sizeof(ci), S("sf"), NULL);
		CHECK(r.error == 0 && r.len == sizeof(*e) + sizeof(*o));
		if (r.error)
			continue;
		e = r.data;
		o = (void *)(e + 1);
		CHECK(!!(o->open_flags & FOPEN_NOFLUSH) == c[i].on_overlay);
		rel.fh = o->fh;
		CHECK(req(FUSE_RELEASE, e->nodeid, &rel, sizeof(rel), NULL).error == 0);
		CHECK(req(FUSE_UNLINK, sub, S("sf"), NULL).error == 0);
	}
	fuse_server__free(srv);
	srv = NULL;
	sh("umount %s/sub", tmpfs);
	/* auto says what it decided */
	fopt.flush = FLUSH_AUTO;
	start_stderr(tmpfs, msg, sizeof(msg));
	CHECK(strstr(msg, "--flush=auto") && strstr(msg, "tmpfs") &&
	      strstr(msg, "FOPEN_NOFLUSH"));
	start_stderr(ovl, msg, sizeof(msg));
	CHECK(strstr(msg, "--flush=auto") && strstr(msg, "guests send FLUSH"));
	fuse_server__free(srv);
	srv = NULL;
	sh("umount %s && umount %s", ovl, tmpfs);
	server_start(false, 64);
}

static int set_host_xattr(const char *file, const char *name, const char *v)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/%s", share, file);
	return setxattr(p, name, v, strlen(v), 0) ? -errno : 0;
}

static ssize_t get_host_xattr(const char *file, const char *name)
{
	char p[300], v[256];

	snprintf(p, sizeof(p), "%s/%s", share, file);
	return getxattr(p, name, v, sizeof(v));
}

static bool in_list(const struct reply *r, const char *name)
{
	size_t off;

	for (off = 0; off < r->len; off += strlen((char *)r->data + off) + 1)
		if (!strcmp((char *)r->data + off, name))
			return true;
	return false;
}

static uint64_t xattr_file(const char *name)
{
	char p[300];
	int err;
	uint64_t n;

	snprintf(p, sizeof(p), "%s/%s", share, name);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	n = lookup(1, name, &err);
	return err ? 0 : n;
}

static void t_xattr_filter(void)
{
	struct fuse_setxattr_in sx = { .size = 3 };
	struct fuse_getxattr_in gx = { .size = 256 };
	struct reply r;
	uint64_t f;

	server_start(false, 64);
	f = xattr_file("xf");
	CHECK(f);
	/* names the host would honour: refused */
	CHECK(req(FUSE_SETXATTR, f, &sx, (size_t)8, S("trusted.t"), "abc", (size_t)3, NULL).error == -EPERM);
	CHECK(req(FUSE_SETXATTR, f, &sx, (size_t)8, S("security.capability"), "abc", (size_t)3, NULL).error == -EPERM);
	CHECK(req(FUSE_SETXATTR, f, &sx, (size_t)8, S("security.selinux"), "abc", (size_t)3, NULL).error == -EPERM);
	CHECK(get_host_xattr("xf", "trusted.t") < 0);
	CHECK(get_host_xattr("xf", "security.capability") < 0);
	/* set on the host: hidden, not readable, not removable */
	CHECK(set_host_xattr("xf", "trusted.host", "xyz") == 0);
	CHECK(req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("trusted.host"), NULL).error == -ENODATA);
	CHECK(req(FUSE_REMOVEXATTR, f, S("trusted.host"), NULL).error == -EPERM);
	CHECK(get_host_xattr("xf", "trusted.host") == 3);
	CHECK(req(FUSE_SETXATTR, f, &sx, (size_t)8, S("user.ok"), "abc", (size_t)3, NULL).error == 0);
	r = req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL);
	CHECK(r.error == 0 && in_list(&r, "user.ok") && !in_list(&r, "trusted.host"));
	gx.size = 0;
	r = req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL);
	CHECK(r.error == 0 && ((struct fuse_getxattr_out *)r.data)->size == 8);
	CHECK(req(FUSE_REMOVEXATTR, f, S("user.ok"), NULL).error == 0);
}

static void opt_prefix(struct options *o)
{
	o->xattr_prefix = "user.virtiofs.";
}

static void t_xattr_prefix(void)
{
	struct fuse_setxattr_in sx = { .size = 3 };
	struct fuse_getxattr_in gx = { .size = 256 };
	char longname[260];
	struct reply r;
	uint64_t f;

	server_start_opts(false, 64, opt_prefix);
	f = xattr_file("xp");
	CHECK(f);
	CHECK(set_host_xattr("xp", "user.plain", "hst") == 0);
	CHECK(set_host_xattr("xp", "trusted.host", "hst") == 0);
	/* every guest name lands under the prefix */
	CHECK(req(FUSE_SETXATTR, f, &sx, (size_t)8, S("security.capability"), "cap", (size_t)3, NULL).error == 0);
	CHECK(get_host_xattr("xp", "security.capability") < 0);
	CHECK(get_host_xattr("xp", "user.virtiofs.security.capability") == 3);
	CHECK(req(FUSE_SETXATTR, f, &sx, (size_t)8, S("trusted.t"), "tru", (size_t)3, NULL).error == 0);
	CHECK(get_host_xattr("xp", "user.virtiofs.trusted.t") == 3);
	r = req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("security.capability"), NULL);
	CHECK(r.error == 0 && r.len == 3 && !memcmp(r.data, "cap", 3));
	/* host names outside the prefix are invisible */
	CHECK(req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.plain"), NULL).error == -ENODATA);
	r = req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL);
	CHECK(r.error == 0 && r.len == sizeof("security.capability") + sizeof("trusted.t"));
	CHECK(in_list(&r, "security.capability") && in_list(&r, "trusted.t"));
	gx.size = 0;
	r = req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL);
	CHECK(r.error == 0 && ((struct fuse_getxattr_out *)r.data)->size ==
	      sizeof("security.capability") + sizeof("trusted.t"));
	gx.size = 10;
	CHECK(req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL).error == -ERANGE);
	CHECK(req(FUSE_REMOVEXATTR, f, S("trusted.t"), NULL).error == 0);
	CHECK(get_host_xattr("xp", "user.virtiofs.trusted.t") < 0);
	CHECK(req(FUSE_REMOVEXATTR, f, S("user.plain"), NULL).error == -ENODATA);
	CHECK(get_host_xattr("xp", "user.plain") == 3);
	/* too long once prefixed */
	memset(longname, 'a', 250);
	memcpy(longname, "user.", 5);
	longname[250] = 0;
	CHECK(req(FUSE_SETXATTR, f, &sx, (size_t)8, longname, (size_t)251, "abc", (size_t)3, NULL).error == -ERANGE);
	server_start(false, 64);
}

/* A guest asking for more than its buffer holds gets ERANGE. */
static void t_xattr_reply_room(void)
{
	struct fuse_getxattr_in gx = { .size = 4096 };
	char big[117];
	struct reply r;
	uint64_t f;

	server_start(false, 64);
	f = xattr_file("xr");
	CHECK(f);
	memset(big, 'v', 116);
	big[116] = 0;
	CHECK(set_host_xattr("xr", "user.big", big) == 0);
	CHECK(set_host_xattr("xr", "user.a_name_of_24_bytes", "v") == 0);
	/* room for the header and 16 bytes, then for the header only */
	req_out_max = sizeof(struct fuse_out_header) + 16;
	r = req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.big"), NULL);
	CHECK(r.error == -ERANGE);
	r = req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL);
	CHECK(r.error == -ERANGE);
	req_out_max = sizeof(struct fuse_out_header);
	r = req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.big"), NULL);
	CHECK(r.error == -ERANGE);
	r = req(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL);
	CHECK(r.error == -ERANGE);
	req_out_max = 0;
	r = req(FUSE_GETXATTR, f, &gx, sizeof(gx), S("user.big"), NULL);
	CHECK(r.error == 0 && r.len == 116);
}

static mode_t host_mode(const char *name)
{
	char p[300];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", share, name);
	return stat(p, &st) ? 0 : st.st_mode & 07777;
}

static void host_chmod(const char *name, mode_t m)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/%s", share, name);
	chmod(p, m);
}

static uint64_t open_fh(uint64_t node, int flags)
{
	struct fuse_open_in oi = { .flags = flags };
	struct reply r = req(FUSE_OPEN, node, &oi, sizeof(oi), NULL);

	return r.error ? 0 : ((struct fuse_open_out *)r.data)->fh;
}

/* Writes and truncates clear setuid/setgid as for an unprivileged writer. */
static void t_killpriv(void)
{
	struct fuse_write_in wi = { .size = 4,
		.write_flags = FUSE_WRITE_KILL_SUIDGID };
	struct fuse_setattr_in si = { .valid = FATTR_SIZE, .size = 1 };
	struct fuse_fallocate_in fa = { .length = 8192 };
	struct fuse_copy_file_range_in cr = { .len = 2 };
	uint64_t f, g, fh, gh;
	char p[300];

	server_start(false, 64);
	f = xattr_file("suid");
	g = xattr_file("src");
	CHECK(f && g);
	snprintf(p, sizeof(p), "echo data > %s/src", share);
	sh("%s", p);
	host_chmod("suid", 04777);
	fh = open_fh(f, O_WRONLY);
	gh = open_fh(g, O_RDONLY);
	CHECK(fh && gh);
	wi.fh = fh;
	req_uid = 1000;
	CHECK(req(FUSE_WRITE, f, &wi, sizeof(wi), "abcd", (size_t)4, NULL).error == 0);
	req_uid = 0;
	CHECK(host_mode("suid") == 0777);
	/* setgid with group execute goes too */
	host_chmod("suid", 06777);
	si.valid = FATTR_SIZE | FATTR_FH;
	si.fh = fh;
	CHECK(req(FUSE_SETATTR, f, &si, sizeof(si), NULL).error == 0);
	CHECK(host_mode("suid") == 0777);
	host_chmod("suid", 04777);
	si.valid = FATTR_SIZE;
	si.size = 0;
	CHECK(req(FUSE_SETATTR, f, &si, sizeof(si), NULL).error == 0);
	CHECK(host_mode("suid") == 0777);
	host_chmod("suid", 04777);
	fa.fh = fh;
	CHECK(req(FUSE_FALLOCATE, f, &fa, sizeof(fa), NULL).error == 0);
	CHECK(host_mode("suid") == 0777);
	host_chmod("suid", 04777);
	cr.fh_in = gh;
	cr.fh_out = fh;
	cr.nodeid_out = f;
	CHECK(req(FUSE_COPY_FILE_RANGE, g, &cr, sizeof(cr), NULL).error == 0);
	CHECK(host_mode("suid") == 0777);
	host_chmod("suid", 04777);
	{
		uint64_t th = open_fh(f, O_WRONLY | O_TRUNC);
		struct fuse_release_in rel = { .fh = th };

		CHECK(th);
		CHECK(host_mode("suid") == 0777);
		req(FUSE_RELEASE, f, &rel, sizeof(rel), NULL);
	}
	/* CAP_FSETID came back: the thread's effective set is whole again */
	{
		FILE *f = fopen("/proc/thread-self/status", "r");
		unsigned long long eff = 0;
		char line[256];

		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "CapEff: %llx", &eff);
		if (f)
			fclose(f);
		CHECK(eff & (1ULL << 4));
	}
	/* a plain chmod by the guest still sets the bits */
	si.valid = FATTR_MODE;
	si.mode = 04755;
	CHECK(req(FUSE_SETATTR, f, &si, sizeof(si), NULL).error == 0);
	CHECK(host_mode("suid") == 04755);
	server_start(false, 64);
}

static void opt_small_cap(struct options *o)
{
	o->max_files = 32;
}

/*
 * 520 rounds of CREATE, RELEASE, UNLINK without FORGET: every unlink pins
 * the victim's fd until FORGET. Pins and open files stop at the cap with
 * ENFILE, the daemon's fds stay bounded, other requests keep working, and
 * FORGET gives the room back.
 */
static void t_pin_cap(void)
{
	struct fuse_create_in ci = { .flags = O_RDWR | O_CREAT | O_EXCL,
		.mode = S_IFREG | 0600 };
	static uint64_t nodes[520];
	int i, n = 0, before, enfile = 0, unlinked = 0, err;
	struct fuse_getattr_in gi = { 0 };
	uint64_t dir;
	char name[32];

	server_start_opts(false, 8, opt_small_cap);
	sh("mkdir -p %s/pins && : > %s/pins/keep", share, share);
	before = count_fds();
	dir = lookup(1, "pins", &err);
	CHECK(err == 0);
	for (i = 0; i < 520; i++) {
		struct fuse_release_in rel = { 0 };
		struct reply r;
		struct fuse_entry_out *e;

		snprintf(name, sizeof(name), "p%d", i);
		r = req(FUSE_CREATE, dir, &ci, sizeof(ci), name,
			strlen(name) + 1, NULL);
		if (r.error == -ENFILE) {
			enfile++;
			continue;
		}
		CHECK(r.error == 0);
		e = r.data;
		nodes[n++] = e->nodeid;
		rel.fh = ((struct fuse_open_out *)(e + 1))->fh;
		CHECK(req(FUSE_RELEASE, e->nodeid, &rel, sizeof(rel), NULL).error == 0);
		r = req(FUSE_UNLINK, dir, name, strlen(name) + 1, NULL);
		if (r.error == -ENFILE)
			enfile++;
		else if (r.error == 0)
			unlinked++;
		else
			CHECK(0);
	}
	printf("     %d unlinked, %d ENFILE, %d fds more than before\n",
	       unlinked, enfile, count_fds() - before);
	CHECK(count_fds() - before <= 32 + 8 + 4);
	CHECK(enfile > 0 && unlinked == 32);
	/* no room for an open file either, but lookups and stats work */
	{
		uint64_t k = lookup(dir, "keep", &err);

		CHECK(err == 0);
		CHECK(open_fh(k, O_RDONLY) == 0);
		CHECK(req(FUSE_GETATTR, k, &gi, sizeof(gi), NULL).error == 0);
		forget(k, 1);
	}
	/* forgetting the unlinked inodes gives the room back */
	for (i = 0; i < n; i++)
		forget(nodes[i], 1);
	CHECK(count_fds() - before <= 8 + 4);
	{
		struct reply r = req(FUSE_CREATE, dir, &ci, sizeof(ci),
				     S("again"), NULL);

		CHECK(r.error == 0);
	}
	sh("rm -rf %s/pins", share);
	server_start(false, 64);
}

static void opt_pin_all(struct options *o)
{
	o->max_files = 32;
	o->pin_inodes = true;
}

/*
 * The sandbox's mode (no handle decoded): every known inode keeps its fd,
 * whatever the fd cache's size, so none is ever reopened by handle; beyond
 * --max-files a new inode gets ENFILE, and FORGET gives the room back.
 */
static void t_pin_all(void)
{
	struct fuse_getattr_in gi = { 0 };
	static uint64_t nodes[40];
	int i, n = 0, enfile = 0, before, err;
	uint64_t dir;
	char name[32];

	sh("mkdir -p %s/pa && for i in $(seq 0 39); do : > %s/pa/f$i; done",
	   share, share);
	server_start_opts(false, 4, opt_pin_all);
	before = count_fds();
	dir = lookup(1, "pa", &err);
	CHECK(err == 0);
	for (i = 0; i < 40; i++) {
		uint64_t k;

		snprintf(name, sizeof(name), "f%d", i);
		k = lookup(dir, name, &err);
		if (err == -ENFILE) {
			enfile++;
			continue;
		}
		CHECK(err == 0);
		nodes[n++] = k;
	}
	printf("     %d looked up, %d ENFILE, %d fds more than before\n", n,
	       enfile, count_fds() - before);
	CHECK(n >= 28 && enfile > 0 && n + enfile == 40);
	/* an fd cache of 4, yet all of them still have their fd */
	CHECK(count_fds() - before >= n);
	for (i = 0; i < n; i++)
		CHECK(req(FUSE_GETATTR, nodes[i], &gi, sizeof(gi), NULL).error == 0);
	for (i = 0; i < n; i++)
		forget(nodes[i], 1);
	CHECK(count_fds() - before <= 4);
	CHECK(lookup(dir, "f39", &err) && err == 0);
	sh("rm -rf %s/pa", share);
	server_start(false, 64);
}

/* More mounts in the share than a fixed table had room for. */
#define NMOUNTS	20
static void many_mounts_check(void)
{
	unsigned long inodes, fds;
	uint64_t dir;
	char name[32];
	int i, err;

	server_start(false, 8);
	dir = lookup(1, "mnt", &err);
	CHECK(err == 0);
	for (i = 0; i < NMOUNTS; i++) {
		uint64_t m;

		snprintf(name, sizeof(name), "m%d", i);
		m = lookup(dir, name, &err);
		CHECK(err == 0);
		lookup(m, "f", &err);
		CHECK(err == 0);
	}
	passthrough__counts(srv, &inodes, &fds);
	printf("     %lu inodes, %lu fds held\n", inodes, fds);
	/* every mount's inodes have handles: the cache bounds the fds */
	CHECK(fds <= 8 + 1);
}

static void t_many_mounts(void)
{
	int i;

	sh("mkdir -p %s/mnt", share);
	for (i = 0; i < NMOUNTS; i++)
		sh("mkdir -p %s/mnt/m%d && mount -t tmpfs none %s/mnt/m%d && : > %s/mnt/m%d/f",
		   share, i, share, i, share, i);
	many_mounts_check();
	/* the server's mount fds keep the mounts busy */
	server_start(false, 64);
	fuse_server__free(srv);
	srv = NULL;
	for (i = 0; i < NMOUNTS; i++) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "umount %s/mnt/m%d", share, i);
		/* a freed server keeps no mount busy */
		CHECK(system(cmd) == 0);
	}
	sh("rm -rf %s/mnt", share);
	server_start(false, 64);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	run("vring: well-formed chain", t_vring_good_chain);
	run("vring: descriptor past the region", t_vring_out_of_range);
	run("vring: descriptor below the region", t_vring_below_region);
	run("vring: address wraps", t_vring_wrap);
	run("vring: loop", t_vring_loop);
	run("vring: next out of range", t_vring_next_out_of_range);
	run("vring: head out of range", t_vring_bad_head);
	run("vring: avail index jump", t_vring_avail_jump);
	run("vring: readable after writable", t_vring_rd_after_wr);
	run("vring: indirect table", t_vring_indirect);
	run("vring: bad indirect tables", t_vring_indirect_bad);
	run("vring: event idx", t_vring_event_idx);

	umask(0);
	/* the mount tests' tmpfs mounts stay in a namespace of our own */
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		perror("unit-tests: a private mount namespace (needs root)");
		return 1;
	}
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(share, sizeof(share), "%s/share", tmpdir);
	snprintf(outside, sizeof(outside), "%s/outside", tmpdir);
	sh("mkdir %s %s && echo secret > %s/secret", share, outside, outside);
	sh("ln -s %s %s/esc_dir && ln -s %s/secret %s/esc_file", outside, share,
	   outside, share);
	server_start(false, 64);
	run("fuse: init", t_fuse_init);
	run("fuse: init without FUSE_ASYNC_DIO (option, sync frontend)", t_fuse_init_no_async_dio);
	run("fuse: malformed requests", t_fuse_malformed);
	run("fuse: .. at the root", t_fuse_dotdot_root);
	run("fuse: symlinks out of the share", t_fuse_symlink_escape);
	run("fuse: create, write, read, release", t_fuse_create_rw);
	run("fuse: setattr", t_fuse_setattr);
	run("fuse: directories and rename2", t_fuse_dirs);
	run("fuse: symlink, link, xattr", t_fuse_symlink_link_xattr);
	run("fuse: bounded fd cache", t_fuse_fd_cache);
	run("fuse: readonly", t_fuse_readonly);
	run("fuse: destroy then requests", t_fuse_uninitialized);
	run("checks: stale inode numbers are not reused", t_stale_inode_reuse);
	run("checks: MKNOD of devices refused", t_mknod_devices);
	run("checks: CREATE opens only regular files", t_create_special);
	run("checks: nosuid/nodev warning", t_mount_warning);
	run("checks: --flush: FOPEN_NOFLUSH per mode and file system", t_flush_mode);
	run("checks: xattr names the host honours refused", t_xattr_filter);
	run("checks: --xattr-prefix", t_xattr_prefix);
	run("checks: xattr reply longer than the buffer", t_xattr_reply_room);
	run("checks: killpriv on write and truncate", t_killpriv);
	run("checks: pinned and open files capped", t_pin_cap);
	run("checks: every inode pinned (the sandbox: no handle decoded)", t_pin_all);
	run("checks: more mounts than 16", t_many_mounts);
	fuse_server__free(srv);
	sh("rm -rf %s", tmpdir);

	vu_tests(argc > 1 ? argv[1] : "./vhost-user-fs");

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
