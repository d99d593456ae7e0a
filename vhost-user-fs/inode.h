/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inodes the guest knows, keyed by (st_dev, st_ino) and named to the guest
 * by an opaque nodeid. Each holds a file handle; its O_PATH fd lives in a
 * bounded cache and is reopened from the handle after eviction, because the
 * host's open-file limit is far below the number of inodes a guest may know.
 */
#ifndef VHOST_USER_FS_INODE_H
#define VHOST_USER_FS_INODE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct inode;

struct inode_table {
	pthread_mutex_t lock;		/* protects everything in the table */
	struct inode **slots;		/* nodeid's low 32 bits index this */
	uint32_t *gens;			/* nodeid's high 32 bits */
	uint32_t nslots;
	uint32_t free_head;		/* free slot list, 0 = none */
	struct inode **buckets;
	uint32_t nbuckets;
	unsigned long count;
	struct inode *lru_head, *lru_tail;	/* inodes with an open fd */
	unsigned long nfds;
	unsigned long fd_max;
	unsigned long held;		/* open files + pinned fds */
	unsigned long held_max;		/* beyond it: ENFILE */
	int proc_fd;			/* /proc/self/fd */
	/*
	 * One fd per mount seen in the share, for open_by_handle_at(). Keyed
	 * by mount id, which the kernel reuses only once a mount is freed:
	 * the entry's fd keeps its mount (even a lazily unmounted one), so
	 * its id cannot come to name another mount while the entry exists.
	 */
	int nmounts, mounts_cap;
	struct inode_mount { int id; int fd; } *mounts;
	struct inode *root;
	/*
	 * Every inode keeps its fd until FORGET (bounded by held_max): the
	 * sandbox's daemon cannot decode file handles (README: Security
	 * model). Handles are still taken, to tell inodes apart.
	 */
	bool pin_all;
};

/*
 * fd_max bounds the cache of O_PATH fds; held_max bounds the fds a guest
 * can make the table hold outside it: open files (each keeps its inode's
 * fd too) and the fds of unlinked or handle-less inodes.
 */
int inode__table_init(struct inode_table *t, int root_fd, unsigned long fd_max,
		      unsigned long held_max, bool pin_all);
/* Close and free everything; no request may be in flight. */
void inode__table_destroy(struct inode_table *t);
/* Drop every inode but the root; no request may be in flight. */
void inode__table_reset(struct inode_table *t);

/* Reference + usable fd, or NULL with *err set (ENOENT for bad nodeids). */
struct inode *inode__get(struct inode_table *t, uint64_t nodeid, int *err);
void inode__put(struct inode_table *t, struct inode *ino);
int inode__fd(const struct inode *ino);
uint64_t inode__nodeid(const struct inode *ino);
mode_t inode__type(const struct inode *ino);
/* The host device of the object (st_dev): its file system. */
dev_t inode__dev(const struct inode *ino);

/*
 * The guest learned about the object open at fd (whose stat is st): count a
 * lookup and return it referenced like inode__get(). Takes fd over.
 */
struct inode *inode__lookup_fd(struct inode_table *t, int fd,
			       const struct stat *st, int *err);
/* Is st (from an fstat of the inode's fd) the object the entry names? */
bool inode__is(const struct inode *ino, const struct stat *st);
void inode__forget(struct inode_table *t, uint64_t nodeid, uint64_t n);
/*
 * Before removing a name that may be an inode's last one: 0, or -ENFILE
 * if the inode would need a pinned fd beyond held_max.
 */
int inode__pin_unlinked(struct inode_table *t, const struct stat *st);
/*
 * An open file keeps the inode and its fd (an unlinked file has no
 * handle): 0, or -ENFILE beyond held_max.
 */
int inode__open_get(struct inode_table *t, struct inode *ino);
/* Is there room for one more open file? (a hint: open_get decides) */
bool inode__open_room(struct inode_table *t);
void inode__open_put(struct inode_table *t, struct inode *ino);

void inode__counts(struct inode_table *t, unsigned long *inodes,
		   unsigned long *fds);

#endif
