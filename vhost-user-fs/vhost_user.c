// SPDX-License-Identifier: GPL-2.0
/*
 * vhost-user protocol, backend side.
 *
 * One thread reads the frontend's socket. It also reads kick eventfds, and
 * runs sync queues itself when their in-band kick arrives, so that the
 * acknowledgement follows the published used entries.
 *
 * With the project's KICK_CHANNEL extension each queue's kick fd is a
 * stream socket of its own, read by a handler thread of that queue: a
 * kick is 8 bytes from the frontend, answered with an 8-byte status (0)
 * once a sync queue's buffers are published, so kicks of different queues
 * do not wait for each other. Another queue's first kick is answered at
 * once with a status saying that no later kick of it will be.
 *
 * The message handlers share the device state and its locking,
 * described here once. The rings are vring.c's, the requests dispatch.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "fuse_server.h"
#include "vhost_user.h"

enum {
	VU_GET_FEATURES = 1,
	VU_SET_FEATURES = 2,
	VU_SET_OWNER = 3,
	VU_RESET_OWNER = 4,
	VU_SET_MEM_TABLE = 5,
	VU_SET_LOG_BASE = 6,
	VU_SET_LOG_FD = 7,
	VU_SET_VRING_NUM = 8,
	VU_SET_VRING_ADDR = 9,
	VU_SET_VRING_BASE = 10,
	VU_GET_VRING_BASE = 11,
	VU_SET_VRING_KICK = 12,
	VU_SET_VRING_CALL = 13,
	VU_SET_VRING_ERR = 14,
	VU_GET_PROTOCOL_FEATURES = 15,
	VU_SET_PROTOCOL_FEATURES = 16,
	VU_GET_QUEUE_NUM = 17,
	VU_SET_VRING_ENABLE = 18,
	VU_SET_BACKEND_REQ_FD = 21,
	VU_GET_CONFIG = 24,
	VU_SET_CONFIG = 25,
	VU_VRING_KICK = 35,
	VU_GET_MAX_MEM_SLOTS = 36,
};

#define VU_BACKEND_VRING_CALL	4

#define VU_VERSION		1
#define VU_FLAG_REPLY		(1u << 2)
#define VU_FLAG_NEED_REPLY	(1u << 3)
#define VU_VRING_IDX_MASK	0xff
#define VU_VRING_NOFD		(1u << 8)

#define F_INDIRECT_DESC		28
#define F_EVENT_IDX		29
#define F_PROTOCOL_FEATURES	30
#define F_VERSION_1		32

#define PF_MQ			0
#define PF_REPLY_ACK		3
#define PF_BACKEND_REQ		5
#define PF_CONFIG		9
#define PF_INBAND_NOTIFICATIONS	14
/*
 * Not in the vhost-user specification: the virtio-fs-sync project's own
 * extension between its UML test kernels (tests/vm/patches/) and this
 * device, for test hosts only. SET_VRING_KICK carries a stream socket.
 */
#define PF_KICK_CHANNEL		62
/* a kick channel's answers (little-endian on the wire, as the host is) */
#define KICK_ANSWERED		0ULL
#define KICK_UNANSWERED		1ULL	/* no answer to later kicks */

#define BIT(n)			(1ULL << (n))
#define OFFERED_PROTOCOL	(BIT(PF_MQ) | BIT(PF_REPLY_ACK) | \
				 BIT(PF_BACKEND_REQ) | BIT(PF_CONFIG) | \
				 BIT(PF_INBAND_NOTIFICATIONS))

#define MAX_PAYLOAD		4096
#define MAX_FDS			8
#define CONFIG_MAX		256

struct vu_hdr {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
} __attribute__((packed));

struct vu_state {
	uint32_t index;
	uint32_t num;
} __attribute__((packed));

struct vu_addr {
	uint32_t index;
	uint32_t flags;
	uint64_t desc, used, avail, log;
} __attribute__((packed));

struct vu_region {
	uint64_t gpa;
	uint64_t size;
	uint64_t uva;
	uint64_t mmap_offset;
} __attribute__((packed));

struct vu_memory {
	uint32_t nregions;
	uint32_t padding;
	struct vu_region r[];
} __attribute__((packed));

struct vu_config {
	uint32_t offset;
	uint32_t size;
	uint32_t flags;
	uint8_t data[];
} __attribute__((packed));

struct vu_msg {
	struct vu_hdr hdr;
	union {
		uint64_t u64;
		struct vu_state state;
		struct vu_addr addr;
		struct vu_memory mem;
		struct vu_config cfg;
		uint8_t raw[MAX_PAYLOAD];
	};
	int fds[MAX_FDS];
	int nfds;
} __attribute__((packed));

struct virtio_fs_config {
	uint8_t tag[36];
	uint32_t num_request_queues;
	uint32_t notify_buf_size;
	uint32_t num_sync_queues;
} __attribute__((packed));

/*
 * A queue's transport state. The ring's addresses and the kick and error
 * fds are owned by the vhost-user thread; call_fd is protected by q->lock
 * (workers signal through it). With KICK_CHANNEL, kick_fd is the queue's
 * kick channel, read by chan_thread with chan_ctx from start until it is
 * joined; the vhost-user thread sets these only while no handler runs.
 */
struct vu_queue {
	struct fs_queue *q;
	unsigned int num;
	uint16_t base;
	uint64_t desc_uva, avail_uva, used_uva;
	int kick_fd, call_fd, err_fd;
	bool channel;
	pthread_t chan_thread;
	struct fuse_ctx *chan_ctx;
};

struct vu_dev {
	struct fs_dev dev;		/* what dispatch sees */
	int sock;			/* set by the vhost-user thread; workers may shut it down */
	int backend_fd;			/* -1 if none */
	pthread_mutex_t backend_lock;	/* held only around one write */
	/* owned by the vhost-user thread */
	uint64_t features;
	uint64_t protocol_features;
	bool protocol_known;
	/* the rings read it; replaced only while every queue is paused */
	struct mem_table mem;
	struct vu_queue vq[FS_MAX_QUEUES];
};

static bool proto(struct vu_dev *vu, int bit)
{
	return vu->protocol_features & BIT(bit);
}

static uint64_t offered_protocol(struct vu_dev *vu)
{
	return OFFERED_PROTOCOL |
		(vu->dev.opt->no_kick_channel ? 0 : BIT(PF_KICK_CHANNEL));
}

/* Kicks that the device sees and answers: the only way to be synchronous. */
static bool sync_kicks(struct vu_dev *vu)
{
	return proto(vu, PF_INBAND_NOTIFICATIONS) || proto(vu, PF_KICK_CHANNEL);
}

static uint64_t offered_features(struct vu_dev *vu)
{
	uint64_t f = BIT(F_VERSION_1) | BIT(F_INDIRECT_DESC) |
		BIT(F_EVENT_IDX) | BIT(F_PROTOCOL_FEATURES);

	/*
	 * UML asks for the features before it negotiates protocol features;
	 * once we know the frontend lacks in-band kicks, nothing can be
	 * synchronous, so stop offering the bit.
	 */
	if (vu->dev.opt->sync_queues &&
	    (!vu->protocol_known || sync_kicks(vu))) {
		f |= BIT(vu->dev.opt->sync_bit);
		/*
		 * VIRTIO_FS_F_SYNC_BUDGET: every sync kick is answered within
		 * --sync-budget-us. Kept whether the frontend acks it or not:
		 * a VMM may pass it to its guest without sending it back.
		 * Bits 24 and up are the transport's.
		 */
		if (vu->dev.opt->sync_budget_us && vu->dev.opt->sync_bit < 23)
			f |= BIT(vu->dev.opt->sync_bit + 1);
	}
	return f;
}

static bool sync_possible(struct vu_dev *vu)
{
	if (!vu->dev.opt->sync_queues)
		return false;
	if (vu->protocol_known && !sync_kicks(vu))
		return false;
	if (vu->features && !(vu->features & BIT(vu->dev.opt->sync_bit)))
		return false;
	return true;
}

/* ---- socket I/O ---- */

static int read_full(int fd, void *buf, size_t len)
{
	while (len) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf = (uint8_t *)buf + n;
		len -= n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf = (const uint8_t *)buf + n;
		len -= n;
	}
	return 0;
}

static void close_fds(struct vu_msg *m)
{
	int i;

	for (i = 0; i < m->nfds; i++)
		if (m->fds[i] >= 0)
			close(m->fds[i]);
	m->nfds = 0;
}

static int recv_msg(int sock, struct vu_msg *m)
{
	char cbuf[CMSG_SPACE(MAX_FDS * sizeof(int))];
	struct iovec iov = { &m->hdr, sizeof(m->hdr) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n;

	m->nfds = 0;
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			memcpy(m->fds, CMSG_DATA(c), k * sizeof(int));
			m->nfds = k;
		}
	}
	if (n < (ssize_t)sizeof(m->hdr) &&
	    read_full(sock, (uint8_t *)&m->hdr + n, sizeof(m->hdr) - n))
		goto fail;
	if (m->hdr.size > MAX_PAYLOAD) {
		fprintf(stderr, "vhost-user-fs: message %u too large (%u)\n",
			m->hdr.request, m->hdr.size);
		goto fail;
	}
	if (read_full(sock, m->raw, m->hdr.size))
		goto fail;
	return 0;
fail:
	close_fds(m);
	return -1;
}

static int send_reply(struct vu_dev *vu, struct vu_msg *m, const void *p,
		      uint32_t size)
{
	struct vu_hdr h = {
		.request = m->hdr.request,
		.flags = VU_VERSION | VU_FLAG_REPLY,
		.size = size,
	};
	uint8_t buf[sizeof(h) + CONFIG_MAX + sizeof(struct vu_config)];

	if (size > sizeof(buf) - sizeof(h))
		return -1;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), p, size);
	return write_full(vu->sock, buf, sizeof(h) + size);
}

static int reply_u64(struct vu_dev *vu, struct vu_msg *m, uint64_t v)
{
	return send_reply(vu, m, &v, sizeof(v));
}

/* ---- signalling ---- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * A frontend that stops reading the backend channel would keep a worker
 * here for good: after --backend-timeout seconds without room, take it for
 * dead and hang up, as when its socket breaks.
 */
static int backend_stalled(struct vu_dev *vu)
{
	fprintf(stderr, "vhost-user-fs: the frontend has not read the backend channel for %u s: disconnecting\n",
		vu->dev.opt->backend_timeout);
	shutdown(vu->sock, SHUT_RDWR);
	return -EPIPE;
}

static int backend_write(struct vu_dev *vu, const void *buf, size_t len,
			 bool may_block)
{
	long long deadline = 0;

	for (;;) {
		struct pollfd p;
		ssize_t n;
		int fd;

		pthread_mutex_lock(&vu->backend_lock);
		fd = vu->backend_fd;
		n = fd < 0 ? -1 : write(fd, buf, len);
		if (fd < 0)
			errno = EPIPE;
		pthread_mutex_unlock(&vu->backend_lock);
		/* messages are far below PIPE_BUF: all or nothing */
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		if (errno == EINTR)
			continue;
		if (!may_block)
			return -EAGAIN;
		if (vu->dev.opt->backend_timeout) {
			long long t = now_ms();

			if (!deadline)
				deadline = t + 1000LL * vu->dev.opt->backend_timeout;
			else if (t >= deadline)
				return backend_stalled(vu);
		}
		p.fd = fd;
		p.events = POLLOUT;
		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			return -EPIPE;
	}
}

static int vu_signal(void *transport, unsigned int index, bool may_block)
{
	struct vu_dev *vu = transport;
	struct fs_queue *q = &vu->dev.q[index];
	struct {
		struct vu_hdr h;
		struct vu_state s;
	} __attribute__((packed)) msg = {
		.h = { VU_BACKEND_VRING_CALL, VU_VERSION, sizeof(msg.s) },
		.s = { index, 0 },
	};
	uint64_t one = 1;
	int fd, err = 0;

	pthread_mutex_lock(&q->lock);
	fd = vu->vq[index].call_fd;
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		err = -errno;
	pthread_mutex_unlock(&q->lock);
	if (fd >= 0)
		return err;
	/*
	 * No NEED_REPLY: a UML CPU waiting for a kick acknowledgement
	 * cannot read this channel, so we must never wait for its answer.
	 */
	if (proto(vu, PF_INBAND_NOTIFICATIONS) && proto(vu, PF_BACKEND_REQ))
		return backend_write(vu, &msg, sizeof(msg), may_block);
	return 0;
}

/* Called with the queue's lock held. */
static void vu_hang_up(void *transport, unsigned int index, bool kick_waits)
{
	struct vu_dev *vu = transport;
	struct vu_queue *vq = &vu->vq[index];

	/* the vhost-user thread sees the frontend gone */
	shutdown(vu->sock, SHUT_RDWR);
	/* a device gone away answers no kick either */
	if (kick_waits && vq->channel)
		shutdown(vq->kick_fd, SHUT_RDWR);
}

static const struct fs_transport_ops vu_ops = {
	.signal = vu_signal,
	.hang_up = vu_hang_up,
};

/* ---- memory table ---- */

static void mem_unmap(struct mem_table *mt)
{
	unsigned int i;

	for (i = 0; i < mt->nregions; i++)
		munmap(mt->r[i].map_base, mt->r[i].map_len);
	mt->nregions = 0;
}

static void pause_all(struct vu_dev *vu)
{
	unsigned int i;

	for (i = 0; i < FS_MAX_QUEUES; i++)
		dispatch__pause(&vu->dev.q[i]);
}

static void resume_all(struct vu_dev *vu)
{
	unsigned int i;

	for (i = 0; i < FS_MAX_QUEUES; i++)
		dispatch__resume(&vu->dev.q[i]);
}

/* Called with q paused or never started. */
static int queue_map(struct vu_dev *vu, struct vu_queue *vq)
{
	struct fs_queue *q = vq->q;
	unsigned int num = vq->num;
	size_t ev = (vu->features & BIT(F_EVENT_IDX)) ? 2 : 0;
	void *desc, *avail, *used;
	uint16_t last = vq->base, used_idx = vq->base;
	bool had = q->addr_set;

	if (had) {
		last = q->vr.last_avail_idx;
		used_idx = q->vr.used_idx;
	}
	q->addr_set = false;
	if (!num || !vq->desc_uva)
		return -1;
	desc = mem__uva_to_host(&vu->mem, vq->desc_uva, 16ULL * num);
	avail = mem__uva_to_host(&vu->mem, vq->avail_uva, 4 + 2ULL * num + ev);
	used = mem__uva_to_host(&vu->mem, vq->used_uva, 4 + 8ULL * num + ev);
	if (!desc || !avail || !used) {
		fprintf(stderr, "vhost-user-fs: queue %u rings outside memory\n",
			q->index);
		return -1;
	}
	if (((uintptr_t)desc & 15) || ((uintptr_t)avail & 1) ||
	    ((uintptr_t)used & 3)) {
		fprintf(stderr, "vhost-user-fs: queue %u rings misaligned\n",
			q->index);
		return -1;
	}
	vring__init(&q->vr, q->index, num, desc, avail, used, &vu->mem,
		    vu->features & BIT(F_EVENT_IDX), last);
	q->vr.used_idx = used_idx;
	q->vr.signalled_used = used_idx;
	q->addr_set = true;
	return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

/*
 * --populate-memory: allocate and map every page of a region now, so the
 * first time the device writes a guest page the host has not allocated
 * yet costs no page fault inside a request. Best effort: the mapping
 * stands whatever the host kernel says.
 */
static void populate_region(unsigned int i, void *p, size_t len)
{
	if (!madvise(p, len, MADV_POPULATE_WRITE)) {
		fprintf(stderr, "vhost-user-fs: populated region %u (%zu KiB)\n",
			i, len >> 10);
		return;
	}
	if (errno == EINVAL)
		fprintf(stderr, "vhost-user-fs: --populate-memory: region %u: the host kernel has no MADV_POPULATE_WRITE (Linux 5.14+); left to fault in\n",
			i);
	else
		fprintf(stderr, "vhost-user-fs: --populate-memory: region %u: %m; left to fault in\n",
			i);
}

#ifndef F_SEAL_SHRINK
#define F_ADD_SEALS	1033
#define F_SEAL_SHRINK	0x0002
#endif

/*
 * A region must lie inside its file: a page of the mapping past the end of
 * the file raises SIGBUS when touched, and the frontend places descriptors
 * anywhere in the region. Where the fd allows it (a memfd made with
 * MFD_ALLOW_SEALING, as QEMU's memory-backend-memfd is) it is sealed
 * against shrinking first, so the size checked is the size for good;
 * other files (UML's, a memory-backend-file) can still be truncated by
 * their owner afterwards (README: Security model).
 */
static int region_fits(unsigned int i, const struct vu_region *vr, int fd)
{
	struct stat st;

	/* EINVAL: not a memfd; EPERM: sealed against new seals */
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
	if (fstat(fd, &st)) {
		fprintf(stderr, "vhost-user-fs: region %u: fstat: %m\n", i);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "vhost-user-fs: region %u: not a regular file or memfd\n",
			i);
		return -1;
	}
	if (vr->gpa + vr->size < vr->gpa || vr->uva + vr->size < vr->uva ||
	    vr->mmap_offset > (uint64_t)st.st_size ||
	    vr->size > (uint64_t)st.st_size - vr->mmap_offset) {
		fprintf(stderr, "vhost-user-fs: region %u: offset 0x%llx + size 0x%llx past the end of its file (0x%llx bytes)\n",
			i, (unsigned long long)vr->mmap_offset,
			(unsigned long long)vr->size,
			(unsigned long long)st.st_size);
		return -1;
	}
	return 0;
}

static int set_mem_table(struct vu_dev *vu, struct vu_msg *m)
{
	struct mem_table nt = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i;
	int err = 0;

	if (m->hdr.size < sizeof(m->mem) ||
	    m->mem.nregions > VRING_MAX_REGIONS ||
	    m->hdr.size < sizeof(m->mem) + m->mem.nregions * sizeof(m->mem.r[0]) ||
	    (int)m->mem.nregions != m->nfds) {
		fprintf(stderr, "vhost-user-fs: bad memory table\n");
		return -1;
	}
	for (i = 0; i < m->mem.nregions; i++) {
		const struct vu_region *vr = &m->mem.r[i];
		uint64_t off = vr->mmap_offset & ~(uint64_t)(page - 1);
		uint64_t skew = vr->mmap_offset - off;
		void *p;

		if (!vr->size || vr->size > (1ULL << 48) ||
		    region_fits(i, vr, m->fds[i])) {
			err = -1;
			break;
		}
		p = mmap(NULL, vr->size + skew, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_NORESERVE, m->fds[i], off);
		if (p == MAP_FAILED) {
			fprintf(stderr, "vhost-user-fs: mmap region %u: %m\n", i);
			err = -1;
			break;
		}
		if (vu->dev.opt->populate_memory)
			populate_region(i, p, vr->size + skew);
		nt.r[i] = (struct mem_region){
			.gpa = vr->gpa, .size = vr->size, .uva = vr->uva,
			.host = (uint8_t *)p + skew, .map_base = p,
			.map_len = vr->size + skew,
		};
		nt.nregions = i + 1;
	}
	close_fds(m);
	if (err) {
		mem_unmap(&nt);
		return -1;
	}

	pause_all(vu);
	mem_unmap(&vu->mem);
	vu->mem = nt;
	for (i = 0; i < FS_MAX_QUEUES; i++) {
		struct fs_queue *q = &vu->dev.q[i];

		pthread_mutex_lock(&q->lock);
		if (q->addr_set)
			queue_map(vu, &vu->vq[i]);
		pthread_mutex_unlock(&q->lock);
	}
	resume_all(vu);
	return 0;
}

/* ---- queue messages ---- */

/* --sync-queues-at; 0 (options not from main.c) is the contract's 44 */
static uint32_t sync_queues_at(const struct vu_dev *vu)
{
	return vu->dev.opt->sync_queues_at == 40 ? 40 : 44;
}

/* --config-size; 0 is up to num_sync_queues */
static uint32_t config_size(const struct vu_dev *vu)
{
	uint32_t full = sync_queues_at(vu) + 4;

	if (!vu->dev.opt->config_size || vu->dev.opt->config_size > full)
		return full;
	return vu->dev.opt->config_size;
}

/* Does the config space hold num_sync_queues? */
static bool config_has_sync(const struct vu_dev *vu)
{
	return config_size(vu) >= sync_queues_at(vu) + 4;
}

static struct vu_queue *queue_of(struct vu_dev *vu, uint32_t index)
{
	/* a config without num_sync_queues: only hiprio and R request queues */
	if (index >= FS_MAX_QUEUES ||
	    (!config_has_sync(vu) && index > vu->dev.opt->request_queues)) {
		fprintf(stderr, "vhost-user-fs: queue index %u out of range\n",
			index);
		return NULL;
	}
	return &vu->vq[index];
}

static void refresh_types(struct vu_dev *vu)
{
	unsigned int i;

	vu->dev.sync_active = vu->dev.opt->sync_queues && sync_kicks(vu) &&
		(vu->features & BIT(vu->dev.opt->sync_bit));
	fuse_server__set_sync(vu->dev.srv, vu->dev.sync_active);
	for (i = 0; i < FS_MAX_QUEUES; i++) {
		struct fs_queue *q = &vu->dev.q[i];
		bool ev = vu->features & BIT(F_EVENT_IDX), remap;

		pthread_mutex_lock(&q->lock);
		q->type = dispatch__queue_type(&vu->dev, i);
		remap = q->addr_set && q->vr.event_idx != ev;
		if (!remap)
			q->vr.event_idx = ev;
		pthread_mutex_unlock(&q->lock);
		if (!remap)
			continue;
		/*
		 * EVENT_IDX came or went after the rings were checked: used_event
		 * and avail_event are 2 bytes past what was checked without
		 * it, so check the rings again (a failure leaves the queue
		 * unset, as a bad SET_VRING_ADDR does).
		 */
		dispatch__pause(q);
		pthread_mutex_lock(&q->lock);
		if (q->addr_set && queue_map(vu, &vu->vq[i]))
			fprintf(stderr, "vhost-user-fs: queue %u unusable with the features 0x%llx\n",
				q->index, (unsigned long long)vu->features);
		pthread_mutex_unlock(&q->lock);
		dispatch__resume(q);
	}
}

static int set_vring_num(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq = queue_of(vu, m->state.index);
	struct fs_queue *q;

	if (!vq || !m->state.num || m->state.num > vu->dev.opt->queue_size) {
		fprintf(stderr, "vhost-user-fs: bad queue size %u\n",
			m->state.num);
		return -1;
	}
	q = vq->q;
	dispatch__pause(q);
	pthread_mutex_lock(&q->lock);
	vq->num = m->state.num;
	q->addr_set = false;
	pthread_mutex_unlock(&q->lock);
	dispatch__resume(q);
	return 0;
}

static int set_vring_addr(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq = queue_of(vu, m->addr.index);
	struct fs_queue *q;
	int err;

	if (!vq)
		return -1;
	q = vq->q;
	dispatch__pause(q);
	pthread_mutex_lock(&q->lock);
	vq->desc_uva = m->addr.desc;
	vq->avail_uva = m->addr.avail;
	vq->used_uva = m->addr.used;
	q->addr_set = false;
	err = queue_map(vu, vq);
	if (!err) {
		q->stopped = false;
		q->type = dispatch__queue_type(&vu->dev, q->index);
		if (!(vu->features & BIT(F_PROTOCOL_FEATURES)))
			q->enabled = true;
		dispatch__stats_started(q);
	}
	pthread_mutex_unlock(&q->lock);
	dispatch__resume(q);
	return err;
}

static int set_vring_base(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq = queue_of(vu, m->state.index);
	struct fs_queue *q;

	if (!vq)
		return -1;
	q = vq->q;
	dispatch__pause(q);
	pthread_mutex_lock(&q->lock);
	vq->base = m->state.num;
	if (q->addr_set) {
		q->vr.last_avail_idx = vq->base;
		q->vr.used_idx = vq->base;
	}
	pthread_mutex_unlock(&q->lock);
	dispatch__resume(q);
	return 0;
}

/* ---- kick channels ---- */

/*
 * A kick is 8 bytes. A sync queue's are answered with KICK_ANSWERED once
 * its buffers are published. Any other queue's first kick is answered
 * with KICK_UNANSWERED, after the queue is handed to the workers, and no
 * kick after it: the frontend then writes without waiting and drops a
 * kick that finds the socket full, so from then on any bytes read are a
 * kick, and everything readable is read at once.
 */
static void *channel_main(void *arg)
{
	struct vu_queue *vq = arg;
	struct fs_queue *q = vq->q;
	uint64_t kicks[64], status;
	bool answered = true;

	dispatch__handler_started(q);
	/* the content of a kick does not matter: the channel is the queue */
	for (;;) {
		if (answered) {
			if (read_full(vq->kick_fd, kicks, sizeof(kicks[0])))
				break;
		} else {
			ssize_t n = read(vq->kick_fd, kicks, sizeof(kicks));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
		}
		dispatch__channel_kick(q, vq->chan_ctx);
		if (!answered)
			continue;
		pthread_mutex_lock(&q->lock);
		status = q->type == FSQ_SYNC ? KICK_ANSWERED : KICK_UNANSWERED;
		pthread_mutex_unlock(&q->lock);
		if (write_full(vq->kick_fd, &status, sizeof(status)))
			break;
		answered = status == KICK_ANSWERED;
	}
	return NULL;
}

/* Takes the fd: vq->kick_fd becomes a channel with its handler thread. */
static int channel_start(struct vu_queue *vq, int fd)
{
	unsigned int index = vq->q->index;
	int err, type = 0;
	socklen_t len = sizeof(type);

	/* only a stream socket can be shut down to stop its reader */
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
	    type != SOCK_STREAM) {
		fprintf(stderr, "vhost-user-fs: queue %u: the kick channel is not a stream socket\n",
			index);
		close(fd);
		return -1;
	}
	if (!vq->chan_ctx)
		vq->chan_ctx = fuse_ctx__new();
	if (!vq->chan_ctx) {
		close(fd);
		return -1;
	}
	vq->kick_fd = fd;
	vq->channel = true;
	err = pthread_create(&vq->chan_thread, NULL, channel_main, vq);
	if (err) {
		fprintf(stderr, "vhost-user-fs: queue %u: no handler thread: %s\n",
			index, strerror(err));
		vq->channel = false;
		close(fd);
		vq->kick_fd = -1;
		return -1;
	}
	return 0;
}

/*
 * Ends the queue's handler thread, if any, and closes the kick fd. Must
 * not be called with q->lock held: the handler may be waiting for it.
 */
static void kick_fd_close(struct vu_queue *vq)
{
	if (vq->channel) {
		shutdown(vq->kick_fd, SHUT_RDWR);
		pthread_join(vq->chan_thread, NULL);
		vq->channel = false;
	}
	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	vq->kick_fd = -1;
}

static int get_vring_base(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq = queue_of(vu, m->state.index);
	struct vu_state st = { m->state.index, 0 };

	if (vq) {
		struct fs_queue *q = vq->q;

		kick_fd_close(vq);
		dispatch__pause(q);
		pthread_mutex_lock(&q->lock);
		q->stopped = true;
		st.num = q->addr_set ? q->vr.last_avail_idx : vq->base;
		vq->base = st.num;
		pthread_mutex_unlock(&q->lock);
		dispatch__resume(q);
	}
	return send_reply(vu, m, &st, sizeof(st));
}

/* Takes the fd, if any, of a SET_VRING_KICK/CALL/ERR message. */
static int vring_fd(struct vu_msg *m, struct vu_queue **vqp,
		    struct vu_dev *vu)
{
	int fd = -1;

	*vqp = queue_of(vu, m->u64 & VU_VRING_IDX_MASK);
	if (!(m->u64 & VU_VRING_NOFD) && m->nfds >= 1) {
		fd = m->fds[0];
		m->fds[0] = -1;
	}
	close_fds(m);
	if (!*vqp && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * With KICK_CHANNEL a kick fd may still be an eventfd: a frontend that
 * runs only some queues synchronously (the project's QEMU series) gives
 * the others their usual eventfds.
 */
static bool is_stream_socket(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return !getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) &&
		type == SOCK_STREAM;
}

static void kick_if_runnable(struct fs_queue *q)
{
	if (dispatch__runnable(q))
		dispatch__kick(q);
}

static int set_vring_kick(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq;
	int fd = vring_fd(m, &vq, vu);
	struct fs_queue *q;

	if (!vq)
		return -1;
	q = vq->q;
	kick_fd_close(vq);
	pthread_mutex_lock(&q->lock);
	q->stopped = false;
	if (!(vu->features & BIT(F_PROTOCOL_FEATURES)))
		q->enabled = true;
	pthread_mutex_unlock(&q->lock);
	if (fd >= 0 && proto(vu, PF_KICK_CHANNEL) && is_stream_socket(fd)) {
		if (channel_start(vq, fd))
			return -1;
	} else {
		vq->kick_fd = fd;
	}
	kick_if_runnable(q);
	return 0;
}

static int set_vring_call(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq;
	int fd = vring_fd(m, &vq, vu), old;

	if (!vq)
		return -1;
	pthread_mutex_lock(&vq->q->lock);
	old = vq->call_fd;
	vq->call_fd = fd;
	pthread_mutex_unlock(&vq->q->lock);
	if (old >= 0)
		close(old);
	return 0;
}

static int set_vring_err(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq;
	int fd = vring_fd(m, &vq, vu);

	if (!vq)
		return -1;
	if (vq->err_fd >= 0)
		close(vq->err_fd);
	vq->err_fd = fd;
	return 0;
}

static int set_vring_enable(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq = queue_of(vu, m->state.index);

	if (!vq)
		return -1;
	pthread_mutex_lock(&vq->q->lock);
	vq->q->enabled = m->state.num;
	pthread_mutex_unlock(&vq->q->lock);
	kick_if_runnable(vq->q);
	return 0;
}

static int vring_kick(struct vu_dev *vu, struct vu_msg *m)
{
	struct vu_queue *vq = queue_of(vu, m->state.index);

	if (!vq)
		return -1;
	kick_if_runnable(vq->q);
	return 0;
}

static int set_backend_fd(struct vu_dev *vu, struct vu_msg *m)
{
	int fd = m->nfds >= 1 ? m->fds[0] : -1, old;

	if (fd < 0)
		return -1;
	m->fds[0] = -1;
	close_fds(m);
	/* never block the sync path on a full channel (see backend_write) */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	pthread_mutex_lock(&vu->backend_lock);
	old = vu->backend_fd;
	vu->backend_fd = fd;
	pthread_mutex_unlock(&vu->backend_lock);
	if (old >= 0)
		close(old);
	return 0;
}

static int get_config(struct vu_dev *vu, struct vu_msg *m)
{
	struct virtio_fs_config cfg = { 0 };
	uint8_t buf[sizeof(struct vu_config) + CONFIG_MAX] = { 0 };
	struct vu_config *out = (struct vu_config *)buf;
	uint32_t off = m->cfg.offset, size = m->cfg.size, n;

	if (m->hdr.size < sizeof(m->cfg) || size > CONFIG_MAX) {
		/* an empty payload tells the frontend we failed */
		return send_reply(vu, m, buf, 0);
	}
	/* the tag fills the field, NUL-terminated only if shorter */
	memcpy(cfg.tag, vu->dev.opt->tag, strnlen(vu->dev.opt->tag, sizeof(cfg.tag)));
	cfg.num_request_queues = vu->dev.opt->request_queues;
	n = sync_possible(vu) ? vu->dev.opt->sync_queues : 0;
	if (sync_queues_at(vu) == 40)
		cfg.notify_buf_size = n;	/* where libkrun's layout has it */
	else
		cfg.num_sync_queues = n;
	out->offset = off;
	out->size = size;
	out->flags = m->cfg.flags;
	/* --config-size: past it, all ones (QEMU's virtio-pci and -mmio) */
	memset((uint8_t *)&cfg + config_size(vu), 0xff,
	       sizeof(cfg) - config_size(vu));
	if (off < sizeof(cfg)) {
		uint32_t n = sizeof(cfg) - off < size ? sizeof(cfg) - off : size;

		memcpy(out->data, (uint8_t *)&cfg + off, n);
	}
	return send_reply(vu, m, buf, sizeof(*out) + size);
}

static void dev_reset(struct vu_dev *vu)
{
	unsigned int i;

	for (i = 0; i < FS_MAX_QUEUES; i++)
		kick_fd_close(&vu->vq[i]);
	pause_all(vu);
	for (i = 0; i < FS_MAX_QUEUES; i++) {
		struct vu_queue *vq = &vu->vq[i];
		struct fs_queue *q = vq->q;

		pthread_mutex_lock(&q->lock);
		if (vq->call_fd >= 0)
			close(vq->call_fd);
		if (vq->err_fd >= 0)
			close(vq->err_fd);
		vq->call_fd = vq->err_fd = -1;
		q->addr_set = q->enabled = q->stopped = false;
		vq->num = 0;
		vq->base = 0;
		vq->desc_uva = vq->avail_uva = vq->used_uva = 0;
		q->signal_pending = false;
		pthread_mutex_unlock(&q->lock);
	}
	mem_unmap(&vu->mem);
	pthread_mutex_lock(&vu->backend_lock);
	if (vu->backend_fd >= 0)
		close(vu->backend_fd);
	vu->backend_fd = -1;
	pthread_mutex_unlock(&vu->backend_lock);
	vu->features = 0;
	vu->protocol_features = 0;
	vu->protocol_known = false;
	vu->dev.sync_active = false;
	resume_all(vu);
}

/*
 * The payload each request needs at least; 0 for none or checked by its
 * handler (SET_MEM_TABLE, GET_CONFIG). A shorter message would act on
 * what the previous one left in the buffer.
 */
static uint32_t payload_min(uint32_t request)
{
	switch (request) {
	case VU_SET_FEATURES:
	case VU_SET_PROTOCOL_FEATURES:
	case VU_SET_VRING_KICK:
	case VU_SET_VRING_CALL:
	case VU_SET_VRING_ERR:
		return sizeof(uint64_t);
	case VU_SET_VRING_NUM:
	case VU_SET_VRING_BASE:
	case VU_GET_VRING_BASE:
	case VU_SET_VRING_ENABLE:
	case VU_VRING_KICK:
		return sizeof(struct vu_state);
	case VU_SET_VRING_ADDR:
		return sizeof(struct vu_addr);
	}
	return 0;
}

/* What handle_msg did with a message; process_socket acts on it. */
enum msg_result {
	MSG_CLOSE = -1,		/* the session cannot go on: close it */
	MSG_REPLIED = 0,	/* handled, and its own reply sent */
	MSG_DONE = 1,		/* handled: acknowledged with 0 if asked */
	MSG_REFUSED = 2,	/* refused: acknowledged with 1 if asked */
};

/* A setter's return (0 or -1) as a message result. */
static enum msg_result done_if_ok(int err)
{
	return err ? MSG_REFUSED : MSG_DONE;
}

/* A request answered by a reply of its own: a reply that cannot be sent ends the session. */
static enum msg_result replied_if_ok(int err)
{
	return err ? MSG_CLOSE : MSG_REPLIED;
}

static enum msg_result handle_msg(struct vu_dev *vu, struct vu_msg *m)
{
	if (m->hdr.size < payload_min(m->hdr.request)) {
		fprintf(stderr, "vhost-user-fs: request %u: payload of %u bytes, expected %u\n",
			m->hdr.request, m->hdr.size,
			payload_min(m->hdr.request));
		/* a request that wants an answer cannot get a sensible one */
		return m->hdr.request == VU_GET_VRING_BASE ? MSG_CLOSE : MSG_REFUSED;
	}
	switch (m->hdr.request) {
	case VU_GET_FEATURES:
		return replied_if_ok(reply_u64(vu, m, offered_features(vu)));
	case VU_SET_FEATURES:
		vu->features = m->u64;
		refresh_types(vu);
		fprintf(stderr, "vhost-user-fs: features 0x%llx, protocol features 0x%llx: sync queues %s, kicks %s\n",
			(unsigned long long)vu->features,
			(unsigned long long)vu->protocol_features,
			vu->dev.sync_active ? "active" : "inactive",
			proto(vu, PF_KICK_CHANNEL) ? "on per-queue channels" :
			proto(vu, PF_INBAND_NOTIFICATIONS) ? "in-band" :
			"by eventfd");
		return MSG_DONE;
	case VU_SET_OWNER:
		return MSG_DONE;
	case VU_RESET_OWNER:
		dev_reset(vu);
		return MSG_DONE;
	case VU_GET_PROTOCOL_FEATURES:
		return replied_if_ok(reply_u64(vu, m, offered_protocol(vu)));
	case VU_SET_PROTOCOL_FEATURES:
		vu->protocol_features = m->u64 & offered_protocol(vu);
		vu->protocol_known = true;
		refresh_types(vu);
		return MSG_DONE;
	case VU_GET_QUEUE_NUM:
		return replied_if_ok(reply_u64(vu, m, FS_MAX_QUEUES));
	case VU_GET_MAX_MEM_SLOTS:
		return replied_if_ok(reply_u64(vu, m, VRING_MAX_REGIONS));
	case VU_SET_MEM_TABLE:
		return done_if_ok(set_mem_table(vu, m));
	case VU_SET_VRING_NUM:
		return done_if_ok(set_vring_num(vu, m));
	case VU_SET_VRING_ADDR:
		return done_if_ok(set_vring_addr(vu, m));
	case VU_SET_VRING_BASE:
		return done_if_ok(set_vring_base(vu, m));
	case VU_GET_VRING_BASE:
		return replied_if_ok(get_vring_base(vu, m));
	case VU_SET_VRING_KICK:
		return done_if_ok(set_vring_kick(vu, m));
	case VU_SET_VRING_CALL:
		return done_if_ok(set_vring_call(vu, m));
	case VU_SET_VRING_ERR:
		return done_if_ok(set_vring_err(vu, m));
	case VU_SET_VRING_ENABLE:
		return done_if_ok(set_vring_enable(vu, m));
	case VU_SET_BACKEND_REQ_FD:
		return done_if_ok(set_backend_fd(vu, m));
	case VU_GET_CONFIG:
		return replied_if_ok(get_config(vu, m));
	case VU_SET_CONFIG:
		return MSG_DONE;
	case VU_VRING_KICK:
		return done_if_ok(vring_kick(vu, m));
	}
	fprintf(stderr, "vhost-user-fs: unsupported request %u\n",
		m->hdr.request);
	return MSG_REFUSED;
}

static int process_socket(struct vu_dev *vu, struct vu_msg *m)
{
	enum msg_result r;

	if (recv_msg(vu->sock, m))
		return -1;
	if ((m->hdr.flags & 3) != VU_VERSION) {
		fprintf(stderr, "vhost-user-fs: bad message version\n");
		close_fds(m);
		return -1;
	}
	r = handle_msg(vu, m);
	close_fds(m);
	if (r == MSG_CLOSE)
		return -1;
	if (r != MSG_REPLIED && (m->hdr.flags & VU_FLAG_NEED_REPLY) &&
	    reply_u64(vu, m, r == MSG_REFUSED))
		return -1;
	return 0;
}

struct vu_dev *vhost_user__new(const struct options *opt,
			       struct fuse_server *srv)
{
	struct vu_dev *vu = calloc(1, sizeof(*vu));
	unsigned int i;

	if (!vu)
		return NULL;
	if (dispatch__dev_init(&vu->dev, opt, srv, &vu_ops, vu)) {
		free(vu);
		return NULL;
	}
	vu->sock = -1;
	vu->backend_fd = -1;
	pthread_mutex_init(&vu->backend_lock, NULL);
	for (i = 0; i < FS_MAX_QUEUES; i++) {
		struct vu_queue *vq = &vu->vq[i];

		vq->q = &vu->dev.q[i];
		vq->kick_fd = vq->call_fd = vq->err_fd = -1;
	}
	return vu;
}

int vhost_user__serve(struct vu_dev *vu, int sock, int extra_fd,
		      bool (*on_extra)(void))
{
	struct pollfd pfd[2 + FS_MAX_QUEUES];
	unsigned int qmap[2 + FS_MAX_QUEUES];
	struct vu_msg *m = malloc(sizeof(*m));
	int ret = 0;

	if (!m)
		return -1;
	vu->sock = sock;
	for (;;) {
		unsigned int n = 0, i;

		pfd[n].fd = sock;
		pfd[n++].events = POLLIN;
		pfd[n].fd = extra_fd;
		pfd[n++].events = POLLIN;
		for (i = 0; i < FS_MAX_QUEUES; i++) {
			/* a kick channel has a reader of its own */
			if (vu->vq[i].kick_fd < 0 || vu->vq[i].channel)
				continue;
			qmap[n] = i;
			pfd[n].fd = vu->vq[i].kick_fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & POLLIN && on_extra()) {
			ret = 1;
			break;
		}
		for (i = 2; i < n; i++) {
			struct fs_queue *q = &vu->dev.q[qmap[i]];
			uint64_t v;

			if (!(pfd[i].revents & POLLIN))
				continue;
			if (read(pfd[i].fd, &v, sizeof(v)) < 0)
				continue;
			kick_if_runnable(q);
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR) &&
		    process_socket(vu, m))
			break;
	}
	if (!ret)
		fprintf(stderr, "vhost-user-fs: the frontend is gone\n");
	free(m);
	dev_reset(vu);
	fuse_server__reset(vu->dev.srv);
	close(sock);
	vu->sock = -1;
	return ret;
}
