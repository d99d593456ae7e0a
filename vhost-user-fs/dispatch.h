/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device: queues, their types, who processes them and when.
 *
 * A sync queue is processed on the thread that reads the kick (the
 * vhost-user thread for in-band kicks, the queue's own handler thread for a
 * kick channel), and the kick is acknowledged only afterwards; with an
 * exit budget (--sync-budget-us), the chains that would hold the kick past
 * it are left to workers, which complete them after the acknowledgement.
 * Every other queue is handed to the worker pool and its kick is
 * acknowledged at once (on a kick channel, only the first: its answer
 * says no other will be).
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
	pthread_cond_t watch;		/* a watched chain was run */
	struct vring vr;
	bool addr_set;			/* rings translated into vr */
	bool enabled;			/* SET_VRING_ENABLE */
	bool stopped;			/* GET_VRING_BASE, until re-armed */
	bool paused;			/* memory table being replaced */
	unsigned int busy;		/* chains on workers, until published */
	bool signal_pending;		/* a signal could not be sent inline */
	struct deferred *deferred;	/* sync chains left for a worker */
	unsigned long sync_seen;	/* sync chains popped, for --sync-late */

	/* protected by the pool lock */
	bool queued;			/* on the run list */
	uint64_t kick_ns;		/* first kick not yet taken by a worker */
	struct fs_queue *next;
};

/*
 * What dispatch asks of the transport that feeds it. Both may be called
 * from any thread, the second with the queue's lock held.
 */
struct fs_transport_ops {
	/*
	 * Tell the driver that queue index has used buffers. Without
	 * may_block, -EAGAIN says the signal could not be sent without
	 * waiting (dispatch has a worker send it).
	 */
	int (*signal)(void *transport, unsigned int index, bool may_block);
	/*
	 * --faults "close": behave as a device that died. kick_waits: the
	 * chain belongs to a sync kick not yet answered, which must stay so.
	 */
	void (*hang_up)(void *transport, unsigned int index, bool kick_waits);
};

/* The device as dispatch sees it: queues and the FUSE server, no transport. */
struct fs_dev {
	const struct options *opt;
	struct fuse_server *srv;
	struct fuse_ctx *ctx;		/* for sync queues, transport's own thread */
	bool sync_active;		/* set by the transport's thread */
	const struct fs_transport_ops *ops;
	void *transport;
	struct fs_queue q[FS_MAX_QUEUES];
};

int dispatch__init(const struct options *opt, struct fuse_server *srv);
/*
 * --sync-watch=auto: is the share on a network or FUSE file system? Asked
 * once, before the sandbox hides opt->shared_dir, and logged.
 */
void dispatch__watch_init(const struct options *opt);
/* 0 or -ENOMEM. */
int dispatch__dev_init(struct fs_dev *dev, const struct options *opt,
		       struct fuse_server *srv,
		       const struct fs_transport_ops *ops, void *transport);
/* Queue type under the features negotiated so far. */
enum fsq_type dispatch__queue_type(struct fs_dev *dev, unsigned int index);
bool dispatch__runnable(struct fs_queue *q);
/*
 * A kick arrived. For a sync queue every available buffer has been
 * processed and published, or given to a worker to complete late, on
 * return; the caller acknowledges afterwards.
 */
void dispatch__kick(struct fs_queue *q);
/* The same on a queue's handler thread, with that thread's context. */
void dispatch__channel_kick(struct fs_queue *q, struct fuse_ctx *ctx);
/*
 * The transport started a thread that handles q's kicks: with --pin-sync,
 * a sync queue's is pinned to its CPU, any other to the CPUs the process
 * started with. Called on that thread.
 */
void dispatch__handler_started(struct fs_queue *q);
/* Wait until no worker holds a chain of q; it is not run again until resumed. */
void dispatch__pause(struct fs_queue *q);
void dispatch__resume(struct fs_queue *q);
void dispatch__stats_print(FILE *f);
void dispatch__stats_started(struct fs_queue *q);
/* --trace-file: one line per processed chain; 0 or -errno. */
int dispatch__trace_open(const char *path);
/* A host output file, safely (see dispatch.c): an fd or -errno. */
int dispatch__open_output(const char *path, int flags);

#endif
