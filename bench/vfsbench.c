// SPDX-License-Identifier: GPL-2.0
/*
 * vfsbench: the timed loops of the virtio-fs benchmarks (bench/).
 *
 * Every subcommand prints one JSON object on one line to stdout. Times are
 * CLOCK_MONOTONIC. Rates and loop means come from one clock reading before
 * and one after a long loop, so nothing is subtracted from them. Per-call
 * latencies (unlink) read the clock around every call and therefore include
 * one clock_gettime pair each; the same process measures that pair's cost
 * (clock_pair_ns) right before, so the reader can subtract it. In User-Mode
 * Linux clock_gettime is a trapped syscall and the pair costs about 14 us.
 *
 *   vfsbench clockpair N                   cost of a back-to-back pair
 *   vfsbench nullsys N                     getppid() loop: the syscall floor
 *   vfsbench statloop FILE N               stat() of one file, N times
 *   vfsbench unlink DIR N                  create N empty files, drop caches,
 *                                          time each unlinkat()
 *   vfsbench smallfile DIR N P SIZE        create+write, stat, open+read,
 *                                          unlink of N files by P processes
 *   vfsbench seqwrite FILE MIB fsync|nofsync
 *   vfsbench seqread FILE
 *   vfsbench run NAME -- CMD [ARGS...]     elapsed, user and system CPU
 *                                          of a command and its children
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (1 << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "vfsbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long arg_long(const char *s)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "vfsbench: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Writes "3" to drop_caches after a sync; returns 1 when that worked. */
static int drop_caches(void)
{
	int fd, ok;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return 0;
	ok = write(fd, "3", 1) == 1;
	close(fd);
	return ok;
}

struct summary {
	double mean, median, stddev, min, max, p90, p99;
};

static struct summary summarize(uint64_t *v, long n)
{
	struct summary s = { 0 };
	double sum = 0, sq = 0;
	long i;

	if (n <= 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += v[i];
	s.mean = sum / n;
	for (i = 0; i < n; i++)
		sq += (v[i] - s.mean) * (v[i] - s.mean);
	s.stddev = n > 1 ? sqrt(sq / (n - 1)) : 0;
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	s.min = v[0];
	s.max = v[n - 1];
	s.p90 = v[(long)((n - 1) * 0.90)];
	s.p99 = v[(long)((n - 1) * 0.99)];
	return s;
}

static double clock_pair_median(long n, double *min)
{
	uint64_t *v = malloc(n * sizeof(*v));
	struct timespec a, b;
	struct summary s;
	long i;

	if (!v)
		die("malloc");
	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		clock_gettime(CLOCK_MONOTONIC, &b);
		v[i] = (b.tv_sec - a.tv_sec) * 1000000000ull + b.tv_nsec - a.tv_nsec;
	}
	s = summarize(v, n);
	free(v);
	if (min)
		*min = s.min;
	return s.median;
}

static int cmd_clockpair(int argc, char **argv)
{
	long n = argc > 0 ? arg_long(argv[0]) : 10000;
	double min, med = clock_pair_median(n, &min);

	printf("{\"test\":\"clockpair\",\"n\":%ld,\"median_ns\":%.0f,\"min_ns\":%.0f}\n",
	       n, med, min);
	return 0;
}

static int cmd_nullsys(int argc, char **argv)
{
	long n = argc > 0 ? arg_long(argv[0]) : 100000, i;
	uint64_t t0, t1;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	t1 = now_ns();
	printf("{\"test\":\"nullsys\",\"n\":%ld,\"total_ns\":%llu,\"mean_ns\":%.1f}\n",
	       n, (unsigned long long)(t1 - t0), (double)(t1 - t0) / n);
	return 0;
}

static int cmd_statloop(int argc, char **argv)
{
	long n, i;
	struct stat st;
	uint64_t t0, t1;
	int fd;

	if (argc < 2)
		return 2;
	n = arg_long(argv[1]);
	fd = open(argv[0], O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		die(argv[0]);
	close(fd);
	if (stat(argv[0], &st))
		die("stat");
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (stat(argv[0], &st))
			die("stat");
	t1 = now_ns();
	unlink(argv[0]);
	printf("{\"test\":\"statloop\",\"n\":%ld,\"total_ns\":%llu,\"mean_ns\":%.1f}\n",
	       n, (unsigned long long)(t1 - t0), (double)(t1 - t0) / n);
	return 0;
}

static int cmd_unlink(int argc, char **argv)
{
	long n, i;
	int dfd, fd, dropped;
	char name[32];
	uint64_t *lat, t0, t1, a, b;
	double pair, pair_min;
	struct summary s;

	if (argc < 2)
		return 2;
	n = arg_long(argv[1]);
	if (mkdir(argv[0], 0755) && errno != EEXIST)
		die(argv[0]);
	dfd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die(argv[0]);
	lat = malloc(n * sizeof(*lat));
	if (!lat)
		die("malloc");

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%07ld", i);
		fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0)
			die("create");
		close(fd);
	}
	t1 = now_ns();
	dropped = drop_caches();
	pair = clock_pair_median(10000, &pair_min);

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%07ld", i);
		a = now_ns();
		if (unlinkat(dfd, name, 0))
			die("unlinkat");
		b = now_ns();
		lat[i] = b - a;
	}
	s = summarize(lat, n);
	close(dfd);
	rmdir(argv[0]);
	printf("{\"test\":\"unlink\",\"n\":%ld,\"create_s\":%.6f,\"creates_per_s\":%.1f,"
	       "\"inner_caches_dropped\":%d,\"clock_pair_ns\":%.0f,\"clock_pair_min_ns\":%.0f,"
	       "\"mean_ns\":%.0f,\"median_ns\":%.0f,\"stddev_ns\":%.0f,\"min_ns\":%.0f,"
	       "\"p90_ns\":%.0f,\"p99_ns\":%.0f,\"max_ns\":%.0f}\n",
	       n, (t1 - t0) / 1e9, n / ((t1 - t0) / 1e9), dropped, pair, pair_min,
	       s.mean, s.median, s.stddev, s.min, s.p90, s.p99, s.max);
	free(lat);
	return 0;
}

enum sf_phase { SF_CREATE, SF_STAT, SF_READ, SF_UNLINK };
static const char *const sf_names[] = { "create_write", "stat", "open_read", "unlink" };

static void sf_child(const char *dir, long first, long count, size_t size,
		     enum sf_phase ph)
{
	static char buf[BUF_SIZE];
	char path[4200];
	struct stat st;
	long i;
	int fd;

	memset(buf, 'x', size < sizeof(buf) ? size : sizeof(buf));
	for (i = first; i < first + count; i++) {
		snprintf(path, sizeof(path), "%s/f%07ld", dir, i);
		switch (ph) {
		case SF_CREATE:
			fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
			if (fd < 0)
				die("create");
			if (write(fd, buf, size) != (ssize_t)size)
				die("write");
			if (close(fd))
				die("close");
			break;
		case SF_STAT:
			if (stat(path, &st))
				die("stat");
			break;
		case SF_READ:
			fd = open(path, O_RDONLY);
			if (fd < 0)
				die("open");
			if (read(fd, buf, size) != (ssize_t)size)
				die("read");
			close(fd);
			break;
		case SF_UNLINK:
			if (unlink(path))
				die("unlink");
			break;
		}
	}
}

static int cmd_smallfile(int argc, char **argv)
{
	long n, procs, per, p;
	size_t size;
	char dir[4096];
	double secs[4];
	int ph, status, dropped = 1, failed = 0;
	uint64_t t0;
	pid_t pid;

	if (argc < 4)
		return 2;
	n = arg_long(argv[1]);
	procs = arg_long(argv[2]);
	size = arg_long(argv[3]);
	if (procs < 1 || size > BUF_SIZE)
		return 2;
	per = n / procs;
	if (mkdir(argv[0], 0755) && errno != EEXIST)
		die(argv[0]);
	for (p = 0; p < procs; p++) {
		snprintf(dir, sizeof(dir), "%s/p%ld", argv[0], p);
		if (mkdir(dir, 0755) && errno != EEXIST)
			die(dir);
	}
	for (ph = SF_CREATE; ph <= SF_UNLINK; ph++) {
		dropped &= drop_caches();
		t0 = now_ns();
		for (p = 0; p < procs; p++) {
			pid = fork();
			if (pid < 0)
				die("fork");
			if (pid == 0) {
				snprintf(dir, sizeof(dir), "%s/p%ld", argv[0], p);
				sf_child(dir, 0, per, size, ph);
				_exit(0);
			}
		}
		while (wait(&status) > 0)
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				failed = 1;
		secs[ph] = (now_ns() - t0) / 1e9;
		if (failed)
			break;
	}
	for (p = 0; p < procs; p++) {
		snprintf(dir, sizeof(dir), "%s/p%ld", argv[0], p);
		rmdir(dir);
	}
	rmdir(argv[0]);
	if (failed) {
		fprintf(stderr, "vfsbench: smallfile: a worker failed\n");
		return 1;
	}
	printf("{\"test\":\"smallfile\",\"n\":%ld,\"procs\":%ld,\"size\":%zu,\"inner_caches_dropped\":%d",
	       per * procs, procs, size, dropped);
	for (ph = SF_CREATE; ph <= SF_UNLINK; ph++)
		printf(",\"%s_s\":%.6f,\"%s_per_s\":%.1f", sf_names[ph], secs[ph],
		       sf_names[ph], per * procs / secs[ph]);
	printf("}\n");
	return 0;
}

static int cmd_seqwrite(int argc, char **argv)
{
	char *buf;
	long mib, i;
	int fd, do_fsync;
	uint64_t t0, t1, t2;

	if (argc < 3)
		return 2;
	mib = arg_long(argv[1]);
	do_fsync = !strcmp(argv[2], "fsync");
	buf = malloc(BUF_SIZE);
	if (!buf)
		die("malloc");
	memset(buf, 0x5a, BUF_SIZE);
	unlink(argv[0]);
	t0 = now_ns();
	fd = open(argv[0], O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		die(argv[0]);
	for (i = 0; i < mib; i++)
		if (write(fd, buf, BUF_SIZE) != BUF_SIZE)
			die("write");
	t1 = now_ns();
	if (do_fsync && fsync(fd))
		die("fsync");
	if (close(fd))
		die("close");
	t2 = now_ns();
	printf("{\"test\":\"seqwrite\",\"fsync\":%d,\"mib\":%ld,\"write_s\":%.6f,\"total_s\":%.6f,"
	       "\"mib_per_s\":%.2f}\n", do_fsync, mib, (t1 - t0) / 1e9, (t2 - t0) / 1e9,
	       mib / ((t2 - t0) / 1e9));
	free(buf);
	return 0;
}

static int cmd_seqread(int argc, char **argv)
{
	char *buf;
	long long total = 0;
	ssize_t r;
	int fd;
	uint64_t t0, t1;

	if (argc < 1)
		return 2;
	buf = malloc(BUF_SIZE);
	if (!buf)
		die("malloc");
	t0 = now_ns();
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		die(argv[0]);
	while ((r = read(fd, buf, BUF_SIZE)) > 0)
		total += r;
	if (r < 0)
		die("read");
	close(fd);
	t1 = now_ns();
	printf("{\"test\":\"seqread\",\"mib\":%.2f,\"total_s\":%.6f,\"mib_per_s\":%.2f}\n",
	       total / 1048576.0, (t1 - t0) / 1e9, total / 1048576.0 / ((t1 - t0) / 1e9));
	free(buf);
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct rusage ru;
	uint64_t t0, t1;
	int status;
	pid_t pid;

	if (argc < 3 || strcmp(argv[1], "--"))
		return 2;
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* stdout is for the JSON line: the command's output goes to stderr */
		dup2(2, 1);
		execvp(argv[2], argv + 2);
		die(argv[2]);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	t1 = now_ns();
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("{\"test\":\"run\",\"name\":\"%s\",\"status\":%d,\"elapsed_s\":%.6f,"
	       "\"user_s\":%.6f,\"sys_s\":%.6f}\n", argv[0],
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
	       (t1 - t0) / 1e9, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "clockpair", cmd_clockpair }, { "nullsys", cmd_nullsys },
		{ "statloop", cmd_statloop }, { "unlink", cmd_unlink },
		{ "smallfile", cmd_smallfile }, { "seqwrite", cmd_seqwrite },
		{ "seqread", cmd_seqread }, { "run", cmd_run },
	};
	size_t i;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: vfsbench SUBCOMMAND ARGS (see the source)\n");
		return 2;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		rc = cmds[i].fn(argc - 2, argv + 2);
		if (rc == 2)
			fprintf(stderr, "vfsbench %s: bad arguments\n", argv[1]);
		return rc;
	}
	fprintf(stderr, "vfsbench: unknown subcommand '%s'\n", argv[1]);
	return 2;
}
