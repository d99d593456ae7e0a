// SPDX-License-Identifier: GPL-2.0
/*
 * Sandbox: namespaces, the share as the root, capabilities, seccomp.
 *
 * The layers and what each one gives (README: Security model):
 * - a bind mount of the share over itself, in a private mount namespace,
 *   on which every fd of the share is opened: the kernel refuses ".." above
 *   a bind mount's root, so a directory a host process moves out of the
 *   share cannot be used to walk out of it;
 * - pivot_root into that bind mount, the old root detached: no path the
 *   daemon could build (or be tricked into following) reaches a host file;
 * - the share's mounts nodev and nosuid in that namespace;
 * - new pid, network, UTS and IPC namespaces: a fresh /proc with
 *   subset=pid that shows only the daemon and no kernel-wide file (no
 *   /proc/sys: core_pattern and the like are out of reach although the
 *   daemon keeps uid 0), no network, a hostname of its own;
 * - capabilities cut to those file serving needs, in the bounding set too;
 * - a seccomp allow-list: any other system call ends the daemon.
 *
 * Capabilities kept (virtiofsd's list, less what the server never lets
 * through):
 *   CHOWN          SETATTR of uid/gid, and of files owned by others
 *   DAC_OVERRIDE   the guest checks permissions (default_permissions); the
 *                  daemon must read and write whatever the guest allows
 *   DAC_READ_SEARCH  only with --file-handles: open_by_handle_at, to
 *                  reopen evicted inodes; with it the kernel decodes any
 *                  handle of the share's file systems, the host's root
 *                  included, so by default no handle is ever decoded and
 *                  every inode the guest knows keeps its fd (Linux 6.10's
 *                  handle decoding without it is for directories only)
 *   FOWNER         chmod, utimens and xattrs on files owned by others
 *   FSETID         keep set-group-ID on chmod by the owner, as the kernel
 *                  would for the guest's caller; dropped per thread for
 *                  killpriv, so it must stay permitted
 *   SETGID, SETUID setfsgid/setfsuid to the caller's ids
 *   MKNOD          only with --allow-devices: the server refuses device
 *                  nodes otherwise, and the kernel then does too
 * uid 0 stays: setfsuid() to the guest's callers needs SETUID, which
 * would let a taken-over daemon become uid 0 again anyway. What uid 0
 * gives beyond capabilities (sysctls, /sys, other processes' files) is
 * in files the sandbox does not show.
 * Everything else goes, among them SETFCAP (security.capability never
 * reaches the host), SYS_ADMIN (mount, namespaces), SYS_PTRACE,
 * SYS_CHROOT, SYS_MODULE, NET_*, KILL, SETPCAP, LINUX_IMMUTABLE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sandbox.h"

static char share_path[PATH_MAX];
static int proc_fd = -1;	/* /proc/self/fd of the sandbox's /proc */

static int fail(const char *what)
{
	fprintf(stderr, "vhost-user-fs: sandbox: %s: %m\n", what);
	return -1;
}

/* ---- namespaces ---- */

/*
 * The parent stays outside the new pid namespace: it passes on the signals
 * the daemon acts on and exits as the daemon did.
 */
static void __attribute__((noreturn)) parent_wait(const struct options *opt,
						  pid_t child)
{
	sigset_t set;
	int status;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		pid_t p = waitpid(child, &status, WNOHANG);
		int sig;

		if (p == child)
			break;
		if (p < 0 && errno != EINTR) {
			perror("vhost-user-fs: waitpid");
			exit(1);
		}
		sig = sigwaitinfo(&set, NULL);
		if (sig > 0 && sig != SIGCHLD)
			kill(child, sig);
	}
	/* the child cannot see the socket's path any more */
	unlink(opt->socket_path);
	if (WIFEXITED(status))
		exit(WEXITSTATUS(status));
	fprintf(stderr, "vhost-user-fs: the sandboxed daemon was killed by signal %d (%s)\n",
		WTERMSIG(status), strsignal(WTERMSIG(status)));
	exit(128 + WTERMSIG(status));
}

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY	0x00000001
#define MOUNT_ATTR_NOSUID	0x00000002
#define MOUNT_ATTR_NODEV	0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE		0x8000
#endif

/*
 * The sandbox's view of the share, its submounts included, is nodev and
 * nosuid (and read-only with --readonly): the kernel refuses to open a
 * device node there whatever the server does, even with --allow-devices
 * (MKNOD still makes them, as inert files). mount_setattr (Linux 5.12)
 * covers the submounts; before it, the share's own mount only.
 */
static int share_flags(const struct options *opt)
{
	struct {
		uint64_t set, clr, propagation, userns_fd;
	} attr = {
		.set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID |
			(opt->readonly ? MOUNT_ATTR_RDONLY : 0),
	};
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_NODEV | MS_NOSUID |
		(opt->readonly ? MS_RDONLY : 0);

#ifdef SYS_mount_setattr
	if (!syscall(SYS_mount_setattr, AT_FDCWD, share_path, AT_RECURSIVE,
		     &attr, sizeof(attr)))
		return 0;
	if (errno != ENOSYS)
		return fail("mount_setattr nodev,nosuid of the share");
#else
	(void)attr;
#endif
	if (mount(NULL, share_path, NULL, flags, NULL))
		return fail("nodev,nosuid remount of the share");
	return 0;
}

static int enter_namespaces(const struct options *opt)
{
	pid_t child;

	/* the parent keeps the host's mount namespace (pivot_root moves all) */
	if (unshare(CLONE_NEWPID))
		return fail("unshare (needs root; else --sandbox=none)");
	child = fork();
	if (child < 0)
		return fail("fork");
	if (child)
		parent_wait(opt, child);

	/*
	 * Our parent forwards signals; if it dies, stop as on SIGTERM. (It is
	 * outside our pid namespace: getppid() says 0, and it cannot be
	 * checked for having died before this.)
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM))
		return fail("PR_SET_PDEATHSIG");
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC))
		return fail("unshare");
	/* nothing we mount may propagate back to the host */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
		return fail("mount --make-rslave /");
	/*
	 * A /proc of the new pid namespace with its processes only (Linux
	 * 5.8): no sysctls (core_pattern, hostname), no /proc/sys, no
	 * kernel-wide files at all; /proc/self/fd is all the daemon uses.
	 */
	if (mount("proc", "/proc", "proc",
		  MS_NODEV | MS_NOEXEC | MS_NOSUID | MS_RELATIME,
		  "subset=pid")) {
		if (errno == EINVAL)
			fprintf(stderr, "vhost-user-fs: sandbox: this kernel has no proc subset=pid (Linux 5.8+); use --sandbox=chroot or none\n");
		return fail("mount /proc subset=pid");
	}
	proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0)
		return fail("/proc/self/fd");
	if (mount(share_path, share_path, NULL, MS_BIND | MS_REC, NULL))
		return fail("bind mount of the share");
	return share_flags(opt);
}

int sandbox__enter(const struct options *opt)
{
	if (opt->sandbox == SANDBOX_NONE)
		return 0;
	if (!realpath(opt->shared_dir, share_path))
		return fail(opt->shared_dir);
	if (opt->sandbox == SANDBOX_NAMESPACE)
		return enter_namespaces(opt);
	proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return proc_fd < 0 ? fail("/proc/self/fd") : 0;
}

/* The share becomes "/"; the working directory ends at /proc/self/fd. */
static int change_root(const struct options *opt)
{
	if (chdir(share_path))
		return fail("chdir to the share");
	if (opt->sandbox == SANDBOX_NAMESPACE) {
		/* the old root ends up stacked on "."; detach it */
		if (syscall(SYS_pivot_root, ".", "."))
			return fail("pivot_root");
		if (umount2(".", MNT_DETACH))
			return fail("umount of the old root");
	} else if (chroot(".")) {
		return fail("chroot");
	}
	if (fchdir(proc_fd))
		return fail("fchdir to /proc/self/fd");
	return 0;
}

/* ---- capabilities ---- */

static const int base_caps[] = {
	CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_SETGID,
	CAP_SETUID,
};

/* The capabilities kept with these options; their number. */
static unsigned int kept_caps(const struct options *opt, int *caps)
{
	unsigned int n = sizeof(base_caps) / sizeof(base_caps[0]);

	memcpy(caps, base_caps, sizeof(base_caps));
	if (opt->file_handles)
		caps[n++] = CAP_DAC_READ_SEARCH;
	if (opt->allow_devices)
		caps[n++] = CAP_MKNOD;
	return n;
}

static unsigned int ncaps(const struct options *opt)
{
	int caps[16];

	return kept_caps(opt, caps);
}

static int limit_caps(const struct options *opt)
{
	int caps[16];
	unsigned int nkept = kept_caps(opt, caps);
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = { { 0 } };
	unsigned int i;
	int cap;

	for (i = 0; i < nkept; i++) {
		d[caps[i] / 32].effective |= 1u << (caps[i] % 32);
		d[caps[i] / 32].permitted |= 1u << (caps[i] % 32);
	}
	/* the bounding set first: dropping from it needs CAP_SETPCAP */
	for (cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++) {
		bool keep = false;

		for (i = 0; i < nkept; i++)
			keep |= caps[i] == cap;
		if (!keep && prctl(PR_CAPBSET_DROP, cap))
			return fail("dropping from the bounding set");
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return fail("clearing ambient capabilities");
	if (syscall(SYS_capset, &h, d))
		return fail("capset");
	return 0;
}

/* ---- seccomp ---- */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LOW		0
#else
#define ARG_LOW		4
#endif

#if defined(__x86_64__)
#define AUDIT_ARCH_SELF	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_SELF	AUDIT_ARCH_AARCH64
#endif

/*
 * clone only for threads (checked below): no new process, no new user
 * namespace. clone3 passes its flags in memory, out of the filter's
 * sight: it gets ENOSYS, and glibc falls back to clone.
 *
 * Everything the daemon does in any of its modes: glibc's allocator and
 * threads, the vhost-user socket and eventfds, guest memory, the FUSE
 * passthrough, stats files, signals. Found by reading the code and checked
 * with strace over the host tests and the guest matrix.
 */
static const int allowed[] = {
	/* memory, threads, time */
	SYS_brk, SYS_mmap, SYS_munmap, SYS_mremap, SYS_mprotect, SYS_madvise,
	SYS_futex, SYS_set_robust_list, SYS_rseq,
	SYS_exit, SYS_exit_group, SYS_gettid, SYS_getpid, SYS_tgkill,
	SYS_sched_yield, SYS_sched_getaffinity, SYS_getrandom,
	SYS_sched_setaffinity,	/* --pin-sync, --pin-workers: our own threads */
	SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep,
	SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_rt_sigaction,
	/* sockets, eventfds, poll */
	SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_close, SYS_fcntl,
	SYS_dup, SYS_dup3, SYS_ppoll,
#ifdef SYS_poll
	SYS_poll,
#endif
	SYS_recvmsg, SYS_sendmsg,
	SYS_sendto, SYS_recvfrom, SYS_accept4, SYS_shutdown, SYS_eventfd2,
	SYS_getsockopt,		/* a kick channel must be a stream socket */
	SYS_pread64, SYS_pwrite64, SYS_preadv, SYS_pwritev,
#ifdef SYS_preadv2
	SYS_preadv2, SYS_pwritev2,
#endif
	/* files */
	SYS_openat, SYS_open_by_handle_at, SYS_name_to_handle_at,
	SYS_newfstatat, SYS_fstat, SYS_statx, SYS_fstatfs, SYS_statfs,
	SYS_getdents64, SYS_lseek, SYS_fsync, SYS_fdatasync, SYS_syncfs,
	SYS_fallocate, SYS_ftruncate, SYS_truncate, SYS_copy_file_range,
#ifdef SYS_renameat
	SYS_renameat,
#endif
	SYS_renameat2, SYS_unlinkat, SYS_mkdirat, SYS_mknodat,
	SYS_symlinkat, SYS_linkat, SYS_readlinkat, SYS_fchmodat, SYS_fchmod,
	SYS_fchownat, SYS_fchown, SYS_utimensat, SYS_faccessat,
#ifdef SYS_faccessat2
	SYS_faccessat2,
#endif
	SYS_fadvise64,
	SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr, SYS_getxattr,
	SYS_lgetxattr, SYS_fgetxattr, SYS_listxattr, SYS_llistxattr,
	SYS_flistxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr,
	/* credentials, per request */
	SYS_setfsuid, SYS_setfsgid, SYS_capget, SYS_capset,
	SYS_geteuid, SYS_getuid, SYS_getegid, SYS_getgid,
};

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	static const char pre[] = "vhost-user-fs: seccomp: system call ";
	static const char post[] = " is not in the allow-list; exiting\n";
	char num[16];
	int n = si->si_syscall, i = sizeof(num);
	ssize_t r;

	(void)sig;
	(void)uc;
	do {
		num[--i] = '0' + n % 10;
		n /= 10;
	} while (n && i);
	r = write(2, pre, sizeof(pre) - 1);
	r = write(2, num + i, sizeof(num) - i);
	r = write(2, post, sizeof(post) - 1);
	(void)r;
	/* as a shell reports a process killed by SIGSYS, without a core */
	_exit(128 + SIGSYS);
}

static int install_seccomp(const struct options *opt)
{
#ifdef AUDIT_ARCH_SELF
	enum { N = sizeof(allowed) / sizeof(allowed[0]) };
	struct sock_filter f[4 + 7 + 2 * N + 1];
	struct sock_fprog prog = { .filter = f };
	unsigned int n = 0, i;
	uint32_t deny = opt->seccomp == SECCOMP_KILL ?
		SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_TRAP;

	/* another ABI (i386, x32) on this kernel: no */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		AUDIT_ARCH_SELF, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, nr));
#ifdef SYS_clone3
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		SYS_clone3, 0, 1);
#else
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
#endif
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | ENOSYS);
	/* clone(flags, ...): the low word of flags */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		SYS_clone, 0, 4);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, args[0]) + ARG_LOW);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
		CLONE_THREAD, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	/* A still holds nr */
	for (i = 0; i < N; i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			allowed[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	prog.len = n;

	if (deny == SECCOMP_RET_TRAP) {
		struct sigaction sa = {
			.sa_sigaction = on_sigsys,
			.sa_flags = SA_SIGINFO,
		};

		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSYS, &sa, NULL))
			return fail("sigaction SIGSYS");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return fail("no_new_privs");
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return fail("seccomp filter");
	return 0;
#else
	(void)opt;
	errno = EOPNOTSUPP;
	return fail("no seccomp allow-list for this architecture (--seccomp=none)");
#endif
}

int sandbox__lock(const struct options *opt)
{
	static const char *const modes[] = {
		[SANDBOX_NAMESPACE] = "namespace (pid, mount, net, uts, ipc), pivot_root into",
		[SANDBOX_CHROOT] = "chroot into",
		[SANDBOX_NONE] = "none, serving",
	};
	static const char *const filters[] = {
		[SECCOMP_TRAP] = "trap", [SECCOMP_KILL] = "kill",
		[SECCOMP_NONE] = "none",
	};

	if (opt->sandbox != SANDBOX_NONE) {
		if (change_root(opt) || limit_caps(opt))
			return -1;
	}
	if (opt->seccomp != SECCOMP_NONE && install_seccomp(opt))
		return -1;
	if (opt->sandbox == SANDBOX_NONE)
		fprintf(stderr, "vhost-user-fs: sandbox: %s %s, capabilities unchanged, seccomp %s\n",
			modes[opt->sandbox], opt->shared_dir,
			filters[opt->seccomp]);
	else
		fprintf(stderr, "vhost-user-fs: sandbox: %s %s, capabilities limited to %u, seccomp %s\n",
			modes[opt->sandbox], share_path, ncaps(opt),
			filters[opt->seccomp]);
	return 0;
}
