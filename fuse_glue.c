// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_fs_sync: the FUSE side. The only file that includes the kernel's
 * internal fuse_i.h: the file system type and mount by tag, the
 * fuse_iqueue_ops the FUSE core submits through, and the translation of a
 * fuse_req to scatterlists and of the reply back.
 */

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/virtio.h>

#include "fuse_i.h"
/* compat.h again: its part for the FUSE internals */
#include "compat.h"
#include "virtio_fs_sync.h"

/*
 * Room for the scatterlist entries of the FUSE headers and argument
 * buffers next to the pages: used to cap a request's pages by the
 * virtqueue size.
 */
#define VFSYNC_FUSE_HEADER_OVERHEAD	4

/*
 * Everything a request needs while on a virtqueue, in one allocation found
 * through the virtqueue token (not req->argbuf, which exists only when the
 * kernel has CONFIG_VIRTIO_FS): the buffer the virtio side handles, the
 * scatterlists and a bounce buffer for the non-page arguments. The bounce
 * buffer is needed because arguments may live on the stack or in the
 * kernel image, which the device cannot always reach (UML shares only
 * page-allocator memory, SWIOTLB needs mappable addresses).
 */
struct vfsync_fuse_ctx {
	struct vfsync_buf buf;
	struct fuse_req *req;
	unsigned int in_len;		/* non-page in args, at data[0] */
	u8 *args;
	struct scatterlist *sg;
	struct scatterlist *sgs[];
};

static struct vfsync_fuse_ctx *to_ctx(struct vfsync_buf *buf)
{
	return container_of(buf, struct vfsync_fuse_ctx, buf);
}

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
 * With sync queues the driver does not offer FUSE_ASYNC_DIO. With it the
 * FUSE core sends even a waiting task's O_DIRECT reads and writes as
 * background requests (fuse_direct_IO(), fuse_async_req_send()), which
 * never take a sync queue; without it they are requests a task waits for,
 * and those up to sync_max_bytes complete inside the kick. Only the copy
 * sent to the device changes; a device that grants the flag anyway is
 * believed, as the FUSE core believes it.
 */
static void vfsync_fuse_init_flags(struct vfsync_dev *fs, u8 *in, size_t len)
{
	struct fuse_init_in *init = (struct fuse_init_in *)in;

	if (fs->num_sync_queues &&
	    len >= offsetofend(struct fuse_init_in, flags))
		init->flags &= ~FUSE_ASYNC_DIO;
}

/*
 * Build the request's buffers. GFP_ATOMIC: background requests are
 * submitted under fc->bg_lock.
 */
static struct vfsync_fuse_ctx *vfsync_fuse_prepare(struct fuse_req *req)
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
	struct vfsync_fuse_ctx *ctx;
	struct scatterlist *sg;
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

	size = sizeof(*ctx) + nsg * (sizeof(ctx->sgs[0]) + sizeof(*sg)) +
	       in_len + out_len;
	ctx = kmalloc(size, GFP_ATOMIC);
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
	if (req->in.h.opcode == FUSE_INIT)
		vfsync_fuse_init_flags(compat_req_iq(req)->priv, ctx->args, in_len);

	sg_set_buf(&sg[out_sgs++], &req->in.h, sizeof(req->in.h));
	if (in_len)
		sg_set_buf(&sg[out_sgs++], ctx->args, in_len);
	if (in_pg)
		out_sgs += vfsync_fuse_add_pages(&sg[out_sgs], ap, in_pg_size);

	if (reply) {
		sg_set_buf(&sg[out_sgs + in_sgs++], &req->out.h,
			   sizeof(req->out.h));
		if (out_len)
			sg_set_buf(&sg[out_sgs + in_sgs++], ctx->args + in_len,
				   out_len);
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

	ctx->buf.sgs = ctx->sgs;
	ctx->buf.out_sgs = out_sgs;
	ctx->buf.in_sgs = in_sgs;
	ctx->buf.out_bytes = sizeof(req->in.h) + in_len + in_pg_bytes;
	ctx->buf.in_bytes = reply ? sizeof(req->out.h) + out_len + out_pg_bytes : 0;
	ctx->buf.opcode = req->in.h.opcode;
	ctx->buf.background = test_bit(FR_BACKGROUND, &req->flags);
	ctx->buf.may_block = args->may_block;
	INIT_LIST_HEAD(&ctx->buf.list);
	return ctx;
}

static void vfsync_fuse_free_ctx(struct vfsync_fuse_ctx *ctx)
{
	kfree(ctx);
}

/* Called with the queue lock held, right after the add succeeded. */
void vfsync_fuse_sent_locked(struct vfsync_buf *buf)
{
	struct fuse_req *req = to_ctx(buf)->req;
	struct fuse_pqueue *fpq = &buf->fsvq->fud->pq;

	lockdep_assert_held(&buf->fsvq->lock);

	spin_lock(&fpq->lock);
	list_add_tail(&req->list, fpq->processing);
	spin_unlock(&fpq->lock);
	set_bit(FR_SENT, &req->flags);
	/* Pairs with the barrier in request_wait_answer() */
	smp_mb__after_atomic();
}

/* Called with the queue lock held when the buffer leaves the used ring. */
void vfsync_fuse_reaped_locked(struct vfsync_buf *buf)
{
	struct fuse_req *req = to_ctx(buf)->req;
	struct fuse_pqueue *fpq = &buf->fsvq->fud->pq;

	lockdep_assert_held(&buf->fsvq->lock);

	spin_lock(&fpq->lock);
	list_del_init(&req->list);
	spin_unlock(&fpq->lock);
}

static void vfsync_fuse_copy_out(struct vfsync_fuse_ctx *ctx)
{
	struct fuse_req *req = ctx->req;
	struct fuse_args *args = req->args;
	unsigned int num_out = args->out_numargs - args->out_pages;
	unsigned int remaining = req->out.h.len - sizeof(req->out.h);
	unsigned int i, size, off = ctx->in_len;

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

/*
 * End a request whose buffer came back from the device. Runs without
 * queue locks and with preemption enabled; frees @buf.
 */
void vfsync_fuse_complete(struct vfsync_buf *buf)
{
	struct vfsync_fuse_ctx *ctx = to_ctx(buf);
	struct fuse_req *req = ctx->req;
	struct fuse_args *args = req->args;
	struct fuse_pqueue *fpq = &buf->fsvq->fud->pq;

	if (buf->error) {
		req->out.h.error = buf->error;
	} else if (test_bit(FR_ISREPLY, &req->flags)) {
		unsigned int last = args->out_numargs ?
			args->out_args[args->out_numargs - 1].size : 0;
		int err;

		err = vfsync_check_reply(&req->out.h, req->in.h.unique,
					 buf->used_len, buf->in_bytes,
					 fuse_len_args(args->out_numargs,
						       args->out_args),
					 last, args->out_argvar);
		if (err) {
			pr_err_ratelimited("%s: bad reply to opcode %u unique %llu: used %u of %u, len %u unique %llu error %d\n",
					   buf->fsvq->name, req->in.h.opcode,
					   req->in.h.unique, buf->used_len,
					   buf->in_bytes, req->out.h.len,
					   req->out.h.unique, req->out.h.error);
			vfsync_count_bad_reply(buf->fsvq);
			req->out.h.error = -EIO;
		} else if (!req->out.h.error) {
			vfsync_fuse_copy_out(ctx);
		}
	}

	spin_lock(&fpq->lock);
	clear_bit(FR_SENT, &req->flags);
	spin_unlock(&fpq->lock);

	vfsync_fuse_free_ctx(ctx);
	fuse_request_end(req);
}

/* End a request that could not be queued; process context, no locks. */
void vfsync_fuse_fail(struct vfsync_buf *buf, int err)
{
	struct vfsync_fuse_ctx *ctx = to_ctx(buf);
	struct fuse_req *req = ctx->req;

	vfsync_fuse_free_ctx(ctx);
	req->out.h.error = err;
	fuse_request_end(req);
}

void vfsync_fuse_end_entry(struct list_head *entry)
{
	fuse_request_end(list_entry(entry, struct fuse_req, list));
}

/* Hand a request with its unique id set to the virtio side. */
static void vfsync_fuse_queue(struct vfsync_dev *fs, struct fuse_req *req)
{
	struct vfsync_fuse_ctx *ctx;
	int err = -ENOMEM;

	ctx = vfsync_fuse_prepare(req);
	if (ctx) {
		err = vfsync_submit(fs, &ctx->buf);
		if (!err)
			return;
		vfsync_fuse_free_ctx(ctx);
	}

	pr_err_ratelimited("cannot queue opcode %u: %d\n", req->in.h.opcode,
			   err);
	req->out.h.error = err;
	/* The submitter may hold fc->bg_lock: end it from a worker */
	vfsync_defer_end(fs, &req->list);
}

#ifdef COMPAT_FUSE_IQUEUE_SEND_REQ

static void vfsync_fuse_send_forget(struct fuse_iqueue *fiq,
				    struct fuse_forget_link *link)
{
	vfsync_send_forget(fiq->priv, link->forget_one.nodeid,
			   link->forget_one.nlookup, fuse_get_unique(fiq));
	kfree(link);
}

static void vfsync_fuse_send_interrupt(struct fuse_iqueue *fiq,
				       struct fuse_req *req)
{
	/*
	 * As in-tree virtiofs: operations on the host are not interruptible
	 * and blocking locks, the exception, never use a sync queue.
	 */
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
	struct vfsync_dev *fs = fiq->priv;
	struct fuse_forget_link *link;
	u64 unique;

	link = fuse_dequeue_forget(fiq, 1, NULL);
	unique = fuse_get_unique(fiq);
	spin_unlock(&fiq->lock);

	vfsync_send_forget(fs, link->forget_one.nodeid,
			   link->forget_one.nlookup, unique);
	kfree(link);
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
	vfsync_put(fiq->priv);
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

/* Mount */

static const struct constant_table vfsync_fuse_dax_enums[] = {
	{ "always",	FUSE_DAX_ALWAYS },
	{ "never",	FUSE_DAX_NEVER },
	{ "inode",	FUSE_DAX_INODE_USER },
	{}
};

enum {
	OPT_DAX,
	OPT_DAX_ENUM,
};

static const struct fs_parameter_spec vfsync_fuse_params[] = {
	fsparam_flag("dax", OPT_DAX),
	fsparam_enum("dax", OPT_DAX_ENUM, vfsync_fuse_dax_enums),
	{}
};

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
	default:
		return -EINVAL;
	}
	return 0;
}

static void vfsync_fuse_free_fsc(struct fs_context *fsc)
{
	kfree(fsc->fs_private);
}

static void vfsync_fuse_free_devs(struct vfsync_dev *fs)
{
	unsigned int i;

	for (i = 0; i < fs->nvqs; i++) {
		if (!fs->vqs[i].fud)
			continue;
		compat_fuse_dev_free(fs->vqs[i].fud);
		fs->vqs[i].fud = NULL;
	}
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
	struct vfsync_dev *fs = compat_fc_iq(fc)->priv;
	struct fuse_fs_context *ctx = fsc->fs_private;
	unsigned int i;
	int err;

	vfsync_fuse_ctx_defaults(ctx);
	mutex_lock(&vfsync_mutex);

	/* Our reference keeps fs, but ->remove may have taken the queues */
	err = -EINVAL;
	if (!vfsync_alive_locked(fs)) {
		pr_info("tag <%s> not found\n", fs->tag);
		goto out_unlock;
	}

	err = -ENOMEM;
	for (i = 0; i < fs->nvqs; i++) {
		fs->vqs[i].fud = fuse_dev_alloc();
		if (!fs->vqs[i].fud)
			goto out_free_devs;
	}

	/* We install our own fuse devices */
	compat_fsc_no_fud(ctx);
	if (ctx->dax_mode != FUSE_DAX_NEVER) {
		if (ctx->dax_mode == FUSE_DAX_ALWAYS && !fs->dax_dev) {
			err = -EINVAL;
			pr_err("dax can't be enabled as the device does not support it\n");
			goto out_free_devs;
		}
		ctx->dax_dev = fs->dax_dev;
	}
	err = fuse_fill_super_common(sb, ctx);
	if (err < 0)
		goto out_free_devs;

	for (i = 0; i < fs->nvqs; i++)
		compat_fuse_dev_install(fs->vqs[i].fud, fc);

	/* A previous unmount stopped the queues */
	vfsync_start_all_queues(fs);
	fuse_send_init(fm);
	mutex_unlock(&vfsync_mutex);
	return 0;

out_free_devs:
	vfsync_fuse_free_devs(fs);
out_unlock:
	mutex_unlock(&vfsync_mutex);
	return err;
}

static void vfsync_fuse_conn_destroy(struct fuse_mount *fm)
{
	struct fuse_conn *fc = fm->fc;
	struct vfsync_dev *fs = compat_fc_iq(fc)->priv;

	/* Stop the DAX reclaim worker before evict_inodes() frees ranges */
	if (IS_ENABLED(CONFIG_FUSE_DAX))
		fuse_dax_cancel_work(fc);

	/* No more FORGETs: DESTROY comes next */
	vfsync_stop_queue(&fs->vqs[VFSYNC_VQ_HIPRIO]);
	vfsync_drain_all_queues(fs);

	fuse_conn_destroy(fm);

	/*
	 * DESTROY has been answered. Freeing the fuse devices drops their
	 * references to fc, and fc's release drops ours on fs.
	 */
	vfsync_stop_all_queues(fs);
	vfsync_drain_all_queues(fs);
	vfsync_fuse_free_devs(fs);
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

static int vfsync_fuse_test_super(struct super_block *sb,
				  struct fs_context *fsc)
{
	struct fuse_mount *fsc_fm = fsc->s_fs_info;
	struct fuse_mount *sb_fm = get_fuse_mount_super(sb);

	return compat_fc_iq(fsc_fm->fc)->priv == compat_fc_iq(sb_fm->fc)->priv;
}

static int vfsync_fuse_get_tree(struct fs_context *fsc)
{
	struct fuse_conn *fc = NULL;
	unsigned int queue_size = 0;
	struct super_block *sb;
	struct fuse_mount *fm;
	struct vfsync_dev *fs;
	int err = -EIO;

	if (!fsc->source)
		return invalf(fsc, "No source specified");

	/* The reference goes to compat_fc_iq(fc)->priv; fiq release drops it */
	mutex_lock(&vfsync_mutex);
	fs = vfsync_find_instance_locked(fsc->source);
	if (fs)
		queue_size = vfsync_queue_size(fs);
	mutex_unlock(&vfsync_mutex);

	if (!fs) {
		pr_info("tag <%s> not found\n", fsc->source);
		return -EINVAL;
	}

	/* The device chose the size: too small is its mistake, not ours */
	if (queue_size <= VFSYNC_FUSE_HEADER_OVERHEAD) {
		pr_err("tag <%s>: queues of %u entries are too small to mount\n",
		       fsc->source, queue_size);
		err = -EINVAL;
		goto out_err;
	}

	err = -ENOMEM;
	fc = kzalloc(sizeof(*fc), GFP_KERNEL);
	if (!fc)
		goto out_err;

	fm = kzalloc(sizeof(*fm), GFP_KERNEL);
	if (!fm)
		goto out_err;

	if (compat_fuse_conn_init(fc, fm, fsc->user_ns, &vfsync_fuse_fiq_ops, fs)) {
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
	struct fuse_fs_context *ctx;

	if (fsc->purpose == FS_CONTEXT_FOR_SUBMOUNT)
		return fuse_init_fs_context_submount(fsc);

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	fsc->fs_private = ctx;
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

/*
 * Take "virtiofs" when in-tree virtiofs is absent, so that mount -t
 * virtiofs and rootfstype=virtiofs work unchanged; else coexist with it.
 */
int vfsync_fuse_register(void)
{
	int ret;

	vfsync_fuse_fs_type.name = "virtiofs";
	ret = register_filesystem(&vfsync_fuse_fs_type);
	if (ret != -EBUSY)
		return ret;

	vfsync_fuse_fs_type.name = "virtiofs_sync";
	return register_filesystem(&vfsync_fuse_fs_type);
}

void vfsync_fuse_unregister(void)
{
	unregister_filesystem(&vfsync_fuse_fs_type);
}

const char *vfsync_fuse_fs_name(void)
{
	return vfsync_fuse_fs_type.name;
}
