/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The open-file table: FUSE file handles for the fds of OPEN, CREATE,
 * TMPFILE and OPENDIR, until RELEASE. A handle is (generation << 32 |
 * slot), so a released handle's number never reaches a reused slot. Each
 * open file is counted against --max-files through its inode.
 */
#ifndef VHOST_USER_FS_FILE_TABLE_H
#define VHOST_USER_FS_FILE_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct inode;
struct inode_table;
struct open_file;

struct file_table {
	struct inode_table *it;
	pthread_mutex_t lock;		/* protects everything below */
	struct open_file *files;
	uint32_t nfiles;
	uint32_t free_file;		/* 0 = none; slot 0 is never used */
};

void file_table__init(struct file_table *ft, struct inode_table *it);
void file_table__destroy(struct file_table *ft);
/* Releases every handle; those in use close when their user is done. */
void file_table__close_all(struct file_table *ft);

/* Takes fd and an open count of ino: *fh, or -ENFILE/-ENOMEM. */
int file__new(struct file_table *ft, int fd, struct inode *ino, bool is_dir,
	      uint64_t *fh);
/*
 * The fd of a live handle of that kind, held until file__put() so that a
 * concurrent RELEASE cannot close it under us; -EBADF if there is none.
 */
int file__get(struct file_table *ft, uint64_t fh, bool want_dir);
void file__put(struct file_table *ft, uint64_t fh);
/*
 * The RWF_NOWAIT calls a handle's file system refused (EOPNOTSUPP), not
 * tried again on it.
 */
#define FILE_NOWAIT_READ	1u
#define FILE_NOWAIT_WRITE	2u
bool file__nowait_refused(struct file_table *ft, uint64_t fh,
			  unsigned int what);
void file__nowait_refuse(struct file_table *ft, uint64_t fh,
			 unsigned int what);
/* RELEASE/RELEASEDIR: 0 or -EBADF. */
int file__release(struct file_table *ft, uint64_t fh, bool is_dir);

#endif
