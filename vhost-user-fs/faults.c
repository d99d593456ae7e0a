// SPDX-License-Identifier: GPL-2.0
/*
 * --faults: a LOOKUP of "vfs-fault-<kind>" (or "vfs-fault-<kind>.<any>", so
 * that lookups can run side by side) is answered wrongly in that way. A
 * READ at offset FAULT_READ_OFFSET (529 GiB, of a sparse file) gets the
 * error -529 (-EIOCBQUEUED), for a guest's direct-I/O read. A LOOKUP of
 * "vfs-fault-delay.N" is answered as usual, N seconds late (1 without N,
 * at most FAULT_DELAY_MAX): the request stays on its queue meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "faults.h"
#include "fuse_server.h"

static const char *const fault_names[FAULT_COUNT] = {
	[FAULT_LEN_OVER] = "len-over",
	[FAULT_LEN_UNDER] = "len-under",
	[FAULT_LEN_ZERO] = "len-zero",
	[FAULT_HDR_LEN] = "hdr-len",
	[FAULT_UNIQUE] = "unique",
	[FAULT_ERROR_RANGE] = "error-range",
	[FAULT_ERROR_529] = "error-529",
	[FAULT_DOUBLE] = "double",
	[FAULT_NEVER] = "never",
	[FAULT_CLOSE] = "close",
	[FAULT_DELAY] = "delay",
};

#define FAULT_PREFIX "vfs-fault-"
#define FAULT_READ_OFFSET (529ULL << 30)
#define FAULT_DELAY_MAX 600

/* N of a LOOKUP of "vfs-fault-delay.N", which fault_find() vetted */
static unsigned int fault_delay_s(const struct fuse_ctx *ctx)
{
	const char *name = (const char *)ctx->in +
			   sizeof(struct fuse_in_header) + strlen(FAULT_PREFIX);
	const char *dot = strchr(name, '.');
	unsigned long n;

	if (!dot)
		return 1;
	n = strtoul(dot + 1, NULL, 10);
	if (n < 1)
		return 1;
	return n > FAULT_DELAY_MAX ? FAULT_DELAY_MAX : n;
}

static enum fault fault_find(const struct fuse_ctx *ctx, size_t in_len)
{
	const struct fuse_in_header *ih = (const void *)ctx->in;
	const char *name = (const char *)(ih + 1);
	size_t max, plen = strlen(FAULT_PREFIX);
	unsigned int f;

	if (in_len > ctx->in_cap)
		return FAULT_NONE;
	if (ih->opcode == FUSE_READ &&
	    in_len >= sizeof(*ih) + sizeof(struct fuse_read_in)) {
		const struct fuse_read_in *ri = (const void *)(ih + 1);

		return ri->offset == FAULT_READ_OFFSET ? FAULT_ERROR_529 :
			FAULT_NONE;
	}
	if (in_len < sizeof(*ih) + plen + 1 || ih->opcode != FUSE_LOOKUP)
		return FAULT_NONE;
	max = in_len - sizeof(*ih);
	if (strncmp(name, FAULT_PREFIX, plen) || !memchr(name, 0, max))
		return FAULT_NONE;
	name += plen;
	/* "vfs-fault-KIND" or "vfs-fault-KIND.ANYTHING" */
	for (f = FAULT_NONE + 1; f < FAULT_COUNT; f++) {
		size_t n = strlen(fault_names[f]);

		if (!strncmp(name, fault_names[f], n) &&
		    (name[n] == '\0' || name[n] == '.'))
			return f;
	}
	return FAULT_NONE;
}

enum fault fault__of(const struct fuse_ctx *ctx, size_t in_len)
{
	enum fault f = fault_find(ctx, in_len);

	if (f != FAULT_NONE)
		fprintf(stderr, "vhost-user-fs: fault %s injected\n",
			fault_names[f]);
	return f;
}

void fault__spoil_reply(enum fault f, struct fuse_ctx *ctx, size_t *len)
{
	struct fuse_out_header *oh = (void *)ctx->out;

	if (*len < sizeof(*oh))
		return;
	switch (f) {
	case FAULT_HDR_LEN:
		oh->len += 8;
		break;
	case FAULT_UNIQUE:
		oh->unique ^= 1;
		break;
	case FAULT_ERROR_RANGE:
		oh->error = -5000;
		oh->len = sizeof(*oh);
		*len = sizeof(*oh);
		break;
	case FAULT_ERROR_529:
		oh->error = -529;
		oh->len = sizeof(*oh);
		*len = sizeof(*oh);
		break;
	case FAULT_DELAY:
		sleep(fault_delay_s(ctx));
		break;
	default:
		break;
	}
}

uint32_t fault__used_len(enum fault f, uint32_t len, uint32_t wr_len)
{
	switch (f) {
	case FAULT_LEN_OVER:
		return wr_len + 1;
	case FAULT_LEN_UNDER:
		return sizeof(struct fuse_out_header) / 2;
	case FAULT_LEN_ZERO:
		return 0;
	default:
		return len;
	}
}

unsigned int fault__pushes(enum fault f)
{
	switch (f) {
	case FAULT_NEVER:
	case FAULT_CLOSE:
		return 0;
	case FAULT_DOUBLE:
		return 2;
	default:
		return 1;
	}
}
