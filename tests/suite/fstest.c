// SPDX-License-Identifier: GPL-2.0
/*
 * fstest - POSIX file-system semantics checks, run inside a guest on a
 * mounted virtio-fs share (and on host tmpfs/ext4 as the reference).
 *
 *   fstest DIR [-k CASE_GLOB]... [-l] [-v] [-K] [-t SECONDS]
 *
 * Every case runs in a forked child, with its own fresh directory
 * DIR/fstest.PID/NAME as the working directory, so a crash, a hang (the
 * child gets SIGALRM) or a leaked fd stays within its case.  One line per
 * case: "ok NAME", "not ok NAME: reason" or "skip NAME: reason", then
 * "N passed, N failed, N skipped".  Exit status 1 if anything failed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "fstest.h"

char *why;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define KiB (1024L)
#define MiB (1024L * 1024)
#define GiB (1024L * 1024 * 1024)

/* ---------------------------------------------------------------- helpers */

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		perror("malloc");
		exit(1);
	}
	return p;
}

/* Content that differs per seed and per offset, so a misplaced block shows. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static unsigned char pat_byte(unsigned int seed, off_t off)
{
	uint64_t x = mix64(((uint64_t)seed << 48) ^ (uint64_t)(off >> 3));

	return x >> ((off & 7) * 8);
}

static void pat_fill(void *buf, size_t len, unsigned int seed, off_t off)
{
	unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = pat_byte(seed, off + i);
}

/* Index of the first byte that is not the pattern, or -1. */
static long pat_check(const void *buf, size_t len, unsigned int seed, off_t off)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pat_byte(seed, off + i))
			return i;
	return -1;
}

static long zero_check(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return i;
	return -1;
}

static ssize_t pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done,
				   off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		done += n;
	}
	return done;
}

/* Reads until @len bytes or EOF: a short count means EOF. */
static ssize_t pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/* Create @path holding @len bytes of pattern @seed. */
static int make_file(const char *path, unsigned int seed, size_t len)
{
	char *buf = xmalloc(len ? len : 1);
	int fd = SYS(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));

	pat_fill(buf, len, seed, 0);
	EQ(pwrite_all(fd, buf, len, 0), (long)len);
	SYS(close(fd));
	free(buf);
	return R_PASS;
}

/* @path must be exactly @len bytes of pattern @seed. */
static int check_file(const char *path, unsigned int seed, size_t len)
{
	char *buf = xmalloc(len + 1);
	struct stat st;
	ssize_t n;
	long bad;
	int fd = SYS(open(path, O_RDONLY));

	SYS(fstat(fd, &st));
	if (st.st_size != (off_t)len)
		fail("%s: size %lld, expected %zu", path,
		     (long long)st.st_size, len);
	n = SYS(pread_all(fd, buf, len + 1, 0));
	if (n != (ssize_t)len)
		fail("%s: read %zd bytes, expected %zu", path, n, len);
	bad = pat_check(buf, len, seed, 0);
	if (bad >= 0)
		fail("%s: wrong data at offset %ld", path, bad);
	SYS(close(fd));
	free(buf);
	return R_PASS;
}

/* Read @len bytes at @off of @fd and compare against pattern @seed. */
static int check_range(int fd, off_t off, size_t len, unsigned int seed)
{
	char *buf = xmalloc(len);
	ssize_t n = SYS(pread_all(fd, buf, len, off));
	long bad;

	if (n != (ssize_t)len)
		fail("short read at %lld: %zd of %zu", (long long)off, n, len);
	bad = pat_check(buf, len, seed, off);
	if (bad >= 0)
		fail("wrong data at offset %lld (pattern %u)",
		     (long long)off + bad, seed);
	free(buf);
	return R_PASS;
}

static int check_zero(int fd, off_t off, size_t len)
{
	char *buf = xmalloc(len);
	ssize_t n = SYS(pread_all(fd, buf, len, off));
	long bad;

	if (n != (ssize_t)len)
		fail("short read at %lld: %zd of %zu", (long long)off, n, len);
	bad = zero_check(buf, len);
	if (bad >= 0)
		fail("non-zero byte 0x%02x at offset %lld (expected a hole)",
		     (unsigned char)buf[bad], (long long)off + bad);
	free(buf);
	return R_PASS;
}

static off_t fsize(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -1;
	return st.st_size;
}

/* Counting subdirectories in nlink is common but not universal. */
static int dir_counts_links(const char *dir)
{
	struct stat st;

	return !stat(dir, &st) && st.st_nlink >= 2;
}

/*
 * Run @fn in a child process (POSIX record locks belong to the process, so
 * testing a conflict takes a second one).  The child's why[] lands in the
 * same shared page.
 */
static int in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = SYS(fork());
	if (!pid)
		_exit(fn(arg));
	SYS(waitpid(pid, &status, 0));
	if (!WIFEXITED(status))
		fail("helper child died: signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

static void ts_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

/*
 * Coarse-grained file timestamps tick once per jiffy: sleep past one so
 * that "changed" is observable.
 */
static void tick(void)
{
	usleep(30 * 1000);
}

static int ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* ----------------------------------------------------------- open flags */

static int t_create_excl(void)
{
	struct stat st;
	int fd;

	fd = SYS(open("f", O_CREAT | O_EXCL | O_WRONLY, 0640));
	SYS(fstat(fd, &st));
	CHECK(S_ISREG(st.st_mode), "mode 0%o", st.st_mode);
	EQ_O(st.st_mode & 07777, 0640);
	EQ(st.st_size, 0);
	EQ(st.st_nlink, 1);
	EQ(st.st_uid, geteuid());
	SYS(close(fd));

	EXPECT_ERR(open("f", O_CREAT | O_EXCL | O_WRONLY, 0600), EEXIST);
	/* Without O_EXCL an existing file opens and keeps its mode. */
	fd = SYS(open("f", O_CREAT | O_WRONLY, 0600));
	SYS(fstat(fd, &st));
	EQ_O(st.st_mode & 07777, 0640);
	SYS(close(fd));

	/* O_EXCL must not follow a dangling symlink... */
	SYS(symlink("target", "dangling"));
	EXPECT_ERR(open("dangling", O_CREAT | O_EXCL | O_WRONLY, 0600), EEXIST);
	EXPECT_ERR(lstat("target", &st), ENOENT);
	/* ...but plain O_CREAT creates its target. */
	fd = SYS(open("dangling", O_CREAT | O_WRONLY, 0600));
	SYS(close(fd));
	SYS(lstat("target", &st));
	CHECK(S_ISREG(st.st_mode), "target not created as a file");

	/* Creating inside a missing directory. */
	EXPECT_ERR(open("nodir/f", O_CREAT | O_WRONLY, 0600), ENOENT);
	return R_PASS;
}

static int t_open_trunc(void)
{
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct stat st;
	char buf[16];
	int fd;

	TRY(make_file("f", 1, 5000));
	SYS(utimensat(AT_FDCWD, "f", old, 0));
	fd = SYS(open("f", O_WRONLY | O_TRUNC));
	SYS(fstat(fd, &st));
	EQ(st.st_size, 0);
	/* POSIX: a truncating open marks mtime and ctime for update. */
	CHECK(st.st_mtim.tv_sec > old[1].tv_sec, "mtime %ld not updated",
	      (long)st.st_mtim.tv_sec);
	SYS(close(fd));
	SYS(stat("f", &st));
	EQ(st.st_size, 0);

	/* O_TRUNC of an empty file, then write through the same fd. */
	fd = SYS(open("f", O_RDWR | O_TRUNC));
	EQ(SYS(write(fd, "0123456789", 10)), 10);
	EQ(fsize(fd), 10);
	EQ(SYS(pread(fd, buf, sizeof(buf), 0)), 10);
	CHECK(!memcmp(buf, "0123456789", 10), "data mismatch");
	SYS(close(fd));

	/* Another fd opened before the truncation sees the new size. */
	TRY(make_file("g", 2, 9000));
	fd = SYS(open("g", O_RDONLY));
	SYS(close(SYS(open("g", O_WRONLY | O_TRUNC))));
	EQ(SYS(pread(fd, buf, sizeof(buf), 0)), 0);
	EQ(fsize(fd), 0);
	SYS(close(fd));
	return R_PASS;
}

static int t_open_append(void)
{
	char buf[64];
	int fd, fd2;

	fd = SYS(open("f", O_CREAT | O_WRONLY, 0644));
	EQ(SYS(write(fd, "abc", 3)), 3);
	SYS(close(fd));

	fd = SYS(open("f", O_WRONLY | O_APPEND));
	/* O_APPEND writes go to EOF wherever the offset was. */
	SYS(lseek(fd, 0, SEEK_SET));
	EQ(SYS(write(fd, "def", 3)), 3);
	EQ(SYS(lseek(fd, 0, SEEK_CUR)), 6);

	/* A second appender interleaves after the first's data. */
	fd2 = SYS(open("f", O_WRONLY | O_APPEND));
	EQ(SYS(write(fd2, "X", 1)), 1);
	EQ(SYS(write(fd, "Y", 1)), 1);
	EQ(SYS(write(fd2, "Z", 1)), 1);
	SYS(close(fd2));
	SYS(close(fd));

	/* A plain writer extending the file moves the append point too. */
	fd2 = SYS(open("f", O_WRONLY));
	EQ(SYS(pwrite(fd2, "__", 2, 12)), 2);
	SYS(close(fd2));
	fd = SYS(open("f", O_WRONLY | O_APPEND));
	EQ(SYS(write(fd, "!", 1)), 1);
	SYS(close(fd));

	fd = SYS(open("f", O_RDONLY));
	EQ(SYS(read(fd, buf, sizeof(buf))), 15);
	CHECK(!memcmp(buf, "abcdefXYZ\0\0\0__!", 15), "got \"%.*s\"", 15, buf);
	SYS(close(fd));
	return R_PASS;
}

/* ------------------------------------------------------------ read/write */

static int t_rw_offsets(void)
{
	const size_t len = 100000;
	char *buf = xmalloc(len);
	char small[200];
	int fd, rfd;

	pat_fill(buf, len, 3, 0);
	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	/* A second fd, open before the writes, must see them (no stale cache). */
	rfd = SYS(open("f", O_RDONLY));
	EQ(SYS(write(fd, buf, len)), (long)len);
	EQ(SYS(lseek(fd, 0, SEEK_CUR)), (long)len);

	EQ(SYS(lseek(rfd, 12345, SEEK_SET)), 12345);
	EQ(SYS(read(rfd, small, 100)), 100);
	EQ(pat_check(small, 100, 3, 12345), -1);
	EQ(SYS(lseek(rfd, 0, SEEK_CUR)), 12445);
	EQ(SYS(lseek(rfd, 55, SEEK_CUR)), 12500);
	EQ(SYS(read(rfd, small, 10)), 10);
	EQ(pat_check(small, 10, 3, 12500), -1);

	/* Short read at EOF, then 0. */
	EQ(SYS(lseek(rfd, -60, SEEK_END)), (long)len - 60);
	EQ(SYS(read(rfd, small, 100)), 60);
	EQ(pat_check(small, 60, 3, len - 60), -1);
	EQ(SYS(read(rfd, small, 100)), 0);

	/* Overwrite in the middle, unaligned: neighbours stay. */
	pat_fill(small, 7, 4, 4093);
	EQ(SYS(lseek(fd, 4093, SEEK_SET)), 4093);
	EQ(SYS(write(fd, small, 7)), 7);
	EQ(SYS(pread(rfd, small, 200, 4000)), 200);
	EQ(pat_check(small, 93, 3, 4000), -1);
	EQ(pat_check(small + 93, 7, 4, 4093), -1);
	EQ(pat_check(small + 100, 100, 3, 4100), -1);

	/* Writing past EOF leaves a zero-filled gap. */
	EQ(SYS(lseek(fd, 200000, SEEK_SET)), 200000);
	EQ(SYS(write(fd, "X", 1)), 1);
	EQ(fsize(rfd), 200001);
	TRY(check_zero(rfd, len, 200000 - len));
	EQ(SYS(pread(rfd, small, 10, 200000)), 1);
	EQ(small[0], 'X');
	SYS(close(fd));
	SYS(close(rfd));
	free(buf);
	return R_PASS;
}

static int t_pread_pwrite(void)
{
	const size_t size = 256 * KiB;
	unsigned char *model = calloc(1, size);
	unsigned char *buf = xmalloc(size);
	size_t end = 0;
	unsigned int seed = 12345;
	int fd, i;

	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	SYS(lseek(fd, 777, SEEK_SET));
	/* Random unaligned pwrites against an in-memory model of the file. */
	for (i = 0; i < 150; i++) {
		size_t off = rand_r(&seed) % (size - 1);
		size_t len = 1 + rand_r(&seed) % (i % 10 ? 700 : 40000);

		if (off + len > size)
			len = size - off;
		pat_fill(buf, len, 100 + i, off);
		EQ(pwrite_all(fd, buf, len, off), (long)len);
		memcpy(model + off, buf, len);
		if (off + len > end)
			end = off + len;
		if (i % 25 == 0) {
			off = rand_r(&seed) % end;
			len = 1 + rand_r(&seed) % (end - off);
			EQ(SYS(pread_all(fd, buf, len, off)), (long)len);
			CHECK(!memcmp(buf, model + off, len),
			      "pread at %zu+%zu differs from model", off, len);
		}
	}
	/* pread/pwrite must not move the file offset. */
	EQ(SYS(lseek(fd, 0, SEEK_CUR)), 777);
	EQ(fsize(fd), (long)end);
	EQ(SYS(pread_all(fd, buf, size, 0)), (long)end);
	for (i = 0; i < (int)end; i++)
		if (buf[i] != model[i])
			fail("byte %d: 0x%02x, expected 0x%02x", i, buf[i],
			     model[i]);
	EXPECT_ERR(pread(fd, buf, 1, -1), EINVAL);
	SYS(close(fd));
	free(model);
	free(buf);
	return R_PASS;
}

/* Large single requests: the driver must split or carry them whole. */
static int t_large_io(void)
{
	const size_t len = 4 * MiB;
	char *buf = xmalloc(len + 1);
	int fd;

	pat_fill(buf, len, 5, 0);
	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	EQ(SYS(write(fd, buf, len)), (long)len);
	memset(buf, 0, len);
	EQ(SYS(pread_all(fd, buf, len + 1, 0)), (long)len);
	EQ(pat_check(buf, len, 5, 0), -1);

	/* Unaligned start and length across many pages. */
	pat_fill(buf, MiB + 1, 6, 4095);
	EQ(SYS(pwrite(fd, buf, MiB + 1, 4095)), MiB + 1);
	SYS(close(fd));
	fd = SYS(open("f", O_RDONLY));
	TRY(check_range(fd, 0, 4095, 5));
	TRY(check_range(fd, 4095, MiB + 1, 6));
	TRY(check_range(fd, 4095 + MiB + 1, len - MiB - 4096, 5));
	SYS(close(fd));
	free(buf);
	return R_PASS;
}

static int t_truncate(void)
{
	struct stat st;
	int fd;

	TRY(make_file("f", 7, 8192));
	SYS(truncate("f", 3000));
	SYS(stat("f", &st));
	EQ(st.st_size, 3000);
	/* Growing again must expose zeros, not the old bytes past 3000. */
	SYS(truncate("f", 10000));
	fd = SYS(open("f", O_RDWR));
	EQ(fsize(fd), 10000);
	TRY(check_range(fd, 0, 3000, 7));
	TRY(check_zero(fd, 3000, 7000));

	SYS(ftruncate(fd, 0));
	EQ(fsize(fd), 0);
	SYS(ftruncate(fd, MiB));
	EQ(fsize(fd), MiB);
	TRY(check_zero(fd, 0, MiB));
	/* Shrink to an unaligned size inside written data, then grow. */
	TRY(make_file("g", 8, 3 * 4096));
	SYS(close(fd));
	fd = SYS(open("g", O_RDWR));
	SYS(ftruncate(fd, 4097));
	SYS(ftruncate(fd, 3 * 4096));
	TRY(check_range(fd, 0, 4097, 8));
	TRY(check_zero(fd, 4097, 2 * 4096 - 1));
	SYS(close(fd));

	EXPECT_ERR(truncate("f", -1), EINVAL);
	fd = SYS(open("f", O_RDONLY));
	EXPECT_ERR2(ftruncate(fd, 10), EINVAL, EBADF);
	SYS(close(fd));
	return R_PASS;
}

/* -------------------------------------------------------------- rename */

static int t_rename_file(void)
{
	struct stat a, b;

	TRY(make_file("a", 9, 3333));
	SYS(stat("a", &a));
	SYS(rename("a", "b"));
	EXPECT_ERR(stat("a", &b), ENOENT);
	SYS(stat("b", &b));
	EQ(b.st_ino, a.st_ino);
	TRY(check_file("b", 9, 3333));

	/* Into a subdirectory and back under a new name. */
	SYS(mkdir("d", 0755));
	SYS(rename("b", "d/c"));
	SYS(rename("d/c", "e"));
	TRY(check_file("e", 9, 3333));
	/* Renaming onto itself is a no-op. */
	SYS(rename("e", "e"));
	TRY(check_file("e", 9, 3333));
	EXPECT_ERR(rename("missing", "x"), ENOENT);
	return R_PASS;
}

static int t_rename_dir(void)
{
	struct stat st, p2;
	int counts = dir_counts_links(".");

	SYS(mkdir("p1", 0755));
	SYS(mkdir("p2", 0755));
	SYS(mkdir("p1/d", 0755));
	SYS(mkdir("p1/d/sub", 0755));
	TRY(make_file("p1/d/f", 10, 100));
	if (counts) {
		SYS(stat("p1", &st));
		EQ(st.st_nlink, 3);
	}
	SYS(rename("p1/d", "p2/d"));
	TRY(check_file("p2/d/f", 10, 100));
	SYS(stat("p2/d/sub", &st));
	EXPECT_ERR(stat("p1/d", &st), ENOENT);
	/* ".." of the moved directory is its new parent. */
	SYS(stat("p2", &p2));
	SYS(stat("p2/d/..", &st));
	EQ(st.st_ino, p2.st_ino);
	if (counts) {
		EQ(p2.st_nlink, 3);
		SYS(stat("p1", &st));
		EQ(st.st_nlink, 2);
	}
	/* Same-directory rename of a directory. */
	SYS(rename("p2/d", "p2/e"));
	TRY(check_file("p2/e/f", 10, 100));
	return R_PASS;
}

static int t_rename_over(void)
{
	struct stat st, a;
	int fd;

	TRY(make_file("a", 11, 500));
	TRY(make_file("b", 12, 700));
	SYS(stat("a", &a));
	fd = SYS(open("b", O_RDONLY));
	SYS(rename("a", "b"));
	EXPECT_ERR(stat("a", &st), ENOENT);
	SYS(stat("b", &st));
	EQ(st.st_ino, a.st_ino);
	TRY(check_file("b", 11, 500));
	/* The replaced file lives on through the open fd, with no links. */
	SYS(fstat(fd, &st));
	EQ(st.st_nlink, 0);
	TRY(check_range(fd, 0, 700, 12));
	SYS(close(fd));

	/* Directory over an empty directory. */
	SYS(mkdir("d1", 0755));
	TRY(make_file("d1/x", 13, 10));
	SYS(mkdir("d2", 0755));
	SYS(rename("d1", "d2"));
	TRY(check_file("d2/x", 13, 10));
	EXPECT_ERR(stat("d1", &st), ENOENT);

	/* Directory over a non-empty directory. */
	SYS(mkdir("d3", 0755));
	EXPECT_ERR2(rename("d3", "d2"), ENOTEMPTY, EEXIST);
	/* File over directory and directory over file. */
	EXPECT_ERR(rename("b", "d3"), EISDIR);
	EXPECT_ERR(rename("d3", "b"), ENOTDIR);
	TRY(check_file("b", 11, 500));

	/* Two links of one inode: rename is a no-op that keeps both. */
	SYS(link("b", "c"));
	SYS(rename("b", "c"));
	SYS(stat("b", &st));
	EQ(st.st_nlink, 2);
	SYS(stat("c", &st));
	EQ(st.st_nlink, 2);
	return R_PASS;
}

static long renameat2_sys(const char *from, const char *to, unsigned int flags)
{
	return syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
}

static int t_rename_noreplace(void)
{
	struct stat st;

	TRY(make_file("a", 14, 100));
	TRY(make_file("b", 15, 200));
	errno = 0;
	if (renameat2_sys("a", "b", RENAME_NOREPLACE) == 0)
		fail("RENAME_NOREPLACE over an existing file succeeded");
	if (errno == EINVAL || errno == ENOSYS)
		skip("renameat2(RENAME_NOREPLACE): %s (%s): not supported here",
		     errname(errno), strerror(errno));
	if (errno != EEXIST)
		fail("renameat2(RENAME_NOREPLACE) onto existing: expected EEXIST, got %s (%s)",
		     errname(errno), strerror(errno));
	TRY(check_file("a", 14, 100));
	TRY(check_file("b", 15, 200));
	SYS(renameat2_sys("a", "c", RENAME_NOREPLACE));
	EXPECT_ERR(stat("a", &st), ENOENT);
	TRY(check_file("c", 14, 100));
	SYS(mkdir("d", 0755));
	EXPECT_ERR(renameat2_sys("c", "d", RENAME_NOREPLACE), EEXIST);
	return R_PASS;
}

static int t_rename_exchange(void)
{
	struct stat f0, d0, st;

	TRY(make_file("f", 16, 1234));
	SYS(mkdir("d", 0755));
	TRY(make_file("d/inner", 17, 10));
	SYS(stat("f", &f0));
	SYS(stat("d", &d0));
	errno = 0;
	if (renameat2_sys("f", "d", RENAME_EXCHANGE)) {
		if (errno == EINVAL || errno == ENOSYS)
			skip("renameat2(RENAME_EXCHANGE): %s (%s): not supported here",
			     errname(errno), strerror(errno));
		fail("renameat2(f, d, RENAME_EXCHANGE): %s (%s)",
		     errname(errno), strerror(errno));
	}
	SYS(stat("d", &st));
	CHECK(S_ISREG(st.st_mode), "d is not the file after exchange");
	EQ(st.st_ino, f0.st_ino);
	SYS(stat("f", &st));
	CHECK(S_ISDIR(st.st_mode), "f is not the directory after exchange");
	EQ(st.st_ino, d0.st_ino);
	TRY(check_file("d", 16, 1234));
	TRY(check_file("f/inner", 17, 10));

	/* Two files, across directories. */
	TRY(make_file("f/g", 18, 99));
	SYS(renameat2_sys("d", "f/g", RENAME_EXCHANGE));
	TRY(check_file("d", 18, 99));
	TRY(check_file("f/g", 16, 1234));
	EXPECT_ERR(renameat2_sys("d", "missing", RENAME_EXCHANGE), ENOENT);
	EXPECT_ERR(renameat2_sys("d", "f/g", RENAME_EXCHANGE | RENAME_NOREPLACE),
		   EINVAL);
	return R_PASS;
}

/* ---------------------------------------------------------- links, dirs */

static int t_link_nlink(void)
{
	struct stat a, b;
	int fd;

	TRY(make_file("a", 19, 100));
	SYS(mkdir("d", 0755));
	SYS(link("a", "b"));
	SYS(link("a", "d/c"));
	SYS(stat("a", &a));
	SYS(stat("b", &b));
	EQ(a.st_nlink, 3);
	EQ(b.st_nlink, 3);
	EQ(b.st_ino, a.st_ino);

	/* A write through one name is seen through the other. */
	fd = SYS(open("b", O_WRONLY));
	EQ(SYS(pwrite(fd, "LINK", 4, 10)), 4);
	SYS(close(fd));
	fd = SYS(open("d/c", O_RDONLY));
	{
		char buf[4];

		EQ(SYS(pread(fd, buf, 4, 10)), 4);
		CHECK(!memcmp(buf, "LINK", 4), "write via b not seen via d/c");
	}

	SYS(unlink("a"));
	SYS(fstat(fd, &a));
	EQ(a.st_nlink, 2);
	SYS(unlink("d/c"));
	SYS(stat("b", &b));
	EQ(b.st_nlink, 1);
	SYS(close(fd));

	EXPECT_ERR(link("b", "b"), EEXIST);
	EXPECT_ERR(link("missing", "x"), ENOENT);
	EXPECT_ERR(link("d", "d2"), EPERM);
	return R_PASS;
}

static int t_symlink(void)
{
	char target[1100], buf[1200];
	struct stat st;
	int fd;

	TRY(make_file("file", 20, 50));
	SYS(symlink("file", "rel"));
	SYS(lstat("rel", &st));
	CHECK(S_ISLNK(st.st_mode), "lstat mode 0%o", st.st_mode);
	EQ(st.st_size, 4);
	/* readlink does not NUL-terminate and returns the exact length. */
	memset(buf, 'Z', sizeof(buf));
	EQ(SYS(readlink("rel", buf, sizeof(buf))), 4);
	CHECK(!memcmp(buf, "file", 4) && buf[4] == 'Z', "got \"%.5s\"", buf);
	/* A too-small buffer truncates. */
	EQ(SYS(readlink("rel", buf, 2)), 2);
	TRY(check_file("rel", 20, 50));
	SYS(stat("rel", &st));
	CHECK(S_ISREG(st.st_mode), "stat did not follow");

	/* Absolute and long (1023 bytes) targets, kept byte for byte. */
	SYS(getcwd(buf, sizeof(buf)));
	snprintf(target, sizeof(target), "%s/file", buf);
	SYS(symlink(target, "abs"));
	TRY(check_file("abs", 20, 50));
	memset(target, 'x', 1023);
	target[1023] = 0;
	for (fd = 10; fd < 1023; fd += 11)
		target[fd] = '/';
	SYS(symlink(target, "long"));
	EQ(SYS(readlink("long", buf, sizeof(buf))), 1023);
	CHECK(!memcmp(buf, target, 1023), "long target mangled");
	SYS(lstat("long", &st));
	EQ(st.st_size, 1023);

	/* Dangling, and through a symlink to a directory. */
	SYS(symlink("nowhere", "dangling"));
	EXPECT_ERR(stat("dangling", &st), ENOENT);
	SYS(lstat("dangling", &st));
	SYS(mkdir("dir", 0755));
	TRY(make_file("dir/in", 21, 5));
	SYS(symlink("dir", "dlink"));
	TRY(check_file("dlink/in", 21, 5));

	EXPECT_ERR(readlink("file", buf, sizeof(buf)), EINVAL);
	EXPECT_ERR(symlink("x", "rel"), EEXIST);
	/* Unlinking the link leaves the target. */
	SYS(unlink("rel"));
	TRY(check_file("file", 20, 50));
	return R_PASS;
}

static int t_mkdir_rmdir(void)
{
	char path[256];
	struct stat st;
	int i;

	SYS(mkdir("d", 0750));
	SYS(stat("d", &st));
	CHECK(S_ISDIR(st.st_mode), "mode 0%o", st.st_mode);
	EQ_O(st.st_mode & 07777, 0750);
	EXPECT_ERR(mkdir("d", 0755), EEXIST);
	TRY(make_file("d/f", 22, 1));
	EXPECT_ERR2(rmdir("d"), ENOTEMPTY, EEXIST);
	SYS(unlink("d/f"));
	SYS(mkdir("d/sub", 0755));
	EXPECT_ERR2(rmdir("d"), ENOTEMPTY, EEXIST);
	SYS(rmdir("d/sub"));
	SYS(rmdir("d"));
	EXPECT_ERR(stat("d", &st), ENOENT);
	EXPECT_ERR(rmdir("d"), ENOENT);
	EXPECT_ERR(rmdir("."), EINVAL);

	/* A 12-deep chain, removed bottom-up. */
	strcpy(path, "n");
	for (i = 0; i < 12; i++) {
		SYS(mkdir(path, 0755));
		strcat(path, "/n");
	}
	TRY(make_file(path, 23, 10));
	TRY(check_file(path, 23, 10));
	SYS(unlink(path));
	for (i = 0; i < 12; i++) {
		*strrchr(path, '/') = 0;
		SYS(rmdir(path));
	}
	EXPECT_ERR(stat("n", &st), ENOENT);
	return R_PASS;
}

static int t_dir_nlink(void)
{
	struct stat st;

	SYS(mkdir("d", 0755));
	SYS(stat("d", &st));
	if (st.st_nlink == 1)
		skip("directory nlink is 1: the file system does not count subdirectories");
	EQ(st.st_nlink, 2);
	SYS(mkdir("d/a", 0755));
	SYS(mkdir("d/b", 0755));
	TRY(make_file("d/f", 24, 1));
	SYS(stat("d", &st));
	EQ(st.st_nlink, 4);
	SYS(rmdir("d/a"));
	SYS(stat("d", &st));
	EQ(st.st_nlink, 3);
	SYS(rename("d/b", "b"));
	SYS(stat("d", &st));
	EQ(st.st_nlink, 2);
	SYS(stat(".", &st));
	EQ(st.st_nlink, 4);
	return R_PASS;
}

/* ------------------------------------------------------------- readdir */

#define NDIRENT 3000

static void dname(char *buf, size_t len, int i)
{
	/* Varying lengths change how many records fit per getdents buffer. */
	snprintf(buf, len, "e%04d_%.*s", i, i % 37,
		 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJK");
}

/* Index of a name made by dname(), or -1 for "." and "..". */
static int dindex(const char *name)
{
	char expect[64];
	int i;

	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return -1;
	if (sscanf(name, "e%d_", &i) != 1 || i < 0 || i >= NDIRENT)
		return -2;
	dname(expect, sizeof(expect), i);
	return strcmp(expect, name) ? -2 : i;
}

/* One full readdir pass; every live name exactly once, dots once each. */
static int readdir_pass(DIR *d, unsigned char *seen, const unsigned char *live)
{
	struct dirent *de;
	int dots = 0, i;

	memset(seen, 0, NDIRENT);
	rewinddir(d);
	errno = 0;
	while ((de = readdir(d))) {
		i = dindex(de->d_name);
		if (i == -1) {
			dots++;
			continue;
		}
		if (i == -2)
			fail("readdir returned unexpected name \"%s\"", de->d_name);
		if (!live[i])
			fail("readdir returned removed entry %s", de->d_name);
		if (seen[i]++)
			fail("readdir returned %s twice", de->d_name);
		if (de->d_type != DT_UNKNOWN &&
		    de->d_type != (i % 100 == 0 ? DT_DIR : DT_REG))
			fail("%s: d_type %d", de->d_name, de->d_type);
	}
	if (errno)
		fail("readdir: %s (%s)", errname(errno), strerror(errno));
	EQ(dots, 2);
	for (i = 0; i < NDIRENT; i++)
		if (live[i] && !seen[i])
			fail("readdir missed entry %d of %d", i, NDIRENT);
	return R_PASS;
}

static int t_readdir_large(void)
{
	unsigned char seen[NDIRENT], live[NDIRENT];
	char name[64], *after[500];
	struct dirent *de;
	char gbuf[600];
	long pos, n;
	int i, fd, nrec = 0, calls = 0;
	DIR *d;

	SYS(mkdir("big", 0755));
	SYS(chdir("big"));
	for (i = 0; i < NDIRENT; i++) {
		dname(name, sizeof(name), i);
		if (i % 100 == 0)
			SYS(mkdir(name, 0755));
		else
			SYS(mknod(name, S_IFREG | 0644, 0));
		live[i] = 1;
	}

	d = opendir(".");
	if (!d)
		fail("opendir: %s", strerror(errno));
	TRY(readdir_pass(d, seen, live));

	/* Raw getdents64 with a tiny buffer: ~20 records per call. */
	fd = SYS(open(".", O_RDONLY | O_DIRECTORY));
	memset(seen, 0, sizeof(seen));
	while ((n = SYS(syscall(SYS_getdents64, fd, gbuf, sizeof(gbuf)))) > 0) {
		long off = 0;

		calls++;
		while (off < n) {
			struct dirent64 *e = (void *)(gbuf + off);

			i = dindex(e->d_name);
			if (i == -2)
				fail("getdents64 returned bad name \"%s\"", e->d_name);
			if (i >= 0 && seen[i]++)
				fail("getdents64 returned %s twice", e->d_name);
			nrec++;
			off += e->d_reclen;
		}
	}
	SYS(close(fd));
	EQ(nrec, NDIRENT + 2);
	CHECK(calls > 20, "only %d getdents64 calls", calls);

	/* telldir/seekdir: going back replays the same names in order. */
	rewinddir(d);
	for (i = 0; i < 1200; i++)
		if (!readdir(d))
			fail("directory ended early at %d", i);
	pos = telldir(d);
	CHECK(pos != -1, "telldir failed");
	for (i = 0; i < 500; i++) {
		de = readdir(d);
		CHECK(de != NULL, "directory ended at %d after telldir", i);
		after[i] = strdup(de->d_name);
	}
	seekdir(d, pos);
	for (i = 0; i < 500; i++) {
		de = readdir(d);
		CHECK(de != NULL, "directory ended at %d after seekdir", i);
		if (strcmp(de->d_name, after[i]))
			fail("after seekdir entry %d is %s, expected %s", i,
			     de->d_name, after[i]);
	}

	/* Remove every other entry and list again. */
	for (i = 1; i < NDIRENT; i += 2) {
		dname(name, sizeof(name), i);
		SYS(unlink(name));
		live[i] = 0;
	}
	TRY(readdir_pass(d, seen, live));
	closedir(d);
	SYS(chdir(".."));
	return R_PASS;
}

static int t_readdir_types(void)
{
	static const struct { const char *name; int type; } want[] = {
		{ "reg", DT_REG }, { "dir", DT_DIR }, { "lnk", DT_LNK },
		{ "fifo", DT_FIFO },
	};
	struct dirent *de;
	int found = 0;
	unsigned int i;
	DIR *d;

	TRY(make_file("reg", 25, 1));
	SYS(mkdir("dir", 0755));
	SYS(symlink("reg", "lnk"));
	SYS(mkfifo("fifo", 0644));
	d = opendir(".");
	CHECK(d != NULL, "opendir: %s", strerror(errno));
	while ((de = readdir(d))) {
		struct stat st;

		for (i = 0; i < ARRAY_SIZE(want); i++) {
			if (strcmp(de->d_name, want[i].name))
				continue;
			found++;
			if (de->d_type != DT_UNKNOWN && de->d_type != want[i].type)
				fail("%s: d_type %d, expected %d", de->d_name,
				     de->d_type, want[i].type);
			SYS(lstat(de->d_name, &st));
			EQ(de->d_ino, st.st_ino);
		}
	}
	closedir(d);
	EQ(found, 4);
	return R_PASS;
}

/* -------------------------------------------------------------- xattrs */

static int t_xattr(void)
{
	char big[4000], buf[4096];
	static const char bin[] = "a\0b\0\xff";
	ssize_t n;
	int fd;

	TRY(make_file("f", 26, 10));
	errno = 0;
	if (setxattr("f", "user.fstest", "value1", 6, 0)) {
		if (errno == ENOTSUP)
			skip("setxattr user.*: ENOTSUP (%s): no xattr support",
			     strerror(errno));
		fail("setxattr: %s (%s)", errname(errno), strerror(errno));
	}
	EQ(SYS(getxattr("f", "user.fstest", NULL, 0)), 6);
	EQ(SYS(getxattr("f", "user.fstest", buf, sizeof(buf))), 6);
	CHECK(!memcmp(buf, "value1", 6), "got \"%.6s\"", buf);
	EXPECT_ERR(getxattr("f", "user.fstest", buf, 3), ERANGE);

	EXPECT_ERR(setxattr("f", "user.fstest", "v", 1, XATTR_CREATE), EEXIST);
	EXPECT_ERR(setxattr("f", "user.other", "v", 1, XATTR_REPLACE), ENODATA);
	SYS(setxattr("f", "user.fstest", "longer value", 12, XATTR_REPLACE));
	EQ(SYS(getxattr("f", "user.fstest", buf, sizeof(buf))), 12);
	CHECK(!memcmp(buf, "longer value", 12), "replace lost");

	/* Binary values with NULs, empty values, and a large value. */
	SYS(setxattr("f", "user.bin", bin, sizeof(bin), XATTR_CREATE));
	EQ(SYS(getxattr("f", "user.bin", buf, sizeof(buf))), (long)sizeof(bin));
	CHECK(!memcmp(buf, bin, sizeof(bin)), "binary value mangled");
	SYS(setxattr("f", "user.empty", "", 0, 0));
	EQ(SYS(getxattr("f", "user.empty", buf, sizeof(buf))), 0);
	pat_fill(big, sizeof(big), 27, 0);
	SYS(setxattr("f", "user.big", big, sizeof(big), 0));
	EQ(SYS(getxattr("f", "user.big", buf, sizeof(buf))), (long)sizeof(big));
	EQ(pat_check(buf, sizeof(big), 27, 0), -1);

	/* listxattr: size query, then every name exactly once. */
	n = SYS(listxattr("f", NULL, 0));
	CHECK(n > 0 && n <= (ssize_t)sizeof(buf), "list size %zd", n);
	EQ(SYS(listxattr("f", buf, sizeof(buf))), n);
	{
		static const char *const names[] = { "user.fstest", "user.bin",
						      "user.empty", "user.big" };
		int count[4] = { 0 };
		char *p;
		int i;

		for (p = buf; p < buf + n; p += strlen(p) + 1)
			for (i = 0; i < 4; i++)
				count[i] += !strcmp(p, names[i]);
		for (i = 0; i < 4; i++)
			if (count[i] != 1)
				fail("listxattr shows %s %d times", names[i],
				     count[i]);
	}
	if (n > 1)
		EXPECT_ERR(listxattr("f", buf, 1), ERANGE);

	SYS(removexattr("f", "user.fstest"));
	EXPECT_ERR(getxattr("f", "user.fstest", buf, sizeof(buf)), ENODATA);
	EXPECT_ERR(removexattr("f", "user.fstest"), ENODATA);
	EXPECT_ERR(getxattr("f", "user.never", buf, sizeof(buf)), ENODATA);

	/* The fd-based calls and a directory. */
	fd = SYS(open("f", O_RDONLY));
	EQ(SYS(fgetxattr(fd, "user.bin", buf, sizeof(buf))), (long)sizeof(bin));
	SYS(fsetxattr(fd, "user.fd", "x", 1, 0));
	SYS(fremovexattr(fd, "user.fd"));
	SYS(close(fd));
	SYS(mkdir("d", 0755));
	SYS(setxattr("d", "user.dir", "dv", 2, 0));
	EQ(SYS(getxattr("d", "user.dir", buf, sizeof(buf))), 2);
	/* xattrs survive a rename. */
	SYS(rename("f", "g"));
	EQ(SYS(getxattr("g", "user.big", buf, sizeof(buf))), (long)sizeof(big));
	return R_PASS;
}

/* -------------------------------------------------- attributes, times */

static int t_chmod(void)
{
	static const mode_t modes[] = { 0, 0600, 0644, 0755, 0777, 01777,
					04755, 02755 };
	struct stat st;
	mode_t lmode;
	unsigned int i;
	int fd;

	TRY(make_file("f", 28, 1));
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		if ((modes[i] & 06000) && geteuid())
			continue;
		SYS(chmod("f", modes[i]));
		SYS(stat("f", &st));
		EQ_O(st.st_mode & 07777, modes[i]);
		CHECK(S_ISREG(st.st_mode), "type changed: 0%o", st.st_mode);
	}
	fd = SYS(open("f", O_RDONLY));
	SYS(fchmod(fd, 0640));
	SYS(fstat(fd, &st));
	EQ_O(st.st_mode & 07777, 0640);
	SYS(close(fd));
	SYS(stat("f", &st));
	EQ_O(st.st_mode & 07777, 0640);

	SYS(mkdir("d", 0755));
	SYS(chmod("d", 0700));
	SYS(stat("d", &st));
	EQ_O(st.st_mode & 07777, 0700);
	CHECK(S_ISDIR(st.st_mode), "type changed");

	/* Through a symlink: the target changes, the link does not. */
	SYS(symlink("f", "l"));
	SYS(lstat("l", &st));
	lmode = st.st_mode;
	SYS(chmod("l", 0604));
	SYS(stat("f", &st));
	EQ_O(st.st_mode & 07777, 0604);
	SYS(lstat("l", &st));
	EQ_O(st.st_mode, lmode);
	return R_PASS;
}

static int t_chown(void)
{
	struct stat st;
	int fd;

	if (geteuid())
		skip("not root (euid %d)", (int)geteuid());
	TRY(make_file("f", 29, 1));
	SYS(chown("f", 1234, 5678));
	SYS(stat("f", &st));
	EQ(st.st_uid, 1234);
	EQ(st.st_gid, 5678);
	/* -1 leaves that id alone. */
	SYS(chown("f", -1, 42));
	SYS(stat("f", &st));
	EQ(st.st_uid, 1234);
	EQ(st.st_gid, 42);
	fd = SYS(open("f", O_RDONLY));
	SYS(fchown(fd, 77, -1));
	SYS(fstat(fd, &st));
	EQ(st.st_uid, 77);
	EQ(st.st_gid, 42);
	SYS(close(fd));

	/* lchown changes the link, chown follows it. */
	SYS(symlink("f", "l"));
	SYS(lchown("l", 4321, 8765));
	SYS(lstat("l", &st));
	EQ(st.st_uid, 4321);
	EQ(st.st_gid, 8765);
	SYS(stat("f", &st));
	EQ(st.st_uid, 77);
	SYS(chown("l", 0, 0));
	SYS(stat("f", &st));
	EQ(st.st_uid, 0);
	SYS(lstat("l", &st));
	EQ(st.st_uid, 4321);

	SYS(mkdir("d", 0755));
	SYS(chown("d", 1, 2));
	SYS(stat("d", &st));
	EQ(st.st_uid, 1);
	EQ(st.st_gid, 2);

	/*
	 * Linux clears set-user-ID (and set-group-ID with group exec) of a
	 * regular file on chown, even for root; FUSE relies on the kernel or
	 * the device to do it.
	 */
	SYS(chmod("f", 06755));
	SYS(chown("f", 1000, 1000));
	SYS(stat("f", &st));
	EQ_O(st.st_mode & 07777, 0755);
	return R_PASS;
}

static int t_utimens(void)
{
	struct timespec t[2] = { { 1234567890, 123456789 },
				 { 1300000000, 987654321 } };
	struct timespec before, after;
	struct stat st;
	int fd;

	TRY(make_file("f", 30, 1));
	SYS(utimensat(AT_FDCWD, "f", t, 0));
	SYS(stat("f", &st));
	EQ(st.st_atim.tv_sec, t[0].tv_sec);
	EQ(st.st_atim.tv_nsec, t[0].tv_nsec);
	EQ(st.st_mtim.tv_sec, t[1].tv_sec);
	EQ(st.st_mtim.tv_nsec, t[1].tv_nsec);

	/* UTIME_OMIT leaves atime, UTIME_NOW takes the current time. */
	t[0].tv_nsec = UTIME_OMIT;
	t[1].tv_sec = 1400000000;
	t[1].tv_nsec = 5;
	SYS(utimensat(AT_FDCWD, "f", t, 0));
	SYS(stat("f", &st));
	EQ(st.st_atim.tv_sec, 1234567890);
	EQ(st.st_atim.tv_nsec, 123456789);
	EQ(st.st_mtim.tv_sec, 1400000000);
	EQ(st.st_mtim.tv_nsec, 5);

	ts_now(&before);
	t[0].tv_nsec = UTIME_NOW;
	t[1].tv_nsec = UTIME_OMIT;
	SYS(utimensat(AT_FDCWD, "f", t, 0));
	ts_now(&after);
	SYS(stat("f", &st));
	EQ(st.st_mtim.tv_sec, 1400000000);
	EQ(st.st_mtim.tv_nsec, 5);
	/* The device's clock may be the host's: allow a little skew. */
	CHECK(st.st_atim.tv_sec >= before.tv_sec - 10 &&
	      st.st_atim.tv_sec <= after.tv_sec + 10,
	      "UTIME_NOW atime %ld, now %ld", (long)st.st_atim.tv_sec,
	      (long)after.tv_sec);

	/* NULL times: both now; futimens on an fd. */
	SYS(utimensat(AT_FDCWD, "f", NULL, 0));
	SYS(stat("f", &st));
	CHECK(st.st_mtim.tv_sec >= before.tv_sec - 10, "mtime %ld",
	      (long)st.st_mtim.tv_sec);
	fd = SYS(open("f", O_RDONLY));
	t[0].tv_sec = 100;
	t[0].tv_nsec = 0;
	t[1].tv_sec = 200;
	t[1].tv_nsec = 0;
	SYS(futimens(fd, t));
	SYS(fstat(fd, &st));
	EQ(st.st_atim.tv_sec, 100);
	EQ(st.st_mtim.tv_sec, 200);
	SYS(close(fd));

	/* AT_SYMLINK_NOFOLLOW sets the link's own times. */
	SYS(symlink("f", "l"));
	t[1].tv_sec = 300;
	SYS(utimensat(AT_FDCWD, "l", t, AT_SYMLINK_NOFOLLOW));
	SYS(lstat("l", &st));
	EQ(st.st_mtim.tv_sec, 300);
	SYS(stat("f", &st));
	EQ(st.st_mtim.tv_sec, 200);

	t[0].tv_nsec = 1000000000;
	EXPECT_ERR(utimensat(AT_FDCWD, "f", t, 0), EINVAL);
	return R_PASS;
}

/* Data and metadata changes update mtime/ctime, of files and parents. */
static int t_times_update(void)
{
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct timespec c0;
	struct stat st;
	int fd;

	TRY(make_file("f", 31, 100));
	SYS(mkdir("d", 0755));
	SYS(utimensat(AT_FDCWD, "f", old, 0));
	SYS(utimensat(AT_FDCWD, "d", old, 0));

	fd = SYS(open("f", O_WRONLY));
	EQ(SYS(write(fd, "x", 1)), 1);
	SYS(fstat(fd, &st));
	CHECK(st.st_mtim.tv_sec > old[1].tv_sec, "write left mtime at %ld",
	      (long)st.st_mtim.tv_sec);
	SYS(close(fd));
	SYS(stat("f", &st));
	CHECK(st.st_mtim.tv_sec > old[1].tv_sec, "mtime after close %ld",
	      (long)st.st_mtim.tv_sec);

	SYS(utimensat(AT_FDCWD, "f", old, 0));
	SYS(truncate("f", 50));
	SYS(stat("f", &st));
	CHECK(st.st_mtim.tv_sec > old[1].tv_sec, "truncate left mtime");

	/* chmod changes ctime but not mtime. */
	SYS(utimensat(AT_FDCWD, "f", old, 0));
	SYS(stat("f", &st));
	c0 = st.st_ctim;
	tick();
	SYS(chmod("f", 0600));
	SYS(stat("f", &st));
	CHECK(ts_after(&st.st_ctim, &c0), "chmod left ctime");
	EQ(st.st_mtim.tv_sec, old[1].tv_sec);

	/* Creating and removing entries touches the parent's mtime. */
	TRY(make_file("d/new", 32, 1));
	SYS(stat("d", &st));
	CHECK(st.st_mtim.tv_sec > old[1].tv_sec, "create left dir mtime");
	SYS(utimensat(AT_FDCWD, "d", old, 0));
	SYS(unlink("d/new"));
	SYS(stat("d", &st));
	CHECK(st.st_mtim.tv_sec > old[1].tv_sec, "unlink left dir mtime");
	return R_PASS;
}

static int t_stat_fields(void)
{
	struct stat a, b, l, d;
	int fd;

	TRY(make_file("a", 33, 4321));
	TRY(make_file("b", 34, 1));
	SYS(symlink("a", "l"));
	SYS(stat("a", &a));
	SYS(stat("b", &b));
	SYS(lstat("l", &l));
	SYS(stat(".", &d));
	CHECK(a.st_ino != b.st_ino && a.st_ino != l.st_ino &&
	      a.st_ino != d.st_ino, "inode numbers not distinct");
	EQ(b.st_dev, a.st_dev);
	EQ(l.st_dev, a.st_dev);
	EQ(a.st_size, 4321);
	CHECK(a.st_blksize > 0, "st_blksize %ld", (long)a.st_blksize);
	fd = SYS(open("a", O_RDONLY));
	SYS(fstat(fd, &b));
	EQ(b.st_ino, a.st_ino);
	EQ(b.st_size, a.st_size);
	EQ(b.st_mode, a.st_mode);
	EQ(b.st_mtim.tv_sec, a.st_mtim.tv_sec);
	EQ(b.st_mtim.tv_nsec, a.st_mtim.tv_nsec);
	SYS(close(fd));
	/* statx agrees with stat. */
	{
		struct statx sx;

		SYS(statx(AT_FDCWD, "a", 0, STATX_BASIC_STATS, &sx));
		EQ(sx.stx_ino, a.st_ino);
		EQ(sx.stx_size, 4321);
		EQ(sx.stx_nlink, 1);
	}
	return R_PASS;
}

static int t_access(void)
{
	TRY(make_file("f", 35, 1));
	SYS(chmod("f", 0644));
	SYS(access("f", F_OK));
	SYS(access("f", R_OK | W_OK));
	/* Even root needs some x bit to execute. */
	EXPECT_ERR(access("f", X_OK), EACCES);
	SYS(chmod("f", 0744));
	SYS(access("f", X_OK));
	EXPECT_ERR(access("missing", F_OK), ENOENT);
	SYS(faccessat(AT_FDCWD, "f", R_OK, AT_EACCESS));
	return R_PASS;
}

static int t_statfs(void)
{
	struct statfs s, fs;
	struct statvfs v;
	int fd;

	SYS(statfs(".", &s));
	CHECK(s.f_bsize > 0, "f_bsize %ld", (long)s.f_bsize);
	CHECK(s.f_blocks > 0, "f_blocks 0");
	CHECK(s.f_bfree <= s.f_blocks, "f_bfree %llu > f_blocks %llu",
	      (unsigned long long)s.f_bfree, (unsigned long long)s.f_blocks);
	CHECK(s.f_bavail <= s.f_bfree, "f_bavail %llu > f_bfree %llu",
	      (unsigned long long)s.f_bavail, (unsigned long long)s.f_bfree);
	CHECK(s.f_ffree <= s.f_files, "f_ffree %llu > f_files %llu",
	      (unsigned long long)s.f_ffree, (unsigned long long)s.f_files);
	CHECK(s.f_namelen >= 255, "f_namelen %ld", (long)s.f_namelen);
	fd = SYS(open(".", O_RDONLY | O_DIRECTORY));
	SYS(fstatfs(fd, &fs));
	SYS(close(fd));
	EQ(fs.f_type, s.f_type);
	EQ(fs.f_blocks, s.f_blocks);
	EQ(fs.f_bsize, s.f_bsize);
	SYS(statvfs(".", &v));
	EQ(v.f_blocks, s.f_blocks);
	return R_PASS;
}

/* --------------------------------------------------------- sync, space */

static int t_fsync(void)
{
	int fd, dfd;

	TRY(make_file("f", 36, 10000));
	fd = SYS(open("f", O_RDWR));
	EQ(SYS(pwrite(fd, "abc", 3, 5000)), 3);
	SYS(fsync(fd));
	EQ(SYS(pwrite(fd, "def", 3, 6000)), 3);
	SYS(fdatasync(fd));
	SYS(syncfs(fd));
	SYS(close(fd));
	fd = SYS(open("f", O_RDONLY));
	SYS(fsync(fd));
	SYS(close(fd));
	dfd = SYS(open(".", O_RDONLY | O_DIRECTORY));
	SYS(fsync(dfd));
	SYS(close(dfd));

	/* O_SYNC and O_DSYNC writes. */
	fd = SYS(open("g", O_WRONLY | O_CREAT | O_SYNC, 0644));
	EQ(SYS(write(fd, "sync", 4)), 4);
	SYS(close(fd));
	fd = SYS(open("g", O_WRONLY | O_APPEND | O_DSYNC));
	EQ(SYS(write(fd, "dsync", 5)), 5);
	SYS(close(fd));
	{
		char buf[16];

		fd = SYS(open("g", O_RDONLY));
		EQ(SYS(read(fd, buf, sizeof(buf))), 9);
		CHECK(!memcmp(buf, "syncdsync", 9), "got %.9s", buf);
		SYS(close(fd));
	}
	fd = SYS(open("f", O_RDWR));
	SYS(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	SYS(close(fd));
	return R_PASS;
}

#define SKIP_FALLOC(call)						\
	do {								\
		errno = 0;						\
		if ((call)) {						\
			if (errno == EOPNOTSUPP || errno == ENOSYS)	\
				skip("%s: %s (%s)", #call, errname(errno), \
				     strerror(errno));			\
			fail("%s: %s (%s)", #call, errname(errno),	\
			     strerror(errno));				\
		}							\
	} while (0)

static int t_fallocate(void)
{
	struct stat st;
	int fd;

	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	SKIP_FALLOC(fallocate(fd, 0, 0, MiB));
	SYS(fstat(fd, &st));
	EQ(st.st_size, MiB);
	CHECK(st.st_blocks * 512 >= MiB, "st_blocks %lld after allocating 1 MiB",
	      (long long)st.st_blocks);
	TRY(check_zero(fd, 0, MiB));

	/* KEEP_SIZE past EOF: space but no size change. */
	SYS(fallocate(fd, FALLOC_FL_KEEP_SIZE, MiB, MiB));
	SYS(fstat(fd, &st));
	EQ(st.st_size, MiB);
	CHECK(st.st_blocks * 512 >= 2 * MiB, "st_blocks %lld after KEEP_SIZE",
	      (long long)st.st_blocks);

	/* Allocating over data keeps it. */
	TRY(make_file("g", 37, 100000));
	SYS(close(fd));
	fd = SYS(open("g", O_RDWR));
	SYS(fallocate(fd, 0, 50000, 100000));
	EQ(fsize(fd), 150000);
	TRY(check_range(fd, 0, 100000, 37));
	TRY(check_zero(fd, 100000, 50000));
	EXPECT_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	SYS(close(fd));
	return R_PASS;
}

static int t_fallocate_punch(void)
{
	struct stat st0, st;
	int fd;

	TRY(make_file("f", 38, 256 * KiB));
	fd = SYS(open("f", O_RDWR));
	SYS(fsync(fd));
	SYS(fstat(fd, &st0));
	SKIP_FALLOC(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      64 * KiB, 64 * KiB));
	SYS(fstat(fd, &st));
	EQ(st.st_size, 256 * KiB);
	CHECK(st.st_blocks < st0.st_blocks, "st_blocks %lld -> %lld",
	      (long long)st0.st_blocks, (long long)st.st_blocks);
	TRY(check_range(fd, 0, 64 * KiB, 38));
	TRY(check_zero(fd, 64 * KiB, 64 * KiB));
	TRY(check_range(fd, 128 * KiB, 128 * KiB, 38));

	/* Unaligned punch zeroes exactly the range. */
	SYS(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      130 * KiB + 17, 5000));
	TRY(check_range(fd, 128 * KiB, 2 * KiB + 17, 38));
	TRY(check_zero(fd, 130 * KiB + 17, 5000));
	TRY(check_range(fd, 130 * KiB + 17 + 5000, 126 * KiB - 17 - 5000, 38));
	/* Punching needs KEEP_SIZE. */
	EXPECT_ERR2(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096), EINVAL,
		    EOPNOTSUPP);
	SYS(close(fd));
	return R_PASS;
}

static int t_fallocate_zero(void)
{
	int fd;

	TRY(make_file("f", 39, 64 * KiB));
	fd = SYS(open("f", O_RDWR));
	SKIP_FALLOC(fallocate(fd, FALLOC_FL_ZERO_RANGE, 4096, 8192));
	EQ(fsize(fd), 64 * KiB);
	TRY(check_range(fd, 0, 4096, 39));
	TRY(check_zero(fd, 4096, 8192));
	TRY(check_range(fd, 12288, 64 * KiB - 12288, 39));
	/* Past EOF without KEEP_SIZE extends. */
	SYS(fallocate(fd, FALLOC_FL_ZERO_RANGE, 64 * KiB, 4096));
	EQ(fsize(fd), 68 * KiB);
	SYS(close(fd));
	return R_PASS;
}

static int t_seek_data_hole(void)
{
	const off_t size = 2 * MiB;
	char *buf = xmalloc(64 * KiB);
	off_t hole;
	int fd;

	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	pat_fill(buf, 64 * KiB, 40, 0);
	EQ(SYS(pwrite(fd, buf, 64 * KiB, 0)), 64 * KiB);
	pat_fill(buf, 64 * KiB, 40, MiB);
	EQ(SYS(pwrite(fd, buf, 64 * KiB, MiB)), 64 * KiB);
	SYS(ftruncate(fd, size));
	SYS(fsync(fd));

	EQ(SYS(lseek(fd, 0, SEEK_DATA)), 0);
	hole = SYS(lseek(fd, 0, SEEK_HOLE));
	if (hole == size) {
		/*
		 * Allowed: a file system without hole tracking reports one
		 * data extent up to EOF.  Check that model is consistent.
		 */
		EQ(SYS(lseek(fd, 100 * KiB, SEEK_DATA)), 100 * KiB);
		EQ(SYS(lseek(fd, 100 * KiB, SEEK_HOLE)), size);
	} else {
		EQ(hole, 64 * KiB);
		EQ(SYS(lseek(fd, 100 * KiB, SEEK_DATA)), MiB);
		EQ(SYS(lseek(fd, MiB + 10, SEEK_DATA)), MiB + 10);
		EQ(SYS(lseek(fd, MiB, SEEK_HOLE)), MiB + 64 * KiB);
		EQ(SYS(lseek(fd, 100 * KiB, SEEK_HOLE)), 100 * KiB);
		/* Trailing hole: no data after the second extent. */
		EXPECT_ERR(lseek(fd, MiB + 64 * KiB, SEEK_DATA), ENXIO);
	}
	EXPECT_ERR(lseek(fd, size, SEEK_DATA), ENXIO);
	EXPECT_ERR(lseek(fd, size + 1, SEEK_HOLE), ENXIO);
	/* The holes read as zeros. */
	TRY(check_zero(fd, 64 * KiB, MiB - 64 * KiB));
	TRY(check_range(fd, MiB, 64 * KiB, 40));
	SYS(close(fd));
	free(buf);
	return R_PASS;
}

static int t_sparse_blocks(void)
{
	struct stat st;
	char buf[4096];
	int fd;

	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	SYS(ftruncate(fd, 16 * MiB));
	SYS(fsync(fd));
	SYS(fstat(fd, &st));
	EQ(st.st_size, 16 * MiB);
	CHECK(st.st_blocks * 512 < 64 * KiB,
	      "truncated-up file occupies %lld blocks", (long long)st.st_blocks);
	pat_fill(buf, sizeof(buf), 41, 8 * MiB);
	EQ(SYS(pwrite(fd, buf, sizeof(buf), 8 * MiB)), 4096);
	SYS(fsync(fd));
	SYS(fstat(fd, &st));
	CHECK(st.st_blocks * 512 >= 4096 && st.st_blocks * 512 <= 2 * MiB,
	      "one 4 KiB block written, st_blocks %lld", (long long)st.st_blocks);
	TRY(check_zero(fd, 0, 64 * KiB));
	TRY(check_range(fd, 8 * MiB, 4096, 41));
	SYS(close(fd));
	/* A fully written file is not sparse. */
	TRY(make_file("g", 42, MiB));
	fd = SYS(open("g", O_RDONLY));
	SYS(fsync(fd));
	SYS(fstat(fd, &st));
	CHECK(st.st_blocks * 512 >= MiB, "1 MiB file has st_blocks %lld",
	      (long long)st.st_blocks);
	SYS(close(fd));
	return R_PASS;
}

static int t_large_file(void)
{
	const off_t off = 5 * GiB;
	char buf[8192];
	struct stat st;
	int fd;

	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	pat_fill(buf, sizeof(buf), 43, off);
	EQ(SYS(pwrite(fd, buf, sizeof(buf), off)), (long)sizeof(buf));
	SYS(fsync(fd));
	SYS(fstat(fd, &st));
	EQ(st.st_size, off + (off_t)sizeof(buf));
	CHECK(st.st_blocks * 512 <= 4 * MiB, "not sparse: st_blocks %lld",
	      (long long)st.st_blocks);
	SYS(close(fd));
	fd = SYS(open("f", O_RDONLY));
	TRY(check_range(fd, off, sizeof(buf), 43));
	/* Around the 4 GiB boundary it is a hole. */
	TRY(check_zero(fd, 4 * GiB - 4096, 8192));
	EQ(SYS(lseek(fd, 0, SEEK_END)), off + (off_t)sizeof(buf));
	EQ(SYS(pread(fd, buf, sizeof(buf), off + sizeof(buf))), 0);
	SYS(close(fd));
	/* Truncate down across 4 GiB. */
	SYS(truncate("f", 4 * GiB + 1));
	SYS(stat("f", &st));
	EQ(st.st_size, 4 * GiB + 1);
	return R_PASS;
}

/* ------------------------------------------------------ mmap, O_DIRECT */

static int t_mmap_shared(void)
{
	const size_t len = 3 * 4096;
	char *map, *buf = xmalloc(len);
	int fd;

	TRY(make_file("f", 44, len));
	fd = SYS(open("f", O_RDWR));
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		if (errno == ENODEV)
			skip("mmap MAP_SHARED: ENODEV (%s): file opened for direct I/O without mmap",
			     strerror(errno));
		fail("mmap: %s (%s)", errname(errno), strerror(errno));
	}
	EQ(pat_check(map, len, 44, 0), -1);

	/* Store through the map, msync, read back with read(2). */
	pat_fill(map + 100, 5000, 45, 100);
	SYS(msync(map, len, MS_SYNC));
	EQ(SYS(pread_all(fd, buf, len, 0)), (long)len);
	EQ(pat_check(buf, 100, 44, 0), -1);
	EQ(pat_check(buf + 100, 5000, 45, 100), -1);
	EQ(pat_check(buf + 5100, len - 5100, 44, 5100), -1);

	/* write(2) is visible in the existing map. */
	pat_fill(buf, 4096, 46, 8192);
	EQ(SYS(pwrite(fd, buf, 4096, 8192)), 4096);
	EQ(pat_check(map + 8192, 4096, 46, 8192), -1);

	/* Stores that reach the file after munmap without msync. */
	memset(map, 'M', 10);
	SYS(munmap(map, len));
	SYS(close(fd));
	fd = SYS(open("f", O_RDONLY));
	EQ(SYS(pread_all(fd, buf, len, 0)), (long)len);
	CHECK(!memcmp(buf, "MMMMMMMMMM", 10), "munmap lost stores");
	EQ(pat_check(buf + 100, 5000, 45, 100), -1);
	SYS(close(fd));

	/* MAP_PRIVATE stores never reach the file. */
	fd = SYS(open("f", O_RDONLY));
	map = (void *)SYS(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			       fd, 0));
	memset(map, 'P', len);
	SYS(munmap(map, len));
	EQ(SYS(pread(fd, buf, 10, 0)), 10);
	CHECK(!memcmp(buf, "MMMMMMMMMM", 10), "MAP_PRIVATE store leaked");
	SYS(close(fd));
	free(buf);
	return R_PASS;
}

/* An mmap grown file: write through a map of a file extended by ftruncate. */
static int t_mmap_extend(void)
{
	const size_t len = 8 * 4096;
	char *map;
	int fd;

	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	SYS(ftruncate(fd, len));
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		if (errno == ENODEV)
			skip("mmap MAP_SHARED: ENODEV (%s)", strerror(errno));
		fail("mmap: %s (%s)", errname(errno), strerror(errno));
	}
	EQ(zero_check(map, len), -1);
	pat_fill(map, len, 47, 0);
	SYS(msync(map, len, MS_SYNC));
	SYS(munmap(map, len));
	SYS(close(fd));
	TRY(check_file("f", 47, len));
	return R_PASS;
}

static int t_odirect(void)
{
	const size_t len = 64 * KiB;
	char *buf, *rbuf;
	int fd, bfd;

	TRY(make_file("f", 48, len));
	errno = 0;
	fd = open("f", O_RDWR | O_DIRECT);
	if (fd < 0) {
		if (errno == EINVAL)
			skip("open O_DIRECT: EINVAL (%s): direct I/O not supported",
			     strerror(errno));
		fail("open O_DIRECT: %s (%s)", errname(errno), strerror(errno));
	}
	if (posix_memalign((void **)&buf, 4096, len) ||
	    posix_memalign((void **)&rbuf, 4096, len))
		fail("posix_memalign");
	EQ(SYS(pread(fd, rbuf, len, 0)), (long)len);
	EQ(pat_check(rbuf, len, 48, 0), -1);

	pat_fill(buf, 16 * KiB, 49, 8 * KiB);
	EQ(SYS(pwrite(fd, buf, 16 * KiB, 8 * KiB)), 16 * KiB);
	/* A buffered reader sees the direct write. */
	bfd = SYS(open("f", O_RDONLY));
	TRY(check_range(bfd, 0, 8 * KiB, 48));
	TRY(check_range(bfd, 8 * KiB, 16 * KiB, 49));
	TRY(check_range(bfd, 24 * KiB, 40 * KiB, 48));

	/* A buffered write is seen by a direct read. */
	pat_fill(buf, 4096, 50, 0);
	{
		int wfd = SYS(open("f", O_WRONLY));

		EQ(SYS(pwrite(wfd, buf, 4096, 0)), 4096);
		SYS(close(wfd));
	}
	EQ(SYS(pread(fd, rbuf, 4096, 0)), 4096);
	EQ(pat_check(rbuf, 4096, 50, 0), -1);

	/* Direct write extending the file; direct read at EOF is short. */
	pat_fill(buf, len, 51, len);
	EQ(SYS(pwrite(fd, buf, len, len)), (long)len);
	EQ(fsize(fd), 2 * (long)len);
	EQ(SYS(pread(fd, rbuf, len, 2 * len)), 0);
	TRY(check_range(bfd, len, len, 51));
	SYS(close(bfd));
	SYS(close(fd));
	free(buf);
	free(rbuf);
	return R_PASS;
}

/* ------------------------------------------------------------- copying */

static int t_copy_file_range(void)
{
	const size_t len = 200 * KiB;
	loff_t in = 1000, out = 5000;
	ssize_t n, done = 0;
	int src, dst;

	TRY(make_file("src", 52, len));
	src = SYS(open("src", O_RDONLY));
	dst = SYS(open("dst", O_RDWR | O_CREAT, 0644));
	while (done < 100000) {
		errno = 0;
		n = copy_file_range(src, &in, dst, &out, 100000 - done, 0);
		if (n < 0 && (errno == ENOSYS || errno == EOPNOTSUPP ||
			      errno == EXDEV))
			skip("copy_file_range: %s (%s)", errname(errno),
			     strerror(errno));
		if (n <= 0)
			fail("copy_file_range returned %zd: %s (%s)", n,
			     errname(errno), strerror(errno));
		done += n;
	}
	EQ(in, 101000);
	EQ(out, 105000);
	EQ(fsize(dst), 105000);
	TRY(check_zero(dst, 0, 5000));
	{
		char *buf = xmalloc(100000);

		EQ(SYS(pread_all(dst, buf, 100000, 5000)), 100000);
		EQ(pat_check(buf, 100000, 52, 1000), -1);
		free(buf);
	}
	/* NULL offsets use and advance the file offsets. */
	SYS(lseek(src, 0, SEEK_SET));
	SYS(lseek(dst, 0, SEEK_SET));
	SYS(ftruncate(dst, 0));
	for (done = 0; done < (ssize_t)len; done += n) {
		n = SYS(copy_file_range(src, NULL, dst, NULL, len - done, 0));
		CHECK(n > 0, "copy_file_range returned 0 before EOF");
	}
	EQ(SYS(lseek(src, 0, SEEK_CUR)), (long)len);
	EQ(SYS(lseek(dst, 0, SEEK_CUR)), (long)len);
	SYS(close(dst));
	TRY(check_file("dst", 52, len));
	/* At EOF it copies nothing. */
	in = len;
	dst = SYS(open("dst", O_WRONLY));
	EQ(SYS(copy_file_range(src, &in, dst, NULL, 10, 0)), 0);
	SYS(close(dst));
	SYS(close(src));
	return R_PASS;
}

/* --------------------------------------------------------------- locks */

static int t_flock(void)
{
	int a, b;

	TRY(make_file("f", 53, 1));
	a = SYS(open("f", O_RDWR));
	b = SYS(open("f", O_RDWR));
	errno = 0;
	if (flock(a, LOCK_EX)) {
		if (errno == ENOSYS || errno == EOPNOTSUPP)
			skip("flock: %s (%s)", errname(errno), strerror(errno));
		fail("flock: %s (%s)", errname(errno), strerror(errno));
	}
	/* flock locks belong to the open file description. */
	EXPECT_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	EXPECT_ERR(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK);
	SYS(flock(a, LOCK_UN));
	SYS(flock(b, LOCK_SH | LOCK_NB));
	SYS(flock(a, LOCK_SH | LOCK_NB));
	EXPECT_ERR(flock(a, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	SYS(close(b));
	/* Closing the holder's only fd drops its lock. */
	SYS(flock(a, LOCK_EX | LOCK_NB));
	SYS(close(a));
	b = SYS(open("f", O_RDWR));
	SYS(flock(b, LOCK_EX | LOCK_NB));
	SYS(close(b));
	return R_PASS;
}

static int setlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

static pid_t lock_parent;

/* Runs in a second process while the parent holds a write lock on [0,100). */
static int lock_child_conflict(void *arg)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 50, .l_len = 10 };
	int fd = SYS(open("f", O_RDWR));

	(void)arg;
	SYS(fcntl(fd, F_GETLK, &fl));
	EQ(fl.l_type, F_WRLCK);
	EQ(fl.l_start, 0);
	EQ(fl.l_len, 100);
	EQ(fl.l_pid, lock_parent);
	EXPECT_ERR2(setlk(fd, F_SETLK, F_RDLCK, 99, 1), EAGAIN, EACCES);
	/* Beyond the held range there is no conflict. */
	SYS(setlk(fd, F_SETLK, F_WRLCK, 100, 100));
	return R_PASS;
}

static int lock_child_free(void *arg)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 0 };
	int fd = SYS(open("f", O_RDWR));

	(void)arg;
	SYS(fcntl(fd, F_GETLK, &fl));
	EQ(fl.l_type, F_UNLCK);
	SYS(setlk(fd, F_SETLK, F_WRLCK, 0, 0));
	return R_PASS;
}

static int t_fcntl_lock(void)
{
	int fd, fd2;

	TRY(make_file("f", 54, 1000));
	lock_parent = getpid();
	fd = SYS(open("f", O_RDWR));
	errno = 0;
	if (setlk(fd, F_SETLK, F_WRLCK, 0, 100)) {
		if (errno == ENOSYS || errno == EOPNOTSUPP)
			skip("fcntl F_SETLK: %s (%s)", errname(errno),
			     strerror(errno));
		fail("fcntl F_SETLK: %s (%s)", errname(errno), strerror(errno));
	}
	TRY(in_child(lock_child_conflict, NULL));
	SYS(setlk(fd, F_SETLK, F_UNLCK, 0, 100));
	TRY(in_child(lock_child_free, NULL));

	/*
	 * POSIX: closing any fd of the file releases the process's locks on
	 * it, even if the lock was taken through another fd.
	 */
	SYS(setlk(fd, F_SETLK, F_WRLCK, 0, 100));
	fd2 = SYS(open("f", O_RDONLY));
	SYS(close(fd2));
	TRY(in_child(lock_child_free, NULL));

	/* Read locks share. */
	SYS(setlk(fd, F_SETLK, F_RDLCK, 0, 0));
	SYS(close(fd));
	return R_PASS;
}

/* -------------------------------------------------------------- errnos */

static int t_errno_enoent(void)
{
	struct stat st;
	char buf[8];

	EXPECT_ERR(open("missing", O_RDONLY), ENOENT);
	EXPECT_ERR(stat("missing", &st), ENOENT);
	EXPECT_ERR(lstat("missing", &st), ENOENT);
	EXPECT_ERR(unlink("missing"), ENOENT);
	EXPECT_ERR(rmdir("missing"), ENOENT);
	EXPECT_ERR(readlink("missing", buf, sizeof(buf)), ENOENT);
	EXPECT_ERR(chmod("missing", 0644), ENOENT);
	EXPECT_ERR(truncate("missing", 0), ENOENT);
	EXPECT_ERR(open("missing/f", O_CREAT | O_WRONLY, 0644), ENOENT);
	EXPECT_ERR(mkdir("missing/d", 0755), ENOENT);
	EXPECT_ERR(getxattr("missing", "user.x", buf, sizeof(buf)), ENOENT);
	EXPECT_ERR(open("", O_RDONLY), ENOENT);
	/* A name removed through another path is gone (no stale dentry). */
	TRY(make_file("f", 55, 1));
	SYS(stat("f", &st));
	SYS(unlink("./f"));
	EXPECT_ERR(stat("f", &st), ENOENT);
	return R_PASS;
}

static int t_errno_eexist(void)
{
	TRY(make_file("f", 56, 1));
	SYS(mkdir("d", 0755));
	EXPECT_ERR(mkdir("f", 0755), EEXIST);
	EXPECT_ERR(mkdir("d", 0755), EEXIST);
	EXPECT_ERR(symlink("x", "f"), EEXIST);
	EXPECT_ERR(symlink("x", "d"), EEXIST);
	EXPECT_ERR(link("f", "d"), EEXIST);
	EXPECT_ERR(mknod("f", S_IFREG | 0644, 0), EEXIST);
	EXPECT_ERR(mkfifo("d", 0644), EEXIST);
	EXPECT_ERR(open("d", O_CREAT | O_EXCL | O_RDONLY, 0644), EEXIST);
	return R_PASS;
}

static int t_errno_enotdir(void)
{
	struct stat st;

	TRY(make_file("f", 57, 1));
	EXPECT_ERR(open("f/x", O_RDONLY), ENOTDIR);
	EXPECT_ERR(stat("f/x", &st), ENOTDIR);
	EXPECT_ERR(open("f/x", O_CREAT | O_WRONLY, 0644), ENOTDIR);
	EXPECT_ERR(mkdir("f/x", 0755), ENOTDIR);
	EXPECT_ERR(open("f", O_RDONLY | O_DIRECTORY), ENOTDIR);
	EXPECT_ERR(rmdir("f"), ENOTDIR);
	EXPECT_ERR(stat("f/", &st), ENOTDIR);
	CHECK(opendir("f") == NULL && errno == ENOTDIR, "opendir(file): %s",
	      errname(errno));
	return R_PASS;
}

static int t_errno_eisdir(void)
{
	char buf[8];
	int fd;

	SYS(mkdir("d", 0755));
	EXPECT_ERR(open("d", O_WRONLY), EISDIR);
	EXPECT_ERR(open("d", O_RDWR), EISDIR);
	EXPECT_ERR(open("d", O_WRONLY | O_CREAT, 0644), EISDIR);
	/* Linux answers EISDIR where POSIX also allows EPERM. */
	EXPECT_ERR(unlink("d"), EISDIR);
	fd = SYS(open("d", O_RDONLY));
	EXPECT_ERR(read(fd, buf, sizeof(buf)), EISDIR);
	SYS(close(fd));
	return R_PASS;
}

static int t_errno_enametoolong(void)
{
	char name[300];
	struct stat st;
	int fd;

	memset(name, 'n', 256);
	name[256] = 0;
	EXPECT_ERR(open(name, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
	EXPECT_ERR(mkdir(name, 0755), ENAMETOOLONG);
	EXPECT_ERR(stat(name, &st), ENAMETOOLONG);
	EXPECT_ERR(symlink("x", name), ENAMETOOLONG);
	/* 255 bytes is NAME_MAX: that one works. */
	name[255] = 0;
	fd = SYS(open(name, O_CREAT | O_WRONLY, 0644));
	SYS(close(fd));
	SYS(stat(name, &st));
	TRY(make_file("f", 58, 1));
	SYS(rename("f", name));
	SYS(unlink(name));
	return R_PASS;
}

static int t_errno_ebadf(void)
{
	char buf[8];
	struct stat st;
	int fd;

	TRY(make_file("f", 59, 10));
	fd = SYS(open("f", O_RDONLY));
	EXPECT_ERR(write(fd, "x", 1), EBADF);
	SYS(close(fd));
	EXPECT_ERR(read(fd, buf, 1), EBADF);
	EXPECT_ERR(fstat(fd, &st), EBADF);
	EXPECT_ERR(close(fd), EBADF);
	fd = SYS(open("f", O_WRONLY));
	EXPECT_ERR(read(fd, buf, 1), EBADF);
	EXPECT_ERR(fallocate(-1, 0, 0, 1), EBADF);
	SYS(close(fd));
	return R_PASS;
}

static int t_errno_einval(void)
{
	int fd;

	TRY(make_file("f", 60, 10));
	fd = SYS(open("f", O_RDWR));
	EXPECT_ERR(lseek(fd, 0, 99), EINVAL);
	EXPECT_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	EXPECT_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	EXPECT_ERR(truncate("f", -5), EINVAL);
	SYS(close(fd));
	/* A directory cannot move into its own subtree. */
	SYS(mkdir("d", 0755));
	SYS(mkdir("d/sub", 0755));
	EXPECT_ERR(rename("d", "d/sub/x"), EINVAL);
	EXPECT_ERR(rmdir("d/sub/."), EINVAL);
	return R_PASS;
}

/* Link and rename across directories of the share are not cross-device. */
static int t_no_exdev(void)
{
	SYS(mkdir("a", 0755));
	SYS(mkdir("a/b", 0755));
	SYS(mkdir("c", 0755));
	TRY(make_file("a/b/f", 61, 100));
	SYS(link("a/b/f", "c/g"));
	SYS(rename("a/b/f", "c/h"));
	SYS(rename("a/b", "c/b"));
	SYS(rename("c/g", "../cross-case-tmp"));
	SYS(rename("../cross-case-tmp", "g"));
	TRY(check_file("g", 61, 100));
	TRY(check_file("c/h", 61, 100));
	return R_PASS;
}

static int t_errno_eloop(void)
{
	char buf[8];
	int fd;

	TRY(make_file("f", 62, 1));
	SYS(symlink("f", "l"));
	EXPECT_ERR(open("l", O_RDONLY | O_NOFOLLOW), ELOOP);
	/*
	 * O_NOFOLLOW only concerns the last component being a symlink: a
	 * file or directory opens (a device that re-opens its own fd through
	 * /proc/self/fd with the guest's flags gets this wrong).
	 */
	SYS(close(SYS(open("f", O_RDONLY | O_NOFOLLOW))));
	SYS(close(SYS(open("f", O_RDWR | O_NOFOLLOW))));
	SYS(mkdir("d", 0755));
	SYS(close(SYS(open("d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW))));
	SYS(symlink("b", "a"));
	SYS(symlink("a", "b"));
	EXPECT_ERR(open("a", O_RDONLY), ELOOP);
	EXPECT_ERR(open("a/x", O_CREAT | O_WRONLY, 0644), ELOOP);
	/* O_PATH|O_NOFOLLOW opens the link itself. */
	fd = SYS(open("l", O_PATH | O_NOFOLLOW));
	EQ(SYS(readlinkat(fd, "", buf, sizeof(buf))), 1);
	SYS(close(fd));
	return R_PASS;
}

/* ----------------------------------------------------------- unlink etc */

static int t_unlink_open(void)
{
	struct stat st;
	int fd;

	TRY(make_file("f", 63, 20000));
	fd = SYS(open("f", O_RDWR));
	SYS(unlink("f"));
	EXPECT_ERR(stat("f", &st), ENOENT);
	SYS(fstat(fd, &st));
	EQ(st.st_nlink, 0);
	EQ(st.st_size, 20000);
	TRY(check_range(fd, 0, 20000, 63));
	/* Still writable and growable. */
	{
		char buf[5000];

		pat_fill(buf, sizeof(buf), 64, 20000);
		EQ(SYS(pwrite(fd, buf, sizeof(buf), 20000)), 5000);
	}
	SYS(ftruncate(fd, 24000));
	EQ(fsize(fd), 24000);
	TRY(check_range(fd, 20000, 4000, 64));
	/* The name is free for a new file. */
	TRY(make_file("f", 65, 10));
	TRY(check_range(fd, 0, 100, 63));
	SYS(close(fd));
	TRY(check_file("f", 65, 10));
	return R_PASS;
}

static int t_dirfd_after_rename(void)
{
	struct stat st;
	int dfd, fd;

	SYS(mkdir("d", 0755));
	dfd = SYS(open("d", O_RDONLY | O_DIRECTORY));
	SYS(rename("d", "e"));
	fd = SYS(openat(dfd, "f", O_CREAT | O_WRONLY, 0644));
	EQ(SYS(write(fd, "abc", 3)), 3);
	SYS(close(fd));
	SYS(stat("e/f", &st));
	EQ(st.st_size, 3);
	SYS(mkdirat(dfd, "sub", 0755));
	SYS(stat("e/sub", &st));
	SYS(unlinkat(dfd, "f", 0));
	SYS(unlinkat(dfd, "sub", AT_REMOVEDIR));
	EXPECT_ERR(stat("e/f", &st), ENOENT);
	SYS(close(dfd));
	/* A cwd that is renamed stays usable. */
	SYS(chdir("e"));
	SYS(rename("../e", "../g"));
	TRY(make_file("h", 66, 5));
	SYS(chdir(".."));
	TRY(check_file("g/h", 66, 5));
	return R_PASS;
}

static int t_mknod(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int s;

	SYS(mkfifo("fifo", 0640));
	SYS(lstat("fifo", &st));
	CHECK(S_ISFIFO(st.st_mode), "mode 0%o", st.st_mode);
	EQ_O(st.st_mode & 07777, 0640);
	SYS(mknod("reg", S_IFREG | 0600, 0));
	SYS(lstat("reg", &st));
	CHECK(S_ISREG(st.st_mode), "mode 0%o", st.st_mode);
	EQ(st.st_size, 0);

	/* A fifo on the share works as a fifo (the guest implements it). */
	{
		int r = SYS(open("fifo", O_RDONLY | O_NONBLOCK));
		int w = SYS(open("fifo", O_WRONLY | O_NONBLOCK));
		char c;

		EQ(SYS(write(w, "q", 1)), 1);
		EQ(SYS(read(r, &c, 1)), 1);
		EQ(c, 'q');
		close(r);
		close(w);
	}

	strcpy(sa.sun_path, "sock");
	s = SYS(socket(AF_UNIX, SOCK_STREAM, 0));
	SYS(bind(s, (struct sockaddr *)&sa, sizeof(sa)));
	SYS(lstat("sock", &st));
	CHECK(S_ISSOCK(st.st_mode), "mode 0%o", st.st_mode);
	close(s);

	/*
	 * A device node: created as asked, or refused with EPERM by a device
	 * that keeps device nodes off the host (the reference device's
	 * default), and then not created at all.
	 */
	if (!geteuid()) {
		if (mknod("null", S_IFCHR | 0666, makedev(1, 3))) {
			CHECK(errno == EPERM, "mknod of a char device: %s",
			      errname(errno));
			EXPECT_ERR(lstat("null", &st), ENOENT);
			return R_PASS;
		}
		SYS(lstat("null", &st));
		CHECK(S_ISCHR(st.st_mode), "mode 0%o", st.st_mode);
		EQ(major(st.st_rdev), 1);
		EQ(minor(st.st_rdev), 3);
	}
	return R_PASS;
}

static int t_tmpfile(void)
{
	struct stat st;
	int fd;

	errno = 0;
	fd = open(".", O_TMPFILE | O_RDWR, 0600);
	if (fd < 0) {
		if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
			skip("O_TMPFILE: %s (%s)", errname(errno),
			     strerror(errno));
		fail("open O_TMPFILE: %s (%s)", errname(errno), strerror(errno));
	}
	EQ(SYS(write(fd, "tmp", 3)), 3);
	SYS(fstat(fd, &st));
	EQ(st.st_nlink, 0);
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; otherwise only check data. */
	if (!geteuid()) {
		SYS(linkat(fd, "", AT_FDCWD, "named", AT_EMPTY_PATH));
		SYS(stat("named", &st));
		EQ(st.st_size, 3);
		EQ(st.st_nlink, 1);
	}
	SYS(close(fd));
	return R_PASS;
}

/* ------------------------------------------------------------- signals */

static void on_usr1(int sig)
{
	(void)sig;
}

/* Sends SIGUSR1 to @pid every 200 us until killed. */
static pid_t start_signaller(pid_t pid)
{
	pid_t child;

	fflush(NULL);
	child = fork();
	if (child)
		return child;
	for (;;) {
		if (kill(pid, SIGUSR1))
			_exit(0);
		usleep(200);
	}
}

static void stop_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Retry on EINTR: only the data and the absence of other errors matter. */
#define RETRY(call)							\
	({								\
		long _v;						\
		do							\
			_v = (long)(call);				\
		while (_v == -1 && errno == EINTR);			\
		_v;							\
	})

/*
 * Requests interrupted by signals (FUSE_INTERRUPT on the hiprio queue)
 * and a process killed in the middle of I/O: data stays right, nothing
 * hangs, and the share keeps working afterwards.
 */
static int t_signals(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	const size_t len = 64 * KiB;
	char *buf = xmalloc(len), *rbuf = xmalloc(len);
	struct stat st;
	pid_t sig, victim;
	int fd, i;

	SYS(sigaction(SIGUSR1, &sa, NULL));
	fd = SYS(open("f", O_RDWR | O_CREAT, 0644));
	sig = start_signaller(getpid());
	CHECK(sig > 0, "fork: %s", strerror(errno));
	for (i = 0; i < 60; i++) {
		char name[32];
		int tfd;

		pat_fill(buf, len, 200 + i, i * len);
		if (RETRY(pwrite_all(fd, buf, len, i * len)) != (long)len) {
			stop_child(sig);
			fail("pwrite %d: %s (%s)", i, errname(errno),
			     strerror(errno));
		}
		if (RETRY(pread_all(fd, rbuf, len, i * len)) != (long)len ||
		    memcmp(buf, rbuf, len)) {
			stop_child(sig);
			fail("read back of block %d differs or failed", i);
		}
		snprintf(name, sizeof(name), "t%d", i);
		tfd = RETRY(open(name, O_CREAT | O_WRONLY, 0644));
		if (tfd < 0 || RETRY(fsync(tfd)) || close(tfd) ||
		    RETRY(stat(name, &st)) || RETRY(unlink(name))) {
			stop_child(sig);
			fail("metadata op on %s: %s (%s)", name, errname(errno),
			     strerror(errno));
		}
	}
	stop_child(sig);
	for (i = 0; i < 60; i++)
		TRY(check_range(fd, i * len, len, 200 + i));
	SYS(close(fd));

	/* SIGKILL a writer in the middle of its loop, several times. */
	for (i = 0; i < 5; i++) {
		fflush(NULL);
		victim = SYS(fork());
		if (!victim) {
			int vfd = open("victim", O_RDWR | O_CREAT, 0644);

			for (;;) {
				if (pwrite(vfd, buf, len, 0) < 0 ||
				    fsync(vfd) < 0 || ftruncate(vfd, 0) < 0)
					_exit(1);
			}
		}
		usleep(20000 + i * 10000);
		stop_child(victim);
	}
	SYS(stat("victim", &st));
	SYS(unlink("victim"));
	TRY(make_file("after", 201, 10000));
	TRY(check_file("after", 201, 10000));
	free(buf);
	free(rbuf);
	return R_PASS;
}

/* ---------------------------------------------------------------- main */

struct tcase {
	const char *name;
	int (*fn)(void);
};

#define T(n) { #n, t_##n }
static const struct tcase cases[] = {
	T(create_excl),
	T(open_trunc),
	T(open_append),
	T(rw_offsets),
	T(pread_pwrite),
	T(large_io),
	T(truncate),
	T(rename_file),
	T(rename_dir),
	T(rename_over),
	T(rename_noreplace),
	T(rename_exchange),
	T(link_nlink),
	T(symlink),
	T(mkdir_rmdir),
	T(dir_nlink),
	T(readdir_large),
	T(readdir_types),
	T(xattr),
	T(chmod),
	T(chown),
	T(utimens),
	T(times_update),
	T(stat_fields),
	T(access),
	T(statfs),
	T(fsync),
	T(fallocate),
	T(fallocate_punch),
	T(fallocate_zero),
	T(seek_data_hole),
	T(sparse_blocks),
	T(large_file),
	T(mmap_shared),
	T(mmap_extend),
	T(odirect),
	T(copy_file_range),
	T(flock),
	T(fcntl_lock),
	T(errno_enoent),
	T(errno_eexist),
	T(errno_enotdir),
	T(errno_eisdir),
	T(errno_enametoolong),
	T(errno_ebadf),
	T(errno_einval),
	T(no_exdev),
	T(errno_eloop),
	T(unlink_open),
	T(dirfd_after_rename),
	T(mknod),
	T(tmpfile),
	T(signals),
};
#define NCASES ARRAY_SIZE(cases)

static int rm_one(const char *path, const struct stat *st, int type,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path) ? -1 : 0;
	return unlink(path) ? -1 : 0;
}

/* rm -rf; returns 0 or -1 with errno. */
static int rm_tree(const char *path)
{
	return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run_case(const struct tcase *tc, const char *base, int timeout,
		    int keep)
{
	char dir[PATH_MAX];
	int status, r;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/%s", base, tc->name);
	why[0] = 0;
	if (mkdir(dir, 0755)) {
		snprintf(why, WHY_MAX, "mkdir %s: %s (%s)", dir,
			 errname(errno), strerror(errno));
		return R_FAIL;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, WHY_MAX, "fork: %s", strerror(errno));
		return R_FAIL;
	}
	if (!pid) {
		if (chdir(dir)) {
			snprintf(why, WHY_MAX, "chdir %s: %s", dir,
				 strerror(errno));
			_exit(R_FAIL);
		}
		umask(0);
		alarm(timeout);
		_exit(tc->fn());
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, WHY_MAX, "waitpid: %s", strerror(errno));
			return R_FAIL;
		}
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			snprintf(why, WHY_MAX, "timed out after %d s", timeout);
		else
			snprintf(why, WHY_MAX, "killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		r = R_FAIL;
	} else {
		r = WEXITSTATUS(status);
		if (r > R_SKIP) {
			snprintf(why, WHY_MAX, "exit status %d", r);
			r = R_FAIL;
		}
	}
	if (r == R_FAIL && keep)
		return r;
	/* Removing the case's files exercises unlink/rmdir too. */
	if (rm_tree(dir) && r != R_FAIL) {
		snprintf(why, WHY_MAX, "cleanup of %s: %s (%s)", dir,
			 errname(errno), strerror(errno));
		r = R_FAIL;
	}
	return r;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fstest DIR [-k CASE_GLOB]... [-l] [-v] [-K] [-t SECONDS]\n"
		"  -k GLOB  run only cases matching GLOB (repeatable)\n"
		"  -l       list cases and exit\n"
		"  -v       print each case's run time to stderr\n"
		"  -K       keep the directories of failed cases\n"
		"  -t SEC   per-case timeout (default 120)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *globs[64], *dir = NULL;
	int nglob = 0, list = 0, verbose = 0, keep = 0, timeout = 120;
	int pass = 0, nfail = 0, nskip = 0, opt;
	char base[PATH_MAX];
	unsigned int i;

	while ((opt = getopt(argc, argv, "k:lvKt:h")) != -1) {
		switch (opt) {
		case 'k':
			if (nglob < 64)
				globs[nglob++] = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'K':
			keep = 1;
			break;
		case 't':
			timeout = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	/* glibc's getopt permutes, so options may also follow DIR. */
	if (optind < argc)
		dir = argv[optind++];
	if (list) {
		for (i = 0; i < NCASES; i++)
			puts(cases[i].name);
		return 0;
	}
	if (!dir || optind < argc)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	why = mmap(NULL, WHY_MAX, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (why == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	snprintf(base, sizeof(base), "%s/fstest.%d", dir, (int)getpid());
	if (mkdir(base, 0755)) {
		fprintf(stderr, "fstest: mkdir %s: %s\n", base, strerror(errno));
		return 2;
	}

	for (i = 0; i < NCASES; i++) {
		const struct tcase *tc = &cases[i];
		double t0 = now_s();
		int k, r, match = !nglob;

		for (k = 0; k < nglob; k++)
			match |= !fnmatch(globs[k], tc->name, 0);
		if (!match)
			continue;
		r = run_case(tc, base, timeout, keep);
		switch (r) {
		case R_PASS:
			printf("ok %s\n", tc->name);
			pass++;
			break;
		case R_SKIP:
			printf("skip %s: %s\n", tc->name, why);
			nskip++;
			break;
		default:
			printf("not ok %s: %s\n", tc->name, why);
			nfail++;
		}
		if (verbose)
			fprintf(stderr, "# %s %.3f s\n", tc->name, now_s() - t0);
	}
	if (rmdir(base) && !(keep && nfail)) {
		printf("not ok cleanup: rmdir %s: %s (%s)\n", base,
		       errname(errno), strerror(errno));
		nfail++;
	}
	printf("%d passed, %d failed, %d skipped\n", pass, nfail, nskip);
	return nfail ? 1 : 0;
}
