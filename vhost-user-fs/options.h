/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VHOST_USER_FS_OPTIONS_H
#define VHOST_USER_FS_OPTIONS_H

#include <stdbool.h>

#define PIN_MAX_CPUS	256

/* Host CPUs, in the order the option gave them. */
struct pin_cpus {
	unsigned int n;
	unsigned short cpu[PIN_MAX_CPUS];
};

enum cache_mode { CACHE_NEVER, CACHE_AUTO, CACHE_ALWAYS };
enum sandbox_mode { SANDBOX_NAMESPACE, SANDBOX_CHROOT, SANDBOX_NONE };
enum seccomp_mode { SECCOMP_TRAP, SECCOMP_KILL, SECCOMP_NONE };
/* FOPEN_NOFLUSH on regular-file opens: auto = if the share's f_type allows */
enum flush_mode { FLUSH_AUTO, FLUSH_ALWAYS, FLUSH_NEVER };
/* which sync requests wait on a worker: auto = if the share's f_type asks */
enum watch_mode { WATCH_AUTO, WATCH_ALWAYS, WATCH_NEVER };

/* --sync-budget-us without the option, microseconds */
#define SYNC_BUDGET_US_DEFAULT	2000

struct options {
	const char *socket_path;
	const char *shared_dir;
	const char *tag;
	const char *stats_file;
	const char *xattr_prefix;	/* guest xattr names live under it */
	const char *trace_file;
	bool readonly;
	bool writeback;
	bool no_async_dio;		/* --no-async-dio: never grant FUSE_ASYNC_DIO */
	bool xattr;
	bool stats;
	bool persistent;
	bool debug;
	bool faults;
	const char *test_forbidden_syscall;	/* NULL, "uname" or "fork" */
	bool test_escape;		/* --test-escape */
	/* set by the sandbox: the working directory is /proc/self/fd */
	bool proc_is_cwd;
	bool allow_devices;		/* MKNOD of block and char devices */
	/* --file-handles: keep CAP_DAC_READ_SEARCH, reopen inodes by handle */
	bool file_handles;
	/* set by main.c: inodes keep their fds (no handle is decoded) */
	bool pin_inodes;
	bool no_kick_channel;
	bool populate_memory;		/* prefault guest memory when mapped */
	bool used_len_zero;		/* every used length 0, as libkrun < 1.19 */
	enum cache_mode cache;
	enum sandbox_mode sandbox;
	enum seccomp_mode seccomp;
	enum flush_mode flush;
	unsigned int request_queues;
	unsigned int sync_queues;
	unsigned int sync_bit;
	unsigned int workers;
	unsigned int queue_size;
	unsigned int fd_cache;
	unsigned int sync_late;
	unsigned int sync_budget_us;	/* a sync kick's bound, 0 = none */
	enum watch_mode sync_watch;
	unsigned int delay_us;		/* --delay-us: workers wait before each request */
	unsigned int sync_delay_ms;	/* --sync-delay-ms: sync kicks wait first */
	unsigned int backend_timeout;	/* seconds, 0 = wait for good */
	unsigned int max_files;		/* open + pinned files, 0 = from rlimit */
	unsigned int config_size;	/* 0: up to num_sync_queues */
	unsigned int sync_queues_at;	/* num_sync_queues' offset: 44 or 40 */
	struct pin_cpus pin_sync;	/* sync queue i's handler on entry i mod n */
	struct pin_cpus pin_workers;	/* every worker on all of them */
};

#endif
