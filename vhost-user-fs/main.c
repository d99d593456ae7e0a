// SPDX-License-Identifier: GPL-2.0
/*
 * vhost-user-fs: the project's reference virtio-fs device, a vhost-user
 * backend serving one host directory, with VIRTIO_FS_F_SYNC queues.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "dispatch.h"
#include "passthrough.h"
#include "pin.h"
#include "sandbox.h"
#include "vhost_user.h"

static struct options opt = {
	.tag = "share",
	.xattr = true,
	.cache = CACHE_AUTO,
	.request_queues = 1,
	.sync_queues = 1,
	.sync_bit = 1,
	.sync_budget_us = SYNC_BUDGET_US_DEFAULT,
	.sync_watch = WATCH_AUTO,
	.workers = 1,
	.queue_size = VRING_MAX_SIZE,
	.fd_cache = 2048,
	.backend_timeout = 30,
	.sandbox = SANDBOX_NAMESPACE,
	.seccomp = SECCOMP_TRAP,
	.sync_queues_at = 44,
};

static int sigfd = -1, stats_fd = -1;
static bool stop_requested;
/* who may be the frontend: our uid, root, and the --socket-group */
static uid_t owner_uid;
static gid_t socket_gid;
static bool have_socket_group;
static const char *socket_group;

#define STR_(x)		#x
#define STR(x)		STR_(x)

static void usage(FILE *f)
{
	fprintf(f,
"usage: vhost-user-fs --socket-path=PATH --shared-dir=DIR [options]\n"
"  --socket-path=PATH     vhost-user UNIX socket to listen on\n"
"  --socket-group=GROUP   make the socket 0660 and of GROUP, and accept\n"
"                         its members as the frontend (default: 0600, only\n"
"                         the daemon's uid and root)\n"
"  --shared-dir=DIR       directory to share (also -o source=DIR)\n"
"  --tag=TAG              mount tag in the config space (default share)\n"
"  --readonly             refuse every modification with EROFS\n"
"  --cache=auto|always|never  entry/attr timeouts and open flags (auto)\n"
"  --flush=auto|always|never  FLUSH on close: always sent, never (FOPEN_NOFLUSH\n"
"                         on every file open), or auto (default): never when\n"
"                         the share is on ext2/3/4, xfs, btrfs or tmpfs\n"
"                         (not on its submounts of other file systems)\n"
"  --writeback, --no-writeback  FUSE writeback cache (default off)\n"
"  --xattr, --no-xattr    extended attributes (default on)\n"
"  --request-queues=R     request queues in the config space (default 1)\n"
"  --sync-queues=S        sync queues, 0 = VIRTIO_FS_F_SYNC not offered (1)\n"
"  --sync-bit=N           feature bit of VIRTIO_FS_F_SYNC, 1..23 (default 1)\n"
"  --sync-budget-us=B     answer each sync kick within B us, 0..1000000\n"
"                         (default " STR(SYNC_BUDGET_US_DEFAULT) "): requests known to be long, and\n"
"                         those left once B is spent, complete after the\n"
"                         answer; the feature bit after --sync-bit (if it\n"
"                         is below 23) tells the guest; 0 = no budget, as\n"
"                         before, and that bit is not offered\n"
"  --sync-watch=auto|always|never  with a budget, which sync requests run\n"
"                         on a worker while the kick waits up to B for them\n"
"                         (later, they complete after the answer): always\n"
"                         every one; auto (default) every one when the share\n"
"                         is on a network or FUSE file system; all but never\n"
"                         those of an operation that overran B in a kick\n"
"                         within the last 10 s\n"
"  --workers=N            worker threads for request and hiprio queues (1)\n"
"  --queue-size=N         largest queue accepted, up to 1024 (default 1024)\n"
"  --fd-cache=N           O_PATH fds kept open for known inodes (2048)\n"
"  --backend-timeout=S    hang up on a frontend that leaves the backend\n"
"                         channel full for S seconds (30; 0 = never)\n"
"  --max-files=N          open files + inodes pinned with an fd; beyond it\n"
"                         ENFILE (default: from the open-file limit)\n"
"  --xattr-prefix=P       keep guest xattr names under P on the host (P must\n"
"                         start with user.); default: only user.* and POSIX\n"
"                         ACLs pass, other names are refused\n"
"  --allow-devices        let MKNOD create block and char devices\n"
"  --file-handles         in the sandbox, keep CAP_DAC_READ_SEARCH and reopen\n"
"                         evicted inodes by file handle: more inodes than\n"
"                         the open-file limit allows, but a daemon taken\n"
"                         over by the guest can then open any file of the\n"
"                         share's file systems (default: every inode the\n"
"                         guest knows keeps an fd; beyond --max-files ENFILE)\n"
"  --sync-queues-at=44|40 the offset of num_sync_queues in the config space:\n"
"                         44, the contract's (48 bytes), or 40, right after\n"
"                         num_request_queues, as a libkrun-style VMM appends\n"
"                         it to its 40-byte config (44 bytes) (44)\n"
"  --stats                print per-queue counters to stderr at exit\n"
"  --stats-file=FILE      write them to FILE at exit and on SIGUSR1\n"
"  --trace-file=FILE      one line per processed request: queue, thread,\n"
"                         opcode, CLOCK_MONOTONIC start and end in ns\n"
"  --no-kick-channel      do not offer the per-queue kick channels (the\n"
"                         project's vhost-user extension, bit 62)\n"
"  --persistent           keep serving new frontends after a disconnect\n"
"  --populate-memory      prefault guest memory when it is mapped\n"
"                         (MADV_POPULATE_WRITE, Linux 5.14+; a warning\n"
"                         where the host refuses it), so no first write\n"
"                         to a guest page takes a host page fault\n"
"  --sandbox=namespace|chroot|none  namespaces and pivot_root into the\n"
"                         share (default), chroot only, or nothing; the\n"
"                         first two need root and limit capabilities\n"
"  --seccomp=trap|kill|none  system-call allow-list: a forbidden call\n"
"                         ends the daemon with a message (trap, default),\n"
"                         silently (kill), or no filter\n"
"  --pin-sync=CPU[,CPU...]  pin sync queue i's handler thread to entry\n"
"                         i mod n, the control thread to all of them\n"
"  --pin-workers=LIST     pin the worker threads to the CPUs of LIST\n"
"  --debug                log every request that fails to stderr\n"
"  --help                 this text\n"
"--help-test lists the test knobs, for tests and benchmarks only.\n");
}

/* The knobs of tests and benchmarks, kept out of --help. */
static void usage_test(FILE *f)
{
	fprintf(f,
"vhost-user-fs test knobs, for tests and benchmarks only (never for a guest\n"
"that is not a test), given beside the options of --help:\n"
"  --faults               a LOOKUP of vfs-fault-KIND gets a bad reply of that\n"
"                         kind (README: fault injection)\n"
"  --sync-late=N          complete every Nth sync-queue request after the\n"
"                         kick's acknowledgement (0 = never)\n"
"  --delay-us=N           a worker waits N us before it handles each request\n"
"                         or hiprio request, so that they pile up in the\n"
"                         queue (0 = never)\n"
"  --sync-delay-ms=N      a sync queue's kick waits N ms before its requests\n"
"                         run (a host slower than the frontend's bound;\n"
"                         0 = never)\n"
"  --config-size=N        a config space of N bytes, 40..48 (up to\n"
"                         num_sync_queues); reads past it give all ones, and\n"
"                         short of num_sync_queues the sync queues do not\n"
"                         exist (the bit is offered)\n"
"  --used-len-zero        put every buffer on the used ring with length 0, as\n"
"                         libkrun's device did before 1.19 (the guest reads\n"
"                         the length from the reply's header)\n"
"  --no-async-dio         never grant FUSE_ASYNC_DIO, as a frontend with sync\n"
"                         queues never gets it (bench knob: the same\n"
"                         O_DIRECT path for an interrupt-driven frontend)\n"
"  --test-forbidden-syscall[=uname|fork]  once the sandbox is up, call uname\n"
"                         or fork, which it forbids\n"
"  --test-escape          once the sandbox is up, act as a daemon taken over\n"
"                         by the guest: try to leave it, report each\n"
"                         attempt, exit 0 if all failed, else 3\n"
"  --help-test            this text\n");
}

static void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "vhost-user-fs: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry --help.\n");
	exit(2);
}

static unsigned int parse_uint(const char *name, const char *s,
			       unsigned int min, unsigned int max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "vhost-user-fs: --%s=%s: expected %u..%u\n",
			name, s, min, max);
		exit(2);
	}
	return v;
}

static void parse_o(char *arg)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "source=", 7))
			opt.shared_dir = tok + 7;
		else if (!strcmp(tok, "xattr"))
			opt.xattr = true;
		else if (!strcmp(tok, "no_xattr"))
			opt.xattr = false;
		else if (!strcmp(tok, "writeback"))
			opt.writeback = true;
		else if (!strcmp(tok, "no_writeback"))
			opt.writeback = false;
		else if (!strncmp(tok, "cache=", 6))
			opt.cache = !strcmp(tok + 6, "none") ||
				!strcmp(tok + 6, "never") ? CACHE_NEVER :
				!strcmp(tok + 6, "always") ? CACHE_ALWAYS :
				CACHE_AUTO;
		else
			die_usage("unknown -o option '%s'", tok);
	}
}

struct choice {
	const char *name;
	unsigned int value;
};

static const struct choice cache_choices[] = {
	{ "auto", CACHE_AUTO }, { "always", CACHE_ALWAYS },
	{ "never", CACHE_NEVER }, { "none", CACHE_NEVER }, { }
};
static const struct choice flush_choices[] = {
	{ "auto", FLUSH_AUTO }, { "always", FLUSH_ALWAYS },
	{ "never", FLUSH_NEVER }, { }
};
static const struct choice sandbox_choices[] = {
	{ "namespace", SANDBOX_NAMESPACE }, { "chroot", SANDBOX_CHROOT },
	{ "none", SANDBOX_NONE }, { }
};
static const struct choice watch_choices[] = {
	{ "auto", WATCH_AUTO }, { "always", WATCH_ALWAYS },
	{ "never", WATCH_NEVER }, { }
};
static const struct choice seccomp_choices[] = {
	{ "trap", SECCOMP_TRAP }, { "kill", SECCOMP_KILL },
	{ "none", SECCOMP_NONE }, { }
};

/* The enums of options.h are set through an unsigned int (GCC's type for them). */
_Static_assert(sizeof(enum cache_mode) == sizeof(unsigned int) &&
	       sizeof(enum sandbox_mode) == sizeof(unsigned int) &&
	       sizeof(enum seccomp_mode) == sizeof(unsigned int) &&
	       sizeof(enum flush_mode) == sizeof(unsigned int) &&
	       sizeof(enum watch_mode) == sizeof(unsigned int),
	       "enum options are set as unsigned int");

enum opt_kind {
	K_TRUE,		/* bool *p = true */
	K_FALSE,	/* bool *p = false */
	K_STRING,	/* const char **p = the argument */
	K_UINT,		/* unsigned int *p = the argument, min..max */
	K_CHOICE,	/* unsigned int *p = the value of the choice named */
	K_CPUS,		/* struct pin_cpus *p = the CPUs listed */
	K_OWN,		/* a case of its own in parse_args() */
};

struct opt_def {
	const char *name;
	enum opt_kind kind;
	void *p;
	unsigned int min, max;
	const struct choice *choices;
};

#define DEF(n, k, field)	.name = (n), .kind = (k), .p = &opt.field
#define FLAG(n, field)		{ DEF(n, K_TRUE, field) }
#define NOFLAG(n, field)	{ DEF(n, K_FALSE, field) }
#define STRING(n, field)	{ DEF(n, K_STRING, field) }
#define UINT(n, field, lo, hi)	{ DEF(n, K_UINT, field), .min = (lo), .max = (hi) }
#define CHOICE(n, field, c)	{ DEF(n, K_CHOICE, field), .choices = (c) }
#define CPUS(n, field)		{ DEF(n, K_CPUS, field) }
#define OWN(n)			{ .name = (n), .kind = K_OWN }

static const struct opt_def opt_defs[] = {
	STRING("socket-path", socket_path),
	OWN("socket-group"),
	STRING("shared-dir", shared_dir),
	STRING("tag", tag),
	FLAG("readonly", readonly),
	CHOICE("cache", cache, cache_choices),
	CHOICE("flush", flush, flush_choices),
	FLAG("writeback", writeback),
	NOFLAG("no-writeback", writeback),
	FLAG("no-async-dio", no_async_dio),
	FLAG("xattr", xattr),
	NOFLAG("no-xattr", xattr),
	UINT("request-queues", request_queues, 1, FS_MAX_QUEUES - 1),
	UINT("sync-queues", sync_queues, 0, FS_MAX_QUEUES - 2),
	UINT("sync-bit", sync_bit, 1, 23),
	UINT("workers", workers, 1, 64),
	UINT("queue-size", queue_size, 1, VRING_MAX_SIZE),
	UINT("fd-cache", fd_cache, 1, 16384),
	FLAG("stats", stats),
	STRING("stats-file", stats_file),
	STRING("trace-file", trace_file),
	FLAG("no-kick-channel", no_kick_channel),
	FLAG("populate-memory", populate_memory),
	FLAG("persistent", persistent),
	FLAG("debug", debug),
	UINT("sync-late", sync_late, 0, 1000000),
	UINT("sync-budget-us", sync_budget_us, 0, 1000000),
	CHOICE("sync-watch", sync_watch, watch_choices),
	UINT("delay-us", delay_us, 0, 1000000),
	UINT("sync-delay-ms", sync_delay_ms, 0, 60000),
	FLAG("faults", faults),
	CHOICE("sandbox", sandbox, sandbox_choices),
	UINT("backend-timeout", backend_timeout, 0, 86400),
	CHOICE("seccomp", seccomp, seccomp_choices),
	OWN("test-forbidden-syscall"),
	FLAG("test-escape", test_escape),
	UINT("max-files", max_files, 16, 1000000),
	OWN("xattr-prefix"),
	FLAG("allow-devices", allow_devices),
	FLAG("file-handles", file_handles),
	UINT("config-size", config_size, 40, 48),
	UINT("sync-queues-at", sync_queues_at, 40, 44),
	FLAG("used-len-zero", used_len_zero),
	CPUS("pin-sync", pin_sync),
	CPUS("pin-workers", pin_workers),
	OWN("help"),
	OWN("help-test"),
};

#define N_OPTS		(sizeof(opt_defs) / sizeof(opt_defs[0]))
#define OPT_VAL		256	/* getopt's value for opt_defs[i]: OPT_VAL + i */

static unsigned int parse_choice(const struct opt_def *d, const char *arg)
{
	const struct choice *c;
	char expected[128] = "";
	size_t n = 0;

	for (c = d->choices; c->name; c++) {
		if (!strcmp(arg, c->name))
			return c->value;
		n += snprintf(expected + n, sizeof(expected) - n, "%s%s",
			      c == d->choices ? "" : c[1].name ? ", " : " or ",
			      c->name);
	}
	fprintf(stderr, "vhost-user-fs: --%s=%s: expected %s\nTry --help.\n",
		d->name, arg, expected);
	exit(2);
}

static void parse_cpus(const char *name, const char *arg, struct pin_cpus *l)
{
	unsigned int bad;
	int err;

	if (pin__parse(l, arg)) {
		fprintf(stderr, "vhost-user-fs: --%s=%s: expected CPU numbers and ranges, as 0,2-3\n",
			name, arg);
		exit(2);
	}
	err = pin__allowed(l, &bad);
	if (err == -EINVAL) {
		fprintf(stderr, "vhost-user-fs: --%s=%s: this process may not run on CPU %u\n",
			name, arg, bad);
		exit(2);
	}
}

/* An option of opt_defs with its argument, unless it is K_OWN: true. */
static bool parse_def(const struct opt_def *d, const char *arg)
{
	switch (d->kind) {
	case K_TRUE:
	case K_FALSE:
		*(bool *)d->p = d->kind == K_TRUE;
		return true;
	case K_STRING:
		*(const char **)d->p = arg;
		return true;
	case K_UINT:
		*(unsigned int *)d->p = parse_uint(d->name, arg, d->min, d->max);
		return true;
	case K_CHOICE:
		*(unsigned int *)d->p = parse_choice(d, arg);
		return true;
	case K_CPUS:
		parse_cpus(d->name, arg, d->p);
		return true;
	case K_OWN:
		break;
	}
	return false;
}

static void parse_args(int argc, char **argv)
{
	struct option lo[N_OPTS + 1];
	const char *name;
	unsigned int i;
	int c;

	for (i = 0; i < N_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];

		lo[i] = (struct option){ d->name, required_argument, NULL,
					 OPT_VAL + i };
		if (d->kind == K_TRUE || d->kind == K_FALSE ||
		    !strcmp(d->name, "help") || !strcmp(d->name, "help-test"))
			lo[i].has_arg = no_argument;
		else if (!strcmp(d->name, "test-forbidden-syscall"))
			lo[i].has_arg = optional_argument;
	}
	memset(&lo[N_OPTS], 0, sizeof(lo[N_OPTS]));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (c >= OPT_VAL && c < OPT_VAL + (int)N_OPTS &&
		    parse_def(&opt_defs[c - OPT_VAL], optarg))
			continue;
		name = c >= OPT_VAL && c < OPT_VAL + (int)N_OPTS ?
			opt_defs[c - OPT_VAL].name : "";
		if (c == 'o') {
			parse_o(optarg);
		} else if (c == 'h' || !strcmp(name, "help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(name, "help-test")) {
			usage_test(stdout);
			exit(0);
		} else if (!strcmp(name, "test-forbidden-syscall")) {
			opt.test_forbidden_syscall = optarg ? optarg : "uname";
			if (strcmp(opt.test_forbidden_syscall, "uname") &&
			    strcmp(opt.test_forbidden_syscall, "fork"))
				die_usage("--test-forbidden-syscall=%s: expected uname or fork",
					  optarg);
		} else if (!strcmp(name, "socket-group")) {
			socket_group = optarg;
		} else if (!strcmp(name, "xattr-prefix")) {
			if (strncmp(optarg, "user.", 5) || strlen(optarg) > 64)
				die_usage("--xattr-prefix=%s: must start with user. (at most 64 bytes)",
					  optarg);
			opt.xattr_prefix = optarg;
		} else {
			die_usage("unknown or incomplete option '%s'",
				  argv[optind - 1]);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!opt.socket_path)
		die_usage("%s", "--socket-path is required");
	if (!opt.shared_dir)
		die_usage("%s", "--shared-dir is required");
	if (socket_group) {
		struct group *g = getgrnam(socket_group);
		char *end;

		if (g) {
			socket_gid = g->gr_gid;
		} else {
			errno = 0;
			socket_gid = strtoul(socket_group, &end, 10);
			if (errno || end == socket_group || *end)
				die_usage("--socket-group=%s: no such group",
					  socket_group);
		}
		have_socket_group = true;
	}
	if (strlen(opt.tag) == 0 || strlen(opt.tag) > 36)
		die_usage("--tag=%s: 1 to 36 bytes", opt.tag);
	if (opt.sync_queues_at != 40 && opt.sync_queues_at != 44)
		die_usage("%s", "--sync-queues-at: 44 or 40");
	if (1 + opt.request_queues + opt.sync_queues > FS_MAX_QUEUES)
		die_usage("%s", "too many queues");
}

/*
 * The sandbox hides the host's paths, so the file is opened at start and
 * rewritten in place.
 */
static void write_stats(void)
{
	FILE *f;
	int fd;

	if (stats_fd < 0)
		return;
	fd = dup(stats_fd);
	f = fd >= 0 && !ftruncate(stats_fd, 0) &&
		lseek(stats_fd, 0, SEEK_SET) == 0 ? fdopen(fd, "w") : NULL;
	if (f) {
		dispatch__stats_print(f);
		if (fclose(f))
			fprintf(stderr, "vhost-user-fs: %s: %m\n", opt.stats_file);
	} else {
		fprintf(stderr, "vhost-user-fs: %s: %m\n", opt.stats_file);
		if (fd >= 0)
			close(fd);
	}
}

/* The signal fd became readable: true if we should stop. */
static bool on_signal(void)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			write_stats();
			if (opt.stats)
				dispatch__stats_print(stderr);
		} else {
			stop_requested = true;
		}
	}
	return stop_requested;
}

/* --test-escape: one attempt's outcome; true if it got out. */
static bool escape_report(const char *what, int fd, const char *got)
{
	if (fd < 0) {
		fprintf(stderr, "vhost-user-fs: test: escape: %s: refused (%m)\n",
			what);
		return false;
	}
	fprintf(stderr, "vhost-user-fs: test: escape: %s: ESCAPED: %s\n",
		what, got);
	close(fd);
	return true;
}

/*
 * What a daemon taken over by the guest could try with the system calls
 * the sandbox allows, the share being "/" and the working directory
 * /proc/self/fd. Nothing is written: an open for writing is the escape.
 */
static int test_escape(void)
{
	struct {
		struct file_handle fh;
		uint32_t ino, gen;
	} h = { .fh = { .handle_bytes = 8, .handle_type = 1 }, .ino = 2 };
	struct stat share, st;
	bool out = false;
	int mfd, fd;

	/* a forged handle: inode 2, generation 0, the root of ext2/3/4 */
	mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0 || fstat(mfd, &share))
		return 1;
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && st.st_ino == share.st_ino &&
	    st.st_dev == share.st_dev) {
		/* the share is that root: the handle named nothing outside */
		close(fd);
		fd = -1;
		errno = 0;
	}
	if (fd >= 0) {
		int f = openat(fd, "etc/shadow", O_RDONLY | O_CLOEXEC);

		out |= escape_report("open_by_handle_at of a forged handle", fd,
				     f >= 0 ? "the file system's root, etc/shadow readable" :
				     "a directory outside the share");
		if (f >= 0)
			close(f);
	} else {
		out |= escape_report("open_by_handle_at of a forged handle", -1, NULL);
	}
	close(mfd);
	/* sysctls through the procfs the working directory is in */
	fd = open("../../sys/kernel/core_pattern", O_WRONLY | O_CLOEXEC);
	out |= escape_report("write kernel.core_pattern", fd, "opened for writing");
	fd = open("../../sys/kernel/hostname", O_WRONLY | O_CLOEXEC);
	out |= escape_report("write kernel.hostname", fd, "opened for writing");
	fd = open("../../sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	out |= escape_report("write vm.drop_caches", fd, "opened for writing");
	/* the host's processes, through the procfs */
	fd = open("../../1/root/etc/shadow", O_RDONLY | O_CLOEXEC);
	out |= escape_report("pid 1's root", fd, "etc/shadow readable");
	return out ? 3 : 0;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "vhost-user-fs: socket path too long\n");
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	/*
	 * Made 0600 (no moment at a wider mode), then given the group; no
	 * one connects before listen().
	 */
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (!err && have_socket_group)
		err = chown(path, -1, socket_gid) || chmod(path, 0660);
	if (err || listen(fd, 1)) {
		fprintf(stderr, "vhost-user-fs: %s: %m\n", path);
		close(fd);
		return -1;
	}
	return fd;
}

static bool peer_in_group(int fd)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	unsigned int i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (i = 0; i < len / sizeof(gid_t); i++) {
		if (groups[i] == socket_gid)
			return true;
	}
	return false;
}

/*
 * The frontend speaks for the guest with full authority over the share
 * (it picks the uid of every request): only our own uid, root, or a
 * member of --socket-group may be it, whatever the socket's mode.
 */
static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len)) {
		fprintf(stderr, "vhost-user-fs: refused a frontend: SO_PEERCRED: %m\n");
		return false;
	}
	if (cr.uid == 0 || cr.uid == owner_uid ||
	    (have_socket_group && (cr.gid == socket_gid || peer_in_group(fd))))
		return true;
	fprintf(stderr, "vhost-user-fs: refused a frontend: pid %d uid %u gid %u is not uid %u, root%s\n",
		(int)cr.pid, (unsigned int)cr.uid, (unsigned int)cr.gid,
		(unsigned int)owner_uid,
		have_socket_group ? " or in the socket's group" : "");
	return false;
}

static int accept_frontend(int lfd)
{
	struct pollfd p[2] = {
		{ .fd = lfd, .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if ((p[1].revents & POLLIN) && on_signal())
			return -1;
		if (p[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0 && !peer_allowed(fd)) {
				close(fd);
				continue;
			}
			if (fd >= 0 || errno != EINTR)
				return fd;
		}
	}
}

/*
 * Open files need real fds on top of the inode cache: take the hard limit,
 * and keep the cache well inside it.
 */
static void fd_limits(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur != RLIM_INFINITY && opt.fd_cache > rl.rlim_cur / 4) {
		opt.fd_cache = rl.rlim_cur / 4 ? rl.rlim_cur / 4 : 1;
		fprintf(stderr, "vhost-user-fs: fd limit %llu: fd cache %u\n",
			(unsigned long long)rl.rlim_cur, opt.fd_cache);
	}
}

int main(int argc, char **argv)
{
	struct vu_dev *vu;
	struct fuse_server *srv;
	sigset_t set;
	int lfd, ret = 0;

	pin__init();
	owner_uid = getuid();
	parse_args(argc, argv);
	fd_limits();
	/* the guest kernel applies the caller's umask before sending modes */
	umask(0);
	if (opt.stats_file) {
		stats_fd = dispatch__open_output(opt.stats_file, 0);
		if (stats_fd < 0) {
			fprintf(stderr, "vhost-user-fs: %s: %s\n",
				opt.stats_file, strerror(-stats_fd));
			return 1;
		}
	}
	/* host paths: opened before the sandbox takes the host away */
	if (opt.trace_file && dispatch__trace_open(opt.trace_file)) {
		fprintf(stderr, "vhost-user-fs: %s: %m\n", opt.trace_file);
		return 1;
	}

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* blocked before any thread exists, so every thread inherits it */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (vring__catch_faults())
		perror("vhost-user-fs: sigaction SIGBUS");

	/* the share's file system, seen from the host */
	dispatch__watch_init(&opt);
	/* the socket lives outside the share: listen before the sandbox */
	lfd = listen_on(opt.socket_path);
	if (lfd < 0)
		return 1;
	if (sandbox__enter(&opt))
		goto fail;
	sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		perror("vhost-user-fs: signalfd");
		goto fail;
	}

	opt.pin_inodes = opt.sandbox != SANDBOX_NONE && !opt.file_handles;
	srv = passthrough__new(&opt);
	if (!srv || sandbox__lock(&opt))
		goto fail;
	opt.proc_is_cwd = opt.sandbox != SANDBOX_NONE;
	if (opt.test_escape)
		return test_escape();
	if (opt.test_forbidden_syscall) {
		const char *call = opt.test_forbidden_syscall;

		fprintf(stderr, "vhost-user-fs: test: calling %s\n", call);
		if (!strcmp(call, "fork")) {
			pid_t pid = fork();

			if (!pid)
				_exit(0);
		} else {
			syscall(SYS_uname, NULL);
		}
		fprintf(stderr, "vhost-user-fs: test: %s was allowed\n", call);
		goto fail;
	}
	vu = vhost_user__new(&opt, srv);
	if (!vu)
		return 1;
	if (dispatch__init(&opt, srv)) {
		fprintf(stderr, "vhost-user-fs: cannot start workers\n");
		return 1;
	}

	for (;;) {
		int fd = accept_frontend(lfd);

		if (fd < 0) {
			if (!stop_requested) {
				perror("vhost-user-fs: accept");
				ret = 1;
			}
			break;
		}
		if (vhost_user__serve(vu, fd, sigfd, on_signal))
			break;
		if (!opt.persistent)
			break;
	}
	close(lfd);
	/* with a namespace sandbox our parent does it; chroot cannot */
	if (opt.sandbox == SANDBOX_NONE)
		unlinkat(AT_FDCWD, opt.socket_path, 0);
	write_stats();
	if (opt.stats)
		dispatch__stats_print(stderr);
	return ret;
fail:
	if (opt.sandbox == SANDBOX_NONE)
		unlinkat(AT_FDCWD, opt.socket_path, 0);
	return 1;
}
