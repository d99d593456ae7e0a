// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the two decoders that eat guest bytes: the FUSE
 * request decoder (first input byte even; its upper 7 bits give the reply
 * buffer's size / 4, 0 for a whole one) and the virtqueue walker (odd),
 * which gets the rest of the input as its descriptor table and avail ring.
 * Built and run with `make fuzz` (FUZZ_TIME seconds); seeds in tests/corpus/,
 * every input that once crashed it in tests/regress/ (`make fuzz-regress`
 * replays both). The share is a fresh directory under $TMPDIR.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "fuse_server.h"
#include "passthrough.h"
#include "vring.h"

static struct fuse_server *srv;
static struct fuse_ctx *ctx;
static struct options opt;

static void setup(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 38 };
	const char *tmp = getenv("TMPDIR");
	struct fuse_in_header *ih;
	static char dir[4096];
	int err;

	snprintf(dir, sizeof(dir), "%s/vufs-fuzz-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	umask(0);
	opt.shared_dir = dir;
	opt.xattr = true;
	opt.fd_cache = 16;
	srv = passthrough__new(&opt);
	ctx = fuse_ctx__new();
	if (!srv || !ctx)
		abort();
	ih = (void *)ctx->in;
	memset(ih, 0, sizeof(*ih));
	ih->len = sizeof(*ih) + sizeof(init);
	ih->opcode = FUSE_INIT;
	memcpy(ih + 1, &init, sizeof(init));
	fuse_server__handle(srv, ctx, ih->len, ctx->out_cap, &err);
}

/* room: the reply buffer, 0 for the whole of it */
static void fuzz_fuse(const uint8_t *data, size_t size, size_t room)
{
	const struct fuse_in_header *ih = (const void *)ctx->in;
	size_t out_max = room ? room : ctx->out_cap, n;
	int err;

	if (size > ctx->in_cap)
		return;
	/* the daemon's buffer is aligned, the fuzzer's data need not be */
	memcpy(ctx->in, data, size);
	/* would allocate real disk space on the host */
	if (size >= sizeof(*ih) && ih->opcode == FUSE_FALLOCATE)
		return;
	n = fuse_server__handle(srv, ctx, size, out_max, &err);
	/* a reply never says it is longer than the guest's buffer */
	if (n > out_max ||
	    (n && ((const struct fuse_out_header *)ctx->out)->len != n))
		abort();
}

#define QN	16

static void fuzz_vring(const uint8_t *data, size_t size)
{
	static uint8_t *mem;
	static struct mem_table mt;
	struct iovec iov[64];
	struct vring_elem e = { .iov = iov, .iov_max = 64 };
	struct vring vr;
	int i;

	if (!mem) {
		mem = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		mt.nregions = 1;
		mt.r[0] = (struct mem_region){ .gpa = 0x10000, .size = 1 << 16,
			.uva = 0x10000, .host = mem };
	}
	memset(mem, 0, 0x3000);
	/* descriptors at 0, avail ring at 0x1000, used at 0x2000 */
	memcpy(mem, data, size < QN * 16 ? size : QN * 16);
	if (size > QN * 16)
		memcpy(mem + 0x1000, data + QN * 16,
		       size - QN * 16 < 4 + 2 * QN ? size - QN * 16 : 4 + 2 * QN);
	vring__init(&vr, 0, QN, (void *)mem, (void *)(mem + 0x1000),
		    (void *)(mem + 0x2000), &mt, true, 0);
	for (i = 0; i < QN + 1; i++) {
		int r = vring__pop(&vr, &e);
		unsigned int k;

		if (r <= 0)
			break;
		for (k = 0; k < e.rd_num + e.wr_num; k++)
			memset(iov[k].iov_base, 0xa5, iov[k].iov_len);
		vring__push(&vr, e.head, e.wr_len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!srv)
		setup();
	if (!size)
		return 0;
	if (data[0] & 1)
		fuzz_vring(data + 1, size - 1);
	else	/* the other 7 bits of the first byte: reply room / 4 */
		fuzz_fuse(data + 1, size - 1, (size_t)(data[0] >> 1) * 4);
	return 0;
}
