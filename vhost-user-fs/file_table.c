// SPDX-License-Identifier: GPL-2.0
/*
 * The open-file table (file_table.h). Fds are closed outside the lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_table.h"
#include "inode.h"

struct open_file {
	int fd;
	uint32_t gen;
	unsigned int users;		/* requests using fd right now */
	bool live;			/* not yet released */
	bool is_dir;
	unsigned int nowait_refused;	/* FILE_NOWAIT_* */
	struct inode *ino;
	uint32_t next_free;
};

void file_table__init(struct file_table *ft, struct inode_table *it)
{
	memset(ft, 0, sizeof(*ft));
	ft->it = it;
	pthread_mutex_init(&ft->lock, NULL);
}

void file_table__destroy(struct file_table *ft)
{
	free(ft->files);
	ft->files = NULL;
	ft->nfiles = 0;
	ft->free_file = 0;
}

int file__new(struct file_table *ft, int fd, struct inode *ino, bool is_dir,
	      uint64_t *fh)
{
	struct open_file *f;
	uint32_t idx;
	int err;

	/* counted against --max-files before the handle is visible */
	err = inode__open_get(ft->it, ino);
	if (err)
		return err;
	pthread_mutex_lock(&ft->lock);
	if (!ft->free_file) {
		uint32_t n = ft->nfiles ? ft->nfiles * 2 : 256, i;
		struct open_file *v = realloc(ft->files, n * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&ft->lock);
			inode__open_put(ft->it, ino);
			return -ENOMEM;
		}
		for (i = n - 1; i >= (ft->nfiles ? ft->nfiles : 1); i--) {
			memset(&v[i], 0, sizeof(v[i]));
			v[i].next_free = ft->free_file;
			ft->free_file = i;
		}
		ft->files = v;
		ft->nfiles = n;
	}
	idx = ft->free_file;
	f = &ft->files[idx];
	ft->free_file = f->next_free;
	f->fd = fd;
	f->users = 0;
	f->live = true;
	f->is_dir = is_dir;
	f->nowait_refused = 0;
	f->ino = ino;
	*fh = ((uint64_t)f->gen << 32) | idx;
	pthread_mutex_unlock(&ft->lock);
	return 0;
}

static struct open_file *file_find_locked(struct file_table *ft, uint64_t fh)
{
	uint32_t idx = (uint32_t)fh;

	if (!idx || idx >= ft->nfiles || !ft->files[idx].live ||
	    ft->files[idx].gen != (uint32_t)(fh >> 32))
		return NULL;
	return &ft->files[idx];
}

int file__get(struct file_table *ft, uint64_t fh, bool want_dir)
{
	struct open_file *f;
	int fd = -EBADF;

	pthread_mutex_lock(&ft->lock);
	f = file_find_locked(ft, fh);
	if (f && f->is_dir == want_dir) {
		f->users++;
		fd = f->fd;
	}
	pthread_mutex_unlock(&ft->lock);
	return fd;
}

bool file__nowait_refused(struct file_table *ft, uint64_t fh,
			  unsigned int what)
{
	struct open_file *f;
	bool refused;

	pthread_mutex_lock(&ft->lock);
	f = file_find_locked(ft, fh);
	refused = !f || (f->nowait_refused & what);
	pthread_mutex_unlock(&ft->lock);
	return refused;
}

void file__nowait_refuse(struct file_table *ft, uint64_t fh,
			 unsigned int what)
{
	struct open_file *f;

	pthread_mutex_lock(&ft->lock);
	f = file_find_locked(ft, fh);
	if (f)
		f->nowait_refused |= what;
	pthread_mutex_unlock(&ft->lock);
}

static void file_drop_locked(struct file_table *ft, uint32_t idx, int *fd,
			     struct inode **ino)
{
	struct open_file *f = &ft->files[idx];

	*fd = f->fd;
	*ino = f->ino;
	f->fd = -1;
	f->ino = NULL;
	f->gen++;
	f->next_free = ft->free_file;
	ft->free_file = idx;
}

void file__put(struct file_table *ft, uint64_t fh)
{
	uint32_t idx = (uint32_t)fh;
	struct inode *ino = NULL;
	int fd = -1;

	pthread_mutex_lock(&ft->lock);
	if (idx < ft->nfiles && ft->files[idx].users &&
	    --ft->files[idx].users == 0 && !ft->files[idx].live)
		file_drop_locked(ft, idx, &fd, &ino);
	pthread_mutex_unlock(&ft->lock);
	if (fd >= 0)
		close(fd);
	if (ino)
		inode__open_put(ft->it, ino);
}

int file__release(struct file_table *ft, uint64_t fh, bool is_dir)
{
	struct inode *ino = NULL;
	struct open_file *f;
	int fd = -1, err = 0;

	pthread_mutex_lock(&ft->lock);
	f = file_find_locked(ft, fh);
	if (!f || f->is_dir != is_dir) {
		err = -EBADF;
	} else {
		f->live = false;
		if (!f->users)
			file_drop_locked(ft, (uint32_t)fh, &fd, &ino);
	}
	pthread_mutex_unlock(&ft->lock);
	if (fd >= 0)
		close(fd);
	if (ino)
		inode__open_put(ft->it, ino);
	return err;
}

void file_table__close_all(struct file_table *ft)
{
	uint32_t i;

	pthread_mutex_lock(&ft->lock);
	for (i = 1; i < ft->nfiles; i++) {
		struct open_file *f = &ft->files[i];
		struct inode *ino;
		int fd;

		if (!f->live)
			continue;
		f->live = false;
		if (f->users)
			continue;
		file_drop_locked(ft, i, &fd, &ino);
		pthread_mutex_unlock(&ft->lock);
		close(fd);
		inode__open_put(ft->it, ino);
		pthread_mutex_lock(&ft->lock);
	}
	pthread_mutex_unlock(&ft->lock);
}
