// SPDX-License-Identifier: GPL-2.0
/*
 * vhost-user tests: a small frontend that speaks to a running daemon the
 * way User-Mode Linux's virtio_uml does (in-band kicks acknowledged with
 * REPLY_ACK, completions as VRING_CALL on a pipe), so the sync contract
 * can be checked on the host: when the acknowledgement of a sync queue's
 * kick arrives, the used entry must already be there. Then the same over
 * the project's per-queue kick channels (protocol feature 62).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "harness.h"
#include "vring.h"

#define NEED_REPLY	(1u << 3)
#define QSIZE		64
#define MEM_GPA		0x40000000ULL
#define MEM_SIZE	(4u << 20)
#define RING_AREA(q)	(0x10000u * (q))	/* per queue: desc, avail, used */
#define BUF_AREA(q)	(0x100000u + 0x20000u * (q))

struct hdr {
	uint32_t request, flags, size;
} __attribute__((packed));

static char dir[] = "/tmp/vufs-vu-XXXXXX";
static char sock_path[300], stats_path[300], share[300], daemon_path[300];
static char trace_path[300];
static pid_t daemon_pid;
static int sock = -1, pipe_rd = -1, memfd = -1;
static uint8_t *mem;
static uint16_t avail_idx[3];
static uint64_t unique = 100;
static int chan[3] = { -1, -1, -1 };	/* our ends of the kick channels */

static int send_msg(uint32_t req, uint32_t flags, const void *p, uint32_t size,
		    int fd)
{
	uint8_t buf[512];
	struct hdr h = { req, 1 | flags, size };
	struct iovec iov = { buf, sizeof(h) + size };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), p, size);
	if (fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, 0) == (ssize_t)iov.iov_len ? 0 : -1;
}

static int recv_reply(uint32_t req, void *p, uint32_t size)
{
	struct hdr h;

	if (read(sock, &h, sizeof(h)) != sizeof(h))
		return -1;
	if (h.request != req || h.flags != 5 || h.size != size)
		return -1;
	return read(sock, p, size) == (ssize_t)size ? 0 : -1;
}

static uint64_t get_u64(uint32_t req)
{
	uint64_t v = ~0ULL;

	if (send_msg(req, 0, NULL, 0, -1) || recv_reply(req, &v, sizeof(v)))
		return ~0ULL;
	return v;
}

/* Sends with NEED_REPLY and returns the acknowledged status. */
static int64_t acked(uint32_t req, const void *p, uint32_t size, int fd)
{
	uint64_t st;

	if (send_msg(req, NEED_REPLY, p, size, fd) ||
	    recv_reply(req, &st, sizeof(st)))
		return -1;
	return st;
}

static void vu_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int i;

	strcpy(sa.sun_path, sock_path);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	for (i = 0; i < 100; i++) {
		if (!connect(sock, (struct sockaddr *)&sa, sizeof(sa)))
			return;
		usleep(20000);
	}
	close(sock);
	sock = -1;
}

static const char *extra_arg = "--workers=2";

static void start_daemon(void)
{
	if (!mkdtemp(dir))
		return;
	snprintf(sock_path, sizeof(sock_path), "%s/sock", dir);
	snprintf(stats_path, sizeof(stats_path), "%s/stats", dir);
	snprintf(trace_path, sizeof(trace_path), "%s/trace", dir);
	snprintf(share, sizeof(share), "%s/share", dir);
	mkdir(share, 0755);
	daemon_pid = fork();
	if (!daemon_pid) {
		char a[4][320], extra[320], *x[4] = { NULL }, *save = NULL;
		int null = open("/dev/null", O_WRONLY), i;

		/* extra_arg: up to four options, separated by spaces */
		snprintf(extra, sizeof(extra), "%s", extra_arg);
		for (i = 0; i < 4; i++)
			x[i] = strtok_r(i ? NULL : extra, " ", &save);

		snprintf(a[0], sizeof(a[0]), "--socket-path=%s", sock_path);
		snprintf(a[1], sizeof(a[1]), "--shared-dir=%s", share);
		snprintf(a[2], sizeof(a[2]), "--stats-file=%s", stats_path);
		snprintf(a[3], sizeof(a[3]), "--trace-file=%s", trace_path);
		if (!getenv("VUFS_TEST_VERBOSE"))
			dup2(null, 2);
		execl(daemon_path, daemon_path, a[0], a[1], a[2], a[3],
		      "--persistent", "--sync-queues=1", "--request-queues=1",
		      x[0], x[1], x[2], x[3], (char *)NULL);
		_exit(127);
	}
}

struct vq {
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint64_t gpa_desc, gpa_avail, gpa_used;
};

static struct vq vq_of(unsigned int q)
{
	uint32_t base = RING_AREA(q);

	return (struct vq){
		.desc = (void *)(mem + base),
		.avail = (void *)(mem + base + 0x1000),
		.used = (void *)(mem + base + 0x2000),
		.gpa_desc = MEM_GPA + base,
		.gpa_avail = MEM_GPA + base + 0x1000,
		.gpa_used = MEM_GPA + base + 0x2000,
	};
}

static uint16_t *used_event(unsigned int q)
{
	return &vq_of(q).avail->ring[QSIZE];
}

/*
 * Puts a two-descriptor request on queue q, in buffer pair k (0..7) of
 * the queue's; returns the reply's address.
 */
static struct fuse_out_header *submit_in(unsigned int q, unsigned int k,
					 uint32_t opcode, uint64_t nodeid,
					 const void *arg, uint32_t arglen,
					 uint32_t out_len)
{
	struct vq v = vq_of(q);
	uint32_t in_off = BUF_AREA(q) + 0x1000 * k;
	uint32_t out_off = BUF_AREA(q) + 0x8000 + 0x1000 * k;
	struct fuse_in_header *ih = (void *)(mem + in_off);
	uint16_t slot = avail_idx[q] % QSIZE, head = (avail_idx[q] * 2) % QSIZE;

	memset(ih, 0, sizeof(*ih));
	ih->len = sizeof(*ih) + arglen;
	ih->opcode = opcode;
	ih->unique = unique++;
	ih->nodeid = nodeid;
	memcpy(ih + 1, arg, arglen);
	memset(mem + out_off, 0, out_len);
	v.desc[head] = (struct vring_desc){ MEM_GPA + in_off, ih->len,
		VRING_DESC_F_NEXT, (uint16_t)(head + 1) };
	v.desc[head + 1] = (struct vring_desc){ MEM_GPA + out_off, out_len,
		VRING_DESC_F_WRITE, 0 };
	v.avail->ring[slot] = head;
	__atomic_store_n(&v.avail->idx, ++avail_idx[q], __ATOMIC_RELEASE);
	return (void *)(mem + out_off);
}

/* The same in the queue's first buffers: one request at a time. */
static struct fuse_out_header *submit(unsigned int q, uint32_t opcode,
				      uint64_t nodeid, const void *arg,
				      uint32_t arglen, uint32_t out_len)
{
	return submit_in(q, 0, opcode, nodeid, arg, arglen, out_len);
}

static int64_t kick(unsigned int q)
{
	uint32_t st[2] = { q, 0 };

	return acked(35, st, sizeof(st), -1);
}

static bool pipe_has_call(unsigned int q, int timeout_ms)
{
	struct pollfd p = { pipe_rd, POLLIN, 0 };
	struct { struct hdr h; uint32_t idx, num; } __attribute__((packed)) m;

	if (poll(&p, 1, timeout_ms) != 1)
		return false;
	if (read(pipe_rd, &m, sizeof(m)) != sizeof(m))
		return false;
	return m.h.request == 4 && !(m.h.flags & NEED_REPLY) && m.idx == q;
}

#define PF_KICK_CHANNEL	(1ULL << 62)
/* what t_handshake negotiates: in-band kicks unless a test asks for more */
static uint64_t want_pf = (1 << 3) | (1 << 5) | (1 << 9) | (1 << 14);

static void t_handshake(void)
{
	uint64_t f, pf;
	int fds[2];

	start_daemon();
	vu_connect();
	CHECK(sock >= 0);
	CHECK(send_msg(3, 0, NULL, 0, -1) == 0);	/* SET_OWNER */
	f = get_u64(1);
	CHECK(f != ~0ULL);
	CHECK(f & (1ULL << 1));				/* VIRTIO_FS_F_SYNC */
	CHECK(f & (1ULL << 30) && f & (1ULL << 32));
	CHECK(f & (1ULL << 28) && f & (1ULL << 29));
	pf = get_u64(15);
	CHECK((pf & want_pf) == want_pf);
	CHECK(pf & PF_KICK_CHANNEL);			/* offered by default */
	CHECK(acked(16, &want_pf, 8, -1) == 0);
	CHECK(pipe2(fds, O_CLOEXEC) == 0);
	pipe_rd = fds[0];
	CHECK(acked(21, NULL, 0, fds[1]) == 0);		/* SET_SLAVE_REQ_FD */
	close(fds[1]);
	CHECK(get_u64(1) & (1ULL << 1));		/* still offered */
}

static void t_config(void)
{
	struct { uint32_t off, size, flags; uint8_t cfg[48]; } __attribute__((packed)) c = {
		0, 48, 0, { 0 } }, r;

	CHECK(send_msg(24, 0, &c, sizeof(c), -1) == 0);
	CHECK(recv_reply(24, &r, sizeof(r)) == 0);
	CHECK(r.size == 48 && !memcmp(r.cfg, "share", 6));
	CHECK(*(uint32_t *)(r.cfg + 36) == 1);		/* request queues */
	CHECK(*(uint32_t *)(r.cfg + 44) == 1);		/* sync queues */
}

/* The guest's memory: one memfd region at MEM_GPA, sent in SET_MEM_TABLE. */
static void set_guest_memory(void)
{
	struct { uint32_t n, pad; uint64_t gpa, size, uva, off; } mt = {
		1, 0, MEM_GPA, MEM_SIZE, MEM_GPA, 0 };

	memfd = memfd_create("guest", MFD_CLOEXEC);
	CHECK(memfd >= 0 && ftruncate(memfd, MEM_SIZE) == 0);
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	CHECK(mem != MAP_FAILED);
	CHECK(acked(5, &mt, sizeof(mt), memfd) == 0);
}

static void t_setup_rings(void)
{
	uint64_t f = (1ULL << 32) | (1ULL << 29) | (1ULL << 30) | (1ULL << 1);
	unsigned int q;

	CHECK(acked(2, &f, 8, -1) == 0);
	set_guest_memory();
	for (q = 0; q < 3; q++) {
		struct vq v = vq_of(q);
		uint32_t st[2] = { q, QSIZE }, base[2] = { q, 0 }, en[2] = { q, 1 };
		struct { uint32_t idx, flags; uint64_t desc, used, avail, log; }
			__attribute__((packed)) a = { q, 0, v.gpa_desc, v.gpa_used,
						      v.gpa_avail, 0 };

		CHECK(acked(8, st, 8, -1) == 0);
		CHECK(acked(10, base, 8, -1) == 0);
		CHECK(acked(9, &a, sizeof(a), -1) == 0);
		CHECK(acked(18, en, 8, -1) == 0);
	}
	/* a ring outside the memory table is refused */
	{
		struct { uint32_t idx, flags; uint64_t desc, used, avail, log; }
			__attribute__((packed)) a = { 3, 0, 0x1000, 0x2000, 0x3000, 0 };
		uint32_t st[2] = { 3, QSIZE };

		CHECK(acked(8, st, 8, -1) == 0);
		CHECK(acked(9, &a, sizeof(a), -1) == 1);
	}
}

static void t_request_queue(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41,
		.max_readahead = 65536 };
	struct fuse_out_header *oh;
	struct vq v = vq_of(1);

	oh = submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(kick(1) == 0);
	/* completion comes later, as a VRING_CALL on the backend channel */
	CHECK(pipe_has_call(1, 5000));
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(oh->error == 0 && oh->unique == unique - 1);
	CHECK(v.used->ring[0].len == oh->len);
}

static void t_sync_queue(void)
{
	struct fuse_getattr_in gi = { 0 };
	struct fuse_out_header *oh;
	struct vq v = vq_of(2);
	int i;

	/* the driver keeps callbacks off: used_event far behind */
	*used_event(2) = 0x8000;
	for (i = 0; i < 50; i++) {
		oh = submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
		CHECK(kick(2) == 0);
		/* no waiting: the reply must be there with the ack */
		CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == i + 1);
		CHECK(oh->error == 0 && oh->unique == unique - 1);
		CHECK(oh->len == sizeof(*oh) + sizeof(struct fuse_attr_out));
	}
	CHECK(!pipe_has_call(2, 100));
	/* callbacks enabled: the inline completion is signalled as usual */
	*used_event(2) = avail_idx[2];
	submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 51);
	CHECK(pipe_has_call(2, 2000));
}

static void t_sync_batch(void)
{
	struct fuse_getattr_in gi = { 0 };
	struct vq v = vq_of(2);
	int i;

	*used_event(2) = 0x8000;
	/* several buffers behind one kick: all done before the ack */
	for (i = 0; i < 10; i++)
		submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 61);
}

static void t_broken_ring(void)
{
	struct vq v = vq_of(1);
	uint16_t slot = avail_idx[1] % QSIZE;
	uint32_t st[2] = { 1, 0 };
	struct { uint32_t idx, num; } r;

	v.desc[10] = (struct vring_desc){ MEM_GPA + MEM_SIZE - 4, 64, 0, 0 };
	v.avail->ring[slot] = 10;
	__atomic_store_n(&v.avail->idx, ++avail_idx[1], __ATOMIC_RELEASE);
	CHECK(kick(1) == 0);
	usleep(100000);
	CHECK(v.used->idx == 1);	/* nothing published for it */
	/* the device is still alive and answers */
	CHECK(send_msg(11, 0, st, sizeof(st), -1) == 0);	/* GET_VRING_BASE */
	CHECK(recv_reply(11, &r, sizeof(r)) == 0);
	CHECK(r.idx == 1);
}

/* Malformed messages get a failure status, never a crash. */
static void t_garbage(void)
{
	uint32_t st[2] = { 200, 64 }, big[2] = { 1, 100000 };
	struct { uint32_t n, pad; uint64_t r[4 * 9]; } mt = { 9, 0, { 0 } };
	struct { uint32_t off, size, flags; } cfg = { 0, 1000, 0 };
	uint32_t kick_bad[2] = { 99, 0 };
	uint64_t idx_bad = 77;
	struct hdr h;
	uint8_t junk[64];

	CHECK(acked(8, st, 8, -1) == 1);		/* queue index */
	CHECK(acked(8, big, 8, -1) == 1);		/* queue size */
	CHECK(acked(5, &mt, sizeof(mt), -1) == 1);	/* regions, no fds */
	CHECK(acked(35, kick_bad, 8, -1) == 1);		/* kick unknown queue */
	CHECK(acked(12, &idx_bad, 8, -1) == 1);	/* kick, queue index */
	CHECK(acked(99, NULL, 0, -1) == 1);		/* unknown request */
	CHECK(send_msg(24, 0, &cfg, sizeof(cfg), -1) == 0);
	CHECK(read(sock, &h, sizeof(h)) == sizeof(h) && h.size == 0);
	/* a payload larger than any message ends the connection */
	memset(junk, 0, sizeof(junk));
	h = (struct hdr){ 1, 1, 1u << 20 };
	CHECK(write(sock, &h, sizeof(h)) == sizeof(h));
	/* the daemon may hang up before this arrives */
	if (write(sock, junk, sizeof(junk)) < 0)
		junk[0] = 0;
	CHECK(read(sock, junk, sizeof(junk)) <= 0);	/* EOF or reset */
	CHECK(kill(daemon_pid, 0) == 0);
}

static void t_no_inband(void)
{
	uint64_t pf = (1 << 3) | (1 << 5) | (1 << 9);
	struct { uint32_t off, size, flags; uint8_t cfg[48]; } __attribute__((packed)) c = {
		0, 48, 0, { 0 } }, r;

	/* a new frontend (the daemon runs with --persistent) without in-band */
	close(sock);
	vu_connect();
	CHECK(sock >= 0);
	CHECK(get_u64(1) & (1ULL << 1));	/* protocol not known yet */
	CHECK(acked(16, &pf, 8, -1) == 0);
	CHECK(!(get_u64(1) & (1ULL << 1)));
	CHECK(!(get_u64(1) & (1ULL << 2)));	/* nor the budget's */
	CHECK(send_msg(24, 0, &c, sizeof(c), -1) == 0);
	CHECK(recv_reply(24, &r, sizeof(r)) == 0);
	CHECK(*(uint32_t *)(r.cfg + 44) == 0);
}

/* The daemon's --stats-file, as it left it, into buf (NUL-terminated). */
static void read_stats(char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(stats_path, O_RDONLY);
	CHECK(fd >= 0);
	n = read(fd, buf, size - 1);
	close(fd);
	CHECK(n > 0);
	buf[n] = '\0';
}

static long long file_count(const char *file, const char *prefix,
			    const char *key, int *lines);

/*
 * The per-queue timing of the stats, as t_exit_and_stats left them: on
 * each queue that processed requests, time in the FUSE handler inside the
 * time spent on the chains, and time queued before processing.
 */
static void t_timing_stats(void)
{
	static const char *const prefix[] = { "queue=1 type=request ",
					      "queue=2 type=sync " };
	static const long long requests[] = { 1, 61 };
	long long busy, handler, queued, timed;
	int i, n;

	for (i = 0; i < 2; i++) {
		CHECK(file_count(stats_path, prefix[i], "requests=", &n) ==
		      requests[i] && n == 1);
		busy = file_count(stats_path, prefix[i], " busy_ns=", &n);
		handler = file_count(stats_path, prefix[i], " handler_ns=", &n);
		queued = file_count(stats_path, prefix[i], " queued_ns=", &n);
		CHECK(handler > 0);
		CHECK(handler <= busy);
		CHECK(queued > 0);
		/* each kick times at least its first chain, sync ones every chain */
		timed = file_count(stats_path, prefix[i], " queued=", &n);
		CHECK(timed >= 1 && timed <= requests[i]);
		CHECK(i == 0 || timed == requests[i]);
	}
	/* a queue without requests has spent no time on any */
	CHECK(file_count(stats_path, "queue=0 ", " handler_ns=", &n) == 0 && n == 1);
	CHECK(file_count(stats_path, "queue=0 ", " queued_ns=", &n) == 0 && n == 1);
}

static void t_exit_and_stats(void)
{
	char buf[2048] = { 0 };
	int status = -1;

	close(sock);
	usleep(100000);
	kill(daemon_pid, SIGTERM);
	CHECK(waitpid(daemon_pid, &status, 0) == daemon_pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	read_stats(buf, sizeof(buf));
	CHECK(!test_failed);
	CHECK(strstr(buf, "queue=0 type=hiprio requests=0 inline=0 late=0 errors=0 bytes_in=0 bytes_out=0 calls=0 channel_kicks=0 busy_ns=0 handler_ns=0 queued=0 queued_ns=0\n"));
	CHECK(strstr(buf, "queue=1 type=request requests=1 inline=0 late=0 errors=0 "));
	CHECK(strstr(buf, "queue=2 type=sync requests=61 inline=61 late=0 errors=0 "));
}

static void cleanup(void)
{
	char cmd[400];
	int i;

	if (daemon_pid > 0 && !kill(daemon_pid, 0)) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	daemon_pid = 0;
	if (mem)
		munmap(mem, MEM_SIZE);
	mem = NULL;
	if (memfd >= 0)
		close(memfd);
	if (pipe_rd >= 0)
		close(pipe_rd);
	if (sock >= 0)
		close(sock);
	memfd = pipe_rd = sock = -1;
	for (i = 0; i < 3; i++) {
		if (chan[i] >= 0)
			close(chan[i]);
		chan[i] = -1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return;
}

/* --sync-late=2: every other sync chain completes after the ack. */
static void t_sync_late(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	struct fuse_getattr_in gi = { 0 };
	struct vq v = vq_of(2);
	char buf[2048] = { 0 };
	int status;

	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	memset(avail_idx, 0, sizeof(avail_idx));
	extra_arg = "--sync-late=2";
	t_handshake();
	CHECK(!test_failed);
	t_setup_rings();
	CHECK(!test_failed);
	v = vq_of(2);
	submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(kick(1) == 0);
	CHECK(pipe_has_call(1, 5000));
	/* callbacks enabled, as a driver does after a missing completion */
	*used_event(2) = 0;
	submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(pipe_has_call(2, 2000));
	*used_event(2) = 1;
	submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(pipe_has_call(2, 5000));
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 2);
	close(sock);
	sock = -1;
	kill(daemon_pid, SIGTERM);
	CHECK(waitpid(daemon_pid, &status, 0) == daemon_pid);
	daemon_pid = 0;
	read_stats(buf, sizeof(buf));
	CHECK(!test_failed);
	CHECK(strstr(buf, "queue=2 type=sync requests=2 inline=1 late=1 errors=0 "));
}

/* A fresh daemon with EXTRA, connected and set up as t_setup_rings does. */
static void restart(const char *extra)
{
	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	memset(avail_idx, 0, sizeof(avail_idx));
	extra_arg = extra;
	t_handshake();
}

/* INIT, then a LOOKUP on the sync queue: the error, and the nodeid. */
static void fuse_init_sync(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	struct fuse_out_header *oh;

	*used_event(2) = 0x8000;
	oh = submit(2, FUSE_INIT, 0, &init, sizeof(init), 4096);
	if (kick(2) || oh->error)
		test_failed = true;
}

static int lookup(uint64_t parent, const char *name, uint64_t *nodeid)
{
	struct fuse_out_header *oh;
	struct fuse_entry_out *e;

	oh = submit(2, FUSE_LOOKUP, parent, name, strlen(name) + 1, 512);
	if (kick(2))
		return -EIO;
	e = (struct fuse_entry_out *)(oh + 1);
	*nodeid = oh->error ? 0 : e->nodeid;
	return oh->error;
}

/*
 * The host moves a directory the guest knows out of the share: ".." from
 * it must not lead to the share's parent, where "secret" lives.
 */
static void t_moved_dir(void)
{
	char from[400], to[400], path[400];
	uint64_t d, inner, up, top, sec;
	int err;

	restart("--workers=1");
	CHECK(!test_failed);
	snprintf(from, sizeof(from), "%s/dir", share);
	snprintf(path, sizeof(path), "%s/dir/inner", share);
	CHECK(mkdir(from, 0755) == 0 && mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/secret", dir);
	CHECK(close(open(path, O_CREAT | O_WRONLY, 0600)) == 0);
	t_setup_rings();
	CHECK(!test_failed);
	fuse_init_sync();
	CHECK(!test_failed);
	CHECK(lookup(1, "dir", &d) == 0);
	CHECK(lookup(d, "inner", &inner) == 0);
	snprintf(from, sizeof(from), "%s/dir", share);
	snprintf(to, sizeof(to), "%s/dir", dir);
	CHECK(rename(from, to) == 0);			/* mv share/dir .. */
	/* dir/inner/../.. then secret: some step must fail */
	err = lookup(inner, "..", &up);
	if (!err) {
		CHECK(up == d);
		err = lookup(up, "..", &top);
	}
	if (!err) {
		/* the share's parent: its secret must stay out of reach */
		CHECK(top != 1);
		err = lookup(top, "secret", &sec);
		CHECK(err != 0);
	}
	CHECK(err == -ENOENT);
	/* and straight from the moved directory */
	CHECK(lookup(d, "..", &top) == -ENOENT);
	CHECK(kill(daemon_pid, 0) == 0);
}

/*
 * EVENT_IDX negotiated after the rings were set: queue 2's used ring ends
 * exactly at the end of guest memory, which is fine without EVENT_IDX but
 * leaves no room for avail_event with it. The device must check again and
 * stop using the queue rather than write past the region.
 */
static void t_late_event_idx(void)
{
	uint64_t f = (1ULL << 32) | (1ULL << 30) | (1ULL << 1);
	uint64_t fev = f | (1ULL << 29);
	uint32_t used_off = MEM_SIZE - (4 + 8 * QSIZE);
	struct vring_used *used;
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	struct fuse_getattr_in gi = { 0 };
	unsigned int q;

	restart("--workers=1");
	CHECK(!test_failed);
	CHECK(acked(2, &f, 8, -1) == 0);
	set_guest_memory();
	used = (struct vring_used *)(mem + used_off);
	for (q = 0; q < 3; q++) {
		struct vq v = vq_of(q);
		uint32_t st[2] = { q, QSIZE }, base[2] = { q, 0 }, en[2] = { q, 1 };
		struct { uint32_t idx, flags; uint64_t desc, used, avail, log; }
			__attribute__((packed)) a = { q, 0, v.gpa_desc,
				q == 2 ? MEM_GPA + used_off : v.gpa_used,
				v.gpa_avail, 0 };

		CHECK(acked(8, st, 8, -1) == 0);
		CHECK(acked(10, base, 8, -1) == 0);
		CHECK(acked(9, &a, sizeof(a), -1) == 0);
		CHECK(acked(18, en, 8, -1) == 0);
	}
	vq_of(2).avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	submit(2, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&used->idx, __ATOMIC_ACQUIRE) == 1);
	/* now with EVENT_IDX: the ring no longer fits */
	CHECK(acked(2, &fev, 8, -1) == 0);
	submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(kill(daemon_pid, 0) == 0);
	CHECK(__atomic_load_n(&used->idx, __ATOMIC_ACQUIRE) == 1);
	/* the other queues go on */
	submit(1, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(1) == 0);
	CHECK(pipe_has_call(1, 5000));
	CHECK(__atomic_load_n(&vq_of(1).used->idx, __ATOMIC_ACQUIRE) == 1);
}

/* Waits (bounded) for queue q's used index to reach idx. */
static bool used_reaches(unsigned int q, uint16_t idx)
{
	int i;

	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(&vq_of(q).used->idx, __ATOMIC_ACQUIRE) == idx)
			return true;
		usleep(1000);
	}
	return false;
}

/* Where the device asks to be kicked (EVENT_IDX): the avail_event of q. */
static uint16_t avail_event(unsigned int q)
{
	return __atomic_load_n((uint16_t *)&vq_of(q).used->ring[QSIZE],
			       __ATOMIC_ACQUIRE);
}

#define STRESS_SLOTS	(QSIZE / 2)
#define STRESS_CHAINS	3000

/* GETATTR in chain slot (heads 2 slot, 2 slot + 1) of queue 1, own buffers. */
static uint64_t submit_slot(unsigned int slot)
{
	struct vq v = vq_of(1);
	uint32_t in_off = BUF_AREA(1) + slot * 0x800, out_off = in_off + 0x400;
	struct fuse_in_header *ih = (void *)(mem + in_off);
	uint16_t head = 2 * slot;

	memset(ih, 0, sizeof(*ih) + sizeof(struct fuse_getattr_in));
	ih->len = sizeof(*ih) + sizeof(struct fuse_getattr_in);
	ih->opcode = FUSE_GETATTR;
	ih->unique = unique++;
	ih->nodeid = 1;
	memset(mem + out_off, 0, 256);
	v.desc[head] = (struct vring_desc){ MEM_GPA + in_off, ih->len,
		VRING_DESC_F_NEXT, (uint16_t)(head + 1) };
	v.desc[head + 1] = (struct vring_desc){ MEM_GPA + out_off, 256,
		VRING_DESC_F_WRITE, 0 };
	v.avail->ring[avail_idx[1] % QSIZE] = head;
	__atomic_store_n(&v.avail->idx, ++avail_idx[1], __ATOMIC_RELEASE);
	return ih->unique;
}

/*
 * A fresh guest memory table under EXTRA's options: how many of its pages
 * are resident (mincore of our own mapping of the same memfd) right after
 * the device acknowledged SET_MEM_TABLE, before anything wrote them.
 */
static void resident_after_mem_table(const char *extra, unsigned int *res)
{
	uint64_t f = (1ULL << 32) | (1ULL << 30) | (1ULL << 1);
	static unsigned char vec[MEM_SIZE / 4096];
	size_t page = sysconf(_SC_PAGESIZE), i;

	*res = ~0u;
	restart(extra);
	CHECK(!test_failed && page >= 4096);
	CHECK(acked(2, &f, 8, -1) == 0);
	set_guest_memory();
	CHECK(mincore(mem, MEM_SIZE, vec) == 0);
	CHECK(kill(daemon_pid, 0) == 0);
	*res = 0;
	for (i = 0; i < MEM_SIZE / page; i++)
		*res += vec[i] & 1;
}

/* --populate-memory: every page is there once the table is acknowledged. */
static void t_populate_memory(void)
{
	unsigned int pages = MEM_SIZE / sysconf(_SC_PAGESIZE), res;

	resident_after_mem_table("--workers=1", &res);
	CHECK(res == 0);
	resident_after_mem_table("--workers=1 --populate-memory", &res);
	CHECK(res == pages);
}

/*
 * Many chains on one request queue, in batches of 1 to 16 while earlier
 * ones are still being run by three workers, kicked only when the device's
 * avail_event asks for it (as a driver does): every chain completes, once,
 * with its own reply. A kick or a chain lost between a worker finishing the
 * queue and the next post shows as a chain that never completes.
 */
static void t_worker_stress(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	uint64_t uniq[STRESS_SLOTS];
	bool busy[STRESS_SLOTS] = { false };
	unsigned int next = 0, done = 0, round = 0, kicks = 0, slot = 0;
	uint16_t seen = 1;
	struct vq v;
	char junk[4096];

	restart("--workers=3");
	CHECK(!test_failed);
	t_setup_rings();
	CHECK(!test_failed);
	v = vq_of(1);
	CHECK(fcntl(pipe_rd, F_SETFL, O_NONBLOCK) == 0);
	submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(kick(1) == 0);
	CHECK(used_reaches(1, 1));
	while (done < STRESS_CHAINS) {
		unsigned int n = 1 + round++ % 16, i, waited;
		uint16_t old = avail_idx[1];

		if (n > STRESS_SLOTS - (next - done))
			n = STRESS_SLOTS - (next - done);
		if (n > STRESS_CHAINS - next)
			n = STRESS_CHAINS - next;
		for (i = 0; i < n; i++) {
			while (busy[slot])
				slot = (slot + 1) % STRESS_SLOTS;
			uniq[slot] = submit_slot(slot);
			busy[slot] = true;
			next++;
		}
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (n && (uint16_t)(avail_idx[1] - avail_event(1) - 1) <
			 (uint16_t)(avail_idx[1] - old)) {
			CHECK(kick(1) == 0);
			kicks++;
		}
		/* reap; wait (bounded) only when nothing more can be posted */
		for (waited = 0;; waited++) {
			uint16_t used = __atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE);
			bool full = next - done == STRESS_SLOTS ||
				    next == STRESS_CHAINS;

			for (; seen != used; seen++) {
				struct vring_used_elem *u = &v.used->ring[seen % QSIZE];
				struct fuse_out_header *oh;
				unsigned int s = u->id / 2;

				CHECK(u->id % 2 == 0 && s < STRESS_SLOTS && busy[s]);
				oh = (void *)(mem + BUF_AREA(1) + s * 0x800 + 0x400);
				CHECK(oh->unique == uniq[s] && oh->error == 0);
				CHECK(u->len == oh->len &&
				      oh->len == sizeof(*oh) + sizeof(struct fuse_attr_out));
				busy[s] = false;
				done++;
			}
			while (read(pipe_rd, junk, sizeof(junk)) > 0)
				;
			if (done == STRESS_CHAINS || !full || next - done < STRESS_SLOTS / 2)
				break;
			CHECK(waited < 5000);	/* 5 s without a completion */
			usleep(1000);
		}
	}
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == avail_idx[1]);
	/* the device asked for kicks only now and then */
	CHECK(kicks > 0 && kicks < STRESS_CHAINS);
	CHECK(kill(daemon_pid, 0) == 0);
}

/*
 * A frontend that never reads the backend channel: once it is full, the
 * worker waiting for room gives up after --backend-timeout and the daemon
 * hangs up instead of keeping that worker for good.
 */
static void t_backend_stall(void)
{
	uint64_t f = (1ULL << 32) | (1ULL << 30) | (1ULL << 1);
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	struct fuse_getattr_in gi = { 0 };
	struct pollfd p;
	uint8_t junk[64];
	int i;

	restart("--backend-timeout=1");
	CHECK(!test_failed);
	t_setup_rings();
	CHECK(!test_failed);
	/* no EVENT_IDX: a signal for every drained batch */
	CHECK(acked(2, &f, 8, -1) == 0);
	CHECK(fcntl(pipe_rd, F_SETPIPE_SZ, 4096) > 0);
	submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(kick(1) == 0);
	CHECK(used_reaches(1, 1));
	/* 4096 bytes hold 204 VRING_CALLs; the next ones find no room */
	for (i = 2; i < 300; i++) {
		submit(1, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
		if (kick(1))
			break;
		if (!used_reaches(1, i))
			break;
	}
	/* the daemon hangs up: EOF on the socket, not a worker lost for good */
	p = (struct pollfd){ sock, POLLIN, 0 };
	CHECK(poll(&p, 1, 20000) == 1);
	CHECK(read(sock, junk, sizeof(junk)) <= 0);
	CHECK(kill(daemon_pid, 0) == 0);
}

/* The running daemon's process in the sandbox (its child), or 0. */
static pid_t sandboxed_pid(void)
{
	char path[64];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", daemon_pid,
		 daemon_pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

/* KEY's value in /proc/WHO/status (WHO: a pid, or PID/task/TID). */
static bool status_line_of(const char *who, const char *key, char *val,
			   size_t len)
{
	char path[96], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", who);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, strlen(key)) &&
		    line[strlen(key)] == ':') {
			snprintf(val, len, "%s", line + strlen(key) + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static bool status_line(pid_t pid, const char *key, char *val, size_t len)
{
	char who[16];

	snprintf(who, sizeof(who), "%d", pid);
	return status_line_of(who, key, val, len);
}

/* The mount options of "/" in pid's mount namespace (its share). */
static bool root_mount_opts(pid_t pid, char *val, size_t len)
{
	char path[64], line[1024], mp[512], opts[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %*s %511s %127s", mp, opts) == 2 &&
		    !strcmp(mp, "/")) {
			snprintf(val, len, "%.127s", opts);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* What each layer leaves: namespaces, the share as root, capabilities. */
static void t_sandbox_layers(void)
{
	char val[128], path[400];
	unsigned long long eff, bnd;
	int child, pid1, seccomp;

	child = sandboxed_pid();
	CHECK(child > 0);
	CHECK(status_line(child, "NSpid", val, sizeof(val)));
	CHECK(sscanf(val, "%d %d", &pid1, &pid1) == 2 && pid1 == 1);
	CHECK(status_line(child, "CapEff", val, sizeof(val)));
	eff = strtoull(val, NULL, 16);
	CHECK(status_line(child, "CapBnd", val, sizeof(val)));
	bnd = strtoull(val, NULL, 16);
	/* CHOWN DAC_OVERRIDE FOWNER FSETID SETGID SETUID: no DAC_READ_SEARCH */
	CHECK(eff == 0xdbULL);
	CHECK(bnd == 0xdbULL);
	CHECK(status_line(child, "NoNewPrivs", val, sizeof(val)) &&
	      atoi(val) == 1);
	CHECK(status_line(child, "Seccomp", val, sizeof(val)));
	seccomp = atoi(val);
	CHECK(seccomp == 2);
	/* its root is the share: the share's files, none of the host's */
	snprintf(path, sizeof(path), "/proc/%d/root/dir/inner", child);
	CHECK(access(path, F_OK) && errno == ENOENT);	/* moved away */
	snprintf(path, sizeof(path), "/proc/%d/root/etc/passwd", child);
	CHECK(access(path, F_OK) && errno == ENOENT);
	snprintf(path, sizeof(path), "/proc/%d/root/secret", child);
	CHECK(access(path, F_OK) && errno == ENOENT);
	/* a UTS namespace of its own: no sethostname reaches the host */
	{
		char a[64] = "", b[64] = "";

		snprintf(path, sizeof(path), "/proc/%d/ns/uts", child);
		CHECK(readlink(path, a, sizeof(a) - 1) > 0);
		CHECK(readlink("/proc/self/ns/uts", b, sizeof(b) - 1) > 0);
		CHECK(strcmp(a, b));
	}
	/* the share is mounted nodev,nosuid there, whatever the host's is */
	CHECK(root_mount_opts(child, val, sizeof(val)));
	CHECK(strstr(val, "nodev") && strstr(val, "nosuid"));
}

/* What the daemon does at exit is in the allow-list too: a clean exit. */
static void modes_exit(bool sock_removed)
{
	int status = -1;

	close(sock);
	sock = -1;
	kill(daemon_pid, SIGTERM);
	CHECK(waitpid(daemon_pid, &status, 0) == daemon_pid);
	daemon_pid = 0;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* chroot cannot remove it (README) */
	CHECK(!sock_removed || (access(sock_path, F_OK) && errno == ENOENT));
}

/*
 * Every mode serves, xattrs included (they go through /proc/self/fd,
 * relative to the working directory); chroot limits capabilities too.
 */
static void t_modes(void)
{
	static const char *const modes[] = {
		"--sandbox=namespace", "--sandbox=chroot", "--sandbox=none" };
	char val[128], path[400];
	unsigned int i;
	uint64_t n;

	for (i = 0; i < 3; i++) {
		restart(modes[i]);
		CHECK(!test_failed);
		snprintf(path, sizeof(path), "%s/file", share);
		CHECK(close(open(path, O_CREAT | O_WRONLY, 0600)) == 0);
		t_setup_rings();
		CHECK(!test_failed);
		fuse_init_sync();
		CHECK(!test_failed);
		CHECK(lookup(1, "file", &n) == 0 && n > 1);
		{
			struct fuse_getxattr_in gx = { .size = 0 };
			char arg[sizeof(gx) + 16];
			struct fuse_out_header *oh;

			memcpy(arg, &gx, sizeof(gx));
			strcpy(arg + sizeof(gx), "user.none");
			oh = submit(2, FUSE_GETXATTR, n, arg,
				    sizeof(gx) + strlen("user.none") + 1, 256);
			CHECK(kick(2) == 0);
			CHECK(oh->error == -ENODATA);
		}
		if (i == 0) {
			CHECK(sandboxed_pid() > 0);	/* see t_sandbox_layers */
			modes_exit(true);
			continue;
		}
		CHECK(sandboxed_pid() == 0);		/* no pid namespace */
		CHECK(status_line(daemon_pid, "CapEff", val, sizeof(val)));
		if (i == 1) {
			CHECK(strtoull(val, NULL, 16) == 0xdbULL);
			snprintf(path, sizeof(path), "/proc/%d/root/file",
				 daemon_pid);
			CHECK(access(path, F_OK) == 0);
		} else {
			CHECK(strtoull(val, NULL, 16) != 0xdbULL);
		}
		CHECK(status_line(daemon_pid, "Seccomp", val, sizeof(val)) &&
		      atoi(val) == 2);
		modes_exit(i != 1);
		CHECK(!test_failed);
	}
}


/* --allow-devices keeps CAP_MKNOD, and only it adds to the set. */
static void t_allow_devices_cap(void)
{
	char val[128];
	pid_t child;

	restart("--allow-devices");
	CHECK(!test_failed);
	child = sandboxed_pid();
	CHECK(child > 0);
	CHECK(status_line(child, "CapEff", val, sizeof(val)));
	CHECK(strtoull(val, NULL, 16) == (0xdbULL | 1ULL << 27));
	CHECK(status_line(child, "CapBnd", val, sizeof(val)));
	CHECK(strtoull(val, NULL, 16) == (0xdbULL | 1ULL << 27));
	/* --file-handles keeps DAC_READ_SEARCH, for open_by_handle_at */
	restart("--file-handles");
	CHECK(!test_failed);
	child = sandboxed_pid();
	CHECK(child > 0);
	CHECK(status_line(child, "CapEff", val, sizeof(val)));
	CHECK(strtoull(val, NULL, 16) == (0xdbULL | 1ULL << 2));
}

/*
 * A system call outside the allow-list ends the daemon with a message
 * naming it, and status 159 (128 + SIGSYS).
 */
static void forbidden_syscall(const char *knob)
{
	char out[2048] = { 0 }, sock_arg[340], share_arg[340];
	int fds[2], status = -1;
	ssize_t n, got = 0;
	pid_t pid;

	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(sock_arg, sizeof(sock_arg), "--socket-path=%s/sock", dir);
	snprintf(share_arg, sizeof(share_arg), "--shared-dir=%s", dir);
	CHECK(pipe2(fds, O_CLOEXEC) == 0);
	pid = fork();
	if (!pid) {
		dup2(fds[1], 2);
		execl(daemon_path, daemon_path, sock_arg, share_arg, knob,
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	close(fds[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(strstr(out, "vhost-user-fs: seccomp: system call "));
	CHECK(strstr(out, " is not in the allow-list; exiting\n"));
	CHECK(!strstr(out, " was allowed"));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSYS);
}

static void t_forbidden_syscall(void)
{
	forbidden_syscall("--test-forbidden-syscall");
	CHECK(!test_failed);
	/* clone without CLONE_THREAD: threads yes, processes no */
	forbidden_syscall("--test-forbidden-syscall=fork");
}

/*
 * A frontend connecting as uid/gid (65534 = nobody/nogroup here, with no
 * supplementary group unless extra_gid): 1 if the daemon answered its
 * GET_FEATURES, 0 if it hung up, -1 if it could not connect.
 */
static int peer_served(uid_t uid, gid_t gid, gid_t extra_gid)
{
	int status = -1;
	pid_t pid;

	pid = fork();
	if (!pid) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct pollfd p = { .events = POLLIN };
		gid_t groups[1] = { extra_gid };
		uint64_t f;

		if (setgroups(extra_gid ? 1 : 0, groups) || setgid(gid) ||
		    setuid(uid))
			_exit(3);
		strcpy(sa.sun_path, sock_path);
		sock = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(2);
		if (send_msg(1, 0, NULL, 0, -1))		/* GET_FEATURES */
			_exit(0);
		p.fd = sock;
		if (poll(&p, 1, 3000) != 1)
			_exit(4);
		_exit(recv_reply(1, &f, sizeof(f)) == 0 ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -2;
	switch (WEXITSTATUS(status)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return -1;
	default: return -2;
	}
}

static int exit_status_with(const char *arg);

static void start_and_wait(const char *extra)
{
	struct stat st;
	int i;

	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	memset(avail_idx, 0, sizeof(avail_idx));
	extra_arg = extra;
	start_daemon();
	for (i = 0; i < 200 && stat(sock_path, &st); i++)
		usleep(10000);
	/* let others reach the socket: only its own mode may stop them */
	chmod(dir, 0711);
}

/*
 * The socket is 0600 (0660 and the group with --socket-group), and a peer
 * other than the daemon's uid, root or a member of that group is hung up
 * on even where the socket's mode would let it connect.
 */
static void t_socket_access(void)
{
	struct stat st;

	start_and_wait("--workers=1");
	CHECK(stat(sock_path, &st) == 0);
	if ((st.st_mode & 0777) != 0600)
		printf("  socket mode %o\n", st.st_mode & 0777);
	CHECK((st.st_mode & 0777) == 0600);
	CHECK(peer_served(65534, 65534, 0) == -1);	/* EACCES */
	CHECK(chmod(sock_path, 0666) == 0);
	CHECK(peer_served(65534, 65534, 0) == 0);	/* hung up on */
	CHECK(kill(daemon_pid, 0) == 0);
	CHECK(peer_served(0, 0, 0) == 1);		/* root still is */

	start_and_wait("--workers=1 --socket-group=nogroup");
	CHECK(stat(sock_path, &st) == 0);
	CHECK((st.st_mode & 0777) == 0660 && st.st_gid == 65534);
	CHECK(peer_served(65534, 65534, 0) == 1);	/* primary group */
	CHECK(peer_served(65533, 1234, 65534) == 1);	/* supplementary */
	CHECK(chmod(sock_path, 0666) == 0);
	CHECK(peer_served(65533, 1234, 0) == 0);	/* neither */
	CHECK(peer_served(0, 0, 0) == 1);
	cleanup();
	CHECK(exit_status_with("--socket-group=no-such-group-here") == 2);
}

/* SET_MEM_TABLE of one region at MEM_GPA over fd: the acknowledged status. */
static int64_t mem_table_of(int fd, uint64_t size)
{
	struct { uint32_t n, pad; uint64_t gpa, size, uva, off; } mt = {
		1, 0, MEM_GPA, size, MEM_GPA, 0 };

	return acked(5, &mt, sizeof(mt), fd);
}

static void setup_queue(unsigned int q)
{
	struct vq v = vq_of(q);
	uint32_t st[2] = { q, QSIZE }, base[2] = { q, 0 }, en[2] = { q, 1 };
	struct { uint32_t idx, flags; uint64_t desc, used, avail, log; }
		__attribute__((packed)) a = { q, 0, v.gpa_desc, v.gpa_used,
					      v.gpa_avail, 0 };

	CHECK(acked(8, st, 8, -1) == 0);
	CHECK(acked(10, base, 8, -1) == 0);
	CHECK(acked(9, &a, sizeof(a), -1) == 0);
	CHECK(acked(18, en, 8, -1) == 0);
}

/* true while the daemon (the sandbox's parent) has not exited */
static bool daemon_alive(void)
{
	int status;

	if (waitpid(daemon_pid, &status, WNOHANG) == 0)
		return true;
	if (WIFSIGNALED(status) || WIFEXITED(status))
		printf("  the daemon ended: %s %d\n",
		       WIFSIGNALED(status) ? "signal" : "status",
		       WIFSIGNALED(status) ? WTERMSIG(status) :
		       WEXITSTATUS(status));
	daemon_pid = 0;
	return false;
}

/* A request on queue 1 whose buffer lies at offset off of guest memory. */
static void kick_buffer_at(uint64_t off)
{
	struct vq v = vq_of(1);
	uint16_t slot = avail_idx[1] % QSIZE;

	v.desc[20] = (struct vring_desc){ MEM_GPA + off, 64, 0, 0 };
	v.avail->ring[slot] = 20;
	__atomic_store_n(&v.avail->idx, ++avail_idx[1], __ATOMIC_RELEASE);
	kick(1);
	usleep(200000);
}

/*
 * A region must lie within its file: one larger than its memfd is refused
 * (a descriptor in its tail would end the daemon with SIGBUS), and a
 * memfd that allows seals cannot be shrunk under the daemon afterwards.
 */
static void t_region_past_file(void)
{
	uint64_t f = (1ULL << 32) | (1ULL << 29) | (1ULL << 30) | (1ULL << 1);
	int64_t r;

	restart("--workers=1");
	CHECK(!test_failed);
	CHECK(acked(2, &f, 8, -1) == 0);
	memfd = memfd_create("guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(memfd >= 0 && ftruncate(memfd, MEM_SIZE) == 0);
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	CHECK(mem != MAP_FAILED);
	r = mem_table_of(memfd, 2ULL * MEM_SIZE);
	if (r == 0) {
		printf("  a region twice its memfd's size was accepted\n");
		setup_queue(1);
		kick_buffer_at(MEM_SIZE + 0x1000);
		CHECK(daemon_alive());
	}
	CHECK(r == 1);
	/* mmap_offset + size wrapping around is refused as well */
	{
		struct { uint32_t n, pad; uint64_t gpa, size, uva, off; } mt = {
			1, 0, MEM_GPA, MEM_SIZE, MEM_GPA, ~0ULL - 4095 };

		CHECK(acked(5, &mt, sizeof(mt), memfd) == 1);
	}
	CHECK(mem_table_of(memfd, MEM_SIZE) == 0);
	setup_queue(1);
	CHECK(!test_failed);
	if (ftruncate(memfd, MEM_SIZE / 2) == 0) {
		printf("  the memfd was shrunk under the daemon\n");
		kick_buffer_at(MEM_SIZE / 2 + 0x1000);
		CHECK(daemon_alive());
	}
	CHECK(errno == EPERM);		/* F_SEAL_SHRINK */
	CHECK(daemon_alive());
}

/*
 * A region file that takes no seal (here a memfd without
 * MFD_ALLOW_SEALING; UML's file, a memory-backend-file) shrunk under the
 * daemon: the access to its lost tail faults, the queue is marked broken,
 * the daemon keeps serving (the other queues, and the next frontend).
 */
static void t_region_shrunk(void)
{
	uint64_t f = (1ULL << 32) | (1ULL << 29) | (1ULL << 30) | (1ULL << 1);
	uint32_t st[2] = { 1, 0 };
	struct { uint32_t idx, num; } r;
	struct fuse_getattr_in gi = { 0 };
	struct fuse_out_header *oh;

	restart("--workers=1");
	CHECK(!test_failed);
	CHECK(acked(2, &f, 8, -1) == 0);
	memfd = memfd_create("guest", MFD_CLOEXEC);
	CHECK(memfd >= 0 && ftruncate(memfd, MEM_SIZE) == 0);
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	CHECK(mem != MAP_FAILED);
	CHECK(mem_table_of(memfd, MEM_SIZE) == 0);
	setup_queue(1);
	setup_queue(2);
	CHECK(!test_failed);
	CHECK(ftruncate(memfd, MEM_SIZE / 2) == 0);	/* no seal possible */
	kick_buffer_at(MEM_SIZE / 2 + 0x1000);
	CHECK(daemon_alive());
	/* queue 1 is broken: nothing published, its base still answered */
	CHECK(vq_of(1).used->idx == 0);
	CHECK(send_msg(11, 0, st, sizeof(st), -1) == 0);	/* GET_VRING_BASE */
	CHECK(recv_reply(11, &r, sizeof(r)) == 0);
	/* the sync queue, in the part still there, serves on */
	fuse_init_sync();
	CHECK(!test_failed);
	oh = submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(oh->error == 0);
	CHECK(daemon_alive());
}

/*
 * A message shorter than its payload is refused: it must not act on what
 * the previous message left in the buffer.
 */
static void t_short_messages(void)
{
	static const uint32_t reqs[] = { 8, 9, 10, 12, 13, 14, 18, 35 };
	uint32_t base[2] = { 1, 5 };
	unsigned int i;
	uint64_t f;

	restart("--workers=1");
	CHECK(!test_failed);
	f = (1ULL << 32) | (1ULL << 29) | (1ULL << 30) | (1ULL << 1);
	CHECK(acked(2, &f, 8, -1) == 0);
	set_guest_memory();
	setup_queue(1);
	CHECK(!test_failed);
	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		int64_t st;

		/* a full SET_VRING_BASE leaves { 1, 5 } in the buffer */
		CHECK(acked(10, base, 8, -1) == 0);
		st = acked(reqs[i], NULL, 0, -1);
		if (st != 1)
			printf("  request %u with no payload: status %lld\n",
			       reqs[i], (long long)st);
		CHECK(st == 1);
	}
	/* and a SET_VRING_ADDR of 8 bytes, the rest from before */
	CHECK(acked(9, base, 8, -1) == 1);
	/* SET_FEATURES of 4 bytes */
	CHECK(acked(2, &f, 4, -1) == 1);
	CHECK(daemon_alive());
}

/*
 * The daemon's exit status and what it wrote to FD (1 or 2), run with the
 * arguments ARGV (NULL-terminated, after the program's name).
 */
static int capture(int fd, const char *const argv[], char *out, size_t len)
{
	const char *args[8] = { daemon_path };
	int fds[2], status = -1, i;
	ssize_t n, got = 0;
	pid_t pid;

	for (i = 0; argv[i] && i < 6; i++)
		args[i + 1] = argv[i];
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(fds[1], fd);
		execv(daemon_path, (char *const *)args);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The daemon's exit status and stderr, started with --socket-path in a
 * directory that does not exist (so it stops right after opening its
 * output files) and the given option.
 */
static int run_capture(const char *arg, char *out, size_t len)
{
	const char *const argv[] = { "--socket-path=/nonexistent/s", "--shared-dir=/", arg, NULL };

	return capture(2, argv, out, len);
}

/*
 * --trace-file and --stats-file are opened as root on a host path: a
 * symlink, hard link or FIFO planted there is refused, and what it points
 * to is left alone.
 */
static void t_output_files(void)
{
	static const char *const opts[] = { "--trace-file", "--stats-file" };
	char victim[400], planted[400], arg[420], out[2048], buf[16];
	unsigned int i, kind;
	int fd;

	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(planted, sizeof(planted), "%s/out", dir);
	for (i = 0; i < 2; i++) {
		for (kind = 0; kind < 3; kind++) {
			fd = open(victim, O_CREAT | O_TRUNC | O_WRONLY, 0600);
			CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
			close(fd);
			unlink(planted);
			if (kind == 0)
				CHECK(symlink(victim, planted) == 0);
			else if (kind == 1)
				CHECK(link(victim, planted) == 0);
			else
				CHECK(mkfifo(planted, 0600) == 0);
			snprintf(arg, sizeof(arg), "%s=%s", opts[i], planted);
			CHECK(run_capture(arg, out, sizeof(out)) == 1);
			fd = open(victim, O_RDONLY);
			CHECK(fd >= 0);
			memset(buf, 0, sizeof(buf));
			CHECK(read(fd, buf, sizeof(buf)) >= 0);
			close(fd);
			if (!strstr(out, planted) || strcmp(buf, "keep"))
				printf("  %s over a %s: \"%s\" left, said: %s",
				       opts[i], kind == 0 ? "symlink" :
				       kind == 1 ? "hard link" : "FIFO",
				       buf, out);
			CHECK(!strcmp(buf, "keep"));
			/* refused for the file, not for the socket's path */
			CHECK(strstr(out, planted));
		}
	}
	/* a regular file is still written */
	unlink(planted);
	snprintf(arg, sizeof(arg), "--trace-file=%s", planted);
	CHECK(run_capture(arg, out, sizeof(out)) == 1);
	CHECK(!strstr(out, planted) && access(planted, F_OK) == 0);
}

/*
 * A daemon taken over by the guest (--test-escape runs the attempts in
 * the sandboxed daemon): a forged file handle, sysctl writes through the
 * procfs, the host's processes. Every attempt must be refused.
 */
static void t_escape(void)
{
	char out[4096] = { 0 }, sock_arg[340], share_arg[340], *line;
	int fds[2], status = -1, refused = 0;
	ssize_t n, got = 0;
	pid_t pid;

	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(share, sizeof(share), "%s/share", dir);
	CHECK(mkdir(share, 0755) == 0);
	snprintf(sock_arg, sizeof(sock_arg), "--socket-path=%s/sock", dir);
	snprintf(share_arg, sizeof(share_arg), "--shared-dir=%s", share);
	CHECK(pipe2(fds, O_CLOEXEC) == 0);
	pid = fork();
	if (!pid) {
		dup2(fds[1], 2);
		execl(daemon_path, daemon_path, sock_arg, share_arg,
		      "--test-escape", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	close(fds[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	for (line = strstr(out, "test: escape: "); line;
	     line = strstr(line + 1, "test: escape: ")) {
		char *end = strchr(line, '\n');

		if (strstr(line, ": ESCAPED: ") &&
		    (!end || strstr(line, ": ESCAPED: ") < end))
			printf("  %.*s\n", end ? (int)(end - line) : 80, line);
		else
			refused++;
	}
	CHECK(!strstr(out, "ESCAPED"));
	CHECK(refused == 5);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* a kick channel's answers: after this one, none to the queue's kicks */
#define KICK_ANSWERED	0
#define KICK_UNANSWERED	1

/* A kick on queue q's channel: its status, or -1 if the channel failed. */
static int64_t chan_kick(unsigned int q)
{
	uint64_t k = q, st;

	if (write(chan[q], &k, sizeof(k)) != sizeof(k) ||
	    read(chan[q], &st, sizeof(st)) != sizeof(st))
		return -1;
	return st;
}

/* The value of KEY=N on the lines of FILE that start with PREFIX. */
static long long file_count(const char *file, const char *prefix,
			    const char *key, int *lines)
{
	char line[512];
	long long sum = 0;
	FILE *f = fopen(file, "r");

	*lines = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		(*lines)++;
		p = strstr(line, key);
		if (p)
			sum += strtoll(p + strlen(key), NULL, 10);
	}
	fclose(f);
	return sum;
}

/*
 * The threads of the trace lines that start with PREFIX, in order, into
 * tids[max]; returns how many lines, or -1 if one has end < start.
 */
static int trace_tids(const char *prefix, long *tids, int max)
{
	char line[512];
	int n = 0, bad = 0;
	FILE *f = fopen(trace_path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *t = strstr(line, " tid="), *p = strstr(line, " start=");
		unsigned long long s, e;

		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		if (!t || !p || sscanf(p, " start=%llu end=%llu", &s, &e) != 2 ||
		    e < s)
			bad = 1;
		if (n < max && t)
			tids[n] = strtol(t + 5, NULL, 10);
		n++;
	}
	fclose(f);
	return bad ? -1 : n;
}

/* A kick channel for queues 1 and 2 (SET_VRING_KICK with a socketpair). */
static void open_channels(void)
{
	int q;

	for (q = 1; q < 3; q++) {
		int sp[2];
		uint64_t idx = q;

		CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
		CHECK(acked(12, &idx, sizeof(idx), sp[1]) == 0);
		close(sp[1]);
		chan[q] = sp[0];
	}
}

/*
 * Protocol feature 62: every queue's kick is a socket of its own. A sync
 * queue's buffers are published when the channel's acknowledgement comes;
 * they are processed on the queue's handler thread, not the socket's.
 */
static void t_kick_channel(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	struct fuse_getattr_in gi = { 0 };
	struct fuse_out_header *oh;
	char buf[2048] = { 0 };
	struct vq v;
	long tids[21];
	int status, n, i, q;

	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	memset(avail_idx, 0, sizeof(avail_idx));
	extra_arg = "--workers=2";
	want_pf |= PF_KICK_CHANNEL;
	t_handshake();
	CHECK(!test_failed);
	t_setup_rings();
	CHECK(!test_failed);
	/*
	 * A kick fd that is not a stream socket is an eventfd, as without
	 * the bit (the project's QEMU series gives channels to the sync
	 * queues only): accepted, and replaced by the channel below.
	 */
	{
		int p[2];
		uint64_t idx = 2;

		CHECK(pipe2(p, O_CLOEXEC) == 0);
		CHECK(acked(12, &idx, sizeof(idx), p[0]) == 0);
		close(p[0]);
		close(p[1]);
	}
	open_channels();
	CHECK(!test_failed);
	v = vq_of(2);
	/*
	 * A request queue's first kick is answered at once, saying that no
	 * later kick will be; completion by call.
	 */
	submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(chan_kick(1) == KICK_UNANSWERED);
	CHECK(pipe_has_call(1, 5000));
	/* its later kicks are writes only, and any bytes are a kick */
	for (i = 0; i < 2; i++) {
		struct pollfd p = { chan[1], POLLIN, 0 };
		uint64_t k = 1;
		ssize_t len = i ? 1 : sizeof(k);

		*used_event(1) = i + 1;
		submit(1, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
		CHECK(write(chan[1], &k, len) == len);
		CHECK(pipe_has_call(1, 5000));
		CHECK(poll(&p, 1, 100) == 0);
	}
	*used_event(2) = 0x8000;
	/* a sync queue's every kick is answered, after its used entry */
	for (i = 0; i < 20; i++) {
		oh = submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
		CHECK(chan_kick(2) == KICK_ANSWERED);
		CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == i + 1);
		CHECK(oh->error == 0 && oh->unique == unique - 1);
	}
	/* the in-band kick still works, on the socket's thread */
	submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 21);
	CHECK(!pipe_has_call(2, 100));
	/* stopping the queue ends its channel */
	{
		uint32_t st[2] = { 2, 0 };
		struct { uint32_t idx, num; } r;
		uint64_t k = 2;

		CHECK(send_msg(11, 0, st, sizeof(st), -1) == 0);
		CHECK(recv_reply(11, &r, sizeof(r)) == 0 && r.num == 21);
		/* EOF, or a reset if the kick raced the shutdown */
		if (write(chan[2], &k, sizeof(k)) < 0)
			k = 0;
		CHECK(read(chan[2], &k, sizeof(k)) <= 0);
	}
	close(sock);
	sock = -1;
	kill(daemon_pid, SIGTERM);
	CHECK(waitpid(daemon_pid, &status, 0) == daemon_pid);
	daemon_pid = 0;
	read_stats(buf, sizeof(buf));
	CHECK(!test_failed);
	CHECK(strstr(buf, "queue=2 type=sync requests=21 inline=21 late=0 errors=0 "));
	CHECK(file_count(stats_path, "queue=2 ", "channel_kicks=", &n) == 20 && n == 1);
	CHECK(file_count(stats_path, "queue=1 ", "channel_kicks=", &n) == 3 && n == 1);
	CHECK(file_count(stats_path, "queue=2 ", "busy_ns=", &n) > 0);
	/* the channel's requests are timed as the socket's are */
	CHECK(file_count(stats_path, "queue=2 ", " handler_ns=", &n) > 0);
	CHECK(file_count(stats_path, "queue=2 ", " queued_ns=", &n) > 0);
	CHECK(file_count(stats_path, "queue=1 ", " queued_ns=", &n) > 0);
	/* one trace line per request; the channel's 20 on one thread */
	CHECK(file_count(trace_path, "queue=1 type=request ", "opcode=", &n) ==
	      FUSE_INIT + 2 * FUSE_GETATTR && n == 3);
	CHECK(trace_tids("queue=2 type=sync ", tids, 21) == 21);
	for (i = 1; i < 20; i++)
		CHECK(tids[i] == tids[0]);
	/* and the in-band kick's request ran on another (the socket's) */
	CHECK(tids[20] != tids[0]);
	for (q = 1; q < 3; q++) {
		close(chan[q]);
		chan[q] = -1;
	}
	want_pf &= ~PF_KICK_CHANNEL;
}

/* --no-kick-channel: the extension is not offered. */
static void t_no_kick_channel(void)
{
	cleanup();
	strcpy(dir, "/tmp/vufs-vu-XXXXXX");
	extra_arg = "--no-kick-channel";
	start_daemon();
	vu_connect();
	CHECK(sock >= 0);
	CHECK(!(get_u64(15) & PF_KICK_CHANNEL));
	CHECK(get_u64(15) & (1 << 14));
}

/* The thread of the sandboxed daemon whose innermost tid is ns_tid: its CPUs. */
static bool thread_cpus(pid_t pid, long ns_tid, char *cpus, size_t len)
{
	char path[96], val[128];
	DIR *d;
	struct dirent *de;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char *last;
		long tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%d/task/%ld", pid, tid);
		if (!status_line_of(path, "NSpid", val, sizeof(val)))
			continue;
		last = strrchr(val, '\t') ? strrchr(val, '\t') + 1 : val;
		if (strtol(last, NULL, 10) != ns_tid ||
		    !status_line_of(path, "Cpus_allowed_list", val, sizeof(val)))
			continue;
		snprintf(cpus, len, "%s", val + strspn(val, " \t"));
		cpus[strcspn(cpus, "\n")] = '\0';
		found = true;
	}
	closedir(d);
	return found;
}

/*
 * --pin-sync and --pin-workers: the affinity of the threads that ran
 * each kind of request, read back from /proc: the sync queue's handler
 * thread and the control thread (in-band kick) on the sync CPU, the
 * worker that ran the request queue's on the workers' CPU.
 */
static void t_pinning(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	struct fuse_getattr_in gi = { 0 };
	char opts[128], want_sync[16], want_workers[16], cpus[64];
	long tids[3];
	cpu_set_t set;
	int c, first = -1, last = -1;
	pid_t pid;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (first < 0)
			first = c;
		last = c;
	}
	snprintf(want_sync, sizeof(want_sync), "%d", last);
	snprintf(want_workers, sizeof(want_workers), "%d", first);
	snprintf(opts, sizeof(opts), "--workers=2 --pin-sync=%d --pin-workers=%d",
		 last, first);
	want_pf |= PF_KICK_CHANNEL;
	restart(opts);
	want_pf &= ~PF_KICK_CHANNEL;
	CHECK(!test_failed);
	t_setup_rings();
	CHECK(!test_failed);
	open_channels();
	CHECK(!test_failed);
	submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(chan_kick(1) == KICK_UNANSWERED);
	CHECK(pipe_has_call(1, 5000));
	*used_event(2) = 0x8000;
	submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(chan_kick(2) == KICK_ANSWERED);
	submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	/* the threads that ran them, by the trace: worker, handler, control */
	CHECK(trace_tids("queue=1 type=request ", tids, 1) == 1);
	CHECK(trace_tids("queue=2 type=sync ", tids + 1, 2) == 2);
	pid = sandboxed_pid();
	CHECK(pid > 0);
	CHECK(thread_cpus(pid, tids[0], cpus, sizeof(cpus)));
	CHECK(!strcmp(cpus, want_workers));
	CHECK(thread_cpus(pid, tids[1], cpus, sizeof(cpus)));
	CHECK(!strcmp(cpus, want_sync));
	CHECK(thread_cpus(pid, tids[2], cpus, sizeof(cpus)));
	CHECK(!strcmp(cpus, want_sync));
	/* the affinity calls are in the seccomp allow-list: a clean exit */
	modes_exit(true);
}

/* The daemon's exit status with ARG, for a socket path it cannot bind. */
static int exit_status_with(const char *arg)
{
	int status = -1;
	pid_t pid = fork();

	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execl(daemon_path, daemon_path, "--socket-path=/nonexistent/s",
		      "--shared-dir=/", arg, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A CPU list the process may not use, or one that does not parse: status 2. */
static void t_pinning_refused(void)
{
	static const char *const bad[] = { "--pin-sync=1023", "--pin-workers=0-",
					   "--pin-sync=a" };
	char good[32];
	cpu_set_t set;
	unsigned int i;
	int c = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(exit_status_with(bad[i]) == 2);
	/* a CPU it may use passes: the socket fails next, status 1 */
	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	while (c < CPU_SETSIZE - 1 && !CPU_ISSET(c, &set))
		c++;
	snprintf(good, sizeof(good), "--pin-sync=%d", c);
	CHECK(exit_status_with(good) == 1);
}

/* The daemon's stdout with ARG alone, and its exit status. */
static int help_text(const char *arg, char *out, size_t len)
{
	const char *const argv[] = { arg, NULL };

	return capture(1, argv, out, len);
}

/* Whether TEXT names the option --NAME (not one it is a prefix of). */
static bool names_opt(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
		char next = p[2 + len];

		if (!strncmp(p + 2, name, len) &&
		    !(next == '-' || (next >= 'a' && next <= 'z')))
			return true;
	}
	return false;
}

/*
 * --help lists what a user runs the device with, --help-test the knobs of
 * tests and benchmarks, each knob in one of them only; every knob is still
 * taken (the socket fails next: status 1).
 */
static void t_help_split(void)
{
	static const char *const knobs[] = {
		"faults", "sync-late=1", "delay-us=1", "sync-delay-ms=1",
		"config-size=44", "test-forbidden-syscall", "test-escape",
		"used-len-zero", "no-async-dio",
	};
	static const char *const user[] = {
		"socket-path", "shared-dir", "sync-queues-at", "populate-memory",
		"trace-file", "help-test",
	};
	char help[8192], test[8192], name[64], arg[80];
	unsigned int i;

	CHECK(help_text("--help", help, sizeof(help)) == 0);
	CHECK(help_text("--help-test", test, sizeof(test)) == 0);
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(knobs[i], "="), knobs[i]);
		if (names_opt(help, name) || !names_opt(test, name))
			printf("  --%s: in --help %d, in --help-test %d\n", name,
			       names_opt(help, name), names_opt(test, name));
		CHECK(!names_opt(help, name) && names_opt(test, name));
		snprintf(arg, sizeof(arg), "--%s", knobs[i]);
		CHECK(exit_status_with(arg) == 1);
	}
	for (i = 0; i < sizeof(user) / sizeof(user[0]); i++) {
		if (!names_opt(help, user[i]))
			printf("  --%s: not in --help\n", user[i]);
		CHECK(names_opt(help, user[i]));
	}
	CHECK(!names_opt(test, "shared-dir"));
	/* the last line of --help points to --help-test */
	CHECK(strlen(help) > 1 && help[strlen(help) - 1] == '\n');
	help[strlen(help) - 1] = 0;
	CHECK(names_opt(strrchr(help, '\n'), "help-test"));
}

/*
 * VIRTIO_FS_F_SYNC_BUDGET is the bit after the sync bit: offered with a
 * budget (the default has one), not without, and never as bit 24 (a
 * transport bit).
 */
static void t_budget_bit(void)
{
	static const struct {
		const char *arg;
		unsigned int sync_bit;
		bool budget;
	} c[] = {
		{ "--workers=1", 1, true },
		{ "--sync-budget-us=0", 1, false },
		{ "--sync-bit=5 --sync-budget-us=1", 5, true },
		{ "--sync-bit=23", 23, false },
	};
	unsigned int i;
	uint64_t f;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cleanup();
		strcpy(dir, "/tmp/vufs-vu-XXXXXX");
		extra_arg = c[i].arg;
		start_daemon();
		vu_connect();
		CHECK(sock >= 0);
		f = get_u64(1);
		CHECK(f != ~0ULL && (f & (1ULL << c[i].sync_bit)));
		CHECK(!(f & (1ULL << (c[i].sync_bit + 1))) == !c[i].budget);
		CHECK(f & (1ULL << 32));
	}
}

/* A fresh daemon with EXTRA, rings set up, INIT done on the request queue. */
static void budget_daemon(const char *extra)
{
	struct fuse_init_in init = { .major = 7, .minor = 41 };

	restart(extra);
	CHECK(!test_failed);
	t_setup_rings();
	CHECK(!test_failed);
	submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(kick(1) == 0);
	CHECK(pipe_has_call(1, 5000));
}

/* A sync kick's time to its acknowledgement, in ms; -1 if it failed. */
static long kick_ms(unsigned int q)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (kick(q))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

/* KEY=N of queue 2's line in the stats the daemon left. */
static long long sync_stat(const char *key)
{
	int n;
	long long v = file_count(stats_path, "queue=2 type=sync ", key, &n);


	return n == 1 ? v : -1;
}

/* What tests run on a loaded host allow a kick beyond its budget. */
#define KICK_SLACK_MS	250
/* the passes over queue 2 that were no kick: SET_VRING_ENABLE's */
#define EXITS_SETUP	1

/*
 * A request known to take long on the host, FSYNC or a SETATTR of the
 * size, is not run inside the kick: the kick is answered without it, and
 * a worker completes it later (here after the one worker's 2 s LOOKUP on
 * the request queue) with a call.
 */
static void t_budget_predicted(void)
{
	static const char dev_line[] = "device budget_us=2000 watch=auto-off\n";
	struct fuse_fsync_in fi = { .fh = 0 };
	struct fuse_setattr_in sa = { .valid = FATTR_SIZE };
	struct fuse_getattr_in gi = { 0 };
	struct fuse_out_header *oh;
	struct vq v;
	char buf[2048];

	budget_daemon("--workers=1 --faults");
	CHECK(!test_failed);
	v = vq_of(2);
	*used_event(1) = 0x8000;
	submit(1, FUSE_LOOKUP, 1, "vfs-fault-delay.2", 18, 512);
	CHECK(kick(1) == 0);
	*used_event(2) = 0;
	oh = submit(2, FUSE_FSYNC, 1, &fi, sizeof(fi), 256);
	CHECK(kick_ms(2) < KICK_SLACK_MS);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 0);
	CHECK(pipe_has_call(2, 10000));
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(oh->unique == unique - 1 && oh->len >= sizeof(*oh));
	*used_event(2) = 0x8000;
	oh = submit(2, FUSE_SETATTR, 1, &sa, sizeof(sa), 256);
	CHECK(kick(2) == 0);
	CHECK(used_reaches(2, 2));
	CHECK(oh->unique == unique - 1 && oh->len >= sizeof(*oh));
	/* the rest still inside the kick */
	oh = submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 3);
	CHECK(oh->error == 0 && oh->unique == unique - 1);
	modes_exit(false);
	CHECK(!test_failed);
	read_stats(buf, sizeof(buf));
	CHECK(!strncmp(buf, dev_line, sizeof(dev_line) - 1));
	CHECK(sync_stat(" defer_predicted=") == 2);
	CHECK(sync_stat(" late=") == 2 && sync_stat(" inline=") == 1);
	CHECK(sync_stat(" defer_watch=") == 0 && sync_stat(" defer_budget=") == 0);
	CHECK(sync_stat(" exits=") == 3 + EXITS_SETUP);
	CHECK(sync_stat(" exit_max_us=") < (2000 + KICK_SLACK_MS * 1000));
}

/*
 * --sync-watch=always: a LOOKUP the host delays by 1 s is waited for until
 * the budget, then answered without; it completes late, with a call.
 */
static void t_budget_watch_late(void)
{
	struct fuse_out_header *oh;
	long long p50, p99, p999, max;
	struct vq v;

	budget_daemon("--workers=2 --faults --sync-watch=always");
	CHECK(!test_failed);
	v = vq_of(2);
	*used_event(2) = 0;
	oh = submit(2, FUSE_LOOKUP, 1, "vfs-fault-delay.1", 18, 512);
	CHECK(kick_ms(2) < 2 + KICK_SLACK_MS);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 0);
	CHECK(pipe_has_call(2, 5000));
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(oh->error == -ENOENT && oh->unique == unique - 1);
	modes_exit(false);
	CHECK(!test_failed);
	CHECK(sync_stat(" defer_watch=") == 1 && sync_stat(" late=") == 1);
	CHECK(sync_stat(" inline=") == 0 && sync_stat(" exits=") == 1 + EXITS_SETUP);
	p50 = sync_stat(" exit_p50_us=");
	p99 = sync_stat(" exit_p99_us=");
	p999 = sync_stat(" exit_p999_us=");
	max = sync_stat(" exit_max_us=");
	CHECK(max >= 2000 && max < 2000 + KICK_SLACK_MS * 1000);
	/* the longest of two: the 99th percentile and above are it */
	CHECK(p50 <= p99 && p99 == max && p999 == max);
}

/*
 * --sync-watch=always: an ordinary LOOKUP, run on the one worker (the
 * trace says so), is done within the budget and published inside the
 * kick. The budget is large, for a loaded host.
 */
static void t_budget_watch_inline(void)
{
	struct fuse_out_header *oh;
	long tids[2];
	struct vq v;

	budget_daemon("--workers=1 --sync-watch=always --sync-budget-us=500000");
	CHECK(!test_failed);
	v = vq_of(2);
	*used_event(2) = 0x8000;
	oh = submit(2, FUSE_LOOKUP, 1, "nothere", 8, 512);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(oh->error == -ENOENT && oh->unique == unique - 1);
	CHECK(trace_tids("queue=1 ", tids, 1) == 1);
	CHECK(trace_tids("queue=2 ", tids + 1, 1) == 1);
	CHECK(tids[0] == tids[1]);
	modes_exit(false);
	CHECK(!test_failed);
	CHECK(sync_stat(" inline=") == 1 && sync_stat(" late=") == 0);
	CHECK(sync_stat(" defer_watch=") == 0 && sync_stat(" exits=") == 1 + EXITS_SETUP);
}

/*
 * --sync-watch=auto on a local share: a LOOKUP the host delays by 1 s runs
 * inside its kick, a broken promise (overrun), and the GETATTR behind it
 * in the same kick, past the budget, completes late (after the one
 * worker's 2 s LOOKUP on the request queue). For 10 s after, LOOKUPs are
 * watched: the next delayed one is answered without.
 */
static void t_budget_overrun(void)
{
	struct fuse_getattr_in gi = { 0 };
	struct fuse_out_header *oh;
	struct vq v;

	budget_daemon("--workers=1 --faults");
	CHECK(!test_failed);
	v = vq_of(2);
	*used_event(1) = 0x8000;
	submit(1, FUSE_LOOKUP, 1, "vfs-fault-delay.2", 18, 512);
	CHECK(kick(1) == 0);
	*used_event(2) = 0x8000;
	submit_in(2, 0, FUSE_LOOKUP, 1, "vfs-fault-delay.1", 18, 512);
	oh = submit_in(2, 1, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick_ms(2) >= 1000);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(used_reaches(2, 2));
	CHECK(oh->error == 0 && oh->unique == unique - 1);
	submit(2, FUSE_LOOKUP, 1, "vfs-fault-delay.1", 18, 512);
	CHECK(kick_ms(2) < 2 + KICK_SLACK_MS);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 2);
	CHECK(used_reaches(2, 3));
	modes_exit(false);
	CHECK(!test_failed);
	CHECK(sync_stat(" overrun=") == 1 && sync_stat(" defer_budget=") == 1);
	CHECK(sync_stat(" defer_watch=") == 1 && sync_stat(" late=") == 2);
	CHECK(sync_stat(" exits=") == 2 + EXITS_SETUP);
	CHECK(sync_stat(" exit_max_us=") >= 1000000);
}

/* Opens share/name on the sync queue: its fh, or 0 on failure. */
static uint64_t open_sync(const char *name, uint32_t flags)
{
	struct fuse_open_in oi = { .flags = flags };
	struct fuse_out_header *oh;
	uint64_t ino;

	if (lookup(1, name, &ino))
		return 0;
	oh = submit(2, FUSE_OPEN, ino, &oi, sizeof(oi), 256);
	if (kick(2) || oh->error)
		return 0;
	return ((struct fuse_open_out *)(oh + 1))->fh;
}

/*
 * An OPEN for writing of a file someone holds a read lease on: inside the
 * kick it would wait for the holder to let go (O_NONBLOCK says so at once),
 * so it completes late, once the holder has.
 */
static void t_budget_nowait_open(void)
{
	struct fuse_open_in oi = { .flags = O_WRONLY };
	struct fuse_out_header *oh;
	char path[400];
	uint64_t ino;
	struct vq v;
	int fd;

	budget_daemon("--workers=1");
	CHECK(!test_failed);
	v = vq_of(2);
	snprintf(path, sizeof(path), "%s/leased", share);
	fd = open(path, O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
	signal(SIGIO, SIG_IGN);
	CHECK(fd >= 0 && fcntl(fd, F_SETLEASE, F_RDLCK) == 0);
	*used_event(2) = 0x8000;
	CHECK(lookup(1, "leased", &ino) == 0);
	*used_event(2) = 1;
	oh = submit(2, FUSE_OPEN, ino, &oi, sizeof(oi), 256);
	CHECK(kick_ms(2) < 2 + KICK_SLACK_MS);
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(fcntl(fd, F_SETLEASE, F_UNLCK) == 0);
	CHECK(pipe_has_call(2, 5000));
	CHECK(__atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE) == 2);
	CHECK(oh->error == 0 && oh->unique == unique - 1);
	close(fd);
	modes_exit(false);
	CHECK(!test_failed);
	CHECK(sync_stat(" defer_nowait=") == 1 && sync_stat(" late=") == 1);
	CHECK(sync_stat(" inline=") == 1);
}

/*
 * Writes path with len bytes of data, then drops them from the host's page
 * cache: fadvise(DONTNEED) leaves pages another CPU's LRU batch still
 * holds, so it is repeated until mincore() sees the first page gone.
 */
static bool cold_file(const char *path, const void *data, size_t len)
{
	unsigned char in = 1;
	bool cold = false;
	void *map;
	int fd, i;

	fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || fsync(fd)) {
		close(fd);
		return false;
	}
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	for (i = 0; map != MAP_FAILED && i < 100 && !cold; i++) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		cold = !mincore(map, 4096, &in) && !(in & 1);
		if (!cold)
			usleep(20000);
	}
	if (map != MAP_FAILED)
		munmap(map, len);
	close(fd);
	return cold;
}

/*
 * A READ of data not in the host's page cache: tried with RWF_NOWAIT
 * inside the kick, which starts the disk's read; the data may be there
 * by the time the kernel looks again (a fast disk), else the READ
 * completes late (and its worker may publish it before the kick's
 * answer is read). Either way with the file's bytes, and late exactly
 * when the device counted it as one that would have waited. Where the
 * share's file system has no RWF_NOWAIT reads, it is read in the kick.
 */
static void t_budget_nowait_read(void)
{
	struct fuse_read_in ri = { .size = 4096 };
	struct fuse_out_header *oh;
	char path[400], data[65536], b;
	long long late;
	bool nowait;
	struct iovec iov = { &b, 1 };
	uint16_t used;
	struct vq v;
	int fd;

	budget_daemon("--workers=1");
	CHECK(!test_failed);
	v = vq_of(2);
	memset(data, 'c', sizeof(data));
	/* a cold probe file tells whether RWF_NOWAIT reads exist here */
	snprintf(path, sizeof(path), "%s/probe", share);
	CHECK(cold_file(path, data, sizeof(data)));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	nowait = preadv2(fd, &iov, 1, 0, RWF_NOWAIT) < 0 && errno == EAGAIN;
	close(fd);
	snprintf(path, sizeof(path), "%s/cold", share);
	CHECK(cold_file(path, data, sizeof(data)));
	*used_event(2) = 0x8000;
	ri.fh = open_sync("cold", O_RDONLY);
	CHECK(ri.fh != 0);
	used = __atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE);
	*used_event(2) = used;
	oh = submit(2, FUSE_READ, 0, &ri, sizeof(ri), 4096 + sizeof(*oh));
	CHECK(kick_ms(2) < 2 + KICK_SLACK_MS);
	CHECK(used_reaches(2, used + 1));
	CHECK(oh->error == 0 && oh->len == sizeof(*oh) + 4096);
	CHECK(!memcmp(oh + 1, data, 4096));
	modes_exit(false);
	CHECK(!test_failed);
	late = sync_stat(" defer_nowait=");
	CHECK(late == 0 || (nowait && late == 1));
	CHECK(sync_stat(" late=") == late);
}

/*
 * --sync-queues-at=40: num_sync_queues right after num_request_queues, in
 * a 44-byte config (libkrun's 40 bytes and the count); all ones past it.
 * The sync queue exists: its ring can be set up.
 */
static void t_config_at_40(void)
{
	struct { uint32_t off, size, flags; uint8_t cfg[48]; } __attribute__((packed)) c = {
		0, 48, 0, { 0 } }, r;

	restart("--workers=1 --sync-queues-at=40");
	CHECK(!test_failed);
	CHECK(send_msg(24, 0, &c, sizeof(c), -1) == 0);
	CHECK(recv_reply(24, &r, sizeof(r)) == 0);
	CHECK(r.size == 48 && !memcmp(r.cfg, "share", 6));
	CHECK(*(uint32_t *)(r.cfg + 36) == 1);		/* request queues */
	CHECK(*(uint32_t *)(r.cfg + 40) == 1);		/* sync queues */
	CHECK(*(uint32_t *)(r.cfg + 44) == 0xffffffff);
	t_setup_rings();
	CHECK(!test_failed);
}

/*
 * --used-len-zero: every buffer on the used ring with length 0, on a
 * request queue and on a sync queue, the reply written all the same.
 */
static void t_used_len_zero(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 41 };
	struct fuse_getattr_in gi = { 0 };
	struct fuse_out_header *oh;
	struct vq r, s;

	restart("--workers=1 --used-len-zero");
	CHECK(!test_failed);
	t_setup_rings();
	CHECK(!test_failed);
	r = vq_of(1);
	s = vq_of(2);
	oh = submit(1, FUSE_INIT, 0, &init, sizeof(init), 4096);
	CHECK(kick(1) == 0);
	CHECK(pipe_has_call(1, 5000));
	CHECK(__atomic_load_n(&r.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(oh->error == 0 && oh->len > sizeof(*oh) && r.used->ring[0].len == 0);
	*used_event(2) = 0x8000;
	oh = submit(2, FUSE_GETATTR, 1, &gi, sizeof(gi), 256);
	CHECK(kick(2) == 0);
	CHECK(__atomic_load_n(&s.used->idx, __ATOMIC_ACQUIRE) == 1);
	CHECK(oh->error == 0 && oh->len == sizeof(*oh) + sizeof(struct fuse_attr_out));
	CHECK(s.used->ring[0].len == 0);
}

/*
 * A request on the sync queue, after INIT: its reply, the used entries it
 * got with the kick's answer (*n) and the length of the last (*len).
 */
static struct fuse_out_header *fault_req(uint32_t opcode, const void *arg,
					 uint32_t arglen, uint16_t *n,
					 uint32_t *len)
{
	struct vq v = vq_of(2);
	uint16_t before = __atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE), after;
	struct fuse_out_header *oh;

	oh = submit(2, opcode, 1, arg, arglen, 512);
	if (kick(2))
		test_failed = true;
	after = __atomic_load_n(&v.used->idx, __ATOMIC_ACQUIRE);
	*n = after - before;
	*len = *n ? v.used->ring[(uint16_t)(after - 1) % QSIZE].len : ~0u;
	return oh;
}

#define FAULT_LOOKUP(name, n, len) \
	fault_req(FUSE_LOOKUP, name, sizeof(name), n, len)

/*
 * --faults: each wrong reply a LOOKUP of vfs-fault-KIND asks for (all
 * but close and delay), and a READ at 529 GiB, on a sync queue, where
 * the used entries are there with the kick's answer; other requests are
 * answered as without --faults. The stats count each request once, as
 * it was before it was spoiled. With --used-len-zero every used length is
 * 0 whatever the fault.
 */
static void t_faults(void)
{
	struct fuse_read_in ri = { .fh = 0, .offset = 529ULL << 30, .size = 64 };
	const uint32_t hlen = sizeof(struct fuse_out_header);
	struct fuse_out_header *oh;
	uint16_t n;
	uint32_t len;

	budget_daemon("--workers=1 --faults");
	CHECK(!test_failed);
	*used_event(2) = 0x8000;
	oh = FAULT_LOOKUP("no-such-name", &n, &len);
	CHECK(n == 1 && len == hlen && oh->len == hlen);
	CHECK(oh->error == -ENOENT && oh->unique == unique - 1);
	oh = FAULT_LOOKUP("vfs-fault-no-such-kind", &n, &len);
	CHECK(n == 1 && len == hlen && oh->error == -ENOENT);
	oh = FAULT_LOOKUP("vfs-fault-len-over", &n, &len);
	CHECK(n == 1 && len == 512 + 1 && oh->len == hlen);
	oh = FAULT_LOOKUP("vfs-fault-len-under", &n, &len);
	CHECK(n == 1 && len == hlen / 2 && oh->len == hlen);
	oh = FAULT_LOOKUP("vfs-fault-len-zero", &n, &len);
	CHECK(n == 1 && len == 0 && oh->len == hlen);
	oh = FAULT_LOOKUP("vfs-fault-hdr-len", &n, &len);
	CHECK(n == 1 && len == hlen && oh->len == hlen + 8);
	oh = FAULT_LOOKUP("vfs-fault-unique", &n, &len);
	CHECK(n == 1 && len == hlen && oh->unique == ((unique - 1) ^ 1));
	oh = FAULT_LOOKUP("vfs-fault-error-range", &n, &len);
	CHECK(n == 1 && len == hlen && oh->len == hlen && oh->error == -5000);
	oh = FAULT_LOOKUP("vfs-fault-error-529.x", &n, &len);
	CHECK(n == 1 && len == hlen && oh->error == -529);
	oh = FAULT_LOOKUP("vfs-fault-double", &n, &len);
	CHECK(n == 2 && len == hlen && oh->error == -ENOENT);
	oh = FAULT_LOOKUP("vfs-fault-never", &n, &len);
	CHECK(n == 0 && oh->len == hlen && oh->error == -ENOENT);
	oh = fault_req(FUSE_READ, &ri, sizeof(ri), &n, &len);
	CHECK(n == 1 && len == hlen && oh->len == hlen && oh->error == -529);
	ri.offset = 0;
	oh = fault_req(FUSE_READ, &ri, sizeof(ri), &n, &len);
	CHECK(n == 1 && len == hlen && oh->error == -EBADF);
	modes_exit(false);
	CHECK(!test_failed);
	CHECK(sync_stat("requests=") == 13 && sync_stat(" errors=") == 13);
	CHECK(sync_stat(" bytes_out=") == 13 * hlen);
	CHECK(sync_stat(" inline=") == 13 && sync_stat(" late=") == 0);

	budget_daemon("--workers=1 --faults --used-len-zero");
	CHECK(!test_failed);
	*used_event(2) = 0x8000;
	oh = FAULT_LOOKUP("vfs-fault-len-over", &n, &len);
	CHECK(n == 1 && len == 0 && oh->len == hlen);
	oh = FAULT_LOOKUP("vfs-fault-double", &n, &len);
	CHECK(n == 2 && len == 0);
	oh = FAULT_LOOKUP("vfs-fault-never", &n, &len);
	CHECK(n == 0);
	oh = FAULT_LOOKUP("no-such-name", &n, &len);
	CHECK(n == 1 && len == 0 && oh->error == -ENOENT);
}

void vu_tests(const char *daemon)
{
	snprintf(daemon_path, sizeof(daemon_path), "%s", daemon);
	signal(SIGPIPE, SIG_IGN);
	test_run("vhost-user: UML-style handshake", t_handshake);
	test_run("vhost-user: GET_CONFIG", t_config);
	test_run("vhost-user: memory table and rings", t_setup_rings);
	test_run("vhost-user: request queue completes by VRING_CALL", t_request_queue);
	test_run("vhost-user: sync queue done before the kick's ack", t_sync_queue);
	test_run("vhost-user: sync queue batch", t_sync_batch);
	test_run("vhost-user: broken ring is contained", t_broken_ring);
	test_run("vhost-user: malformed messages", t_garbage);
	test_run("vhost-user: no sync offer without in-band kicks", t_no_inband);
	test_run("vhost-user: clean exit and stats", t_exit_and_stats);
	test_run("vhost-user: per-queue handler and queued time", t_timing_stats);
	test_run("vhost-user: --sync-late completes after the ack", t_sync_late);
	test_run("budget: the feature bit after the sync bit", t_budget_bit);
	test_run("budget: FSYNC, SETATTR of the size complete late", t_budget_predicted);
	test_run("budget: a watched request past the budget completes late", t_budget_watch_late);
	test_run("budget: a watched request done in time is inline", t_budget_watch_inline);
	test_run("budget: an overrun, then late past the budget and watched", t_budget_overrun);
	test_run("budget: an OPEN that breaks a lease completes late", t_budget_nowait_open);
	test_run("budget: a READ of uncached data completes late", t_budget_nowait_read);
	test_run("vhost-user: num_sync_queues at offset 40", t_config_at_40);
	test_run("vhost-user: --used-len-zero, as libkrun before 1.19", t_used_len_zero);
	test_run("faults: each wrong reply of --faults, on a sync queue", t_faults);
	test_run("vhost-user: per-queue kick channels", t_kick_channel);
	test_run("vhost-user: --no-kick-channel", t_no_kick_channel);
	test_run("vhost-user: --pin-sync and --pin-workers, read back", t_pinning);
	test_run("vhost-user: --pin-sync refuses CPUs it may not use", t_pinning_refused);
	test_run("options: --help for users, --help-test for the test knobs", t_help_split);
	test_run("vhost-user: EVENT_IDX after the rings: checked again", t_late_event_idx);
	test_run("vhost-user: --populate-memory prefaults guest memory", t_populate_memory);
	test_run("vhost-user: many chains on three workers all complete once", t_worker_stress);
	test_run("vhost-user: a frontend that stops reading is hung up on", t_backend_stall);
	test_run("sandbox: '..' out of a directory moved off the share", t_moved_dir);
	test_run("sandbox: namespaces, root, capabilities, seccomp", t_sandbox_layers);
	test_run("sandbox: every mode serves, xattrs too", t_modes);
	test_run("sandbox: --allow-devices keeps CAP_MKNOD, --file-handles DAC_READ_SEARCH", t_allow_devices_cap);
	test_run("sandbox: a forbidden system call ends the daemon", t_forbidden_syscall);
	test_run("sandbox: a taken-over daemon cannot leave it", t_escape);
	test_run("socket: mode 0600, --socket-group, peer credentials", t_socket_access);
	test_run("vhost-user: a region past the end of its file is refused", t_region_past_file);
	test_run("vhost-user: a region file shrunk later breaks the queue only", t_region_shrunk);
	test_run("vhost-user: messages shorter than their payload are refused", t_short_messages);
	test_run("output files: no symlink, hard link or FIFO followed", t_output_files);
	cleanup();
}
