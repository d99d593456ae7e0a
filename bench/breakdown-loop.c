// SPDX-License-Identifier: GPL-2.0
/*
 * breakdown-loop: the guest side of bench/breakdown.sh. Runs one operation
 * in windows of N calls each, and lets the host start and stop its tools
 * (perf record, perf trace) around a window through files in CTL, a host
 * directory (hostfs in UML):
 *
 *   guest: writes CTL/ready.W, waits for CTL/go.W, runs N operations,
 *          writes CTL/done.W ("n=N ns=WALL"), waits for CTL/ack.W
 *   host:  starts its tool, creates go.W; on done.W stops it, creates ack.W
 *
 * So a window holds exactly N operations and nothing else but the polls at
 * its edges (a stat() of the CTL file every 100 ms while idle). The wall
 * time of a window comes from two clock_gettime() calls around the loop.
 *
 *   breakdown-loop OP DIR N WINDOWS CTL
 *
 * OP, each call of which is one operation:
 *   stat        stat() of one file (with cache=never: LOOKUP + GETATTR)
 *   unlink      unlink() of a file created before, caches dropped since
 *   create      open(O_CREAT|O_EXCL) + write(4 KiB) + close() of a new file
 *   readdirect  pread() of 4 KiB at offset 0 of an O_DIRECT descriptor
 *   readcache   pread() of the next 4 KiB of a file whose pages were
 *               dropped, POSIX_FADV_RANDOM (no readahead beyond the page:
 *               one 4 KiB FUSE_READ per call, sent by readahead)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLK 4096

enum op { OP_STAT, OP_UNLINK, OP_CREATE, OP_READDIRECT, OP_READCACHE };

static char *buf;

static void die(const char *what)
{
	fprintf(stderr, "breakdown-loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void drop_caches(void)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3", 1) != 1)
		die("drop_caches");
	close(fd);
}

static void put_file(const char *ctl, const char *name, long w, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%ld", ctl, name, w);
	f = fopen(path, "w");
	if (!f)
		die(path);
	fputs(text, f);
	if (fclose(f))
		die(path);
}

static void wait_file(const char *ctl, const char *name, long w)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s.%ld", ctl, name, w);
	while (stat(path, &st))
		nanosleep(&tick, NULL);
}

static void fname(char *p, size_t len, long i)
{
	snprintf(p, len, "f%07ld", i);
}

int main(int argc, char **argv)
{
	const char *op, *dir, *ctl;
	long n, windows, w, i, base;
	char path[4200], text[128];
	int fd = -1;
	enum op kind;
	uint64_t t0, t1;
	struct stat st;

	if (argc != 6) {
		fprintf(stderr, "usage: breakdown-loop OP DIR N WINDOWS CTL\n");
		return 2;
	}
	op = argv[1];
	dir = argv[2];
	ctl = argv[5];
	n = atol(argv[3]);
	windows = atol(argv[4]);
	if (n <= 0 || windows <= 0)
		return 2;
	if (posix_memalign((void **)&buf, BLK, BLK))
		die("posix_memalign");
	memset(buf, 'x', BLK);
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	/* One path component per operation: names are relative to DIR */
	if (chdir(dir))
		die(dir);

	/* Setup, outside every window */
	if (!strcmp(op, "stat")) {
		kind = OP_STAT;
		snprintf(path, sizeof(path), "statfile");
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		if (fd < 0)
			die(path);
		close(fd);
	} else if (!strcmp(op, "unlink")) {
		kind = OP_UNLINK;
		for (i = 0; i < n * windows; i++) {
			fname(path, sizeof(path), i);
			fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
			if (fd < 0)
				die(path);
			close(fd);
		}
		drop_caches();
	} else if (!strcmp(op, "readdirect")) {
		kind = OP_READDIRECT;
		snprintf(path, sizeof(path), "readfile");
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0 || write(fd, buf, BLK) != BLK)
			die(path);
		close(fd);
		fd = open(path, O_RDONLY | O_DIRECT);
		if (fd < 0)
			die(path);
	} else if (!strcmp(op, "readcache")) {
		kind = OP_READCACHE;
		snprintf(path, sizeof(path), "readfile");
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0)
			die(path);
		for (i = 0; i < n * windows; i++)
			if (write(fd, buf, BLK) != BLK)
				die("write");
		close(fd);
		drop_caches();
		fd = open(path, O_RDONLY);
		if (fd < 0)
			die(path);
		errno = posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		if (errno)
			die("posix_fadvise");
	} else if (!strcmp(op, "create")) {
		kind = OP_CREATE;
	} else {
		fprintf(stderr, "breakdown-loop: unknown OP '%s'\n", op);
		return 2;
	}

	for (w = 1; w <= windows; w++) {
		base = (w - 1) * n;
		snprintf(text, sizeof(text), "n=%ld\n", n);
		put_file(ctl, "ready", w, text);
		wait_file(ctl, "go", w);
		t0 = now_ns();
		for (i = base; i < base + n; i++) {
			switch (kind) {
			case OP_STAT:
				if (stat(path, &st))
					die("stat");
				break;
			case OP_UNLINK:
				fname(path, sizeof(path), i);
				if (unlink(path))
					die("unlink");
				break;
			case OP_CREATE:
				fname(path, sizeof(path), i);
				fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
				if (fd < 0)
					die("create");
				if (write(fd, buf, BLK) != BLK)
					die("write");
				if (close(fd))
					die("close");
				break;
			case OP_READDIRECT:
				if (pread(fd, buf, BLK, 0) != BLK)
					die("pread");
				break;
			case OP_READCACHE:
				if (pread(fd, buf, BLK, i * BLK) != BLK)
					die("pread");
				break;
			}
		}
		t1 = now_ns();
		snprintf(text, sizeof(text), "n=%ld ns=%llu\n", n,
			 (unsigned long long)(t1 - t0));
		put_file(ctl, "done", w, text);
		wait_file(ctl, "ack", w);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
