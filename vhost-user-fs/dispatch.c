// SPDX-License-Identifier: GPL-2.0
/*
 * Sync versus async queue handling and the worker pool.
 *
 * Locking: each queue's ->lock covers its ring and state; a worker holds it
 * only to pop a chain or publish a used entry, never across the FUSE
 * operation. A sync queue is processed by the vhost-user thread or, with a
 * kick channel, by its handler thread; either keeps the lock across the
 * whole batch, so the other (kicks come from one guest CPU at a time) waits
 * at most for that batch, except while it waits for a watched chain (see
 * sync_process()). The pool lock covers the run list, the idle
 * count and each queue's pool fields (see the pool below); it nests inside
 * q->lock, never the other way round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "faults.h"
#include "fuse_server.h"
#include "pin.h"

#include <linux/fuse.h>
#include <linux/magic.h>

/*
 * Exit times of a sync queue's kicks, in microseconds: exact below
 * EXIT_EXACT, then EXIT_SUB buckets per power of two (about 6 % wide), up
 * to 2^EXIT_TOP_BIT us; longer ones go to the last bucket.
 */
#define EXIT_EXACT	64
#define EXIT_SUB_BITS	4
#define EXIT_SUB	(1u << EXIT_SUB_BITS)
#define EXIT_TOP_BIT	36
#define EXIT_BUCKETS	(EXIT_EXACT + (EXIT_TOP_BIT - 6) * EXIT_SUB)

struct fsq_stats {
	uint64_t requests, inline_done, late, errors, bytes_in, bytes_out;
	uint64_t calls;		/* used-buffer notifications sent */
	uint64_t channel_kicks;	/* kicks read from the queue's kick channel */
	uint64_t busy_ns;	/* CLOCK_MONOTONIC time spent processing chains */
	uint64_t handler_ns;	/* of busy_ns, time in the FUSE server */
	uint64_t queued;	/* chains whose kick is known */
	uint64_t queued_ns;	/* from the kick to the start of those chains */
	/* sync chains completed late for the budget, by reason */
	uint64_t defer_predicted, defer_watch, defer_budget, defer_nowait;
	uint64_t overrun;	/* chains run in the kick for longer than it */
	uint64_t exit_max_us;	/* the longest kick, kick to answer */
	uint64_t exit_hist[EXIT_BUCKETS];
	enum fsq_type type;
	bool started;
	struct fs_queue *q;	/* for the ring indices in the stats */
};

/* The counters: several threads add to them, with relaxed atomics. */
static struct fsq_stats stats[FS_MAX_QUEUES];
static int trace_fd = -1;	/* --trace-file, opened before any thread */
/* --sync-watch=auto on a network or FUSE share; set before any thread */
static bool watch_share;

/*
 * When a request of each opcode last ran longer than the budget inside a
 * kick (CLOCK_MONOTONIC ns, 0: never): its opcode is watched for
 * WATCH_HISTORY_NS after. Sync threads of all queues store and load it
 * with relaxed atomics: a stale value watches a request more or less.
 */
#define WATCH_OPCODES		64
#define WATCH_HISTORY_NS	(10 * 1000000000ull)
static uint64_t overran_ns[WATCH_OPCODES];

/*
 * The worker pool. A queue that needs a worker goes on the run list once. A
 * worker with nothing to run counts itself in idle and sleeps on the
 * semaphore wake; a post that finds idle above 0 takes one worker off it
 * and posts wake once, after dropping the lock. So a hand-off costs one
 * futex wake and one futex wait, and a post finding no worker asleep (all
 * of them running queues, the one it posts included) none: a running worker
 * takes the queue off the list when it is done. (A condition variable costs
 * a third: glibc marks the mutex contended when a waiter takes it back, so
 * the waiter's next unlock is a futex wake even with nobody waiting.) A
 * post while a worker runs the queue still wakes an idle worker: without
 * EVENT_IDX the kick is the only news of chains behind a slow one.
 *
 * No wake-up is lost: a worker finds the run list empty and counts itself
 * idle under the lock; a post puts the queue on the list and reads idle
 * under the same lock, so either the worker sees the queue and does not
 * sleep, or the post sees it idle and posts wake, which a sem_wait() not
 * yet begun still consumes. Each post of wake matches one worker taken off
 * idle, so wake never holds more than the workers about to wake. A worker
 * takes q off the list before it reads the ring (under q->lock), so a post
 * after that puts q back and the chains of its kick are seen by a run.
 */
static struct {
	pthread_mutex_t lock;		/* protects head, tail, idle */
	sem_t wake;			/* one post per worker taken off idle */
	struct fs_queue *head, *tail;	/* the run list */
	unsigned int idle;		/* workers asleep or going to sleep on wake */
	const struct options *opt;	/* set before the workers start */
	struct fuse_server *srv;
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static const char *const type_names[] = {
	[FSQ_HIPRIO] = "hiprio",
	[FSQ_REQUEST] = "request",
	[FSQ_SYNC] = "sync",
};

#define STAT_ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)
#define STAT_GET(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

static unsigned int exit_bucket(uint64_t us)
{
	unsigned int bit;

	if (us < EXIT_EXACT)
		return us;
	if (us >> EXIT_TOP_BIT)
		return EXIT_BUCKETS - 1;
	bit = 63 - __builtin_clzll(us);
	return EXIT_EXACT + (bit - 6) * EXIT_SUB +
		((us >> (bit - EXIT_SUB_BITS)) & (EXIT_SUB - 1));
}

/* The largest value of bucket i. */
static uint64_t exit_bucket_top(unsigned int i)
{
	unsigned int bit, sub;

	if (i < EXIT_EXACT)
		return i;
	bit = 6 + (i - EXIT_EXACT) / EXIT_SUB;
	sub = (i - EXIT_EXACT) % EXIT_SUB;
	return ((uint64_t)(EXIT_SUB + sub + 1) << (bit - EXIT_SUB_BITS)) - 1;
}

static void exit_record(struct fsq_stats *s, uint64_t ns)
{
	uint64_t us = ns / 1000, max = STAT_GET(s->exit_max_us);

	STAT_ADD(s->exit_hist[exit_bucket(us)], 1);
	while (max < us &&
	       !__atomic_compare_exchange_n(&s->exit_max_us, &max, us, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * The exits of a sync queue: their count, percentiles as the top of their
 * bucket (never above the maximum), and the maximum. Taken while kicks
 * add to it, the counts may be a few kicks apart.
 */
static void exits_print(FILE *f, struct fsq_stats *s)
{
	static const unsigned int permille[] = { 500, 990, 999 };
	uint64_t n = 0, sum = 0, max = STAT_GET(s->exit_max_us), p[3] = { 0 };
	uint64_t h[EXIT_BUCKETS];
	unsigned int i, k = 0;

	for (i = 0; i < EXIT_BUCKETS; i++) {
		h[i] = STAT_GET(s->exit_hist[i]);
		n += h[i];
	}
	for (i = 0; i < EXIT_BUCKETS && n && k < 3; i++) {
		sum += h[i];
		/* the bucket of the ceil(n * permille / 1000)-th exit */
		while (k < 3 && sum * 1000 >= n * permille[k]) {
			p[k] = exit_bucket_top(i);
			if (p[k] > max)
				p[k] = max;
			k++;
		}
	}
	fprintf(f, " exits=%llu exit_p50_us=%llu exit_p99_us=%llu exit_p999_us=%llu exit_max_us=%llu defer_predicted=%llu defer_watch=%llu defer_budget=%llu defer_nowait=%llu overrun=%llu",
		(unsigned long long)n, (unsigned long long)p[0],
		(unsigned long long)p[1], (unsigned long long)p[2],
		(unsigned long long)max,
		(unsigned long long)STAT_GET(s->defer_predicted),
		(unsigned long long)STAT_GET(s->defer_watch),
		(unsigned long long)STAT_GET(s->defer_budget),
		(unsigned long long)STAT_GET(s->defer_nowait),
		(unsigned long long)STAT_GET(s->overrun));
}

void dispatch__stats_started(struct fs_queue *q)
{
	stats[q->index].type = q->type;
	stats[q->index].q = q;
	__atomic_store_n(&stats[q->index].started, true, __ATOMIC_RELEASE);
}

/*
 * A live queue's ring indices, for the stats of a device whose guest seems
 * hung (tests/vm/run sends SIGUSR1 before it stops a guest that ran out of
 * time): avail, the driver's avail index; popped, the chains taken; used,
 * the chains given back. avail > popped: chains the device has not seen;
 * popped > used: chains it holds; all three equal: it answered everything
 * it was given. Under q->lock, addr_set and !paused say the rings are
 * mapped (a reset clears addr_set under it before it unmaps them). The lock
 * is only tried: a sync kick holds it while it runs its requests, and the
 * stats must not wait for a slow one (rings=busy).
 */
static void ring_state_print(FILE *f, struct fs_queue *q)
{
	uint16_t avail, popped, used;
	bool live;

	if (pthread_mutex_trylock(&q->lock)) {
		fputs(" rings=busy", f);
		return;
	}
	live = q->addr_set && !q->paused;
	if (live) {
		avail = __atomic_load_n(&q->vr.avail->idx, __ATOMIC_ACQUIRE);
		popped = q->vr.last_avail_idx;
		used = q->vr.used_idx;
	}
	pthread_mutex_unlock(&q->lock);
	if (live)
		fprintf(f, " avail=%u popped=%u used=%u", avail, popped, used);
}

static const char *watch_name(const struct options *opt)
{
	switch (opt->sync_watch) {
	case WATCH_ALWAYS:
		return "always";
	case WATCH_NEVER:
		return "never";
	default:
		return watch_share ? "auto-on" : "auto-off";
	}
}

void dispatch__stats_print(FILE *f)
{
	unsigned int i;

	if (pool.opt)
		fprintf(f, "device budget_us=%u watch=%s%s\n",
			pool.opt->sync_budget_us, watch_name(pool.opt),
			pool.opt->used_len_zero ? " used_len=0" : "");
	for (i = 0; i < FS_MAX_QUEUES; i++) {
		struct fsq_stats *s = &stats[i];

		if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
			continue;
		fprintf(f, "queue=%u type=%s requests=%llu inline=%llu late=%llu errors=%llu bytes_in=%llu bytes_out=%llu calls=%llu channel_kicks=%llu busy_ns=%llu handler_ns=%llu queued=%llu queued_ns=%llu",
			i, type_names[s->type],
			(unsigned long long)__atomic_load_n(&s->requests, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->inline_done, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->late, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->errors, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->bytes_in, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->bytes_out, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->calls, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->channel_kicks, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->busy_ns, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->handler_ns, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->queued, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->queued_ns, __ATOMIC_RELAXED));
		if (s->type == FSQ_SYNC)
			exits_print(f, s);
		if (s->q)
			ring_state_print(f, s->q);
		fputc('\n', f);
	}
	fflush(f);
}

enum fsq_type dispatch__queue_type(struct fs_dev *dev, unsigned int index)
{
	if (index == 0)
		return FSQ_HIPRIO;
	if (dev->sync_active && index > dev->opt->request_queues)
		return FSQ_SYNC;
	return FSQ_REQUEST;
}

int dispatch__dev_init(struct fs_dev *dev, const struct options *opt,
		       struct fuse_server *srv,
		       const struct fs_transport_ops *ops, void *transport)
{
	pthread_condattr_t mono;
	unsigned int i;

	dev->opt = opt;
	dev->srv = srv;
	dev->ops = ops;
	dev->transport = transport;
	dev->ctx = fuse_ctx__new();
	if (!dev->ctx)
		return -ENOMEM;
	/* the watch's deadlines are now_ns() times */
	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	for (i = 0; i < FS_MAX_QUEUES; i++) {
		struct fs_queue *q = &dev->q[i];

		memset(q, 0, sizeof(*q));
		q->dev = dev;
		q->index = i;
		pthread_mutex_init(&q->lock, NULL);
		pthread_cond_init(&q->idle, NULL);
		pthread_cond_init(&q->watch, &mono);
	}
	pthread_condattr_destroy(&mono);
	return 0;
}

/* Called with q->lock held. */
static bool runnable_locked(struct fs_queue *q)
{
	return q->addr_set && q->enabled && !q->stopped && !q->paused &&
		!q->vr.broken;
}

bool dispatch__runnable(struct fs_queue *q)
{
	bool r;

	pthread_mutex_lock(&q->lock);
	r = runnable_locked(q);
	pthread_mutex_unlock(&q->lock);
	return r;
}

/*
 * An output file on a host path, opened as root before the sandbox: never
 * through a symlink (O_NOFOLLOW), never a FIFO or device (opened
 * non-blocking, then checked), never a file with another name too (a hard
 * link planted there). Emptied after the checks, not by O_TRUNC.
 */
int dispatch__open_output(const char *path, int flags)
{
	struct stat st;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
		  O_CLOEXEC | (flags & O_APPEND), 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if (st.st_nlink > 1)
		err = -EMLINK;
	else if ((flags & O_TRUNC) && ftruncate(fd, 0))
		err = -errno;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int dispatch__trace_open(const char *path)
{
	trace_fd = dispatch__open_output(path, O_TRUNC | O_APPEND);
	if (trace_fd >= 0)
		return 0;
	errno = -trace_fd;
	trace_fd = -1;
	return -errno;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * One line per chain, written whole with O_APPEND, so that lines of
 * several threads never mix. Times are CLOCK_MONOTONIC nanoseconds.
 */
static void trace_chain(unsigned int index, const struct fuse_ctx *ctx,
			size_t in_len, uint64_t start, uint64_t end)
{
	const struct fuse_in_header *ih = (const void *)ctx->in;
	char line[160];
	int n;

	n = snprintf(line, sizeof(line),
		     "queue=%u type=%s tid=%d opcode=%u start=%llu end=%llu\n",
		     index, type_names[stats[index].type], (int)gettid(),
		     in_len >= sizeof(*ih) ? ih->opcode : 0,
		     (unsigned long long)start, (unsigned long long)end);
	if (n > 0 && write(trace_fd, line, n) < 0)
		trace_fd = -1;
}

/*
 * Runs one chain through the FUSE server. The request is gathered into the
 * thread's buffer and the reply scattered back; a chain too short for a
 * reply header gets nothing written. *fault says how to misreport it:
 * FAULT_NONE unless --faults is on and the request asks for a fault, and
 * only then is the fault layer (faults.c) called at all.
 */
static uint32_t process_chain_timed(struct fs_dev *dev, struct fuse_ctx *ctx,
				    struct vring_elem *e, struct fsq_stats *s,
				    enum fault *fault)
{
	size_t in_len, out_len;
	uint64_t t0;
	int error = 0;

	*fault = FAULT_NONE;
	in_len = e->rd_len;
	iov__copy_from(e->iov, e->rd_num, ctx->in,
		       in_len < ctx->in_cap ? in_len : ctx->in_cap);
	/* the request is not all there: never act on part of it */
	if (iov__fault_pending())
		return 0;
	if (dev->opt->faults)
		*fault = fault__of(ctx, in_len);
	t0 = now_ns();
	out_len = fuse_server__handle(dev->srv, ctx, in_len, e->wr_len, &error);
	STAT_ADD(s->handler_ns, now_ns() - t0);
	if (ctx->would_block)
		return 0;

	STAT_ADD(s->requests, 1);
	STAT_ADD(s->bytes_in, in_len);
	if (error)
		STAT_ADD(s->errors, 1);
	if (!out_len)
		return 0;
	if (*fault != FAULT_NONE)
		fault__spoil_reply(*fault, ctx, &out_len);
	out_len = iov__copy_to(e->iov + e->rd_num, e->wr_num, ctx->out,
			       out_len);
	STAT_ADD(s->bytes_out, out_len);
	if (*fault != FAULT_NONE)
		return fault__used_len(*fault, out_len, e->wr_len);
	return out_len;
}

/*
 * process_chain_timed, with the time it took in busy_ns, the time since
 * the kick at kick_ns (0: not known) in queued_ns, and the trace.
 */
static uint32_t process_chain(struct fs_dev *dev, struct fuse_ctx *ctx,
			      struct vring_elem *e, struct fsq_stats *s,
			      enum fault *fault, uint64_t kick_ns)
{
	uint64_t start = now_ns(), end;
	uint32_t len;

	if (kick_ns) {
		STAT_ADD(s->queued, 1);
		STAT_ADD(s->queued_ns, start > kick_ns ? start - kick_ns : 0);
	}
	len = process_chain_timed(dev, ctx, e, s, fault);
	end = now_ns();
	STAT_ADD(s->busy_ns, end - start);
	if (trace_fd >= 0)
		trace_chain(s - stats, ctx, e->rd_len, start, end);
	return len;
}

/*
 * Puts a processed chain on the used ring once, or, with a fault (only
 * under --faults), as many times as the fault says. len: the used length
 * the chain's run gave, the fault's if it has one; --used-len-zero makes
 * it 0 either way. Called with q->lock held.
 */
static void complete_chain_locked(struct fs_queue *q, uint16_t head,
				  uint32_t len, enum fault fault,
				  bool kick_waits)
{
	unsigned int n = 1;

	/* its buffers faulted: the queue is broken, nothing is published */
	if (iov__fault_take(&q->vr))
		return;
	if (fault != FAULT_NONE) {
		n = fault__pushes(fault);
		if (fault == FAULT_CLOSE)
			q->dev->ops->hang_up(q->dev->transport, q->index,
					     kick_waits);
	}
	if (q->dev->opt->used_len_zero)
		len = 0;
	while (n--)
		vring__push(&q->vr, head, len);
}

/*
 * A sync-queue chain handed to a worker: completed after its kick was
 * acknowledged, or, watched, run while the kick waits for it. It holds
 * q->busy until it is published, by the worker or by its watcher, which
 * then frees it.
 */
struct deferred {
	struct deferred *next;		/* on q->deferred, under q->lock */
	uint64_t kick_ns;		/* the kick that made it available */
	bool watched;			/* its kick waits: set before queued */
	/* under q->lock */
	bool done;			/* run in time: the watcher publishes */
	bool abandoned;			/* not in time: the worker publishes */
	/* a done chain's run, for its watcher */
	bool faulted;			/* its buffers faulted: no reply */
	uint32_t len;
	enum fault fault;
	struct vring_elem e;
	struct iovec iov[];
};

static void pool_post(struct fs_queue *q, uint64_t kick_ns);

/*
 * Gives the chain to the queue's workers: a watched one first, since its
 * kick waits for it. Called with q->lock held; NULL if out of memory (the
 * caller runs the chain itself).
 */
static struct deferred *defer_locked(struct fs_queue *q,
				     const struct vring_elem *e,
				     uint64_t kick_ns, bool watched)
{
	unsigned int niov = e->rd_num + e->wr_num;
	struct deferred *d, **pp = &q->deferred;

	d = calloc(1, sizeof(*d) + niov * sizeof(struct iovec));
	if (!d)
		return NULL;
	d->kick_ns = kick_ns;
	d->watched = watched;
	d->e = *e;
	d->e.iov = d->iov;
	d->e.iov_max = niov;
	memcpy(d->iov, e->iov, niov * sizeof(struct iovec));
	while (!watched && *pp)
		pp = &(*pp)->next;
	d->next = *pp;
	*pp = d;
	q->busy++;
	return d;
}

/* Published by a worker. */
static void undefer_locked(struct fs_queue *q, struct deferred *d)
{
	if (--q->busy == 0)
		pthread_cond_broadcast(&q->idle);
	free(d);
}

/* What sync_process() reads of a request to tell where it runs. */
struct peek {
	struct fuse_in_header h;
	union {
		struct fuse_setattr_in setattr;
		struct fuse_open_in open;
		struct fuse_create_in create;
		struct fuse_fallocate_in fallocate;
		struct fuse_copy_file_range_in copy;
	} a;
};

/* FUSE_COPY_FILE_RANGE_64 (protocol 7.45), with fuse_copy_file_range_in */
#define OP_COPY_FILE_RANGE_64	53
/* a FALLOCATE or a copy beyond it takes host time the size does not bound */
#define PREDICT_LONG_BYTES	(1024 * 1024)

/*
 * The opcode of the request in e into *op; false if it is too short to
 * tell (or its buffers faulted, which the caller's own run of it will
 * report). *lng: the host will predictably take long over it: it syncs,
 * waits for a lock, maps, truncates, or allocates or copies more than
 * PREDICT_LONG_BYTES. Removing a name is not: every inode the guest
 * knows keeps an fd here, so the blocks are freed at FORGET, on a worker.
 */
static bool peek_request(const struct vring_elem *e, uint32_t *op,
			 bool *lng)
{
	struct peek p;
	size_t n = e->rd_len < sizeof(p) ? e->rd_len : sizeof(p), arg;

	*lng = false;
	n = iov__copy_from(e->iov, e->rd_num, &p, n);
	if (iov__fault_pending() || n < sizeof(p.h))
		return false;
	arg = n - sizeof(p.h);
	*op = p.h.opcode;
	switch (p.h.opcode) {
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_SYNCFS:
	case FUSE_SETLKW:
	case FUSE_SETUPMAPPING:
	case FUSE_REMOVEMAPPING:
		*lng = true;
		break;
	case FUSE_SETATTR:
		*lng = arg >= sizeof(p.a.setattr) &&
			(p.a.setattr.valid & FATTR_SIZE);
		break;
	case FUSE_OPEN:
		*lng = arg >= sizeof(p.a.open) && (p.a.open.flags & O_TRUNC);
		break;
	case FUSE_CREATE:
		*lng = arg >= sizeof(p.a.create) &&
			(p.a.create.flags & O_TRUNC);
		break;
	case FUSE_FALLOCATE:
		*lng = arg >= sizeof(p.a.fallocate) &&
			p.a.fallocate.length > PREDICT_LONG_BYTES;
		break;
	case FUSE_COPY_FILE_RANGE:
	case OP_COPY_FILE_RANGE_64:
		*lng = arg >= sizeof(p.a.copy) &&
			p.a.copy.len > PREDICT_LONG_BYTES;
		break;
	default:
		break;
	}
	return true;
}

/*
 * Puts q on the run list unless it is there. Called with the pool lock
 * held; returns true if a waiting worker should be woken for it.
 */
static bool pool_queue_locked(struct fs_queue *q)
{
	if (q->queued)
		return false;
	q->queued = true;
	q->next = NULL;
	if (pool.tail)
		pool.tail->next = q;
	else
		pool.head = q;
	pool.tail = q;
	if (!pool.idle)
		return false;
	pool.idle--;
	return true;
}

/* Hands q to a worker; kick_ns: the kick that asks for it (CLOCK_MONOTONIC). */
static void pool_post(struct fs_queue *q, uint64_t kick_ns)
{
	bool wake;

	pthread_mutex_lock(&pool.lock);
	if (!q->kick_ns)
		q->kick_ns = kick_ns;
	wake = pool_queue_locked(q);
	pthread_mutex_unlock(&pool.lock);
	if (wake)
		sem_post(&pool.wake);
}

/*
 * The worker running q saw more chains: let a waiting worker, if there is
 * one, take part of them meanwhile.
 */
static void pool_share(struct fs_queue *q)
{
	bool wake = false;

	if (pool.opt->workers < 2)
		return;
	pthread_mutex_lock(&pool.lock);
	if (pool.idle)
		wake = pool_queue_locked(q);
	pthread_mutex_unlock(&pool.lock);
	if (wake)
		sem_post(&pool.wake);
}

/* The next queue to run, and in *kick_ns the first kick not yet taken. */
static struct fs_queue *pool_take(uint64_t *kick_ns)
{
	struct fs_queue *q;

	pthread_mutex_lock(&pool.lock);
	while (!pool.head) {
		pool.idle++;
		pthread_mutex_unlock(&pool.lock);
		while (sem_wait(&pool.wake))
			;	/* EINTR */
		pthread_mutex_lock(&pool.lock);
	}
	q = pool.head;
	pool.head = q->next;
	if (!pool.head)
		pool.tail = NULL;
	q->queued = false;
	*kick_ns = q->kick_ns;
	q->kick_ns = 0;
	pthread_mutex_unlock(&pool.lock);
	return q;
}

/* Is a request of opcode op, peeked at now, run on a worker and waited for? */
static bool watched(const struct options *opt, uint32_t op, uint64_t now)
{
	uint64_t t;

	if (opt->sync_watch == WATCH_ALWAYS ||
	    (opt->sync_watch == WATCH_AUTO && watch_share))
		return true;
	if (opt->sync_watch == WATCH_NEVER || op >= WATCH_OPCODES)
		return false;
	t = __atomic_load_n(&overran_ns[op], __ATOMIC_RELAXED);
	return t && now < t + WATCH_HISTORY_NS;
}

/* A chain of opcode op (-1: unknown) ran past the budget, until now. */
static void overran(struct fsq_stats *s, int64_t op, uint64_t now)
{
	STAT_ADD(s->overrun, 1);
	if (op >= 0 && op < WATCH_OPCODES)
		__atomic_store_n(&overran_ns[op], now, __ATOMIC_RELAXED);
}

enum sync_route {
	ROUTE_HERE,		/* run it on this thread, inside the kick */
	ROUTE_DONE,		/* watched: run, published inside the kick */
	ROUTE_LATE,		/* a worker publishes it after the kick */
};

/*
 * Where a chain of the kick at kick_ns runs under a budget of budget ns:
 * on a worker, completed after the kick, when the budget is spent or the
 * request will predictably take long; watched, on a worker while this
 * thread waits (q->lock released) until the budget's end, then published
 * here if it is done, else by the worker. Called with q->lock held; *op:
 * the opcode, when it could be read.
 */
static enum sync_route route_locked(struct fs_queue *q,
				    const struct vring_elem *e,
				    uint64_t kick_ns, uint64_t budget,
				    int64_t *op)
{
	struct fsq_stats *s = &stats[q->index];
	uint64_t now = now_ns(), *reason = NULL, end = kick_ns + budget;
	struct timespec ts = { end / 1000000000u, end % 1000000000u };
	struct deferred *d;
	uint32_t opcode;
	bool lng;

	if (!peek_request(e, &opcode, &lng))
		return ROUTE_HERE;
	*op = opcode;
	if (now - kick_ns >= budget)
		reason = &s->defer_budget;
	else if (lng)
		reason = &s->defer_predicted;
	else if (!watched(q->dev->opt, opcode, now))
		return ROUTE_HERE;
	d = defer_locked(q, e, kick_ns, !reason);
	if (!d)
		return ROUTE_HERE;
	pool_post(q, kick_ns);
	if (reason) {
		STAT_ADD(*reason, 1);
		return ROUTE_LATE;
	}
	/* until done, the deadline, or an error (not one the clock makes) */
	while (!d->done && !pthread_cond_timedwait(&q->watch, &q->lock, &ts))
		;
	if (!d->done) {
		d->abandoned = true;
		STAT_ADD(s->defer_watch, 1);
		return ROUTE_LATE;
	}
	if (!d->faulted)
		complete_chain_locked(q, d->e.head, d->len, d->fault, true);
	undefer_locked(q, d);
	return ROUTE_DONE;
}

/*
 * kick_ns: when the kick was received. With a budget (--sync-budget-us),
 * route_locked() sends chains elsewhere to keep the kick's answer within
 * it. The exit, kick to answer, goes to the queue's histogram.
 */
static void sync_process(struct fs_queue *q, struct fuse_ctx *ctx,
			 uint64_t kick_ns)
{
	struct fs_dev *dev = q->dev;
	struct fsq_stats *s = &stats[q->index];
	uint64_t budget = dev->opt->sync_budget_us * 1000ull;
	unsigned int late_n = dev->opt->sync_late, done = 0;
	struct vring_elem e;
	struct iovec iov[2 * VRING_MAX_SIZE];
	bool signal = false;
	int r = 0;

	e.iov = iov;
	e.iov_max = 2 * VRING_MAX_SIZE;

	/* a host slower than the frontend's bound on a kick's answer */
	if (dev->opt->sync_delay_ms)
		usleep(dev->opt->sync_delay_ms * 1000);
	pthread_mutex_lock(&q->lock);
	if (!runnable_locked(q))
		goto out;
	for (;;) {
		/* a pause may come in while a watched chain is waited for */
		while (runnable_locked(q) &&
		       (r = vring__pop(&q->vr, &e)) == 1) {
			enum sync_route where;
			enum fault fault;
			uint64_t t0 = 0, t1;
			int64_t op = -1;
			uint32_t len;

			/* --sync-late=N: a driver's deferred path, exercised */
			if (late_n && !(++q->sync_seen % late_n) &&
			    defer_locked(q, &e, kick_ns, false))
				continue;
			where = budget ? route_locked(q, &e, kick_ns, budget,
						      &op) : ROUTE_HERE;
			if (where == ROUTE_DONE) {
				STAT_ADD(s->inline_done, 1);
				done++;
			}
			if (where != ROUTE_HERE)
				continue;
			if (budget)
				t0 = now_ns();
			ctx->nowait = budget;
			len = process_chain(dev, ctx, &e, s, &fault, kick_ns);
			ctx->nowait = false;
			/* its host work would wait: nothing done, run it late */
			if (ctx->would_block) {
				if (defer_locked(q, &e, kick_ns, false)) {
					STAT_ADD(s->defer_nowait, 1);
					continue;
				}
				len = process_chain(dev, ctx, &e, s, &fault,
						    kick_ns);
			}
			/* a broken promise: watch its opcode for a while */
			if (budget && (t1 = now_ns()) - t0 > budget)
				overran(s, op, t1);
			complete_chain_locked(q, e.head, len, fault, true);
			STAT_ADD(s->inline_done, 1);
			done++;
		}
		if (r || !runnable_locked(q) || !vring__enable_kick(&q->vr))
			break;
	}
	signal = done && vring__need_signal(&q->vr);
out:
	if (q->deferred)
		pool_post(q, kick_ns);
	pthread_mutex_unlock(&q->lock);
	/*
	 * The frontend CPU is blocked until we acknowledge, so it cannot drain
	 * the backend channel: never wait for room there, let a worker do it.
	 */
	if (signal)
		STAT_ADD(s->calls, 1);
	if (signal && dev->ops->signal(dev->transport, q->index, false) == -EAGAIN) {
		pthread_mutex_lock(&q->lock);
		q->signal_pending = true;
		pthread_mutex_unlock(&q->lock);
		pool_post(q, kick_ns);
	}
	exit_record(s, now_ns() - kick_ns);
}

void dispatch__kick(struct fs_queue *q)
{
	uint64_t t = now_ns();

	if (q->type == FSQ_SYNC)
		sync_process(q, q->dev->ctx, t);
	else
		pool_post(q, t);
}

void dispatch__channel_kick(struct fs_queue *q, struct fuse_ctx *ctx)
{
	uint64_t t = now_ns();

	STAT_ADD(stats[q->index].channel_kicks, 1);
	if (!dispatch__runnable(q))
		return;
	if (q->type == FSQ_SYNC)
		sync_process(q, ctx, t);
	else
		pool_post(q, t);
}

/*
 * kick_ns: the first kick of q that no worker had taken (0: none). It
 * times the first chain popped, the oldest: later ones came while the
 * queue was being run, without a kick of their own while the driver is
 * told not to notify, so when they came is not known.
 */
static void worker_run_queue(struct fs_queue *q, uint64_t kick_ns,
			     struct fuse_ctx *ctx, struct iovec *iov)
{
	struct fsq_stats *s = &stats[q->index];
	struct fs_dev *dev = q->dev;
	struct vring_elem e;
	bool signal;
	int r;

	e.iov = iov;
	e.iov_max = 2 * VRING_MAX_SIZE;

	pthread_mutex_lock(&q->lock);
	signal = q->signal_pending;
	q->signal_pending = false;
	while (q->deferred) {
		struct deferred *d = q->deferred;
		enum fault fault = FAULT_NONE;
		uint32_t len;

		q->deferred = d->next;
		/* a watched chain's kick should not wait for this one */
		if (q->deferred && q->deferred->watched)
			pool_share(q);
		pthread_mutex_unlock(&q->lock);
		len = process_chain(dev, ctx, &d->e, s, &fault, d->kick_ns);
		pthread_mutex_lock(&q->lock);
		if (d->watched && !d->abandoned) {
			/* its watcher publishes it, and frees it */
			d->faulted = iov__fault_take(&q->vr);
			d->len = len;
			d->fault = fault;
			d->done = true;
			pthread_cond_broadcast(&q->watch);
			continue;
		}
		STAT_ADD(s->late, 1);
		complete_chain_locked(q, d->e.head, len, fault, false);
		if (vring__need_signal(&q->vr))
			signal = true;
		undefer_locked(q, d);
	}
	/*
	 * A sync queue's buffers belong to the kick that made them available:
	 * a worker taking one could let that kick be acknowledged before the
	 * buffer is done.
	 */
	for (;;) {
		enum fault fault;
		uint32_t len;

		if (!runnable_locked(q) || q->type == FSQ_SYNC)
			break;
		r = vring__pop(&q->vr, &e);
		if (r == 0 && vring__enable_kick(&q->vr))
			continue;
		if (r <= 0)
			break;
		q->busy++;
		/* let an idle worker pick up the rest of the queue meanwhile */
		if (vring__has_avail(&q->vr))
			pool_share(q);
		pthread_mutex_unlock(&q->lock);

		if (dev->opt->delay_us)
			usleep(dev->opt->delay_us);
		len = process_chain(dev, ctx, &e, s, &fault, kick_ns);
		kick_ns = 0;

		pthread_mutex_lock(&q->lock);
		complete_chain_locked(q, e.head, len, fault, false);
		if (vring__need_signal(&q->vr))
			signal = true;
		if (--q->busy == 0)
			pthread_cond_broadcast(&q->idle);
		if (signal && !vring__has_avail(&q->vr)) {
			pthread_mutex_unlock(&q->lock);
			STAT_ADD(s->calls, 1);
			dev->ops->signal(dev->transport, q->index, true);
			signal = false;
			pthread_mutex_lock(&q->lock);
		}
	}
	pthread_mutex_unlock(&q->lock);
	if (signal) {
		STAT_ADD(s->calls, 1);
		dev->ops->signal(dev->transport, q->index, true);
	}
}

static void *worker_main(void *arg)
{
	struct fuse_ctx *ctx = fuse_ctx__new();
	struct iovec *iov = calloc(2 * VRING_MAX_SIZE, sizeof(*iov));
	const struct pin_cpus *pin = &pool.opt->pin_workers;

	if (pin->n) {
		char who[32];

		snprintf(who, sizeof(who), "worker %u", (unsigned int)(uintptr_t)arg);
		pin__self(pin, 0, pin->n, who);
	}
	if (!ctx || !iov) {
		fprintf(stderr, "vhost-user-fs: worker out of memory\n");
		exit(1);
	}
	for (;;) {
		uint64_t kick_ns;
		struct fs_queue *q = pool_take(&kick_ns);

		worker_run_queue(q, kick_ns, ctx, iov);
	}
	return NULL;
}

void dispatch__pause(struct fs_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->paused = true;
	while (q->busy)
		pthread_cond_wait(&q->idle, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

void dispatch__resume(struct fs_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->paused = false;
	pthread_mutex_unlock(&q->lock);
	/* kicks that arrived while paused were dropped */
	if (dispatch__runnable(q))
		dispatch__kick(q);
}

/* Older <linux/magic.h> lack some; the rest are not in it. */
#ifndef SMB2_SUPER_MAGIC
#define SMB2_SUPER_MAGIC	0xFE534D42
#endif
#ifndef CIFS_SUPER_MAGIC
#define CIFS_SUPER_MAGIC	0xFF534D42
#endif
#ifndef V9FS_MAGIC
#define V9FS_MAGIC		0x01021997
#endif
#ifndef AFS_FS_MAGIC
#define AFS_FS_MAGIC		0x6B414653
#endif
#define GFS2_MAGIC		0x01161970
#define LUSTRE_SUPER_MAGIC	0x0BD00BD0
#define GPFS_SUPER_MAGIC	0x47504653
#define ORANGEFS_SUPER_MAGIC	0x20030528
#define BEEGFS_SUPER_MAGIC	0x19830326

/*
 * File systems whose operations may wait on a server or another process
 * for as long as it likes: network, cluster and FUSE ones.
 */
static const struct {
	unsigned long magic;
	const char *name;
} remote_fs[] = {
	{ NFS_SUPER_MAGIC, "nfs" },
	{ SMB_SUPER_MAGIC, "smb" },
	{ CIFS_SUPER_MAGIC, "cifs" },
	{ SMB2_SUPER_MAGIC, "smb2" },
	{ FUSE_SUPER_MAGIC, "fuse" },
	{ V9FS_MAGIC, "9p" },
	{ CEPH_SUPER_MAGIC, "ceph" },
	{ AFS_SUPER_MAGIC, "afs" },
	{ AFS_FS_MAGIC, "kafs" },
	{ CODA_SUPER_MAGIC, "coda" },
	{ NCP_SUPER_MAGIC, "ncp" },
	{ OCFS2_SUPER_MAGIC, "ocfs2" },
	{ GFS2_MAGIC, "gfs2" },
	{ LUSTRE_SUPER_MAGIC, "lustre" },
	{ GPFS_SUPER_MAGIC, "gpfs" },
	{ ORANGEFS_SUPER_MAGIC, "orangefs" },
	{ BEEGFS_SUPER_MAGIC, "beegfs" },
};

void dispatch__watch_init(const struct options *opt)
{
	struct statfs sf;
	unsigned int i;

	if (!opt->sync_budget_us || opt->sync_watch != WATCH_AUTO)
		return;
	if (statfs(opt->shared_dir, &sf)) {
		/* not known to be quick: keep the budget all the same */
		watch_share = true;
		fprintf(stderr, "vhost-user-fs: --sync-watch=auto: statfs %s: %m: every sync request is watched\n",
			opt->shared_dir);
		return;
	}
	for (i = 0; i < sizeof(remote_fs) / sizeof(remote_fs[0]); i++) {
		if ((unsigned long)sf.f_type == remote_fs[i].magic) {
			watch_share = true;
			fprintf(stderr, "vhost-user-fs: --sync-watch=auto: %s is on %s: every sync request is watched\n",
				opt->shared_dir, remote_fs[i].name);
			return;
		}
	}
	fprintf(stderr, "vhost-user-fs: --sync-watch=auto: %s is on file system type 0x%lx: sync requests are watched after an overrun only\n",
		opt->shared_dir, (unsigned long)sf.f_type);
}

int dispatch__init(const struct options *opt, struct fuse_server *srv)
{
	unsigned int i;

	pool.opt = opt;
	pool.srv = srv;
	if (sem_init(&pool.wake, 0, 0))
		return -errno;
	for (i = 0; i < opt->workers; i++) {
		pthread_t t;
		int err = pthread_create(&t, NULL, worker_main,
					 (void *)(uintptr_t)i);

		if (err)
			return -err;
		pthread_detach(t);
	}
	/* after the workers, which keep the affinity the process started with */
	if (opt->pin_sync.n)
		pin__self(&opt->pin_sync, 0, opt->pin_sync.n,
			  "control thread (in-band kicks)");
	return 0;
}

void dispatch__handler_started(struct fs_queue *q)
{
	const struct pin_cpus *pin = &q->dev->opt->pin_sync;
	enum fsq_type type;
	char who[48];

	if (!pin->n)
		return;
	pthread_mutex_lock(&q->lock);
	type = q->type;
	pthread_mutex_unlock(&q->lock);
	if (type != FSQ_SYNC) {
		/* born of the pinned control thread */
		pin__reset();
		return;
	}
	snprintf(who, sizeof(who), "queue %u sync handler", q->index);
	pin__self(pin, q->index - q->dev->opt->request_queues - 1, 1, who);
}
