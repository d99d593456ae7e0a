// SPDX-License-Identifier: GPL-2.0
/*
 * Inode table with a bounded O_PATH fd cache.
 *
 * The table lock is never held across a system call: opening a handle,
 * making one and closing evicted fds all happen outside it, and the
 * results are re-checked against the table afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inode.h"

#define CLOSE_BATCH	8

struct inode {
	uint64_t nodeid;
	dev_t dev;
	ino_t ino;
	mode_t type;
	uint64_t nlookup;		/* the guest's references */
	unsigned int refs;		/* requests in flight + open files */
	unsigned int opens;
	unsigned int fd_users;		/* requests using ->fd right now */
	int fd;				/* O_PATH, -1 when evicted */
	bool pinned;			/* fd may never be evicted */
	bool in_lru;
	bool hashed;			/* found by (dev, ino); false once stale */
	bool held;			/* its pin counts in table->held */
	int mount_fd;
	struct file_handle *fh;
	struct inode *hnext;
	struct inode *lru_prev, *lru_next;
};

static uint32_t hash_key(dev_t dev, ino_t ino, uint32_t nbuckets)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;

	return (uint32_t)(h ^ (h >> 29)) & (nbuckets - 1);
}

static void lru_del(struct inode_table *t, struct inode *ino)
{
	if (!ino->in_lru)
		return;
	if (ino->lru_prev)
		ino->lru_prev->lru_next = ino->lru_next;
	else
		t->lru_head = ino->lru_next;
	if (ino->lru_next)
		ino->lru_next->lru_prev = ino->lru_prev;
	else
		t->lru_tail = ino->lru_prev;
	ino->lru_prev = ino->lru_next = NULL;
	ino->in_lru = false;
}

static void lru_add_head(struct inode_table *t, struct inode *ino)
{
	ino->lru_prev = NULL;
	ino->lru_next = t->lru_head;
	if (t->lru_head)
		t->lru_head->lru_prev = ino;
	else
		t->lru_tail = ino;
	t->lru_head = ino;
	ino->in_lru = true;
}

static void lru_touch(struct inode_table *t, struct inode *ino)
{
	if (ino->pinned || t->lru_head == ino)
		return;
	lru_del(t, ino);
	lru_add_head(t, ino);
}

/* Collects fds to close once the lock is dropped. */
static int evict_locked(struct inode_table *t, int *out)
{
	struct inode *ino = t->lru_tail;
	int n = 0;

	while (t->nfds > t->fd_max && ino && n < CLOSE_BATCH) {
		struct inode *prev = ino->lru_prev;

		if (!ino->fd_users && !ino->opens && ino->fh) {
			lru_del(t, ino);
			out[n++] = ino->fd;
			ino->fd = -1;
			t->nfds--;
		}
		ino = prev;
	}
	return n;
}

static void close_all(const int *fds, int n)
{
	while (n--)
		close(fds[n]);
}

/*
 * A free slot holds the next free slot's number, shifted and tagged with
 * the low bit, which no inode pointer has.
 */
static struct inode *free_link(uint32_t next)
{
	return (struct inode *)(((uintptr_t)next << 1) | 1);
}

static bool slot_is_free(const struct inode *p)
{
	return !p || ((uintptr_t)p & 1);
}

static uint32_t free_next(const struct inode *p)
{
	return (uint32_t)((uintptr_t)p >> 1);
}

static struct inode *slot_find_locked(struct inode_table *t, uint64_t nodeid)
{
	uint32_t slot = (uint32_t)nodeid;

	if (slot == 0 || slot >= t->nslots || slot_is_free(t->slots[slot]) ||
	    t->gens[slot] != (uint32_t)(nodeid >> 32))
		return NULL;
	return t->slots[slot];
}

static int slot_alloc_locked(struct inode_table *t, struct inode *ino)
{
	uint32_t slot = t->free_head;

	if (!slot) {
		uint32_t n = t->nslots ? t->nslots * 2 : 1024, i;
		struct inode **s = realloc(t->slots, n * sizeof(*s));
		uint32_t *g;

		if (!s)
			return -ENOMEM;
		t->slots = s;
		g = realloc(t->gens, n * sizeof(*g));
		if (!g)
			return -ENOMEM;
		t->gens = g;
		/* slot 0 is never used; slot 1 is the root (FUSE_ROOT_ID) */
		for (i = n - 1; i >= (t->nslots ? t->nslots : 2); i--) {
			s[i] = free_link(t->free_head);
			g[i] = 0;
			t->free_head = i;
		}
		if (!t->nslots)
			s[0] = s[1] = NULL, g[0] = g[1] = 0;
		t->nslots = n;
		slot = t->free_head;
	}
	t->free_head = free_next(t->slots[slot]);
	t->slots[slot] = ino;
	ino->nodeid = ((uint64_t)t->gens[slot] << 32) | slot;
	return 0;
}

static int hash_grow_locked(struct inode_table *t)
{
	uint32_t n = t->nbuckets * 2, i;
	struct inode **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < t->nbuckets; i++) {
		struct inode *ino = t->buckets[i], *next;

		for (; ino; ino = next) {
			uint32_t h = hash_key(ino->dev, ino->ino, n);

			next = ino->hnext;
			ino->hnext = b[h];
			b[h] = ino;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
	return 0;
}

static struct inode *hash_find_locked(struct inode_table *t, dev_t dev,
				      ino_t ino)
{
	struct inode *i = t->buckets[hash_key(dev, ino, t->nbuckets)];

	for (; i; i = i->hnext)
		if (i->dev == dev && i->ino == ino)
			return i;
	return NULL;
}

/* Unlinks a dead inode; returns its fd for closing outside the lock. */
static int free_locked(struct inode_table *t, struct inode *ino)
{
	struct inode **pp = &t->buckets[hash_key(ino->dev, ino->ino,
						 t->nbuckets)];
	uint32_t slot = (uint32_t)ino->nodeid;
	int fd = ino->fd;

	if (ino->hashed) {
		while (*pp != ino)
			pp = &(*pp)->hnext;
		*pp = ino->hnext;
	}
	lru_del(t, ino);
	t->slots[slot] = free_link(t->free_head);
	t->gens[slot]++;
	t->free_head = slot;
	if (fd >= 0)
		t->nfds--;
	if (ino->held)
		t->held--;
	t->count--;
	free(ino->fh);
	free(ino);
	return fd;
}

static bool dead(const struct inode *ino)
{
	return !ino->nlookup && !ino->refs;
}

static int reopen(const struct inode *ino)
{
	int fd = open_by_handle_at(ino->mount_fd, ino->fh, O_PATH | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	return fd;
}

struct inode *inode__get(struct inode_table *t, uint64_t nodeid, int *err)
{
	int closing[CLOSE_BATCH + 1], nclose = 0, fd;
	struct inode *ino;

	pthread_mutex_lock(&t->lock);
	ino = slot_find_locked(t, nodeid);
	if (!ino) {
		pthread_mutex_unlock(&t->lock);
		*err = ENOENT;
		return NULL;
	}
	ino->refs++;
	ino->fd_users++;
	if (ino->fd >= 0) {
		lru_touch(t, ino);
		pthread_mutex_unlock(&t->lock);
		return ino;
	}
	pthread_mutex_unlock(&t->lock);

	fd = reopen(ino);

	pthread_mutex_lock(&t->lock);
	if (fd < 0) {
		ino->fd_users--;
		ino->refs--;
		if (dead(ino))
			closing[nclose++] = free_locked(t, ino);
		pthread_mutex_unlock(&t->lock);
		if (nclose && closing[0] >= 0)
			close(closing[0]);
		*err = -fd;
		return NULL;
	}
	if (ino->fd < 0) {
		ino->fd = fd;
		t->nfds++;
		lru_add_head(t, ino);
		nclose = evict_locked(t, closing);
	} else {
		closing[nclose++] = fd;
	}
	pthread_mutex_unlock(&t->lock);
	close_all(closing, nclose);
	return ino;
}

void inode__put(struct inode_table *t, struct inode *ino)
{
	int fd = -1;

	if (!ino)
		return;
	pthread_mutex_lock(&t->lock);
	ino->fd_users--;
	ino->refs--;
	if (dead(ino))
		fd = free_locked(t, ino);
	pthread_mutex_unlock(&t->lock);
	if (fd >= 0)
		close(fd);
}

int inode__fd(const struct inode *ino)
{
	return ino->fd;
}

uint64_t inode__nodeid(const struct inode *ino)
{
	return ino->nodeid;
}

mode_t inode__type(const struct inode *ino)
{
	return ino->type;
}

dev_t inode__dev(const struct inode *ino)
{
	return ino->dev;
}

/*
 * open_by_handle_at() wants an fd on the same mount that is not O_PATH;
 * keep one per mount, opened the first time an inode of it shows up.
 */
static int mount_fd_for(struct inode_table *t, int mount_id, int fd,
			const struct stat *st)
{
	char name[32];
	int i, mfd;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nmounts; i++) {
		if (t->mounts[i].id == mount_id) {
			mfd = t->mounts[i].fd;
			pthread_mutex_unlock(&t->lock);
			return mfd;
		}
	}
	pthread_mutex_unlock(&t->lock);

	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
		return -1;
	snprintf(name, sizeof(name), "%d", fd);
	mfd = openat(t->proc_fd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (mfd < 0)
		return -1;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nmounts; i++) {
		if (t->mounts[i].id == mount_id) {
			pthread_mutex_unlock(&t->lock);
			close(mfd);
			return t->mounts[i].fd;
		}
	}
	if (t->nmounts == t->mounts_cap) {
		int n = t->mounts_cap ? t->mounts_cap * 2 : 16;
		struct inode_mount *m = realloc(t->mounts, n * sizeof(*m));

		if (!m) {
			pthread_mutex_unlock(&t->lock);
			close(mfd);
			return -1;
		}
		t->mounts = m;
		t->mounts_cap = n;
	}
	t->mounts[t->nmounts].id = mount_id;
	t->mounts[t->nmounts].fd = mfd;
	t->nmounts++;
	pthread_mutex_unlock(&t->lock);
	return mfd;
}

static struct inode *inode_new(struct inode_table *t, int fd,
			       const struct stat *st)
{
	struct inode *ino = calloc(1, sizeof(*ino));
	struct file_handle *fh;
	int mount_id;

	if (!ino)
		return NULL;
	ino->dev = st->st_dev;
	ino->ino = st->st_ino;
	ino->type = st->st_mode & S_IFMT;
	ino->fd = fd;
	ino->mount_fd = -1;

	fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	if (!fh) {
		free(ino);
		return NULL;
	}
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (!name_to_handle_at(fd, "", fh, &mount_id, AT_EMPTY_PATH))
		ino->mount_fd = mount_fd_for(t, mount_id, fd, st);
	if (ino->mount_fd >= 0) {
		/* most handles are far below MAX_HANDLE_SZ: keep what is used */
		struct file_handle *small = realloc(fh, sizeof(*fh) +
						    fh->handle_bytes);

		ino->fh = small ? small : fh;
		/* kept for identity only: it will never be decoded */
		ino->pinned = t->pin_all;
	} else {
		/* no handles on this file system: keep the fd for good */
		free(fh);
		ino->pinned = true;
	}
	return ino;
}

static bool same_handle(const struct file_handle *a,
			const struct file_handle *b)
{
	return a && b && a->handle_type == b->handle_type &&
		a->handle_bytes == b->handle_bytes &&
		!memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

/*
 * Is the entry found by (dev, ino) the object at the new fd (described by
 * fresh, or NULL if not made yet)? An entry holding an fd keeps its host
 * inode alive, so its number cannot have been reused; an evicted one may
 * name a freed inode whose number now belongs to something else, which
 * its file handle (with the inode's generation) tells apart.
 */
static bool entry_matches(const struct inode *ino, const struct stat *st,
			  const struct inode *fresh)
{
	if (ino->type != (st->st_mode & S_IFMT))
		return false;
	if (ino->fd >= 0)
		return true;
	return fresh && same_handle(ino->fh, fresh->fh);
}

/* A stale entry keeps its nodeid until forgotten, but is found no more. */
static void unhash_locked(struct inode_table *t, struct inode *ino)
{
	struct inode **pp = &t->buckets[hash_key(ino->dev, ino->ino,
						 t->nbuckets)];

	while (*pp != ino)
		pp = &(*pp)->hnext;
	*pp = ino->hnext;
	ino->hnext = NULL;
	ino->hashed = false;
}

struct inode *inode__lookup_fd(struct inode_table *t, int fd,
			       const struct stat *st, int *err)
{
	int closing[CLOSE_BATCH + 1], nclose = 0;
	struct inode *ino, *fresh = NULL;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		ino = hash_find_locked(t, st->st_dev, st->st_ino);
		if (ino && entry_matches(ino, st, fresh))
			break;
		if (fresh) {
			/* a different object now has this inode number */
			if (ino)
				unhash_locked(t, ino);
			ino = NULL;
			break;
		}
		pthread_mutex_unlock(&t->lock);
		fresh = inode_new(t, fd, st);
		if (!fresh) {
			close(fd);
			*err = ENOMEM;
			return NULL;
		}
		pthread_mutex_lock(&t->lock);
	}

	if (ino) {
		if (fresh) {
			free(fresh->fh);
			free(fresh);
		}
		if (ino->fd < 0) {
			ino->fd = fd;
			t->nfds++;
			lru_add_head(t, ino);
		} else {
			closing[nclose++] = fd;
			lru_touch(t, ino);
		}
	} else {
		ino = fresh;
		if (ino->pinned && t->root) {
			/* no handle: its fd stays open until FORGET */
			if (t->held >= t->held_max) {
				pthread_mutex_unlock(&t->lock);
				free(ino->fh);
				free(ino);
				close(fd);
				*err = ENFILE;
				return NULL;
			}
			t->held++;
			ino->held = true;
		}
		/* a failed grow only makes the chains longer */
		if (t->count >= t->nbuckets)
			hash_grow_locked(t);
		if (slot_alloc_locked(t, ino)) {
			pthread_mutex_unlock(&t->lock);
			free(ino->fh);
			free(ino);
			close(fd);
			*err = ENOMEM;
			return NULL;
		}
		{
			uint32_t h = hash_key(ino->dev, ino->ino, t->nbuckets);

			ino->hnext = t->buckets[h];
			t->buckets[h] = ino;
			ino->hashed = true;
		}
		t->count++;
		t->nfds++;
		if (!ino->pinned)
			lru_add_head(t, ino);
	}
	ino->nlookup++;
	ino->refs++;
	ino->fd_users++;
	nclose += evict_locked(t, closing + nclose);
	pthread_mutex_unlock(&t->lock);
	close_all(closing, nclose);
	return ino;
}

bool inode__is(const struct inode *ino, const struct stat *st)
{
	return ino->dev == st->st_dev && ino->ino == st->st_ino &&
		ino->type == (st->st_mode & S_IFMT);
}

/*
 * The last name of a known inode is about to go: its handle will turn
 * stale, but the guest may still use the inode (writeback of times after
 * close, a removed working directory), so make sure it has an fd and keep
 * that fd until the inode is forgotten.
 */
int inode__pin_unlinked(struct inode_table *t, const struct stat *st)
{
	struct inode *ino;
	int fd = -1, extra = -1, err = 0;

	pthread_mutex_lock(&t->lock);
	ino = hash_find_locked(t, st->st_dev, st->st_ino);
	if (!ino || ino->pinned) {
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	if (t->held >= t->held_max) {
		pthread_mutex_unlock(&t->lock);
		return -ENFILE;
	}
	t->held++;
	ino->refs++;
	ino->fd_users++;
	if (ino->fd < 0) {
		pthread_mutex_unlock(&t->lock);
		fd = reopen(ino);
		pthread_mutex_lock(&t->lock);
		if (fd >= 0 && ino->fd < 0) {
			ino->fd = fd;
			t->nfds++;
		} else {
			extra = fd;
		}
	}
	if (ino->fd >= 0 && !ino->pinned) {
		lru_del(t, ino);
		ino->pinned = true;
		ino->held = true;
	} else {
		/* no fd to pin, or pinned meanwhile by another remover */
		t->held--;
	}
	ino->fd_users--;
	ino->refs--;
	if (dead(ino))
		fd = free_locked(t, ino);
	else
		fd = -1;
	pthread_mutex_unlock(&t->lock);
	if (extra >= 0)
		close(extra);
	if (fd >= 0)
		close(fd);
	return err;
}

void inode__forget(struct inode_table *t, uint64_t nodeid, uint64_t n)
{
	struct inode *ino;
	int fd = -1;

	pthread_mutex_lock(&t->lock);
	ino = slot_find_locked(t, nodeid);
	if (ino && ino != t->root) {
		ino->nlookup -= n < ino->nlookup ? n : ino->nlookup;
		if (dead(ino))
			fd = free_locked(t, ino);
	}
	pthread_mutex_unlock(&t->lock);
	if (fd >= 0)
		close(fd);
}

int inode__open_get(struct inode_table *t, struct inode *ino)
{
	int err = 0;

	pthread_mutex_lock(&t->lock);
	if (t->held >= t->held_max) {
		err = -ENFILE;
	} else {
		t->held++;
		ino->refs++;
		ino->opens++;
	}
	pthread_mutex_unlock(&t->lock);
	return err;
}

bool inode__open_room(struct inode_table *t)
{
	bool room;

	pthread_mutex_lock(&t->lock);
	room = t->held < t->held_max;
	pthread_mutex_unlock(&t->lock);
	return room;
}

void inode__open_put(struct inode_table *t, struct inode *ino)
{
	int fd = -1;

	pthread_mutex_lock(&t->lock);
	t->held--;
	ino->opens--;
	ino->refs--;
	if (dead(ino))
		fd = free_locked(t, ino);
	pthread_mutex_unlock(&t->lock);
	if (fd >= 0)
		close(fd);
}

void inode__counts(struct inode_table *t, unsigned long *inodes,
		   unsigned long *fds)
{
	pthread_mutex_lock(&t->lock);
	*inodes = t->count;
	*fds = t->nfds;
	pthread_mutex_unlock(&t->lock);
}

void inode__table_reset(struct inode_table *t)
{
	uint32_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 2; i < t->nslots; i++) {
		struct inode *ino = t->slots[i];
		int fd;

		if (slot_is_free(ino) || ino == t->root)
			continue;
		/* a request still holding it frees it on its last put */
		ino->nlookup = 0;
		if (!dead(ino))
			continue;
		fd = free_locked(t, ino);
		if (fd >= 0)
			close(fd);
	}
	pthread_mutex_unlock(&t->lock);
}

void inode__table_destroy(struct inode_table *t)
{
	int i;

	inode__table_reset(t);
	if (t->root) {
		t->root->nlookup = 0;
		pthread_mutex_lock(&t->lock);
		i = free_locked(t, t->root);
		pthread_mutex_unlock(&t->lock);
		if (i >= 0)
			close(i);
		t->root = NULL;
	}
	for (i = 0; i < t->nmounts; i++)
		close(t->mounts[i].fd);
	free(t->mounts);
	free(t->slots);
	free(t->gens);
	free(t->buckets);
	if (t->proc_fd >= 0)
		close(t->proc_fd);
	pthread_mutex_destroy(&t->lock);
}

int inode__table_init(struct inode_table *t, int root_fd, unsigned long fd_max,
		      unsigned long held_max, bool pin_all)
{
	struct inode *root;
	struct stat st;
	int err = 0;

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->fd_max = fd_max;
	t->held_max = held_max;
	t->pin_all = pin_all;
	t->nbuckets = 1024;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->proc_fd < 0)
		return -errno;
	if (fstatat(root_fd, "", &st, AT_EMPTY_PATH))
		return -errno;

	root = inode__lookup_fd(t, root_fd, &st, &err);
	if (!root)
		return -err;
	pthread_mutex_lock(&t->lock);
	/* FUSE_ROOT_ID is 1: move the root into slot 1 */
	t->slots[(uint32_t)root->nodeid] = free_link(t->free_head);
	t->free_head = (uint32_t)root->nodeid;
	t->slots[1] = root;
	t->gens[1] = 0;
	root->nodeid = 1;
	root->pinned = true;
	lru_del(t, root);
	t->root = root;
	root->fd_users--;
	root->refs--;
	pthread_mutex_unlock(&t->lock);
	return 0;
}
