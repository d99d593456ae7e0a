// SPDX-License-Identifier: GPL-2.0
/*
 * virtio_fs_sync: the queue engine. Submission (a sync queue's kick and its
 * reap, the request queues, parking on a full ring), completion, the hiprio
 * messages, failure and the queues' part of removal share the per-queue
 * lock and the buffer lifetime rules, so they live together.
 */

#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>

#include "virtio_fs_sync.h"

/* How long removal waits for a live device to finish its requests */
#define VFSYNC_REMOVE_GRACE	(5 * HZ)

/*
 * Every work item of the driver. Requests end there, so it must progress
 * under memory pressure (WQ_MEM_RECLAIM); WQ_HIGHPRI: a task waits on each.
 */
static struct workqueue_struct *vfsync_wq;

void vfsync_queue_work(struct work_struct *work)
{
	queue_work(vfsync_wq, work);
}

/* Module init, and KUnit's engine suite, which runs without it */
int vfsync_wq_init(void)
{
	if (!vfsync_wq)
		vfsync_wq = alloc_workqueue(KBUILD_MODNAME, WQ_MEM_RECLAIM |
					    WQ_HIGHPRI | COMPAT_WQ_PERCPU_FLAG, 0);
	return vfsync_wq ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_wq_init);

/* Module exit, once nothing can queue work any more */
void vfsync_wq_exit(void)
{
	destroy_workqueue(vfsync_wq);
	vfsync_wq = NULL;
}

/* A message of the hiprio queue, which the device answers with no reply */
struct vfsync_msg {
	struct list_head list;		/* on hiprio queued_reqs, under ->lock */
	unsigned int len;
	u8 data[];
};

static struct vfsync_vq *vq_to_fsvq(struct virtqueue *vq)
{
	struct vfsync_dev *fs = vq->vdev->priv;

	return &fs->vqs[vq->index];
}

#define vfsync_count(fsvq, field)	atomic64_inc(&(fsvq)->stats.field)

static void vfsync_inc_in_flight(struct vfsync_vq *fsvq)
{
	atomic_long_inc(&fsvq->in_flight);
}

/*
 * Decremented under in_flight_wq.lock, which vfsync_idle() takes too: a
 * drainer that saw 0 knows the last decrementer is done with the queue.
 */
static void vfsync_dec_in_flight(struct vfsync_vq *fsvq)
{
	unsigned long flags;
	long left;

	spin_lock_irqsave(&fsvq->in_flight_wq.lock, flags);
	left = atomic_long_dec_return(&fsvq->in_flight);
	WARN_ON_ONCE(left < 0);
	if (left <= 0)
		wake_up_locked(&fsvq->in_flight_wq);
	spin_unlock_irqrestore(&fsvq->in_flight_wq.lock, flags);
}

static bool vfsync_idle(struct vfsync_vq *fsvq)
{
	bool idle;

	spin_lock_irq(&fsvq->in_flight_wq.lock);
	idle = atomic_long_read(&fsvq->in_flight) <= 0;
	spin_unlock_irq(&fsvq->in_flight_wq.lock);
	return idle;
}

/*
 * A sync queue's done_work that found the lock taken left the reap to the
 * holder, which may have reaped before that completion landed: requeue it.
 */
static void vfsync_unlock(struct vfsync_vq *fsvq)
	__releases(&fsvq->lock)
{
	bool gone;

	if (fsvq->kind != VFSYNC_KIND_SYNC) {
		spin_unlock(&fsvq->lock);
		return;
	}
	/* Until the work is queued: vfsync_kill_queues() waits for us */
	rcu_read_lock();
	gone = fsvq->gone;
	spin_unlock(&fsvq->lock);
	/* Pairs with the barrier in vfsync_sync_done_work() */
	smp_mb();
	if (!gone && test_bit(VFSYNC_VQ_REAP, &fsvq->flags))
		vfsync_queue_work(&fsvq->done_work);
	rcu_read_unlock();
}

/*
 * KUnit redirects these to play another CPU, a kicker or a reaper holding
 * the lock: on UP the lock is never contended and a failed trylock is a
 * spinlock-debug BUG.
 */
VISIBLE_IF_KUNIT bool vfsync_sync_lock_taken(struct vfsync_vq *fsvq)
{
	KUNIT_STATIC_STUB_REDIRECT(vfsync_sync_lock_taken, fsvq);
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_sync_lock_taken);

#define vfsync_sync_trylock(fsvq) ({				\
	struct vfsync_vq *__q = (fsvq);					\
									\
	!vfsync_sync_lock_taken(__q) && spin_trylock(&__q->lock);	\
})

VISIBLE_IF_KUNIT bool vfsync_sync_kicking(struct vfsync_vq *fsvq)
{
	KUNIT_STATIC_STUB_REDIRECT(vfsync_sync_kicking, fsvq);
	return READ_ONCE(fsvq->kicking);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_sync_kicking);

/*
 * A kicker holds a sync queue's lock for a host operation and is never
 * waited for; a reaper holds it briefly, preemption off, and is retried
 * this many times before the request goes interrupt-driven.
 */
#define VFSYNC_REAPER_SPINS	1000

/* A failed device's queues stay stopped: its rings are gone. */
static void vfsync_set_connected(struct vfsync_dev *fs, bool connected)
{
	unsigned int i;

	for (i = 0; i < fs->nvqs; i++) {
		spin_lock(&fs->vqs[i].lock);
		fs->vqs[i].connected = connected && !READ_ONCE(fs->failed);
		vfsync_unlock(&fs->vqs[i]);
	}
}

void vfsync_start_all_queues(struct vfsync_dev *fs)
{
	vfsync_set_connected(fs, true);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_start_all_queues);

void vfsync_stop_all_queues(struct vfsync_dev *fs)
{
	vfsync_set_connected(fs, false);
}

static void vfsync_stop_queue(struct vfsync_vq *fsvq)
{
	spin_lock(&fsvq->lock);
	fsvq->connected = false;
	vfsync_unlock(fsvq);
}

/* Wait until every buffer of a stopped queue has been ended. */
static void vfsync_drain_queue(struct vfsync_vq *fsvq)
{
	wait_event(fsvq->in_flight_wq, vfsync_idle(fsvq));
	flush_work(&fsvq->done_work);
	flush_work(&fsvq->dispatch_work);
}

void vfsync_drain_all_queues(struct vfsync_dev *fs)
{
	unsigned int i;

	for (i = 0; i < fs->nvqs; i++)
		vfsync_drain_queue(&fs->vqs[i]);
}

void vfsync_stop_hiprio(struct vfsync_dev *fs)
{
	vfsync_stop_queue(&fs->vqs[VFSYNC_VQ_HIPRIO]);
	vfsync_drain_all_queues(fs);
}

static void vfsync_complete(struct vfsync_buf *buf)
{
	struct vfsync_vq *fsvq = buf->fsvq;

	if (buf->ops->complete(buf))	/* frees buf */
		vfsync_count(fsvq, bad_reply);
	vfsync_dec_in_flight(fsvq);
}

static void vfsync_complete_work(struct work_struct *work)
{
	vfsync_complete(container_of(work, struct vfsync_buf, work));
}

/*
 * A submitter ends only its own buffer (@own) in its context; another
 * task's or a background request is ended from a work item, as in-tree
 * virtiofs does, never under the submitter's locks. A buffer that may
 * block is never ended in done_work, which others wait on.
 */
static void vfsync_end_bufs(struct list_head *done, struct vfsync_buf *own,
			    bool submitter)
{
	struct vfsync_buf *buf, *next;

	list_for_each_entry_safe(buf, next, done, list) {
		list_del_init(&buf->list);
		if (buf->may_block || (submitter && buf != own)) {
			INIT_WORK(&buf->work, vfsync_complete_work);
			vfsync_queue_work(&buf->work);
		} else {
			vfsync_complete(buf);
		}
	}
}

static void vfsync_reap_one_locked(struct vfsync_vq *fsvq,
				   struct vfsync_buf *buf, unsigned int len,
				   struct list_head *done)
{
	lockdep_assert_held(&fsvq->lock);
	buf->used_len = len;
	list_add_tail(&buf->list, done);
	/* A sync queue counts its buffers to know when to arm the callback */
	if (fsvq->kind == VFSYNC_KIND_SYNC &&
	    !WARN_ON_ONCE(!fsvq->outstanding))
		fsvq->outstanding--;
}

/*
 * A notification the transport could not deliver (UML: the socket or kick
 * channel hung up) breaks the queue, but the transport is at fault, not
 * the ring: fail_work then ends requests with -ENOTCONN.
 */
static void vfsync_notify(struct vfsync_vq *fsvq)
{
	if (likely(virtqueue_notify(fsvq->vq)))
		return;
	WRITE_ONCE(fsvq->notify_failed, true);
	/* The queue is broken now: only fail_work ends what it holds */
	vfsync_queue_work(&fsvq->fs->fail_work);
}

/* A broken queue never gives its buffers back: fail_work takes them */
static void vfsync_check_broken(struct vfsync_vq *fsvq)
{
	if (unlikely(virtqueue_is_broken(fsvq->vq)))
		vfsync_queue_work(&fsvq->fs->fail_work);
}

/* Take back what a reset device still holds, used or not; end it with @err */
static void vfsync_reclaim_queue(struct vfsync_vq *fsvq, int err)
{
	struct vfsync_buf *buf;
	LIST_HEAD(done);
	void *token;

	spin_lock(&fsvq->lock);
	while ((token = virtqueue_detach_unused_buf(fsvq->vq)) != NULL) {
		if (fsvq->kind == VFSYNC_KIND_HIPRIO) {
			kfree(token);
			vfsync_dec_in_flight(fsvq);
			continue;
		}
		buf = token;
		buf->error = err;
		vfsync_reap_one_locked(fsvq, buf, 0, &done);
	}
	/* Parked buffers meet the stopped queue and fail there */
	if (!list_empty(&fsvq->queued_reqs) && !fsvq->gone)
		vfsync_queue_work(&fsvq->dispatch_work);
	vfsync_unlock(fsvq);

	vfsync_end_bufs(&done, NULL, false);
}

/*
 * A queue broke: reset the device, as removal does, and end all it held,
 * so that no request or unmount waits on a dead ring. The device stays
 * bound but unusable (mounts fail) until rebound or removed.
 *
 * Every queue broken (the transport gave up: virtio_break_device(), UML's
 * socket closing, a device asking for a reset), or queues broken only by
 * undelivered notifications, means the device is gone: -ENOTCONN, as
 * removal ends requests. Otherwise the device broke a ring: -EIO.
 */
static void vfsync_fail_work(struct work_struct *work)
{
	struct vfsync_dev *fs = container_of(work, struct vfsync_dev,
					     fail_work);
	unsigned int i, broken = 0, ring = 0;
	int err;

	/* Cleared first: a change after the read queues this work again */
	if (READ_ONCE(fs->config_changed)) {
		WRITE_ONCE(fs->config_changed, false);
		smp_mb();	/* the flag's clearing before the read */
		if (fs->vdev->config->get_status(fs->vdev) &
		    VIRTIO_CONFIG_S_NEEDS_RESET)
			vfsync_needs_reset(fs);
	}
	/* In process context: virtio_break_device() takes a plain spinlock */
	if (READ_ONCE(fs->needs_reset) && !READ_ONCE(fs->failed))
		virtio_break_device(fs->vdev);
	for (i = 0; i < fs->nvqs; i++) {
		if (!virtqueue_is_broken(fs->vqs[i].vq))
			continue;
		broken++;
		ring += !READ_ONCE(fs->vqs[i].notify_failed);
	}
	if (!broken || READ_ONCE(fs->failed))
		return;

	err = ring && broken < fs->nvqs ? -EIO : -ENOTCONN;
	WRITE_ONCE(fs->failed, true);
	dev_err(&fs->vdev->dev,
		"%u of %u queues broken: resetting the device, its requests fail with %s (%s)\n",
		broken, fs->nvqs, err == -EIO ? "EIO" : "ENOTCONN",
		err == -EIO ? "a ring of the device" : "the transport");
	vfsync_stop_all_queues(fs);
	virtio_reset_device(fs->vdev);
	for (i = 0; i < fs->nvqs; i++)
		vfsync_reclaim_queue(&fs->vqs[i], err);
}

/*
 * Any context, maybe under the virtio core's config lock, where get_status()
 * may not be called (it sleeps on virtio-ccw): fail_work reads the status.
 */
void vfsync_config_changed_any(struct vfsync_dev *fs)
{
	WRITE_ONCE(fs->config_changed, true);
	vfsync_queue_work(&fs->fail_work);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_config_changed_any);

/*
 * Any context. Nothing the device holds will come back: fail_work breaks
 * every queue and resets it; its requests end with -ENOTCONN.
 */
void vfsync_needs_reset(struct vfsync_dev *fs)
{
	if (READ_ONCE(fs->needs_reset) || READ_ONCE(fs->failed))
		return;
	WRITE_ONCE(fs->needs_reset, true);
	dev_err(&fs->vdev->dev, "the device needs a reset: its requests end\n");
	vfsync_queue_work(&fs->fail_work);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_needs_reset);

/*
 * @own is the kicker's buffer (NULL for done_work): only it counts as
 * inline. The callback stays enabled only while buffers are outstanding;
 * virtqueue_enable_cb() re-checks the ring, which closes the race with a
 * completion between the last get_buf and the enable.
 */
static bool vfsync_sync_reap_locked(struct vfsync_vq *fsvq,
				    struct list_head *done,
				    struct vfsync_buf *own)
{
	struct virtqueue *vq = fsvq->vq;
	struct vfsync_buf *buf;
	bool own_reaped = false;
	unsigned int len;

	lockdep_assert_held(&fsvq->lock);

	for (;;) {
		while ((buf = virtqueue_get_buf(vq, &len)) != NULL) {
			vfsync_reap_one_locked(fsvq, buf, len, done);
			if (buf == own) {
				vfsync_count(fsvq, inline_done);
				own_reaped = true;
			} else {
				vfsync_count(fsvq, deferred);
			}
		}
		if (!fsvq->outstanding) {
			WRITE_ONCE(fsvq->armed, false);
			virtqueue_disable_cb(vq);
			break;
		}
		WRITE_ONCE(fsvq->armed, true);
		if (virtqueue_enable_cb(vq))
			break;
	}
	vfsync_check_broken(fsvq);
	return own_reaped;
}

/* Set aside a queue whose device keeps missing; take it back on a hit */
static void vfsync_sync_account_locked(struct vfsync_vq *fsvq, bool hit)
{
	struct device *dev = &fsvq->fs->vdev->dev;

	lockdep_assert_held(&fsvq->lock);
	if (hit) {
		fsvq->misses = 0;
		if (fsvq->demoted) {
			WRITE_ONCE(fsvq->demoted, false);
			dev_info_ratelimited(dev, "%s: completing inside the kick again\n",
					     fsvq->name);
		}
		return;
	}
	if (fsvq->demoted || ++fsvq->misses < VFSYNC_DEMOTE_MISSES)
		return;
	WRITE_ONCE(fsvq->demoted, true);
	vfsync_count(fsvq, demoted);
	dev_warn_ratelimited(dev, "%s: the device completed none of %u requests inside the kick: its CPUs use the request queues\n",
			     fsvq->name, VFSYNC_DEMOTE_MISSES);
}

/*
 * Never waits for the lock: its holder is inside a kick and reaps before
 * unlocking; VFSYNC_VQ_REAP makes vfsync_unlock() requeue this work if the
 * completion landed after that reap.
 */
static void vfsync_sync_done_work(struct work_struct *work)
{
	struct vfsync_vq *fsvq = container_of(work, struct vfsync_vq,
					      done_work);
	LIST_HEAD(done);

	set_bit(VFSYNC_VQ_REAP, &fsvq->flags);
	/* Pairs with the barrier in vfsync_unlock() */
	smp_mb__after_atomic();
	if (!vfsync_sync_trylock(fsvq))
		return;
	clear_bit(VFSYNC_VQ_REAP, &fsvq->flags);
	vfsync_sync_reap_locked(fsvq, &done, NULL);
	vfsync_unlock(fsvq);

	vfsync_end_bufs(&done, NULL, false);
}

static void vfsync_requests_done_work(struct work_struct *work)
{
	struct vfsync_vq *fsvq = container_of(work, struct vfsync_vq,
					      done_work);
	struct virtqueue *vq = fsvq->vq;
	struct vfsync_buf *buf;
	unsigned int len;
	LIST_HEAD(done);

	spin_lock(&fsvq->lock);
	do {
		virtqueue_disable_cb(vq);
		while ((buf = virtqueue_get_buf(vq, &len)) != NULL)
			vfsync_reap_one_locked(fsvq, buf, len, &done);
	} while (!virtqueue_enable_cb(vq));
	vfsync_check_broken(fsvq);
	spin_unlock(&fsvq->lock);

	vfsync_end_bufs(&done, NULL, false);

	/* The queue may have room again for buffers that met -ENOSPC */
	spin_lock(&fsvq->lock);
	if (!list_empty(&fsvq->queued_reqs) && !fsvq->gone)
		vfsync_queue_work(&fsvq->dispatch_work);
	spin_unlock(&fsvq->lock);
}

static void vfsync_hiprio_done_work(struct work_struct *work)
{
	struct vfsync_vq *fsvq = container_of(work, struct vfsync_vq,
					      done_work);
	struct virtqueue *vq = fsvq->vq;
	struct vfsync_msg *msg;
	unsigned int len;

	spin_lock(&fsvq->lock);
	do {
		virtqueue_disable_cb(vq);
		while ((msg = virtqueue_get_buf(vq, &len)) != NULL) {
			kfree(msg);
			vfsync_dec_in_flight(fsvq);
		}
	} while (!virtqueue_enable_cb(vq));
	vfsync_check_broken(fsvq);

	if (!list_empty(&fsvq->queued_reqs) && !fsvq->gone)
		vfsync_queue_work(&fsvq->dispatch_work);
	spin_unlock(&fsvq->lock);
}

/*
 * A late or hostile device may signal a queue after removal reset it: no
 * work is queued once ->gone, and vfsync_kill_queues() waits for a
 * callback that read ->gone too early.
 */
void vfsync_vq_done(struct virtqueue *vq)
{
	struct vfsync_vq *fsvq = vq_to_fsvq(vq);

	/*
	 * A shared interrupt line calls a sync queue's callback for any used
	 * buffer, even one the lock's holder will reap: only an armed queue
	 * needs the work.
	 */
	if (fsvq->kind == VFSYNC_KIND_SYNC && !READ_ONCE(fsvq->armed))
		return;
	rcu_read_lock();
	if (!READ_ONCE(fsvq->gone))
		vfsync_queue_work(&fsvq->done_work);
	rcu_read_unlock();
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_vq_done);

/*
 * 0: added (*notify: notify once unlocked). 1: the ring is full and @buf is
 * parked on queued_reqs (at the head with @front: a retry keeps its place)
 * in this lock hold, so the done_work that frees room is sure to see it.
 * Else an error.
 */
static int vfsync_add_locked(struct vfsync_vq *fsvq, struct vfsync_buf *buf,
			     bool front, bool *notify)
{
	int ret;

	lockdep_assert_held(&fsvq->lock);
	*notify = false;
	if (!fsvq->connected)
		return -ENOTCONN;

	buf->fsvq = fsvq;
	ret = virtqueue_add_sgs(fsvq->vq, buf->sgs, buf->out_sgs, buf->in_sgs,
				buf, GFP_ATOMIC);
	if (ret == -ENOSPC) {
		vfsync_count(fsvq, full);
		if (front)
			list_add(&buf->list, &fsvq->queued_reqs);
		else
			list_add_tail(&buf->list, &fsvq->queued_reqs);
		return 1;
	}
	if (ret < 0) {
		/* A broken queue: what it still holds must end too */
		vfsync_check_broken(fsvq);
		return ret;
	}

	buf->ops->sent_locked(buf);
	vfsync_count(fsvq, submitted);
	*notify = virtqueue_kick_prepare(fsvq->vq);
	return 0;
}

/* A new buffer for a request queue: added or parked (0), or an error. */
static int vfsync_enqueue(struct vfsync_vq *fsvq, struct vfsync_buf *buf)
{
	bool notify;
	int ret;

	spin_lock(&fsvq->lock);
	ret = vfsync_add_locked(fsvq, buf, false, &notify);
	if (ret >= 0)
		vfsync_inc_in_flight(fsvq);
	spin_unlock(&fsvq->lock);

	if (notify)
		vfsync_notify(fsvq);
	return ret < 0 ? ret : 0;
}

/*
 * The kick is issued with the queue lock held: the device finishes the
 * buffers within the kick, and reaping them in the same lock hold makes the
 * reply ours without a callback. Held for a host operation, the lock is
 * only ever tried; a submitter that finds it taken goes interrupt-driven.
 * The CPU stays pinned from picking its queue until the reap; requests end
 * after it is released, as ending may wake tasks and take sleeping locks.
 *
 * Returns -EAGAIN when the request should take the interrupt-driven path.
 */
static int vfsync_submit_sync(struct vfsync_dev *fs, struct vfsync_buf *buf)
{
	struct vfsync_vq *fsvq;
	struct virtqueue *vq;
	unsigned int spins;
	LIST_HEAD(done);
	int ret;

	compat_sync_pin_cpu();
	fsvq = &fs->vqs[fs->sync_map[smp_processor_id()]];

	if (READ_ONCE(fsvq->demoted) &&
	    atomic_inc_return(&fsvq->probes) % VFSYNC_DEMOTED_PROBE) {
		vfsync_count(fsvq, fallback);
		compat_sync_unpin_cpu();
		return -EAGAIN;
	}
	for (spins = COMPAT_SYNC_WAIT_REAPER ? VFSYNC_REAPER_SPINS : 0;
	     !vfsync_sync_trylock(fsvq); spins--) {
		if (!spins || vfsync_sync_kicking(fsvq)) {
			vfsync_count(fsvq, busy);
			vfsync_count(fsvq, fallback);
			compat_sync_unpin_cpu();
			return -EAGAIN;
		}
		cpu_relax();
	}
	if (!fsvq->connected) {
		ret = -EAGAIN;
		goto out_unlock;
	}
	WRITE_ONCE(fsvq->kicking, true);

	vq = fsvq->vq;
	buf->fsvq = fsvq;
	ret = virtqueue_add_sgs(vq, buf->sgs, buf->out_sgs, buf->in_sgs, buf,
				GFP_ATOMIC);
	if (ret < 0) {
		/* Never wait for room with the CPU pinned */
		if (ret == -ENOSPC)
			vfsync_count(fsvq, full);
		else
			vfsync_check_broken(fsvq);
		vfsync_count(fsvq, fallback);
		ret = -EAGAIN;
		goto out_unlock;
	}

	buf->ops->sent_locked(buf);
	vfsync_inc_in_flight(fsvq);
	fsvq->outstanding++;
	vfsync_count(fsvq, submitted);

	/*
	 * No interrupt for what completes inside the kick; the reap re-arms
	 * the callback only if something is still outstanding.
	 */
	WRITE_ONCE(fsvq->armed, false);
	virtqueue_disable_cb(vq);
	/*
	 * Notify whatever the suppression hint says: the device runs the
	 * request inside the notification. kick_prepare publishes the ring.
	 */
	virtqueue_kick_prepare(vq);
	vfsync_notify(fsvq);
	vfsync_sync_account_locked(fsvq,
				   vfsync_sync_reap_locked(fsvq, &done, buf));

	WRITE_ONCE(fsvq->kicking, false);
	vfsync_unlock(fsvq);
	compat_sync_unpin_cpu();

	vfsync_end_bufs(&done, buf, true);
	return 0;

out_unlock:
	WRITE_ONCE(fsvq->kicking, false);
	vfsync_unlock(fsvq);
	compat_sync_unpin_cpu();
	return ret;
}

/*
 * Maybe under the FUSE core's locks (fc->bg_lock for background requests,
 * never ->sync): never sleeps and never ends a request. 0: on a queue or
 * parked for a retry; else an error and the caller still owns @buf.
 */
int vfsync_submit(struct vfsync_dev *fs, struct vfsync_buf *buf)
{
	struct vfsync_vq *fsvq;
	int ret;

	/* Without indirect descriptors a buffer needs a ring slot per entry */
	if (buf->sync && fs->num_sync_queues &&
	    buf->out_sgs + buf->in_sgs <= fs->sync_queue_size) {
		ret = vfsync_submit_sync(fs, buf);
		if (ret != -EAGAIN)
			return ret;
	}

	fsvq = &fs->vqs[fs->req_map[raw_smp_processor_id()]];
	return vfsync_enqueue(fsvq, buf);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_submit);

/* Where a completion that makes room may come in; KUnit puts one there */
VISIBLE_IF_KUNIT void vfsync_retry_met_full(struct vfsync_vq *fsvq)
{
	KUNIT_STATIC_STUB_REDIRECT(vfsync_retry_met_full, fsvq);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_retry_met_full);

static void vfsync_request_dispatch_work(struct work_struct *work)
{
	struct vfsync_vq *fsvq = container_of(work, struct vfsync_vq,
					      dispatch_work);
	struct vfsync_buf *buf;
	bool notify;
	int ret;

	for (;;) {
		spin_lock(&fsvq->lock);
		buf = list_first_entry_or_null(&fsvq->queued_reqs,
					       struct vfsync_buf, list);
		if (!buf) {
			spin_unlock(&fsvq->lock);
			return;
		}
		list_del_init(&buf->list);
		/* Still full: back at the head, in this same lock hold */
		ret = vfsync_add_locked(fsvq, buf, true, &notify);
		spin_unlock(&fsvq->lock);

		if (notify)
			vfsync_notify(fsvq);
		if (ret == 1) {
			vfsync_retry_met_full(fsvq);
			return;
		}
		if (ret < 0) {
			pr_err_ratelimited("retrying a request on %s failed: %d\n",
					   fsvq->name, ret);
			buf->ops->fail(buf, ret);
			vfsync_dec_in_flight(fsvq);
		}
	}
}

/* True if the queue is full: the sender stops until a completion makes room */
static bool vfsync_send_msg(struct vfsync_vq *fsvq, struct vfsync_msg *msg,
			    bool in_flight)
{
	struct scatterlist sg;
	struct virtqueue *vq;
	bool notify;
	int ret;

	spin_lock(&fsvq->lock);
	if (!fsvq->connected) {
		if (in_flight)
			vfsync_dec_in_flight(fsvq);
		kfree(msg);
		spin_unlock(&fsvq->lock);
		return false;
	}

	sg_init_one(&sg, msg->data, msg->len);
	vq = fsvq->vq;
	ret = virtqueue_add_outbuf(vq, &sg, 1, msg, GFP_ATOMIC);
	if (ret < 0) {
		if (ret == -ENOSPC) {
			vfsync_count(fsvq, full);
			list_add_tail(&msg->list, &fsvq->queued_reqs);
			if (!in_flight)
				vfsync_inc_in_flight(fsvq);
			spin_unlock(&fsvq->lock);
			return true;
		}
		/* A lost FORGET only leaks a host inode reference */
		pr_debug("dropping a hiprio message: %d\n", ret);
		kfree(msg);
		if (in_flight)
			vfsync_dec_in_flight(fsvq);
		spin_unlock(&fsvq->lock);
		return false;
	}

	if (!in_flight)
		vfsync_inc_in_flight(fsvq);
	vfsync_count(fsvq, submitted);
	notify = virtqueue_kick_prepare(vq);
	spin_unlock(&fsvq->lock);

	if (notify)
		vfsync_notify(fsvq);
	return false;
}

static void vfsync_hiprio_dispatch_work(struct work_struct *work)
{
	struct vfsync_vq *fsvq = container_of(work, struct vfsync_vq,
					      dispatch_work);
	struct vfsync_msg *msg;

	for (;;) {
		spin_lock(&fsvq->lock);
		msg = list_first_entry_or_null(&fsvq->queued_reqs,
					       struct vfsync_msg, list);
		if (!msg) {
			spin_unlock(&fsvq->lock);
			return;
		}
		list_del(&msg->list);
		spin_unlock(&fsvq->lock);

		if (vfsync_send_msg(fsvq, msg, true))
			return;
	}
}

void vfsync_send_hiprio(struct vfsync_dev *fs, const void *data, size_t len)
{
	struct vfsync_msg *msg;

	/* Device-visible memory must not be on the stack (UML, SWIOTLB) */
	msg = kmalloc(struct_size(msg, data, len), GFP_NOFS | __GFP_NOFAIL);
	msg->len = len;
	memcpy(msg->data, data, len);
	vfsync_send_msg(&fs->vqs[VFSYNC_VQ_HIPRIO], msg, false);
}

/*
 * The kick floor (debugfs <tag>/floor, test-only): an empty kick of this
 * CPU's sync queue, made as vfsync_submit_sync() kicks. The device finds
 * nothing and acknowledges: the transport's round trip. Returns it in ns,
 * -EBUSY if the lock was taken, -ENODEV if the queue or device failed.
 */
static s64 vfsync_floor_kick(struct vfsync_dev *fs)
{
	struct vfsync_vq *fsvq;
	LIST_HEAD(done);
	ktime_t t0;
	s64 ret;

	compat_sync_pin_cpu();
	fsvq = &fs->vqs[fs->sync_map[smp_processor_id()]];
	if (!vfsync_sync_trylock(fsvq)) {
		compat_sync_unpin_cpu();
		return -EBUSY;
	}
	/* Under the lock: fail_work sets ->failed before it stops the queue */
	if (READ_ONCE(fs->failed) || virtqueue_is_broken(fsvq->vq)) {
		ret = -ENODEV;
		goto out_unlock;
	}
	WRITE_ONCE(fsvq->kicking, true);
	WRITE_ONCE(fsvq->armed, false);
	virtqueue_disable_cb(fsvq->vq);
	t0 = ktime_get();
	vfsync_notify(fsvq);
	ret = ktime_to_ns(ktime_sub(ktime_get(), t0));
	vfsync_sync_reap_locked(fsvq, &done, NULL);
	WRITE_ONCE(fsvq->kicking, false);
	if (virtqueue_is_broken(fsvq->vq))
		ret = -ENODEV;
out_unlock:
	vfsync_unlock(fsvq);
	compat_sync_unpin_cpu();
	vfsync_end_bufs(&done, NULL, true);
	return ret;
}

static int vfsync_floor_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @ns; min, median (the lower middle one), mean and max of @n */
VISIBLE_IF_KUNIT void vfsync_floor_summary(u64 *ns, unsigned int n,
					   unsigned int busy,
					   struct vfsync_floor *out)
{
	u64 sum = 0;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	out->busy = busy;
	if (!n)
		return;
	sort(ns, n, sizeof(*ns), vfsync_floor_cmp, NULL);
	for (i = 0; i < n; i++)
		sum += ns[i];
	out->kicks = n;
	out->min_ns = ns[0];
	out->median_ns = ns[(n - 1) / 2];
	out->mean_ns = div_u64(sum, n);
	out->max_ns = ns[n - 1];
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_floor_summary);

/*
 * @n empty kicks, summed up in fs->floor; a busy queue skips a kick and
 * counts it. The kicks made before an error (-EINTR, ...) are in it too.
 */
int vfsync_floor_run(struct vfsync_dev *fs, unsigned int n)
{
	unsigned int i, done = 0, busy = 0;
	int ret = 0;
	u64 *ns;
	s64 t;

	if (!fs->num_sync_queues)
		return -EOPNOTSUPP;
	if (!n || n > VFSYNC_FLOOR_MAX)
		return -EINVAL;
	ns = kvmalloc_array(n, sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return -ENOMEM;

	mutex_lock(&fs->floor_lock);
	for (i = 0; i < n; i++) {
		cond_resched();
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		t = vfsync_floor_kick(fs);
		if (t == -EBUSY) {
			busy++;
			continue;
		}
		if (t < 0) {
			ret = t;
			break;
		}
		ns[done++] = t;
	}
	vfsync_floor_summary(ns, done, busy, &fs->floor);
	mutex_unlock(&fs->floor_lock);
	kvfree(ns);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_floor_run);

void vfsync_init_vq(struct vfsync_dev *fs, struct vfsync_vq *fsvq,
		    enum vfsync_vq_kind kind, const char *name)
{
	fsvq->fs = fs;
	fsvq->kind = kind;
	strscpy(fsvq->name, name, sizeof(fsvq->name));
	spin_lock_init(&fsvq->lock);
	INIT_LIST_HEAD(&fsvq->queued_reqs);
	init_waitqueue_head(&fsvq->in_flight_wq);

	switch (kind) {
	case VFSYNC_KIND_HIPRIO:
		INIT_WORK(&fsvq->done_work, vfsync_hiprio_done_work);
		INIT_WORK(&fsvq->dispatch_work, vfsync_hiprio_dispatch_work);
		break;
	case VFSYNC_KIND_REQUEST:
		INIT_WORK(&fsvq->done_work, vfsync_requests_done_work);
		INIT_WORK(&fsvq->dispatch_work, vfsync_request_dispatch_work);
		break;
	case VFSYNC_KIND_SYNC:
		INIT_WORK(&fsvq->done_work, vfsync_sync_done_work);
		/* Never queued (nothing parks here), flushed like the others */
		INIT_WORK(&fsvq->dispatch_work, vfsync_request_dispatch_work);
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_init_vq);

void vfsync_init_dev(struct vfsync_dev *fs)
{
	INIT_LIST_HEAD(&fs->list);
	INIT_WORK(&fs->fail_work, vfsync_fail_work);
	mutex_init(&fs->floor_lock);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_init_dev);

/*
 * Removal and a failed probe, once the device is reset and every queue
 * drained: the caller deletes the virtqueues next, so no queue work may
 * run or be queued after this. Whoever queues a queue's work outside one
 * of its works (the callback, vfsync_unlock()) reads ->gone and queues in
 * one RCU read-side section: after the grace period each saw ->gone or
 * queued work that is cancelled here. A running work queues no other work
 * of its queue once ->gone is set.
 */
void vfsync_kill_queues(struct vfsync_dev *fs)
{
	unsigned int i;

	for (i = 0; i < fs->nvqs; i++) {
		spin_lock(&fs->vqs[i].lock);
		WRITE_ONCE(fs->vqs[i].gone, true);
		spin_unlock(&fs->vqs[i].lock);
	}
	synchronize_rcu();
	for (i = 0; i < fs->nvqs; i++) {
		cancel_work_sync(&fs->vqs[i].done_work);
		cancel_work_sync(&fs->vqs[i].dispatch_work);
	}
	/* A done_work of the grace period may have queued it again */
	cancel_work_sync(&fs->fail_work);
}

/* Removal, once unlisted: end all the device holds, leave the queues idle */
void vfsync_remove_queues(struct vfsync_dev *fs)
{
	long left = VFSYNC_REMOVE_GRACE;
	unsigned int i;

	vfsync_stop_all_queues(fs);
	/* fail_work does not take vfsync_mutex */
	cancel_work_sync(&fs->fail_work);
	/*
	 * A live device may finish what it holds; one that is gone (broken
	 * queues), failed or too slow is reset and its buffers taken back.
	 */
	for (i = 0; i < fs->nvqs && left > 0 && !READ_ONCE(fs->failed); i++) {
		struct vfsync_vq *fsvq = &fs->vqs[i];

		if (virtqueue_is_broken(fsvq->vq))
			break;
		left = wait_event_timeout(fsvq->in_flight_wq,
					  vfsync_idle(fsvq), left);
	}
	virtio_reset_device(fs->vdev);
	for (i = 0; i < fs->nvqs; i++)
		vfsync_reclaim_queue(&fs->vqs[i], -ENOTCONN);
	vfsync_drain_all_queues(fs);
	vfsync_kill_queues(fs);
}
EXPORT_SYMBOL_IF_KUNIT(vfsync_remove_queues);

