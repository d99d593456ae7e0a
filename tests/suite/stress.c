// SPDX-License-Identifier: GPL-2.0
/*
 * stress - concurrent writers on a share, with a checksum manifest for the
 * host to verify.
 *
 *   stress DIR [--writers N] [--files F] [--size BYTES] [--seconds S]
 *              [--ops N] [--seed N] [--pin]
 *
 * N writer processes (default: one per online CPU; --pin: writer W bound
 * to the W-th CPU the process may run on, modulo their number, so that
 * every CPU gets one) each own F files in
 * DIR, at most BYTES long, and apply random operations until S seconds or
 * N ops have passed: rewrite (O_TRUNC), pwrite, append (O_APPEND),
 * rename, replace (write a temp file, rename it over), truncate, unlink
 * and recreate, mmap store, and pwrite into the writer's own region of
 * the common file shared.dat.  Every writer keeps an in-memory model of
 * its files and checks the file against it after some operations and at
 * the end.  Content is pseudo-random from --seed.
 *
 * DIR/MANIFEST then lists "SHA256 SIZE PATH" for every file, computed
 * from the models, not from the files: verify-manifest on the host
 * compares what the guest meant to write with what reached the host.
 * Output: one "ok"/"not ok" line per writer and for the shared file and
 * manifest, then "N passed, N failed, 0 skipped".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sha256.h"

#define MAX_FILES 256
#define MAX_WRITERS 64
#define NAME_LEN 48
#define SHARED_NAME "shared.dat"

enum op {
	OP_REWRITE, OP_PWRITE, OP_APPEND, OP_RENAME, OP_REPLACE, OP_TRUNCATE,
	OP_UNLINK, OP_MMAP, OP_SHARED, OP_VERIFY, NOPS
};

static const char *const op_names[NOPS] = {
	"rewrite", "pwrite", "append", "rename", "replace", "truncate",
	"unlink", "mmap", "shared", "verify",
};

/* Relative weights of the operations. */
static const int op_weight[NOPS] = { 3, 6, 4, 2, 2, 3, 1, 2, 4, 3 };

struct entry {
	char name[NAME_LEN];
	unsigned long long len;
	char hex[65];
};

/* One per writer, in memory shared with the parent. */
struct result {
	int failed;
	char why[512];
	unsigned long ops[NOPS];
	unsigned long long bytes;
	int mmap_unsupported;
	int cpu;		/* --pin: the writer's CPU, else -1 */
	int nentries;
	struct entry entries[MAX_FILES];
};

struct wfile {
	char name[NAME_LEN];
	unsigned int gen;
	size_t len;
	unsigned char *data;	/* model of the content, opt.size bytes */
	enum op last_op;
};

static struct {
	const char *dir;
	int writers, files;
	size_t size;
	double seconds;
	unsigned long max_ops;
	uint64_t seed;
	int pin;
} opt = { .files = 8, .size = 65536, .seconds = 10, .max_ops = 20000,
	  .seed = 1 };

static struct result *results;	/* [writers] */
static unsigned char *shared_model;	/* [writers * size] */
static struct result *me;
static int wid;
static uint64_t rng;
static double deadline;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64*: fast, and the sequence depends only on the seed. */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static size_t rnd_below(size_t n)
{
	return n ? rnd() % n : 0;
}

static void rnd_fill(unsigned char *p, size_t len)
{
	while (len >= 8) {
		uint64_t x = rnd();

		memcpy(p, &x, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t x = rnd();

		memcpy(p, &x, len);
	}
}

/* Record the first failure of this writer; returns -1 for "return fail(...)". */
static int fail(const char *fmt, ...)
{
	va_list ap;

	if (me->failed)
		return -1;
	va_start(ap, fmt);
	vsnprintf(me->why, sizeof(me->why), fmt, ap);
	va_end(ap);
	me->failed = 1;
	return -1;
}

static int sysfail(const char *what, const char *name)
{
	int e = errno;

	return fail("%s %s: %s (%s)", what, name, strerrorname_np(e) ?: "E?",
		    strerror(e));
}

/* Write @len bytes at @off in random-sized chunks, as applications do. */
static int write_chunks(int fd, const unsigned char *p, size_t len, off_t off,
			int append, const char *name)
{
	while (len) {
		size_t n = 1 + rnd_below(rnd() & 1 ? 4096 : 65536);
		ssize_t w;

		if (n > len)
			n = len;
		w = append ? write(fd, p, n) : pwrite(fd, p, n, off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return sysfail("write", name);
		}
		if (w == 0)
			return fail("write %s: returned 0", name);
		me->bytes += w;
		p += w;
		off += w;
		len -= w;
	}
	return 0;
}

/* Compare the file at @fd with @len bytes of @model at @off. */
static int check_fd(int fd, const unsigned char *model, size_t len, off_t off,
		    const char *name, const char *last)
{
	unsigned char buf[65536];
	size_t done = 0;

	while (done < len) {
		size_t want = len - done < sizeof(buf) ? len - done : sizeof(buf);
		ssize_t n = pread(fd, buf, want, off + done);
		size_t i;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return sysfail("read", name);
		}
		if (n == 0)
			return fail("%s: EOF at %zu, expected %zu bytes (last op %s)",
				    name, done, len, last);
		for (i = 0; i < (size_t)n; i++)
			if (buf[i] != model[done + i])
				return fail("%s: byte %llu is 0x%02x, expected 0x%02x (last op %s)",
					    name, (unsigned long long)off + done + i,
					    buf[i], model[done + i], last);
		done += n;
	}
	return 0;
}

static int verify_file(struct wfile *f)
{
	struct stat st;
	int fd, r;

	fd = open(f->name, O_RDONLY);
	if (fd < 0)
		return sysfail("open", f->name);
	if (fstat(fd, &st)) {
		close(fd);
		return sysfail("fstat", f->name);
	}
	if ((size_t)st.st_size != f->len) {
		close(fd);
		return fail("%s: size %lld, expected %zu (last op %s)", f->name,
			    (long long)st.st_size, f->len, op_names[f->last_op]);
	}
	r = check_fd(fd, f->data, f->len, 0, f->name, op_names[f->last_op]);
	close(fd);
	return r;
}

static void next_name(struct wfile *f, int idx)
{
	snprintf(f->name, sizeof(f->name), "w%02d-f%03d-g%u", wid, idx,
		 ++f->gen);
}

static int op_rewrite(struct wfile *f)
{
	size_t len = rnd_below(opt.size + 1);
	int fd = open(f->name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return sysfail("open O_TRUNC", f->name);
	rnd_fill(f->data, len);
	f->len = len;
	if (write_chunks(fd, f->data, len, 0, 0, f->name))
		return -1;
	if (rnd_below(8) == 0 && fsync(fd))
		return sysfail("fsync", f->name);
	if (close(fd))
		return sysfail("close", f->name);
	return 0;
}

static int op_pwrite(struct wfile *f)
{
	size_t off = rnd_below(f->len + 1);
	size_t len = rnd_below(opt.size - off + 1);
	int fd = open(f->name, O_RDWR);

	if (fd < 0)
		return sysfail("open", f->name);
	rnd_fill(f->data + off, len);
	if (write_chunks(fd, f->data + off, len, off, 0, f->name))
		return -1;
	if (off + len > f->len)
		f->len = off + len;
	if (rnd_below(8) == 0 && fdatasync(fd))
		return sysfail("fdatasync", f->name);
	if (close(fd))
		return sysfail("close", f->name);
	return 0;
}

static int op_append(struct wfile *f)
{
	size_t len = rnd_below(opt.size - f->len + 1);
	int fd = open(f->name, O_WRONLY | O_APPEND);

	if (fd < 0)
		return sysfail("open O_APPEND", f->name);
	rnd_fill(f->data + f->len, len);
	if (write_chunks(fd, f->data + f->len, len, 0, 1, f->name))
		return -1;
	f->len += len;
	if (close(fd))
		return sysfail("close", f->name);
	return 0;
}

static int op_rename(struct wfile *f, int idx)
{
	char old[NAME_LEN];

	strcpy(old, f->name);
	next_name(f, idx);
	if (rename(old, f->name))
		return sysfail("rename", old);
	return 0;
}

/* The editor's save: full new content in a temp file, renamed over. */
static int op_replace(struct wfile *f, int idx)
{
	char tmp[NAME_LEN + 8], old[NAME_LEN];
	size_t len = rnd_below(opt.size + 1);
	int fd;

	snprintf(tmp, sizeof(tmp), "w%02d-f%03d.tmp", wid, idx);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return sysfail("open O_EXCL", tmp);
	rnd_fill(f->data, len);
	f->len = len;
	if (write_chunks(fd, f->data, len, 0, 0, tmp))
		return -1;
	if (fsync(fd))
		return sysfail("fsync", tmp);
	if (close(fd))
		return sysfail("close", tmp);
	/* Half the time over the current name, half onto a new one. */
	if (rnd() & 1) {
		if (rename(tmp, f->name))
			return sysfail("rename over", f->name);
	} else {
		strcpy(old, f->name);
		next_name(f, idx);
		if (rename(tmp, f->name))
			return sysfail("rename", tmp);
		if (unlink(old))
			return sysfail("unlink", old);
	}
	return 0;
}

static int op_truncate(struct wfile *f)
{
	size_t len = rnd_below(opt.size + 1);

	if (rnd() & 1) {
		if (truncate(f->name, len))
			return sysfail("truncate", f->name);
	} else {
		int fd = open(f->name, O_WRONLY);

		if (fd < 0)
			return sysfail("open", f->name);
		if (ftruncate(fd, len))
			return sysfail("ftruncate", f->name);
		if (close(fd))
			return sysfail("close", f->name);
	}
	if (len > f->len)
		memset(f->data + f->len, 0, len - f->len);
	f->len = len;
	return 0;
}

static int op_unlink(struct wfile *f, int idx)
{
	if (unlink(f->name))
		return sysfail("unlink", f->name);
	next_name(f, idx);
	return op_rewrite(f);
}

static int op_mmap(struct wfile *f)
{
	size_t off, len;
	unsigned char *map;
	int fd;

	if (me->mmap_unsupported || !f->len)
		return op_pwrite(f);
	fd = open(f->name, O_RDWR);
	if (fd < 0)
		return sysfail("open", f->name);
	map = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		if (errno != ENODEV)
			return sysfail("mmap", f->name);
		/* A direct_io open without shared mmap: say so, carry on. */
		me->mmap_unsupported = 1;
		close(fd);
		return op_pwrite(f);
	}
	off = rnd_below(f->len);
	len = 1 + rnd_below(f->len - off);
	rnd_fill(f->data + off, len);
	memcpy(map + off, f->data + off, len);
	me->bytes += len;
	if (rnd() & 1 && msync(map, f->len, MS_SYNC))
		return sysfail("msync", f->name);
	if (munmap(map, f->len))
		return sysfail("munmap", f->name);
	if (close(fd))
		return sysfail("close", f->name);
	return 0;
}

static int op_shared(void)
{
	unsigned char *region = shared_model + (size_t)wid * opt.size;
	size_t off = rnd_below(opt.size);
	size_t len = 1 + rnd_below(opt.size - off);
	int fd = open(SHARED_NAME, O_RDWR);

	if (fd < 0)
		return sysfail("open", SHARED_NAME);
	rnd_fill(region + off, len);
	if (write_chunks(fd, region + off, len, (off_t)wid * opt.size + off, 0,
			 SHARED_NAME))
		return -1;
	if (rnd_below(4) == 0 &&
	    check_fd(fd, region, opt.size, (off_t)wid * opt.size, SHARED_NAME,
		     "shared"))
		return -1;
	if (close(fd))
		return sysfail("close", SHARED_NAME);
	return 0;
}

static enum op pick_op(void)
{
	int total = 0, i, r;

	for (i = 0; i < NOPS; i++)
		total += op_weight[i];
	r = rnd_below(total);
	for (i = 0; i < NOPS; i++) {
		r -= op_weight[i];
		if (r < 0)
			break;
	}
	return i;
}

/* --pin: bind this writer to the wid-th allowed CPU (modulo their number). */
static int pin_writer(void)
{
	cpu_set_t all, one;
	int cpu, k;

	if (sched_getaffinity(0, sizeof(all), &all))
		return sysfail("sched_getaffinity", "");
	k = wid % CPU_COUNT(&all);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all) && !k--)
			break;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return sysfail("sched_setaffinity", "");
	me->cpu = cpu;
	return 0;
}

static int writer(void)
{
	struct wfile *files = calloc(opt.files, sizeof(*files));
	unsigned long n;
	int i;

	if (!files)
		return fail("out of memory");
	me->cpu = -1;
	if (opt.pin && pin_writer())
		return -1;
	rng = opt.seed * 0x9e3779b97f4a7c15ULL + wid + 1;
	for (i = 0; i < opt.files; i++) {
		files[i].data = malloc(opt.size + 1);
		if (!files[i].data)
			return fail("out of memory");
		next_name(&files[i], i);
		files[i].last_op = OP_REWRITE;
		if (op_rewrite(&files[i]))
			return -1;
	}

	for (n = 0; n < opt.max_ops && now_s() < deadline; n++) {
		int idx = rnd_below(opt.files);
		struct wfile *f = &files[idx];
		enum op op = pick_op();
		int r;

		switch (op) {
		case OP_REWRITE:
			r = op_rewrite(f);
			break;
		case OP_PWRITE:
			r = op_pwrite(f);
			break;
		case OP_APPEND:
			r = op_append(f);
			break;
		case OP_RENAME:
			r = op_rename(f, idx);
			break;
		case OP_REPLACE:
			r = op_replace(f, idx);
			break;
		case OP_TRUNCATE:
			r = op_truncate(f);
			break;
		case OP_UNLINK:
			r = op_unlink(f, idx);
			break;
		case OP_MMAP:
			r = op_mmap(f);
			break;
		case OP_SHARED:
			r = op_shared();
			break;
		default:
			r = verify_file(f);
			break;
		}
		if (r)
			return -1;
		if (op != OP_VERIFY && op != OP_SHARED)
			f->last_op = op;
		me->ops[op]++;
	}

	/* Final read-back in the guest, then the manifest entries. */
	for (i = 0; i < opt.files; i++) {
		struct entry *e = &me->entries[me->nentries++];

		if (verify_file(&files[i]))
			return -1;
		strcpy(e->name, files[i].name);
		e->len = files[i].len;
		sha256_hex(files[i].data, files[i].len, e->hex);
	}
	return 0;
}

static int write_manifest(int nwriters, const char *shared_hex,
			  size_t shared_len, char *why, size_t whylen)
{
	FILE *m = fopen("MANIFEST.tmp", "w");
	int w, i;

	if (!m) {
		snprintf(why, whylen, "fopen MANIFEST.tmp: %s", strerror(errno));
		return -1;
	}
	fprintf(m, "%s %zu %s\n", shared_hex, shared_len, SHARED_NAME);
	for (w = 0; w < nwriters; w++)
		for (i = 0; i < results[w].nentries; i++) {
			struct entry *e = &results[w].entries[i];

			fprintf(m, "%s %llu %s\n", e->hex, e->len, e->name);
		}
	if (fflush(m) || fsync(fileno(m)) || fclose(m)) {
		snprintf(why, whylen, "writing MANIFEST.tmp: %s", strerror(errno));
		return -1;
	}
	if (rename("MANIFEST.tmp", "MANIFEST")) {
		snprintf(why, whylen, "rename MANIFEST: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int dir_is_empty(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int empty = 1;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

/*
 * Once, at the first hung writer: every blocked task's stack (sysrq w:
 * the kworkers a writer may wait for) and each FUSE connection's count of
 * requests sent and not answered, into the kernel log.
 */
static void report_blocked(FILE *kmsg)
{
	static int done;
	char path[300], line[64];
	struct dirent *d;
	FILE *f;
	DIR *dir;

	if (done++)
		return;
	f = fopen("/proc/sysrq-trigger", "w");
	if (f) {
		fputs("w", f);
		fclose(f);
	}
	dir = opendir("/sys/fs/fuse/connections");
	while (dir && kmsg && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%s/waiting", d->d_name);
		f = fopen(path, "r");
		if (f && fgets(line, sizeof(line), f)) {
			fprintf(kmsg, "stress: fuse connection %s waiting=%s", d->d_name, line);
			fflush(kmsg);
		}
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
}

/*
 * A writer that hangs: where it waits, from /proc/PID/stack (root in the
 * guest), on stdout and in the kernel log (/dev/kmsg), where the console
 * keeps it even if the guest never ends. Best effort: either may be absent.
 */
static void report_hung(int w, pid_t pid)
{
	char path[64], line[256];
	FILE *f, *kmsg;

	kmsg = fopen("/dev/kmsg", "w");
	report_blocked(kmsg);
	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		if (kmsg)
			fclose(kmsg);
		return;
	}
	printf("# writer %d (pid %d) hung in:\n", w, (int)pid);
	while (fgets(line, sizeof(line), f)) {
		printf("#   %s", line);
		if (kmsg) {
			fprintf(kmsg, "stress: writer %d hung in %s", w, line);
			fflush(kmsg);
		}
	}
	fflush(stdout);
	fclose(f);
	if (kmsg)
		fclose(kmsg);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: stress DIR [--writers N] [--files F] [--size BYTES]\n"
		"              [--seconds S] [--ops N] [--seed N] [--pin]\n"
		"  DIR must be empty or absent; it gets the files and MANIFEST.\n"
		"  --writers  writer processes (default: online CPUs)\n"
		"  --files    files per writer (default 8, max %d)\n"
		"  --size     maximum file size and shared region (default 65536)\n"
		"  --seconds  time bound (default 10)\n"
		"  --ops      operation bound per writer (default 20000)\n"
		"  --pin      writer W on the W-th allowed CPU (modulo their number)\n",
		MAX_FILES);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "writers", required_argument, NULL, 'w' },
		{ "files", required_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 'S' },
		{ "pin", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct result scratch;	/* for fail() in the parent */
	int c, w, pass = 0, nfail = 0, fd;
	pid_t pids[MAX_WRITERS];
	size_t shared_len;
	char hex[65], why[600];
	double t0;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			opt.writers = atoi(optarg);
			break;
		case 'f':
			opt.files = atoi(optarg);
			break;
		case 's':
			opt.size = strtoull(optarg, NULL, 0);
			break;
		case 't':
			opt.seconds = atof(optarg);
			break;
		case 'o':
			opt.max_ops = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			opt.pin = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	opt.dir = argv[optind];
	if (opt.writers <= 0)
		opt.writers = sysconf(_SC_NPROCESSORS_ONLN);
	if (opt.writers <= 0)
		opt.writers = 1;
	if (opt.writers > MAX_WRITERS || opt.files <= 0 ||
	    opt.files > MAX_FILES || opt.size < 1 || opt.size > (1UL << 30))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (mkdir(opt.dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "stress: mkdir %s: %s\n", opt.dir, strerror(errno));
		return 2;
	}
	/* A leftover file would show up as "extra" in verify-manifest. */
	if (!dir_is_empty(opt.dir)) {
		fprintf(stderr, "stress: %s is not an empty directory\n", opt.dir);
		return 2;
	}
	if (chdir(opt.dir)) {
		fprintf(stderr, "stress: chdir %s: %s\n", opt.dir, strerror(errno));
		return 2;
	}

	shared_len = opt.size * opt.writers;
	results = mmap(NULL, sizeof(*results) * opt.writers,
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	shared_model = mmap(NULL, shared_len, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (results == MAP_FAILED || shared_model == MAP_FAILED) {
		perror("stress: mmap");
		return 2;
	}
	/* shared.dat starts as zeros, like its model. */
	fd = open(SHARED_NAME, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || ftruncate(fd, shared_len) || close(fd)) {
		fprintf(stderr, "stress: creating %s: %s\n", SHARED_NAME,
			strerror(errno));
		return 2;
	}

	t0 = now_s();
	deadline = t0 + opt.seconds;
	fflush(NULL);
	for (w = 0; w < opt.writers; w++) {
		pids[w] = fork();
		if (pids[w] < 0) {
			perror("stress: fork");
			return 2;
		}
		if (!pids[w]) {
			wid = w;
			me = &results[w];
			_exit(writer() ? 1 : 0);
		}
	}
	/* A writer that hangs on the share must not hang the suite. */
	for (w = 0; w < opt.writers; w++) {
		double hard = deadline + 120 + opt.seconds;
		int status;

		for (;;) {
			pid_t p = waitpid(pids[w], &status, WNOHANG);

			if (p == pids[w])
				break;
			if (p < 0) {
				status = 0x100;
				break;
			}
			if (now_s() > hard) {
				report_hung(w, pids[w]);
				kill(pids[w], SIGKILL);
				waitpid(pids[w], &status, 0);
				snprintf(results[w].why, sizeof(results[w].why),
					 "hung: killed %.0f s after the deadline",
					 hard - deadline);
				results[w].failed = 1;
				break;
			}
			usleep(50 * 1000);
		}
		if (WIFSIGNALED(status) && !results[w].failed) {
			snprintf(results[w].why, sizeof(results[w].why),
				 "killed by signal %d (%s)", WTERMSIG(status),
				 strsignal(WTERMSIG(status)));
			results[w].failed = 1;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			results[w].failed = 1;
			if (!results[w].why[0])
				strcpy(results[w].why, "exited with an error");
		}
	}

	for (w = 0; w < opt.writers; w++) {
		struct result *r = &results[w];
		unsigned long total = 0;
		char detail[400];
		int i, len = 0;

		for (i = 0; i < NOPS; i++) {
			total += r->ops[i];
			len += snprintf(detail + len, sizeof(detail) - len,
					"%s%s %lu", i ? ", " : "",
					op_names[i], r->ops[i]);
		}
		if (r->failed) {
			printf("not ok stress-writer-%d: after %lu ops: %s\n", w,
			       total, r->why);
			nfail++;
			continue;
		}
		printf("ok stress-writer-%d: %lu ops (%s), %.1f MiB written%s",
		       w, total, detail, r->bytes / 1048576.0,
		       r->mmap_unsupported ?
		       ", mmap ops done as pwrite (MAP_SHARED: ENODEV)" : "");
		if (r->cpu >= 0)
			printf(", on CPU %d", r->cpu);
		printf("\n");
		pass++;
	}

	/* Every writer finished: the whole shared file must match. */
	fd = open(SHARED_NAME, O_RDONLY);
	me = &scratch;
	if (fd < 0) {
		printf("not ok stress-shared: open %s: %s\n", SHARED_NAME,
		       strerror(errno));
		nfail++;
	} else {
		struct stat st;

		if (fstat(fd, &st) || (size_t)st.st_size != shared_len)
			fail("%s: size %lld, expected %zu", SHARED_NAME,
			     (long long)st.st_size, shared_len);
		else
			check_fd(fd, shared_model, shared_len, 0, SHARED_NAME,
				 "shared");
		close(fd);
		if (me->failed) {
			printf("not ok stress-shared: %s\n", me->why);
			nfail++;
		} else {
			printf("ok stress-shared: %s, %zu bytes from %d writers\n",
			       SHARED_NAME, shared_len, opt.writers);
			pass++;
		}
	}

	sha256_hex(shared_model, shared_len, hex);
	if (nfail) {
		printf("skip stress-manifest: not written after a failure\n");
	} else if (write_manifest(opt.writers, hex, shared_len, why,
				  sizeof(why))) {
		printf("not ok stress-manifest: %s\n", why);
		nfail++;
	} else {
		printf("ok stress-manifest: %s/MANIFEST, %d files, %.1f s\n",
		       opt.dir, 1 + opt.writers * opt.files, now_s() - t0);
		pass++;
	}
	printf("%d passed, %d failed, %d skipped\n", pass, nfail, nfail ? 1 : 0);
	return nfail ? 1 : 0;
}
