// SPDX-License-Identifier: GPL-2.0
/*
 * Split virtqueue walker. The rings are shared with an untrusted driver, so
 * each index is read once into a local, checked, and only then used.
 */
#include <stdio.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "vring.h"

#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

static void *mem_translate(const struct mem_table *mt, uint64_t addr,
			   uint64_t len, bool by_uva)
{
	unsigned int i;

	for (i = 0; i < mt->nregions; i++) {
		const struct mem_region *r = &mt->r[i];
		uint64_t start = by_uva ? r->uva : r->gpa;
		uint64_t off;

		if (addr < start)
			continue;
		off = addr - start;
		if (off >= r->size || len > r->size - off)
			continue;
		return r->host + off;
	}
	return NULL;
}

void *mem__uva_to_host(const struct mem_table *mt, uint64_t uva, uint64_t len)
{
	return mem_translate(mt, uva, len, true);
}

void *mem__gpa_to_host(const struct mem_table *mt, uint64_t gpa, uint64_t len)
{
	return mem_translate(mt, gpa, len, false);
}

void vring__init(struct vring *vr, unsigned int index, unsigned int num,
		 struct vring_desc *desc, struct vring_avail *avail,
		 struct vring_used *used, const struct mem_table *mem,
		 bool event_idx, uint16_t base)
{
	memset(vr, 0, sizeof(*vr));
	vr->index = index;
	vr->num = num;
	vr->desc = desc;
	vr->avail = avail;
	vr->used = used;
	vr->mem = mem;
	vr->event_idx = event_idx;
	vr->last_avail_idx = base;
	vr->used_idx = base;
	vr->signalled_used = base;
	vr->signalled_used_valid = true;
}

static int vring_fail(struct vring *vr, const char *why)
{
	if (!vr->broken)
		fprintf(stderr, "vhost-user-fs: queue %u broken: %s\n",
			vr->index, why);
	vr->broken = true;
	return -1;
}

/*
 * A descriptor may straddle two regions that happen to be adjacent in guest
 * physical space, so map it piecewise.
 */
static int map_desc(struct vring *vr, struct vring_elem *elem, uint64_t addr,
		    uint32_t len, unsigned int *niov)
{
	const struct mem_table *mt = vr->mem;

	while (len) {
		uint32_t chunk = 0;
		unsigned int i;
		void *host = NULL;

		for (i = 0; i < mt->nregions; i++) {
			const struct mem_region *r = &mt->r[i];
			uint64_t off;

			if (addr < r->gpa || addr - r->gpa >= r->size)
				continue;
			off = addr - r->gpa;
			chunk = r->size - off < len ? r->size - off : len;
			host = r->host + off;
			break;
		}
		if (!host)
			return vring_fail(vr, "descriptor outside guest memory");
		if (*niov >= elem->iov_max)
			return vring_fail(vr, "descriptor chain too fragmented");
		elem->iov[*niov].iov_base = host;
		elem->iov[*niov].iov_len = chunk;
		(*niov)++;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}

static int add_desc(struct vring *vr, struct vring_elem *elem,
		    const struct vring_desc *d, unsigned int *niov)
{
	uint64_t addr = READ_ONCE(d->addr);
	uint32_t len = READ_ONCE(d->len);
	uint16_t flags = READ_ONCE(d->flags);

	if (addr + len < addr)
		return vring_fail(vr, "descriptor address wraps");
	if (flags & VRING_DESC_F_WRITE) {
		unsigned int before = *niov;

		if (map_desc(vr, elem, addr, len, niov))
			return -1;
		elem->wr_num += *niov - before;
		elem->wr_len += len;
	} else {
		unsigned int before = *niov;

		if (elem->wr_num)
			return vring_fail(vr, "readable descriptor after writable");
		if (map_desc(vr, elem, addr, len, niov))
			return -1;
		elem->rd_num += *niov - before;
		elem->rd_len += len;
	}
	return 0;
}

static int walk_indirect(struct vring *vr, struct vring_elem *elem,
			 const struct vring_desc *d, unsigned int *niov)
{
	uint64_t addr = READ_ONCE(d->addr);
	uint32_t len = READ_ONCE(d->len);
	const uint8_t *table;
	unsigned int n, i = 0, count = 0;

	if (len == 0 || len % sizeof(struct vring_desc))
		return vring_fail(vr, "bad indirect table length");
	n = len / sizeof(struct vring_desc);
	if (n > vr->num)
		return vring_fail(vr, "indirect table longer than the queue");
	table = mem__gpa_to_host(vr->mem, addr, len);
	if (!table)
		return vring_fail(vr, "indirect table outside guest memory");

	for (;;) {
		/*
		 * One snapshot per entry, copied: the guest may change the
		 * table meanwhile, and nothing makes it place the table
		 * aligned (found by the fuzzer, tests/regress/).
		 */
		struct vring_desc e;
		uint16_t flags;

		memcpy(&e, table + i * sizeof(e), sizeof(e));
		flags = e.flags;
		if (++count > n)
			return vring_fail(vr, "loop in indirect table");
		if (flags & VRING_DESC_F_INDIRECT)
			return vring_fail(vr, "nested indirect table");
		if (add_desc(vr, elem, &e, niov))
			return -1;
		if (!(flags & VRING_DESC_F_NEXT))
			return 0;
		i = e.next;
		if (i >= n)
			return vring_fail(vr, "indirect next out of range");
	}
}

static int pop(struct vring *vr, struct vring_elem *elem)
{
	uint16_t avail_idx, head, i;
	unsigned int count = 0, niov = 0;

	if (vr->broken)
		return -1;
	avail_idx = __atomic_load_n(&vr->avail->idx, __ATOMIC_ACQUIRE);
	if (avail_idx == vr->last_avail_idx)
		return 0;
	if ((uint16_t)(avail_idx - vr->last_avail_idx) > vr->num)
		return vring_fail(vr, "avail index jumped past the queue size");

	head = READ_ONCE(vr->avail->ring[vr->last_avail_idx % vr->num]);
	if (head >= vr->num)
		return vring_fail(vr, "head index out of range");

	elem->head = head;
	elem->rd_num = elem->wr_num = 0;
	elem->rd_len = elem->wr_len = 0;

	i = head;
	for (;;) {
		const struct vring_desc *d = &vr->desc[i];
		uint16_t flags = READ_ONCE(d->flags);

		if (++count > vr->num)
			return vring_fail(vr, "descriptor chain loops");
		if (flags & VRING_DESC_F_INDIRECT) {
			if (flags & VRING_DESC_F_NEXT)
				return vring_fail(vr, "indirect with next flag");
			if (walk_indirect(vr, elem, d, &niov))
				return -1;
			break;
		}
		if (add_desc(vr, elem, d, &niov))
			return -1;
		if (!(flags & VRING_DESC_F_NEXT))
			break;
		i = READ_ONCE(d->next);
		if (i >= vr->num)
			return vring_fail(vr, "next index out of range");
	}
	vr->last_avail_idx++;
	return 1;
}

static void push(struct vring *vr, uint16_t head, uint32_t len)
{
	struct vring_used_elem *ue = &vr->used->ring[vr->used_idx % vr->num];

	WRITE_ONCE(ue->id, head);
	WRITE_ONCE(ue->len, len);
	vr->used_idx++;
	__atomic_store_n(&vr->used->idx, vr->used_idx, __ATOMIC_RELEASE);
}

static inline bool need_event(uint16_t event, uint16_t new, uint16_t old)
{
	return (uint16_t)(new - event - 1) < (uint16_t)(new - old);
}

static bool need_signal(struct vring *vr)
{
	uint16_t old, new, event;
	bool valid;

	/* used->idx must be visible before we read the driver's wishes */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!vr->event_idx)
		return !(READ_ONCE(vr->avail->flags) & VRING_AVAIL_F_NO_INTERRUPT);

	old = vr->signalled_used;
	valid = vr->signalled_used_valid;
	new = vr->signalled_used = vr->used_idx;
	vr->signalled_used_valid = true;
	if (!valid)
		return true;
	event = READ_ONCE(vr->avail->ring[vr->num]);
	return need_event(event, new, old);
}

static bool has_avail(struct vring *vr)
{
	return __atomic_load_n(&vr->avail->idx, __ATOMIC_ACQUIRE) !=
		vr->last_avail_idx;
}

static bool enable_kick(struct vring *vr)
{
	if (vr->event_idx) {
		uint16_t *avail_event = (uint16_t *)((uint8_t *)vr->used + 4 +
						     8 * vr->num);

		WRITE_ONCE(*avail_event, vr->last_avail_idx);
	} else {
		WRITE_ONCE(vr->used->flags, 0);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return has_avail(vr);
}

static size_t copy_from(const struct iovec *iov, unsigned int n, void *dst,
			size_t len)
{
	size_t done = 0;
	unsigned int i;

	for (i = 0; i < n && done < len; i++) {
		size_t c = iov[i].iov_len;

		if (c > len - done)
			c = len - done;
		memcpy((uint8_t *)dst + done, iov[i].iov_base, c);
		done += c;
	}
	return done;
}

static size_t copy_to(const struct iovec *iov, unsigned int n,
		      const void *src, size_t len)
{
	size_t done = 0;
	unsigned int i;

	for (i = 0; i < n && done < len; i++) {
		size_t c = iov[i].iov_len;

		if (c > len - done)
			c = len - done;
		memcpy(iov[i].iov_base, (const uint8_t *)src + done, c);
		done += c;
	}
	return done;
}

/*
 * ---- guest memory faults ----
 *
 * A page of guest memory can raise SIGBUS when touched: the region's file
 * was truncated after SET_MEM_TABLE checked it (a file that takes no
 * F_SEAL_SHRINK). Every access to guest memory goes through the wrappers
 * below, which catch it: the ring is marked broken (a copy's fault is
 * taken by the caller, iov__fault_take), as for any other bad ring, and
 * the daemon goes on serving. SIGBUS anywhere else kills as before.
 */
/* volatile, and fenced: the stores must not be merged around the access */
static __thread sigjmp_buf *volatile guest_jb;
static __thread bool copy_faulted;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (guest_jb)
		siglongjmp(*guest_jb, 1);
	/* not a guest access: die of it when the access runs again */
	signal(sig, SIG_DFL);
}

int vring__catch_faults(void)
{
	struct sigaction sa = {
		.sa_sigaction = on_sigbus,
		/* no mask to restore after the jump (sigsetjmp(, 0)) */
		.sa_flags = SA_SIGINFO | SA_NODEFER,
	};

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL);
}

#define GUARDED(fail_expr, call)				\
	do {							\
		sigjmp_buf jb;					\
								\
		if (sigsetjmp(jb, 0)) {				\
			guest_jb = NULL;			\
			fail_expr;				\
		}						\
		guest_jb = &jb;					\
		__atomic_signal_fence(__ATOMIC_SEQ_CST);	\
		call;						\
		__atomic_signal_fence(__ATOMIC_SEQ_CST);	\
		guest_jb = NULL;				\
	} while (0)

static const char fault_msg[] = "guest memory fault (SIGBUS): the region's file shrank";

int vring__pop(struct vring *vr, struct vring_elem *elem)
{
	int r = -1;

	GUARDED(return vring_fail(vr, fault_msg), r = pop(vr, elem));
	return r;
}

void vring__push(struct vring *vr, uint16_t head, uint32_t len)
{
	GUARDED(vring_fail(vr, fault_msg); return, push(vr, head, len));
}

bool vring__need_signal(struct vring *vr)
{
	bool r = false;

	GUARDED(vring_fail(vr, fault_msg); return false, r = need_signal(vr));
	return r;
}

bool vring__has_avail(struct vring *vr)
{
	bool r = false;

	GUARDED(vring_fail(vr, fault_msg); return false, r = has_avail(vr));
	return r;
}

bool vring__enable_kick(struct vring *vr)
{
	bool r = false;

	GUARDED(vring_fail(vr, fault_msg); return false, r = enable_kick(vr));
	return r;
}

size_t iov__copy_from(const struct iovec *iov, unsigned int n, void *dst,
		      size_t len)
{
	size_t r = 0;

	GUARDED(copy_faulted = true; return 0, r = copy_from(iov, n, dst, len));
	return r;
}

size_t iov__copy_to(const struct iovec *iov, unsigned int n, const void *src,
		    size_t len)
{
	size_t r = 0;

	GUARDED(copy_faulted = true; return 0, r = copy_to(iov, n, src, len));
	return r;
}

bool iov__fault_pending(void)
{
	return copy_faulted;
}

bool iov__fault_take(struct vring *vr)
{
	if (!copy_faulted)
		return false;
	copy_faulted = false;
	vring_fail(vr, fault_msg);
	return true;
}
