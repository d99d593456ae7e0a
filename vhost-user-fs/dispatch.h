/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device: queues, their types, who processes them and when.
 *
 * A sync queue is processed on the thread that reads the kick (the
 * vhost-user thread for in-band kicks, the queue's own handler thread for a
 * kick channel), and the kick is acknowledged only afterwards. Every other
 * queue is handed to the worker pool and its kick is acknowledged at once.
 */
#ifndef VHOST_USER_FS_DISPATCH_H
#define VHOST_USER_FS_DISPATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "options.h"
#include "vring.h"

#define FS_MAX_QUEUES	64

enum fsq_type { FSQ_HIPRIO, FSQ_REQUEST, FSQ_SYNC };

struct fs_dev;
struct deferred;

struct fs_queue {
	struct fs_dev *dev;
	unsigned int index;
	enum fsq_type type;

	pthread_mutex_t lock;		/* protects everything below */
	pthread_cond_t idle;		/* busy dropped to 0 */
	struct vring vr;
	unsigned int num;
	uint16_t base;
	uint64_t desc_uva, avail_uva, used_uva;
	bool addr_set;			/* rings translated into vr */
	bool enabled;			/* SET_VRING_ENABLE */
	bool stopped;			/* GET_VRING_BASE, until re-armed */
	bool paused;			/* memory table being replaced */
	unsigned int busy;		/* workers holding popped chains */
	bool signal_pending;		/* a signal could not be sent inline */
	struct deferred *deferred;	/* sync chains left for a worker */
	unsigned long sync_seen;	/* sync chains popped, for --sync-late */

	/* owned by the vhost-user thread */
	int kick_fd, call_fd, err_fd;
	/*
	 * KICK_CHANNEL: kick_fd is the queue's kick channel, read by
	 * chan_thread with chan_ctx from start until it is joined. The
	 * vhost-user thread sets these only while no handler runs.
	 */
	bool channel;
	pthread_t chan_thread;
	struct fuse_ctx *chan_ctx;

	/* protected by the pool lock */
	bool queued;
	struct fs_queue *next;
};

struct fs_dev {
	const struct options *opt;
	struct fuse_server *srv;
	struct fuse_ctx *ctx;		/* for sync queues, vhost-user thread */
	int sock;			/* set by the vhost-user thread; workers may shut it down */
	int backend_fd;			/* -1 if none */
	pthread_mutex_t backend_lock;	/* held only around one write */
	uint64_t features;
	uint64_t protocol_features;
	bool protocol_known;
	bool sync_active;
	struct mem_table mem;
	struct fs_queue q[FS_MAX_QUEUES];
};

int dispatch__init(const struct options *opt, struct fuse_server *srv);
void dispatch__dev_init(struct fs_dev *dev);
/* Queue type under the features negotiated so far. */
enum fsq_type dispatch__queue_type(struct fs_dev *dev, unsigned int index);
bool dispatch__runnable(struct fs_queue *q);
/*
 * A kick arrived. For a sync queue every available buffer has been
 * processed and published on return; the caller acknowledges afterwards.
 */
void dispatch__kick(struct fs_queue *q);
/* The same on a queue's handler thread, with that thread's context. */
void dispatch__channel_kick(struct fs_queue *q, struct fuse_ctx *ctx);
/* Wait until no worker holds a chain of q; it is not run again until resumed. */
void dispatch__pause(struct fs_queue *q);
void dispatch__resume(struct fs_queue *q);
void dispatch__stats_print(FILE *f);
void dispatch__stats_started(struct fs_queue *q);
/* --trace-file: one line per processed chain; 0 or -errno. */
int dispatch__trace_open(const char *path);

/* Provided by the vhost-user layer. */
int vhost_user__signal(struct fs_dev *dev, unsigned int index, bool may_block);

#endif
