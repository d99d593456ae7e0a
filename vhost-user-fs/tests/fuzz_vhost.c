// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the vhost-user message layer, the frontend taken
 * as hostile: every message it can send, with the fds it can attach,
 * against one device whose guest memory the input also fills.
 *
 * Input: two bytes (little endian) give L, the next L bytes (at most
 * MEM_SIZE) are copied to the start of guest memory (rings, descriptors,
 * FUSE requests); the rest is a sequence of messages, each a 12-byte
 * header (request, flags, size) and size bytes of payload (cut to what is
 * left). Each message goes through the real socket code (sendmsg on one
 * end of a socketpair, recv_msg and handle_msg on the other) with fds by
 * request: a memfd of MEM_SIZE bytes per region for SET_MEM_TABLE, an
 * eventfd for SET_VRING_KICK/CALL/ERR, a socket for SET_BACKEND_REQ_FD;
 * flags bit 31 sends none. Replies and backend messages are drained.
 * After each input the device is reset as on a disconnect.
 *
 * Built with `make fuzz-vhost`; `make fuzz` runs it after fuzz-request,
 * seeds in tests/corpus-vhost/ (tests/gen-vhost-seeds.py), crashes kept
 * in tests/regress-vhost/.
 */
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
#include "../vhost_user.c"
#include "passthrough.h"

#include <signal.h>
#include <sys/eventfd.h>

#define MEM_SIZE	(64u << 10)

static struct vu_dev *fvu;
static struct options fopt;
static int memfd = -1;

static void fz_setup(void)
{
	const char *tmp = getenv("TMPDIR");
	static char dir[4096];
	struct fuse_server *srv;

	/*
	 * As the daemon's main() does: a write to a peer that has gone (the
	 * back-end channel, a kick channel) is -EPIPE, not the end of the
	 * process. Without it an input that closes its channel early killed
	 * the fuzzer with SIGPIPE now and then.
	 */
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "%s/vufs-fuzz-vhost-XXXXXX",
		 tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	umask(0);
	fopt.shared_dir = dir;
	fopt.tag = "share";
	fopt.xattr = true;
	fopt.fd_cache = 16;
	fopt.request_queues = 1;
	fopt.sync_queues = 1;
	fopt.sync_bit = 1;
	fopt.workers = 1;
	fopt.queue_size = 1024;
	fopt.config_size = 48;
	fopt.backend_timeout = 1;
	srv = passthrough__new(&fopt);
	if (!srv)
		abort();
	fvu = vhost_user__new(&fopt, srv);
	if (!fvu || dispatch__init(&fopt, srv))
		abort();
	memfd = memfd_create("fuzz-guest", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, MEM_SIZE))
		abort();
}

static void drain(int fd)
{
	uint8_t buf[4096];

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
}

/* The fds a frontend would attach to this request; how many. */
static int attach(uint32_t req, uint32_t flags, const uint8_t *p,
		  uint32_t len, int *fds, int *backend_peer)
{
	int n = 0, sv[2];

	if (flags & (1u << 31))
		return 0;
	switch (req) {
	case VU_SET_MEM_TABLE: {
		uint32_t k = 0;

		if (len >= 4)
			memcpy(&k, p, 4);
		for (; n < (int)k && n < MAX_FDS; n++)
			fds[n] = dup(memfd);
		return n;
	}
	case VU_SET_VRING_KICK:
	case VU_SET_VRING_CALL:
	case VU_SET_VRING_ERR:
		fds[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		return 1;
	case VU_SET_BACKEND_REQ_FD:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return 0;
		fcntl(sv[0], F_SETFL, O_NONBLOCK);
		if (*backend_peer >= 0)
			close(*backend_peer);
		*backend_peer = sv[0];
		fds[0] = sv[1];
		return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2], backend_peer = -1, i;
	struct vu_msg *m;
	size_t memlen, pos;
	void *mem;

	if (!fvu)
		fz_setup();
	if (size < 2)
		return 0;
	memlen = (data[0] | data[1] << 8) % (MEM_SIZE + 1);
	if (memlen > size - 2)
		memlen = size - 2;
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (mem == MAP_FAILED)
		abort();
	memset(mem, 0, MEM_SIZE);
	memcpy(mem, data + 2, memlen);
	munmap(mem, MEM_SIZE);
	pos = 2 + memlen;

	m = malloc(sizeof(*m));
	if (!m || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	/* large enough for any one message; replies are drained */
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fvu->sock = sv[1];
	while (size - pos >= sizeof(struct vu_hdr)) {
		struct vu_hdr h;
		uint8_t buf[sizeof(h) + MAX_PAYLOAD];
		char cbuf[CMSG_SPACE(MAX_FDS * sizeof(int))];
		struct iovec iov = { buf, 0 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		int fds[MAX_FDS], nfds;
		uint32_t len;

		memcpy(&h, data + pos, sizeof(h));
		pos += sizeof(h);
		len = h.size;
		if (len > size - pos)
			len = size - pos;
		if (len > MAX_PAYLOAD)
			len = MAX_PAYLOAD;
		/* the size field is the frontend's; a longer one ends it */
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), data + pos, len);
		pos += len;
		iov.iov_len = sizeof(h) + len;
		nfds = attach(h.request, h.flags, data + pos - len, len, fds,
			      &backend_peer);
		if (nfds) {
			struct cmsghdr *c;

			mh.msg_control = cbuf;
			mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
			memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
		}
		if (h.size > len)
			shutdown(sv[0], SHUT_WR);	/* the rest never comes */
		if (sendmsg(sv[0], &mh, MSG_NOSIGNAL) < 0) {
			for (i = 0; i < nfds; i++)
				close(fds[i]);
			break;
		}
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (process_socket(fvu, m))
			break;
		drain(sv[0]);
		drain(backend_peer);
	}
	dev_reset(fvu);
	fuse_server__reset(fvu->dev.srv);
	drain(backend_peer);
	if (backend_peer >= 0)
		close(backend_peer);
	close(sv[0]);
	close(sv[1]);
	fvu->sock = -1;
	free(m);
	return 0;
}
