/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernel series virtio_fs_sync builds for is
 * decided here, as a named macro or helper; the logic files never look at
 * version numbers. Kbuild probes the headers of the tree it builds against
 * and passes the results as COMPAT_* defines; this file is force-included
 * into every object. The FUSE probes below, like fuse_i.h's include path,
 * are given to fuse_glue.o alone.
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
 * COMPAT_GROUP_CPUS_NR           group_cpus_evenly(n, &nr) says how many
 *                                masks it made, maybe fewer than n (7.3)
 * COMPAT_DAX_PFN_ULONG           dax_operations.direct_access() returns
 *                                the pfn as unsigned long, not pfn_t (7.3)
 * COMPAT_FUSE_STATX              <uapi/linux/fuse.h> has FUSE_STATX (not 6.1)
 * COMPAT_FUSE_COPY_FILE_RANGE_64 ... and FUSE_COPY_FILE_RANGE_64 (7.3)
 * COMPAT_MODULE_NS_STRING        MODULE_IMPORT_NS() takes the namespace as
 *                                a string literal (7.3)
 *
 * FUSE internals (7.3 moved them out of fuse_i.h), for fuse_glue.c only:
 * the second part of this file, which includes fuse_i.h itself.
 * COMPAT_FUSE_DEV_I_H            fs/fuse/fuse_dev_i.h exists: fuse_req,
 *                                fuse_iqueue_ops, fuse_dev live there
 * COMPAT_FUSE_DEV_H              fs/fuse/dev.h exists (fuse_chan API)
 * COMPAT_FUSE_CHAN               a struct fuse_chan owns the input queue
 *                                and the background state: fc->chan->iq,
 *                                fuse_conn_init(fc, fm, user_ns, fch)
 * COMPAT_FUSE_DEV_PUT            fuse devices are dropped with
 *                                fuse_dev_put(), not fuse_dev_free()
 * COMPAT_FUSE_CTX_FUDPTR         fuse_fs_context has fudptr (before 7.3:
 *                                ctx->fud instead)
 * COMPAT_FUSE_ASSIGN_UNIQUE      fuse_request_assign_unique() exists
 * COMPAT_FUSE_ARGS_FOLIOS_ONLY   fuse_args_pages has folios only (args.h)
 *
 * fuse_send_init() returns int in 7.3: it fails only for a synchronous
 * INIT (fc->sync_init, /dev/fuse only); like in-tree virtiofs the driver
 * ignores it, as it has nothing to return before 7.3.
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
#define COMPAT_RT_ACQUIRE(op)						\
static __always_inline void compat_rt_##op(spinlock_t *lock)		\
	__acquires(lock)						\
{									\
	op(lock);							\
	__acquire(lock);						\
}

#define COMPAT_RT_RELEASE(op)						\
static __always_inline void compat_rt_##op(spinlock_t *lock)		\
	__releases(lock)						\
{									\
	op(lock);							\
	__release(lock);						\
}

COMPAT_RT_ACQUIRE(spin_lock)
COMPAT_RT_ACQUIRE(spin_lock_bh)
COMPAT_RT_ACQUIRE(spin_lock_irq)
COMPAT_RT_RELEASE(spin_unlock)
COMPAT_RT_RELEASE(spin_unlock_bh)
COMPAT_RT_RELEASE(spin_unlock_irq)

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

/*
 * Whether a sync submitter may wait for a reaper's short hold of the
 * queue's lock: not on PREEMPT_RT, where the holder of a spinlock_t can
 * be preempted on this very CPU by the waiter.
 */
#ifdef CONFIG_PREEMPT_RT
#define COMPAT_SYNC_WAIT_REAPER		0
#else
#define COMPAT_SYNC_WAIT_REAPER		1
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

#ifdef COMPAT_DAX_PFN_ULONG
#define compat_dax_pfn_t		unsigned long
#define compat_dax_pfn(phys)		PHYS_PFN(phys)
#else
#include <linux/pfn_t.h>
#define compat_dax_pfn_t		pfn_t
#define compat_dax_pfn(phys)		phys_to_pfn_t((phys), PFN_DEV | PFN_MAP)
#endif

#ifdef COMPAT_HAVE_GROUP_CPUS
#include <linux/group_cpus.h>

/* Masks for up to @numgrps groups; *@nr says how many there are. */
static inline struct cpumask *compat_group_cpus_evenly(unsigned int numgrps,
						       unsigned int *nr)
{
#ifdef COMPAT_GROUP_CPUS_NR
	return group_cpus_evenly(numgrps, nr);
#else
	*nr = numgrps;
	return group_cpus_evenly(numgrps);
#endif
}
#endif

#ifdef COMPAT_DAX_MEM2BLK_ERR
#define compat_dax_mem2blk_err(rc)	dax_mem2blk_err(rc)
#else
#define compat_dax_mem2blk_err(rc)	((int)(rc))
#endif

/*
 * A bound (per-CPU) workqueue: 6.18 and later want it said, with
 * WQ_PERCPU, and warn otherwise; before, it is what no flag means.
 */
#ifdef COMPAT_WQ_PERCPU
#define COMPAT_WQ_PERCPU_FLAG		WQ_PERCPU
#else
#define COMPAT_WQ_PERCPU_FLAG		0
#endif

/* VISIBLE_IF_KUNIT and EXPORT_SYMBOL_IF_KUNIT: in 6.1 and later */
#include <kunit/visibility.h>

/*
 * KUnit's static stubs, the tests' seams: 6.1 has none, and its tests do
 * not build (tests/kunit runs on 6.12 and 7.3).
 */
#ifdef COMPAT_KUNIT_STATIC_STUB
#include <kunit/static_stub.h>
#else
#define KUNIT_STATIC_STUB_REDIRECT(...) do { } while (0)
#endif

/* For the KUnit tests: the namespace EXPORT_SYMBOL_IF_KUNIT exports into */
#ifdef COMPAT_MODULE_NS_STRING
#define COMPAT_MODULE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define COMPAT_MODULE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

/*
 * FUSE opcodes newer than some series' headers, for the eligibility list:
 * a FUSE core without them never sends them.
 */
#ifndef COMPAT_FUSE_STATX
#define FUSE_STATX			52
#endif
#ifndef COMPAT_FUSE_COPY_FILE_RANGE_64
#define FUSE_COPY_FILE_RANGE_64		53
#endif

#endif /* __ASSEMBLY__ */
#endif /* _VIRTIO_FS_SYNC_COMPAT_H */

/*
 * Second part: the FUSE core's internals, for fuse_glue.o alone (Kbuild
 * defines VFSYNC_FUSE_INTERNALS for it). fuse_i.h is included here, once,
 * so that the compat helpers below come right after the types they use.
 */
#if defined(VFSYNC_FUSE_INTERNALS) && !defined(__ASSEMBLY__) && \
	!defined(_VIRTIO_FS_SYNC_COMPAT_FUSE_H)
#define _VIRTIO_FS_SYNC_COMPAT_FUSE_H

#include "fuse_i.h"
#ifdef COMPAT_FUSE_DEV_I_H
#include "fuse_dev_i.h"
#endif
#ifdef COMPAT_FUSE_DEV_H
#include "dev.h"
#endif

/* The input queue of a connection */
#ifdef COMPAT_FUSE_CHAN
#define compat_fc_iq(fc)		(&(fc)->chan->iq)
#else
#define compat_fc_iq(fc)		(&(fc)->iq)
#endif

/*
 * fuse_conn_init() with the input queue's ops and private data. In 7.3 the
 * queue lives in a fuse_chan that fuse_conn_init() takes over (fc frees it
 * with itself); allocating it is the only way this can fail.
 */
static inline int compat_fuse_conn_init(struct fuse_conn *fc,
					struct fuse_mount *fm,
					struct user_namespace *user_ns,
					const struct fuse_iqueue_ops *ops,
					void *priv)
{
#ifdef COMPAT_FUSE_CHAN
	struct fuse_chan *fch = fuse_chan_new();

	if (!fch)
		return -ENOMEM;
	fuse_iqueue_init(&fch->iq, ops, priv);
	fuse_conn_init(fc, fm, user_ns, fch);
#else
	fuse_conn_init(fc, fm, user_ns, ops, priv);
#endif
	return 0;
}

static inline void compat_fuse_dev_install(struct fuse_dev *fud,
					   struct fuse_conn *fc)
{
#ifdef COMPAT_FUSE_CHAN
	fuse_dev_install(fud, fc->chan);
#else
	fuse_dev_install(fud, fc);
#endif
}

#ifdef COMPAT_FUSE_DEV_PUT
#define compat_fuse_dev_free(fud)	fuse_dev_put(fud)
#else
#define compat_fuse_dev_free(fud)	fuse_dev_free(fud)
#endif

/* The driver installs its own fuse devices: fill_super must not. */
#ifdef COMPAT_FUSE_CTX_FUDPTR
#define compat_fsc_no_fud(ctx)		((ctx)->fudptr = NULL)
#else
#define compat_fsc_no_fud(ctx)		((ctx)->fud = NULL)
#endif

/* A request's unique ID, set when it is sent (not for NOTIFY_REPLY) */
static inline void compat_fuse_assign_unique(struct fuse_iqueue *fiq,
					     struct fuse_req *req)
{
#ifdef COMPAT_FUSE_ASSIGN_UNIQUE
	fuse_request_assign_unique(fiq, req);
#else
	if (req->in.h.opcode != FUSE_NOTIFY_REPLY)
		req->in.h.unique = fuse_get_unique(fiq);
#endif
}

/* A unique ID for a FORGET: 6.1's fuse_get_unique() wants fiq->lock held */
static inline u64 compat_fuse_forget_unique(struct fuse_iqueue *fiq)
{
#ifdef COMPAT_FUSE_IQUEUE_SEND_REQ
	return fuse_get_unique(fiq);
#else
	u64 unique;

	spin_lock(&fiq->lock);
	unique = fuse_get_unique(fiq);
	spin_unlock(&fiq->lock);
	return unique;
#endif
}

/* Pages or folios of a request, by index */

static inline unsigned int compat_fuse_ap_npages(struct fuse_args_pages *ap)
{
#if defined(COMPAT_FUSE_ARGS_FOLIOS_ONLY)
	return ap->num_folios;
#else
#ifdef COMPAT_FUSE_ARGS_FOLIOS
	if (ap->uses_folios)
		return ap->num_folios;
#endif
	return ap->num_pages;
#endif
}

static inline struct page *compat_fuse_ap_page(struct fuse_args_pages *ap,
					       unsigned int i,
					       unsigned int *len,
					       unsigned int *offset)
{
#if defined(COMPAT_FUSE_ARGS_FOLIOS_ONLY)
	*len = ap->descs[i].length;
	*offset = ap->descs[i].offset;
	return folio_page(ap->folios[i], 0);
#else
#ifdef COMPAT_FUSE_ARGS_FOLIOS
	if (ap->uses_folios) {
		*len = ap->folio_descs[i].length;
		*offset = ap->folio_descs[i].offset;
		return folio_page(ap->folios[i], 0);
	}
#endif
	*len = ap->descs[i].length;
	*offset = ap->descs[i].offset;
	return ap->pages[i];
#endif
}

#endif /* VFSYNC_FUSE_INTERNALS */
