/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtio side of virtio_fs_sync (virtio_fs_sync.c, vfsync_queue.c,
 * vfsync_stats.c) and the API the FUSE side (fuse_glue.c) calls. The
 * virtio side knows a request only as a struct vfsync_buf and calls back
 * up only through its vfsync_buf_ops. Nothing here is FUSE's.
 */
#ifndef _VIRTIO_FS_SYNC_H
#define _VIRTIO_FS_SYNC_H

#include <linux/atomic.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

struct dax_device;
struct scatterlist;
struct virtio_device;
struct virtqueue;

#define VFSYNC_VQ_NAME_LEN	24
/* Longest line of the stats files, the name and every counter at U64_MAX */
#define VFSYNC_STATS_LINE	264

/* Queue numbering of the device: hiprio, R request queues, S sync queues. */
#define VFSYNC_VQ_HIPRIO	0
#define VFSYNC_VQ_REQUEST	1

/* Upper bound on queues we instantiate; larger configs are clamped. */
#define VFSYNC_MAX_VQS		1024

enum vfsync_vq_kind {
	VFSYNC_KIND_HIPRIO,
	VFSYNC_KIND_REQUEST,
	VFSYNC_KIND_SYNC,
};

/*
 * Per-queue counters, readable from /sys/fs/virtio_fs_sync/<tag>/stats and
 * /sys/kernel/debug/virtio_fs_sync/<tag>/stats. Atomics: no lock.
 */
struct vfsync_stats {
	atomic64_t submitted;	/* buffers added to this queue */
	atomic64_t inline_done;	/* sync: the kicker's own buffer, right after its kick */
	atomic64_t deferred;	/* sync: any other buffer reaped from the queue */
	atomic64_t fallback;	/* sync: eligible but sent to a request queue */
	atomic64_t full;	/* -ENOSPC on add */
	atomic64_t bad_reply;	/* replies that failed validation */
	atomic64_t busy;	/* sync: queue locked by another CPU, fell back */
	atomic64_t demoted;	/* sync: set aside for completing nothing inline */
};

/*
 * A sync queue whose device completed none of this many kicks' own
 * buffers inside the kick (a host that stopped running it synchronously,
 * as QEMU does after its timeout) is set aside: its CPUs' requests take
 * the request queues, and one in VFSYNC_DEMOTED_PROBE still tries it, so
 * that a device that recovers gets it back.
 */
#define VFSYNC_DEMOTE_MISSES	128
#define VFSYNC_DEMOTED_PROBE	256

/*
 * The last run of the kick floor (debugfs <tag>/floor): kicks of this
 * CPU's sync queue with nothing on it, and their round trips.
 */
struct vfsync_floor {
	u64 kicks;		/* kicks made and timed */
	u64 busy;		/* skipped: the queue lock was taken */
	u64 min_ns, median_ns, mean_ns, max_ns;
};

/* Most kicks one write of the floor file may ask for */
#define VFSYNC_FLOOR_MAX	100000

struct vfsync_dev;
struct vfsync_buf;

/*
 * The only calls the virtio side makes up: a buffer's ops, the FUSE
 * side's for every request, a KUnit test's own for its test buffers.
 */
struct vfsync_buf_ops {
	/* Added to its queue; under the queue lock */
	void (*sent_locked)(struct vfsync_buf *buf);
	/*
	 * Came back (a reply, or ->error set); no locks held; frees @buf.
	 * Returns -EIO if the reply was malformed (the queue counts it).
	 */
	int (*complete)(struct vfsync_buf *buf);
	/* Never got onto a queue; no locks held; frees @buf */
	void (*fail)(struct vfsync_buf *buf, int err);
};

/* vfsync_vq.flags */
#define VFSYNC_VQ_REAP		0	/* sync: done_work found the lock taken */

/*
 * A sync queue's ->lock is held across its kick, that is for the length of
 * a host operation: nobody may wait for it. Submitters and done_work take
 * it with a trylock; only teardown (stop, reclaim) spins on it, after which
 * no submitter can get it again.
 */
struct vfsync_vq {
	spinlock_t lock;		/* the queue and the fields marked below */
	struct virtqueue *vq;		/* protected by ->lock */
	struct vfsync_dev *fs;
	enum vfsync_vq_kind kind;
	struct work_struct done_work;
	/* Buffers that met -ENOSPC, retried by dispatch_work; under ->lock */
	struct list_head queued_reqs;
	struct work_struct dispatch_work;
	bool connected;			/* protected by ->lock */
	/*
	 * Set under ->lock (read without it by the callback, under RCU) by
	 * removal or a failed probe once the device is reset and the queue
	 * drained: no work of the queue may be queued any more, its
	 * virtqueue is about to be deleted.
	 */
	bool gone;
	/* A notification the transport could not deliver; READ/WRITE_ONCE */
	bool notify_failed;
	/*
	 * Added, queued or reaped but not yet ended. Incremented anywhere,
	 * decremented under in_flight_wq.lock, so that a drainer that saw 0
	 * knows the decrementer is done with the queue.
	 */
	atomic_long_t in_flight;
	/* Sync queues: added but not reaped yet; under ->lock */
	unsigned int outstanding;
	/*
	 * Sync queues: kicks in a row whose own buffer was not reaped right
	 * after the kick, under ->lock; ->demoted (written under ->lock, read
	 * without it) once there were VFSYNC_DEMOTE_MISSES; ->probes counts
	 * the submissions a demoted queue turned away.
	 */
	unsigned int misses;
	bool demoted;
	/*
	 * Sync queues: the lock's holder is a kicker, inside a host
	 * operation, not a reaper. Written under ->lock, read by a submitter
	 * that found it taken.
	 */
	bool kicking;
	atomic_t probes;
	/*
	 * Sync queues: the callback is enabled for outstanding buffers.
	 * Written under ->lock, read by the callback without it.
	 */
	bool armed;
	wait_queue_head_t in_flight_wq;	/* woken when in_flight drops to 0 */
	unsigned long flags;		/* VFSYNC_VQ_*, atomic bitops */
	struct vfsync_stats stats;	/* atomics */
	char name[VFSYNC_VQ_NAME_LEN];
} ____cacheline_aligned_in_smp;

/*
 * A virtio-fs device instance. Everything but the list linkage and
 * ->failed is written in probe before the instance is listed and
 * read-only afterwards: the FUSE side may read tag, nvqs,
 * num_sync_queues, request_queue_size and dax_dev of an instance it holds.
 */
struct vfsync_dev {
	struct kobject kobj;		/* refcount; /sys/fs/virtio_fs_sync/<tag> */
	struct list_head list;		/* on the instance list, vfsync_mutex */
	struct virtio_device *vdev;
	char *tag;
	struct vfsync_vq *vqs;
	unsigned int nvqs;
	unsigned int num_request_queues;
	unsigned int num_sync_queues;	/* 0: the sync path is off */
	/*
	 * VIRTIO_FS_F_SYNC_BUDGET: the device keeps every sync exit within
	 * its time budget, so every request a task waits for may go to a
	 * sync queue. Written once at probe, with num_sync_queues.
	 */
	bool sync_budget;
	/* index = cpu id, value = virtqueue index; written once at probe */
	unsigned int *req_map;
	unsigned int *sync_map;
	/* Smallest ring of the request queues / of the sync queues */
	unsigned int request_queue_size;
	unsigned int sync_queue_size;
	/*
	 * Set once by fail_work: a queue broke, the device was reset and all
	 * it held ended with -EIO or -ENOTCONN. Read under a queue lock by
	 * vfsync_start_all_queues(), which then keeps the queues stopped.
	 */
	bool failed;
	/*
	 * Set once, by the config change that says the device needs a reset
	 * (any context); fail_work breaks the queues for it.
	 */
	bool needs_reset;
	/*
	 * Set by a config change (any context), cleared by fail_work, which
	 * reads the device status for it in process context.
	 */
	bool config_changed;
	struct work_struct fail_work;
	struct mutex floor_lock;	/* one floor run at a time, and ->floor */
	struct vfsync_floor floor;	/* under ->floor_lock */
	struct dentry *debugfs;		/* debugfs directory, or an error */
	/*
	 * The FUSE side's FORGETs (fuse_glue.c), atomics, for debugfs
	 * <tag>/forgets: taken from the FUSE core, sent to the hiprio queue,
	 * freed unsent (after the unmount stopped them).
	 */
	atomic64_t forgets_queued;
	atomic64_t forgets_sent;
	atomic64_t forgets_dropped;
	struct dax_device *dax_dev;	/* NULL: no DAX window */
	void *window_kaddr;
	phys_addr_t window_phys_addr;
	size_t window_len;
};

/*
 * One request as the virtio side sees it. The FUSE side embeds it in
 * the per-request bounce buffer; the buffer's address is the virtqueue
 * token.
 */
struct vfsync_buf {
	/* On a queue's list (under its lock) or a private list */
	struct list_head list;
	const struct vfsync_buf_ops *ops;
	struct vfsync_vq *fsvq;		/* queue it was added to */
	struct scatterlist **sgs;
	unsigned int out_sgs;
	unsigned int in_sgs;
	unsigned int out_bytes;		/* driver-to-device bytes */
	unsigned int in_bytes;		/* device-writable bytes offered */
	unsigned int used_len;		/* from the used ring */
	/* Instead of a reply: taken back from a device that went away */
	int error;
	/*
	 * The upper layer's verdict: may hold a vCPU for the host's work
	 * (and its submitter holds no lock under which that is forbidden)
	 */
	bool sync;
	bool may_block;			/* must not be ended in done_work */
	struct work_struct work;
};

/* Configuration as read from the device, after sanity checks. */
struct vfsync_qconf {
	unsigned int num_request_queues;	/* queues to instantiate */
	unsigned int num_mapped_request_queues;	/* used by the CPU map */
	unsigned int num_sync_queues;
	unsigned int nvqs;
};

/*
 * The virtio side's API for the FUSE side. A device is found by tag and
 * held by reference; its queues carry buffers only between vfsync_connect()
 * and vfsync_disconnect(). None of these may be called with a queue lock
 * held; the locks they take are the virtio side's own.
 */

/* Module init and exit: the virtio driver, /sys/fs/virtio_fs_sync, debugfs */
int vfsync_virtio_init(void);
void vfsync_virtio_exit(void);
/* The VIRTIO_FS_F_SYNC bit number; *@enabled: offered (sync=1) */
unsigned int vfsync_sync_feature_bit(bool *enabled);

/* The listed instance of @tag with a reference held, or NULL */
struct vfsync_dev *vfsync_get(const char *tag);
void vfsync_put(struct vfsync_dev *fs);

/*
 * Start the queues of a still-present device for a mount. -ENODEV: removal
 * has begun; -EIO: the device was reset after a queue broke.
 */
int vfsync_connect(struct vfsync_dev *fs);
/* Stop the hiprio queue (no more FORGETs) and wait until every queue is idle */
void vfsync_stop_hiprio(struct vfsync_dev *fs);
/* Stop every queue and wait until they are idle */
void vfsync_disconnect(struct vfsync_dev *fs);

/*
 * Send @buf (ops, sgs, byte counts, ->sync and ->may_block filled in).
 * Never sleeps. 0: on a queue or parked for a retry, its ops will run;
 * else an error and the caller still owns @buf.
 */
int vfsync_submit(struct vfsync_dev *fs, struct vfsync_buf *buf);
/*
 * Queue @work on the driver's workqueue (WQ_MEM_RECLAIM, WQ_HIGHPRI, per
 * CPU), where every work item that ends requests runs
 */
void vfsync_queue_work(struct work_struct *work);
/* A copy of @msg on the hiprio queue, no reply; may sleep, never fails */
void vfsync_send_hiprio(struct vfsync_dev *fs, const void *msg, size_t len);

/*
 * vfsync_queue.c, for virtio_fs_sync.c and KUnit. Removal: kill marks the
 * queues gone and cancels their works (a failed probe too); remove ends
 * everything the device holds first.
 */
int vfsync_wq_init(void);
void vfsync_wq_exit(void);
void vfsync_vq_done(struct virtqueue *vq);
void vfsync_stop_all_queues(struct vfsync_dev *fs);
void vfsync_drain_all_queues(struct vfsync_dev *fs);
void vfsync_kill_queues(struct vfsync_dev *fs);
void vfsync_remove_queues(struct vfsync_dev *fs);
void vfsync_needs_reset(struct vfsync_dev *fs);
void vfsync_config_changed_any(struct vfsync_dev *fs);

/* vfsync_stats.c; the debugfs root is made at init, before any probe */
extern const struct attribute_group *vfsync_sysfs_groups[];
void vfsync_debugfs_init(void);
void vfsync_debugfs_exit(void);
void vfsync_debugfs_add(struct vfsync_dev *fs);
void vfsync_debugfs_remove(struct vfsync_dev *fs);

/* Pure functions and the engine's set-up, for KUnit */
int vfsync_parse_config(u32 req_queues, u32 sync_queues, bool sync_feature,
			unsigned int nr_cpus, struct vfsync_qconf *conf);
void vfsync_map_spread(unsigned int *map, unsigned int map_len,
		       const unsigned int *cpus, unsigned int ncpus,
		       unsigned int nqueues, unsigned int first_vq);
void vfsync_map_sync(unsigned int *map, unsigned int map_len,
		     const unsigned int *cpus, unsigned int ncpus,
		     unsigned int nqueues, unsigned int first_vq);
unsigned int vfsync_min_queue_size(const unsigned int *sizes,
				   const enum vfsync_vq_kind *kinds,
				   unsigned int n, enum vfsync_vq_kind kind);
int vfsync_stats_line(char *buf, size_t size, const char *name,
		      const struct vfsync_stats *st);
void vfsync_init_vq(struct vfsync_dev *fs, struct vfsync_vq *fsvq,
		    enum vfsync_vq_kind kind, const char *name);
void vfsync_init_dev(struct vfsync_dev *fs);
void vfsync_start_all_queues(struct vfsync_dev *fs);
int vfsync_floor_run(struct vfsync_dev *fs, unsigned int n);
#if IS_ENABLED(CONFIG_KUNIT)
size_t vfsync_cfg_room(u32 offset, u32 cap_len, u64 bar_len);
void vfsync_floor_summary(u64 *ns, unsigned int n, unsigned int busy,
			  struct vfsync_floor *out);
/* Seams the tests redirect with KUnit's static stubs */
bool vfsync_sync_lock_taken(struct vfsync_vq *fsvq);
bool vfsync_sync_kicking(struct vfsync_vq *fsvq);
void vfsync_retry_met_full(struct vfsync_vq *fsvq);
#endif

#endif /* _VIRTIO_FS_SYNC_H */
