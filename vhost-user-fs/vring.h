/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Split virtqueue walker for a vhost-user backend.
 *
 * Everything that lives in guest memory is untrusted: indices, descriptor
 * addresses and lengths, flags and chain links are validated before use.
 */
#ifndef VHOST_USER_FS_VRING_H
#define VHOST_USER_FS_VRING_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/uio.h>

#define VRING_MAX_REGIONS	8
#define VRING_MAX_SIZE		1024

#define VRING_DESC_F_NEXT	1
#define VRING_DESC_F_WRITE	2
#define VRING_DESC_F_INDIRECT	4
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY	1

struct vring_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vring_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];
};

struct vring_used_elem {
	uint32_t id;
	uint32_t len;
};

struct vring_used {
	uint16_t flags;
	uint16_t idx;
	struct vring_used_elem ring[];
};

struct mem_region {
	uint64_t gpa;		/* guest-physical start */
	uint64_t size;
	uint64_t uva;		/* frontend's virtual address of gpa */
	uint8_t *host;		/* our mapping of gpa */
	void *map_base;		/* what munmap needs */
	size_t map_len;
};

struct mem_table {
	unsigned int nregions;
	struct mem_region r[VRING_MAX_REGIONS];
};

/* NULL unless [addr, addr + len) lies inside a single region. */
void *mem__uva_to_host(const struct mem_table *mt, uint64_t uva, uint64_t len);
void *mem__gpa_to_host(const struct mem_table *mt, uint64_t gpa, uint64_t len);

struct vring {
	unsigned int num;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	const struct mem_table *mem;
	bool event_idx;
	bool broken;
	uint16_t last_avail_idx;
	uint16_t used_idx;
	uint16_t signalled_used;
	bool signalled_used_valid;
	unsigned int index;	/* queue number, for messages only */
};

/*
 * One popped chain. iov[0 .. rd_num) are device-readable, followed by
 * wr_num device-writable ones. The caller owns the iovec array.
 */
struct vring_elem {
	uint16_t head;
	unsigned int rd_num, wr_num;
	size_t rd_len, wr_len;
	struct iovec *iov;
	unsigned int iov_max;
};

void vring__init(struct vring *vr, unsigned int index, unsigned int num,
		 struct vring_desc *desc, struct vring_avail *avail,
		 struct vring_used *used, const struct mem_table *mem,
		 bool event_idx, uint16_t base);
/* 1: got a chain, 0: ring empty, -1: ring broken (message printed). */
int vring__pop(struct vring *vr, struct vring_elem *elem);
/* Used entry first, then used->idx with release ordering. */
void vring__push(struct vring *vr, uint16_t head, uint32_t len);
/* After a batch of pushes: does the driver want an interrupt? */
bool vring__need_signal(struct vring *vr);
/*
 * Ask for a kick on the next available buffer and tell whether one slipped
 * in meanwhile (then the caller must keep processing).
 */
bool vring__enable_kick(struct vring *vr);
bool vring__has_avail(struct vring *vr);

size_t iov__copy_from(const struct iovec *iov, unsigned int n, void *dst,
		      size_t len);
/*
 * Catch SIGBUS in guest memory accesses (the ring functions above, the
 * copies below): the daemon calls it once at start.
 */
int vring__catch_faults(void);
/* A copy faulted on this thread: true until iov__fault_take. */
bool iov__fault_pending(void);
/* If a copy faulted on this thread, mark vr broken and forget it: true. */
bool iov__fault_take(struct vring *vr);
size_t iov__copy_to(const struct iovec *iov, unsigned int n, const void *src,
		    size_t len);

#endif
