/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernel series virtio_fs_sync builds for is
 * decided here, as a named macro or helper; the logic files never look at
 * version numbers. Kbuild probes the headers of the tree it builds against
 * and passes the results as COMPAT_* defines; this file is force-included
 * into every object.
 *
 * COMPAT_FUSE_IQUEUE_SEND_REQ    fuse_iqueue_ops has send_req/send_forget
 *                                (6.12); without it the FUSE core calls
 *                                wake_*_and_unlock with fiq->lock held (6.1)
 * COMPAT_FUSE_ARGS_FOLIOS        fuse_args_pages may carry folios instead
 *                                of pages (uses_folios)
 * COMPAT_FUSE_KVEC_PAGES         fuse_conn.use_pages_for_kvec_io exists
 * COMPAT_FUSE_IDMAP              FUSE supports idmapped mounts
 * COMPAT_VIRTQUEUE_INFO          virtio_find_vqs() takes virtqueue_info
 * COMPAT_VIRTIO_REGISTER_OWNER   register_virtio_driver() sets the owner
 * COMPAT_DAX_MEM2BLK_ERR         dax_mem2blk_err() exists
 * COMPAT_HAVE_GROUP_CPUS         group_cpus_evenly() is exported
 * COMPAT_RT_SPIN_LOCK_ANNOTATED  PREEMPT_RT's rt_spin_lock()/unlock() carry
 *                                sparse's context annotations (6.12, not 6.1)
 */
#ifndef _VIRTIO_FS_SYNC_COMPAT_H
#define _VIRTIO_FS_SYNC_COMPAT_H

#include <linux/kconfig.h>

/* Before any header can pick the default */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#ifndef __ASSEMBLY__

#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

/*
 * For sparse only (the compiled code is the same): 6.1's PREEMPT_RT
 * spin_lock() and spin_unlock() families carry no context annotation, its
 * spin_trylock() does, so a trylock looked unbalanced and a function that
 * releases a lock it was handed (__releases) did not release it. These
 * wrappers give sparse the annotations that 6.12's rt_spin_lock() and
 * rt_spin_unlock() have; spin_lock_irqsave() expands to spin_lock().
 */
#if defined(__CHECKER__) && defined(CONFIG_PREEMPT_RT) && \
	!defined(COMPAT_RT_SPIN_LOCK_ANNOTATED)
static __always_inline void compat_rt_spin_lock(spinlock_t *lock)
	__acquires(lock)
{
	spin_lock(lock);
	__acquire(lock);
}

static __always_inline void compat_rt_spin_lock_bh(spinlock_t *lock)
	__acquires(lock)
{
	spin_lock_bh(lock);
	__acquire(lock);
}

static __always_inline void compat_rt_spin_lock_irq(spinlock_t *lock)
	__acquires(lock)
{
	spin_lock_irq(lock);
	__acquire(lock);
}

static __always_inline void compat_rt_spin_unlock(spinlock_t *lock)
	__releases(lock)
{
	spin_unlock(lock);
	__release(lock);
}

static __always_inline void compat_rt_spin_unlock_bh(spinlock_t *lock)
	__releases(lock)
{
	spin_unlock_bh(lock);
	__release(lock);
}

static __always_inline void compat_rt_spin_unlock_irq(spinlock_t *lock)
	__releases(lock)
{
	spin_unlock_irq(lock);
	__release(lock);
}

static __always_inline void
compat_rt_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
	__releases(lock)
{
	spin_unlock_irqrestore(lock, flags);
	__release(lock);
}

#define spin_lock(lock)		compat_rt_spin_lock(lock)
#define spin_lock_bh(lock)	compat_rt_spin_lock_bh(lock)
#define spin_lock_irq(lock)	compat_rt_spin_lock_irq(lock)
#define spin_unlock(lock)	compat_rt_spin_unlock(lock)
#define spin_unlock_bh(lock)	compat_rt_spin_unlock_bh(lock)
#define spin_unlock_irq(lock)	compat_rt_spin_unlock_irq(lock)
#define spin_unlock_irqrestore(lock, flags) \
	compat_rt_spin_unlock_irqrestore(lock, flags)
#endif
#include <linux/virtio_config.h>

/*
 * The synchronous submission path must stay on one CPU (it picks that CPU's
 * sync queue) from the choice of the queue until the reaped buffers have
 * been collected. Without PREEMPT_RT it runs with preemption disabled. On
 * PREEMPT_RT spinlock_t sleeps, so only migration is disabled and the queue
 * lock is the sleeping kind; its trylock never sleeps (rt_spin_trylock()).
 * There a queue can also be busy because its holder is a preempted task of
 * this same CPU, not only another CPU in its kick: the request then takes
 * the interrupt-driven path all the same, without priority inheritance.
 */
#ifdef CONFIG_PREEMPT_RT
#define compat_sync_pin_cpu()		migrate_disable()
#define compat_sync_unpin_cpu()		migrate_enable()
#else
#define compat_sync_pin_cpu()		preempt_disable()
#define compat_sync_unpin_cpu()		preempt_enable()
#endif

#ifdef COMPAT_VIRTIO_REGISTER_OWNER
#define COMPAT_VIRTIO_DRIVER_OWNER
#else
#define COMPAT_VIRTIO_DRIVER_OWNER	.driver.owner = THIS_MODULE,
#endif

/* One signature for both virtio_find_vqs() flavours. */
static inline int compat_find_vqs(struct virtio_device *vdev, unsigned int nvqs,
				  struct virtqueue *vqs[],
				  vq_callback_t *callbacks[],
				  const char * const names[],
				  struct irq_affinity *desc)
{
#ifdef COMPAT_VIRTQUEUE_INFO
	struct virtqueue_info *info;
	unsigned int i;
	int ret;

	info = kcalloc(nvqs, sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	for (i = 0; i < nvqs; i++) {
		info[i].name = names[i];
		info[i].callback = callbacks[i];
	}
	ret = virtio_find_vqs(vdev, nvqs, vqs, info, desc);
	kfree(info);
	return ret;
#else
	return virtio_find_vqs(vdev, nvqs, vqs, callbacks, names, desc);
#endif
}

#ifdef COMPAT_DAX_MEM2BLK_ERR
#define compat_dax_mem2blk_err(rc)	dax_mem2blk_err(rc)
#else
#define compat_dax_mem2blk_err(rc)	((int)(rc))
#endif

/* VISIBLE_IF_KUNIT and EXPORT_SYMBOL_IF_KUNIT: in 6.1 and later */
#include <kunit/visibility.h>

#endif /* __ASSEMBLY__ */
#endif /* _VIRTIO_FS_SYNC_COMPAT_H */
