// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_fs_sync: the FUSE side. Module init and exit, the file system type
 * and mount by tag, the fuse_iqueue_ops the FUSE core submits through, which
 * requests may take a sync queue, and a fuse_req's translation to a struct
 * vfsync_buf and back. The one object built against fuse_i.h: the virtio
 * side (virtio_fs_sync.h) never sees a FUSE type and calls back only
 * through vfsync_fuse_buf_ops.
 */

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

/* fuse_i.h comes with the force-included compat.h (VFSYNC_FUSE_INTERNALS) */
#include "fuse_glue.h"
#include "virtio_fs_sync.h"

/*
 * A sync request keeps its vCPU in the VM exit until the host is done. The
 * default admits FUSE's largest request at its default max_pages (1 MiB of
 * data) plus headers.
 */
static unsigned int vfsync_max_bytes = SZ_1M + SZ_4K;
module_param_named(sync_max_bytes, vfsync_max_bytes, uint, 0644);
MODULE_PARM_DESC(sync_max_bytes,
		 "Largest request, in + out bytes including FUSE headers, sent on a sync queue (default: 1052672)");

/* The device keeps the inode while a FORGET waits for others to share it */
static unsigned int vfsync_forget_delay_ms = VFSYNC_FORGET_DELAY_MS;
module_param_named(forget_delay_ms, vfsync_forget_delay_ms, uint, 0644);
MODULE_PARM_DESC(forget_delay_ms,
		 "Longest wait of a FORGET before its batch goes to the device, in ms (default 5, at most 1000)");

/* Ring slots for the headers and argument buffers beside a request's pages */
#define VFSYNC_FUSE_HEADER_OVERHEAD	4

/*
 * A request's state on a virtqueue, one allocation found through the token
 * (req->argbuf exists only with CONFIG_VIRTIO_FS). The non-page arguments
 * are bounced: they may be on the stack or in the kernel image, which the
 * device cannot always reach (UML shares only page-allocator memory,
 * SWIOTLB needs mappable addresses).
 */
struct vfsync_fuse_ctx {
	struct vfsync_buf buf;		/* first: the virtqueue token */
	struct fuse_req *req;
	unsigned int in_len;		/* non-page in args, at args[0] */
	/*
	 * Then the reply's header, copied out once: only the copy is checked
	 * and used, whatever the device writes meanwhile. Then the out args.
	 */
	u8 *args;
	struct scatterlist *sg;
	struct scatterlist *sgs[];
};

static struct vfsync_fuse_ctx *to_ctx(struct vfsync_buf *buf)
{
	return container_of(buf, struct vfsync_fuse_ctx, buf);
}

static const struct vfsync_buf_ops vfsync_fuse_buf_ops;

/*
 * One connection's state, its input queue's ->priv, from mount to unmount:
 * a device reference, dropped at the connection's release, and its one
 * fuse_dev, enough as requests on a virtqueue are on no fuse_dev list.
 */
struct vfsync_fuse {
	struct vfsync_dev *fs;
	struct fuse_conn *fc;		/* whose input queue this is */
	/*
	 * Unsent FORGETs, newest first, at most forget_batch (read-only once
	 * the connection exists); forget_work sends them forget_delay_ms after
	 * the first; after forgets_stopped (unmount) they are freed.
	 */
	unsigned int forget_batch;
	spinlock_t forget_lock;			/* the three below */
	struct fuse_forget_link *forgets;	/* under forget_lock */
	unsigned int nforgets;			/* under forget_lock */
	bool forgets_stopped;			/* under forget_lock */
	struct delayed_work forget_work;
	/*
	 * Freed a grace period after the connection's release, which follows
	 * kill_anon_super(): from there sget_fc() no longer tests this
	 * superblock (SB_DEAD since 6.6, off the type's list before), and the
	 * grace period covers a vfsync_fuse_test_super() already running.
	 */
	struct rcu_head rcu;
	struct fuse_dev *fud;
};

/*
 * Requests that could not be queued, ended by vfsync_fuse_end_work: the
 * submitter may hold fc->bg_lock, fuse_request_end() takes it.
 */
static LIST_HEAD(vfsync_fuse_end_list);	/* protected by vfsync_fuse_end_lock */
static DEFINE_SPINLOCK(vfsync_fuse_end_lock);

/*
 * Which requests may hold a vCPU in a VM exit. Never one no task waits for
 * (hiprio; background, submitted under fc->bg_lock), one that may block on
 * the host without bound (SETLKW, POLL, IOCTL), one that ends or changes
 * the session or the memory map (INIT, DESTROY, DAX's SETUPMAPPING and
 * REMOVEMAPPING: a VMM may stop every vCPU to remap), nor an unknown one.
 * A host with a time budget per sync exit (@budget) defers on its own what
 * it cannot finish in time: every other request goes. Without it, only
 * those whose host time follows from their size, up to @max_bytes.
 */
bool vfsync_sync_eligible(u32 opcode, bool background, bool budget,
			  size_t bytes, size_t max_bytes)
{
	if (background)
		return false;
	switch (opcode) {
	case FUSE_LOOKUP:
	case FUSE_GETATTR:
	case FUSE_SETATTR:	/* truncation: vfsync_long_request() */
	case FUSE_READLINK:
	case FUSE_SYMLINK:
	case FUSE_MKNOD:
	case FUSE_MKDIR:
	case FUSE_RMDIR:
	case FUSE_LINK:
	case FUSE_OPEN:
	case FUSE_READ:
	case FUSE_WRITE:
	case FUSE_STATFS:
	case FUSE_SETXATTR:
	case FUSE_GETXATTR:
	case FUSE_LISTXATTR:
	case FUSE_REMOVEXATTR:
	case FUSE_OPENDIR:
	case FUSE_READDIR:
	case FUSE_RELEASEDIR:
	case FUSE_GETLK:
	case FUSE_SETLK:
	case FUSE_ACCESS:
	case FUSE_CREATE:
	case FUSE_BMAP:
	case FUSE_READDIRPLUS:
	case FUSE_LSEEK:
	case FUSE_TMPFILE:
	case FUSE_STATX:
		break;
	/* host time not bounded by the request's size */
	case FUSE_COPY_FILE_RANGE:	/* up to GiBs per request */
	case FUSE_COPY_FILE_RANGE_64:
	case FUSE_FALLOCATE:		/* allocates or zeroes any range */
	case FUSE_FSYNC:		/* writes back the whole file */
	case FUSE_FSYNCDIR:
	case FUSE_SYNCFS:		/* the whole host file system */
	case FUSE_FLUSH:		/* close(dup(fd)): NFS writes back the file */
	case FUSE_RELEASE:		/* close(fd): the same, the last close */
	case FUSE_UNLINK:		/* a host without pinned inodes frees blocks */
	case FUSE_RENAME:		/* over an existing file: the same */
	case FUSE_RENAME2:
		if (!budget)
			return false;
		break;
	default:
		return false;
	}

	return budget || bytes <= max_bytes;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_sync_eligible);

/*
 * Truncation frees a file's blocks however large it is: SETATTR with a
 * size, OPEN and CREATE with O_TRUNC. @arg (@len bytes) is the first in
 * argument; one too short for its fields counts as long.
 */
bool vfsync_long_request(u32 opcode, const void *arg, size_t len)
{
	switch (opcode) {
	case FUSE_SETATTR:
		return len < offsetofend(struct fuse_setattr_in, valid) ||
		       (((const struct fuse_setattr_in *)arg)->valid & FATTR_SIZE);
	case FUSE_OPEN:
		return len < offsetofend(struct fuse_open_in, flags) ||
		       (((const struct fuse_open_in *)arg)->flags & O_TRUNC);
	case FUSE_CREATE:
		return len < offsetofend(struct fuse_create_in, flags) ||
		       (((const struct fuse_create_in *)arg)->flags & O_TRUNC);
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_long_request);

/*
 * A reply is used only if its lengths agree with each other and with the
 * offer, it answers this request, and its error is one the FUSE core takes
 * from a server (-511..0, as fuse_dev_do_write(); lower codes are
 * kernel-internal, -EIOCBQUEUED would reach a BUG_ON). The payload fills
 * the out args exactly, but a variable-length last arg may come short.
 * libkrun reports every used length as 0, so 0 means "see the header";
 * any other must be the header's.
 */
int vfsync_check_reply(const struct fuse_out_header *oh, u64 unique,
		       unsigned int used_len, unsigned int offered_len,
		       unsigned int out_args_len, unsigned int last_arg_len,
		       bool argvar)
{
	unsigned int payload;

	if (used_len > offered_len || (used_len && used_len != oh->len))
		return -EIO;
	if (oh->len < sizeof(*oh) || oh->len > offered_len ||
	    oh->unique != unique)
		return -EIO;
	if (oh->error > 0 || oh->error <= -512)
		return -EIO;

	payload = oh->len - sizeof(*oh);
	if (oh->error)
		return payload ? -EIO : 0;
	if (payload > out_args_len)
		return -EIO;
	if (payload < out_args_len &&
	    (!argvar || out_args_len - payload > last_arg_len))
		return -EIO;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_check_reply);

/*
 * Scatterlist entries for @total bytes of pages; @bytes gets what fits.
 * With @total 0, @ap may not be a fuse_args_pages at all: do not touch it.
 */
static unsigned int vfsync_fuse_count_pages(struct fuse_args_pages *ap,
					    unsigned int total,
					    unsigned int *bytes)
{
	unsigned int i, len, offset, n;

	*bytes = 0;
	if (!total)
		return 0;
	n = compat_fuse_ap_npages(ap);
	for (i = 0; i < n && total; i++) {
		compat_fuse_ap_page(ap, i, &len, &offset);
		len = min(len, total);
		total -= len;
		*bytes += len;
	}
	return i;
}

static unsigned int vfsync_fuse_add_pages(struct scatterlist *sg,
					  struct fuse_args_pages *ap,
					  unsigned int total)
{
	unsigned int i, len, offset, n = compat_fuse_ap_npages(ap);
	struct page *page;

	for (i = 0; i < n && total; i++) {
		page = compat_fuse_ap_page(ap, i, &len, &offset);
		len = min(len, total);
		sg_set_page(&sg[i], page, len, offset);
		total -= len;
	}
	return i;
}

/*
 * A background request is submitted under fc->bg_lock: GFP_ATOMIC. Any
 * other with no lock held (6.1: after fiq->lock is dropped), so its bounce
 * buffer (up to 64 KiB of xattr value) may wait for memory.
 */
static struct vfsync_fuse_ctx *vfsync_fuse_prepare(struct fuse_req *req,
						   bool budget)
{
	struct fuse_args *args = req->args;
	struct fuse_args_pages *ap = container_of(args, typeof(*ap), args);
	bool reply = test_bit(FR_ISREPLY, &req->flags);
	unsigned int num_in = args->in_numargs - args->in_pages;
	unsigned int num_out = args->out_numargs - args->out_pages;
	unsigned int in_len, out_len, in_pg = 0, out_pg = 0;
	unsigned int in_pg_bytes, out_pg_bytes;
	unsigned int in_pg_size = 0, out_pg_size = 0;
	unsigned int nsg, out_sgs = 0, in_sgs = 0, i, off;
	bool bg = test_bit(FR_BACKGROUND, &req->flags);
	struct vfsync_fuse_ctx *ctx;
	struct scatterlist *sg;
	unsigned int oh_len;
	size_t size;

	in_len = fuse_len_args(num_in, (struct fuse_arg *)args->in_args);
	out_len = reply ? fuse_len_args(num_out, args->out_args) : 0;
	if (args->in_pages)
		in_pg_size = args->in_args[args->in_numargs - 1].size;
	if (reply && args->out_pages)
		out_pg_size = args->out_args[args->out_numargs - 1].size;
	in_pg = vfsync_fuse_count_pages(ap, in_pg_size, &in_pg_bytes);
	out_pg = vfsync_fuse_count_pages(ap, out_pg_size, &out_pg_bytes);

	nsg = 1 + !!in_len + in_pg;
	if (reply)
		nsg += 1 + !!out_len + out_pg;

	oh_len = reply ? sizeof(struct fuse_out_header) : 0;
	size = sizeof(*ctx) + nsg * (sizeof(ctx->sgs[0]) + sizeof(*sg)) +
	       in_len + oh_len + out_len;
	ctx = kmalloc(size, bg ? GFP_ATOMIC : GFP_NOFS);
	if (!ctx)
		return NULL;

	memset(&ctx->buf, 0, sizeof(ctx->buf));
	ctx->req = req;
	ctx->in_len = in_len;
	ctx->sg = (struct scatterlist *)&ctx->sgs[nsg];
	ctx->args = (u8 *)&ctx->sg[nsg];
	sg = ctx->sg;
	sg_init_table(sg, nsg);

	for (off = 0, i = 0; i < num_in; i++) {
		memcpy(ctx->args + off, args->in_args[i].value,
		       args->in_args[i].size);
		off += args->in_args[i].size;
	}
	/* What a device that reports no used length left unwritten */
	memset(ctx->args + in_len, 0, oh_len + out_len);

	sg_set_buf(&sg[out_sgs++], &req->in.h, sizeof(req->in.h));
	if (in_len)
		sg_set_buf(&sg[out_sgs++], ctx->args, in_len);
	if (in_pg)
		out_sgs += vfsync_fuse_add_pages(&sg[out_sgs], ap, in_pg_size);

	if (reply) {
		sg_set_buf(&sg[out_sgs + in_sgs++], ctx->args + in_len, oh_len);
		if (out_len)
			sg_set_buf(&sg[out_sgs + in_sgs++],
				   ctx->args + in_len + oh_len, out_len);
		if (out_pg)
			in_sgs += vfsync_fuse_add_pages(&sg[out_sgs + in_sgs],
							ap, out_pg_size);
	}
	WARN_ON_ONCE(out_sgs + in_sgs != nsg);

	/* virtqueue_add_sgs() wants one terminated list per entry */
	for (i = 0; i < nsg; i++) {
		sg_mark_end(&sg[i]);
		ctx->sgs[i] = &sg[i];
	}

	ctx->buf.ops = &vfsync_fuse_buf_ops;
	ctx->buf.sgs = ctx->sgs;
	ctx->buf.out_sgs = out_sgs;
	ctx->buf.in_sgs = in_sgs;
	ctx->buf.out_bytes = sizeof(req->in.h) + in_len + in_pg_bytes;
	ctx->buf.in_bytes = reply ? oh_len + out_len + out_pg_bytes : 0;
	ctx->buf.sync = vfsync_sync_eligible(req->in.h.opcode, bg, budget,
					     (size_t)ctx->buf.out_bytes + ctx->buf.in_bytes,
					     READ_ONCE(vfsync_max_bytes)) &&
			(budget ||
			 !vfsync_long_request(req->in.h.opcode,
					      num_in ? args->in_args[0].value : NULL,
					      num_in ? args->in_args[0].size : 0));
	ctx->buf.may_block = args->may_block;
	INIT_LIST_HEAD(&ctx->buf.list);
	return ctx;
}

static void vfsync_fuse_free_ctx(struct vfsync_fuse_ctx *ctx)
{
	kfree(ctx);
}

/*
 * Under the queue lock. The device writes into a request's buffers until it
 * returns it or is reset, so the request is on no fuse_dev processing list,
 * where an abort (7.3's request timeout, unmount) would end it and its
 * waiter free it while still on the ring. The FUSE core waits for it to
 * end (num_waiting), as for any request.
 */
static void vfsync_fuse_sent_locked(struct vfsync_buf *buf)
{
	struct fuse_req *req = to_ctx(buf)->req;

	set_bit(FR_SENT, &req->flags);
	/* Pairs with the barrier in request_wait_answer() */
	smp_mb__after_atomic();
}

/* The out args from the bounce buffer, by the checked header's length */
static void vfsync_fuse_copy_out(struct vfsync_fuse_ctx *ctx)
{
	struct fuse_req *req = ctx->req;
	struct fuse_args *args = req->args;
	unsigned int num_out = args->out_numargs - args->out_pages;
	unsigned int remaining = req->out.h.len - sizeof(req->out.h);
	unsigned int i, size, off = ctx->in_len + sizeof(req->out.h);

	for (i = 0; i < num_out; i++) {
		size = args->out_args[i].size;
		if (args->out_argvar && i == args->out_numargs - 1 &&
		    size > remaining)
			size = remaining;
		memcpy(args->out_args[i].value, ctx->args + off, size);
		off += size;
		if (i != args->out_numargs - 1)
			remaining -= size;
	}
	if (args->out_argvar)
		args->out_args[args->out_numargs - 1].size = remaining;

	if (args->out_pages && args->page_zeroing) {
		struct fuse_args_pages *ap = container_of(args, typeof(*ap),
							  args);
		unsigned int len = args->out_args[args->out_numargs - 1].size;
		unsigned int n = compat_fuse_ap_npages(ap), plen, poff;
		struct page *page;

		for (i = 0; i < n; i++) {
			page = compat_fuse_ap_page(ap, i, &plen, &poff);
			if (len < plen) {
				WARN_ON(poff);
				zero_user_segment(page, len, plen);
				len = 0;
			} else {
				len -= plen;
			}
		}
	}
}

/* No queue lock held, preemption enabled; frees @buf */
static int vfsync_fuse_complete(struct vfsync_buf *buf)
{
	struct vfsync_fuse_ctx *ctx = to_ctx(buf);
	struct fuse_req *req = ctx->req;
	struct fuse_args *args = req->args;
	int bad = 0;

	if (buf->error) {
		req->out.h.error = buf->error;
	} else if (test_bit(FR_ISREPLY, &req->flags)) {
		unsigned int last = args->out_numargs ?
			args->out_args[args->out_numargs - 1].size : 0;
		int err;

		/* The one read of the header the device wrote */
		memcpy(&req->out.h, ctx->args + ctx->in_len, sizeof(req->out.h));
		err = vfsync_check_reply(&req->out.h, req->in.h.unique,
					 buf->used_len, buf->in_bytes,
					 fuse_len_args(args->out_numargs,
						       args->out_args),
					 last, args->out_argvar);
		if (err) {
			pr_err_ratelimited("bad reply to opcode %u unique %llu: used %u of %u, len %u unique %llu error %d\n",
					   req->in.h.opcode,
					   req->in.h.unique, buf->used_len,
					   buf->in_bytes, req->out.h.len,
					   req->out.h.unique, req->out.h.error);
			bad = -EIO;
			req->out.h.error = -EIO;
			req->out.h.len = sizeof(req->out.h);
		} else if (!req->out.h.error) {
			vfsync_fuse_copy_out(ctx);
		}
	}

	clear_bit(FR_SENT, &req->flags);

	vfsync_fuse_free_ctx(ctx);
	fuse_request_end(req);
	return bad;
}

/* End a request that could not be queued; process context, no locks. */
static void vfsync_fuse_fail(struct vfsync_buf *buf, int err)
{
	struct vfsync_fuse_ctx *ctx = to_ctx(buf);
	struct fuse_req *req = ctx->req;

	vfsync_fuse_free_ctx(ctx);
	req->out.h.error = err;
	fuse_request_end(req);
}

static const struct vfsync_buf_ops vfsync_fuse_buf_ops = {
	.sent_locked	= vfsync_fuse_sent_locked,
	.complete	= vfsync_fuse_complete,
	.fail		= vfsync_fuse_fail,
};

static void vfsync_fuse_end_fn(struct work_struct *work)
{
	struct fuse_req *req;

	for (;;) {
		spin_lock(&vfsync_fuse_end_lock);
		req = list_first_entry_or_null(&vfsync_fuse_end_list,
					       struct fuse_req, list);
		if (req)
			list_del_init(&req->list);
		spin_unlock(&vfsync_fuse_end_lock);
		if (!req)
			return;
		fuse_request_end(req);
	}
}

static DECLARE_WORK(vfsync_fuse_end_work, vfsync_fuse_end_fn);

static void vfsync_fuse_queue(struct vfsync_fuse *vf, struct fuse_req *req)
{
	struct vfsync_fuse_ctx *ctx;
	int err = -ENOMEM;

	ctx = vfsync_fuse_prepare(req, vf->fs->sync_budget);
	if (ctx) {
		err = vfsync_submit(vf->fs, &ctx->buf);
		if (!err)
			return;
		vfsync_fuse_free_ctx(ctx);
	}

	pr_err_ratelimited("cannot queue opcode %u: %d\n", req->in.h.opcode,
			   err);
	req->out.h.error = err;
	/* The submitter may hold fc->bg_lock: end it from a worker */
	spin_lock(&vfsync_fuse_end_lock);
	list_add_tail(&req->list, &vfsync_fuse_end_list);
	spin_unlock(&vfsync_fuse_end_lock);
	vfsync_queue_work(&vfsync_fuse_end_work);
}

/*
 * A FUSE_BATCH_FORGET of the @count entries in m->batch.ones, or a plain
 * FUSE_FORGET for one. Returns its length, 0 for a count out of range.
 */
size_t vfsync_forget_msg_init(struct vfsync_forget_msg *m, u64 unique,
			      unsigned int count)
{
	struct fuse_forget_one first;
	size_t len;

	if (!count || count > VFSYNC_FORGET_BATCH)
		return 0;
	first = m->batch.ones[0];
	memset(&m->ih, 0, sizeof(m->ih));
	m->ih.unique = unique;
	if (count == 1) {
		/* m->one overlays m->batch.in, not the entries */
		m->ih.opcode = FUSE_FORGET;
		m->ih.nodeid = first.nodeid;
		m->one.nlookup = first.nlookup;
		len = sizeof(m->ih) + sizeof(m->one);
	} else {
		m->ih.opcode = FUSE_BATCH_FORGET;
		m->batch.in.count = count;
		m->batch.in.dummy = 0;
		len = offsetof(struct vfsync_forget_msg, batch.ones) +
		      count * sizeof(m->batch.ones[0]);
	}
	m->ih.len = len;
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_forget_msg_init);

static struct fuse_forget_link *vfsync_fuse_take_forgets(struct vfsync_fuse *vf)
{
	struct fuse_forget_link *head;

	spin_lock(&vf->forget_lock);
	head = vf->forgets;
	vf->forgets = NULL;
	vf->nforgets = 0;
	spin_unlock(&vf->forget_lock);
	return head;
}

/* BATCH_FORGET needs protocol 7.16. The virtio side sends a copy of @m. */
static void vfsync_fuse_send_forgets(struct vfsync_fuse *vf,
				     struct fuse_forget_link *head)
{
	unsigned int max = vf->fc->minor >= 16 ? vf->forget_batch : 1;
	struct fuse_iqueue *fiq = compat_fc_iq(vf->fc);
	struct fuse_forget_link *next;
	struct vfsync_forget_msg *m;
	unsigned int count = 0;
	size_t len;

	if (!head)
		return;
	m = kmalloc(sizeof(*m), GFP_NOFS | __GFP_NOFAIL);
	for (; head; head = next) {
		next = head->next;
		m->batch.ones[count++] = head->forget_one;
		kfree(head);
		if (next && count < max)
			continue;
		len = vfsync_forget_msg_init(m, compat_fuse_forget_unique(fiq),
					     count);
		vfsync_send_hiprio(vf->fs, m, len);
		atomic64_add(count, &vf->fs->forgets_sent);
		count = 0;
	}
	kfree(m);
}

static void vfsync_fuse_forget_fn(struct work_struct *work)
{
	struct vfsync_fuse *vf = container_of(to_delayed_work(work),
					      struct vfsync_fuse, forget_work);

	vfsync_fuse_send_forgets(vf, vfsync_fuse_take_forgets(vf));
}

/*
 * Sent by the caller that fills the batch, else by forget_work within
 * forget_delay_ms. Process context, no locks held.
 */
static void vfsync_fuse_forget(struct vfsync_fuse *vf,
			       struct fuse_forget_link *link)
{
	unsigned int delay = min_t(unsigned int, READ_ONCE(vfsync_forget_delay_ms),
				   VFSYNC_FORGET_DELAY_MAX_MS);
	struct fuse_forget_link *full = NULL;
	bool first;

	atomic64_inc(&vf->fs->forgets_queued);
	spin_lock(&vf->forget_lock);
	if (vf->forgets_stopped) {
		spin_unlock(&vf->forget_lock);
		atomic64_inc(&vf->fs->forgets_dropped);
		kfree(link);
		return;
	}
	link->next = vf->forgets;
	vf->forgets = link;
	first = !vf->nforgets++;
	if (vf->nforgets >= vf->forget_batch) {
		full = vf->forgets;
		vf->forgets = NULL;
		vf->nforgets = 0;
	}
	spin_unlock(&vf->forget_lock);

	if (full)
		vfsync_fuse_send_forgets(vf, full);
	else if (first)
		schedule_delayed_work(&vf->forget_work, msecs_to_jiffies(delay));
}

/* Unmount, before DESTROY: send what is pending, free any later FORGET */
static void vfsync_fuse_stop_forgets(struct vfsync_fuse *vf)
{
	spin_lock(&vf->forget_lock);
	vf->forgets_stopped = true;
	spin_unlock(&vf->forget_lock);
	cancel_delayed_work_sync(&vf->forget_work);
	vfsync_fuse_send_forgets(vf, vfsync_fuse_take_forgets(vf));
}

#ifdef COMPAT_FUSE_IQUEUE_SEND_REQ

static void vfsync_fuse_send_forget(struct fuse_iqueue *fiq,
				    struct fuse_forget_link *link)
{
	vfsync_fuse_forget(fiq->priv, link);
}

static void vfsync_fuse_send_interrupt(struct fuse_iqueue *fiq,
				       struct fuse_req *req)
{
	/* As in-tree virtiofs; SETLKW, the exception, takes no sync queue */
}

static void vfsync_fuse_send_req(struct fuse_iqueue *fiq, struct fuse_req *req)
{
	compat_fuse_assign_unique(fiq, req);
	clear_bit(FR_PENDING, &req->flags);
	vfsync_fuse_queue(fiq->priv, req);
}

#else /* !COMPAT_FUSE_IQUEUE_SEND_REQ */

static void vfsync_fuse_wake_forget_and_unlock(struct fuse_iqueue *fiq)
	__releases(fiq->lock)
{
	struct vfsync_fuse *vf = fiq->priv;
	struct fuse_forget_link *link;

	link = fuse_dequeue_forget(fiq, 1, NULL);
	spin_unlock(&fiq->lock);

	vfsync_fuse_forget(vf, link);
}

static void vfsync_fuse_wake_interrupt_and_unlock(struct fuse_iqueue *fiq)
	__releases(fiq->lock)
{
	/* Not supported, as in-tree virtiofs */
	spin_unlock(&fiq->lock);
}

static void vfsync_fuse_wake_pending_and_unlock(struct fuse_iqueue *fiq)
	__releases(fiq->lock)
{
	struct fuse_req *req;

	req = list_last_entry(&fiq->pending, struct fuse_req, list);
	clear_bit(FR_PENDING, &req->flags);
	list_del_init(&req->list);
	WARN_ON_ONCE(!list_empty(&fiq->pending));
	spin_unlock(&fiq->lock);

	vfsync_fuse_queue(fiq->priv, req);
}

#endif /* COMPAT_FUSE_IQUEUE_SEND_REQ */

static void vfsync_fuse_fiq_release(struct fuse_iqueue *fiq)
{
	struct vfsync_fuse *vf = fiq->priv;
	struct fuse_forget_link *link, *next;

	/* Empty after an unmount; a mount that failed may leave some */
	cancel_delayed_work_sync(&vf->forget_work);
	for (link = vfsync_fuse_take_forgets(vf); link; link = next) {
		next = link->next;
		kfree(link);
		atomic64_inc(&vf->fs->forgets_dropped);
	}
	vfsync_put(vf->fs);
	kfree_rcu(vf, rcu);
}

static const struct fuse_iqueue_ops vfsync_fuse_fiq_ops = {
#ifdef COMPAT_FUSE_IQUEUE_SEND_REQ
	.send_forget			= vfsync_fuse_send_forget,
	.send_interrupt			= vfsync_fuse_send_interrupt,
	.send_req			= vfsync_fuse_send_req,
#else
	.wake_forget_and_unlock		= vfsync_fuse_wake_forget_and_unlock,
	.wake_interrupt_and_unlock	= vfsync_fuse_wake_interrupt_and_unlock,
	.wake_pending_and_unlock	= vfsync_fuse_wake_pending_and_unlock,
#endif
	.release			= vfsync_fuse_fiq_release,
};

static const struct constant_table vfsync_fuse_dax_enums[] = {
	{ "always",	FUSE_DAX_ALWAYS },
	{ "never",	FUSE_DAX_NEVER },
	{ "inode",	FUSE_DAX_INODE_USER },
	{}
};

enum {
	OPT_DAX,
	OPT_DAX_ENUM,
	OPT_FORGET_BATCH,
};

static const struct fs_parameter_spec vfsync_fuse_params[] = {
	fsparam_flag("dax", OPT_DAX),
	fsparam_enum("dax", OPT_DAX_ENUM, vfsync_fuse_dax_enums),
	fsparam_u32("forget_batch", OPT_FORGET_BATCH),
	{}
};

/* A mount's context: the FUSE core's, and the options only we know */
struct vfsync_fuse_fsc {
	struct fuse_fs_context fuse;	/* ->fs_private points here */
	unsigned int forget_batch;	/* most FORGETs in one message */
};

static struct vfsync_fuse_fsc *to_vfsync_fsc(struct fs_context *fsc)
{
	return container_of(fsc->fs_private, struct vfsync_fuse_fsc, fuse);
}

static int vfsync_fuse_parse_param(struct fs_context *fsc,
				   struct fs_parameter *param)
{
	struct fuse_fs_context *ctx = fsc->fs_private;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fsc, vfsync_fuse_params, param, &result);
	if (opt < 0)
		return opt;

	switch (opt) {
	case OPT_DAX:
		ctx->dax_mode = FUSE_DAX_ALWAYS;
		break;
	case OPT_DAX_ENUM:
		ctx->dax_mode = result.uint_32;
		break;
	case OPT_FORGET_BATCH:
		if (!result.uint_32 || result.uint_32 > VFSYNC_FORGET_BATCH)
			return invalfc(fsc, "forget_batch: 1 to %u",
				       VFSYNC_FORGET_BATCH);
		to_vfsync_fsc(fsc)->forget_batch = result.uint_32;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static void vfsync_fuse_free_fsc(struct fs_context *fsc)
{
	if (fsc->fs_private)
		kfree(to_vfsync_fsc(fsc));
}

static void vfsync_fuse_free_dev(struct vfsync_fuse *vf)
{
	if (!vf->fud)
		return;
	compat_fuse_dev_free(vf->fud);
	vf->fud = NULL;
}

static void vfsync_fuse_ctx_defaults(struct fuse_fs_context *ctx)
{
	ctx->rootmode = S_IFDIR;
	ctx->default_permissions = 1;
	ctx->allow_other = 1;
	ctx->max_read = UINT_MAX;
	ctx->blksize = 512;
	ctx->destroy = true;
	ctx->no_control = true;
	ctx->no_force_umount = true;
}

static int vfsync_fuse_fill_super(struct super_block *sb,
				  struct fs_context *fsc)
{
	struct fuse_mount *fm = get_fuse_mount_super(sb);
	struct fuse_conn *fc = fm->fc;
	struct vfsync_fuse *vf = compat_fc_iq(fc)->priv;
	struct vfsync_dev *fs = vf->fs;
	struct fuse_fs_context *ctx = fsc->fs_private;
	int err;

	vfsync_fuse_ctx_defaults(ctx);

	err = -ENOMEM;
	vf->fud = fuse_dev_alloc();
	if (!vf->fud)
		goto out_free_dev;

	/* Our reference keeps fs, but ->remove may have taken the queues */
	err = vfsync_connect(fs);
	if (err == -ENODEV) {
		pr_info("tag <%s> not found\n", fs->tag);
		err = -EINVAL;
		goto out_free_dev;
	}
	if (err) {
		pr_err("tag <%s>: the device was reset after a queue broke; unbind and bind it again\n",
		       fs->tag);
		goto out_free_dev;
	}

	compat_fsc_no_fud(ctx);
	if (ctx->dax_mode != FUSE_DAX_NEVER) {
		if (ctx->dax_mode == FUSE_DAX_ALWAYS && !fs->dax_dev) {
			err = -EINVAL;
			pr_err("dax can't be enabled as the device does not support it\n");
			goto out_disconnect;
		}
		ctx->dax_dev = fs->dax_dev;
	}
	err = fuse_fill_super_common(sb, ctx);
	if (err < 0)
		goto out_disconnect;

	compat_fuse_dev_install(vf->fud, fc);

	fuse_send_init(fm);
	return 0;

out_disconnect:
	vfsync_disconnect(fs);
out_free_dev:
	vfsync_fuse_free_dev(vf);
	return err;
}

static void vfsync_fuse_conn_destroy(struct fuse_mount *fm)
{
	struct fuse_conn *fc = fm->fc;
	struct vfsync_fuse *vf = compat_fc_iq(fc)->priv;

	/* Stop the DAX reclaim worker before evict_inodes() frees ranges */
	if (IS_ENABLED(CONFIG_FUSE_DAX))
		fuse_dax_cancel_work(fc);

	/* No more FORGETs: DESTROY comes next */
	vfsync_fuse_stop_forgets(vf);
	vfsync_stop_hiprio(vf->fs);

	fuse_conn_destroy(fm);

	/*
	 * DESTROY has been answered. Freeing the fuse device drops its
	 * reference to fc, and fc's release drops ours on fs.
	 */
	vfsync_disconnect(vf->fs);
	flush_work(&vfsync_fuse_end_work);
	vfsync_fuse_free_dev(vf);
}

static void vfsync_fuse_kill_sb(struct super_block *sb)
{
	struct fuse_mount *fm = get_fuse_mount_super(sb);

	/* A failed mount has no root and no connection to tear down */
	if (sb->s_root && fuse_mount_remove(fm))
		vfsync_fuse_conn_destroy(fm);
	kill_anon_super(sb);
	fuse_mount_destroy(fm);
}

/*
 * Under sb_lock, for every superblock of the type that is not dead; a
 * dying one is still whole (see vfsync_fuse.rcu).
 */
static int vfsync_fuse_test_super(struct super_block *sb,
				  struct fs_context *fsc)
{
	struct fuse_mount *fsc_fm = fsc->s_fs_info;
	struct fuse_mount *sb_fm = get_fuse_mount_super(sb);
	struct vfsync_fuse *a = compat_fc_iq(fsc_fm->fc)->priv;
	struct vfsync_fuse *b = compat_fc_iq(sb_fm->fc)->priv;

	return a->fs == b->fs;
}

static int vfsync_fuse_get_tree(struct fs_context *fsc)
{
	struct vfsync_fuse *vf = NULL;
	struct fuse_conn *fc = NULL;
	unsigned int queue_size;
	struct super_block *sb;
	struct fuse_mount *fm;
	struct vfsync_dev *fs;
	int err = -EIO;

	if (!fsc->source)
		return invalf(fsc, "No source specified");

	/* The reference goes to vf, fiq->priv; fiq release drops it */
	fs = vfsync_get(fsc->source);
	if (!fs) {
		pr_info("tag <%s> not found\n", fsc->source);
		return -EINVAL;
	}
	/* Any request may take a request queue: their ring bounds its pages */
	queue_size = fs->request_queue_size;

	/* The device chose the size: too small is its mistake, not ours */
	if (queue_size <= VFSYNC_FUSE_HEADER_OVERHEAD) {
		pr_err("tag <%s>: queues of %u entries are too small to mount\n",
		       fsc->source, queue_size);
		err = -EINVAL;
		goto out_err;
	}

	err = -ENOMEM;
	vf = kzalloc(sizeof(*vf), GFP_KERNEL);
	if (!vf)
		goto out_err;
	vf->fs = fs;
	vf->forget_batch = to_vfsync_fsc(fsc)->forget_batch;
	spin_lock_init(&vf->forget_lock);
	INIT_DELAYED_WORK(&vf->forget_work, vfsync_fuse_forget_fn);

	fc = kzalloc(sizeof(*fc), GFP_KERNEL);
	if (!fc)
		goto out_err;
	vf->fc = fc;

	fm = kzalloc(sizeof(*fm), GFP_KERNEL);
	if (!fm)
		goto out_err;

	if (compat_fuse_conn_init(fc, fm, fsc->user_ns, &vfsync_fuse_fiq_ops, vf)) {
		kfree(fm);
		goto out_err;
	}
	fc->release = fuse_free_conn;
	fc->delete_stale = true;
	fc->auto_submounts = true;
	fc->sync_fs = true;
#ifdef COMPAT_FUSE_KVEC_PAGES
	fc->use_pages_for_kvec_io = true;
#endif

	/* Let FUSE split requests that would not fit in a virtqueue */
	fc->max_pages_limit = min_t(unsigned int, fc->max_pages_limit,
				    queue_size - VFSYNC_FUSE_HEADER_OVERHEAD);

	fsc->s_fs_info = fm;
	sb = sget_fc(fsc, vfsync_fuse_test_super, set_anon_super_fc);
	if (fsc->s_fs_info)
		fuse_mount_destroy(fm);
	if (IS_ERR(sb))
		return PTR_ERR(sb);

	if (!sb->s_root) {
		err = vfsync_fuse_fill_super(sb, fsc);
		if (err) {
			deactivate_locked_super(sb);
			return err;
		}
		sb->s_flags |= SB_ACTIVE;
	}

	WARN_ON(fsc->root);
	fsc->root = dget(sb->s_root);
	return 0;

out_err:
	kfree(fc);
	kfree(vf);
	vfsync_put(fs);
	return err;
}

static const struct fs_context_operations vfsync_fuse_context_ops = {
	.free		= vfsync_fuse_free_fsc,
	.parse_param	= vfsync_fuse_parse_param,
	.get_tree	= vfsync_fuse_get_tree,
};

static int vfsync_fuse_init_fs_context(struct fs_context *fsc)
{
	struct vfsync_fuse_fsc *ctx;

	if (fsc->purpose == FS_CONTEXT_FOR_SUBMOUNT)
		return fuse_init_fs_context_submount(fsc);

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->forget_batch = VFSYNC_FORGET_BATCH;
	fsc->fs_private = &ctx->fuse;
	fsc->ops = &vfsync_fuse_context_ops;
	return 0;
}

static struct file_system_type vfsync_fuse_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "virtiofs",
	.init_fs_context	= vfsync_fuse_init_fs_context,
	.kill_sb		= vfsync_fuse_kill_sb,
#ifdef COMPAT_FUSE_IDMAP
	.fs_flags		= FS_ALLOW_IDMAP,
#endif
};

/* "virtiofs" when free, so mount -t virtiofs and rootfstype=virtiofs work */
static int vfsync_fuse_register(void)
{
	int ret;

	vfsync_fuse_fs_type.name = "virtiofs";
	ret = register_filesystem(&vfsync_fuse_fs_type);
	if (ret != -EBUSY)
		return ret;

	vfsync_fuse_fs_type.name = "virtiofs_sync";
	return register_filesystem(&vfsync_fuse_fs_type);
}

/*
 * The upper layer owns the registrations: the virtio driver first (devices
 * probe and list themselves), then the file system type that mounts them.
 */
static int __init virtio_fs_sync_init(void)
{
	unsigned int bit;
	bool sync;
	int ret;

	ret = vfsync_virtio_init();
	if (ret < 0)
		return ret;

	ret = vfsync_fuse_register();
	if (ret < 0) {
		vfsync_virtio_exit();
		return ret;
	}

	bit = vfsync_sync_feature_bit(&sync);
	pr_info("version %s, file system type \"%s\", sync queues %s (feature bit %u, max %u bytes)\n",
		VFSYNC_VERSION, vfsync_fuse_fs_type.name,
		sync ? "enabled" : "disabled", bit, vfsync_max_bytes);
	return 0;
}
module_init(virtio_fs_sync_init);

static void __exit virtio_fs_sync_exit(void)
{
	unregister_filesystem(&vfsync_fuse_fs_type);
	flush_work(&vfsync_fuse_end_work);
	vfsync_virtio_exit();
}
module_exit(virtio_fs_sync_exit);

MODULE_DESCRIPTION("Virtio file system with synchronous queues");
MODULE_LICENSE("GPL");
MODULE_VERSION(VFSYNC_VERSION);
MODULE_ALIAS_FS("virtiofs_sync");
